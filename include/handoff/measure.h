// Measures of a character's run (the `measure` module): small observers fed frame by frame
// with the Character, its world and the frame's animation input, each filling one of the
// metrics structs below. The scenario runner measures its runs with them (runner.h) and tests
// measure their own scenes with the same code.
//
// The frame they expect, in this order:
//
//   character.preStep(animation, dt);
//   handoffMeasure.beforeStep(world, character);        // the first step after a commit only
//   world.step(dt, substeps);
//   handoffMeasure.afterStep(world, character, dt, metrics);
//   character.postStep(dt);
//   follow.observe(character, time, metrics);            // and hit, recovery, display, powered
//
// Units: SI (m, s, m/s, N s, kg), radians. Thread-safety: a measure is used by the thread that
// steps the character it observes; separate measures are independent.
#pragma once

#include "handoff/controller.h"
#include "handoff/handoff.h"
#include "handoff/physics.h"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace handoff {

/// One body at one handoff (SPEC section 7: before vs after the handoff step).
struct BodyHandoffMetrics {
  std::string name;
  /// Handed to physics by this commit. False: a partial ragdoll's body that stays kinematic on the
  /// animation (it moves as the animation does, by construction): left out of the first-step
  /// figures (pop, velocity) and of the follow-up's speed bound.
  bool handedOver = true;
  double positionJump = 0.0;   ///< |committed pose - animated pose| (the pop at the commit). [m]
  double firstStepMove = 0.0;  ///< |pose after the first step - animated pose|. [m]
  /// |v_anim| dt + |g| dt^2 + HandoffRecord::depenetrationSpeed dt. [m]
  double allowedMove = 0.0;
  Vec3 animatedVelocity{0.0};    ///< The animation's velocity at the handoff (SPEC section 3). [m/s]
  Vec3 inheritedLinear{0.0};     ///< Given to the engine. [m/s]
  Vec3 inheritedAngular{0.0};    ///< [rad/s]
  Vec3 postStepLinear{0.0};      ///< After the first physics step. [m/s]
  Vec3 postStepAngular{0.0};     ///< [rad/s]
  double velocityChange = 0.0;   ///< |postStepLinear - animatedVelocity|. [m/s]
  double velocityAllowed = 0.0;  ///< 5 % |v_anim| + |g| dt. [m/s]
  bool inContact = false;        ///< Touching the world after the first step (velocity check skipped).
  /// After the whole first frame, against the inherited velocity plus the joints' rigid-body
  /// change over it (HandoffMetrics::worstFrameVelocityExcess):
  Vec3 rigidChange{0.0};  ///< rigidJointVelocityChange. [m/s]
  /// |postStepLinear - (inheritedLinear + g dt + rigidChange)|. [m/s]
  double frameVelocityChange = 0.0;
  double frameVelocityAllowed = 0.0;  ///< 5 % |inheritedLinear| + |g| dt. [m/s]
  /// After the first substep of that step (the engine's first integration step, h):
  Vec3 postSubstepLinear{0.0};  ///< [m/s]
  /// |postSubstepLinear - (inheritedLinear + g h)|: the change beyond free fall. [m/s]
  double substepVelocityChange = 0.0;
  double substepVelocityAllowed = 0.0;  ///< 5 % |inheritedLinear| + |g| h. [m/s]
  std::string clamps;                   ///< clampReasonText of the inherited velocity.
  bool teleport = false;
  bool snapped = false;
};

/// One handoff of a run and what followed it.
/// A handoff spins when the bodies handed over, taken as one rigid body, turn at least this fast
/// (half a turn a second): only then does handoff.no_explosion_2s allow a body the rigid motion's
/// speed (HandoffMetrics::worstSpeedExcess). A running character turns at about 1.4 rad/s as one
/// body, a pirouette at 8-12. [rad/s]
inline constexpr double kSpinningRate = 3.141592653589793;

