// Physics -> animation recovery (get up), SPEC.md section 4: the engine-agnostic pieces.
//
//   settle detector -> facing classifier -> get-up clip (metadata T_RB, a_B) -> root placement
//   -> stand planner (capsule query through PhysicsWorld) -> pose capture -> display transition
//
// plus completion of get-up clips that end below standing and retargeting of get-up clips between
// humanoid rigs (prepareGetUpClips does both and the metadata). The controller that switches authority
// (limbs kinematic and non-blocking, capsule on) and the cancel path build on these.
//
// Frames (SPEC.md section 1): W world, R character root (on the ground, yaw only, Up = +Y),
// B bone (here the pelvis). Variables are named xFromY for T_XY.
//
// Get-up clip root. A BVH get-up clip usually has the pelvis as its root joint, keyed in the
// clip's own frame ("clip space", ground at y = groundHeight). The library defines the clip's
// character root R as the ground projection of the pelvis at the clip's LAST frame (where the
// character stands), with R's model forward axis turned onto the standing forward at that frame
// (yaw only). So the standing character ends exactly at its root, facing the root's forward, as
// an animated character does; `rootFromClip` re-expresses the clip in R, and T_RB is the pelvis's
// transform in R at frame 0.
//
// Standing forward a_B. The direction, in the pelvis frame of frame 0, that becomes the
// character's forward when it has stood up: the standing forward of the last frame (a unit
// horizontal vector in clip space) expressed in the frame-0 pelvis frame,
// a_B = inverse(R_clip,pelvis(0)) * F_last. It carries the yaw change of the whole clip. At run
// time, with R_WR * R_RB = R_WB (the fallen pelvis lying as the clip starts),
// R_WB * a_B = R_WR * R_RB * a_B = R_WR * forwardInRoot exactly: projecting it on the ground gives
// the root's yaw. For the supine DeepMimic clip a_B points from the pelvis toward the feet (sit
// up, stand over the feet), for the prone one toward the head (push up, stand where the head
// lay): horizontal for a body lying on its back or front, so the projection is well defined.
//
// Thread-safety: every type here is plain per-character state or immutable data; the functions
// are pure. Functions marked [step-safe] neither allocate nor throw.
#pragma once

#include "handoff/asset.h"
#include "handoff/math.h"
#include "handoff/physics.h"
#include "handoff/result.h"
#include "handoff/rig.h"

#include <cstdint>
#include <span>
#include <vector>

namespace handoff {

/// World up of the recovery (SPEC.md section 4: Up = +Y).
inline constexpr Vec3 kRecoveryUp{0.0, 1.0, 0.0};

// ------------------------------------------------------------------------------------------
// Settle detector
// ------------------------------------------------------------------------------------------

struct SettleSettings {
  /// Continuous time all conditions must hold. [s] [> 0] [default 0.5]
  double window = 0.5;
  /// Pelvis speed below which the body counts as still (strictly below). [m/s] [> 0] [default 0.1]
  double maxLinearSpeed = 0.1;
  /// Pelvis angular speed below which it counts as still. [rad/s] [> 0] [default 0.2]
  double maxAngularSpeed = 0.2;
  bool operator==(const SettleSettings&) const = default;
};

/// Why the window was last restarted (for plots and logs).
enum class SettleReset : std::uint8_t {
  None,           ///< Not restarted since construction or reset().
  LinearSpeed,    ///< Pelvis speed at or above maxLinearSpeed.
  AngularSpeed,   ///< Pelvis angular speed at or above maxAngularSpeed.
  ExternalForce,  ///< An external-force event (hit, push, explosion) in this update.
};
const char* settleResetName(SettleReset reset);

struct SettleUpdate {
  /// False when the input was rejected (dt <= 0 or not finite, or a non-finite vector): the
  /// detector's state is unchanged and the other fields report that unchanged state.
  bool accepted = true;
  bool settled = false;       ///< The window is full: propose a recovery (never skip the space check).
  double timeInWindow = 0.0;  ///< Time all conditions have held so far. [s]
  SettleReset lastReset = SettleReset::None;
};

/// SPEC.md section 4 "settled": for a continuous window, pelvis speed < 0.1 m/s, angular speed
/// < 0.2 rad/s and no external-force event. Every external-force event restarts the window, so
/// a sustained force (an event every step, or any event within the last window) prevents
/// settling. Each update covers the `dt` before it: 30 quiet updates of 1/60 s fill 0.5 s.
/// [step-safe] Thread-safety: per character, one thread at a time.
class SettleDetector {
 public:
  explicit SettleDetector(const SettleSettings& settings = {});

