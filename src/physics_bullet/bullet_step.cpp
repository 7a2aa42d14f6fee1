// BulletWorld: stepping (the internal tick callbacks, kinematic moves, joint breaks, sleeping,
// statistics). The decisions are at the top of bullet_world.cpp.
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

// --- Stepping -------------------------------------------------------------------------------------

// The substep length handed on is step()'s dt / substeps in double: Bullet's timeStep is that
// value rounded to btScalar (float in a single-precision build, 6e-8 relative), which the drives'
// and pins' impulses (impulse = force * h) and the sleep timers would otherwise inherit.
void BulletWorld::preTickCallback(btDynamicsWorld* world, btScalar timeStep) {
  auto* self = static_cast<BulletWorld*>(world->getWorldUserInfo());
  // The substep as the world computed it in double (Bullet's own may be a float).
  self->preTick(self->stepping_ ? self->substepLength_ : timeStep);
}

void BulletWorld::postTickCallback(btDynamicsWorld* world, btScalar timeStep) {
  auto* self = static_cast<BulletWorld*>(world->getWorldUserInfo());
  self->postTick(self->stepping_ ? self->substepLength_ : timeStep);
}

void BulletWorld::preTick(double h) {
  if (ownedDispatcher_ != nullptr) {
    ownedDispatcher_->refresh(h);
  } else {
    SpeculativeDispatcher::refreshSpeculative(*dispatcher_, h, this);
  }
  // Kinematic moves: Bullet's saveKinematicState() (at the start of every stepSimulation call)
  // zeroed the velocity of kinematic bodies (our interpolation transform equals the world
  // transform); give moving ones their move's velocity again so contacts and joints see it. Their
  // pose advances in postTick().
  for (const std::uint32_t index : moving_) {
    BodySlot& slot = bodies_[index];
    if (!slot.movePending || !slot.body) continue;
    btRigidBody& body = *slot.body;
    body.setLinearVelocity(toBt(slot.moveLinearVelocity));
    body.setAngularVelocity(toBt(slot.moveAngularVelocity));
    body.setInterpolationLinearVelocity(toBt(slot.moveLinearVelocity));
    body.setInterpolationAngularVelocity(toBt(slot.moveAngularVelocity));
  }
  runSubstepListeners(h);
  for (JointSlot& joint : joints_) {
    if (joint.constraint && joint.inWorld && joint.motor.enabled && !joint.breakState.broken)
      updateMotor(joint, h);
  }
}

void BulletWorld::advanceKinematicMoves() {
  // At the end of substep k a moving kinematic body is at the fraction (k + 1 - k0) / (n - k0) of
  // its move (k0: the substep the move was requested in), where the bodies integrated with its
  // velocity expect it.
  const int k = substepIndex_;
  for (const std::uint32_t index : moving_) {
    BodySlot& slot = bodies_[index];
    if (!slot.movePending || !slot.body) continue;
    const int k0 = slot.moveFirstSubstep;
    const int remaining = substepCount_ - k0;
    if (k + 1 < substepCount_ && !slot.moveRotationKnown) {
      slot.moveRotation =
          toRotationVector(slot.moveTarget.rotation * glm::conjugate(slot.moveStart.rotation));
      slot.moveRotationKnown = true;
    }
    const btTransform xf =
        k + 1 >= substepCount_
            ? toBt(slot.moveTarget)
            : toBt(Transform{
                  fromRotationVector(slot.moveRotation * (static_cast<double>(k + 1 - k0) / remaining)) *
                      slot.moveStart.rotation,
                  slot.moveStart.translation + (slot.moveTarget.translation - slot.moveStart.translation) *
                                                   (static_cast<double>(k + 1 - k0) / remaining)});
    slot.body->setWorldTransform(xf);
    slot.body->setInterpolationWorldTransform(xf);
  }
}

