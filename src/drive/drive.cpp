// Joint drives (SPEC.md section 5). See include/handoff/drive.h for the law and the frames.
#include "handoff/drive.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>

namespace handoff {
namespace {

// |cos(angle y)| below this: the joint-angle rates are undefined (gimbal lock of X-Y-Z angles).
constexpr double kGimbalCos = 1e-6;

bool axisLocked(double lower, double upper) { return lower == upper; }
bool axisLimited(double lower, double upper) { return lower < upper; }

// Columns of the map from joint-angle rates to the angular velocity in J_A for
// q = Rx(a) * Ry(b) * Rz(c): omega = da * x + db * Rx(a) y + dc * Rx(a) Ry(b) z.
void rateAxes(double sa, double ca, double sb, double cb, Vec3 axes[3]) {
  axes[0] = Vec3{1.0, 0.0, 0.0};
  axes[1] = Vec3{0.0, ca, sa};
  axes[2] = Vec3{sb, -sa * cb, ca * cb};
}

// sin and cos of joint angles x (a) and y (b), what rateAxes and jointAngleRates use.
struct AngleTrig {
  double sa, ca, sb, cb;
};
AngleTrig angleTrig(const Vec3& angles) {
  return {std::sin(angles.x), std::cos(angles.x), std::sin(angles.y), std::cos(angles.y)};
}

// Joint-angle rates of an angular velocity in J_A at the angles of `t` (the inverse of rateAxes).
// Callers check the gimbal lock (|cos angles.y| >= kGimbalCos) first.
Vec3 jointAngleRates(const Vec3& w, const AngleTrig& t) {
  const double sa = t.sa, ca = t.ca, sb = t.sb, cb = t.cb;
  Vec3 rates;
  rates.z = (-w.y * sa + w.z * ca) / cb;
  rates.y = w.y * ca + w.z * sa;
  rates.x = w.x - rates.z * sb;
  return rates;
}

// Bit for bit equal (a signed zero differs from its opposite: the memo must give what the
// computation would).
template <typename T>
bool sameBits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

bool bodyIndexOk(int index, size_t bodyCount) { return index >= 0 && static_cast<size_t>(index) < bodyCount; }

}  // namespace

DriveGains weightedGains(const DriveGains& gains, double weight) {
  const double w = std::isfinite(weight) ? std::clamp(weight, 0.0, 1.0) : 0.0;
  DriveGains out;
  out.stiffness = gains.stiffness * w;
  out.damping = gains.damping;
  // inf * 0 would be NaN: a zero weight is a zero clamp, whatever the unweighted limit.
  out.maxTorque = w == 0.0 ? 0.0 : gains.maxTorque * w;
  return out;
}

DriveJoint driveJointFromDef(const JointDef& joint) {
  DriveJoint d;
  d.bodyA = joint.parentBody;
  d.bodyB = joint.childBody;
  d.bodyAFromJoint = joint.bodyAFromJoint.rotation;
  d.bodyBFromJoint = joint.bodyBFromJoint.rotation;
  d.angularLower = joint.preset.angularLower;
  d.angularUpper = joint.preset.angularUpper;
  d.gains.stiffness = joint.preset.driveStiffness;
  d.gains.damping = joint.preset.driveDamping;
  d.gains.maxTorque = joint.preset.maxDriveTorque;
  return d;
}

std::vector<DriveJoint> driveJointsFromAsset(const RagdollAsset& asset) {
  std::vector<DriveJoint> joints;
  joints.reserve(asset.joints.size());
  for (const JointDef& j : asset.joints) joints.push_back(driveJointFromDef(j));
  return joints;
}

Quat jointRelativeRotation(const Quat& worldFromBodyA, const Quat& worldFromBodyB, const Quat& bodyAFromJoint,
                           const Quat& bodyBFromJoint) {
  const Quat worldFromJointA = worldFromBodyA * bodyAFromJoint;
  const Quat worldFromJointB = worldFromBodyB * bodyBFromJoint;
  return glm::conjugate(worldFromJointA) * worldFromJointB;
}

// --- JointTargetsJob ---

bool JointTargetsJob::validate() const {
  if (jointTargets.size() != joints.size()) return false;
  for (const DriveJoint& j : joints) {
    if (!bodyIndexOk(j.bodyA, worldFromBodyTargets.size()) ||
        !bodyIndexOk(j.bodyB, worldFromBodyTargets.size()))
      return false;
  }
  return true;
}

bool JointTargetsJob::run() const {
  if (!validate()) return false;
  for (size_t i = 0; i < joints.size(); ++i) {
    const DriveJoint& j = joints[i];
    jointTargets[i] = jointRelativeRotation(worldFromBodyTargets[static_cast<size_t>(j.bodyA)],
                                            worldFromBodyTargets[static_cast<size_t>(j.bodyB)],
                                            j.bodyAFromJoint, j.bodyBFromJoint);
  }
  return true;
}

// --- JointTargetVelocitiesJob ---

bool JointTargetVelocitiesJob::validate() const {
  return previousTargets.size() == currentTargets.size() &&
         targetVelocities.size() == currentTargets.size() && std::isfinite(dt) && dt > 0.0;
}

bool JointTargetVelocitiesJob::run() const {
  if (!validate()) return false;
  for (size_t i = 0; i < currentTargets.size(); ++i) {
    // q1 * inverse(q0) of jointAFromJointB rotations is a rotation of J_A's coordinates: the
    // velocity comes out in J_A.
    targetVelocities[i] = angularVelocity(previousTargets[i], currentTargets[i], dt).omega;
  }
  return true;
}

// --- The law ---

Vec3 admissibleTargetAngles(const Vec3& targetAngles, const Vec3& currentAngles, const Vec3& lower,
                            const Vec3& upper, glm::bvec3* clampedAxes) {
  Vec3 out = targetAngles;
  glm::bvec3 clamped{false};
  for (int i = 0; i < 3; ++i) {
    if (axisLocked(lower[i], upper[i])) {
      // No target about a locked axis: the current angle gives no drive torque about it.
      out[i] = currentAngles[i];
      clamped[i] = true;
    } else if (axisLimited(lower[i], upper[i])) {
      out[i] = std::clamp(targetAngles[i], lower[i], upper[i]);
      clamped[i] = out[i] != targetAngles[i];
    }
  }
  if (clampedAxes) *clampedAxes = clamped;
  return out;
}

namespace {

// Wraps an angle to (-pi, pi].
double wrapToPi(double a) {
  a = std::remainder(a, 2.0 * kPi);
  return a <= -kPi ? a + 2.0 * kPi : a;
}

// toRotationVector(shortArc(q)) with math.cpp's arithmetic step for step (so the same bits), here
// where the compiler can inline it into the search's loop: the call and its shortArc call were a
// tenth of DriveJob's time. The bit-identity tests (tests/drive/drive_job_bits_test.cpp) compare
// with the library's own toRotationVector.
inline Vec3 shortArcRotationVector(const Quat& q) {
  const Quat p = q.w < 0.0 ? -q : q;
  const Vec3 v{p.x, p.y, p.z};
  const double sinHalf = glm::length(v);
  if (sinHalf < 1e-12) return Vec3{0.0};  // math.cpp's kSmallAngleSin
  const double angle = 2.0 * std::atan2(sinHalf, p.w);
  return v * (angle / sinHalf);
}

// sin and cos of half of each joint angle, as glm::angleAxis computes them in fromJointAngles.
struct HalfAngles {
  double s[3];
  double c[3];
  void set(int axis, double angle) {
    s[axis] = std::sin(angle * 0.5);
    c[axis] = std::cos(angle * 0.5);
  }
};

// fromJointAngles from the half angles' sines and cosines: the same operations on the same values
// as angleAxis(x, X) * angleAxis(y, Y) * angleAxis(z, Z), so the same quaternion bit for bit.
Quat fromHalfAngles(const HalfAngles& h) {
  return Quat(h.c[0], Vec3{1.0, 0.0, 0.0} * h.s[0]) * Quat(h.c[1], Vec3{0.0, 1.0, 0.0} * h.s[1]) *
         Quat(h.c[2], Vec3{0.0, 0.0, 1.0} * h.s[2]);
}

// The rotation left between `target` and the joint angles (given by their half angles): e with
// target = exp(e) q(angles), in J_A. Its length is the angle between the two rotations.
Vec3 angleResidual(const Quat& target, const HalfAngles& h) {
  return shortArcRotationVector(target * glm::conjugate(fromHalfAngles(h)));
}

// Box of one axis for the projection: locked axes stay where they are (fixed), limited axes
// between their limits, free axes anywhere.
double boxed(double value, int axis, const Vec3& lower, const Vec3& upper) {
  return axisLimited(lower[axis], upper[axis]) ? std::clamp(value, lower[axis], upper[axis]) : value;
}

// Projected Gauss-Newton on the joint angles: minimises |angleResidual(target, angles)| over the
// axes not locked, each kept in its box. q(angles + d) ~ exp(J d) q(angles) with J the rate axes
// (rateAxes), so each step solves min |e - J d| over the axes free to move (an axis on a bound
// that the gradient pushes outward stays there), with a little damping for the near-parallel X
// and Z axes by the gimbal lock, and halves the step until the residual drops.
[[gnu::flatten]] Vec3 projectOntoLimits(const Quat& target, Vec3 angles, const Vec3& lower, const Vec3& upper,
                                        double* cost, Quat* rotation, AngleTrig* trig) {
  constexpr int kIterations = 8;
  HalfAngles half;
  for (int i = 0; i < 3; ++i) half.set(i, angles[i]);
  Vec3 e = angleResidual(target, half);
  double current = glm::dot(e, e);
  // sin and cos of x and y for rateAxes, recomputed when a step moves them (a hinge's never move).
  double sa = std::sin(angles.x), ca = std::cos(angles.x), sb = std::sin(angles.y), cb = std::cos(angles.y);
  for (int iteration = 0; iteration < kIterations && current > 1e-24; ++iteration) {
    Vec3 axes[3];
    rateAxes(sa, ca, sb, cb, axes);
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
      // A step that leaves every angle as it is, bit for bit (locked and pinned axes, or a step
      // below half an ulp), costs what the current angles cost: no improvement, and none at the
      // smaller scales either (scale * step only shrinks toward zero, and a rounded sum and the
      // clamp to a bound the angle is on are monotonic), so the line search ends here as it
      // would have after all its halvings. Half of the search's evaluations were such steps.
      if (sameBits(next, angles)) break;
      // The half angles of the axes the step leaves alone are those of the current angles.
      HalfAngles nextHalf = half;
      for (int i = 0; i < 3; ++i) {
        if (!sameBits(next[i], angles[i])) nextHalf.set(i, next[i]);
      }
      const Vec3 nextE = angleResidual(target, nextHalf);
      const double nextCost = glm::dot(nextE, nextE);
      if (nextCost < current) {
        const bool converged = glm::length(next - angles) < 1e-10;
        if (!sameBits(next.x, angles.x)) sa = std::sin(next.x), ca = std::cos(next.x);
        if (!sameBits(next.y, angles.y)) sb = std::sin(next.y), cb = std::cos(next.y);
        angles = next;
        half = nextHalf;
        e = nextE;
        current = nextCost;
        improved = !converged;
        break;
      }
    }
    if (!improved) break;
  }
  if (cost) *cost = current;
  *rotation = fromHalfAngles(half);  // fromJointAngles(angles), bit for bit
  *trig = {sa, ca, sb, cb};          // angleTrig(angles), bit for bit
  return angles;
}

// nearestAdmissibleAngles with the target's joint angles already known (raw = jointAngles(target)):
// computeJointDrive needs them too and computes them once. `searched` (optional) receives, when
// the search ran (searched->ran), fromJointAngles(result) and angleTrig(result), bit for bit: the
// search has the sines and cosines at hand.
struct Searched {
  bool ran = false;
  Quat rotation{1.0, 0.0, 0.0, 0.0};
  AngleTrig trig{};
};
Vec3 nearestAdmissibleFrom(const Quat& target, const Vec3& raw, const Vec3& lockedAngles, const Vec3& lower,
                           const Vec3& upper, glm::bvec3* clampedAxes, Searched* searched = nullptr) {
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
  // The other branch only near the lock (|y| > 1 rad: elsewhere its Y lies past pi - 1 = 2.1 rad,
  // beyond any Y limit the builder makes, |y| <= 1.4) and when the first start leaves the target
  // more than 0.2 rad away: it halves the cost of the common case.
  constexpr double kBranchY = 1.0, kBranchTry = 0.2;  // [rad]
  double costA = 0.0, costB = 0.0;
  Searched resultA, resultB;
  resultA.ran = resultB.ran = true;
  const Vec3 a = projectOntoLimits(goal, perAxis, lower, upper, &costA, &resultA.rotation, &resultA.trig);
  Vec3 out = a;
  if (std::abs(unlocked.y) > kBranchY && costA > kBranchTry * kBranchTry) {
    const Vec3 branch{wrapToPi(unlocked.x + kPi), wrapToPi(kPi - unlocked.y), wrapToPi(unlocked.z + kPi)};
    Vec3 other = branch;
    for (int i = 0; i < 3; ++i) {
      other[i] = axisLocked(lower[i], upper[i]) ? lockedAngles[i] : boxed(branch[i], i, lower, upper);
    }
    const Vec3 b = projectOntoLimits(goal, other, lower, upper, &costB, &resultB.rotation, &resultB.trig);
    if (costB < costA) {
      out = b;
      resultA = resultB;
    }
  }
  if (searched) *searched = resultA;
  for (int i = 0; i < 3; ++i) {
    clamped[i] = axisLocked(lower[i], upper[i]) ||
                 (axisLimited(lower[i], upper[i]) && (out[i] == lower[i] || out[i] == upper[i]));
  }
  if (clampedAxes) *clampedAxes = clamped;
  return out;
}

}  // namespace