  /// Invalid settings (a non-positive or non-finite value) are reported here; a detector with
  /// invalid settings rejects every update.
  static Status validate(const SettleSettings& settings);

  SettleUpdate update(double dt, const Vec3& pelvisLinearVelocity, const Vec3& pelvisAngularVelocity,
                      bool externalForce);

  bool settled() const { return settled_; }
  double timeInWindow() const { return timeInWindow_; }
  SettleReset lastReset() const { return lastReset_; }
  const SettleSettings& settings() const { return settings_; }
  /// Empties the window (e.g. when the ragdoll starts).
  void reset();

 private:
  SettleUpdate report(bool accepted) const;

  SettleSettings settings_;
  bool settingsValid_ = true;
  double timeInWindow_ = 0.0;
  bool settled_ = false;
  SettleReset lastReset_ = SettleReset::None;
};

// ------------------------------------------------------------------------------------------
// Facing classifier (supine / prone) with a hold band
// ------------------------------------------------------------------------------------------

enum class Facing : std::uint8_t {
  Undecided,  ///< No choice yet (on the side since the start): wait.
  Supine,     ///< On the back: chest outward axis points up. Supine (face-up) get-up.
  Prone,      ///< On the front: chest outward axis points down. Prone (face-down) get-up.
};
const char* facingName(Facing facing);

struct FacingSettings {
  /// dot(chest outward, Up) above this: supine. [-1, 1] [default 0.2]
  double supineAbove = 0.2;
  /// dot below this: prone. [-1, 1] [< supineAbove] [default -0.2]
  double proneBelow = -0.2;
};

struct FacingUpdate {
  bool accepted = true;  ///< False for a non-finite input; state unchanged.
  Facing candidate = Facing::Undecided;
  /// The dot is inside the hold band (lying on the side): the candidate is kept but the
  /// controller should wait before starting a get-up.
  bool inHoldBand = false;
  double chestUpDot = 0.0;  ///< The last accepted dot. [-1, 1]
  /// A candidate exists and the body is not on its side: the get-up clip may be chosen.
  bool ready() const { return accepted && candidate != Facing::Undecided && !inHoldBand; }
};

/// World chest-outward axis: worldFromChestBody.rotation * chestForwardInBody (the asset's
/// calibrated axis, RagdollAsset::chestForwardInBody), normalised. [step-safe]
Vec3 chestOutwardInWorld(const Quat& worldFromChestBodyRotation, const Vec3& chestForwardInBody);

/// SPEC.md section 4 supine or prone: dot > 0.2 -> Supine, < -0.2 -> Prone, in between keep
/// the current candidate and wait. The candidate only changes when the dot crosses the
/// opposite threshold, so noise around one threshold never flips the choice (the ALS-Refactored
/// 180 degree flicker, fixed there the same way). [step-safe] Thread-safety: per character, one
/// thread at a time.
class FacingClassifier {
 public:
  explicit FacingClassifier(const FacingSettings& settings = {});
  static Status validate(const FacingSettings& settings);

  /// From the dot of the world chest-outward axis with Up.
  FacingUpdate update(double chestUpDot);
  /// From the chest body's world rotation and the asset's chest-outward axis in body space.
  FacingUpdate update(const Quat& worldFromChestBodyRotation, const Vec3& chestForwardInBody);

  Facing candidate() const { return candidate_; }
  bool inHoldBand() const { return inHoldBand_; }
  void reset();

