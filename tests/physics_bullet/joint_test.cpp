// Joints of the Bullet adapter: anchor coincidence, energy, limits, implicit motors, falls.
#include "handoff/physics.h"
#include "handoff/physics_bullet.h"
#include "physics_bullet/scene.h"
#include "support/bullet_precision.h"
#include "support/test_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace handoff {
namespace {

using test::kDt;
using test::kG;

// A pendulum: a static pivot body and a dynamic bob on a ball joint (all angles free but Y, which
// Bullet limits to +-pi/2 anyway), released horizontally. Damping 0: energy is conserved up to
// the solver's Baumgarte and the integrator.
class Pendulum : public ::testing::TestWithParam<int> {};

TEST_P(Pendulum, AnchorsHoldAndEnergyIsConserved) {
  const int substeps = GetParam();
  auto world = createBulletWorld();
  const BodyId pivot = test::mustCreate(*world, [] {
    BodyDesc d = test::sphereDesc(0.05, 1.0, Vec3{0, 2, 0});
    d.motion = MotionType::Static;
    return d;
  }());
  // Bob: capsule along X, centre 0.5 m from the pivot, horizontal.
  BodyDesc bobDesc =
      test::capsuleDesc(0.05, 0.2, 2.0, Transform{glm::angleAxis(0.5 * kPi, Vec3{0, 0, 1}), Vec3{0.5, 2, 0}});
  bobDesc.linearDamping = 0.0;
  bobDesc.angularDamping = 0.0;
  const BodyId bob = test::mustCreate(*world, bobDesc);
  // A free ball joint: only the anchor rows act (limit impacts would be inelastic).
  JointDesc j = test::jointAt(*world, pivot, bob, Vec3{0, 2, 0});
  j.angularLower = Vec3{1.0};
  j.angularUpper = Vec3{-1.0};
  const JointId joint = test::mustCreate(*world, j);
  // A small out-of-plane velocity consistent with the joint (about the pivot) makes it a
  // conical, not planar, motion.
  world->setLinearVelocity(bob, Vec3{0, 0, 0.5});
  world->setAngularVelocity(bob, Vec3{0, -1.0, 0});

  const std::vector<BodyId> bodies{bob};
  const double e0 = test::energy(*world, bodies);
  const double scale = world->mass(bob) * kG * 0.5;  // the swing's kinetic energy at the bottom
  double worstSeparation = 0.0;
  double worstEnergy = 0.0;
  for (int i = 0; i < 300; ++i) {
    world->step(kDt, substeps);
    worstSeparation = std::max(worstSeparation, world->jointAnchorSeparation(joint));
    worstEnergy = std::max(worstEnergy, std::abs(test::energy(*world, bodies) - e0) / scale);
  }
  std::printf(
      "[ figure ] pendulum, %d substeps: worst anchor separation %.3g m, energy drift %.2f %% (final %+.2f "
      "%%)\n",
      substeps, worstSeparation, 100.0 * worstEnergy, 100.0 * (test::energy(*world, bodies) - e0) / scale);
  // The velocity solve keeps the anchors' relative velocity at zero; integrating the rotation then
  // leaves the circle by about omega^2 r h^2 / 2 per substep, which Baumgarte pulls back. With one
  // 60 Hz substep that is ~3 mm and 5 % of energy; the product steps with 2 substeps or more.
  EXPECT_LT(worstSeparation, substeps == 1 ? 5e-3 : 1e-3);
  EXPECT_LT(worstEnergy, substeps == 1 ? 0.06 : 0.03);
}

INSTANTIATE_TEST_SUITE_P(Substeps, Pendulum, ::testing::Values(1, 2, 4));

// Two dynamic bodies on one joint, both free: the pair tumbles through the air with its anchors
// together and its total energy unchanged.
TEST(Pendulum, TwoBodyTumbleKeepsAnchorsAndEnergy) {
  // No gravity: symplectic Euler loses g^2 h^2 / 2 per kg and substep in free fall, which would
  // swamp the joint's own effect on the (much smaller) spin energy.
  auto world = createBulletWorld(WorldSettings{.gravity = Vec3{0.0}});
  BodyDesc a = test::capsuleDesc(0.06, 0.2, 3.0, Transform::fromTranslation(Vec3{0, 10, 0}));
  a.linearDamping = a.angularDamping = 0.0;
  BodyDesc b = test::capsuleDesc(0.05, 0.15, 1.5, Transform::fromTranslation(Vec3{0, 10 - 0.26 - 0.2, 0}));
  b.linearDamping = b.angularDamping = 0.0;
  const BodyId ba = test::mustCreate(*world, a);
  const BodyId bb = test::mustCreate(*world, b);
  // A free ball joint (no angular rows): limit impacts would be inelastic and take energy.
  JointDesc j = test::jointAt(*world, ba, bb, Vec3{0, 10 - 0.26, 0});
  j.angularLower = Vec3{1.0};
  j.angularUpper = Vec3{-1.0};
  const JointId joint = test::mustCreate(*world, j);
  world->setAngularVelocity(ba, Vec3{0, 2, 6});
  world->setAngularVelocity(bb, Vec3{3, 0, -4});
  // The first step removes the part of these velocities the joint does not allow (an inelastic
  // impulse): energy is compared from there on.
  world->step(kDt, 4);
  const std::vector<BodyId> bodies{ba, bb};
  const double e0 = test::energy(*world, bodies);
  double ke0 = 0.0;
  for (BodyId body : bodies) {
    const Vec3 w = world->angularVelocity(body);
    ke0 += 0.5 * glm::dot(w, world->worldInertia(body) * w);
  }
  double worstSeparation = 0.0;
  double worstEnergy = 0.0;
  for (int i = 0; i < 60; ++i) {  // 1 s of flight, no ground
    world->step(kDt, 4);
    worstSeparation = std::max(worstSeparation, world->jointAnchorSeparation(joint));
    worstEnergy = std::max(worstEnergy, std::abs(test::energy(*world, bodies) - e0) / ke0);
  }
  std::printf(
      "[ figure ] tumbling pair: worst anchor separation %.3g m, energy drift %.2f %% of spin energy\n",
      worstSeparation, 100.0 * worstEnergy);
  EXPECT_LT(worstSeparation, 1e-3);
  EXPECT_LT(worstEnergy, 0.05);
}

// A hinge (X, Y locked, Z in [0, 1.5]) swinging under gravity into its upper limit.
TEST(Limits, HingeRespectsLimitUnderGravity) {
  for (int substeps : {1, 4}) {
    auto world = createBulletWorld();
    const BodyId frame = test::mustCreate(*world, [] {
      BodyDesc d = test::boxDesc(Vec3{0.1}, 1.0, Transform::fromTranslation(Vec3{0, 2, 0}));
      d.motion = MotionType::Static;
      return d;
    }());
    // The arm hangs along +X (horizontal) from the hinge at the origin of the frame box; gravity
    // turns it about -Z... so put the joint's Z along -Z of the world: the fall is a positive
    // joint angle, and the bottom (pi/2) lies beyond the 1.5 limit.
    BodyDesc armDesc = test::capsuleDesc(
        0.05, 0.25, 2.0, Transform{glm::angleAxis(0.5 * kPi, Vec3{0, 0, 1}), Vec3{0.35, 2, 0}});
    armDesc.angularDamping = 0.0;
    armDesc.linearDamping = 0.0;
    const BodyId arm = test::mustCreate(*world, armDesc);
    JointDesc j = test::jointAt(*world, frame, arm, Vec3{0, 2, 0}, glm::angleAxis(kPi, Vec3{1, 0, 0}));
    j.angularLower = Vec3{0, 0, 0};
    j.angularUpper = Vec3{0, 0, 1.5};
    const JointId joint = test::mustCreate(*world, j);
    double maxZ = -1.0;
    double minZ = 1.0;
    double worstLocked = 0.0;
    for (int i = 0; i < 240; ++i) {
      world->step(kDt, substeps);
      const Vec3 a = jointAngles(world->jointRelativeRotation(joint));
      maxZ = std::max(maxZ, a.z);
      minZ = std::min(minZ, a.z);
      worstLocked = std::max({worstLocked, std::abs(a.x), std::abs(a.y)});
    }
    std::printf("[ figure ] hinge, %d substeps: z in [%.4f, %.4f] (limit [0, 1.5]), locked axes %.2g rad\n",
                substeps, minZ, maxZ, worstLocked);
    EXPECT_GT(maxZ, 1.4);  // it did reach the limit
    EXPECT_LT(maxZ, 1.5 + 0.02);
    EXPECT_GT(minZ, -0.02);
    EXPECT_LT(worstLocked, 0.02);
    // At rest on the limit.
    EXPECT_NEAR(jointAngles(world->jointRelativeRotation(joint)).z, 1.5, 0.02);
  }
}

struct MotorCase {
  double kp;
  double kd;
  double maxTorque;
};

// The implicit motor drives a hinge to a target angle against gravity with a finite maxTorque.
TEST(Motor, DrivesHingeToTarget) {
  for (const MotorCase& mc :
       {MotorCase{5000.0, 100.0, 200.0}, MotorCase{1e6, 1e3, 200.0}, MotorCase{200.0, 20.0, 50.0}}) {
    auto world = createBulletWorld();
    const BodyId frame = test::mustCreate(*world, [] {
      BodyDesc d = test::boxDesc(Vec3{0.1}, 1.0, Transform::fromTranslation(Vec3{0, 2, 0}));
      d.motion = MotionType::Static;
      return d;
    }());
    const BodyId arm = test::mustCreate(
        *world, test::capsuleDesc(0.05, 0.25, 2.0,
                                  Transform{glm::angleAxis(0.5 * kPi, Vec3{0, 0, 1}), Vec3{0.35, 2, 0}}));
    JointDesc j = test::jointAt(*world, frame, arm, Vec3{0, 2, 0});
    j.angularLower = Vec3{0, 0, -2.5};
    j.angularUpper = Vec3{0, 0, 2.5};
    const JointId joint = test::mustCreate(*world, j);
    JointMotorSettings motor;
    motor.enabled = true;
    motor.target = fromJointAngles(Vec3{0, 0, 1.0});  // 1 rad up from horizontal
    motor.stiffness = Vec3{mc.kp};
    motor.damping = Vec3{mc.kd};
    motor.maxTorque = mc.maxTorque;
    world->setJointMotor(joint, motor);
    double overshoot = 0.0;
    for (int i = 0; i < 120; ++i) {
      world->step(kDt, 4);
      overshoot = std::max(overshoot, jointAngles(world->jointRelativeRotation(joint)).z - 1.0);
    }
    const double error = jointAngles(world->jointRelativeRotation(joint)).z - 1.0;
    // Gravity torque at 1 rad: m g d cos(1) = 2 * 9.81 * 0.35 * 0.54 = 3.7 N m: static error 3.7 / Kp.
    std::printf("[ figure ] motor Kp %g Kd %g maxTorque %g: error after 2 s %.2g rad, overshoot %.2g rad\n",
                mc.kp, mc.kd, mc.maxTorque, error, overshoot);
    EXPECT_LT(std::abs(error), mc.kp >= 1000.0 ? 0.01 : 0.03);
    EXPECT_TRUE(isFinite(world->transform(arm)));
  }
}

// maxTorque is honoured: a motor weaker than gravity cannot hold the arm up.
TEST(Motor, TorqueLimitIsHonoured) {
  auto world = createBulletWorld();
  const BodyId frame = test::mustCreate(*world, [] {
    BodyDesc d = test::boxDesc(Vec3{0.1}, 1.0, Transform::fromTranslation(Vec3{0, 2, 0}));
    d.motion = MotionType::Static;
    return d;
  }());
  BodyDesc armDesc = test::capsuleDesc(0.05, 0.25, 2.0,
                                       Transform{glm::angleAxis(0.5 * kPi, Vec3{0, 0, 1}), Vec3{0.35, 2, 0}});
  armDesc.angularDamping = 0.0;
  const BodyId arm = test::mustCreate(*world, armDesc);
  JointDesc j = test::jointAt(*world, frame, arm, Vec3{0, 2, 0});
  j.angularLower = Vec3{0, 0, 1};
  j.angularUpper = Vec3{0, 0, -1};  // Z free
  const JointId joint = test::mustCreate(*world, j);
  // Holding the horizontal arm takes m g d = 2 * 9.81 * 0.35 = 6.87 N m.
  JointMotorSettings motor;
  motor.enabled = true;
  motor.stiffness = Vec3{1e5};
  motor.damping = Vec3{100.0};
  motor.maxTorque = 3.0;
  world->setJointMotor(joint, motor);
  for (int i = 0; i < 6; ++i) world->step(kDt, 4);
  // Net torque 6.87 - 3 = 3.87 N m on I = m d^2 + I_c: it sags with the predicted acceleration.
  const double ic = shapePrincipalInertia(ShapeDesc{ShapeType::Capsule, 0.05, 0.25, Vec3{0.0}}, 2.0).x;
  const double alpha = (2.0 * kG * 0.35 - 3.0) / (2.0 * 0.35 * 0.35 + ic);
  const double t = 6 * kDt;
  const double sag = -jointAngles(world->jointRelativeRotation(joint)).z;
  std::printf("[ figure ] saturated motor: sag %.4f rad after %.3f s, constant-torque prediction %.4f rad\n",
              sag, t, 0.5 * alpha * t * t);
  EXPECT_NEAR(sag, 0.5 * alpha * t * t, 0.15 * 0.5 * alpha * t * t);

  // Disabled: the arm falls freely.
  motor.enabled = false;
  world->setJointMotor(joint, motor);
  for (int i = 0; i < 30; ++i) world->step(kDt, 4);
  EXPECT_LT(jointAngles(world->jointRelativeRotation(joint)).z, -1.0);
}

// A chain of 16 capsules with ragdoll-like masses and limits falls and slams into the ground.
struct FallResult {
  double worstSeparation = 0.0;
  double impactSpeed = 0.0;
  double lowest = 1e9;  // lowest link centre: below -radius means the link went under the ground
};

FallResult dropChain(double height, int substeps, std::uint32_t seed) {
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Quat tilt = glm::angleAxis(1.2, glm::normalize(Vec3{u(rng), u(rng), u(rng)}));
  test::Chain chain = test::makeChain(*world, Vec3{0, height + 2.0, 0}, 16, 0.06, 0.12, 1.0, tilt);
  // Violent: every link spins its own way (8 rad/s, inconsistent with the joints) and the chain
  // is thrown down at 5 m/s; thin 1 kg links then hit the ground end first.
  for (BodyId b : chain.bodies) {
    world->setAngularVelocity(b, Vec3{u(rng), u(rng), u(rng)} * 8.0);
    world->setLinearVelocity(b, Vec3{u(rng), -5.0, u(rng)} * 1.0);
  }
  FallResult r;
  const int steps = static_cast<int>((std::sqrt(2.0 * height / kG) + 2.0) / kDt);
  for (int i = 0; i < steps; ++i) {
    world->step(kDt, substeps);
    const double sep = test::maxAnchorSeparation(*world, chain.joints);
    r.worstSeparation = std::max(r.worstSeparation, sep);
    for (BodyId b : chain.bodies)
      r.impactSpeed = std::max(r.impactSpeed, glm::length(world->linearVelocity(b)));
    for (BodyId b : chain.bodies) r.lowest = std::min(r.lowest, world->transform(b).translation.y);
  }
  return r;
}

TEST(Falls, ViolentFallKeepsAnchorsWithinOneCentimetre) {
  for (int substeps : {1, 2, 4}) {
    double worst = 0.0;
    double speed = 0.0;
    double lowest = 1e9;
    for (std::uint32_t seed = 1; seed <= 3; ++seed) {
      const FallResult r = dropChain(10.0, substeps, seed);
      worst = std::max(worst, r.worstSeparation);
      speed = std::max(speed, r.impactSpeed);
      lowest = std::min(lowest, r.lowest);
    }
    std::printf(
        "[ figure ] 10 m fall, 16-capsule chain, %d substeps: worst anchor separation %.3g m (peak speed "
        "%.1f m/s)\n",
        substeps, worst, speed);
    EXPECT_LT(worst, 0.01);
    std::printf("[ figure ]   lowest link centre %.3f m (radius 0.06 m)\n", lowest);
    // A link end slamming flat at ~13 m/s can dip a few centimetres into the ground for a
    // substep (Bullet's convex-plane test reports one new point per substep, the deepest, so the
    // far end of a fast-turning limb has no contact yet); it never goes through.
    EXPECT_GT(lowest, -0.06);
  }
}

TEST(Falls, HundredMetreDropKeepsAnchorsWithinFiveCentimetres) {
  for (int substeps : {1, 2, 4}) {
    double worst = 0.0;
    double speed = 0.0;
    double lowest = 1e9;
    for (std::uint32_t seed = 1; seed <= 3; ++seed) {
      const FallResult r = dropChain(100.0, substeps, seed);
      worst = std::max(worst, r.worstSeparation);
      speed = std::max(speed, r.impactSpeed);
      lowest = std::min(lowest, r.lowest);
    }
    std::printf("[ figure ] 100 m drop, %d substeps: worst anchor separation %.3g m (peak speed %.1f m/s)\n",
                substeps, worst, speed);
    EXPECT_LT(worst, 0.05);
    std::printf("[ figure ]   lowest link centre %.3f m (radius 0.06 m)\n", lowest);
    EXPECT_GT(lowest, -0.06);
  }
}

// Joint rows see a kinematic body's velocity: a child hanging from a kinematic body lifted at
// constant speed moves with it, without lagging a step.
TEST(Kinematic, JointSeesKinematicVelocity) {
  auto world = createBulletWorld();
  BodyDesc parentDesc = test::boxDesc(Vec3{0.1}, 5.0, Transform::fromTranslation(Vec3{0, 2, 0}));
  parentDesc.motion = MotionType::Kinematic;
  const BodyId parent = test::mustCreate(*world, parentDesc);
  const BodyId child = test::mustCreate(*world, test::sphereDesc(0.1, 1.0, Vec3{0, 1.7, 0}));
  JointDesc j = test::jointAt(*world, parent, child, Vec3{0, 1.85, 0});  // all angles locked: rigid
  const JointId joint = test::mustCreate(*world, j);
  const Vec3 v{1.0, 2.0, 0.0};
  for (int i = 0; i < 30; ++i) {
    const Transform p = world->transform(parent);
    world->moveKinematic(parent, Transform{p.rotation, p.translation + v * kDt}, kDt);
    world->step(kDt, 2);
  }
  EXPECT_TRUE(test::vecNear(world->linearVelocity(child), v, 0.02));
  EXPECT_LT(world->jointAnchorSeparation(joint), 1e-3);
}

TEST(Joints, DisabledBodyTakesItsJointsOutOfTheSimulation) {
  auto world = createBulletWorld();
  const BodyId top = test::mustCreate(*world, [] {
    BodyDesc d = test::sphereDesc(0.1, 1.0, Vec3{0, 5, 0});
    d.motion = MotionType::Kinematic;
    return d;
  }());
  BodyDesc hangingDesc = test::sphereDesc(0.1, 1.0, Vec3{0, 4.7, 0});
  hangingDesc.linearDamping = 0.0;
  const BodyId hanging = test::mustCreate(*world, hangingDesc);
  const JointId joint = test::mustCreate(*world, test::jointAt(*world, top, hanging, Vec3{0, 4.85, 0}));
  for (int i = 0; i < 30; ++i) world->step(kDt, 2);
  EXPECT_NEAR(world->transform(hanging).translation.y, 4.7, 1e-3);
  world->setEnabled(top, false);
  for (int i = 0; i < 30; ++i) world->step(kDt, 2);
  EXPECT_LT(world->transform(hanging).translation.y, 4.7 - 1.0);  // free fall for 0.5 s: 1.2 m
  EXPECT_EQ(world->jointCount(), 1);                              // the joint is still there
  // Re-enabled: the joint pulls the pair together again (anchors were 1.2 m apart).
  world->setEnabled(top, true);
  world->setTransform(hanging, Transform::fromTranslation(Vec3{0, 4.7, 0}));
  world->setLinearVelocity(hanging, Vec3{0.0});
  world->resetWarmStart(joint);
  for (int i = 0; i < 30; ++i) world->step(kDt, 2);
  EXPECT_NEAR(world->transform(hanging).translation.y, 4.7, 1e-3);
}

// After a teleport of a resting pile, resetWarmStart drops stale contact impulses: no kick.
TEST(Joints, ResetWarmStartAfterTeleportGivesNoKick) {
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  const BodyId a = test::mustCreate(
      *world, test::boxDesc(Vec3{0.3, 0.1, 0.3}, 10.0, Transform::fromTranslation(Vec3{0, 0.1, 0})));
  const BodyId b =
      test::mustCreate(*world, test::boxDesc(Vec3{0.1}, 1.0, Transform::fromTranslation(Vec3{0.0, 0.3, 0})));
  JointDesc j = test::jointAt(*world, a, b, Vec3{0, 0.2, 0});
  j.angularLower = Vec3{1.0};
  j.angularUpper = Vec3{-1.0};
  const JointId joint = test::mustCreate(*world, j);
  for (int i = 0; i < 20; ++i) world->step(kDt, 2);
  // Teleport the pair sideways onto the ground again (same height): the manifolds keep points
  // with impulses accumulated under the old contact state.
  for (BodyId body : {a, b}) {
    Transform t = world->transform(body);
    t.translation.x += 0.05;
    world->setTransform(body, t);
  }
  world->resetWarmStart(joint);
  world->step(kDt, 2);
  EXPECT_LT(glm::length(world->linearVelocity(a)), 0.05);
  EXPECT_LT(glm::length(world->linearVelocity(b)), 0.05);
}

}  // namespace
}  // namespace handoff

