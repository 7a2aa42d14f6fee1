#include "handoff/math.h"

#include <gtest/gtest.h>

#include <random>

#include "support/test_math.h"

namespace handoff {
namespace {

using test::rotNear;
using test::vecNear;
using test::xfNear;

Quat randomRotation(std::mt19937& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  return glm::normalize(Quat{n(rng), n(rng), n(rng), n(rng)});
}

Vec3 randomVec(std::mt19937& rng, double scale) {
  std::uniform_real_distribution<double> u(-scale, scale);
  return {u(rng), u(rng), u(rng)};
}

// T_XZ = T_XY * T_YZ: a point given in Z reaches X through Y.
TEST(Transform, ComposeApplyInverseByHand) {
  // Y is X rotated +90 deg about Z and moved by (1,0,0); Z is Y moved by (0,2,0).
  const Transform xFromY{glm::angleAxis(kPi / 2, Vec3{0, 0, 1}), Vec3{1, 0, 0}};
  const Transform yFromZ = Transform::fromTranslation(Vec3{0, 2, 0});
  const Transform xFromZ = xFromY * yFromZ;
  // Origin of Z is (0,2,0) in Y, which is (-2,0,0) rotated plus (1,0,0) = (-1,0,0) in X.
  EXPECT_TRUE(vecNear(xFromZ.transformPoint(Vec3{0}), Vec3{-1, 0, 0}, 1e-12));
  EXPECT_TRUE(vecNear(xFromZ.transformPoint(Vec3{1, 0, 0}), Vec3{-1, 1, 0}, 1e-12));
  EXPECT_TRUE(vecNear(xFromZ.transformVector(Vec3{1, 0, 0}), Vec3{0, 1, 0}, 1e-12));
  const Transform zFromX = xFromZ.inverse();
  EXPECT_TRUE(vecNear(zFromX.transformPoint(Vec3{-1, 1, 0}), Vec3{1, 0, 0}, 1e-12));
  EXPECT_TRUE(xfNear(xFromZ * zFromX, Transform::identity(), 1e-12, 1e-12));
}

TEST(Transform, RandomRoundTrips) {
  std::mt19937 rng(1234);
  for (int i = 0; i < 200; ++i) {
    const Transform a{randomRotation(rng), randomVec(rng, 5)};
    const Transform b{randomRotation(rng), randomVec(rng, 5)};
    const Vec3 p = randomVec(rng, 3);
    EXPECT_TRUE(vecNear((a * b).transformPoint(p), a.transformPoint(b.transformPoint(p)), 1e-12));
    EXPECT_TRUE(xfNear(a.inverse() * a, Transform::identity(), 1e-12, 1e-7));
  }
}

TEST(Quaternion, ShortArcAndHemisphere) {
  const Quat q = glm::angleAxis(1.0, glm::normalize(Vec3{1, 2, 3}));
  EXPECT_GE(shortArc(-q).w, 0.0);
  EXPECT_TRUE(rotNear(shortArc(-q), q, 1e-12));
  EXPECT_GE(glm::dot(alignHemisphere(-q, q), q), 0.0);
}

TEST(Quaternion, SlerpTakesShortArcAcrossSignFlip) {
  const Vec3 axis = glm::normalize(Vec3{0.3, 1, -0.2});
  const Quat a = glm::angleAxis(0.2, axis);
  const Quat b = -glm::angleAxis(0.8, axis);  // same rotation as +0.8, opposite sign
  const Quat mid = slerpShortArc(a, b, 0.5);
  EXPECT_TRUE(rotNear(mid, glm::angleAxis(0.5, axis), 1e-12));
  EXPECT_TRUE(rotNear(slerpShortArc(a, b, 0.0), a, 1e-12));
  EXPECT_TRUE(rotNear(slerpShortArc(a, b, 1.0), b, 1e-12));
  // Nearly identical inputs take the nlerp branch without NaN.
  const Quat c = glm::angleAxis(0.2 + 1e-14, axis);
  EXPECT_TRUE(isFinite(slerpShortArc(a, c, 0.5)));
}

TEST(Quaternion, RotationVectorRoundTrip) {
  std::mt19937 rng(42);
  for (int i = 0; i < 200; ++i) {
    const Quat q = randomRotation(rng);
    const Vec3 r = toRotationVector(q);
    EXPECT_LE(glm::length(r), kPi + 1e-12);
    EXPECT_TRUE(rotNear(fromRotationVector(r), q, 1e-9));
  }
  EXPECT_EQ(toRotationVector(Quat{1, 0, 0, 0}), Vec3{0.0});
  const Vec3 tiny{1e-17, -2e-17, 0};
  EXPECT_TRUE(isFinite(fromRotationVector(tiny)));
  EXPECT_TRUE(vecNear(toRotationVector(glm::angleAxis(0.5, Vec3{0, 0, 1})), Vec3{0, 0, 0.5}, 1e-14));
}

TEST(Quaternion, RotationBetween) {
  EXPECT_TRUE(vecNear(rotationBetween(Vec3{1, 0, 0}, Vec3{0, 1, 0}) * Vec3{1, 0, 0}, Vec3{0, 1, 0}, 1e-12));
  const Quat half = rotationBetween(Vec3{0, 1, 0}, Vec3{0, -1, 0});
  EXPECT_TRUE(vecNear(half * Vec3{0, 1, 0}, Vec3{0, -1, 0}, 1e-12));
}

// SPEC.md section 3: exact for a constant spin about an arbitrary axis.
TEST(AngularVelocity, ExactForConstantSpin) {
  const Vec3 axis = glm::normalize(Vec3{0.4, -1.0, 2.5});
  const double rate = 3.7;  // rad/s
  const double dt = 1.0 / 60.0;
  const Quat q0 = glm::angleAxis(0.9, glm::normalize(Vec3{1, 1, 0}));  // arbitrary start
  const Quat q1 = glm::angleAxis(rate * dt, axis) * q0;                 // world-space delta
  const AngularVelocity w = angularVelocity(q0, q1, dt);
  EXPECT_TRUE(vecNear(w.omega, rate * axis, 1e-9));
  EXPECT_NEAR(w.angle, rate * dt, 1e-12);
  EXPECT_FALSE(w.beyondHalfTurn);
}

TEST(AngularVelocity, SignOfInputsDoesNotMatter) {
  const Vec3 axis = glm::normalize(Vec3{1, 2, -1});
  const Quat q0 = glm::angleAxis(2.0, Vec3{0, 1, 0});
  const Quat q1 = glm::angleAxis(0.3, axis) * q0;
  const Vec3 ref = angularVelocity(q0, q1, 0.1).omega;
  EXPECT_TRUE(vecNear(angularVelocity(-q0, q1, 0.1).omega, ref, 1e-12));
  EXPECT_TRUE(vecNear(angularVelocity(q0, -q1, 0.1).omega, ref, 1e-12));
  EXPECT_TRUE(vecNear(angularVelocity(-q0, -q1, 0.1).omega, ref, 1e-12));
  EXPECT_TRUE(vecNear(ref, 3.0 * axis, 1e-9));
}

TEST(AngularVelocity, NearIdentityIsZeroWithoutNaN) {
  const Quat q0 = glm::angleAxis(1.0, Vec3{0, 0, 1});
  const AngularVelocity same = angularVelocity(q0, q0, 1.0 / 60);
  EXPECT_EQ(same.omega, Vec3{0.0});
  const Quat q1 = glm::angleAxis(1e-14, Vec3{1, 0, 0}) * q0;
  const AngularVelocity tiny = angularVelocity(q0, q1, 1.0 / 60);
  EXPECT_TRUE(isFinite(tiny.omega));
  EXPECT_LT(glm::length(tiny.omega), 1e-10);
}

// The half-turn limit: from two orientations alone a rotation of more than pi between samples
// cannot be told from the short arc the other way round. The helper returns the short arc and,
// for sign-continuous samples (a clip track, consecutive engine states), flags it.
TEST(AngularVelocity, DocumentsTheHalfTurnLimit) {
  const Vec3 axis{0, 1, 0};
  const double dt = 0.1;
  // 0.9 pi between samples: exact.
  const Quat q0{1, 0, 0, 0};
  const AngularVelocity under = angularVelocity(q0, glm::angleAxis(0.9 * kPi, axis), dt);
  EXPECT_TRUE(vecNear(under.omega, (0.9 * kPi / dt) * axis, 1e-9));
  EXPECT_FALSE(under.beyondHalfTurn);
  // 1.2 pi between samples, sign-continuous (glm::angleAxis keeps the sign of the path): the
  // short arc is 0.8 pi the other way round, and the result says so.
  const Quat q1 = glm::angleAxis(1.2 * kPi, axis);
  ASSERT_LT(q1.w, 0.0);
  const AngularVelocity over = angularVelocity(q0, q1, dt);
  EXPECT_TRUE(over.beyondHalfTurn);
  EXPECT_NEAR(over.angle, 0.8 * kPi, 1e-12);
  EXPECT_TRUE(vecNear(over.omega, (-0.8 * kPi / dt) * axis, 1e-9));
  // Sampled twice as densely, the same motion is exact again (what SPEC.md advises).
  const Quat qHalf = glm::angleAxis(0.6 * kPi, axis);
  const AngularVelocity dense = angularVelocity(q0, qHalf, dt / 2);
  EXPECT_FALSE(dense.beyondHalfTurn);
  EXPECT_TRUE(vecNear(dense.omega, (1.2 * kPi / dt) * axis, 1e-9));
}

TEST(SwingTwist, RecomposesAndSeparatesAxes) {
  std::mt19937 rng(7);
  const Vec3 twistAxis = glm::normalize(Vec3{1, 0.2, 0});
  for (int i = 0; i < 100; ++i) {
    const Quat q = randomRotation(rng);
    const SwingTwist st = decomposeSwingTwist(q, twistAxis);
    EXPECT_TRUE(rotNear(st.swing * st.twist, q, 1e-9));
    // Twist is about the axis; swing moves the axis but has no component about it.
    const Vec3 tv{st.twist.x, st.twist.y, st.twist.z};
    EXPECT_LT(glm::length(glm::cross(tv, twistAxis)), 1e-9);
    const Vec3 sv{st.swing.x, st.swing.y, st.swing.z};
    EXPECT_NEAR(glm::dot(sv, twistAxis), 0.0, 1e-9);
  }
  const Quat pureTwist = glm::angleAxis(0.7, twistAxis);
  EXPECT_NEAR(twistAngle(pureTwist, twistAxis), 0.7, 1e-12);
  EXPECT_NEAR(twistAngle(glm::angleAxis(-0.4, twistAxis) * glm::angleAxis(0.3, Vec3{0, 0, 1}), twistAxis), -0.4,
              0.05);
}

TEST(Euler, IntrinsicOrderMatchesMatrixProduct) {
  const char order[3] = {'Z', 'Y', 'X'};
  const Vec3 angles{0.3, -0.5, 1.1};
  const Quat expected = glm::angleAxis(0.3, Vec3{0, 0, 1}) * glm::angleAxis(-0.5, Vec3{0, 1, 0}) *
                        glm::angleAxis(1.1, Vec3{1, 0, 0});
  EXPECT_TRUE(rotNear(fromEulerIntrinsic(order, angles), expected, 1e-14));
}

TEST(Finite, DetectsNaNAndInf) {
  EXPECT_TRUE(isFinite(Transform::identity()));
  Transform t;
  t.translation.y = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(isFinite(t));
  t = Transform::identity();
  t.rotation.w = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(isFinite(t));
  EXPECT_EQ(normalizeOrIdentity(Quat{0, 0, 0, 0}), (Quat{1, 0, 0, 0}));
}

}  // namespace
}  // namespace handoff
