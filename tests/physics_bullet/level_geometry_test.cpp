// Level geometry and what a game asks of its world (issue 26): triangle meshes, convex hulls,
// heightfields and compounds; casts that name the body hit; userData; contact events; collision
// layers mapped to a game's bits.
#include "handoff/physics.h"
#include "handoff/physics_bullet.h"
#include "physics_bullet/scene.h"
#include "support/test_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace handoff {
namespace {

using test::kDt;
using test::mustCreate;

// Bullet's ray test against triangles and convex shapes is exact to rounding; convex casts
// (conservative advancement) stop within ~1e-4 m; a hull's margin is 5 mm and kept inside it.
constexpr double kRayTol = 1e-6;
constexpr double kCastTol = 2e-3;

/// A staircase as a triangle mesh: `steps` steps of `rise` x `run`, 2 m wide, climbing +x from
/// x = 0 (the first riser), the floor y = 0 before it.
struct Stairs {
  std::vector<Vec3> vertices;
  std::vector<std::uint32_t> indices;
  void quad(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
    const auto base = static_cast<std::uint32_t>(vertices.size());
    vertices.insert(vertices.end(), {a, b, c, d});
    indices.insert(indices.end(), {base, base + 1, base + 2, base, base + 2, base + 3});
  }
};
Stairs makeStairs(int steps, double rise, double run) {
  Stairs s;
  for (int i = 0; i < steps; ++i) {
    const double x0 = i * run, x1 = (i + 1) * run, y0 = i * rise, y1 = (i + 1) * rise;
    s.quad(Vec3{x0, y0, -1}, Vec3{x0, y1, -1}, Vec3{x0, y1, 1}, Vec3{x0, y0, 1});  // riser
    s.quad(Vec3{x0, y1, -1}, Vec3{x1, y1, -1}, Vec3{x1, y1, 1}, Vec3{x0, y1, 1});  // tread
  }
  return s;
}

BodyDesc staticShape(ShapeId shape, const Transform& pose) {
  BodyDesc d;
  d.shape.created = shape;
  d.motion = MotionType::Static;
  d.mass = 0.0;
  d.worldFromBody = pose;
  d.filter = CollisionFilter{layers::kStatic, layers::kAll};
  return d;
}

TEST(LevelGeometry, TriangleMeshStairsStopRaysAndHoldABox) {
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  const Stairs stairs = makeStairs(5, 0.2, 0.3);
  Result<ShapeId> mesh = world->createShape(TriangleMeshDesc{stairs.vertices, stairs.indices});
  ASSERT_TRUE(mesh.ok()) << mesh.error();
  const BodyId level = mustCreate(*world, staticShape(*mesh, Transform{}));
  world->destroyShape(*mesh);  // the body keeps it
  // A ray down onto the third tread (x in [0.6, 0.9], y = 0.6).
  const CastHit down = world->castRay(Vec3{0.75, 3.0, 0.0}, Vec3{0.75, -1.0, 0.0}, layers::kAll);
  ASSERT_TRUE(down.hit());
  EXPECT_EQ(down.body, level);
  EXPECT_NEAR(down.point.y, 0.6, kRayTol);
  EXPECT_NEAR(down.fraction, 2.4 / 4.0, kRayTol);
  EXPECT_TRUE(test::vecNear(down.normal, Vec3{0, 1, 0}, 1e-9));
  // A ray along +x at y = 0.5 meets the third riser (x = 0.6), facing -x.
  const CastHit across = world->castRay(Vec3{-1.0, 0.5, 0.0}, Vec3{3.0, 0.5, 0.0}, layers::kAll);
  ASSERT_TRUE(across.hit());
  EXPECT_NEAR(across.point.x, 0.6, kRayTol);
  EXPECT_TRUE(test::vecNear(across.normal, Vec3{-1, 0, 0}, 1e-9));
  // The mesh is static only.
  BodyDesc moving =
      staticShape(*world->createShape(TriangleMeshDesc{stairs.vertices, stairs.indices}), Transform{});
  moving.motion = MotionType::Dynamic;
  moving.mass = 1.0;
  EXPECT_FALSE(world->createBody(moving).ok());
  // A box dropped on the fourth tread (y = 0.8) comes to rest on it.
  const BodyId box = mustCreate(
      *world, test::boxDesc(Vec3{0.1, 0.1, 0.1}, 2.0, Transform::fromTranslation(Vec3{1.05, 1.5, 0.0})));
  for (int i = 0; i < 120; ++i) world->step(kDt, 2);
  EXPECT_NEAR(world->transform(box).translation.y, 0.9, 0.01);
  EXPECT_NEAR(world->transform(box).translation.x, 1.05, 0.01);
}

TEST(LevelGeometry, ShapeErrorsNameWhatIsWrong) {
  auto world = createBulletWorld();
  const std::vector<Vec3> v{{0, 0, 0}, {1, 0, 0}, {0, 0, 1}};
  const std::vector<std::uint32_t> bad{0, 1, 3};
  Result<ShapeId> r = world->createShape(TriangleMeshDesc{v, bad});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("indices[2] = 3 is out of range"), std::string::npos) << r.error();
  const std::vector<Vec3> nan{{0, 0, 0}, {1, 0, 0}, {0, std::nan(""), 1}};
  r = world->createShape(TriangleMeshDesc{nan, std::vector<std::uint32_t>{0, 1, 2}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("vertices[2]"), std::string::npos) << r.error();
  const std::vector<Vec3> flat{{0, 0, 0}, {1, 0, 0}, {0, 0, 1}, {1, 0, 1}};
  r = world->createShape(ConvexHullDesc{flat});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("one plane"), std::string::npos) << r.error();
  r = world->createShape(HeightfieldDesc{3, 3, 1.0, std::vector<double>(8, 0.0)});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("columns * rows is 9"), std::string::npos) << r.error();
  BodyDesc none;
  none.shape.created = ShapeId{12345};
  EXPECT_FALSE(world->createBody(none).ok());
}

