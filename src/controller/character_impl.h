// Character::Impl: the character's whole state and its modes (SPEC.md sections 3 to 6). Not a
// public header: Character (character.cpp) forwards its public API here, so adding state changes
// no user's build. One file per mode with its enter / pre-step / post-step / exit (animated.cpp,
// ragdoll.cpp, gather.cpp, recovering.cpp, powered.cpp, landing.cpp, props.cpp); step.cpp is the
// dispatcher. The table of modes and transitions is in docs/ARCHITECTURE.md.
#pragma once

#include "handoff/controller.h"
#include "handoff/history.h"

#include "controller/controller_internal.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace handoff {

struct Character::Impl {
  Impl(PhysicsWorld& world, std::shared_ptr<const RagdollAsset> asset, const Skeleton& skeleton,
       const CharacterSettings& settings);
  ~Impl();
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // --- The public API (Character forwards each call) ---
  void setGetUpClips(std::optional<GetUpClip> supine, std::optional<GetUpClip> prone);
  void setGetUpAllowed(bool allowed) { getUpAllowed_ = allowed; }
  void setCapsuleOnlyWhileAnimated(bool on) { settings_.capsuleOnlyWhileAnimated = on; }
  void updateCapsuleOnly();
  Status preStep(const AnimationInput& animation, double dt);
  void postStep(double dt);
  int faultCount() const { return faults_; }
  const HandoffRecord& goRagdoll(const AnimationInput* denseSample = nullptr);
  Status goPowered(const PoweredSettings& settings);
  Status goPartial(std::span<const double> bodyWeights, double rampTime, PoweredSettings settings = {});
  Status goLimbLag(const LimbLagSettings& settings = {}, PoweredSettings powered = {});
  Status setBodyWeights(std::span<const double> bodyWeights, std::span<const double> driveWeights = {});
  Status goAnimated(double blendTime = 0.25);
  Status applyImpulse(int body, const Vec3& impulse, const Vec3& worldPoint);
  int impulseClampCount() const { return impulseClamps_; }
  Status knockBack(const Vec3& impulse);
  const History<FlightRecord>& flights() const { return flights_; }
  const History<LandingRecord>& landings() const { return landings_; }
  bool airborne() const;
  CharacterState state() const { return state_; }
  double time() const { return time_; }
  const Ragdoll& ragdoll() const { return *ragdoll_; }
  const Skeleton& skeleton() const { return skeleton_; }
  const CharacterSettings& settings() const { return settings_; }
  const History<HandoffRecord>& handoffs() const { return handoffs_; }
  const HandoffRecord& lastHandoff() const { return handoffs_.empty() ? noHandoff_ : handoffs_.latest(); }
  const History<RecoveryRecord>& recoveries() const { return recoveries_; }
  const History<CharacterEvent>& events() const { return events_; }
  std::span<const JointBreak> jointBreaks() const { return ragdoll_->jointBreaks(); }
  const SettleDetector& settle() const { return settle_; }
  const PoweredSettings& powered() const { return powered_; }
  double driveWeight() const { return driveWeight_; }
  double poweredRmsJointError() const { return rmsJointError_; }
  double poweredMaxJointError() const { return maxJointError_; }
  double poweredMaxPositionError() const { return maxPositionError_; }
  std::span<const double> bodyWeights() const { return bodyWeights_; }
  std::span<const double> jointDriveWeights() const { return jointWeights_; }
  const ExplicitDrive* explicitDrive() const { return drive_.get(); }
  const PinApplier* pins() const { return pins_; }
  const FacingClassifier& facing() const { return facing_; }
  std::span<const Transform> displayLocals() const { return display_; }
  const Transform& displayRoot() const { return displayRoot_; }
  double blendWeight() const { return blendWeight_; }
  bool takeRecoveryFinished();
  const GetUpClip* recoveryClip() const { return getUp_; }
  double recoveryClipTime() const;
  std::span<const int> trackedJoints() const { return trackedJoints_; }
  int blockingRepresentations() const;
  std::span<const int> animationOwnedJoints() const { return ownedJoints_; }
  Result<int> addProp(const PropDesc& desc);
  Status dropProp(int prop);
  Status grabProp(int prop);
  int propCount() const { return static_cast<int>(props_.size()); }
  const PropDesc& propDesc(int prop) const { return props_[static_cast<size_t>(prop)].desc; }
  BodyId propBody(int prop) const { return props_[static_cast<size_t>(prop)].body; }
  bool propHeld(int prop) const { return props_[static_cast<size_t>(prop)].held; }
  int propHandBody(int prop) const { return props_[static_cast<size_t>(prop)].handBody; }
  Transform handGrip(int prop) const;
  Transform propGrip(int prop) const;
  int propCollidingPairs(int prop) const;
  const History<PropRelease>& propReleases() const { return propReleases_; }

