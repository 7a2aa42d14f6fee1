// The scenario runner on ODE through RunOptions::createWorld (what `handoff run --engine ode`
// does): every world of the run comes from the factory, and the run's first-step checks pass on
// ODE as on Bullet (they measure the core's commit, not the engine).
#include "handoff/physics_ode.h"
#include "handoff/runner.h"
#include "handoff/scenario.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>

namespace handoff {
namespace {

TEST(OdeRunner, RunHandoffPlaysInTheFactorysWorld) {
  Result<Scenario> scenario =
      loadScenarioFile(std::string(HANDOFF_SOURCE_DIR) + "/scenarios/run_handoff.json");
  ASSERT_TRUE(scenario.ok()) << scenario.error();
  RunOptions options;
  options.searchDirs = {HANDOFF_DATA_DIR};
  options.baselines = false;
  int made = 0;
  options.createWorld = [&made](const WorldSettings& settings) {
    ++made;
    return createOdeWorld(settings);
  };
  ScenarioRunner runner(options);
  const ScenarioResult result = runner.run(*scenario);
  ASSERT_TRUE(result.ok) << result.error;
  std::printf("[ figure ] worlds made by the factory: %d\n", made);
  EXPECT_GE(made, 1);
  int firstStep = 0;
  for (const ThresholdCheck& c : result.checks) {
    std::printf("[ figure ] %s: %.4g %s (%s %.4g) %s\n", c.name.c_str(), c.value, c.unit.c_str(),
                c.comparison.c_str(), c.threshold, c.pass ? "pass" : "FAIL");
    if (c.name == "handoff.no_pop_first_step" || c.name == "handoff.velocity_continuity") {
      ++firstStep;
      EXPECT_TRUE(c.pass) << c.name;
    }
  }
  EXPECT_EQ(firstStep, 2);
}

}  // namespace
}  // namespace handoff
