// The controller's get-up decisions on a real ragdoll (SPEC.md section 4, issue 5): the
// DeepMimic character is dropped lying as a get-up clip starts (its first frame, turned by a
// heading), settles, and the controller chooses the clip, the root's yaw and the spot to stand.
// Every step: exactly one blocking representation.
#include "controller/getup_scene.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <span>
#include <vector>

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

/// The chest-outward axis of the ragdoll's chest body, dotted with Up (the classifier's input).
double chestUpDot(const test::GetUpScene& scene) {
  const RagdollAsset& asset = *scene.c->asset;
  const int chest = asset.bodyForJoint(asset.map[Slot::Chest]);
  const Quat r = scene.world->transform(scene.ch->ragdoll().body(chest)).rotation;
  return glm::dot(chestOutwardInWorld(r, asset.chestForwardInBody), kRecoveryUp);
}

/// Lowest point of the asset's bodies in the model poses `models` (their space's y). [m]
double lowestBody(const RagdollAsset& asset, std::span<const Transform> models) {
  double lowest = std::numeric_limits<double>::infinity();
  for (const BodyDef& b : asset.bodies)
    lowest =
        std::min(lowest, shapeLowestPoint(b.shape, models[static_cast<size_t>(b.joint)] * b.boneFromBody).y);
  return lowest;
}