struct HandoffMetrics {
  /// "handoff" (a `ragdoll` event: full ragdoll) or "powered" (a `powered` or `partial` event,
  /// or an `impulse` while animated, the hit reaction: the bodies with a physics weight go
  /// dynamic under drives); names the checks' capability.
  std::string kind = "handoff";
  double time = 0.0;  ///< Scenario time of the commit. [s]
  std::string mode;   ///< "inherit", "naive_zero_velocity", "naive_bind_pose".
  bool committed = false;
  std::string failure;
  bool teleportFlagged = false;
  bool teleportDetected = false;
  double rootJump = 0.0;            ///< [m]
  double sampleDt = 0.0;            ///< [s]
  double depenetrationSpeed = 0.0;  ///< HandoffRecord::depenetrationSpeed. [m/s]
  std::vector<BodyHandoffMetrics> bodies;
  double maxPositionJump = 0.0;      ///< [m]
  double maxFirstStepMove = 0.0;     ///< [m]
  double worstPopExcess = 0.0;       ///< max(firstStepMove - allowedMove). [m]
  double maxVelocityChange = 0.0;    ///< Over bodies not in contact. [m/s]
  double worstVelocityExcess = 0.0;  ///< max(velocityChange - velocityAllowed), bodies not in contact. [m/s]
  int bodiesInContact = 0;
  /// The same criterion after the first substep (h = substepTime), against the inherited
  /// velocity: what the joints did to what the commit handed over, before the bodies' own
  /// motion over the step turns it (SPEC section 7's velocity check; docs/TUNING.md).
  double substepTime = 0.0;                 ///< [s]
  double maxSubstepVelocityChange = 0.0;    ///< Over bodies not in contact. [m/s]
  double worstSubstepVelocityExcess = 0.0;  ///< max(substepVelocityChange - substepVelocityAllowed). [m/s]
  /// The same criterion after the whole first frame (dt), against the inherited velocity carried
  /// over the frame by exact rigid-body dynamics: gravity and what the jointed ragdoll's own motion
  /// does (rigidJointVelocityChange: a turning chain's limbs change velocity by |omega|^2 r dt,
  /// which is motion, not a correction): max(|v_after_frame - (v_inherited + g dt + dv_rigid)| -
  /// (5 % |v_inherited| + |g| dt)), bodies not in contact. [m/s]
  double worstFrameVelocityExcess = 0.0;
  /// The following seconds (up to followWindow, while the character stays a ragdoll):
  double followTime = 0.0;  ///< How long was observed. [s]
  /// max over the bodies and frames of |v| - (max(|v_inherited|, pair, rigid) + |g| t + 1 m/s +
  /// hits), pair the body and its parent body as one rigid body (worstSpeedPairAllowance: a limit
  /// locking their joint makes them one), rigid = |v_com| + |omega_sys| r(t) when the handoff spins
  /// (|omega_sys| >= kSpinningRate), else 0 (the plain bound). For a spinning handoff:
  /// the bodies handed over as one rigid body at the commit move their
  /// centre of mass at v_com and turn at omega_sys (their angular momentum about it over their
  /// inertia there); a body r(t) from their centre of mass now may move as fast as that rigid
  /// motion carries a point there. [m/s]
  double worstSpeedExcess = 0.0;
  double comSpeed = 0.0;  ///< |v_com| at the commit. [m/s]
  double spinRate = 0.0;  ///< |omega_sys| at the commit. [rad/s]
  /// At the worst body and frame: how much of the allowance the rigid motion's term added
  /// beyond |v_inherited|. [m/s]
  double worstSpeedSpinAllowance = 0.0;
  /// A powered handoff: at the worst body and frame, how much of the allowance the animation's
  /// own speed of that body then added beyond |v_inherited| and the rigid term (the drives and
  /// pins follow the animation: a dance's arm that speeds up after the entry is not an
  /// explosion). [m/s]
  double worstSpeedAnimationAllowance = 0.0;
  /// At the worst body and frame: how much of the allowance the pair term (the body and its
  /// parent as one rigid body: |m_b v_b + m_p v_p| / (m_b + m_p) at the commit) added beyond
  /// |v_inherited|, the rigid and the animation's terms. [m/s]
  double worstSpeedPairAllowance = 0.0;
  std::string worstSpeedBody;       ///< The body of worstSpeedExcess.
  double worstSpeedTime = 0.0;      ///< When it was measured, from the commit. [s]
  double maxJointSeparation = 0.0;  ///< Largest joint anchor separation. [m]
  bool firstStepRecorded = false;
  /// An external impulse hit the ragdoll in the first step (a knockdown): the first-step
  /// continuity checks do not apply, and each hit during the follow window adds its
  /// |impulse| / (mass of the hit body) to the explosion allowance.
  std::string firstStepImpulse;
  double hitAllowance = 0.0;  ///< [m/s]
  /// A powered entry only (the drives track the animation through the first step): the
  /// animation's own motion in that step measured as worstPopExcess and worstVelocityExcess
  /// measure the physics (its pose at the step's end against its pose and velocity at the
  /// commit, the same allowances and bodies): how much of those figures the animation asks for.
  /// [m], [m/s]
  double animationPopExcess = 0.0;
  double animationVelocityExcess = 0.0;
  /// A full ragdoll (kind "handoff") only, over the follow window while the character stays a
  /// ragdoll (EnergyMeasure): the total mechanical energy of its bodies and held props,
  /// E = sum(1/2 m |v|^2 + 1/2 w.(I w) - m g.p), read at every substep boundary, against E at the
  /// commit plus the work W done on it since (each hit, drive and pin impulse: the energy change
  /// across it). A passive ragdoll's joints, contacts, damping and friction only take energy out.
  bool energyMeasured = false;
  int energySamples = 0;          ///< Substep boundaries read (the commit's included).
  double energyTime = 0.0;        ///< How long was read. [s]
  double kineticAtHandoff = 0.0;  ///< Kinetic energy at the commit, rotation included. [J]
  /// M |g| times the largest drop of the centre of mass below its height at the commit. [J]
  double energyReleased = 0.0;
  double energyWork = 0.0;           ///< W at the end. [J]
  double energyWorkMagnitude = 0.0;  ///< Sum of |each impulse's work|. [J]
  /// max over the substeps of E - W - E(commit), 0 at least: a passive ragdoll never has more
  /// than its energy at the commit plus the work done on it. [J]
  double worstEnergyGain = 0.0;
  double worstEnergyGainTime = 0.0;  ///< When, from the commit. [s]
};