Vec3 nearestAdmissibleAngles(const Quat& target, const Vec3& lockedAngles, const Vec3& lower,
                             const Vec3& upper, glm::bvec3* clampedAxes) {
  return nearestAdmissibleFrom(target, jointAngles(target), lockedAngles, lower, upper, clampedAxes);
}

namespace {

// admissibleTargetVelocity, with angleTrig(admissibleAngles) when known (null: computed); each sine
// and cosine computed once (the same values as the calls it replaces).
Vec3 admissibleVelocity(const Vec3& targetVelocity, const Vec3& rawTargetAngles, const Vec3& admissibleAngles,
                        glm::bvec3 removeAxes, const AngleTrig* admissibleTrig) {
  if (!glm::any(removeAxes) || targetVelocity == Vec3{0.0}) return targetVelocity;
  const AngleTrig raw = angleTrig(rawTargetAngles);
  if (std::abs(raw.cb) < kGimbalCos) return Vec3{0.0};
  const AngleTrig admissible = admissibleTrig != nullptr ? *admissibleTrig : angleTrig(admissibleAngles);
  if (std::abs(admissible.cb) < kGimbalCos) return Vec3{0.0};
  // Joint-angle rates of the raw target (omega = J(raw) * rates, see rateAxes).
  Vec3 rates = jointAngleRates(targetVelocity, raw);
  for (int i = 0; i < 3; ++i) {
    if (removeAxes[i]) rates[i] = 0.0;
  }
  Vec3 axes[3];
  rateAxes(admissible.sa, admissible.ca, admissible.sb, admissible.cb, axes);
  return axes[0] * rates.x + axes[1] * rates.y + axes[2] * rates.z;
}

}  // namespace

