// BulletWorld: joints (creation, destruction, warm start, motors, frames, limits, pair exclusions,
// measurements).
#include "handoff/physics_bullet.h"

#include "physics_bullet/bullet_internal.h"
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

/// ERP of the locked linear axes of a joint (anchor coincidence) per substep. With the world's
/// joint ERP (0.2 by default) a pendulum at 60 Hz x 2 drifts 3 mm and loses 6 % of its energy;
/// 0.8 gives 0.8 mm and 1.8 %. No CFM: the anchor rows are rigid.
namespace {
constexpr double kLinearStopErp = 0.8;
}  // namespace

// --- Joints ---------------------------------------------------------------------------------------

Result<JointId> BulletWorld::createJoint(const JointDesc& desc) {
  BodySlot* a = slotOf(desc.bodyA);
  BodySlot* b = slotOf(desc.bodyB);
  if (a == nullptr) return Error{"createJoint: bodyA is not a live body of this world"};
  if (b == nullptr) return Error{"createJoint: bodyB is not a live body of this world"};
  if (Status valid = adapter::validateJointDesc(desc); !valid.ok()) return Error{valid.error()};
  Vec3 lower = desc.angularLower;
  Vec3 upper = desc.angularUpper;
  for (int i = 0; i < 3; ++i) {
    if (lower[i] > upper[i]) {
      // Free. Canonical values: Bullet wraps limits into [-pi, pi], which could turn a free pair
      // such as (3.5, 3.0) into a limited one.
      lower[i] = 1.0;
      upper[i] = -1.0;
    }
  }

  std::uint32_t index = 0;
  if (!freeJoints_.empty()) {
    index = freeJoints_.back();
    freeJoints_.pop_back();
  } else {
    if (joints_.size() >= kIndexMask) return Error{"createJoint: too many joints in one world"};
    index = static_cast<std::uint32_t>(joints_.size());
    joints_.emplace_back();
  }
  JointSlot& joint = joints_[index];
  joint.bodyA = desc.bodyA.value & kIndexMask;
  joint.bodyB = desc.bodyB.value & kIndexMask;
  joint.aFromJoint = desc.bodyAFromJoint;
  joint.bFromJoint = desc.bodyBFromJoint;
  joint.collideConnected = desc.collideConnected;
  joint.inWorld = false;
  joint.motor = JointMotorSettings{};
  joint.motorTargetEuler = jointAngles(joint.motor.target);
  joint.motorTargetAngles = Vec3{0.0};
  joint.breakForce = desc.breakForce;
  joint.breakTorque = desc.breakTorque;
  joint.breakState = JointBreakState{};
  joint.feedback.reset();

  // Bullet's A is our B (see the top of this file): the constraint's angles are jointAngles(qRel).
  // Anchor impulses at the anchors' midpoint (CentredAnchorConstraint): the joint solver never
  // changes the bodies' total angular momentum.
  joint.constraint = std::make_unique<CentredAnchorConstraint>(*b->body, *a->body, toBt(desc.bodyBFromJoint),
                                                               toBt(desc.bodyAFromJoint), RO_XYZ);
  btGeneric6DofSpring2Constraint& c = *joint.constraint;
  c.setUserConstraintId(static_cast<int>(index));
  if (solver_ != nullptr) solver_->prepare(index);
  c.setLinearLowerLimit(btVector3(0.0, 0.0, 0.0));
  c.setLinearUpperLimit(btVector3(0.0, 0.0, 0.0));
  applyLimits(joint, lower, upper);
  for (int axis = 0; axis < 3; ++axis) {
    c.setParam(BT_CONSTRAINT_STOP_ERP, kLinearStopErp, axis);
    c.setParam(BT_CONSTRAINT_STOP_CFM, 0.0, axis);
    c.setParam(BT_CONSTRAINT_STOP_CFM, 0.0, axis + 3);
    c.setParam(BT_CONSTRAINT_ERP, 1.0, axis + 3);  // motor ERP: see updateMotor()
  }
  c.setOverrideNumSolverIterations(settings_.jointIterationFactor * settings_.solverIterations);
  if (finite(desc.breakForce) || finite(desc.breakTorque)) {
    // Measured by the adapter, not by Bullet's breaking impulse threshold: that one threshold is
    // compared with each row's scalar impulse on its own (a force along a diagonal is split over
    // three rows) and is the same for linear and angular rows, so it can separate neither the
    // force's magnitude nor force from torque.
    joint.feedback = std::make_unique<btJointFeedback>();
    c.setJointFeedback(joint.feedback.get());
    breakableJoints_.push_back(index);
  }

  if (!desc.collideConnected) {
    // Collision exclusion is kept on the bodies independently of the constraint's presence in the
    // world (setEnabled removes and re-adds constraints). Drop an existing pair so no stale
    // manifold between the two bodies is solved.
    a->body->addConstraintRef(&c);
    b->body->addConstraintRef(&c);
    btBroadphaseProxy* pa = a->body->getBroadphaseHandle();
    btBroadphaseProxy* pb = b->body->getBroadphaseHandle();
    if (pa != nullptr && pb != nullptr) {
      world_->getPairCache()->removeOverlappingPair(pa, pb, dispatcher_);
    }
  }
  a->joints.push_back(index);
  b->joints.push_back(index);
  ++liveJoints_;
  updateJointMembership(joint);
  a->body->activate();
  b->body->activate();
  return JointId{(joint.generation << kIndexBits) | index};
}

