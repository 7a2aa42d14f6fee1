// Animation -> physics handoff (SPEC.md section 3): the per-character ragdoll instance that owns
// its engine bodies, the velocity history of the animated pose, the atomic commit, write-back and
// the display blend.
//
// Frames: worldFromBody = worldFromRoot * rootFromBone * boneFromBody (T_WC = T_WB * T_BC).
// Thread-safety: a Ragdoll is used by the thread that steps its PhysicsWorld. The asset is
// immutable and may be shared by many Ragdolls on many threads.
#pragma once

#include "handoff/asset.h"
#include "handoff/math.h"
#include "handoff/physics.h"
#include "handoff/result.h"
#include "handoff/rig.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace handoff {

/// Who moves a body. Exactly one system has authority over each body at any time.
enum class Authority : std::uint8_t {
  Animation,  ///< Kinematic, moved to the animated pose with kinematic moves.
  Physics,    ///< Dynamic, free (ragdoll).
  Drive,      ///< Dynamic, joint drives track an animation (powered ragdoll).
};
const char* authorityName(Authority authority);

/// How the bodies start at the commit. The naive modes exist for side-by-side comparison.
enum class HandoffMode : std::uint8_t {
  Inherit,       ///< SPEC.md section 3: the animated pose and its finite-difference velocities.
  ZeroVelocity,  ///< Naive: the animated pose, made dynamic at rest.
  BindPose,      ///< Naive: what disabling the animator first does: the bind pose, at rest.
};
const char* handoffModeName(HandoffMode mode);

/// How a commit hands the animated pose to physics (CharacterSettings::handoff). A plain value.
struct HandoffSettings {
  /// How the bodies start: inherited velocities, or a naive mode for comparison. [default Inherit]
  HandoffMode mode = HandoffMode::Inherit;
  /// Inherited linear speeds are clamped to this. [m/s] [> 0] [default 50]
  double maxLinearSpeed = 50.0;
  /// Inherited angular speeds are clamped to this. [rad/s] [> 0] [default 60]
  double maxAngularSpeed = 60.0;
  /// A root jump longer than this between two samples is a teleport even when not flagged.
  /// [m] [> 0] [default 1.0, i.e. 60 m/s at 60 Hz]
  double teleportDistance = 1.0;
  /// Engine poses further than this from the animated pose at the commit are snapped to it
  /// (and their joints' warm start reset). [m] [default 1e-4]
  double poseTolerance = 1e-4;
  /// The same for orientations. [rad] [default 1e-3]
  double angleTolerance = 1e-3;
  /// Rendering blends from animation to physics over this time after the commit. [s] [>= 0]
  /// [default 0.15]
  double displayBlendTime = 0.15;
  /// Make the inherited velocities consistent with the joints before the commit (see
  /// VelocityProjector): anchors move together, locked axes do not turn. The correction
  /// conserves the character's linear and angular momentum and is recorded per body
  /// (kClampJointConsistency). Off: the solver makes the same correction in the first steps, as
  /// an unrecorded velocity jump (a diagnosis switch, `handoff diagnose`). [default true]
  bool jointConsistency = true;
  /// Strip the approach velocity of body points that would reach static geometry (the floor)
  /// within the step after the commit: the contact would stop them in the first step anyway.
  /// Recorded per body (kClampStaticContact). [default true]
  bool staticContacts = true;
  /// Collision layers that count as static geometry for `staticContacts`. [default kStatic]
  std::uint32_t staticContactMask = layers::kStatic;
  /// A body committed inside static geometry (a foot a few centimetres in the floor: a root
  /// offset, a slope, foot IK off) deeper than it can leave at this speed in one step is pushed out
  /// by position alone, at most this fast, until it is out or for twice the time its depth takes
  /// at this speed (PhysicsWorld::limitDepenetration; later, what keeps it in presses it in: a
  /// crush gets the engine's full push): the engine's own push would give it, and through its
  /// joints the rest of the body, a velocity the animation never had. Recorded per body
  /// (kClampPenetration, with the depth); found with the `staticContacts` query (off with it).
  /// 0: the engine's own push. [m/s] [>= 0] [default 0.05, chosen in docs/TUNING.md's defaults]
  double maxDepenetrationSpeed = 0.05;
  /// A value of stepTime or limitLookAhead meaning "derive it from the step in use".
  static constexpr double kDerived = -1.0;
  /// The physics step that follows the commit: the look-ahead of the floor contacts. [s]
  /// [> 0, or kDerived] [default kDerived: the step the character is animated with, the `dt` of
  /// the last Ragdoll::setAnimatedPose (Ragdoll::animationStep)]
  double stepTime = kDerived;
  /// A joint within reach of a limit, moving toward it, gets its limit widened to the angle it
  /// reaches in this time at its committed rate (+ 0.02 rad) until the first updateLimits() after
  /// the commit. An engine whose limit rows let a joint close only jointErp of its gap to a limit
  /// per substep (Bullet's 6-DoF spring2) brakes a joint at w anywhere within w h / jointErp of a
  /// limit: a handoff mid-swing (an arm in a run) would lose velocity in its first step to a
  /// limit it never reaches. [s] [>= 0, or kDerived] [default kDerived: stepTime * (1 + 1 /
  /// jointErp) with the world's WorldSettings::jointErp, one step of motion and the braking
  /// distance; 0.1 s at 60 Hz]
  double limitLookAhead = kDerived;
  bool operator==(const HandoffSettings&) const = default;
};

