// BulletWorld: bodies (creation, static pieces, destruction) and their per-step state.
#include "handoff/physics_bullet.h"

#include "physics_bullet/bullet_internal.h"
#include "physics_bullet/bullet_island_order.h"
#include "physics_bullet/bullet_parts.h"

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

// --- Bodies ---------------------------------------------------------------------------------------

Result<BodyId> BulletWorld::createBody(const BodyDesc& desc) {
  if (Status valid = adapter::validateBodyDesc(desc); !valid.ok()) return Error{valid.error()};
  const ShapeDesc& s = desc.shape;
  ShapeKey key;
  switch (s.type) {
    case ShapeType::Sphere:
      key.kind = ShapeKey::Kind::Sphere;
      key.v[0] = s.radius;
      break;
    case ShapeType::Capsule:
      key.kind = ShapeKey::Kind::Capsule;
      key.v[0] = s.radius;
      key.v[1] = s.halfHeight;
      break;
    case ShapeType::Box:
      key.kind = ShapeKey::Kind::Box;
      key.v[0] = s.halfExtents.x;
      key.v[1] = s.halfExtents.y;
      key.v[2] = s.halfExtents.z;
      break;
    case ShapeType::None:
    default:
      break;
  }
  const bool movable = desc.motion != MotionType::Static;
  const Vec3& I = desc.inertia;
  const bool inertiaZero = I.x == 0.0 && I.y == 0.0 && I.z == 0.0;

  BodyShape shape;
  Vec3 inertia{0.0};
  if (s.created.valid()) {
    CreatedShape* created = createdOf(s.created);
    if (created == nullptr) return Error{"createBody: shape.created is not a live shape of this world"};
    if (created->staticOnly && desc.motion != MotionType::Static)
      return Error{
          "createBody: a triangle mesh or heightfield shape is for static bodies only (give a "
          "moving object a convex hull or a compound)"};
    shape.created = s.created.value & kIndexMask;
    shape.shape = created->shape.get();
    shape.ccdRadius = created->ccdRadius;
    btVector3 centre;
    btScalar radius = 0.0;
    shape.shape->getBoundingSphere(centre, radius);
    shape.reach = radius + centre.length();
    if (movable) {
      if (inertiaZero) {
        // A solid box of the shape's bounds in C (a hull's bounds are its points').
        const Vec3 size = fromBt(created->hi - created->lo);
        inertia = desc.mass / 12.0 *
                  Vec3{size.y * size.y + size.z * size.z, size.x * size.x + size.z * size.z,
                       size.x * size.x + size.y * size.y};
      } else {
        inertia = I;
      }
    }
    ++created->refs;
  } else {
    shape.shape = acquireShape(key);
    shape.ccdRadius = key.kind == ShapeKey::Kind::Box ? std::min({key.v[0], key.v[1], key.v[2]}) : key.v[0];
    shape.reach = shapeBoundingRadius(s);
    if (movable) inertia = inertiaZero ? shapePrincipalInertia(s, desc.mass) : I;
  }
  return addBody(desc, shape, inertia);
}

