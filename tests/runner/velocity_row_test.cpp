// handoff.velocity_continuity compares each body after the first substep with free fall
// (v_inherited + g h), as velocity_continuity_frame does over the frame, and allows it 5 % of its
// speed plus |g| h of other force: a support may hold a body up, no more (docs/SCENARIOS.md,
// "Against free fall"). Both directions are shown on the DeepMimic face-down get-up released
// while kneeling: a thigh held up through the knee takes a support force with a sideways part,
// which |dv| alone counted against it; the engine's own push out of the floor leaking through
// the knee into the thigh fails.
#include "handoff/runner.h"
#include "support/checks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace handoff {
namespace velocity_row_test {
namespace {

Scenario kneelingAt(double time, double maxDepenetrationSpeed) {
  Result<Scenario> s = test::ragdollAt(
      "../data/deepmimic/humanoid3d_getup_facedown.bvh", "humanoid3d_getup_facedown", time, 0.2,
      R"(, "settings": { "maxDepenetrationSpeed": )" + std::to_string(maxDepenetrationSpeed) + " }");
  EXPECT_TRUE(s.ok()) << (s ? "" : s.error());
  return s ? *s : Scenario{};
}

struct RowForms {
  double row = 0.0;          // the row's value (against free fall)
  double plainChange = 0.0;  // the worst |dv| - allowed, the form before 2026-12-05
  const ThresholdCheck* check = nullptr;
};

RowForms measure(const ScenarioResult& r) {
  RowForms f;
  f.check = test::findThresholdCheck(r, "handoff.velocity_continuity");
  if (f.check) f.row = f.check->value;
  f.plainChange = -1e300;
  for (const BodyHandoffMetrics& b : r.handoffs[0].bodies) {
    if (b.inContact) continue;
    f.plainChange = std::max(f.plainChange,
                             glm::length(b.postSubstepLinear - b.inheritedLinear) - b.substepVelocityAllowed);
  }
  return f;
}

// Released at 0.5 s on hands and knees with the default push out of the floor: three bodies on
// the floor hold the rest up through their joints. Measured: row -0.045 m/s; |dv| beyond the
// allowance +0.001 m/s (the sideways part of the support).
TEST(VelocityRow, ABodyHeldUpThroughItsJointsMayTakeASidewaysSupportForce) {
  const ScenarioResult r = test::runScenarioAlone(kneelingAt(0.5, 0.05));
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.handoffs.size(), 1u);
  const RowForms f = measure(r);
  ASSERT_NE(f.check, nullptr);
  std::printf(
      "[velocity row] kneeling at 0.5 s: %d bodies on the floor, row %+.4f m/s, |dv| form %+.4f m/s\n",
      r.handoffs[0].bodiesInContact, f.row, f.plainChange);
  EXPECT_GT(r.handoffs[0].bodiesInContact, 0);
  EXPECT_GT(f.plainChange, 0.0);  // what the row measured before: a sideways support failed it
  EXPECT_TRUE(f.check->pass) << f.row;
  EXPECT_LT(f.row, -0.02);
}

// Released at 3.0 s, kneeling on both knees, with the engine's own push out of the floor
// (maxDepenetrationSpeed 0): the knees leave the floor fast and drag the thighs up. Measured: row
// +0.27 m/s, |dv| form +0.19 (the default bounded push: +0.009 m/s, an open case in
// docs/TUNING.md).
TEST(VelocityRow, AnUpwardPushThroughAJointFails) {
  const ScenarioResult r = test::runScenarioAlone(kneelingAt(3.0, 0.0));
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.handoffs.size(), 1u);
  const RowForms f = measure(r);
  ASSERT_NE(f.check, nullptr);
  std::printf("[velocity row] kneeling at 3.0 s, the engine's push: row %+.4f m/s, |dv| form %+.4f m/s\n",
              f.row, f.plainChange);
  EXPECT_FALSE(f.check->pass);
  EXPECT_GT(f.row, 0.2);
  EXPECT_GT(f.row, f.plainChange + 0.05);  // the push is upward: the free-fall form sees more of it
}

}  // namespace
}  // namespace velocity_row_test
}  // namespace handoff
