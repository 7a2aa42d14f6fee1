// Jobs over spans (validity lists one invalid input at a time, as ozz's JobValidity), the
// explicit applier against a recording world, and the implicit drive's values handed to the
// engine.
#include "handoff/drive.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "drive/fake_world.h"
#include "support/test_math.h"

namespace handoff {
namespace {

using test::RecordingWorld;
using test::rotNear;
using test::vecNear;

constexpr double kInf = std::numeric_limits<double>::infinity();
const Vec3 kX{1, 0, 0}, kY{0, 1, 0}, kZ{0, 0, 1};

Quat rot(double angle, const Vec3& axis) { return glm::angleAxis(angle, axis); }

// A torso with two children:
//
//        1 (head)
//        |
//        0 (chest) --- 2 (arm)
//
// joint 0: 0 -> 1, joint 1: 0 -> 2, every axis free, frames turned so they are not identity.
std::vector<DriveJoint> threeBodies(const DriveGains& gains) {
  std::vector<DriveJoint> joints(2);
  joints[0].bodyA = 0;
  joints[0].bodyB = 1;
  joints[1].bodyA = 0;
  joints[1].bodyB = 2;
  for (DriveJoint& j : joints) {
    j.angularLower = Vec3{1.0};
    j.angularUpper = Vec3{-1.0};
    j.gains = gains;
  }
  joints[0].bodyAFromJoint = rot(0.5 * kPi, kZ);
  joints[0].bodyBFromJoint = rot(0.5 * kPi, kZ);
  joints[1].bodyAFromJoint = rot(0.3, kX);
  joints[1].bodyBFromJoint = rot(-0.2, kY);
  return joints;
}

TEST(JointTargetsJob, Validity) {
  const std::vector<DriveJoint> joints = threeBodies(DriveGains{});
  std::array<Quat, 3> bodies{};
  std::array<Quat, 2> out{};
  JointTargetsJob ok{joints, bodies, out};
  EXPECT_TRUE(ok.validate());
  JointTargetsJob shortOut{joints, bodies, std::span<Quat>(out).first(1)};
  EXPECT_FALSE(shortOut.validate());
  EXPECT_FALSE(shortOut.run());
  JointTargetsJob fewBodies{joints, std::span<const Quat>(bodies).first(2), out};
  EXPECT_FALSE(fewBodies.validate());
  std::vector<DriveJoint> badIndex = joints;
  badIndex[1].bodyB = -1;
  EXPECT_FALSE((JointTargetsJob{badIndex, bodies, out}.validate()));
}

TEST(JointTargetsJob, MatchesTheFormulaPerJoint) {
  const std::vector<DriveJoint> joints = threeBodies(DriveGains{});
  const std::array<Quat, 3> bodies{rot(0.3, kY), rot(1.0, glm::normalize(Vec3{1, 1, 0})), rot(-0.4, kZ)};
  std::array<Quat, 2> out{};
  ASSERT_TRUE((JointTargetsJob{joints, bodies, out}.run()));
  for (size_t i = 0; i < 2; ++i) {
    const DriveJoint& j = joints[i];
    const Quat expected = glm::inverse(bodies[static_cast<size_t>(j.bodyA)] * j.bodyAFromJoint) *
                          (bodies[static_cast<size_t>(j.bodyB)] * j.bodyBFromJoint);
    EXPECT_TRUE(rotNear(out[i], expected, 1e-12));
  }
}

TEST(JointTargetVelocitiesJob, ValidityAndValues) {
  const std::array<Quat, 2> previous{rot(0.5, kZ), rot(0.1, kX)};
  const std::array<Quat, 2> current{rot(0.6, kZ), rot(0.1, kX) * rot(0.05, kY)};
  std::array<Vec3, 2> out{};
  EXPECT_FALSE((JointTargetVelocitiesJob{previous, current, 0.0, out}.validate()));
  EXPECT_FALSE((JointTargetVelocitiesJob{previous, current, -0.1, out}.validate()));
  EXPECT_FALSE((JointTargetVelocitiesJob{previous, current, std::nan(""), out}.validate()));
  EXPECT_FALSE(
      (JointTargetVelocitiesJob{previous, std::span<const Quat>(current).first(1), 0.1, out}.validate()));
  EXPECT_FALSE((JointTargetVelocitiesJob{previous, current, 0.1, std::span<Vec3>(out).first(1)}.validate()));
  ASSERT_TRUE((JointTargetVelocitiesJob{previous, current, 0.1, out}.run()));
  // 0.1 rad about z in 0.1 s.
  EXPECT_TRUE(vecNear(out[0], Vec3{0, 0, 1}, 1e-12));
  // q1 q0^-1 = Rx(0.1) Ry(0.05) Rx(-0.1): 0.05 rad about Rx(0.1) y, in J_A, in 0.1 s.
  EXPECT_TRUE(vecNear(out[1], 0.5 * (rot(0.1, kX) * kY), 1e-12));
}

TEST(DriveJob, Validity) {
  const std::vector<DriveJoint> joints = threeBodies(DriveGains{10, 1, kInf});
  std::array<Quat, 3> rotations{};
  std::array<Vec3, 3> omegas{};
  std::array<Quat, 2> targets{};
  std::array<Vec3, 2> targetVelocities{};
  std::array<double, 2> weights{1.0, 1.0};
  std::array<Vec3, 2> torques{};
  std::array<JointDriveOutput, 2> details{};
  const DriveJob ok{joints, rotations, omegas, targets, targetVelocities, weights, torques, details};
  EXPECT_TRUE(ok.validate());
  EXPECT_TRUE((DriveJob{joints, rotations, omegas, targets, {}, {}, torques, {}}.validate()))
      << "velocities, weights and details are optional";

  DriveJob job = ok;
  job.worldFromBodies = std::span<const Quat>(rotations).first(2);
  EXPECT_FALSE(job.validate()) << "body count";
  job = ok;
  job.angularVelocities = std::span<const Vec3>(omegas).first(2);
  EXPECT_FALSE(job.validate()) << "velocities per body";
  job = ok;
  job.jointTargets = std::span<const Quat>(targets).first(1);
  EXPECT_FALSE(job.validate()) << "targets per joint";
  job = ok;
  job.targetVelocities = std::span<const Vec3>(targetVelocities).first(1);
  EXPECT_FALSE(job.validate()) << "target velocities per joint";
  job = ok;
  job.weights = std::span<const double>(weights).first(1);
  EXPECT_FALSE(job.validate()) << "weights per joint";
  job = ok;
  job.torquesWorld = std::span<Vec3>(torques).first(1);
  EXPECT_FALSE(job.validate()) << "torques per joint";
  job = ok;
  job.details = std::span<JointDriveOutput>(details).first(1);
  EXPECT_FALSE(job.validate()) << "details per joint";
  EXPECT_FALSE(job.run());
  std::vector<DriveJoint> badIndex = joints;
  badIndex[0].bodyA = 3;
  job = ok;
  job.joints = badIndex;
  EXPECT_FALSE(job.validate()) << "body index";
}

TEST(DriveJob, EqualsThePerJointLaw) {
  const std::vector<DriveJoint> joints = threeBodies(DriveGains{40, 3, 25});
  const std::array<Quat, 3> rotations{rot(0.2, kY), rot(0.9, kX), rot(-0.3, kZ)};
  const std::array<Vec3, 3> omegas{Vec3{0.1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, -2}};
  const std::array<Quat, 2> targets{rot(0.4, kZ), rot(0.7, glm::normalize(Vec3{1, 2, 0}))};
  const std::array<Vec3, 2> targetVelocities{Vec3{0, 0, 1}, Vec3{0.5, 0, 0}};
  const std::array<double, 2> weights{0.5, 1.0};
  std::array<Vec3, 2> torques{};
  std::array<JointDriveOutput, 2> details{};
  ASSERT_TRUE(
      (DriveJob{joints, rotations, omegas, targets, targetVelocities, weights, torques, details}.run()));
  for (size_t i = 0; i < 2; ++i) {
    const DriveJoint& j = joints[i];
    JointDriveInput in;
    in.worldFromBodyA = rotations[static_cast<size_t>(j.bodyA)];
    in.worldFromBodyB = rotations[static_cast<size_t>(j.bodyB)];
    in.angularVelocityA = omegas[static_cast<size_t>(j.bodyA)];
    in.angularVelocityB = omegas[static_cast<size_t>(j.bodyB)];
    in.target = targets[i];
    in.targetVelocity = targetVelocities[i];
    in.weight = weights[i];
    const JointDriveOutput expected = computeJointDrive(j, in);
    EXPECT_EQ(torques[i], expected.torqueWorld);
    EXPECT_EQ(details[i].error, expected.error);
    EXPECT_NE(torques[i], Vec3{0.0});
  }
}

// --- ExplicitDrive on a recording world ---

struct Rig {
  RecordingWorld world;
  std::vector<BodyId> bodies;
  std::vector<DriveJoint> joints = threeBodies(DriveGains{40, 3, kInf});
  Rig() {
    bodies.push_back(world.addBody(Transform::fromRotation(rot(0.2, kY)), Vec3{0.1, 0, 0}));
    bodies.push_back(world.addBody(Transform::fromRotation(rot(0.9, kX)), Vec3{0, 1, 0}));
    bodies.push_back(world.addBody(Transform::fromRotation(rot(-0.3, kZ)), Vec3{0, 0, -2}));
  }
};

TEST(ExplicitDrive, AppliesEqualAndOppositeImpulsesOncePerBody) {
  Rig rig;
  ExplicitDrive drive(rig.world, rig.bodies, rig.joints);
  const std::array<Quat, 2> targets{rot(0.4, kZ), rot(0.7, kY)};
  ASSERT_TRUE(drive.setTargets(targets, {}));
  const double dt = 1.0 / 240.0;
  drive.onSubstep(dt);
  const auto results = drive.lastResults();
  const Vec3 t0 = results[0].torqueWorld, t1 = results[1].torqueWorld;
  EXPECT_NE(t0, Vec3{0.0});
  EXPECT_NE(t1, Vec3{0.0});
  // Body 0 is the parent of both joints: -(t0 + t1) dt in one call.
  EXPECT_TRUE(vecNear(rig.world.bodies[0].angularImpulse, -(t0 + t1) * dt, 1e-15));
  EXPECT_TRUE(vecNear(rig.world.bodies[1].angularImpulse, t0 * dt, 1e-15));
  EXPECT_TRUE(vecNear(rig.world.bodies[2].angularImpulse, t1 * dt, 1e-15));
  for (const auto& b : rig.world.bodies) EXPECT_EQ(b.impulseCalls, 1);
  // Internal: the impulses sum to zero.
  Vec3 sum{0.0};
  for (const auto& b : rig.world.bodies) sum += b.angularImpulse;
  EXPECT_TRUE(vecNear(sum, Vec3{0.0}, 1e-15));
}

TEST(ExplicitDrive, ChildOnlySwitchLeavesTheParentAlone) {
  Rig rig;
  ExplicitDrive drive(rig.world, rig.bodies, rig.joints);
  ASSERT_TRUE(drive.setTarget(0, rot(0.4, kZ)));
  ASSERT_TRUE(drive.setTarget(1, rot(0.7, kY)));
  drive.setTorqueApplication(TorqueApplication::ChildOnlyForTesting);
  drive.onSubstep(0.01);
  EXPECT_EQ(rig.world.bodies[0].impulseCalls, 0);
  EXPECT_TRUE(vecNear(rig.world.bodies[1].angularImpulse, drive.lastResults()[0].torqueWorld * 0.01, 1e-15));
  EXPECT_TRUE(vecNear(rig.world.bodies[2].angularImpulse, drive.lastResults()[1].torqueWorld * 0.01, 1e-15));
}

TEST(ExplicitDrive, RejectsBadValuesAndKeepsState) {
  Rig rig;
  ExplicitDrive drive(rig.world, rig.bodies, rig.joints);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ASSERT_TRUE(drive.setTarget(0, rot(0.4, kZ), Vec3{0, 0, 1}));
  EXPECT_FALSE(drive.setTarget(0, Quat{nan, 0, 0, 0}));
  EXPECT_FALSE(drive.setTarget(0, Quat{0, 0, 0, 0}));
  EXPECT_FALSE(drive.setTarget(0, rot(0.1, kX), Vec3{kInf, 0, 0}));
  const std::array<Quat, 2> badTargets{rot(0.1, kX), Quat{1, nan, 0, 0}};
  EXPECT_FALSE(drive.setTargets(badTargets, {}));
  const std::array<Quat, 1> fewTargets{rot(0.1, kX)};
  EXPECT_FALSE(drive.setTargets(fewTargets, {}));
  EXPECT_FALSE(drive.setWeight(0, 1.5));
  EXPECT_FALSE(drive.setWeight(-0.1));
  EXPECT_FALSE(drive.setWeight(nan));
  EXPECT_EQ(drive.weight(0), 1.0);

  // Dt <= 0 or NaN: nothing applied.
  drive.onSubstep(0.0);
  drive.onSubstep(-1.0);
  drive.onSubstep(nan);
  for (const auto& b : rig.world.bodies) EXPECT_EQ(b.impulseCalls, 0);
  // The target that was accepted is the one driven.
  drive.onSubstep(0.01);
  JointDriveInput in;
  in.worldFromBodyA = rot(0.2, kY);
  in.worldFromBodyB = rot(0.9, kX);
  in.angularVelocityA = Vec3{0.1, 0, 0};
  in.angularVelocityB = Vec3{0, 1, 0};
  in.target = rot(0.4, kZ);
  in.targetVelocity = Vec3{0, 0, 1};
  EXPECT_EQ(drive.lastResults()[0].torqueWorld, computeJointDrive(rig.joints[0], in).torqueWorld);

  // An exploded body (NaN state): its joints are skipped and reported, the others still work.
  rig.world.bodies[2].angularVelocity = Vec3{nan, 0, 0};
  drive.onSubstep(0.01);
  EXPECT_EQ(drive.invalidJoints(), 1);
  EXPECT_FALSE(drive.lastResults()[1].valid);
  EXPECT_TRUE(drive.lastResults()[0].valid);
}

TEST(ExplicitDrive, WeightAndDisable) {
  Rig rig;
  ExplicitDrive drive(rig.world, rig.bodies, rig.joints);
  ASSERT_TRUE(drive.setWeight(0.0));
  drive.onSubstep(0.01);
  for (const auto& b : rig.world.bodies) EXPECT_EQ(b.impulseCalls, 0) << "weight 0: drive off";
  ASSERT_TRUE(drive.setWeight(1.0));
  drive.setEnabled(false);
  drive.onSubstep(0.01);
  for (const auto& b : rig.world.bodies) EXPECT_EQ(b.impulseCalls, 0);
  drive.setEnabled(true);
  rig.world.bodies[1].sleeping = true;
  drive.onSubstep(0.01);
  EXPECT_FALSE(rig.world.bodies[1].sleeping) << "a driven body is woken";
}

TEST(ExplicitDrive, SaturationIsCounted) {
  Rig rig;
  std::vector<DriveJoint> joints = threeBodies(DriveGains{1000, 0, 1.0});
  ExplicitDrive drive(rig.world, rig.bodies, joints);
  drive.onSubstep(0.01);
  EXPECT_EQ(drive.saturatedJoints(), 2);
  for (const auto& r : drive.lastResults()) EXPECT_NEAR(glm::length(r.torqueWorld), 1.0, 1e-12);
}

// --- Implicit drive: the values handed to the engine ---

DriveJoint hinge() {
  DriveJoint j;
  j.bodyA = 0;
  j.bodyB = 1;
  j.bodyAFromJoint = rot(0.5 * kPi, kY);
  j.bodyBFromJoint = rot(0.5 * kPi, kY);
  j.angularLower = Vec3{0, -0.5, 0};
  j.angularUpper = Vec3{0, 0.5, 2.0};
  j.gains = DriveGains{200.0, 20.0, 80.0};
  return j;
}

TEST(ImplicitDrive, WeightScalesStiffnessAndTorqueNotDamping) {
  const DriveJoint j = hinge();
  const JointMotorSettings full = implicitMotorSettings(j, rot(1.0, kZ), 1.0);
  EXPECT_TRUE(full.enabled);
  EXPECT_EQ(full.stiffness, (Vec3{0, 200, 200}));
  EXPECT_EQ(full.damping, (Vec3{0, 20, 20}));
  EXPECT_EQ(full.maxTorque, 80.0);
  const JointMotorSettings quarter = implicitMotorSettings(j, rot(1.0, kZ), 0.25);
  EXPECT_EQ(quarter.stiffness, (Vec3{0, 50, 50})) << "locked X gets no spring";
  EXPECT_EQ(quarter.damping, (Vec3{0, 20, 20}));
  EXPECT_EQ(quarter.maxTorque, 20.0);
  EXPECT_TRUE(rotNear(quarter.target, rot(1.0, kZ), 1e-12));

  // Through the engine interface.
  RecordingWorld world;
  const std::array<JointId, 2> ids{*world.createJoint({}), *world.createJoint({})};
  const std::array<DriveJoint, 2> joints{j, j};
  const std::array<Quat, 2> targets{rot(1.0, kZ), rot(0.3, kY)};
  const std::array<double, 2> weights{0.5, 1.0};
  applyImplicitDrive(world, ids, joints, targets, weights);
  EXPECT_TRUE(world.motors[0].enabled);
  EXPECT_EQ(world.motors[0].stiffness, (Vec3{0, 100, 100}));
  EXPECT_EQ(world.motors[0].damping, (Vec3{0, 20, 20}));
  EXPECT_EQ(world.motors[0].maxTorque, 40.0);
  EXPECT_EQ(world.motors[1].stiffness, (Vec3{0, 200, 200}));
  EXPECT_TRUE(rotNear(world.motors[1].target, rot(0.3, kY), 1e-12));
  disableImplicitDrive(world, ids);
  EXPECT_FALSE(world.motors[0].enabled);
  EXPECT_FALSE(world.motors[1].enabled);
}

TEST(ImplicitDrive, TargetIsClampedAndLockedAxesTakeTheirLockValue) {
  const DriveJoint j = hinge();
  // Angles (0.3 twist on a locked axis, 0.8 beyond Y's 0.5, 2.4 beyond Z's 2.0).
  const JointMotorSettings m = implicitMotorSettings(j, fromJointAngles(Vec3{0.3, 0.8, 2.4}), 1.0);
  EXPECT_TRUE(vecNear(jointAngles(m.target), Vec3{0.0, 0.5, 2.0}, 1e-12));
  EXPECT_FALSE(implicitMotorSettings(j, Quat{std::nan(""), 0, 0, 0}, 1.0).enabled);
}

}  // namespace
}  // namespace handoff
