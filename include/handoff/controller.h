// The per-character state machine (SPEC.md sections 3 to 6): Animated -> Ragdoll ->
// Recovering -> Animated, and Animated <-> Powered (joint drives track the animation, on every
// body or on some: a partial ragdoll) with hit reactions that return to animation or knock the
// character out into a full ragdoll. Composed from the handoff, recovery and drive pieces. One
// authority per body at every step, and exactly one blocking representation (the dynamic limbs
// or the capsule).
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
#include "handoff/history.h"
#include "handoff/physics.h"
#include "handoff/recovery.h"
#include "handoff/result.h"
#include "handoff/rig.h"

#include <array>
#include <cstddef>
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
  Powered,     ///< Bodies with a physics weight > 0 dynamic under joint drives toward the
               ///< animation (Authority::Drive), the others kinematic on it (a partial ragdoll);
               ///< capsule off. SPEC.md sections 5 and 6.
};
const char* characterStateName(CharacterState state);

// GetUpClip (a get-up clip on the character's skeleton with its metadata) and prepareGetUpClips
// are in handoff/recovery.h.

/// The pre-get-up gather: once the ragdoll has settled and the clip is chosen, the engine's
/// joint servos (the asset's drive gains, handoff::applyImplicitDrive) pull the still-dynamic
/// limbs toward the get-up clip's first frame, so the display transition that follows has little
/// left to blend and no limb is blended through the floor: the limbs move at physical speeds,
/// with contacts. The pelvis and the root placement are taken after the gather. The targets
/// move there slowly and a brace holds the chest-outward axis where it settled, so the gather
/// does not roll the body off the facing its clip was chosen for (src/controller/gather.cpp).
struct GatherSettings {
  /// How long the servos pull before the transition starts; 0 = no gather. [s] [>= 0] [default 0.6]
  double duration = 0.6;
  /// The drive weight ramps 0 -> 1 over this (stiffness and torque limit together). [s] [> 0] [default 0.2]
  double rampTime = 0.2;
  /// After `duration`, the servos hold on until every body is slower than this, so the
  /// transition starts from limbs at rest (no fast physics motion frozen into the blend). [m/s]
  /// [> 0] [default 0.3]
  double restSpeed = 0.3;
  /// Longest the servos hold on after the moving targets have arrived (the targets travel from the
  /// settled pose to the clip's first frame at `jointSpeed`). A gather still moving then ends
  /// without a get-up: the body settles again as a ragdoll and gets up without a gather.
  /// [s] [>= 0] [default 1.5]
  double maxDuration = 1.5;
  /// Speed of the servo targets from the settled pose to the clip's first frame, for the joint
  /// with the farthest to go (all arrive together): slow limbs do not lever the body over
  /// (docs/TUNING.md, the gather's targets and the chest brace). [rad/s] [> 0] [default 2]
  double jointSpeed = 2.0;
  /// Brace the chest during the gather: an angular pin (the powered pins' gains, no linear pull)
  /// holds the chest-outward axis where it settled, free to spin about it, standing for the hands
  /// and chest pressed on the floor, so the servos turn the pelvis and limbs to the chest and the
  /// facing the clip was chosen for stays. An external torque. [default true]
  bool braceChest = true;
  bool operator==(const GatherSettings&) const = default;
};

/// GatherSettings in range (each field's [range] above); the error names the field.
Status validateGatherSettings(const GatherSettings& settings);

/// A pin (SPEC.md section 5, drive.h PinApplier): a world-space pull of one body toward its
/// animated pose. An external force: the character's record says how much it applied.
struct PoweredPin {
  int body = -1;        ///< Asset body index. [0, bodies)
  double weight = 1.0;  ///< Pin weight. [0, 1] [default 1]
  /// Acceleration gains (PinGains): K 1600 1/s^2 (40 rad/s), D 80 1/s (critical), limits off.
  /// Explicit bound h^2 K + 2 h D < 4 holds down to one 60 Hz substep (0.44 + 2.67 = 3.1).
  PinGains gains{1600.0, 80.0, std::numeric_limits<double>::infinity(),
                 1600.0, 80.0, std::numeric_limits<double>::infinity()};
};

/// Limb lag (SPEC.md section 6, Character::goLimbLag): light physics lag on the limb ends while
/// the character walks. The bodies of `slots` go dynamic under the asset's drives (the implicit
/// servo at full weight: stiff drives, the asset's light damping), following the animation with
/// a little inertia; every other body stays kinematic on the animation and the root stays the
/// game's, so the walk, its root motion and the kinematic bodies (the blocking representation, as
/// in any partial ragdoll) are the animation's. It stays on until Character::goAnimated, which
/// fades the lag out over its blend.
inline constexpr std::array<Slot, 4> kLimbLagSlots{Slot::LowerArmL, Slot::HandL, Slot::LowerArmR,
                                                   Slot::HandR};
struct LimbLagSettings {
  /// The lagging bodies, by slot (those the asset has). [default kLimbLagSlots: the forearms and
  /// hands]
  std::vector<Slot> slots = std::vector<Slot>(kLimbLagSlots.begin(), kLimbLagSlots.end());
  /// Their display weight: 1 shows the physics pose, 0.5 half of the lag. [0, 1] (> 0) [default 1]
  double weight = 1.0;
  /// The drives ramp in over this time, so the lag grows from zero. [s] [>= 0] [default 0.2]
  double rampTime = 0.2;
};