void BulletWorld::checkJointBreaks() {
  // Bullet's feedback (zeroed when the joint's rows are built, summed over its rows when the solve
  // finishes): the force and the torque about the centre of mass of Bullet's body A (our B) of
  // every row, impulse / substep. The anchor rows act at the anchors' midpoint
  // (CentredAnchorConstraint), so the torque about the anchor is the total minus that force's
  // moment. The constraint's calculated transforms are still those of the solve (the bodies have
  // integrated since).
  for (const std::uint32_t index : breakableJoints_) {
    JointSlot& joint = joints_[index];
    if (!joint.inWorld || joint.breakState.broken) continue;
    const btRigidBody& a = *bodies_[joint.bodyA].body;
    const btRigidBody& b = *bodies_[joint.bodyB].body;
    if (!a.isActive() && !b.isActive()) continue;  // not solved this substep: nothing new measured
    btGeneric6DofSpring2Constraint& c = *joint.constraint;
    const btTransform& anchorA = c.getCalculatedTransformA();  // Bullet's A: our body B
    const btTransform& anchorB = c.getCalculatedTransformB();
    const btVector3 centre = (anchorA * c.getFrameOffsetA().inverse()).getOrigin();
    const btVector3 mid = 0.5 * (anchorA.getOrigin() + anchorB.getOrigin());
    const btVector3 force = joint.feedback->m_appliedForceBodyA;
    const btVector3 torque = joint.feedback->m_appliedTorqueBodyA - (mid - centre).cross(force);
    joint.breakState.force = force.length();
    joint.breakState.torque = torque.length();
    if (!(joint.breakState.force > joint.breakForce) && !(joint.breakState.torque > joint.breakTorque))
      continue;
    joint.breakState.broken = true;
    joint.breakState.substep = substepIndex_;
    c.setEnabled(false);
    if (solver_ != nullptr) solver_->forget(index);
    bodies_[joint.bodyA].body->activate();
    bodies_[joint.bodyB].body->activate();
  }
}

void BulletWorld::releaseDepenetrationLimits(double h) {
  if (solver_ == nullptr || solver_->limitedBodies == 0) return;
  // A limit lifts once every contact of the body is shallower than what Bullet's own push clears
  // at the limit's speed in a substep (erp2 |depth| / h <= maxSpeed): from there on the engine's
  // push gives it no more velocity than the limit allowed. Or when its time is up.
  const double erp = world_->getSolverInfo().m_erp2;
  for (std::uint32_t i = 0; i < solver_->depenetration.size(); ++i) {
    JointWarmStartSolver::Depenetration& d = solver_->depenetration[i];
    if (d.maxSpeed <= 0.0) continue;
    d.timeLeft -= h;
    if (!(erp > 0.0) || -d.deepest * erp <= d.maxSpeed * h || d.timeLeft <= 0.0) {
      solver_->setDepenetration(i, 0.0, 0.0);
    } else {
      d.deepest = 0.0;
    }
  }
}

void BulletWorld::postTick(double h) {
  advanceKinematicMoves();
  releaseDepenetrationLimits(h);
  checkJointBreaks();
  projectJointAnchors();
  collectContactEvents();
  // Per-world sleep time (see the top of this file): while a body stays under the sleep speeds,
  // Bullet adds h to its timer and puts it to sleep once the timer exceeds gDeactivationTime.
  // Rescale the increment so that happens after settings_.sleepTime.
  const double global = gDeactivationTime;
  if (global > 0.0) {
    const double extra = h * (global / settings_.sleepTime - 1.0);
    for (BodySlot& slot : bodies_) {
      if (!slot.body || !slot.enabled || slot.motion != MotionType::Dynamic) continue;
      btRigidBody& body = *slot.body;
      const int state = body.getActivationState();
      if ((state == ACTIVE_TAG || state == WANTS_DEACTIVATION) && body.getDeactivationTime() > 0.0) {
        body.setDeactivationTime(std::max(0.0, body.getDeactivationTime() + extra));
      }
    }
  }
  ++substepIndex_;
}

void BulletWorld::finishKinematicMoves() {
  // In slot order, as a pass over every slot: the broadphase updates (and the pairs they find)
  // come in the same order whatever order the moves were requested in.
  std::sort(moving_.begin(), moving_.end());
  for (const std::uint32_t index : moving_) {
    BodySlot& slot = bodies_[index];
    slot.listedMoving = false;
    if (!slot.movePending || !slot.body) continue;
    btRigidBody& body = *slot.body;
    const btTransform xf = toBt(slot.moveTarget);
    body.setWorldTransform(xf);
    body.setInterpolationWorldTransform(xf);
    body.setLinearVelocity(toBt(slot.moveLinearVelocity));
    body.setAngularVelocity(toBt(slot.moveAngularVelocity));
    if (slot.enabled) {
      world_->updateSingleAabb(&body);
      slot.aabbStep = steps_;
    }
    slot.movePending = false;
  }
  moving_.clear();
}