/// Why an inherited velocity was changed. Bit flags.
enum ClampReason : std::uint8_t {
  kClampNone = 0,
  kClampTeleport = 1 << 0,      ///< The newest sample pair spans a teleport: its difference was not used.
  kClampLinearLimit = 1 << 1,   ///< |v| exceeded maxLinearSpeed.
  kClampAngularLimit = 1 << 2,  ///< |omega| exceeded maxAngularSpeed.
  kClampNoHistory = 1 << 3,     ///< Fewer than two samples with a positive time step: zero.
  /// The joint-consistency step changed the velocity: the animation moved this body in a way its
  /// joints do not allow (a turn about a locked hinge axis, anchors moving apart).
  kClampJointConsistency = 1 << 4,
  /// A point of the body would have reached static geometry within the first step: its
  /// approach velocity was stripped (the body is in contact at the commit).
  kClampStaticContact = 1 << 5,
  /// The body starts inside static geometry (BodyHandoff::penetration): it is pushed out by
  /// position at most HandoffSettings::maxDepenetrationSpeed, with no velocity from the push.
  kClampPenetration = 1 << 6,
};
std::string clampReasonText(std::uint8_t reasons);

/// What happened to one body at a handoff: what tests, the report and users' debugging read.
struct BodyHandoff {
  std::string name;
  Transform poseBefore;          ///< Engine worldFromBody just before the commit.
  Transform poseAfter;           ///< Engine worldFromBody right after the commit.
  Vec3 rawLinearVelocity{0.0};   ///< Newest samples' finite difference (for a teleport: the jump). [m/s]
  Vec3 rawAngularVelocity{0.0};  ///< [rad/s]
  /// The finite difference inherited (of the pair before a teleport, carried through the root's
  /// turn), after the speed clamps and before the consistency steps. [m/s]
  Vec3 finiteDifferenceLinearVelocity{0.0};
  Vec3 finiteDifferenceAngularVelocity{0.0};  ///< [rad/s]
  /// Change made by the joint-consistency step (internal impulses: summed over the bodies they
  /// conserve linear and angular momentum). [m/s] [rad/s]
  Vec3 jointLinearCorrection{0.0};
  Vec3 jointAngularCorrection{0.0};
  /// Change made by static contacts at the commit (the floor's impulse on this body). [m/s] [rad/s]
  Vec3 contactLinearCorrection{0.0};
  Vec3 contactAngularCorrection{0.0};
  /// Inherited, what the engine was given: finiteDifference + jointCorrection +
  /// contactCorrection. [m/s]
  Vec3 linearVelocity{0.0};
  Vec3 angularVelocity{0.0};  ///< [rad/s]
  std::uint8_t clamps = kClampNone;
  /// Deepest point of the body inside static geometry at the commit (0: none found). [m] [>= 0]
  double penetration = 0.0;
  bool teleport = false;  ///< The body's samples span a teleport.
  bool snapped = false;   ///< The engine pose differed from the animated pose and was snapped.
  /// Not in the commit's mask and already dynamic (a powered body when the powered ragdoll dies):
  /// it kept its own pose and velocity (poseAfter, linearVelocity); the animation is no reference
  /// for it.
  bool keptDynamic = false;
  // Filled by Ragdoll::recordFirstStep() after the first physics step:
  bool firstStepRecorded = false;
  Transform poseAfterFirstStep;             ///< Engine worldFromBody. [m]
  Vec3 linearVelocityAfterFirstStep{0.0};   ///< [m/s]
  Vec3 angularVelocityAfterFirstStep{0.0};  ///< [rad/s]
  // Filled by a FirstSubstepProbe after the first substep of that step (the engine's first
  // integration step; the whole step when it has one substep):
  bool firstSubstepRecorded = false;
  Transform poseAfterFirstSubstep;             ///< Engine worldFromBody. [m]
  Vec3 linearVelocityAfterFirstSubstep{0.0};   ///< [m/s]
  Vec3 angularVelocityAfterFirstSubstep{0.0};  ///< [rad/s]
};

/// What the commit did to one joint: its anchors and limits are set for the committed pose.
struct JointHandoff {
  std::string name;
  /// Distance between the two anchors before they were set for this pose: non-zero when bones
  /// without bodies (collars, extra spine joints) moved the child joint away from the parent
  /// body's anchor. [m]
  double anchorGap = 0.0;
  Vec3 angles{0.0};             ///< Joint angles at the commit (handoff::jointAngles). [rad]
  Vec3 lower{0.0}, upper{0.0};  ///< Limits given to the engine. [rad]
  /// Axes whose limits were widened (bit i = axis i) because the animated pose lies outside the
  /// asset's limits; they ease back as the joint returns inside (Ragdoll::updateLimits).
  std::uint8_t widenedAxes = 0;
  /// Locked axes held at a non-zero animated angle (bit i = axis i).
  std::uint8_t lockedOffAxes = 0;
};

struct HandoffRecord {
  bool committed = false;  ///< False: the handoff was abandoned; every body is still animated.
  std::string failure;     ///< Why it was abandoned (names the body or joint).
  double time = 0.0;       ///< Animation time of the commit. [s]
  double sampleDt = 0.0;   ///< Time step between the two samples used. [s]
  HandoffMode mode = HandoffMode::Inherit;
  bool teleportFlagged = false;   ///< The caller flagged a teleport on the newest sample.
  bool teleportDetected = false;  ///< The root jumped more than teleportDistance.
  double rootJump = 0.0;          ///< Root displacement between the newest two samples. [m]
  std::vector<BodyHandoff> bodies;
  std::vector<JointHandoff> joints;
  /// Non-adjacent body pairs touching in the committed pose, their collision suspended until
  /// they separate (Ragdoll::updateLimits). 0 while internal collisions are off.
  int suspendedPairs = 0;
  /// Whether the character's own non-adjacent bodies collide with each other after this commit
  /// (Ragdoll::setInternalCollisions: off in powered mode by default, on for a full ragdoll).
  bool internalCollisions = true;
  /// Static contact points that took part in the commit's velocity step (they bind: the body
  /// would reach the surface within the first step).
  int staticContacts = 0;
  /// Largest constraint velocity left after the consistency step (0 up to rounding). [m/s]
  double consistencyResidual = 0.0;
  /// The speed at which bodies committed inside static geometry (kClampPenetration) are pushed
  /// out by position, the bodies jointed to them following: HandoffSettings::
  /// maxDepenetrationSpeed when any body is, else 0. [m/s]
  double depenetrationSpeed = 0.0;
  /// Length of the substep the FirstSubstepProbe recorded (0: none recorded). [s]
  double firstSubstepTime = 0.0;
};

