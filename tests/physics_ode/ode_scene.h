// Small scene builders shared by the ODE adapter tests.
#pragma once

#include "handoff/physics.h"
#include "handoff/physics_ode.h"

#include <gtest/gtest.h>

namespace handoff::ode_test {

inline constexpr double kDt = 1.0 / 60.0;
inline constexpr double kG = 9.81;

inline BodyDesc sphere(double radius, double mass, const Vec3& position) {
  BodyDesc d;
  d.shape.type = ShapeType::Sphere;
  d.shape.radius = radius;
  d.mass = mass;
  d.worldFromBody = Transform::fromTranslation(position);
  return d;
}

inline BodyId mustCreate(PhysicsWorld& world, const BodyDesc& desc) {
  Result<BodyId> id = world.createBody(desc);
  EXPECT_TRUE(id.ok()) << (id.ok() ? "" : id.error());
  return id.ok() ? *id : BodyId{};
}

}  // namespace handoff::ode_test
