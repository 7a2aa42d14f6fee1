// The runner's breakable-joint rows (checks "break.*", metrics jointBreaks) on scenarios/
// arm_break.json: the left elbow of the running ragdoll (breakForce 400 N through the scenario's
// build.joints override) torn off by a hit on the forearm. The same scenario with the override at
// "inf" is the control: no break, the expectation joint_breaks fails, and the character gets up
// (so the stays_down row would see a get-up).
#include "handoff/runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "support/checks.h"

namespace handoff {
namespace {

ScenarioResult runArmBreak(const std::string& elbowOverride) {
  Result<Scenario> s = loadScenarioFile(std::string(HANDOFF_SOURCE_DIR) + "/scenarios/arm_break.json");
  EXPECT_TRUE(s.ok()) << s.error();
  if (!s) return {};
  Scenario scenario = *s;
  if (!elbowOverride.empty()) scenario.ragdoll.build.jointOverridesJson = elbowOverride;
  RunOptions options;
  options.searchDirs = {HANDOFF_DATA_DIR};
  options.baselines = false;
  ScenarioRunner runner(options);
  return runner.run(scenario);
}

TEST(RunnerJointBreak, TheElbowBreaksAtItsForceAndTheRowsSayIt) {
  const ScenarioResult r = runArmBreak("");
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.jointBreaks.size(), 1u);
  const JointBreakMetrics& b = r.jointBreaks[0];
  std::printf(
      "[ figure ] arm_break: '%s' broke at %.4f s by %s, %.1f N, %.2f N m (limit %.0f N); %.1f N the frame "
      "before; other joints at most %.2f mm apart after; %d frames out of Ragdoll\n",
      b.name.c_str(), b.time, b.byTorque ? "torque" : "force", b.force, b.torque, b.breakForce, b.loadBefore,
      1e3 * b.otherJointsMaxStretch, b.framesNotRagdoll);
  EXPECT_EQ(b.name, "left_elbow");
  EXPECT_FALSE(b.byTorque);
  EXPECT_EQ(b.breakForce, 400.0);
  EXPECT_GT(b.force, 400.0);
  EXPECT_LE(b.loadBefore, 400.0);
  // The hit is applied after the 0.6 s frame: the first substep of the next frame takes it.
  EXPECT_NEAR(b.time, 0.6 + r.dt / 2, 1e-9);
  EXPECT_LT(b.otherJointsMaxStretch, 0.01);
  EXPECT_EQ(b.framesNotRagdoll, 0);
  for (const char* name :
       {"break.held_below_limit@left_elbow", "break.at_limit@left_elbow",
        "break.no_other_joint_stretch@left_elbow", "break.stays_down@left_elbow", "break.count"}) {
    const ThresholdCheck* c = test::findThresholdCheck(r, name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_TRUE(c->pass) << name << ": " << c->value << " vs " << c->threshold;
  }
  EXPECT_EQ(test::findThresholdCheck(r, "break.at_limit@left_elbow")->value, b.force);
  EXPECT_TRUE(r.passed());
  const bool breakEvent = std::any_of(r.events.begin(), r.events.end(), [](const CharacterEvent& e) {
    return e.kind == CharacterEventKind::Break;
  });
  EXPECT_TRUE(breakEvent);
}

TEST(RunnerJointBreak, WithoutTheLimitNothingBreaksAndTheExpectationFails) {
  const ScenarioResult r = runArmBreak(R"({"left_elbow": {"breakForce": "inf"}})");
  ASSERT_TRUE(r.ok) << r.error;
  const double getUp = [&] {
    for (const CharacterEvent& e : r.events) {
      if (e.kind == CharacterEventKind::GetUp) return e.time;
    }
    return -1.0;
  }();
  std::printf("[ figure ] arm_break with an infinite elbow: %zu breaks, get-up started at %.2f s\n",
              r.jointBreaks.size(), getUp);
  EXPECT_TRUE(r.jointBreaks.empty());
  EXPECT_EQ(test::findThresholdCheck(r, "break.stays_down@left_elbow"), nullptr);
  const ThresholdCheck* count = test::findThresholdCheck(r, "break.count");
  ASSERT_NE(count, nullptr);
  EXPECT_FALSE(count->pass);
  EXPECT_FALSE(r.passed());
  EXPECT_GT(getUp, 0.0);  // whole, it gets up within the scenario's 6 s
}

}  // namespace
}  // namespace handoff
