// handoff.no_pop_first_step allows each body the move of its animated velocity and free fall,
// and, when the commit pushes bodies out of static geometry by position (kClampPenetration), the
// push: HandoffRecord::depenetrationSpeed times the step. The bodies jointed to a pushed one
// follow it by position (the Bullet adapter's split joint rows), so the whole chain may move that
// much beyond the animation, as designed and recorded. The DeepMimic supine get-up with its root
// 6 cm low (the back in the floor) handed off at 0.4 s with a 0.6 m/s push: the worst body moves
// 6.2 mm beyond |v_anim| dt + |g| dt^2 (the 2 mm bound failed), 3.8 mm inside the allowance with
// the push's 10 mm. Without the push (the engine's own, speed 0) nothing is added.
#include "handoff/runner.h"
#include "support/checks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace handoff {
namespace pop_row_test {
namespace {

ScenarioResult supineInTheFloor(double maxDepenetrationSpeed) {
  Result<Scenario> s =
      test::ragdollAt("../data/deepmimic/humanoid3d_getup_faceup.bvh", "humanoid3d_getup_faceup", 0.4, 0.3,
                      R"(, "root": { "position": [0, -0.06, 0] }, "settings": { "maxDepenetrationSpeed": )" +
                          std::to_string(maxDepenetrationSpeed) + " }");
  EXPECT_TRUE(s.ok()) << (s ? "" : s.error());
  return s ? test::runScenarioAlone(*s) : ScenarioResult{};
}

double plainExcess(const ScenarioResult& r) {
  double worst = -1e300;
  for (const BodyHandoffMetrics& b : r.handoffs[0].bodies) {
    worst = std::max(worst, b.firstStepMove - (glm::length(b.animatedVelocity) * r.dt + 9.81 * r.dt * r.dt));
  }
  return worst;
}

TEST(PopRow, ThePushOutOfTheFloorTheRecordNamesIsNotAPop) {
  const ScenarioResult r = supineInTheFloor(0.6);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.handoffs.size(), 1u);
  const ThresholdCheck* pop = test::findThresholdCheck(r, "handoff.no_pop_first_step");
  ASSERT_NE(pop, nullptr);
  std::printf(
      "[pop row] supine 6 cm in the floor, 0.6 m/s push: row %+.3f mm, beyond the plain allowance %+.3f mm\n",
      pop->value, plainExcess(r) * 1e3);
  EXPECT_DOUBLE_EQ(r.handoffs[0].depenetrationSpeed, 0.6);
  EXPECT_GT(plainExcess(r) * 1e3, 2.0);  // the push moved the chain past the plain bound
  EXPECT_TRUE(pop->pass) << pop->value;
  EXPECT_NEAR(pop->value, plainExcess(r) * 1e3 - 0.6 * r.dt * 1e3, 1e-9);

  const ScenarioResult own = supineInTheFloor(0.0);
  ASSERT_TRUE(own.ok) << own.error;
  EXPECT_EQ(own.handoffs[0].depenetrationSpeed, 0.0);
  const ThresholdCheck* ownPop = test::findThresholdCheck(own, "handoff.no_pop_first_step");
  ASSERT_NE(ownPop, nullptr);
  EXPECT_NEAR(ownPop->value, plainExcess(own) * 1e3, 1e-9);
}

}  // namespace
}  // namespace pop_row_test
}  // namespace handoff
