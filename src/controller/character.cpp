// Character: the stable public face of the state machine (controller.h). Every call goes to
// Character::Impl (character_impl.h); nothing here holds state.
#include "controller/character_impl.h"
#include "handoff/asset.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace handoff {

using controller_detail::horizontal;

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

const char* eventKindName(CharacterEventKind kind) {
  switch (kind) {
    case CharacterEventKind::Ragdoll:
      return "ragdoll";
    case CharacterEventKind::Gather:
      return "gather";
    case CharacterEventKind::GetUp:
      return "getup";
    case CharacterEventKind::Delay:
      return "delay";
    case CharacterEventKind::Cancel:
      return "cancel";
    case CharacterEventKind::Recovered:
      return "recovered";
    case CharacterEventKind::Impulse:
      return "impulse";
    case CharacterEventKind::Teleport:
      return "teleport";
    case CharacterEventKind::Refused:
      return "refused";
    case CharacterEventKind::Powered:
      return "powered";
    case CharacterEventKind::Partial:
      return "partial";
    case CharacterEventKind::Knockout:
      return "knockout";
    case CharacterEventKind::Blocked:
      return "blocked";
    case CharacterEventKind::Unpowered:
      return "unpowered";
    case CharacterEventKind::Fault:
      return "fault";
    case CharacterEventKind::Break:
      return "break";
    case CharacterEventKind::Knockback:
      return "knockback";
    case CharacterEventKind::Touchdown:
      return "touchdown";
    case CharacterEventKind::Landed:
      return "landed";
    case CharacterEventKind::Grab:
      return "grab";
    case CharacterEventKind::Drop:
      return "drop";
  }
  return "?";
}

std::string describeEvent(const CharacterEvent& event) {
  return std::string(eventKindName(event.kind)) + ": " + event.detail;
}

Status validateHistorySettings(const HistorySettings& settings) {
  const std::pair<const char*, std::size_t> sizes[] = {
      {"events", settings.events},         {"handoffs", settings.handoffs},
      {"recoveries", settings.recoveries}, {"flights", settings.flights},
      {"landings", settings.landings},     {"propReleases", settings.propReleases}};
  for (const auto& [name, size] : sizes) {
    if (size < 1)
      return Error{std::string("history.") + name + " must be >= 1 (the ring keeps the newest items)"};
  }
  return {};
}

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