 private:
  FacingSettings settings_;
  bool settingsValid_ = true;
  Facing candidate_ = Facing::Undecided;
  bool inHoldBand_ = true;
  double lastDot_ = 0.0;
};

// ------------------------------------------------------------------------------------------
// Get-up clip metadata
// ------------------------------------------------------------------------------------------

/// What completeGetUpClip measured and did. Heights are the pelvis above the lowest point of
/// either leg (joints and end sites), so a reference pose needs no floor of its own.
struct GetUpCompletion {
  bool tailAdded = false;
  /// Standing reference's pelvis height above its feet minus the clip's at its last frame
  /// (> 0: the clip ends low). [m]
  double shortfall = 0.0;
  double endHipHeight = 0.0;        ///< The clip's last frame, pelvis above its feet. [m]
  double referenceHipHeight = 0.0;  ///< The standing reference, the same. [m]
  double endKneeBend = 0.0;         ///< The more bent knee at the clip's last frame. [rad]
  double referenceKneeBend = 0.0;   ///< The more bent knee of the reference. [rad]
  /// Vertical pelvis speed over the clip's last 0.1 s (> 0 rising). [m/s]
  double endRiseSpeed = 0.0;
  double tailDuration = 0.0;  ///< Time appended (0: no tail). [s]
  int tailFrames = 0;         ///< Frames appended at the clip's frame rate.
  /// Fastest move of the pelvis or a foot point (joints and end sites under each foot) between two
  /// frames of the tail (the clip's last frame included), divided by the frame time. [m/s]
  double worstTailSpeed = 0.0;
  /// False when maxDuration was reached with worstTailSpeed above maxPointSpeed.
  bool boundMet = true;
};

struct GetUpClipOptions {
  /// Height of the clip's floor in clip space (BVH files: 0). [m] [default 0]
  double groundHeight = 0.0;
  /// The character's forward in model space at bind; zero = derived from the humanoid map
  /// (Up x (right hip - left hip), projected on the ground). [unit or zero] [default 0]
  Vec3 modelForward{0.0};
};

/// What the library stores per get-up clip (SPEC.md section 4).
struct GetUpClipInfo {
  int pelvisJoint = -1;  ///< Skeleton joint of the pelvis slot.
  /// Clip space -> root space R (see the header comment); apply to the clip's top-level joints.
  Transform rootFromClip;
  /// T_RB: the pelvis's model transform (root space R) at frame 0. [m]
  Transform rootFromPelvis;
  /// a_B: the standing forward in the frame-0 pelvis frame. [unit]
  Vec3 standingForwardInPelvis{0.0, 0.0, 1.0};
  /// The character's forward in R (its bind model forward, horizontal). [unit]
  Vec3 forwardInRoot{0.0, 0.0, 1.0};
  /// dot(chest outward, Up) at frame 0 (> 0.2 a supine get-up, < -0.2 a prone one). [-1, 1]
  double startChestUpDot = 0.0;
  /// Facing the clip starts from, classified with the SPEC thresholds.
  Facing startFacing = Facing::Undecided;
  /// Pelvis height above the floor at the last frame (the clip's standing hip height). [m]
  double endPelvisHeight = 0.0;
  /// Horizontal distance from the frame-0 pelvis to the root: how far the get-up travels. [m]
  double travel = 0.0;
  /// The completion tail appended to the source clip (completeGetUpClip), measured on the
  /// source rig; tailAdded = false when the clip stood at its end, or completion was off or not
  /// run (computeGetUpClipInfo alone leaves this default; prepareGetUpClips fills it).
  GetUpCompletion completion;
};

/// Character forward in model space at bind, from the humanoid map: Up x (UpperLegR - UpperLegL),
/// projected on the ground and normalised. Errors name the missing slots or a degenerate rig.
Result<Vec3> modelForwardFromMap(const Skeleton& skeleton, const HumanoidMap& map);

/// Computes GetUpClipInfo for a clip of `skeleton` (pelvis, chest and both upper legs must be
/// mapped). Errors name the clip and the reason (invalid clip, unmapped slot, a clip that does
/// not end standing: pelvis more than 45 degrees from upright at the last frame).
Result<GetUpClipInfo> computeGetUpClipInfo(const Clip& clip, const Skeleton& skeleton, const HumanoidMap& map,
                                           const GetUpClipOptions& options = {});

/// Samples the get-up clip at `clipTime` (clamped) re-expressed in its root space R: the
/// top-level joints' transforms are premultiplied by rootFromClip. `locals` has jointCount
/// elements. [step-safe]
void sampleGetUpInRoot(const Clip& clip, const Skeleton& skeleton, const GetUpClipInfo& info, double clipTime,
                       std::span<Transform> locals);

// ------------------------------------------------------------------------------------------
// Root placement
// ------------------------------------------------------------------------------------------

/// Which forward the root's yaw came from (SPEC.md section 4 fallbacks).
enum class FacingSource : std::uint8_t {
  PelvisProjection,  ///< R_WB * a_B projected on the ground.
  PreFallForward,    ///< Degenerate projection: the horizontal forward recorded before the fall.
  LevelDefault,      ///< Both invalid: the level's default facing.
  WorldAxes,         ///< The level default was invalid too: R_WR = identity (reported, never silent).
};
const char* facingSourceName(FacingSource source);

struct RootPlacementSettings {
  /// A projected forward shorter than this is degenerate. [unit] [default 1e-3]
  double minProjectionLength = 1e-3;
};

struct RootPlacement {
  bool valid = false;  ///< False when worldFromPelvis is not finite (nothing else is filled).
  Transform worldFromRoot;
  Vec3 worldForward{0.0, 0.0, 1.0};  ///< The standing forward on the ground. [unit]
  FacingSource source = FacingSource::PelvisProjection;
  double projectionLength = 0.0;  ///< |horizontal part of R_WB * a_B| before normalising. [0, 1]
};

/// Root yaw from the projection of R_WB * a_B on the ground, with the two fallbacks; R_WR is
/// yaw only (turns info.forwardInRoot onto the forward about Up); p_WR = p_WB - R_WR * p_RB.
/// `preFallForward` and `levelDefaultForward` are projected too; invalid ones (non-finite or
/// vertical) are skipped. [step-safe]
RootPlacement placeRoot(const Transform& worldFromPelvis, const GetUpClipInfo& info,
                        const Vec3& preFallForward, const Vec3& levelDefaultForward,
                        const RootPlacementSettings& settings = {});

/// Yaw-only rotation turning horizontal `fromForward` onto horizontal `toForward` about Up
/// (a proper half turn about Up for opposite vectors). [step-safe]
Quat yawBetween(const Vec3& fromForward, const Vec3& toForward);

// ------------------------------------------------------------------------------------------
// Stand planner: a standable spot for the character capsule
// ------------------------------------------------------------------------------------------

struct StandPlannerSettings {
  /// The ground ray starts this far above the proposed root... [m] [>= 0] [default 0.5]
  double probeAbove = 0.5;
  /// ...and ends this far below it. [m] [> 0] [default 1.0]
  double probeBelow = 1.0;
  /// Steepest standable ground. [rad] [0, pi/2) [default 0.785 = 45 deg]
  double maxSlope = 0.785398163397448;
  /// Gap kept between the capsule's bottom and the ground during the overlap test. [m] [default 0.02]
  double skin = 0.02;
  /// Relocation candidates: rings around the proposed root, `ringCount` rings of
  /// `candidatesPerRing` points, ring k at k * ringSpacing. [>= 0] [default 3 x 8 at 0.15 m]
  int ringCount = 3;
  int candidatesPerRing = 8;
  double ringSpacing = 0.15;  ///< [m] [> 0] [default 0.15]
  /// What the ground ray hits and what blocks the capsule. [default layers::kStatic]
  std::uint32_t groundMask = layers::kStatic;
  std::uint32_t blockMask = layers::kStatic;
};

enum class StandDecision : std::uint8_t {
  Stand,     ///< The proposed spot (height snapped to the ground) is free.
  Relocate,  ///< The proposed spot is blocked; a free nearby spot was found.
  Delay,     ///< No free spot: delay the recovery (or try the other clip).
};
const char* standDecisionName(StandDecision decision);

enum class StandReason : std::uint8_t {
  Clear,             ///< Proposed spot free.
  CapsuleBlocked,    ///< The capsule overlaps static geometry at the proposed spot.
  NoGround,          ///< No ground within reach under the proposed spot.
  GroundTooSteep,    ///< The ground under the proposed spot is steeper than maxSlope.
  NoFreeSpotNearby,  ///< Delay: every candidate was blocked, unreachable, steep or groundless.
  Unreachable,       ///< A ray from the fallen pelvis to the spot hits static geometry (a wall between).
  InvalidInput,      ///< Non-finite root or invalid settings.
};
const char* standReasonName(StandReason reason);

struct StandPlan {
  StandDecision decision = StandDecision::Delay;
  /// Stand: Clear. Relocate: why the proposed spot was rejected. Delay: NoFreeSpotNearby or
  /// InvalidInput.
  StandReason reason = StandReason::InvalidInput;
  /// Why the proposed spot itself was rejected (Clear when it was not).
  StandReason proposedSpotReason = StandReason::InvalidInput;
  /// The root to stand on (Stand, Relocate); for Delay the proposed root unchanged.
  Transform worldFromRoot;
  double groundHeight = 0.0;        ///< Height of the ground found under the chosen root. [m]
  Vec3 groundNormal{0.0};           ///< Its normal. [unit]
  double relocationDistance = 0.0;  ///< Horizontal distance from the proposed root. [m]
  int candidatesTested = 0;         ///< Spots tested, the proposed one included.
  bool ok() const { return decision != StandDecision::Delay; }
};

/// Capsule of the character standing on `worldFromRoot`: axis +Y, bottom `skin` above the root.
Transform capsuleOnRoot(const Transform& worldFromRoot, const CapsuleDef& capsule, double skin);

/// Finds a standable spot for the character capsule at or near `proposedRoot` (from placeRoot):
/// a ray down finds the floor (height snapped, slope checked), a ray from `reachFrom` (the
/// fallen pelvis, a point known to be free) must reach the spot without crossing `blockMask`
/// geometry, and the capsule must not overlap `blockMask` geometry. When the proposed spot
/// fails, rings of nearby candidates are tried, nearest ring first and, within a ring, nearest
/// to `reachFrom` first. The yaw is kept. A relocation moves the root only: the pose captured
/// relative to the new root carries the offset, which the display transition blends away (a
/// 0.3 m move over 0.25 s is about 2 cm per 60 Hz frame). [step-safe: only PhysicsWorld queries]
StandPlan planStand(const PhysicsWorld& world, const Transform& proposedRoot, const Vec3& reachFrom,
                    const CapsuleDef& capsule, const StandPlannerSettings& settings = {});

// ------------------------------------------------------------------------------------------
// Pose capture and display transition
// ------------------------------------------------------------------------------------------

/// Converts world transforms of every bone (after write-back) into a local pose: joints with a
/// parent take inverse(worldFromParent) * worldFromBone; top-level joints take
/// inverse(worldFromRoot) * worldFromBone with the NEW root. Then
/// worldFromRoot * model(locals) reproduces `worldFromBones` exactly. Returns false (and leaves
/// `locals` unchanged) when any input is not finite. Spans have jointCount elements. [step-safe]
bool capturePose(const Skeleton& skeleton, std::span<const Transform> worldFromBones,
                 const Transform& worldFromRoot, std::span<Transform> locals);

struct TransitionSettings {
  /// Display blend from the captured pose to the get-up clip, and the shortest transition a
  /// planned one takes (planTransition). [s] [> 0, sensible 0.2-0.35] [default 0.25]
  double duration = 0.25;
  /// Speed bound of the tracked points (pelvis and feet) beyond the get-up clip's own motion:
  /// planTransition lengthens the transition until no tracked point moves faster than this
  /// between two frames. 0 = a fixed `duration`. [m/s] [>= 0] [default 1.0: 1.7 cm per 60 Hz
  /// frame]
  double maxPointSpeed = 1.0;
  /// Longest planned transition; a pose too far from the clip's first frame for the speed bound
  /// within it blends over this and reports boundMet = false. [s] [>= duration] [default 3.0]
  double maxDuration = 3.0;
  bool operator==(const TransitionSettings&) const = default;
};

/// A transition planned for one captured pose. The weight runs 0 -> 1 over `duration`. The
/// get-up clip holds its first frame for `hold` = duration - TransitionSettings::duration, then
/// plays: B(t) = clip(max(0, t - hold)). With hold = 0 this is SPEC.md section 4's transition
/// exactly; a longer one first brings the fallen limbs to the clip's first frame at a bounded
/// speed, then blends the last TransitionSettings::duration while the clip starts.
struct TransitionPlan {
  double duration = 0.25;  ///< [s]
  double hold = 0.0;       ///< [s]
  /// Worst per-frame move of a tracked point beyond the clip's own move over the same frame,
  /// divided by the frame time, over the planned frames. [m/s]
  double worstPointSpeed = 0.0;
  int worstJoint = -1;   ///< The tracked joint that moves fastest (-1: none measured).
  bool boundMet = true;  ///< False when maxDuration was reached with worstPointSpeed above the bound.
  /// The fixed transition of `settings.duration` (no hold, nothing measured).
  static TransitionPlan fixed(const TransitionSettings& settings);
};

/// Blend weight at `time` since the start of the transition: clamp(time / duration, 0, 1).
double transitionWeight(double time, const TransitionSettings& settings);
double transitionWeight(double time, const TransitionPlan& plan);
/// Time in the get-up clip at `time` since the start of the transition: max(0, time - hold).
double transitionClipTime(double time, const TransitionPlan& plan);

/// Display pose at `time` since the transition started: the get-up clip sampled at `time` in
/// root space (B(t)), blended from the captured pose A with transitionWeight (lerp translations,
/// short-arc slerp rotations; handoff::blendPoses). `out` has jointCount elements and may alias
/// nothing else. [step-safe]
void transitionPose(std::span<const Transform> captured, const Clip& clip, const Skeleton& skeleton,
                    const GetUpClipInfo& info, double time, const TransitionSettings& settings,
                    std::span<Transform> out);
/// The same for a planned transition: B = clip(transitionClipTime(time)). [step-safe]
void transitionPose(std::span<const Transform> captured, const Clip& clip, const Skeleton& skeleton,
                    const GetUpClipInfo& info, double time, const TransitionPlan& plan,
                    std::span<Transform> out);

/// Scratch poses for planTransition, sized once per character (resize allocates).
struct TransitionScratch {
  std::vector<Transform> pose, models, clipPose, clipModels;
  void resize(int jointCount);
};

/// At most this many tracked joints in planTransition.
inline constexpr int kMaxTrackedJoints = 8;

/// Plans the transition from `captured` into the get-up clip for frames of `dt`: the shortest
/// duration >= settings.duration (up to maxDuration) for which, on every frame, each tracked
/// joint (model positions; the pelvis and the feet in the controller) moves at most
/// maxPointSpeed * dt further than the clip itself moves it over that frame. It evaluates the
/// display pose frame by frame (as the controller will show it), lengthening the transition in
/// proportion to the worst excess. Invalid settings or input give the fixed plan.
/// [step-safe once `scratch` is sized for the skeleton]
TransitionPlan planTransition(std::span<const Transform> captured, const Clip& clip, const Skeleton& skeleton,
                              const GetUpClipInfo& info, std::span<const int> trackedJoints, double dt,
                              const TransitionSettings& settings, TransitionScratch& scratch);

// ------------------------------------------------------------------------------------------
// Retargeting through the humanoid map
// ------------------------------------------------------------------------------------------

struct RetargetOptions {
  /// Scale of root motion and pelvis height; 0 = ratio of the rigs' standing hip heights (pelvis
  /// above the lowest foot point in each rig's reference pose, see retargetClip). [> 0 or 0]
  /// [default 0]
  double hipHeightRatio = 0.0;
  /// Turn each target slot's bind bone direction onto the source's before applying the source's
  /// deltas, so rigs with different bind poses (T vs A pose, splayed CMU legs) end in the same
  /// posture. The pelvis and the feet (flat at bind in every rig) are never turned. [default true]
  bool alignBindDirections = true;
  /// Forwards at bind in each rig's model space; zero = modelForwardFromMap. [unit or zero] [default 0]
  Vec3 sourceModelForward{0.0};
  Vec3 targetModelForward{0.0};
};

struct RetargetReport {
  double hipHeightRatio = 0.0;   ///< The ratio used.
  double sourceHipHeight = 0.0;  ///< Source reference pose: pelvis above its lowest foot point. [m]
  double targetHipHeight = 0.0;  ///< Target reference pose, the same. [m]
  Quat targetFromSourceModel{1.0, 0.0, 0.0,
                             0.0};  ///< Yaw turning the source's model forward onto the target's.
  int mappedSlots = 0;              ///< Slots mapped in both rigs (rotations transferred).
};

/// Maps a clip of `sourceSkeleton` onto `targetSkeleton` through both humanoid maps (as Unity's
/// humanoid retargeting or Jolt's SkeletonMapper): for each slot mapped in both, the target's
/// model-space rotation is the source's model-space delta from its bind (conjugated into the
/// target's model frame) applied to the target's reference rotation (its bind, with the bone
/// direction turned onto the source's bind direction when alignBindDirections). Unmapped joints
/// keep their rest local transform. The pelvis position (root motion and height above the
/// floor y = 0) is scaled by the hip height ratio. The result is in the target's model frame
/// (its forward), keyed at the source's frame rate. Errors name the unmapped required slots.
Result<Clip> retargetClip(const Clip& source, const Skeleton& sourceSkeleton, const HumanoidMap& sourceMap,
                          const Skeleton& targetSkeleton, const HumanoidMap& targetMap,
                          const RetargetOptions& options = {}, RetargetReport* report = nullptr);

// ------------------------------------------------------------------------------------------
// Completing get-up clips that end below standing, and preparing a character's get-up clips
// ------------------------------------------------------------------------------------------
//
// Many get-up clips stop before the character is fully upright (games blend their tail into an
// idle): they end with the knees bent and the pelvis still rising (DeepMimic's face-up clip does;
// docs/TUNING.md has its figures). Played to its end such a clip leaves the character crouching, and a
// retarget carries the crouch to every rig. completeGetUpClip appends a tail to such a clip that
// eases its last frame into a standing reference pose of the same skeleton, so the get-up really
// ends standing (on the source rig, and so after retargeting).

struct GetUpCompletionSettings {
  /// Add a tail to clips that end short; false returns every clip unchanged (the report still
  /// measures). [default true]
  bool enabled = true;
  /// A shortfall (GetUpCompletion::shortfall) at or below this is standing. [m] [>= 0] [default 0.01]
  double heightTolerance = 0.01;
  /// A last-frame knee bend at most this much beyond the reference's is standing.
  /// [rad] [>= 0] [default 0.1745 = 10 degrees]
  double kneeTolerance = 0.174532925199433;
  /// Shortest tail. [s] [> 0] [default 0.3]
  double minDuration = 0.3;
  /// Longest tail; a tail that needs more to keep maxPointSpeed reports boundMet = false. [s]
  /// [>= minDuration] [default 3.0]
  double maxDuration = 3.0;
  /// Fastest the pelvis and the foot points may move in the tail. [m/s] [> 0] [default 1.0: 1.7 cm
  /// per 60 Hz frame, the same bound as TransitionSettings::maxPointSpeed]
  double maxPointSpeed = 1.0;
  /// The pelvis rises no faster than the clip was rising at its end (measured over its last
  /// 0.1 s), and never slower than this when the clip ends still. [m/s] [> 0] [default 0.1]
  double minRiseSpeed = 0.1;
};

/// Validates settings: errors name the field.
Status validateGetUpCompletionSettings(const GetUpCompletionSettings& settings);

/// Appends a completion tail to a get-up clip that ends below standing. "Below standing": the
/// pelvis above the lowest leg point (joints and end sites from either upper leg down) at the last
/// frame is more than heightTolerance under the same measure of `standingLocals`, or the more
/// bent knee (thigh to shin) is more than kneeTolerance beyond the reference's. The tail eases
/// the last frame into the reference (weight 1 - (1 - s)^2: the motion starts at the tail's pace
/// and comes to rest standing; lerp translations, short-arc slerp rotations) placed under the
/// last frame: the reference keeps its joint rotations, its pelvis is turned (yaw only) onto the
/// last frame's standing forward, keeps the last frame's horizontal pelvis position, and its
/// lowest leg point lands at the height of the last frame's (the pelvis rises to the
/// reference's height above the feet). Duration: at least minDuration; at least twice the
/// shortfall over the clip's final rise speed (the ease starts at twice its mean speed, so the
/// pelvis starts no faster than the clip was rising); then lengthened until no tracked point
/// (pelvis, joints and end sites under either foot) moves faster than maxPointSpeed between
/// two frames, up to maxDuration; rounded up to whole frames of the clip's rate. The clip's own
/// frames are kept bit-identical; a clip that stands (or settings.enabled = false) is returned
/// unchanged. `standingLocals`: a local pose of `skeleton` standing upright (e.g. the last frame
/// of a get-up clip of the same rig that ends standing, see standingReferenceClip). Errors name
/// the clip and the reason (invalid clip or reference, unmapped slot, invalid settings, a
/// reference or last frame whose pelvis is more than 45 degrees from upright).
Result<Clip> completeGetUpClip(const Clip& clip, const Skeleton& skeleton, const HumanoidMap& map,
                               std::span<const Transform> standingLocals,
                               const GetUpCompletionSettings& settings = {},
                               GetUpCompletion* report = nullptr);

/// Of several get-up clips of one skeleton, the index of the one whose last frame stands tallest
/// (pelvis highest above its lowest leg point): the natural standing reference of the others
/// (for the DeepMimic pair, the face-down clip). Errors name the clip that is invalid.
Result<int> standingReferenceClip(std::span<const Clip> clips, const Skeleton& skeleton,
                                  const HumanoidMap& map);

/// A get-up clip for a character's own skeleton (retarget other rigs' clips first, see
/// retargetClip, or use prepareGetUpClips) with its metadata.
struct GetUpClip {
  Clip clip;
  GetUpClipInfo info;
};

struct GetUpPrepareOptions {
  GetUpCompletionSettings completion;
  /// The standing reference on the source skeleton; empty = the last frame of
  /// standingReferenceClip among the clips prepared together.
  std::vector<Transform> standingLocals;
  RetargetOptions retarget;
  GetUpClipOptions info;
};

/// A character's get-up clips from clips of one source rig (e.g. the supine and the prone
/// one): each is completed on the source rig (completeGetUpClip against the standing
/// reference), retargeted onto the target when the rigs differ (different joint names or
/// parents), and given its GetUpClipInfo with the completion report. Same order as
/// `sourceClips`. Errors name the clip.
Result<std::vector<GetUpClip>> prepareGetUpClips(std::span<const Clip> sourceClips,
                                                 const Skeleton& sourceSkeleton, const HumanoidMap& sourceMap,
                                                 const Skeleton& targetSkeleton, const HumanoidMap& targetMap,
                                                 const GetUpPrepareOptions& options = {});

}  // namespace handoff
