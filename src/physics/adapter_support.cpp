// The adapters' shared plumbing (physics/adapter_support.h): messages, settings, validation.
#include "physics/adapter_support.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

namespace handoff::adapter {
namespace {

bool finite(double v) { return std::isfinite(v); }

}  // namespace

std::string fmt(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::string fmt(const Vec3& v) {
  std::ostringstream s;
  s << "(" << v.x << ", " << v.y << ", " << v.z << ")";
  return s.str();
}

WorldSettings sanitiseWorldSettings(WorldSettings s) {
  if (!isFinite(s.gravity)) s.gravity = Vec3{0.0, -9.81, 0.0};
  s.solverIterations = std::max(1, s.solverIterations);
  s.jointIterationFactor = std::max(1, s.jointIterationFactor);
  if (!finite(s.jointErp)) s.jointErp = 0.2;
  s.jointErp = std::clamp(s.jointErp, 0.0, 1.0);
  if (!finite(s.sleepLinearSpeed) || s.sleepLinearSpeed < 0.0) s.sleepLinearSpeed = 0.03;
  if (!finite(s.sleepTime) || s.sleepTime <= 0.0) s.sleepTime = 0.5;
  if (!(s.worldHalfExtent > 0.0)) s.worldHalfExtent = 2000.0;
  s.maxContactEvents = std::clamp(s.maxContactEvents, 0, 1 << 20);
  return s;
}

Status validateBodyDesc(const BodyDesc& desc) {
  const ShapeDesc& s = desc.shape;
  switch (s.type) {
    case ShapeType::Sphere:
      if (!(finite(s.radius) && s.radius > 0.0))
        return Error{"createBody: shape.radius must be finite and > 0 (got " + fmt(s.radius) + ")"};
      break;
    case ShapeType::Capsule:
      if (!(finite(s.radius) && s.radius > 0.0))
        return Error{"createBody: shape.radius must be finite and > 0 (got " + fmt(s.radius) + ")"};
      if (!(finite(s.halfHeight) && s.halfHeight >= 0.0))
        return Error{"createBody: shape.halfHeight must be finite and >= 0 (got " + fmt(s.halfHeight) + ")"};
      break;
    case ShapeType::Box:
      if (!(isFinite(s.halfExtents) && s.halfExtents.x > 0.0 && s.halfExtents.y > 0.0 &&
            s.halfExtents.z > 0.0))
        return Error{"createBody: shape.halfExtents must be finite and > 0 (got " + fmt(s.halfExtents) + ")"};
      break;
    case ShapeType::None:
    default:
      if (!s.created.valid())
        return Error{
            "createBody: shape.type must be Sphere, Capsule or Box, or shape.created a shape made by "
            "createShape"};
      break;
  }
  if (s.created.valid() && s.type != ShapeType::None)
    return Error{std::string("createBody: shape.created is set, so shape.type must be None (got ") +
                 shapeTypeName(s.type) + ")"};
  const bool movable = desc.motion != MotionType::Static;
  if (movable && !(finite(desc.mass) && desc.mass > 0.0))
    return Error{"createBody: mass must be finite and > 0 for a dynamic or kinematic body (got " +
                 fmt(desc.mass) + ")"};
  const Vec3& I = desc.inertia;
  const bool inertiaZero = I.x == 0.0 && I.y == 0.0 && I.z == 0.0;
  if (!inertiaZero && !(isFinite(I) && I.x > 0.0 && I.y > 0.0 && I.z > 0.0))
    return Error{"createBody: inertia must be all zero (computed from the shape) or finite and > 0 (got " +
                 fmt(I) + ")"};
  if (!isFinite(desc.worldFromBody)) return Error{"createBody: worldFromBody must be finite"};
  if (glm::dot(desc.worldFromBody.rotation, desc.worldFromBody.rotation) < 1e-12)
    return Error{"createBody: worldFromBody.rotation must be a unit quaternion (got zero)"};
  if (!(finite(desc.friction) && desc.friction >= 0.0))
    return Error{"createBody: friction must be finite and >= 0 (got " + fmt(desc.friction) + ")"};
  if (!(finite(desc.rollingFriction) && desc.rollingFriction >= 0.0))
    return Error{"createBody: rollingFriction must be finite and >= 0 (got " + fmt(desc.rollingFriction) +
                 ")"};
  if (!(finite(desc.restitution) && desc.restitution >= 0.0 && desc.restitution <= 1.0))
    return Error{"createBody: restitution must be in [0, 1] (got " + fmt(desc.restitution) + ")"};
  if (!(finite(desc.linearDamping) && desc.linearDamping >= 0.0))
    return Error{"createBody: linearDamping must be finite and >= 0 (got " + fmt(desc.linearDamping) + ")"};
  if (!(finite(desc.angularDamping) && desc.angularDamping >= 0.0))
    return Error{"createBody: angularDamping must be finite and >= 0 (got " + fmt(desc.angularDamping) + ")"};
  return {};
}

Status validateJointDesc(const JointDesc& desc) {
  if (desc.bodyA == desc.bodyB) return Error{"createJoint: bodyA and bodyB are the same body"};
  if (!isFinite(desc.bodyAFromJoint)) return Error{"createJoint: bodyAFromJoint must be finite"};
  if (!isFinite(desc.bodyBFromJoint)) return Error{"createJoint: bodyBFromJoint must be finite"};
  if (glm::dot(desc.bodyAFromJoint.rotation, desc.bodyAFromJoint.rotation) < 1e-12)
    return Error{"createJoint: bodyAFromJoint.rotation must be a unit quaternion (got zero)"};
  if (glm::dot(desc.bodyBFromJoint.rotation, desc.bodyBFromJoint.rotation) < 1e-12)
    return Error{"createJoint: bodyBFromJoint.rotation must be a unit quaternion (got zero)"};
  if (std::isnan(desc.breakForce) || !(desc.breakForce > 0.0))
    return Error{"createJoint: breakForce must be > 0 (infinite: never breaks), got " + fmt(desc.breakForce)};
  if (std::isnan(desc.breakTorque) || !(desc.breakTorque > 0.0))
    return Error{"createJoint: breakTorque must be > 0 (infinite: never breaks), got " +
                 fmt(desc.breakTorque)};
  static const char* const kAxis[3] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    const double lower = desc.angularLower[i], upper = desc.angularUpper[i];
    if (!finite(lower))
      return Error{std::string("createJoint: angularLower.") + kAxis[i] +
                   " must be finite (lower > upper frees it)"};
    if (!finite(upper))
      return Error{std::string("createJoint: angularUpper.") + kAxis[i] +
                   " must be finite (lower > upper frees it)"};
    if (lower > upper) continue;  // free
    const double bound = i == 1 ? 0.5 * kPi : kPi;
    if (lower < -bound || upper > bound)
      return Error{std::string("createJoint: angular limits about ") + kAxis[i] + " must lie in [" +
                   fmt(-bound) + ", " + fmt(bound) + "] (got [" + fmt(lower) + ", " + fmt(upper) + "])" +
                   (i == 1 ? ": the middle Euler axis is singular at +-pi/2" : "")};
  }
  return {};
}

}  // namespace handoff::adapter