Vec3 admissibleTargetVelocity(const Vec3& targetVelocity, const Vec3& rawTargetAngles,
                              const Vec3& admissibleAngles, glm::bvec3 removeAxes) {
  return admissibleVelocity(targetVelocity, rawTargetAngles, admissibleAngles, removeAxes, nullptr);
}

Vec3 driveTorque(const Vec3& error, const Vec3& relativeVelocity, const Vec3& targetVelocity,
                 const DriveGains& gains, bool* saturated) {
  Vec3 tau = gains.stiffness * error + gains.damping * (targetVelocity - relativeVelocity);
  const double magnitude = glm::length(tau);
  const bool clamp = magnitude > gains.maxTorque;
  if (clamp) tau = magnitude > 0.0 ? tau * (gains.maxTorque / magnitude) : Vec3{0.0};
  if (saturated) *saturated = clamp;
  return tau;
}

double explicitStabilityIndex(const DriveGains& gains, double inverseInertia, double dt) {
  return dt * dt * gains.stiffness * inverseInertia + 2.0 * dt * gains.damping * inverseInertia;
}

namespace {

// Largest eigenvalue of a symmetric 3x3 matrix, closed form (trigonometric method).
double largestEigenvalue(const glm::dmat3& m) {
  const double a00 = m[0][0], a11 = m[1][1], a22 = m[2][2];
  const double a01 = m[1][0], a02 = m[2][0], a12 = m[2][1];
  const double offDiagonal = a01 * a01 + a02 * a02 + a12 * a12;
  if (offDiagonal == 0.0) return std::max({a00, a11, a22});
  const double q = (a00 + a11 + a22) / 3.0;
  const double p2 = (a00 - q) * (a00 - q) + (a11 - q) * (a11 - q) + (a22 - q) * (a22 - q) + 2.0 * offDiagonal;
  const double p = std::sqrt(p2 / 6.0);
  const glm::dmat3 b = (m - glm::dmat3(q)) * (1.0 / p);
  const double r = std::clamp(glm::determinant(b) / 2.0, -1.0, 1.0);
  return q + 2.0 * p * std::cos(std::acos(r) / 3.0);
}

}  // namespace

