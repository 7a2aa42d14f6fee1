// The per-character state machine (SPEC.md sections 3 and 4): Animated -> Ragdoll ->
// Recovering -> Animated, composed from the handoff, recovery and drive pieces. One authority
// per body at every step, and exactly one blocking representation (the dynamic limbs or the
// capsule).
//
// Per frame, with the game's animation pose for the end of the frame:
//
//   character.preStep(animation, dt);   // kinematic targets, recovery display
//   world.step(dt, substeps);
//   character.postStep(dt);             // write-back, settle, facing, transitions, display pose
//   render(character.displayRoot(), character.displayLocals());
//
// Thread-safety: a Character is used by the thread that steps its world.
#pragma once

#include "handoff/asset.h"
#include "handoff/drive.h"
#include "handoff/handoff.h"
#include "handoff/physics.h"
#include "handoff/recovery.h"
#include "handoff/result.h"
#include "handoff/rig.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace handoff {

enum class CharacterState : std::uint8_t {
  Animated,    ///< Bodies kinematic on the animation; capsule on.
  Ragdoll,     ///< Bodies dynamic; skeleton written back from physics; capsule off.
  Recovering,  ///< Display blends from the captured pose into a get-up clip; limbs kinematic and
               ///< non-blocking; capsule on.
};
const char* characterStateName(CharacterState state);

/// A get-up clip for the character's own skeleton (retarget other rigs' clips first, see
/// handoff::retargetClip) with its metadata.
struct GetUpClip {
  Clip clip;
  GetUpClipInfo info;
};

/// The pre-get-up gather: once the ragdoll has settled and the clip is chosen, the engine's
/// joint servos (the asset's drive gains, handoff::applyImplicitDrive) pull the still-dynamic
/// limbs toward the get-up clip's first frame, so the display transition that follows has little
/// left to blend and no limb is blended through the floor: the limbs move at physical speeds,
/// with contacts. The pelvis and the root placement are taken after the gather.
struct GatherSettings {
  /// How long the servos pull before the transition starts; 0 = no gather. [s] [>= 0] [default 0.6]
  double duration = 0.6;
  /// The drive weight ramps 0 -> 1 over this (stiffness and torque limit together). [s] [> 0] [default 0.2]
  double rampTime = 0.2;
  /// After `duration`, the servos hold on until every body is slower than this, so the
  /// transition starts from limbs at rest (no fast physics motion frozen into the blend). [m/s]
  /// [> 0] [default 0.3]
  double restSpeed = 0.3;
  /// The gather ends here whatever the speeds. [s] [>= duration] [default 1.5]
  double maxDuration = 1.5;
};

struct CharacterSettings {
  HandoffSettings handoff;
  SettleSettings settle;
  FacingSettings facing;
  /// Captured pose -> get-up clip blend: at least 0.25 s, longer when the pelvis or a foot would
  /// otherwise move faster than 1 m/s beyond the clip's own motion (planTransition).
  TransitionSettings transition;
  StandPlannerSettings stand;
  GatherSettings gather;
  /// Facing used when neither the pelvis projection nor the pre-fall forward is usable. [unit]
  Vec3 levelDefaultForward{0.0, 0.0, 1.0};
  /// After a delayed recovery (no standable spot), wait this long before trying again. [s]
  double recoveryRetryDelay = 0.5;
};

/// The game's animation pose for the end of the coming step.
struct AnimationInput {
  double time = 0.0;  ///< Animation time. [s] (strictly increasing)
  Transform worldFromRoot;
  std::span<const Transform> locals;  ///< parentFromJoint per joint.
  bool teleport = false;              ///< The root jumped since the last input (no velocity from it).
};

/// What a recovery decided, for tests, the report and debugging.
struct RecoveryRecord {
  double settleTime = 0.0;  ///< Simulation time when the settle window filled. [s]
  double startTime = 0.0;   ///< When the transition started. [s]
  Facing facing = Facing::Undecided;
  FacingSource facingSource = FacingSource::PelvisProjection;
  StandDecision standDecision = StandDecision::Stand;
  StandReason standReason = StandReason::Clear;
  double gatherTime = 0.0;  ///< Time the servos gathered the limbs before the transition. [s]
  int delays = 0;           ///< Attempts delayed for lack of a standable spot.
  Transform worldFromRoot;  ///< The root the character stands up on.
  /// The planned display transition (its duration adapts to how far the pelvis and feet must
  /// travel into the clip's first frame, TransitionSettings::maxPointSpeed).
  TransitionPlan transition;
  bool cancelled = false;
  bool finished = false;
};

struct CharacterEvent {
  double time = 0.0;
  std::string kind;  ///< "ragdoll", "settled", "getup", "delay", "cancel", "recovered", "impulse",
                     ///< "teleport", "refused"
  std::string detail;
};

