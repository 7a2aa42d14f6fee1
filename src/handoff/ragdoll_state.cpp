// Ragdoll: the first step's record and probe, reading bodies, joint breaks, motor ownership and
// the per-body state the controller switches.
#include "handoff/handoff.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace handoff {

void Ragdoll::recordFirstStep(HandoffRecord& record) const {
  if (!record.committed) return;
  for (int b = 0; b < bodyCount() && b < static_cast<int>(record.bodies.size()); ++b) {
    BodyHandoff& out = record.bodies[static_cast<size_t>(b)];
    const BodyId id = bodies_[static_cast<size_t>(b)];
    out.poseAfterFirstStep = world_->transform(id);
    out.linearVelocityAfterFirstStep = world_->linearVelocity(id);
    out.angularVelocityAfterFirstStep = world_->angularVelocity(id);
    out.firstStepRecorded = true;
  }
}

void FirstSubstepProbe::record(double substepDt) {
  if (!record_->committed || record_->firstSubstepTime > 0.0) return;
  const PhysicsWorld& world = ragdoll_->world();
  for (int b = 0; b < ragdoll_->bodyCount() && b < static_cast<int>(record_->bodies.size()); ++b) {
    BodyHandoff& out = record_->bodies[static_cast<size_t>(b)];
    const BodyId id = ragdoll_->body(b);
    out.poseAfterFirstSubstep = world.transform(id);
    out.linearVelocityAfterFirstSubstep = world.linearVelocity(id);
    out.angularVelocityAfterFirstSubstep = world.angularVelocity(id);
    out.firstSubstepRecorded = true;
  }
  record_->firstSubstepTime = substepDt;
}

void FirstSubstepProbe::onSubstep(double substepDt) {
  // Called before each substep's solve: the second call sees the state the first one left.
  if (calls_ == 0) firstSubstep_ = substepDt;
  if (calls_ == 1) record(firstSubstep_);
  ++calls_;
}

void FirstSubstepProbe::finish() {
  if (calls_ == 1) record(firstSubstep_);
}

void Ragdoll::readBodyPoses(std::span<Transform> worldFromBodies) const {
  assert(static_cast<int>(worldFromBodies.size()) >= bodyCount() && "output span too short");
  for (int b = 0; b < bodyCount(); ++b) worldFromBodies[static_cast<size_t>(b)] = bodyPose(b);
}

Transform Ragdoll::bodyPose(int index) const {
  return capsuleOnly_ && history_.size() > 0 ? history_.body(0, index)
                                             : world_->transform(bodies_[static_cast<size_t>(index)]);
}

bool Ragdoll::setCapsuleOnly(bool on) {
  if (on == capsuleOnly_) return true;
  if (!on) {
    leaveCapsuleOnly();
    return true;
  }
  for (int b = 0; b < bodyCount(); ++b) {
    if (authority_[static_cast<size_t>(b)] != Authority::Animation) return false;
  }
  if (broken()) return false;
  for (const BodyId body : bodies_) world_->setEnabled(body, false);
  capsuleOnly_ = true;
  return true;
}

void Ragdoll::leaveCapsuleOnly() {
  if (!capsuleOnly_) return;
  capsuleOnly_ = false;
  for (int b = 0; b < bodyCount(); ++b) {
    const BodyId body = bodies_[static_cast<size_t>(b)];
    // Placed before it enters: the broadphase takes it in at the pose it will be seen at.
    if (history_.size() > 0) world_->setTransform(body, history_.body(0, b));
    world_->setLinearVelocity(body, Vec3{0.0});
    world_->setAngularVelocity(body, Vec3{0.0});
    world_->setEnabled(body, true);
  }
}

double Ragdoll::maxJointSeparation() const {
  double worst = 0.0;
  for (size_t j = 0; j < joints_.size(); ++j) {
    if (broken_[j]) continue;
    const JointDef& def = asset_->joints[j];
    if (authority(def.parentBody) == Authority::Animation && authority(def.childBody) == Authority::Animation)
      continue;
    worst = std::max(worst, world_->jointAnchorSeparation(joints_[j]));
  }
  return worst;
}

int Ragdoll::updateBreaks(double stepEndTime, double dt) {
  int count = 0;
  const int substeps = std::max(1, world_->lastStepStats().substeps);
  for (const int j : breakableJoints_) {
    const size_t i = static_cast<size_t>(j);
    if (broken_[i]) continue;
    const JointBreakState state = world_->jointBreakState(joints_[i]);
    if (!state.broken) continue;
    broken_[i] = 1;
    JointBreak b;
    b.joint = j;
    // Broken in an earlier step (not seen then): counted at the end of this one.
    const int substep = state.substep >= 0 ? std::min(state.substep, substeps - 1) : substeps - 1;
    b.time = stepEndTime - dt + dt * (substep + 1) / substeps;
    b.force = state.force;
    b.torque = state.torque;
    breaks_.push_back(b);  // within the reserved room
    ++count;
  }
  return count;
}

const char* motorOwnerName(MotorOwner owner) {
  switch (owner) {
    case MotorOwner::None:
      return "none";
    case MotorOwner::Damper:
      return "damper";
    case MotorOwner::Gather:
      return "gather";
    case MotorOwner::Drive:
      return "drive";
  }
  return "?";
}

