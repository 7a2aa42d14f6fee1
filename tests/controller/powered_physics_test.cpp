// Powered and partial ragdolls through the Character (SPEC.md sections 5 and 6): tracking a
// boxing clip with the pelvis pinned, hit reactions that return to animation or knock the
// character out, partial ragdolls keeping one authority per body, the drive weight ramp as the
// engine receives it.
#include "handoff/controller.h"
#include "handoff/measure.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "drive/fake_world.h"
#include "support/bullet_precision.h"
#include "support/clip_scene.h"
#include "support/test_math.h"

namespace handoff {
namespace {

using test::loadCharacter;

constexpr double kDt = 1.0 / 60.0;
constexpr double kDeg = kPi / 180.0;
constexpr int kSubsteps = 2;
const char* const kBoxing = "cmu/Boxing_Toes.bvh";

int bodyOf(const RagdollAsset& asset, Slot slot) {
  const int joint = asset.map[slot];
  return joint >= 0 ? asset.bodyForJoint(joint) : -1;
}

// The character standing on the ground at the clip's first frame: the root lifted so the lowest
// body touches y = 0.
Transform standingRoot(const test::Character& c, std::span<const Transform> locals) {
  std::vector<Transform> models(locals.size()), bodies(c.asset->bodies.size());
  localToModel(c.skeleton(), locals, models);
  bodyPosesFromModels(*c.asset, models, Transform::identity(), bodies);
  return Transform::fromTranslation(Vec3{0.0, -test::lowestShapePoint(*c.asset, bodies), 0.0});
}

// --- Tracking: zero gravity, pelvis pinned, following Boxing_Toes ---

struct Tracking {
  double rms = 0.0;  ///< RMS over joints and frames of |e| (admissible target). [rad]
  double max = 0.0;  ///< [rad]
  double seconds = 0.0;
  int saturatedPeak = 0;
  bool stayedPowered = true;
  /// Per joint (asset order): its largest |e| and the animation time of that frame. [rad] [s]
  std::vector<double> jointMax;
  std::vector<double> jointMaxTime;
};

// Per joint |e| of the drive law at the bodies' current poses against the animation's targets for
// `locals` (what Character::poweredMaxJointError measures, joint by joint). [rad]
void jointErrors(const test::Character& c, std::span<const Transform> locals, const Ragdoll& ragdoll,
                 std::span<double> errors) {
  const RagdollAsset& asset = *c.asset;
  std::vector<Transform> models(locals.size()), anim(asset.bodies.size()), bodies(anim.size());
  localToModel(c.skeleton(), locals, models);
  bodyPosesFromModels(asset, models, Transform::identity(), anim);
  ragdoll.readBodyPoses(bodies);
  for (size_t j = 0; j < asset.joints.size(); ++j) {
    const DriveJoint joint = driveJointFromDef(asset.joints[j]);
    JointDriveInput in;
    in.worldFromBodyA = bodies[static_cast<size_t>(joint.bodyA)].rotation;
    in.worldFromBodyB = bodies[static_cast<size_t>(joint.bodyB)].rotation;
    in.target = jointRelativeRotation(anim[static_cast<size_t>(joint.bodyA)].rotation,
                                      anim[static_cast<size_t>(joint.bodyB)].rotation, joint.bodyAFromJoint,
                                      joint.bodyBFromJoint);
    errors[j] = glm::length(computeJointDrive(joint, in).error);
  }
}

// The `count` joints with the largest errors, as "name max deg at t s, ...".
std::string topOffenders(const RagdollAsset& asset, const Tracking& t, int count) {
  std::vector<size_t> order(t.jointMax.size());
  for (size_t j = 0; j < order.size(); ++j) order[j] = j;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return t.jointMax[a] > t.jointMax[b]; });
  std::string out;
  char buffer[160];
  for (int i = 0; i < count && i < static_cast<int>(order.size()); ++i) {
    const size_t j = order[static_cast<size_t>(i)];
    std::snprintf(buffer, sizeof buffer, "%s%s %.1f deg at %.3f s", i ? ", " : "",
                  asset.joints[j].name.c_str(), t.jointMax[j] / kDeg, t.jointMaxTime[j]);
    out += buffer;
  }
  return out;
}

