// The Open Dynamics Engine (ODE 0.16, double precision) implementation of handoff::PhysicsWorld:
// the second engine behind the interface. This header does not include ODE; only
// src/physics_ode/ does. Built when ODE is found (CMake option HANDOFF_ODE, default ON then).
//
// Thread-safety: as PhysicsWorld (physics.h): one thread at a time per world. ODE's collision
// code keeps per-thread data; the adapter allocates it for each thread that creates, steps or
// queries an ODE world (dAllocateODEDataForThread), so separate worlds may be used on separate
// threads. ODE's quick-step solver shuffles its rows with ODE's process-wide random generator:
// the adapter reseeds it before every substep (OdeSettings::solverSeed) and holds a process-wide
// lock from the seed to the end of the solve, so worlds stepped on several threads at once solve
// one at a time (their collision detection runs in parallel) and every world is deterministic,
// whatever the threads.
//
// What the adapter builds on ODE and how it meets the contract of physics.h:
// - Handles: as the Bullet adapter (20-bit slot, 12-bit generation); a dead handle in a
//   [step-safe] call asserts in debug and is ignored in release (getters return zero/identity).
// - Bodies: dynamic and kinematic bodies are dBody (dBodySetKinematic for kinematic); static
//   bodies are geoms without a body. Capsules are ODE capsules (axis Z) turned by -90 degrees
//   about X so that their axis is the body's +Y. One geom per primitive; a compound is one geom
//   per child on one body (geom offsets).
// - Shapes: triangle meshes (dTriMesh) and heightfields (dHeightfield, static only), compounds of
//   spheres, capsules and boxes. Convex hulls are refused with an error (ODE's dConvex needs the
//   hull's planes and polygons; the adapter does not compute hulls), and so is a compound that
//   holds one.
// - Collision filter: handoff's rule (each body's mask has the other's layer) is checked in the
//   near callback (ODE's own category/collide bits accept a pair when either side matches; they
//   are set too, as a broad filter). Joint exclusions (collideConnected = false) and
//   setPairCollision are pair lists checked there. Pairs without a dynamic body (static,
//   kinematic) never collide.
// - Contacts: per substep, dSpaceCollide into a contact joint group (up to
//   OdeSettings::maxContactsPerPair points a pair). Friction: the product of the two bodies'
//   values (ODE's friction pyramid, dContactApprox1); restitution: the product (dContactBounce,
//   above OdeSettings::bounceThreshold); rolling friction: the larger of the two, as ODE's
//   rolling and spinning friction (dContactRolling, rho = rho2 = rhoN) [m].
// - Damping: BodyDesc's rates c [1/s] scale velocities by exp(-c h) after every substep (ODE's own
//   damping is a fraction per step, not a rate).
// - Kinematic moves: velocity (target - current) / dt (angular: the short arc), the pose placed on
//   the straight line / short arc after every substep and exactly at the target after step();
//   the velocity stays reported until the body moves again. Without a move a kinematic body is
//   held still at zero velocity.
// - Joints: a ball joint (anchors) plus two angular motors in user mode: one carries the limits,
//   one the motor rows. Before every substep the adapter writes both motors' axes, the dual basis
//   of the Euler axes of handoff::jointAngles (rows measure x' cos y, y', z' cos y, as Bullet's
//   6-DoF spring2), and the angles from handoff::jointAngles, so limits and angles follow the
//   interface's convention exactly. The child (B) is ODE's body 1: a joint whose B is static is
//   refused. Each row kind has its own ERP (OdeSettings::anchorErp, limitErp, contactErp):
//   WorldSettings::jointErp is set as ODE's world ERP, which none of the adapter's rows reads.
// - Joint motors: the implicit PD servo of JointMotorSettings as a motor row per open axis with
//   target velocity r + Kp e / (h Kp + Kd) and CFM 1 / (h Kp + Kd) (scaled by cos y and cos^2 y
//   on X and Z when angleRateRows), |torque| <= maxTorque.
// - Anchor projection: joints whose anchors end a substep more than OdeSettings::anchorProjection
//   apart are closed by position (OdeSettings).
// - Breakable joints: ODE joint feedback of the three parts after every substep; the force is the
//   ball joint's, the torque about the anchor adds the motors'; a broken joint is disabled for good.
// - resetWarmStart: ODE's solvers do not warm-start between steps; nothing to clear (a no-op).
// - Solver: dWorldStep, ODE's exact LCP solver (OdeSettings::exactSolver, the default: joints
//   hold to rounding at rest; StepStats::solverIterations reports 0), or dWorldQuickStep with
//   solverIterations x jointIterationFactor iterations (joints and contacts iterate together:
//   what the Bullet adapter needs BulletSettings::contactsIterateWithJoints for). islandOrderedSolve holds by
//   construction with the exact solver (ODE solves each island on its own, its bodies in creation order, with
//   no shared state); the quick-step solver's row shuffle draws from one random sequence per substep across
//   islands, so there another island's presence changes the shuffle (reported as requested).
// - Sleeping: ODE auto-disable per body (linear threshold WorldSettings::sleepLinearSpeed, angular
//   the same divided by the shape's bounding radius, time sleepTime); ODE wakes a body when an
//   awake one joins its island (a joint or a contact). sleep(body) disables it with zero velocity.
// - setEnabled(false) disables the body's geoms, the body and its joints; enabling restores them.
// - Queries: castRay with a ray geom (dSpaceCollide2), capsuleOverlaps with a capsule geom;
//   castCapsule (ODE has no sweep) by conservative stepping of the capsule along the path
//   (steps of half its radius) and bisection (16 halvings of a step) between the last free and
//   the first touching position; the normal is the deepest contact's there. closestPoints (for
//   sphere, capsule and box bodies; none for made shapes) collides the body's shape grown by
//   maxDistance (a box's corners grow to a rounded reach up to sqrt(3) times it) and reports the
//   deepest points first. limitDepenetration is not offered (false): ODE has no position-only
//   (split-impulse) contact push; OdeSettings::maxCorrectingSpeed caps every contact's push.
// - Contact events: ODE contact feedback of points of reported bodies, summed per (body, other)
//   pair over the step; the point and normal are those of the deepest point of the substep that
//   pushed hardest.
// - Messages: ODE's exact solver prints "ODE Message 3: LCP internal error, s <= 0" to stderr
//   when rows are nearly redundant (several contacts of one box, a limit row beside a motor row)
//   and solves on; the adapter leaves ODE's message handler as it is.
// - jointErp: WorldSettings::jointErp is ODE's world ERP, which none of the adapter's rows reads
//   (OdeSettings::anchorErp and limitErp do); settings() reports the value asked for, so the
//   core's limit look-ahead reads 0.2 where ODE's limit rows close 0.7 of a gap per substep (a
//   look-ahead longer than ODE needs: braking earlier, never later).
//
// Which interface items are ODE's own and which the adapter builds on top of it:
// - Native: bodies (dBody, dBodySetKinematic), primitive geoms, triangle meshes, heightfields,
//   compounds as geom offsets, collision (dSpaceCollide, contact joints, friction pyramid,
//   bounce, rolling friction), ball joints and angular motors (user mode) as the joint's rows,
//   the LCP solvers, auto-disable (sleeping), joint feedback, ray and capsule-overlap queries.
// - On top of ODE (the adapter's own code): handoff's collision filter rule, joint exclusions
//   and setPairCollision (pair lists in the near callback), the Euler-angle limits and their
//   axes written every substep, joint motors as the interface's implicit PD servo, kinematic
//   moves along the line / short arc, damping as a rate, anchor projection, breakable joints,
//   castCapsule (stepping and bisection: ODE has no sweep), closestPoints (a grown shape),
//   contact events, leaving the world box, deterministic seeding of the quick-step shuffle.
//   Not offered: convex hulls (refused with an error), limitDepenetration (false).
// - Allocation: ODE allocates inside its step. Its own allocator (dAlloc: the step's working
//   arena, contact joint blocks) is not called once a scene has warmed up (reused), but its hash
//   space's collide makes 53 operator new calls per substep in a 7-body scene at rest
//   (tests/physics_ode/ode_allocation_test.cpp, docs/ARCHITECTURE.md); the adapter's own per-step
//   code allocates nothing. The no-allocation rule of the core's steady state holds for Bullet only.
#pragma once

