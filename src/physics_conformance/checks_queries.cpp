// Conformance checks of queries (capsule overlap, capsule cast, ray cast and the body they name),
// created shapes (meshes, hulls, heightfields, compounds) and bad input refused as errors
// (handoff/physics.h).
#include "handoff/physics.h"
#include "physics_conformance/conformance_internal.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace handoff::conformance::detail {
namespace {

// A ray's fraction and point are exact up to float rounding of a few-metre scene (1e-6 m); 1e-4 m
// leaves room for an engine that rounds its shapes' edges (the faces hit here are flat). A swept
// capsule is found by iterating (conservative advancement, GJK): within 2 mm of first contact.
constexpr double kRayTolerance = 1e-4;
constexpr double kSweepTolerance = 2e-3;

/// A wall of static box, its face toward the origin the plane x = 1.9, and a dynamic ball (layer
/// kRagdoll) in front of it at x = 1.0, without gravity.
struct WallScene {
  std::unique_ptr<PhysicsWorld> world;
  BodyId wall, ball;
};

WallScene makeWallScene(Probe& probe) {
  WallScene s;
  s.world = probe.world(WorldSettings{.gravity = Vec3{0.0}});
  s.world->addGroundPlane(Vec3{0.0, 1.0, 0.0}, 0.0);
  s.wall = s.world->addStaticBox(Transform::fromTranslation(Vec3{2.0, 1.0, 0.0}), Vec3{0.1, 1.0, 1.0});
  BodyDesc ball = sphereBody(0.2, 1.0, Vec3{1.0, 1.0, 0.0});
  ball.filter = CollisionFilter{layers::kRagdoll, layers::kAll};
  s.ball = mustCreate(*s.world, ball, "ball");
  return s;
}

std::string hitText(const CastHit& hit) {
  return hit.hit() ? "hit at " + fmt(hit.point) + ", fraction " + fmt(hit.fraction) : "no hit";
}

// capsuleOverlaps: true when the capsule overlaps an enabled body whose layer is in the mask.
// 1 cm either side of the wall's face, with and without kStatic in the mask; the ball seen through
// kRagdoll only, and not once disabled.
void capsuleOverlap(Probe& probe) {
  WallScene s = makeWallScene(probe);
  const double r = 0.3, hh = 0.6;  // from y = 0.1 to 1.9: clear of the ground
  const auto at = [](double x, double z) { return Transform::fromTranslation(Vec3{x, 1.0, z}); };
  const auto says = [&](std::string_view what, bool got, bool expected) {
    probe.holds(
        what, got == expected,
        std::string(got ? "overlaps" : "clear") + (expected ? " (overlaps" : " (clear") + " expected)");
  };
  says("capsule 1 cm clear of the wall",
       s.world->capsuleOverlaps(at(1.9 - r - 0.01, 0.0), r, hh, layers::kAll), false);
  says("capsule 1 cm into the wall", s.world->capsuleOverlaps(at(1.9 - r + 0.01, 0.0), r, hh, layers::kAll),
       true);
  says("  mask without kStatic",
       s.world->capsuleOverlaps(at(1.9 - r + 0.01, 0.0), r, hh, layers::kAll & ~layers::kStatic), false);
  says("capsule lowered 5 cm into the ground, mask kStatic",
       s.world->capsuleOverlaps(Transform::fromTranslation(Vec3{-2.0, 0.85, 0.0}), r, hh, layers::kStatic),
       true);
  const Transform nearBall = at(1.0, 0.45);  // 0.05 m into the ball (0.2 + 0.3 - 0.45)
  says("capsule 5 cm into the ball, mask kRagdoll",
       s.world->capsuleOverlaps(nearBall, r, hh, layers::kRagdoll), true);
  says("  mask kDebris", s.world->capsuleOverlaps(nearBall, r, hh, layers::kDebris), false);
  s.world->setEnabled(s.ball, false);
  says("  ball disabled, mask kAll", s.world->capsuleOverlaps(nearBall, r, hh, layers::kAll), false);
}

// castCapsule / sweepCapsule: the free part of the path and the body hit. A standing capsule
// swept along +x stops at the ball, then (mask without kRagdoll) at the wall; a lying one (axis
// along x) leads with its cap; away from everything the fraction is 1 and nothing is named.
void capsuleSweep(Probe& probe) {
  WallScene s = makeWallScene(probe);
  const double r = 0.3, hh = 0.6;
  const Transform standing = Transform::fromTranslation(Vec3{0.0, 1.0, 0.0});
  const Vec3 to{4.0, 1.0, 0.0};
  const CastHit ball = s.world->castCapsule(standing, to, r, hh, layers::kAll);
  probe.near("standing capsule toward the ball: fraction", ball.fraction, (1.0 - 0.2 - r) / 4.0,
             kSweepTolerance / 4.0);
  probe.holds("  body hit", ball.body == s.ball, "the ball expected, " + hitText(ball));
  const CastHit wall = s.world->castCapsule(standing, to, r, hh, layers::kAll & ~layers::kRagdoll);
  probe.near("mask without kRagdoll: fraction (the wall)", wall.fraction, (1.9 - r) / 4.0,
             kSweepTolerance / 4.0);
  probe.holds("  body hit", wall.body == s.wall, "the wall expected, " + hitText(wall));
  probe.near("  sweepCapsule() agrees",
             s.world->sweepCapsule(standing, to, r, hh, layers::kAll & ~layers::kRagdoll), wall.fraction,
             0.0);
  const Transform lying{glm::angleAxis(0.5 * kPi, Vec3{0.0, 0.0, 1.0}), Vec3{0.0, 1.0, 0.0}};
  probe.near("lying capsule (axis along x), mask kStatic: fraction",
             s.world->sweepCapsule(lying, to, r, hh, layers::kStatic), (1.9 - r - hh) / 4.0,
             kSweepTolerance / 4.0);
  const CastHit away = s.world->castCapsule(standing, Vec3{-4.0, 1.0, 0.0}, r, hh, layers::kAll);
  probe.holds("swept away from everything: no hit, fraction 1, no body",
              !away.hit() && away.fraction == 1.0 && !away.body.valid(), hitText(away));
}

// castRay: fraction, point, normal and the body of the first hit. The ball in front of the wall is
// hit first and named; the mask or disabling it lets the ray reach the wall; a miss reports
// fraction 1 and no body.
void rayCheck(Probe& probe) {
  WallScene s = makeWallScene(probe);
  const Vec3 from{0.0, 1.0, 0.0}, to{4.0, 1.0, 0.0};
  const CastHit ball = s.world->castRay(from, to, layers::kAll);
  probe.holds("ray along +x: body hit", ball.hit() && ball.body == s.ball,
              "the ball expected, " + hitText(ball));
  probe.near("  fraction", ball.fraction, 0.8 / 4.0, kRayTolerance / 4.0);
  probe.nearVec("  point", ball.point, Vec3{0.8, 1.0, 0.0}, kRayTolerance, "m");
  probe.nearVec("  normal", ball.normal, Vec3{-1.0, 0.0, 0.0}, kRayTolerance);
  const CastHit wall = s.world->castRay(from, to, layers::kStatic);
  probe.holds("mask kStatic: body hit", wall.hit() && wall.body == s.wall,
              "the wall expected, " + hitText(wall));
  probe.near("  fraction", wall.fraction, 1.9 / 4.0, kRayTolerance / 4.0);
  probe.near("  rayCast() agrees", s.world->rayCast(from, to, layers::kStatic), wall.fraction, 0.0);
  const CastHit down = s.world->castRay(Vec3{0.0, 1.0, 0.0}, Vec3{0.0, -1.0, 0.0}, layers::kAll);
  probe.near("ray down onto the ground: fraction", down.fraction, 0.5, kRayTolerance / 2.0);
  probe.nearVec("  normal", down.normal, Vec3{0.0, 1.0, 0.0}, kRayTolerance);
  s.world->setEnabled(s.ball, false);
  const CastHit past = s.world->castRay(from, to, layers::kAll);
  probe.holds("ball disabled: the ray hits the wall", past.hit() && past.body == s.wall, hitText(past));
  const CastHit miss = s.world->castRay(from, Vec3{0.0, 3.0, 0.0}, layers::kAll);
  probe.holds("ray up into nothing: no hit, fraction 1, no body",
              !miss.hit() && miss.fraction == 1.0 && !miss.body.valid(), hitText(miss));
}

// closestPoints: optional (Options::closestPoints; not claimed: it reports none). A box of half
// size 0.2 placed for the query 5 mm above the ground (the body itself stays where it is), asked
// within 2 cm (the landing's contact distance, ControllerSettings): points on the box's bottom face
// (y = 0.005), 5 mm from the ground, normal from the ground toward the box (+y), within 1 mm (a
// convex-plane distance is exact up to float rounding and a contact margin). The mask filters, and
// nothing is reported 1 m away. The gap is kept under 1 cm because Bullet's plane test answers only
// within its contact breaking threshold whatever maxDistance says: this box 1 cm above the ground,
// asked within 2 cm, gets no point from it (a gap between the header's contract and the Bullet
// adapter, not asserted here).
void closestPointsCheck(Probe& probe) {
  auto world = probe.world(WorldSettings{.gravity = Vec3{0.0}});
  world->addGroundPlane(Vec3{0.0, 1.0, 0.0}, 0.0);
  const BodyId box =
      mustCreate(*world, boxBody(Vec3{0.2}, 1.0, Transform::fromTranslation(Vec3{0.0, 1.0, 0.0})), "box");
  SurfacePoint out[8];
  const Transform above = Transform::fromTranslation(Vec3{0.0, 0.205, 0.0});
  const int n = world->closestPoints(box, above, 0.02, layers::kStatic, out);
  if (!probe.options().closestPoints) {
    probe.near("closestPoints not claimed (Options): points reported", n, 0, 0.0);
    return;
  }
  probe.atLeast("box 5 mm above the ground, maxDistance 2 cm: points", n, 1);
  double worstDistance = 0.0, worstNormal = 0.0, worstPoint = 0.0;
  for (int i = 0; i < std::min(n, 8); ++i) {
    worstDistance = std::max(worstDistance, std::abs(out[i].distance - 0.005));
    worstNormal = std::max(worstNormal, glm::length(out[i].normal - Vec3{0.0, 1.0, 0.0}));
    worstPoint = std::max(worstPoint, std::abs(out[i].point.y - 0.005));
  }
  probe.atMost("  largest |distance - 0.005 m|", worstDistance, 1e-3, "m");
  probe.atMost("  largest normal's distance from +y", worstNormal, 1e-3);
  probe.atMost("  largest |height of the point - 0.005 m| (the box's bottom face)", worstPoint, 1e-3, "m");
  probe.near("mask kRagdoll (the ground is kStatic): points",
             world->closestPoints(box, above, 0.02, layers::kRagdoll, out), 0, 0.0);
  probe.near(
      "box 1 m above the ground, maxDistance 2 cm: points",
      world->closestPoints(box, Transform::fromTranslation(Vec3{0.0, 1.2, 0.0}), 0.02, layers::kStatic, out),
      0, 0.0);
  probe.nearVec("the body itself stays where it is", world->transform(box).translation, Vec3{0.0, 1.0, 0.0},
                1e-9, "m");
}

BodyDesc createdBody(ShapeId shape, MotionType motion, const Transform& pose) {
  BodyDesc d;
  d.shape.created = shape;
  d.motion = motion;
  d.mass = 2.0;
  d.worldFromBody = pose;
  d.filter = CollisionFilter{motion == MotionType::Static ? layers::kStatic : layers::kDebris, layers::kAll};
  return d;
}

/// A shape kind the adapter does not claim must be refused with an error.
void mustRefuse(Probe& probe, const Result<ShapeId>& shape, std::string_view kind) {
  probe.holds(std::string(kind) + " not claimed (Options): createShape refuses it with an error",
              !shape.ok() && !shape.error().empty(), shape.ok() ? "accepted" : "refused: " + shape.error());
}

/// The shape, or Abort.
ShapeId mustShape(const Result<ShapeId>& shape, std::string_view kind) {
  if (!shape.ok()) throw Abort("createShape(" + std::string(kind) + ") was refused: " + shape.error());
  return *shape;
}

// A static triangle mesh floor at y = 0.5 (two triangles wound facing down: either winding
// collides) stops a ray from above where it is and names its body, and holds a box dropped on it.
void triangleMesh(Probe& probe) {
  auto world = probe.world();
  const std::vector<Vec3> vertices{{-2.0, 0.0, -2.0}, {2.0, 0.0, -2.0}, {2.0, 0.0, 2.0}, {-2.0, 0.0, 2.0}};
  const std::vector<std::uint32_t> indices{0, 1, 2, 0, 2, 3};  // clockwise seen from above
  const Result<ShapeId> shape = world->createShape(TriangleMeshDesc{vertices, indices});
  if (!probe.options().triangleMeshes) return mustRefuse(probe, shape, "TriangleMeshDesc");
  const BodyId floor = mustCreate(*world,
                                  createdBody(mustShape(shape, "TriangleMeshDesc"), MotionType::Static,
                                              Transform::fromTranslation(Vec3{0.0, 0.5, 0.0})),
                                  "mesh floor");
  const CastHit hit = world->castRay(Vec3{0.3, 2.0, 0.2}, Vec3{0.3, -2.0, 0.2}, layers::kAll);
  probe.holds("ray down onto the mesh: body hit", hit.hit() && hit.body == floor, hitText(hit));
  probe.near("  height of the hit", hit.point.y, 0.5, kRayTolerance, "m");
  const BodyId box = mustCreate(
      *world, boxBody(Vec3{0.2}, 1.0, Transform::fromTranslation(Vec3{0.0, 1.5, 0.0})), "box dropped on it");
  stepFor(*world, 90);
  probe.near("box dropped on the mesh: height after 1.5 s", world->transform(box).translation.y, 0.7,
             kRestTolerance, "m");
}

// A convex hull of a box's corners (0.3 x 0.25 x 0.2 half sizes) is where its points are (a ray
// from the side stops at x = -0.3, names the body), and a crate of it rests on the ground at
// its half height.
void convexHull(Probe& probe) {
  auto world = probe.world();
  world->addGroundPlane(Vec3{0.0, 1.0, 0.0}, 0.0);
  std::vector<Vec3> corners;
  for (int i = 0; i < 8; ++i)
    corners.push_back(Vec3{i & 1 ? 0.3 : -0.3, i & 2 ? 0.25 : -0.25, i & 4 ? 0.2 : -0.2});
  const Result<ShapeId> shape = world->createShape(ConvexHullDesc{corners});
  if (!probe.options().convexHulls) return mustRefuse(probe, shape, "ConvexHullDesc");
  const BodyId crate = mustCreate(*world,
                                  createdBody(mustShape(shape, "ConvexHullDesc"), MotionType::Dynamic,
                                              Transform::fromTranslation(Vec3{0.0, 1.0, 0.0})),
                                  "hull crate");
  const CastHit side = world->castRay(Vec3{-2.0, 1.0, 0.05}, Vec3{2.0, 1.0, 0.05}, layers::kDebris);
  probe.holds("ray from the side: body hit", side.hit() && side.body == crate, hitText(side));
  probe.near("  x of the hit (the hull's face)", side.point.x, -0.3, kSweepTolerance, "m");
  stepFor(*world, 120);
  probe.near("crate dropped on the ground: height after 2 s", world->transform(crate).translation.y, 0.25,
             kRestTolerance, "m");
}

// A heightfield's sample (i, j) is at x = (i - (columns - 1) / 2) spacing, z = (j - (rows - 1) / 2)
// spacing in body space, y = heights[j * columns + i]. Heights on a plane (0.2 per column, 0.1 per
// row) make the surface that plane wherever the engine splits its cells: rays down at points
// between the samples hit it there, on a body placed at (5, 1, 0).
void heightfield(Probe& probe) {
  auto world = probe.world();
  const int columns = 4, rows = 3;
  const double spacing = 0.5;
  std::vector<double> heights;
  for (int j = 0; j < rows; ++j)
    for (int i = 0; i < columns; ++i) heights.push_back(0.2 * i + 0.1 * j);
  const Result<ShapeId> shape = world->createShape(HeightfieldDesc{columns, rows, spacing, heights});
  if (!probe.options().heightfields) return mustRefuse(probe, shape, "HeightfieldDesc");
  const Vec3 origin{5.0, 1.0, 0.0};
  const BodyId field = mustCreate(*world,
                                  createdBody(mustShape(shape, "HeightfieldDesc"), MotionType::Static,
                                              Transform::fromTranslation(origin)),
                                  "heightfield");
  for (const Vec3& local : {Vec3{-0.6, 0.0, -0.4}, Vec3{0.1, 0.0, 0.3}, Vec3{0.55, 0.0, -0.1}}) {
    const double i = local.x / spacing + (columns - 1) / 2.0;
    const double j = local.z / spacing + (rows - 1) / 2.0;
    const double y = origin.y + 0.2 * i + 0.1 * j;
    const Vec3 top = origin + Vec3{local.x, 5.0, local.z};
    const CastHit hit = world->castRay(top, top - Vec3{0.0, 10.0, 0.0}, layers::kAll);
    probe.holds("ray down at body-space (" + fmt(local.x) + ", " + fmt(local.z) + "): body hit",
                hit.hit() && hit.body == field, hitText(hit));
    probe.near("  height of the hit", hit.point.y, y, kRayTolerance, "m");
  }
}

// A compound of a box child at +0.5 x and a sphere child at -0.5 x is one body: rays hit each
// child where it is and name the body, the gap between them is empty, and its mass is the body's.
void compound(Probe& probe) {
  auto world = probe.world(WorldSettings{.gravity = Vec3{0.0}});
  ShapeDesc box;
  box.type = ShapeType::Box;
  box.halfExtents = Vec3{0.2};
  ShapeDesc ball;
  ball.type = ShapeType::Sphere;
  ball.radius = 0.2;
  const std::vector<CompoundChild> children{{Transform::fromTranslation(Vec3{0.5, 0.0, 0.0}), box},
                                            {Transform::fromTranslation(Vec3{-0.5, 0.0, 0.0}), ball}};
  const Result<ShapeId> shape = world->createShape(CompoundDesc{children});
  if (!probe.options().compounds) return mustRefuse(probe, shape, "CompoundDesc");
  const BodyId body = mustCreate(*world,
                                 createdBody(mustShape(shape, "CompoundDesc"), MotionType::Dynamic,
                                             Transform::fromTranslation(Vec3{0.0, 1.0, 0.0})),
                                 "compound");
  const CastHit onBox = world->castRay(Vec3{0.5, 1.05, -2.0}, Vec3{0.5, 1.05, 2.0}, layers::kAll);
  probe.holds("ray along z through the box child: body hit", onBox.hit() && onBox.body == body,
              hitText(onBox));
  probe.near("  z of the hit", onBox.point.z, -0.2, kRayTolerance, "m");
  const CastHit onBall = world->castRay(Vec3{-0.5, 1.0, -2.0}, Vec3{-0.5, 1.0, 2.0}, layers::kAll);
  probe.holds("ray through the sphere child: body hit", onBall.hit() && onBall.body == body, hitText(onBall));
  probe.near("  z of the hit", onBall.point.z, -0.2, kRayTolerance, "m");
  const CastHit gap = world->castRay(Vec3{0.0, 1.0, -2.0}, Vec3{0.0, 1.0, 2.0}, layers::kAll);
  probe.holds("ray through the gap between the children: no hit", !gap.hit(), hitText(gap));
  probe.near("mass()", world->mass(body), 2.0, 2.0 * kFloatRelative, "kg");
}

// Bad input is refused as an error value (Result) with a message, nothing is created, and the world
// goes on working. Each field below breaks a range physics.h states.
void bodyRefused(Probe& probe) {
  auto world = probe.world();
  const BodyDesc good = sphereBody(0.1, 1.0, Vec3{0.0, 1.0, 0.0});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Bad {
    const char* what;
    BodyDesc desc;
  };
  std::vector<Bad> bad;
  const auto add = [&](const char* what, auto change) {
    BodyDesc d = good;
    change(d);
    bad.push_back({what, d});
  };
  add("mass 0", [](BodyDesc& d) { d.mass = 0.0; });
  add("mass -1", [](BodyDesc& d) { d.mass = -1.0; });
  add("sphere radius 0", [](BodyDesc& d) { d.shape.radius = 0.0; });
  add("sphere radius NaN", [&](BodyDesc& d) { d.shape.radius = nan; });
  add("capsule halfHeight -0.1", [](BodyDesc& d) {
    d.shape.type = ShapeType::Capsule;
    d.shape.halfHeight = -0.1;
  });
  add("box halfExtents.y 0", [](BodyDesc& d) {
    d.shape.type = ShapeType::Box;
    d.shape.halfExtents = Vec3{0.1, 0.0, 0.1};
  });
  add("no shape (type None, nothing created)", [](BodyDesc& d) { d.shape.type = ShapeType::None; });
  add("worldFromBody NaN", [&](BodyDesc& d) { d.worldFromBody.translation.x = nan; });
  add("restitution 2", [](BodyDesc& d) { d.restitution = 2.0; });
  add("friction -1", [](BodyDesc& d) { d.friction = -1.0; });
  add("linearDamping -1", [](BodyDesc& d) { d.linearDamping = -1.0; });
  add("shape.created not a shape of this world", [](BodyDesc& d) {
    d.shape.type = ShapeType::None;
    d.shape.created = ShapeId{12345};
  });
  const int before = world->bodyCount();
  for (const Bad& b : bad) {
    const Result<BodyId> r = world->createBody(b.desc);
    probe.holds(std::string("createBody with ") + b.what, !r.ok() && !r.error().empty(),
                r.ok() ? "accepted" : "refused: " + r.error());
  }
  probe.near("bodyCount() after the refusals", world->bodyCount(), before, 0.0);
  const BodyId ok = mustCreate(*world, good, "a good body afterwards");
  stepFor(*world, 2);
  probe.holds("the world goes on: a good body falls", world->transform(ok).translation.y < 1.0,
              "height " + fmt(world->transform(ok).translation.y));
}

void jointRefused(Probe& probe) {
  auto world = probe.world();
  const BodyId a = mustCreate(*world, sphereBody(0.1, 1.0, Vec3{0.0, 1.0, 0.0}), "A");
  const BodyId b = mustCreate(*world, sphereBody(0.1, 1.0, Vec3{0.3, 1.0, 0.0}), "B");
  const JointDesc good = jointAt(*world, a, b, Vec3{0.15, 1.0, 0.0});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Bad {
    const char* what;
    JointDesc desc;
  };
  std::vector<Bad> bad;
  const auto add = [&](const char* what, auto change) {
    JointDesc d = good;
    change(d);
    bad.push_back({what, d});
  };
  add("bodyB invalid", [](JointDesc& d) { d.bodyB = BodyId{}; });
  add("bodyA and bodyB the same body", [&](JointDesc& d) { d.bodyB = a; });
  add("bodyAFromJoint NaN", [&](JointDesc& d) { d.bodyAFromJoint.translation.y = nan; });
  add("bodyBFromJoint rotation zero", [](JointDesc& d) {
    d.bodyBFromJoint.rotation = Quat{0.0, 0.0, 0.0, 0.0};
  });
  add("breakForce 0", [](JointDesc& d) { d.breakForce = 0.0; });
  add("breakTorque -1", [](JointDesc& d) { d.breakTorque = -1.0; });
  const int before = world->jointCount();
  for (const Bad& j : bad) {
    const Result<JointId> r = world->createJoint(j.desc);
    probe.holds(std::string("createJoint with ") + j.what, !r.ok() && !r.error().empty(),
                r.ok() ? "accepted" : "refused: " + r.error());
  }
  probe.near("jointCount() after the refusals", world->jointCount(), before, 0.0);
  mustCreate(*world, good, "a good joint afterwards");
  stepFor(*world, 2);
  probe.near("the world goes on: jointCount()", world->jointCount(), before + 1, 0.0);
}

// Shapes with bad data are refused whatever the adapter claims (an engine without a kind refuses
// every description of it).
void shapeRefused(Probe& probe) {
  auto world = probe.world();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<Vec3> square{{0, 0, 0}, {1, 0, 0}, {1, 0, 1}, {0, 0, 1}};
  const std::vector<std::uint32_t> outOfRange{0, 1, 7};
  const std::vector<std::uint32_t> two{0, 1};
  const std::vector<Vec3> badVertex{{0, 0, 0}, {1, nan, 0}, {1, 0, 1}};
  const std::vector<std::uint32_t> triangle{0, 1, 2};
  const std::vector<Vec3> three{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
  const std::vector<Vec3> flat{{0, 0, 0}, {1, 0, 0}, {1, 0, 1}, {0, 0, 1}, {0.5, 0, 0.5}};
  const std::vector<double> fiveHeights{0, 0, 0, 0, 0};
  const std::vector<double> sixHeights{0, 0, 0, 0, 0, 0};
  const std::vector<CompoundChild> noChildren;
  const auto says = [&](std::string_view what, const Result<ShapeId>& r) {
    probe.holds(what, !r.ok() && !r.error().empty(), r.ok() ? "accepted" : "refused: " + r.error());
  };
  says("mesh with an index out of range", world->createShape(TriangleMeshDesc{square, outOfRange}));
  says("mesh with 2 indices", world->createShape(TriangleMeshDesc{square, two}));
  says("mesh with a NaN vertex", world->createShape(TriangleMeshDesc{badVertex, triangle}));
  says("hull of 3 points", world->createShape(ConvexHullDesc{three}));
  says("hull of points in one plane", world->createShape(ConvexHullDesc{flat}));
  says("heightfield 3 x 2 with 5 heights", world->createShape(HeightfieldDesc{3, 2, 1.0, fiveHeights}));
  says("heightfield 6 x 1", world->createShape(HeightfieldDesc{6, 1, 1.0, sixHeights}));
  says("heightfield spacing 0", world->createShape(HeightfieldDesc{3, 2, 0.0, sixHeights}));
  says("compound without children", world->createShape(CompoundDesc{noChildren}));
  world->destroyShape(ShapeId{});  // an invalid handle is ignored
  stepFor(*world, 1);
  probe.holds("destroyShape(invalid) ignored, the world steps", true, "no crash");
}

}  // namespace

std::vector<Check> queryChecks() {
  return {
      {"query.capsule_overlap", capsuleOverlap},
      {"query.capsule_sweep", capsuleSweep},
      {"query.ray", rayCheck},
      {"query.closest_points", closestPointsCheck},
      {"shape.triangle_mesh", triangleMesh},
      {"shape.convex_hull", convexHull},
      {"shape.heightfield", heightfield},
      {"shape.compound", compound},
      {"input.body_refused", bodyRefused},
      {"input.joint_refused", jointRefused},
      {"input.shape_refused", shapeRefused},
  };
}

}  // namespace handoff::conformance::detail
