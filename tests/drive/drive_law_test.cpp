// The drive law (SPEC.md section 5) against values computed by hand.
#include "handoff/drive.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "support/test_math.h"

namespace handoff {
namespace {

using test::rotNear;
using test::vecNear;

constexpr double kDeg = kPi / 180.0;
constexpr double kInf = std::numeric_limits<double>::infinity();
const Vec3 kX{1, 0, 0}, kY{0, 1, 0}, kZ{0, 0, 1};

Quat rot(double angle, const Vec3& axis) { return glm::angleAxis(angle, axis); }

// An elbow whose joint frames are NOT the identity. Both joint frames are the body frame turned
// +90 deg about body Y, so J's axes in body space are
//
//        J.x (twist) = body -Z      J.y = body +Y      J.z (hinge) = body +X
//
//   upper arm A            forearm B
//   o=================o=================o      hinge J.z = body +X
//                 elbow
//
// Only J.z is open (flexion 0..2.5 rad); J.x and J.y are locked.
DriveJoint elbow() {
  DriveJoint j;
  j.bodyA = 0;
  j.bodyB = 1;
  j.bodyAFromJoint = rot(kPi / 2, kY);
  j.bodyBFromJoint = rot(kPi / 2, kY);
  j.angularLower = Vec3{0.0, 0.0, 0.0};
  j.angularUpper = Vec3{0.0, 0.0, 2.5};
  j.gains = DriveGains{100.0, 10.0, std::numeric_limits<double>::infinity()};
  return j;
}

// A joint with identity frames and every axis free: the law without per-DOF handling.
DriveJoint freeJoint(const DriveGains& gains) {
  DriveJoint j;
  j.bodyA = 0;
  j.bodyB = 1;
  j.angularLower = Vec3{1.0};
  j.angularUpper = Vec3{-1.0};
  j.gains = gains;
  return j;
}

TEST(DriveTargets, ElbowTargetIsAboutTheJointFrameHinge) {
  // Animation: upper arm straight (identity), forearm flexed 60 deg about the hinge, which is
  // body +X = world +X here.
  const DriveJoint j = elbow();
  const Quat worldFromATarget = Quat{1, 0, 0, 0};
  const Quat worldFromBTarget = rot(60 * kDeg, kX);
  // qA_t = Ry(90); qB_t = Rx(60) Ry(90); qTarget = Ry(-90) Rx(60) Ry(90) = a 60 deg turn about
  // Ry(-90) x = +z: Rz(60), the hinge angle about the hinge.
  const Quat target =
      jointRelativeRotation(worldFromATarget, worldFromBTarget, j.bodyAFromJoint, j.bodyBFromJoint);
  EXPECT_TRUE(rotNear(target, rot(60 * kDeg, kZ), 1e-12));
  EXPECT_TRUE(vecNear(jointAngles(target), Vec3{0, 0, 60 * kDeg}, 1e-12));

  // Skipping the joint frames gives the same angle about J.x, the twist axis (body -Z): the
  // correct elbow angle about the wrong axis. An engine servo handed this quaternion (it reads
  // targets in J) would twist the forearm, and a locked J.x would take none of it.
  const Quat withoutFrames =
      jointRelativeRotation(worldFromATarget, worldFromBTarget, Quat{1, 0, 0, 0}, Quat{1, 0, 0, 0});
  EXPECT_TRUE(vecNear(jointAngles(withoutFrames), Vec3{60 * kDeg, 0, 0}, 1e-12));
  EXPECT_GT(angleBetween(withoutFrames, target), 1.0);
  const JointMotorSettings motor = implicitMotorSettings(j, target, 1.0);
  EXPECT_TRUE(rotNear(motor.target, rot(60 * kDeg, kZ), 1e-12));
  const JointMotorSettings wrongMotor = implicitMotorSettings(j, withoutFrames, 1.0);
  EXPECT_TRUE(rotNear(wrongMotor.target, Quat{1, 0, 0, 0}, 1e-12)) << "locked twist takes none of it";
}

TEST(DriveLaw, ElbowErrorAndWorldTorqueByHand) {
  // Upper arm turned +90 deg about world Z: body +X (the hinge) points along world +Y.
  //
  //        ^ y (hinge)
  //        |
  //   z (.)+---> x            A = Rz(90), B flexed 20 deg about the hinge: Ry(20) Rz(90)
  //
  const DriveJoint j = elbow();
  const Quat worldFromA = rot(90 * kDeg, kZ);
  const Quat worldFromB = rot(20 * kDeg, kY) * worldFromA;
  // Target: 60 deg flexion. qA_t = Rz(90) Ry(90), qB_t = Ry(60) Rz(90) Ry(90);
  // inverse(qA_t) y = Ry(-90) Rz(-90) y = Ry(-90) x = z, so qTarget = Rz(60).
  const Quat target =
      jointRelativeRotation(worldFromA, rot(60 * kDeg, kY) * worldFromA, j.bodyAFromJoint, j.bodyBFromJoint);
  EXPECT_TRUE(rotNear(target, rot(60 * kDeg, kZ), 1e-12));

  JointDriveInput in;
  in.worldFromBodyA = worldFromA;
  in.worldFromBodyB = worldFromB;
  in.angularVelocityA = Vec3{0, 0, 1};  // world
  in.angularVelocityB = Vec3{0, 2, 1};  // world: relative (0, 2, 0), about the hinge
  in.target = target;
  const JointDriveOutput out = computeJointDrive(j, in);
  ASSERT_TRUE(out.valid);
  // qRel = Rz(20); qError = Rz(60) Rz(-20) = Rz(40): e = (0, 0, 40 deg) in J_A.
  EXPECT_TRUE(vecNear(out.currentAngles, Vec3{0, 0, 20 * kDeg}, 1e-12));
  EXPECT_TRUE(vecNear(out.error, Vec3{0, 0, 40 * kDeg}, 1e-12));
  // omegaRel = inverse(qA) (0, 2, 0) = Ry(-90) Rz(-90) (0, 2, 0) = Ry(-90) (2, 0, 0) = (0, 0, 2).
  EXPECT_TRUE(vecNear(out.relativeVelocity, Vec3{0, 0, 2}, 1e-12));
  // Static law: tauA = 100 * 0.6981317 - 10 * 2 = 49.81317 about J.z.
  const double tau = 100.0 * 40 * kDeg - 10.0 * 2.0;
  EXPECT_NEAR(tau, 49.81317, 1e-5);
  EXPECT_TRUE(vecNear(out.torque, Vec3{0, 0, tau}, 1e-10));
  // World: qA * tauA = Rz(90) Ry(90) (0, 0, tau) = Rz(90) (tau, 0, 0) = (0, tau, 0), the hinge.
  EXPECT_TRUE(vecNear(out.torqueWorld, Vec3{0, tau, 0}, 1e-10));
  EXPECT_FALSE(out.saturated);
}

TEST(DriveLaw, SkippingJointFramesDrivesTheWrongAxis) {
  // Straight arm (B = A = Rz(90)), animation flexes 60 deg about the hinge (world +Y). The
  // mistake: a target computed from the bodies without the joint frames,
  // inverse(Rz90) Ry(60) Rz(90) = Rx(60), handed to a drive that reads targets in J.
  const DriveJoint j = elbow();
  const Quat worldFromA = rot(90 * kDeg, kZ);
  const Quat worldFromBTarget = rot(60 * kDeg, kY) * worldFromA;
  const Quat right = jointRelativeRotation(worldFromA, worldFromBTarget, j.bodyAFromJoint, j.bodyBFromJoint);
  const Quat wrong = jointRelativeRotation(worldFromA, worldFromBTarget, Quat{1, 0, 0, 0}, Quat{1, 0, 0, 0});
  EXPECT_TRUE(rotNear(right, rot(60 * kDeg, kZ), 1e-12));
  EXPECT_TRUE(rotNear(wrong, rot(60 * kDeg, kX), 1e-12));

  JointDriveInput in;
  in.worldFromBodyA = worldFromA;
  in.worldFromBodyB = worldFromA;
  in.target = right;
  const double tau = 100.0 * 60 * kDeg;
  // Correct: e = (0, 0, 60 deg); world torque Rz(90) Ry(90) (0, 0, tau) = (0, tau, 0).
  const JointDriveOutput good = computeJointDrive(j, in);
  EXPECT_TRUE(vecNear(good.error, Vec3{0, 0, 60 * kDeg}, 1e-12));
  EXPECT_TRUE(vecNear(good.torqueWorld, Vec3{0, tau, 0}, 1e-10));

  // Wrong, with the elbow's own (locked) limits: the twist target is no target, the elbow is
  // not driven at all.
  in.target = wrong;
  EXPECT_TRUE(vecNear(computeJointDrive(j, in).torqueWorld, Vec3{0.0}, 1e-12));
  // Wrong, with every axis free: the 60 deg go about J.x = body -Z, in world
  // Rz(90) Ry(90) (tau, 0, 0) = Rz(90) (0, 0, -tau) = (0, 0, -tau), perpendicular to the hinge.
  DriveJoint freeElbow = j;
  freeElbow.angularLower = Vec3{1.0};
  freeElbow.angularUpper = Vec3{-1.0};
  const JointDriveOutput bad = computeJointDrive(freeElbow, in);
  EXPECT_TRUE(vecNear(bad.error, Vec3{60 * kDeg, 0, 0}, 1e-12));
  EXPECT_TRUE(vecNear(bad.torqueWorld, Vec3{0, 0, -tau}, 1e-10));
  EXPECT_NEAR(glm::dot(bad.torqueWorld, good.torqueWorld), 0.0, 1e-9);
}

TEST(DriveLaw, MovingTargetLaw) {
  const DriveJoint j = elbow();
  const Quat worldFromA = rot(90 * kDeg, kZ);
  JointDriveInput in;
  in.worldFromBodyA = worldFromA;
  in.worldFromBodyB = rot(20 * kDeg, kY) * worldFromA;
  in.angularVelocityA = Vec3{0, 0, 1};
  in.angularVelocityB = Vec3{0, 2, 1};
  in.target = rot(60 * kDeg, kZ);
  in.targetVelocity = Vec3{0, 0, 3};  // the animation flexes at 3 rad/s
  // tauA = Kp e + Kd (omegaTarget - omegaRel) = 100 * 40 deg + 10 * (3 - 2).
  const double tau = 100.0 * 40 * kDeg + 10.0 * (3.0 - 2.0);
  JointDriveOutput out = computeJointDrive(elbow(), in);
  EXPECT_TRUE(vecNear(out.torque, Vec3{0, 0, tau}, 1e-10));
  EXPECT_TRUE(vecNear(out.torqueWorld, Vec3{0, tau, 0}, 1e-10));

  // A target velocity about the locked twist axis is no target either: removed.
  in.targetVelocity = Vec3{0.5, 0, 3};
  out = computeJointDrive(j, in);
  EXPECT_TRUE(vecNear(out.torque, Vec3{0, 0, tau}, 1e-10));

  // The free-joint law on all three axes, by hand.
  const DriveGains gains{50.0, 4.0, std::numeric_limits<double>::infinity()};
  JointDriveInput f;
  f.target = fromRotationVector(Vec3{0.1, -0.2, 0.3});
  f.angularVelocityA = Vec3{1, 0, 0};
  f.angularVelocityB = Vec3{1, 1, 0};  // omegaRel = (0, 1, 0)
  f.targetVelocity = Vec3{0.5, 0.5, 0};
  out = computeJointDrive(freeJoint(gains), f);
  EXPECT_TRUE(vecNear(out.error, Vec3{0.1, -0.2, 0.3}, 1e-12));
  EXPECT_TRUE(vecNear(out.torque, Vec3{50 * 0.1 + 4 * 0.5, 50 * -0.2 + 4 * (0.5 - 1.0), 50 * 0.3}, 1e-10));
}

TEST(DriveLaw, StaticLawIsZeroTargetVelocity) {
  const DriveGains gains{80.0, 6.0, std::numeric_limits<double>::infinity()};
  JointDriveInput in;
  in.worldFromBodyA = rot(0.4, glm::normalize(Vec3{1, 2, 3}));
  in.worldFromBodyB = rot(0.3, kY) * in.worldFromBodyA;  // B turned 0.3 rad about world Y
  in.angularVelocityA = Vec3{0.2, 0.0, 0.0};
  in.angularVelocityB = Vec3{0.2, 1.5, 0.0};
  in.target = Quat{1, 0, 0, 0};
  const JointDriveOutput out = computeJointDrive(freeJoint(gains), in);
  // e in J_A = body A: the rotation back, -0.3 about world Y, seen from A.
  const Vec3 yInA = glm::conjugate(in.worldFromBodyA) * kY;
  EXPECT_TRUE(vecNear(out.error, -0.3 * yInA, 1e-12));
  EXPECT_TRUE(vecNear(out.relativeVelocity, 1.5 * yInA, 1e-12));
  EXPECT_TRUE(vecNear(out.torque, 80.0 * (-0.3 * yInA) - 6.0 * (1.5 * yInA), 1e-10));
  // tauWorld = qA tauA: along world -Y, (80 * 0.3 + 6 * 1.5) = 33.
  EXPECT_TRUE(vecNear(out.torqueWorld, Vec3{0, -33.0, 0}, 1e-10));
}

TEST(DriveLaw, LockedDofIgnoresItsTarget) {
  // Identity frames, hinge about Z; X and Y locked at 0.
  DriveJoint j = freeJoint(DriveGains{100.0, 0.0, std::numeric_limits<double>::infinity()});
  j.angularLower = Vec3{0, 0, -2};
  j.angularUpper = Vec3{0, 0, 2};
  JointDriveInput in;
  in.target = fromJointAngles(Vec3{0.3, -0.2, 0.5});  // twist and swing the hinge cannot do
  JointDriveOutput out = computeJointDrive(j, in);
  EXPECT_TRUE(vecNear(out.targetAngles, Vec3{0, 0, 0.5}, 1e-12));
  EXPECT_TRUE(vecNear(out.error, Vec3{0, 0, 0.5}, 1e-12));
  EXPECT_TRUE(vecNear(out.torque, Vec3{0, 0, 50}, 1e-10));

  // The constraint holds the locked axis only approximately (here 0.01 rad of twist): the
  // target keeps the current twist, so e has no component about J.x. With
  // qError = Rx(0.01) Rz(0.5) Rz(-0) Rx(-0.01), a 0.5 rad turn about Rx(0.01) z.
  in.worldFromBodyB = rot(0.01, kX);
  out = computeJointDrive(j, in);
  EXPECT_TRUE(vecNear(out.targetAngles, Vec3{0.01, 0, 0.5}, 1e-12));
  EXPECT_TRUE(vecNear(out.error, 0.5 * Vec3{0, -std::sin(0.01), std::cos(0.01)}, 1e-12));
  EXPECT_NEAR(out.error.x, 0.0, 1e-15);
}

TEST(DriveLaw, TargetBeyondTheLimitGivesTheTorqueOfTheLimit) {
  DriveJoint j = freeJoint(DriveGains{100.0, 5.0, std::numeric_limits<double>::infinity()});
  j.angularLower = Vec3{0, 0, 0};
  j.angularUpper = Vec3{0, 0, 2.0};
  JointDriveInput in;
  in.angularVelocityB = Vec3{0, 0, 0.5};
  in.target = rot(2.5, kZ);
  const JointDriveOutput beyond = computeJointDrive(j, in);
  in.target = rot(2.0, kZ);
  const JointDriveOutput atLimit = computeJointDrive(j, in);
  EXPECT_TRUE(vecNear(beyond.targetAngles, Vec3{0, 0, 2.0}, 1e-12));
  EXPECT_TRUE(vecNear(beyond.error, Vec3{0, 0, 2.0}, 1e-12));
  // tau = 100 * 2 - 5 * 0.5 = 197.5 about z, the same as a target at the limit.
  EXPECT_TRUE(vecNear(beyond.torque, Vec3{0, 0, 197.5}, 1e-10));
  EXPECT_TRUE(vecNear(beyond.torque, atLimit.torque, 1e-10));

  // The same on the lower side, and the target's velocity along a clamped axis is dropped
  // (a clamped target does not move).
  in.target = rot(-0.7, kZ);
  in.targetVelocity = Vec3{0, 0, -4.0};
  const JointDriveOutput below = computeJointDrive(j, in);
  EXPECT_TRUE(vecNear(below.error, Vec3{0, 0, 0}, 1e-12));
  EXPECT_TRUE(vecNear(below.torque, Vec3{0, 0, -5 * 0.5}, 1e-10));
}

TEST(DriveLaw, TotalTorqueClampKeepsDirection) {
  // Kp e = 1000 * (0.3, -0.4, 0) = (300, -400, 0), |.| = 500, clamped to 100: (60, -80, 0).
  const DriveJoint j = freeJoint(DriveGains{1000.0, 0.0, 100.0});
  JointDriveInput in;
  in.target = fromRotationVector(Vec3{0.3, -0.4, 0.0});
  const JointDriveOutput out = computeJointDrive(j, in);
  EXPECT_TRUE(out.saturated);
  EXPECT_NEAR(glm::length(out.torque), 100.0, 1e-10);
  EXPECT_TRUE(vecNear(out.torque, Vec3{60, -80, 0}, 1e-10));

  bool saturated = true;
  EXPECT_TRUE(
      vecNear(driveTorque(Vec3{0.01, 0, 0}, Vec3{0}, Vec3{0}, DriveGains{1000.0, 0.0, 100.0}, &saturated),
              Vec3{10, 0, 0}, 1e-12));
  EXPECT_FALSE(saturated);
}

TEST(DriveLaw, WeightScalesStiffnessAndMaxTorqueNotDamping) {
  const DriveGains g{100.0, 10.0, 50.0};
  const DriveGains half = weightedGains(g, 0.5);
  EXPECT_DOUBLE_EQ(half.stiffness, 50.0);
  EXPECT_DOUBLE_EQ(half.damping, 10.0);
  EXPECT_DOUBLE_EQ(half.maxTorque, 25.0);
  const DriveGains off = weightedGains(DriveGains{100.0, 10.0, std::numeric_limits<double>::infinity()}, 0.0);
  EXPECT_EQ(off.stiffness, 0.0);
  EXPECT_EQ(off.damping, 10.0);
  EXPECT_EQ(off.maxTorque, 0.0) << "not inf * 0 = NaN";
  EXPECT_EQ(weightedGains(g, 2.0).stiffness, 100.0);
  EXPECT_EQ(weightedGains(g, std::nan("")).stiffness, 0.0);

  // Through the law: e = 0.2 about z, omegaRel = 1 about z.
  JointDriveInput in;
  in.target = rot(0.2, kZ);
  in.angularVelocityB = Vec3{0, 0, 1};
  in.weight = 0.25;
  // 0.25 * 100 * 0.2 - 10 * 1 = -5 (|.| under the clamp 0.25 * 50 = 12.5).
  JointDriveOutput out = computeJointDrive(freeJoint(g), in);
  EXPECT_TRUE(vecNear(out.torque, Vec3{0, 0, -5}, 1e-12));
  in.angularVelocityB = Vec3{0, 0, -3};  // 5 + 30 = 35 -> clamped to 12.5
  out = computeJointDrive(freeJoint(g), in);
  EXPECT_TRUE(vecNear(out.torque, Vec3{0, 0, 12.5}, 1e-12));
}

TEST(DriveLaw, RejectsNonFiniteInputsWithZeroTorque) {
  const DriveJoint j = freeJoint(DriveGains{100.0, 10.0, 50.0});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  JointDriveInput bad[6];
  bad[0].worldFromBodyA.x = nan;
  bad[1].worldFromBodyB.w = inf;
  bad[2].angularVelocityA.y = nan;
  bad[3].angularVelocityB.z = -inf;
  bad[4].target.x = nan;
  bad[5].targetVelocity.x = inf;
  for (const JointDriveInput& in : bad) {
    const JointDriveOutput out = computeJointDrive(j, in);
    EXPECT_FALSE(out.valid);
    EXPECT_EQ(out.torqueWorld, Vec3{0.0});
  }
  JointDriveInput w;
  w.weight = nan;
  EXPECT_FALSE(computeJointDrive(j, w).valid);
}

// The joint-angle rate axes agree with finite differences of fromJointAngles, and removing an
// axis's rate leaves the others.
TEST(DriveLaw, AdmissibleTargetVelocityRemovesOneAxisRate) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.2, 1.2);
  for (int trial = 0; trial < 50; ++trial) {
    const Vec3 angles{u(rng), u(rng), u(rng)};
    const Vec3 rates{u(rng), u(rng), u(rng)};
    const double h = 1e-6;
    const Vec3 omega =
        angularVelocity(fromJointAngles(angles - rates * h), fromJointAngles(angles + rates * h), 2 * h)
            .omega;
    // Nothing removed: unchanged.
    EXPECT_EQ(admissibleTargetVelocity(omega, angles, angles, glm::bvec3{false}), omega);
    // Removing y's rate equals the finite difference of a motion without y.
    const Vec3 partial{rates.x, 0.0, rates.z};
    const Vec3 expected =
        angularVelocity(fromJointAngles(angles - partial * h), fromJointAngles(angles + partial * h), 2 * h)
            .omega;
    EXPECT_TRUE(vecNear(admissibleTargetVelocity(omega, angles, angles, glm::bvec3{false, true, false}),
                        expected, 1e-7));
  }
  // Gimbal lock: rates undefined, no feed-forward.
  EXPECT_EQ(admissibleTargetVelocity(Vec3{1, 2, 3}, Vec3{0, kPi / 2, 0}, Vec3{0, kPi / 2, 0},
                                     glm::bvec3{true, false, false}),
            Vec3{0.0});
}