// A Bullet world without gravity, ground or other bodies: every contact in it is between the
// character's own bodies.
std::unique_ptr<PhysicsWorld> zeroGravityWorld() {
  WorldSettings ws;
  ws.gravity = Vec3{0.0};
  return createBulletWorld(ws);
}

Tracking trackBoxing(DriveSolver solver, double seconds, bool endOfSubstepLaw = false) {
  Tracking t;
  const test::Character& c = loadCharacter(kBoxing);
  if (!c.asset) return t;
  auto world = zeroGravityWorld();
  const Clip& clip = c.clip();
  std::vector<Transform> locals(static_cast<size_t>(c.skeleton().jointCount()));
  clip.sample(0.0, WrapMode::Clamp, locals);
  auto created =
      Character::create(*world, c.asset, c.skeleton(), CharacterSettings{}, Transform::identity(), locals);
  EXPECT_TRUE(created) << (created ? "" : created.error());
  if (!created) return t;
  Character& ch = **created;
  double time = 0.0;
  const auto frame = [&]() {
    time += kDt;
    clip.sample(time, WrapMode::Clamp, locals);
    EXPECT_TRUE(ch.preStep(AnimationInput{time, Transform::identity(), locals, false}, kDt));
    world->step(kDt, kSubsteps);
    ch.postStep(kDt);
  };
  for (int i = 0; i < 3; ++i) frame();  // velocity history for the commit
  PoweredSettings s;
  s.solver = solver;
  s.endOfSubstepLaw = endOfSubstepLaw;
  if (endOfSubstepLaw) s.stabilityLimit = 0.0;  // the law is stable on its own: the presets as they are
  s.rampTime = 0.0;                             // the bodies start on the animation with its velocities
  s.knockoutDistance = std::numeric_limits<double>::infinity();  // measure, whatever the error
  PoweredPin pin;
  pin.body = bodyOf(*c.asset, Slot::Pelvis);
  s.pins.push_back(pin);
  EXPECT_TRUE(ch.goPowered(s));
  double sum = 0.0;
  int frames = 0;
  std::vector<double> errors(c.asset->joints.size());
  t.jointMax.assign(errors.size(), 0.0);
  t.jointMaxTime.assign(errors.size(), 0.0);
  const int count = static_cast<int>(seconds / kDt);
  for (int i = 0; i < count && time + kDt < clip.duration(); ++i) {
    frame();
    if (ch.state() != CharacterState::Powered) {
      t.stayedPowered = false;
      break;
    }
    sum += ch.poweredRmsJointError() * ch.poweredRmsJointError();
    t.max = std::max(t.max, ch.poweredMaxJointError());
    jointErrors(c, locals, ch.ragdoll(), errors);
    for (size_t j = 0; j < errors.size(); ++j) {
      if (errors[j] > t.jointMax[j]) {
        t.jointMax[j] = errors[j];
        t.jointMaxTime[j] = time;
      }
    }
    if (ch.explicitDrive() && solver == DriveSolver::Explicit)
      t.saturatedPeak = std::max(t.saturatedPeak, ch.explicitDrive()->saturatedJoints());
    ++frames;
  }
  t.rms = frames > 0 ? std::sqrt(sum / frames) : 1e9;
  t.seconds = frames * kDt;
  return t;
}