/// The last three animated body poses with positive time steps (SPEC.md section 3), fixed
/// capacity: pushing never allocates. Thread-safety: per ragdoll, used by one thread at a time.
class PoseHistory {
 public:
  explicit PoseHistory(int bodyCount = 0);
  /// Adds a sample. Rejected (state unchanged) when time does not advance or a pose is not
  /// finite.
  Status push(double time, const Transform& worldFromRoot, std::span<const Transform> worldFromBodies,
              bool teleport);
  /// Inserts a sample between the two newest ones (a denser sample of the same motion, taken
  /// shortly before the newest): the newest pair then spans (time, newest], the oldest sample
  /// is dropped. Refused unless time(1) < time < time(0). When the newest sample is flagged
  /// as a teleport and the inserted one was taken on the newest sample's side of the jump (its
  /// root nearer the newest root than the older one: the animation sampled in the new place),
  /// the flag moves to the inserted sample, so the newest pair is a valid velocity sample after
  /// the jump (denseAfterTeleport()).
  Status insertBeforeNewest(double time, const Transform& worldFromRoot,
                            std::span<const Transform> worldFromBodies);
  void clear();
  int size() const { return count_; }
  int bodyCount() const { return bodyCount_; }
  /// Sample `age` (0 = newest).
  double time(int age) const;
  const Transform& root(int age) const;
  bool teleport(int age) const;
  /// The newest pair is a dense sample taken after a flagged teleport (the jump is between
  /// samples 2 and 1): its velocity is valid and the jump still belongs to this handoff.
  bool denseAfterTeleport() const { return denseAfterTeleport_; }
  const Transform& body(int age, int bodyIndex) const;

 private:
  int slot(int age) const;
  int bodyCount_ = 0;
  int count_ = 0;
  int newest_ = -1;
  double times_[3] = {0, 0, 0};
  Transform roots_[3];
  bool teleports_[3] = {false, false, false};
  bool denseAfterTeleport_ = false;
  std::vector<Transform> bodies_;   // 3 x bodyCount
  std::vector<Transform> scratch_;  // 2 x bodyCount, for insertBeforeNewest
};

/// Velocity inheritance, pure: the finite difference of the two newest samples; when that pair
/// spans a teleport (flagged, or a root jump > teleportDistance) the jump gives no velocity: the
/// body's motion over the pair is taken relative to the root (continuous through the jump, as
/// fresh as without one), plus the root's own motion over the pair before the jump carried
/// through the root's turn (v = v_root + w_root x r + R_root v_rel; none without that pair);
/// clamped, with the reasons. After a dense sample
/// taken past a flagged teleport (PoseHistory::denseAfterTeleport) the newest pair is used as
/// it is and the result still reports the flagged jump (teleportFlagged, rootJump). Outputs have
/// history.bodyCount() elements.
struct InheritedVelocities {
  bool teleportFlagged = false;   ///< As HandoffRecord::teleportFlagged.
  bool teleportDetected = false;  ///< As HandoffRecord::teleportDetected.
  double rootJump = 0.0;          ///< [m]
  double sampleDt = 0.0;          ///< [s]
};
InheritedVelocities inheritVelocities(const PoseHistory& history, const HandoffSettings& settings,
                                      std::span<Vec3> rawLinear, std::span<Vec3> rawAngular,
                                      std::span<Vec3> linear, std::span<Vec3> angular,
                                      std::span<std::uint8_t> clamps);

/// The velocity-consistency step of the commit (docs/ARCHITECTURE.md), pure. The inherited
/// velocities come from an animation that need not respect the ragdoll's joints: mocap elbows
/// and knees turn about axes the asset's hinges lock, and finite differences over a sample step
/// move a child's anchor a little differently from its parent's. Left alone, the solver removes
/// that motion in the first steps as a velocity jump. The projector removes it before the commit
/// instead, with the smallest change in the kinetic-energy metric: one impulse per joint row
/// (anchor x, y, z and each locked angular axis), equal and opposite on the two bodies, so the
/// character's total linear and angular momentum are unchanged. Static contacts that would bind
/// in the first step (a foot moving into the floor) add one push-only impulse row each.
/// Thread-safety: lockedAxisRows is pure; a VelocityProjector holds scratch buffers and is used by
/// one thread at a time (one per ragdoll).
struct ConsistencyBody {
  double inverseMass = 0.0;        ///< [1/kg]
  glm::dmat3 inverseInertia{0.0};  ///< World frame. [1/(kg m^2)]
  Vec3 centre{0.0};                ///< World centre of mass. [m]
};
struct ConsistencyJoint {
  int parent = -1;   ///< Body A.
  int child = -1;    ///< Body B.
  Vec3 anchor{0.0};  ///< World point both bodies share. [m]
  /// World unit directions along which the relative angular velocity must vanish (the engine's
  /// rows of the locked axes).
  Vec3 lockedAxes[3] = {Vec3{0.0}, Vec3{0.0}, Vec3{0.0}};
  int lockedCount = 0;
};
struct ConsistencyContact {
  int body = -1;
  Vec3 point{0.0};        ///< World point of the body nearest the surface. [m]
  Vec3 normal{0.0};       ///< Unit, from the surface toward the body.
  double distance = 0.0;  ///< Gap, negative when penetrating. [m]
};