/// Powered mode: how the drives and pins run, and when the character leaves the mode.
/// The scenario event "powered" maps to solver/weight/rampTime, "partial" to bodyWeights/rampTime.
struct PoweredSettings {
  /// [default implicit: at the asset's gains the explicit drive needs far more substeps than 2
  /// at 60 Hz to track or to absorb a hit; docs/DRIVES.md]
  DriveSolver solver = DriveSolver::Implicit;
  /// Drive weight reached after the ramp (scales stiffness and torque limit, not damping). [0, 1]
  double weight = 1.0;
  double rampTime = 0.2;  ///< Drive weight ramps 0 -> weight over this time. [s] [>= 0]
  /// Per asset body, its physics weight (a partial ragdoll): 0 = kinematic on the animation,
  /// > 0 = dynamic under the drives, rendered as lerp(animation, physics, weight). Empty: 1 for
  /// every body (full powered ragdoll). The joint into a body takes its drive weight times
  /// `driveWeights` of that body (empty: 1).
  std::vector<double> bodyWeights;
  std::vector<double> driveWeights;
  std::vector<PoweredPin> pins;  ///< Off by default.
  /// Collisions between the character's own non-adjacent bodies while powered
  /// (Ragdoll::setInternalCollisions). Off by default, as PuppetMaster's live puppet: the
  /// animation brings limbs close (a guard pose's fist at the face) and, colliding, the drives
  /// would press them against each other instead of following. Switched on whenever the
  /// character becomes a full ragdoll (knock-out, goRagdoll), back to the asset's default (on)
  /// when it returns to animation. The commit's HandoffRecord::internalCollisions records it.
  /// [default false]
  bool internalCollisions = false;
  /// Adds pins (default gains, weight 1) on the pelvis and both feet when they are dynamic.
  bool pinPelvisAndFeet = false;
  /// Explicit solver only: ExplicitDrive::setStabilityLimit (scales a joint's Kp and Kd down
  /// where the step cannot take them; docs/DRIVES.md). 0 = off. [default 1]
  double stabilityLimit = 1.0;
  /// Explicit solver only: ExplicitDrive::setEndOfSubstepLaw (each joint's PD evaluated at the
  /// end of the substep for its two bodies, as the implicit servo; docs/DRIVES.md). [default false]
  bool endOfSubstepLaw = false;

  // Leaving powered mode (SPEC.md section 5). Checked every step once the ramp is done.
  /// Return to animation on its own once settled (a hit reaction). False: stay powered until
  /// Character::goAnimated(). [default false; CharacterSettings::hitReaction sets true]
  bool returnWhenSettled = false;
  double returnJointError = 3.0 * kPi / 180.0;  ///< RMS joint-angle error below. [rad]
  double returnPositionError = 0.05;            ///< Pelvis (root body) centre of mass within. [m]
  double returnLinearSpeed = 0.3;               ///< Body speed relative to its animated speed below. [m/s]
  double returnAngularSpeed = 1.0;              ///< Same, angular. [rad/s]
  double returnWindow = 0.1;                    ///< The above must hold continuously this long. [s]
  /// The thresholds above are for a character standing still; a moving one's drives lag its
  /// animation even undisturbed (the DeepMimic run: 3-6.3 deg RMS, the pinned pelvis 7.6 cm off,
  /// a foot 8 m/s off at its strike), so a hit reaction of a running, walking or turning
  /// character never returned. The return is decided against the animation's own motion:
  /// returnJointError grows by this lag times the RMS rate of the joint targets, and
  /// returnPositionError by it times the pelvis's animated speed. 0: the fixed thresholds.
  /// [s] [>= 0] [default 0.02, docs/TUNING.md "Hit reactions of moving characters"]
  double returnTrackingLag = 0.02;
  /// Likewise returnLinearSpeed and returnAngularSpeed grow by this fraction of the fastest
  /// animated body's linear and angular speed. 0: the fixed thresholds. [>= 0] [default 1]
  double returnSpeedFraction = 1.0;
  /// A dynamic body's centre of mass this far from its animated one knocks the character out
  /// into a full ragdoll (PuppetMaster's knock-out distance). +inf: never. [m] [> 0] [default 0.8]
  double knockoutDistance = 0.8;
  /// When the capsule does not fit at the animated pose on return: hold the pose powered and
  /// retry every step (true), or fall into a full ragdoll (false). [default true]
  bool holdWhenBlocked = true;
  /// Display: physics -> animation blend when returning. [s] [>= 0] [default 0.25]
  double returnBlendTime = 0.25;
};

