// Bodies of the Bullet adapter: free fall and landing, kinematic <-> dynamic switching,
// kinematic moves, impulses, filters, enabling, sleeping, stats, hygiene, determinism.
#include "handoff/physics.h"
#include "handoff/physics_bullet.h"
#include "physics_bullet/scene.h"
#include "support/bullet_precision.h"
#include "support/test_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace handoff {
namespace {

using test::bulletTolerance;
using test::kDt;
using test::kG;

class SphereDrop : public ::testing::TestWithParam<int> {};

// A sphere dropped from 1 m lands at t = sqrt(2 h / g) within one step and rests at its radius.
TEST_P(SphereDrop, LandsOnTimeAndRestsAtRadius) {
  const int substeps = GetParam();
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  const double r = 0.1;
  BodyDesc d = test::sphereDesc(r, 1.0, Vec3{0.0, 1.0 + r, 0.0});
  d.linearDamping = 0.0;  // free fall exactly
  const BodyId ball = test::mustCreate(*world, d);

  const double expected = std::sqrt(2.0 * 1.0 / kG);
  double landed = -1.0;
  for (int i = 1; i <= 120 && landed < 0.0; ++i) {
    world->step(kDt, substeps);
    // Landed: the drop is (nearly) over and the contact stopped the fall.
    if (world->transform(ball).translation.y - r < 1e-3) landed = i * kDt;
  }
  ASSERT_GT(landed, 0.0);
  std::printf("[ figure ] substeps %d: landing at %.4f s, expected %.4f s (dt %.4f)\n", substeps, landed,
              expected, kDt);
  EXPECT_NEAR(landed, expected, kDt);

  for (int i = 0; i < 120; ++i) world->step(kDt, substeps);
  const double rest = world->transform(ball).translation.y;
  std::printf("[ figure ] substeps %d: rest height - radius = %.3g m\n", substeps, rest - r);
  EXPECT_NEAR(rest, r, 1e-3);
  EXPECT_LT(glm::length(world->linearVelocity(ball)), 1e-2);
  EXPECT_GT(world->contactCount(ball), 0);
}

INSTANTIATE_TEST_SUITE_P(Substeps, SphereDrop, ::testing::Values(1, 4));

TEST(Kinematic, SwitchingKeepsPositionFallsAndHolds) {
  auto world = createBulletWorld();
  BodyDesc d =
      test::boxDesc(Vec3{0.2, 0.1, 0.3}, 2.0, Transform{glm::angleAxis(0.3, Vec3{0, 0, 1}), Vec3{0, 5, 0}});
  d.motion = MotionType::Kinematic;
  d.linearDamping = 0.0;
  const BodyId body = test::mustCreate(*world, d);
  EXPECT_EQ(world->motionType(body), MotionType::Kinematic);
  EXPECT_EQ(world->mass(body), 2.0);  // the dynamic mass, also while kinematic
  const Transform start = world->transform(body);

  // Pushed by nothing: keeps its pose exactly, and impulses do nothing (zero inverse mass).
  world->applyLinearImpulse(body, Vec3{10, 0, 0}, start.translation);
  world->applyAngularImpulse(body, Vec3{0, 10, 0});
  for (int i = 0; i < 60; ++i) world->step(kDt, 2);
  EXPECT_EQ(world->transform(body).translation, start.translation);
  EXPECT_TRUE(test::rotNear(world->transform(body).rotation, start.rotation, 1e-12));
  EXPECT_EQ(world->linearVelocity(body), Vec3{0.0});
  EXPECT_EQ(world->angularVelocity(body), Vec3{0.0});
  EXPECT_EQ(world->lastStepStats().kinematicBodies, 1);
  EXPECT_EQ(world->lastStepStats().dynamicBodies, 0);

  // Dynamic: falls with g (semi-implicit Euler gives v = -g t exactly).
  world->setMotionType(body, MotionType::Dynamic);
  EXPECT_EQ(world->motionType(body), MotionType::Dynamic);
  const int steps = 30;
  for (int i = 0; i < steps; ++i) world->step(kDt, 2);
  const double h = kDt / 2.0;
  const int n = steps * 2;
  // Single-precision Bullet rounds v (and the drop) once per substep: n roundings of their size.
  const double drop = kG * h * h * n * (n + 1) / 2.0;
  EXPECT_NEAR(world->linearVelocity(body).y, -kG * steps * kDt, bulletTolerance(1e-9, kG * steps * kDt, n));
  EXPECT_NEAR(world->transform(body).translation.y, start.translation.y - drop,
              bulletTolerance(1e-9, std::abs(start.translation.y) + drop, n));
  EXPECT_EQ(world->lastStepStats().dynamicBodies, 1);

  // Back to kinematic: velocity is kept at the switch, then the body holds (no gravity, no drift).
  const Vec3 v = world->linearVelocity(body);
  world->setMotionType(body, MotionType::Kinematic);
  EXPECT_EQ(world->linearVelocity(body), v);
  const Transform held = world->transform(body);
  for (int i = 0; i < 60; ++i) world->step(kDt, 2);
  EXPECT_EQ(world->transform(body).translation, held.translation);
  EXPECT_EQ(world->linearVelocity(body), Vec3{0.0});
}

TEST(Kinematic, InertiaKeptAcrossSwitches) {
  auto world = createBulletWorld(WorldSettings{.gravity = Vec3{0.0}});
  const BodyDesc d = test::boxDesc(Vec3{0.2, 0.1, 0.3}, 2.0, Transform{});
  const BodyId body = test::mustCreate(*world, d);
  const glm::dmat3 before = world->worldInertia(body);
  world->setMotionType(body, MotionType::Kinematic);
  world->setMotionType(body, MotionType::Dynamic);
  EXPECT_EQ(world->worldInertia(body), before);
  // Angular impulse after the round trip uses the dynamic inertia again.
  world->applyAngularImpulse(body, Vec3{1.0, 0.0, 0.0});
  // Single precision: the inverse inertia and the product I^-1 L are rounded (a few roundings).
  EXPECT_NEAR(world->angularVelocity(body).x, 1.0 / before[0][0],
              bulletTolerance(1e-12, 1.0 / before[0][0], 4));
}

class KinematicMove : public ::testing::TestWithParam<int> {};

// moveKinematic reaches its target exactly after the step and reports velocity = displacement / dt.
TEST_P(KinematicMove, ReachesTargetWithDerivedVelocity) {
  const int substeps = GetParam();
  auto world = createBulletWorld();
  BodyDesc d = test::capsuleDesc(0.1, 0.2, 1.0, Transform::fromTranslation(Vec3{0, 1, 0}));
  d.motion = MotionType::Kinematic;
  const BodyId body = test::mustCreate(*world, d);
  Transform pose = world->transform(body);
  for (int i = 0; i < 30; ++i) {
    const Transform target{glm::angleAxis(0.05, glm::normalize(Vec3{1, 2, 0.5})) * pose.rotation,
                           pose.translation + Vec3{0.03, 0.01 * std::sin(i * 0.3), -0.02}};
    world->moveKinematic(body, target, kDt);
    world->step(kDt, substeps);
    const Transform now = world->transform(body);
    // Single precision: the target pose and the velocities (computed in double from the pose
    // Bullet holds) are rounded to float once; a rotation read back from Bullet's float basis
    // carries a few roundings of its unit quaternion.
    const Vec3 v = (target.translation - pose.translation) / kDt;
    const Vec3 w = handoff::angularVelocity(pose.rotation, target.rotation, kDt).omega;
    ASSERT_TRUE(test::vecNear(now.translation, target.translation,
                              bulletTolerance(1e-9, glm::length(target.translation))))
        << "step " << i;
    ASSERT_TRUE(test::rotNear(now.rotation, target.rotation, bulletTolerance(1e-9, 1.0, 4))) << "step " << i;
    EXPECT_TRUE(test::vecNear(world->linearVelocity(body), v, bulletTolerance(1e-9, glm::length(v))));
    EXPECT_TRUE(test::vecNear(world->angularVelocity(body), w, bulletTolerance(1e-9, glm::length(w))));
    pose = now;
  }
  // No move requested: it holds still and reports zero velocity.
  world->step(kDt, substeps);
  EXPECT_TRUE(test::vecNear(world->transform(body).translation, pose.translation, 1e-12));
  EXPECT_TRUE(test::vecNear(world->linearVelocity(body), Vec3{0.0}, 1e-12));
}

// The swept box gains velocity: contacts see the kinematic velocity (not a teleport).
TEST_P(KinematicMove, PushesADynamicBox) {
  const int substeps = GetParam();
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  BodyDesc pusherDesc =
      test::boxDesc(Vec3{0.1, 0.3, 0.5}, 5.0, Transform::fromTranslation(Vec3{-0.5, 0.35, 0}));
  pusherDesc.motion = MotionType::Kinematic;
  const BodyId pusher = test::mustCreate(*world, pusherDesc);
  const BodyId box =
      test::mustCreate(*world, test::boxDesc(Vec3{0.2}, 1.0, Transform::fromTranslation(Vec3{0, 0.2, 0})));
  for (int i = 0; i < 30; ++i) world->step(kDt, substeps);  // settle
  EXPECT_LT(glm::length(world->linearVelocity(box)), 0.05);

  const double speed = 2.0;  // m/s along +X
  double maxBoxSpeed = 0.0;
  for (int i = 0; i < 30; ++i) {
    const Transform p = world->transform(pusher);
    world->moveKinematic(pusher, Transform{p.rotation, p.translation + Vec3{speed * kDt, 0, 0}}, kDt);
    world->step(kDt, substeps);
    maxBoxSpeed = std::max(maxBoxSpeed, world->linearVelocity(box).x);
  }
  std::printf("[ figure ] substeps %d: pushed box speed %.3f m/s (pusher %.1f m/s)\n", substeps, maxBoxSpeed,
              speed);
  EXPECT_GT(maxBoxSpeed, 0.8 * speed);
  EXPECT_LT(maxBoxSpeed, 2.5 * speed);
  EXPECT_GT(world->transform(box).translation.x, 0.5);
  // The pusher is never pushed back.
  // Single precision: the pose is rounded once per substep, 30 steps.
  EXPECT_NEAR(world->transform(pusher).translation.x, -0.5 + 30 * speed * kDt,
              bulletTolerance(1e-9, 0.5, 30.0 * substeps));
}

INSTANTIATE_TEST_SUITE_P(Substeps, KinematicMove, ::testing::Values(1, 4));

TEST(Kinematic, JointedDynamicBodyDoesNotExplode) {
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  // Starts where its trajectory below starts (t = 0).
  BodyDesc parentDesc = test::capsuleDesc(0.08, 0.15, 10.0, Transform::fromTranslation(Vec3{0, 2, 0.3}));
  parentDesc.motion = MotionType::Kinematic;
  const BodyId parent = test::mustCreate(*world, parentDesc);
  const BodyId child = test::mustCreate(
      *world, test::capsuleDesc(0.06, 0.15, 3.0, Transform::fromTranslation(Vec3{0, 1.58, 0.3})));
  JointDesc j = test::jointAt(*world, parent, child, Vec3{0, 1.77, 0.3});
  j.angularLower = Vec3{-0.5, -0.5, -1.0};
  j.angularUpper = Vec3{0.5, 0.5, 1.0};
  const JointId joint = test::mustCreate(*world, j);
  double worstSeparation = 0.0;
  double worstSpeed = 0.0;
  double worstParentSpeed = 0.0;
  for (int i = 0; i < 300; ++i) {
    // A vigorous figure-eight: 3 m/s, changing direction several times a second.
    const double t = (i + 1) * kDt;
    const Vec3 target{0.5 * std::sin(6.0 * t), 2.0 + 0.3 * std::sin(12.0 * t), 0.3 * std::cos(6.0 * t)};
    world->moveKinematic(parent, Transform{glm::angleAxis(std::sin(3.0 * t), Vec3{0, 0, 1}), target}, kDt);
    world->step(kDt, 4);
    worstSeparation = std::max(worstSeparation, world->jointAnchorSeparation(joint));
    worstSpeed = std::max(worstSpeed, glm::length(world->linearVelocity(child)));
    worstParentSpeed = std::max(worstParentSpeed, glm::length(world->linearVelocity(parent)));
  }
  std::printf(
      "[ figure ] kinematic parent: worst anchor separation %.3g m, child speed %.2f m/s (parent %.2f)\n",
      worstSeparation, worstSpeed, worstParentSpeed);
  EXPECT_LT(worstSeparation, 0.01);
  // The child whips around its anchor (limits bounce it), but its speed stays of the order of
  // the parent's: an explosion would grow without bound.
  EXPECT_LT(worstSpeed, 3.0 * worstParentSpeed);
  EXPECT_TRUE(isFinite(world->transform(child)));
}

TEST(Impulses, AngularImpulseGivesInverseInertiaTimesL) {
  auto world = createBulletWorld(WorldSettings{.gravity = Vec3{0.0}});
  const Quat q = glm::angleAxis(0.7, glm::normalize(Vec3{1, 2, 3}));
  BodyDesc d = test::boxDesc(Vec3{0.1, 0.3, 0.6}, 3.0, Transform{q, Vec3{1, 2, 3}});
  const BodyId body = test::mustCreate(*world, d);
  const glm::dmat3 inertia = world->worldInertia(body);
  // I_world = R I_C R^T with I_C of a solid box.
  const Vec3 ic = shapePrincipalInertia(d.shape, 3.0);
  const glm::dmat3 r = glm::mat3_cast(q);
  const glm::dmat3 expected = r * glm::dmat3(ic.x, 0, 0, 0, ic.y, 0, 0, 0, ic.z) * glm::transpose(r);
  // Single precision: Bullet keeps the inverse inertia in float (a few roundings of each element),
  // which the read-back inversion amplifies by up to the condition number max / min moment.
  const double iMax = std::max({ic.x, ic.y, ic.z});
  const double iMin = std::min({ic.x, ic.y, ic.z});
  for (int c = 0; c < 3; ++c)
    EXPECT_TRUE(test::vecNear(inertia[c], expected[c], bulletTolerance(1e-12, iMax * iMax / iMin, 4)));
  const Vec3 l{0.2, -0.5, 0.9};
  world->applyAngularImpulse(body, l);
  const Vec3 omega = glm::inverse(inertia) * l;
  EXPECT_TRUE(
      test::vecNear(world->angularVelocity(body), omega, bulletTolerance(1e-12, glm::length(omega), 4)));
  EXPECT_TRUE(test::vecNear(world->linearVelocity(body), Vec3{0.0}, 0.0));

  // A linear impulse off the centre adds p / m and I^-1 (r x p).
  const BodyId ball = test::mustCreate(*world, test::sphereDesc(0.2, 2.0, Vec3{5, 0, 0}));
  const Vec3 p{0, 0, 1};
  const Vec3 at{5, 0.1, 0};
  world->applyLinearImpulse(ball, p, at);
  EXPECT_TRUE(test::vecNear(world->linearVelocity(ball), p / 2.0, bulletTolerance(1e-12, 0.5, 4)));
  const double iBall = 0.4 * 2.0 * 0.04;
  const Vec3 spin = glm::cross(at - Vec3{5, 0, 0}, p) / iBall;
  EXPECT_TRUE(
      test::vecNear(world->angularVelocity(ball), spin, bulletTolerance(1e-12, glm::length(spin), 4)));
}

TEST(Filters, MaskWithoutStaticFallsThroughGround) {
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  BodyDesc d = test::sphereDesc(0.1, 1.0, Vec3{0, 0.5, 0});
  d.filter = CollisionFilter{layers::kDebris, layers::kAll & ~layers::kStatic};
  const BodyId ghost = test::mustCreate(*world, d);
  d.worldFromBody.translation.x = 1.0;
  d.filter = CollisionFilter{layers::kDebris, layers::kAll};
  const BodyId solid = test::mustCreate(*world, d);
  for (int i = 0; i < 60; ++i) world->step(kDt, 2);
  EXPECT_LT(world->transform(ghost).translation.y, -1.0);
  EXPECT_NEAR(world->transform(solid).translation.y, 0.1, 1e-3);
  EXPECT_EQ(world->contactCount(ghost), 0);

  // Changing the filter of a resting body at run time takes effect at once (no motion needed).
  EXPECT_EQ(world->collisionFilter(solid), (CollisionFilter{layers::kDebris, layers::kAll}));
  world->setCollisionFilter(solid, CollisionFilter{layers::kDebris, layers::kRagdoll});
  EXPECT_EQ(world->collisionFilter(solid).mask, layers::kRagdoll);
  for (int i = 0; i < 60; ++i) world->step(kDt, 2);
  EXPECT_LT(world->transform(solid).translation.y, -1.0);
}

TEST(Filters, FilterChangeBetweenRestingBodiesCreatesContacts) {
  auto world = createBulletWorld(WorldSettings{.gravity = Vec3{0.0}});
  BodyDesc d = test::sphereDesc(0.2, 1.0, Vec3{0, 0, 0});
  d.filter = CollisionFilter{layers::kRagdoll, layers::kStatic};
  const BodyId a = test::mustCreate(*world, d);
  d.worldFromBody.translation.x = 0.3;  // overlapping by 0.1 m
  const BodyId b = test::mustCreate(*world, d);
  for (int i = 0; i < 10; ++i) world->step(kDt, 1);
  EXPECT_EQ(world->contactCount(a), 0);
  // Not moved: exactly where it was put (single precision: 0.3 rounded to float once).
  EXPECT_NEAR(world->transform(b).translation.x, 0.3, bulletTolerance(0.0, 0.3));
  world->setCollisionFilter(a, CollisionFilter{layers::kRagdoll, layers::kAll});
  world->setCollisionFilter(b, CollisionFilter{layers::kRagdoll, layers::kAll});
  world->step(kDt, 1);
  EXPECT_GT(world->contactCount(a), 0);
  for (int i = 0; i < 60; ++i) world->step(kDt, 1);
  EXPECT_GT(world->transform(b).translation.x - world->transform(a).translation.x, 0.39);  // pushed apart
}

TEST(Filters, JointedBodiesOverlapWithoutContact) {
  for (bool collideConnected : {false, true}) {
    auto world = createBulletWorld(WorldSettings{.gravity = Vec3{0.0}});
    const BodyId a = test::mustCreate(*world, test::sphereDesc(0.2, 1.0, Vec3{0, 0, 0}));
    const BodyId b = test::mustCreate(*world, test::sphereDesc(0.2, 1.0, Vec3{0.3, 0, 0}));
    // Let the broadphase pair them first: the joint must also drop an existing pair.
    world->step(kDt, 1);
    JointDesc j = test::jointAt(*world, a, b, Vec3{0.15, 0, 0});
    j.collideConnected = collideConnected;
    test::mustCreate(*world, j);
    for (int i = 0; i < 10; ++i) world->step(kDt, 1);
    if (collideConnected) {
      EXPECT_GT(world->contactCount(a), 0);
    } else {
      EXPECT_EQ(world->contactCount(a), 0);
      EXPECT_EQ(world->lastStepStats().contactPoints, 0);
      EXPECT_TRUE(test::vecNear(world->linearVelocity(b), Vec3{0.0}, 1e-12));
    }
  }
}

TEST(Enable, DisabledBodyLeavesCollisionAndStats) {
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  const BodyId floorBox = test::mustCreate(
      *world, test::boxDesc(Vec3{0.5, 0.1, 0.5}, 5.0, Transform::fromTranslation(Vec3{0, 0.1, 0})));
  const BodyId ball = test::mustCreate(*world, test::sphereDesc(0.1, 1.0, Vec3{0, 1.0, 0}));
  for (int i = 0; i < 60; ++i) world->step(kDt, 2);
  EXPECT_NEAR(world->transform(ball).translation.y, 0.3, 2e-3);  // resting on the box
  EXPECT_EQ(world->lastStepStats().dynamicBodies, 2);

  EXPECT_TRUE(world->isSleeping(ball));  // resting for longer than sleepTime
  world->setEnabled(floorBox, false);
  EXPECT_FALSE(world->isSleeping(ball));  // its support went away
  EXPECT_FALSE(world->isEnabled(floorBox));
  const Transform frozen = world->transform(floorBox);
  for (int i = 0; i < 30; ++i) world->step(kDt, 2);
  // The ball fell through the disabled box to the ground; the box did not step.
  EXPECT_NEAR(world->transform(ball).translation.y, 0.1, 2e-3);
  EXPECT_EQ(world->transform(floorBox).translation, frozen.translation);
  EXPECT_EQ(world->contactCount(floorBox), 0);
  EXPECT_EQ(world->lastStepStats().dynamicBodies, 1);
  EXPECT_EQ(world->lastStepStats().activeBodies + world->lastStepStats().sleepingBodies, 1);
  EXPECT_EQ(world->bodyCount(), 3);  // still alive

  // Back in: collides again (the ball, now inside it, is pushed out).
  world->setEnabled(floorBox, true);
  for (int i = 0; i < 60; ++i) world->step(kDt, 2);
  EXPECT_EQ(world->lastStepStats().dynamicBodies, 2);
  EXPECT_GT(world->contactCount(floorBox), 0);
}

TEST(Sleep, RestingBoxSleepsAfterSleepTime) {
  for (double sleepTime : {0.5, 1.5}) {
    WorldSettings settings;
    settings.sleepTime = sleepTime;
    auto world = createBulletWorld(settings);
    world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
    // Exactly resting: under both sleep speeds from the first substep.
    const BodyId box =
        test::mustCreate(*world, test::boxDesc(Vec3{0.2}, 1.0, Transform::fromTranslation(Vec3{0, 0.2, 0})));
    double asleepAt = -1.0;
    for (int i = 1; i <= 300 && asleepAt < 0.0; ++i) {
      world->step(kDt, 2);
      if (world->isSleeping(box)) asleepAt = i * kDt;
    }
    std::printf("[ figure ] sleepTime %.2f s: asleep after %.3f s\n", sleepTime, asleepAt);
    EXPECT_NEAR(asleepAt, sleepTime, 3 * kDt);
    const StepStats& s = world->lastStepStats();
    EXPECT_EQ(s.sleepingBodies, 1);
    EXPECT_EQ(s.activeBodies, 0);
    EXPECT_EQ(s.dynamicBodies, 1);
    EXPECT_GT(s.contactPoints, 0);
    world->wake(box);
    EXPECT_FALSE(world->isSleeping(box));
    world->step(kDt, 2);
    EXPECT_EQ(world->lastStepStats().activeBodies, 1);
  }
}

// Jolt's point velocity rule: a body sleeps while its farthest point moves slower than
// sleepLinearSpeed, so a spin that puts a small sphere to sleep keeps a long box awake.
TEST(Sleep, AngularThresholdIsThePointSpeedOverTheBoundingRadius) {
  struct Case {
    BodyDesc desc;
    double radius;  // shapeBoundingRadius [m]
  };
  const Case cases[] = {{test::sphereDesc(0.1, 1.0, Vec3{0.0}), 0.1},
                        {test::boxDesc(Vec3{0.05, 0.05, 0.6}, 1.0, Transform{}), std::sqrt(0.365)}};
  for (const Case& c : cases) {
    ASSERT_NEAR(shapeBoundingRadius(c.desc.shape), c.radius, 1e-12);
    const double threshold = WorldSettings{}.sleepLinearSpeed / c.radius;  // [rad/s]
    for (double factor : {0.8, 1.25}) {
      WorldSettings settings;
      settings.gravity = Vec3{0.0};
      auto world = createBulletWorld(settings);
      BodyDesc desc = c.desc;
      desc.angularDamping = 0.0;
      desc.linearDamping = 0.0;
      const BodyId body = test::mustCreate(*world, desc);
      // About the axis through the centre where the box is widest: its ends move at omega r.
      const Vec3 omega{factor * threshold, 0.0, 0.0};
      world->setAngularVelocity(body, omega);
      bool asleep = false;
      for (int i = 0; i < 120 && !asleep; ++i) {
        world->step(kDt, 2);
        asleep = world->isSleeping(body);
      }
      std::printf("[ figure ] radius %.3f m, %.3f rad/s (%.2fx the threshold): %s\n", c.radius, omega.x,
                  factor, asleep ? "asleep" : "awake after 2 s");
      EXPECT_EQ(asleep, factor < 1.0) << "radius " << c.radius << ", factor " << factor;
    }
  }
}

TEST(Stats, CountsAndIterations) {
  WorldSettings settings;
  settings.solverIterations = 7;
  auto world = createBulletWorld(settings);
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  test::mustCreate(*world, test::boxDesc(Vec3{0.2}, 1.0, Transform::fromTranslation(Vec3{0, 0.2, 0})));
  test::mustCreate(*world, test::boxDesc(Vec3{0.2}, 1.0, Transform::fromTranslation(Vec3{2, 3, 0})));
  BodyDesc k = test::sphereDesc(0.2, 1.0, Vec3{5, 1, 0});
  k.motion = MotionType::Kinematic;
  test::mustCreate(*world, k);
  for (int i = 0; i < 20; ++i) world->step(kDt, 3);
  const StepStats& s = world->lastStepStats();
  EXPECT_EQ(s.dynamicBodies, 2);
  EXPECT_EQ(s.activeBodies, 2);  // one resting (not yet sleepTime), one falling
  EXPECT_EQ(s.sleepingBodies, 0);
  EXPECT_EQ(s.kinematicBodies, 1);
  EXPECT_EQ(s.contactPoints, 4);  // the resting box's face on the plane
  EXPECT_EQ(s.solverIterations, 7);
  EXPECT_EQ(s.substeps, 3);
  EXPECT_EQ(s.bodiesLeftWorld, 0);
  EXPECT_EQ(world->settings().solverIterations, 7);
}

TEST(Stats, BodiesLeavingTheWorldAreDisabled) {
  WorldSettings settings;
  settings.worldHalfExtent = 50.0;
  auto world = createBulletWorld(settings);
  const BodyId body = test::mustCreate(*world, test::sphereDesc(0.1, 1.0, Vec3{0, 0, 0}));
  world->setLinearVelocity(body, Vec3{0, 0, 3600.0});  // 60 m in one step
  world->step(kDt, 1);
  EXPECT_EQ(world->lastStepStats().bodiesLeftWorld, 1);
  EXPECT_FALSE(world->isEnabled(body));
  world->step(kDt, 1);
  EXPECT_EQ(world->lastStepStats().bodiesLeftWorld, 0);
  EXPECT_EQ(world->lastStepStats().dynamicBodies, 0);
}

class CountingListener final : public SubstepListener {
 public:
  void onSubstep(double substepDt) override {
    ++calls;
    last = substepDt;
  }
  int calls = 0;
  double last = 0.0;
};

TEST(Stepping, ListenerCalledEverySubstep) {
  auto world = createBulletWorld();
  CountingListener listener;
  world->addSubstepListener(&listener);
  for (int substeps : {1, 3, 4, 7}) {
    listener.calls = 0;
    world->step(kDt, substeps);
    EXPECT_EQ(listener.calls, substeps);
    EXPECT_DOUBLE_EQ(listener.last, kDt / substeps);
    EXPECT_EQ(world->lastStepStats().substeps, substeps);
  }
  world->removeSubstepListener(&listener);
  world->step(kDt, 2);
  EXPECT_EQ(listener.calls, 7);
}

// One listener per owner (SPEC.md section 8: several characters in one world): each runs every
// substep in the order added, adding one twice or a null one is refused, and removing one leaves
// the others running.
TEST(Stepping, SeveralOwnersEachKeepTheirListener) {
  auto world = createBulletWorld();
  struct Ordered final : SubstepListener {
    std::vector<int>* log = nullptr;
    int id = 0;
    void onSubstep(double) override { log->push_back(id); }
  };
  std::vector<int> log;
  Ordered a, b, c;
  a.log = b.log = c.log = &log;
  a.id = 1, b.id = 2, c.id = 3;
  EXPECT_TRUE(world->addSubstepListener(&a));
  EXPECT_TRUE(world->addSubstepListener(&b));
  EXPECT_FALSE(world->addSubstepListener(&a)) << "already added";
  EXPECT_FALSE(world->addSubstepListener(nullptr));
  EXPECT_TRUE(world->addSubstepListener(&c));
  EXPECT_EQ(world->substepListenerCount(), 3);
  world->step(kDt, 2);
  EXPECT_EQ(log, (std::vector<int>{1, 2, 3, 1, 2, 3}));
  world->removeSubstepListener(&b);
  world->removeSubstepListener(&b);  // not there: nothing
  EXPECT_FALSE(world->hasSubstepListener(&b));
  log.clear();
  world->step(kDt, 1);
  EXPECT_EQ(log, (std::vector<int>{1, 3}));
  world->removeSubstepListener(&a);
  world->removeSubstepListener(&c);
  EXPECT_EQ(world->substepListenerCount(), 0);
}

// Explicit drives apply impulses in the listener: they act within the same substep.
class ImpulseListener final : public SubstepListener {
 public:
  ImpulseListener(PhysicsWorld& w, BodyId b) : world(w), body(b) {}
  void onSubstep(double substepDt) override {
    world.applyLinearImpulse(body, Vec3{0, 1.0 * kG * substepDt, 0}, world.transform(body).translation);
  }
  PhysicsWorld& world;
  BodyId body;
};

TEST(Stepping, ListenerImpulseCancelsGravityInTheSameSubstep) {
  auto world = createBulletWorld();
  BodyDesc d = test::sphereDesc(0.1, 1.0, Vec3{0, 1, 0});
  d.linearDamping = 0.0;
  const BodyId body = test::mustCreate(*world, d);
  ImpulseListener listener(*world, body);
  world->addSubstepListener(&listener);
  for (int i = 0; i < 60; ++i) world->step(kDt, 4);
  // Single precision: Bullet's gravity impulse g h is rounded to float, the listener's is not: up
  // to one rounding of g h per substep (240) in the velocity, and of the pose (1 m) per substep.
  const double h = kDt / 4.0;
  EXPECT_NEAR(world->transform(body).translation.y, 1.0, bulletTolerance(1e-12, 1.0, 240));
  EXPECT_NEAR(world->linearVelocity(body).y, 0.0, bulletTolerance(1e-12, kG * h, 240));
}

TEST(Hygiene, CreateDestroyThousandBodiesAndJoints) {
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  const int bodies0 = world->bodyCount();
  const int joints0 = world->jointCount();
  for (int round = 0; round < 3; ++round) {
    std::vector<BodyId> bodies;
    std::vector<JointId> joints;
    for (int i = 0; i < 1000; ++i) {
      bodies.push_back(test::mustCreate(
          *world,
          test::capsuleDesc(0.05, 0.1, 1.0, Transform::fromTranslation(Vec3{0.0, 1.0 + 0.3 * i, 0.0}))));
      if (i > 0)
        joints.push_back(test::mustCreate(
            *world, test::jointAt(*world, bodies[i - 1], bodies[i], Vec3{0, 0.85 + 0.3 * i, 0})));
    }
    EXPECT_EQ(world->bodyCount(), bodies0 + 1000);
    EXPECT_EQ(world->jointCount(), joints0 + 999);
    world->step(kDt, 1);
    // Half the joints explicitly, the rest with their bodies.
    for (std::size_t i = 0; i < joints.size(); i += 2) world->destroyJoint(joints[i]);
    for (BodyId b : bodies) world->destroyBody(b);
    EXPECT_EQ(world->bodyCount(), bodies0);
    EXPECT_EQ(world->jointCount(), joints0);
    // Stale handles are recognised (generation): queries on them return defaults in release builds.
#ifdef NDEBUG
    EXPECT_EQ(world->mass(bodies[0]), 0.0);
    EXPECT_FALSE(world->isEnabled(bodies[0]));
    world->setLinearVelocity(bodies[0], Vec3{1.0});  // ignored
    EXPECT_EQ(world->jointAnchorSeparation(joints[1]), 0.0);
#endif
  }
  world->step(kDt, 1);
  EXPECT_EQ(world->lastStepStats().dynamicBodies, 0);
}

TEST(Hygiene, RecycledSlotGetsNewHandle) {
  auto world = createBulletWorld();
  const BodyId a = test::mustCreate(*world, test::sphereDesc(0.1, 1.0, Vec3{0.0}));
  world->destroyBody(a);
  const BodyId b = test::mustCreate(*world, test::sphereDesc(0.1, 1.0, Vec3{0.0}));
  EXPECT_NE(a, b);
  EXPECT_TRUE(b.valid());
}

TEST(Validation, InvalidDescsNameTheField) {
  auto world = createBulletWorld();
  const auto expectError = [&](const BodyDesc& d, const char* field) {
    Result<BodyId> r = world->createBody(d);
    ASSERT_FALSE(r.ok()) << field;
    EXPECT_NE(r.error().find(field), std::string::npos) << r.error();
  };
  BodyDesc d = test::sphereDesc(0.1, 1.0, Vec3{0.0});
  BodyDesc bad = d;
  bad.mass = 0.0;
  expectError(bad, "mass");
  bad = d;
  bad.mass = -1.0;
  expectError(bad, "mass");
  bad = d;
  bad.shape.radius = 0.0;
  expectError(bad, "shape.radius");
  bad = d;
  bad.shape.type = ShapeType::None;
  expectError(bad, "shape.type");
  bad = test::boxDesc(Vec3{0.1, 0.0, 0.1}, 1.0, Transform{});
  expectError(bad, "shape.halfExtents");
  bad = test::capsuleDesc(0.1, -0.1, 1.0, Transform{});
  expectError(bad, "shape.halfHeight");
  bad = d;
  bad.worldFromBody.translation.x = std::nan("");
  expectError(bad, "worldFromBody");
  bad = d;
  bad.inertia = Vec3{1.0, 0.0, 1.0};
  expectError(bad, "inertia");
  bad = d;
  bad.restitution = 2.0;
  expectError(bad, "restitution");
  bad = d;
  bad.friction = -1.0;
  expectError(bad, "friction");
  EXPECT_EQ(world->bodyCount(), 0);

  const BodyId a = test::mustCreate(*world, d);
  const BodyId b = test::mustCreate(*world, test::sphereDesc(0.1, 1.0, Vec3{0.3, 0, 0}));
  const auto expectJointError = [&](const JointDesc& j, const char* field) {
    Result<JointId> r = world->createJoint(j);
    ASSERT_FALSE(r.ok()) << field;
    EXPECT_NE(r.error().find(field), std::string::npos) << r.error();
  };
  JointDesc j = test::jointAt(*world, a, b, Vec3{0.15, 0, 0});
  JointDesc badJoint = j;
  badJoint.bodyB = BodyId{};
  expectJointError(badJoint, "bodyB");
  badJoint = j;
  badJoint.bodyB = a;
  expectJointError(badJoint, "same body");
  badJoint = j;
  badJoint.angularLower.y = -2.0;
  badJoint.angularUpper.y = 0.0;
  expectJointError(badJoint, "about y");
  badJoint = j;
  badJoint.angularUpper.z = std::numeric_limits<double>::infinity();
  expectJointError(badJoint, "angularUpper.z");
  badJoint = j;
  badJoint.bodyAFromJoint.translation.y = std::nan("");
  expectJointError(badJoint, "bodyAFromJoint");
  EXPECT_EQ(world->jointCount(), 0);
}

struct Snapshot {
  std::vector<double> raw;
};

Snapshot runScene() {
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  world->addStaticBox(Transform::fromTranslation(Vec3{0.3, 0.2, 0}), Vec3{0.3, 0.2, 0.3});
  std::vector<BodyId> all;
  for (int c = 0; c < 3; ++c) {
    test::Chain chain = test::makeChain(*world, Vec3{0.1 * c, 2.0 + c, 0.05 * c}, 6, 0.05, 0.1, 1.0 + c,
                                        glm::angleAxis(0.4 * c + 0.2, glm::normalize(Vec3{1, 0.3, 0.2})));
    all.insert(all.end(), chain.bodies.begin(), chain.bodies.end());
  }
  for (int i = 0; i < 180; ++i) world->step(kDt, 2);
  Snapshot s;
  for (BodyId b : all) {
    const Transform t = world->transform(b);
    const Vec3 v = world->linearVelocity(b);
    for (double x : {t.translation.x, t.translation.y, t.translation.z, t.rotation.w, t.rotation.x,
                     t.rotation.y, t.rotation.z, v.x, v.y, v.z})
      s.raw.push_back(x);
  }
  return s;
}

TEST(Determinism, SameSceneTwiceIsBitIdentical) {
  const Snapshot a = runScene();
  const Snapshot b = runScene();
  ASSERT_EQ(a.raw.size(), b.raw.size());
  EXPECT_EQ(std::memcmp(a.raw.data(), b.raw.data(), a.raw.size() * sizeof(double)), 0);
}

}  // namespace
}  // namespace handoff

