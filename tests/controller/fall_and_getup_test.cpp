// End to end (SPEC.md sections 3 and 4): a character runs, is handed to physics, falls on flat
// ground, settles, picks the get-up clip for the way it lies, blends into it, stands, and runs
// again. Checked every step: exactly one blocking representation. Checked on every frame of the
// recovery: the displayed pelvis and both feet move no more than the get-up clip itself moves
// them over that frame plus 2 cm (issue 5: "no single-frame jump above 2 cm at 60 Hz"); at the
// frame the recovery starts (weight 0) the displayed skeleton is the fallen one within 0.01 mm.
// Where it stands: the pelvis where the chosen clip's last frame puts it, on the rig's own
// standing hip height (measured in a standing frame of the rig's own data, as the retarget test
// does), both feet on the ground; the face-up clip completed to standing (GetUpCompletion).
#include "controller/getup_scene.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

namespace handoff {
namespace {

using test::loadCharacter;

/// The rig's own standing hip height: the pelvis above its lowest foot point in frame 0 of
/// `standingClip` (-1: the bind pose). [m]
double standingHip(const test::Character& c, int standingClip) {
  std::vector<Transform> locals = c.skeleton().restLocal;
  if (standingClip >= 0) c.clip(standingClip).sample(0.0, WrapMode::Clamp, locals);
  std::vector<Transform> models(locals.size());
  localToModel(c.skeleton(), locals, models);
  return test::hipAboveFeet(c.skeleton(), c.asset->map, models);
}

/// Both feet's lowest points at `time` in `clip` above their lowest in frame 0 (a standing
/// frame for the clips used here): how far the character is off the ground there. [m]
double feetAboveStanding(const test::Character& c, int clip, double time) {
  std::vector<Transform> locals(c.skeleton().restLocal.size()), models(locals.size());
  double height[2] = {0.0, 0.0};
  for (int k = 0; k < 2; ++k) {
    c.clip(clip).sample(k == 0 ? 0.0 : time, WrapMode::Clamp, locals);
    localToModel(c.skeleton(), locals, models);
    height[k] = std::min(test::lowestUnder(c.skeleton(), models, c.asset->map[Slot::FootL]),
                         test::lowestUnder(c.skeleton(), models, c.asset->map[Slot::FootR]));
  }
  return height[1] - height[0];
}

void printFigures(const char* label, const test::RunFigures& f, double rigHip) {
  std::printf(
      "[%s] run -> fall -> get-up: %s clip (yaw from %s), settled %.2f s after the handoff, gather %.2f s, "
      "transition %.2f s (hold %.2f s, planned worst %.2f m/s), weight-0 error %.4f mm; worst per-frame jump "
      "beyond the clip's own motion: pelvis %.1f mm, feet %.1f mm (raw, clip motion included: pelvis %.1f "
      "mm, "
      "feet %.1f mm); final pelvis height %.3f m (the clip's end %.3f m, completion tail %.2f s; rig "
      "standing "
      "hip %.3f m: %+.1f cm), "
      "feet %.1f / %.1f cm; recovered %d, ran again %d; resumed run (exit blend %.2f s): worst jump beyond "
      "the "
      "run clip's own motion pelvis %.1f mm, feet %.1f mm (the clip's own fastest foot %.1f mm per frame)\n",
      label, facingName(f.facing), facingSourceName(f.facingSource), f.settleTime, f.gatherTime,
      f.transition.duration, f.transition.hold, f.transition.worstPointSpeed, f.weightZeroError * 1e3,
      f.recovery.pelvisJump * 1e3, f.recovery.footJump * 1e3, f.recovery.pelvisStep * 1e3,
      f.recovery.footStep * 1e3, f.finalPelvisHeight, f.clipEndPelvisHeight, f.getUpTail, rigHip,
      (f.finalPelvisHeight - rigHip) * 100.0, f.finalFootHeight[0] * 100.0, f.finalFootHeight[1] * 100.0,
      f.recovered, f.ranAgain, f.exitBlend, f.resume.pelvisJump * 1e3, f.resume.footJump * 1e3,
      f.resume.footOwnStep * 1e3);
}

// The shared figures every end-to-end run must meet.
void expectGoodRecovery(const test::RunFigures& f, double rigHip) {
  EXPECT_TRUE(f.recovered);
  EXPECT_TRUE(f.ranAgain);
  EXPECT_NE(f.facing, Facing::Undecided);
  EXPECT_EQ(f.blockingViolations, 0) << "steps without exactly one blocking representation";
  // Weight 0 reproduces the fallen pose: 0.01 mm (issue 5), met to rounding.
  EXPECT_LT(f.weightZeroError, 1e-5);
  // Issue 5: on every frame of the recovery the pelvis and both feet move at most 2 cm per 60 Hz
  // frame beyond the clip's own motion over that frame. The transition is planned with a
  // 1 m/s bound (1.7 cm per frame), so 2 cm also holds a margin for rounding.
  EXPECT_LT(f.recovery.pelvisJump, 0.02);
  EXPECT_LT(f.recovery.footJump, 0.02);
  EXPECT_TRUE(f.transition.boundMet);
  EXPECT_GE(f.transition.duration, TransitionSettings{}.duration);
  // It stands where the clip's last frame stands it: the root on the floor (y = 0), so the pelvis
  // at the clip's own end height (1 cm: the stand planner's ground contact).
  EXPECT_NEAR(f.finalPelvisHeight, f.clipEndPelvisHeight, 0.01);
  // Both feet on the ground within 3 cm (issue 5's retargeting bound; the lowest joint or end
  // site is the ankle or the toe, a little above the sole).
  EXPECT_NEAR(f.finalFootHeight[0], 0.0, 0.03);
  EXPECT_NEAR(f.finalFootHeight[1], 0.0, 0.03);
  // Both clips end standing: the pelvis at the rig's own standing hip height within 3 cm (issue
  // 5's bound). The face-down clip ends standing as shipped (2.6 cm below DeepMimic's straight-
  // legged height, knees within 4 degrees); the face-up clip stops mid-rise (knees 24/38 degrees)
  // and is completed to the face-down clip's standing end by the loader (prepareGetUpClips).
  EXPECT_NEAR(f.finalPelvisHeight, rigHip, 0.03);
  // Running again (the game resumes its clip at frame 0, mid-stride): the exit blend fades the
  // stance out on top of the run. The pelvis moves at most 2 cm per frame beyond the run's own
  // motion. The feet: the fade itself is bounded to transition.maxPointSpeed (1.7 cm per frame),
  // but the run's fast leg swing acts on the stance offsets not yet faded, so a foot may move
  // faster than the clip's own foot on that frame; never a pop, though: less than the clip's own
  // fastest foot move per frame (a cut moved a DeepMimic foot 45 cm and a Mesh2Motion foot 72 cm
  // in one frame).
  EXPECT_GT(f.exitBlend, 0.0);
  EXPECT_LT(f.resume.pelvisJump, 0.02);
  EXPECT_LT(f.resume.footJump, f.resume.footOwnStep);
}

TEST(FallAndGetUp, DeepMimicRunFallsSettlesGetsUpAndRunsAgain) {
  const test::Character& c = loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  const double hip = standingHip(c, -1);  // the bind: upright, straight legs
  const test::RunFigures f = test::runFallAndGetUp(c, 0, 0.5, Transform::identity());
  printFigures("deepmimic", f, hip);
  expectGoodRecovery(f, hip);
}

TEST(FallAndGetUp, CmuJumpFallsAndGetsUpWithRetargetedClips) {
  const test::Character& c = loadCharacter("cmu/01_01.bvh");
  ASSERT_TRUE(c.asset);
  // Handed off mid-air in the first playground jump: at 3.75 s both feet are 10 cm above where
  // they stand (apex 3.7 s; the jump leaves the ground at 3.6 s and lands at 3.95 s).
  const double handoff = 3.75;
  const double airborne = feetAboveStanding(c, 0, handoff);
  std::printf("[cmu 01_01] handoff at %.2f s, feet %.1f cm above their standing height\n", handoff,
              airborne * 100.0);
  EXPECT_GT(airborne, 0.05) << "the handoff is mid-jump";
  const double hip = standingHip(c, 0);  // frame 0 stands upright before the jumps
  const test::RunFigures f = test::runFallAndGetUp(c, 0, handoff, Transform::identity());
  printFigures("cmu 01_01", f, hip);
  expectGoodRecovery(f, hip);
}

TEST(FallAndGetUp, Mesh2MotionJogFallsAndGetsUpWithRetargetedClips) {
  const test::Character& c = loadCharacter("mesh2motion/human-base-animations.glb");
  ASSERT_TRUE(c.asset);
  const int jog = test::clipIndex(c, "Jog_Fwd_Loop");
  ASSERT_GE(jog, 0);
  const double hip = standingHip(c, test::clipIndex(c, "T-Pose"));
  const test::RunFigures f = test::runFallAndGetUp(c, jog, 0.4, Transform::identity());
  printFigures("mesh2motion", f, hip);
  expectGoodRecovery(f, hip);
}

}  // namespace
}  // namespace handoff