/// Landing on the feet (SPEC.md section 6: a fall that lands into animation). While Ragdoll or
/// Powered, a character none of whose bodies has touched the world (static geometry,
/// StandPlannerSettings::blockMask) for `minAirTime` is airborne; from the step a body touches
/// down it has `decisionTime` to show it stands: a foot on the world, the feet's midpoint under
/// the pelvis, the pelvis high above the lower foot, the pelvis-to-chest axis near world up and
/// the pelvis turning slowly. The first step all hold, it lands: the same capsule-space check as
/// a get-up (planStand on a root under the pelvis, yawed by its forward), then in one write phase
/// every body kinematic and blocking, the capsule on, and the display leaves the landed physics
/// pose through the get-up's exit blend (CharacterSettings::recoveryExitBlend, bounded by
/// transition.maxPointSpeed) while the bodies ease onto the animation at returnBodySpeed.
/// takeRecoveryFinished() then says the game resumes its animation from displayRoot(). Otherwise
/// (tipped, too low, spinning, no standable spot) the fall goes on as before: a powered one is
/// knocked out by its distance to the animation, a ragdoll settles and gets up. While airborne
/// and deciding, a powered character is not knocked out by its distance from the animated pose
/// (the game's root cannot follow a fall). A character that cannot get up (setGetUpAllowed(false):
/// a death; no get-up clip set; a broken joint) does not land either, and its flights are not
/// tracked (no world queries).
struct LandingSettings {
  /// Land on the feet when the checks below hold; false: every fall lies down first. [default true]
  bool enabled = true;
  /// Time with no body touching the world before a touch-down counts. [s] [>= 0] [default 0.15]
  double minAirTime = 0.15;
  /// A body this close to the world's geometry touches it. [m] [>= 0] [default 0.02]
  double contactDistance = 0.02;
  /// After the touch-down, the checks may first hold within this time; later the fall goes on
  /// as a fall. [s] [>= 0] [default 0.3]
  double decisionTime = 0.3;
  /// Horizontal distance from the pelvis body's centre of mass to the midpoint of the foot
  /// bodies, at most. [m] [> 0] [default 0.3]
  double maxFootOffset = 0.3;
  /// Pelvis bone height above the lower foot bone, as a fraction of the same height in the
  /// skeleton's rest pose, at least. [0, 1] [default 0.75]
  double minPelvisHeight = 0.75;
  /// Angle between world up and the pelvis-to-chest direction (body centres), at most.
  /// [rad] [0, pi] [default 0.5 (29 deg)]
  double maxTilt = 0.5;
  /// Pelvis body angular speed at the end of the flight (the last step before the touch-down:
  /// the body was not tumbling; the impact's own kick is the landing's to absorb), at most.
  /// [rad/s] [>= 0] [default 4]
  double maxAngularSpeed = 4.0;
};

/// Checks LandingSettings' ranges (Character::create does); the message names the field.
Status validateLandingSettings(const LandingSettings& settings);

/// A flight: no body of the character on the world for at least LandingSettings::minAirTime,
/// ended by a touch-down.
struct FlightRecord {
  double airStart = 0.0;        ///< When the last body left the world. [s]
  double touchdown = 0.0;       ///< When a body touched it again. [s]
  Vec3 pelvisAtAirStart{0.0};   ///< Pelvis body's centre of mass then. [m]
  Vec3 pelvisAtTouchdown{0.0};  ///< And at the touch-down. [m]
  bool landed = false;          ///< It landed on its feet from this touch-down (landings()).
};

/// A landing on the feet (LandingSettings), for tests, the report and debugging.
struct LandingRecord {
  /// Its flight: the flight's sequence number in Character::flights() (History::at, while
  /// retained); -1: none.
  std::int64_t flight = -1;
  double time = 0.0;                              ///< When it landed (animated again). [s]
  CharacterState from = CharacterState::Ragdoll;  ///< Ragdoll or Powered.
  double footOffset = 0.0;                        ///< Feet midpoint from the pelvis, horizontal. [m]
  double pelvisHeight = 0.0;   ///< Pelvis above the lower foot, fraction of the rest pose's. [1]
  double tilt = 0.0;           ///< Pelvis-to-chest axis from world up. [rad]
  double angularSpeed = 0.0;   ///< Pelvis, at the end of the flight. [rad/s]
  Vec3 pelvisAtAirStart{0.0};  ///< Pelvis body's centre of mass when it left the world. [m]
  Vec3 pelvisAtLanding{0.0};   ///< The same when it landed. [m]
  Transform worldFromRoot;     ///< The root it stands on.
  StandDecision standDecision = StandDecision::Stand;
  /// Display blend from the landed pose into the game's animation (the get-up's exit blend);
  /// set on the first animated step after the landing. [s]
  double exitBlend = 0.0;
};

/// The body masses a character simulates: a ragdoll body lighter than kMinBodyMass or heavier than
/// kMaxBodyMass is refused by Character::create (validateMassRange), so that a designer's slider at
/// its end is named rather than losing bodies out of the world. [kg]
inline constexpr double kMinBodyMass = kBodyMassMin;  // one range: the asset's (asset.h)
inline constexpr double kMaxBodyMass = kBodyMassMax;
/// Checks every body's mass against [kMinBodyMass, kMaxBodyMass]; the message names the field
/// (bodies[i].mass), the body and the range.
Status validateMassRange(const RagdollAsset& asset);

