// The Bullet 3 implementation of handoff::PhysicsWorld. This header does not include Bullet;
// only src/physics_bullet/ does.
//
// Thread-safety: as PhysicsWorld (physics.h): one thread at a time per world; separate Bullet
// worlds may be stepped on separate threads at once.
//
// Behaviour specific to this adapter (what PhysicsWorld leaves to the engine):
// - Handles: an invalid or dead BodyId/JointId in a [step-safe] call asserts in debug builds and
//   is ignored in release builds (getters return identity/zero/false). Handles carry a 12-bit
//   generation, so a stale handle is recognised until its slot was reused 4096 times.
// - step(dt, n) takes exactly n substeps of dt / n. The SubstepListener runs before every
//   substep's collision detection and solve, after kinematic velocities and before joint motors
//   are updated.
// - moveKinematic(body, target, dt): the body gets velocity (target - current) / dt (angular: the
//   short arc, SPEC.md section 3), moves along the straight line / short arc through the next
//   step's substeps and is exactly at the target after it; the velocity stays reported until the
//   body moves again (so switching it to dynamic keeps the inherited velocity). Pass the next
//   step's dt. Without a pending move a kinematic body holds still with zero velocity
//   (setLinearVelocity on a kinematic body lasts until the next step).
// - setTransform keeps velocities (call setLinearVelocity / setAngularVelocity to change them)
//   and wakes the body, its joint partners and the bodies touching it.
// - setMotionType: kinematic <-> dynamic only (static bodies stay static); velocities are kept.
// - setEnabled(false) removes the body and its joints from the simulation (a joint takes part
//   while both its bodies are enabled) and wakes what touched it. Disabled bodies are in no
//   statistic and no query.
// - Damping: BodyDesc's rates c [1/s] scale velocities by exp(-c dt). Friction and restitution
//   of a contact are the products of the two bodies' values (Bullet's rule).
// - Joint limits: X and Z limits must lie in [-pi, pi], Y limits in [-pi/2, pi/2] (Bullet's
//   middle Euler axis); angles follow handoff::jointAngles() exactly. A fully free joint
//   (lower > upper on all axes) is a ball joint without angular rows.
// - Joint motors (setJointMotor) are implicit PD servos solved with the joint (per open axis:
//   Kp, Kd, |torque| <= maxTorque per axis); locked axes take no target, limited axes clamp it.
//   maxTorque <= 0 disables the motor.
// - setJointFrames / setJointLimits act from the next substep; a motor's target is re-clamped to
//   new limits. setPairCollision(a, b, true) does not undo the exclusion of a joint between a and
//   b (collideConnected = false).
// - Anchors are kept together by the solver (joint rows get WorldSettings::jointIterationFactor,
//   default 2, times the world's iterations, ERP 0.8; contacts as many with
//   BulletSettings::contactsIterateWithJoints)
//   and, when more than 5 mm apart after a substep, projected back (position-level, velocities
//   kept; docs/TUNING.md has the drift measured with it).
// - Breakable joints (JointDesc::breakForce / breakTorque finite): after every substep's solve
//   the adapter reads the joint's Bullet feedback (impulse / substep of all its rows: the mean
//   force over the substep, the torque taken about the anchor) and, when |F| > breakForce or
//   |tau| > breakTorque, disables the constraint for good (jointBreakState). Bullet's own
//   breaking impulse threshold is not used: it compares each row's scalar impulse with one value
//   for linear and angular rows alike, so it measures neither |F| nor force apart from torque. A
//   joint breaks within one substep of its load crossing the limit; joints with infinite limits
//   (the default) are not measured at all. A joint on a sleeping island is not measured.
// - resetWarmStart: Bullet does not warm-start joint rows (unless BulletSettings::warmStartJoints:
//   then the adapter does, and the call forgets the joint's rows); the call clears the contact
//   impulses cached for the joint's two bodies (and the joint's impulse feedback).
// - sleep(body) forces Bullet's ISLAND_SLEEPING with zero velocities; Bullet's island manager keeps
//   it while the whole island sleeps and wakes it (WANTS_DEACTIVATION) when an awake body joins.
// - Sleeping uses WorldSettings per world (thresholds and sleepTime), independent of Bullet's
//   global gDeactivationTime (which must stay > 0: 0 disables sleeping in Bullet).
// - Bodies that leave the world box (WorldSettings::worldHalfExtent) or whose state becomes
//   non-finite are disabled after the step and counted in StepStats::bodiesLeftWorld.
// - Contact counts (StepStats::contactPoints, contactCount) include speculative points: manifold
//   points within the distance the pair can close in one substep.
// - Queries see the poses the last step (or teleport) left; a capsule sweep that starts in
//   contact reports an arbitrary fraction: check capsuleOverlaps first.
//
// Which interface items are Bullet's own and which the adapter builds on top of it:
// - Native (a Bullet call or object does it): bodies and shapes (btRigidBody, btCapsuleShapeX/Y,
//   btBvhTriangleMeshShape, btConvexHullShape, btHeightfieldTerrainShape, btCompoundShape),
//   kinematic and dynamic motion, impulses, collision filters (groups and masks), contacts and
//   friction, rolling friction, continuous collision, sleeping and wake (island manager),
//   joints (btGeneric6DofSpring2Constraint) with their limits and frames, ray and convex sweep
//   queries (rayTest, convexSweepTest), capsule overlap and closestPoints (contactTest), substep listeners
//   (internal tick callbacks).
// - On top of Bullet (the adapter's own code): kinematic moves that complete exactly at the
//   target, joint motors as implicit PD servos (re-targeted motor rows every substep), warm-
//   started joint rows (BulletSettings::warmStartJoints), island-ordered solves
//   (WorldSettings::islandOrderedSolve), anchor projection, breakable joints measured by |F| and
//   |tau|, pair exclusions (setPairCollision: an overlap filter), per-world sleep time, contact
//   events (summed manifold impulses), limitDepenetration (split impulse per body, capped, with
//   split rows for its chain's joints),
//   leaving the world box.
#pragma once