void BulletWorld::updateJointMembership(JointSlot& joint) {
  const bool want = bodies_[joint.bodyA].enabled && bodies_[joint.bodyB].enabled;
  if (want == joint.inWorld) return;
  if (want) {
    world_->addConstraint(joint.constraint.get(), false);  // collision exclusion handled by us
    if (solver_ != nullptr)
      solver_->forget(static_cast<std::uint32_t>(joint.constraint->getUserConstraintId()));  // starts cold
  } else {
    world_->removeConstraint(joint.constraint.get());
    // Bullet's removeConstraint also drops the bodies' constraint references, which are the
    // joint's collision exclusion (btCollisionObject::checkCollideWithOverride): restored, so
    // the two bodies still ignore each other when they come back (a pooled or capsule-only
    // ragdoll's adjacent limbs collided, up to 19 cm deep, after their first disable).
    if (!joint.collideConnected) {
      bodies_[joint.bodyA].body->addConstraintRef(joint.constraint.get());
      bodies_[joint.bodyB].body->addConstraintRef(joint.constraint.get());
    }
  }
  joint.inWorld = want;
}

void BulletWorld::destroyJointAt(std::uint32_t index) {
  JointSlot& joint = joints_[index];
  btGeneric6DofSpring2Constraint* c = joint.constraint.get();
  if (joint.inWorld) world_->removeConstraint(c);
  joint.inWorld = false;
  BodySlot& a = bodies_[joint.bodyA];
  BodySlot& b = bodies_[joint.bodyB];
  if (!joint.collideConnected) {
    a.body->removeConstraintRef(c);
    b.body->removeConstraintRef(c);
  }
  for (BodySlot* s : {&a, &b}) {
    auto it = std::find(s->joints.begin(), s->joints.end(), index);
    if (it != s->joints.end()) s->joints.erase(it);
  }
  if (joint.feedback) {
    breakableJoints_.erase(std::find(breakableJoints_.begin(), breakableJoints_.end(), index));
    joint.feedback.reset();
  }
  joint.constraint.reset();
  joint.generation = (joint.generation + 1u) & kGenerationMask;
  freeJoints_.push_back(index);
  --liveJoints_;
  a.body->activate();
  b.body->activate();
}

void BulletWorld::destroyJoint(JointId id) {
  JointSlot* joint = slotOf(id);
  assert(joint != nullptr && "destroyJoint: invalid or dead JointId");
  if (joint == nullptr) return;
  destroyJointAt(id.value & kIndexMask);
}

void BulletWorld::wakeJointed(const BodySlot& slot) {
  // activate() does nothing to a kinematic or static body (Bullet's activation flags): only the
  // dynamic ones are touched, which spares an animated character's moves a visit to each
  // neighbour's btRigidBody.
  for (std::uint32_t j : slot.joints) {
    const JointSlot& joint = joints_[j];
    for (const std::uint32_t b : {joint.bodyA, joint.bodyB}) {
      if (bodies_[b].motion == MotionType::Dynamic) bodies_[b].body->activate();
    }
  }
}

/// Wakes the bodies in contact with `slot` (Bullet does not when a support disappears or moves).
void BulletWorld::wakeTouching(const BodySlot& slot) {
  if (!slot.enabled) return;
  const btCollisionObject* self = slot.body.get();
  const int numManifolds = dispatcher_->getNumManifolds();
  for (int m = 0; m < numManifolds; ++m) {
    btPersistentManifold* manifold = dispatcher_->getManifoldByIndexInternal(m);
    const btCollisionObject* o0 = manifold->getBody0();
    const btCollisionObject* o1 = manifold->getBody1();
    if (o0 == self) o1->activate();
    if (o1 == self) o0->activate();
  }
}

void BulletWorld::resetWarmStart(JointId id) { resetWarmStarts(std::span<const JointId>(&id, 1)); }