/// How many of each record a character keeps (Character::events() ... propReleases()): bounded
/// rings (History<T>), the oldest overwritten in place, so a character that runs for hours keeps
/// constant memory and records without allocating once each ring has been written round. A game
/// that needs every item drains the rings each frame with History::readSince (docs/INTEGRATION.md).
/// Every size [>= 1]; Character::create refuses 0, naming the field.
struct HistorySettings {
  std::size_t events = 256;       ///< CharacterEvent. [default 256]
  std::size_t handoffs = 16;      ///< HandoffRecord (lastHandoff() is the newest). [default 16]
  std::size_t recoveries = 16;    ///< RecoveryRecord. [default 16]
  std::size_t flights = 32;       ///< FlightRecord. [default 32]
  std::size_t landings = 32;      ///< LandingRecord. [default 32]
  std::size_t propReleases = 32;  ///< PropRelease. [default 32]
};
/// Checks HistorySettings (Character::create does); the message names the field.
Status validateHistorySettings(const HistorySettings& settings);

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
  /// A settled ragdoll lying on its side (FacingSettings' hold band) waits for it to roll onto
  /// its back or front; once it has lain settled on its side this long, the get-up of the facing
  /// it kept starts anyway (without the gather: the display transition blends from the side),
  /// so a body wedged on its side does not lie there for ever. The same wait as PuppetMaster's
  /// get-up delay. +inf: wait for ever. [s] [> 0] [default 5]
  double sideWaitLimit = 5.0;
  /// Display blend out of a finished get-up into the game's animation: the difference between
  /// the clip's last frame and the game's first pose (per joint, in the parent's space) fades
  /// to zero on top of the moving animation over at least this long, longer when the pelvis or a
  /// foot would otherwise move faster than transition.maxPointSpeed beyond the animation's own
  /// motion (up to transition.maxDuration). 0 = cut. [s] [>= 0] [default 0.25]
  double recoveryExitBlend = 0.25;
  /// What applyImpulse() does while animated: go powered with these settings first (pelvis and
  /// feet pinned, returns to animation when settled). `enabled` false: impulses while animated
  /// are ignored.
  PoweredSettings hitReaction = defaultHitReaction();
  bool hitReactionEnabled = true;
  static PoweredSettings defaultHitReaction();
  /// Passive joint damping of the full ragdoll (PuppetMaster's dead damper, the joint friction
  /// of Jolt's ragdolls): each joint resists the relative rotation of its bodies with the
  /// engine's implicit damper, damping = this rate x the child body's inertia about the joint,
  /// so a free limb's swing relative to its parent decays at about this rate. Internal: it
  /// conserves momentum and only takes energy. Without it nothing but the joint limits takes
  /// energy out of a limb's swing. Installed after the first step that follows a commit (that step
  /// carries the inherited velocities untouched), off while powered, gathering or recovering.
  /// At 7/s a limb hanging from its joint is damped at about 0.45-0.6 of critical: it still
  /// swings and stops within about one overshoot (measured: docs/TUNING.md).
  /// [1/s] [>= 0] [default 7]
  double ragdollJointDamping = 7.0;
  /// Returning to animation (a finished get-up, a powered return), the kinematic bodies reach
  /// the animation along the display's blend back, but never faster than the animation's own
  /// motion plus this: each body's offset from its animated pose (world space, from where physics
  /// or the get-up left it) changes by at most this speed, its turn by at most this speed over
  /// the body's extent from its centre of mass. A body that jumped onto the animation in one
  /// step would hit what it touches at the jump's speed. +inf: the bodies follow the display
  /// blend exactly. [m/s] [> 0] [default 1, the transition's point speed bound]
  double returnBodySpeed = 1.0;
  /// Bones left to the animation in every state (SPEC.md section 3's per-bone write-back mask):
  /// each keeps the animated local transform the game gives it (AnimationInput::locals) under
  /// its displayed parent, while animated, in the ragdoll and its display blend, powered and
  /// partial, during the get-up (captured pose, transition, the limbs' kinematic targets) and the
  /// blends back to animation. A look-at system owning the head sets the head's local rotation
  /// each frame and sees it rendered as it asked. Only the displayed skeleton changes: the bone's
  /// body, if it has one, is still simulated (and, while the limbs follow the get-up display,
  /// follows the bone as shown). Bones without a body ride along under it. By name (exact) or
  /// by skeleton joint index; Character::create fails on an unknown name, an index out of
  /// range or the skeleton's root (the bone the physics pose is written against). [default
  /// none]
  std::vector<std::string> animationOwnedBones;
  std::vector<int> animationOwnedJoints;  ///< The same by joint index. [0, joints) [default none]
  /// Falls that land on the feet go back to animation without lying down (LandingSettings).
  LandingSettings landing;
  /// Whether every held prop (Character::addProp) drops when the character dies: becomes a full
  /// ragdoll (goRagdoll, a knock-out, a broken joint), released with the hand's velocity at the
  /// moment of the commit. False: the props stay in the hand through the ragdoll and the get-up
  /// until dropProp. [default true: a dead character lets go of its weapon]
  bool dropPropsAtDeath = true;
  /// Capsule only while animated (distant NPCs, crowds; Ragdoll::setCapsuleOnly): while the
  /// character plays its animation with nothing to blend back from and no held prop, its bodies
  /// are out of the simulation and its capsule alone stands for it (blocks, is hit by casts),
  /// so an animated step costs the engine one kinematic body. Any handoff (goRagdoll, goPowered,
  /// a hit reaction, goPartial, goLimbLag, knockBack) puts the bodies back at the newest animated
  /// pose in the same write phase as the commit and commits the same velocities as from
  /// kinematic bodies. What changes: nothing but the capsule collides with the world while
  /// animated (a cast hits the capsule, CharacterBodyInfo::body -1), the bodies' poses are read
  /// with ragdoll().bodyPose() or readBodyPoses() (the engine's pose of a body out of the
  /// simulation is where it left it), and in Bullet the handoff allocates (the bodies'
  /// broadphase proxies). Character::setCapsuleOnlyWhileAnimated switches it at run time (level
  /// of detail by distance). [default false]
  bool capsuleOnlyWhileAnimated = false;
  /// Sizes of the records the character keeps (HistorySettings). [defaults there]
  HistorySettings history;
  /// Hostile impulses (an automatic weapon, a jackhammer: applyImpulse many times a step on one
  /// body): the impulses a body takes through applyImpulse between two postSteps change its speed
  /// by at most this in total (|sum J| / body mass); the part beyond is dropped, the clamp counted
  /// (Character::impulseClampCount) and named in the "impulse" event. +inf: no bound. [m/s] [> 0]
  /// [default 50]
  double maxSpeedChangePerStep = 50.0;
};