Result<std::unique_ptr<Character>> Character::create(
    PhysicsWorld& world, std::shared_ptr<const RagdollAsset> asset, const Skeleton& skeleton,
    const CharacterSettings& settings, const Transform& worldFromRoot, std::span<const Transform> locals) {
  if (Status s = skeleton.validate(); !s) return Error{"skeleton: " + s.error()};
  if (!asset) return Error{"no ragdoll asset"};
  // Masses first: its message names the field and the range a designer's slider left.
  if (Status s = validateMassRange(*asset); !s) return Error{s.error()};
  // A broken asset (a joint cycle, an index out of range, a mass of 1e308 kg) is refused here, not
  // thrown out of the world at the first step.
  if (const std::vector<Finding> found = validateRagdollStructure(*asset, &skeleton); hasErrors(found)) {
    std::string message = "ragdoll asset:";
    for (const Finding& f : found) {
      if (f.severity == Finding::Severity::Error) message += " " + f.message + ";";
    }
    message.pop_back();
    return Error{message};
  }
  const size_t n = static_cast<size_t>(skeleton.jointCount());
  if (locals.size() != n) {
    return Error{"the initial pose has " + std::to_string(locals.size()) + " joints, the skeleton " +
                 std::to_string(n)};
  }
  if (std::isnan(settings.maxSpeedChangePerStep) || !(settings.maxSpeedChangePerStep > 0.0)) {
    return Error{"maxSpeedChangePerStep must be > 0 (+inf: no bound)"};
  }
  if (std::isnan(settings.returnBodySpeed) || !(settings.returnBodySpeed > 0.0)) {
    return Error{"returnBodySpeed must be > 0 (+inf: the bodies follow the display blend)"};
  }
  if (Status s = validateLandingSettings(settings.landing); !s) return Error{s.error()};
  if (Status s = validateHistorySettings(settings.history); !s) return Error{s.error()};
  if (Status s = validateGatherSettings(settings.gather); !s) return Error{s.error()};
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
  auto c = std::make_unique<Impl>(world, asset, skeleton, settings);
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
  c->gatherFrom_.resize(asset->joints.size());
  c->gatherTo_.resize(asset->joints.size());
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
  // The pins (powered mode's, the gather's chest brace) made here with room for a pin on every
  // body, reset in place on use: a character's first powered entry or gather, an hour into the
  // game, allocates nothing (Soak.TwoMinutes saw 6 allocations appear in minute 2 when it was
  // made on first use).
  c->pinStore_ = std::make_unique<PinApplier>(world, bodies, std::vector<PinGains>(nb));
  c->pinStore_->setEnabled(false);
  c->pinBodies_.reserve(nb);
  c->pinGains_.reserve(nb);
  c->poweredPins_.reserve(nb);
  // The powered, partial and limb-lag scratch too, per body: copy-assigned settings reuse it. A
  // character's first limb lag in minute 2 of the soak allocated 3 that stayed (double Bullet).
  for (std::vector<double>* v :
       {&c->poweredWeights_, &c->poweredDrives_, &c->limbWeights_, &c->partialSettings_.bodyWeights,
        &c->partialSettings_.driveWeights, &c->powered_.bodyWeights, &c->powered_.driveWeights}) {
    v->reserve(nb);
  }
  c->powered_.pins.reserve(nb);
  c->partialSettings_.pins.reserve(nb);
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
  Ragdoll& made = *c->ragdoll_;
  std::unique_ptr<Character> character(new Character(std::move(c)));
  made.setUser(character.get());  // characterBodyInfo finds the character from its bodies
  return character;
}

