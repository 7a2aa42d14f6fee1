// Joint drives of a powered ragdoll (SPEC.md section 5): the PD law as plain functions over spans,
// the explicit applier (equal and opposite angular impulses every substep) and the implicit
// option (the engine's own servo). docs/DRIVES.md explains the choice between the two.
//
// Frames (SPEC.md section 1). Body A is the parent, B the child of a joint; each body carries a
// fixed joint frame, bodyAFromJoint = T_CA_J and bodyBFromJoint = T_CB_J. With body rotations
// worldFromBodyA, worldFromBodyB:
//
//   qA = worldFromBodyA * bodyAFromJoint          (A's joint frame in world)
//   qB = worldFromBodyB * bodyBFromJoint          (B's joint frame in world)
//   qRel = inverse(qA) * qB                       (= jointAFromJointB, current)
//   qTarget = inverse(qA_target) * qB_target      (same, from the animation's target bodies,
//                                                  worldFromBody_target = worldFromBone_target *
//                                                  boneFromBody)
//
// The law, evaluated in A's joint frame (every vector below is in J_A unless named *World):
//
//   qTarget' = qTarget with its joint angles (handoff::jointAngles) made admissible:
//              locked axes (lower == upper) take the CURRENT angle (no drive about them, the joint
//              constraint holds them), limited axes (lower < upper) are clamped to [lower, upper],
//              free axes (lower > upper) are kept
//   qError   = shortArc(qTarget' * inverse(qRel));   e = rotationVector(qError)          [rad]
//   omegaRel = inverse(qA) * (omegaB - omegaA)                                           [rad/s]
//   tauA     = Kp * e + Kd * (omegaTarget' - omegaRel)                                   [N m]
//              (the static law is omegaTarget = 0: tauA = Kp * e - Kd * omegaRel;
//               omegaTarget' = omegaTarget without its rates about locked or clamped axes)
//   tauA    *= min(1, maxTorque / |tauA|)              (total clamp, direction kept)
//   tauWorld = qA * tauA;   angular impulse +tauWorld * dt on B and -tauWorld * dt on A.
//
// Drive weight w in [0, 1] (a ramp in or out of powered mode): Kp and maxTorque scale with w,
// Kd does not (weightedGains()).
//
// Pinning (world-space pulls toward the animated pose, an external force) is at the end.
//
// Thread-safety: the functions are pure and re-entrant. An ExplicitDrive or PinApplier belongs to
// one character and one PhysicsWorld and runs on that world's stepping thread.
#pragma once