/// One recovery (a RecoveryRecord) and how its display moved.
struct RecoveryMetrics {
  std::string facing;       ///< "supine", "prone", ...
  double settleTime = 0.0;  ///< RecoveryRecord::settleTime. [s]
  double startTime = 0.0;   ///< RecoveryRecord::startTime. [s]
  bool finished = false;
  bool cancelled = false;
  /// Per frame, beyond the get-up clip's own motion at the clip time played
  /// (RecoveryJumpMeasure: JumpFigures::pelvisJump, footJump). [m]
  double worstPelvisJump = 0.0;
  double worstFootJump = 0.0;  ///< [m]
  /// Completion tail appended to the chosen get-up clip (GetUpCompletion::tailDuration; 0: none). [s]
  double getUpTail = 0.0;
};

/// A hit reaction (SPEC section 6): an `impulse` on the character while animated made
/// it go powered by itself with CharacterSettings::hitReaction (the library default: pelvis and
/// feet pinned, back to animation once the pose error and velocities settle, or a knock-out into
/// a full ragdoll). Its powered entry is also measured as a handoff of kind "powered".
struct HitReactionMetrics {
  double time = 0.0;     ///< Scenario time of the hit (the powered entry). [s]
  std::string body;      ///< The body hit.
  double impulse = 0.0;  ///< |J|. [N s]
  /// While powered: the hit body's largest distance from its animated pose (how far the hit
  /// threw it), and the largest of any body (Character::poweredMaxPositionError). [m]
  double peakHitBodyDeviation = 0.0;
  double peakDeviation = 0.0;
  bool returned = false;      ///< Back to animation before the end.
  double returnTime = 0.0;    ///< From the hit to the first animated frame. [s]
  double rmsAtReturn = 0.0;   ///< RMS joint-angle error at the last powered frame. [rad]
  double maxAtReturn = 0.0;   ///< Largest joint-angle error at the last powered frame. [rad]
  bool knockedOut = false;    ///< Fell into a full ragdoll (a "knockout" event).
  double knockoutTime = 0.0;  ///< From the hit. [s]
};

