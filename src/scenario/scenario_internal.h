// Helpers shared by the scenario loader and validator (not part of the public API).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace handoff::scenario_detail {

/// Shortest text that reads back as the same double ("0.5", "-1", "1e+300").
std::string formatNumber(double value);

/// `text` with every byte that is not part of a valid UTF-8 sequence written as "\xNN": messages
/// quote file content, and reports embed them in JSON and HTML.
std::string validUtf8(const std::string& text);

}  // namespace handoff::scenario_detail