// The angle between a target and the rotation of some joint angles. [rad]
double residualAngle(const Quat& target, const Vec3& angles) {
  return glm::length(toRotationVector(shortArc(target * glm::conjugate(fromJointAngles(angles)))));
}

// A left shoulder's limits (the builder's, T-pose rig): X twist +-0.9, Y -1.4..0.8 (the middle
// Euler angle, kept 10 degrees off its gimbal lock), Z -2.07..1.23.
const Vec3 kShoulderLower{-0.9, -1.4, -2.07}, kShoulderUpper{0.9, 0.8, 1.23};

// Nothing limited is clamped: exactly the per-axis rule (locked axes take the given angles).
TEST(DriveTargets, NearestAdmissibleIsThePerAxisRuleWhenNothingIsClamped) {
  const Vec3 lower{0.0, -0.3, -1.0}, upper{0.0, 0.3, 1.0};  // X locked
  const Quat target = fromJointAngles(Vec3{0.4, 0.2, -0.7});
  glm::bvec3 clamped{false};
  const Vec3 angles = nearestAdmissibleAngles(target, Vec3{0.05, 9.0, 9.0}, lower, upper, &clamped);
  EXPECT_EQ(angles, admissibleTargetAngles(jointAngles(target), Vec3{0.05, 9.0, 9.0}, lower, upper));
  EXPECT_EQ(angles, (Vec3{0.05, 0.2, -0.7}));
  EXPECT_EQ(clamped, (glm::bvec3{true, false, false}));
}