/// The engine's constraint rows of a joint's locked axes (see JointDesc): for the joint angles
/// of handoff::jointAngles they are the dual of the Euler axes (A's X, the axis between, B's
/// Z). `jointFrameA`/`B` are the joint frames' world rotations. Writes the rows of the axes
/// whose bit is set in `lockedMask` (bit i = axis i) and returns how many it wrote (a row is
/// skipped at gimbal lock).
int lockedAxisRows(const Quat& jointFrameA, const Quat& jointFrameB, std::uint8_t lockedMask, Vec3 out[3]);

class VelocityProjector {
 public:
  VelocityProjector() = default;
  /// Capacity: body count, joint rows (3 per joint plus the locked axes) and contact points.
  VelocityProjector(int maxBodies, int maxJointRows, int maxContacts);
  /// Orders the joints (parent, child and lockedCount are what counts) and lays out the
  /// factorisation ahead of project(), which then skips that work while its joints have the same
  /// bodies and row counts. Optional; call where allocation and set-up belong (a ragdoll's
  /// creation). Never allocates.
  void prepare(std::span<const ConsistencyJoint> joints, int bodyCount);
  struct Outcome {
    int contactsUsed = 0;   ///< Contacts that bound (push impulse > 0).
    double residual = 0.0;  ///< Largest |row velocity| left (active rows). [m/s]
  };
  /// Corrects `linear`/`angular` in place. Per body it writes the change due to the joint rows
  /// (`jointLinear`, `jointAngular`) and to the contact rows (`contactLinear`, `contactAngular`).
  /// A contact binds when distance + lookAhead * (approach speed) < 0. Never allocates within
  /// the capacity; rows beyond it are ignored (assert in debug).
  Outcome project(std::span<const ConsistencyBody> bodies, std::span<const ConsistencyJoint> joints,
                  std::span<const ConsistencyContact> contacts, double lookAhead, std::span<Vec3> linear,
                  std::span<Vec3> angular, std::span<Vec3> jointLinear, std::span<Vec3> jointAngular,
                  std::span<Vec3> contactLinear, std::span<Vec3> contactAngular);

 private:
  struct Row {
    int a = -1, b = -1;                                   // bodies (a may be -1 for a contact row)
    Vec3 linA{0.0}, angA{0.0}, linB{0.0}, angB{0.0};      // Jacobian
    Vec3 wLinA{0.0}, wAngA{0.0}, wLinB{0.0}, wAngB{0.0};  // inverse(M) * Jacobian^T
    int contact = -1;                                     // contact index, -1 for a joint row
  };
  // Joint rows come first, ordered leaves first (deepest child body first), so that the LDL^T
  // factorisation of J M^-1 J^T has no fill-in: a joint row couples only to the rows of the
  // joints at its two bodies. The contacts follow (push-only: an active set over a small dense
  // Schur complement).
  // Returns true when the joints are those of the last call: the order and structure hold.
  bool orderJoints(std::span<const ConsistencyJoint> joints, int bodyCount, bool leavesFirst);
  void buildStructure(std::span<const ConsistencyJoint> joints, int bodyCount, bool leavesFirst);
  bool factorJoints();  // false when a joint row with a positive diagonal is (nearly) dependent
  void factorContacts(int contactRows);
  void solveActive(int activeContacts);
  std::vector<Row> rows_;
  std::vector<int> jointOrder_, jointRows_;   // used joints (elimination order), rows of each
  std::vector<int> parent_, depth_;           // per body, in the joint forest
  std::vector<int> bodyRowStart_, bodyRows_;  // joint rows touching each body (CSR)
  std::vector<int> nzStart_, nz_;             // per joint row: the earlier rows it couples to
  std::vector<std::uint8_t> nzCode_;          // per nz entry: the bodies the two rows share
  struct GivenJoint {
    int joint = -1, parent = -1, child = -1, rows = 0;
  };
  std::vector<GivenJoint> given_;  // the last call's joints taking part, in the given order
  int givenCount_ = 0;
  bool structureValid_ = false, structureLeavesFirst_ = false;
  int structureBodies_ = 0;
  std::vector<double> factor_;           // rows x joint rows: L (row-major) with D on the diagonal
  std::vector<double> scaled_;           // per joint row: L(k, p) D(p) of the row being factored
  std::vector<double> contactScaled_;    // contacts x joint rows: L(c, p) D(p)
  std::vector<double> schur_;            // contacts x contacts: J_c M^-1 J_c^T less the joints' part
  std::vector<double> contactDiagonal_;  // per contact: its diagonal of J M^-1 J^T
  std::vector<double> active_;           // LDL^T of the active contacts' Schur complement
  std::vector<int> activeRows_;          // contact rows (index into the contacts) taking part
  std::vector<double> rhs_;              // -J v per row, forward-substituted through the joints
  std::vector<double> lambda_;           // impulse per row (joint rows, then active contacts)
  std::vector<std::uint8_t> contactOn_;
  std::vector<Vec3> baseLinear_, baseAngular_;
  int jointCount_ = 0, jointRowCount_ = 0;
  bool forest_ = true;  // the joints form a forest (else the joint factor is dense)
  int maxBodies_ = 0, maxJointRows_ = 0, maxContacts_ = 0;
};

