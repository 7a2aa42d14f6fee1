// The Recovering mode (SPEC.md section 4): start (clip, root placement, transition plan), the
// display transition's steps, cancel back to ragdoll.
#include "controller/character_impl.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <limits>

namespace handoff {

using controller_detail::format;
using controller_detail::horizontal;

bool Character::Impl::tryStartRecovery(double dt) {
  const GetUpClip* clip = clipForFacing(sideWait_ >= settings_.sideWaitLimit);
  if (!clip) return false;
  const Facing facing = facing_.candidate();
  RecoveryRecord record;
  record.settleTime = time_ - gatherTime_;
  record.gatherTime = gatherTime_;
  gatherTime_ = 0.0;
  record.facing = facing;
  // Fallen pelvis bone in world: T_WB = T_WC * inverse(T_BC).
  const Transform worldFromPelvis = bodyPoses_[0] * asset_->bodies[0].boneFromBody.inverse();
  const RootPlacement placement =
      placeRoot(worldFromPelvis, clip->info, preFallForward_, settings_.levelDefaultForward);
  if (!placement.valid) return false;
  record.facingSource = placement.source;
  const StandPlan plan = planStand(*world_, placement.worldFromRoot, worldFromPelvis.translation,
                                   asset_->capsule, settings_.stand);
  record.standDecision = plan.decision;
  record.standReason = plan.proposedSpotReason;
  if (!plan.ok()) {
    ++pendingDelays_;
    retryAt_ = time_ + settings_.recoveryRetryDelay;
    event(CharacterEventKind::Delay, "no standable spot (%s), retry in %.2f s", standReasonName(plan.reason),
          settings_.recoveryRetryDelay);
    return false;
  }
  // Capture: every bone's fallen world transform, local to its parent, the root against the
  // NEW root, so weight 0 reproduces the fallen pose exactly wherever the root moved.
  worldBonesFromDisplay(ragdollRoot_, display_, worldBones_);
  if (!capturePose(skeleton_, worldBones_, plan.worldFromRoot, captured_)) return false;
  // A top-level joint without a body (Mesh2Motion's `root` above `DEF-hips`) keeps the fallen
  // display's root, which the fall turned by any yaw against the new root; the clip has its own.
  // Blended apart, the root and the hips below it turn in opposite directions and the whole body
  // swings through the transition (Mesh2Motion's face-down get-ups planned 3 s with the pelvis
  // and feet within 4 cm of the clip's first frame). Take the clip's first frame for such a joint
  // and fold the difference into its children: every bone with a body is where it was.
  sampleGetUpInRoot(clip->clip, skeleton_, clip->info, 0.0, worldBones_);
  for (int j = 0; j < skeleton_.jointCount(); ++j) {
    if (skeleton_.parents[static_cast<size_t>(j)] != kNoParent || asset_->bodyForJoint(j) >= 0) continue;
    const Transform fold = worldBones_[static_cast<size_t>(j)].inverse() * captured_[static_cast<size_t>(j)];
    for (int k = 0; k < skeleton_.jointCount(); ++k) {
      if (skeleton_.parents[static_cast<size_t>(k)] == j)
        captured_[static_cast<size_t>(k)] = fold * captured_[static_cast<size_t>(k)];
    }
    captured_[static_cast<size_t>(j)] = worldBones_[static_cast<size_t>(j)];
  }
  recoveryRoot_ = plan.worldFromRoot;
  getUp_ = clip;
  recoveryTime_ = 0.0;
  // The transition's length: long enough that the pelvis and feet travel from the fallen pose
  // into the clip at a bounded speed (frames of this step's dt).
  transitionPlan_ = planTransition(captured_, clip->clip, skeleton_, clip->info, trackedJoints_, dt,
                                   settings_.transition, transitionScratch_);
  record.transition = transitionPlan_;
  // Authority switch in one write phase: limbs kinematic and non-blocking, capsule on.
  setRagdollDampers(false);
  ragdoll_->makeAnimated(/*blocking=*/false);
  // The first kinematic sample is the captured (fallen) pose on the new root: the bodies stay
  // where they lie, the capsule goes onto the planned root at once, and a cancel from the next
  // step on has a finite-difference velocity continuous with the displayed motion.
  localToModel(skeleton_, captured_, scratchModels_);
  (void)ragdoll_->setAnimatedPose(time_, recoveryRoot_, scratchModels_, false, dt);
  // The capsule stands on the planned root, the spot the planner found free, for the whole
  // recovery (not over the fallen pelvis, which may lie against a wall).
  ragdoll_->placeCapsule(capsuleOnRoot(recoveryRoot_, asset_->capsule, settings_.stand.skin));
  state_ = CharacterState::Recovering;
  record.startTime = time_;
  record.worldFromRoot = recoveryRoot_;
  record.delays = pendingDelays_;
  pendingDelays_ = 0;
  recoveries_.push(record);
  char relocated[96] = "";
  if (plan.decision == StandDecision::Relocate) {
    std::snprintf(relocated, sizeof relocated, " (%s, moved %.2f m)",
                  standReasonName(plan.proposedSpotReason), plan.relocationDistance);
  }
  event(CharacterEventKind::GetUp,
        "%s get-up, yaw from %s, %s%s, transition %.2f s (hold %.2f s, worst point %.2f m/s)",
        facingName(facing), facingSourceName(placement.source), standDecisionName(plan.decision), relocated,
        transitionPlan_.duration, transitionPlan_.hold, transitionPlan_.worstPointSpeed);
  // Display at weight 0: the captured pose on the new root.
  std::copy(captured_.begin(), captured_.end(), display_.begin());
  displayRoot_ = recoveryRoot_;
  blendWeight_ = 0.0;
  return true;
}

void Character::Impl::recoveringPreStep(double dt) {
  // The display pose at the end of this step, followed by the kinematic, non-blocking limbs so
  // that a cancel has continuous velocity samples.
  transitionPose(captured_, getUp_->clip, skeleton_, getUp_->info, recoveryTime_ + dt, transitionPlan_,
                 physicsLocals_);
  keepAnimationOwned(physicsLocals_);
  localToModel(skeleton_, physicsLocals_, scratchModels_);
  (void)ragdoll_->setAnimatedPose(time_ + dt, recoveryRoot_, scratchModels_, false, dt);
  ragdoll_->moveCapsule(capsuleOnRoot(recoveryRoot_, asset_->capsule, settings_.stand.skin), dt);
}

void Character::Impl::recoveringPostStep(double dt) {
  recoveryTime_ += dt;
  transitionPose(captured_, getUp_->clip, skeleton_, getUp_->info, recoveryTime_, transitionPlan_, display_);
  keepAnimationOwned(display_);
  displayRoot_ = recoveryRoot_;
  blendWeight_ = transitionWeight(recoveryTime_, transitionPlan_);
  if (recoveryClipTime() >= getUp_->clip.duration()) {
    // Standing: animation owns every body again, blocking restored, capsule stays on.
    ragdoll_->setBlocking(true);
    state_ = CharacterState::Animated;
    // The display leaves the clip's last frame through an offset blend from the next step on.
    std::copy(display_.begin(), display_.end(), returnFrom_.begin());
    exitRoot_ = recoveryRoot_;
    exitPending_ = std::isfinite(settings_.recoveryExitBlend) && settings_.recoveryExitBlend > 0.0;
    exitFromLanding_ = false;
    exitOffsets_ = false;
    returnBlend_ = returnBlendTotal_ = 0.0;
    approachStart_ = true;  // the bodies ease from the clip's last frame onto the animation
    recoveries_.back().finished = true;
    recoveryFinished_ = true;
    event(CharacterEventKind::Recovered, "stood up after %.2f s", recoveryTime_);
  }
}

double Character::Impl::recoveryClipTime() const {
  return transitionClipTime(recoveryTime_, transitionPlan_);
}

void Character::Impl::cancelRecovery(const char* why) {
  if (state_ != CharacterState::Recovering) return;
  // The limbs have followed the displayed skeleton every step: commit from it.
  HandoffSettings settings = settings_.handoff;
  settings.mode = HandoffMode::Inherit;
  HandoffRecord& record = newRecord();
  ragdoll_->commit(settings, record);
  if (record.committed) {
    setRagdollDampers(false);  // the first step carries the displayed motion untouched
    state_ = CharacterState::Ragdoll;
    ragdollRoot_ = recoveryRoot_;
    // The animation the ragdoll display blends from is the displayed get-up pose.
    std::copy(display_.begin(), display_.end(), animLocals_.begin());
    animRoot_ = recoveryRoot_;
    timeSinceCommit_ = 0.0;
    blendTime_ = 0.0;  // the bodies start from the displayed pose: nothing to blend
    settle_.reset();
    facing_.reset();
    recoveries_.back().cancelled = true;
    event(CharacterEventKind::Cancel, "%s", why);
  } else {
    event(CharacterEventKind::Refused, "cancel failed: %s", record.failure.c_str());
  }
  recordCommit(record);
}

}  // namespace handoff
