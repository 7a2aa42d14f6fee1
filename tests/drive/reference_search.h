// The nearest-admissible-target search as it was before DriveJob skipped it and before the search
// ended its fruitless line searches early (main at 3ae24ef, src/drive/drive.cpp, unchanged but for
// the names): the reference the bit-identity tests compare the faster code with.
#pragma once

#include "handoff/drive.h"

#include <algorithm>
#include <cmath>

namespace handoff::reference {

inline bool axisLocked(double lower, double upper) { return lower == upper; }
inline bool axisLimited(double lower, double upper) { return lower < upper; }

inline void rateAxes(const Vec3& angles, Vec3 axes[3]) {
  const double sa = std::sin(angles.x), ca = std::cos(angles.x);
  const double sb = std::sin(angles.y), cb = std::cos(angles.y);
  axes[0] = Vec3{1.0, 0.0, 0.0};
  axes[1] = Vec3{0.0, ca, sa};
  axes[2] = Vec3{sb, -sa * cb, ca * cb};
}

// Wraps an angle to (-pi, pi].
inline double wrapToPi(double a) {
  a = std::remainder(a, 2.0 * kPi);
  return a <= -kPi ? a + 2.0 * kPi : a;
}

// The rotation left between `target` and the joint angles: e with target = exp(e) q(angles), in
// J_A. Its length is the angle between the two rotations.
inline Vec3 angleResidual(const Quat& target, const Vec3& angles) {
  return toRotationVector(shortArc(target * glm::conjugate(fromJointAngles(angles))));
}

// Box of one axis for the projection: locked axes stay where they are (fixed), limited axes
// between their limits, free axes anywhere.
inline double boxed(double value, int axis, const Vec3& lower, const Vec3& upper) {
  return axisLimited(lower[axis], upper[axis]) ? std::clamp(value, lower[axis], upper[axis]) : value;
}

// Projected Gauss-Newton on the joint angles: minimises |angleResidual(target, angles)| over the
// axes not locked, each kept in its box. q(angles + d) ~ exp(J d) q(angles) with J the rate axes
// (rateAxes), so each step solves min |e - J d| over the axes free to move (an axis on a bound
// that the gradient pushes outward stays there), with a little damping for the near-parallel X
// and Z axes by the gimbal lock, and halves the step until the residual drops.
inline Vec3 projectOntoLimits(const Quat& target, Vec3 angles, const Vec3& lower, const Vec3& upper,
                              double* cost) {
  constexpr int kIterations = 8;
  Vec3 e = angleResidual(target, angles);
  double current = glm::dot(e, e);
  for (int iteration = 0; iteration < kIterations && current > 1e-24; ++iteration) {
    Vec3 axes[3];
    rateAxes(angles, axes);
    const glm::dmat3 jacobian(axes[0], axes[1], axes[2]);  // columns
    const Vec3 gradient = glm::transpose(jacobian) * e;    // descent direction of |e - J d|^2
    glm::dmat3 normal = glm::transpose(jacobian) * jacobian;
    Vec3 rhs = gradient;
    const double damping = 1e-9 * (normal[0][0] + normal[1][1] + normal[2][2]);
    for (int i = 0; i < 3; ++i) {
      const bool locked = axisLocked(lower[i], upper[i]);
      const bool limited = axisLimited(lower[i], upper[i]);
      const bool pinnedLow = limited && angles[i] <= lower[i] && gradient[i] < 0.0;
      const bool pinnedHigh = limited && angles[i] >= upper[i] && gradient[i] > 0.0;
      if (locked || pinnedLow || pinnedHigh) {
        for (int k = 0; k < 3; ++k) normal[i][k] = normal[k][i] = 0.0;
        normal[i][i] = 1.0;
        rhs[i] = 0.0;
      } else {
        normal[i][i] += damping;
      }
    }
    if (!(std::abs(glm::determinant(normal)) > 1e-300)) break;
    const Vec3 step = glm::inverse(normal) * rhs;
    bool improved = false;
    for (double scale = 1.0; scale > 1e-3; scale *= 0.5) {
      Vec3 next = angles;
      for (int i = 0; i < 3; ++i) next[i] = boxed(angles[i] + scale * step[i], i, lower, upper);
      const Vec3 nextE = angleResidual(target, next);
      const double nextCost = glm::dot(nextE, nextE);
      if (nextCost < current) {
        const bool converged = glm::length(next - angles) < 1e-10;
        angles = next;
        e = nextE;
        current = nextCost;
        improved = !converged;
        break;
      }
    }
    if (!improved) break;
  }
  if (cost) *cost = current;
  return angles;
}

// nearestAdmissibleAngles with the target's joint angles already known (raw = jointAngles(target)):
// computeJointDrive needs them too and computes them once.
inline Vec3 nearestAdmissibleFrom(const Quat& target, const Vec3& raw, const Vec3& lockedAngles,
                                  const Vec3& lower, const Vec3& upper, glm::bvec3* clampedAxes) {
  glm::bvec3 clamped{false};
  Vec3 perAxis = admissibleTargetAngles(raw, lockedAngles, lower, upper, &clamped);
  bool limitedClamped = false;
  for (int i = 0; i < 3; ++i)
    limitedClamped = limitedClamped || (axisLimited(lower[i], upper[i]) && clamped[i]);
  if (!limitedClamped) {
    if (clampedAxes) *clampedAxes = clamped;
    return perAxis;
  }
  // The target without its locked rates (locked axes take no target), projected onto the limits
  // from two starts: the per-axis clamp of its angles, and of the other Euler branch
  // (x + pi, pi - y, z + pi): past the gimbal lock the clip's canonical angles flip to the other
  // branch, and the per-axis clamp of one branch can be tens of degrees from the nearest
  // admissible rotation.
  Vec3 unlocked = raw;
  for (int i = 0; i < 3; ++i) {
    if (axisLocked(lower[i], upper[i])) unlocked[i] = lockedAngles[i];
  }
  const Quat goal = unlocked == raw ? target : fromJointAngles(unlocked);
  const Vec3 branch{wrapToPi(unlocked.x + kPi), wrapToPi(kPi - unlocked.y), wrapToPi(unlocked.z + kPi)};
  Vec3 other = branch;
  for (int i = 0; i < 3; ++i) {
    other[i] = axisLocked(lower[i], upper[i]) ? lockedAngles[i] : boxed(branch[i], i, lower, upper);
  }
  // The other branch only near the lock (|y| > 1 rad: elsewhere its Y lies past pi - 1 = 2.1 rad,
  // beyond any Y limit the builder makes, |y| <= 1.4) and when the first start leaves the target
  // more than 0.2 rad away: it halves the cost of the common case.
  constexpr double kBranchY = 1.0, kBranchTry = 0.2;  // [rad]
  double costA = 0.0, costB = 0.0;
  const Vec3 a = projectOntoLimits(goal, perAxis, lower, upper, &costA);
  Vec3 out = a;
  if (std::abs(unlocked.y) > kBranchY && costA > kBranchTry * kBranchTry) {
    const Vec3 b = projectOntoLimits(goal, other, lower, upper, &costB);
    if (costB < costA) out = b;
  }
  for (int i = 0; i < 3; ++i) {
    clamped[i] = axisLocked(lower[i], upper[i]) ||
                 (axisLimited(lower[i], upper[i]) && (out[i] == lower[i] || out[i] == upper[i]));
  }
  if (clampedAxes) *clampedAxes = clamped;
  return out;
}

/// nearestAdmissibleAngles as it was.
inline Vec3 nearestAdmissibleAngles(const Quat& target, const Vec3& lockedAngles, const Vec3& lower,
                                    const Vec3& upper, glm::bvec3* clampedAxes = nullptr) {
  return nearestAdmissibleFrom(target, jointAngles(target), lockedAngles, lower, upper, clampedAxes);
}

}  // namespace handoff::reference
