#include "handoff/math.h"

#include <algorithm>

namespace handoff {
namespace {
constexpr double kSmallAngleSin = 1e-12;  // |v| below this is treated as no rotation
}

bool isFinite(const Vec3& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

bool isFinite(const Quat& q) {
  return std::isfinite(q.w) && std::isfinite(q.x) && std::isfinite(q.y) && std::isfinite(q.z);
}

bool isFinite(const Transform& t) { return isFinite(t.rotation) && isFinite(t.translation); }

Quat normalizeOrIdentity(const Quat& q) {
  const double len2 = glm::dot(q, q);
  if (!std::isfinite(len2) || len2 < 1e-24) return Quat{1.0, 0.0, 0.0, 0.0};
  return q * (1.0 / std::sqrt(len2));
}

Quat shortArc(const Quat& q) { return q.w < 0.0 ? -q : q; }

Quat alignHemisphere(const Quat& q, const Quat& reference) { return glm::dot(q, reference) < 0.0 ? -q : q; }

Quat slerpShortArc(const Quat& a, const Quat& b, double t) {
  const Quat bAligned = alignHemisphere(b, a);
  const double cosTheta = std::clamp(glm::dot(a, bAligned), -1.0, 1.0);
  if (cosTheta > 1.0 - 1e-12) {
    // Nearly equal: normalised lerp avoids dividing by sin(theta) ~ 0.
    return normalizeOrIdentity(a * (1.0 - t) + bAligned * t);
  }
  const double theta = std::acos(cosTheta);
  const double sinTheta = std::sin(theta);
  const double wa = std::sin((1.0 - t) * theta) / sinTheta;
  const double wb = std::sin(t * theta) / sinTheta;
  return normalizeOrIdentity(a * wa + bAligned * wb);
}

Transform blend(const Transform& a, const Transform& b, double weight) {
  return {slerpShortArc(a.rotation, b.rotation, weight), glm::mix(a.translation, b.translation, weight)};
}

Quat fromRotationVector(const Vec3& rotationVector) {
  const double angle = glm::length(rotationVector);
  if (angle < 1e-15) {
    // First-order expansion keeps tiny rotations exact to machine precision.
    return normalizeOrIdentity(
        Quat{1.0, 0.5 * rotationVector.x, 0.5 * rotationVector.y, 0.5 * rotationVector.z});
  }
  const Vec3 axis = rotationVector / angle;
  const double s = std::sin(0.5 * angle);
  return Quat{std::cos(0.5 * angle), axis.x * s, axis.y * s, axis.z * s};
}

Vec3 toRotationVector(const Quat& q) {
  const Quat p = shortArc(q);
  const Vec3 v{p.x, p.y, p.z};
  const double sinHalf = glm::length(v);
  if (sinHalf < kSmallAngleSin) return Vec3{0.0};
  const double angle = 2.0 * std::atan2(sinHalf, p.w);
  return v * (angle / sinHalf);
}

Quat rotationBetween(const Vec3& from, const Vec3& to) {
  const Vec3 f = glm::normalize(from);
  const Vec3 t = glm::normalize(to);
  const double d = glm::dot(f, t);
  if (d < -1.0 + 1e-12) {
    Vec3 axis = glm::cross(Vec3{1.0, 0.0, 0.0}, f);
    if (glm::dot(axis, axis) < 1e-12) axis = glm::cross(Vec3{0.0, 1.0, 0.0}, f);
    axis = glm::normalize(axis);
    return Quat{0.0, axis.x, axis.y, axis.z};
  }
  const Vec3 c = glm::cross(f, t);
  return normalizeOrIdentity(Quat{1.0 + d, c.x, c.y, c.z});
}

AngularVelocity angularVelocity(const Quat& q0, const Quat& q1, double dt) {
  AngularVelocity result;
  Quat qd = normalizeOrIdentity(q1 * glm::inverse(q0));
  if (qd.w < 0.0) {
    qd = -qd;
    result.beyondHalfTurn = true;
  }
  const Vec3 v{qd.x, qd.y, qd.z};
  const double vLength = glm::length(v);
  if (vLength < kSmallAngleSin) {
    result.beyondHalfTurn = false;  // identity either way
    return result;
  }
  const double theta = 2.0 * std::atan2(vLength, qd.w);
  result.angle = theta;
  result.omega = v * (theta / (vLength * dt));
  return result;
}

SwingTwist decomposeSwingTwist(const Quat& q, const Vec3& twistAxis) {
  const Vec3 axis = glm::normalize(twistAxis);
  const Vec3 v{q.x, q.y, q.z};
  const Vec3 projected = glm::dot(v, axis) * axis;
  SwingTwist result;
  Quat twist{q.w, projected.x, projected.y, projected.z};
  const double len2 = glm::dot(twist, twist);
  if (len2 < 1e-24) {
    // Swing of exactly half a turn: the twist is undefined, take identity.
    result.twist = Quat{1.0, 0.0, 0.0, 0.0};
  } else {
    result.twist = twist * (1.0 / std::sqrt(len2));
  }
  result.swing = q * glm::conjugate(result.twist);
  return result;
}

double twistAngle(const Quat& q, const Vec3& twistAxis) {
  const Quat twist = shortArc(decomposeSwingTwist(q, twistAxis).twist);
  const Vec3 axis = glm::normalize(twistAxis);
  const double s = glm::dot(Vec3{twist.x, twist.y, twist.z}, axis);
  return 2.0 * std::atan2(s, twist.w);
}

double angleBetween(const Quat& a, const Quat& b) {
  // atan2 of the delta keeps full precision near zero, where acos(dot) does not.
  const Quat d = shortArc(glm::conjugate(a) * b);
  return 2.0 * std::atan2(glm::length(Vec3{d.x, d.y, d.z}), d.w);
}

Quat fromEulerIntrinsic(const char order[3], const Vec3& anglesInOrder) {
  Quat q{1.0, 0.0, 0.0, 0.0};
  for (int i = 0; i < 3; ++i) {
    Vec3 axis{0.0};
    switch (order[i]) {
      case 'X':
      case 'x':
        axis = Vec3{1.0, 0.0, 0.0};
        break;
      case 'Y':
      case 'y':
        axis = Vec3{0.0, 1.0, 0.0};
        break;
      default:
        axis = Vec3{0.0, 0.0, 1.0};
        break;
    }
    q = q * glm::angleAxis(anglesInOrder[i], axis);
  }
  return q;
}

}  // namespace handoff