/// A rigid prop held in a hand (a weapon; PuppetMaster's props). The prop is a body of its own
/// in the character's world, joined to the hand's body by a fixed joint (every linear and angular
/// axis locked) while held: kinematic on the hand's animated pose while the hand is animated,
/// dynamic under the joint while the hand is simulated (powered, partial, ragdoll), its mass then
/// part of the hand's dynamics. Dropped (Character::dropProp, or at death) it is a free dynamic
/// body with the velocity of the hand at its grip. Frames: H the hand bone, G the grip, P the
/// prop's body space (origin at its centre of mass); worldFromProp = worldFromHand * handFromGrip
/// * inverse(propFromGrip).
struct PropDesc {
  std::string name;   ///< Names the prop in events and messages. [non-empty, unique per character]
  ShapeDesc shape;    ///< Collision shape in P (a capsule along P's +Y). [required]
  double mass = 1.0;  ///< [kg] [> 0] [default 1]
  Vec3 inertia{0.0};  ///< Principal moments in P; zero = computed from the shape. [kg m^2] [default 0]
  /// The bone holding it (exact name; empty: handJoint). It needs a body, its own or its nearest
  /// ancestor's: the prop rides that body, fixed to it as the bones were when the prop was added.
  std::string handBone;
  int handJoint = -1;        ///< The same by skeleton joint index, when handBone is empty. [0, joints)
  Transform handFromGrip;    ///< T_HG: the grip frame in the hand bone's space. [m]
  Transform propFromGrip;    ///< T_PG: the grip frame in the prop's body space. [m]
  double friction = 0.8;     ///< [>= 0] [default 0.8]
  double restitution = 0.0;  ///< [0, 1] [default 0]
};

/// What a prop's release measured (Character::propReleases): the hand point's velocity at the
/// grip and what the prop got. World space. [m/s] [rad/s]
struct PropRelease {
  int prop = -1;         ///< Character::addProp index.
  double time = 0.0;     ///< Character time. [s]
  bool atDeath = false;  ///< Released by CharacterSettings::dropPropsAtDeath (else dropProp).
  Vec3 gripPoint{0.0};   ///< The hand's grip point (worldFromHandBody * handBodyFromGrip). [m]
  /// v_hand + omega_hand x (gripPoint - c_hand): the hand body's velocity at the grip point.
  Vec3 handPointVelocity{0.0};
  Vec3 handAngularVelocity{0.0};
  Vec3 handVelocity{0.0};  ///< The hand body's centre-of-mass velocity.
  /// The prop's velocity at the same point and its angular velocity, read back from the engine
  /// after the release.
  Vec3 propPointVelocity{0.0};
  Vec3 propAngularVelocity{0.0};
  /// The prop's centre-of-mass velocity just before the release (as held) and just after.
  Vec3 propVelocityBefore{0.0}, propVelocityAfter{0.0};
  double gripSeparation = 0.0;  ///< The prop's grip point from the hand's at the release. [m]
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
  /// Display blend from the clip's last frame into the game's animation once standing
  /// (CharacterSettings::recoveryExitBlend, lengthened for the speed bound); set on the first
  /// animated step after the recovery finished. [s]
  double exitBlend = 0.0;
  bool cancelled = false;
  bool finished = false;
};