// One held on its side waits (SPEC.md section 4: "in between (on the side) keep the current
// candidate and wait"), at the controller with real physics. The DeepMimic ragdoll lies on its
// side (its bind pose turned a quarter turn about its forward: chest outward horizontal, dot with
// Up 0). Its torso bodies are capsules, round about the long axis, so nothing on a flat floor
// keeps it there: a hand holds it, a joint from a static anchor to the chest that locks two axes
// and leaves it a play about the long axis (chest-up dot in [-0.189, +0.189] for the first run, in
// [-0.189, -0.179] for the second: tipped forward, just inside the prone threshold). It settles.
// For 200 more steps seeded noise (random angular impulses about the long axis on the chest,
// standard deviation 0.05 N m s, about 0.3 rad/s on the chest's ~0.17 kg m^2) shakes it against
// the end of its play, next to a threshold. Through all of it no get-up starts (no gather, no
// recovery), the classifier keeps its candidate (undecided) in the hold band, and the settle
// detector says settled on at least 100 of the steps, so the facing alone holds the get-up. Then
// the hand lets go and a push rolls it onto its back (its front): the first choice made is the
// supine (prone) clip, and that clip starts.
TEST(GetUpLying, HeldOnItsSideWaitsThenTheRollChoosesTheClip) {
  const test::Character& c = test::loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  const RagdollAsset& asset = *c.asset;
  const Skeleton& skeleton = c.skeleton();
  const int top = asset.map[Slot::Pelvis];
  ASSERT_EQ(skeleton.parents[static_cast<size_t>(top)], kNoParent);
  // Bind pose turned onto its side, its lowest body 5 mm above the floor.
  std::vector<Transform> lying = skeleton.restLocal;
  const Quat quarter = glm::angleAxis(kPi / 2, asset.modelForward);
  lying[static_cast<size_t>(top)] = Transform{quarter, Vec3{0.0}} * lying[static_cast<size_t>(top)];
  std::vector<Transform> models(lying.size());
  localToModel(skeleton, lying, models);
  lying[static_cast<size_t>(top)].translation.y += 0.005 - lowestBody(asset, models);
  localToModel(skeleton, lying, models);
  const int chestBody = asset.bodyForJoint(asset.map[Slot::Chest]);
  ASSERT_GE(chestBody, 0);
  const BodyDef& chestDef = asset.bodies[static_cast<size_t>(chestBody)];
  const Vec3 front =
      chestOutwardInWorld((models[static_cast<size_t>(chestDef.joint)] * chestDef.boneFromBody).rotation,
                          asset.chestForwardInBody);
  ASSERT_NEAR(front.y, 0.0, 1e-9) << "the chest faces sideways";
  const Vec3 along = glm::cross(kRecoveryUp, horizontalUnit(front));  // the long axis, horizontal
  constexpr double kHoldRoll = 0.19;                                  // [rad] the hand's play

  for (const bool ontoBack : {true, false}) {
    SCOPED_TRACE(ontoBack ? "rolls onto its back" : "rolls onto its front");
    test::GetUpScene scene;
    scene.animation = [&lying](double, std::span<Transform> out) {
      std::copy(lying.begin(), lying.end(), out.begin());
    };
    ASSERT_TRUE(scene.start(c, 0, Transform::identity()));
    handoff::Character& ch = *scene.ch;
    for (int k = 0; k < 3; ++k) scene.step();
    ASSERT_TRUE(scene.goRagdoll());
    // The hand: joint X along the long axis, at the chest's centre of mass.
    const BodyId chest = ch.ragdoll().body(chestBody);
    const Transform worldFromChest = scene.world->transform(chest);
    const Transform worldFromHold{rotationBetween(Vec3{1.0, 0.0, 0.0}, along), worldFromChest.translation};
    const BodyId anchor = scene.world->addStaticBox(
        Transform::fromTranslation(worldFromChest.translation + Vec3{0.0, 1.5, 0.0}), Vec3{0.05}, 0.8);
    JointDesc hold;
    hold.bodyA = anchor;
    hold.bodyB = chest;
    hold.bodyAFromJoint = scene.world->transform(anchor).inverse() * worldFromHold;
    hold.bodyBFromJoint = worldFromChest.inverse() * worldFromHold;
    // The play about the long axis: +x turns the chest toward the floor (chest-up dot = -sin x).
    // Gravity rolls this body toward its back, so it rests on the play's low end: on its side
    // then, 0.011 inside the supine threshold; tipped forward for the second run, 0.021 inside
    // the prone one.
    hold.angularLower = Vec3{ontoBack ? -kHoldRoll : 0.18, 0.0, 0.0};
    hold.angularUpper = Vec3{kHoldRoll, 0.0, 0.0};
    Result<JointId> hand = scene.world->createJoint(hold);
    ASSERT_TRUE(hand.ok()) << hand.error();

    auto noGetUp = [&]() {
      for (const CharacterEvent& e : ch.events()) {
        if (e.kind == "gather" || e.kind == "getup")
          return ::testing::AssertionFailure() << e.kind << ": " << e.detail;
      }
      if (!ch.recoveries().empty() || ch.state() != CharacterState::Ragdoll)
        return ::testing::AssertionFailure() << "state " << characterStateName(ch.state());
      return ::testing::AssertionSuccess();
    };
    // Held on its side until settled.
    for (int k = 0; k < 5 * 60 && !ch.settle().settled(); ++k) {
      scene.step();
      ASSERT_EQ(ch.blockingRepresentations(), 1);
      ASSERT_TRUE(noGetUp()) << "step " << k;
    }
    ASSERT_TRUE(ch.settle().settled()) << "held on its side it settles";
    const double settledAt = ch.time();
    const Facing held = ch.facing().candidate();
    // 200 steps of noise: on its side all along, it waits and the choice never flips.
    std::mt19937 rng(ontoBack ? 11u : 12u);
    std::normal_distribution<double> noise(0.0, 0.05);  // [N m s] about the long axis
    double low = 1.0, high = -1.0;
    int settledSteps = 0;
    for (int n = 0; n < 200; ++n) {
      scene.world->applyAngularImpulse(chest, along * noise(rng));
      scene.step();
      const double dot = chestUpDot(scene);
      low = std::min(low, dot);
      high = std::max(high, dot);
      settledSteps += ch.settle().settled() ? 1 : 0;
      ASSERT_EQ(ch.blockingRepresentations(), 1);
      EXPECT_GT(dot, -0.2) << "step " << n;
      EXPECT_LT(dot, 0.2) << "step " << n;
      ASSERT_TRUE(noGetUp()) << "noise step " << n;
      EXPECT_EQ(ch.facing().candidate(), held) << "noise step " << n;
      EXPECT_TRUE(ch.facing().inHoldBand());
    }
    std::printf(
        "[side, then %s] held, settled %.2f s after the handoff (candidate %s); 200 noise steps: chest-up "
        "dot "
        "in [%+.3f, %+.3f], settled on %d of them, no get-up\n",
        ontoBack ? "back" : "front", settledAt - ch.handoffs().front().time, facingName(held), low, high,
        settledSteps);
    if (ontoBack) {
      EXPECT_GT(high, 0.18) << "within 0.02 of the supine threshold";
    } else {
      EXPECT_LT(low, -0.17) << "within 0.03 of the prone threshold";
    }
    EXPECT_GE(settledSteps, 100) << "settled on most steps: the facing alone holds the get-up";
    // The hand lets go; a push about the long axis rolls it over.
    scene.world->destroyJoint(*hand);
    // [N m s] about the long axis, the sign that raises (lowers) the chest. Onto the front it
    // takes more than 10 since the drive torque limits follow the stabilized masses (the gather's
    // servos hold the limbs harder): 12 to 20 roll it over, 14 is in the middle.
    const double push = ontoBack ? -3.0 : 14.0;
    scene.world->applyAngularImpulse(chest, along * push);
    Facing first = Facing::Undecided;
    for (int n = 0; n < 8 * 60 && ch.state() == CharacterState::Ragdoll; ++n) {
      scene.step();
      ASSERT_EQ(ch.blockingRepresentations(), 1);
      if (first == Facing::Undecided && ch.facing().candidate() != held) first = ch.facing().candidate();
    }
    ASSERT_EQ(ch.state(), CharacterState::Recovering);
    const RecoveryRecord& r = ch.recoveries().back();
    std::printf("  rolled: chest-up dot %+.2f, the %s clip chosen %.2f s after the push\n", chestUpDot(scene),
                facingName(r.facing), ch.time() - settledAt - 200 * test::kFrame);
    EXPECT_EQ(r.facing, ontoBack ? Facing::Supine : Facing::Prone);
    EXPECT_EQ(first, r.facing) << "the first choice after the hold is the clip that starts";
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