namespace handoff {
namespace {

// Re-anchoring at a committed pose: new frames take effect at once and hold.
TEST(Joints, SetJointFramesReanchors) {
  auto world = createBulletWorld(WorldSettings{.gravity = Vec3{0.0}});
  const BodyId a = test::mustCreate(*world, [] {
    BodyDesc d = test::sphereDesc(0.1, 1.0, Vec3{0, 1, 0});
    d.motion = MotionType::Kinematic;
    return d;
  }());
  const BodyId b = test::mustCreate(*world, test::sphereDesc(0.1, 1.0, Vec3{0, 0.7, 0}));
  const JointId joint = test::mustCreate(*world, test::jointAt(*world, a, b, Vec3{0, 0.85, 0}));
  // B was put 5 cm off (a teleport of the pose); re-anchor where it is instead of snapping back.
  world->setTransform(b, Transform::fromTranslation(Vec3{0.05, 0.7, 0}));
  // Single precision: the anchors are computed from float poses and frames of about 1 m (a few
  // roundings each); the body's pose is rounded once per substep (60) while it holds.
  EXPECT_NEAR(world->jointAnchorSeparation(joint), 0.05, test::bulletTolerance(1e-12, 1.0, 4));
  const Transform wj = Transform::fromTranslation(Vec3{0.05, 0.85, 0});
  world->setJointFrames(joint, world->transform(a).inverse() * wj, world->transform(b).inverse() * wj);
  EXPECT_NEAR(world->jointAnchorSeparation(joint), 0.0, test::bulletTolerance(1e-12, 1.0, 4));
  for (int i = 0; i < 30; ++i) world->step(test::kDt, 2);
  EXPECT_TRUE(test::vecNear(world->transform(b).translation, Vec3{0.05, 0.7, 0},
                            test::bulletTolerance(1e-9, 1.0, 60)));
}

// Limits changed at run time (widened at a handoff, tightened back later) act at once; the
// motor's target is re-clamped to them.
TEST(Joints, SetJointLimitsAtRunTime) {
  auto world = createBulletWorld();
  const BodyId frame = test::mustCreate(*world, [] {
    BodyDesc d = test::boxDesc(Vec3{0.1}, 1.0, Transform::fromTranslation(Vec3{0, 2, 0}));
    d.motion = MotionType::Static;
    return d;
  }());
  const BodyId arm = test::mustCreate(
      *world, test::capsuleDesc(0.05, 0.25, 2.0,
                                Transform{glm::angleAxis(0.5 * kPi, Vec3{0, 0, 1}), Vec3{0.35, 2, 0}}));
  JointDesc j = test::jointAt(*world, frame, arm, Vec3{0, 2, 0});
  j.angularLower = Vec3{0, 0, -0.2};  // hinge about Z, held near horizontal
  j.angularUpper = Vec3{0, 0, 0.2};
  const JointId joint = test::mustCreate(*world, j);
  for (int i = 0; i < 60; ++i) world->step(test::kDt, 2);
  EXPECT_NEAR(jointAngles(world->jointRelativeRotation(joint)).z, -0.2, 0.02);
  world->setJointLimits(joint, Vec3{0, 0, -1.0}, Vec3{0, 0, 0.2});
  for (int i = 0; i < 120; ++i) world->step(test::kDt, 2);
  EXPECT_NEAR(jointAngles(world->jointRelativeRotation(joint)).z, -1.0, 0.02);
  // A motor target beyond the limits is clamped to them: it drives up to 0.2, not 0.8.
  JointMotorSettings motor;
  motor.enabled = true;
  motor.target = fromJointAngles(Vec3{0, 0, 0.8});
  motor.stiffness = Vec3{2000.0};
  motor.damping = Vec3{50.0};
  motor.maxTorque = 100.0;
  world->setJointMotor(joint, motor);
  for (int i = 0; i < 120; ++i) world->step(test::kDt, 2);
  EXPECT_NEAR(jointAngles(world->jointRelativeRotation(joint)).z, 0.2, 0.01);
  // Out-of-range limits are clamped to Bullet's range, free axes stay free.
  world->setJointLimits(joint, Vec3{0, -3.0, 1}, Vec3{0, 3.0, -1});
  for (int i = 0; i < 10; ++i) world->step(test::kDt, 2);
  EXPECT_TRUE(isFinite(world->transform(arm)));
}

}  // namespace
}  // namespace handoff