/// Write-back (SPEC.md section 3): bones with bodies take worldFromBone = worldFromBody *
/// inverse(boneFromBody); bones without bodies, and bones whose `physicsMask` entry is 0, keep
/// their animated local transform under their parent. `worldFromRoot` is the root the display
/// pose is expressed against. `scratchModels` has jointCount elements. Never allocates.
void writeBackPose(const Skeleton& skeleton, const RagdollAsset& asset,
                   std::span<const Transform> worldFromBodies, const Transform& worldFromRoot,
                   std::span<const Transform> animatedLocals, std::span<const std::uint8_t> physicsMask,
                   std::span<Transform> scratchModels, std::span<Transform> outLocals);

/// Display blend weight at `timeSinceCommit`: 0 -> 1 linearly over blendTime (1 when 0).
double displayBlendWeight(double timeSinceCommit, double blendTime);

/// A joint of a ragdoll that broke (JointDef::breakForce / breakTorque; Ragdoll::updateBreaks).
struct JointBreak {
  int joint = -1;       ///< Asset joint index.
  double time = 0.0;    ///< End of the substep it broke in, on the caller's clock. [s]
  double force = 0.0;   ///< Constraint force it carried over that substep. [N]
  double torque = 0.0;  ///< Constraint torque about the anchor over that substep. [N m]
};

/// Creates the engine bodies and joints of a ragdoll asset in `world`: the one construction path
/// of ragdoll bodies (Ragdoll::create and the crowd's pooled ragdolls both use it). Body b gets
/// asset body b's shape, mass, inertia, collision filter and material (friction, rolling
/// friction, restitution, linear and angular damping), the motion type `motion` and the pose
/// worldFromBodies[b]; then joint j is jointDescFor(asset.joints[j], bodies). `enabled` false
/// takes each body out of the simulation (PhysicsWorld::setEnabled) right after creating it, before
/// the joints: a pooled ragdoll, which enabling its bodies later puts into the simulation, joints
/// included. `worldFromBodies` and `bodies` have asset.bodies.size() elements, `joints`
/// asset.joints.size(). All or nothing:
/// on an error (naming the body or joint, or the sizes) whatever it created is destroyed and
/// every id is left invalid. The caller owns what it created (destroy joints, then bodies).
/// Allocates (engine objects): not inside a physics step. Thread-safety: that of `world`.
Status createRagdollBodies(PhysicsWorld& world, const RagdollAsset& asset, MotionType motion,
                           std::span<const Transform> worldFromBodies, std::span<BodyId> bodies,
                           std::span<JointId> joints, bool enabled = true);

/// Who writes a ragdoll joint's engine motor (PhysicsWorld::setJointMotor). Each joint's motor has
/// at most one owner at a time, arbitrated by its Ragdoll (Ragdoll::acquireMotors,
/// releaseMotors); a motor without an owner is off.
enum class MotorOwner : std::uint8_t {
  None,    ///< No owner: the motor is off.
  Damper,  ///< The full ragdoll's passive joint dampers (CharacterSettings::ragdollJointDamping).
  Gather,  ///< The pre-get-up gather's servos (GatherSettings).
  Drive,   ///< Powered mode's implicit drive (DriveSolver::Implicit).
};
const char* motorOwnerName(MotorOwner owner);

class Ragdoll;

/// What a body of a PhysicsWorld is when a Ragdoll made it (its bodies and capsule register
/// themselves as PhysicsWorld::bodyOwner): what a ray cast (CastHit::body) or a contact event
/// hit. All fields at their defaults when the body is no ragdoll's.
struct RagdollBodyInfo {
  const Ragdoll* ragdoll = nullptr;
  int body = -1;             ///< Index in RagdollAsset::bodies; -1 for the capsule.
  bool capsule = false;      ///< The character capsule.
  Slot slot = Slot::Pelvis;  ///< The body's humanoid slot (BodyDef::slot).
  int joint = -1;            ///< Index in RagdollAsset::joints to its parent body; -1 for the root body.
  int bone = -1;             ///< The skeleton joint the body rides on (BodyDef::joint).
};
/// [step-safe] Thread-safety: as PhysicsWorld.
RagdollBodyInfo ragdollBodyInfo(const PhysicsWorld& world, BodyId body);

/// One character's ragdoll in one PhysicsWorld: owns its bodies, joints and capsule (destroyed
/// with it). Non-copyable. Every engine write to those goes through it: the bodies' states, the
/// capsule's pose and each joint's motor (whose one owner it arbitrates). Bodies start kinematic
/// at the animated pose (Authority::Animation). Thread-safety: used by the thread that steps its
/// PhysicsWorld; the shared asset is only read.
class Ragdoll {
 public:
  /// `skeleton` is the one the asset was built for (its rest pose is the bind pose); `models`
  /// is the current model pose (rootFromJoint) the bodies start at.
  static Result<std::unique_ptr<Ragdoll>> create(PhysicsWorld& world,
                                                 std::shared_ptr<const RagdollAsset> asset,
                                                 const Skeleton& skeleton, const Transform& worldFromRoot,
                                                 std::span<const Transform> models);
  ~Ragdoll();
  Ragdoll(const Ragdoll&) = delete;
  Ragdoll& operator=(const Ragdoll&) = delete;

  const RagdollAsset& asset() const { return *asset_; }
  PhysicsWorld& world() const { return *world_; }
  int bodyCount() const { return static_cast<int>(bodies_.size()); }
  BodyId body(int index) const { return bodies_[static_cast<size_t>(index)]; }
  JointId joint(int index) const { return joints_[static_cast<size_t>(index)]; }
  BodyId capsule() const { return capsule_; }
  Authority authority(int index) const { return authority_[static_cast<size_t>(index)]; }
  const PoseHistory& history() const { return history_; }
  /// The object that drives this ragdoll, for a game that finds it from a body
  /// (ragdollBodyInfo): a Character sets itself. Not read by the ragdoll. [default null]
  const void* user() const { return user_; }
  void setUser(const void* user) { user_ = user; }

