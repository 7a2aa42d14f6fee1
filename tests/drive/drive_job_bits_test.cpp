// DriveJob skips the nearest-admissible-target search for a target provably inside its joint's
// limits, and the search ends its fruitless line searches early and reuses the sines of the angles
// a step leaves alone (speed changes only): the torques must be the law's with the search as it
// was (reference_search.h) always run, bit for bit, for targets inside, on, near and past the
// limits, near the gimbal lock of the X-Y-Z joint angles and near the +-pi cut of x and z.
#include "handoff/drive.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "drive/reference_search.h"

namespace handoff {
namespace {

// The law written out from the public functions and the search as it was, always run (drive.h's
// header comment): what DriveJob computed for every joint before.
Vec3 torqueWithTheSearch(const DriveJoint& joint, const Quat& worldFromBodyA, const Quat& worldFromBodyB,
                         const Vec3& omegaA, const Vec3& omegaB, const Quat& target,
                         const Vec3& targetVelocity, double weight) {
  const Quat worldFromJointA = worldFromBodyA * joint.bodyAFromJoint;
  const Quat qRel = glm::conjugate(worldFromJointA) * (worldFromBodyB * joint.bodyBFromJoint);
  const Vec3 current = jointAngles(qRel);
  const Vec3 raw = jointAngles(target);
  glm::bvec3 clamped{false};
  const Vec3 admissible =
      nearestAdmissibleAngles(target, current, joint.angularLower, joint.angularUpper, &clamped);
  const Quat aim = admissible != raw ? fromJointAngles(admissible) : target;
  const Vec3 error = toRotationVector(shortArc(aim * glm::conjugate(qRel)));
  const Vec3 relative = glm::conjugate(worldFromJointA) * (omegaB - omegaA);
  const Vec3 velocity = admissibleTargetVelocity(targetVelocity, raw, admissible, clamped);
  return worldFromJointA * driveTorque(error, relative, velocity, weightedGains(joint.gains, weight));
}

template <typename T>
bool sameBits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// Joint kinds: a ball with limits on every axis, a narrow spine, a hinge (X and Y locked), a
// twist-free swing (X free), a ball with the widest limits ([-pi, pi] on x and z: the +-pi cut
// inside the range) and a joint near the gimbal lock (|y| limits close to pi/2).
std::vector<DriveJoint> jointKinds() {
  struct Limits {
    Vec3 lower, upper;
  };
  const std::array<Limits, 6> kinds{{{Vec3{-0.8, -1.0, -1.2}, Vec3{0.8, 1.0, 1.2}},
                                     {Vec3{-0.3, -0.4, -0.5}, Vec3{0.3, 0.4, 0.5}},
                                     {Vec3{0.0, 0.0, 0.0}, Vec3{0.0, 0.0, 2.4}},
                                     {Vec3{1.0, -0.7, -0.9}, Vec3{-1.0, 0.7, 0.9}},
                                     {Vec3{-kPi, -1.2, -kPi}, Vec3{kPi, 1.2, kPi}},
                                     {Vec3{-1.0, -1.56, -1.0}, Vec3{1.0, 1.565, 1.0}}}};
  std::mt19937 rng(7);
  std::normal_distribution<double> n(0.0, 1.0);
  std::vector<DriveJoint> joints;
  for (size_t i = 0; i < kinds.size(); ++i) {
    DriveJoint j;
    j.bodyA = 0;
    j.bodyB = static_cast<int>(i) + 1;
    j.bodyAFromJoint = glm::normalize(Quat{n(rng), n(rng), n(rng), n(rng)});
    j.bodyBFromJoint = glm::normalize(Quat{n(rng), n(rng), n(rng), n(rng)});
    j.angularLower = kinds[i].lower;
    j.angularUpper = kinds[i].upper;
    j.gains = DriveGains{300.0, 10.0, 150.0};
    joints.push_back(j);
  }
  return joints;
}

// A target for `joint`: its joint angles drawn inside, just inside or just past a limit (by 0 to
// 1e-3 rad: the rough test's margin is 1e-4), far past, near |y| = pi/2, near x or z = +-pi, or
// a rotation drawn at random; then a little noise on the quaternion for some.
Quat drawTarget(const DriveJoint& joint, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> n(0.0, 1.0);
  const auto within = [&](int axis) {
    const double lo = joint.angularLower[axis], hi = joint.angularUpper[axis];
    return lo < hi ? lo + (hi - lo) * u(rng) : lo == hi ? lo + 0.3 * n(rng) : kPi * (2.0 * u(rng) - 1.0);
  };
  Vec3 angles{within(0), within(1), within(2)};
  const int kind = static_cast<int>(u(rng) * 7.0);
  const int axis = static_cast<int>(u(rng) * 3.0) % 3;
  const double side = u(rng) < 0.5 ? -1.0 : 1.0;
  const double bound = side < 0.0 ? joint.angularLower[axis] : joint.angularUpper[axis];
  const std::array<double, 6> offsets{0.0, 1e-12, 1e-6, 5e-5, 1e-4, 1e-3};
  const double offset = offsets[static_cast<size_t>(u(rng) * 6.0) % 6] * (u(rng) < 0.5 ? -1.0 : 1.0);
  switch (kind) {
    case 0:  // on or next to a limit, either side
      angles[axis] = bound + side * offset;
      break;
    case 1:  // far past a limit
      angles[axis] = bound + side * (0.05 + 0.8 * u(rng));
      break;
    case 2:  // near the gimbal lock
      angles.y = side * (0.5 * kPi - std::abs(offset) - 0.05 * u(rng) * u(rng));
      break;
    case 3:  // near the +-pi cut of x or z
      angles[axis == 1 ? 0 : axis] = side * (kPi - std::abs(offset));
      break;
    case 4:  // a rotation at random
      return glm::normalize(fromRotationVector(Vec3{n(rng), n(rng), n(rng)} * 1.2));
    default:  // inside
      break;
  }
  Quat q = fromJointAngles(angles);
  if (u(rng) < 0.3) q = glm::normalize(q + Quat{n(rng), n(rng), n(rng), n(rng)} * 1e-7);
  return q;
}

TEST(DriveJobBits, TorquesAreTheLawWithTheSearchAlwaysRunBitForBit) {
  const std::vector<DriveJoint> joints = jointKinds();
  const size_t nj = joints.size();
  std::mt19937 rng(2026);
  std::normal_distribution<double> n(0.0, 1.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<Quat> bodies(nj + 1), targets(nj);
  std::vector<Vec3> omegas(nj + 1), targetVelocities(nj), torques(nj), torquesDetailed(nj);
  std::vector<double> weights(nj);
  std::vector<JointDriveOutput> details(nj);
  int inside = 0, searched = 0, nearLock = 0, differing = 0;
  constexpr int kCharacters = 20000;
  for (int c = 0; c < kCharacters; ++c) {
    for (auto& q : bodies) q = glm::normalize(fromRotationVector(Vec3{n(rng), n(rng), n(rng)}));
    for (auto& w : omegas) w = Vec3{n(rng), n(rng), n(rng)};
    for (size_t i = 0; i < nj; ++i) {
      targets[i] = drawTarget(joints[i], rng);
      targetVelocities[i] = u(rng) < 0.2 ? Vec3{0.0} : Vec3{n(rng), n(rng), n(rng)};
      weights[i] = u(rng) < 0.2 ? 1.0 : u(rng);
    }
    const DriveJob job{joints, bodies, omegas, targets, targetVelocities, weights, torques, {}};
    ASSERT_TRUE(job.run());
    const DriveJob detailed{joints,           bodies,  omegas,          targets,
                            targetVelocities, weights, torquesDetailed, details};
    ASSERT_TRUE(detailed.run());
    for (size_t i = 0; i < nj; ++i) {
      const DriveJoint& j = joints[i];
      const auto a = static_cast<size_t>(j.bodyA), b = static_cast<size_t>(j.bodyB);
      const Vec3 expected = torqueWithTheSearch(j, bodies[a], bodies[b], omegas[a], omegas[b], targets[i],
                                                targetVelocities[i], weights[i]);
      const bool same = sameBits(torques[i], expected) && sameBits(torquesDetailed[i], expected);
      if (!same && ++differing <= 5) {
        ADD_FAILURE() << "character " << c << " joint " << i << ": (" << torques[i].x << ", " << torques[i].y
                      << ", " << torques[i].z << ") vs (" << expected.x << ", " << expected.y << ", "
                      << expected.z << ")";
      }
      // What the draw covered: targets the search leaves alone and targets it moves.
      const Vec3 raw = jointAngles(targets[i]);
      (details[i].targetAngles == raw ? inside : searched) += 1;
      nearLock += std::abs(std::abs(raw.y) - 0.5 * kPi) < 0.05 ? 1 : 0;
    }
  }
  EXPECT_EQ(differing, 0);
  // Both paths ran many times (20,000 characters x 6 joints).
  EXPECT_GT(inside, 20000);
  EXPECT_GT(searched, 20000);
  EXPECT_GT(nearLock, 2000);
}

TEST(DriveJobBits, NearestAdmissibleAnglesAreTheSearchAsItWasBitForBit) {
  const std::vector<DriveJoint> joints = jointKinds();
  std::mt19937 rng(29);
  std::normal_distribution<double> n(0.0, 1.0);
  int differing = 0, moved = 0;
  for (int k = 0; k < 200000; ++k) {
    const DriveJoint& j = joints[static_cast<size_t>(k) % joints.size()];
    const Quat target = drawTarget(j, rng);
    const Vec3 locked = jointAngles(glm::normalize(fromRotationVector(Vec3{n(rng), n(rng), n(rng)})));
    glm::bvec3 clamped{false}, clampedBefore{false};
    const Vec3 now = nearestAdmissibleAngles(target, locked, j.angularLower, j.angularUpper, &clamped);
    const Vec3 before =
        reference::nearestAdmissibleAngles(target, locked, j.angularLower, j.angularUpper, &clampedBefore);
    if ((!sameBits(now, before) || clamped != clampedBefore) && ++differing <= 5) {
      ADD_FAILURE() << "target " << k << ": (" << now.x << ", " << now.y << ", " << now.z << ") vs ("
                    << before.x << ", " << before.y << ", " << before.z << ")";
    }
    moved += before != jointAngles(target) ? 1 : 0;
  }
  EXPECT_EQ(differing, 0);
  EXPECT_GT(moved, 50000);  // the search ran for many
}

}  // namespace
}  // namespace handoff
