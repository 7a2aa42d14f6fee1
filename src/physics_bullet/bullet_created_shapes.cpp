// Shapes made by PhysicsWorld::createShape: triangle meshes (level geometry), convex hulls,
// heightfields and compounds (BulletWorld::createShape, destroyShape).
//
// Decisions worth knowing:
// - A triangle mesh is a btBvhTriangleMeshShape over copies of the vertices and indices (Bullet
//   keeps pointers into them: they live in the CreatedShape). Static bodies only: Bullet has no
//   robust moving mesh-mesh collision.
// - A convex hull keeps its points as given: its collision margin (kHullMargin, 5 mm, at most a
//   quarter of the hull's inner radius) would grow it outward, so the faces are pulled in by the
//   margin first (btConvexHullComputer's shrink), and the polyhedral features are built for face
//   contacts.
// - A heightfield is Bullet's btHeightfieldTerrainShape, which centres itself on the middle of
//   its height range; it is wrapped in a compound that shifts it back, so heights are as given
//   relative to the body's origin.
// - A compound's primitive children are its own Bullet shapes (not the world's shared cache);
//   created children (hulls) are held by reference until the compound goes.
// - Inertia of a moving created shape (BodyDesc::inertia zero): a solid box of the shape's
//   bounds in its body frame (bullet_bodies.cpp; exact for a box hull): pass BodyDesc::inertia
//   when it matters. The centre of mass is the body frame's origin, as for every shape.
#include "physics_bullet/bullet_parts.h"

#include <BulletCollision/CollisionShapes/btHeightfieldTerrainShape.h>
#include <LinearMath/btConvexHullComputer.h>
#include <btBulletCollisionCommon.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace handoff::bullet_detail {
namespace {

/// A hull's collision margin (Bullet's default 0.04 m rounds a crate's corners visibly). [m]
constexpr double kHullMargin = 0.005;
/// The most vertices or heights one created shape may have (2^24, as TriangleMeshDesc says).
constexpr std::size_t kMaxElements = std::size_t{1} << 24;

std::string at(std::size_t i) { return "[" + std::to_string(i) + "]"; }

/// Grows [lo, hi] by the box [a, b] placed at `t`.
void growBounds(btVector3& lo, btVector3& hi, const btTransform& t, const btVector3& a, const btVector3& b) {
  for (int corner = 0; corner < 8; ++corner) {
    const btVector3 p =
        t * btVector3(corner & 1 ? b.x() : a.x(), corner & 2 ? b.y() : a.y(), corner & 4 ? b.z() : a.z());
    lo.setMin(p);
    hi.setMax(p);
  }
}

}  // namespace

CreatedShape* BulletWorld::createdOf(ShapeId id) {
  if (!id.valid()) return nullptr;
  const std::uint32_t index = id.value & kIndexMask;
  const std::uint32_t generation = id.value >> kIndexBits;
  if (index >= created_.size()) return nullptr;
  CreatedShape& entry = created_[index];
  if (!entry.shape || !entry.handleAlive || entry.generation != generation) return nullptr;
  return &entry;
}

ShapeId BulletWorld::addCreatedShape(CreatedShape&& shape) {
  std::uint32_t index = 0;
  if (!freeCreated_.empty()) {
    index = freeCreated_.back();
    freeCreated_.pop_back();
  } else {
    index = static_cast<std::uint32_t>(created_.size());
    created_.emplace_back();
  }
  const std::uint32_t generation = created_[index].generation;
  CreatedShape& entry = created_[index];
  entry = std::move(shape);
  entry.generation = generation;
  entry.refs = 1;  // the caller's handle
  entry.handleAlive = true;
  entry.motion = std::make_unique<ShapeMotion>();
  entry.motion->disc = entry.shape->getAngularMotionDisc();
  entry.motion->breakingFactor = gContactBreakingThreshold;
  entry.motion->breaking = entry.shape->getContactBreakingThreshold(gContactBreakingThreshold);
  entry.shape->setUserPointer(entry.motion.get());
  if (entry.lo == entry.hi) entry.shape->getAabb(btTransform::getIdentity(), entry.lo, entry.hi);
  const btVector3 size = entry.hi - entry.lo;
  entry.ccdRadius = 0.5 * std::min({size.x(), size.y(), size.z()});
  return ShapeId{(generation << kIndexBits) | index};
}

void BulletWorld::releaseCreated(std::uint32_t index) {
  assert(index < created_.size() && created_[index].shape);
  CreatedShape& entry = created_[index];
  if (--entry.refs > 0) return;
  const std::vector<std::uint32_t> held = std::move(entry.heldShapes);
  const std::uint32_t generation = (entry.generation + 1u) & kGenerationMask;
  entry = CreatedShape{};
  entry.generation = generation;
  freeCreated_.push_back(index);
  for (const std::uint32_t child : held) releaseCreated(child);
}

void BulletWorld::destroyShape(ShapeId id) {
  CreatedShape* entry = createdOf(id);
  if (entry == nullptr) return;
  entry->handleAlive = false;
  releaseCreated(id.value & kIndexMask);
}

