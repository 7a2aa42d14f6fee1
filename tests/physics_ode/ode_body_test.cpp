// Bodies of the ODE adapter: free fall against the integrator's closed form, resting contact,
// kinematic moves and their velocities, motion type switches, impulses, filters, sleeping, rays.
#include "handoff/physics.h"
#include "handoff/physics_ode.h"
#include "physics_ode/ode_scene.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

namespace handoff {
namespace {

using ode_test::kDt;
using ode_test::kG;
using ode_test::mustCreate;
using ode_test::sphere;

// ODE integrates semi-implicitly (v += g h, then x += v h): after N substeps of h from rest the
// drop is g h^2 N (N + 1) / 2, which the body must match to rounding; the continuous g t^2 / 2 is
// within g h t / 2 of it.
TEST(OdeBody, FreeFallMatchesTheIntegrator) {
  for (int substeps : {1, 4}) {
    auto world = createOdeWorld();
    BodyDesc d = sphere(0.1, 2.0, Vec3{0.0, 100.0, 0.0});
    d.linearDamping = 0.0;
    const BodyId ball = mustCreate(*world, d);
    const int steps = 60;
    for (int i = 0; i < steps; ++i) world->step(kDt, substeps);
    const double h = kDt / substeps;
    const double n = static_cast<double>(steps * substeps);
    const double drop = 100.0 - world->transform(ball).translation.y;
    const double expected = kG * h * h * n * (n + 1.0) / 2.0;
    const double t = steps * kDt;
    std::printf("[ figure ] substeps %d: drop %.9f m, integrator %.9f m, continuous %.9f m\n", substeps, drop,
                expected, 0.5 * kG * t * t);
    EXPECT_NEAR(drop, expected, 1e-9);
    EXPECT_NEAR(drop, 0.5 * kG * t * t, 0.5 * kG * h * t + 1e-12);
    EXPECT_NEAR(world->linearVelocity(ball).y, -kG * t, 1e-9);
  }
}

// A sphere dropped 1 m lands within a step of sqrt(2 h / g) and rests at its radius (1 mm: ODE's
// contact surface layer is 2 mm, the rest depth is within it).
TEST(OdeBody, LandsAndRestsOnTheGround) {
  auto world = createOdeWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  const double r = 0.1;
  BodyDesc d = sphere(r, 1.0, Vec3{0.0, 1.0 + r, 0.0});
  d.linearDamping = 0.0;
  const BodyId ball = mustCreate(*world, d);
  double landed = -1.0;
  for (int i = 1; i <= 120 && landed < 0.0; ++i) {
    world->step(kDt, 1);
    if (world->transform(ball).translation.y - r < 3e-3) landed = i * kDt;
  }
  ASSERT_GT(landed, 0.0);
  EXPECT_NEAR(landed, std::sqrt(2.0 / kG), kDt);
  for (int i = 0; i < 120; ++i) world->step(kDt, 1);
  const double rest = world->transform(ball).translation.y - r;
  std::printf("[ figure ] landed at %.4f s (expected %.4f), rest gap %.4f m\n", landed, std::sqrt(2.0 / kG),
              rest);
  EXPECT_NEAR(rest, 0.0, 3e-3);
  EXPECT_GT(world->contactCount(ball), 0);
}

// moveKinematic over one step: the body reports (target - start) / dt and the short-arc angular
// velocity, is exactly at the target after the step, keeps the velocity when made dynamic.
TEST(OdeBody, KinematicMoveGivesItsVelocity) {
  auto world = createOdeWorld();
  BodyDesc d = sphere(0.1, 1.0, Vec3{0.0, 1.0, 0.0});
  d.motion = MotionType::Kinematic;
  const BodyId body = mustCreate(*world, d);
  const Transform target{glm::angleAxis(0.3, Vec3{0.0, 0.0, 1.0}), Vec3{0.5, 1.2, -0.1}};
  world->moveKinematic(body, target, kDt);
  world->step(kDt, 4);
  const Vec3 v = world->linearVelocity(body);
  const Vec3 w = world->angularVelocity(body);
  std::printf("[ figure ] v (%.6f %.6f %.6f) m/s, w (%.6f %.6f %.6f) rad/s\n", v.x, v.y, v.z, w.x, w.y, w.z);
  EXPECT_NEAR(glm::length(v - Vec3{0.5, 0.2, -0.1} / kDt), 0.0, 1e-9);
  EXPECT_NEAR(glm::length(w - Vec3{0.0, 0.0, 0.3} / kDt), 0.0, 1e-9);
  const Transform at = world->transform(body);
  EXPECT_NEAR(glm::length(at.translation - target.translation), 0.0, 1e-12);
  EXPECT_NEAR(angleBetween(at.rotation, target.rotation), 0.0, 1e-9);
  // Without a move it holds still at zero velocity.
  world->step(kDt, 1);
  EXPECT_EQ(world->linearVelocity(body), Vec3{0.0});
  EXPECT_NEAR(glm::length(world->transform(body).translation - target.translation), 0.0, 1e-12);
  // Made dynamic right after a move, it keeps the move's velocity.
  world->moveKinematic(body, Transform::fromTranslation(target.translation + Vec3{0.1, 0.0, 0.0}), kDt);
  world->step(kDt, 1);
  world->setMotionType(body, MotionType::Dynamic);
  EXPECT_EQ(world->motionType(body), MotionType::Dynamic);
  EXPECT_NEAR(world->linearVelocity(body).x, 0.1 / kDt, 1e-9);
  EXPECT_NEAR(world->mass(body), 1.0, 0.0);
}

// A kinematic body moving into a resting sphere pushes it (contacts see its velocity).
TEST(OdeBody, KinematicPushesWhatItTouches) {
  auto world = createOdeWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  BodyDesc k;
  k.shape.type = ShapeType::Box;
  k.shape.halfExtents = Vec3{0.1, 0.3, 0.5};
  k.motion = MotionType::Kinematic;
  k.worldFromBody = Transform::fromTranslation(Vec3{-0.5, 0.3, 0.0});
  const BodyId pusher = mustCreate(*world, k);
  const BodyId ball = mustCreate(*world, sphere(0.1, 1.0, Vec3{0.0, 0.1, 0.0}));
  for (int i = 0; i < 60; ++i) {
    const Transform p = world->transform(pusher);
    world->moveKinematic(pusher, Transform::fromTranslation(p.translation + Vec3{1.0 * kDt, 0.0, 0.0}), kDt);
    world->step(kDt, 1);
  }
  const double x = world->transform(ball).translation.x;
  std::printf("[ figure ] the pusher's face at %.3f m, the ball's centre at %.3f m\n",
              world->transform(pusher).translation.x + 0.1, x);
  EXPECT_GT(x, world->transform(pusher).translation.x + 0.1 + 0.1 - 0.01);
}

// A ray names the body it hit, its point and normal; the mask and setEnabled(false) hide it.
TEST(OdeQuery, RayNamesTheBodyItHit) {
  auto world = createOdeWorld();
  const BodyId ground = world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  BodyDesc d = sphere(0.25, 1.0, Vec3{1.0, 1.0, 0.0});
  d.filter = CollisionFilter{layers::kDebris, layers::kAll};
  const BodyId ball = mustCreate(*world, d);
  CastHit hit = world->castRay(Vec3{1.0, 3.0, 0.0}, Vec3{1.0, -1.0, 0.0}, layers::kAll);
  ASSERT_TRUE(hit.hit());
  EXPECT_EQ(hit.body, ball);
  EXPECT_NEAR(hit.fraction, (3.0 - 1.25) / 4.0, 1e-9);
  EXPECT_NEAR(hit.point.y, 1.25, 1e-9);
  EXPECT_NEAR(hit.normal.y, 1.0, 1e-9);
  hit = world->castRay(Vec3{1.0, 3.0, 0.0}, Vec3{1.0, -1.0, 0.0}, layers::kStatic);
  ASSERT_TRUE(hit.hit());
  EXPECT_EQ(hit.body, ground);
  EXPECT_NEAR(hit.fraction, 0.75, 1e-9);
  world->setEnabled(ball, false);
  hit = world->castRay(Vec3{1.0, 3.0, 0.0}, Vec3{1.0, -1.0, 0.0}, layers::kAll);
  ASSERT_TRUE(hit.hit());
  EXPECT_EQ(hit.body, ground);
  EXPECT_FALSE(world->castRay(Vec3{1.0, 3.0, 0.0}, Vec3{1.0, 2.0, 0.0}, layers::kAll).hit());
}

}  // namespace
}  // namespace handoff
