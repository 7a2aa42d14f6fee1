// The joint-angle convention of handoff::jointAngles() against Bullet's own
// btGeneric6DofSpring2Constraint::getAngle() (RO_XYZ), numerically.
#include "handoff/physics.h"
#include "physics_bullet/bullet_internal.h"
#include "support/bullet_precision.h"
#include "support/test_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

namespace handoff {
namespace {

using bullet_detail::spring2Angles;

constexpr double kAngleTol = 1e-12;  // double-precision round-off of two matrix products

/// The tolerance on Bullet's getAngle() for angles `a` (kAngleTol or `doubleTolerance` on
/// double-precision Bullet). Single precision: Bullet builds the relative rotation from products
/// of float matrices (a few roundings of their unit entries, 8 counted) and takes asin of one entry
/// for y and atan2 of two, divided by cos y, for x and z: their sensitivity to the entries is
/// 1 / cos y.
double spring2Tolerance(const Vec3& a, double doubleTolerance = kAngleTol) {
  return test::bulletTolerance(doubleTolerance, 1.0 / std::abs(std::cos(a.y)), 8);
}

Quat randomRotation(std::mt19937& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  return normalizeOrIdentity(Quat{n(rng), n(rng), n(rng), n(rng)});
}

TEST(JointAngles, KnownAnglesRoundTrip) {
  const Vec3 angles{0.3, 0.2, -0.5};
  const Quat q = fromJointAngles(angles);
  EXPECT_TRUE(test::vecNear(jointAngles(q), angles, kAngleTol));
  // Intrinsic X, then Y, then Z.
  const Quat expected = glm::angleAxis(0.3, Vec3{1, 0, 0}) * glm::angleAxis(0.2, Vec3{0, 1, 0}) *
                        glm::angleAxis(-0.5, Vec3{0, 0, 1});
  EXPECT_TRUE(test::rotNear(q, expected, kAngleTol));
}

TEST(JointAngles, PureRotationOfBReadsPositive) {
  for (int axis = 0; axis < 3; ++axis) {
    Vec3 a{0.0};
    a[axis] = 0.4;
    Vec3 dir{0.0};
    dir[axis] = 1.0;
    EXPECT_TRUE(test::vecNear(jointAngles(glm::angleAxis(0.4, dir)), a, kAngleTol)) << "axis " << axis;
  }
}

// Build a joint, rotate body B by known angles, compare Bullet's getAngle() after
// calculateTransforms() with jointAngles().
TEST(JointAngles, EqualsBulletSpring2AsBuiltByTheWorld) {
  const Transform worldFromA{glm::angleAxis(0.7, glm::normalize(Vec3{1, 2, 3})), Vec3{1, 2, 3}};
  const Transform aFromJoint{glm::angleAxis(-0.4, glm::normalize(Vec3{0, 1, 1})), Vec3{0, 0.3, 0}};
  const Transform bFromJoint{glm::angleAxis(1.1, glm::normalize(Vec3{1, 0, 1})), Vec3{0, -0.2, 0}};
  const Vec3 known{0.3, -0.6, 1.2};
  // Place B so that qRel = fromJointAngles(known) and the anchors coincide.
  const Transform worldFromJointA = worldFromA * aFromJoint;
  const Transform worldFromJointB{worldFromJointA.rotation * fromJointAngles(known),
                                  worldFromJointA.translation};
  const Transform worldFromB = worldFromJointB * bFromJoint.inverse();
  const Vec3 bullet = spring2Angles(worldFromA, aFromJoint, worldFromB, bFromJoint, true);
  EXPECT_TRUE(test::vecNear(bullet, known, spring2Tolerance(known, 1e-9)));

  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const Transform wa{randomRotation(rng), Vec3{0.0}};
    const Transform wb{randomRotation(rng), Vec3{0.0}};
    const Transform ja{randomRotation(rng), Vec3{0.0}};
    const Transform jb{randomRotation(rng), Vec3{0.0}};
    const Quat qRel = glm::conjugate(wa.rotation * ja.rotation) * (wb.rotation * jb.rotation);
    const Vec3 ours = jointAngles(qRel);
    const Vec3 theirs = spring2Angles(wa, ja, wb, jb, true);
    ASSERT_TRUE(test::vecNear(ours, theirs, spring2Tolerance(ours))) << "sample " << i;
    // Bullet's natural body order reads the inverse rotation.
    const Vec3 inverse = jointAngles(glm::conjugate(qRel));
    ASSERT_TRUE(test::vecNear(inverse, spring2Angles(wa, ja, wb, jb, false), spring2Tolerance(inverse)));
  }
}

TEST(JointAngles, NaturalBulletOrderNegatesSinglAxisAngles) {
  // The reason the adapter swaps the bodies: in Bullet's natural order, B turning +0.3 about X
  // reads -0.3.
  const Transform b{glm::angleAxis(0.3, Vec3{1, 0, 0}), Vec3{0.0}};
  const double tolerance = spring2Tolerance(Vec3{0.3, 0, 0});
  EXPECT_TRUE(test::vecNear(spring2Angles(Transform{}, Transform{}, b, Transform{}, false), Vec3{-0.3, 0, 0},
                            tolerance));
  EXPECT_TRUE(test::vecNear(spring2Angles(Transform{}, Transform{}, b, Transform{}, true), Vec3{0.3, 0, 0},
                            tolerance));
}

TEST(JointAngles, GimbalLockMatchesBullet) {
  for (double sign : {1.0, -1.0}) {
    const Quat q = fromJointAngles(Vec3{0.3, sign * 0.5 * kPi, 0.2});
    const Vec3 ours = jointAngles(q);
    EXPECT_NEAR(ours.y, sign * 0.5 * kPi, 1e-6);
    // Only x + z (or x - z) is defined; the rotation must round-trip.
    EXPECT_TRUE(test::rotNear(fromJointAngles(ours), q, 1e-6));
    const Vec3 bullet = spring2Angles(Transform{}, Transform{}, Transform{q, Vec3{0.0}}, Transform{}, true);
    EXPECT_TRUE(test::rotNear(fromJointAngles(bullet), q, 1e-6));
  }
}

TEST(JointAngles, ReachBoundsEveryAngleAlongATurn) {
  // 2,000 seeded joints turned about a random fixed axis (applied in A's frame, as the commit's
  // limit look-ahead does): along the whole turn, each angle, unwrapped, stays within
  // jointAngleReach of where it started. The x and z bounds need their 1 / cos y: without it the
  // largest change would exceed the turn itself.
  std::mt19937 rng(2024);  // kSeed
  std::uniform_real_distribution<double> angle(-kPi, kPi), middle(-1.45, 1.45), turnOf(0.0, 0.8);
  double worstUse = 0.0, worstSideOverTurn = 0.0;
  int finite = 0;
  for (int t = 0; t < 2000; ++t) {
    const Vec3 start{angle(rng), middle(rng), angle(rng)};
    const Quat q0 = fromJointAngles(start);
    std::normal_distribution<double> n(0.0, 1.0);
    const Vec3 axis = glm::normalize(Vec3{n(rng), n(rng), n(rng)});
    const double turn = turnOf(rng);
    const Vec3 now = jointAngles(q0);
    const Vec3 reach = jointAngleReach(now, turn);
    if (!std::isfinite(reach.x)) continue;
    ++finite;
    Vec3 unwrapped = now, previous = now;
    for (int k = 1; k <= 400; ++k) {
      const Vec3 a = jointAngles(fromRotationVector(axis * (turn * k / 400.0)) * q0);
      for (int i = 0; i < 3; ++i) unwrapped[i] += std::remainder(a[i] - previous[i], 2.0 * kPi);
      previous = a;
      for (int i = 0; i < 3; ++i) {
        const double change = std::abs(unwrapped[i] - now[i]);
        ASSERT_LE(change, reach[i] + 1e-12) << "joint " << t << " axis " << i << " step " << k;
        if (reach[i] > 1e-3) worstUse = std::max(worstUse, change / reach[i]);
        if (i != 1 && turn > 1e-3) worstSideOverTurn = std::max(worstSideOverTurn, change / turn);
      }
    }
  }
  std::printf("%d joints with a finite reach: largest change / reach %.3f, x or z change / turn %.2f\n",
              finite, worstUse, worstSideOverTurn);
  EXPECT_GT(finite, 1500);
  EXPECT_GT(worstUse, 0.5);           // the bound is not vacuous
  EXPECT_GT(worstSideOverTurn, 1.0);  // and its 1 / cos y is needed
  // Near gimbal lock, and for a NaN turn, there is no bound.
  EXPECT_TRUE(std::isinf(jointAngleReach(Vec3{0.0, 1.5, 0.0}, 0.1).x));
  EXPECT_TRUE(std::isinf(jointAngleReach(Vec3{0.0}, std::nan("")).y));
}

TEST(ShapeInertia, CapsuleLimits) {
  ShapeDesc sphere{ShapeType::Sphere, 0.5, 0.0, Vec3{0.0}};
  ShapeDesc capsule0{ShapeType::Capsule, 0.5, 0.0, Vec3{0.0}};
  EXPECT_TRUE(test::vecNear(shapePrincipalInertia(capsule0, 3.0), shapePrincipalInertia(sphere, 3.0), 1e-12));
  // A long thin capsule tends to a rod: I = m L^2 / 12 about a transverse axis.
  ShapeDesc rod{ShapeType::Capsule, 1e-4, 1.0, Vec3{0.0}};
  EXPECT_NEAR(shapePrincipalInertia(rod, 2.0).x, 2.0 * 4.0 / 12.0, 1e-3);
  ShapeDesc box{ShapeType::Box, 0.0, 0.0, Vec3{0.5, 1.0, 1.5}};
  EXPECT_TRUE(test::vecNear(shapePrincipalInertia(box, 12.0), Vec3{4 + 9, 1 + 9, 1 + 4}, 1e-12));
}

}  // namespace
}  // namespace handoff