namespace {

// I_A^-1 + I_B^-1 in J_A: R I_C^-1 R^T with R = jointAFromBody = inverse(worldFromJointA) *
// worldFromBody.
glm::dmat3 relativeInverseInertia(const DriveJoint& joint, const Quat& worldFromBodyA,
                                  const Quat& worldFromBodyB, const glm::dmat3& bodyAInverseInertia,
                                  const glm::dmat3& bodyBInverseInertia) {
  const Quat jointAFromWorld = glm::conjugate(worldFromBodyA * joint.bodyAFromJoint);
  const glm::dmat3 ra = glm::mat3_cast(jointAFromWorld * worldFromBodyA);
  const glm::dmat3 rb = glm::mat3_cast(jointAFromWorld * worldFromBodyB);
  return ra * bodyAInverseInertia * glm::transpose(ra) + rb * bodyBInverseInertia * glm::transpose(rb);
}

}  // namespace

double jointInverseInertia(const DriveJoint& joint, const Quat& worldFromBodyA, const Quat& worldFromBodyB,
                           const glm::dmat3& bodyAInverseInertia, const glm::dmat3& bodyBInverseInertia) {
  const glm::dmat3 m =
      relativeInverseInertia(joint, worldFromBodyA, worldFromBodyB, bodyAInverseInertia, bodyBInverseInertia);
  int open[3];
  int count = 0;
  for (int i = 0; i < 3; ++i) {
    if (!axisLocked(joint.angularLower[i], joint.angularUpper[i])) open[count++] = i;
  }
  const auto at = [&m](int row, int col) { return m[col][row]; };
  switch (count) {
    case 0:
      return 0.0;
    case 1:
      return at(open[0], open[0]);
    case 2: {
      const double a = at(open[0], open[0]), d = at(open[1], open[1]), b = at(open[0], open[1]);
      return 0.5 * (a + d) + std::sqrt(0.25 * (a - d) * (a - d) + b * b);
    }
    default:
      return largestEigenvalue(m);
  }
}