/// Where to play `clip` from so that its first frame stands on `standingRoot`: the first frame's
/// pelvis projected on the ground lands on the root's origin and the clip's facing at that frame
/// (the pelvis's yaw away from its bind yaw, applied to `modelForward`) turns onto the root's
/// forward (standingRoot * modelForward). What a game does to resume its locomotion after a
/// get-up. Returns worldFromRoot for sampling `clip`.
Transform rootToStartClip(const Clip& clip, const Skeleton& skeleton, int pelvisJoint,
                          const Vec3& modelForward, const Transform& standingRoot);

class Character {
 public:
  /// Creates the character animated at `locals` (the bodies and capsule in `world`). Get-up
  /// clips are optional; without them the character stays a ragdoll.
  static Result<std::unique_ptr<Character>> create(
      PhysicsWorld& world, std::shared_ptr<const RagdollAsset> asset, const Skeleton& skeleton,
      const CharacterSettings& settings, const Transform& worldFromRoot, std::span<const Transform> locals);
  ~Character();

  void setGetUpClips(std::optional<GetUpClip> supine, std::optional<GetUpClip> prone);
  void setGetUpAllowed(bool allowed) { getUpAllowed_ = allowed; }

  /// Before the physics step. Refused input (NaN, time not advancing, dt <= 0) leaves the
  /// character in its previous valid state and is reported.
  Status preStep(const AnimationInput& animation, double dt);
  /// After the physics step.
  void postStep(double dt);

  /// Cut to ragdoll now (SPEC.md section 3 commit) from the last animation input.
  /// `denseSample`, when given, is the animation sampled shortly before the last input (its
  /// time between the last two inputs): the inherited velocities are then nearly instantaneous
  /// and the joints carry them without correction (see Ragdoll::addDenseSample).
  const HandoffRecord& goRagdoll(const AnimationInput* denseSample = nullptr);
  /// An impulse at a world point on a body. [N s] In Ragdoll it wakes the body and counts as an
  /// external-force event; during recovery it cancels the recovery first.
  Status applyImpulse(int body, const Vec3& impulse, const Vec3& worldPoint);

  CharacterState state() const { return state_; }
  double time() const { return time_; }  ///< Simulation time since creation. [s]
  const Ragdoll& ragdoll() const { return *ragdoll_; }
  Ragdoll& ragdoll() { return *ragdoll_; }
  const Skeleton& skeleton() const { return skeleton_; }
  const CharacterSettings& settings() const { return settings_; }
  const std::vector<HandoffRecord>& handoffs() const { return handoffs_; }
  const std::vector<RecoveryRecord>& recoveries() const { return recoveries_; }
  const std::vector<CharacterEvent>& events() const { return events_; }
  const SettleDetector& settle() const { return settle_; }
  const FacingClassifier& facing() const { return facing_; }

  /// What to render: the displayed skeleton (parentFromJoint) against displayRoot().
  std::span<const Transform> displayLocals() const { return display_; }
  const Transform& displayRoot() const { return displayRoot_; }
  /// Display blend weight: 0 animation, 1 physics (Ragdoll), transition weight (Recovering).
  double blendWeight() const { return blendWeight_; }
  /// True once after a recovery finished: the game resumes its animation from displayRoot().
  bool takeRecoveryFinished();

  /// Number of blocking representations active (dynamic enabled limbs count as one, the
  /// capsule as one). Exactly 1 at every step: the invariant tests check.
  int blockingRepresentations() const;

 private:
  Character(PhysicsWorld& world, std::shared_ptr<const RagdollAsset> asset, const Skeleton& skeleton,
            const CharacterSettings& settings);
  void event(const char* kind, std::string detail);
  void ragdollPostStep(double dt);
  void recoveringPreStep(double dt);
  void recoveringPostStep(double dt);
  bool tryStartRecovery(double dt);
  const GetUpClip* clipForFacing() const;
  void startGather(const GetUpClip& clip);
  void gatherPostStep(double dt);
  void stopGather();
  void cancelRecovery(const char* why);
  void worldBonesFromDisplay(const Transform& root, std::span<const Transform> locals,
                             std::span<Transform> out);

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
  std::vector<DriveJoint> driveJoints_;
  std::vector<JointId> engineJoints_;
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

  // Display and scratch.
  std::vector<Transform> display_, physicsLocals_, scratchModels_, bodyPoses_, worldBones_, animRelative_;
  Transform displayRoot_;
  double blendWeight_ = 0.0;

  std::vector<HandoffRecord> handoffs_;
  std::vector<RecoveryRecord> recoveries_;
  std::vector<CharacterEvent> events_;
};

}  // namespace handoff
