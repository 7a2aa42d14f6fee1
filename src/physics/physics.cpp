// Engine-agnostic parts of the physics interface: the joint-angle convention and mass
// properties of the primitive shapes.
#include "handoff/physics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace handoff {

bool PhysicsWorld::addSubstepListener(SubstepListener* listener, bool first) {
  if (listener == nullptr || hasSubstepListener(listener)) return false;
  listeners_.insert(first ? listeners_.begin() : listeners_.end(), listener);
  return true;
}

void PhysicsWorld::removeSubstepListener(SubstepListener* listener) {
  listeners_.erase(std::remove(listeners_.begin(), listeners_.end(), listener), listeners_.end());
}

bool PhysicsWorld::hasSubstepListener(const SubstepListener* listener) const {
  return std::find(listeners_.begin(), listeners_.end(), listener) != listeners_.end();
}

void PhysicsWorld::setBodyOwner(BodyId body, BodyOwner owner) {
  const auto at = std::lower_bound(owners_.begin(), owners_.end(), body.value,
                                   [](const OwnerEntry& e, std::uint32_t v) { return e.body < v; });
  const bool found = at != owners_.end() && at->body == body.value;
  if (owner.owner == nullptr) {
    if (found) owners_.erase(at);
  } else if (found) {
    at->owner = owner;
  } else if (body.valid()) {
    owners_.insert(at, OwnerEntry{body.value, owner});
  }
}

PhysicsWorld::BodyOwner PhysicsWorld::bodyOwner(BodyId body) const {
  const auto at = std::lower_bound(owners_.begin(), owners_.end(), body.value,
                                   [](const OwnerEntry& e, std::uint32_t v) { return e.body < v; });
  return at != owners_.end() && at->body == body.value ? at->owner : BodyOwner{};
}

std::uint32_t toWorldBits(std::uint32_t bits, const LayerBits& map) {
  if (bits == layers::kAll) return layers::kAll;
  constexpr std::uint32_t kOurs = layers::kStatic | layers::kRagdoll | layers::kCapsule | layers::kDebris;
  std::uint32_t out = bits & ~kOurs;
  if (bits & layers::kStatic) out |= map.staticBits;
  if (bits & layers::kRagdoll) out |= map.ragdollBits;
  if (bits & layers::kCapsule) out |= map.capsuleBits;
  if (bits & layers::kDebris) out |= map.debrisBits;
  return out;
}

Vec3 jointAngles(const Quat& jointAFromJointB) {
  // The same arithmetic as btGeneric6DofSpring2Constraint::matrixToEulerXYZ applied to the
  // constraint built by the Bullet adapter (see physics.h): R = Rx(x) * Ry(y) * Rz(z), with
  // r(i, j) the element in row i and column j of R. glm matrices are column-major: m[col][row].
  const glm::dmat3 m = glm::mat3_cast(normalizeOrIdentity(jointAFromJointB));
  const auto r = [&m](int row, int col) { return m[col][row]; };
  const double sinY = r(0, 2);
  if (sinY < 1.0) {
    if (sinY > -1.0) {
      return Vec3{std::atan2(-r(1, 2), r(2, 2)), std::asin(sinY), std::atan2(-r(0, 1), r(0, 0))};
    }
    // Gimbal lock at y = -pi/2: only x - z is defined; Bullet reports it all in x.
    return Vec3{-std::atan2(r(1, 0), r(1, 1)), -0.5 * kPi, 0.0};
  }
  // Gimbal lock at y = +pi/2: only x + z is defined.
  return Vec3{std::atan2(r(1, 0), r(1, 1)), 0.5 * kPi, 0.0};
}

Vec3 jointAngleReach(const Vec3& angles, double turn) {
  const double yReach = std::abs(angles.y) + turn;
  if (!(yReach < 0.5 * kPi - 1e-3) || !(turn >= 0.0)) return Vec3{std::numeric_limits<double>::infinity()};
  // cos x >= 1 - x^2/2 + x^4/24 - x^6/720 (the series cut after a negative term), above 1e-4 up
  // to pi/2 - 1e-3: a bound without a cos() call.
  const double y2 = yReach * yReach;
  const double cosBelow = 1.0 - y2 / 2.0 * (1.0 - y2 / 12.0 * (1.0 - y2 / 30.0));
  const double side = turn / cosBelow;
  return Vec3{side, turn, side};
}

Quat fromJointAngles(const Vec3& angles) {
  return glm::angleAxis(angles.x, Vec3{1.0, 0.0, 0.0}) * glm::angleAxis(angles.y, Vec3{0.0, 1.0, 0.0}) *
         glm::angleAxis(angles.z, Vec3{0.0, 0.0, 1.0});
}

double shapeBoundingRadius(const ShapeDesc& s) {
  switch (s.type) {
    case ShapeType::Sphere:
      return s.radius;
    case ShapeType::Capsule:
      return s.radius + s.halfHeight;
    case ShapeType::Box:
      return glm::length(s.halfExtents);
    case ShapeType::None:
      break;
  }
  return 0.0;
}

Vec3 shapePrincipalInertia(const ShapeDesc& shape, double mass) {
  switch (shape.type) {
    case ShapeType::Sphere: {
      const double i = 0.4 * mass * shape.radius * shape.radius;
      return Vec3{i};
    }
    case ShapeType::Capsule: {
      // Solid capsule of uniform density: a cylinder of length 2h plus two hemispheres.
      const double r = shape.radius;
      const double h = shape.halfHeight;
      const double cylinderVolume = kPi * r * r * 2.0 * h;
      const double sphereVolume = 4.0 / 3.0 * kPi * r * r * r;
      const double density = mass / (cylinderVolume + sphereVolume);
      const double mc = density * cylinderVolume;
      const double ms = density * sphereVolume;
      const double axial = mc * r * r / 2.0 + ms * 2.0 * r * r / 5.0;
      // Hemispheres: each has its centre of mass 3r/8 from its flat face, which is h from the
      // capsule's centre (parallel-axis theorem, summed over both halves).
      const double transverse =
          mc * (r * r / 4.0 + (2.0 * h) * (2.0 * h) / 12.0) + ms * (2.0 * r * r / 5.0 + h * h + 0.75 * h * r);
      return Vec3{transverse, axial, transverse};
    }
    case ShapeType::Box: {
      const Vec3 s = 2.0 * shape.halfExtents;
      const double k = mass / 12.0;
      return Vec3{k * (s.y * s.y + s.z * s.z), k * (s.x * s.x + s.z * s.z), k * (s.x * s.x + s.y * s.y)};
    }
    case ShapeType::None:
      break;
  }
  return Vec3{0.0};
}

const char* shapeTypeName(ShapeType type) {
  switch (type) {
    case ShapeType::Sphere:
      return "sphere";
    case ShapeType::Capsule:
      return "capsule";
    case ShapeType::Box:
      return "box";
    case ShapeType::None:
      break;
  }
  return "none";
}

}  // namespace handoff