#include "handoff/physics.h"

#include <memory>

namespace handoff {

/// ODE-specific knobs (what WorldSettings does not say). Out-of-range values are clamped or
/// replaced by their defaults.
struct OdeSettings {
  /// Solve with dWorldStep (the exact "big matrix" LCP: joints hold, cost cubic in an island's
  /// rows) instead of dWorldQuickStep (iterative, WorldSettings::solverIterations x
  /// jointIterationFactor iterations: a 1 kg lever on a 0.5 m arm sags 1 cm at its anchor; the
  /// DeepMimic run's ragdoll opens 5.3 mm against 4.3 mm, tests/physics_ode). [default true]
  bool exactSolver = true;
  /// Error reduction of the ball-joint (anchor) rows per substep. [0, 1] [default 0.8]
  double anchorErp = 0.8;
  /// Error reduction of the joint-limit rows per substep (a limit engages once the angle is past
  /// it; at 0.2 a joint spun at 3 rad/s into +-0.4 rad limits reaches 0.46 rad, at 0.7 0.41).
  /// [0, 1] [default 0.8]
  double limitErp = 0.7;
  /// Contact error reduction per substep and constraint force mixing. [default 0.2, 1e-7]
  double contactErp = 0.2;
  double contactCfm = 1e-5;
  /// World CFM of the joint rows (anchors and limits). [>= 0] [default 1e-9]
  double jointCfm = 1e-6;
  /// The fastest a contact pushes a body out of penetration (ODE's contact max correcting
  /// velocity; with it the body keeps that velocity). [m/s] [> 0] [default 0.5]
  double maxCorrectingSpeed = 0.5;
  /// Allowed penetration before correction (ODE's contact surface layer). [m] [>= 0] [default 0.001]
  double surfaceLayer = 0.001;
  /// Approach speeds below this do not bounce. [m/s] [>= 0] [default 0.2]
  double bounceThreshold = 0.2;
  /// Contact points per colliding pair. [1, 16] [default 8]
  int maxContactsPerPair = 8;
  /// After every substep, the anchors of a joint more than this far apart are brought together
  /// by moving its bodies (in inverse proportion to their masses; kinematic and static ones do not
  /// move; velocities kept), as the Bullet adapter's projection does: a violent hit opens joints
  /// ERP closes only over several substeps. 0: off. [m] [>= 0] [default 0.005]
  double anchorProjection = 0.005;
  /// ODE's random generator seed, set before every substep (the quick-step row shuffle). [default 1]
  unsigned long solverSeed = 1;
};

/// Creates an independent ODE world (dWorld, dHashSpace, contact joint group) with `settings`
/// (out-of-range settings clamped as createBulletWorld does; settings() reports what is in use)
/// and the ODE-specific `ode` knobs.
std::unique_ptr<PhysicsWorld> createOdeWorld(const WorldSettings& settings = {}, const OdeSettings& ode = {});

/// The ODE version the adapter was built against ("0.16.2"-like, from pkg-config) and its
/// precision ("double" or "single": dDOUBLE / dSINGLE).
const char* odeVersion();
const char* odePrecision();

}  // namespace handoff
