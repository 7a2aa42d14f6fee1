// Geoms of bodies and createShape: triangle meshes (dTriMesh), heightfields (dHeightfield),
// compounds of primitives (one geom per child). Convex hulls are refused.
//
// Decisions worth knowing:
// - ODE's capsule axis is its Z: the geom is turned by -90 degrees about X (Z onto Y) in the body.
//   A capsule with halfHeight 0 is a sphere.
// - A made shape keeps the arrays ODE reads (ODE does not copy mesh data) and is reference
//   counted: the caller's handle counts one, each body using it one.
// - Heightfield: ODE's grid is centred on its origin in X and Z with Y up, sample (i, j) at
//   heights[j * columns + i], i along X: the interface's layout as it is.
#include "physics_ode/ode_parts.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace handoff::ode_detail {

namespace {

Status checkPrimitive(const ShapeDesc& s, const std::string& where) {
  switch (s.type) {
    case ShapeType::Sphere:
      if (!(finite(s.radius) && s.radius > 0.0)) return Error{where + ".radius must be finite and > 0"};
      return {};
    case ShapeType::Capsule:
      if (!(finite(s.radius) && s.radius > 0.0)) return Error{where + ".radius must be finite and > 0"};
      if (!(finite(s.halfHeight) && s.halfHeight >= 0.0))
        return Error{where + ".halfHeight must be finite and >= 0"};
      return {};
    case ShapeType::Box:
      if (!(isFinite(s.halfExtents) && s.halfExtents.x > 0.0 && s.halfExtents.y > 0.0 &&
            s.halfExtents.z > 0.0))
        return Error{where + ".halfExtents must be finite and > 0"};
      return {};
    case ShapeType::None:
    default:
      if (s.created.valid())
        return Error{where +
                     ": a made shape (a convex hull) cannot be a compound's child in the ODE adapter, which "
                     "has no convex hulls"};
      return Error{where + ".type must be Sphere, Capsule or Box"};
  }
}

}  // namespace

dGeomID OdeWorld::makePrimitive(const ShapeDesc& s, Transform* turn) {
  *turn = Transform{};
  switch (s.type) {
    case ShapeType::Sphere:
      return dCreateSphere(space_, s.radius);
    case ShapeType::Capsule:
      if (s.halfHeight <= 0.0) return dCreateSphere(space_, s.radius);
      turn->rotation = kCapsuleTurn;
      return dCreateCapsule(space_, s.radius, 2.0 * s.halfHeight);
    case ShapeType::Box:
      return dCreateBox(space_, 2.0 * s.halfExtents.x, 2.0 * s.halfExtents.y, 2.0 * s.halfExtents.z);
    case ShapeType::None:
    default:
      return nullptr;
  }
}

Result<std::vector<GeomPart>> OdeWorld::makeGeoms(const ShapeDesc& s, std::uint32_t* created, Vec3* lo,
                                                  Vec3* hi) {
  std::vector<GeomPart> parts;
  if (!s.created.valid()) {
    GeomPart p;
    p.geom = makePrimitive(s, &p.bodyFromGeom);
    parts.push_back(p);
    return parts;
  }
  CreatedShape* c = createdOf(s.created);
  if (c == nullptr) return Error{"createBody: shape.created is not a live shape of this world"};
  const std::uint32_t index = s.created.value & kIndexMask;
  switch (c->kind) {
    case CreatedShape::Kind::Mesh:
      parts.push_back(GeomPart{dCreateTriMesh(space_, c->mesh, nullptr, nullptr, nullptr), Transform{}});
      break;
    case CreatedShape::Kind::Heightfield:
      parts.push_back(GeomPart{dCreateHeightfield(space_, c->heightfield, 1), Transform{}});
      break;
    case CreatedShape::Kind::Compound:
      for (const CompoundChild& child : c->children) {
        GeomPart p;
        Transform turn;
        p.geom = makePrimitive(child.shape, &turn);
        p.bodyFromGeom = child.bodyFromChild * turn;
        parts.push_back(p);
      }
      break;
    case CreatedShape::Kind::None:
    default:
      return Error{"createBody: shape.created is not a live shape of this world"};
  }
  ++c->refs;
  *created = index;
  *lo = c->lo;
  *hi = c->hi;
  return parts;
}