// Past the gimbal lock (the arm swung forward beyond 90 degrees) the clip's canonical angles
// flip to the other Euler branch: Rx(a) Ry(b) Rz(c) with b = -1.62 reads as (a + pi, -pi - b,
// c + pi). Clamping that triple axis by axis lands on a rotation more than a radian away, while
// (a, -1.4, c), the same rotation with only Y moved to its limit, is 0.22 rad from the target
// (by hand: the two differ by Rx(a) Ry(-0.22) Rx(-a), a 0.22 rad turn). The nearest admissible
// rotation is at most that far, within the limits, and no admissible nudge brings it closer.
TEST(DriveTargets, NearestAdmissibleCrossesTheEulerBranch) {
  const double a = 0.3, b = -1.62, c = -0.5;
  const Quat target = fromJointAngles(Vec3{a, b, c});
  const Vec3 canonical = jointAngles(target);
  EXPECT_NEAR(canonical.y, -kPi - b, 1e-9);  // the other branch
  const Vec3 perAxis = admissibleTargetAngles(canonical, Vec3{0.0}, kShoulderLower, kShoulderUpper);
  glm::bvec3 clamped{false};
  const Vec3 nearest = nearestAdmissibleAngles(target, Vec3{0.0}, kShoulderLower, kShoulderUpper, &clamped);
  const double perAxisError = residualAngle(target, perAxis);
  const double nearestError = residualAngle(target, nearest);
  std::printf(
      "[ drive ] target past the gimbal lock: per-axis clamp %.1f deg away, nearest %.2f deg (by hand <= "
      "%.2f deg)\n",
      perAxisError / kDeg, nearestError / kDeg, 0.22 / kDeg);
  EXPECT_GT(perAxisError, 1.0);
  EXPECT_LE(nearestError, residualAngle(target, Vec3{a, -1.4, c}) + 1e-9);
  EXPECT_NEAR(residualAngle(target, Vec3{a, -1.4, c}), 0.22, 1e-9);
  for (int i = 0; i < 3; ++i) {
    EXPECT_GE(nearest[i], kShoulderLower[i]);
    EXPECT_LE(nearest[i], kShoulderUpper[i]);
  }
  EXPECT_TRUE(clamped.y);  // on the Y limit: its rate is dropped from a moving target
  EXPECT_DOUBLE_EQ(nearest.y, -1.4);
  // A local minimum over the limits: no admissible step of 1e-4 rad on any pair of axes helps.
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (double si : {-1.0, 1.0}) {
        for (double sj : {-1.0, 1.0}) {
          Vec3 nudged = nearest;
          nudged[i] += si * 1e-4;
          nudged[j] += sj * 1e-4;
          nudged = glm::clamp(nudged, kShoulderLower, kShoulderUpper);
          EXPECT_GE(residualAngle(target, nudged), nearestError - 1e-12);
        }
      }
    }
  }
}

