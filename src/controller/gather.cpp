// The pre-get-up gather (GatherSettings): the joint servos pull the settled limbs toward the
// chosen clip's first frame before the display transition starts.
//
// A body lies as it fell: often twisted (chest face down, pelvis on its side, a leg swung far
// out). Servos that stepped to the clip's pose and stiffened in 0.2 s swung the limbs round at up
// to 5 m/s and levered the body over: of the DeepMimic run's falls that settled face down, 9 of
// 22 were rolled onto the side or back, 6 of them then got up with the face-up clip (ProneGetUp,
// issue 31). Two changes keep the body lying the way its clip was chosen for:
// - the targets travel from the settled pose to the clip's first frame at jointSpeed (the
//   joint with the farthest to go; all arrive together), so the limbs move slowly;
// - a brace holds the chest-outward axis where it settled (an angular pin with the powered pins'
//   gains on the chest, no linear pull, free to spin about that axis) until the transition
//   starts: it stands for the hands and chest pressed on the floor, so the servos turn the pelvis
//   and the limbs to the chest, and the chest, which decided the facing, stays as it lay.
// A gather still moving maxDuration after its targets arrived (9 of 137 below) ends without a
// get-up: the body settles again as a ragdoll and gets up without a gather.
// Measured through the CLI on 96 falls of the DeepMimic run (4 seeds of 24, tripped or pushed;
// 80 settled face down): got up with the other clip 37 of 80 before, 23 with the slow targets
// alone, 1 with a brace on the chest's whole rotation alone (but bodies still at 2-3 m/s after
// 1.5 s: foot jumps up to 62 mm), 2 with both as here; worst get-up foot jump 16.6 mm, pelvis
// 5.8 mm (before 16.6, 5.0). Mesh2Motion's jog tripped at 0.25-0.55 s (48 falls, 45 face down):
// 34 of 45 before, 0 after.
// With the exact joint dampers (8/s, then the 7/s default; the Bullet damper fix) the brace lost the chest again in
// 4 of 29 face-down falls: tipped 35-60 degrees in 0.3 s, rolled onto the back. Two more rules:
// the servos yield while the brace loses (full strength up to 0.35 rad of tip, off at 0.7), and
// a body lying within 0.15 of its side (chest-up dot; ragdoll.cpp) gets no gather. ProneGetUp's
// DeepMimic ensemble: 25 of 29 before, 28 of 29 with the yield alone, 29 of 29 with both
// (4/s 29 of 29, 6/s 29 of 29, 7/s 29 of 29, 10/s 29 of 29).

#include "controller/character_impl.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <limits>

