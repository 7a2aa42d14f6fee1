// Domain-aware comparisons for tests: quaternions equal up to sign, separate position and
// angle tolerances (as Jolt's and ozz's tests do).
#pragma once

#include "handoff/math.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace handoff::test {

inline std::string str(const Vec3& v) {
  std::ostringstream s;
  s << "(" << v.x << ", " << v.y << ", " << v.z << ")";
  return s.str();
}

inline std::string str(const Quat& q) {
  std::ostringstream s;
  s << "(w " << q.w << ", " << q.x << ", " << q.y << ", " << q.z << ")";
  return s.str();
}

inline ::testing::AssertionResult vecNear(const Vec3& a, const Vec3& b, double tolerance) {
  const double d = glm::length(a - b);
  if (d <= tolerance) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << str(a) << " vs " << str(b) << " differ by " << d << " > " << tolerance;
}

/// Rotations equal up to the sign of the quaternion; tolerance is an angle. [rad]
inline ::testing::AssertionResult rotNear(const Quat& a, const Quat& b, double toleranceRad) {
  const double angle = angleBetween(a, b);
  if (angle <= toleranceRad) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << str(a) << " vs " << str(b) << " differ by " << angle << " rad > " << toleranceRad;
}

inline ::testing::AssertionResult xfNear(const Transform& a, const Transform& b, double positionTolerance,
                                         double angleTolerance) {
  auto p = vecNear(a.translation, b.translation, positionTolerance);
  if (!p) return p;
  return rotNear(a.rotation, b.rotation, angleTolerance);
}

}  // namespace handoff::test