// By the gimbal lock X and Z turn about nearly the same axis, so a target with X beyond its limit
// has admissible rotations much nearer than X alone clamped (Z can take up X's excess). Random
// targets near the lock: the nearest is never farther than the per-axis clamp, and on average
// much nearer.
TEST(DriveTargets, NearestAdmissibleNeverLosesToThePerAxisClamp) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> x(-1.6, 1.6), y(-1.55, -1.2), z(-2.0, 1.2);
  double perAxisSum = 0.0, nearestSum = 0.0;
  int clampedTargets = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const Quat target = fromJointAngles(Vec3{x(rng), y(rng), z(rng)});
    const Vec3 perAxis =
        admissibleTargetAngles(jointAngles(target), Vec3{0.0}, kShoulderLower, kShoulderUpper);
    const Vec3 nearest = nearestAdmissibleAngles(target, Vec3{0.0}, kShoulderLower, kShoulderUpper);
    const double p = residualAngle(target, perAxis), n = residualAngle(target, nearest);
    EXPECT_LE(n, p + 1e-12) << trial;
    EXPECT_EQ(nearest, glm::clamp(nearest, kShoulderLower, kShoulderUpper)) << trial;
    if (p > 0.0) {
      ++clampedTargets;
      perAxisSum += p;
      nearestSum += n;
    }
  }
  std::printf(
      "[ drive ] %d clamped targets near the gimbal lock: mean distance per-axis %.1f deg, nearest %.1f "
      "deg\n",
      clampedTargets, perAxisSum / clampedTargets / kDeg, nearestSum / clampedTargets / kDeg);
  EXPECT_GT(clampedTargets, 100);
  EXPECT_LT(nearestSum, 0.5 * perAxisSum);
}