Result<BodyId> BulletWorld::addBody(const BodyDesc& desc, const BodyShape& shape, const Vec3& inertia) {
  std::uint32_t index = 0;
  if (!freeBodies_.empty()) {
    index = freeBodies_.back();
    freeBodies_.pop_back();
  } else {
    if (bodies_.size() >= kIndexMask) {
      if (shape.created != kIndexMask) {
        releaseCreated(shape.created);
      } else {
        releaseShape(shape.shape);
      }
      return Error{"createBody: too many bodies in one world"};
    }
    index = static_cast<std::uint32_t>(bodies_.size());
    bodies_.emplace_back();
    moving_.reserve(bodies_.capacity());
  }
  BodySlot& slot = bodies_[index];
  slot.shape = shape.shape;
  slot.createdShape = shape.created;
  slot.reportMinImpulse = -1.0;
  slot.shape->getBoundingSphere(slot.boundingCentre, slot.boundingRadius);
  slot.breakingThreshold =
      std::max(gContactBreakingThreshold, slot.shape->getContactBreakingThreshold(gContactBreakingThreshold));
  slot.motion = desc.motion;
  slot.mass = desc.motion == MotionType::Static ? 0.0 : desc.mass;
  slot.inertia = toBt(inertia);
  slot.filter = desc.filter;
  slot.enabled = true;
  slot.userData = desc.userData;
  slot.joints.clear();
  slot.movePending = false;
  if (solver_ != nullptr) solver_->prepareBody(index);

  btRigidBody::btRigidBodyConstructionInfo ci(
      desc.motion == MotionType::Dynamic ? slot.mass : 0.0, nullptr, slot.shape,
      desc.motion == MotionType::Dynamic ? slot.inertia : btVector3(0, 0, 0));
  ci.m_startWorldTransform = toBt(desc.worldFromBody);
  ci.m_friction = desc.friction;
  ci.m_restitution = desc.restitution;
  ci.m_rollingFriction = desc.rollingFriction;
  ci.m_linearDamping = toBulletDamping(desc.linearDamping);
  ci.m_angularDamping = toBulletDamping(desc.angularDamping);
  // Jolt's point velocity rule (WorldSettings::sleepLinearSpeed): the shape's farthest point
  // moves at |omega| times its bounding radius.
  const double reach = shape.reach;
  ci.m_linearSleepingThreshold = settings_.sleepLinearSpeed;
  ci.m_angularSleepingThreshold = settings_.sleepLinearSpeed / (reach > 0.0 ? reach : 1.0);
  slot.body = std::make_unique<btRigidBody>(ci);
  btRigidBody& body = *slot.body;
  body.setUserIndex(static_cast<int>(index));
  body.setUserPointer(this);                 // marks the adapter's bodies (bodyOf)
  body.setGravity(toBt(settings_.gravity));  // also for bodies that start kinematic
  if (desc.motion == MotionType::Static) {
    body.setCollisionFlags(body.getCollisionFlags() | btCollisionObject::CF_STATIC_OBJECT);
  } else {
    applyMotionType(slot, desc.motion);
  }
  if (desc.motion != MotionType::Static && desc.enableContinuousCollision) {
    const double radius = shape.ccdRadius;
    // Sweep when a substep moves the body by more than half its thinnest radius; the swept
    // sphere fits inside the shape so it never reports hits the shape would not have.
    body.setCcdMotionThreshold(0.5 * radius);
    body.setCcdSweptSphereRadius(0.8 * radius);
  }
  addToWorld(slot);
  ++liveBodies_;
  return handleOf(index);
}

void BulletWorld::applyMotionType(BodySlot& slot, MotionType motion) {
  btRigidBody& body = *slot.body;
  if (motion == MotionType::Kinematic) {
    // Zero inverse mass and inertia: a kinematic body with mass makes joints explode (bullet3 #334).
    body.setMassProps(0.0, btVector3(0.0, 0.0, 0.0));  // also sets CF_STATIC_OBJECT: clear it below
    body.setCollisionFlags((body.getCollisionFlags() & ~btCollisionObject::CF_STATIC_OBJECT) |
                           btCollisionObject::CF_KINEMATIC_OBJECT);
    body.updateInertiaTensor();
    body.forceActivationState(DISABLE_DEACTIVATION);
  } else {
    body.setCollisionFlags(body.getCollisionFlags() &
                           ~(btCollisionObject::CF_STATIC_OBJECT | btCollisionObject::CF_KINEMATIC_OBJECT));
    body.setMassProps(slot.mass, slot.inertia);
    body.setGravity(toBt(settings_.gravity));
    body.updateInertiaTensor();
    body.forceActivationState(ACTIVE_TAG);
    body.activate(true);
    slot.movePending = false;
  }
  slot.motion = motion;
}

void BulletWorld::addToWorld(BodySlot& slot) {
  slot.worldGroup = worldBits(slot.filter.layer);
  world_->addRigidBody(slot.body.get(), slot.worldGroup, worldBits(slot.filter.mask));
  if (slot.shape->getShapeType() == STATIC_PLANE_PROXYTYPE) {
    planesInWorld_.push_back(static_cast<std::uint32_t>(&slot - bodies_.data()));
  } else {
    for (int bit = 0; bit < 32; ++bit) othersInWorld_[bit] += (slot.worldGroup >> bit) & 1;
    updateGroupsInWorld();
  }
}

void BulletWorld::removeFromWorld(BodySlot& slot) {
  world_->removeRigidBody(slot.body.get());
  if (slot.shape->getShapeType() == STATIC_PLANE_PROXYTYPE) {
    const auto index = static_cast<std::uint32_t>(&slot - bodies_.data());
    planesInWorld_.erase(std::find(planesInWorld_.begin(), planesInWorld_.end(), index));
  } else {
    for (int bit = 0; bit < 32; ++bit) othersInWorld_[bit] -= (slot.worldGroup >> bit) & 1;
    updateGroupsInWorld();
  }
}