TEST(LevelGeometry, ConvexHullCrateKeepsItsSizeAndRests) {
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  std::vector<Vec3> corners;
  for (int i = 0; i < 8; ++i)
    corners.push_back(Vec3{i & 1 ? 0.3 : -0.3, i & 2 ? 0.25 : -0.25, i & 4 ? 0.2 : -0.2});
  Result<ShapeId> hull = world->createShape(ConvexHullDesc{corners});
  ASSERT_TRUE(hull.ok()) << hull.error();
  BodyDesc crate;
  crate.shape.created = *hull;
  crate.mass = 10.0;
  crate.worldFromBody = Transform::fromTranslation(Vec3{0.0, 1.0, 0.0});
  crate.filter = CollisionFilter{layers::kDebris, layers::kAll};
  const BodyId id = mustCreate(*world, crate);
  // Inertia from the shape: a solid box of the hull's bounds (exact for a box hull).
  const glm::dmat3 I = world->worldInertia(id);
  EXPECT_NEAR(I[0][0], 10.0 / 12.0 * (0.5 * 0.5 + 0.4 * 0.4), 1e-6);
  EXPECT_NEAR(I[2][2], 10.0 / 12.0 * (0.6 * 0.6 + 0.5 * 0.5), 1e-6);
  // The hull's outer surface is where its points are (the margin is inside).
  const CastHit side = world->castRay(Vec3{-2.0, 1.0, 0.0}, Vec3{2.0, 1.0, 0.0}, layers::kDebris);
  ASSERT_TRUE(side.hit());
  EXPECT_EQ(side.body, id);
  EXPECT_NEAR(side.point.x, -0.3, kCastTol);
  for (int i = 0; i < 120; ++i) world->step(kDt, 2);
  EXPECT_NEAR(world->transform(id).translation.y, 0.25, kCastTol);
  EXPECT_TRUE(world->isSleeping(id) || glm::length(world->linearVelocity(id)) < 0.01);
}

TEST(LevelGeometry, HeightfieldHeightsAreAsGiven) {
  auto world = createBulletWorld();
  // A 5 x 4 grid, 0.5 m apart, a slope rising 0.1 m per column from 1.0 m.
  std::vector<double> heights;
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 5; ++i) heights.push_back(1.0 + 0.1 * i);
  Result<ShapeId> field = world->createShape(HeightfieldDesc{5, 4, 0.5, heights});
  ASSERT_TRUE(field.ok()) << field.error();
  const BodyId ground =
      mustCreate(*world, staticShape(*field, Transform::fromTranslation(Vec3{10.0, 0.0, 0.0})));
  // Column i is at x = 10 + (i - 2) 0.5: the middle column (height 1.2) at x = 10.
  for (int i = 0; i < 5; ++i) {
    // The edge columns are sampled 1 mm inside the grid (a ray on the edge may miss it).
    const double x = 10.0 + (i - 2) * 0.5 + (i == 0 ? 1e-3 : i == 4 ? -1e-3 : 0.0);
    const CastHit hit = world->castRay(Vec3{x, 5.0, 0.1}, Vec3{x, -5.0, 0.1}, layers::kAll);
    ASSERT_TRUE(hit.hit()) << "column " << i;
    EXPECT_EQ(hit.body, ground);
    EXPECT_NEAR(hit.point.y, 1.0 + 0.1 * i, 1e-3 * 0.2 + 1e-6) << "column " << i;  // slope 0.2 over 1 mm
  }
}

