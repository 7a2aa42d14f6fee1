// The ODE adapter's world: filters and pair exclusions, sleeping and waking, impulses and
// momentum, motion type switches, capsule overlap and cast, level geometry (meshes,
// heightfields), contact events, determinism.
#include "handoff/physics.h"
#include "handoff/physics_ode.h"
#include "physics_ode/ode_scene.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace handoff {
namespace {

using ode_test::kDt;
using ode_test::mustCreate;
using ode_test::sphere;

// Two spheres dropped onto each other: they collide when each one's mask has the other's layer,
// pass through each other when either mask lacks it, and when the pair is switched off.
TEST(OdeWorld, FiltersAndPairExclusions) {
  struct Case {
    CollisionFilter lower, upper;
    bool excluded;
    bool collide;
  };
  const Case cases[] = {
      {{layers::kRagdoll, layers::kAll}, {layers::kDebris, layers::kAll}, false, true},
      {{layers::kRagdoll, layers::kStatic}, {layers::kDebris, layers::kAll}, false, false},
      {{layers::kRagdoll, layers::kAll}, {layers::kDebris, layers::kStatic}, false, false},
      {{layers::kRagdoll, layers::kAll}, {layers::kDebris, layers::kAll}, true, false},
  };
  for (const Case& c : cases) {
    auto world = createOdeWorld();
    world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
    BodyDesc a = sphere(0.1, 1.0, Vec3{0.0, 0.1, 0.0});
    a.filter = c.lower;
    BodyDesc b = sphere(0.1, 1.0, Vec3{0.0, 0.5, 0.0});
    b.filter = c.upper;
    const BodyId ia = mustCreate(*world, a);
    const BodyId ib = mustCreate(*world, b);
    if (c.excluded) world->setPairCollision(ia, ib, false);
    for (int i = 0; i < 90; ++i) world->step(kDt, 2);
    const double top = world->transform(ib).translation.y;
    EXPECT_EQ(top > 0.25, c.collide) << "upper sphere at " << top;
    if (c.collide) {
      // Resting on the lower one; switching the pair off drops their contacts at once.
      const int before = world->contactCount(ib);
      world->setPairCollision(ia, ib, false);
      EXPECT_GT(before, 0);
      EXPECT_EQ(world->contactCount(ib), 0);
    }
  }
}

// A resting body falls asleep after sleepTime under the threshold, reports it in the stats, and
// wakes when hit by an awake body; sleep() and wake() act at once.
TEST(OdeWorld, SleepsAndWakes) {
  WorldSettings ws;
  ws.sleepTime = 0.5;
  auto world = createOdeWorld(ws);
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  const BodyId ball = mustCreate(*world, sphere(0.1, 1.0, Vec3{0.0, 0.1, 0.0}));
  int asleepAt = -1;
  for (int i = 1; i <= 120 && asleepAt < 0; ++i) {
    world->step(kDt, 1);
    if (world->isSleeping(ball)) asleepAt = i;
  }
  std::printf("[ figure ] asleep after %d steps (%.3f s; sleepTime 0.5 s)\n", asleepAt, asleepAt * kDt);
  ASSERT_GT(asleepAt, 0);
  EXPECT_GE(asleepAt * kDt, 0.5 - 1e-9);
  EXPECT_LE(asleepAt * kDt, 0.5 + 3 * kDt);
  EXPECT_EQ(world->lastStepStats().sleepingBodies, 1);
  EXPECT_EQ(world->lastStepStats().activeBodies, 0);
  // A second ball dropped on it wakes it.
  const BodyId other = mustCreate(*world, sphere(0.1, 1.0, Vec3{0.0, 0.6, 0.0}));
  bool woke = false;
  for (int i = 0; i < 30 && !woke; ++i) {
    world->step(kDt, 1);
    woke = !world->isSleeping(ball);
  }
  EXPECT_TRUE(woke);
  world->sleep(ball);
  world->sleep(other);
  EXPECT_TRUE(world->isSleeping(ball));
  EXPECT_EQ(world->linearVelocity(ball), Vec3{0.0});
  world->wake(ball);
  EXPECT_FALSE(world->isSleeping(ball));
}

// Two bodies in free space: an impulse at an off-centre point changes linear momentum by the
// impulse and angular momentum about the centre by r x J; a collision between them keeps the
// total linear momentum.
TEST(OdeWorld, ImpulsesAndMomentum) {
  WorldSettings ws;
  ws.gravity = Vec3{0.0};
  auto world = createOdeWorld(ws);
  BodyDesc d;
  d.shape.type = ShapeType::Box;
  d.shape.halfExtents = Vec3{0.2, 0.1, 0.3};
  d.mass = 3.0;
  d.linearDamping = d.angularDamping = 0.0;
  d.worldFromBody = Transform{glm::angleAxis(0.4, glm::normalize(Vec3{1.0, 2.0, 0.5})), Vec3{0.0}};
  const BodyId box = mustCreate(*world, d);
  const Vec3 j{1.0, -2.0, 0.5};
  const Vec3 r{0.1, 0.05, -0.2};
  world->applyLinearImpulse(box, j, r);
  EXPECT_NEAR(glm::length(world->linearVelocity(box) * 3.0 - j), 0.0, 1e-12);
  const Vec3 l = world->worldInertia(box) * world->angularVelocity(box);
  EXPECT_NEAR(glm::length(l - glm::cross(r, j)), 0.0, 1e-12);
  // A head-on hit between two spheres: total momentum kept to 1e-9 N s.
  BodyDesc s1 = sphere(0.1, 1.0, Vec3{2.0, 0.0, 0.0});
  BodyDesc s2 = sphere(0.1, 2.0, Vec3{2.5, 0.0, 0.0});
  s1.linearDamping = s2.linearDamping = 0.0;
  const BodyId b1 = mustCreate(*world, s1);
  const BodyId b2 = mustCreate(*world, s2);
  world->setLinearVelocity(b1, Vec3{3.0, 0.0, 0.0});
  const Vec3 before = 1.0 * world->linearVelocity(b1) + 2.0 * world->linearVelocity(b2);
  for (int i = 0; i < 30; ++i) world->step(kDt, 2);
  const Vec3 after = 1.0 * world->linearVelocity(b1) + 2.0 * world->linearVelocity(b2);
  std::printf("[ figure ] momentum before (%.6f) after (%.6f %.6f %.6f); v2 %.4f m/s\n", before.x, after.x,
              after.y, after.z, world->linearVelocity(b2).x);
  EXPECT_GT(world->linearVelocity(b2).x, 0.5);  // they did collide
  EXPECT_NEAR(glm::length(after - before), 0.0, 1e-9);
}

// Kinematic -> dynamic -> kinematic keeps the pose and the velocity.
TEST(OdeWorld, MotionSwitchKeepsPoseAndVelocity) {
  auto world = createOdeWorld();
  BodyDesc d = sphere(0.1, 1.0, Vec3{0.0, 2.0, 0.0});
  d.motion = MotionType::Kinematic;
  const BodyId body = mustCreate(*world, d);
  const Transform target{glm::angleAxis(0.2, Vec3{0.0, 1.0, 0.0}), Vec3{0.1, 2.0, 0.0}};
  world->moveKinematic(body, target, kDt);
  world->step(kDt, 1);
  const Vec3 v = world->linearVelocity(body);
  const Vec3 w = world->angularVelocity(body);
  world->setMotionType(body, MotionType::Dynamic);
  EXPECT_EQ(world->linearVelocity(body), v);
  EXPECT_EQ(world->angularVelocity(body), w);
  EXPECT_EQ(world->transform(body).translation, target.translation);
  world->step(kDt, 1);
  const Vec3 v2 = world->linearVelocity(body);
  EXPECT_NEAR(v2.y, v.y - 9.81 * kDt, 1e-3);  // falling under gravity now (damping 0.05/s)
  const Transform pose = world->transform(body);
  world->setMotionType(body, MotionType::Kinematic);
  EXPECT_EQ(world->transform(body).translation, pose.translation);
  EXPECT_EQ(world->linearVelocity(body), v2);
}

// Capsule overlap and cast against a box on the ground: the cast stops where the capsule's side
// meets the box's face (to 1e-4 of the path), names the box, and its normal faces back.
TEST(OdeQuery, CapsuleOverlapAndCast) {
  auto world = createOdeWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  const BodyId wall =
      world->addStaticBox(Transform::fromTranslation(Vec3{2.0, 1.0, 0.0}), Vec3{0.1, 1.0, 1.0});
  const Transform start = Transform::fromTranslation(Vec3{0.0, 1.0, 0.0});
  EXPECT_FALSE(world->capsuleOverlaps(start, 0.3, 0.6, layers::kStatic));
  EXPECT_TRUE(
      world->capsuleOverlaps(Transform::fromTranslation(Vec3{0.0, 0.85, 0.0}), 0.3, 0.6, layers::kStatic));
  EXPECT_FALSE(
      world->capsuleOverlaps(Transform::fromTranslation(Vec3{0.0, 0.85, 0.0}), 0.3, 0.6, layers::kDebris));
  const CastHit hit = world->castCapsule(start, Vec3{3.0, 1.0, 0.0}, 0.3, 0.6, layers::kStatic);
  ASSERT_TRUE(hit.hit());
  EXPECT_EQ(hit.body, wall);
  const double expected = (2.0 - 0.1 - 0.3) / 3.0;
  std::printf("[ figure ] cast fraction %.6f (expected %.6f), normal (%.3f %.3f %.3f)\n", hit.fraction,
              expected, hit.normal.x, hit.normal.y, hit.normal.z);
  EXPECT_NEAR(hit.fraction, expected, 1e-4);
  EXPECT_LE(hit.fraction, expected + 1e-9);
  EXPECT_NEAR(hit.normal.x, -1.0, 1e-6);
  EXPECT_NEAR(world->sweepCapsule(start, Vec3{0.0, 1.0, 3.0}, 0.3, 0.6, layers::kStatic), 1.0, 0.0);
}

// Level geometry: a ramp as a triangle mesh and a heightfield sloping along X. Rays land on
// their surfaces where the geometry says; a sphere rests on the mesh.
TEST(OdeLevel, MeshAndHeightfield) {
  auto world = createOdeWorld();
  const std::vector<Vec3> vertices{{-2, 0, -2}, {2, 1, -2}, {2, 1, 2}, {-2, 0, 2}};
  const std::vector<std::uint32_t> indices{0, 1, 2, 0, 2, 3};
  Result<ShapeId> mesh = world->createShape(TriangleMeshDesc{vertices, indices});
  ASSERT_TRUE(mesh.ok()) << mesh.error();
  BodyDesc level;
  level.motion = MotionType::Static;
  level.shape.created = *mesh;
  level.filter = CollisionFilter{layers::kStatic, layers::kAll};
  const BodyId ramp = mustCreate(*world, level);
  CastHit hit = world->castRay(Vec3{1.0, 5.0, 0.0}, Vec3{1.0, -5.0, 0.0}, layers::kAll);
  ASSERT_TRUE(hit.hit());
  EXPECT_EQ(hit.body, ramp);
  EXPECT_NEAR(hit.point.y, 0.75, 1e-9);
  // Heightfield 5 x 3 samples, 1 m apart, centred; height = 0.5 x (column i), far off to the side.
  std::vector<double> heights(15);
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 5; ++i) heights[static_cast<size_t>(j * 5 + i)] = 0.5 * i;
  HeightfieldDesc hf;
  hf.columns = 5;
  hf.rows = 3;
  hf.spacing = 1.0;
  hf.heights = heights;
  Result<ShapeId> field = world->createShape(hf);
  ASSERT_TRUE(field.ok()) << field.error();
  level.shape.created = *field;
  level.worldFromBody = Transform::fromTranslation(Vec3{10.0, 0.0, 0.0});
  const BodyId ground = mustCreate(*world, level);
  // x = 10 + 1.5 is column i = 3.5 (x = (i - 2) spacing): height 1.75.
  hit = world->castRay(Vec3{11.5, 5.0, 0.3}, Vec3{11.5, -5.0, 0.3}, layers::kAll);
  ASSERT_TRUE(hit.hit());
  EXPECT_EQ(hit.body, ground);
  std::printf("[ figure ] heightfield ray at x = 11.5: y %.6f (expected 1.75)\n", hit.point.y);
  EXPECT_NEAR(hit.point.y, 1.75, 1e-6);
  // Moving bodies cannot use them; bad meshes are refused naming the index.
  BodyDesc moving = level;
  moving.motion = MotionType::Dynamic;
  EXPECT_FALSE(world->createBody(moving).ok());
  const std::vector<std::uint32_t> bad{0, 1, 7};
  const Result<ShapeId> refused = world->createShape(TriangleMeshDesc{vertices, bad});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("index 2"), std::string::npos) << refused.error();
  // A sphere dropped on the ramp comes to rest on it (rolls down: it is a slope; checked on top).
  const BodyId ball = mustCreate(*world, sphere(0.2, 1.0, Vec3{0.0, 1.5, 0.0}));
  for (int i = 0; i < 20; ++i) world->step(kDt, 2);
  const Vec3 p = world->transform(ball).translation;
  const double surface = 0.5 + p.x / 4.0;  // the ramp's height under the centre
  EXPECT_GT(p.y - surface, 0.1);           // above the surface, not through it
}