  // --- Modes and shared steps ---
  /// Records an event in place in the ring (printf-style detail, truncated to
  /// kEventDetailCapacity): allocates nothing.
  void event(CharacterEventKind kind, const char* format, ...) __attribute__((format(printf, 3, 4)));
  void recordBreaks(int count);  ///< "break" events for the last `count` joint breaks.
  /// The slot of the next commit's record (the newest in handoffs_ from now on): the commit
  /// writes into it in place.
  HandoffRecord& newRecord();
  /// After the commit into newRecord()'s slot: arms the first-step probe on it (a committed one).
  void recordCommit(HandoffRecord& record);
  /// After the step that followed a commit: its first-step figures into its record.
  void recordFirstStep();
  bool containPhysicsFault();
  /// Each state's own part of preStep / postStep (the dispatcher in step.cpp calls them).
  Status animatedPreStep(const AnimationInput& animation, double dt);
  void animatedPostStep(double dt);
  Status poweredPreStep(const AnimationInput& animation, double dt);
  void ragdollPostStep(double dt);
  void recoveringPreStep(double dt);
  void recoveringPostStep(double dt);
  void startExitBlend();
  /// Moves the dynamic bodies and held dynamic props rigidly by `jump` (new root from old root),
  /// their velocities turned with it.
  void carryWithRoot(const Transform& jump);
  /// returnFrom_ (poses on the animation's root) becomes each joint's offset from animLocals_:
  /// rotation from * inverse(anim), translation from - anim.
  void offsetsFromAnimation();
  /// The display of a blend back to animation `blendTime` into it: the offsets from the
  /// animation that the return left (the get-up clip's last frame, or the powered pose) fading
  /// out on the current animation, so that a moving animation keeps moving the display; returns
  /// the blend weight (1 physics or clip, 0 animation).
  double blendBackPose(double blendTime, std::span<Transform> out) const;
  /// The bodies' approach to the animation starts: their engine poses as offsets from the
  /// animation `models` on `worldFromRoot` (the pose they are to reach).
  void startApproach(const Transform& worldFromRoot, std::span<const Transform> models);
  /// Animated, after a return: the bodies' targets for the step, from `models` (the display the
  /// step ends on) eased at CharacterSettings::returnBodySpeed from the last engine poses.
  void approachBodies(const AnimationInput& animation, std::span<const Transform> models, double dt);
  bool tryStartRecovery(double dt);
  const GetUpClip* clipForFacing(bool onItsSideToo = false) const;
  void startGather(const GetUpClip& clip);
  void gatherPostStep(double dt);
  void stopGather();
  /// The chest brace's pin target for this step (gather.cpp).
  double updateBrace();  ///< Re-aims the brace; returns the chest's tip from where it settled [rad].
  /// Sets (on) or removes (off) the passive joint dampers of the full ragdoll (MotorOwner::Damper).
  void setRagdollDampers(bool on);
  /// The implicit servos toward `targets` (per joint) on the motors `owner` holds.
  void driveMotors(MotorOwner owner, std::span<const Quat> targets, std::span<const Vec3> targetVelocities,
                   std::span<const double> weights);
  void cancelRecovery(const char* why);
  void worldBonesFromDisplay(const Transform& root, std::span<const Transform> locals,
                             std::span<Transform> out);
  /// The animation-owned joints of `locals` (a pose of this skeleton) set to the animated locals.
  void keepAnimationOwned(std::span<Transform> locals) const;
  Status validatePowered(const PoweredSettings& settings) const;
  void poweredPostStep(double dt);
  void updateDriveTargets(double dt);
  bool tryReturnToAnimation();
  void knockOut(double distance);
  bool poweredToRagdoll();
  void leavePowered();
  void enterRagdoll(const Transform& root, double blendTime);
  /// Landing (landing.cpp): the flight and touch-down checks of this step, Ragdoll or Powered.
  enum class LandingStep : std::uint8_t { None, InFlight, Landed };
  LandingStep landingPostStep(double dt);
  bool touchingWorld(int body) const;
  bool tryLand();
  void resetFlight();
  /// Held props: kinematic on the hand's animated target while it is animated, dynamic with the
  /// hand's velocity once it is simulated (end of preStep).
  void propsPreStep();
  /// Switches a dropped prop's pairs with this character back on once apart (after postStep).
  void propsPostStep();
  void releaseProp(int prop, bool atDeath);
  void attachProp(int prop);