Character::Character(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Character::~Character() = default;

void Character::setGetUpClips(std::optional<GetUpClip> supine, std::optional<GetUpClip> prone) {
  impl_->setGetUpClips(supine, prone);
}
void Character::setGetUpAllowed(bool allowed) { impl_->setGetUpAllowed(allowed); }
void Character::setCapsuleOnlyWhileAnimated(bool on) { impl_->setCapsuleOnlyWhileAnimated(on); }
bool Character::capsuleOnly() const { return impl_->ragdoll().capsuleOnly(); }
Status Character::preStep(const AnimationInput& animation, double dt) {
  return impl_->preStep(animation, dt);
}
void Character::postStep(double dt) { impl_->postStep(dt); }
int Character::faultCount() const { return impl_->faultCount(); }
const HandoffRecord& Character::goRagdoll(const AnimationInput* denseSample) {
  return impl_->goRagdoll(denseSample);
}
Status Character::goPowered(const PoweredSettings& settings) { return impl_->goPowered(settings); }
Status Character::goPartial(std::span<const double> bodyWeights, double rampTime, PoweredSettings settings) {
  return impl_->goPartial(bodyWeights, rampTime, settings);
}
Status Character::goLimbLag(const LimbLagSettings& settings, PoweredSettings powered) {
  return impl_->goLimbLag(settings, powered);
}
Status Character::setBodyWeights(std::span<const double> bodyWeights, std::span<const double> driveWeights) {
  return impl_->setBodyWeights(bodyWeights, driveWeights);
}
Status Character::goAnimated(double blendTime) { return impl_->goAnimated(blendTime); }
Status Character::applyImpulse(int body, const Vec3& impulse, const Vec3& worldPoint) {
  return impl_->applyImpulse(body, impulse, worldPoint);
}
Status Character::knockBack(const Vec3& impulse) { return impl_->knockBack(impulse); }
const History<FlightRecord>& Character::flights() const { return impl_->flights(); }
const History<LandingRecord>& Character::landings() const { return impl_->landings(); }
bool Character::airborne() const { return impl_->airborne(); }
CharacterState Character::state() const { return impl_->state(); }
double Character::time() const { return impl_->time(); }
const Ragdoll& Character::ragdoll() const { return impl_->ragdoll(); }
const Skeleton& Character::skeleton() const { return impl_->skeleton(); }
const CharacterSettings& Character::settings() const { return impl_->settings(); }
const History<HandoffRecord>& Character::handoffs() const { return impl_->handoffs(); }
int Character::impulseClampCount() const { return impl_->impulseClampCount(); }
const HandoffRecord& Character::lastHandoff() const { return impl_->lastHandoff(); }
const History<RecoveryRecord>& Character::recoveries() const { return impl_->recoveries(); }
const History<CharacterEvent>& Character::events() const { return impl_->events(); }
std::span<const JointBreak> Character::jointBreaks() const { return impl_->jointBreaks(); }
const SettleDetector& Character::settle() const { return impl_->settle(); }
const PoweredSettings& Character::powered() const { return impl_->powered(); }
double Character::driveWeight() const { return impl_->driveWeight(); }
double Character::poweredRmsJointError() const { return impl_->poweredRmsJointError(); }
double Character::poweredMaxJointError() const { return impl_->poweredMaxJointError(); }
double Character::poweredMaxPositionError() const { return impl_->poweredMaxPositionError(); }
std::span<const double> Character::bodyWeights() const { return impl_->bodyWeights(); }
std::span<const double> Character::jointDriveWeights() const { return impl_->jointDriveWeights(); }
const ExplicitDrive* Character::explicitDrive() const { return impl_->explicitDrive(); }
const PinApplier* Character::pins() const { return impl_->pins(); }
const FacingClassifier& Character::facing() const { return impl_->facing(); }
std::span<const Transform> Character::displayLocals() const { return impl_->displayLocals(); }
const Transform& Character::displayRoot() const { return impl_->displayRoot(); }
double Character::blendWeight() const { return impl_->blendWeight(); }
bool Character::takeRecoveryFinished() { return impl_->takeRecoveryFinished(); }
const GetUpClip* Character::recoveryClip() const { return impl_->recoveryClip(); }
double Character::recoveryClipTime() const { return impl_->recoveryClipTime(); }
std::span<const int> Character::trackedJoints() const { return impl_->trackedJoints(); }
int Character::blockingRepresentations() const { return impl_->blockingRepresentations(); }
std::span<const int> Character::animationOwnedJoints() const { return impl_->animationOwnedJoints(); }
Result<int> Character::addProp(const PropDesc& desc) { return impl_->addProp(desc); }
Status Character::dropProp(int prop) { return impl_->dropProp(prop); }
Status Character::grabProp(int prop) { return impl_->grabProp(prop); }
int Character::propCount() const { return impl_->propCount(); }
const PropDesc& Character::propDesc(int prop) const { return impl_->propDesc(prop); }
BodyId Character::propBody(int prop) const { return impl_->propBody(prop); }
bool Character::propHeld(int prop) const { return impl_->propHeld(prop); }
int Character::propHandBody(int prop) const { return impl_->propHandBody(prop); }
Transform Character::handGrip(int prop) const { return impl_->handGrip(prop); }
Transform Character::propGrip(int prop) const { return impl_->propGrip(prop); }
int Character::propCollidingPairs(int prop) const { return impl_->propCollidingPairs(prop); }
const History<PropRelease>& Character::propReleases() const { return impl_->propReleases(); }

CharacterBodyInfo characterBodyInfo(const PhysicsWorld& world, BodyId body) {
  CharacterBodyInfo info;
  info.part = ragdollBodyInfo(world, body);
  if (info.part.ragdoll != nullptr) info.character = static_cast<const Character*>(info.part.ragdoll->user());
  return info;
}

}  // namespace handoff
