// BulletWorld: queries (capsule overlap, ray and capsule casts, contact counts, closest points).
//
// Decisions worth knowing:
// - A query's mask is in handoff's layers, translated to the engine's groups
//   (WorldSettings::layerBits); the query itself is in every group (-1), so only its mask filters.
// - A cast names the body hit when it is one of this world's (user pointer, bullet_parts.h) and
//   always the Bullet object, so a game recognises its own.
#include "handoff/physics_bullet.h"

#include "physics_bullet/bullet_internal.h"
#include "physics_bullet/bullet_parts.h"

#include <BulletCollision/CollisionDispatch/btSimulationIslandManager.h>
#include <btBulletCollisionCommon.h>
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace handoff::bullet_detail {

// --- Queries --------------------------------------------------------------------------------------

bool BulletWorld::capsuleOverlaps(const Transform& worldFromCapsule, double radius, double halfHeight,
                                  std::uint32_t mask) const {
  if (!isFinite(worldFromCapsule) || !(radius > 0.0) || !(halfHeight >= 0.0)) return false;
  struct Callback final : btCollisionWorld::ContactResultCallback {
    bool hit = false;
    bool needsCollision(btBroadphaseProxy* proxy) const override {
      return !hit && btCollisionWorld::ContactResultCallback::needsCollision(proxy);
    }
    btScalar addSingleResult(btManifoldPoint& cp, const btCollisionObjectWrapper*, int, int,
                             const btCollisionObjectWrapper*, int, int) override {
      if (cp.getDistance() <= 0.0) hit = true;
      return 0.0;
    }
  } callback;
  callback.m_collisionFilterGroup = -1;  // only the query's mask filters
  callback.m_collisionFilterMask = worldBits(mask);
  queryCapsule_->resize(radius, halfHeight);
  queryObject_->setWorldTransform(toBt(worldFromCapsule));
  world_->contactTest(queryObject_.get(), callback);
  return callback.hit;
}

namespace {

/// A cast's hit from Bullet's callback fields.
template <typename Callback>
CastHit castHit(const Callback& callback, const btCollisionObject* object, BodyId body,
                const btVector3& point, const btVector3& normal) {
  CastHit hit;
  hit.fraction = std::clamp(static_cast<double>(callback.m_closestHitFraction), 0.0, 1.0);
  hit.point = fromBt(point);
  const Vec3 n = fromBt(normal);
  const double len = glm::length(n);
  hit.normal = len > 0.0 ? n / len : Vec3{0.0};
  hit.body = body;
  hit.engineObject = object;
  return hit;
}

}  // namespace

CastHit BulletWorld::castCapsule(const Transform& from, const Vec3& to, double radius, double halfHeight,
                                 std::uint32_t mask) const {
  if (!isFinite(from) || !isFinite(to) || !(radius > 0.0) || !(halfHeight >= 0.0)) return CastHit{};
  const btTransform start = toBt(from);
  btTransform end = start;
  end.setOrigin(toBt(to));
  btCollisionWorld::ClosestConvexResultCallback callback(start.getOrigin(), end.getOrigin());
  callback.m_collisionFilterGroup = -1;
  callback.m_collisionFilterMask = worldBits(mask);
  queryCapsule_->resize(radius, halfHeight);
  world_->convexSweepTest(queryCapsule_.get(), start, end, callback);
  if (!callback.hasHit()) return CastHit{};
  return castHit(callback, callback.m_hitCollisionObject, bodyOf(callback.m_hitCollisionObject),
                 callback.m_hitPointWorld, callback.m_hitNormalWorld);
}

CastHit BulletWorld::castRay(const Vec3& from, const Vec3& to, std::uint32_t mask) const {
  if (!isFinite(from) || !isFinite(to)) return CastHit{};
  btCollisionWorld::ClosestRayResultCallback callback(toBt(from), toBt(to));
  callback.m_collisionFilterGroup = -1;
  callback.m_collisionFilterMask = worldBits(mask);
  world_->rayTest(toBt(from), toBt(to), callback);
  if (!callback.hasHit()) return CastHit{};
  return castHit(callback, callback.m_collisionObject, bodyOf(callback.m_collisionObject),
                 callback.m_hitPointWorld, callback.m_hitNormalWorld);
}

int BulletWorld::contactCount(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, 0);
  if (!slot->enabled) return 0;
  const btCollisionObject* object = slot->body.get();
  int count = 0;
  const int numManifolds = dispatcher_->getNumManifolds();
  for (int m = 0; m < numManifolds; ++m) {
    const btPersistentManifold* manifold = dispatcher_->getManifoldByIndexInternal(m);
    if (manifold->getBody0() == object || manifold->getBody1() == object) count += manifold->getNumContacts();
  }
  return count;
}