  struct Prop {
    PropDesc desc;
    BodyId body;
    JointId joint;
    int handBody = -1;
    Transform handBodyFromGrip;
    bool held = true;
    double movedAt = -1.0;  ///< History time of the last kinematic move. [s]
    /// Per ragdoll body, then the capsule: 1 while the pair's collision is off.
    std::vector<std::uint8_t> pairOff;
  };
  std::vector<Prop> props_;
  History<PropRelease> propReleases_;
  std::vector<ShapeDesc> pairShapes_;  ///< Each body's shape, then the capsule's.

  PhysicsWorld* world_;
  std::shared_ptr<const RagdollAsset> asset_;
  Skeleton skeleton_;
  CharacterSettings settings_;
  std::unique_ptr<Ragdoll> ragdoll_;
  CharacterState state_ = CharacterState::Animated;
  double time_ = 0.0;
  bool getUpAllowed_ = true;
  std::optional<GetUpClip> supine_, prone_;

  // Animation input (copied: the caller's spans need not outlive the call).
  std::vector<Transform> animLocals_, animModels_;
  Transform animRoot_;
  double animTime_ = 0.0;
  bool haveAnimation_ = false;

  // Ragdoll.
  Transform ragdollRoot_;  ///< Root the physics pose is written back against (frozen at commit).
  double timeSinceCommit_ = 0.0;
  double blendTime_ = 0.0;
  int pendingDelays_ = 0;
  Vec3 preFallForward_{0.0, 0.0, 1.0};
  bool externalForce_ = false;
  double retryAt_ = 0.0;
  SettleDetector settle_;
  FacingClassifier facing_;

  // Gather (Ragdoll, servos pulling toward the chosen clip's first frame).
  bool gathering_ = false;
  double gatherTime_ = 0.0;
  Facing gatherFacing_ = Facing::Undecided;
  bool gatherRolledOver_ = false;  ///< This fall's gather rolled the body over: no gather again.
  bool gatherUnrested_ = false;    ///< This fall's gather did not come to rest: no gather again.
  /// The joints' targets move from the settled pose (gatherFrom_) to the clip's first frame
  /// (gatherTo_) over gatherPath_ seconds (gather.cpp). [s]
  std::vector<Quat> gatherFrom_, gatherTo_;
  double gatherPath_ = 0.0;
  bool gatherBrace_ = false;  ///< The chest brace (a pin in listeners_) is on.
  Vec3 braceOutward_{0.0};    ///< The chest-outward axis the brace holds (world, unit).
  double sideWait_ = 0.0;     ///< Time settled on its side (facing hold band). [s]
  std::vector<DriveJoint> driveJoints_;
  std::vector<Quat> bodyTargets_, jointTargets_;
  std::vector<double> driveWeights_;

  // Recovering.
  const GetUpClip* getUp_ = nullptr;
  Transform recoveryRoot_;
  std::vector<Transform> captured_;
  double recoveryTime_ = 0.0;
  double recoveryAnimTime_ = 0.0;
  TransitionPlan transitionPlan_;
  TransitionScratch transitionScratch_;
  std::vector<int> trackedJoints_;  ///< Pelvis and feet: the points the transition plan bounds.
  bool recoveryFinished_ = false;