void BulletWorld::updateGroupsInWorld() {
  groupsWithOne_ = groupsWithTwo_ = 0;
  for (int bit = 0; bit < 32; ++bit) {
    if (othersInWorld_[bit] >= 1) groupsWithOne_ |= 1u << bit;
    if (othersInWorld_[bit] >= 2) groupsWithTwo_ |= 1u << bit;
  }
}

BodyId BulletWorld::addGroundPlane(const Vec3& normal, double offset, double friction) {
  const double len = glm::length(normal);
  if (!(isFinite(normal) && len > 1e-12 && finite(offset) && finite(friction) && friction >= 0.0)) {
    assert(false && "addGroundPlane: invalid normal, offset or friction");
    return BodyId{};
  }
  const Vec3 n = normal / len;
  ShapeKey key;
  key.kind = ShapeKey::Kind::Plane;
  key.v[0] = n.x;
  key.v[1] = n.y;
  key.v[2] = n.z;
  key.v[3] = offset;
  BodyDesc desc;
  desc.motion = MotionType::Static;
  desc.mass = 0.0;
  desc.filter = CollisionFilter{layers::kStatic, layers::kAll};
  desc.friction = friction;
  desc.enableContinuousCollision = false;
  Result<BodyId> id = addBody(desc, BodyShape{acquireShape(key), kIndexMask, 0.0, 0.0}, Vec3{0.0});
  return id ? *id : BodyId{};
}

BodyId BulletWorld::addStaticBox(const Transform& worldFromBox, const Vec3& halfExtents, double friction) {
  BodyDesc desc;
  desc.shape.type = ShapeType::Box;
  desc.shape.halfExtents = halfExtents;
  desc.motion = MotionType::Static;
  desc.worldFromBody = worldFromBox;
  desc.filter = CollisionFilter{layers::kStatic, layers::kAll};
  desc.friction = friction;
  desc.enableContinuousCollision = false;
  Result<BodyId> id = createBody(desc);
  assert(id.ok() && "addStaticBox: invalid transform, half extents or friction");
  return id ? *id : BodyId{};
}

void BulletWorld::destroyBody(BodyId id) {
  BodySlot* slot = slotOf(id);
  assert(slot != nullptr && "destroyBody: invalid or dead BodyId");
  if (slot == nullptr) return;
  // Joints attached to the body go with it (a constraint must not outlive its bodies).
  while (!slot->joints.empty()) destroyJointAt(slot->joints.back());
  wakeTouching(*slot);
  if (slot->enabled) removeFromWorld(*slot);
  if (!joined()) static_cast<IslandOrderedWorld&>(*world_).forgetPredictiveContacts(slot->body.get());
  slot->body.reset();
  if (slot->createdShape != kIndexMask) {
    releaseCreated(slot->createdShape);
  } else {
    releaseShape(slot->shape);
  }
  slot->shape = nullptr;
  slot->createdShape = kIndexMask;
  if (slot->reportMinImpulse >= 0.0) {
    reported_.erase(std::find(reported_.begin(), reported_.end(), id.value & kIndexMask));
    slot->reportMinImpulse = -1.0;
  }
  slot->movePending = false;
  if (solver_ != nullptr) solver_->setDepenetration(id.value & kIndexMask, 0.0, 0.0);
  slot->generation = (slot->generation + 1u) & kGenerationMask;
  const std::uint32_t index = id.value & kIndexMask;
  freeBodies_.push_back(index);
  --liveBodies_;
}

// --- Per-step state -------------------------------------------------------------------------------

void BulletWorld::setMotionType(BodyId id, MotionType motion) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  // Static bodies have no dynamic mass, and Bullet keeps static bodies out of its list of moving
  // bodies: only kinematic <-> dynamic switches are supported.
  assert(slot->motion != MotionType::Static && motion != MotionType::Static &&
         "setMotionType switches between kinematic and dynamic only");
  if (slot->motion == MotionType::Static || motion == MotionType::Static) return;
  if (slot->motion == motion) return;
  // Velocities are kept: btRigidBody::setMassProps does not touch them.
  applyMotionType(*slot, motion);
  wakeJointed(*slot);
  if (solver_ != nullptr && motion != MotionType::Dynamic)
    solver_->setDepenetration(id.value & kIndexMask, 0.0, 0.0);
}