  /// Animated state: computes every body's worldFromBody from the model pose at `time`, checks
  /// it (NaN/Inf and non-advancing time are refused, state unchanged), records it in the
  /// history and moves the kinematic bodies there over the next step of length `dt` with
  /// kinematic moves. The capsule follows the root. `worldFromBodies`, when given (one per
  /// body), are the poses recorded and moved to instead of the model pose's (a controller
  /// easing the bodies onto the animation); the capsule still follows `models`. [step-safe]
  Status setAnimatedPose(double time, const Transform& worldFromRoot, std::span<const Transform> models,
                         bool teleport, double dt, std::span<const Transform> worldFromBodies = {});

  /// Capsule only while animated (distant NPCs, a crowd): `on` takes every body out of the
  /// simulation (PhysicsWorld::setEnabled false; the joints leave with them) and the capsule
  /// alone represents the character, as Jolt's Ragdoll::RemoveFromPhysicsSystem does; from then
  /// setAnimatedPose records the history as before (the commit's velocities come from it) and
  /// moves the capsule only, so a step costs the engine one kinematic body instead of every
  /// body and the pairs their bounds overlap. Refused (false, nothing changes) unless every body
  /// is on the animation (Authority::Animation) and no joint has broken. `off`, and anything
  /// that needs the bodies (commitBodies' write phase, setInternalCollisions(true),
  /// resetBodies): every body back in the simulation, kinematic and at rest at the newest
  /// animated pose (the history's), moved by the next setAnimatedPose. A commit from capsule
  /// only reads the same history and the same static geometry as one from kinematic bodies, so
  /// it commits the same velocities; only the engine's contact caches start cold. While
  /// capsule only, bodyPose and readBodyPoses give the newest animated pose, while the engine's
  /// own pose of a body (PhysicsWorld::transform) stays where it left the simulation: placing 15
  /// bodies a step out of the world cost a capsule-only character up to twice its time and its
  /// flatness to 128 characters. Returning the bodies adds them to the engine's broadphase,
  /// which in Bullet allocates (one proxy per body): the commit out of capsule only allocates
  /// there. [step-safe apart from that]
  bool setCapsuleOnly(bool on);
  bool capsuleOnly() const { return capsuleOnly_; }

  /// The atomic commit of SPEC.md section 3. On failure every body stays kinematic and the
  /// record says why.
  HandoffRecord commit(const HandoffSettings& settings);
  /// The same commit into the caller's `record`, which it overwrites whole (every field as the
  /// value-returning commit sets it). Its vectors and name strings keep their storage: a record
  /// kept per character and reused allocates nothing once it has held as many bodies and joints.
  void commit(const HandoffSettings& settings, HandoffRecord& record);

  /// The step the character is animated with: the `dt` of the last setAnimatedPose (1/60 s
  /// before the first). [s]
  double animationStep() const { return animationStep_; }
  /// HandoffSettings::stepTime and limitLookAhead as the commit uses them: the value given, or
  /// derived from animationStep() and the world's joint ERP. [s]
  double stepTimeFor(const HandoffSettings& settings) const;
  double limitLookAheadFor(const HandoffSettings& settings) const;

  /// The same commit for some bodies only (a powered or partial ragdoll, or the rest of one
  /// knocked out): every body with mask[b] != 0 must be animated and becomes dynamic under
  /// `authority` from the newest animated pose with the inherited velocities; bodies already
  /// dynamic keep their state (their joints to the committed bodies are re-anchored at the current
  /// poses); other animated bodies stay kinematic. The capsule goes off (the dynamic limbs are the
  /// blocking representation). An empty mask means every body. All or nothing, as commit().
  HandoffRecord commitBodies(const HandoffSettings& settings, std::span<const std::uint8_t> mask,
                             Authority authority);
  /// commitBodies into the caller's `record` (storage reused, as commit(settings, record)).
  void commitBodies(const HandoffSettings& settings, std::span<const std::uint8_t> mask, Authority authority,
                    HandoffRecord& record);
  /// Relabels every dynamic body's authority (Drive <-> Physics: drives on or off). [step-safe]
  void setDynamicAuthority(Authority authority);
  /// Hands the bodies with mask[b] != 0 back to the animation: kinematic, at rest, moved by the
  /// next setAnimatedPose (continuing from where physics left them). [step-safe]
  void makeBodiesAnimated(std::span<const std::uint8_t> mask);

  /// Commit at a given final animation pose (the usual call: "go ragdoll now, from this
  /// pose"): records it as the newest sample (when its time advances) and commits. A pose that
  /// cannot initialise a body (NaN, Inf) abandons the handoff, naming the bone; nothing changes.
  HandoffRecord commitAt(const HandoffSettings& settings, double time, const Transform& worldFromRoot,
                         std::span<const Transform> models, bool teleport = false);

  /// Adds a denser velocity sample of the animation shortly before the newest one (see
  /// PoseHistory::insertBeforeNewest) without moving any body: the commit's finite difference
  /// then approximates the instantaneous velocity, which is what the joints can carry without
  /// correction. SPEC.md section 3: "for faster motion sample more densely". [step-safe]
  Status addDenseSample(double time, const Transform& worldFromRoot, std::span<const Transform> models);

  /// Fills the after-first-step fields of a record (call right after the step that follows
  /// the commit).
  void recordFirstStep(HandoffRecord& record) const;

  /// Current engine poses, bodyCount() elements (capsule only: the newest animated pose).
  /// [step-safe]
  void readBodyPoses(std::span<Transform> worldFromBodies) const;
  /// Body `index`'s pose as readBodyPoses gives it. [step-safe]
  Transform bodyPose(int index) const;

