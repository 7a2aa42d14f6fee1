// The controller's get-up decisions on a real ragdoll (SPEC.md section 4, issue 5): the
// DeepMimic character is dropped lying as a get-up clip starts (its first frame, turned by a
// heading), settles, and the controller chooses the clip, the root's yaw and the spot to stand.
// Every step: exactly one blocking representation.
#include "controller/getup_scene.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

namespace handoff {
namespace {

Vec3 horizontalUnit(const Vec3& v) { return glm::normalize(Vec3{v.x, 0.0, v.z}); }
double degrees(double radians) { return radians * 180.0 / kPi; }

/// A DeepMimic scene whose animation holds the first frame of `start` (a get-up clip) on
/// `worldFromRoot`, lifted 2 cm so nothing starts inside the floor.
::testing::AssertionResult startLying(test::GetUpScene& scene, const GetUpClip& start,
                                      Transform worldFromRoot,
                                      const std::function<void(PhysicsWorld&)>& addLevel = nullptr) {
  const test::Character& c = test::loadCharacter("deepmimic/humanoid3d_run.bvh");
  if (!c.asset) return ::testing::AssertionFailure() << "no asset";
  worldFromRoot.translation.y += 0.02;
  scene.animation = [&c, clip = start](double, std::span<Transform> out) {
    sampleGetUpInRoot(clip.clip, c.skeleton(), clip.info, 0.0, out);
  };
  ::testing::AssertionResult started = scene.start(c, 0, worldFromRoot);
  if (started && addLevel) addLevel(*scene.world);
  return started;
}

/// Steps (animated for 3 frames, then ragdoll) until the recovery starts or `seconds` pass.
/// Returns the world pelvis bone at the frame the recovery started (the fallen pelvis).
Transform untilRecovery(
    test::GetUpScene& scene, double seconds, const std::function<void()>& everyStep = [] {}) {
  handoff::Character& ch = *scene.ch;
  for (int k = 0; k < 3; ++k) scene.step();
  EXPECT_TRUE(scene.goRagdoll());
  Transform fallenPelvis;
  for (int k = 0; k < seconds * 60.0 && ch.state() != CharacterState::Recovering; ++k) {
    std::vector<Transform> bodies(static_cast<size_t>(ch.ragdoll().bodyCount()));
    scene.step([&] { ch.ragdoll().readBodyPoses(bodies); });
    EXPECT_EQ(ch.blockingRepresentations(), 1) << "step " << k;
    everyStep();
    fallenPelvis = bodies[0] * scene.c->asset->bodies[0].boneFromBody.inverse();
  }
  return fallenPelvis;
}

// On its back -> the supine (face-up) clip; on its front -> the prone (face-down) clip.
TEST(GetUpLying, BackChoosesSupineFrontChoosesProne) {
  for (const bool faceUp : {true, false}) {
    test::GetUpScene scene;
    const test::Character& c = test::loadCharacter("deepmimic/humanoid3d_run.bvh");
    ASSERT_TRUE(c.asset);
    const std::optional<GetUpClip> pose = test::loadGetUp(
        c, faceUp ? "deepmimic/humanoid3d_getup_faceup.bvh" : "deepmimic/humanoid3d_getup_facedown.bvh");
    ASSERT_TRUE(pose);
    ASSERT_TRUE(startLying(scene, *pose, Transform::identity()));
    untilRecovery(scene, 5.0);
    ASSERT_EQ(scene.ch->state(), CharacterState::Recovering);
    const RecoveryRecord& r = scene.ch->recoveries().back();
    std::printf("[lying %s] chose the %s clip, settled at %.2f s\n", faceUp ? "on the back" : "on the front",
                facingName(r.facing), r.settleTime);
    EXPECT_EQ(r.facing, faceUp ? Facing::Supine : Facing::Prone);
    EXPECT_FALSE(scene.ch->facing().inHoldBand());
  }
}

// 8 fall headings: the standing root's yaw matches the fallen pelvis's a_B projected on the
// ground within 1 degree, and the record says the yaw came from that projection.
TEST(GetUpLying, EightHeadingsStandFacingTheProjectedPelvisForward) {
  const test::Character& c = test::loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  const std::optional<GetUpClip> faceUp = test::loadGetUp(c, "deepmimic/humanoid3d_getup_faceup.bvh");
  const std::optional<GetUpClip> faceDown = test::loadGetUp(c, "deepmimic/humanoid3d_getup_facedown.bvh");
  ASSERT_TRUE(faceUp && faceDown);
  double worst = 0.0;
  for (int k = 0; k < 8; ++k) {
    const double heading = (10.0 + 45.0 * k) * kPi / 180.0;
    const GetUpClip& start = k % 2 == 0 ? *faceUp : *faceDown;
    test::GetUpScene scene;
    ASSERT_TRUE(
        startLying(scene, start, Transform{glm::angleAxis(heading, kRecoveryUp), Vec3{1.0, 0.0, -2.0}}));
    const Transform fallenPelvis = untilRecovery(scene, 5.0);
    ASSERT_EQ(scene.ch->state(), CharacterState::Recovering) << "heading " << degrees(heading);
    const RecoveryRecord& r = scene.ch->recoveries().back();
    const GetUpClip& chosen = scene.chosen();
    EXPECT_EQ(r.facingSource, FacingSource::PelvisProjection);
    const Vec3 projected = horizontalUnit(fallenPelvis.rotation * chosen.info.standingForwardInPelvis);
    const Vec3 standing = horizontalUnit(r.worldFromRoot.rotation * chosen.info.forwardInRoot);
    const double error = std::acos(std::clamp(glm::dot(projected, standing), -1.0, 1.0));
    EXPECT_LT(degrees(error), 1.0) << "heading " << degrees(heading);
    // Yaw only: the standing root is upright.
    EXPECT_NEAR(glm::length(r.worldFromRoot.rotation * kRecoveryUp - kRecoveryUp), 0.0, 1e-12);
    worst = std::max(worst, error);
  }
  std::printf("[lying] 8 headings: worst standing yaw vs projected pelvis forward %.2e deg (source %s)\n",
              degrees(worst), facingSourceName(FacingSource::PelvisProjection));
}

// A wall along the fallen body, 5 cm beside it: where the character would stand the capsule
// (radius 0.3 m) would cut into the wall. The capsule never overlaps the wall while it is on;
// the recovery is relocated or delayed and the record says why.
TEST(GetUpLying, WallBesideTheFallenBodyRelocatesOrDelaysAndTheCapsuleNeverEntersIt) {
  const test::Character& c = test::loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  const std::optional<GetUpClip> faceUp = test::loadGetUp(c, "deepmimic/humanoid3d_getup_faceup.bvh");
  ASSERT_TRUE(faceUp);
  // The lying pose's widest point toward +X (joints, plus the asset's largest body radius).
  std::vector<Transform> locals(static_cast<size_t>(c.skeleton().jointCount())), models(locals.size());
  sampleGetUpInRoot(faceUp->clip, c.skeleton(), faceUp->info, 0.0, locals);
  localToModel(c.skeleton(), locals, models);
  double widest = -1e30, radius = 0.0;
  for (const Transform& m : models) widest = std::max(widest, m.translation.x);
  for (const BodyDef& b : c.asset->bodies) radius = std::max(radius, b.shape.radius);
  const double wallFace = widest + radius + 0.05;
  const Vec3 half{0.1, 1.5, 3.0};
  const Vec3 centre{wallFace + half.x, 1.5, 0.0};
  test::GetUpScene scene;
  ASSERT_TRUE(startLying(scene, *faceUp, Transform::identity(), [&](PhysicsWorld& w) {
    w.addStaticBox(Transform::fromTranslation(centre), half, 0.8);
  }));
  handoff::Character& ch = *scene.ch;
  const CapsuleDef& capsule = c.asset->capsule;
  double closest = 1e30;  // capsule axis to the wall's near face, horizontally, while on [m]
  int stepsOn = 0;
  auto check = [&] {
    if (!scene.world->isEnabled(ch.ragdoll().capsule())) return;
    ++stepsOn;
    // The wall spans z in [-3, 3] and the whole capsule height: the capsule overlaps it exactly
    // when its axis is closer than its radius to the wall's near face.
    const Vec3 p = scene.world->transform(ch.ragdoll().capsule()).translation;
    const double gap = (centre.x - half.x) - p.x;
    closest = std::min(closest, gap);
    EXPECT_GE(gap, capsule.radius - 1e-9) << "capsule inside the wall at t " << ch.time();
  };
  untilRecovery(scene, 8.0, check);
  ASSERT_EQ(ch.state(), CharacterState::Recovering);
  for (int k = 0; k < 60 && ch.state() == CharacterState::Recovering; ++k) {
    scene.step();
    EXPECT_EQ(ch.blockingRepresentations(), 1);
    check();
  }
  const RecoveryRecord& r = ch.recoveries().back();
  std::printf(
      "[wall] fallen body's near side %.2f m from the wall; decision %s (%s), %d delays; capsule on for %d "
      "steps, its axis at least %.3f m from the wall (radius %.2f m)\n",
      wallFace - widest, standDecisionName(r.standDecision), standReasonName(r.standReason), r.delays,
      stepsOn, closest, capsule.radius);
  EXPECT_GT(stepsOn, 0);
  EXPECT_TRUE(r.standDecision == StandDecision::Relocate || r.delays > 0)
      << standDecisionName(r.standDecision);
  EXPECT_NE(r.standReason, StandReason::Clear) << "the proposed spot was blocked and the record says so";
  bool delayOrGetUpEvent = false;
  for (const CharacterEvent& e : ch.events()) {
    if (e.kind == "delay" || (e.kind == "getup" && e.detail.find("relocate") != std::string::npos)) {
      delayOrGetUpEvent = true;
    }
  }
  EXPECT_TRUE(delayOrGetUpEvent);
}

}  // namespace
}  // namespace handoff