// In zero gravity with the pelvis pinned, the powered ragdoll follows the boxing clip at the
// asset's default gains, 60 Hz x 2 substeps. The error is |e| of the drive law: against the
// admissible target (the animation's rotation within the ragdoll's joint limits: the nearest
// admissible one when a limit is reached, locked axes where they are), what the drives can reach.
// Issue 6 asks RMS < 5 deg and max < 15 deg.
// Internal collisions are off while powered (PoweredSettings::internalCollisions, as
// PuppetMaster's live puppet): with them on, the guard pose pressed the left fist against the
// head (left elbow 15.6 deg, wrist 13.9 deg at 3.57 s; rms 2.6 deg).
// Implicit (the default): RMS 1.69 deg, max 13.4 deg (the right wrist at 3.717 s). The max was
// 60 deg at the left shoulder swung forward past 80 degrees, by the gimbal lock of its X-Y-Z
// angles, from two defects now fixed: the per-axis clamp of the target's angles (X at its twist
// limit while the clip turned X and Z together about nearly the same axis: the clamped target
// swung by tens of degrees in two frames; now the nearest admissible rotation,
// DriveTargets.NearestAdmissible*) and the servo rows asking X and Z for 1 / cos(y) times their
// rates (DriveBullet.ServoRatesAreJointAngleRatesNearTheGimbalLock); that shoulder now peaks at
// 9.2 deg. The target rates are the admissible target's
// (Powered.TargetRatesAreTheRateOfTheAdmissibleTarget). Then 20.8 deg at the right wrist in a
// capture glitch of the clip (3.69-3.77 s: the wrist target turns 33 deg in one 60 Hz step,
// 2000 deg/s, and back 37 deg in one step at 3.75-3.77 s, docs/TUNING.md): the preset's 40 N m
// limit was for an anthropometric 0.4 kg hand, and the builder's stabilization makes it 2.85 kg
// (child/parent mass ratio clamped to 0.8). The torque limits now follow the stabilized
// subtree masses (StabilizeOptions::scaleDriveTorque; the wrist's x6.7), and the glitch peaks
// at 13.4 deg. The five largest joints are printed.
// Explicit (see the explicit figures printed and docs/DRIVES.md): bounded only against divergence.
TEST(Powered, TracksBoxingWithThePelvisPinned) {
  const Tracking explicitDrive = trackBoxing(DriveSolver::Explicit, 4.0);
  const Tracking implicitDrive = trackBoxing(DriveSolver::Implicit, 4.0);
  const Tracking endOfSubstep = trackBoxing(DriveSolver::Explicit, 4.0, true);
  for (const auto& [name, t] : {std::pair{"explicit", explicitDrive}, std::pair{"implicit", implicitDrive},
                                std::pair{"explicit end-of-substep", endOfSubstep}}) {
    std::printf(
        "[ powered ] Boxing_Toes, zero g, pelvis pinned, %s drives, 60 Hz x %d, %.2f s: rms %.2f deg, max "
        "%.2f deg, peak saturated joints %d\n",
        name, kSubsteps, t.seconds, t.rms / kDeg, t.max / kDeg, t.saturatedPeak);
    std::printf("[ powered ]   %s, largest per joint: %s\n", name,
                topOffenders(*loadCharacter(kBoxing).asset, t, 5).c_str());
    EXPECT_TRUE(t.stayedPowered) << name;
    EXPECT_GT(t.seconds, 3.0) << name;
    EXPECT_LT(t.max, 120.0 * kDeg) << name;  // no divergence
  }
  EXPECT_LT(implicitDrive.rms, 5.0 * kDeg);
  EXPECT_LT(implicitDrive.max, 15.0 * kDeg);  // issue 6 (measured 13.4 deg)
  EXPECT_LT(explicitDrive.rms, 30.0 * kDeg);  // no divergence (see above)
}

// --- Hit reactions: gravity, flat ground, pelvis and feet pinned ---

struct Hit {
  bool returned = false;
  double returnTime = -1.0;    ///< After the hit. [s]
  double rmsAtReturn = 0.0;    ///< [rad]
  double maxAtReturn = 0.0;    ///< [rad]
  double peakDeviation = 0.0;  ///< Largest body distance to its animated pose while powered. [m]
  double chestPeak = 0.0;      ///< Chest's largest distance to its animated pose. [m]
  bool knockedOut = false;
  double knockoutTime = -1.0;  ///< [s]
  int blockingViolations = 0;  ///< Steps with other than one blocking representation.
};

