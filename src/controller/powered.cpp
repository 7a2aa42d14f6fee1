// Powered and partial ragdolls, hit reactions and the way back to animation (SPEC.md sections 5
// and 6): the Character's Powered state. The drive law, the explicit applier, the implicit servo
// hand-off and the pins are the drive module's; this file decides which bodies are dynamic,
// feeds the drives the animation every step, measures the pose error and leaves the mode.
#include "controller/character_impl.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>

namespace handoff {

namespace {
std::string fmt(const char* f, double a, double b = 0.0) {
  char buffer[160];
  std::snprintf(buffer, sizeof buffer, f, a, b);
  return buffer;
}

bool unit(double v) { return std::isfinite(v) && v >= 0.0 && v <= 1.0; }
bool nonNegative(double v) { return std::isfinite(v) && v >= 0.0; }

bool validPinGains(const PinGains& g) {
  const auto limit = [](double v) { return !std::isnan(v) && v >= 0.0; };  // +inf allowed
  return nonNegative(g.linearStiffness) && nonNegative(g.linearDamping) && limit(g.maxLinearAcceleration) &&
         nonNegative(g.angularStiffness) && nonNegative(g.angularDamping) && limit(g.maxAngularAcceleration);
}
}  // namespace

PoweredSettings CharacterSettings::defaultHitReaction() {
  PoweredSettings s;
  s.rampTime = 0.0;  // the bodies start on the animation with its velocities: no kick to fade
  s.pinPelvisAndFeet = true;
  s.returnWhenSettled = true;
  return s;
}

Status Character::Impl::validatePowered(const PoweredSettings& s) const {
  const size_t bodies = asset_->bodies.size();
  if (!unit(s.weight)) return Error{"powered: weight must be in [0, 1] (got " + fmt("%g", s.weight) + ")"};
  if (!nonNegative(s.rampTime)) return Error{"powered: rampTime must be finite and >= 0"};
  if (!nonNegative(s.stabilityLimit)) return Error{"powered: stabilityLimit must be finite and >= 0"};
  if (!s.bodyWeights.empty() && s.bodyWeights.size() != bodies) {
    return Error{"powered: bodyWeights has " + std::to_string(s.bodyWeights.size()) +
                 " entries, the ragdoll " + std::to_string(bodies) + " bodies"};
  }
  if (!s.driveWeights.empty() && s.driveWeights.size() != bodies) {
    return Error{"powered: driveWeights has " + std::to_string(s.driveWeights.size()) +
                 " entries, the ragdoll " + std::to_string(bodies) + " bodies"};
  }
  for (size_t b = 0; b < s.bodyWeights.size(); ++b) {
    if (!unit(s.bodyWeights[b]))
      return Error{"powered: body weight of '" + asset_->bodies[b].name + "' must be in [0, 1]"};
  }
  for (size_t b = 0; b < s.driveWeights.size(); ++b) {
    if (!unit(s.driveWeights[b]))
      return Error{"powered: drive weight of '" + asset_->bodies[b].name + "' must be in [0, 1]"};
  }
  for (const PoweredPin& pin : s.pins) {
    if (pin.body < 0 || static_cast<size_t>(pin.body) >= bodies)
      return Error{"powered: pin on body " + std::to_string(pin.body) + ", which does not exist"};
    if (!unit(pin.weight) || !validPinGains(pin.gains))
      return Error{"powered: pin on '" + asset_->bodies[static_cast<size_t>(pin.body)].name +
                   "' has a weight outside [0, 1] or a negative or non-finite gain"};
  }
  const double thresholds[] = {s.returnJointError,   s.returnPositionError, s.returnLinearSpeed,
                               s.returnAngularSpeed, s.returnWindow,        s.returnBlendTime,
                               s.returnTrackingLag,  s.returnSpeedFraction};
  for (double t : thresholds) {
    if (!nonNegative(t)) return Error{"powered: return thresholds must be finite and >= 0"};
  }
  if (std::isnan(s.knockoutDistance) || !(s.knockoutDistance > 0.0))
    return Error{"powered: knockoutDistance must be > 0 (+inf: never)"};
  return {};
}

Status Character::Impl::goPartial(std::span<const double> bodyWeights, double rampTime,
                                  PoweredSettings settings) {
  partialSettings_ = settings;  // copy-assigned: the scratch's vectors keep their storage
  partialSettings_.bodyWeights.assign(bodyWeights.begin(), bodyWeights.end());
  partialSettings_.rampTime = rampTime;
  return goPowered(partialSettings_);
}

Status Character::Impl::goLimbLag(const LimbLagSettings& settings, PoweredSettings powered) {
  if (!(settings.weight > 0.0 && settings.weight <= 1.0))
    return Error{"limb lag: weight must be in (0, 1], got " + fmt("%g", settings.weight)};
  std::vector<double>& weights = limbWeights_;
  weights.assign(asset_->bodies.size(), 0.0);
  bool any = false;
  for (const Slot slot : settings.slots) {
    if (static_cast<int>(slot) >= static_cast<int>(Slot::Count))
      return Error{"limb lag: a slot out of range"};
    const int body = asset_->bodyForSlot(slot);
    if (body < 0) continue;
    weights[static_cast<size_t>(body)] = settings.weight;
    any = true;
  }
  if (!any) return Error{"limb lag: the asset has a body in none of the slots asked for"};
  powered.returnWhenSettled = false;
  return goPartial(limbWeights_, settings.rampTime, std::move(powered));
}

Status Character::Impl::goPowered(const PoweredSettings& settings) {
  if (state_ == CharacterState::Ragdoll || state_ == CharacterState::Recovering) {
    return Error{std::string("powered: refused while ") + characterStateName(state_)};
  }
  if (Status s = validatePowered(settings); !s) return s;
  const size_t n = asset_->bodies.size();
  std::vector<double>& weights = poweredWeights_;
  weights.assign(settings.bodyWeights.begin(), settings.bodyWeights.end());
  if (weights.empty()) weights.assign(n, 1.0);
  if (std::none_of(weights.begin(), weights.end(), [](double w) { return w > 0.0; }))
    return Error{"powered: no body has a physics weight > 0"};

  // The implicit drive needs every joint's motor (nothing else holds one while animated).
  if (settings.solver == DriveSolver::Implicit && !ragdoll_->acquireMotors(MotorOwner::Drive)) {
    return Error{std::string("powered: the joint motors are held by ") +
                 motorOwnerName(ragdoll_->motorOwner(0))};
  }
  const bool wasPowered = state_ == CharacterState::Powered;
  // Before the commit, so that it suspends no pair when internal collisions are off and records
  // the setting (HandoffRecord::internalCollisions).
  ragdoll_->setInternalCollisions(settings.internalCollisions);
  if (!wasPowered) {
    for (size_t b = 0; b < n; ++b) physicsMask_[b] = weights[b] > 0.0 ? 1 : 0;
    HandoffRecord& record = newRecord();
    ragdoll_->commitBodies(settings_.handoff, physicsMask_, Authority::Drive, record);
    recordCommit(record);
    if (!record.committed) {
      ragdoll_->releaseMotors(MotorOwner::Drive);
      event(CharacterEventKind::Refused, "powered: handoff abandoned: %s", record.failure.c_str());
      return Error{"powered: handoff abandoned: " + record.failure};
    }
    bodyWeights_ = weights;
    rampStartWeight_ = 0.0;
    resetFlight();
    returnBlendTotal_ = 0.0;
  } else {
    rampStartWeight_ = driveWeight_;
  }
  powered_ = settings;
  powered_.bodyWeights.clear();
  if (wasPowered) {
    poweredDrives_.assign(settings.driveWeights.begin(), settings.driveWeights.end());
    if (Status s = setBodyWeights(weights, poweredDrives_); !s) return s;
  } else if (settings.driveWeights.empty()) {
    std::fill(driveWeightsPerBody_.begin(), driveWeightsPerBody_.end(), 1.0);
  } else {
    driveWeightsPerBody_ = settings.driveWeights;
  }
  state_ = CharacterState::Powered;
  poweredTime_ = 0.0;
  settledFor_ = 0.0;
  returning_ = false;
  blocked_ = false;
  driveWeight_ = rampStartWeight_;

  // Pins: the given ones, plus pelvis and feet when asked (a standing hit reaction).
  std::vector<PoweredPin>& pins = poweredPins_;
  pins.assign(settings.pins.begin(), settings.pins.end());
  if (settings.pinPelvisAndFeet) {
    for (Slot slot : {Slot::Pelvis, Slot::FootL, Slot::FootR}) {
      const int joint = asset_->map[slot];
      const int body = joint >= 0 ? asset_->bodyForJoint(joint) : -1;
      if (body < 0) continue;
      if (std::none_of(pins.begin(), pins.end(), [body](const PoweredPin& p) { return p.body == body; })) {
        PoweredPin pin;
        pin.body = body;
        pins.push_back(pin);
      }
    }
  }
  powered_.pins = pins;
  pinBodies_.clear();
  pinGains_.clear();
  for (const PoweredPin& p : pins) {
    pinBodies_.push_back(ragdoll_->body(p.body));
    pinGains_.push_back(p.gains);
  }
  listeners_.clear();
  pins_ = nullptr;
  if (!pins.empty()) {
    pinStore_->reset(pinBodies_, pinGains_);
    pins_ = pinStore_.get();
  }

  if (settings.solver == DriveSolver::Explicit) {
    ragdoll_->releaseMotors(MotorOwner::Drive);  // from the implicit solver: the servos go off
    drive_->setEnabled(true);
    (void)drive_->setStabilityLimit(settings.stabilityLimit);
    drive_->setEndOfSubstepLaw(settings.endOfSubstepLaw);
    listeners_.add(drive_.get());
  } else {
    drive_->setEnabled(false);
  }
  if (pins_) listeners_.add(pins_);
  // This character's own listener (its drive and pins), beside any other owner's in the world.
  world_->addSubstepListener(&listeners_);

  haveJointTargets_ = false;
  updateDriveTargets(0.0);
  const bool full = std::all_of(bodyWeights_.begin(), bodyWeights_.end(), [](double w) { return w > 0.0; });
  event(full ? CharacterEventKind::Powered : CharacterEventKind::Partial,
        "%s drives, weight %.2f over %.2f s, %.0f pins, internal collisions %s",
        settings.solver == DriveSolver::Explicit ? "explicit" : "implicit", settings.weight,
        settings.rampTime, static_cast<double>(pins.size()), settings.internalCollisions ? "on" : "off");
  return {};
}

Status Character::Impl::poweredPreStep(const AnimationInput& animation, double dt) {
  // The root jumped (a flagged teleport): the dynamic bodies (and held props) jump with it,
  // keeping their pose and velocity relative to the root, instead of being dragged there by
  // their joints to the kinematic ones and the drives across the jump.
  if (animation.teleport) carryWithRoot(animation.worldFromRoot * animRoot_.inverse());
  localToModel(skeleton_, animation.locals, scratchModels_);
  // The animation jumped farther than the knock-out distance from a dynamic body (an abrupt
  // clip switch, an unflagged jump): out before anything moves, so that neither the kinematic
  // bodies nor a drive or pin goes across the jump (they did: an 80 m jump of a clip switch
  // threw the bodies out of the world within a step).
  bodyPosesFromModels(*asset_, scratchModels_, animation.worldFromRoot, jumpCheck_);
  double farthest = 0.0;
  for (int b = 0; b < ragdoll_->bodyCount(); ++b) {
    if (ragdoll_->authority(b) == Authority::Animation) continue;
    farthest = std::max(farthest, glm::length(world_->transform(ragdoll_->body(b)).translation -
                                              jumpCheck_[static_cast<size_t>(b)].translation));
  }
  // In flight or deciding a touch-down the distance knocks nothing out (the game's root does
  // not fall with the character: LandingSettings), as in the post-step check.
  const bool flying = airborne() || touchdownAt_ >= 0.0;
  if (farthest > powered_.knockoutDistance && !flying) {
    knockOut(farthest);
    return {};
  }
  // Animated bodies of a partial ragdoll follow the animation; the history keeps every body's
  // animated pose so more bodies can go physical at any step.
  if (Status s = ragdoll_->setAnimatedPose(time_ + dt, animation.worldFromRoot, scratchModels_,
                                           animation.teleport, dt);
      !s) {
    return s;
  }
  return {};
}

Status Character::Impl::setBodyWeights(std::span<const double> bodyWeights,
                                       std::span<const double> driveWeights) {
  if (state_ != CharacterState::Powered) return Error{"setBodyWeights: the character is not powered"};
  PoweredSettings check = powered_;
  check.bodyWeights.assign(bodyWeights.begin(), bodyWeights.end());
  check.driveWeights.assign(driveWeights.begin(), driveWeights.end());
  if (bodyWeights.size() != asset_->bodies.size())
    return Error{"setBodyWeights: " + std::to_string(bodyWeights.size()) + " weights for " +
                 std::to_string(asset_->bodies.size()) + " bodies"};
  if (Status s = validatePowered(check); !s) return s;
  const size_t n = bodyWeights.size();
  // Bodies going physical: one commit of exactly those, from the animated pose and velocities.
  bool any = false;
  for (size_t b = 0; b < n; ++b) {
    physicsMask_[b] =
        (bodyWeights[b] > 0.0 && ragdoll_->authority(static_cast<int>(b)) == Authority::Animation);
    any = any || physicsMask_[b];
  }
  if (any) {
    HandoffRecord& record = newRecord();
    ragdoll_->commitBodies(settings_.handoff, physicsMask_, Authority::Drive, record);
    recordCommit(record);
    if (!record.committed) {
      event(CharacterEventKind::Refused, "partial: handoff abandoned: %s", record.failure.c_str());
      return Error{"setBodyWeights: handoff abandoned: " + record.failure};
    }
  }
  // Bodies going back to the animation.
  bool anyDynamic = false;
  for (size_t b = 0; b < n; ++b) {
    physicsMask_[b] =
        bodyWeights[b] == 0.0 && ragdoll_->authority(static_cast<int>(b)) != Authority::Animation;
    anyDynamic = anyDynamic || bodyWeights[b] > 0.0;
  }
  ragdoll_->makeBodiesAnimated(physicsMask_);
  bodyWeights_.assign(bodyWeights.begin(), bodyWeights.end());
  if (driveWeights.empty()) {
    std::fill(driveWeightsPerBody_.begin(), driveWeightsPerBody_.end(), 1.0);
  } else {
    driveWeightsPerBody_.assign(driveWeights.begin(), driveWeights.end());
  }
  if (!anyDynamic) {
    leavePowered();
    return {};
  }
  return {};
}

Status Character::Impl::goAnimated(double blendTime) {
  if (!nonNegative(blendTime)) return Error{"animate: blendTime must be finite and >= 0"};
  switch (state_) {
    case CharacterState::Animated:
      return {};
    case CharacterState::Ragdoll:
    case CharacterState::Recovering:
      return Error{std::string("animate: refused while ") + characterStateName(state_) +
                   " (a full ragdoll returns through the get-up)"};
    case CharacterState::Powered:
      break;
  }
  returning_ = true;
  powered_.returnBlendTime = blendTime;
  return {};
}

// ---------------------------------------------------------------------------------------------
// Per step

void Character::Impl::updateDriveTargets(double dt) {
  const size_t nb = asset_->bodies.size();
  const size_t nj = driveJoints_.size();
  std::copy(animBodies_.begin(), animBodies_.end(), previousAnimBodies_.begin());
  bodyPosesFromModels(*asset_, animModels_, animRoot_, animBodies_);
  if (dt <= 0.0) std::copy(animBodies_.begin(), animBodies_.end(), previousAnimBodies_.begin());
  for (size_t b = 0; b < nb; ++b) targetBodies_[b] = animBodies_[b].rotation;
  (void)JointTargetsJob{driveJoints_, targetBodies_, poweredTargets_}.run();
  // The target velocity is the rate of the target the drives track: the animation's within the
  // joint limits (the admissible target, its locked axes left as the animation's: the drives
  // remove rates about locked axes themselves). Where the animation leaves a limit and comes
  // back, the rate of its own target overstates how fast the admissible one moves (Boxing_Toes'
  // right wrist coming back from -69 deg to -52 deg against a -57 deg limit: 17 deg asked, 5 deg
  // moved) and the servo overshoots by the difference.
  std::copy(limitedTargets_.begin(), limitedTargets_.end(), previousLimitedTargets_.begin());
  for (size_t j = 0; j < nj; ++j) {
    const DriveJoint& joint = driveJoints_[j];
    const Vec3 angles = jointAngles(poweredTargets_[j]);
    limitedTargets_[j] = fromJointAngles(
        nearestAdmissibleAngles(poweredTargets_[j], angles, joint.angularLower, joint.angularUpper));
  }
  if (haveJointTargets_ && dt > 0.0) {
    (void)JointTargetVelocitiesJob{previousLimitedTargets_, limitedTargets_, dt, jointTargetVelocities_}
        .run();
  } else {
    std::fill(jointTargetVelocities_.begin(), jointTargetVelocities_.end(), Vec3{0.0});
  }
  haveJointTargets_ = true;

  // Drive weight ramp, at the end of the coming step.
  const double t = poweredTime_ + dt;
  const double ramp = powered_.rampTime > 0.0 ? std::clamp(t / powered_.rampTime, 0.0, 1.0) : 1.0;
  driveWeight_ = rampStartWeight_ + (powered_.weight - rampStartWeight_) * ramp;
  for (size_t j = 0; j < nj; ++j) {
    const size_t child = static_cast<size_t>(driveJoints_[j].bodyB);
    jointWeights_[j] = bodyWeights_[child] > 0.0 ? driveWeight_ * driveWeightsPerBody_[child] : 0.0;
  }
  if (powered_.solver == DriveSolver::Explicit) {
    (void)drive_->setTargets(poweredTargets_, jointTargetVelocities_);
    for (size_t j = 0; j < nj; ++j) (void)drive_->setWeight(static_cast<int>(j), jointWeights_[j]);
  } else {
    driveMotors(MotorOwner::Drive, poweredTargets_, jointTargetVelocities_, jointWeights_);
  }
  if (pins_) {
    for (size_t p = 0; p < powered_.pins.size(); ++p) {
      const PoweredPin& pin = powered_.pins[p];
      const size_t b = static_cast<size_t>(pin.body);
      Vec3 v{0.0}, w{0.0};
      if (dt > 0.0) {
        v = (animBodies_[b].translation - previousAnimBodies_[b].translation) / dt;
        w = angularVelocity(previousAnimBodies_[b].rotation, animBodies_[b].rotation, dt).omega;
      }
      // animBodies_ is the pose at the end of the coming step: dt ahead of its first substep.
      (void)pins_->setTarget(static_cast<int>(p), animBodies_[b], v, w, dt);
      (void)pins_->setWeight(static_cast<int>(p), bodyWeights_[b] > 0.0 ? pin.weight : 0.0);
    }
  }
}

void Character::Impl::poweredPostStep(double dt) {
  poweredTime_ += dt;
  ragdoll_->updateLimits();
  ragdoll_->readBodyPoses(bodyPoses_);

  // Errors against the animated pose of this step's end (the targets the drives had).
  double sum = 0.0, worst = 0.0, distance = 0.0;
  int driven = 0;
  for (size_t j = 0; j < driveJoints_.size(); ++j) {
    if (bodyWeights_[static_cast<size_t>(driveJoints_[j].bodyB)] == 0.0) continue;  // animated
    const DriveJoint& joint = driveJoints_[j];
    JointDriveInput in;
    in.worldFromBodyA = bodyPoses_[static_cast<size_t>(joint.bodyA)].rotation;
    in.worldFromBodyB = bodyPoses_[static_cast<size_t>(joint.bodyB)].rotation;
    in.target = poweredTargets_[j];
    const JointDriveOutput out = computeJointDrive(joint, in);
    const double e = glm::length(out.error);
    sum += e * e;
    worst = std::max(worst, e);
    ++driven;
  }
  // The bodies' velocities off the animation's, and the animation's own motion: the return
  // thresholds grow with it (PoweredSettings::returnTrackingLag, returnSpeedFraction).
  double linearOff = 0.0, angularOff = 0.0, animLinearMax = 0.0, animAngularMax = 0.0;
  for (size_t b = 0; b < bodyPoses_.size(); ++b) {
    if (ragdoll_->authority(static_cast<int>(b)) == Authority::Animation) continue;
    distance = std::max(distance, glm::length(bodyPoses_[b].translation - animBodies_[b].translation));
    const BodyId id = ragdoll_->body(static_cast<int>(b));
    const Vec3 animLinear = (animBodies_[b].translation - previousAnimBodies_[b].translation) / dt;
    const Vec3 animAngular =
        angularVelocity(previousAnimBodies_[b].rotation, animBodies_[b].rotation, dt).omega;
    linearOff = std::max(linearOff, glm::length(world_->linearVelocity(id) - animLinear));
    angularOff = std::max(angularOff, glm::length(world_->angularVelocity(id) - animAngular));
    animLinearMax = std::max(animLinearMax, glm::length(animLinear));
    animAngularMax = std::max(animAngularMax, glm::length(animAngular));
  }
  const bool slow = linearOff <= powered_.returnLinearSpeed + powered_.returnSpeedFraction * animLinearMax &&
                    angularOff <= powered_.returnAngularSpeed + powered_.returnSpeedFraction * animAngularMax;
  double targetRate = 0.0;  // RMS rate of the driven joints' targets [rad/s]
  for (size_t j = 0; j < driveJoints_.size(); ++j) {
    if (bodyWeights_[static_cast<size_t>(driveJoints_[j].bodyB)] == 0.0) continue;
    targetRate += glm::dot(jointTargetVelocities_[j], jointTargetVelocities_[j]);
  }
  targetRate = driven > 0 ? std::sqrt(targetRate / driven) : 0.0;
  const double pelvisSpeed =
      glm::length(animBodies_[0].translation - previousAnimBodies_[0].translation) / dt;
  rmsJointError_ = driven > 0 ? std::sqrt(sum / driven) : 0.0;
  maxJointError_ = worst;
  maxPositionError_ = distance;

  // Display: physics bones under the animated root, each blended by its body's physics weight.
  for (int j = 0; j < skeleton_.jointCount(); ++j) {
    const int b = asset_->bodyForJoint(j);
    const bool owned = writeBackMask_[static_cast<size_t>(j)] == 0;  // left to the animation
    physicsJointMask_[static_cast<size_t>(j)] =
        !owned && b >= 0 && bodyWeights_[static_cast<size_t>(b)] > 0.0;
    jointBlend_[static_cast<size_t>(j)] = !owned && b >= 0 ? bodyWeights_[static_cast<size_t>(b)] : 0.0;
  }
  writeBackPose(skeleton_, *asset_, bodyPoses_, animRoot_, animLocals_, physicsJointMask_, scratchModels_,
                physicsLocals_);
  blendPoses(animLocals_, physicsLocals_, jointBlend_, display_);
  displayRoot_ = animRoot_;
  blendWeight_ = *std::max_element(bodyWeights_.begin(), bodyWeights_.end());

  // A fall that comes down on its feet lands into animation (LandingSettings); in flight and
  // until the touch-down is decided the distance to the animated pose knocks nothing out (the
  // game's root does not fall with the character).
  const LandingStep landing = landingPostStep(dt);
  if (landing == LandingStep::Landed) return;
  if (distance > powered_.knockoutDistance && landing != LandingStep::InFlight) {
    knockOut(distance);
    return;
  }
  if (landing == LandingStep::InFlight) {
    settledFor_ = 0.0;
    return;
  }
  const bool rampDone = powered_.rampTime <= 0.0 || poweredTime_ >= powered_.rampTime;
  if (!(powered_.returnWhenSettled || returning_) || !rampDone) return;
  const double lag = powered_.returnTrackingLag;
  const bool settled = slow && !externalForce_ &&
                       rmsJointError_ <= powered_.returnJointError + lag * targetRate &&
                       glm::length(bodyPoses_[0].translation - animBodies_[0].translation) <=
                           powered_.returnPositionError + lag * pelvisSpeed;
  settledFor_ = settled ? settledFor_ + dt : 0.0;
  if (settledFor_ + 1e-9 >= powered_.returnWindow) tryReturnToAnimation();
}

bool Character::Impl::tryReturnToAnimation() {
  // SPEC.md section 5: re-check the capsule's space at the animated pose before handing back.
  // The capsule follows the animated root while off; checked a skin above it (standing on the
  // ground is not blocked), against what the get-up check uses.
  Transform capsulePose = world_->transform(ragdoll_->capsule());
  capsulePose.translation.y += settings_.stand.skin;
  const bool blocked = world_->capsuleOverlaps(capsulePose, asset_->capsule.radius,
                                               asset_->capsule.halfHeight, settings_.stand.blockMask);
  if (blocked) {
    if (!powered_.holdWhenBlocked) {
      event(CharacterEventKind::Blocked, "no capsule space to return to animation: falling");
      knockOut(maxPositionError_);
      return false;
    }
    if (!blocked_)
      event(CharacterEventKind::Blocked, "no capsule space to return to animation: holding the pose");
    blocked_ = true;
    return false;
  }
  const double rms = rmsJointError_, distance = maxPositionError_;
  const double blend = powered_.returnBlendTime;
  leavePowered();
  returnBlendTotal_ = blend;
  returnBlend_ = 0.0;
  exitPending_ = false;  // a get-up's exit blend, if one was running, is over
  // The blend fades the displayed pose's offsets from this step's animation (both on the
  // animation's root): the parts the animation moves keep moving with it, the kinematic ones
  // (offset zero) are the animation throughout.
  std::copy(display_.begin(), display_.end(), returnFrom_.begin());
  offsetsFromAnimation();
  exitOffsets_ = blend > 0.0;
  event(CharacterEventKind::Unpowered, "back to animation, pose error %.2f deg rms, %.3f m",
        rms * 180.0 / kPi, distance);
  return true;
}

void Character::Impl::leavePowered() {
  world_->removeSubstepListener(&listeners_);
  listeners_.clear();
  drive_->setEnabled(false);
  ragdoll_->releaseMotors(MotorOwner::Drive);
  if (pins_) pins_->setEnabled(false);
  // One write phase: every body kinematic on the animation, blocking, the capsule on, internal
  // collisions back to the asset's default (the next full ragdoll self-collides).
  ragdoll_->makeAnimated(/*blocking=*/true);
  ragdoll_->setInternalCollisions(true);
  // The bodies ease from where physics left them onto the animation, as offsets from the
  // animation of the step that left them there: those that followed it (a partial ragdoll's
  // kinematic bodies) start on it and keep moving with it.
  startApproach(animRoot_, animModels_);
  std::fill(bodyWeights_.begin(), bodyWeights_.end(), 0.0);
  std::fill(jointWeights_.begin(), jointWeights_.end(), 0.0);
  driveWeight_ = 0.0;
  state_ = CharacterState::Animated;
}

bool Character::Impl::poweredToRagdoll() {
  world_->removeSubstepListener(&listeners_);
  listeners_.clear();
  drive_->setEnabled(false);
  ragdoll_->releaseMotors(MotorOwner::Drive);
  if (pins_) pins_->setEnabled(false);
  // A full ragdoll self-collides (PuppetMaster switches internal collisions on at death): limbs
  // that passed into each other while powered stay apart from each other until they separate.
  ragdoll_->setInternalCollisions(true);
  // The bodies still animated join in, from the animated pose and velocities (one commit; with
  // none left it only records that the drives went off).
  for (size_t b = 0; b < physicsMask_.size(); ++b)
    physicsMask_[b] = ragdoll_->authority(static_cast<int>(b)) == Authority::Animation;
  HandoffRecord& record = newRecord();
  ragdoll_->commitBodies(settings_.handoff, physicsMask_, Authority::Physics, record);
  const bool ok = record.committed;
  if (!ok) {
    event(CharacterEventKind::Refused, "full ragdoll from powered: handoff abandoned: %s",
          record.failure.c_str());
  }
  recordCommit(record);
  std::fill(jointWeights_.begin(), jointWeights_.end(), 0.0);
  driveWeight_ = 0.0;
  if (!ok) {
    // Never some bodies dynamic and others animated without drives: all back to animation.
    leavePowered();
    return false;
  }
  ragdoll_->setDynamicAuthority(Authority::Physics);
  std::fill(bodyWeights_.begin(), bodyWeights_.end(), 1.0);
  enterRagdoll(animRoot_, 0.0);
  return true;
}

void Character::Impl::knockOut(double distance) {
  if (poweredToRagdoll()) {
    event(CharacterEventKind::Knockout, "a body is %.2f m from its animated pose (knock-out distance %.2f m)",
          distance, powered_.knockoutDistance);
  }
}

}  // namespace handoff