/// What a character event says happened (CharacterEvent::kind). eventKindName() gives the name
/// the report, the replays and the workbench show.
enum class CharacterEventKind : std::uint8_t {
  Ragdoll,    ///< "ragdoll": the handoff to a full ragdoll.
  Gather,     ///< "gather": the servos pull the limbs toward the get-up clip (or stopped, skipped).
  GetUp,      ///< "getup": the get-up started.
  Delay,      ///< "delay": no standable spot, retry later.
  Cancel,     ///< "cancel": a get-up cancelled (a hit).
  Recovered,  ///< "recovered": stood up, animated again.
  Impulse,    ///< "impulse": an impulse taken (or ignored while animated).
  Teleport,   ///< "teleport": the animation root jumped.
  Refused,    ///< "refused": an input or a handoff refused.
  Powered,    ///< "powered": full powered ragdoll.
  Partial,    ///< "partial": some bodies dynamic.
  Knockout,   ///< "knockout": powered -> full ragdoll.
  Blocked,    ///< "blocked": no capsule space to return: holding.
  Unpowered,  ///< "unpowered": back to animation.
  Fault,      ///< "fault": a body went non-finite or left the world: reset.
  Break,      ///< "break": a joint broke (which, at what force and torque).
  Knockback,  ///< "knockback": thrown.
  Touchdown,  ///< "touchdown": a flight ended, not on its feet: falls on.
  Landed,     ///< "landed": on its feet, animated again.
  Grab,       ///< "grab": a prop into the hand.
  Drop,       ///< "drop": a prop out of the hand.
};
/// "ragdoll", "gather", "getup", ... (the list above). Never null.
const char* eventKindName(CharacterEventKind kind);

/// Room for an event's detail text, terminating NUL included. [bytes]
inline constexpr std::size_t kEventDetailCapacity = 152;

/// One thing that happened to a character (Character::events()). A plain value, written in place
/// in the character's event ring: recording one allocates nothing.
struct CharacterEvent {
  double time = 0.0;  ///< Character time. [s]
  CharacterEventKind kind = CharacterEventKind::Ragdoll;
  /// What and why, with the figures (NUL-terminated; a longer text ends in "..."). The same text
  /// the report and the replays show.
  char detail[kEventDetailCapacity] = {};
};
/// "<kind>: <detail>" (text on demand; allocates).
std::string describeEvent(const CharacterEvent& event);

/// Where to play `clip` from so that its first frame stands on `standingRoot`: the first frame's
/// pelvis projected on the ground lands on the root's origin and the clip's facing at that frame
/// (the pelvis's yaw away from its bind yaw, applied to `modelForward`) turns onto the root's
/// forward (standingRoot * modelForward). What a game does to resume its locomotion after a
/// get-up. `clipTime` is the clip time the game starts playing from (its "first frame"). [s]
/// [default 0] Returns worldFromRoot for sampling `clip`.
Transform rootToStartClip(const Clip& clip, const Skeleton& skeleton, int pelvisJoint,
                          const Vec3& modelForward, const Transform& standingRoot, double clipTime = 0.0);

/// What a game's look-at does for a head it owns (CharacterSettings::animationOwnedBones): the
/// local rotation (parentFromJoint) of `joint` that turns its bind-pose forward (`modelForward`,
/// the model's forward in the bind pose, RagdollAsset::modelForward) toward `worldTarget` and
/// keeps its bind-pose up (model +Y) toward world up (+Y), with the parent at `worldFromParent`
/// and the joint at `localTranslation` under it. When the target is at the joint, or straight
/// above or below it, returns `fallback`. Never allocates.
Quat lookAtLocalRotation(const Skeleton& skeleton, int joint, const Vec3& modelForward,
                         const Transform& worldFromParent, const Vec3& localTranslation,
                         const Vec3& worldTarget, const Quat& fallback);

class Character;

/// The character a body belongs to (a ray cast's CastHit::body, a ContactEvent's body or other)
/// and which part of it: the body, its slot, its joint and its bone (RagdollBodyInfo). `character`
/// null when the body is no Character's (a bare Ragdoll's: then `part` still names it).
/// [step-safe]
struct CharacterBodyInfo {
  const Character* character = nullptr;
  RagdollBodyInfo part;
};
CharacterBodyInfo characterBodyInfo(const PhysicsWorld& world, BodyId body);

class Character {
 public:
  /// Creates the character animated at `locals` (the bodies and capsule in `world`). Get-up
  /// clips are optional; without them the character stays a ragdoll. Refused for body masses
  /// outside [kMinBodyMass, kMaxBodyMass] (validateMassRange) and for a history size of 0
  /// (validateHistorySettings).
  static Result<std::unique_ptr<Character>> create(
      PhysicsWorld& world, std::shared_ptr<const RagdollAsset> asset, const Skeleton& skeleton,
      const CharacterSettings& settings, const Transform& worldFromRoot, std::span<const Transform> locals);
  ~Character();

  void setGetUpClips(std::optional<GetUpClip> supine, std::optional<GetUpClip> prone);
  void setGetUpAllowed(bool allowed);
  /// CharacterSettings::capsuleOnlyWhileAnimated at run time: takes effect at the next animated
  /// preStep (on: the bodies leave the simulation; off: they come back at the animated pose).
  void setCapsuleOnlyWhileAnimated(bool on);
  /// Whether the bodies are out of the simulation now (capsule only).
  bool capsuleOnly() const;

  /// Before the physics step. Refused input (NaN, time not advancing, dt <= 0) leaves the
  /// character in its previous valid state and is reported.
  Status preStep(const AnimationInput& animation, double dt);
  /// After the physics step. First checks the character's bodies: when one is not finite or
  /// the world disabled it (a solver blow-up, a body that left the world), every body is put
  /// back at its pose after the last valid step, at rest, and a "fault" event names the body
  /// (docs/INTEGRATION.md). Other characters in the world are not touched.
  void postStep(double dt);
  /// Number of physics faults contained by postStep since creation.
  int faultCount() const;