void OdeWorld::placeStaticGeoms(BodySlot& slot) {
  for (GeomPart& g : slot.geoms) {
    if (dGeomGetClass(g.geom) == dPlaneClass) continue;  // planes are not placeable
    const Transform pose = slot.staticPose * g.bodyFromGeom;
    dGeomSetPosition(g.geom, pose.translation.x, pose.translation.y, pose.translation.z);
    dQuaternion q;
    toOde(pose.rotation, q);
    dGeomSetQuaternion(g.geom, q);
  }
}

CreatedShape* OdeWorld::createdOf(ShapeId id) {
  if (!id.valid()) return nullptr;
  const std::uint32_t index = id.value & kIndexMask;
  if (index >= created_.size()) return nullptr;
  CreatedShape& c = created_[index];
  if (c.kind == CreatedShape::Kind::None || !c.handleAlive || c.generation != (id.value >> kIndexBits))
    return nullptr;
  return &c;
}

std::uint32_t OdeWorld::newCreatedSlot() {
  if (!freeCreated_.empty()) {
    const std::uint32_t index = freeCreated_.back();
    freeCreated_.pop_back();
    return index;
  }
  created_.emplace_back();
  return static_cast<std::uint32_t>(created_.size() - 1);
}

void OdeWorld::releaseCreated(std::uint32_t index) {
  CreatedShape& c = created_[index];
  if (--c.refs > 0) return;
  if (c.mesh != nullptr) dGeomTriMeshDataDestroy(c.mesh);
  if (c.heightfield != nullptr) dGeomHeightfieldDataDestroy(c.heightfield);
  const std::uint32_t generation = (c.generation + 1) & kGenerationMask;
  c = CreatedShape{};
  c.generation = generation;
  freeCreated_.push_back(index);
}

void OdeWorld::destroyShape(ShapeId id) {
  CreatedShape* c = createdOf(id);
  if (c == nullptr) return;
  c->handleAlive = false;
  releaseCreated(id.value & kIndexMask);
}

Result<ShapeId> OdeWorld::createShape(const TriangleMeshDesc& desc) {
  ensureOdeThread();
  if (desc.indices.empty() || desc.indices.size() % 3 != 0)
    return Error{"createShape(mesh): indices must be a non-empty multiple of 3 (got " +
                 std::to_string(desc.indices.size()) + ")"};
  if (desc.vertices.size() < 3 || desc.vertices.size() > (1u << 24))
    return Error{"createShape(mesh): vertices must number 3 to 2^24 (got " +
                 std::to_string(desc.vertices.size()) + ")"};
  for (std::size_t i = 0; i < desc.vertices.size(); ++i) {
    if (!isFinite(desc.vertices[i]))
      return Error{"createShape(mesh): vertex " + std::to_string(i) + " is not finite"};
  }
  for (std::size_t i = 0; i < desc.indices.size(); ++i) {
    if (desc.indices[i] >= desc.vertices.size())
      return Error{"createShape(mesh): index " + std::to_string(i) + " (" + std::to_string(desc.indices[i]) +
                   ") is out of range (" + std::to_string(desc.vertices.size()) + " vertices)"};
  }
  const std::uint32_t index = newCreatedSlot();
  CreatedShape& c = created_[index];
  c.kind = CreatedShape::Kind::Mesh;
  c.vertices.reserve(3 * desc.vertices.size());
  c.lo = c.hi = desc.vertices[0];
  for (const Vec3& v : desc.vertices) {
    c.vertices.insert(c.vertices.end(), {v.x, v.y, v.z});
    c.lo = glm::min(c.lo, v);
    c.hi = glm::max(c.hi, v);
  }
  c.indices.assign(desc.indices.begin(), desc.indices.end());
  c.mesh = dGeomTriMeshDataCreate();
  dGeomTriMeshDataBuildDouble(c.mesh, c.vertices.data(), 3 * sizeof(double),
                              static_cast<int>(desc.vertices.size()), c.indices.data(),
                              static_cast<int>(c.indices.size()), 3 * sizeof(dTriIndex));
  dGeomTriMeshDataPreprocess(c.mesh);
  c.refs = 1;
  c.handleAlive = true;
  return ShapeId{index | (c.generation << kIndexBits)};
}

