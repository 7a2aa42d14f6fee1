// The Animated mode's steps and the blends back into it: a finished get-up's exit blend, a powered
// return's physics -> animation blend, the bodies easing onto the animation, teleports.
#include "controller/character_impl.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <limits>

namespace handoff {

using controller_detail::format;
using controller_detail::horizontal;
using controller_detail::plannedBelow;

void Character::Impl::updateCapsuleOnly() {
  // Only a character plainly on its animation leaves its bodies out: a blend back or the bodies'
  // approach moves them off the animation, and a held prop hangs on the hand body.
  const bool plain =
      !(exitPending_ || exitOffsets_ || returnBlend_ < returnBlendTotal_ || approachStart_ || approaching_);
  const bool holding = std::any_of(props_.begin(), props_.end(), [](const Prop& p) { return p.held; });
  (void)ragdoll_->setCapsuleOnly(settings_.capsuleOnlyWhileAnimated && plain && !holding);
}

Status Character::Impl::animatedPreStep(const AnimationInput& animation, double dt) {
  updateCapsuleOnly();
  // While the display blends back into the animation (after a get-up or a powered return)
  // the kinematic bodies follow the displayed pose this step ends on, not the animation: they
  // reach the animation along the blend, as fast as the display moves, instead of jumping to
  // it in one step.
  std::span<const Transform> bodyLocals = animation.locals;
  if (exitPending_ || exitOffsets_ || returnBlend_ < returnBlendTotal_) {
    std::copy(animation.locals.begin(), animation.locals.end(), animLocals_.begin());
    animRoot_ = animation.worldFromRoot;
    if (exitPending_) startExitBlend();
    if (exitOffsets_ || returnBlend_ < returnBlendTotal_) {
      (void)blendBackPose(returnBlend_ + dt, physicsLocals_);
      bodyLocals = physicsLocals_;
    }
  }
  localToModel(skeleton_, bodyLocals, scratchModels_);
  std::span<const Transform> bodies;  // empty: the bodies of scratchModels_
  if (approachStart_ || approaching_) {
    approachBodies(animation, scratchModels_, dt);
    bodies = approachTargets_;
  }
  // The history runs on simulation time, so the samples' dt is the real step.
  if (Status s = ragdoll_->setAnimatedPose(time_ + dt, animation.worldFromRoot, scratchModels_,
                                           animation.teleport, dt, bodies);
      !s) {
    return s;
  }
  if (animation.teleport) event(CharacterEventKind::Teleport, "the animation root jumped");
  return {};
}

void Character::Impl::animatedPostStep(double dt) {
  displayRoot_ = animRoot_;
  if (exitPending_) startExitBlend();
  if (exitOffsets_ || returnBlend_ < returnBlendTotal_) {
    // Back from a get-up (the clip's last frame fading out as offsets on the animation) or
    // from powered mode (the last physics pose blending into the animation).
    returnBlend_ += dt;
    blendWeight_ = blendBackPose(returnBlend_, display_);
    if (exitOffsets_ && blendWeight_ <= 0.0) exitOffsets_ = false;
  } else {
    std::copy(animLocals_.begin(), animLocals_.end(), display_.begin());
    blendWeight_ = 0.0;
  }
}

void Character::Impl::startExitBlend() {
  exitPending_ = false;
  // The clip's last frame re-expressed on the game's root (top-level joints).
  const Transform animFromExit = animRoot_.inverse() * exitRoot_;
  for (int j = 0; j < skeleton_.jointCount(); ++j) {
    if (skeleton_.parents[static_cast<size_t>(j)] == kNoParent)
      returnFrom_[static_cast<size_t>(j)] = animFromExit * returnFrom_[static_cast<size_t>(j)];
  }
  offsetsFromAnimation();
  // How far fading the offsets can carry a tracked point (pelvis, feet), whatever pose the
  // animation is in meanwhile: its own and each ancestor's translation offset, plus each
  // ancestor's rotation offset angle times the chain length from it to the point. A linear fade
  // over `duration` moves the point at most that far beyond the animation's own motion.
  double farthest = 0.0;
  for (int k : trackedJoints_) {
    const auto K = static_cast<size_t>(k);
    double reach = glm::length(returnFrom_[K].translation);
    double lever = glm::length(animLocals_[K].translation);
    for (int a = skeleton_.parents[K]; a != kNoParent; a = skeleton_.parents[static_cast<size_t>(a)]) {
      const auto A = static_cast<size_t>(a);
      const double angle = 2.0 * std::acos(std::clamp(std::abs(returnFrom_[A].rotation.w), 0.0, 1.0));
      reach += glm::length(returnFrom_[A].translation) + angle * lever;
      lever += glm::length(animLocals_[A].translation);
    }
    farthest = std::max(farthest, reach);
  }
  const TransitionSettings& t = settings_.transition;
  double duration = settings_.recoveryExitBlend;
  if (t.maxPointSpeed > 0.0) duration = std::max(duration, farthest / plannedBelow(t.maxPointSpeed));
  duration = std::min(duration, std::max(t.maxDuration, settings_.recoveryExitBlend));
  returnBlendTotal_ = duration;
  returnBlend_ = 0.0;
  exitOffsets_ = true;
  if (exitFromLanding_ && !landings_.empty()) {
    landings_.back().exitBlend = duration;
  } else if (!recoveries_.empty()) {
    recoveries_.back().exitBlend = duration;
  }
  exitFromLanding_ = false;
}

void Character::Impl::carryWithRoot(const Transform& jump) {
  const auto carry = [&](BodyId body) {
    world_->setTransform(body, jump * world_->transform(body));
    world_->setLinearVelocity(body, jump.rotation * world_->linearVelocity(body));
    world_->setAngularVelocity(body, jump.rotation * world_->angularVelocity(body));
  };
  ragdoll_->carryDynamicBodies(jump);
  for (int p = 0; p < propCount(); ++p) {
    if (propHeld(p) && world_->motionType(propBody(p)) == MotionType::Dynamic) carry(propBody(p));
  }
}

void Character::Impl::offsetsFromAnimation() {
  for (size_t j = 0; j < returnFrom_.size(); ++j) {
    const Transform& from = returnFrom_[j];
    const Transform& anim = animLocals_[j];
    returnFrom_[j] = Transform{normalizeOrIdentity(from.rotation * glm::conjugate(anim.rotation)),
                               from.translation - anim.translation};
  }
}

void Character::Impl::startApproach(const Transform& worldFromRoot, std::span<const Transform> models) {
  bodyPosesFromModels(*asset_, models, worldFromRoot, approachAnim_);
  for (size_t b = 0; b < approachAnim_.size(); ++b) {
    const Transform current = world_->transform(ragdoll_->body(static_cast<int>(b)));
    approachOffset_[b] = current.translation - approachAnim_[b].translation;
    approachTurn_[b] = normalizeOrIdentity(current.rotation * glm::conjugate(approachAnim_[b].rotation));
  }
  approachStart_ = false;
  approaching_ = true;
}

void Character::Impl::approachBodies(const AnimationInput& animation, std::span<const Transform> models,
                                     double dt) {
  localToModel(skeleton_, animation.locals, approachModels_);
  // After a get-up, from where the clip left the bodies, on this step's animation: the game
  // re-places its root where the character stood up.
  if (approachStart_) startApproach(animation.worldFromRoot, approachModels_);
  bodyPosesFromModels(*asset_, approachModels_, animation.worldFromRoot, approachAnim_);
  bodyPosesFromModels(*asset_, models, animation.worldFromRoot, approachTargets_);
  const double speed = plannedBelow(settings_.returnBodySpeed);  // checked against returnBodySpeed
  const Quat identity{1.0, 0.0, 0.0, 0.0};
  bool settled = true;
  for (size_t b = 0; b < approachAnim_.size(); ++b) {
    const Transform& anim = approachAnim_[b];
    Transform& target = approachTargets_[b];
    // The display's offset and turn from the animation, reached at a bounded rate.
    const Vec3 wantOffset = target.translation - anim.translation;
    const Quat wantTurn = normalizeOrIdentity(target.rotation * glm::conjugate(anim.rotation));
    Vec3 step = wantOffset - approachOffset_[b];
    const double length = glm::length(step);
    if (length > speed * dt) step *= speed * dt / length;
    approachOffset_[b] += step;
    const double angle = angleBetween(approachTurn_[b], wantTurn);
    const double maxAngle = speed / approachExtent_[b] * dt;
    approachTurn_[b] =
        angle > maxAngle ? slerpShortArc(approachTurn_[b], wantTurn, maxAngle / angle) : wantTurn;
    target = Transform{normalizeOrIdentity(approachTurn_[b] * anim.rotation),
                       anim.translation + approachOffset_[b]};
    settled =
        settled && glm::length(approachOffset_[b]) < 1e-9 && angleBetween(approachTurn_[b], identity) < 1e-9;
  }
  // Done once on the animation with no blend back left.
  if (settled && !exitOffsets_ && !(returnBlend_ + dt < returnBlendTotal_)) approaching_ = false;
}

double Character::Impl::blendBackPose(double blendTime, std::span<Transform> out) const {
  const double w = returnBlendTotal_ > 0.0 ? std::clamp(blendTime / returnBlendTotal_, 0.0, 1.0) : 1.0;
  const Quat identity{1.0, 0.0, 0.0, 0.0};
  for (size_t j = 0; j < out.size(); ++j) {
    const Transform& offset = returnFrom_[j];
    const Transform& anim = animLocals_[j];
    out[j] = Transform{normalizeOrIdentity(slerpShortArc(offset.rotation, identity, w) * anim.rotation),
                       anim.translation + offset.translation * (1.0 - w)};
  }
  keepAnimationOwned(out);
  return 1.0 - w;
}

}  // namespace handoff