#include "handoff/physics.h"
#include "handoff/result.h"

#include <memory>

class btDiscreteDynamicsWorld;  // Bullet's, declared here so that this header needs no Bullet

namespace handoff {

/// Bullet-specific tuning (what WorldSettings, the engine-agnostic part, does not say): both are
/// work-arounds for Bullet's sequential impulse solver that Jolt, PhysX and ODE do not need.
struct BulletSettings {
  /// Warm-start the hard joint rows (anchors and limits): each starts a substep's solve with the
  /// impulse it ended the previous substep with, as contacts do (Bullet rebuilds joint rows cold
  /// every substep; Jolt and PhysX warm-start them natively). Motor rows (soft, their target
  /// moving with the animation) always start cold. Off, a chain under load (a ragdoll lying on
  /// the floor, a pile) never converges in the iterations given and creeps instead of coming to
  /// rest. Unavailable in a joined world (reported false). [default true]
  bool warmStartJoints = true;
  /// Contacts get as many solver iterations as the joint rows (WorldSettings::
  /// jointIterationFactor times solverIterations). Off, Bullet solves contacts only in the first
  /// solverIterations iterations and the joints alone in the rest: joints then have the last
  /// word, a load drives jointed bodies into the ground (the bottom of a pile) and a limb hitting
  /// a wall at speed stretches its joints. Costs the extra contact iterations. [default true]
  bool contactsIterateWithJoints = true;
  friend bool operator==(const BulletSettings&, const BulletSettings&) = default;
};

/// Creates an independent Bullet world (btDiscreteDynamicsWorld, sequential impulse solver,
/// btGeneric6DofSpring2Constraint joints) on the Bullet build chosen at configure time
/// (bulletPrecision()). Out-of-range
/// settings are clamped (solverIterations >= 1, jointErp in [0, 1]) or, when not finite or not
/// positive, replaced by their defaults; settings() reports what is in use, bulletSettings()
/// the Bullet-specific part.
std::unique_ptr<PhysicsWorld> createBulletWorld(const WorldSettings& settings = {},
                                                const BulletSettings& bullet = {});

/// The Bullet-specific settings in use by a Bullet world (createBulletWorld, joinBulletWorld);
/// the defaults for a world of another engine.
BulletSettings bulletSettings(const PhysicsWorld& world);

/// handoff's PhysicsWorld inside a btDiscreteDynamicsWorld the game already has (its level, its
/// crates, its vehicles): characters' bodies, joints and capsules are added to that world and
/// collide with the game's objects both ways; destroying the returned PhysicsWorld removes them
/// and gives the game its tick callbacks back. The game's Bullet must be the one handoff was
/// built with (same precision: HANDOFF_BULLET_DOUBLE). One PhysicsWorld per Bullet world.
///
/// What the game does: step the world with the returned PhysicsWorld's step(dt, substeps) where
/// it called stepSimulation (it runs the world's stepSimulation(dt / substeps, 0, dt / substeps)
/// `substeps` times; the game's own internal tick callbacks, set before joining, still run
/// every substep). A game that keeps calling stepSimulation itself gets every internal tick
/// treated as a step of one substep (drives and motors run, a moveKinematic completes in it).
/// Collision groups: `settings.layerBits` says which of the world's group bits handoff's four
/// layers are (LayerBits); handoff's bodies are added with those groups and its queries see the
/// game's objects through them.
/// Kept from the game's world, whatever `settings` says: gravity, the solver's ERP (settings()
/// reports both); the solver's iterations are raised to handoff's when fewer (never lowered).
/// Unavailable in a joined world: WorldSettings::islandOrderedSolve and
/// BulletSettings::warmStartJoints (they need the adapter's own world and solver; reported false).
/// Errors: a world that is not a btDiscreteDynamicsWorld, a world already joined.
Result<std::unique_ptr<PhysicsWorld>> joinBulletWorld(btDiscreteDynamicsWorld& world,
                                                      const WorldSettings& settings,
                                                      const BulletSettings& bullet = {});

/// handoff's layers on Bullet's own default collision groups (btBroadphaseProxy::
/// CollisionFilterGroups), those of a game that adds its objects with addRigidBody(body):
/// kStatic -> StaticFilter (2), kDebris -> DefaultFilter | DebrisFilter (1 | 8: the game's dynamic
/// objects are debris to a ragdoll), kCapsule -> CharacterFilter (32), kRagdoll -> 64 (a group
/// Bullet does not name). A game with groups of its own passes its own LayerBits.
inline constexpr LayerBits kBulletDefaultGroups{2u, 64u, 32u, 9u};

/// joinBulletWorld with WorldSettings' defaults but layerBits = kBulletDefaultGroups.
Result<std::unique_ptr<PhysicsWorld>> joinBulletWorld(btDiscreteDynamicsWorld& world);

/// The precision of the Bullet libraries handoff was built and linked against: "single" (btScalar
/// is float; the default, Debian's libBulletDynamics.so, what a plain find_package(Bullet) gives a
/// game) or "double" (configured with -DHANDOFF_BULLET_DOUBLE=ON: Debian's -float64 libraries).
/// A game that links Bullet itself must link the same build: the two share symbol names. The
/// installed package config sets HANDOFF_BULLET_PRECISION to the same word. Thread-safe.
const char* bulletPrecision();

/// What the Bullet world itself holds (not the adapter's own bookkeeping): for leak checks after
/// creating and destroying characters. Static bodies, capsules and disabled bodies count as the
/// engine sees them (a disabled body is not in the world). All zero for a non-Bullet world.
struct BulletObjectCounts {
  int collisionObjects = 0;  ///< btCollisionWorld::getNumCollisionObjects()
  int rigidBodies = 0;       ///< of which btRigidBody
  int constraints = 0;       ///< btDynamicsWorld::getNumConstraints()
  int overlappingPairs = 0;  ///< broadphase pairs
  int manifolds = 0;         ///< contact manifolds in the dispatcher
  int shapes = 0;            ///< collision shapes the adapter holds (shared between bodies)
};
BulletObjectCounts bulletObjectCounts(const PhysicsWorld& world);

/// The crowd benchmark's calibration scene on plain Bullet (its own API, none of this adapter's additions):
/// `piles` piles (centres on a 4 m grid) of `perPile` 16-capsule ragdolls lying on their backs,
/// ragdoll i of a pile 0.6 (i + 1) m up and turned 2 pi i / perPile, btGeneric6DofSpring2 joints
/// (+-0.5 rad, no motors), friction 1, restitution 0.15, damping 0.05, 10 iterations, Bullet's
/// default deactivation, `steps` steps of 1/60 s on one thread. `handoff bench crowd` runs it in
/// the same process as the crowd to calibrate a loaded or different machine against the reference
/// figure of docs/BENCHMARKS.md.
struct BulletCalibrationOptions {
  int piles = 16;    ///< [>= 1] [default 16]
  int perPile = 10;  ///< [>= 1] [default 10]
  int steps = 500;   ///< [>= 1] [default 500]
};
struct BulletCalibrationResult {
  int bodies = 0, steps = 0;
  double msPerStep = 0.0, nsPerBodyStep = 0.0;  ///< Wall clock.
  int activeBodiesEnd = 0;
};
Result<BulletCalibrationResult> runBulletCalibrationPile(const BulletCalibrationOptions& options = {});

}  // namespace handoff