  /// Eases limits widened at the commit back toward the asset's as joints return inside them,
  /// and switches collision back on between non-adjacent bodies that touched at the commit once
  /// they have separated. Call once after each step while the ragdoll is dynamic (Character does
  /// in Ragdoll and Powered): the first step after a commit keeps the room the commit gave a
  /// joint moving toward a limit (HandoffSettings::limitLookAhead). [step-safe]
  void updateLimits();
  /// Pairs of non-adjacent bodies whose collision is off since the commit (they touched in the
  /// committed pose: colliding would have pushed them apart, a pop).
  int suspendedPairCount() const { return suspendedCount_; }

  /// Collision between the character's own non-adjacent bodies ("internal collisions", as
  /// PuppetMaster calls them; adjacent bodies never collide, their joint excludes them). Off:
  /// every non-adjacent pair ignores the other (PhysicsWorld::setPairCollision), whatever the
  /// bodies' motion types; other characters and the world still collide. On (the default): pairs
  /// touching now (within the commit's reach) stay off until they separate, as the pairs
  /// suspended at a commit, so switching on never pushes interpenetrating limbs apart in one
  /// step; the others collide at once. Makes no engine call for pairs already as wanted; the
  /// first switch off may grow the engine's per-body ignore lists (an allocation outside the
  /// physics step), later switches reuse them. [step-safe apart from that]
  void setInternalCollisions(bool enabled);
  bool internalCollisions() const { return internalCollisions_; }
  /// Non-adjacent pairs the engine lets collide now (neither switched off nor suspended).
  int collidingPairCount() const;
  /// Limits currently given to the engine for joint `index`. [rad]
  const Vec3& jointLower(int index) const { return lower_[static_cast<size_t>(index)]; }
  const Vec3& jointUpper(int index) const { return upper_[static_cast<size_t>(index)]; }

  /// Largest distance between the two anchors of any joint that has not broken and holds a body
  /// that is not on the animation (between two bodies on the animation the distance is the
  /// animation's own bone stretch, not the solver's). [m]
  double maxJointSeparation() const;

  /// Breakable joints (the asset's finite breakForce / breakTorque): call once after each step,
  /// with the caller's time at the end of that step and its length; the joints that broke in it
  /// are appended to jointBreaks(). A broken joint stays broken: the ragdoll splits into pieces
  /// that each move on their own, written back from their own bodies; commits, the velocity
  /// projection, limits and jointSeparation skip it. Returns how many broke in this step. No
  /// allocation (room for every breakable joint is reserved at creation). [step-safe]
  int updateBreaks(double stepEndTime, double dt);
  /// Every break so far, in order.
  std::span<const JointBreak> jointBreaks() const { return breaks_; }
  bool jointBroken(int index) const { return broken_[static_cast<size_t>(index)] != 0; }
  /// Whether any joint has broken (the ragdoll is in pieces).
  bool broken() const { return !breaks_.empty(); }

  /// Puts every body back under animation (kinematic) and re-enables the capsule. `blocking`
  /// false makes the kinematic limbs collide with nothing (SPEC.md section 4: during the get-up
  /// transition the capsule is the only blocking representation). The history restarts: the
  /// next animated pose is taken as a teleport.
  void makeAnimated(bool blocking = true);
  /// Restores the asset's collision filters on kinematic limbs (after a non-blocking phase).
  void setBlocking(bool blocking);

  // --- Joint motors: one owner per joint (MotorOwner) ---
  /// Gives every joint's motor to `owner` (not None). Refused (false, nothing changes, counted in
  /// refusedMotorRequests()) while any joint's motor belongs to another owner: that one releases
  /// it first. True when `owner` holds them already. [step-safe]
  bool acquireMotors(MotorOwner owner);
  /// Switches off (PhysicsWorld::setJointMotor with a disabled motor) and frees every motor that
  /// `owner` holds; no effect on the others'. [step-safe]
  void releaseMotors(MotorOwner owner);
  /// Writes joint `index`'s engine motor for `owner`. Refused (false, nothing written, counted in
  /// refusedMotorRequests()) unless `owner` holds that motor. [step-safe]
  bool setJointMotor(int index, MotorOwner owner, const JointMotorSettings& motor);
  MotorOwner motorOwner(int index) const { return motorOwners_[static_cast<size_t>(index)]; }
  /// Whether joint `index`'s engine motor is on (the last write enabled it).
  bool motorEnabled(int index) const { return motorOn_[static_cast<size_t>(index)] != 0; }
  /// Acquisitions and writes refused since creation: 0 unless two writers competed.
  int refusedMotorRequests() const { return refusedMotorRequests_; }

  // --- Body and capsule writes ---
  /// Puts every body at worldFromBodies[b] (bodyCount() poses) at rest, re-enables any the engine
  /// disabled and makes every joint forget its cached impulses: the reset after a physics fault.
  /// [step-safe]
  void resetBodies(std::span<const Transform> worldFromBodies);
  /// Moves every body not on the animation rigidly by `jump` (worldFromNewRoot *
  /// inverse(worldFromOldRoot)), its velocities turned with it: a teleport carrying the physics.
  /// [step-safe]
  void carryDynamicBodies(const Transform& jump);
  /// Collision between `other` (a body that is not this ragdoll's: a held prop) and body `index`,
  /// or the capsule for index == bodyCount() (PhysicsWorld::setPairCollision). [step-safe]
  void setCollisionWith(BodyId other, int index, bool enabled);
  /// An impulse on body `index` at `worldPoint`. [N s] [m] [step-safe]
  void applyImpulse(int index, const Vec3& impulse, const Vec3& worldPoint);
  /// Wakes every body (sleeping bodies take no motor or impulse). [step-safe]
  void wakeBodies();
  /// The capsule at `worldFromCapsule` now (no velocity), or moved there over the next step of
  /// `dt` as a kinematic move. [step-safe]
  void placeCapsule(const Transform& worldFromCapsule);
  void moveCapsule(const Transform& worldFromCapsule, double dt);

