// libFuzzer target for the ragdoll asset JSON loader (loadRagdollJson). Beyond "no crash, no
// sanitizer report, no leak":
//  - a rejection names the file and a position (line:column for syntax errors, the JSON path
//    such as bodies[3].mass for values) and is valid UTF-8;
//  - an accepted asset saves to text that loads back and saves to the same text (lossless).
#include "fuzz_check.h"
#include "handoff/asset.h"

#include <cstddef>
#include <cstdint>
#include <regex>
#include <string>
#include <vector>

namespace {
constexpr const char* kTarget = "asset_fuzz";
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64 * 1024) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<handoff::Finding> findings;
  const handoff::Result<handoff::RagdollAsset> loaded =
      handoff::loadRagdollJson(text, "fuzz.json", &findings);
  if (!loaded) {
    const std::string& message = loaded.error();
    handoff_fuzz::checkRejection(kTarget, message, "fuzz.json");
    // Position: "fuzz.json:<line>:<column>" (syntax) or "fuzz.json: invalid ragdoll asset:\n
    // <json path>: ..." (values; the path is e.g. bodies[3].mass).
    static const std::regex position(R"(^fuzz\.json:(\d+:\d+ |( invalid ragdoll asset:)?\n  \S+: ))");
    if (!std::regex_search(message, position))
      handoff_fuzz::failure(kTarget, "message names no position", message);
    return 0;
  }
  const std::string saved = handoff::saveRagdollJson(*loaded);
  const handoff::Result<handoff::RagdollAsset> back = handoff::loadRagdollJson(saved, "fuzz.json");
  if (!back) handoff_fuzz::failure(kTarget, "saved asset does not load", back.error() + "\n" + saved);
  if (handoff::saveRagdollJson(*back) != saved)
    handoff_fuzz::failure(kTarget, "round trip changed the asset", saved);
  return 0;
}
