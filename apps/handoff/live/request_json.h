// The one way the workbench's server reads a JSON request body (commands, tune, load, save,
// export): bounded before anything recursive sees it (issue 27: 100,000 nested arrays in a tune
// field crashed the server when copied and printed). nlohmann's parser itself is iterative; the
// depth is checked by its callback while parsing, and a value nested deeper is discarded at once.
#pragma once

#include "handoff/result.h"

#include <nlohmann/json.hpp>

#include <string_view>

namespace handoff::live {

/// Deepest nesting of arrays and objects a request may have (the deepest the page sends is 4:
/// {"joints": {"name": {"lower": [x, y, z]}}}). [levels]
inline constexpr int kMaxRequestJsonDepth = 32;

/// `text` as a JSON object. Refused, with the reason: not JSON, not an object, or nested deeper
/// than `maxDepth` levels.
Result<nlohmann::json> parseRequestJson(std::string_view text, int maxDepth = kMaxRequestJsonDepth);

}  // namespace handoff::live