Result<ShapeId> OdeWorld::createShape(const ConvexHullDesc& desc) {
  (void)desc;
  return Error{
      "createShape(convex hull): not supported by the ODE adapter (ODE's dConvex needs the hull's planes "
      "and polygons, which the adapter does not compute); use a compound of boxes, capsules and spheres"};
}

Result<ShapeId> OdeWorld::createShape(const HeightfieldDesc& desc) {
  ensureOdeThread();
  if (desc.columns < 2 || desc.rows < 2)
    return Error{"createShape(heightfield): columns and rows must be >= 2 (got " +
                 std::to_string(desc.columns) + " x " + std::to_string(desc.rows) + ")"};
  if (!(finite(desc.spacing) && desc.spacing > 0.0))
    return Error{"createShape(heightfield): spacing must be finite and > 0 (got " + fmt(desc.spacing) + ")"};
  const std::size_t n = static_cast<std::size_t>(desc.columns) * static_cast<std::size_t>(desc.rows);
  if (desc.heights.size() != n)
    return Error{"createShape(heightfield): heights must hold columns * rows = " + std::to_string(n) +
                 " values (got " + std::to_string(desc.heights.size()) + ")"};
  double minH = desc.heights[0], maxH = desc.heights[0];
  for (std::size_t i = 0; i < n; ++i) {
    if (!finite(desc.heights[i]))
      return Error{"createShape(heightfield): height " + std::to_string(i) + " is not finite"};
    minH = std::min(minH, desc.heights[i]);
    maxH = std::max(maxH, desc.heights[i]);
  }
  const std::uint32_t index = newCreatedSlot();
  CreatedShape& c = created_[index];
  c.kind = CreatedShape::Kind::Heightfield;
  c.heights.assign(desc.heights.begin(), desc.heights.end());
  const double width = (desc.columns - 1) * desc.spacing;
  const double depth = (desc.rows - 1) * desc.spacing;
  c.heightfield = dGeomHeightfieldDataCreate();
  dGeomHeightfieldDataBuildDouble(c.heightfield, c.heights.data(), 0, width, depth, desc.columns, desc.rows,
                                  1.0, 0.0, std::max(1.0, maxH - minH), 0);
  dGeomHeightfieldDataSetBounds(c.heightfield, minH, maxH);
  c.lo = Vec3{-0.5 * width, minH, -0.5 * depth};
  c.hi = Vec3{0.5 * width, maxH, 0.5 * depth};
  c.refs = 1;
  c.handleAlive = true;
  return ShapeId{index | (c.generation << kIndexBits)};
}

Result<ShapeId> OdeWorld::createShape(const CompoundDesc& desc) {
  if (desc.children.empty()) return Error{"createShape(compound): children must hold at least one part"};
  Vec3 lo{std::numeric_limits<double>::max()}, hi{-std::numeric_limits<double>::max()};
  for (std::size_t i = 0; i < desc.children.size(); ++i) {
    const CompoundChild& child = desc.children[i];
    const std::string where = "createShape(compound): children[" + std::to_string(i) + "].shape";
    if (Status st = checkPrimitive(child.shape, where); !st) return Error{st.error()};
    if (!isFinite(child.bodyFromChild))
      return Error{"createShape(compound): children[" + std::to_string(i) + "].bodyFromChild must be finite"};
    const double r = shapeBoundingRadius(child.shape);
    lo = glm::min(lo, child.bodyFromChild.translation - Vec3{r});
    hi = glm::max(hi, child.bodyFromChild.translation + Vec3{r});
  }
  const std::uint32_t index = newCreatedSlot();
  CreatedShape& c = created_[index];
  c.kind = CreatedShape::Kind::Compound;
  c.children.assign(desc.children.begin(), desc.children.end());
  for (CompoundChild& child : c.children) {
    child.bodyFromChild.rotation = normalizeOrIdentity(child.bodyFromChild.rotation);
  }
  c.lo = lo;
  c.hi = hi;
  c.refs = 1;
  c.handleAlive = true;
  return ShapeId{index | (c.generation << kIndexBits)};
}

}  // namespace handoff::ode_detail