bool Ragdoll::acquireMotors(MotorOwner owner) {
  assert(owner != MotorOwner::None && "acquireMotors: no owner");
  for (const MotorOwner held : motorOwners_) {
    if (held != MotorOwner::None && held != owner) {
      ++refusedMotorRequests_;
      return false;
    }
  }
  std::fill(motorOwners_.begin(), motorOwners_.end(), owner);
  return true;
}

void Ragdoll::releaseMotors(MotorOwner owner) {
  for (size_t j = 0; j < motorOwners_.size(); ++j) {
    if (motorOwners_[j] != owner || owner == MotorOwner::None) continue;
    world_->setJointMotor(joints_[j], JointMotorSettings{});
    motorOn_[j] = 0;
    motorOwners_[j] = MotorOwner::None;
  }
}

bool Ragdoll::setJointMotor(int index, MotorOwner owner, const JointMotorSettings& motor) {
  const size_t j = static_cast<size_t>(index);
  if (owner == MotorOwner::None || motorOwners_[j] != owner) {
    ++refusedMotorRequests_;
    return false;
  }
  world_->setJointMotor(joints_[j], motor);
  motorOn_[j] = motor.enabled ? 1 : 0;
  return true;
}

void Ragdoll::resetBodies(std::span<const Transform> worldFromBodies) {
  assert(static_cast<int>(worldFromBodies.size()) == bodyCount() && "resetBodies: one pose per body");
  capsuleOnly_ = false;  // every body is enabled below
  for (size_t b = 0; b < bodies_.size(); ++b) {
    world_->setTransform(bodies_[b], worldFromBodies[b]);
    world_->setLinearVelocity(bodies_[b], Vec3{0.0});
    world_->setAngularVelocity(bodies_[b], Vec3{0.0});
    if (!world_->isEnabled(bodies_[b])) world_->setEnabled(bodies_[b], true);
  }
  for (const JointId joint : joints_) world_->resetWarmStart(joint);
}

void Ragdoll::carryDynamicBodies(const Transform& jump) {
  for (size_t b = 0; b < bodies_.size(); ++b) {
    if (authority_[b] == Authority::Animation) continue;
    const BodyId body = bodies_[b];
    world_->setTransform(body, jump * world_->transform(body));
    world_->setLinearVelocity(body, jump.rotation * world_->linearVelocity(body));
    world_->setAngularVelocity(body, jump.rotation * world_->angularVelocity(body));
  }
}

void Ragdoll::applyImpulse(int index, const Vec3& impulse, const Vec3& worldPoint) {
  world_->applyLinearImpulse(bodies_[static_cast<size_t>(index)], impulse, worldPoint);
}

void Ragdoll::setCollisionWith(BodyId other, int index, bool enabled) {
  world_->setPairCollision(other, index < bodyCount() ? bodies_[static_cast<size_t>(index)] : capsule_,
                           enabled);
}

void Ragdoll::wakeBodies() {
  if (capsuleOnly_) return;  // out of the simulation: nothing to wake
  for (const BodyId body : bodies_) world_->wake(body);
}

void Ragdoll::placeCapsule(const Transform& worldFromCapsule) {
  world_->setTransform(capsule_, worldFromCapsule);
}

void Ragdoll::moveCapsule(const Transform& worldFromCapsule, double dt) {
  world_->moveKinematic(capsule_, worldFromCapsule, dt);
}

void Ragdoll::makeAnimated(bool blocking) {
  for (int b = 0; b < bodyCount(); ++b) {
    world_->setMotionType(bodies_[static_cast<size_t>(b)], MotionType::Kinematic);
    world_->setLinearVelocity(bodies_[static_cast<size_t>(b)], Vec3{0.0});
    world_->setAngularVelocity(bodies_[static_cast<size_t>(b)], Vec3{0.0});
    authority_[static_cast<size_t>(b)] = Authority::Animation;
  }
  setBlocking(blocking);
  world_->setEnabled(capsule_, true);
  history_.clear();
  teleportNext_ = true;
}

void Ragdoll::setDynamicAuthority(Authority authority) {
  for (Authority& a : authority_) {
    if (a != Authority::Animation) a = authority;
  }
}

void Ragdoll::makeBodiesAnimated(std::span<const std::uint8_t> mask) {
  assert(static_cast<int>(mask.size()) == bodyCount() && "makeBodiesAnimated: mask size");
  for (int b = 0; b < bodyCount() && b < static_cast<int>(mask.size()); ++b) {
    const size_t i = static_cast<size_t>(b);
    if (!mask[i] || authority_[i] == Authority::Animation) continue;
    world_->setMotionType(bodies_[i], MotionType::Kinematic);
    world_->setLinearVelocity(bodies_[i], Vec3{0.0});
    world_->setAngularVelocity(bodies_[i], Vec3{0.0});
    authority_[i] = Authority::Animation;
  }
}

void Ragdoll::setBlocking(bool blocking) {
  for (int b = 0; b < bodyCount(); ++b) {
    const CollisionFilter filter =
        blocking ? asset_->bodies[static_cast<size_t>(b)].filter : CollisionFilter{layers::kRagdoll, 0u};
    world_->setCollisionFilter(bodies_[static_cast<size_t>(b)], filter);
  }
}

}  // namespace handoff