void BulletWorld::updateAabbsAfterStep() {
  // btCollisionWorld::updateAabbs() (every active object, or every object when the world forces
  // it) without the kinematic bodies finishKinematicMoves() has just updated: their bounds are
  // the same, and Bullet's setAabb would only re-link the proxy in its broadphase stage list,
  // which the next step's own updateAabbs() re-links, in the world's order, before the broadphase
  // reads the list. The broadphase state the next step sees is the same; one AABB pass fewer per
  // animated body.
  btCollisionObjectArray& objects = world_->getCollisionObjectArray();
  const bool all = world_->getForceUpdateAllAabbs();
  for (int i = 0; i < objects.size(); ++i) {
    btCollisionObject* object = objects[i];
    if (!all && !object->isActive()) continue;
    if (object->getUserPointer() == this && object->isKinematicObject() &&
        bodies_[static_cast<std::uint32_t>(object->getUserIndex())].aabbStep == steps_) {
      continue;
    }
    world_->updateSingleAabb(object);
  }
}

void BulletWorld::startStep(int substeps) {
  ++steps_;
  substepIndex_ = 0;
  substepCount_ = substeps;
  for (const std::uint32_t index : breakableJoints_) joints_[index].breakState.substep = -1;
  events_.clear();
  droppedEvents_ = 0;
}

void BulletWorld::finishStep(int substeps) {
  finishKinematicMoves();
  finishContactEvents();
  collectStats(substeps);
}

void BulletWorld::step(double dt, int substeps) {
  assert(dt > 0.0 && finite(dt) && substeps >= 1 && "step: dt must be > 0 and substeps >= 1");
  if (!(dt > 0.0) || !finite(dt) || substeps < 1) return;
  const double h = dt / substeps;
  startStep(substeps);
  stepping_ = true;
  substepLength_ = h;
  for (int i = 0; i < substeps; ++i) {
    // maxSubSteps = 0: Bullet's variable-step mode, exactly one internal step of h.
    world_->stepSimulation(h, 0, h);
  }
  stepping_ = false;
  finishStep(substeps);
  // Bullet refreshes AABBs at the start of the next step's collision detection; queries between
  // steps must see where this step left the bodies.
  updateAabbsAfterStep();
}

void BulletWorld::collectStats(int substeps) {
  StepStats s;
  const double extent = settings_.worldHalfExtent;
  for (std::uint32_t i = 0; i < bodies_.size(); ++i) {
    BodySlot& slot = bodies_[i];
    if (!slot.body || !slot.enabled) continue;
    if (slot.motion == MotionType::Dynamic) {
      const btRigidBody& body = *slot.body;
      const Vec3 p = fromBt(body.getCenterOfMassPosition());
      const bool inside = isFinite(p) && std::abs(p.x) <= extent && std::abs(p.y) <= extent &&
                          std::abs(p.z) <= extent && isFinite(fromBt(body.getLinearVelocity())) &&
                          isFinite(fromBt(body.getAngularVelocity()));
      if (!inside) {
        setEnabled(handleOf(i), false);
        ++s.bodiesLeftWorld;
        continue;
      }
      ++s.dynamicBodies;
      if (body.getActivationState() == ISLAND_SLEEPING) {
        ++s.sleepingBodies;
      } else {
        ++s.activeBodies;
      }
    } else if (slot.motion == MotionType::Kinematic) {
      ++s.kinematicBodies;
    }
  }
  const int numManifolds = dispatcher_->getNumManifolds();
  for (int m = 0; m < numManifolds; ++m)
    s.contactPoints += dispatcher_->getManifoldByIndexInternal(m)->getNumContacts();
  s.droppedContactEvents = droppedEvents_;
  s.solverIterations = settings_.solverIterations;
  s.substeps = substeps;
  stats_ = s;
}

}  // namespace handoff::bullet_detail