bool BulletWorld::limitDepenetration(BodyId id, double maxSpeed, double maxTime) {
  HANDOFF_BODY_OR_RETURN(slot, id, false);
  if (solver_ == nullptr || !finite(maxSpeed) || !finite(maxTime)) return false;  // a game's own solver
  const bool on = maxSpeed > 0.0 && maxTime > 0.0;
  if (on && slot->motion != MotionType::Dynamic) return false;
  solver_->setDepenetration(id.value & kIndexMask, maxSpeed, maxTime);
  return on;
}

bool BulletWorld::depenetrationLimited(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, false);
  const std::uint32_t index = id.value & kIndexMask;
  return solver_ != nullptr && index < solver_->depenetration.size() &&
         solver_->depenetration[index].maxSpeed > 0.0;
}

Vec3 BulletWorld::takeDepenetrationPush(BodyId id) {
  HANDOFF_BODY_OR_RETURN(slot, id, Vec3{0.0});
  const std::uint32_t index = id.value & kIndexMask;
  if (solver_ == nullptr || index >= solver_->pushed.size()) return Vec3{0.0};
  const Vec3 push = fromBt(solver_->pushed[index]);
  solver_->pushed[index] = btVector3(0, 0, 0);
  return push;
}

MotionType BulletWorld::motionType(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, MotionType::Static);
  return slot->motion;
}

void BulletWorld::moveKinematic(BodyId id, const Transform& worldFromBody, double dt) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  assert(slot->motion == MotionType::Kinematic && "moveKinematic on a body that is not kinematic");
  assert(isFinite(worldFromBody) && dt > 0.0 && "moveKinematic: non-finite target or dt <= 0");
  if (slot->motion != MotionType::Kinematic || !isFinite(worldFromBody) || !(dt > 0.0)) return;
  btRigidBody& body = *slot->body;
  const Transform start = fromBt(body.getWorldTransform());
  Transform target = worldFromBody;
  target.rotation = alignHemisphere(normalizeOrIdentity(target.rotation), start.rotation);
  slot->moveStart = start;
  slot->moveTarget = target;
  slot->moveRotationKnown = false;  // advanceKinematicMoves computes it when a substep needs it
  slot->moveLinearVelocity = (target.translation - start.translation) / dt;
  slot->moveAngularVelocity = handoff::angularVelocity(start.rotation, target.rotation, dt).omega;
  // Called from a substep listener during step(): the move covers the remaining substeps.
  slot->moveFirstSubstep = stepping_ ? substepIndex_ : 0;
  if (!slot->listedMoving) {  // once per slot until the step ends: the list fits its reserve
    slot->listedMoving = true;
    moving_.push_back(id.value & kIndexMask);
  }
  slot->movePending = true;
  body.setLinearVelocity(toBt(slot->moveLinearVelocity));
  body.setAngularVelocity(toBt(slot->moveAngularVelocity));
  // A sleeping island jointed to a kinematic body is not woken by Bullet when the body moves.
  wakeJointed(*slot);
}

void BulletWorld::setTransform(BodyId id, const Transform& worldFromBody) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  assert(isFinite(worldFromBody) && "setTransform: non-finite transform");
  if (!isFinite(worldFromBody)) return;
  btRigidBody& body = *slot->body;
  wakeTouching(*slot);
  const btTransform xf = toBt(worldFromBody);
  body.setCenterOfMassTransform(xf);  // also updates the world inertia tensor
  body.setInterpolationWorldTransform(xf);
  slot->movePending = false;
  if (slot->enabled) world_->updateSingleAabb(&body);
  if (slot->motion == MotionType::Dynamic) body.activate(true);
  wakeJointed(*slot);
}

Transform BulletWorld::transform(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, Transform{});
  return fromBt(slot->body->getWorldTransform());
}

void BulletWorld::setLinearVelocity(BodyId id, const Vec3& velocity) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->motion == MotionType::Static || !isFinite(velocity)) return;
  slot->body->setLinearVelocity(toBt(velocity));
  if (slot->motion == MotionType::Dynamic) slot->body->activate(true);
}

void BulletWorld::setAngularVelocity(BodyId id, const Vec3& omega) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->motion == MotionType::Static || !isFinite(omega)) return;
  slot->body->setAngularVelocity(toBt(omega));
  if (slot->motion == MotionType::Dynamic) slot->body->activate(true);
}

