// End to end (SPEC.md sections 3 and 4): a character runs, is handed to physics, falls on flat
// ground, settles, picks the get-up clip for the way it lies, blends into it, stands, and runs
// again; each as a seeded ensemble of 32 falls (support/ensemble.h: a fall is chaotic). Checked every step:
// exactly one blocking representation. Checked on every frame of the recovery: the displayed pelvis and both
// feet move no more than the get-up clip itself moves them over that frame plus 2 cm (issue 5: "no
// single-frame jump above 2 cm at 60 Hz"); at the frame the recovery starts (weight 0) the displayed skeleton
// is the fallen one within 0.01 mm. Where it stands: the pelvis where the chosen clip's last frame puts it,
// on the rig's own standing hip height (measured in a standing frame of the rig's own data, as the retarget
// test does), both feet on the ground; the face-up clip completed to standing (GetUpCompletion).
#include "controller/getup_scene.h"
#include "support/ensemble.h"

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

// One member: the run with its seeded variations (handoff time, the root's yaw, a millimetre of
// noise on the start position) and what it measured.
struct Member {
  double handoff = 0.0;  // [s]
  double yaw = 0.0;      // [rad]
  test::RunFigures f;
};

// The ensemble of issue 16: `members` falls of `clip` handed off within `window` of `handoff`, at
// any yaw, each with 1 mm of start noise. Per member, the invariants no fall may break; over the
// ensemble, the rates and quantiles of SPEC.md section 4's get-up (issue 5's bounds), printed.
void fallEnsemble(const char* label, const test::Character& c, int clip, double handoff, double window,
                  double rigHip, std::uint32_t seed) {
  const int members = test::ensembleSize(32);
  const std::vector<Member> runs = test::runEnsemble<Member>(members, seed, [&](int, std::mt19937& rng) {
    Member m;
    m.handoff = handoff + test::uniform(rng, -window, window);
    m.yaw = test::uniform(rng, 0.0, 2.0 * kPi);
    const Vec3 noise{test::uniform(rng, -1e-3, 1e-3), 0.0, test::uniform(rng, -1e-3, 1e-3)};
    // The get-up is the subject: with the default LandingSettings some of these falls come down
    // on their feet and land without lying down (docs/TUNING.md); here they all lie down.
    CharacterSettings getUpOnly;
    getUpOnly.landing.enabled = false;
    m.f = test::runFallAndGetUp(c, clip, m.handoff,
                                Transform{glm::angleAxis(m.yaw, Vec3{0.0, 1.0, 0.0}), noise}, getUpOnly);
    return m;
  });
  std::printf("[%s] %d falls, handoff %.2f +- %.2f s, any yaw, 1 mm start noise (seed %u)\n", label, members,
              handoff, window, seed);
  std::vector<double> settle, hipError, pelvisJump, footJump, resumePelvis, resumeFootMargin, transition;
  for (const Member& m : runs) {
    const test::RunFigures& f = m.f;
    // Invariants, every member: one blocking representation at every step, weight 0 reproduces
    // the fallen pose (0.01 mm, issue 5; met to rounding), the planned transition meets its bound
    // and lasts at least the default.
    EXPECT_EQ(f.blockingViolations, 0) << "member handoff " << m.handoff << " yaw " << m.yaw;
    if (f.recovered) {
      EXPECT_LT(f.weightZeroError, 1e-5) << "member handoff " << m.handoff << " yaw " << m.yaw;
      EXPECT_TRUE(f.transition.boundMet) << "member handoff " << m.handoff << " yaw " << m.yaw;
      EXPECT_GE(f.transition.duration, TransitionSettings{}.duration);
      settle.push_back(f.settleTime);
      hipError.push_back(std::abs(f.finalPelvisHeight - rigHip));
      pelvisJump.push_back(f.recovery.pelvisJump);
      footJump.push_back(f.recovery.footJump);
      transition.push_back(f.transition.duration);
    }
    if (f.ranAgain) {
      resumePelvis.push_back(f.resume.pelvisJump);
      resumeFootMargin.push_back(f.resume.footJump - f.resume.footOwnStep);
    }
  }
  test::printDistribution("settled after the handoff", settle, "s");
  test::printDistribution("transition duration", transition, "s");
  test::printDistribution("|final pelvis - rig standing hip|", hipError, "cm", 100.0);
  test::printDistribution("worst pelvis jump beyond the clip, per frame", pelvisJump, "mm", 1e3);
  test::printDistribution("worst foot jump beyond the clip, per frame", footJump, "mm", 1e3);
  test::printDistribution("resumed run: worst pelvis jump beyond the run", resumePelvis, "mm", 1e3);
  test::printDistribution("resumed run: worst foot jump - the run's own", resumeFootMargin, "mm", 1e3);
  // Issue 5's bounds as rates: a chaotic fall may end somewhere no get-up clip fits, but at
  // least 95 % of the members get up, stand at the rig's standing hip height within 3 cm with
  // both feet on the ground within 3 cm (the pelvis where the chosen clip's last frame puts it,
  // 1 cm: the stand planner's ground contact) and run again.
  const double up = test::printRate("recovered and ran again", runs, [](const Member& m) { return m.f.ranAgain; });
  const double stood = test::printRate("stood within 3 cm of the rig's standing hip", runs, [&](const Member& m) {
    return m.f.recovered && std::abs(m.f.finalPelvisHeight - rigHip) < 0.03;
  });
  const double placed = test::printRate("pelvis at the clip's end, feet on the ground", runs, [](const Member& m) {
    return m.f.recovered && std::abs(m.f.finalPelvisHeight - m.f.clipEndPelvisHeight) < 0.01 &&
           std::abs(m.f.finalFootHeight[0]) < 0.03 && std::abs(m.f.finalFootHeight[1]) < 0.03;
  });
  // Issue 5: no frame of the recovery moves the pelvis or a foot more than 2 cm beyond the
  // clip's own motion (the transition is planned at 1 m/s, 1.7 cm per frame), and the resumed
  // run moves the pelvis at most 2 cm per frame beyond the run's own motion and a foot less than
  // the run's own fastest foot move (a cut moved a foot 45-72 cm).
  const double smooth = test::printRate("every recovery frame within 2 cm of the clip", runs, [](const Member& m) {
    return m.f.recovered && m.f.recovery.pelvisJump < 0.02 && m.f.recovery.footJump < 0.02;
  });
  const double resumed = test::printRate("resumed run continuous", runs, [](const Member& m) {
    return m.f.ranAgain && m.f.exitBlend > 0.0 && m.f.resume.pelvisJump < 0.02 &&
           m.f.resume.footJump < m.f.resume.footOwnStep;
  });
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i].f.ranAgain) std::printf("  member %zu (handoff %.3f s, yaw %.3f) did not run again:\n%s", i,
                                         runs[i].handoff, runs[i].yaw, runs[i].f.story.c_str());
  }
  if (!test::kEnsembleStatistics) return;
  EXPECT_GE(up, 0.95);
  EXPECT_GE(stood, 0.95);
  EXPECT_GE(placed, 0.95);
  EXPECT_GE(smooth, 0.95);
  EXPECT_GE(resumed, 0.95);
}