Hit hitStanding(double impulse, DriveSolver solver, bool endOfSubstepLaw = false) {
  Hit h;
  const test::Character& c = loadCharacter(kBoxing);
  if (!c.asset) return h;
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  std::vector<Transform> locals(static_cast<size_t>(c.skeleton().jointCount()));
  c.clip().sample(0.0, WrapMode::Clamp, locals);  // a standing guard pose, held
  const Transform root = standingRoot(c, locals);
  CharacterSettings settings;
  settings.hitReaction.solver = solver;
  settings.hitReaction.endOfSubstepLaw = endOfSubstepLaw;
  if (endOfSubstepLaw) settings.hitReaction.stabilityLimit = 0.0;
  auto created = Character::create(*world, c.asset, c.skeleton(), settings, root, locals);
  EXPECT_TRUE(created) << (created ? "" : created.error());
  if (!created) return h;
  Character& ch = **created;
  const int chest = bodyOf(*c.asset, Slot::Chest);
  double time = 0.0;
  const auto frame = [&]() {
    time += kDt;
    EXPECT_TRUE(ch.preStep(AnimationInput{time, root, locals, false}, kDt));
    world->step(kDt, kSubsteps);
    ch.postStep(kDt);
    if (ch.blockingRepresentations() != 1) ++h.blockingViolations;
  };
  for (int i = 0; i < 10; ++i) frame();
  // Along -modelForward (-Z) through the chest's centre of mass. The stance at clip time 0 faces
  // -Z (its toes point -Z), so this push comes from behind; scenarios/powered_hit_reaction.json
  // hits the same stance from the front (+Z).
  const Vec3 back = -root.transformVector(c.asset->modelForward);
  const Vec3 point = world->transform(ch.ragdoll().body(chest)).translation;
  EXPECT_TRUE(ch.applyImpulse(chest, impulse * back, point));
  EXPECT_EQ(ch.state(), CharacterState::Powered);
  // The runner's hit-reaction measure (measure.h) until the character is back or knocked out.
  HitReactionMeasure measure;
  HitReactionMetrics m = measure.begin(ch, chest, impulse * back, time);
  for (int i = 0; i < 180 && measure.open(); ++i) {
    frame();
    measure.observe(ch, AnimationInput{time, root, locals, false}, time, m);
  }
  h.returned = m.returned;
  if (m.returned) h.returnTime = m.returnTime;
  h.rmsAtReturn = m.returned ? m.rmsAtReturn : 0.0;
  h.maxAtReturn = m.returned ? m.maxAtReturn : 0.0;
  h.peakDeviation = m.peakDeviation;
  h.chestPeak = m.peakHitBodyDeviation;
  h.knockedOut = m.knockedOut;
  if (m.knockedOut) h.knockoutTime = m.knockoutTime;
  return h;
}

void printHit(const char* what, DriveSolver solver, const Hit& h) {
  std::printf(
      "[ powered ] %s, %s drives: returned %d after %.3f s (rms %.2f deg, max %.2f deg), knocked out %d "
      "after %.3f s, peak body deviation %.3f m, chest %.3f m\n",
      what, (solver == DriveSolver::Explicit ? "explicit" : "implicit"), h.returned, h.returnTime,
      h.rmsAtReturn / kDeg, h.maxAtReturn / kDeg, h.knockedOut, h.knockoutTime, h.peakDeviation, h.chestPeak);
}

// A 150 N s chest hit while animated: the powered ragdoll (the default hit reaction: implicit
// drives, pelvis and feet pinned) absorbs it, the upper body visibly moves, and the character
// hands back to the animation within 1.5 s with a pose error under 3 degrees. The explicit
// drive's figures are printed: at the presets with its stability guard at 2 substeps it cannot
// hold the hit and knocks out (docs/DRIVES.md).
TEST(Powered, ChestHitReturnsToAnimation) {
  printHit("chest hit 150 N s", DriveSolver::Explicit, hitStanding(150.0, DriveSolver::Explicit));
  printHit("chest hit 150 N s, end-of-substep law", DriveSolver::Explicit,
           hitStanding(150.0, DriveSolver::Explicit, true));
  const Hit h = hitStanding(150.0, DriveSolver::Implicit);
  printHit("chest hit 150 N s", DriveSolver::Implicit, h);
  EXPECT_FALSE(h.knockedOut);
  EXPECT_TRUE(h.returned);
  EXPECT_LT(h.returnTime, 1.5);
  EXPECT_LT(h.rmsAtReturn, 3.0 * kDeg);
  // The upper body reacted: the chest left its animated pose by far more than the 5 cm return
  // threshold before coming back.
  EXPECT_GT(h.chestPeak, 0.15);
  EXPECT_EQ(h.blockingViolations, 0);
}

// A 600 N s chest hit knocks the character out into a full ragdoll (both solvers).
TEST(Powered, HeavyChestHitKnocksOut) {
  for (DriveSolver solver : {DriveSolver::Explicit, DriveSolver::Implicit}) {
    const Hit h = hitStanding(600.0, solver);
    printHit("chest hit 600 N s", solver, h);
    EXPECT_TRUE(h.knockedOut) << (solver == DriveSolver::Explicit ? "explicit" : "implicit");
    EXPECT_FALSE(h.returned);
    EXPECT_EQ(h.blockingViolations, 0);
  }
}

