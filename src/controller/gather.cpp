// The pre-get-up gather (GatherSettings): the joint servos pull the settled limbs toward the
// chosen clip's first frame before the display transition starts.
#include "controller/character_impl.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <limits>

namespace handoff {

using controller_detail::format;
using controller_detail::horizontal;

void Character::Impl::startGather(const GetUpClip& clip) {
  // Joint targets from the clip's first frame: qTarget from the target body rotations (any common
  // frame will do, the targets are relative rotations).
  sampleGetUpInRoot(clip.clip, skeleton_, clip.info, 0.0, captured_);
  localToModel(skeleton_, captured_, scratchModels_);
  for (size_t b = 0; b < asset_->bodies.size(); ++b) {
    const BodyDef& def = asset_->bodies[b];
    bodyTargets_[b] = scratchModels_[static_cast<size_t>(def.joint)].rotation * def.boneFromBody.rotation;
  }
  const JointTargetsJob job{driveJoints_, bodyTargets_, jointTargets_};
  if (!job.run()) return;
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
  event(CharacterEventKind::Gather, "%s clip: servos pull the limbs toward its first frame",
        facingName(gatherFacing_));
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
  if ((gatherTime_ >= settings_.gather.duration && atRest) || gatherTime_ >= settings_.gather.maxDuration) {
    stopGather();
    tryStartRecovery(dt);
    return;
  }
  const double ramp = settings_.gather.rampTime > 0.0 ? settings_.gather.rampTime : settings_.gather.duration;
  std::fill(driveWeights_.begin(), driveWeights_.end(), std::clamp(gatherTime_ / ramp, 0.0, 1.0));
  driveMotors(MotorOwner::Gather, jointTargets_, {}, driveWeights_);
}

void Character::Impl::stopGather() {
  if (!gathering_) return;
  ragdoll_->releaseMotors(MotorOwner::Gather);
  gathering_ = false;
  if (state_ == CharacterState::Ragdoll) setRagdollDampers(true);  // back to the passive ragdoll
}

}  // namespace handoff