  // Powered.
  PoweredSettings powered_;
  std::unique_ptr<ExplicitDrive> drive_;
  /// The pins while powered with any (nullptr: none): pinStore_, made by Character::create with
  /// room for a pin on every body and reset in place by powered mode and the gather's brace.
  PinApplier* pins_ = nullptr;
  std::unique_ptr<PinApplier> pinStore_;
  /// goPowered's scratch (storage kept across entries).
  std::vector<double> poweredWeights_, poweredDrives_, limbWeights_;
  /// Per body, the impulse taken through applyImpulse since the last postStep
  /// (CharacterSettings::maxSpeedChangePerStep), and the clamps so far.
  std::vector<Vec3> stepImpulse_;
  int impulseClamps_ = 0;
  PoweredSettings partialSettings_;  ///< goPartial's settings with the weights.
  std::vector<PoweredPin> poweredPins_;
  std::vector<BodyId> pinBodies_;
  std::vector<PinGains> pinGains_;
  SubstepListenerList listeners_;
  std::vector<double> bodyWeights_, driveWeightsPerBody_, jointWeights_;
  std::vector<Quat> targetBodies_, poweredTargets_;
  /// The targets within the joint limits (locked axes as the animation's), now and one step ago:
  /// the target velocities are their rate (updateDriveTargets).
  std::vector<Quat> limitedTargets_, previousLimitedTargets_;
  std::vector<Vec3> jointTargetVelocities_;
  std::vector<Transform> animBodies_, previousAnimBodies_;
  std::vector<std::uint8_t> physicsMask_, physicsJointMask_;
  std::vector<double> jointBlend_;
  double driveWeight_ = 0.0, rampStartWeight_ = 0.0, poweredTime_ = 0.0, settledFor_ = 0.0;
  double rmsJointError_ = 0.0, maxJointError_ = 0.0, maxPositionError_ = 0.0;
  bool haveJointTargets_ = false, returning_ = false, blocked_ = false;
  double returnBlendTime_ = 0.25;
  // Physics -> animation display blend after leaving powered mode.
  std::vector<Transform> returnFrom_;
  double returnBlend_ = 0.0, returnBlendTotal_ = 0.0;
  // Get-up -> animation display blend: returnFrom_ holds the clip's last frame on exitRoot_
  // until the first animated step turns it into per-joint offsets from the animation.
  Transform exitRoot_;
  bool exitPending_ = false, exitOffsets_ = false;

  // Back to animation: the bodies ease onto it (approachBodies). Per body, its world offset and
  // turn from the animated pose, the rate the turn may change, and the targets.
  bool approaching_ = false, approachStart_ = false;
  std::vector<Vec3> approachOffset_;
  std::vector<Quat> approachTurn_;
  std::vector<double> approachExtent_;  ///< Centre of mass to the farthest point of the shape. [m]
  std::vector<Transform> approachModels_, approachAnim_, approachTargets_;
  std::vector<Transform> jumpCheck_;  ///< Powered: the body poses of the new animation, before they move.

  // Display and scratch.
  // Animation-owned bones: their joints, and per joint 1 = written back from its body (if any).
  std::vector<int> ownedJoints_;
  std::vector<std::uint8_t> writeBackMask_;

  std::vector<Transform> display_, physicsLocals_, scratchModels_, bodyPoses_, worldBones_, animRelative_;
  Transform displayRoot_;
  double blendWeight_ = 0.0;

  // Fault containment: every body's pose after the last valid step.
  std::vector<Transform> lastValidPoses_;
  int faults_ = 0;

  History<HandoffRecord> handoffs_;
  HandoffRecord noHandoff_;                          ///< lastHandoff() before the first commit.
  std::optional<FirstSubstepProbe> firstStepProbe_;  ///< Listening to the step after a commit.
  /// The record it fills (sequence number in handoffs_; -1: none).
  std::int64_t firstStepRecord_ = -1;
  History<RecoveryRecord> recoveries_;
  // Landing: time without touching the world, the pending touch-down, the rest pose's pelvis
  // height above the lower foot, the foot and chest bodies.
  double airTime_ = 0.0, touchdownAt_ = -1.0, restPelvisHeight_ = 0.0;
  double flightStart_ = 0.0, flightSpin_ = 0.0;
  Vec3 pelvisAirStart_{0.0};
  bool exitFromLanding_ = false;  ///< The pending exit blend leaves a landing, not a get-up.
  std::vector<int> footBodies_;
  int chestBody_ = -1;
  Quat restPelvisRotation_{1.0, 0.0, 0.0, 0.0};  ///< Pelvis bone's rest-pose model rotation.
  History<FlightRecord> flights_;
  History<LandingRecord> landings_;
  History<CharacterEvent> events_;
};

}  // namespace handoff