// --- Internal collisions: off while powered, on as a full ragdoll ---

enum class SelfCase { Powered, PoweredInternalOn, KnockedOut, Dead };

struct SelfContacts {
  int points = 0;            ///< Contact points between the character's own bodies, summed over the frames.
  double handDeepest = 1e9;  ///< Smallest left hand - chest surface distance (< 0: inside). [m]
  bool internal = false;     ///< Ragdoll::internalCollisions() after the push.
  int collidingPairs = 0;    ///< Ragdoll::collidingPairCount() at the end.
  bool recorded = false;     ///< HandoffRecord::internalCollisions of the last commit.
  CharacterState state = CharacterState::Animated;
};

// The boxing guard pose held in zero gravity, pelvis pinned; the character goes powered, then
// (per case) stays powered, is knocked out or dies, and its left hand is thrown at the chest
// at 30 m/s (slower throws are caught by the powered arm's drives before the hand reaches the
// chest, 0.25 m away). With no ground and the capsule off, every contact point in the world is between the
// character's own bodies (each point counted once: contactCount of a body sums its manifolds).
SelfContacts throwHandAtChest(SelfCase which) {
  SelfContacts out;
  const test::Character& c = loadCharacter(kBoxing);
  if (!c.asset) return out;
  auto world = zeroGravityWorld();
  std::vector<Transform> locals(static_cast<size_t>(c.skeleton().jointCount()));
  c.clip().sample(0.0, WrapMode::Clamp, locals);
  auto created =
      Character::create(*world, c.asset, c.skeleton(), CharacterSettings{}, Transform::identity(), locals);
  EXPECT_TRUE(created) << (created ? "" : created.error());
  if (!created) return out;
  Character& ch = **created;
  const int hand = bodyOf(*c.asset, Slot::HandL), chest = bodyOf(*c.asset, Slot::Chest);
  const int foot = bodyOf(*c.asset, Slot::FootR);
  double time = 0.0;
  const auto selfPoints = [&]() {
    int sum = 0;
    for (int b = 0; b < static_cast<int>(c.asset->bodies.size()); ++b)
      sum += world->contactCount(ch.ragdoll().body(b));
    return sum / 2;
  };
  const auto frame = [&]() {
    time += kDt;
    EXPECT_TRUE(ch.preStep(AnimationInput{time, Transform::identity(), locals, false}, kDt));
    world->step(kDt, kSubsteps);
    ch.postStep(kDt);
    out.points += selfPoints();
  };
  for (int i = 0; i < 3; ++i) frame();
  PoweredSettings s;
  s.rampTime = 0.0;
  s.internalCollisions = which == SelfCase::PoweredInternalOn;
  // A quarter of the drives' strength: the thrown hand has to get deep into the chest against the
  // wrist and elbow drives pulling it back to the guard pose (at full weight they hold a 30 m/s
  // throw 0.14 m off the chest and a 60 m/s one to 6 mm inside it, short of the 2 cm that tells a
  // hand passing through from a contact's slop); what is tested is the collision filter.
  s.weight = 0.25;
  // Knocked out by a push of the right foot (4 m/s) 5 cm off its pose; never otherwise.
  s.knockoutDistance = which == SelfCase::KnockedOut ? 0.05 : std::numeric_limits<double>::infinity();
  PoweredPin pin;
  pin.body = bodyOf(*c.asset, Slot::Pelvis);
  s.pins.push_back(pin);
  EXPECT_TRUE(ch.goPowered(s));
  EXPECT_EQ(ch.ragdoll().internalCollisions(), s.internalCollisions);
  EXPECT_EQ(ch.handoffs().back().internalCollisions, s.internalCollisions);
  frame();
  if (which == SelfCase::Dead) ch.goRagdoll();
  if (which == SelfCase::KnockedOut) {
    const Vec3 p = world->transform(ch.ragdoll().body(foot)).translation;
    EXPECT_TRUE(ch.applyImpulse(foot, 4.0 * world->mass(ch.ragdoll().body(foot)) * Vec3{1.0, 0.0, 0.0}, p));
    for (int i = 0; i < 10 && ch.state() == CharacterState::Powered; ++i) frame();
  }
  out.points = 0;  // from the throw on
  const BodyId handId = ch.ragdoll().body(hand), chestId = ch.ragdoll().body(chest);
  const Vec3 from = world->transform(handId).translation;
  const Vec3 toward = glm::normalize(world->transform(chestId).translation - from);
  EXPECT_TRUE(ch.applyImpulse(hand, 30.0 * world->mass(handId) * toward, from));
  for (int i = 0; i < 20; ++i) {
    frame();
    out.handDeepest = std::min(
        out.handDeepest,
        shapeSurfaceDistance(c.asset->bodies[static_cast<size_t>(hand)].shape, world->transform(handId),
                             c.asset->bodies[static_cast<size_t>(chest)].shape, world->transform(chestId)));
  }
  out.internal = ch.ragdoll().internalCollisions();
  out.collidingPairs = ch.ragdoll().collidingPairCount();
  out.recorded = ch.handoffs().back().internalCollisions;
  out.state = ch.state();
  return out;
}