TEST(LevelGeometry, CompoundMovesAsOneAndNamesItsBody) {
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  // A table: a top and four legs.
  std::vector<CompoundChild> parts;
  ShapeDesc top;
  top.type = ShapeType::Box;
  top.halfExtents = Vec3{0.5, 0.025, 0.3};
  parts.push_back({Transform::fromTranslation(Vec3{0, 0.375, 0}), top});
  ShapeDesc leg;
  leg.type = ShapeType::Box;
  leg.halfExtents = Vec3{0.025, 0.175, 0.025};
  for (const double x : {-0.45, 0.45})
    for (const double z : {-0.25, 0.25})
      parts.push_back({Transform::fromTranslation(Vec3{x, 0.175, z}), leg});
  Result<ShapeId> table = world->createShape(CompoundDesc{parts});
  ASSERT_TRUE(table.ok()) << table.error();
  BodyDesc d;
  d.shape.created = *table;
  d.mass = 15.0;
  d.worldFromBody = Transform::fromTranslation(Vec3{0, 0.2, 0});
  d.userData = 0xC0FFEE;
  const BodyId id = mustCreate(*world, d);
  EXPECT_EQ(world->userData(id), 0xC0FFEEu);
  EXPECT_EQ(world->userData(BodyId{}), 0u);
  for (int i = 0; i < 90; ++i) world->step(kDt, 2);
  // Resting on its legs: the body's origin at the floor (legs from 0 to 0.35 in its frame).
  EXPECT_NEAR(world->transform(id).translation.y, 0.0, 0.01);
  const CastHit onTop = world->castRay(Vec3{0.1, 2.0, 0.0}, Vec3{0.1, -1.0, 0.0}, layers::kAll);
  ASSERT_TRUE(onTop.hit());
  EXPECT_EQ(onTop.body, id);
  EXPECT_NEAR(onTop.point.y, 0.4, 0.01);
}

TEST(Casts, NameTheBodyAndItsEngineObject) {
  auto world = createBulletWorld();
  const BodyId a = mustCreate(*world, test::sphereDesc(0.5, 1.0, Vec3{3.0, 0.0, 0.0}));
  const BodyId b = mustCreate(*world, test::sphereDesc(0.5, 1.0, Vec3{6.0, 0.0, 0.0}));
  const CastHit ray = world->castRay(Vec3{0, 0, 0}, Vec3{10, 0, 0}, layers::kAll);
  ASSERT_TRUE(ray.hit());
  EXPECT_EQ(ray.body, a);
  EXPECT_NE(ray.engineObject, nullptr);
  EXPECT_NEAR(ray.point.x, 2.5, kRayTol);
  const CastHit capsule =
      world->castCapsule(Transform::fromTranslation(Vec3{0, 0, 0}), Vec3{10, 0, 0}, 0.2, 0.3, layers::kAll);
  ASSERT_TRUE(capsule.hit());
  EXPECT_EQ(capsule.body, a);
  EXPECT_NEAR(capsule.fraction, (2.5 - 0.2) / 10.0, kCastTol / 10.0);
  world->setEnabled(a, false);
  EXPECT_EQ(world->castRay(Vec3{0, 0, 0}, Vec3{10, 0, 0}, layers::kAll).body, b);
  EXPECT_FALSE(world->castRay(Vec3{0, 0, 0}, Vec3{-10, 0, 0}, layers::kAll).hit());
  EXPECT_EQ(world->castRay(Vec3{0, 0, 0}, Vec3{-10, 0, 0}, layers::kAll).fraction, 1.0);
}