  /// Cut to ragdoll now (SPEC.md section 3 commit) from the last animation input. While
  /// Powered: the drives and pins go off and the animated bodies join the ragdoll.
  /// `denseSample`, when given, is the animation sampled shortly before the last input (its
  /// time between the last two inputs): the inherited velocities are then nearly instantaneous
  /// and the joints carry them without correction (see Ragdoll::addDenseSample).
  const HandoffRecord& goRagdoll(const AnimationInput* denseSample = nullptr);
  /// Powered ragdoll (SPEC.md sections 5 and 6) from Animated, or new settings while Powered
  /// (the ramp restarts from the current weight). One write phase: the bodies with a physics
  /// weight > 0 become dynamic at the animated pose with its velocities (the SPEC section 3
  /// commit), the others stay kinematic on the animation, the capsule goes off. Refused (error,
  /// nothing changed) in Ragdoll and Recovering, with bad weights or pins, or when the commit
  /// fails. Event "powered" (every body dynamic) or "partial".
  Status goPowered(const PoweredSettings& settings);
  /// Partial ragdoll: goPowered with `bodyWeights` (per asset body, 0 animation .. 1 physics),
  /// the other settings as given.
  Status goPartial(std::span<const double> bodyWeights, double rampTime, PoweredSettings settings = {});
  /// Limb lag (LimbLagSettings): goPartial on the bodies of `settings.slots` with `powered`'s
  /// drives (its returnWhenSettled is cleared: the lag stays on until goAnimated). Refused as goPowered is,
  /// and when the asset has a body in none of the slots.
  Status goLimbLag(const LimbLagSettings& settings = {}, PoweredSettings powered = {});
  /// Changes the physics and drive weights per body while powered (empty driveWeights: 1). A body
  /// going 0 -> > 0 becomes dynamic from its animated pose and velocity; > 0 -> 0 becomes
  /// kinematic on the animation. Refused unless Powered.
  Status setBodyWeights(std::span<const double> bodyWeights, std::span<const double> driveWeights = {});
  /// Leave powered mode (scenario event "animate"): the drives keep tracking until the errors
  /// and velocities are under the return thresholds, then the capsule check and one write
  /// phase hand every body back to the animation, the display blending over `blendTime`.
  /// In Ragdoll: refused (use the get-up). Animated: nothing to do.
  Status goAnimated(double blendTime = 0.25);
  /// An impulse at a world point on a body. [N s] In Ragdoll it wakes the body and counts as an
  /// external-force event; during recovery it cancels the recovery first. While Animated (and
  /// CharacterSettings::hitReactionEnabled) the character first goes powered with
  /// settings().hitReaction (a hit reaction), then takes the impulse. While Powered, on a
  /// kinematic (animated) body of a partial ragdoll: the body becomes dynamic first.
  Status applyImpulse(int body, const Vec3& impulse, const Vec3& worldPoint);
  /// Impulses clamped by CharacterSettings::maxSpeedChangePerStep since creation.
  int impulseClampCount() const;

  /// A knock-back (SPEC.md section 6): an impulse too big for a hit reaction throws the whole
  /// character. From Animated or Powered it first becomes a full ragdoll (goRagdoll's commit,
  /// the animation's velocities inherited); during a get-up the recovery is cancelled first; then
  /// every body takes `impulse` times its share of the total mass at its centre of mass (the same
  /// velocity change impulse / total mass for every body: a throw, no spin). The flight ends in a
  /// landing on the feet (LandingSettings) or, lying, in the get-up. Event "knockback". Refused
  /// (nothing changed) for a non-finite impulse or when the commit fails. [N s]
  Status knockBack(const Vec3& impulse);
  /// The flights (LandingSettings: no body on the world for minAirTime, then a touch-down) of a
  /// character that may land, in order, the newest CharacterSettings::history.flights; the one
  /// in progress is not listed until it touches down.
  const History<FlightRecord>& flights() const;
  /// The landings on the feet, in order (the newest history.landings).
  const History<LandingRecord>& landings() const;
  /// True while Ragdoll or Powered and no body has touched the world for at least
  /// LandingSettings::minAirTime.
  bool airborne() const;

