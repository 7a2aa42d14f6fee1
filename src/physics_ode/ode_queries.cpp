// Queries on ODE: rays (a ray geom), capsule overlap (a capsule geom), capsule casts (ODE has no
// sweep: conservative stepping and bisection of the overlap test).
//
// Decisions worth knowing:
// - Query geoms are the world's own, outside its space, tested with dSpaceCollide2 against the
//   space and dCollide against each candidate whose body is enabled and whose layer is in the mask.
// - Ties (two objects at the same distance) go to the lower body slot: results do not depend on
//   the order ODE's space reports candidates in.
// - castCapsule: the capsule moves in steps of half its radius (at least 1 mm); in the first step
//   that overlaps, 16 bisections (1e-5 of a step) find the last free fraction, which is reported;
//   the point and normal are those of the deepest contact at the first touching position.
#include "physics_ode/ode_parts.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace handoff::ode_detail {

namespace {

struct QueryContext {
  const OdeWorld* world = nullptr;
  dGeomID query = nullptr;
  std::uint32_t mask = 0;
  bool deepest = false;  // overlap tests: keep the deepest contact (else: nearest along a ray)
  bool any = false;
  dGeomID geom = nullptr;
  std::uint32_t slot = kIndexMask;
  dContactGeom contact{};
};

void queryCallback(void* data, dGeomID o1, dGeomID o2) {
  auto& q = *static_cast<QueryContext*>(data);
  const dGeomID other = o1 == q.query ? o2 : o1;
  if (!q.world->queryAccepts(other, q.mask)) return;
  dContactGeom contacts[8];
  const int n = dCollide(q.query, other, q.deepest ? 8 : 1, contacts, sizeof(dContactGeom));
  const std::uint32_t slot = OdeWorld::slotOfGeom(other);
  for (int k = 0; k < n; ++k) {
    const dContactGeom& c = contacts[k];
    bool better = !q.any;
    if (q.any) {
      if (q.deepest) {
        better = c.depth > q.contact.depth || (c.depth == q.contact.depth && slot < q.slot);
      } else {
        better = c.depth < q.contact.depth || (c.depth == q.contact.depth && slot < q.slot);
      }
    }
    if (better) {
      q.any = true;
      q.geom = other;
      q.slot = slot;
      q.contact = c;
    }
  }
}

void placeGeom(dGeomID geom, const Transform& pose) {
  dGeomSetPosition(geom, pose.translation.x, pose.translation.y, pose.translation.z);
  dQuaternion q;
  toOde(pose.rotation, q);
  dGeomSetQuaternion(geom, q);
}

}  // namespace

bool OdeWorld::queryAccepts(dGeomID geom, std::uint32_t worldMask) const {
  const std::uint32_t slot = slotOfGeom(geom);
  if (slot == kIndexMask || slot >= bodies_.size()) return false;
  const BodySlot& s = bodies_[slot];
  return s.alive && s.enabled && (s.layerBits & worldMask) != 0;
}

CastHit OdeWorld::castRay(const Vec3& from, const Vec3& to, std::uint32_t mask) const {
  CastHit hit;
  const double length = glm::length(to - from);
  if (!(length > 0.0) || !isFinite(from) || !isFinite(to)) return hit;
  ensureOdeThread();
  const Vec3 dir = (to - from) / length;
  dGeomRaySetLength(queryRay_, length);
  dGeomRaySet(queryRay_, from.x, from.y, from.z, dir.x, dir.y, dir.z);
  QueryContext q;
  q.world = this;
  q.query = queryRay_;
  q.mask = toWorldBits(mask, settings_.layerBits);
  dSpaceCollide2(queryRay_, reinterpret_cast<dGeomID>(space_), &q, &queryCallback);
  if (!q.any) return hit;
  hit.fraction = std::clamp(q.contact.depth / length, 0.0, 1.0);
  hit.point = fromOde(q.contact.pos);
  Vec3 n = fromOde(q.contact.normal);
  if (glm::dot(n, dir) > 0.0) n = -n;
  hit.normal = glm::length(n) > 0.0 ? glm::normalize(n) : -dir;
  hit.body = idOf(q.slot);
  hit.engineObject = q.geom;
  return hit;
}

bool OdeWorld::capsuleOverlaps(const Transform& worldFromCapsule, double radius, double halfHeight,
                               std::uint32_t mask) const {
  if (!(radius > 0.0) || !(halfHeight >= 0.0) || !isFinite(worldFromCapsule)) return false;
  ensureOdeThread();
  dGeomCapsuleSetParams(queryCapsule_, radius, 2.0 * halfHeight);
  placeGeom(queryCapsule_, Transform{normalizeOrIdentity(worldFromCapsule.rotation) * kCapsuleTurn,
                                     worldFromCapsule.translation});
  QueryContext q;
  q.world = this;
  q.query = queryCapsule_;
  q.mask = toWorldBits(mask, settings_.layerBits);
  q.deepest = true;
  dSpaceCollide2(queryCapsule_, reinterpret_cast<dGeomID>(space_), &q, &queryCallback);
  return q.any;
}