namespace handoff {
namespace {

TEST(Filters, PairCollisionSwitch) {
  auto world = createBulletWorld(WorldSettings{.gravity = Vec3{0.0}});
  const BodyId a = test::mustCreate(*world, test::sphereDesc(0.2, 1.0, Vec3{0, 0, 0}));
  const BodyId b = test::mustCreate(*world, test::sphereDesc(0.2, 1.0, Vec3{0.3, 0, 0}));  // overlapping
  const BodyId c = test::mustCreate(*world, test::sphereDesc(0.2, 1.0, Vec3{-0.3, 0, 0}));
  world->step(test::kDt, 1);
  EXPECT_GT(world->contactCount(b), 0);
  world->setPairCollision(a, b, false);
  EXPECT_EQ(world->contactCount(b), 0);  // contacts dropped at once
  for (int i = 0; i < 10; ++i) world->step(test::kDt, 1);
  EXPECT_EQ(world->contactCount(b), 0);
  EXPECT_TRUE(test::vecNear(world->linearVelocity(b), Vec3{0.0}, 1e-12));
  EXPECT_GT(world->contactCount(c), 0);  // other pairs unaffected
  world->setPairCollision(a, b, true);
  world->step(test::kDt, 1);
  EXPECT_GT(world->contactCount(b), 0);

  // Switching a jointed pair back on keeps the joint's exclusion (collideConnected = false).
  const BodyId d = test::mustCreate(*world, test::sphereDesc(0.2, 1.0, Vec3{0, 2, 0}));
  const BodyId e = test::mustCreate(*world, test::sphereDesc(0.2, 1.0, Vec3{0.3, 2, 0}));
  test::mustCreate(*world, test::jointAt(*world, d, e, Vec3{0.15, 2, 0}));
  world->setPairCollision(d, e, false);
  world->setPairCollision(d, e, true);
  for (int i = 0; i < 5; ++i) world->step(test::kDt, 1);
  EXPECT_EQ(world->contactCount(e), 0);
}

}  // namespace
}  // namespace handoff