namespace {

// atan on [0, 1], Abramowitz and Stegun 4.4.49: |error| <= 1e-5 (1.15e-5 measured with the
// coefficients as printed). Only for the conservative test below, never for a result.
double atanUnit(double t) {
  const double t2 = t * t;
  return t * (0.9998660 + t2 * (-0.3302995 + t2 * (0.1801410 + t2 * (-0.0851330 + t2 * 0.0208351))));
}

// atan2 within 2e-5 rad of std::atan2 wherever |result| < pi - 2e-5 (where the two do not
// straddle the +-pi cut). No libm call.
double roughAtan2(double y, double x) {
  const double ay = std::abs(y), ax = std::abs(x);
  if (!(ax > 0.0 || ay > 0.0)) return 0.0;
  double a = ay <= ax ? atanUnit(ay / ax) : 0.5 * kPi - atanUnit(ax / ay);
  if (x < 0.0) a = kPi - a;
  return y < 0.0 ? -a : a;
}

// Whether a target's rough angle `rough` lies inside [lower, upper] by more than the rough
// angles' error many times over (free axes: anywhere).
bool roughlyInside(double rough, double lower, double upper) {
  constexpr double kMargin = 1e-4;  // [rad], 5x the error of roughAtan2
  return !axisLimited(lower, upper) || (rough >= lower + kMargin && rough <= upper - kMargin);
}

// True only when nearestAdmissibleFrom(target, jointAngles(target), ...) would return
// jointAngles(target) itself with no axis clamped: the joint has no locked axis, and the target's
// joint angles, computed roughly without libm (within 2e-5 rad), lie inside every limited axis by
// more than 1e-4 rad, away from the gimbal lock (|sin y| < 0.99) and from the +-pi cut of x and z.
// The drive then aims at the target itself, bit for bit as the search would have it. A target near
// a limit, past one, or near the lock answers false: the caller runs the search (conservative).
bool provablyAdmissible(const DriveJoint& joint, const Quat& target) {
  const Vec3& lower = joint.angularLower;
  const Vec3& upper = joint.angularUpper;
  if (axisLocked(lower.x, upper.x) || axisLocked(lower.y, upper.y) || axisLocked(lower.z, upper.z))
    return false;
  // The matrix elements jointAngles reads (the same arithmetic: the same values).
  const glm::dmat3 m = glm::mat3_cast(normalizeOrIdentity(target));
  const auto r = [&m](int row, int col) { return m[col][row]; };
  const double sinY = r(0, 2);
  if (!(std::abs(sinY) < 0.99)) return false;
  constexpr double kCut = kPi - 1e-3;
  const double x = roughAtan2(-r(1, 2), r(2, 2));
  const double z = roughAtan2(-r(0, 1), r(0, 0));
  const double y = roughAtan2(sinY, std::sqrt(1.0 - sinY * sinY));  // asin, cos y >= 0.14
  return std::abs(x) < kCut && std::abs(z) < kCut && roughlyInside(x, lower.x, upper.x) &&
         roughlyInside(y, lower.y, upper.y) && roughlyInside(z, lower.z, upper.z);
}

// computeJointDrive, with a memo of the admissible target (ExplicitDrive) or without (null).
// `angles` false: the caller reads torqueWorld alone (DriveJob without details), so a target
// provablyAdmissible() skips the joint angles and the search, and a joint without locked axes the
// current angles; out.currentAngles and out.targetAngles are then not all written (zero).
[[gnu::flatten]] JointDriveOutput jointDrive(const DriveJoint& joint, const JointDriveInput& in,
                                             drive_detail::AdmissibleTarget* memo, bool angles = true) {
  JointDriveOutput out;
  if (!isFinite(in.worldFromBodyA) || !isFinite(in.worldFromBodyB) || !isFinite(in.angularVelocityA) ||
      !isFinite(in.angularVelocityB) || !isFinite(in.target) || !isFinite(in.targetVelocity) ||
      !std::isfinite(in.weight)) {
    out.valid = false;
    return out;
  }
  const Quat worldFromJointA = in.worldFromBodyA * joint.bodyAFromJoint;
  const Quat worldFromJointB = in.worldFromBodyB * joint.bodyBFromJoint;
  const Quat qRel = glm::conjugate(worldFromJointA) * worldFromJointB;
  if (!angles && memo == nullptr && provablyAdmissible(joint, in.target)) {
    // As below with rawTargetAngles == out.targetAngles, adjusted all false: target = in.target
    // and admissibleTargetVelocity returns in.targetVelocity unchanged.
    out.error = shortArcRotationVector(in.target * glm::conjugate(qRel));
    out.relativeVelocity = glm::conjugate(worldFromJointA) * (in.angularVelocityB - in.angularVelocityA);
    out.torque = driveTorque(out.error, out.relativeVelocity, in.targetVelocity,
                             weightedGains(joint.gains, in.weight), &out.saturated);
    out.torqueWorld = worldFromJointA * out.torque;
    return out;
  }

  // Per-DOF handling in the joint's own angle convention (the one its limits use). The current
  // angles enter the admissible target about locked axes alone: without locked axes and without
  // details they are not computed (nearestAdmissibleFrom reads lockedAngles about locked axes only).
  const bool anyLocked = axisLocked(joint.angularLower.x, joint.angularUpper.x) ||
                         axisLocked(joint.angularLower.y, joint.angularUpper.y) ||
                         axisLocked(joint.angularLower.z, joint.angularUpper.z);
  if (angles || anyLocked) out.currentAngles = jointAngles(qRel);
  // The admissible target depends on the target and on the current angles about locked axes only
  // (nearestAdmissibleAngles): a memo with the same inputs holds the same values.
  Vec3 locked{0.0};
  for (int i = 0; i < 3; ++i) {
    if (axisLocked(joint.angularLower[i], joint.angularUpper[i])) locked[i] = out.currentAngles[i];
  }
  Vec3 rawTargetAngles;
  glm::bvec3 adjusted{false};
  Quat target;
  Searched searched;  // the search's rotation and sines when it ran (not with the memo)
  if (memo != nullptr && memo->known && sameBits(memo->given, in.target) && sameBits(memo->locked, locked)) {
    rawTargetAngles = memo->raw;
    out.targetAngles = memo->angles;
    adjusted = memo->clamped;
    target = memo->target;
  } else {
    rawTargetAngles = jointAngles(in.target);
    out.targetAngles = nearestAdmissibleFrom(in.target, rawTargetAngles, out.currentAngles,
                                             joint.angularLower, joint.angularUpper, &adjusted, &searched);
    // Unchanged angles: keep the given quaternion bit for bit (no round trip through angles).
    const bool changed = out.targetAngles != rawTargetAngles;
    target = !changed ? in.target : searched.ran ? searched.rotation : fromJointAngles(out.targetAngles);
    if (memo != nullptr)
      *memo = {true, in.target, locked, rawTargetAngles, out.targetAngles, adjusted, target};
  }

  out.error = shortArcRotationVector(target * glm::conjugate(qRel));
  out.relativeVelocity = glm::conjugate(worldFromJointA) * (in.angularVelocityB - in.angularVelocityA);
  const Vec3 targetVelocity = admissibleVelocity(in.targetVelocity, rawTargetAngles, out.targetAngles,
                                                 adjusted, searched.ran ? &searched.trig : nullptr);

  out.torque = driveTorque(out.error, out.relativeVelocity, targetVelocity,
                           weightedGains(joint.gains, in.weight), &out.saturated);
  out.torqueWorld = worldFromJointA * out.torque;
  return out;
}

}  // namespace