Result<ShapeId> BulletWorld::createShape(const TriangleMeshDesc& desc) {
  if (desc.vertices.empty() || desc.indices.empty())
    return Error{"createShape(TriangleMeshDesc): no vertices or no triangles"};
  if (desc.vertices.size() > kMaxElements || desc.indices.size() > 3 * kMaxElements)
    return Error{"createShape(TriangleMeshDesc): more than 2^24 vertices or triangles"};
  if (desc.indices.size() % 3 != 0)
    return Error{"createShape(TriangleMeshDesc): indices.size() (" + std::to_string(desc.indices.size()) +
                 ") is not a multiple of 3"};
  CreatedShape entry;
  entry.staticOnly = true;
  entry.vertices.reserve(3 * desc.vertices.size());
  for (std::size_t i = 0; i < desc.vertices.size(); ++i) {
    const Vec3& v = desc.vertices[i];
    if (!isFinite(v)) return Error{"createShape(TriangleMeshDesc): vertices" + at(i) + " is not finite"};
    entry.vertices.insert(entry.vertices.end(), {btScalar(v.x), btScalar(v.y), btScalar(v.z)});
  }
  entry.indices.reserve(desc.indices.size());
  for (std::size_t i = 0; i < desc.indices.size(); ++i) {
    if (desc.indices[i] >= desc.vertices.size())
      return Error{"createShape(TriangleMeshDesc): indices" + at(i) + " = " +
                   std::to_string(desc.indices[i]) + " is out of range (" +
                   std::to_string(desc.vertices.size()) + " vertices)"};
    entry.indices.push_back(static_cast<int>(desc.indices[i]));
  }
  btIndexedMesh mesh;
  mesh.m_numTriangles = static_cast<int>(entry.indices.size() / 3);
  mesh.m_triangleIndexBase = reinterpret_cast<const unsigned char*>(entry.indices.data());
  mesh.m_triangleIndexStride = 3 * sizeof(int);
  mesh.m_numVertices = static_cast<int>(desc.vertices.size());
  mesh.m_vertexBase = reinterpret_cast<const unsigned char*>(entry.vertices.data());
  mesh.m_vertexStride = 3 * sizeof(btScalar);
  mesh.m_indexType = PHY_INTEGER;
  mesh.m_vertexType = sizeof(btScalar) == sizeof(double) ? PHY_DOUBLE : PHY_FLOAT;
  entry.mesh = std::make_unique<btTriangleIndexVertexArray>();
  entry.mesh->addIndexedMesh(mesh, PHY_INTEGER);
  entry.shape = std::make_unique<btBvhTriangleMeshShape>(entry.mesh.get(), true);
  return addCreatedShape(std::move(entry));
}

Result<ShapeId> BulletWorld::createShape(const ConvexHullDesc& desc) {
  if (desc.points.size() < 4) return Error{"createShape(ConvexHullDesc): fewer than 4 points"};
  if (desc.points.size() > kMaxElements) return Error{"createShape(ConvexHullDesc): more than 2^24 points"};
  std::vector<btScalar> coords;
  coords.reserve(3 * desc.points.size());
  for (std::size_t i = 0; i < desc.points.size(); ++i) {
    const Vec3& p = desc.points[i];
    if (!isFinite(p)) return Error{"createShape(ConvexHullDesc): points" + at(i) + " is not finite"};
    coords.insert(coords.end(), {btScalar(p.x), btScalar(p.y), btScalar(p.z)});
  }
  // The hull pulled in by the margin, so that hull + margin is the hull of the points.
  btConvexHullComputer computer;
  const btScalar shrunk =
      computer.compute(coords.data(), 3 * sizeof(btScalar), static_cast<int>(desc.points.size()),
                       btScalar(kHullMargin), btScalar(0.25));
  if (computer.vertices.size() < 4 || computer.faces.size() < 4 || !(shrunk >= 0.0))
    return Error{"createShape(ConvexHullDesc): the points lie in one plane or line (no volume)"};
  auto hull = std::make_unique<btConvexHullShape>();
  for (int i = 0; i < computer.vertices.size(); ++i) hull->addPoint(computer.vertices[i], false);
  hull->setMargin(shrunk);  // kHullMargin, or less for a hull thinner than 4 of it
  hull->recalcLocalAabb();  // the cached bounds include the margin: after setting it
  hull->initializePolyhedralFeatures();
  CreatedShape entry;
  entry.shape = std::move(hull);
  entry.lo = btVector3(coords[0], coords[1], coords[2]);
  entry.hi = entry.lo;
  for (std::size_t i = 0; i < coords.size(); i += 3) {
    entry.lo.setMin(btVector3(coords[i], coords[i + 1], coords[i + 2]));
    entry.hi.setMax(btVector3(coords[i], coords[i + 1], coords[i + 2]));
  }
  return addCreatedShape(std::move(entry));
}