namespace handoff {
namespace {

// A fast body's continuous-collision step leaves Bullet a predictive manifold until the next
// internal step; destroying the body between steps must take it along (one was left, and the next
// step's manifold refresh read the freed body: StateMachineModel under ASan).
TEST(BodyLifetime, DestroyingAFastBodyLeavesNoManifoldBehind) {
  auto world = createBulletWorld();
  const BodyId ground = world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  (void)ground;
  BodyDesc d = test::sphereDesc(0.05, 1.0, Vec3{0.0, 0.3, 0.0});
  d.enableContinuousCollision = true;
  const BodyId ball = test::mustCreate(*world, d);
  world->setLinearVelocity(ball, Vec3{0.0, -30.0, 0.0});  // 0.5 m in a 60 Hz frame: the sweep hits
  world->step(kDt, 1);
  const BulletObjectCounts withBall = bulletObjectCounts(*world);
  std::printf("[ figure ] manifolds with the ball: %d\n", withBall.manifolds);
  ASSERT_GE(withBall.manifolds, 1);
  world->destroyBody(ball);
  EXPECT_EQ(bulletObjectCounts(*world).manifolds, 0) << "a manifold still holds the destroyed ball";
  world->step(kDt, 1);  // and the next step reads nothing freed (ASan)
  EXPECT_EQ(bulletObjectCounts(*world).manifolds, 0);
}

}  // namespace
}  // namespace handoff