// Contact events: a 2 kg ball thrown at the ground at 3 m/s without gravity reports, against the
// ground and named, the impulse that changed its momentum: m (v_end - v_start) along the normal,
// to 1e-6 N s (the stop, 6 N s, plus the push out of the penetration its first contact substep
// left).
TEST(OdeWorld, ContactEvents) {
  WorldSettings ws;
  ws.gravity = Vec3{0.0};
  auto world = createOdeWorld(ws);
  const BodyId ground = world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  BodyDesc d = sphere(0.1, 2.0, Vec3{0.0, 0.12, 0.0});
  d.linearDamping = 0.0;
  const BodyId ball = mustCreate(*world, d);
  world->setContactReport(ball, 0.5);
  world->setLinearVelocity(ball, Vec3{0.0, -3.0, 0.0});
  double total = 0.0;
  int events = 0;
  for (int i = 0; i < 10; ++i) {
    world->step(kDt, 2);
    for (const ContactEvent& e : world->contactEvents()) {
      EXPECT_EQ(e.body, ball);
      EXPECT_EQ(e.other, ground);
      EXPECT_NEAR(e.normal.y, 1.0, 1e-9);
      total += e.impulse;
      ++events;
    }
  }
  const double change = 2.0 * (world->linearVelocity(ball).y + 3.0);
  std::printf("[ figure ] %d event(s), impulse %.6f N s, momentum change %.6f N s\n", events, total, change);
  EXPECT_GE(events, 1);
  EXPECT_GT(total, 6.0 - 1e-6);
  EXPECT_NEAR(total, change, 1e-6);
}

// One world is deterministic: the same scene twice gives bit-identical states.
TEST(OdeWorld, Deterministic) {
  auto run = [] {
    auto world = createOdeWorld();
    world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
    std::vector<BodyId> ids;
    for (int i = 0; i < 12; ++i) {
      BodyDesc d;
      d.shape.type = ShapeType::Capsule;
      d.shape.radius = 0.1;
      d.shape.halfHeight = 0.2;
      d.worldFromBody = Transform{glm::angleAxis(0.3 * i, Vec3{0.0, 0.0, 1.0}),
                                  Vec3{0.05 * i, 0.3 + 0.35 * i, 0.02 * (i % 3)}};
      ids.push_back(*world->createBody(d));
    }
    for (int i = 0; i < 120; ++i) world->step(kDt, 2);
    std::vector<double> state;
    for (BodyId id : ids) {
      const Transform t = world->transform(id);
      state.insert(state.end(),
                   {t.translation.x, t.translation.y, t.translation.z, t.rotation.w, t.rotation.x});
    }
    return state;
  };
  const std::vector<double> a = run();
  const std::vector<double> b = run();
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)), 0);
}

}  // namespace
}  // namespace handoff