void BulletWorld::resetWarmStarts(std::span<const JointId> ids) {
  // The joints' own impulses, then one pass over the manifolds: the contacts of every body at one
  // of the joints.
  const std::uint32_t pass = ++warmResetPass_;
  bool any = false;
  for (JointId id : ids) {
    JointSlot* joint = slotOf(id);
    assert(joint != nullptr && "invalid or dead JointId");
    if (joint == nullptr) continue;
    joint->constraint->internalSetAppliedImpulse(0.0);
    if (solver_ != nullptr) solver_->forget(id.value & kIndexMask);
    bodies_[joint->bodyA].warmResetPass = bodies_[joint->bodyB].warmResetPass = pass;
    any = true;
  }
  if (!any) return;
  auto marked = [&](const btCollisionObject* object) {
    const int index = object->getUserIndex();
    return index >= 0 && static_cast<size_t>(index) < bodies_.size() &&
           bodies_[static_cast<size_t>(index)].body.get() == object &&
           bodies_[static_cast<size_t>(index)].warmResetPass == pass;
  };
  const int numManifolds = dispatcher_->getNumManifolds();
  for (int m = 0; m < numManifolds; ++m) {
    btPersistentManifold* manifold = dispatcher_->getManifoldByIndexInternal(m);
    if (manifold->getNumContacts() == 0) continue;
    if (!marked(manifold->getBody0()) && !marked(manifold->getBody1())) continue;
    for (int p = 0; p < manifold->getNumContacts(); ++p) {
      btManifoldPoint& point = manifold->getContactPoint(p);
      point.m_appliedImpulse = 0.0;
      point.m_appliedImpulseLateral1 = 0.0;
      point.m_appliedImpulseLateral2 = 0.0;
      point.m_prevRHS = 0.0;
    }
  }
}

void BulletWorld::setJointMotor(JointId id, const JointMotorSettings& motor) {
  HANDOFF_JOINT_OR_RETURN(joint, id);
  JointMotorSettings m = motor;
  for (int i = 0; i < 3; ++i) {
    if (!(finite(m.stiffness[i]) && m.stiffness[i] >= 0.0)) m.stiffness[i] = 0.0;
    if (!(finite(m.damping[i]) && m.damping[i] >= 0.0)) m.damping[i] = 0.0;
  }
  if (!(m.maxTorque > 0.0)) m.enabled = false;  // also NaN
  if (!isFinite(m.target)) m.target = Quat{1.0, 0.0, 0.0, 0.0};
  if (!isFinite(m.targetRates)) m.targetRates = Vec3{0.0};
  m.target = normalizeOrIdentity(m.target);
  joint->motor = m;
  joint->motorTargetEuler = jointAngles(m.target);
  applyLimits(*joint, joint->lower, joint->upper);  // clamps the motor's target
  btGeneric6DofSpring2Constraint& c = *joint->constraint;
  for (int i = 0; i < 3; ++i) {
    c.enableSpring(3 + i, false);
    c.setServo(3 + i, false);
    if (!m.enabled) c.enableMotor(3 + i, false);
  }
  bodies_[joint->bodyA].body->activate();
  bodies_[joint->bodyB].body->activate();
}

void BulletWorld::setJointFrames(JointId id, const Transform& bodyAFromJoint,
                                 const Transform& bodyBFromJoint) {
  HANDOFF_JOINT_OR_RETURN(joint, id);
  const bool valid = isFinite(bodyAFromJoint) && isFinite(bodyBFromJoint) &&
                     glm::dot(bodyAFromJoint.rotation, bodyAFromJoint.rotation) > 1e-12 &&
                     glm::dot(bodyBFromJoint.rotation, bodyBFromJoint.rotation) > 1e-12;
  assert(valid && "setJointFrames: non-finite or zero-rotation frame");
  if (!valid) return;
  joint->aFromJoint = bodyAFromJoint;
  joint->bFromJoint = bodyBFromJoint;
  // Bullet's A is our B. Written in place rather than with setFrames(), which also recomputes the
  // joint's cached transforms and angles (atan2s, most of the call's cost): the solver recomputes
  // them from the frames in every getInfo1 before getInfo2 reads them, and this adapter calls
  // calculateTransforms() before it reads them (the motor rows), so nothing reads a stale cache.
  joint->constraint->getFrameOffsetA() = toBt(bodyBFromJoint);
  joint->constraint->getFrameOffsetB() = toBt(bodyAFromJoint);
  bodies_[joint->bodyA].body->activate();
  bodies_[joint->bodyB].body->activate();
}

