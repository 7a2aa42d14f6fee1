// Tolerances on quantities Bullet computes, from the precision of the Bullet build handoff links
// (CMake option HANDOFF_BULLET_DOUBLE, handoff::bulletPrecision()).
//
// The tests' tolerances were set on double-precision Bullet (btScalar double, epsilon 2.2e-16) and
// are kept exactly in that build. Single-precision Bullet (the default build) stores every pose,
// velocity and inertia as float and computes in float: relative epsilon 2^-23 = 1.19e-7. A value
// of magnitude M read back from it is off by up to kFloatEpsilon M / 2 (one rounding); one that
// Bullet accumulated over n operations (n substeps integrating it, n terms of a sum) by up to
// n kFloatEpsilon M. A tolerance of 1e-9 or 1e-12 on such a value tests the arithmetic of
// double, not the adapter. bulletTolerance(t, M, n) is t in a double-precision build and
// max(t, n kFloatEpsilon M) in a single-precision one: widened by exactly what float rounding
// explains, never more. Behaviour thresholds (millimetres, degrees, momentum ratios) are not
// rounding and are not widened.
#pragma once

#include "handoff/physics_bullet.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace handoff::test {

/// Whether handoff's Bullet is the double-precision build.
inline const bool kBulletDouble = std::strcmp(bulletPrecision(), "double") == 0;
/// float's epsilon, 2^-23: the relative spacing of single-precision values.
inline constexpr double kFloatEpsilon = std::numeric_limits<float>::epsilon();
/// The relative epsilon of the btScalar handoff's Bullet computes in.
inline const double kBulletEpsilon = kBulletDouble ? std::numeric_limits<double>::epsilon() : kFloatEpsilon;

/// `doubleTolerance` (the test's tolerance on double-precision Bullet, unchanged there), or on
/// single precision at least `roundings` float roundings of a value of `magnitude`. [same unit as
/// the tolerance]
inline double bulletTolerance(double doubleTolerance, double magnitude, double roundings = 1.0) {
  return kBulletDouble ? doubleTolerance : std::max(doubleTolerance, roundings * kFloatEpsilon * magnitude);
}

}  // namespace handoff::test