// ---------------------------------------------------------------------------------------------
// Observers

/// A commit (a full ragdoll handoff or a powered entry) and its first physics step, per body:
/// the pop at the commit, the animation's velocity (SPEC section 3 on the character's pose
/// history, whatever the handoff mode) against what the engine inherited, and after the first
/// step and its first substep the move and the velocity change against their allowances
/// (BodyHandoffMetrics). One commit at a time: a new begin() replaces the one pending.
class HandoffMeasure {
 public:
  /// The commit the character has just made (`record`, the newest of Character::handoffs()) at
  /// scene time `time` [s]; `kind` names it ("handoff", "powered"). An uncommitted record gives
  /// its flags and failure only and leaves a pending commit pending; a committed one waits for
  /// its first step. HandoffMetrics::mode is left to the caller.
  HandoffMetrics begin(const Character& character, const HandoffRecord& record, double time,
                       std::string kind);
  /// A committed handoff whose first physics step has not run yet.
  bool firstStepPending() const { return pending_; }
  /// After the Character::postStep of the step that followed the commit: the first-step figures
  /// the Character recorded on its own record (Character::handoffs()) into `out` (what begin()
  /// returned). Else nothing.
  void afterStep(const PhysicsWorld& world, const Character& character, double dt, HandoffMetrics& out);

 private:
  std::uint64_t recordIndex_ = 0;         ///< The commit's record's sequence number in Character::handoffs().
  std::vector<Transform> animatedPoses_;  ///< Per body, the animated pose at the commit.
  Vec3 comVelocity_{0.0}, spin_{0.0};     ///< HandoffMetrics::comSpeed, spinRate as vectors.
  bool pending_ = false;
};

/// The seconds after a handoff while the character stays simulated (Ragdoll or Powered): no
/// explosion (no body faster than |v_inherited| + |g| t + 1 m/s + the hits' |J| / m) and the
/// joint anchors together (HandoffMetrics::followTime, worstSpeedExcess, maxJointSeparation).
class FollowMeasure {
 public:
  /// Follows a handoff committed at scene time `commitTime` for `window` seconds. [s] [s >= 0]
  void begin(double commitTime, double window);
  bool open() const { return open_; }
  /// After Character::postStep at scene time `time` [s]: the figures into `out` (the handoff's
  /// metrics, its bodies' inheritedLinear filled); closes once the character is neither Ragdoll
  /// nor Powered or the window has passed.
  void observe(const Character& character, double time, HandoffMetrics& out);
  /// An impulse `impulse` [N s] on asset body `body` while open: |J| / (mass of the body) joins
  /// out.hitAllowance.
  void addImpulse(const Character& character, int body, const Vec3& impulse, HandoffMetrics& out) const;

 private:
  double commitTime_ = 0.0;
  double window_ = 0.0;
  bool open_ = false;
  bool observed_ = false;
};

/// A full ragdoll's total mechanical energy over the seconds after its handoff
/// (HandoffMetrics::energy*): read at every substep boundary by two substep listeners of its own,
/// one before every other listener (the state the previous substep left) and one after them all
/// (what the drives and pins did: their work), and after each step. Impulses the caller applies
/// between steps are bracketed with energy() and addWork(). The world must outlive the measure or
/// end() must be called first. Not copyable (its listeners are registered by address).
class EnergyMeasure {
 public:
  EnergyMeasure();
  ~EnergyMeasure();
  EnergyMeasure(const EnergyMeasure&) = delete;
  EnergyMeasure& operator=(const EnergyMeasure&) = delete;
  /// Follows the ragdoll of `character` in `world` from its commit at scene time `commitTime`
  /// for `window` seconds [s >= 0]: its bodies and props, E(commit) into `out`. Replaces a
  /// measure open before. May allocate (not during a step).
  void begin(PhysicsWorld& world, const Character& character, double commitTime, double window,
             HandoffMetrics& out);
  bool open() const { return open_; }
  /// Before each world step while open: puts the after-listeners probe back at the end of the
  /// world's listeners (a drive list added since would run after it).
  void beforeStep();
  /// After Character::postStep at scene time `time` [s]: the figures of the step's substeps and
  /// its end into `out`; closes (removes its listeners) once the character is no longer a
  /// ragdoll or the window has passed.
  void observe(const Character& character, double time, HandoffMetrics& out);
  /// The followed bodies' total mechanical energy now. [J]
  double energy() const;
  /// Work `joules` [J] done on the bodies between steps (an impulse: energy() after it minus
  /// before it).
  void addWork(double joules);
  /// Removes the listeners; the figures stay as they are.
  void end();