JointDriveOutput computeJointDrive(const DriveJoint& joint, const JointDriveInput& in) {
  return jointDrive(joint, in, nullptr);
}

JointDriveOutput drive_detail::computeJointDrive(const DriveJoint& joint, const JointDriveInput& in,
                                                 AdmissibleTarget& memo) {
  return jointDrive(joint, in, &memo);
}

// --- DriveJob ---

bool DriveJob::validate() const {
  const size_t n = joints.size();
  if (jointTargets.size() != n || torquesWorld.size() != n) return false;
  if (!targetVelocities.empty() && targetVelocities.size() != n) return false;
  if (!weights.empty() && weights.size() != n) return false;
  if (!details.empty() && details.size() != n) return false;
  if (angularVelocities.size() != worldFromBodies.size()) return false;
  for (const DriveJoint& j : joints) {
    if (!bodyIndexOk(j.bodyA, worldFromBodies.size()) || !bodyIndexOk(j.bodyB, worldFromBodies.size()))
      return false;
  }
  return true;
}

bool DriveJob::run() const {
  if (!validate()) return false;
  for (size_t i = 0; i < joints.size(); ++i) {
    const DriveJoint& j = joints[i];
    const auto a = static_cast<size_t>(j.bodyA);
    const auto b = static_cast<size_t>(j.bodyB);
    JointDriveInput in;
    in.worldFromBodyA = worldFromBodies[a];
    in.worldFromBodyB = worldFromBodies[b];
    in.angularVelocityA = angularVelocities[a];
    in.angularVelocityB = angularVelocities[b];
    in.target = jointTargets[i];
    in.targetVelocity = targetVelocities.empty() ? Vec3{0.0} : targetVelocities[i];
    in.weight = weights.empty() ? 1.0 : weights[i];
    const JointDriveOutput out = jointDrive(j, in, nullptr, !details.empty());
    torquesWorld[i] = out.torqueWorld;
    if (!details.empty()) details[i] = out;
  }
  return true;
}

// --- ExplicitDrive ---

ExplicitDrive::ExplicitDrive(PhysicsWorld& world, std::span<const BodyId> bodies,
                             std::span<const DriveJoint> joints)
    : world_(world),
      bodies_(bodies.begin(), bodies.end()),
      joints_(joints.begin(), joints.end()),
      targets_(joints.size(), Quat{1.0, 0.0, 0.0, 0.0}),
      targetVelocities_(joints.size(), Vec3{0.0}),
      weights_(joints.size(), 1.0),
      bodyRotations_(bodies.size(), Quat{1.0, 0.0, 0.0, 0.0}),
      bodyAngularVelocities_(bodies.size(), Vec3{0.0}),
      bodyImpulses_(bodies.size(), Vec3{0.0}),
      results_(joints.size()),
      bodyInverseInertia_(bodies.size(), glm::dmat3(0.0)),
      stabilityScales_(joints.size(), 1.0),
      admissible_(joints.size()) {
  for ([[maybe_unused]] const DriveJoint& j : joints_) {
    assert(bodyIndexOk(j.bodyA, bodies_.size()) && "ExplicitDrive: joint body A index out of range");
    assert(bodyIndexOk(j.bodyB, bodies_.size()) && "ExplicitDrive: joint body B index out of range");
  }
  for (size_t b = 0; b < bodies_.size(); ++b) {
    // Body-space inverse inertia from the world tensor: R^T I_world R, inverted. A tensor that is
    // not positive definite (a static body) counts as immovable.
    const glm::dmat3 r = glm::mat3_cast(world_.transform(bodies_[b]).rotation);
    const glm::dmat3 inertia = glm::transpose(r) * world_.worldInertia(bodies_[b]) * r;
    const double det = glm::determinant(inertia);
    if (std::isfinite(det) && det > 0.0 && inertia[0][0] > 0.0)
      bodyInverseInertia_[b] = glm::inverse(inertia);
  }
}