Result<ShapeId> BulletWorld::createShape(const HeightfieldDesc& desc) {
  if (desc.columns < 2 || desc.rows < 2)
    return Error{"createShape(HeightfieldDesc): columns and rows must be >= 2 (got " +
                 std::to_string(desc.columns) + " x " + std::to_string(desc.rows) + ")"};
  const auto count = static_cast<std::size_t>(desc.columns) * static_cast<std::size_t>(desc.rows);
  if (count > kMaxElements) return Error{"createShape(HeightfieldDesc): more than 2^24 samples"};
  if (desc.heights.size() != count)
    return Error{"createShape(HeightfieldDesc): heights has " + std::to_string(desc.heights.size()) +
                 " values, columns * rows is " + std::to_string(count)};
  if (!(finite(desc.spacing) && desc.spacing > 0.0))
    return Error{"createShape(HeightfieldDesc): spacing must be finite and > 0 (got " + fmt(desc.spacing) +
                 ")"};
  CreatedShape entry;
  entry.staticOnly = true;
  entry.heights.reserve(count);
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (std::size_t i = 0; i < count; ++i) {
    const double h = desc.heights[i];
    if (!finite(h)) return Error{"createShape(HeightfieldDesc): heights" + at(i) + " is not finite"};
    lo = std::min(lo, h);
    hi = std::max(hi, h);
    entry.heights.push_back(btScalar(h));
  }
  auto field = std::make_unique<btHeightfieldTerrainShape>(desc.columns, desc.rows, entry.heights.data(),
                                                           btScalar(lo), btScalar(hi), 1, false);
  field->setLocalScaling(btVector3(btScalar(desc.spacing), 1.0, btScalar(desc.spacing)));
  auto wrapper = std::make_unique<btCompoundShape>(false, 1);
  wrapper->addChildShape(
      btTransform(btQuaternion::getIdentity(), btVector3(0.0, btScalar(0.5 * (lo + hi)), 0.0)), field.get());
  entry.parts.push_back(std::move(field));
  entry.shape = std::move(wrapper);
  return addCreatedShape(std::move(entry));
}

Result<ShapeId> BulletWorld::createShape(const CompoundDesc& desc) {
  if (desc.children.empty()) return Error{"createShape(CompoundDesc): no children"};
  CreatedShape entry;
  auto compound = std::make_unique<btCompoundShape>(true, static_cast<int>(desc.children.size()));
  const btScalar big = std::numeric_limits<btScalar>::max();
  btVector3 lo(big, big, big), hi(-big, -big, -big);
  for (std::size_t i = 0; i < desc.children.size(); ++i) {
    const CompoundChild& child = desc.children[i];
    const std::string where = "createShape(CompoundDesc): children" + at(i);
    if (!isFinite(child.bodyFromChild)) return Error{where + ".bodyFromChild is not finite"};
    const ShapeDesc& s = child.shape;
    btCollisionShape* shape = nullptr;
    if (s.created.valid()) {
      CreatedShape* held = createdOf(s.created);
      if (held == nullptr) return Error{where + ".shape.created is not a live shape of this world"};
      if (held->staticOnly)
        return Error{where + ": a triangle mesh or heightfield cannot be a compound's child"};
      shape = held->shape.get();
      growBounds(lo, hi, toBt(child.bodyFromChild), held->lo, held->hi);
      entry.heldShapes.push_back(s.created.value & kIndexMask);
    } else {
      std::unique_ptr<btCollisionShape> own;
      switch (s.type) {
        case ShapeType::Sphere:
          if (!(finite(s.radius) && s.radius > 0.0))
            return Error{where + ".shape.radius must be finite and > 0"};
          own = std::make_unique<btSphereShape>(s.radius);
          break;
        case ShapeType::Capsule:
          if (!(finite(s.radius) && s.radius > 0.0 && finite(s.halfHeight) && s.halfHeight >= 0.0))
            return Error{where + ".shape: capsule radius must be > 0 and halfHeight >= 0"};
          own = std::make_unique<btCapsuleShape>(s.radius, 2.0 * s.halfHeight);
          break;
        case ShapeType::Box:
          if (!(isFinite(s.halfExtents) && s.halfExtents.x > 0.0 && s.halfExtents.y > 0.0 &&
                s.halfExtents.z > 0.0))
            return Error{where + ".shape.halfExtents must be finite and > 0 (got " + fmt(s.halfExtents) +
                         ")"};
          own = std::make_unique<btBoxShape>(toBt(s.halfExtents));
          own->setMargin(std::min(0.04, 0.5 * std::min({s.halfExtents.x, s.halfExtents.y, s.halfExtents.z})));
          break;
        case ShapeType::None:
        default:
          return Error{where + ".shape has no type and no created shape"};
      }
      shape = own.get();
      btVector3 a, b;  // exact for Bullet's primitives (a box keeps its outer size)
      own->getAabb(toBt(child.bodyFromChild), a, b);
      lo.setMin(a);
      hi.setMax(b);
      entry.parts.push_back(std::move(own));
    }
    compound->addChildShape(toBt(child.bodyFromChild), shape);
  }
  entry.shape = std::move(compound);
  entry.lo = lo;
  entry.hi = hi;
  // Hold the created children only once the compound exists (an error above holds nothing).
  for (const std::uint32_t held : entry.heldShapes) ++created_[held].refs;
  return addCreatedShape(std::move(entry));
}

}  // namespace handoff::bullet_detail