void BulletWorld::setPairCollision(BodyId idA, BodyId idB, bool enabled) {
  BodySlot* a = slotOf(idA);
  BodySlot* b = slotOf(idB);
  assert(a != nullptr && b != nullptr && "setPairCollision: not a live body");
  if (a == nullptr || b == nullptr || a == b) return;
  // Bullet keeps a per-object ignore list checked in the dispatcher's needsCollision; joints
  // that exclude their bodies use the same list (addConstraintRef). Only pairs that still collide
  // are added, and callers only switch back on pairs they switched off.
  if (!enabled) {
    if (a->body->checkCollideWith(b->body.get())) {
      a->body->setIgnoreCollisionCheck(b->body.get(), true);
      b->body->setIgnoreCollisionCheck(a->body.get(), true);
    }
    btBroadphaseProxy* pa = a->body->getBroadphaseHandle();
    btBroadphaseProxy* pb = b->body->getBroadphaseHandle();
    if (pa != nullptr && pb != nullptr) world_->getPairCache()->removeOverlappingPair(pa, pb, dispatcher_);
  } else {
    // A joint between them that excludes collision keeps doing so.
    for (std::uint32_t j : a->joints) {
      const JointSlot& joint = joints_[j];
      const BodySlot* other = &bodies_[joint.bodyA] == a ? &bodies_[joint.bodyB] : &bodies_[joint.bodyA];
      if (other == b && !joint.collideConnected) return;
    }
    a->body->setIgnoreCollisionCheck(b->body.get(), false);
    b->body->setIgnoreCollisionCheck(a->body.get(), false);
    // The broadphase pairs proxies only when one moves: re-pair resting bodies that overlap now.
    btBroadphaseProxy* pa = a->body->getBroadphaseHandle();
    btBroadphaseProxy* pb = b->body->getBroadphaseHandle();
    if (pa != nullptr && pb != nullptr &&
        TestAabbAgainstAabb2(pa->m_aabbMin, pa->m_aabbMax, pb->m_aabbMin, pb->m_aabbMax) &&
        world_->getPairCache()->findPair(pa, pb) == nullptr) {
      world_->getPairCache()->addOverlappingPair(pa, pb);
    }
    a->body->activate();
    b->body->activate();
  }
}

void BulletWorld::setJointLimits(JointId id, const Vec3& angularLower, const Vec3& angularUpper) {
  HANDOFF_JOINT_OR_RETURN(joint, id);
  const bool valid = isFinite(angularLower) && isFinite(angularUpper);
  assert(valid && "setJointLimits: non-finite limit");
  if (!valid) return;
  Vec3 lower = angularLower;
  Vec3 upper = angularUpper;
  for (int i = 0; i < 3; ++i) {
    if (lower[i] > upper[i]) {
      lower[i] = 1.0;  // free, canonical (see createJoint)
      upper[i] = -1.0;
      continue;
    }
    const double bound = i == 1 ? 0.5 * kPi : kPi;
    lower[i] = std::clamp(lower[i], -bound, bound);
    upper[i] = std::clamp(upper[i], -bound, bound);
  }
  applyLimits(*joint, lower, upper);
  bodies_[joint->bodyA].body->activate();
  bodies_[joint->bodyB].body->activate();
}

void BulletWorld::applyLimits(JointSlot& joint, const Vec3& lower, const Vec3& upper) {
  joint.lower = lower;
  joint.upper = upper;
  joint.constraint->setAngularLowerLimit(toBt(lower));
  joint.constraint->setAngularUpperLimit(toBt(upper));
  // Open axes clamp the motor's target to the limits; locked axes take none (no motor row).
  Vec3 target = joint.motorTargetEuler;
  for (int i = 0; i < 3; ++i) {
    if (lower[i] <= upper[i]) target[i] = std::clamp(target[i], lower[i], upper[i]);
  }
  joint.motorTargetAngles = target;
}

Quat BulletWorld::jointRelativeRotation(JointId id) const {
  HANDOFF_JOINT_OR_RETURN(joint, id, Quat{1.0, 0.0, 0.0, 0.0});
  const Quat qa =
      fromBt(bodies_[joint->bodyA].body->getWorldTransform().getRotation()) * joint->aFromJoint.rotation;
  const Quat qb =
      fromBt(bodies_[joint->bodyB].body->getWorldTransform().getRotation()) * joint->bFromJoint.rotation;
  return normalizeOrIdentity(glm::conjugate(qa) * qb);
}

double BulletWorld::jointAnchorSeparation(JointId id) const {
  HANDOFF_JOINT_OR_RETURN(joint, id, 0.0);
  const Transform wa = fromBt(bodies_[joint->bodyA].body->getWorldTransform());
  const Transform wb = fromBt(bodies_[joint->bodyB].body->getWorldTransform());
  return glm::length(wa.transformPoint(joint->aFromJoint.translation) -
                     wb.transformPoint(joint->bFromJoint.translation));
}

JointBreakState BulletWorld::jointBreakState(JointId id) const {
  HANDOFF_JOINT_OR_RETURN(joint, id, JointBreakState{});
  return joint->breakState;
}

}  // namespace handoff::bullet_detail
