// libFuzzer target for the scenario JSON loader (issue 9). Beyond "no crash, no sanitizer
// report, no leak", it checks two properties on every input:
//  - a rejection carries a message that starts with the file name and is valid UTF-8;
//  - an accepted scenario saves and loads back equal (and its world geometry builds).
#include "handoff/scenario.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

[[noreturn]] void failure(const char* what, const std::string& detail) {
  std::fprintf(stderr, "scenario_fuzz: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const handoff::Result<handoff::Scenario> loaded = handoff::loadScenarioJson(text, "fuzz.json");
  if (!loaded) {
    const std::string& message = loaded.error();
    if (message.rfind("fuzz.json", 0) != 0) failure("message does not name the file", message);
    try {
      (void)nlohmann::json(message).dump();  // throws on invalid UTF-8
    } catch (const std::exception& error) {
      failure("message is not valid UTF-8", error.what());
    }
    return 0;
  }
  const std::string saved = handoff::saveScenarioJson(*loaded);
  const handoff::Result<handoff::Scenario> back = handoff::loadScenarioJson(saved, "fuzz.json");
  if (!back) failure("saved scenario does not load", back.error() + "\n" + saved);
  if (!(*back == *loaded)) failure("round trip changed the scenario", saved);
  (void)handoff::staticBoxes(loaded->world);
  return 0;
}