 private:
  Ragdoll(PhysicsWorld& world, std::shared_ptr<const RagdollAsset> asset);
  void setJointsForPose(HandoffRecord& record, std::span<const std::uint8_t> mask);
  void makeVelocitiesConsistent(const HandoffSettings& settings, HandoffRecord& record,
                                std::span<const std::uint8_t> mask);
  PhysicsWorld* world_;
  std::shared_ptr<const RagdollAsset> asset_;
  std::vector<BodyId> bodies_;
  std::vector<JointId> joints_;
  std::vector<JointId> scratchJoints_;  // the commit's joints to clear (capacity: every joint)
  BodyId capsule_;
  const void* user_ = nullptr;
  std::vector<Authority> authority_;
  PoseHistory history_;
  std::vector<Transform> rootFromBodyBind_;  // bind pose of each body in root space
  std::vector<std::vector<int>> jointsOfBody_;
  std::vector<int> breakableJoints_;  // joints with a finite break force or torque
  std::vector<std::uint8_t> broken_;  // per joint
  std::vector<JointBreak> breaks_;    // reserved for every breakable joint
  int jointCountNeeded_ = 0;          // models must cover every body's joint
  bool teleportNext_ = false;         // the next animated pose is a teleport
  Transform worldFromRoot_;
  // Preallocated per-body buffers (no allocation in the step-safe calls).
  std::vector<Transform> scratchPoses_;
  std::vector<Vec3> rawLinear_, rawAngular_, linear_, angular_;
  std::vector<std::uint8_t> clamps_;
  // The velocity-consistency step (preallocated).
  VelocityProjector projector_;
  std::vector<ConsistencyBody> consistencyBodies_;
  std::vector<ConsistencyJoint> consistencyJoints_;
  std::vector<ConsistencyContact> consistencyContacts_;
  std::vector<Vec3> jointLinear_, jointAngular_, contactLinear_, contactAngular_;
  std::vector<Vec3> lower_, upper_;     // per joint, what the engine has
  double limitLookAhead_ = 1.0 / 60.0;  // HandoffSettings::limitLookAhead of the last commit [s]
  double animationStep_ = 1.0 / 60.0;   // dt of the last setAnimatedPose [s]
  std::vector<std::pair<int, int>> nonAdjacentPairs_;  // body index pairs not joined by a joint
  std::vector<double> boundingRadius_;                 // per body: shapeBoundingRadius [m]
  std::vector<PlacedBoundingCapsule> scratchBounds_;   // per body, placed at the commit's pose
  std::vector<double> scratchSpeeds_;                  // per body, its committed linear speed [m/s]
  std::vector<std::uint8_t> suspended_;                // per non-adjacent pair
  std::vector<std::uint8_t> pairColliding_;            // per non-adjacent pair: what the engine has
  int suspendedCount_ = 0;
  bool internalCollisions_ = true;
  bool capsuleOnly_ = false;  // every body out of the simulation (setCapsuleOnly)
  void leaveCapsuleOnly();
  std::vector<MotorOwner> motorOwners_;  // per joint
  std::vector<std::uint8_t> motorOn_;    // per joint: the last motor written was enabled
  int refusedMotorRequests_ = 0;
  /// `boundsA` and `boundsB`, when given, are the bodies' bounding capsules already placed at
  /// worldFromA and worldFromB (placeBoundingCapsule).
  /// `speedA` and `speedB` are the bodies' linear speeds [m/s].
  bool pairsTouching(int a, int b, const Transform& worldFromA, const Transform& worldFromB, double speedA,
                     double speedB, const PlacedBoundingCapsule* boundsA = nullptr,
                     const PlacedBoundingCapsule* boundsB = nullptr) const;
  void applyPairCollision(size_t pair);  // the engine gets internalCollisions_ && !suspended_
};

/// What exact rigid-body dynamics of the jointed ragdoll does to the committed linear velocities
/// over `dt` (first order, no gravity, no contacts, no engine): the joints' forces turn each
/// limb's velocity as the chain swings (centripetal and Coriolis terms, |omega|^2 r dt). The
/// reference the first frame's velocity continuity is measured around (measure.h). One entry per
/// body; zeros for a record that did not commit. Allocates (a measurement, not a step). [m/s]
std::vector<Vec3> rigidJointVelocityChange(const RagdollAsset& asset, const HandoffRecord& record, double dt);

/// Records a committed ragdoll's bodies after the first substep of the step that follows the
/// commit: the engine's first integration step, where the joints meet the inherited velocities
/// before any motion of the bodies adds to it (BodyHandoff::*AfterFirstSubstep). Add it to the
/// world's substep listeners for that one step (PhysicsWorld::addSubstepListener), step, call
/// finish(), then remove it. A Character does this itself for each of its commits. Records
/// nothing for a record that did not commit. Allocates nothing. Thread-safety: runs on the
/// thread that steps the ragdoll's world.
class FirstSubstepProbe final : public SubstepListener {
 public:
  FirstSubstepProbe(const Ragdoll& ragdoll, HandoffRecord& record) : ragdoll_(&ragdoll), record_(&record) {}
  void onSubstep(double substepDt) override;
  /// After the step: a step of one substep is recorded now (its first substep is the step).
  void finish();

 private:
  void record(double substepDt);
  const Ragdoll* ragdoll_;
  HandoffRecord* record_;
  int calls_ = 0;
  double firstSubstep_ = 0.0;
};

}  // namespace handoff