int BulletWorld::closestPoints(BodyId id, const Transform& worldFromBody, double maxDistance,
                               std::uint32_t mask, std::span<SurfacePoint> out) const {
  HANDOFF_BODY_OR_RETURN(slot, id, 0);
  if (out.empty() || !isFinite(worldFromBody) || !(maxDistance >= 0.0) || !finite(maxDistance)) return 0;
  // Only static planes to ask (the usual ground): what contactTest would report, without its
  // broadphase query and algorithm per plane.
  const btCollisionShape& shape = *slot->body->getCollisionShape();
  // A group bit has others when it holds two bodies, or one that is not this body.
  const std::uint32_t selfGroups = slot->enabled ? static_cast<std::uint32_t>(slot->worldGroup) : 0u;
  const auto worldMask = static_cast<std::uint32_t>(worldBits(mask));
  const bool othersToAsk =
      foreignObjects_ || (worldMask & (groupsWithTwo_ | (groupsWithOne_ & ~selfGroups))) != 0;
  if (!othersToAsk && btBroadphaseProxy::isConvex(shape.getShapeType())) {
    return planePoints(static_cast<const btConvexShape&>(shape), toBt(worldFromBody), slot->boundingCentre,
                       slot->boundingRadius, mask, out);
  }
  // A probe with the body's shape at the asked pose; contactTest reports points up to
  // m_closestDistanceThreshold apart among the pairs whose bounding boxes overlap (an infinite
  // plane always does; a box or step must be within the shape's collision margin).
  btCollisionObject probe;
  probe.setCollisionShape(slot->body->getCollisionShape());
  probe.setWorldTransform(toBt(worldFromBody));
  struct Callback final : btCollisionWorld::ContactResultCallback {
    const btCollisionObject* self = nullptr;
    const btCollisionObject* probe = nullptr;
    std::span<SurfacePoint> out;
    int count = 0;
    btVector3 sphereCentre{0.0, 0.0, 0.0};
    btScalar sphereReach = 0.0;  // bounding radius + the farthest distance the plane test reports
    bool needsCollision(btBroadphaseProxy* proxy) const override {
      if (proxy->m_clientObject == self || !btCollisionWorld::ContactResultCallback::needsCollision(proxy))
        return false;
      // An infinite plane overlaps every box: the bounding sphere rejects the far ones (a head
      // above the floor) before the narrow phase, which could report no point for them either.
      const auto* object = static_cast<const btCollisionObject*>(proxy->m_clientObject);
      if (object->getCollisionShape()->getShapeType() != STATIC_PLANE_PROXYTYPE) return true;
      const auto* plane = static_cast<const btStaticPlaneShape*>(object->getCollisionShape());
      const btTransform& worldFromPlane = object->getWorldTransform();
      const btVector3 normal = worldFromPlane.getBasis() * plane->getPlaneNormal();
      const btScalar height =
          normal.dot(sphereCentre - worldFromPlane.getOrigin()) - plane->getPlaneConstant();
      return height <= sphereReach;
    }
    btScalar addSingleResult(btManifoldPoint& cp, const btCollisionObjectWrapper* w0, int, int,
                             const btCollisionObjectWrapper*, int, int) override {
      if (count >= static_cast<int>(out.size())) return 0.0;
      const bool probeIsA = w0->getCollisionObject() == probe;
      SurfacePoint& p = out[static_cast<size_t>(count++)];
      p.point = fromBt(probeIsA ? cp.m_positionWorldOnA : cp.m_positionWorldOnB);
      p.normal = fromBt(probeIsA ? cp.m_normalWorldOnB : -cp.m_normalWorldOnB);
      p.distance = cp.getDistance();
      return 0.0;
    }
  } callback;
  callback.self = slot->body.get();
  callback.probe = &probe;
  callback.out = out;
  callback.m_collisionFilterGroup = -1;  // only the query's mask filters
  callback.m_collisionFilterMask = worldBits(mask);
  callback.m_closestDistanceThreshold = maxDistance;
  // The plane test reports points up to the manifold's breaking threshold (beyond maxDistance).
  callback.sphereCentre = probe.getWorldTransform() * slot->boundingCentre;
  callback.sphereReach = slot->boundingRadius + maxDistance + slot->breakingThreshold + 1e-6;
  world_->contactTest(&probe, callback);
  return callback.count;
}