// PuppetMaster's default: no internal collisions in the live puppet, switched on at death. The
// same throw of the left hand at the chest makes no contact point between the character's own
// bodies while powered (the hand passes into the chest), and makes them when the setting is on,
// after a knock-out and after goRagdoll from powered (the full ragdoll self-collides).
TEST(Powered, InternalCollisionsOffWhilePoweredOnAsAFullRagdoll) {
  const SelfContacts powered = throwHandAtChest(SelfCase::Powered);
  const SelfContacts poweredOn = throwHandAtChest(SelfCase::PoweredInternalOn);
  const SelfContacts knockedOut = throwHandAtChest(SelfCase::KnockedOut);
  const SelfContacts dead = throwHandAtChest(SelfCase::Dead);
  for (const auto& [name, r] :
       {std::pair{"powered (default)", powered}, std::pair{"powered, internal on", poweredOn},
        std::pair{"knocked out", knockedOut}, std::pair{"dead", dead}}) {
    std::printf(
        "[ powered ] left hand thrown at the chest, %s (%s): %d self-contact points over 20 frames, closest "
        "hand-chest surface distance %.3f m (< 0: inside), internal collisions %d (record %d), %d "
        "non-adjacent pairs colliding\n",
        name, characterStateName(r.state), r.points, r.handDeepest, r.internal, r.recorded, r.collidingPairs);
  }
  EXPECT_EQ(powered.state, CharacterState::Powered);
  EXPECT_FALSE(powered.internal);
  EXPECT_EQ(powered.collidingPairs, 0);
  EXPECT_EQ(powered.points, 0);
  // The hand really went where a contact would have stopped it (deeper than a contact's slop).
  EXPECT_LT(powered.handDeepest, -0.02);
  EXPECT_EQ(poweredOn.state, CharacterState::Powered);
  EXPECT_TRUE(poweredOn.internal);
  EXPECT_GT(poweredOn.points, 0);
  for (const SelfContacts* r : {&knockedOut, &dead}) {
    EXPECT_EQ(r->state, CharacterState::Ragdoll);
    EXPECT_TRUE(r->internal);
    EXPECT_TRUE(r->recorded);
    EXPECT_GT(r->collidingPairs, 0);
    EXPECT_GT(r->points, 0);
    // Stopped by the chest: within a centimetre of its surface (Bullet's contact slop and one
    // substep of a 30 m/s hand), against 2 cm and more for the hand that passed into it.
    EXPECT_GT(r->handDeepest, -0.01);
    EXPECT_GT(r->handDeepest, powered.handDeepest);
  }
}

// --- Partial ragdoll: upper body physical, legs animated ---

