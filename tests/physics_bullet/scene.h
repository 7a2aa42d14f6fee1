// Small scene builders shared by the Bullet adapter tests.
#pragma once

#include "handoff/physics.h"
#include "handoff/physics_bullet.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace handoff::test {

inline constexpr double kG = 9.81;
inline constexpr double kDt = 1.0 / 60.0;

inline BodyDesc sphereDesc(double radius, double mass, const Vec3& position) {
  BodyDesc d;
  d.shape.type = ShapeType::Sphere;
  d.shape.radius = radius;
  d.mass = mass;
  d.worldFromBody = Transform::fromTranslation(position);
  return d;
}

inline BodyDesc boxDesc(const Vec3& halfExtents, double mass, const Transform& pose) {
  BodyDesc d;
  d.shape.type = ShapeType::Box;
  d.shape.halfExtents = halfExtents;
  d.mass = mass;
  d.worldFromBody = pose;
  return d;
}

/// Capsule along the body's Y axis.
inline BodyDesc capsuleDesc(double radius, double halfHeight, double mass, const Transform& pose) {
  BodyDesc d;
  d.shape.type = ShapeType::Capsule;
  d.shape.radius = radius;
  d.shape.halfHeight = halfHeight;
  d.mass = mass;
  d.worldFromBody = pose;
  return d;
}

inline BodyId mustCreate(PhysicsWorld& world, const BodyDesc& desc) {
  Result<BodyId> id = world.createBody(desc);
  EXPECT_TRUE(id.ok()) << (id.ok() ? "" : id.error());
  return id.ok() ? *id : BodyId{};
}

inline JointId mustCreate(PhysicsWorld& world, const JointDesc& desc) {
  Result<JointId> id = world.createJoint(desc);
  EXPECT_TRUE(id.ok()) << (id.ok() ? "" : id.error());
  return id.ok() ? *id : JointId{};
}

/// A joint whose frame sits at `worldAnchor` with the given world orientation, expressed in both
/// bodies at their current poses (anchors coincide, qRel = identity).
inline JointDesc jointAt(const PhysicsWorld& world, BodyId a, BodyId b, const Vec3& worldAnchor,
                         const Quat& worldFromJoint = Quat{1.0, 0.0, 0.0, 0.0}) {
  JointDesc j;
  j.bodyA = a;
  j.bodyB = b;
  const Transform wj{worldFromJoint, worldAnchor};
  j.bodyAFromJoint = world.transform(a).inverse() * wj;
  j.bodyBFromJoint = world.transform(b).inverse() * wj;
  return j;
}

/// A hanging chain of `count` capsules along -Y from `top`, each jointed to the previous one (the
/// first to nothing). Limits: swing +-0.8 about X and Z, twist +-0.3 about Y... expressed on the
/// joint's axes: X twist +-0.3, Y +-0.8, Z +-1.2.
struct Chain {
  std::vector<BodyId> bodies;
  std::vector<JointId> joints;
};

inline Chain makeChain(PhysicsWorld& world, const Vec3& top, int count, double radius, double halfHeight,
                       double mass, const Quat& orientation = Quat{1.0, 0.0, 0.0, 0.0}) {
  Chain chain;
  const double link = 2.0 * (halfHeight + radius);
  const Vec3 down = orientation * Vec3{0.0, -1.0, 0.0};
  for (int i = 0; i < count; ++i) {
    const Vec3 centre = top + down * (link * (i + 0.5));
    BodyDesc d = capsuleDesc(radius, halfHeight, mass, Transform{orientation, centre});
    chain.bodies.push_back(mustCreate(world, d));
    if (i > 0) {
      // Joint X axis along the chain (twist), Y and Z swing.
      const Quat jointFrame = orientation * glm::angleAxis(0.5 * kPi, Vec3{0.0, 0.0, 1.0});
      JointDesc j = jointAt(world, chain.bodies[i - 1], chain.bodies[i], top + down * (link * i), jointFrame);
      j.angularLower = Vec3{-0.3, -0.8, -1.2};
      j.angularUpper = Vec3{0.3, 0.8, 1.2};
      chain.joints.push_back(mustCreate(world, j));
    }
  }
  return chain;
}

inline double maxAnchorSeparation(const PhysicsWorld& world, const std::vector<JointId>& joints) {
  double worst = 0.0;
  for (JointId j : joints) worst = std::max(worst, world.jointAnchorSeparation(j));
  return worst;
}

/// Kinetic plus gravitational potential energy of dynamic bodies (gravity along -Y). [J]
inline double energy(const PhysicsWorld& world, const std::vector<BodyId>& bodies, double g = kG) {
  double e = 0.0;
  for (BodyId b : bodies) {
    const double m = world.mass(b);
    const Vec3 v = world.linearVelocity(b);
    const Vec3 w = world.angularVelocity(b);
    e += 0.5 * m * glm::dot(v, v) + 0.5 * glm::dot(w, world.worldInertia(b) * w) +
         m * g * world.transform(b).translation.y;
  }
  return e;
}

}  // namespace handoff::test
