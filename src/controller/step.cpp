// Character::Impl's dispatcher: the per-step entry points (input checks, fault containment,
// the state's own pre- and post-step, the first-step record) and what every mode shares.
#include "controller/character_impl.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>

namespace handoff {

using controller_detail::format;
using controller_detail::horizontal;

Character::Impl::Impl(PhysicsWorld& world, std::shared_ptr<const RagdollAsset> asset,
                      const Skeleton& skeleton, const CharacterSettings& settings)
    : world_(&world),
      asset_(std::move(asset)),
      skeleton_(skeleton),
      settings_(settings),
      settle_(settings.settle),
      facing_(settings.facing) {
  // Every ring's slots are allocated now (HistorySettings).
  propReleases_ = History<PropRelease>(settings.history.propReleases);
  recoveries_ = History<RecoveryRecord>(settings.history.recoveries);
  flights_ = History<FlightRecord>(settings.history.flights);
  landings_ = History<LandingRecord>(settings.history.landings);
  events_ = History<CharacterEvent>(settings.history.events);
  // Every handoff slot holds a record of this ragdoll's size with its names: a commit into a
  // slot (Ragdoll::commitBodies into the caller's record) then allocates nothing.
  HandoffRecord prototype;
  prototype.bodies.resize(asset_->bodies.size());
  for (size_t b = 0; b < asset_->bodies.size(); ++b) prototype.bodies[b].name = asset_->bodies[b].name;
  prototype.joints.resize(asset_->joints.size());
  for (size_t j = 0; j < asset_->joints.size(); ++j) prototype.joints[j].name = asset_->joints[j].name;
  prototype.failure.reserve(256);
  handoffs_ = History<HandoffRecord>(settings.history.handoffs, prototype);
  stepImpulse_.assign(asset_->bodies.size(), Vec3{0.0});
}

Character::Impl::~Impl() {
  // Nothing of this character stays registered in the world it leaves.
  world_->removeSubstepListener(&listeners_);
  if (firstStepProbe_) world_->removeSubstepListener(&*firstStepProbe_);
  for (Prop& p : props_) {
    if (p.joint.valid()) world_->destroyJoint(p.joint);
    world_->destroyBody(p.body);
  }
}

HandoffRecord& Character::Impl::newRecord() {
  // A pending first-step record about to be overwritten (a ring of one) is not probed any more.
  if (firstStepRecord_ >= 0 &&
      handoffs_.total() - static_cast<std::uint64_t>(firstStepRecord_) >= handoffs_.capacity()) {
    if (firstStepProbe_) {
      world_->removeSubstepListener(&*firstStepProbe_);
      firstStepProbe_.reset();
    }
    firstStepRecord_ = -1;
  }
  return handoffs_.push();
}

void Character::Impl::recordCommit(HandoffRecord& record) {
  // The first step after a commit is recorded on its record (BodyHandoff::*AfterFirstStep and
  // *AfterFirstSubstep): a probe listens to that step's substeps; postStep reads it out. A
  // record pushed meanwhile: the probe points at the newest committed one.
  assert(&record == &handoffs_.back());
  const std::int64_t pending = firstStepRecord_;
  if (firstStepProbe_) {
    world_->removeSubstepListener(&*firstStepProbe_);
    firstStepProbe_.reset();
  }
  firstStepRecord_ = record.committed ? static_cast<std::int64_t>(handoffs_.total()) - 1 : pending;
  if (firstStepRecord_ >= 0) {
    firstStepProbe_.emplace(*ragdoll_, handoffs_.atMutable(static_cast<std::uint64_t>(firstStepRecord_)));
    world_->addSubstepListener(&*firstStepProbe_, /*first=*/true);
  }
}

void Character::Impl::recordFirstStep() {
  if (!firstStepProbe_) return;
  firstStepProbe_->finish();
  world_->removeSubstepListener(&*firstStepProbe_);
  firstStepProbe_.reset();
  ragdoll_->recordFirstStep(handoffs_.atMutable(static_cast<std::uint64_t>(firstStepRecord_)));
  firstStepRecord_ = -1;
}

void Character::Impl::setGetUpClips(std::optional<GetUpClip> supine, std::optional<GetUpClip> prone) {
  supine_ = std::move(supine);
  prone_ = std::move(prone);
}

void Character::Impl::event(CharacterEventKind kind, const char* format, ...) {
  CharacterEvent& e = events_.push();
  e.time = time_;
  e.kind = kind;
  std::va_list args;
  va_start(args, format);
  const int length = std::vsnprintf(e.detail, sizeof e.detail, format, args);
  va_end(args);
  if (length >= static_cast<int>(sizeof e.detail)) std::memcpy(e.detail + sizeof e.detail - 4, "...", 4);
  if (length < 0) e.detail[0] = '\0';
}

bool Character::Impl::takeRecoveryFinished() {
  const bool finished = recoveryFinished_;
  recoveryFinished_ = false;
  return finished;
}

int Character::Impl::blockingRepresentations() const {
  int count = world_->isEnabled(ragdoll_->capsule()) ? 1 : 0;
  for (int b = 0; b < ragdoll_->bodyCount(); ++b) {
    const BodyId id = ragdoll_->body(b);
    if (world_->isEnabled(id) && world_->motionType(id) == MotionType::Dynamic &&
        world_->collisionFilter(id).mask != 0) {
      return count + 1;
    }
  }
  return count;
}

Status Character::Impl::preStep(const AnimationInput& animation, double dt) {
  if (!(dt > 0.0) || !std::isfinite(dt)) return Error{"time step must be positive and finite"};
  const size_t n = static_cast<size_t>(skeleton_.jointCount());
  if (animation.locals.size() != n) {
    return Error{"animation pose has " + std::to_string(animation.locals.size()) + " joints, the skeleton " +
                 std::to_string(n)};
  }
  if (!isFinite(animation.worldFromRoot)) return Error{"animation root transform is not finite"};
  for (size_t j = 0; j < n; ++j) {
    if (!isFinite(animation.locals[j])) {
      event(CharacterEventKind::Refused, "joint '%s' of the animation pose is not finite",
            skeleton_.jointNames[j].c_str());
      return Error{"joint '" + skeleton_.jointNames[j] + "' of the animation pose is not finite"};
    }
  }
  if (haveAnimation_ && !(animation.time > animTime_)) {
    return Error{"animation time " + std::to_string(animation.time) + " s does not advance"};
  }
  Status stepped;
  switch (state_) {
    case CharacterState::Animated:
      stepped = animatedPreStep(animation, dt);
      break;
    case CharacterState::Ragdoll:
      break;
    case CharacterState::Recovering:
      recoveringPreStep(dt);
      break;
    case CharacterState::Powered:
      stepped = poweredPreStep(animation, dt);
      break;
  }
  if (!stepped) return stepped;
  std::copy(animation.locals.begin(), animation.locals.end(), animLocals_.begin());
  localToModel(skeleton_, animLocals_, animModels_);
  animRoot_ = animation.worldFromRoot;
  animTime_ = animation.time;
  haveAnimation_ = true;
  if (state_ == CharacterState::Powered) {
    if (animation.teleport) haveJointTargets_ = false;  // no target velocity across a jump
    updateDriveTargets(dt);
  }
  propsPreStep();
  return {};
}

void Character::Impl::postStep(double dt) {
  time_ += dt;
  std::fill(stepImpulse_.begin(), stepImpulse_.end(), Vec3{0.0});
  recordFirstStep();
  const int breaks = ragdoll_->updateBreaks(time_, dt);
  if (breaks > 0) recordBreaks(breaks);
  if (containPhysicsFault()) {
    externalForce_ = false;
    return;  // the display keeps the last valid pose
  }
  switch (state_) {
    case CharacterState::Animated:
      animatedPostStep(dt);
      break;
    case CharacterState::Powered:
      poweredPostStep(dt);
      break;
    case CharacterState::Ragdoll:
      ragdollPostStep(dt);
      break;
    case CharacterState::Recovering:
      recoveringPostStep(dt);
      break;
  }
  if (breaks > 0) {
    // In pieces: no drive tracks, no servo gathers, no get-up (ragdollPostStep). A powered or
    // partial ragdoll falls as a full one from the next step.
    stopGather();
    if (state_ == CharacterState::Powered && poweredToRagdoll())
      event(CharacterEventKind::Knockout, "a joint broke");
  }
  propsPostStep();
  externalForce_ = false;
}

void Character::Impl::recordBreaks(int count) {
  const std::span<const JointBreak> all = ragdoll_->jointBreaks();
  for (size_t i = all.size() - static_cast<size_t>(count); i < all.size(); ++i) {
    const JointBreak& b = all[i];
    const JointDef& def = asset_->joints[static_cast<size_t>(b.joint)];
    event(CharacterEventKind::Break, "joint '%s' at %.1f N, %.1f N m (limits %g N, %g N m): stays a ragdoll",
          def.name.c_str(), b.force, b.torque, def.breakForce, def.breakTorque);
  }
}

bool Character::Impl::containPhysicsFault() {
  if (ragdoll_->capsuleOnly()) {
    // No body in the simulation, nothing can fault; the last valid poses are the animated ones.
    ragdoll_->readBodyPoses(lastValidPoses_);
    return false;
  }
  int bad = -1;
  for (int b = 0; b < ragdoll_->bodyCount() && bad < 0; ++b) {
    const BodyId id = ragdoll_->body(b);
    // The world disables a body whose state became non-finite or that left the world box; the
    // character never disables its limbs itself.
    if (!world_->isEnabled(id) || !isFinite(world_->transform(id)) || !isFinite(world_->linearVelocity(id)) ||
        !isFinite(world_->angularVelocity(id))) {
      bad = b;
    }
  }
  if (bad < 0) {
    ragdoll_->readBodyPoses(lastValidPoses_);
    return false;
  }
  // Back to the last valid step's poses, at rest (restoring the velocities could replay the
  // blow-up); joints forget their cached impulses.
  ragdoll_->resetBodies(lastValidPoses_);
  settle_.reset();
  ++faults_;
  event(CharacterEventKind::Fault,
        "body '%s' became non-finite or left the world; reset to the last valid pose, at rest",
        asset_->bodies[static_cast<size_t>(bad)].name.c_str());
  return true;
}

Status Character::Impl::applyImpulse(int body, const Vec3& impulse, const Vec3& worldPoint) {
  if (body < 0 || body >= ragdoll_->bodyCount()) return Error{"no body " + std::to_string(body)};
  if (!isFinite(impulse) || !isFinite(worldPoint)) return Error{"impulse or point is not finite"};
  if (state_ == CharacterState::Recovering) cancelRecovery("hit during the get-up transition");
  if (gathering_) {
    stopGather();
    event(CharacterEventKind::Gather, "stopped: hit");
  }
  if (state_ == CharacterState::Animated) {
    if (!settings_.hitReactionEnabled) {
      event(CharacterEventKind::Impulse, "ignored while animated (%s)",
            asset_->bodies[static_cast<size_t>(body)].name.c_str());
      return {};
    }
    if (Status s = goPowered(settings_.hitReaction); !s) return s;  // the hit reaction
  }
  if (state_ == CharacterState::Powered && ragdoll_->authority(body) == Authority::Animation) {
    // A hit on an animated body of a partial ragdoll: that body goes physical first.
    std::vector<double> weights = bodyWeights_;
    weights[static_cast<size_t>(body)] = 1.0;
    const std::vector<double> drives = driveWeightsPerBody_;
    if (Status s = setBodyWeights(weights, drives); !s) return s;
  }
  if (state_ == CharacterState::Powered) settledFor_ = 0.0;
  // Hostile impulses: this step's impulses on the body change its speed by at most
  // maxSpeedChangePerStep; the part beyond is dropped (the sum's direction kept).
  const auto b = static_cast<size_t>(body);
  const double bound = settings_.maxSpeedChangePerStep * asset_->bodies[static_cast<size_t>(body)].mass;
  const Vec3 sum = stepImpulse_[b] + impulse;
  Vec3 taken = impulse;
  const bool clamped = std::isfinite(bound) && glm::length(sum) > bound * (1.0 + 1e-9);
  if (clamped) {
    taken = sum * (bound / glm::length(sum)) - stepImpulse_[b];
    ++impulseClamps_;
  }
  stepImpulse_[b] += taken;
  ragdoll_->applyImpulse(body, taken, worldPoint);
  externalForce_ = true;
  if (clamped) {
    event(CharacterEventKind::Impulse, "%.0f N s on %s, clamped to %.0f N s (at most %.0f m/s per step)",
          glm::length(impulse), asset_->bodies[b].name.c_str(), glm::length(taken),
          settings_.maxSpeedChangePerStep);
  } else {
    event(CharacterEventKind::Impulse, "%.0f N s on %s", glm::length(impulse),
          asset_->bodies[b].name.c_str());
  }
  return {};
}

void Character::Impl::driveMotors(MotorOwner owner, std::span<const Quat> targets,
                                  std::span<const Vec3> targetVelocities, std::span<const double> weights) {
  for (size_t j = 0; j < driveJoints_.size(); ++j) {
    (void)ragdoll_->setJointMotor(
        static_cast<int>(j), owner,
        implicitMotorSettings(driveJoints_[j], targets[j], weights.empty() ? 1.0 : weights[j],
                              targetVelocities.empty() ? Vec3{0.0} : targetVelocities[j]));
  }
}

void Character::Impl::keepAnimationOwned(std::span<Transform> locals) const {
  for (int j : ownedJoints_) locals[static_cast<size_t>(j)] = animLocals_[static_cast<size_t>(j)];
}

void Character::Impl::worldBonesFromDisplay(const Transform& root, std::span<const Transform> locals,
                                            std::span<Transform> out) {
  localToModel(skeleton_, locals, scratchModels_);
  for (size_t j = 0; j < out.size(); ++j) out[j] = root * scratchModels_[j];
}

}  // namespace handoff