TEST(Powered, PartialRagdollKeepsOneAuthorityPerBody) {
  const test::Character& c = loadCharacter(kBoxing);
  ASSERT_TRUE(c.asset);
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  const Clip& clip = c.clip();
  std::vector<Transform> locals(static_cast<size_t>(c.skeleton().jointCount()));
  clip.sample(0.0, WrapMode::Clamp, locals);
  const Transform root = standingRoot(c, locals);
  auto created = Character::create(*world, c.asset, c.skeleton(), CharacterSettings{}, root, locals);
  ASSERT_TRUE(created) << created.error();
  Character& ch = **created;
  double time = 0.0, clipTime = 0.0;
  bool playing = true;
  const auto frame = [&]() {
    time += kDt;
    if (playing) clipTime = time;
    clip.sample(clipTime, WrapMode::Clamp, locals);
    ASSERT_TRUE(ch.preStep(AnimationInput{time, root, locals, false}, kDt));
    world->step(kDt, kSubsteps);
    ch.postStep(kDt);
    ASSERT_EQ(ch.blockingRepresentations(), 1);
  };
  for (int i = 0; i < 3; ++i) frame();
  // Upper body physical (lower spine, chest, head, arms), legs and pelvis animated.
  std::vector<double> weights(c.asset->bodies.size(), 0.0);
  for (Slot s : {Slot::LowerSpine, Slot::Chest, Slot::Head, Slot::UpperArmL, Slot::LowerArmL, Slot::HandL,
                 Slot::UpperArmR, Slot::LowerArmR, Slot::HandR}) {
    const int b = bodyOf(*c.asset, s);
    if (b >= 0) weights[static_cast<size_t>(b)] = 1.0;
  }
  ASSERT_TRUE(ch.goPartial(weights, 0.1));
  EXPECT_EQ(ch.state(), CharacterState::Powered);
  EXPECT_EQ(ch.events().back().kind, CharacterEventKind::Partial);
  EXPECT_FALSE(world->isEnabled(ch.ragdoll().capsule()));
  std::vector<Transform> models(locals.size()), anim(c.asset->bodies.size()), bodies(anim.size());
  double legError = 0.0, upperDeviation = 0.0, legScale = 0.0;
  for (int i = 0; i < 60; ++i) {
    frame();
    ASSERT_EQ(ch.state(), CharacterState::Powered);
    localToModel(c.skeleton(), locals, models);
    bodyPosesFromModels(*c.asset, models, root, anim);
    ch.ragdoll().readBodyPoses(bodies);
    for (size_t b = 0; b < weights.size(); ++b) {
      const BodyId id = ch.ragdoll().body(static_cast<int>(b));
      const double d = glm::length(bodies[b].translation - anim[b].translation);
      if (weights[b] == 0.0) {
        // Animated: kinematic, exactly on the animation.
        ASSERT_EQ(world->motionType(id), MotionType::Kinematic) << c.asset->bodies[b].name;
        ASSERT_EQ(ch.ragdoll().authority(static_cast<int>(b)), Authority::Animation);
        legError = std::max(legError, d);
        legScale = std::max(legScale, glm::length(anim[b].translation));
      } else {
        ASSERT_EQ(world->motionType(id), MotionType::Dynamic) << c.asset->bodies[b].name;
        ASSERT_EQ(ch.ragdoll().authority(static_cast<int>(b)), Authority::Drive);
        upperDeviation = std::max(upperDeviation, d);
      }
    }
  }
  std::printf(
      "[ powered ] partial (upper body physical) 1 s of boxing: animated bodies off the animation by %.2g "
      "m, physical bodies by up to %.3f m\n",
      legError, upperDeviation);
  // Single-precision Bullet holds the kinematic pose in float: up to two roundings of its size.
  EXPECT_LT(legError, test::bulletTolerance(1e-9, legScale, 2));
  // Gravity sags the physical upper body a little against its drives; it follows.
  EXPECT_GT(upperDeviation, 1e-4);
  EXPECT_LT(upperDeviation, 0.2);
  // Back to animation on request, the clip holding its pose: the drives settle the upper body
  // under the return thresholds, then one write phase (capsule checked and back on).
  ASSERT_TRUE(ch.goAnimated(0.2));
  playing = false;
  int frames = 0;
  for (; frames < 90 && ch.state() == CharacterState::Powered; ++frames) frame();
  std::printf("[ powered ] partial: back to animation %.3f s after the request (rms %.2f deg, %.3f m)\n",
              frames * kDt, ch.poweredRmsJointError() / kDeg, ch.poweredMaxPositionError());
  EXPECT_EQ(ch.state(), CharacterState::Animated);
  EXPECT_TRUE(world->isEnabled(ch.ragdoll().capsule()));
  EXPECT_EQ(ch.events().back().kind, CharacterEventKind::Unpowered);
}

}  // namespace
}  // namespace handoff