bool ExplicitDrive::setStabilityLimit(double limit) {
  if (!std::isfinite(limit) || limit < 0.0) return false;
  stabilityLimit_ = limit;
  return true;
}

bool ExplicitDrive::setTarget(int joint, const Quat& target, const Vec3& targetVelocity) {
  assert(joint >= 0 && joint < jointCount() && "ExplicitDrive: joint index out of range");
  if (!isFinite(target) || !isFinite(targetVelocity) || glm::dot(target, target) < 1e-12) return false;
  targets_[static_cast<size_t>(joint)] = glm::normalize(target);
  targetVelocities_[static_cast<size_t>(joint)] = targetVelocity;
  return true;
}

bool ExplicitDrive::setTargets(std::span<const Quat> targets, std::span<const Vec3> targetVelocities) {
  if (targets.size() != joints_.size()) return false;
  if (!targetVelocities.empty() && targetVelocities.size() != joints_.size()) return false;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (!isFinite(targets[i]) || glm::dot(targets[i], targets[i]) < 1e-12) return false;
    if (!targetVelocities.empty() && !isFinite(targetVelocities[i])) return false;
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    targets_[i] = glm::normalize(targets[i]);
    targetVelocities_[i] = targetVelocities.empty() ? Vec3{0.0} : targetVelocities[i];
  }
  return true;
}

bool ExplicitDrive::setWeight(int joint, double weight) {
  assert(joint >= 0 && joint < jointCount() && "ExplicitDrive: joint index out of range");
  if (!std::isfinite(weight) || weight < 0.0 || weight > 1.0) return false;
  weights_[static_cast<size_t>(joint)] = weight;
  return true;
}

bool ExplicitDrive::setWeight(double weight) {
  if (!std::isfinite(weight) || weight < 0.0 || weight > 1.0) return false;
  std::fill(weights_.begin(), weights_.end(), weight);
  return true;
}

void ExplicitDrive::onSubstep(double substepDt) {
  if (!enabled_ || !std::isfinite(substepDt) || substepDt <= 0.0) return;
  for (size_t b = 0; b < bodies_.size(); ++b) {
    bodyRotations_[b] = world_.transform(bodies_[b]).rotation;
    bodyAngularVelocities_[b] = world_.angularVelocity(bodies_[b]);
    bodyImpulses_[b] = Vec3{0.0};
  }
  const bool equalAndOpposite = application_ == TorqueApplication::EqualAndOpposite;
  for (size_t i = 0; i < joints_.size(); ++i) {
    const DriveJoint& j = joints_[i];
    const auto a = static_cast<size_t>(j.bodyA);
    const auto b = static_cast<size_t>(j.bodyB);
    JointDriveInput in;
    in.worldFromBodyA = bodyRotations_[a];
    in.worldFromBodyB = bodyRotations_[b];
    in.angularVelocityA = bodyAngularVelocities_[a];
    in.angularVelocityB = bodyAngularVelocities_[b];
    in.target = targets_[i];
    in.targetVelocity = targetVelocities_[i];
    in.weight = weights_[i];
    stabilityScales_[i] = 1.0;
    // The gains the law runs with: the weight first (Kp * w, Kd, maxTorque * w), then the guard,
    // then the end-of-substep law; handed to computeJointDrive at weight 1.
    DriveJoint effective = j;
    effective.gains = weightedGains(j.gains, in.weight);
    in.weight = 1.0;
    if (stabilityLimit_ > 0.0) {
      // Scale Kp and Kd together, keeping their ratio.
      const double inverseInertia = jointInverseInertia(j, in.worldFromBodyA, in.worldFromBodyB,
                                                        bodyInverseInertia_[a], bodyInverseInertia_[b]);
      const double index = explicitStabilityIndex(effective.gains, inverseInertia, substepDt);
      if (index > stabilityLimit_) {
        const double scale = stabilityLimit_ / index;
        stabilityScales_[i] = scale;
        effective.gains.stiffness *= scale;
        effective.gains.damping *= scale;
      }
    }
    drive_detail::AdmissibleTarget& memo = admissible_[i];
    if (!endOfSubstepLaw_) {
      results_[i] = drive_detail::computeJointDrive(effective, in, memo);
    } else {
      // tau = (1 + h D M)^-1 (Kp e + D (wT - w)), D = Kd + h Kp, M = I_A^-1 + I_B^-1 in J_A: the
      // law with damping D and no clamp, then the matrix, then the total clamp.
      const double maxTorque = effective.gains.maxTorque;
      effective.gains.damping += substepDt * effective.gains.stiffness;
      effective.gains.maxTorque = std::numeric_limits<double>::infinity();
      JointDriveOutput out = drive_detail::computeJointDrive(effective, in, memo);
      if (out.valid) {
        const glm::dmat3 m = relativeInverseInertia(j, in.worldFromBodyA, in.worldFromBodyB,
                                                    bodyInverseInertia_[a], bodyInverseInertia_[b]);
        const glm::dmat3 system = glm::dmat3(1.0) + (substepDt * effective.gains.damping) * m;
        Vec3 tau = glm::inverse(system) * out.torque;
        const double magnitude = glm::length(tau);
        out.saturated = magnitude > maxTorque;
        if (out.saturated) tau *= maxTorque / magnitude;
        out.torque = tau;
        out.torqueWorld = (in.worldFromBodyA * j.bodyAFromJoint) * tau;
      }
      results_[i] = out;
    }
    const Vec3 impulse = results_[i].torqueWorld * substepDt;
    bodyImpulses_[b] += impulse;
    if (equalAndOpposite) bodyImpulses_[a] -= impulse;
  }
  for (size_t b = 0; b < bodies_.size(); ++b) {
    const Vec3& impulse = bodyImpulses_[b];
    if (impulse == Vec3{0.0}) continue;
    // A sleeping body ignores impulses: a drive with work to do keeps its bodies awake.
    if (world_.isSleeping(bodies_[b])) world_.wake(bodies_[b]);
    world_.applyAngularImpulse(bodies_[b], impulse);
  }
}

