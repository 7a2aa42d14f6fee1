// The per-step recovery functions never allocate: counted through the replaceable global
// operator new of this test binary (tests/support/counting_new.h).
#include "recovery/recovery_test_util.h"
#include "support/counting_new.h"

#include <gtest/gtest.h>

namespace handoff {
namespace {

TEST(NoAllocation, PerStepRecoveryFunctions) {
  const test::LoadedClip c = test::loadClip("deepmimic/humanoid3d_getup_faceup.bvh");
  Result<GetUpClipInfo> info = computeGetUpClipInfo(c.clip, c.skeleton, c.map);
  ASSERT_TRUE(info.ok()) << info.error();
  const auto n = static_cast<size_t>(c.skeleton.jointCount());
  const std::vector<Transform> world = test::worldOf(c.skeleton, c.clip.frame(0), Transform{});
  std::vector<Transform> captured(n);
  std::vector<Transform> display(n);
  SettleDetector settle;
  FacingClassifier facing;
  TransitionScratch scratch;
  scratch.resize(c.skeleton.jointCount());
  const std::vector<int> tracked = {c.map[Slot::Pelvis], c.map[Slot::FootL], c.map[Slot::FootR]};

  const long before = test_support::allocationCount();
  double sink = 0.0;
  for (int step = 0; step < 120; ++step) {
    const double t = step / 60.0;
    sink += settle.update(1.0 / 60.0, Vec3{0.01, 0.0, 0.0}, Vec3{0.0, 0.05, 0.0}, step == 10).timeInWindow;
    sink += facing.update(Quat{1.0, 0.0, 0.0, 0.0}, Vec3{0.0, 0.0, 1.0}).chestUpDot;
    const RootPlacement p = placeRoot(world[static_cast<size_t>(info->pelvisJoint)], *info,
                                      Vec3{0.0, 0.0, 1.0}, Vec3{1.0, 0.0, 0.0});
    sink += capturePose(c.skeleton, world, p.worldFromRoot, captured) ? 1.0 : 0.0;
    transitionPose(captured, c.clip, c.skeleton, *info, t, TransitionSettings{}, display);
    sampleGetUpInRoot(c.clip, c.skeleton, *info, t, display);
    sink += display[0].translation.y;
    if (step % 40 == 0) {
      const TransitionPlan plan = planTransition(captured, c.clip, c.skeleton, *info, tracked, 1.0 / 60.0,
                                                 TransitionSettings{}, scratch);
      transitionPose(captured, c.clip, c.skeleton, *info, t, plan, display);
      sink += plan.duration;
    }
  }
  const long after = test_support::allocationCount();
  EXPECT_EQ(after - before, 0) << "allocations in per-step recovery functions";
  EXPECT_TRUE(std::isfinite(sink));
  // The counter does count.
  std::vector<Transform> allocated(n);
  EXPECT_GT(test_support::allocationCount(), after);
  EXPECT_EQ(allocated.size(), n);
}

}  // namespace
}  // namespace handoff