Vec3 BulletWorld::linearVelocity(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, Vec3{0.0});
  return fromBt(slot->body->getLinearVelocity());
}

Vec3 BulletWorld::angularVelocity(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, Vec3{0.0});
  return fromBt(slot->body->getAngularVelocity());
}

double BulletWorld::mass(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, 0.0);
  return slot->mass;
}

glm::dmat3 BulletWorld::worldInertia(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, glm::dmat3{0.0});
  const glm::dmat3 r = glm::mat3_cast(fromBt(slot->body->getWorldTransform().getRotation()));
  glm::dmat3 d{0.0};
  d[0][0] = slot->inertia.x();
  d[1][1] = slot->inertia.y();
  d[2][2] = slot->inertia.z();
  return r * d * glm::transpose(r);
}

void BulletWorld::applyLinearImpulse(BodyId id, const Vec3& impulse, const Vec3& worldPoint) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->motion != MotionType::Dynamic || !isFinite(impulse) || !isFinite(worldPoint)) return;
  btRigidBody& body = *slot->body;
  body.activate(true);
  body.applyImpulse(toBt(impulse), toBt(worldPoint) - body.getCenterOfMassPosition());
}

void BulletWorld::applyAngularImpulse(BodyId id, const Vec3& angularImpulse) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->motion != MotionType::Dynamic || !isFinite(angularImpulse)) return;
  slot->body->activate(true);
  slot->body->applyTorqueImpulse(toBt(angularImpulse));
}

void BulletWorld::setCollisionFilter(BodyId id, const CollisionFilter& filter) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->filter == filter) return;
  slot->filter = filter;
  if (!slot->enabled) return;  // applied when enabled again
  // The broadphase only pairs proxies when they move, so editing the proxy's group/mask in place
  // would miss pairs between resting bodies that the new filter allows. Re-inserting the body
  // removes its pairs (and their manifolds) and pairs it afresh under the new filter.
  wakeTouching(*slot);
  removeFromWorld(*slot);
  addToWorld(*slot);
  if (slot->motion == MotionType::Dynamic) slot->body->activate(true);
}

CollisionFilter BulletWorld::collisionFilter(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, CollisionFilter{});
  return slot->filter;
}

void BulletWorld::setEnabled(BodyId id, bool enabled) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->enabled == enabled) return;
  if (!enabled) wakeTouching(*slot);  // while its manifolds still exist
  slot->enabled = enabled;
  if (enabled) {
    addToWorld(*slot);
    if (slot->motion == MotionType::Dynamic) slot->body->activate(true);
  } else {
    slot->movePending = false;
  }
  // A joint takes part in the simulation while both of its bodies do.
  for (std::uint32_t j : slot->joints) updateJointMembership(joints_[j]);
  if (!enabled) removeFromWorld(*slot);
  wakeJointed(*slot);
}

bool BulletWorld::isEnabled(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, false);
  return slot->enabled;
}

bool BulletWorld::isSleeping(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, false);
  return slot->motion == MotionType::Dynamic && slot->body->getActivationState() == ISLAND_SLEEPING;
}

std::uint64_t BulletWorld::userData(BodyId id) const {
  const BodySlot* slot = slotOf(id);
  return slot != nullptr ? slot->userData : 0;
}

BodyId BulletWorld::bodyOf(const btCollisionObject* object) const {
  if (object == nullptr || object->getUserPointer() != this) return BodyId{};
  const auto index = static_cast<std::uint32_t>(object->getUserIndex());
  if (index >= bodies_.size() || bodies_[index].body.get() != object) return BodyId{};
  return handleOf(index);
}

void BulletWorld::wake(BodyId id) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->motion == MotionType::Dynamic) slot->body->activate(true);
}

void BulletWorld::sleep(BodyId id) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->motion != MotionType::Dynamic || !slot->enabled) return;
  btRigidBody& body = *slot->body;
  body.setLinearVelocity(btVector3(0, 0, 0));
  body.setAngularVelocity(btVector3(0, 0, 0));
  // ISLAND_SLEEPING is kept by Bullet's island manager while every body of the island sleeps;
  // an awake body whose bounds overlap it joins the island and wakes it (WANTS_DEACTIVATION).
  body.forceActivationState(ISLAND_SLEEPING);
}

}  // namespace handoff::bullet_detail
