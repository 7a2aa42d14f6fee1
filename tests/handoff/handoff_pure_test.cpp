// Velocity inheritance, pose history, write-back and display blend, without an engine.
#include "handoff/handoff.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "support/test_math.h"

namespace handoff {
namespace {

using test::rotNear;
using test::vecNear;
using test::xfNear;

struct Buffers {
  explicit Buffers(int n)
      : rawLinear(static_cast<size_t>(n)),
        rawAngular(static_cast<size_t>(n)),
        linear(static_cast<size_t>(n)),
        angular(static_cast<size_t>(n)),
        clamps(static_cast<size_t>(n)) {}
  std::vector<Vec3> rawLinear, rawAngular, linear, angular;
  std::vector<std::uint8_t> clamps;
  InheritedVelocities run(const PoseHistory& h, const HandoffSettings& s) {
    return inheritVelocities(h, s, rawLinear, rawAngular, linear, angular, clamps);
  }
};

TEST(PoseHistory, RefusesBadSamplesAndKeepsState) {
  PoseHistory h(1);
  const Transform pose = Transform::fromTranslation({1, 2, 3});
  ASSERT_TRUE(h.push(0.0, Transform::identity(), {&pose, 1}, false).ok());
  // Duplicate timestamp and going back in time are refused.
  EXPECT_FALSE(h.push(0.0, Transform::identity(), {&pose, 1}, false).ok());
  EXPECT_FALSE(h.push(-0.1, Transform::identity(), {&pose, 1}, false).ok());
  Transform nan = pose;
  nan.translation.x = std::numeric_limits<double>::quiet_NaN();
  const Status s = h.push(0.1, Transform::identity(), {&nan, 1}, false);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("not finite"), std::string::npos);
  EXPECT_EQ(h.size(), 1);
  EXPECT_TRUE(vecNear(h.body(0, 0).translation, pose.translation, 0));
  // Capacity three: the oldest drops out.
  for (int i = 1; i <= 4; ++i) {
    const Transform p = Transform::fromTranslation({double(i), 0, 0});
    ASSERT_TRUE(h.push(0.1 * i, Transform::identity(), {&p, 1}, false).ok());
  }
  EXPECT_EQ(h.size(), 3);
  EXPECT_DOUBLE_EQ(h.body(0, 0).translation.x, 4.0);
  EXPECT_DOUBLE_EQ(h.body(2, 0).translation.x, 2.0);
}

TEST(InheritVelocities, LinearIsTheFiniteDifferenceAndAngularIsExact) {
  const double dt = 1.0 / 60.0;
  const Vec3 axis = glm::normalize(Vec3{0.3, 1.0, -0.6});  // tilted
  const double rate = 5.0;                                 // rad/s
  PoseHistory h(2);
  for (int k = 0; k < 3; ++k) {
    const double t = k * dt;
    const Transform poses[2] = {
        {glm::angleAxis(rate * t, axis), Vec3{2.0 * t, 0.5 - 4.9 * t * t, 0.0}},
        {glm::angleAxis(rate * t, axis) * glm::angleAxis(0.4, Vec3{1, 0, 0}), Vec3{0.0, 1.0, -3.0 * t}}};
    ASSERT_TRUE(h.push(t, Transform::identity(), poses, false).ok());
  }
  Buffers out(2);
  const InheritedVelocities info = out.run(h, {});
  EXPECT_DOUBLE_EQ(info.sampleDt, dt);
  const Vec3 expected0 = (h.body(0, 0).translation - h.body(1, 0).translation) / dt;
  EXPECT_TRUE(vecNear(out.linear[0], expected0, 1e-12));
  EXPECT_TRUE(vecNear(out.linear[1], Vec3{0, 0, -3.0}, 1e-9));
  EXPECT_TRUE(vecNear(out.angular[0], rate * axis, 1e-9));
  EXPECT_TRUE(vecNear(out.angular[1], rate * axis, 1e-9));  // world-space delta
  EXPECT_EQ(out.clamps[0], kClampNone);
}

TEST(InheritVelocities, TeleportInheritsNoVelocityFromTheJump) {
  const double dt = 0.1;
  PoseHistory h(1);
  // Moving at +1 m/s along X, then teleported 10 m and turned 90 degrees about Y.
  const Transform p0 = Transform::fromTranslation({0, 0, 0});
  const Transform p1 = Transform::fromTranslation({0.1, 0, 0});
  const Transform jumpRoot{glm::angleAxis(kPi / 2, Vec3{0, 1, 0}), Vec3{0, 0, 10}};
  const Transform p2 = jumpRoot * Transform::fromTranslation({0.2, 0, 0});
  ASSERT_TRUE(h.push(0.0, Transform::identity(), {&p0, 1}, false).ok());
  ASSERT_TRUE(h.push(dt, Transform::identity(), {&p1, 1}, false).ok());
  ASSERT_TRUE(h.push(2 * dt, jumpRoot, {&p2, 1}, /*teleport=*/true).ok());
  Buffers out(1);
  const InheritedVelocities info = out.run(h, {});
  EXPECT_TRUE(info.teleportFlagged);
  EXPECT_TRUE(out.clamps[0] & kClampTeleport);
  EXPECT_GT(glm::length(out.rawLinear[0]), 0.0);
  // The pre-teleport 1 m/s along X, carried through the root's turn: along -Z.
  EXPECT_TRUE(vecNear(out.linear[0], Vec3{0, 0, -1}, 1e-12));
  EXPECT_EQ(clampReasonText(out.clamps[0]), "teleport");

  // Not flagged, but the root jumped 10 m in 0.1 s: detected.
  PoseHistory d(1);
  ASSERT_TRUE(d.push(0.0, Transform::identity(), {&p0, 1}, false).ok());
  ASSERT_TRUE(d.push(dt, Transform::identity(), {&p1, 1}, false).ok());
  ASSERT_TRUE(d.push(2 * dt, jumpRoot, {&p2, 1}, false).ok());
  const InheritedVelocities detected = out.run(d, {});
  EXPECT_FALSE(detected.teleportFlagged);
  EXPECT_TRUE(detected.teleportDetected);
  EXPECT_NEAR(detected.rootJump, 10.0, 1e-12);
  EXPECT_TRUE(vecNear(out.linear[0], Vec3{0, 0, -1}, 1e-12));

  // A teleport with no earlier pair: the motion relative to the root still counts (the body moved
  // 0.1 m along the root's X in 0.1 s), the root's own motion is unknown (none).
  PoseHistory short_(1);
  ASSERT_TRUE(short_.push(0.0, Transform::identity(), {&p1, 1}, false).ok());
  ASSERT_TRUE(short_.push(dt, jumpRoot, {&p2, 1}, true).ok());
  out.run(short_, {});
  EXPECT_TRUE(vecNear(out.linear[0], Vec3{0, 0, -1}, 1e-12)) << test::str(out.linear[0]);
  EXPECT_TRUE(out.clamps[0] & kClampTeleport);

  // The root's own motion before the jump is carried through its turn and added: a root moving
  // at 2 m/s along +X with a body fixed on it inherits 2 m/s along the new root's X (world -Z).
  PoseHistory moving(1);
  const Transform onRoot = Transform::fromTranslation({0.3, 0, 0});
  const Transform r0 = Transform::fromTranslation({0.0, 0, 0}), r1 = Transform::fromTranslation({0.2, 0, 0});
  const Transform b0 = r0 * onRoot, b1 = r1 * onRoot, b2 = jumpRoot * onRoot;
  ASSERT_TRUE(moving.push(0.0, r0, {&b0, 1}, false).ok());
  ASSERT_TRUE(moving.push(dt, r1, {&b1, 1}, false).ok());
  ASSERT_TRUE(moving.push(2 * dt, jumpRoot, {&b2, 1}, true).ok());
  out.run(moving, {});
  EXPECT_TRUE(vecNear(out.linear[0], Vec3{0, 0, -2}, 1e-12)) << test::str(out.linear[0]);
}

// A game that teleports and hands off in the same frame can sample its animation just before,
// at the new place (SPEC section 3: sample more densely): that pair is a valid velocity after
// the jump, while the jump itself still gives none and is still named in the record.
TEST(InheritVelocities, DenseSampleAfterATeleportGivesTheVelocityThere) {
  const double dt = 0.1;
  const Transform jumpRoot{glm::angleAxis(kPi / 2, Vec3{0, 1, 0}), Vec3{0, 0, 10}};
  // Before the jump: +1 m/s along X. After it, in the root's new frame: +3 m/s along local X
  // (world -Z), a different speed, so a carried older pair would be wrong.
  const Transform p0 = Transform::fromTranslation({0, 0, 0});
  const Transform p1 = Transform::fromTranslation({0.1, 0, 0});
  const Transform p2 = jumpRoot * Transform::fromTranslation({0.4, 0, 0});
  const Transform dense = jumpRoot * Transform::fromTranslation({0.4 - 3.0 * dt / 8, 0, 0});
  PoseHistory h(1);
  ASSERT_TRUE(h.push(0.0, Transform::identity(), {&p0, 1}, false).ok());
  ASSERT_TRUE(h.push(dt, Transform::identity(), {&p1, 1}, false).ok());
  ASSERT_TRUE(h.push(2 * dt, jumpRoot, {&p2, 1}, /*teleport=*/true).ok());
  ASSERT_TRUE(h.insertBeforeNewest(2 * dt - dt / 8, jumpRoot, {&dense, 1}).ok());
  EXPECT_TRUE(h.denseAfterTeleport());
  EXPECT_TRUE(h.teleport(1));   // the jump is now between samples 2 and 1 ...
  EXPECT_FALSE(h.teleport(0));  // ... and the newest pair is motion at the new place
  Buffers out(1);
  const InheritedVelocities info = out.run(h, {});
  EXPECT_TRUE(info.teleportFlagged);
  EXPECT_NEAR(info.rootJump, 10.0, 1e-12);
  EXPECT_NEAR(info.sampleDt, dt / 8, 1e-12);
  EXPECT_TRUE(vecNear(out.linear[0], Vec3{0, 0, -3}, 1e-9)) << test::str(out.linear[0]);
  EXPECT_EQ(out.clamps[0], kClampNone);  // nothing was clamped: the velocity is the animation's

  // A dense sample still at the old place (nearer the older root) leaves the jump as the newest
  // pair and the flag on the newest sample: the velocity is the motion relative to the root over
  // that pair (here continuous at 1 m/s through the jump), carried into the new root's frame.
  PoseHistory old(1);
  const Transform oldDense = Transform::fromTranslation({0.1 + 0.1 * 7 / 8, 0, 0});
  const Transform p2continuous = jumpRoot * Transform::fromTranslation({0.2, 0, 0});
  ASSERT_TRUE(old.push(0.0, Transform::identity(), {&p0, 1}, false).ok());
  ASSERT_TRUE(old.push(dt, Transform::identity(), {&p1, 1}, false).ok());
  ASSERT_TRUE(old.push(2 * dt, jumpRoot, {&p2continuous, 1}, true).ok());
  ASSERT_TRUE(old.insertBeforeNewest(2 * dt - dt / 8, Transform::identity(), {&oldDense, 1}).ok());
  EXPECT_FALSE(old.denseAfterTeleport());
  EXPECT_TRUE(old.teleport(0));
  const InheritedVelocities carried = out.run(old, {});
  EXPECT_TRUE(carried.teleportFlagged);
  EXPECT_TRUE(out.clamps[0] & kClampTeleport);
  EXPECT_TRUE(vecNear(out.linear[0], Vec3{0, 0, -1}, 1e-9)) << test::str(out.linear[0]);

  // The next ordinary sample ends the dense state.
  const Transform p3 = jumpRoot * Transform::fromTranslation({0.7, 0, 0});
  ASSERT_TRUE(h.push(3 * dt, jumpRoot, {&p3, 1}, false).ok());
  EXPECT_FALSE(h.denseAfterTeleport());
  const InheritedVelocities next = out.run(h, {});
  EXPECT_FALSE(next.teleportFlagged);
  EXPECT_NEAR(next.rootJump, 0.0, 1e-12);
}

TEST(InheritVelocities, ClampsAreRecordedWithReasons) {
  PoseHistory h(1);
  const Transform a = Transform::identity();
  const Transform b{glm::angleAxis(1.0, Vec3{0, 0, 1}), Vec3{0.9, 0, 0}};
  ASSERT_TRUE(h.push(0.0, Transform::identity(), {&a, 1}, false).ok());
  ASSERT_TRUE(h.push(0.01, Transform::identity(), {&b, 1}, false).ok());
  HandoffSettings s;
  s.maxLinearSpeed = 30.0;   // raw is 90 m/s
  s.maxAngularSpeed = 40.0;  // raw is 100 rad/s
  Buffers out(1);
  out.run(h, s);
  EXPECT_NEAR(glm::length(out.rawLinear[0]), 90.0, 1e-9);
  EXPECT_NEAR(glm::length(out.linear[0]), 30.0, 1e-9);
  EXPECT_NEAR(glm::length(out.angular[0]), 40.0, 1e-9);
  EXPECT_TRUE(vecNear(glm::normalize(out.angular[0]), Vec3{0, 0, 1}, 1e-12));
  EXPECT_EQ(out.clamps[0], kClampLinearLimit | kClampAngularLimit);
  EXPECT_EQ(clampReasonText(out.clamps[0]), "linear limit, angular limit");

  PoseHistory one(1);
  ASSERT_TRUE(one.push(0.0, Transform::identity(), {&a, 1}, false).ok());
  out.run(one, s);
  EXPECT_EQ(out.linear[0], Vec3{0.0});
  EXPECT_EQ(out.clamps[0], kClampNoHistory);
}

// A three-joint chain with bodies on joints 0 and 1; joint 2 (a "finger") has none.
//
//   0 pelvis ---- 1 arm ---- 2 finger
struct Chain {
  Skeleton skeleton;
  RagdollAsset asset;
  Chain() {
    skeleton.jointNames = {"pelvis", "arm", "finger"};
    skeleton.parents = {kNoParent, 0, 1};
    skeleton.restLocal = {Transform::fromTranslation({0, 1, 0}), Transform::fromTranslation({0.3, 0, 0}),
                          Transform::fromTranslation({0.3, 0, 0})};
    skeleton.endSiteOffset = {Vec3{0}, Vec3{0}, Vec3{0.05, 0, 0}};
    for (int j = 0; j < 2; ++j) {
      BodyDef body;
      body.name = skeleton.jointNames[static_cast<size_t>(j)];
      body.joint = j;
      body.parentBody = j - 1;
      body.boneFromBody = {glm::angleAxis(-kPi / 2, Vec3{0, 0, 1}), Vec3{0.15, 0, 0}};
      body.mass = 1.0;
      asset.bodies.push_back(body);
    }
  }
};

TEST(WriteBack, ReproducesTheAnimatedPoseAndRidesAlong) {
  Chain c;
  std::vector<Transform> locals = c.skeleton.restLocal;
  locals[1].rotation = glm::angleAxis(0.7, Vec3{0, 0, 1});
  locals[2].rotation = glm::angleAxis(-0.3, Vec3{0, 1, 0});
  const Transform worldFromRoot{glm::angleAxis(0.4, Vec3{0, 1, 0}), Vec3{5, 0, 2}};
  std::vector<Transform> models(3);
  localToModel(c.skeleton, locals, models);
  std::vector<Transform> bodies(2);
  bodyPosesFromModels(c.asset, models, worldFromRoot, bodies);
  std::vector<Transform> scratch(3), out(3);
  writeBackPose(c.skeleton, c.asset, bodies, worldFromRoot, locals, {}, scratch, out);
  for (int j = 0; j < 3; ++j) EXPECT_TRUE(xfNear(out[size_t(j)], locals[size_t(j)], 1e-9, 1e-9)) << j;

  // Physics moved the arm body: the finger (no body) follows it with its animated local.
  bodies[1] = Transform{glm::angleAxis(0.5, Vec3{1, 0, 0}), Vec3{0, 0.1, 0}} * bodies[1];
  writeBackPose(c.skeleton, c.asset, bodies, worldFromRoot, locals, {}, scratch, out);
  EXPECT_TRUE(xfNear(out[2], locals[2], 1e-12, 1e-12));
  const Transform armWorld = worldFromRoot * scratch[1];
  EXPECT_TRUE(xfNear(armWorld * c.asset.bodies[1].boneFromBody, bodies[1], 1e-9, 1e-9));

  // Masked bone keeps its animated local rotation even though it has a body.
  const std::vector<std::uint8_t> mask{1, 0, 1};
  writeBackPose(c.skeleton, c.asset, bodies, worldFromRoot, locals, mask, scratch, out);
  EXPECT_TRUE(xfNear(out[1], locals[1], 1e-12, 1e-12));
}

TEST(DisplayBlend, WeightRamps) {
  EXPECT_DOUBLE_EQ(displayBlendWeight(0.0, 0.15), 0.0);
  EXPECT_DOUBLE_EQ(displayBlendWeight(0.075, 0.15), 0.5);
  EXPECT_DOUBLE_EQ(displayBlendWeight(1.0, 0.15), 1.0);
  EXPECT_DOUBLE_EQ(displayBlendWeight(0.0, 0.0), 1.0);
  // The blend itself: 0 shows animation, 1 physics, the short arc in between.
  const std::vector<Transform> anim{{glm::angleAxis(0.1, Vec3{0, 1, 0}), Vec3{0, 0, 0}}};
  const std::vector<Transform> phys{{-glm::angleAxis(0.5, Vec3{0, 1, 0}), Vec3{1, 0, 0}}};
  std::vector<Transform> shown(1);
  blendPoses(anim, phys, displayBlendWeight(0.0, 0.15), shown);
  EXPECT_TRUE(xfNear(shown[0], anim[0], 0, 1e-12));
  blendPoses(anim, phys, displayBlendWeight(0.15, 0.15), shown);
  EXPECT_TRUE(xfNear(shown[0], phys[0], 0, 1e-12));
  blendPoses(anim, phys, displayBlendWeight(0.075, 0.15), shown);
  EXPECT_TRUE(rotNear(shown[0].rotation, glm::angleAxis(0.3, Vec3{0, 1, 0}), 1e-12));
}

// --- The velocity-consistency step (VelocityProjector) ---

ConsistencyBody rod(double mass, const Vec3& centre, double length) {
  // A slender rod along world Y: I = m L^2 / 12 about X and Z, small about Y.
  const double across = mass * length * length / 12.0, along = 0.01 * across;
  return ConsistencyBody{
      1.0 / mass, glm::dmat3(Vec3{1 / across, 0, 0}, Vec3{0, 1 / along, 0}, Vec3{0, 0, 1 / across}), centre};
}

struct Momenta {
  Vec3 linear{0.0}, angular{0.0};
  double energy = 0.0;
};
Momenta momenta(const std::vector<ConsistencyBody>& bodies, const std::vector<Vec3>& v,
                const std::vector<Vec3>& w) {
  Momenta m;
  for (size_t b = 0; b < bodies.size(); ++b) {
    const double mass = 1.0 / bodies[b].inverseMass;
    const glm::dmat3 inertia = glm::inverse(bodies[b].inverseInertia);
    m.linear += mass * v[b];
    m.angular += glm::cross(bodies[b].centre, mass * v[b]) + inertia * w[b];
    m.energy += 0.5 * mass * glm::dot(v[b], v[b]) + 0.5 * glm::dot(w[b], inertia * w[b]);
  }
  return m;
}

TEST(VelocityProjector, AnchorsAgreeLockedAxesStillMomentumKept) {
  // An upper arm (A) and forearm (B) hanging along -Y, joined at the elbow (origin), the elbow
  // a hinge about Z: X and Y locked. The animation moves them inconsistently: the forearm
  // turns about its own axis (Y, locked) and its anchor point slides away from the arm's.
  const std::vector<ConsistencyBody> bodies{rod(2.0, {0, 0.15, 0}, 0.3), rod(1.5, {0, -0.13, 0}, 0.26)};
  ConsistencyJoint elbow;
  elbow.parent = 0;
  elbow.child = 1;
  elbow.anchor = Vec3{0, 0, 0};
  // Joint frames equal to the world: Euler axes X (A), Y, Z (B); lock X and Y.
  elbow.lockedCount = lockedAxisRows(Quat{1, 0, 0, 0}, Quat{1, 0, 0, 0}, 0b011, elbow.lockedAxes);
  ASSERT_EQ(elbow.lockedCount, 2);
  EXPECT_TRUE(vecNear(elbow.lockedAxes[0], Vec3{1, 0, 0}, 1e-12) ||
              vecNear(elbow.lockedAxes[0], Vec3{-1, 0, 0}, 1e-12));
  std::vector<Vec3> v{{1.0, 0.0, 0.0}, {1.6, 0.2, -0.3}}, w{{0.0, 0.0, 2.0}, {0.5, 4.0, 6.0}};
  const Momenta before = momenta(bodies, v, w);
  std::vector<Vec3> jl(2), ja(2), cl(2), ca(2);
  const std::vector<Vec3> v0 = v, w0 = w;
  VelocityProjector projector(2, 5, 0);
  const VelocityProjector::Outcome out =
      projector.project(bodies, std::vector<ConsistencyJoint>{elbow}, {}, 1.0 / 60, v, w, jl, ja, cl, ca);
  const Momenta after = momenta(bodies, v, w);
  // The anchor moves the same seen from both bodies; no relative turn about X or Y.
  const Vec3 anchorA = v[0] + glm::cross(w[0], elbow.anchor - bodies[0].centre);
  const Vec3 anchorB = v[1] + glm::cross(w[1], elbow.anchor - bodies[1].centre);
  EXPECT_TRUE(vecNear(anchorA, anchorB, 1e-12));
  EXPECT_NEAR(w[1].x - w[0].x, 0.0, 1e-12);
  EXPECT_NEAR(w[1].y - w[0].y, 0.0, 1e-12);
  EXPECT_LT(out.residual, 1e-12);
  // Internal impulses: momentum and angular momentum unchanged, kinetic energy only removed.
  EXPECT_TRUE(vecNear(after.linear, before.linear, 1e-12));
  EXPECT_TRUE(vecNear(after.angular, before.angular, 1e-12));
  EXPECT_LT(after.energy, before.energy);
  // The record's split: all of it from the joint rows.
  for (size_t b = 0; b < 2; ++b) {
    EXPECT_TRUE(vecNear(v0[b] + jl[b], v[b], 1e-12));
    EXPECT_TRUE(vecNear(w0[b] + ja[b], w[b], 1e-12));
    EXPECT_TRUE(vecNear(cl[b], Vec3{0.0}, 0.0));
  }
  std::printf(
      "elbow: forearm %.3f -> %.3f m/s, relative spin about the locked axes %.2f -> 0 rad/s, energy %.3f -> "
      "%.3f J\n",
      glm::length(v0[1]), glm::length(v[1]), std::hypot(w0[1].x - w0[0].x, w0[1].y - w0[0].y), before.energy,
      after.energy);

  // A velocity field that already satisfies the joint is left alone.
  std::vector<Vec3> v2{{1, 0, 0}, {1, 0, 0}}, w2{{0, 0, 0}, {0, 0, 3}};
  v2[1] += glm::cross(w2[1], bodies[1].centre - elbow.anchor);
  const std::vector<Vec3> v2Before = v2;
  projector.project(bodies, std::vector<ConsistencyJoint>{elbow}, {}, 1.0 / 60, v2, w2, jl, ja, cl, ca);
  EXPECT_TRUE(vecNear(v2[1], v2Before[1], 1e-12));
  EXPECT_TRUE(vecNear(w2[1], Vec3{0, 0, 3}, 1e-12));
}

TEST(VelocityProjector, StaticContactsOnlyPushAndOnlyWhenTheyBind) {
  // A foot-like rod lying along X on the floor (y = 0 at its lowest points).
  const ConsistencyBody foot{1.0, glm::dmat3(10.0), Vec3{0, 0.05, 0}};
  const std::vector<ConsistencyContact> contacts{{0, Vec3{-0.1, 0, 0}, Vec3{0, 1, 0}, 0.002},
                                                 {0, Vec3{0.1, 0, 0}, Vec3{0, 1, 0}, 0.002}};
  VelocityProjector projector(1, 0, 4);
  std::vector<Vec3> jl(1), ja(1), cl(1), ca(1);
  // Moving down at 1 m/s: reaches the floor within 1/60 s; the approach is stripped, the slide kept.
  std::vector<Vec3> v{{0.5, -1.0, 0.0}}, w{{0.0, 0.0, 0.0}};
  VelocityProjector::Outcome out =
      projector.project({&foot, 1}, {}, contacts, 1.0 / 60, v, w, jl, ja, cl, ca);
  EXPECT_EQ(out.contactsUsed, 2);
  EXPECT_TRUE(vecNear(v[0], Vec3{0.5, 0.0, 0.0}, 1e-12)) << test::str(v[0]);
  EXPECT_TRUE(vecNear(cl[0], Vec3{0, 1, 0}, 1e-12));
  // Slowly down, 2 mm above: does not reach the floor within the step; nothing changes.
  v = {{0.0, -0.05, 0.0}};
  out = projector.project({&foot, 1}, {}, contacts, 1.0 / 60, v, w, jl, ja, cl, ca);
  EXPECT_EQ(out.contactsUsed, 0);
  EXPECT_TRUE(vecNear(v[0], Vec3{0.0, -0.05, 0.0}, 0.0));
  // Lifting off (up, tipping): the floor never pulls.
  v = {{0.0, 1.0, 0.0}};
  w = {{0.0, 0.0, 3.0}};
  out = projector.project({&foot, 1}, {}, contacts, 1.0 / 60, v, w, jl, ja, cl, ca);
  EXPECT_EQ(out.contactsUsed, 0);
  EXPECT_TRUE(vecNear(v[0], Vec3{0.0, 1.0, 0.0}, 0.0));
  // Tipping about Z into the floor at one end only:
  v = {{0.0, -0.1, 0.0}};
  w = {{0.0, 0.0, -8.0}};  // +X end: v_y = -0.1 - 0.8 = -0.9 m/s; -X end: -0.1 + 0.8 = +0.7 m/s
  out = projector.project({&foot, 1}, {}, contacts, 1.0 / 60, v, w, jl, ja, cl, ca);
  EXPECT_EQ(out.contactsUsed, 1);
  const double endVelocity = (v[0] + glm::cross(w[0], contacts[1].point - foot.centre)).y;
  EXPECT_NEAR(endVelocity, 0.0, 1e-12);
}

}  // namespace
}  // namespace handoff