#include "handoff/asset.h"
#include "handoff/math.h"
#include "handoff/physics.h"

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace handoff {

/// How joint drives are applied in powered mode (docs/DRIVES.md).
enum class DriveSolver : std::uint8_t {
  Explicit,  ///< Equal and opposite angular impulses every substep (ExplicitDrive).
  Implicit,  ///< The engine's own servo motors (applyImplicitDrive).
};

// ------------------------------------------------------------------------------------------------
// Gains and joints
// ------------------------------------------------------------------------------------------------

/// PD gains of one joint drive. The asset's JointPreset supplies them per joint group.
struct DriveGains {
  double stiffness = 0.0;  ///< Kp. [N m/rad] [>= 0] [default 0]
  double damping = 0.0;    ///< Kd. [N m s/rad] [>= 0] [default 0]
  /// Clamp on the magnitude of the total torque vector. [N m] [>= 0, may be +inf] [default +inf]
  double maxTorque = std::numeric_limits<double>::infinity();
};

/// Gains after a drive weight w: {Kp * w, Kd, maxTorque * w}. w is clamped to [0, 1]; a
/// non-finite w counts as 0 (drive off). At w = 0 the torque clamp is 0, so the drive is off.
DriveGains weightedGains(const DriveGains& gains, double weight);

/// One joint as the drive sees it (a compact view of asset JointDef, no strings).
struct DriveJoint {
  int bodyA = -1;  ///< Parent body, index into the per-body arrays of the caller. [>= 0]
  int bodyB = -1;  ///< Child body. [>= 0]
  Quat bodyAFromJoint{1.0, 0.0, 0.0, 0.0};  ///< Rotation of T_CA_J. [unit]
  Quat bodyBFromJoint{1.0, 0.0, 0.0, 0.0};  ///< Rotation of T_CB_J. [unit]
  /// Limits per axis of J in the convention of handoff::jointAngles (X twist, Y, Z): lower ==
  /// upper locks the axis, lower < upper limits it, lower > upper frees it. [rad]
  Vec3 angularLower{0.0};
  Vec3 angularUpper{0.0};
  DriveGains gains;
};

/// The drive view of an asset joint (body indices are asset body indices).
DriveJoint driveJointFromDef(const JointDef& joint);
/// All joints of an asset, in asset order. Allocates: call at setup.
std::vector<DriveJoint> driveJointsFromAsset(const RagdollAsset& asset);

// ------------------------------------------------------------------------------------------------
// Targets
// ------------------------------------------------------------------------------------------------

/// qRel = inverse(worldFromBodyA * bodyAFromJoint) * (worldFromBodyB * bodyBFromJoint): the
/// same formula gives the current relative rotation (from body rotations) and the target
/// (from target body rotations, worldFromBone_target * boneFromBody).
Quat jointRelativeRotation(const Quat& worldFromBodyA, const Quat& worldFromBodyB, const Quat& bodyAFromJoint,
                           const Quat& bodyBFromJoint);

/// Joint targets of every joint from target body rotations (one per body).
struct JointTargetsJob {
  std::span<const DriveJoint> joints;
  std::span<const Quat> worldFromBodyTargets;  ///< Per body: worldFromBone_target * boneFromBody.
  std::span<Quat> jointTargets;                ///< Out, per joint: qTarget (jointAFromJointB).
  bool validate() const;
  /// False (and nothing written) when validate() fails.
  bool run() const;
};

/// Relative target velocity omegaTarget of every joint, in A's joint frame, from two target
/// samples dt apart: the SPEC.md section 3 delta q1 * inverse(q0) (short arc, atan2 angle), which
/// for jointAFromJointB rotations is expressed in J_A. [rad/s]
struct JointTargetVelocitiesJob {
  std::span<const Quat> previousTargets;  ///< qTarget at t - dt, per joint.
  std::span<const Quat> currentTargets;   ///< qTarget at t, per joint.
  double dt = 0.0;                        ///< [s] [> 0, finite]
  std::span<Vec3> targetVelocities;       ///< Out, per joint. [rad/s]
  bool validate() const;
  bool run() const;
};

// ------------------------------------------------------------------------------------------------
// The law
// ------------------------------------------------------------------------------------------------

/// Target joint angles made admissible (see the header comment): locked axes take
/// `currentAngles`, limited axes are clamped, free axes kept. `clampedAxes` (optional) receives
/// per axis whether the axis was locked or its target clamped. [rad]
Vec3 admissibleTargetAngles(const Vec3& targetAngles, const Vec3& currentAngles, const Vec3& lower,
                            const Vec3& upper, glm::bvec3* clampedAxes = nullptr);

/// The admissible target joint angles for the rotation `target` (qTarget): per axis as
/// admissibleTargetAngles (locked axes take `lockedAngles`, limited axes clamped) when no limited
/// axis has to be clamped. When one does, the clamp of each angle alone can land far from the
/// target (by the gimbal lock of the X-Y-Z angles, where X and Z turn about nearly the same axis,
/// or past it, where the clip's angles flip to the other Euler branch): the result is then the
/// rotation within the limits nearest to the target (with its locked axes replaced), by projected
/// Gauss-Newton on the angles from the per-axis clamps of both Euler branches. `clampedAxes`
/// (optional): locked, clamped, or (projection) on a limit. Never allocates. [rad]
Vec3 nearestAdmissibleAngles(const Quat& target, const Vec3& lockedAngles, const Vec3& lower,
                             const Vec3& upper, glm::bvec3* clampedAxes = nullptr);

/// omegaTarget without its rates about the axes in `removeAxes`: decomposed into joint-angle
/// rates at `rawTargetAngles` (where omegaTarget belongs) and recomposed at
/// `admissibleAngles`. Zero near gimbal lock (|angle y| -> pi/2), where the rates are undefined.
/// Vectors in J_A. [rad/s]
Vec3 admissibleTargetVelocity(const Vec3& targetVelocity, const Vec3& rawTargetAngles,
                              const Vec3& admissibleAngles, glm::bvec3 removeAxes);

/// The PD law and the total clamp, in A's joint frame:
/// tauA = Kp e + Kd (omegaTarget - omegaRel), then |tauA| <= maxTorque. [N m]
Vec3 driveTorque(const Vec3& error, const Vec3& relativeVelocity, const Vec3& targetVelocity,
                 const DriveGains& gains, bool* saturated = nullptr);

/// Inputs of one joint's drive.
struct JointDriveInput {
  Quat worldFromBodyA{1.0, 0.0, 0.0, 0.0};  ///< Current rotation of body A. [unit]
  Quat worldFromBodyB{1.0, 0.0, 0.0, 0.0};
  Vec3 angularVelocityA{0.0};       ///< World. [rad/s]
  Vec3 angularVelocityB{0.0};       ///< World. [rad/s]
  Quat target{1.0, 0.0, 0.0, 0.0};  ///< qTarget = jointAFromJointB wanted. [unit]
  Vec3 targetVelocity{0.0};         ///< omegaTarget in J_A; zero for a static target. [rad/s]
  double weight = 1.0;              ///< Drive weight. [0, 1] [default 1]
};

/// Everything the law computed for one joint (diagnostics, error thresholds, debug drawing).
struct JointDriveOutput {
  Vec3 currentAngles{0.0};     ///< jointAngles(qRel). [rad]
  Vec3 targetAngles{0.0};      ///< Admissible target angles. [rad]
  Vec3 error{0.0};             ///< e in J_A. [rad]
  Vec3 relativeVelocity{0.0};  ///< omegaRel in J_A. [rad/s]
  Vec3 torque{0.0};            ///< tauA in J_A after the clamp. [N m]
  Vec3 torqueWorld{0.0};       ///< tauWorld = qA * tauA: on B, its negative on A. [N m]
  bool saturated = false;      ///< The total clamp was active.
  bool valid = true;           ///< False when an input was not finite: torque is then zero.
};

/// The whole law for one joint. Never allocates or throws; non-finite inputs give zero torque
/// and valid = false.
JointDriveOutput computeJointDrive(const DriveJoint& joint, const JointDriveInput& input);

/// The law for every joint of a character, from per-body states.
struct DriveJob {
  std::span<const DriveJoint> joints;
  std::span<const Quat> worldFromBodies;    ///< Current body rotations, per body.
  std::span<const Vec3> angularVelocities;  ///< World, per body. [rad/s]
  std::span<const Quat> jointTargets;       ///< qTarget per joint.
  std::span<const Vec3> targetVelocities;   ///< omegaTarget per joint in J_A; empty = static. [rad/s]
  std::span<const double> weights;          ///< Per joint; empty = 1. [0, 1]
  std::span<Vec3> torquesWorld;             ///< Out, per joint: tauWorld (on B; -tauWorld on A). [N m]
  std::span<JointDriveOutput> details;      ///< Optional out, per joint (empty = not written).
  bool validate() const;
  /// False (and nothing written) when validate() fails.
  bool run() const;
};

/// Stability index of the explicit drive on one joint over a step h: k + 2c with
/// k = h^2 Kp / I and c = h Kd / I, where 1 / I = `inverseInertia` is the relative inverse
/// inertia about the drive axis (1 / I_A + 1 / I_B). A spring-damper applied from the state at
/// the start of the step and integrated as the engines do (velocity, then position) is stable
/// exactly when the index is < 4; below ~1 it also keeps the discrete damping from ringing.
/// [dimensionless]
double explicitStabilityIndex(const DriveGains& gains, double inverseInertia, double dt);

/// The relative inverse inertia the drive of a joint acts against, 1 / I in
/// explicitStabilityIndex(): the largest eigenvalue of I_A^-1 + I_B^-1 (each body's inverse inertia
/// tensor, given in its body space C, turned to world by its rotation), expressed in A's joint
/// frame and restricted to the axes of J that are not locked (a hinge: the hinge axis alone).
/// The joint's linear coupling makes the real inertia larger, so this is an upper bound.
/// Zero when every axis is locked. [1/(kg m^2)]
double jointInverseInertia(const DriveJoint& joint, const Quat& worldFromBodyA, const Quat& worldFromBodyB,
                           const glm::dmat3& bodyAInverseInertia, const glm::dmat3& bodyBInverseInertia);

// ------------------------------------------------------------------------------------------------
// Explicit drive: equal and opposite angular impulses in every substep
// ------------------------------------------------------------------------------------------------

enum class TorqueApplication : std::uint8_t {
  EqualAndOpposite,  ///< +tau dt on B, -tau dt on A. The only physical choice.
  /// TEST ONLY: +tau dt on B alone. Breaks the conservation of angular momentum (the drive then
  /// acts as an external torque); exists to show that in a test.
  ChildOnlyForTesting,
};

namespace drive_detail {
/// ExplicitDrive's per-joint memo of nearestAdmissibleAngles (not for callers).
struct AdmissibleTarget {
  bool known = false;
  Quat given{1.0, 0.0, 0.0, 0.0};   ///< The target it was found for.
  Vec3 locked{0.0};                 ///< The current angles about the locked axes (0 elsewhere).
  Vec3 raw{0.0};                    ///< jointAngles(given).
  Vec3 angles{0.0};                 ///< The admissible angles.
  glm::bvec3 clamped{false};        ///< The axes the search clamped or locked.
  Quat target{1.0, 0.0, 0.0, 0.0};  ///< The admissible rotation (given when angles == raw).
};
/// computeJointDrive reusing / refreshing `memo` (ExplicitDrive).
JointDriveOutput computeJointDrive(const DriveJoint& joint, const JointDriveInput& input,
                                   AdmissibleTarget& memo);
}  // namespace drive_detail

/// Applies the drive of one character in every substep of its PhysicsWorld
/// (world.addSubstepListener(&drive)). Buffers are sized at construction; onSubstep neither
/// allocates nor throws. Targets and weights are set by the caller each frame; they hold over
/// the substeps of the frame. Non-copyable, per character.
class ExplicitDrive final : public SubstepListener {
 public:
  /// `bodies[i]` is the engine body of body index i used by `joints`. Asserts that every
  /// joint's indices are in range. Targets start at the identity, weights at 1.
  ExplicitDrive(PhysicsWorld& world, std::span<const BodyId> bodies, std::span<const DriveJoint> joints);
  ExplicitDrive(const ExplicitDrive&) = delete;
  ExplicitDrive& operator=(const ExplicitDrive&) = delete;

  int jointCount() const { return static_cast<int>(joints_.size()); }
  std::span<const DriveJoint> joints() const { return joints_; }

  /// Sets one joint's target (qTarget, and omegaTarget in J_A, zero for a static target).
  /// Non-finite values are rejected (false, target unchanged). The quaternion is normalised.
  bool setTarget(int joint, const Quat& target, const Vec3& targetVelocity = Vec3{0.0});
  /// All joints at once (`targetVelocities` may be empty: static targets). All or nothing:
  /// false and no change when a size differs or a value is not finite.
  bool setTargets(std::span<const Quat> targets, std::span<const Vec3> targetVelocities);
  /// Drive weight of one joint or of all joints. [0, 1]; non-finite or outside: rejected (false).
  bool setWeight(int joint, double weight);
  bool setWeight(double weight);
  double weight(int joint) const { return weights_[static_cast<size_t>(joint)]; }

  /// Switches the drive on or off (off: onSubstep does nothing). [default on]
  void setEnabled(bool enabled) { enabled_ = enabled; }
  bool enabled() const { return enabled_; }
  void setTorqueApplication(TorqueApplication application) { application_ = application; }
  TorqueApplication torqueApplication() const { return application_; }

  /// Optional stability guard (off by default: the law runs with the gains as given). With a
  /// limit > 0, every substep each joint's Kp and Kd (after the weight) are scaled down together,
  /// keeping their ratio, so that explicitStabilityIndex() <= limit, with 1 / I from
  /// jointInverseInertia() at the current pose (inertia tensors read from the world at
  /// construction; a body without positive inertia counts as immovable). 1 is a good value; the
  /// explicit spring-damper diverges at 4. Non-finite or negative: rejected (false).
  bool setStabilityLimit(double limit);
  double stabilityLimit() const { return stabilityLimit_; }
  /// Per joint, the factor the guard applied to Kp and Kd in the last substep (1 = none). [0, 1]
  std::span<const double> lastStabilityScales() const { return stabilityScales_; }

  /// Optional end-of-substep law (off by default: the law as written above). On, each joint's
  /// PD is evaluated at the end of the substep for its two bodies alone, as the engine's implicit
  /// servo solves it ("stable PD", Tan, Liu and Turk 2011): with D = Kd + h Kp and
  /// M = I_A^-1 + I_B^-1 in J_A at the current pose (the inverse inertia the joint turns),
  ///   tauA = (1 + h D M)^-1 (Kp e + D (omegaTarget' - omegaRel)),
  /// then the total clamp. Unconditionally stable for an isolated joint, whatever the gains and
  /// the substep; still equal and opposite impulses from the start-of-substep state, so momentum
  /// is conserved as with the plain law. The weight applies first (Kp * w, Kd). Runs after the
  /// stability guard when both are on (switch the guard off: this law needs none).
  void setEndOfSubstepLaw(bool on) { endOfSubstepLaw_ = on; }
  bool endOfSubstepLaw() const { return endOfSubstepLaw_; }

  /// Reads the bodies' rotations and angular velocities, computes every joint's torque and
  /// applies the angular impulses (one call per body). Ignores dt <= 0 or non-finite.
  void onSubstep(double substepDt) override;

  /// Per joint, the law's result in the last substep.
  std::span<const JointDriveOutput> lastResults() const { return results_; }
  /// Joints whose torque was clamped in the last substep.
  int saturatedJoints() const;
  /// Joints skipped in the last substep because a body state was not finite.
  int invalidJoints() const;

 private:
  PhysicsWorld& world_;
  std::vector<BodyId> bodies_;
  std::vector<DriveJoint> joints_;
  std::vector<Quat> targets_;
  std::vector<Vec3> targetVelocities_;
  std::vector<double> weights_;
  // Per-substep scratch, sized at construction.
  std::vector<Quat> bodyRotations_;
  std::vector<Vec3> bodyAngularVelocities_;
  std::vector<Vec3> bodyImpulses_;
  std::vector<JointDriveOutput> results_;
  std::vector<glm::dmat3> bodyInverseInertia_;  // per body, in body space C
  std::vector<double> stabilityScales_;
  /// Per joint: the last substep's admissible target and what it depended on (the target and
  /// the current angles about locked axes; the limits are fixed). A later substep with the same
  /// inputs (the targets hold over a frame's substeps) reuses it, the same values bit for bit,
  /// without the nearest-admissible-target search.
  std::vector<drive_detail::AdmissibleTarget> admissible_;
  double stabilityLimit_ = 0.0;
  bool endOfSubstepLaw_ = false;
  bool enabled_ = true;
  TorqueApplication application_ = TorqueApplication::EqualAndOpposite;
};

// ------------------------------------------------------------------------------------------------
// Implicit drive: the engine's own servo (PhysicsWorld::setJointMotor)
// ------------------------------------------------------------------------------------------------

/// How the implicit drive hands its targets to the engine's servo.
enum class ServoTargets : std::uint8_t {
  /// The target is the admissible rotation nearest the animation's (nearestAdmissibleAngles) and
  /// the servo's rows ask for the joint-angle rates its PD means (JointMotorSettings::
  /// angleRateRows). Powered mode and the get-up gather; the default.
  Nearest,
  /// For comparison: each target angle clamped on its own
  /// (admissibleTargetAngles) and the rates asked of the engine's rows as they are (near the
  /// gimbal lock of the X-Y-Z angles the rows of X and Z then ask for 1 / cos(y) times the rate).
  PerAxis,
};

/// The motor settings handing the same target and weighted gains to the engine's implicit
/// spring: target = qTarget with its joint angles clamped to the limits (a locked axis to its
/// lock value), per open axis stiffness Kp * w and damping Kd, zero on locked axes (the joint
/// holds them), maxTorque * w as the engine's per-axis limit (so the total may exceed the
/// explicit clamp by up to sqrt(open axes)). `targetVelocity` (omegaTarget in J_A, as the explicit
/// law's) becomes the servo's target joint-angle rates on the open axes whose target was not
/// clamped (JointMotorSettings::targetRates), so a moving target is tracked without the damping
/// lag. A non-finite target gives the motor disabled.
JointMotorSettings implicitMotorSettings(const DriveJoint& joint, const Quat& target, double weight,
                                         const Vec3& targetVelocity = Vec3{0.0},
                                         ServoTargets mode = ServoTargets::Nearest);

/// Hands every joint's target and weighted gains to the engine (setJointMotor per joint).
/// `weights` may be empty (1), `targetVelocities` too (static targets). Spans sized alike
/// (asserted). Never allocates.
void applyImplicitDrive(PhysicsWorld& world, std::span<const JointId> engineJoints,
                        std::span<const DriveJoint> joints, std::span<const Quat> targets,
                        std::span<const double> weights, ServoTargets mode = ServoTargets::Nearest);
void applyImplicitDrive(PhysicsWorld& world, std::span<const JointId> engineJoints,
                        std::span<const DriveJoint> joints, std::span<const Quat> targets,
                        std::span<const Vec3> targetVelocities, std::span<const double> weights,
                        ServoTargets mode = ServoTargets::Nearest);

/// Switches the engine servos of the joints off (leaving powered mode or going to explicit).
void disableImplicitDrive(PhysicsWorld& world, std::span<const JointId> engineJoints);

// ------------------------------------------------------------------------------------------------
// Pinning: world-space PD pulling chosen bodies toward their animated pose (off by default)
// ------------------------------------------------------------------------------------------------
//
// Unlike a joint drive, a pin is an EXTERNAL force: it changes the character's total momentum
// (that is its purpose: hold the pelvis up, keep the feet planted). PinApplier sums every impulse
// it applies so the handoff record and reports can say how much came from outside.
//
// Gains are accelerations (PhysX's "acceleration" drive mode), so one setting suits a light
// hand and a heavy pelvis alike, and the explicit stability bound does not depend on the mass:
// h^2 K + 2 h D < 4 (explicitStabilityIndex with inverse inertia 1).
//
//   a     = K_lin (p_target - p) + D_lin (v_target - v),       |a| <= maxLinearAcceleration
//   alpha = K_ang e + D_ang (omega_target - omega),             |alpha| <= maxAngularAcceleration
//           e = rotationVector(shortArc(q_target * inverse(q)))  (world)
//   impulses per substep h: m a h at the centre of mass, I_world alpha h.
// The pin weight w in [0, 1] scales K and the maxima, not D (as the drive weight).

struct PinGains {
  double linearStiffness = 0.0;  ///< K_lin. [1/s^2] [>= 0] [default 0: no pull]
  double linearDamping = 0.0;    ///< D_lin. [1/s] [>= 0] [default 0]
  /// [m/s^2] [>= 0, may be +inf] [default +inf]
  double maxLinearAcceleration = std::numeric_limits<double>::infinity();
  double angularStiffness = 0.0;  ///< K_ang. [1/s^2] [>= 0] [default 0]
  double angularDamping = 0.0;    ///< D_ang. [1/s] [>= 0] [default 0]
  /// [rad/s^2] [>= 0, may be +inf] [default +inf]
  double maxAngularAcceleration = std::numeric_limits<double>::infinity();
};

/// Gains after a pin weight w: stiffness and maxima times w (w clamped to [0, 1], non-finite = 0).
PinGains weightedPinGains(const PinGains& gains, double weight);

struct PinInput {
  Transform worldFromBody;          ///< Current pose (centre of mass). [m]
  Vec3 linearVelocity{0.0};         ///< [m/s]
  Vec3 angularVelocity{0.0};        ///< [rad/s]
  Transform target;                 ///< Animated pose of the body. [m]
  Vec3 targetLinearVelocity{0.0};   ///< [m/s]
  Vec3 targetAngularVelocity{0.0};  ///< [rad/s]
  double weight = 1.0;              ///< [0, 1] [default 1]
};

struct PinOutput {
  Vec3 positionError{0.0};        ///< p_target - p. [m]
  Vec3 rotationError{0.0};        ///< e (world). [rad]
  Vec3 linearAcceleration{0.0};   ///< a after the clamp. [m/s^2]
  Vec3 angularAcceleration{0.0};  ///< alpha after the clamp. [rad/s^2]
  bool saturatedLinear = false;
  bool saturatedAngular = false;
  bool valid = true;  ///< False when an input was not finite: accelerations are then zero.
};

/// The pin law for one body. Never allocates or throws.
PinOutput computePin(const PinGains& gains, const PinInput& input);

/// Applies pins to chosen bodies every substep. Buffers sized at construction; onSubstep neither
/// allocates nor throws. Targets start at each body's pose at construction (so an unset pin
/// holds its body where it was), weights at 1.
class PinApplier final : public SubstepListener {
 public:
  PinApplier(PhysicsWorld& world, std::span<const BodyId> bodies, std::span<const PinGains> gains);
  /// Pins `bodies` with `gains` from now on, as a new applier would (targets at the bodies' poses,
  /// weights 1, enabled, the impulse sums at zero); the storage is reused: no allocation for up to
  /// as many pins as it has held.
  void reset(std::span<const BodyId> bodies, std::span<const PinGains> gains);
  PinApplier(const PinApplier&) = delete;
  PinApplier& operator=(const PinApplier&) = delete;

  int pinCount() const { return static_cast<int>(bodies_.size()); }
  /// Target pose and velocities of pin `pin`. Non-finite values: rejected (false), unchanged.
  /// `timeAhead` [s] [>= 0] [default 0]: the pose is where the body should be that long after the
  /// next substep begins (a controller that sets the pose at the end of the coming frame passes
  /// the frame's dt). Each substep then pulls toward the pose moved back along the target's
  /// velocities by the time still ahead at the substep's start, so a body that already moves with
  /// its target feels no pull, where a pose held at the frame's end would pull it ahead by
  /// K v timeAhead (0.84 m/s in the first substep of a foot at 3.8 m/s, K 1600, dt 1/60 s).
  bool setTarget(int pin, const Transform& worldFromBody, const Vec3& linearVelocity = Vec3{0.0},
                 const Vec3& angularVelocity = Vec3{0.0}, double timeAhead = 0.0);
  /// [0, 1]; non-finite or outside: rejected (false).
  bool setWeight(int pin, double weight);
  bool setWeight(double weight);
  void setEnabled(bool enabled) { enabled_ = enabled; }
  bool enabled() const { return enabled_; }

  void onSubstep(double substepDt) override;

  std::span<const PinOutput> lastResults() const { return results_; }
  /// Sum of the linear impulses applied since construction or resetExternalImpulse(). [N s]
  Vec3 externalLinearImpulse() const { return linearImpulse_; }
  /// Sum of the angular impulses about each body's centre of mass, plus the moment of the linear
  /// impulses about the world origin: the change of the angular momentum about the origin. [N m s]
  Vec3 externalAngularImpulse() const { return angularImpulse_; }
  /// Sum of the magnitudes of the linear impulses (a push and a brake do not cancel): how much
  /// the pins did. [N s]
  double externalLinearImpulseApplied() const { return linearImpulseApplied_; }
  void resetExternalImpulse() {
    linearImpulse_ = Vec3{0.0};
    angularImpulse_ = Vec3{0.0};
    linearImpulseApplied_ = 0.0;
  }

 private:
  struct Target {
    Transform worldFromBody;
    Vec3 linearVelocity{0.0};
    Vec3 angularVelocity{0.0};
    double timeAhead = 0.0;  ///< Left until worldFromBody's time at the next substep's start. [s]
  };
  PhysicsWorld& world_;
  std::vector<BodyId> bodies_;
  std::vector<PinGains> gains_;
  std::vector<Target> targets_;
  std::vector<double> weights_;
  std::vector<PinOutput> results_;
  Vec3 linearImpulse_{0.0};
  Vec3 angularImpulse_{0.0};
  double linearImpulseApplied_ = 0.0;
  bool enabled_ = true;
};

/// Runs several substep listeners in order (a world takes one): e.g. the explicit drive, then the
/// pins. Holds up to kCapacity non-owning pointers; onSubstep neither allocates nor throws.
/// Thread-safety: as its listeners, on the thread that steps the world.
class SubstepListenerList final : public SubstepListener {
 public:
  static constexpr int kCapacity = 8;
  /// False when full or `listener` is null.
  bool add(SubstepListener* listener);
  void clear() { count_ = 0; }
  int size() const { return count_; }
  void onSubstep(double substepDt) override;

 private:
  SubstepListener* listeners_[kCapacity] = {};
  int count_ = 0;
};

}  // namespace handoff