TEST(ContactEvents, ReportedBodyGetsItsImpactImpulse) {
  WorldSettings settings;
  settings.maxContactEvents = 2;
  auto world = createBulletWorld(settings);
  const BodyId ground = world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  const double m = 2.0, v = 3.0;
  const BodyId ball = mustCreate(*world, test::sphereDesc(0.1, m, Vec3{0.0, 0.2, 0.0}));
  world->setLinearVelocity(ball, Vec3{0.0, -v, 0.0});
  world->setContactReport(ball, 0.5);
  // An unreported ball hits too: no event for it.
  const BodyId other = mustCreate(*world, test::sphereDesc(0.1, m, Vec3{2.0, 0.2, 0.0}));
  world->setLinearVelocity(other, Vec3{0.0, -v, 0.0});
  double total = 0.0;
  int withEvents = 0;
  for (int step = 0; step < 20; ++step) {
    world->step(kDt, 2);
    for (const ContactEvent& e : world->contactEvents()) {
      EXPECT_EQ(e.body, ball);
      EXPECT_EQ(e.other, ground);
      EXPECT_NE(e.otherEngineObject, nullptr);
      EXPECT_TRUE(test::vecNear(e.normal, Vec3{0, 1, 0}, 1e-6));
      EXPECT_NEAR(e.point.y, 0.0, 0.02);  // midway across a speculative gap of at most v h
      EXPECT_GE(e.impulse, 0.5);
      total += e.impulse;
    }
    withEvents += world->contactEvents().empty() ? 0 : 1;
  }
  // A plastic impact (restitution 0) stops the ball: m v at impact (after falling the 0.1 m gap),
  // plus at most the weight carried over the one or two steps it lands in (m g dt each), while
  // resting steps (m g dt = 0.33 N s) stay under the 0.5 N s threshold.
  const double impact = m * std::sqrt(v * v + 2.0 * test::kG * 0.1);
  std::printf("[ figure ] impact impulse %.4f N s over %d steps (m v at impact = %.4f)\n", total, withEvents,
              impact);
  EXPECT_GE(withEvents, 1);
  EXPECT_LE(withEvents, 2);
  EXPECT_GE(total, 0.98 * impact);
  EXPECT_LE(total, impact + 2.0 * m * test::kG * kDt + 0.02 * impact);
  // A negative threshold stops the reports.
  world->setContactReport(ball, -1.0);
  world->setLinearVelocity(ball, Vec3{0.0, -v, 0.0});
  world->step(kDt, 2);
  EXPECT_TRUE(world->contactEvents().empty());
  (void)other;
}

TEST(ContactEvents, CapacityIsHeldAndTheRestCounted) {
  WorldSettings settings;
  settings.maxContactEvents = 2;
  auto world = createBulletWorld(settings);
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  for (int k = 0; k < 4; ++k) {
    const BodyId b = mustCreate(*world, test::sphereDesc(0.1, 2.0, Vec3{1.0 * k, 0.5, 0.0}));
    world->setContactReport(b, 0.5);
  }
  std::size_t most = 0;
  int dropped = 0;
  for (int i = 0; i < 30; ++i) {
    world->step(kDt, 2);
    most = std::max(most, world->contactEvents().size());
    dropped += world->lastStepStats().droppedContactEvents;
  }
  EXPECT_EQ(most, 2u);
  EXPECT_GE(dropped, 2);  // four equal balls land in the same step
}

TEST(LayerBits, HandoffLayersLiveOnTheGamesBits) {
  // A game whose groups 0-3 are its own: handoff's layers go to bits 8-11.
  WorldSettings settings;
  settings.layerBits = LayerBits{1u << 8, 1u << 9, 1u << 10, 1u << 11};
  EXPECT_EQ(toWorldBits(layers::kRagdoll | layers::kStatic, settings.layerBits), (1u << 9) | (1u << 8));
  EXPECT_EQ(toWorldBits(layers::kAll, settings.layerBits), layers::kAll);
  EXPECT_EQ(toWorldBits(1u << 20, settings.layerBits), 1u << 20);  // a game's own bit passes
  auto world = createBulletWorld(settings);
  BodyDesc wall = test::boxDesc(Vec3{0.1, 1, 1}, 0.0, Transform::fromTranslation(Vec3{2, 0, 0}));
  wall.motion = MotionType::Static;
  wall.filter = CollisionFilter{layers::kStatic, layers::kAll};
  const BodyId id = mustCreate(*world, wall);
  EXPECT_EQ(world->castRay(Vec3{0, 0, 0}, Vec3{4, 0, 0}, layers::kStatic).body, id);
  EXPECT_FALSE(world->castRay(Vec3{0, 0, 0}, Vec3{4, 0, 0}, layers::kRagdoll).hit());
  EXPECT_EQ(world->collisionFilter(id).layer, layers::kStatic);  // reported in handoff's layers
}

}  // namespace
}  // namespace handoff
