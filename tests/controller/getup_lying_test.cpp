// The controller's get-up decisions on a real ragdoll (SPEC.md section 4, issue 5): the
// DeepMimic character is dropped lying as a get-up clip starts (its first frame, turned by a
// heading), settles, and the controller chooses the clip, the root's yaw and the spot to stand.
// Every step: exactly one blocking representation.
#include "controller/getup_scene.h"
#include "support/ensemble.h"

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
// One held member: what the hold and the release did.
struct HoldFigures {
  bool settled = false;           // settled while held
  bool waited = true;             // no gather or get-up while held, state ragdoll
  bool kept = true;               // the candidate never changed during the noise, in the hold band
  bool inBand = true;             // the chest-up dot stayed within (-0.2, 0.2)
  int blocking = 0;               // steps without exactly one blocking representation
  int settledSteps = 0;           // of the 200 noise steps
  double low = 1.0, high = -1.0;  // chest-up dot during the noise
  double push = 0.0;              // [N m s]
  bool recovering = false;        // a get-up started after the release
  Facing chosen = Facing::Undecided;
  double dotAtChoice = 0.0;  // chest-up dot when the get-up started
};

HoldFigures holdOnSide(const test::Character& c, const std::vector<Transform>& lying, bool ontoBack,
                       std::mt19937& rng) {
  const RagdollAsset& asset = *c.asset;
  HoldFigures f;
  const int chestBody = asset.bodyForJoint(asset.map[Slot::Chest]);
  test::GetUpScene scene;
  scene.animation = [&lying](double, std::span<Transform> out) {
    std::copy(lying.begin(), lying.end(), out.begin());
  };
  // A seeded heading about the vertical and a millimetre of position noise.
  const double heading = test::uniform(rng, 0.0, 2.0 * kPi);
  const Vec3 noise{test::uniform(rng, -1e-3, 1e-3), 0.0, test::uniform(rng, -1e-3, 1e-3)};
  EXPECT_TRUE(scene.start(c, 0, Transform{glm::angleAxis(heading, kRecoveryUp), noise}));
  if (!scene.ch) return f;
  handoff::Character& ch = *scene.ch;
  for (int k = 0; k < 3; ++k) scene.step();
  if (!scene.goRagdoll()) return f;
  // The hand: joint X along the long axis, at the chest's centre of mass.
  const BodyId chest = ch.ragdoll().body(chestBody);
  const Transform worldFromChest = scene.world->transform(chest);
  const Vec3 front = chestOutwardInWorld(worldFromChest.rotation, asset.chestForwardInBody);
  const Vec3 along = glm::cross(kRecoveryUp, horizontalUnit(front));  // the long axis, horizontal
  constexpr double kHoldRoll = 0.19;                                  // [rad] the hand's play
  const Transform worldFromHold{rotationBetween(Vec3{1.0, 0.0, 0.0}, along), worldFromChest.translation};
  const BodyId anchor = scene.world->addStaticBox(
      Transform::fromTranslation(worldFromChest.translation + Vec3{0.0, 1.5, 0.0}), Vec3{0.05}, 0.8);
  JointDesc hold;
  hold.bodyA = anchor;
  hold.bodyB = chest;
  hold.bodyAFromJoint = scene.world->transform(anchor).inverse() * worldFromHold;
  hold.bodyBFromJoint = worldFromChest.inverse() * worldFromHold;
  // The play about the long axis: +x turns the chest toward the floor (chest-up dot = -sin x).
  // Each run's play is 0.01 rad wide: on its side 0.011 to 0.021 inside the supine threshold
  // (x in [-0.19, -0.18]); tipped forward for the second run, 0.011 to 0.021 inside the prone one
  // (x in [0.18, 0.19]). The first run's play was once the whole +-0.19 band with gravity rolling
  // the body onto its low end; with the exact 8/s joint dampers 10 of 32 members came to rest on the
  // other side of the band instead.
  hold.angularLower = Vec3{ontoBack ? -kHoldRoll : 0.18, 0.0, 0.0};
  hold.angularUpper = Vec3{ontoBack ? -0.18 : kHoldRoll, 0.0, 0.0};
  Result<JointId> hand = scene.world->createJoint(hold);
  EXPECT_TRUE(hand.ok()) << hand.error();
  if (!hand) return f;
  const auto noGetUp = [&]() {
    for (const CharacterEvent& e : ch.events())
      if (e.kind == CharacterEventKind::Gather || e.kind == CharacterEventKind::GetUp) return false;
    return ch.recoveries().empty() && ch.state() == CharacterState::Ragdoll;
  };
  const auto stepChecked = [&] {
    scene.step();
    if (ch.blockingRepresentations() != 1) ++f.blocking;
  };
  // Held on its side until it has lain settled for 2 s: the detector's first window can close
  // while a limb still slides off the body (with the 8/s joint dampers, 1 m/s arms 100 steps
  // after the first settle were measured), and the noise below is meant for a body at rest.
  int settledFor = 0;
  for (int k = 0; k < 10 * 60 && settledFor < 120; ++k) {
    stepChecked();
    f.waited = f.waited && noGetUp();
    settledFor = ch.settle().settled() ? settledFor + 1 : 0;
  }
  f.settled = ch.settle().settled();
  if (!f.settled) return f;
  const double settledAt = ch.time();
  const Facing held = ch.facing().candidate();
  // 200 steps of noise: on its side all along, it waits and the choice never flips.
  std::normal_distribution<double> shake(0.0, 0.05);  // [N m s] about the long axis
  for (int n = 0; n < 200; ++n) {
    scene.world->applyAngularImpulse(chest, along * shake(rng));
    stepChecked();
    const double dot = chestUpDot(scene);
    f.low = std::min(f.low, dot);
    f.high = std::max(f.high, dot);
    f.settledSteps += ch.settle().settled() ? 1 : 0;
    f.inBand = f.inBand && dot > -0.2 && dot < 0.2;
    f.waited = f.waited && noGetUp();
    f.kept = f.kept && ch.facing().candidate() == held && ch.facing().inHoldBand();
  }
  (void)settledAt;
  // The hand lets go; a push about the long axis rolls it over. [N m s] about the long axis, the
  // sign that raises (lowers) the chest: onto the back a light push, onto the front 12 to 20
  // (the gather's servos hold the limbs: lighter pushes do not roll it).
  scene.world->destroyJoint(*hand);
  f.push = ontoBack ? -test::uniform(rng, 2.0, 4.0) : test::uniform(rng, 12.0, 20.0);
  scene.world->applyAngularImpulse(chest, along * f.push);
  // Up to 15 s: it may come to rest on its side again and wait CharacterSettings::sideWaitLimit.
  for (int n = 0; n < 15 * 60 && ch.state() == CharacterState::Ragdoll; ++n) stepChecked();
  f.recovering = ch.state() == CharacterState::Recovering;
  if (f.recovering) {
    f.chosen = ch.recoveries().back().facing;
    f.dotAtChoice = chestUpDot(scene);
  }
  return f;
}

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

  for (const bool ontoBack : {true, false}) {
    SCOPED_TRACE(ontoBack ? "rolls onto its back" : "rolls onto its front");
    const int members = test::ensembleSize(32);
    const std::uint32_t seed = ontoBack ? 11u : 12u;
    const std::vector<HoldFigures> runs = test::runEnsemble<HoldFigures>(
        members, seed, [&](int, std::mt19937& rng) { return holdOnSide(c, lying, ontoBack, rng); });
    std::printf("[side, then %s] %d members (any heading, 1 mm noise, seeded shakes and push; seed %u)\n",
                ontoBack ? "back" : "front", members, seed);
    std::vector<double> low, high, settledSteps, push;
    for (const HoldFigures& f : runs) {
      // Every member: one blocking representation at every step; held on its side it settles, no
      // get-up starts, the classifier keeps its candidate in the hold band and the hand keeps
      // the chest-up dot inside the band (SPEC.md section 4: on the side keep the candidate and
      // wait, no flip-flopping), and the settle detector said settled on some of the noise steps
      // (there the facing alone held the get-up). After the release it gets up with the clip for
      // the way it lies when the get-up starts (a hard push may roll it past its front first).
      EXPECT_EQ(f.blocking, 0);
      EXPECT_TRUE(f.settled) << "held on its side it settles";
      EXPECT_TRUE(f.waited) << "no gather or get-up while held on its side";
      EXPECT_TRUE(f.kept) << "the candidate never changes on its side";
      EXPECT_TRUE(f.inBand);
      EXPECT_TRUE(f.recovering) << "released and pushed, it gets up";
      EXPECT_GE(f.settledSteps, 1) << "the detector said settled while the facing held the get-up";
      if (f.recovering) {
        EXPECT_EQ(f.chosen, f.dotAtChoice > 0.0 ? Facing::Supine : Facing::Prone)
            << "chest-up dot " << f.dotAtChoice << " at the choice";
      }
      low.push_back(f.low);
      high.push_back(f.high);
      settledSteps.push_back(f.settledSteps);
      push.push_back(f.push);
    }
    test::printDistribution("chest-up dot during the noise, lowest", low, "");
    test::printDistribution("chest-up dot during the noise, highest", high, "");
    const test::Quantiles settledQ =
        test::printDistribution("noise steps (of 200) the detector said settled", settledSteps, "");
    test::printDistribution("push after the release", push, "N m s");
    // Next to the threshold the shakes reach within 0.03 of it (the test holds it there), and
    // the settle detector says settled on most noise steps, so the facing alone holds the get-up.
    const double near = test::printRate("came within 0.03 of the threshold", runs, [&](const HoldFigures& f) {
      return ontoBack ? f.high > 0.17 : f.low < -0.17;
    });
    // Which way the push rolls it is chaotic (a hard push may roll it past its front onto its
    // back); printed, and the prone clip must be exercised by the ensemble.
    const double prone = test::printRate("got up with the prone clip", runs, [](const HoldFigures& f) {
      return f.recovering && f.chosen == Facing::Prone;
    });
    const double supine = test::printRate("got up with the supine clip", runs, [](const HoldFigures& f) {
      return f.recovering && f.chosen == Facing::Supine;
    });
    if (!test::kEnsembleStatistics) continue;
    EXPECT_GE(near, 0.9);
    EXPECT_GE(settledQ.median, 100.0) << "settled on most noise steps in the typical member";
    if (ontoBack) {
      EXPECT_GE(supine, 0.9) << "a light push lets it roll onto its back";
    } else {
      EXPECT_GT(prone, 0.0) << "the push onto the front exercises the prone clip";
    }
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
    if (e.kind == CharacterEventKind::Delay ||
        (e.kind == CharacterEventKind::GetUp &&
         std::string(e.detail).find("relocate") != std::string::npos)) {
      delayOrGetUpEvent = true;
    }
  }
  EXPECT_TRUE(delayOrGetUpEvent);
}

}  // namespace
}  // namespace handoff