CastHit OdeWorld::castCapsule(const Transform& from, const Vec3& to, double radius, double halfHeight,
                              std::uint32_t mask) const {
  CastHit hit;
  if (!(radius > 0.0) || !(halfHeight >= 0.0) || !isFinite(from) || !isFinite(to)) return hit;
  ensureOdeThread();
  dGeomCapsuleSetParams(queryCapsule_, radius, 2.0 * halfHeight);
  const Quat rotation = normalizeOrIdentity(from.rotation) * kCapsuleTurn;
  const Vec3 path = to - from.translation;
  QueryContext q;
  q.world = this;
  q.query = queryCapsule_;
  q.mask = toWorldBits(mask, settings_.layerBits);
  q.deepest = true;
  auto touchesAt = [&](double t) {
    q.any = false;
    placeGeom(queryCapsule_, Transform{rotation, from.translation + t * path});
    dSpaceCollide2(queryCapsule_, reinterpret_cast<dGeomID>(space_), &q, &queryCallback);
    return q.any;
  };
  const double length = glm::length(path);
  const int steps = std::max(1, static_cast<int>(std::ceil(length / std::max(0.5 * radius, 1e-3))));
  double free = 0.0;
  double touching = -1.0;
  if (touchesAt(0.0)) {
    touching = 0.0;
  } else {
    for (int k = 1; k <= steps; ++k) {
      const double t = static_cast<double>(k) / steps;
      if (touchesAt(t)) {
        touching = t;
        break;
      }
      free = t;
    }
    if (touching < 0.0) return hit;
    for (int i = 0; i < 16; ++i) {
      const double mid = 0.5 * (free + touching);
      if (touchesAt(mid)) {
        touching = mid;
      } else {
        free = mid;
      }
    }
  }
  touchesAt(touching);
  if (!q.any) return hit;
  hit.fraction = free;
  hit.point = fromOde(q.contact.pos);
  // ODE's normal points from the second geom (the object hit) toward the first (the capsule).
  const Vec3 n = fromOde(q.contact.normal);
  hit.normal = glm::length(n) > 0.0 ? glm::normalize(n) : Vec3{0.0, 1.0, 0.0};
  hit.body = idOf(q.slot);
  hit.engineObject = q.geom;
  return hit;
}

int OdeWorld::closestPoints(BodyId id, const Transform& worldFromBody, double maxDistance, std::uint32_t mask,
                            std::span<SurfacePoint> out) const {
  const BodySlot* slot = slotOf(id);
  if (slot == nullptr || out.empty() || !(maxDistance >= 0.0) || !isFinite(worldFromBody)) return 0;
  const ShapeDesc& s = slot->shape;
  ensureOdeThread();
  // The body's shape grown by maxDistance: what it overlaps is within maxDistance of the shape
  // (a box's grown corners reach up to sqrt(3) maxDistance: its edges and corners see a little
  // farther than asked).
  dGeomID geom = nullptr;
  Transform pose{normalizeOrIdentity(worldFromBody.rotation), worldFromBody.translation};
  switch (s.type) {
    case ShapeType::Sphere:
      geom = querySphere_;
      dGeomSphereSetRadius(geom, s.radius + maxDistance);
      break;
    case ShapeType::Capsule:
      geom = queryCapsule_;
      dGeomCapsuleSetParams(geom, s.radius + maxDistance, 2.0 * s.halfHeight);
      pose.rotation = pose.rotation * kCapsuleTurn;
      break;
    case ShapeType::Box: {
      geom = queryBox_;
      const Vec3 l = 2.0 * (s.halfExtents + Vec3{maxDistance});
      dGeomBoxSetLengths(geom, l.x, l.y, l.z);
      break;
    }
    case ShapeType::None:
    default:
      return 0;  // made shapes: not offered (see physics_ode.h)
  }
  placeGeom(geom, pose);
  const std::uint32_t self = id.value & kIndexMask;
  const std::uint32_t worldMask = toWorldBits(mask, settings_.layerBits);
  struct Context {
    const OdeWorld* world;
    dGeomID query;
    std::uint32_t self, mask;
    double grow;
    SurfacePoint found[32];
    int count;
  } ctx{this, geom, self, worldMask, maxDistance, {}, 0};
  dSpaceCollide2(geom, reinterpret_cast<dGeomID>(space_), &ctx, [](void* data, dGeomID o1, dGeomID o2) {
    auto& c = *static_cast<Context*>(data);
    const dGeomID other = o1 == c.query ? o2 : o1;
    if (OdeWorld::slotOfGeom(other) == c.self || !c.world->queryAccepts(other, c.mask)) return;
    dContactGeom contacts[8];
    const int n = dCollide(c.query, other, 8, contacts, sizeof(dContactGeom));
    for (int k = 0; k < n && c.count < 32; ++k) {
      // ODE's normal points from the other object toward the query shape (the body).
      const Vec3 normal = fromOde(contacts[k].normal);
      if (!(glm::length(normal) > 0.0)) continue;
      SurfacePoint p;
      p.normal = glm::normalize(normal);
      p.distance = c.grow - contacts[k].depth;
      // ODE's plane, mesh and heightfield colliders put the point at the grown shape's deepest
      // point: the body's own surface is `grow` back along the normal from there.
      p.point = fromOde(contacts[k].pos) + p.normal * c.grow;
      c.found[c.count++] = p;
    }
  });
  std::sort(ctx.found, ctx.found + ctx.count,
            [](const SurfacePoint& a, const SurfacePoint& b) { return a.distance < b.distance; });
  const int written = std::min(ctx.count, static_cast<int>(out.size()));
  for (int k = 0; k < written; ++k) out[static_cast<std::size_t>(k)] = ctx.found[k];
  return written;
}

}  // namespace handoff::ode_detail