TEST(DriveStability, IndexByHand) {
  // h^2 Kp / I + 2 h Kd / I = 1e-4 * 100 * 10 + 2 * 0.01 * 2 * 10 = 0.1 + 0.4.
  EXPECT_DOUBLE_EQ(explicitStabilityIndex(DriveGains{100.0, 2.0, kInf}, 10.0, 0.01), 0.5);
}

TEST(DriveStability, JointInverseInertiaAboutTheOpenAxesByHand) {
  // The elbow (hinge J.z = body +X for both bodies). Upper arm inverse inertia diag(1/0.06,
  // 1/0.01, 1/0.06), forearm diag(1/0.04, 1/0.003, 1/0.04) in body space (Y along the bone).
  const DriveJoint j = elbow();
  const glm::dmat3 invA(Vec3{1 / 0.06, 0, 0}, Vec3{0, 1 / 0.01, 0}, Vec3{0, 0, 1 / 0.06});
  const glm::dmat3 invB(Vec3{1 / 0.04, 0, 0}, Vec3{0, 1 / 0.003, 0}, Vec3{0, 0, 1 / 0.04});
  // Hinge along body X of both: 1/0.06 + 1/0.04 whatever the common rotation.
  const Quat r = rot(0.8, glm::normalize(Vec3{1, 2, 3}));
  EXPECT_NEAR(jointInverseInertia(j, r, r, invA, invB), 1 / 0.06 + 1 / 0.04, 1e-10);
  // Forearm flexed 90 deg about the hinge: still about X for it.
  EXPECT_NEAR(jointInverseInertia(j, r, r * rot(kPi / 2, kX), invA, invB), 1 / 0.06 + 1 / 0.04, 1e-10);
  // The forearm's small axial moment (Y, about the bone) is about a locked axis: ignored. With
  // every axis free it dominates: the largest eigenvalue, 1/0.01 + 1/0.003 about Y.
  DriveJoint ball = j;
  ball.angularLower = Vec3{1.0};
  ball.angularUpper = Vec3{-1.0};
  EXPECT_NEAR(jointInverseInertia(ball, r, r, invA, invB), 1 / 0.01 + 1 / 0.003, 1e-9);
  // Two open axes (J.y = body Y and J.z = body X): the larger of the two.
  DriveJoint two = j;
  two.angularLower = Vec3{0, -1, -1};
  two.angularUpper = Vec3{0, 1, 1};
  EXPECT_NEAR(jointInverseInertia(two, r, r, invA, invB), 1 / 0.01 + 1 / 0.003, 1e-9);
  DriveJoint locked = j;
  locked.angularUpper = Vec3{0.0};
  EXPECT_EQ(jointInverseInertia(locked, r, r, invA, invB), 0.0);
}

}  // namespace
}  // namespace handoff