 private:
  struct Probe : SubstepListener {
    EnergyMeasure* owner = nullptr;
    bool after = false;
    void onSubstep(double substepDt) override;
  };
  void sample(double at);
  double potential() const;
  PhysicsWorld* world_ = nullptr;
  std::vector<BodyId> bodies_;
  Probe before_, after_;
  double commitTime_ = 0.0, window_ = 0.0, elapsed_ = 0.0;
  double e0_ = 0.0, pe0_ = 0.0, work_ = 0.0, workMagnitude_ = 0.0, beforeListeners_ = 0.0;
  double worstGain_ = 0.0, worstGainAt_ = 0.0, released_ = 0.0;
  int samples_ = 0;
  bool sampled_ = false;  ///< The state now has been read (no substep since).
  bool open_ = false;
};

/// A hit reaction (CharacterSettings::hitReaction): while the character stays powered, how far
/// the hit threw the hit body and every body from the animation, then the return to animation
/// (the joint errors at the last powered frame) or the knock-out (HitReactionMetrics).
class HitReactionMeasure {
 public:
  /// The character went powered at scene time `time` [s] and took `impulse` [N s] on asset
  /// body `body`.
  HitReactionMetrics begin(const Character& character, int body, const Vec3& impulse, double time);
  bool open() const { return open_; }
  /// After Character::postStep at scene time `time` [s], with the animation input of the frame
  /// (what preStep was given): the figures into `out`; closes on leaving Powered.
  void observe(const Character& character, const AnimationInput& animation, double time,
               HitReactionMetrics& out);

 private:
  int body_ = -1;
  bool open_ = false;
  std::vector<Transform> models_, animatedBodies_;
};

/// Largest and worst per-frame moves of a character's displayed pelvis and feet
/// (Character::trackedJoints) against a reference animation's own moves over the same frames.
struct JumpFigures {
  /// Largest displayed move in one frame beyond the reference's own move of that joint over
  /// the frame (a pop shows here). Starts at 0. [m]
  double pelvisJump = 0.0;
  double footJump = 0.0;  ///< The same, either foot. [m]
  /// Largest displayed move in one frame, the reference's motion included. [m]
  double pelvisStep = 0.0;
  double footStep = 0.0;  ///< [m]
  /// The reference's own largest move in one frame. [m]
  double pelvisOwnStep = 0.0;
  double footOwnStep = 0.0;  ///< [m]
};

/// Per-frame moves of the displayed pelvis and feet (Character::displayRoot, displayLocals) in
/// world, measured against a reference the caller samples (a clip the display should follow).
class DisplayJumpMeasure {
 public:
  explicit DisplayJumpMeasure(const Character& character);
  /// After Character::postStep, every frame: remembers the displayed points (nothing measured).
  void observe(const Character& character);
  /// The same, and the frame's moves against the reference's over the frame into `out`: poses
  /// of the character's skeleton (parentFromJoint) at this frame and at the frame before. No
  /// figure on the first frame observed.
  void observe(const Character& character, std::span<const Transform> referenceNow,
               std::span<const Transform> referenceBefore, JumpFigures& out);

 private:
  void displayedPoints(const Character& character);
  std::vector<int> joints_;  ///< Character::trackedJoints.
  int pelvis_ = -1;
  std::vector<Vec3> points_, last_;
  std::vector<Transform> models_, referenceNow_, referenceBefore_;
  bool haveLast_ = false;
};

