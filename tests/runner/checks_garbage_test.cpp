// Issue 27, finding 12: checks that cannot pass on garbage. A 1e308 kg chest threw every body out
// of the world while handoff.no_pop_first_step read -1e303 mm as a pass: a figure that is not
// finite fails its check, and a run that lost bodies out of the world passes none.
#include "runner/runner_internal.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace handoff {
namespace checks_garbage_test {
namespace {

/// A committed ragdoll handoff whose first step moved `worstPopExcess` metres beyond free motion.
ScenarioResult oneHandoff(double worstPopExcess) {
  ScenarioResult r;
  HandoffMetrics h;
  h.kind = "ragdoll";
  h.committed = true;
  h.firstStepRecorded = true;
  h.worstPopExcess = worstPopExcess;
  r.handoffs.push_back(h);
  return r;
}

const ThresholdCheck* find(const std::vector<ThresholdCheck>& checks, const std::string& name) {
  for (const ThresholdCheck& c : checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

TEST(ChecksOnGarbage, ANonFiniteFigureFails) {
  const Scenario scenario;
  for (const double garbage :
       {std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::infinity()}) {
    const std::vector<ThresholdCheck> checks = runner_detail::checksFor(scenario, oneHandoff(garbage), {});
    const ThresholdCheck* pop = find(checks, "ragdoll.no_pop_first_step");
    ASSERT_NE(pop, nullptr);
    EXPECT_FALSE(pop->pass) << pop->value;  // before: -inf <= 2 mm passed
    EXPECT_NE(pop->note.find("not a finite number"), std::string::npos) << pop->note;
  }
  const std::vector<ThresholdCheck> sane = runner_detail::checksFor(scenario, oneHandoff(0.0005), {});
  EXPECT_TRUE(find(sane, "ragdoll.no_pop_first_step")->pass);
}

TEST(ChecksOnGarbage, ARunThatLostBodiesPassesNoCheck) {
  const Scenario scenario;
  const ScenarioResult result = oneHandoff(-1e300);  // what the 1e308 kg chest measured, in metres
  runner_detail::RunCounters counters;
  const std::vector<ThresholdCheck> clean = runner_detail::checksFor(scenario, result, counters);
  ASSERT_TRUE(find(clean, "ragdoll.no_pop_first_step")->pass);  // a finite figure, far below the bound
  counters.bodiesLeftWorld = 13;
  const std::vector<ThresholdCheck> lost = runner_detail::checksFor(scenario, result, counters);
  for (const ThresholdCheck& c : lost) {
    EXPECT_FALSE(c.pass) << c.name;
    if (c.name != "robustness.no_body_left_world" && find(clean, c.name)->pass) {
      EXPECT_NE(c.note.find("lost 13 bodies out of the world"), std::string::npos)
          << c.name << ": " << c.note;
    }
  }
}

}  // namespace
}  // namespace checks_garbage_test
}  // namespace handoff