namespace handoff {

using controller_detail::format;
using controller_detail::horizontal;

namespace {

/// The chest brace: angular stiffness and damping of PoweredPin's default gains (critical), no
/// linear pull, no limits.
constexpr PinGains kBraceGains{0.0,    0.0,  std::numeric_limits<double>::infinity(),
                               1600.0, 80.0, std::numeric_limits<double>::infinity()};
/// The servos yield while the brace loses the chest: full strength up to kYieldFrom of tip of
/// the chest-outward axis from where it settled, off from kYieldTo. [rad]
constexpr double kYieldFrom = 0.35;
constexpr double kYieldTo = 0.7;

}  // namespace

void Character::Impl::startGather(const GetUpClip& clip) {
  // Joint targets from the clip's first frame: qTarget from the target body rotations (any common
  // frame will do, the targets are relative rotations).
  sampleGetUpInRoot(clip.clip, skeleton_, clip.info, 0.0, captured_);
  localToModel(skeleton_, captured_, scratchModels_);
  // Where the joints are now (the settled pose: bodyPoses_ of this step), then where the clip
  // starts.
  for (size_t b = 0; b < asset_->bodies.size(); ++b) bodyTargets_[b] = bodyPoses_[b].rotation;
  if (!JointTargetsJob{driveJoints_, bodyTargets_, gatherFrom_}.run()) return;
  for (size_t b = 0; b < asset_->bodies.size(); ++b) {
    const BodyDef& def = asset_->bodies[b];
    bodyTargets_[b] = scratchModels_[static_cast<size_t>(def.joint)].rotation * def.boneFromBody.rotation;
  }
  if (!JointTargetsJob{driveJoints_, bodyTargets_, gatherTo_}.run()) return;
  double farthest = 0.0;
  for (size_t j = 0; j < gatherTo_.size(); ++j)
    farthest = std::max(farthest, angleBetween(gatherFrom_[j], gatherTo_[j]));
  gatherPath_ = farthest / settings_.gather.jointSpeed;
  std::copy(gatherFrom_.begin(), gatherFrom_.end(), jointTargets_.begin());
  gathering_ = true;
  gatherTime_ = 0.0;
  gatherFacing_ = facing_.candidate();
  ragdoll_->wakeBodies();
  std::fill(driveWeights_.begin(), driveWeights_.end(), 0.0);
  // The servos take the joints' motors from the passive dampers for the gather.
  setRagdollDampers(false);
  if (!ragdoll_->acquireMotors(MotorOwner::Gather)) {
    gathering_ = false;
    event(CharacterEventKind::Gather, "refused: the joint motors are held by %s",
          motorOwnerName(ragdoll_->motorOwner(0)));
    return;
  }
  driveMotors(MotorOwner::Gather, jointTargets_, {}, driveWeights_);
  // The brace on the chest: this character's own substep listener (empty outside powered mode).
  const int chest = asset_->bodyForJoint(asset_->map[Slot::Chest]);
  if (chest >= 0 && settings_.gather.braceChest) {
    pinBodies_.clear();
    pinGains_.clear();
    pinBodies_.push_back(ragdoll_->body(chest));
    pinGains_.push_back(kBraceGains);
    pinStore_->reset(pinBodies_, pinGains_);  // its target: the chest where it lies
    listeners_.clear();
    listeners_.add(pinStore_.get());
    world_->addSubstepListener(&listeners_);
    braceOutward_ =
        chestOutwardInWorld(bodyPoses_[static_cast<size_t>(chest)].rotation, asset_->chestForwardInBody);
    gatherBrace_ = glm::length(braceOutward_) > 0.5;
    if (gatherBrace_) {
      updateBrace();
    } else {
      world_->removeSubstepListener(&listeners_);
      listeners_.clear();
    }
  }
  event(CharacterEventKind::Gather, "%s clip: servos pull the limbs toward its first frame over %.2f s%s",
        facingName(gatherFacing_), gatherPath_, gatherBrace_ ? ", chest braced" : "");
}

void Character::Impl::gatherPostStep(double dt) {
  gatherTime_ += dt;
  if (externalForce_ || !getUpAllowed_ || facing_.candidate() != gatherFacing_ || facing_.inHoldBand()) {
    stopGather();
    gatherRolledOver_ = !externalForce_ && getUpAllowed_;
    event(CharacterEventKind::Gather, "%s",
          externalForce_   ? "stopped: external force"
          : !getUpAllowed_ ? "stopped: get-up not allowed"
                           : "stopped: the body rolled over");
    return;
  }
  bool atRest = true;
  for (int b = 0; b < ragdoll_->bodyCount() && atRest; ++b) {
    atRest = glm::length(world_->linearVelocity(ragdoll_->body(b))) < settings_.gather.restSpeed;
  }
  if (gatherTime_ >= std::max(settings_.gather.duration, gatherPath_) && atRest) {
    stopGather();
    tryStartRecovery(dt);
    return;
  }
  if (gatherTime_ >= gatherPath_ + settings_.gather.maxDuration) {
    // Still moving long after its targets arrived (the servos and the brace working against the
    // floor): a transition from here would start from moving limbs (foot jumps of 20-35 mm per
    // frame measured). It lies down as a ragdoll, settles again and gets up without a gather.
    stopGather();
    gatherUnrested_ = true;
    settle_.reset();
    event(CharacterEventKind::Gather, "stopped: still moving %.2f s after its targets arrived",
          settings_.gather.maxDuration);
    return;
  }
  const double tipped = updateBrace();
  const double travelled = gatherPath_ > 0.0 ? std::clamp(gatherTime_ / gatherPath_, 0.0, 1.0) : 1.0;
  for (size_t j = 0; j < jointTargets_.size(); ++j) {
    jointTargets_[j] = glm::slerp(gatherFrom_[j], gatherTo_[j], travelled);
  }
  const double ramp = settings_.gather.rampTime > 0.0 ? settings_.gather.rampTime : settings_.gather.duration;
  // The servos yield while the brace is losing: past kYieldFrom of tip they weaken, at kYieldTo
  // they are off and the body, no longer levered, falls back the way it lay.
  const double yield = 1.0 - std::clamp((tipped - kYieldFrom) / (kYieldTo - kYieldFrom), 0.0, 1.0);
  std::fill(driveWeights_.begin(), driveWeights_.end(), yield * std::clamp(gatherTime_ / ramp, 0.0, 1.0));
  driveMotors(MotorOwner::Gather, jointTargets_, {}, driveWeights_);
}

Status validateGatherSettings(const GatherSettings& s) {
  const auto bad = [](const char* field, double value, const char* range) {
    return Error{std::string("gather.") + field + " = " + format("%g", value) + ": must be " + range};
  };
  if (!std::isfinite(s.duration) || s.duration < 0.0) return bad("duration", s.duration, "finite and >= 0 s");
  if (!std::isfinite(s.rampTime) || s.rampTime < 0.0) return bad("rampTime", s.rampTime, "finite and >= 0 s");
  if (!std::isfinite(s.restSpeed) || s.restSpeed <= 0.0)
    return bad("restSpeed", s.restSpeed, "finite and > 0 m/s");
  if (!std::isfinite(s.maxDuration) || s.maxDuration < 0.0)
    return bad("maxDuration", s.maxDuration, "finite and >= 0 s");
  if (!std::isfinite(s.jointSpeed) || s.jointSpeed <= 0.0)
    return bad("jointSpeed", s.jointSpeed, "finite and > 0 rad/s");
  return {};
}

double Character::Impl::updateBrace() {
  if (!gatherBrace_) return 0.0;
  // Only the chest-outward axis is held: the pin's target is the chest turned by the shortest
  // arc that puts that axis back where it settled, spinning about it as the chest does.
  const int chest = asset_->bodyForJoint(asset_->map[Slot::Chest]);
  const BodyId id = ragdoll_->body(chest);
  const Transform pose = world_->transform(id);
  const Vec3 outward = chestOutwardInWorld(pose.rotation, asset_->chestForwardInBody);
  if (glm::length(outward) < 0.5) return 0.0;
  const Quat target = rotationBetween(outward, braceOutward_) * pose.rotation;
  const Vec3 spin = glm::dot(world_->angularVelocity(id), outward) * outward;
  (void)pinStore_->setTarget(0, Transform{target, pose.translation}, Vec3{0.0}, spin);
  return std::acos(std::clamp(glm::dot(glm::normalize(outward), braceOutward_), -1.0, 1.0));
}

void Character::Impl::stopGather() {
  if (!gathering_) return;
  ragdoll_->releaseMotors(MotorOwner::Gather);
  gathering_ = false;
  if (gatherBrace_) {
    world_->removeSubstepListener(&listeners_);
    listeners_.clear();
    pinStore_->setEnabled(false);
    gatherBrace_ = false;
  }
  if (state_ == CharacterState::Ragdoll) setRagdollDampers(true);  // back to the passive ragdoll
}

}  // namespace handoff