/// A recovery's display against the get-up clip it plays (no per-frame jump beyond the clip's
/// own motion): on every frame the character is Recovering after the step, and the step
/// it finished on, the displayed pelvis and feet against Character::recoveryClip() sampled at
/// Character::recoveryClipTime() of this frame and of the frame before (the clip time the
/// character plays, its planned hold included). Other frames only track the display.
class RecoveryJumpMeasure {
 public:
  explicit RecoveryJumpMeasure(const Character& character);
  /// After Character::postStep, every frame.
  void observe(const Character& character, JumpFigures& out);

 private:
  DisplayJumpMeasure display_;
  std::vector<Transform> clipNow_, clipBefore_;
  double lastClipTime_ = 0.0;
  std::uint64_t recoveries_ = 0;
  bool wasRecovering_ = false;
};

/// A return to animation (a finished get-up, a powered return, a landing on the feet) and the
/// blend that follows it:
/// the kinematic bodies and the displayed attachment points (bones without a body: sockets,
/// fingers, toes; and the tips of the last bones: the hands, the head end) per frame against the
/// resumed animation's own motion (SPEC section 7: pelvis, feet and attachments continuous).
struct ReturnMetrics {
  double time = 0.0;  ///< Scene time of the frame the character was animated again. [s]
  std::string from;   ///< "getup", "powered" or "landing" (a fall that landed on its feet).
  int frames = 0;     ///< Frames measured: the blend back and the frame after it.
  /// Largest body speed in one frame beyond the resumed animation's own speed of that body over
  /// the frame (centre of mass: engine pose), 0 when never beyond. [m/s]
  double worstBodySpeedExcess = 0.0;
  std::string worstBody;        ///< The body it was on.
  double worstBodySpeed = 0.0;  ///< The largest body speed, own motion included. [m/s]
  /// Largest displayed move of an attachment point in one frame beyond the animation's own
  /// move of that point, 0 when never beyond. [m]
  double worstAttachmentJump = 0.0;
  std::string worstAttachment;  ///< Its joint name ("<joint> end" for a tip).
  /// The animation's own largest move of an attachment point in one frame (a running hand). [m]
  double attachmentOwnStep = 0.0;
  /// The same for the displayed pelvis and feet (Character::trackedJoints). [m]
  double worstPelvisJump = 0.0;
  double worstFootJump = 0.0;
  double footOwnStep = 0.0;  ///< The animation's own largest foot move in one frame. [m]
};

/// A point of the displayed skeleton: a joint and an offset in the joint's space. [m]
struct DisplayPoint {
  int joint = -1;
  Vec3 offset{0.0};
  std::string name;  ///< The joint's name, "<joint> end" for a tip.
};

/// Measures every return to animation of a character (ReturnMetrics, one per return).
class ReturnMeasure {
 public:
  explicit ReturnMeasure(const Character& character);
  /// After Character::postStep, every frame, with the animation the character resumes (poses of
  /// its skeleton on `worldFromRoot`: at this frame and at the frame before, the same root; a
  /// game's clip, without its own layers such as a look-at) at scene time `time`. A return opens
  /// on the frame the character is animated again (its positions only: that frame's motion is
  /// the get-up's or the powered step's) and is measured until the frame after its blend ends.
  /// `out` gets one entry per return.
  /// The bodies' poses are Ragdoll::bodyPose's (a capsule-only character's are the animation's).
  void observe(const Character& character, const Transform& worldFromRoot,
               std::span<const Transform> animationNow, std::span<const Transform> animationBefore,
               double time, std::vector<ReturnMetrics>& out);
  using Point = DisplayPoint;
  /// The attachment points.
  std::span<const Point> attachments() const { return points_; }

 private:
  void displayedPoints(const Character& character);
  std::vector<Point> points_;
  std::vector<int> tracked_;  ///< Pelvis, feet.
  int pelvis_ = -1;
  std::vector<Vec3> shown_, lastShown_, bodies_, lastBodies_;
  std::vector<Transform> models_, nowModels_, beforeModels_, nowBodies_, beforeBodies_;
  CharacterState lastState_ = CharacterState::Animated;
  std::uint64_t landings_ = 0;  ///< Character::landings() seen (History::total()).
  bool open_ = false;
  int quietFrames_ = 0;  ///< Frames with no blend left.
};

