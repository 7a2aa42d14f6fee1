// Pose capture relative to the new root and the display transition (SPEC.md section 4).
#include "recovery/recovery_test_util.h"
#include "support/test_math.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <limits>

namespace handoff {
namespace {

using test::rotNear;
using test::vecNear;
using test::xfNear;

// A pelvis with a spine above it and a leg below:
//
//        1 spine (0.5 above the pelvis)
//        |
//        0 pelvis (top-level joint)
//        |
//        2 leg (0.4 below)
Skeleton makeSkeleton() {
  Skeleton s;
  s.jointNames = {"pelvis", "spine", "leg"};
  s.parents = {kNoParent, 0, 0};
  s.restLocal = {Transform::fromTranslation({0, 0.9, 0}), Transform::fromTranslation({0, 0.5, 0}),
                 Transform::fromTranslation({0, -0.4, 0})};
  s.endSiteOffset = {Vec3{0}, Vec3{0}, Vec3{0}};
  return s;
}

TEST(CapturePose, ByHand) {
  const Skeleton s = makeSkeleton();
  // The ragdoll lies at world (1, 0.2, 0.5) unrotated, spine and leg where the rest pose puts them.
  const std::vector<Transform> world = {Transform::fromTranslation({1.0, 0.2, 0.5}),
                                        Transform::fromTranslation({1.0, 0.7, 0.5}),
                                        Transform::fromTranslation({1.0, -0.2, 0.5})};
  // The new root: at (1, 0, 0), turned +90 degrees about Y.
  const Transform worldFromRoot{glm::angleAxis(kPi / 2, kRecoveryUp), Vec3{1.0, 0.0, 0.0}};
  std::vector<Transform> locals(3);
  ASSERT_TRUE(capturePose(s, world, worldFromRoot, locals));
  // Root-relative pelvis: Ry(-90) * (0, 0.2, 0.5) = (-0.5, 0.2, 0), rotation Ry(-90).
  EXPECT_TRUE(xfNear(locals[0], Transform{glm::angleAxis(-kPi / 2, kRecoveryUp), Vec3{-0.5, 0.2, 0.0}}, 1e-12,
                     1e-12));
  EXPECT_TRUE(xfNear(locals[1], Transform::fromTranslation({0.0, 0.5, 0.0}), 1e-12, 1e-12));
  EXPECT_TRUE(xfNear(locals[2], Transform::fromTranslation({0.0, -0.4, 0.0}), 1e-12, 1e-12));
}

TEST(CapturePose, RejectsNonFiniteInputAndLeavesThePoseUnchanged) {
  const Skeleton s = makeSkeleton();
  std::vector<Transform> world = {Transform{}, Transform{}, Transform{}};
  std::vector<Transform> locals(3, Transform::fromTranslation({7.0, 7.0, 7.0}));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  world[2].translation.y = nan;
  EXPECT_FALSE(capturePose(s, world, Transform{}, locals));
  world[2] = Transform{};
  world[1].rotation.x = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(capturePose(s, world, Transform{}, locals));
  world[1] = Transform{};
  Transform badRoot;
  badRoot.translation.z = nan;
  EXPECT_FALSE(capturePose(s, world, badRoot, locals));
  for (const Transform& t : locals) EXPECT_TRUE(vecNear(t.translation, Vec3{7.0}, 0.0));
}

struct RealFixture {
  test::LoadedClip clip;
  GetUpClipInfo info;
};

RealFixture loadReal(const char* file) {
  RealFixture f;
  f.clip = test::loadClip(file);
  Result<GetUpClipInfo> info = computeGetUpClipInfo(f.clip.clip, f.clip.skeleton, f.clip.map);
  EXPECT_TRUE(info.ok()) << (info.ok() ? "" : info.error());
  if (info.ok()) f.info = *info;
  return f;
}

// At weight 0 the captured pose reproduces the fallen world pose of every bone, although the
// root moved (placement, then a relocation by the stand planner).
TEST(CapturePose, WeightZeroReproducesTheFallenWorldPose) {
  const RealFixture f = loadReal("deepmimic/humanoid3d_getup_faceup.bvh");
  const Skeleton& s = f.clip.skeleton;
  const auto n = static_cast<size_t>(s.jointCount());
  // A fallen pose: a mid-clip frame, somewhere in the world.
  const Transform worldFromOldRoot{glm::angleAxis(2.1, glm::normalize(Vec3{0.2, 1.0, -0.1})),
                                   Vec3{4.0, 0.3, -7.0}};
  const std::vector<Transform> fallen = test::worldOf(s, f.clip.clip.frame(100), worldFromOldRoot);
  RootPlacement placement = placeRoot(fallen[static_cast<size_t>(f.info.pelvisJoint)], f.info,
                                      Vec3{0.0, 0.0, 1.0}, Vec3{0.0, 0.0, 1.0});
  ASSERT_TRUE(placement.valid);
  Transform worldFromRoot = placement.worldFromRoot;
  worldFromRoot.translation += Vec3{0.3, 0.05, -0.15};  // moved by the planner
  std::vector<Transform> captured(n);
  ASSERT_TRUE(capturePose(s, fallen, worldFromRoot, captured));

  std::vector<Transform> display(n);
  transitionPose(captured, f.clip.clip, s, f.info, 0.0, TransitionSettings{}, display);
  const std::vector<Transform> shown = test::worldOf(s, display, worldFromRoot);
  double worst = 0.0;
  for (size_t j = 0; j < n; ++j) {
    EXPECT_TRUE(xfNear(shown[j], fallen[j], 1e-5, 1e-9)) << s.jointNames[j];
    worst = std::max(worst, glm::length(shown[j].translation - fallen[j].translation));
  }
  std::printf("[capture] worst bone position error at weight 0: %.3g m\n", worst);
  RecordProperty("capture_error_m", std::to_string(worst));
}

TEST(Transition, WeightRamp) {
  const TransitionSettings s;
  EXPECT_DOUBLE_EQ(s.duration, 0.25);
  EXPECT_EQ(transitionWeight(-1.0, s), 0.0);
  EXPECT_EQ(transitionWeight(0.0, s), 0.0);
  EXPECT_DOUBLE_EQ(transitionWeight(0.125, s), 0.5);
  EXPECT_EQ(transitionWeight(0.25, s), 1.0);
  EXPECT_EQ(transitionWeight(3.0, s), 1.0);
  EXPECT_EQ(transitionWeight(std::numeric_limits<double>::quiet_NaN(), s), 0.0) << "rejected: captured pose";
  EXPECT_EQ(transitionWeight(std::numeric_limits<double>::infinity(), s), 1.0);
}

// Across the transition on a real get-up clip, from a captured pose close to its first frame
// (every joint turned by up to 8 degrees of seeded noise, lying at 8 headings): no frame moves the
// pelvis or a foot (ankle and toe tip) more than 2 cm beyond what the clip's own motion moves it
// in that 60 Hz frame. After the transition the display is the clip exactly.
TEST(Transition, NoJumpBeyondTheClipsOwnMotion) {
  std::mt19937 rng(7u);
  const double frameDt = 1.0 / 60.0;
  double worstExcess = 0.0;
  double worstJump = 0.0;
  for (const char* file :
       {"deepmimic/humanoid3d_getup_faceup.bvh", "deepmimic/humanoid3d_getup_facedown.bvh"}) {
    const RealFixture f = loadReal(file);
    const Skeleton& s = f.clip.skeleton;
    const auto n = static_cast<size_t>(s.jointCount());
    const int tracked[] = {f.clip.map[Slot::Pelvis], f.clip.map[Slot::FootL], f.clip.map[Slot::FootR]};
    for (int heading = 0; heading < 8; ++heading) {
      std::vector<Transform> perturbed(f.clip.clip.frame(0).begin(), f.clip.clip.frame(0).end());
      for (Transform& t : perturbed) t.rotation = test::randomRotation(rng, 8.0 * kPi / 180.0) * t.rotation;
      const Transform worldFromClip{glm::angleAxis(heading * kPi / 4 + 0.3, kRecoveryUp),
                                    Vec3{-2.0, 0.0, 5.0}};
      const std::vector<Transform> fallen = test::worldOf(s, perturbed, worldFromClip);
      const RootPlacement placement = placeRoot(fallen[static_cast<size_t>(f.info.pelvisJoint)], f.info,
                                                Vec3{0.0, 0.0, 1.0}, Vec3{0.0, 0.0, 1.0});
      ASSERT_TRUE(placement.valid);
      std::vector<Transform> captured(n);
      ASSERT_TRUE(capturePose(s, fallen, placement.worldFromRoot, captured));

      // Tracked points: the pelvis, each foot joint and its toe tip (end site).
      const auto points = [&](std::span<const Transform> locals, std::vector<Vec3>& out) {
        const std::vector<Transform> world = test::worldOf(s, locals, placement.worldFromRoot);
        out.clear();
        for (int j : tracked) {
          const Transform& t = world[static_cast<size_t>(j)];
          out.push_back(t.translation);
          out.push_back(t.transformPoint(s.endSiteOffset[static_cast<size_t>(j)]));
        }
      };
      std::vector<Transform> display(n);
      std::vector<Transform> clipOnly(n);
      std::vector<Vec3> shownPrev;
      std::vector<Vec3> clipPrev;
      std::vector<Vec3> shown;
      std::vector<Vec3> clipNow;
      // t = 0 shows the fallen pose itself (frame -1 of the display is the physics pose).
      points(captured, shownPrev);
      clipPrev = shownPrev;
      for (int frame = 0; frame <= 30; ++frame) {
        const double t = frame * frameDt;
        transitionPose(captured, f.clip.clip, s, f.info, t, TransitionSettings{}, display);
        sampleGetUpInRoot(f.clip.clip, s, f.info, t, clipOnly);
        points(display, shown);
        points(clipOnly, clipNow);
        for (size_t k = 0; k < shown.size(); ++k) {
          const double jump = glm::length(shown[k] - shownPrev[k]);
          const double clipMotion = frame == 0 ? 0.0 : glm::length(clipNow[k] - clipPrev[k]);
          EXPECT_LE(jump - clipMotion, 0.02)
              << file << " heading " << heading << " frame " << frame << " point " << k;
          worstExcess = std::max(worstExcess, jump - clipMotion);
          worstJump = std::max(worstJump, jump);
        }
        if (t >= TransitionSettings{}.duration) {
          for (size_t j = 0; j < n; ++j) EXPECT_TRUE(xfNear(display[j], clipOnly[j], 1e-12, 1e-12));
        }
        shownPrev = shown;
        clipPrev = clipNow;
      }
    }
  }
  std::printf(
      "[transition] worst pelvis/foot jump per 60 Hz frame: %.2f cm, beyond the clip's own motion: %.2f cm\n",
      worstJump * 100.0, worstExcess * 100.0);
  RecordProperty("worst_excess_jump_cm", std::to_string(worstExcess * 100.0));
}

// planTransition: from fallen poses far from the clip's first frame (every joint turned by up to
// 60 degrees of seeded noise), the planned transition is longer than 0.25 s and, replayed frame by
// frame as the controller shows it, moves the pelvis and both feet at most maxPointSpeed * dt
// beyond the clip's own motion on every frame; the clip holds its first frame for `hold`, then
// plays; at weight 0 the display is the captured pose. A pose at the clip's first frame keeps the
// SPEC's 0.25 s; maxPointSpeed = 0 gives the fixed transition.
TEST(Transition, PlanBoundsThePelvisAndFeetSpeed) {
  std::mt19937 rng(11u);
  const double dt = 1.0 / 60.0;
  const TransitionSettings settings;
  double worstExcess = 0.0, longest = 0.0;
  for (const char* file :
       {"deepmimic/humanoid3d_getup_faceup.bvh", "deepmimic/humanoid3d_getup_facedown.bvh"}) {
    const RealFixture f = loadReal(file);
    const Skeleton& s = f.clip.skeleton;
    const auto n = static_cast<size_t>(s.jointCount());
    const std::vector<int> tracked = {f.clip.map[Slot::Pelvis], f.clip.map[Slot::FootL],
                                      f.clip.map[Slot::FootR]};
    TransitionScratch scratch;
    scratch.resize(s.jointCount());
    std::vector<Transform> captured(f.clip.clip.frame(0).begin(), f.clip.clip.frame(0).end());
    sampleGetUpInRoot(f.clip.clip, s, f.info, 0.0, captured);
    // At the clip's first frame: nothing to travel, the default 0.25 s.
    TransitionPlan plan = planTransition(captured, f.clip.clip, s, f.info, tracked, dt, settings, scratch);
    EXPECT_DOUBLE_EQ(plan.duration, settings.duration);
    EXPECT_EQ(plan.hold, 0.0);
    EXPECT_TRUE(plan.boundMet);
    TransitionSettings fixed;
    fixed.maxPointSpeed = 0.0;
    EXPECT_DOUBLE_EQ(planTransition(captured, f.clip.clip, s, f.info, tracked, dt, fixed, scratch).duration,
                     0.25);
    for (int trial = 0; trial < 4; ++trial) {
      sampleGetUpInRoot(f.clip.clip, s, f.info, 0.0, captured);
      for (Transform& t : captured) t.rotation = test::randomRotation(rng, 60.0 * kPi / 180.0) * t.rotation;
      plan = planTransition(captured, f.clip.clip, s, f.info, tracked, dt, settings, scratch);
      EXPECT_GT(plan.duration, settings.duration) << file << " trial " << trial;
      EXPECT_NEAR(plan.hold, plan.duration - settings.duration, 1e-12);
      EXPECT_TRUE(plan.boundMet) << file << " trial " << trial << ": " << plan.worstPointSpeed << " m/s";
      longest = std::max(longest, plan.duration);
      // Replay: every frame, every tracked joint.
      std::vector<Transform> display(n), clipOnly(n);
      std::vector<Vec3> prevShown, prevClip;
      for (int frame = 0; frame * dt <= plan.duration + dt; ++frame) {
        const double t = frame * dt;
        transitionPose(captured, f.clip.clip, s, f.info, t, plan, display);
        sampleGetUpInRoot(f.clip.clip, s, f.info, transitionClipTime(t, plan), clipOnly);
        const std::vector<Transform> shown = test::modelsOf(s, display);
        const std::vector<Transform> clip = test::modelsOf(s, clipOnly);
        if (frame == 0) {
          for (size_t j = 0; j < n; ++j) EXPECT_TRUE(xfNear(display[j], captured[j], 1e-12, 1e-12));
        }
        for (size_t k = 0; k < tracked.size(); ++k) {
          const auto j = static_cast<size_t>(tracked[k]);
          if (frame > 0) {
            const double excess = glm::length(shown[j].translation - prevShown[k]) -
                                  glm::length(clip[j].translation - prevClip[k]);
            EXPECT_LE(excess, settings.maxPointSpeed * dt + 1e-9) << file << " frame " << frame;
            worstExcess = std::max(worstExcess, excess);
          }
        }
        prevShown.clear();
        prevClip.clear();
        for (int j : tracked) {
          prevShown.push_back(shown[static_cast<size_t>(j)].translation);
          prevClip.push_back(clip[static_cast<size_t>(j)].translation);
        }
      }
    }
  }
  std::printf(
      "[transition plan] 60 deg noise: longest planned %.2f s, worst excess %.1f mm per 60 Hz frame (bound "
      "%.1f)\n",
      longest, worstExcess * 1e3, settings.maxPointSpeed * dt * 1e3);
}

}  // namespace
}  // namespace handoff
