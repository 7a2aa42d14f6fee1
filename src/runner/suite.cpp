// The built-in suite of `handoff demo`: the example scenarios of SPEC.md section 7.
#include "handoff/runner.h"

#include <filesystem>

namespace handoff {

Result<std::vector<Scenario>> builtInSuite(const std::string& scenarioDir) {
  // Handoffs mid-run, mid-jump, mid-spin, mid-punch and right after a teleport; the death fall
  // down steps (the skinned Mesh2Motion character); knockdowns with get-up on the back and on the
  // front; the powered hit reaction; an elbow that breaks; a walk with limb lag; a sword held
  // through a powered hit and dropped at death; a fall off a ledge that lands on its feet and a
  // knock-back (SPEC section 6). Baselines run with each (RunOptions::baselines).
  static const char* const kNames[] = {
      "run_handoff",          "jump_handoff",     "spin_handoff",           "punch_handoff",
      "teleport_handoff",     "death_down_steps", "knockdown_getup_supine", "knockdown_getup_prone",
      "powered_hit_reaction", "arm_break",        "walk_limb_lag",          "prop_hit_death",
      "ledge_landing",        "knockback"};
  std::vector<Scenario> suite;
  for (const char* name : kNames) {
    const std::string path = (std::filesystem::path(scenarioDir) / (std::string(name) + ".json")).string();
    Result<Scenario> s = loadScenarioFile(path);
    if (!s) return Error{s.error()};
    suite.push_back(std::move(s).value());
  }
  return suite;
}

}  // namespace handoff
