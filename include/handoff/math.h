// Rigid transforms and quaternion helpers (SPEC.md section 1 and 3).
//
// Conventions: column vectors, `p_X = T_XY * p_Y`, so `T_XZ = T_XY * T_YZ`. A variable holding
// T_XY is named `xFromY` (worldFromBody = worldFromBone * boneFromBody). Quaternions are unit,
// glm's storage; glm::dquat(w, x, y, z). All angles in radians, lengths in metres.
//
// Thread-safety: value types and pure functions.
#pragma once

#include <glm/glm.hpp>
#include <glm/gtc/quaternion.hpp>

#include <cmath>

namespace handoff {

using Vec3 = glm::dvec3;
using Quat = glm::dquat;

inline constexpr double kPi = 3.14159265358979323846;

/// A rigid transform T_XY: rotation followed by translation, p_X = rotation * p_Y + translation.
/// Never carries scale: scale is baked into geometry when assets are built (SPEC.md section 1).
struct Transform {
  Quat rotation{1.0, 0.0, 0.0, 0.0};  ///< [unit] [default identity]
  Vec3 translation{0.0};              ///< [m] [default 0]

  static Transform identity() { return {}; }
  static Transform fromTranslation(const Vec3& t) { return {Quat{1.0, 0.0, 0.0, 0.0}, t}; }
  static Transform fromRotation(const Quat& q) { return {q, Vec3{0.0}}; }

  /// Composition: (T_XY * T_YZ) = T_XZ.
  Transform operator*(const Transform& yFromZ) const {
    return {rotation * yFromZ.rotation, rotation * yFromZ.translation + translation};
  }
  /// p_X = T_XY * p_Y.
  Vec3 transformPoint(const Vec3& pointY) const { return rotation * pointY + translation; }
  /// A direction: rotation only.
  Vec3 transformVector(const Vec3& vectorY) const { return rotation * vectorY; }
  /// T_YX = inverse(T_XY).
  Transform inverse() const {
    const Quat inv = glm::conjugate(rotation);
    return {inv, inv * -translation};
  }
};

/// True when every component is finite.
bool isFinite(const Vec3& v);
bool isFinite(const Quat& q);
bool isFinite(const Transform& t);

/// `q` normalised; identity when `q` has (near) zero length or is not finite.
Quat normalizeOrIdentity(const Quat& q);

/// The representative of q with w >= 0 (the short arc when q is a delta rotation).
Quat shortArc(const Quat& q);

/// The representative of `q` on the same hemisphere as `reference` (dot >= 0).
Quat alignHemisphere(const Quat& q, const Quat& reference);

/// Spherical linear interpolation along the short arc, t in [0, 1].
Quat slerpShortArc(const Quat& a, const Quat& b, double t);

/// Linear blend of two rigid transforms: lerp of translations, short-arc slerp of rotations.
Transform blend(const Transform& a, const Transform& b, double weight);

/// Rotation vector (axis * angle, radians) <-> quaternion. toRotationVector returns the
/// short-arc vector (|result| <= pi) and zero for a (near) identity rotation, without NaN.
Quat fromRotationVector(const Vec3& rotationVector);
Vec3 toRotationVector(const Quat& q);

/// Rotation taking unit direction `from` onto unit direction `to` along the shortest arc.
/// For opposite directions, a half turn about an axis perpendicular to `from`.
Quat rotationBetween(const Vec3& from, const Vec3& to);

/// Result of the finite-difference angular velocity of SPEC.md section 3.
struct AngularVelocity {
  Vec3 omega{0.0};     ///< World angular velocity. [rad/s]
  double angle = 0.0;  ///< Short-arc angle between the samples. [rad] [0, pi]
  /// The raw delta q1 * inverse(q0) had w < 0. For sign-continuous inputs (consecutive clip or
  /// engine samples) that means the rotation between the samples exceeded half a turn and
  /// `omega` is the short arc the other way round: sample more densely or use the animation's
  /// own angular velocity. For inputs of arbitrary sign (q versus -q) it is only informative.
  bool beyondHalfTurn = false;
};

/// Angular velocity taking orientation q0 to q1 over dt, exactly as SPEC.md section 3:
/// q_d = normalize(q1 * inverse(q0)); if q_d.w < 0 negate it; theta = 2 atan2(|v|, w);
/// omega = theta * v / (|v| dt); zero when |v| is near zero. Precondition: dt > 0.
AngularVelocity angularVelocity(const Quat& q0, const Quat& q1, double dt);

/// Swing-twist decomposition about a unit `twistAxis` (in the frame of q): q = swing * twist,
/// twist a rotation about twistAxis, swing a rotation about an axis perpendicular to it.
struct SwingTwist {
  Quat swing{1.0, 0.0, 0.0, 0.0};
  Quat twist{1.0, 0.0, 0.0, 0.0};
};
SwingTwist decomposeSwingTwist(const Quat& q, const Vec3& twistAxis);

/// Signed twist angle of q about a unit axis. [rad] (-pi, pi]
double twistAngle(const Quat& q, const Vec3& twistAxis);

/// Angle between two rotations (of the short arc from a to b). [rad] [0, pi]
double angleBetween(const Quat& a, const Quat& b);

/// Rotation from intrinsic Euler angles about the named axes, applied in the listed order:
/// e.g. order "ZYX" gives Rz(a0) * Ry(a1) * Rx(a2) (the BVH convention). Radians.
Quat fromEulerIntrinsic(const char order[3], const Vec3& anglesInOrder);

}  // namespace handoff