/// A look-at's bone against what the gaze asked (CharacterSettings::animationOwnedBones).
struct LookAtMetrics {
  int frames = 0;  ///< Frames observed.
  /// Largest angle between the displayed bone's world rotation and what the gaze asked: its
  /// displayed parent's world rotation times the local rotation it was given. [rad]
  double worstHeadError = 0.0;
  /// Largest angle between the displayed bone's bind-pose forward and the direction to the gaze
  /// target (the gaze aims from the parent of the frame before: one frame of the parent's
  /// motion shows here). [rad]
  double worstAimError = 0.0;
};

/// Limb lag (Character::goLimbLag) from the event to the return to animation: how far the
/// displayed limb ends trail the animation, and whether switching the lag on moves them faster
/// than the animation does (the switch off is a return to animation: ReturnMetrics).
struct LimbLagMetrics {
  double time = 0.0;  ///< Scene time of the event. [s]
  int frames = 0;     ///< Frames observed while on.
  /// Largest distance of a displayed point of the lagging limbs (the joints of their bodies: a
  /// forearm's elbow, a hand's wrist; and their tips) from where the animation puts it. [m]
  double worstLag = 0.0;
  std::string worstPoint;  ///< Its joint name ("<joint> end" for a tip).
  double medianLag = 0.0;  ///< Median over the frames of each frame's largest distance. [m]
  /// While the drives ramp in and 0.1 s after: a displayed point's move in one frame beyond the
  /// animation's own move of it, 0 when never beyond. [m]
  double worstSwitchOnJump = 0.0;
};

/// Measures one limb lag (LimbLagMetrics).
class LimbLagMeasure {
 public:
  /// Right after Character::goLimbLag succeeded (before the step): the lagging bodies are those it
  /// handed to physics; the display of the frame before is the switch-on reference.
  void begin(const Character& character, double rampTime, double time, LimbLagMetrics& out);
  /// After Character::postStep, every frame, with the animation (poses of the skeleton on
  /// `worldFromRoot`, at this frame and the one before). Ends when the character leaves Powered.
  void observe(const Character& character, const Transform& worldFromRoot,
               std::span<const Transform> animationNow, std::span<const Transform> animationBefore,
               double time, LimbLagMetrics& out);
  bool open() const { return open_; }

 private:
  std::vector<DisplayPoint> points_;
  std::vector<Vec3> shown_, lastShown_;
  std::vector<Transform> models_, nowModels_, beforeModels_;
  std::vector<double> frameLags_;
  double start_ = 0.0, switchWindow_ = 0.0;
  bool open_ = false;
};

/// The displayed look-at bone, every frame.
class LookAtMeasure {
 public:
  /// `joint`: the bone the look-at drives (not the skeleton's root).
  LookAtMeasure(const Character& character, int joint);
  /// After Character::postStep: `askedLocal` is the local rotation the gaze gave the bone in
  /// this frame's animation input, `worldTarget` what it aimed at. [m]
  void observe(const Character& character, const Quat& askedLocal, const Vec3& worldTarget,
               LookAtMetrics& out);

 private:
  int joint_ = -1;
  Vec3 forwardInJoint_{0.0, 0.0, 1.0};  ///< The bind-pose forward in the joint's space.
  std::vector<Transform> models_;
};

/// Powered mode's tracking, over the powered frames observed (SPEC sections 5 and 6).
struct PoweredTrackingMetrics {
  double maxPositionError = 0.0;  ///< Largest Character::poweredMaxPositionError. [m]
  double maxRmsJointError = 0.0;  ///< Largest Character::poweredRmsJointError. [rad]
};

/// Powered mode's largest errors: on every frame the character is Powered.
class PoweredTrackingMeasure {
 public:
  /// After Character::postStep (and the frame's own events).
  void observe(const Character& character, PoweredTrackingMetrics& out) const;
};

