// The Ragdoll mode: the commit (goRagdoll), the passive joint dampers, settling toward the get-up.
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
/// How far inside its facing threshold (chest-up dot) a settled body must lie for a gather.
constexpr double kGatherSideMargin = 0.15;
}  // namespace

const HandoffRecord& Character::Impl::goRagdoll(const AnimationInput* denseSample) {
  if (state_ == CharacterState::Powered) {
    if (poweredToRagdoll()) event(CharacterEventKind::Ragdoll, "handoff from powered mode (drives off)");
    return lastHandoff();
  }
  HandoffRecord& record = newRecord();
  if (state_ == CharacterState::Ragdoll) {
    controller_detail::resetRecord(record);
    record.failure = "already a ragdoll";
  } else {
    if (denseSample && state_ == CharacterState::Animated && ragdoll_->history().size() > 0 &&
        denseSample->locals.size() == static_cast<size_t>(skeleton_.jointCount())) {
      // Map the animation time onto the history's simulation time.
      const double simTime = ragdoll_->history().time(0) - (animTime_ - denseSample->time);
      localToModel(skeleton_, denseSample->locals, scratchModels_);
      if (Status s = ragdoll_->addDenseSample(simTime, denseSample->worldFromRoot, scratchModels_); !s) {
        event(CharacterEventKind::Refused, "dense sample: %s", s.error().c_str());
      }
    }
    ragdoll_->commit(settings_.handoff, record);
  }
  if (record.committed) {
    enterRagdoll(ragdoll_->history().size() > 0 ? ragdoll_->history().root(0) : animRoot_,
                 settings_.handoff.displayBlendTime);
    event(CharacterEventKind::Ragdoll, "handoff (%s)", handoffModeName(record.mode));
  } else {
    event(CharacterEventKind::Refused, "handoff abandoned: %s", record.failure.c_str());
  }
  recordCommit(record);
  return record;
}

void Character::Impl::setRagdollDampers(bool on) {
  if (!on) {
    ragdoll_->releaseMotors(MotorOwner::Damper);
    return;
  }
  const double rate = settings_.ragdollJointDamping;
  if (!(rate > 0.0 && std::isfinite(rate)) || !ragdoll_->acquireMotors(MotorOwner::Damper)) return;
  for (size_t j = 0; j < asset_->joints.size(); ++j) {
    const JointDef& def = asset_->joints[j];
    const BodyDef& child = asset_->bodies[static_cast<size_t>(def.childBody)];
    const double lever = glm::length(def.bodyBFromJoint.translation);
    const double inertia =
        std::max({child.inertia.x, child.inertia.y, child.inertia.z}) + child.mass * lever * lever;
    JointMotorSettings motor;
    motor.enabled = true;
    motor.damping = Vec3{rate * inertia};  // no stiffness, no target rate: a pure damper
    (void)ragdoll_->setJointMotor(static_cast<int>(j), MotorOwner::Damper, motor);
  }
}

void Character::Impl::enterRagdoll(const Transform& root, double blendTime) {
  // Dampers (or servos) a previous ragdoll or mode left on the joints must not touch the first
  // step of this one; ragdollPostStep installs them after it.
  setRagdollDampers(false);
  state_ = CharacterState::Ragdoll;
  ragdollRoot_ = root;
  timeSinceCommit_ = 0.0;
  blendTime_ = blendTime;
  settle_.reset();
  facing_.reset();
  retryAt_ = 0.0;
  gatherRolledOver_ = false;
  gatherUnrested_ = false;
  sideWait_ = 0.0;
  resetFlight();
  // The character's horizontal forward before the fall: the fallback yaw of the get-up.
  const Vec3 forward = horizontal(ragdollRoot_.transformVector(asset_->modelForward));
  if (glm::length(forward) > 1e-6) preFallForward_ = glm::normalize(forward);
  // Death lets go of the props, with the velocities the commit just gave the hands.
  if (settings_.dropPropsAtDeath) {
    for (int i = 0; i < propCount(); ++i) {
      if (props_[static_cast<size_t>(i)].held) releaseProp(i, true);
    }
  }
}

