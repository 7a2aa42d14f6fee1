// Falls that land on the feet and knock-backs (SPEC.md section 6): the flight and touch-down
// checks of the Character's Ragdoll and Powered states, the landing's one write phase back to
// animation (the get-up's capsule-space check and exit blend), and the knock-back throw.
#include "controller/character_impl.h"

#include "controller/controller_internal.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>

namespace handoff {

using controller_detail::format;
using controller_detail::horizontal;

Status validateLandingSettings(const LandingSettings& s) {
  const auto finiteAtLeast0 = [](double v) { return std::isfinite(v) && v >= 0.0; };
  if (!finiteAtLeast0(s.minAirTime)) return Error{"landing.minAirTime must be finite and >= 0"};
  if (!finiteAtLeast0(s.contactDistance)) return Error{"landing.contactDistance must be finite and >= 0"};
  if (!finiteAtLeast0(s.decisionTime)) return Error{"landing.decisionTime must be finite and >= 0"};
  if (!(std::isfinite(s.maxFootOffset) && s.maxFootOffset > 0.0))
    return Error{"landing.maxFootOffset must be finite and > 0"};
  if (!(std::isfinite(s.minPelvisHeight) && s.minPelvisHeight >= 0.0 && s.minPelvisHeight <= 1.0))
    return Error{"landing.minPelvisHeight must be in [0, 1]"};
  if (!(std::isfinite(s.maxTilt) && s.maxTilt >= 0.0 && s.maxTilt <= kPi))
    return Error{"landing.maxTilt must be in [0, pi]"};
  if (!finiteAtLeast0(s.maxAngularSpeed)) return Error{"landing.maxAngularSpeed must be finite and >= 0"};
  return {};
}

bool Character::Impl::airborne() const {
  return (state_ == CharacterState::Ragdoll || state_ == CharacterState::Powered) &&
         airTime_ >= settings_.landing.minAirTime && airTime_ > 0.0;
}

void Character::Impl::resetFlight() {
  airTime_ = 0.0;
  touchdownAt_ = -1.0;
}

bool Character::Impl::touchingWorld(int body) const {
  const BodyId id = ragdoll_->body(body);
  std::array<SurfacePoint, 2> points;
  return world_->closestPoints(id, world_->transform(id), settings_.landing.contactDistance,
                               settings_.stand.blockMask, points) > 0;
}

Character::Impl::LandingStep Character::Impl::landingPostStep(double dt) {
  const LandingSettings& s = settings_.landing;
  // A character that cannot get up (not allowed: a death; no get-up clip; a broken joint) does not
  // land either, and nothing is queried for it.
  if (!s.enabled || !getUpAllowed_ || !(supine_ || prone_) || footBodies_.empty() || chestBody_ < 0 ||
      !(restPelvisHeight_ > 0.0) || ragdoll_->broken()) {
    resetFlight();
    return LandingStep::None;
  }
  bool touching = false;
  for (int b = 0; b < ragdoll_->bodyCount() && !touching; ++b) touching = touchingWorld(b);
  const Vec3 pelvis = bodyPoses_[0].translation;
  if (!touching) {
    if (airTime_ == 0.0) {
      flightStart_ = time_ - dt;
      pelvisAirStart_ = pelvis;
    }
    airTime_ += dt;
    if (touchdownAt_ < 0.0) flightSpin_ = glm::length(world_->angularVelocity(ragdoll_->body(0)));
    // A bounce after a touch-down stays in its decision window.
    if (touchdownAt_ < 0.0) return airTime_ >= s.minAirTime ? LandingStep::InFlight : LandingStep::None;
  } else {
    if (airTime_ >= s.minAirTime && airTime_ > 0.0) {
      // A touch-down: the decision window opens.
      touchdownAt_ = time_;
      flights_.push(FlightRecord{flightStart_, time_, pelvisAirStart_, pelvis, false});
    }
    airTime_ = 0.0;
  }
  if (touchdownAt_ < 0.0) return LandingStep::None;

  // On its feet? A foot on the world, the feet under the pelvis, the pelvis high, the trunk up,
  // the pelvis turning slowly.
  bool footDown = false;
  Vec3 feet{0.0};
  double lowestFoot = std::numeric_limits<double>::infinity();
  for (int b : footBodies_) {
    footDown = footDown || touchingWorld(b);
    feet += bodyPoses_[static_cast<size_t>(b)].translation;
  }
  feet /= static_cast<double>(footBodies_.size());
  localToModel(skeleton_, display_, scratchModels_);
  for (size_t i = 1; i < trackedJoints_.size(); ++i) {
    lowestFoot = std::min(
        lowestFoot,
        displayRoot_.transformPoint(scratchModels_[static_cast<size_t>(trackedJoints_[i])].translation).y);
  }
  const Transform worldFromPelvis = bodyPoses_[0] * asset_->bodies[0].boneFromBody.inverse();
  const double height = (worldFromPelvis.translation.y - lowestFoot) / restPelvisHeight_;
  const double footOffset = glm::length(horizontal(feet - pelvis));
  const Vec3 trunk = bodyPoses_[static_cast<size_t>(chestBody_)].translation - pelvis;
  const double tilt =
      glm::length(trunk) > 1e-9 ? std::acos(std::clamp(glm::normalize(trunk).y, -1.0, 1.0)) : kPi;
  const double spin = flightSpin_;  // before the touch-down: the impact's own kick left out
  const bool standing = footDown && footOffset <= s.maxFootOffset && height >= s.minPelvisHeight &&
                        tilt <= s.maxTilt && spin <= s.maxAngularSpeed;
  if (standing && tryLand()) {
    LandingRecord& r = landings_.back();
    r.footOffset = footOffset;
    r.pelvisHeight = height;
    r.tilt = tilt;
    r.angularSpeed = spin;
    return LandingStep::Landed;
  }
  if (time_ - touchdownAt_ + 1e-9 >= s.decisionTime) {
    touchdownAt_ = -1.0;
    event(CharacterEventKind::Touchdown,
          "not on its feet within %.2f s (feet %.2f m from the pelvis, pelvis at %.0f %% of its standing "
          "height, tilt %.0f deg, %.1f rad/s): falls on",
          s.decisionTime, footOffset, 100.0 * height, tilt * 180.0 / kPi, spin);
    return LandingStep::None;
  }
  return LandingStep::InFlight;
}

bool Character::Impl::tryLand() {
  // The root under the pelvis, yawed by the pelvis's turn from its rest pose (yaw only: the
  // capsule never inherits a roll or pitch), on the floor planStand finds: the get-up's check.
  const Transform worldFromPelvis = bodyPoses_[0] * asset_->bodies[0].boneFromBody.inverse();
  const Vec3 modelForward = horizontal(asset_->modelForward);
  Vec3 forward =
      horizontal(worldFromPelvis.rotation * glm::conjugate(restPelvisRotation_) * asset_->modelForward);
  if (glm::length(forward) < 1e-3) forward = preFallForward_;
  if (glm::length(forward) < 1e-3 || glm::length(modelForward) < 1e-3)
    forward = settings_.levelDefaultForward;
  double lowestFoot = std::numeric_limits<double>::infinity();
  for (int b : footBodies_)
    lowestFoot = std::min(lowestFoot, bodyPoses_[static_cast<size_t>(b)].translation.y);
  const Transform proposed{yawBetween(glm::normalize(modelForward), glm::normalize(horizontal(forward))),
                           Vec3{worldFromPelvis.translation.x, lowestFoot, worldFromPelvis.translation.z}};
  const StandPlan plan =
      planStand(*world_, proposed, worldFromPelvis.translation, asset_->capsule, settings_.stand);
  if (!plan.ok() || plan.decision != StandDecision::Stand) return false;  // keep falling
  // The shown pose on the new root: at weight 1 the exit blend shows exactly the landed pose.
  worldBonesFromDisplay(displayRoot_, display_, worldBones_);
  if (!capturePose(skeleton_, worldBones_, plan.worldFromRoot, returnFrom_)) return false;
  const CharacterState from = state_;
  if (from == CharacterState::Powered) {
    leavePowered();  // one write phase: kinematic, blocking, capsule on, internal collisions on
    // As after a get-up, the bodies' approach starts from the next step's animation: the game
    // re-places its root where the character landed (the animation of this step is elsewhere).
    approachStart_ = true;
  } else {
    stopGather();
    setRagdollDampers(false);
    ragdoll_->makeAnimated(/*blocking=*/true);
    ragdoll_->setInternalCollisions(true);
    approachStart_ = true;  // the bodies ease from where physics left them onto the animation
    std::fill(bodyWeights_.begin(), bodyWeights_.end(), 0.0);
    state_ = CharacterState::Animated;
  }
  ragdoll_->placeCapsule(capsuleOnRoot(plan.worldFromRoot, asset_->capsule, settings_.stand.skin));
  // The display leaves the landed pose through the get-up's exit blend from the next step on.
  exitRoot_ = plan.worldFromRoot;
  exitPending_ = std::isfinite(settings_.recoveryExitBlend) && settings_.recoveryExitBlend > 0.0;
  exitOffsets_ = false;
  exitFromLanding_ = true;
  returnBlend_ = returnBlendTotal_ = 0.0;
  std::copy(returnFrom_.begin(), returnFrom_.end(), display_.begin());
  displayRoot_ = plan.worldFromRoot;
  blendWeight_ = 1.0;
  recoveryFinished_ = true;
  LandingRecord record;
  record.flight = static_cast<std::int64_t>(flights_.total()) - 1;
  if (record.flight >= 0) flights_.back().landed = true;
  record.time = time_;
  record.from = from;
  record.pelvisAtAirStart = record.flight >= 0 ? flights_.back().pelvisAtAirStart : bodyPoses_[0].translation;
  record.pelvisAtLanding = bodyPoses_[0].translation;
  record.worldFromRoot = plan.worldFromRoot;
  record.standDecision = plan.decision;
  landings_.push(record);
  touchdownAt_ = -1.0;
  airTime_ = 0.0;
  event(CharacterEventKind::Landed, "on its feet %.2f s after the touch-down, from %s",
        record.flight >= 0 ? time_ - flights_.back().touchdown : 0.0, characterStateName(from));
  return true;
}

Status Character::Impl::knockBack(const Vec3& impulse) {
  if (!isFinite(impulse)) return Error{"knockback: the impulse is not finite"};
  if (state_ == CharacterState::Recovering) cancelRecovery("knock-back during the get-up");
  if (gathering_) {
    stopGather();
    event(CharacterEventKind::Gather, "stopped: knock-back");
  }
  if (state_ == CharacterState::Animated || state_ == CharacterState::Powered) {
    const HandoffRecord& record = goRagdoll();
    if (!record.committed || state_ != CharacterState::Ragdoll)
      return Error{"knockback: handoff abandoned: " + record.failure};
  }
  if (state_ != CharacterState::Ragdoll) return Error{"knockback: the character did not become a ragdoll"};
  double total = 0.0;
  for (int b = 0; b < ragdoll_->bodyCount(); ++b) total += world_->mass(ragdoll_->body(b));
  if (!(total > 0.0)) return Error{"knockback: the ragdoll has no mass"};
  ragdoll_->wakeBodies();
  for (int b = 0; b < ragdoll_->bodyCount(); ++b) {
    const BodyId id = ragdoll_->body(b);
    ragdoll_->applyImpulse(b, impulse * (world_->mass(id) / total), world_->transform(id).translation);
  }
  externalForce_ = true;
  event(CharacterEventKind::Knockback, "%.0f N s over %.1f kg: %.2f m/s", glm::length(impulse), total,
        glm::length(impulse) / total);
  return {};
}

}  // namespace handoff