  CharacterState state() const;
  double time() const;  ///< Simulation time since creation. [s]
  const Ragdoll& ragdoll() const;
  const Skeleton& skeleton() const;
  const CharacterSettings& settings() const;
  /// The commits, in order (the newest CharacterSettings::history.handoffs; History::total()
  /// counts every commit). A committed record's first-step figures (BodyHandoff::
  /// *AfterFirstStep, *AfterFirstSubstep, HandoffRecord::firstSubstepTime) are filled by the
  /// postStep that follows the commit's first physics step: what a user reads of their own
  /// handoff (SPEC.md section 7), with no probe of their own.
  const History<HandoffRecord>& handoffs() const;
  /// The newest commit (handoffs().latest()); a default record before the first.
  const HandoffRecord& lastHandoff() const;
  /// The recoveries, in order (the newest history.recoveries).
  const History<RecoveryRecord>& recoveries() const;
  /// The events, in order (the newest history.events): drain them each frame with
  /// History::readSince to see every one (docs/INTEGRATION.md).
  const History<CharacterEvent>& events() const;
  /// The ragdoll's broken joints (Ragdoll::jointBreaks, times on this character's clock): bounded
  /// without a setting, a broken joint stays broken and room for each breakable joint is reserved
  /// at creation. A
  /// character with a broken joint stays a ragdoll: it never gathers nor gets up, and a powered
  /// or partial one becomes a full ragdoll (events "break", "knockout").
  std::span<const JointBreak> jointBreaks() const;
  const SettleDetector& settle() const;
  /// Powered mode's current settings, drive weight (after the ramp) and measured errors.
  const PoweredSettings& powered() const;
  double driveWeight() const;
  /// RMS and max joint-angle error of the driven joints, max body distance to the animated
  /// pose, at the last postStep while powered. [rad], [rad], [m]
  double poweredRmsJointError() const;
  double poweredMaxJointError() const;
  double poweredMaxPositionError() const;
  /// Physics weight per body (0 while not powered; 1 in Ragdoll).
  std::span<const double> bodyWeights() const;
  /// Per joint, the weight handed to the drive in the last preStep (ramp x weight x body's drive
  /// weight; 0 when the child body is animated).
  std::span<const double> jointDriveWeights() const;
  /// The drive (explicit solver) and pins; the character runs them from its own substep listener
  /// in the world while powered (PhysicsWorld::addSubstepListener: one per owner, so several
  /// characters share a world). The pins' external impulses are in pins().
  const ExplicitDrive* explicitDrive() const;
  const PinApplier* pins() const;
  const FacingClassifier& facing() const;

  /// What to render: the displayed skeleton (parentFromJoint) against displayRoot().
  std::span<const Transform> displayLocals() const;
  const Transform& displayRoot() const;
  /// Display blend weight: 0 animation, 1 physics (Ragdoll), transition weight (Recovering).
  double blendWeight() const;
  /// True once after a recovery finished or a landing on the feet: the game resumes its
  /// animation from displayRoot().
  bool takeRecoveryFinished();
  /// The get-up clip the last recovery plays (the supine or the prone one); nullptr before the
  /// first recovery.
  const GetUpClip* recoveryClip() const;
  /// The time in recoveryClip() the display shows at the last postStep of the recovery
  /// (transitionClipTime: the clip holds its first frame for the planned transition's `hold`,
  /// then plays); kept after the recovery ends. [s] [>= 0]
  double recoveryClipTime() const;
  /// The points the recovery transition and the exit blend bound: the Pelvis slot's joint, then
  /// per side the FootL/FootR slot's joint, else the joint below the lower leg (a missing slot
  /// is left out). Skeleton joint indices.
  std::span<const int> trackedJoints() const;

  /// Number of blocking representations active (dynamic enabled limbs count as one, the
  /// capsule as one). Exactly 1 at every step.
  int blockingRepresentations() const;
  /// The joints left to the animation (CharacterSettings::animationOwnedBones and
  /// animationOwnedJoints, resolved, ascending, without repeats).
  std::span<const int> animationOwnedJoints() const;

  // --- Props (PropDesc) ---
  /// Creates a prop in the hand at the grip of the hand body's current pose, moving with it, and
  /// returns its index. Refused (nothing created) for a bad description (empty or repeated name,
  /// no shape, mass <= 0, non-finite frames, an unknown bone or one without a body above it).
  /// Allocates: not during a step.
  Result<int> addProp(const PropDesc& desc);
  /// Releases a held prop now: the joint goes, the prop is a free dynamic body whose linear and
  /// angular velocity are the hand body's at the grip (v = v_hand + omega_hand x r, omega =
  /// omega_hand). It ignores its own character until each body and the capsule have moved apart
  /// from it (surface distance over 5 mm, and over what their speeds close in 1/60 s: touching,
  /// colliding would push them apart in one step), then collides with them as with the world.
  /// Event "drop".
  /// Refused for an unknown or free prop.
  Status dropProp(int prop);
  /// Puts a free prop back in the hand: teleported to the grip of the hand's current pose (its
  /// velocity the hand's there) and joined again. A teleport: call it when the hand reaches the
  /// prop. Event "grab". Refused for an unknown or held prop.
  Status grabProp(int prop);
  int propCount() const;
  const PropDesc& propDesc(int prop) const;
  BodyId propBody(int prop) const;
  bool propHeld(int prop) const;
  /// The asset body the prop rides (the hand bone's, or its nearest ancestor's).
  int propHandBody(int prop) const;
  /// The grip frame as the hand holds it now: worldFromHandBody * handBodyFromGrip (engine pose).
  Transform handGrip(int prop) const;
  /// The grip frame as the prop carries it now: worldFromProp * propFromGrip (engine pose).
  Transform propGrip(int prop) const;
  /// Bodies of this character (and its capsule) the prop collides with now: 0 while held; after a
  /// drop it rises to bodyCount + 1 as they move apart. [0, bodies + 1]
  int propCollidingPairs(int prop) const;
  /// The releases, in order (the newest CharacterSettings::history.propReleases).
  const History<PropRelease>& propReleases() const;

 private:
  struct Impl;  // src/controller/character_impl.h
  explicit Character(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace handoff