TEST(FallAndGetUp, DeepMimicRunFallsSettlesGetsUpAndRunsAgain) {
  const test::Character& c = loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  const double hip = standingHip(c, -1);  // the bind: upright, straight legs
  fallEnsemble("deepmimic run", c, 0, 0.5, 0.15, hip, 501u);
}

TEST(FallAndGetUp, CmuJumpFallsAndGetsUpWithRetargetedClips) {
  const test::Character& c = loadCharacter("cmu/01_01.bvh");
  ASSERT_TRUE(c.asset);
  // Handed off mid-air in the first playground jump: from 3.70 to 3.80 s both feet are more than
  // 5 cm above where they stand (the jump leaves the ground at 3.6 s, apex 3.7 s, lands 3.95 s).
  for (const double t : {3.70, 3.75, 3.80}) {
    const double airborne = feetAboveStanding(c, 0, t);
    std::printf("[cmu 01_01] at %.2f s both feet %.1f cm above their standing height\n", t, airborne * 100.0);
    EXPECT_GT(airborne, 0.05) << "the handoff window is mid-jump";
  }
  const double hip = standingHip(c, 0);  // frame 0 stands upright before the jumps
  fallEnsemble("cmu 01_01 jump", c, 0, 3.75, 0.05, hip, 502u);
}

TEST(FallAndGetUp, Mesh2MotionJogFallsAndGetsUpWithRetargetedClips) {
  const test::Character& c = loadCharacter("mesh2motion/human-base-animations.glb");
  ASSERT_TRUE(c.asset);
  const int jog = test::clipIndex(c, "Jog_Fwd_Loop");
  ASSERT_GE(jog, 0);
  const double hip = standingHip(c, test::clipIndex(c, "T-Pose"));
  fallEnsemble("mesh2motion jog", c, jog, 0.4, 0.15, hip, 503u);
}

}  // namespace
}  // namespace handoff
