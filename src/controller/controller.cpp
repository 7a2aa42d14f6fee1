#include "handoff/controller.h"

#include "controller/controller_internal.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <limits>

namespace handoff {

const char* characterStateName(CharacterState state) {
  switch (state) {
    case CharacterState::Animated:
      return "animated";
    case CharacterState::Ragdoll:
      return "ragdoll";
    case CharacterState::Recovering:
      return "recovering";
    case CharacterState::Powered:
      return "powered";
  }
  return "?";
}

using controller_detail::format;
using controller_detail::horizontal;

Transform rootToStartClip(const Clip& clip, const Skeleton& skeleton, int pelvisJoint,
                          const Vec3& modelForward, const Transform& standingRoot, double clipTime) {
  std::vector<Transform> locals(static_cast<size_t>(skeleton.jointCount()));
  std::vector<Transform> models(locals.size()), bind(locals.size());
  clip.sample(clipTime, WrapMode::Clamp, locals);
  localToModel(skeleton, locals, models);
  localToModel(skeleton, skeleton.restLocal, bind);
  const Transform& pelvis = models[static_cast<size_t>(pelvisJoint)];
  const Quat turn = pelvis.rotation * glm::inverse(bind[static_cast<size_t>(pelvisJoint)].rotation);
  Vec3 clipForward = horizontal(turn * modelForward);
  const Vec3 forward = horizontal(modelForward);
  Quat yaw{1.0, 0.0, 0.0, 0.0};
  if (glm::length(clipForward) > 1e-6 && glm::length(forward) > 1e-6) {
    yaw = yawBetween(glm::normalize(forward), glm::normalize(clipForward));
  }
  const Transform clipRoot{yaw, Vec3{pelvis.translation.x, 0.0, pelvis.translation.z}};
  return standingRoot * clipRoot.inverse();
}

Quat lookAtLocalRotation(const Skeleton& skeleton, int joint, const Vec3& modelForward,
                         const Transform& worldFromParent, const Vec3& localTranslation,
                         const Vec3& worldTarget, const Quat& fallback) {
  const Vec3 up{0.0, 1.0, 0.0};
  const Vec3 toTarget = worldTarget - worldFromParent.transformPoint(localTranslation);
  const double distance = glm::length(toTarget);
  if (!(distance > 1e-9) || glm::length(glm::cross(toTarget / distance, up)) < 1e-6) return fallback;
  // The joint's bind-pose model rotation: its forward and up in joint space.
  Quat modelFromJoint{1.0, 0.0, 0.0, 0.0};
  for (int j = joint; j != kNoParent; j = skeleton.parents[static_cast<size_t>(j)])
    modelFromJoint = skeleton.restLocal[static_cast<size_t>(j)].rotation * modelFromJoint;
  const Vec3 forwardInJoint = glm::conjugate(modelFromJoint) * modelForward;
  const Vec3 upInJoint = glm::conjugate(modelFromJoint) * up;
  if (glm::length(glm::cross(forwardInJoint, upInJoint)) < 1e-6) return fallback;
  // worldFromJoint maps the joint's (forward, up) frame onto (toward the target, world up).
  const Quat worldFromJoint =
      glm::quatLookAt(toTarget / distance, up) * glm::conjugate(glm::quatLookAt(forwardInJoint, upInJoint));
  return normalizeOrIdentity(glm::conjugate(worldFromParent.rotation) * worldFromJoint);
}

Character::Character(PhysicsWorld& world, std::shared_ptr<const RagdollAsset> asset, const Skeleton& skeleton,
                     const CharacterSettings& settings)
    : world_(&world),
      asset_(std::move(asset)),
      skeleton_(skeleton),
      settings_(settings),
      settle_(settings.settle),
      facing_(settings.facing) {}

Character::~Character() {
  // Nothing of this character stays registered in the world it leaves.
  world_->removeSubstepListener(&listeners_);
  if (firstStepProbe_) world_->removeSubstepListener(&*firstStepProbe_);
  for (Prop& p : props_) {
    if (p.joint.valid()) world_->destroyJoint(p.joint);
    world_->destroyBody(p.body);
  }
}

void Character::recordCommit(HandoffRecord&& record) {
  const bool committed = record.committed;
  handoffs_.push_back(std::move(record));
  // The first step after a commit is recorded on its record (BodyHandoff::*AfterFirstStep and
  // *AfterFirstSubstep): a probe listens to that step's substeps; postStep reads it out. A
  // record pushed meanwhile moves the vector: the probe points at the newest committed one.
  const int pending = firstStepRecord_;
  if (firstStepProbe_) {
    world_->removeSubstepListener(&*firstStepProbe_);
    firstStepProbe_.reset();
  }
  firstStepRecord_ = committed ? static_cast<int>(handoffs_.size()) - 1 : pending;
  if (firstStepRecord_ >= 0) {
    firstStepProbe_.emplace(*ragdoll_, handoffs_[static_cast<size_t>(firstStepRecord_)]);
    world_->addSubstepListener(&*firstStepProbe_, /*first=*/true);
  }
}

void Character::recordFirstStep() {
  if (!firstStepProbe_) return;
  firstStepProbe_->finish();
  world_->removeSubstepListener(&*firstStepProbe_);
  firstStepProbe_.reset();
  ragdoll_->recordFirstStep(handoffs_[static_cast<size_t>(firstStepRecord_)]);
  firstStepRecord_ = -1;
}

Result<std::unique_ptr<Character>> Character::create(
    PhysicsWorld& world, std::shared_ptr<const RagdollAsset> asset, const Skeleton& skeleton,
    const CharacterSettings& settings, const Transform& worldFromRoot, std::span<const Transform> locals) {
  if (Status s = skeleton.validate(); !s) return Error{"skeleton: " + s.error()};
  if (!asset) return Error{"no ragdoll asset"};
  const size_t n = static_cast<size_t>(skeleton.jointCount());
  if (locals.size() != n) {
    return Error{"the initial pose has " + std::to_string(locals.size()) + " joints, the skeleton " +
                 std::to_string(n)};
  }
  if (std::isnan(settings.returnBodySpeed) || !(settings.returnBodySpeed > 0.0)) {
    return Error{"returnBodySpeed must be > 0 (+inf: the bodies follow the display blend)"};
  }
  if (Status s = validateLandingSettings(settings.landing); !s) return Error{s.error()};
  // Bones left to the animation (SPEC.md section 3's write-back mask), by name or by index.
  std::vector<std::uint8_t> writeBackMask(n, 1);
  const auto own = [&](int j, const std::string& how) -> Status {
    if (skeleton.parents[static_cast<size_t>(j)] == kNoParent) {
      return Error{"animationOwnedBones: " + how + " is the skeleton's root, which the physics pose is " +
                   "written against; it cannot be left to the animation"};
    }
    writeBackMask[static_cast<size_t>(j)] = 0;
    return {};
  };
  for (const std::string& name : settings.animationOwnedBones) {
    const auto it = std::find(skeleton.jointNames.begin(), skeleton.jointNames.end(), name);
    if (it == skeleton.jointNames.end()) return Error{"animationOwnedBones: no bone named '" + name + "'"};
    if (Status s = own(static_cast<int>(it - skeleton.jointNames.begin()), "'" + name + "'"); !s) {
      return Error{s.error()};
    }
  }
  for (int j : settings.animationOwnedJoints) {
    if (j < 0 || static_cast<size_t>(j) >= n) {
      return Error{"animationOwnedJoints: joint " + std::to_string(j) +
                   " is out of range (the skeleton has " + std::to_string(n) + " joints)"};
    }
    if (Status s =
            own(j, "joint " + std::to_string(j) + " ('" + skeleton.jointNames[static_cast<size_t>(j)] + "')");
        !s) {
      return Error{s.error()};
    }
  }
  std::unique_ptr<Character> c(new Character(world, asset, skeleton, settings));
  c->writeBackMask_ = std::move(writeBackMask);
  for (size_t j = 0; j < n; ++j) {
    if (c->writeBackMask_[j] == 0) c->ownedJoints_.push_back(static_cast<int>(j));
  }
  c->animLocals_.assign(locals.begin(), locals.end());
  c->animModels_.resize(n);
  localToModel(skeleton, c->animLocals_, c->animModels_);
  Result<std::unique_ptr<Ragdoll>> ragdoll =
      Ragdoll::create(world, asset, skeleton, worldFromRoot, c->animModels_);
  if (!ragdoll) return Error{ragdoll.error()};
  c->ragdoll_ = std::move(ragdoll).value();
  c->animRoot_ = worldFromRoot;
  c->display_ = c->animLocals_;
  c->displayRoot_ = worldFromRoot;
  c->physicsLocals_.resize(n);
  c->scratchModels_.resize(n);
  c->worldBones_.resize(n);
  c->animRelative_.resize(n);
  c->captured_.resize(n);
  c->bodyPoses_.resize(asset->bodies.size());
  c->transitionScratch_.resize(skeleton.jointCount());
  c->driveJoints_ = driveJointsFromAsset(*asset);
  c->bodyTargets_.resize(asset->bodies.size());
  c->jointTargets_.resize(asset->joints.size());
  c->driveWeights_.resize(asset->joints.size());
  // The points whose speed the get-up transition bounds: the pelvis and both feet (the foot
  // slot's joint, else the ankle below the lower leg).
  const HumanoidMap& map = asset->map;
  if (map[Slot::Pelvis] >= 0) c->trackedJoints_.push_back(map[Slot::Pelvis]);
  for (const auto& [foot, lowerLeg] :
       {std::pair{Slot::FootL, Slot::LowerLegL}, std::pair{Slot::FootR, Slot::LowerLegR}}) {
    if (map[foot] >= 0) {
      c->trackedJoints_.push_back(map[foot]);
    } else if (map[lowerLeg] >= 0) {
      const std::vector<int> below = skeleton.children(map[lowerLeg]);
      c->trackedJoints_.push_back(below.empty() ? map[lowerLeg] : below.front());
    }
  }
  // Landing: the rest pose's pelvis height above its lower foot, the foot and chest bodies.
  {
    std::vector<Transform> rest(n);
    localToModel(skeleton, skeleton.restLocal, rest);
    if (c->trackedJoints_.size() >= 2 && map[Slot::Pelvis] >= 0) {
      double lowest = std::numeric_limits<double>::infinity();
      for (size_t i = 1; i < c->trackedJoints_.size(); ++i) {
        lowest = std::min(lowest, rest[static_cast<size_t>(c->trackedJoints_[i])].translation.y);
        int j = c->trackedJoints_[i];
        while (j != kNoParent && asset->bodyForJoint(j) < 0) j = skeleton.parents[static_cast<size_t>(j)];
        const int body = j == kNoParent ? -1 : asset->bodyForJoint(j);
        if (body > 0) c->footBodies_.push_back(body);
      }
      c->restPelvisHeight_ = rest[static_cast<size_t>(map[Slot::Pelvis])].translation.y - lowest;
      c->restPelvisRotation_ = rest[static_cast<size_t>(map[Slot::Pelvis])].rotation;
    }
    c->chestBody_ = asset->bodyForSlot(Slot::Chest);
    if (c->chestBody_ <= 0) c->chestBody_ = asset->bodyForSlot(Slot::Head);
  }
  // Powered mode: the drive and its buffers, sized once.
  const size_t nb = asset->bodies.size();
  const size_t nj = c->driveJoints_.size();
  std::vector<BodyId> bodies(nb);
  for (size_t b = 0; b < nb; ++b) bodies[b] = c->ragdoll_->body(static_cast<int>(b));
  c->drive_ = std::make_unique<ExplicitDrive>(world, bodies, c->driveJoints_);
  c->drive_->setEnabled(false);
  c->bodyWeights_.assign(nb, 0.0);
  c->driveWeightsPerBody_.assign(nb, 1.0);
  c->jointWeights_.assign(nj, 0.0);
  c->targetBodies_.resize(nb);
  c->poweredTargets_.assign(nj, Quat{1.0, 0.0, 0.0, 0.0});
  c->limitedTargets_.assign(nj, Quat{1.0, 0.0, 0.0, 0.0});
  c->previousLimitedTargets_.assign(nj, Quat{1.0, 0.0, 0.0, 0.0});
  c->jointTargetVelocities_.assign(nj, Vec3{0.0});
  c->animBodies_.resize(nb);
  c->previousAnimBodies_.resize(nb);
  c->physicsMask_.assign(nb, 0);
  c->physicsJointMask_.assign(n, 0);
  c->jointBlend_.assign(n, 0.0);
  c->returnFrom_.resize(n);
  c->approachOffset_.assign(nb, Vec3{0.0});
  c->approachTurn_.assign(nb, Quat{1.0, 0.0, 0.0, 0.0});
  c->approachModels_.resize(n);
  c->approachAnim_.resize(nb);
  c->jumpCheck_.resize(nb);
  c->approachTargets_.resize(nb);
  for (const BodyDef& def : asset->bodies) {
    const ShapeDesc& shape = def.shape;
    double extent = 0.1;
    if (shape.type == ShapeType::Sphere) extent = shape.radius;
    if (shape.type == ShapeType::Capsule) extent = shape.halfHeight + shape.radius;
    if (shape.type == ShapeType::Box) extent = glm::length(shape.halfExtents);
    c->approachExtent_.push_back(std::max(extent, 0.01));
  }
  c->lastValidPoses_.resize(asset->bodies.size());
  c->ragdoll_->readBodyPoses(c->lastValidPoses_);
  return c;
}

void Character::setGetUpClips(std::optional<GetUpClip> supine, std::optional<GetUpClip> prone) {
  supine_ = std::move(supine);
  prone_ = std::move(prone);
}

void Character::event(const char* kind, std::string detail) {
  events_.push_back(CharacterEvent{time_, kind, std::move(detail)});
}

bool Character::takeRecoveryFinished() {
  const bool finished = recoveryFinished_;
  recoveryFinished_ = false;
  return finished;
}

int Character::blockingRepresentations() const {
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

// ---------------------------------------------------------------------------------------------
// Per step

Status Character::preStep(const AnimationInput& animation, double dt) {
  if (!(dt > 0.0) || !std::isfinite(dt)) return Error{"time step must be positive and finite"};
  const size_t n = static_cast<size_t>(skeleton_.jointCount());
  if (animation.locals.size() != n) {
    return Error{"animation pose has " + std::to_string(animation.locals.size()) + " joints, the skeleton " +
                 std::to_string(n)};
  }
  if (!isFinite(animation.worldFromRoot)) return Error{"animation root transform is not finite"};
  for (size_t j = 0; j < n; ++j) {
    if (!isFinite(animation.locals[j])) {
      event("refused", "joint '" + skeleton_.jointNames[j] + "' of the animation pose is not finite");
      return Error{"joint '" + skeleton_.jointNames[j] + "' of the animation pose is not finite"};
    }
  }
  if (haveAnimation_ && !(animation.time > animTime_)) {
    return Error{"animation time " + std::to_string(animation.time) + " s does not advance"};
  }
  switch (state_) {
    case CharacterState::Animated: {
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
      if (animation.teleport) event("teleport", "the animation root jumped");
      break;
    }
    case CharacterState::Ragdoll:
      break;
    case CharacterState::Recovering:
      recoveringPreStep(dt);
      break;
    case CharacterState::Powered: {
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
        break;
      }
      // Animated bodies of a partial ragdoll follow the animation; the history keeps every body's
      // animated pose so more bodies can go physical at any step.
      if (Status s = ragdoll_->setAnimatedPose(time_ + dt, animation.worldFromRoot, scratchModels_,
                                               animation.teleport, dt);
          !s) {
        return s;
      }
      break;
    }
  }
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

void Character::postStep(double dt) {
  time_ += dt;
  recordFirstStep();
  const int breaks = ragdoll_->updateBreaks(time_, dt);
  if (breaks > 0) recordBreaks(breaks);
  if (containPhysicsFault()) {
    externalForce_ = false;
    return;  // the display keeps the last valid pose
  }
  switch (state_) {
    case CharacterState::Animated:
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
    if (state_ == CharacterState::Powered && poweredToRagdoll()) event("knockout", "a joint broke");
  }
  propsPostStep();
  externalForce_ = false;
}

void Character::recordBreaks(int count) {
  const std::span<const JointBreak> all = ragdoll_->jointBreaks();
  for (size_t i = all.size() - static_cast<size_t>(count); i < all.size(); ++i) {
    const JointBreak& b = all[i];
    const JointDef& def = asset_->joints[static_cast<size_t>(b.joint)];
    event("break", "joint '" + def.name + "' " + format("at %.1f N, %.1f N m ", b.force, b.torque) +
                       format("(limits %g N, %g N m): stays a ragdoll", def.breakForce, def.breakTorque));
  }
}

bool Character::containPhysicsFault() {
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
  event("fault", "body '" + asset_->bodies[static_cast<size_t>(bad)].name +
                     "' became non-finite or left the world; reset to the last valid pose, at rest");
  return true;
}

// ---------------------------------------------------------------------------------------------
// Animated -> Ragdoll

const HandoffRecord& Character::goRagdoll(const AnimationInput* denseSample) {
  HandoffRecord record;
  if (state_ == CharacterState::Powered) {
    if (poweredToRagdoll()) event("ragdoll", "handoff from powered mode (drives off)");
    return handoffs_.back();
  }
  if (state_ == CharacterState::Ragdoll) {
    record.failure = "already a ragdoll";
  } else {
    if (denseSample && state_ == CharacterState::Animated && ragdoll_->history().size() > 0 &&
        denseSample->locals.size() == static_cast<size_t>(skeleton_.jointCount())) {
      // Map the animation time onto the history's simulation time.
      const double simTime = ragdoll_->history().time(0) - (animTime_ - denseSample->time);
      localToModel(skeleton_, denseSample->locals, scratchModels_);
      if (Status s = ragdoll_->addDenseSample(simTime, denseSample->worldFromRoot, scratchModels_); !s) {
        event("refused", "dense sample: " + s.error());
      }
    }
    record = ragdoll_->commit(settings_.handoff);
  }
  if (record.committed) {
    enterRagdoll(ragdoll_->history().size() > 0 ? ragdoll_->history().root(0) : animRoot_,
                 settings_.handoff.displayBlendTime);
    event("ragdoll", std::string("handoff (") + handoffModeName(record.mode) + ")");
  } else {
    event("refused", "handoff abandoned: " + record.failure);
  }
  recordCommit(std::move(record));
  return handoffs_.back();
}

void Character::setRagdollDampers(bool on) {
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

void Character::driveMotors(MotorOwner owner, std::span<const Quat> targets,
                            std::span<const Vec3> targetVelocities, std::span<const double> weights) {
  for (size_t j = 0; j < driveJoints_.size(); ++j) {
    (void)ragdoll_->setJointMotor(
        static_cast<int>(j), owner,
        implicitMotorSettings(driveJoints_[j], targets[j], weights.empty() ? 1.0 : weights[j],
                              targetVelocities.empty() ? Vec3{0.0} : targetVelocities[j]));
  }
}

void Character::enterRagdoll(const Transform& root, double blendTime) {
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

Status Character::applyImpulse(int body, const Vec3& impulse, const Vec3& worldPoint) {
  if (body < 0 || body >= ragdoll_->bodyCount()) return Error{"no body " + std::to_string(body)};
  if (!isFinite(impulse) || !isFinite(worldPoint)) return Error{"impulse or point is not finite"};
  if (state_ == CharacterState::Recovering) cancelRecovery("hit during the get-up transition");
  if (gathering_) {
    stopGather();
    event("gather", "stopped: hit");
  }
  if (state_ == CharacterState::Animated) {
    if (!settings_.hitReactionEnabled) {
      event("impulse", "ignored while animated (" + asset_->bodies[static_cast<size_t>(body)].name + ")");
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
  ragdoll_->applyImpulse(body, impulse, worldPoint);
  externalForce_ = true;
  event("impulse",
        format("%.0f N s on ", glm::length(impulse)) + asset_->bodies[static_cast<size_t>(body)].name);
  return {};
}

void Character::ragdollPostStep(double dt) {
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
    if (clip != nullptr && settings_.gather.duration > 0.0 && !gatherRolledOver_ && !wedged) {
      startGather(*clip);
    } else if (clip != nullptr) {
      // A gather that rolled the body over is not tried again for this fall: its servos lever
      // this body off the way it lies, and trying again would loop for ever. Nor is one tried
      // from the side. The display transition blends the limbs instead (planned at the speed
      // bound).
      if (wedged) {
        event("gather", format("skipped: settled on its side for %.2f s, ", sideWait_) +
                            facingName(facing_.candidate()) + " clip kept");
      } else if (gatherRolledOver_) {
        event("gather", "skipped: the last gather rolled the body over");
      }
      tryStartRecovery(dt);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Ragdoll: gathering the limbs toward the get-up clip's first frame

const GetUpClip* Character::clipForFacing(bool onItsSideToo) const {
  const Facing facing = facing_.candidate();
  if (facing == Facing::Undecided) return nullptr;
  if (facing_.inHoldBand() && !onItsSideToo) return nullptr;  // on the side: wait
  if (facing == Facing::Supine) return supine_ ? &*supine_ : nullptr;
  return prone_ ? &*prone_ : nullptr;
}

void Character::startGather(const GetUpClip& clip) {
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
    event("gather", std::string("refused: the joint motors are held by ") +
                        motorOwnerName(ragdoll_->motorOwner(0)));
    return;
  }
  driveMotors(MotorOwner::Gather, jointTargets_, {}, driveWeights_);
  event("gather",
        std::string(facingName(gatherFacing_)) + " clip: servos pull the limbs toward its first frame");
}

void Character::gatherPostStep(double dt) {
  gatherTime_ += dt;
  if (externalForce_ || !getUpAllowed_ || facing_.candidate() != gatherFacing_ || facing_.inHoldBand()) {
    stopGather();
    gatherRolledOver_ = !externalForce_ && getUpAllowed_;
    event("gather", externalForce_   ? "stopped: external force"
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

void Character::stopGather() {
  if (!gathering_) return;
  ragdoll_->releaseMotors(MotorOwner::Gather);
  gathering_ = false;
  if (state_ == CharacterState::Ragdoll) setRagdollDampers(true);  // back to the passive ragdoll
}

// ---------------------------------------------------------------------------------------------
// Ragdoll -> Recovering -> Animated

bool Character::tryStartRecovery(double dt) {
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
    event("delay", std::string("no standable spot (") + standReasonName(plan.reason) + "), retry in " +
                       format("%.2f s", settings_.recoveryRetryDelay));
    return false;
  }
  // Capture: every bone's fallen world transform, local to its parent, the root against the
  // NEW root, so weight 0 reproduces the fallen pose exactly wherever the root moved.
  worldBonesFromDisplay(ragdollRoot_, display_, worldBones_);
  if (!capturePose(skeleton_, worldBones_, plan.worldFromRoot, captured_)) return false;
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
  recoveries_.push_back(record);
  event("getup", std::string(facingName(facing)) + " get-up, yaw from " + facingSourceName(placement.source) +
                     ", " + standDecisionName(plan.decision) +
                     (plan.decision == StandDecision::Relocate
                          ? std::string(" (") + standReasonName(plan.proposedSpotReason) +
                                format(", moved %.2f m)", plan.relocationDistance)
                          : std::string()) +
                     format(", transition %.2f s (hold %.2f s, worst point %.2f m/s)",
                            transitionPlan_.duration, transitionPlan_.hold, transitionPlan_.worstPointSpeed));
  // Display at weight 0: the captured pose on the new root.
  std::copy(captured_.begin(), captured_.end(), display_.begin());
  displayRoot_ = recoveryRoot_;
  blendWeight_ = 0.0;
  return true;
}

void Character::recoveringPreStep(double dt) {
  // The display pose at the end of this step, followed by the kinematic, non-blocking limbs so
  // that a cancel has continuous velocity samples.
  transitionPose(captured_, getUp_->clip, skeleton_, getUp_->info, recoveryTime_ + dt, transitionPlan_,
                 physicsLocals_);
  keepAnimationOwned(physicsLocals_);
  localToModel(skeleton_, physicsLocals_, scratchModels_);
  (void)ragdoll_->setAnimatedPose(time_ + dt, recoveryRoot_, scratchModels_, false, dt);
  ragdoll_->moveCapsule(capsuleOnRoot(recoveryRoot_, asset_->capsule, settings_.stand.skin), dt);
}

void Character::recoveringPostStep(double dt) {
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
    event("recovered", format("stood up after %.2f s", recoveryTime_));
  }
}

double Character::recoveryClipTime() const { return transitionClipTime(recoveryTime_, transitionPlan_); }

void Character::startExitBlend() {
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
  if (t.maxPointSpeed > 0.0) duration = std::max(duration, farthest / t.maxPointSpeed);
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

void Character::carryWithRoot(const Transform& jump) {
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

void Character::offsetsFromAnimation() {
  for (size_t j = 0; j < returnFrom_.size(); ++j) {
    const Transform& from = returnFrom_[j];
    const Transform& anim = animLocals_[j];
    returnFrom_[j] = Transform{normalizeOrIdentity(from.rotation * glm::conjugate(anim.rotation)),
                               from.translation - anim.translation};
  }
}

void Character::startApproach(const Transform& worldFromRoot, std::span<const Transform> models) {
  bodyPosesFromModels(*asset_, models, worldFromRoot, approachAnim_);
  for (size_t b = 0; b < approachAnim_.size(); ++b) {
    const Transform current = world_->transform(ragdoll_->body(static_cast<int>(b)));
    approachOffset_[b] = current.translation - approachAnim_[b].translation;
    approachTurn_[b] = normalizeOrIdentity(current.rotation * glm::conjugate(approachAnim_[b].rotation));
  }
  approachStart_ = false;
  approaching_ = true;
}

void Character::approachBodies(const AnimationInput& animation, std::span<const Transform> models,
                               double dt) {
  localToModel(skeleton_, animation.locals, approachModels_);
  // After a get-up, from where the clip left the bodies, on this step's animation: the game
  // re-places its root where the character stood up.
  if (approachStart_) startApproach(animation.worldFromRoot, approachModels_);
  bodyPosesFromModels(*asset_, approachModels_, animation.worldFromRoot, approachAnim_);
  bodyPosesFromModels(*asset_, models, animation.worldFromRoot, approachTargets_);
  const double speed = settings_.returnBodySpeed;
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

double Character::blendBackPose(double blendTime, std::span<Transform> out) const {
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

void Character::cancelRecovery(const char* why) {
  if (state_ != CharacterState::Recovering) return;
  // The limbs have followed the displayed skeleton every step: commit from it.
  HandoffSettings settings = settings_.handoff;
  settings.mode = HandoffMode::Inherit;
  HandoffRecord record = ragdoll_->commit(settings);
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
    event("cancel", why);
  } else {
    event("refused", "cancel failed: " + record.failure);
  }
  recordCommit(std::move(record));
}

void Character::keepAnimationOwned(std::span<Transform> locals) const {
  for (int j : ownedJoints_) locals[static_cast<size_t>(j)] = animLocals_[static_cast<size_t>(j)];
}

void Character::worldBonesFromDisplay(const Transform& root, std::span<const Transform> locals,
                                      std::span<Transform> out) {
  localToModel(skeleton_, locals, scratchModels_);
  for (size_t j = 0; j < out.size(); ++j) out[j] = root * scratchModels_[j];
}

}  // namespace handoff