/// A joint that broke (Character::jointBreaks, SPEC.md section 6) and the run around it.
struct JointBreakMetrics {
  int joint = -1;            ///< Asset joint index.
  std::string name;          ///< Asset joint name.
  double time = 0.0;         ///< When it broke (end of its substep). [s]
  double force = 0.0;        ///< What it carried then. [N]
  double torque = 0.0;       ///< [N m]
  double breakForce = 0.0;   ///< Its limits (the asset's). [N]
  double breakTorque = 0.0;  ///< [N m]
  /// The limit it broke at: the torque (true) when the force stayed within its own.
  bool byTorque = false;
  /// What it carried at the end of the last frame before it broke, of the load that broke it
  /// (force or torque), and the largest change of that load between two frames before. [N or N m]
  double loadBefore = 0.0;
  double worstFrameChange = 0.0;
  /// Largest anchor separation of any joint that has not broken, from the break to the last
  /// frame observed. [m]
  double otherJointsMaxStretch = 0.0;
  /// Frames after the break the character spent in a state other than Ragdoll (a get-up).
  int framesNotRagdoll = 0;
};

/// Follows every breakable joint (finite asset limits) of a character: the load it carries frame
/// by frame until it breaks, then the split ragdoll's other joints and state.
class JointBreakMeasure {
 public:
  /// After Character::postStep, every frame from the first.
  void observe(const Character& character, std::vector<JointBreakMetrics>& out);

 private:
  struct Joint {
    int index = -1;
    bool seen = false;
    double force = 0.0, torque = 0.0;  // at the last frame it was whole
    double worstForceChange = 0.0, worstTorqueChange = 0.0;
  };
  std::vector<Joint> joints_;
  bool started_ = false;
};

/// A prop in the hand (Character::addProp) over a run: how closely it stays at the grip while
/// held, and its release (SPEC.md section 6's props).
struct PropMetrics {
  std::string name;
  int heldFrames = 0;           ///< Frames observed with the prop in the hand.
  int simulatedHeldFrames = 0;  ///< Of those, frames with the hand body dynamic (powered, ragdoll).
  /// Largest distance and angle between the prop's grip frame and the hand's, over the held frames
  /// with the hand dynamic (the fixed joint's give) and with it kinematic. [m] [rad]
  double maxGripDistance = 0.0;
  double maxGripAngle = 0.0;
  double maxAnimatedGripDistance = 0.0;
  bool released = false;
  double releaseTime = 0.0;  ///< [s]
  bool atDeath = false;
  std::string releaseState;  ///< The character's state at the first observation after the release.
  /// |v_prop - v_handpoint| at the grip point and |omega_prop - omega_hand| at the release. [m/s] [rad/s]
  double releaseLinearError = 0.0;
  double releaseAngularError = 0.0;
  double releaseSpeed = 0.0;         ///< |v_handpoint|. [m/s]
  double releaseAngularSpeed = 0.0;  ///< |omega_hand|. [rad/s]
  /// The prop's centre-of-mass velocity change at the release (held -> free), and that beyond
  /// 5 % of its speed + |g| dt (the velocity-continuity bound of a commit). [m/s]
  double releaseJump = 0.0;
  double releaseJumpExcess = 0.0;
  /// Over the frame after the release, the prop and its hand body: the worst |v_after_frame -
  /// v_at_release| beyond 5 % |v_at_release| + |g| dt, and which body it was. [m/s]
  bool dropFrameMeasured = false;
  double dropFrameExcess = 0.0;
  std::string dropFrameWorst;
  /// Bodies of its character (and the capsule) the prop collides with at the last frame.
  int collidingPairs = 0;
};

/// Every prop of a character, every frame.
class PropMeasure {
 public:
  /// After Character::postStep and after the frame's own events, every frame from the first;
  /// `dt` the frame step. [s]
  void observe(const Character& character, const PhysicsWorld& world, double dt,
               std::vector<PropMetrics>& out);

 private:
  struct Pending {
    int release = -1;  ///< Index in Character::propReleases.
    Vec3 propVelocity{0.0}, handVelocity{0.0};
  };
  std::vector<Pending> pending_;
  std::uint64_t releasesSeen_ = 0;  ///< Character::propReleases() seen (History::total()).
};

}  // namespace handoff