int ExplicitDrive::saturatedJoints() const {
  return static_cast<int>(
      std::count_if(results_.begin(), results_.end(), [](const auto& r) { return r.saturated; }));
}

int ExplicitDrive::invalidJoints() const {
  return static_cast<int>(
      std::count_if(results_.begin(), results_.end(), [](const auto& r) { return !r.valid; }));
}

// --- Implicit drive ---

JointMotorSettings implicitMotorSettings(const DriveJoint& joint, const Quat& target, double weight,
                                         const Vec3& targetVelocity, ServoTargets mode) {
  JointMotorSettings motor;
  const bool nearest = mode == ServoTargets::Nearest;
  motor.angleRateRows = nearest;
  if (!isFinite(target) || glm::dot(target, target) < 1e-12) return motor;  // disabled
  const DriveGains gains = weightedGains(joint.gains, weight);
  const Quat unit = glm::normalize(target);
  const Vec3 raw = jointAngles(unit);
  glm::bvec3 clamped{false};
  const Vec3 angles = nearest ? nearestAdmissibleAngles(unit, joint.angularLower, joint.angularLower,
                                                        joint.angularUpper, &clamped)
                              : admissibleTargetAngles(raw, joint.angularLower, joint.angularLower,
                                                       joint.angularUpper, &clamped);
  for (int i = 0; i < 3; ++i) {
    const bool locked = axisLocked(joint.angularLower[i], joint.angularUpper[i]);
    motor.stiffness[i] = locked ? 0.0 : gains.stiffness;
    motor.damping[i] = locked ? 0.0 : gains.damping;
  }
  motor.enabled = true;
  motor.target = angles == raw ? unit : fromJointAngles(angles);
  motor.maxTorque = gains.maxTorque;
  // A moving target: its joint-angle rates on the open axes whose target was not clamped (a
  // clamped target does not move); none near gimbal lock, where the rates are undefined.
  if (isFinite(targetVelocity) && targetVelocity != Vec3{0.0} && std::abs(std::cos(raw.y)) >= kGimbalCos) {
    const Vec3 rates = jointAngleRates(targetVelocity, angleTrig(raw));
    for (int i = 0; i < 3; ++i) {
      const bool moving = motor.stiffness[i] > 0.0 || motor.damping[i] > 0.0;
      motor.targetRates[i] = moving && (nearest ? !clamped[i] : angles[i] == raw[i]) ? rates[i] : 0.0;
    }
  }
  return motor;
}

void applyImplicitDrive(PhysicsWorld& world, std::span<const JointId> engineJoints,
                        std::span<const DriveJoint> joints, std::span<const Quat> targets,
                        std::span<const double> weights, ServoTargets mode) {
  applyImplicitDrive(world, engineJoints, joints, targets, {}, weights, mode);
}

void applyImplicitDrive(PhysicsWorld& world, std::span<const JointId> engineJoints,
                        std::span<const DriveJoint> joints, std::span<const Quat> targets,
                        std::span<const Vec3> targetVelocities, std::span<const double> weights,
                        ServoTargets mode) {
  assert(engineJoints.size() == joints.size() && targets.size() == joints.size() &&
         (weights.empty() || weights.size() == joints.size()) &&
         (targetVelocities.empty() || targetVelocities.size() == joints.size()) &&
         "applyImplicitDrive: span sizes differ");
  for (size_t i = 0; i < joints.size(); ++i) {
    world.setJointMotor(
        engineJoints[i],
        implicitMotorSettings(joints[i], targets[i], weights.empty() ? 1.0 : weights[i],
                              targetVelocities.empty() ? Vec3{0.0} : targetVelocities[i], mode));
  }
}

void disableImplicitDrive(PhysicsWorld& world, std::span<const JointId> engineJoints) {
  for (const JointId joint : engineJoints) world.setJointMotor(joint, JointMotorSettings{});
}

}  // namespace handoff
