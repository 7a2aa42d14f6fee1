// Scene queries of the Bullet adapter against a box wall: capsule overlap, capsule sweep, ray.
#include "handoff/physics.h"
#include "handoff/physics_bullet.h"
#include "physics_bullet/scene.h"
#include "support/bullet_precision.h"
#include "support/test_math.h"

#include <gtest/gtest.h>

#include <random>

namespace handoff {
namespace {

// Geometric tolerances: Bullet's convex queries (GJK, conservative advancement) stop within
// ~1e-4 m; the box's rounded corners (margin) do not matter on its faces.
constexpr double kQueryTol = 2e-3;

class Queries : public ::testing::Test {
 protected:
  void SetUp() override {
    world = createBulletWorld();
    world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
    // A wall: its face toward the origin is the plane x = 1.9.
    wall = world->addStaticBox(Transform::fromTranslation(Vec3{2.0, 1.0, 0.0}), Vec3{0.1, 1.0, 1.0});
  }
  std::unique_ptr<PhysicsWorld> world;
  BodyId wall;
  const Transform standing = Transform::fromTranslation(Vec3{0.0, 1.0, 0.0});  // capsule axis +Y
};

TEST_F(Queries, CapsuleOverlap) {
  const double r = 0.3;
  const double hh = 0.6;  // reaches y in [0.1, 1.9]: clear of the ground
  EXPECT_FALSE(world->capsuleOverlaps(standing, r, hh, layers::kAll));
  EXPECT_FALSE(world->capsuleOverlaps(Transform::fromTranslation(Vec3{1.9 - r - 0.01, 1.0, 0.0}), r, hh,
                                      layers::kAll));
  EXPECT_TRUE(world->capsuleOverlaps(Transform::fromTranslation(Vec3{1.9 - r + 0.01, 1.0, 0.0}), r, hh,
                                     layers::kAll));
  // Filtered by the query's mask only.
  EXPECT_FALSE(world->capsuleOverlaps(Transform::fromTranslation(Vec3{1.9 - r + 0.01, 1.0, 0.0}), r, hh,
                                      layers::kAll & ~layers::kStatic));
  // Lowered into the ground.
  EXPECT_TRUE(
      world->capsuleOverlaps(Transform::fromTranslation(Vec3{0.0, 0.85, 0.0}), r, hh, layers::kStatic));
  // Dynamic bodies count too, disabled ones do not.
  const BodyId ball = test::mustCreate(*world, test::sphereDesc(0.2, 1.0, Vec3{-1.0, 1.0, 0.0}));
  const Transform nearBall = Transform::fromTranslation(Vec3{-1.0 + 0.45, 1.0, 0.0});
  EXPECT_TRUE(world->capsuleOverlaps(nearBall, r, hh, layers::kRagdoll));
  EXPECT_FALSE(world->capsuleOverlaps(nearBall, r, hh, layers::kDebris));
  world->setEnabled(ball, false);
  EXPECT_FALSE(world->capsuleOverlaps(nearBall, r, hh, layers::kAll));
}

TEST_F(Queries, CapsuleSweep) {
  const double r = 0.3;
  const double hh = 0.6;
  // From x = 0 to x = 4: blocked when the capsule's surface reaches the face x = 1.9.
  const double expected = (1.9 - r) / 4.0;
  const double fraction = world->sweepCapsule(standing, Vec3{4.0, 1.0, 0.0}, r, hh, layers::kAll);
  EXPECT_NEAR(fraction, expected, kQueryTol / 4.0);
  EXPECT_DOUBLE_EQ(world->sweepCapsule(standing, Vec3{4.0, 1.0, 0.0}, r, hh, layers::kAll & ~layers::kStatic),
                   1.0);
  EXPECT_DOUBLE_EQ(world->sweepCapsule(standing, Vec3{-4.0, 1.0, 0.0}, r, hh, layers::kAll), 1.0);
  // Lying capsule (axis along X) swept toward the wall: its end cap leads.
  const Transform lying{glm::angleAxis(0.5 * kPi, Vec3{0, 0, 1}), Vec3{0.0, 1.0, 0.0}};
  EXPECT_NEAR(world->sweepCapsule(lying, Vec3{4.0, 1.0, 0.0}, r, hh, layers::kAll), (1.9 - r - hh) / 4.0,
              kQueryTol / 4.0);
}

TEST_F(Queries, RayCast) {
  // Single precision: Bullet computes the fraction in float from the ray's ends and the wall's
  // face (coordinates up to 4 m over a 4 m ray: a few roundings of 1).
  const double tolerance = test::bulletTolerance(1e-9, 1.0, 4);
  Vec3 normal{0.0};
  const double fraction = world->rayCast(Vec3{0.0, 1.0, 0.0}, Vec3{4.0, 1.0, 0.0}, layers::kAll, &normal);
  EXPECT_NEAR(fraction, 1.9 / 4.0, tolerance);
  EXPECT_TRUE(test::vecNear(normal, Vec3{-1.0, 0.0, 0.0}, tolerance));
  // Down onto the ground.
  EXPECT_NEAR(world->rayCast(Vec3{0.0, 1.0, 0.0}, Vec3{0.0, -1.0, 0.0}, layers::kAll, &normal), 0.5,
              tolerance);
  EXPECT_TRUE(test::vecNear(normal, Vec3{0.0, 1.0, 0.0}, tolerance));
  // Misses and filters.
  EXPECT_EQ(world->rayCast(Vec3{0.0, 1.0, 0.0}, Vec3{0.0, 3.0, 0.0}, layers::kAll), 1.0);
  EXPECT_EQ(world->rayCast(Vec3{0.0, 1.0, 0.0}, Vec3{4.0, 1.0, 0.0}, layers::kRagdoll), 1.0);
  EXPECT_NEAR(world->rayCast(Vec3{0.0, 1.0, 0.0}, Vec3{4.0, 1.0, 0.0}, layers::kStatic), 1.9 / 4.0,
              test::bulletTolerance(0.0, 1.0, 4));
}

TEST_F(Queries, SeeBodiesWhereTheStepLeftThem) {
  // A fast ball is found where the step left it: Bullet refreshes broadphase bounds at the start
  // of the next step's collision detection, so the adapter refreshes them after every step.
  auto empty = createBulletWorld(WorldSettings{.gravity = Vec3{0.0}});
  BodyDesc d = test::sphereDesc(0.1, 1.0, Vec3{0.0, 1.0, 0.0});
  d.linearDamping = 0.0;
  const BodyId ball = test::mustCreate(*empty, d);
  empty->setLinearVelocity(ball, Vec3{30.0, 0.0, 0.0});
  empty->step(test::kDt, 1);
  const double x = empty->transform(ball).translation.x;
  // Single precision: the pose and the ray's fraction are float (a few roundings of 1 m).
  const double tolerance = test::bulletTolerance(1e-9, 1.0, 4);
  EXPECT_NEAR(x, 0.5, tolerance);
  EXPECT_NEAR(empty->rayCast(Vec3{x, 2.0, 0.0}, Vec3{x, 0.0, 0.0}, layers::kAll), 0.45, tolerance);
  EXPECT_TRUE(empty->capsuleOverlaps(Transform::fromTranslation(Vec3{x, 1.3, 0.0}), 0.1, 0.15, layers::kAll));
  // And after a teleport.
  empty->setTransform(ball, Transform::fromTranslation(Vec3{-3.0, 1.0, 0.0}));
  EXPECT_NEAR(empty->rayCast(Vec3{-3.0, 2.0, 0.0}, Vec3{-3.0, 0.0, 0.0}, layers::kAll), 0.45, tolerance);
}

TEST_F(Queries, ContactCountPerBody) {
  const BodyId box =
      test::mustCreate(*world, test::boxDesc(Vec3{0.2}, 1.0, Transform::fromTranslation(Vec3{0, 0.2, 0})));
  for (int i = 0; i < 10; ++i) world->step(test::kDt, 2);
  EXPECT_EQ(world->contactCount(box), 4);
  EXPECT_EQ(world->contactCount(wall), 0);
}

// closestPoints against static planes alone takes a shortcut past Bullet's contactTest: it must
// report what contactTest reports (for a plane, the shape's deepest point while within the
// contact breaking threshold, whatever the query's distance). The same bodies and planes in two
// worlds, the second with a static box far away (its queries take the general path), seeded
// random poses about the planes.
TEST(ClosestPoints, PlanesAloneReportWhatTheGeneralQueryReports) {
  std::unique_ptr<PhysicsWorld> planes = createBulletWorld(), general = createBulletWorld();
  std::vector<BodyId> planeIds;
  for (PhysicsWorld* w : {planes.get(), general.get()}) {
    planeIds.push_back(w->addGroundPlane(Vec3{0, 1, 0}, 0.0));
    planeIds.push_back(w->addGroundPlane(Vec3{-1, 1, 0}, -1.5));  // a slope up toward -x
  }
  general->addStaticBox(Transform::fromTranslation(Vec3{100.0, 1.0, 0.0}), Vec3{0.5});
  std::vector<BodyDesc> shapes{test::capsuleDesc(0.06, 0.2, 2.0, Transform{}),
                               test::boxDesc(Vec3{0.05, 0.12, 0.09}, 1.0, Transform{}),
                               test::sphereDesc(0.1, 1.0, Vec3{0.0})};
  std::vector<BodyId> inPlanes, inGeneral;
  for (const BodyDesc& d : shapes) {
    inPlanes.push_back(test::mustCreate(*planes, d));
    inGeneral.push_back(test::mustCreate(*general, d));
  }
  std::mt19937 rng(1607u);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  int queries = 0, reported = 0, mismatches = 0;
  double worst = 0.0;
  for (int trial = 0; trial < 600; ++trial) {
    const size_t s = static_cast<size_t>(trial) % shapes.size();
    const Quat rotation = glm::normalize(Quat{unit(rng), unit(rng), unit(rng), unit(rng)});
    const Transform pose{rotation, Vec3{unit(rng) * 0.5 - 1.6, 0.15 * (unit(rng) + 1.0), unit(rng)}};
    const double maxDistance = 0.15 * (unit(rng) + 1.0);
    const std::uint32_t mask = trial % 10 == 9 ? layers::kRagdoll : layers::kStatic;  // no planes in kRagdoll
    SurfacePoint a[4], b[4];
    const int na = planes->closestPoints(inPlanes[s], pose, maxDistance, mask, a);
    const int nb = general->closestPoints(inGeneral[s], pose, maxDistance, mask, b);
    ++queries;
    reported += na;
    if (na != nb) {
      ++mismatches;
      continue;
    }
    // The same planes in either order: match each point by its normal.
    for (int i = 0; i < na; ++i) {
      const SurfacePoint* match = nullptr;
      for (int k = 0; k < nb; ++k)
        if (glm::length(a[i].normal - b[k].normal) < 1e-9) match = &b[k];
      if (match == nullptr) {
        ++mismatches;
        continue;
      }
      worst = std::max(
          {worst, glm::length(a[i].point - match->point), std::abs(a[i].distance - match->distance)});
    }
  }
  // A disabled plane is not reported.
  planes->setEnabled(planeIds[0], false);
  SurfacePoint p[4];
  const int afterDisable = planes->closestPoints(inPlanes[2], Transform::fromTranslation(Vec3{0.0, 0.1, 0.0}),
                                                 0.1, layers::kStatic, p);
  std::printf("[closest points] %d queries, %d points reported, %d mismatches, worst difference %.3g m\n",
              queries, reported, mismatches, worst);
  EXPECT_EQ(mismatches, 0);
  EXPECT_GT(reported, queries / 4) << "poses near enough to the planes to report points";
  EXPECT_LE(worst, 1e-12);
  EXPECT_EQ(afterDisable, 0);
}

}  // namespace
}  // namespace handoff