void Character::Impl::ragdollPostStep(double dt) {
  const bool firstStep = timeSinceCommit_ == 0.0;
  timeSinceCommit_ += dt;
  // After each step (the first one keeps the commit's room): limits widened at the commit ease
  // back, suspended pairs collide again once apart.
  ragdoll_->updateLimits();
  if (firstStep && !gathering_) setRagdollDampers(true);
  ragdoll_->readBodyPoses(bodyPoses_);
  // The still-running animation, re-expressed against the frozen ragdoll root for blending.
  std::copy(animLocals_.begin(), animLocals_.end(), animRelative_.begin());
  for (int j = 0; j < skeleton_.jointCount(); ++j) {
    if (skeleton_.parents[static_cast<size_t>(j)] == kNoParent) {
      animRelative_[static_cast<size_t>(j)] =
          ragdollRoot_.inverse() * animRoot_ * animLocals_[static_cast<size_t>(j)];
    }
  }
  writeBackPose(skeleton_, *asset_, bodyPoses_, ragdollRoot_, animRelative_, writeBackMask_, scratchModels_,
                physicsLocals_);
  blendWeight_ = displayBlendWeight(timeSinceCommit_, blendTime_);
  blendPoses(animRelative_, physicsLocals_, blendWeight_, display_);
  displayRoot_ = ragdollRoot_;

  // A fall that comes down on its feet lands into animation (LandingSettings); not once the
  // get-up is under way (the gather's servos may lift the body off the ground).
  if (gathering_) {
    resetFlight();
  } else if (landingPostStep(dt) == LandingStep::Landed) {
    return;
  }

  // Settle and facing (pelvis = body 0, chest = the Chest slot's body).
  const BodyId pelvis = ragdoll_->body(0);
  const SettleUpdate settle =
      settle_.update(dt, world_->linearVelocity(pelvis), world_->angularVelocity(pelvis), externalForce_);
  const int chest = asset_->bodyForJoint(asset_->map[Slot::Chest]);
  if (chest >= 0) facing_.update(bodyPoses_[static_cast<size_t>(chest)].rotation, asset_->chestForwardInBody);
  sideWait_ = settle.settled && facing_.inHoldBand() ? sideWait_ + dt : 0.0;
  if (gathering_) {
    gatherPostStep(dt);
  } else if (settle.settled && getUpAllowed_ && !ragdoll_->broken() && time_ >= retryAt_ &&
             (supine_ || prone_)) {
    const bool wedged = sideWait_ >= settings_.sideWaitLimit;
    const GetUpClip* clip = clipForFacing(wedged);
    // A body lying close to its side gets no gather either: its servos need only tip it a few
    // degrees to roll it over the hold band (measured: a prone body settled at chest-up dot -0.26
    // was rolled onto its back by its gather), so the transition blends the limbs instead.
    const double up = chest >= 0
                          ? glm::dot(chestOutwardInWorld(bodyPoses_[static_cast<size_t>(chest)].rotation,
                                                         asset_->chestForwardInBody),
                                     kRecoveryUp)
                          : 0.0;
    const bool nearSide = facing_.candidate() == Facing::Supine
                              ? up < settings_.facing.supineAbove + kGatherSideMargin
                              : up > settings_.facing.proneBelow - kGatherSideMargin;
    if (clip != nullptr && settings_.gather.duration > 0.0 && !gatherRolledOver_ && !gatherUnrested_ &&
        !wedged && !nearSide) {
      startGather(*clip);
    } else if (clip != nullptr) {
      // A gather that rolled the body over is not tried again for this fall: its servos lever
      // this body off the way it lies, and trying again would loop for ever. Nor is one tried
      // from the side. The display transition blends the limbs instead (planned at the speed
      // bound).
      if (wedged) {
        event(CharacterEventKind::Gather, "skipped: settled on its side for %.2f s, %s clip kept", sideWait_,
              facingName(facing_.candidate()));
      } else if (gatherRolledOver_) {
        event(CharacterEventKind::Gather, "skipped: the last gather rolled the body over");
      } else if (gatherUnrested_) {
        event(CharacterEventKind::Gather, "skipped: the last gather did not come to rest");
      } else if (nearSide) {
        event(CharacterEventKind::Gather, "%s clip: no gather, lying close to its side (chest-up dot %.2f)",
              facingName(facing_.candidate()), up);
      }
      tryStartRecovery(dt);
    }
  }
}

const GetUpClip* Character::Impl::clipForFacing(bool onItsSideToo) const {
  const Facing facing = facing_.candidate();
  if (facing == Facing::Undecided) return nullptr;
  if (facing_.inHoldBand() && !onItsSideToo) return nullptr;  // on the side: wait
  if (facing == Facing::Supine) return supine_ ? &*supine_ : nullptr;
  return prone_ ? &*prone_ : nullptr;
}

}  // namespace handoff
