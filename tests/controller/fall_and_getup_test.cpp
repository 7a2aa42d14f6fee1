// End to end (SPEC.md sections 3 and 4): a character runs, is handed to physics, falls on flat
// ground, settles, picks the get-up clip for the way it lies, blends into it, stands, and runs
// again. Checked every step: exactly one blocking representation. Checked on every frame of the
// recovery: the displayed pelvis and both feet move no more than the get-up clip itself moves
// them over that frame plus 2 cm (issue 5: "no single-frame jump above 2 cm at 60 Hz"); at the
// frame the recovery starts (weight 0) the displayed skeleton is the fallen one within 0.01 mm.
#include "controller/getup_scene.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace handoff {
namespace {

using test::loadCharacter;

void printFigures(const char* label, const test::RunFigures& f, double rigHip) {
  std::printf(
      "[%s] run -> fall -> get-up: %s clip (yaw from %s), settled %.2f s after the handoff, gather %.2f s, "
      "transition %.2f s (hold %.2f s, planned worst %.2f m/s), weight-0 error %.4f mm; worst per-frame jump "
      "beyond the clip's "
      "own motion: pelvis %.1f mm, feet %.1f mm (raw, clip motion included: pelvis %.1f mm, feet %.1f mm); "
      "final pelvis height %.3f m (rig hip %.3f m), feet %.1f / %.1f cm; recovered %d, ran again %d\n",
      label, facingName(f.facing), facingSourceName(f.facingSource), f.settleTime, f.gatherTime,
      f.transition.duration, f.transition.hold, f.transition.worstPointSpeed, f.weightZeroError * 1e3,
      f.worstPelvisJump * 1e3, f.worstFootJump * 1e3, f.worstPelvisStep * 1e3, f.worstFootStep * 1e3,
      f.finalPelvisHeight, rigHip, f.finalFootHeight[0] * 100.0, f.finalFootHeight[1] * 100.0, f.recovered,
      f.ranAgain);
}

// The shared figures every end-to-end run must meet.
void expectGoodRecovery(const test::RunFigures& f) {
  EXPECT_TRUE(f.recovered);
  EXPECT_TRUE(f.ranAgain);
  EXPECT_NE(f.facing, Facing::Undecided);
  EXPECT_EQ(f.blockingViolations, 0) << "steps without exactly one blocking representation";
  // Weight 0 reproduces the fallen pose: 0.01 mm (issue 5), met to rounding.
  EXPECT_LT(f.weightZeroError, 1e-5);
  // Issue 5: on every frame of the recovery the pelvis and both feet move at most 2 cm per 60 Hz
  // frame beyond the clip's own motion over that frame. The transition is planned with a
  // 1 m/s bound (1.7 cm per frame), so 2 cm also holds a margin for rounding.
  EXPECT_LT(f.worstPelvisJump, 0.02);
  EXPECT_LT(f.worstFootJump, 0.02);
  EXPECT_TRUE(f.transition.boundMet);
  EXPECT_GE(f.transition.duration, TransitionSettings{}.duration);
  // Both feet end on the ground (within 3 cm: the foot joint sits a few cm above the sole).
  EXPECT_NEAR(f.finalFootHeight[0], 0.0, 0.10);
  EXPECT_NEAR(f.finalFootHeight[1], 0.0, 0.10);
}

TEST(FallAndGetUp, DeepMimicRunFallsSettlesGetsUpAndRunsAgain) {
  const test::Character& c = loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  const test::RunFigures f = test::runFallAndGetUp(c, 0, 0.5, Transform::identity());
  printFigures("deepmimic", f, c.imported.hipHeight);
  expectGoodRecovery(f);
  EXPECT_NEAR(f.finalPelvisHeight, c.imported.hipHeight, 0.05);
}

TEST(FallAndGetUp, CmuJumpFallsAndGetsUpWithRetargetedClips) {
  const test::Character& c = loadCharacter("cmu/01_01.bvh");
  ASSERT_TRUE(c.asset);
  // Handed off during the first playground jump (01_01 jumps at about 4 s).
  const test::RunFigures f = test::runFallAndGetUp(c, 0, 4.0, Transform::identity());
  printFigures("cmu 01_01", f, c.imported.hipHeight);
  expectGoodRecovery(f);
  // Standing on the CMU rig's own legs (the retarget puts the end pelvis at the rig's own
  // standing hip height, see the retarget test).
  EXPECT_NEAR(f.finalPelvisHeight, c.imported.hipHeight, 0.05);
}

TEST(FallAndGetUp, Mesh2MotionJogFallsAndGetsUpWithRetargetedClips) {
  const test::Character& c = loadCharacter("mesh2motion/human-base-animations.glb");
  ASSERT_TRUE(c.asset);
  const int jog = test::clipIndex(c, "Jog_Fwd_Loop");
  ASSERT_GE(jog, 0);
  const test::RunFigures f = test::runFallAndGetUp(c, jog, 0.4, Transform::identity());
  printFigures("mesh2motion", f, c.imported.hipHeight);
  expectGoodRecovery(f);
  EXPECT_NEAR(f.finalPelvisHeight, c.imported.hipHeight, 0.05);
}

}  // namespace
}  // namespace handoff