int BulletWorld::planePoints(const btConvexShape& convex, const btTransform& worldFromConvex,
                             const btVector3& boundingCentre, btScalar boundingRadius, std::uint32_t mask,
                             std::span<SurfacePoint> out) const {
  // btConvexPlaneCollisionAlgorithm::processCollision for the pair (probe, plane), as contactTest
  // runs it (btSingleContactCallback, the closest-point algorithm, btBridgedManifoldResult): the
  // convex shape's support point toward the plane, reported while it is nearer than the pair's
  // manifold breaking threshold (Bullet 3.24's plane test does not read the query's distance).
  // The probe is no rigid body, so SpeculativeDispatcher widens nothing; with the default
  // collision configuration's perturbation threshold (0) there are no perturbed points.
  // A plane below the shape's bounding sphere by more than the threshold (and rounding) has no
  // point to report: the support point is no nearer than the sphere.
  const btVector3 sphereCentre = worldFromConvex * boundingCentre;
  int count = 0;
  for (const std::uint32_t index : planesInWorld_) {
    const BodySlot& plane = bodies_[index];
    // ContactResultCallback::needsCollision with the query's group -1 and mask.
    if ((plane.worldGroup & worldBits(mask)) == 0 || worldBits(plane.filter.mask) == 0) continue;
    if (count >= static_cast<int>(out.size())) break;
    const auto& planeShape = static_cast<const btStaticPlaneShape&>(*plane.shape);
    // Only an own world comes here (a joined one has foreign objects): its dispatcher's flags.
    const btScalar threshold =
        (ownedDispatcher_->getDispatcherFlags() &
         btCollisionDispatcher::CD_USE_RELATIVE_CONTACT_BREAKING_THRESHOLD)
            ? btMin(contactBreakingThreshold(convex), contactBreakingThreshold(planeShape))
            : gContactBreakingThreshold;
    const btTransform& worldFromPlane = plane.body->getWorldTransform();
    const btVector3& planeNormal = planeShape.getPlaneNormal();
    const btScalar& planeConstant = planeShape.getPlaneConstant();
    const btScalar sphereHeight =
        (worldFromPlane.getBasis() * planeNormal).dot(sphereCentre - worldFromPlane.getOrigin()) -
        planeConstant;
    if (sphereHeight - boundingRadius > threshold + 1e-6) continue;
    btTransform planeInConvex;
    planeInConvex = worldFromConvex.inverse() * worldFromPlane;
    btTransform convexInPlane;
    convexInPlane = worldFromPlane.inverse() * worldFromConvex;
    const btVector3 vtx = convex.localGetSupportingVertex(planeInConvex.getBasis() * -planeNormal);
    const btVector3 vtxInPlane = convexInPlane(vtx);
    const btScalar distance = (planeNormal.dot(vtxInPlane) - planeConstant);
    if (!(distance < threshold)) continue;
    const btVector3 vtxInPlaneProjected = vtxInPlane - distance * planeNormal;
    const btVector3 pointOnPlane = worldFromPlane * vtxInPlaneProjected;
    const btVector3 normalOnPlane = worldFromPlane.getBasis() * planeNormal;
    SurfacePoint& p = out[static_cast<size_t>(count++)];
    p.point = fromBt(pointOnPlane + normalOnPlane * distance);  // btBridgedManifoldResult's point on A
    p.normal = fromBt(normalOnPlane);
    p.distance = distance;
  }
  return count;
}

}  // namespace handoff::bullet_detail
