// The physics engine interface the core talks to (the `physics` module). Engine-agnostic: two
// adapters implement it, Bullet (handoff/physics_bullet.h) and ODE (handoff/physics_ode.h); a
// Jolt or PhysX adapter implements this same class and proves it with the conformance suite
// (handoff/physics_conformance.h). Each adapter header lists which items it implements natively
// and which on top of its engine. One PhysicsWorld is one independent simulation space.
//
// Thread-safety: a PhysicsWorld is used by one thread at a time. Different worlds may be stepped
// on different threads at once (this is how handoff uses several cores; see
// docs/ARCHITECTURE.md). Functions marked [step-safe] neither allocate nor throw and may be
// called every frame; the others (creation, destruction) may allocate.
#pragma once

#include "handoff/math.h"
#include "handoff/result.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

namespace handoff {

/// Handle of a body in one PhysicsWorld. Handles of destroyed bodies are not reused until the
/// generation wraps.
struct BodyId {
  std::uint32_t value = std::numeric_limits<std::uint32_t>::max();
  bool valid() const { return value != std::numeric_limits<std::uint32_t>::max(); }
  friend bool operator==(BodyId, BodyId) = default;
};

/// Handle of a joint in one PhysicsWorld (as BodyId).
struct JointId {
  std::uint32_t value = std::numeric_limits<std::uint32_t>::max();
  bool valid() const { return value != std::numeric_limits<std::uint32_t>::max(); }
  friend bool operator==(JointId, JointId) = default;
};

enum class MotionType : std::uint8_t {
  Static,     ///< Never moves (world geometry).
  Kinematic,  ///< Moved by the caller; infinite mass for the solver (zero inverse mass and inertia).
  Dynamic,    ///< Moved by the solver.
};

/// Handle of a shape made by PhysicsWorld::createShape (triangle meshes, convex hulls,
/// heightfields, compounds: level geometry and a game's own objects). As BodyId.
struct ShapeId {
  std::uint32_t value = std::numeric_limits<std::uint32_t>::max();
  bool valid() const { return value != std::numeric_limits<std::uint32_t>::max(); }
  friend bool operator==(ShapeId, ShapeId) = default;
};

/// Collision layers (bits). A body collides with another when each one's mask has the other's
/// layer bit. Adjacent ragdoll bodies are excluded per joint (JointDesc::collideConnected).
/// These are handoff's own four layers; a world the game owns maps each to bits of the game's
/// (WorldSettings::layerBits), so handoff's layers compose with the game's collision groups.
namespace layers {
inline constexpr std::uint32_t kStatic = 1u << 0;   ///< Ground, walls, steps.
inline constexpr std::uint32_t kRagdoll = 1u << 1;  ///< Ragdoll bodies (of any character).
inline constexpr std::uint32_t kCapsule = 1u << 2;  ///< Character capsules.
inline constexpr std::uint32_t kDebris = 1u << 3;   ///< Props, projectiles.
inline constexpr std::uint32_t kAll = 0xffffffffu;
}  // namespace layers

/// Which of the engine's collision bits each of handoff's layers stands for (one or more bits
/// each; 0: the layer is not used). A CollisionFilter's layer and mask are written in handoff's
/// layers and translated with toWorldBits when a body is added to the engine; bits that are not
/// one of handoff's four layers pass through unchanged (a game's own groups in a mask).
struct LayerBits {
  std::uint32_t staticBits = layers::kStatic;    ///< [default kStatic, bit 0]
  std::uint32_t ragdollBits = layers::kRagdoll;  ///< [default kRagdoll, bit 1]
  std::uint32_t capsuleBits = layers::kCapsule;  ///< [default kCapsule, bit 2]
  std::uint32_t debrisBits = layers::kDebris;    ///< [default kDebris, bit 3]
  friend bool operator==(const LayerBits&, const LayerBits&) = default;
};
/// The engine bits of handoff layer bits `bits` under `map` (kAll stays kAll).
std::uint32_t toWorldBits(std::uint32_t bits, const LayerBits& map);

struct CollisionFilter {
  std::uint32_t layer = layers::kRagdoll;  ///< The body's own layer bit(s). [default kRagdoll]
  std::uint32_t mask = layers::kAll;       ///< Layers it collides with. [default kAll]
  friend bool operator==(CollisionFilter, CollisionFilter) = default;
};

enum class ShapeType : std::uint8_t { None, Sphere, Capsule, Box };
/// "none", "sphere", "capsule", "box" (the names the asset and replay files use).
const char* shapeTypeName(ShapeType type);

/// A convex shape in body space C (origin at the centre of mass). Capsules and boxes are
/// aligned with C's axes; a capsule's axis is C's +Y. Or (`created` valid, `type` None) a shape
/// made by PhysicsWorld::createShape, in C as it was described.
struct ShapeDesc {
  ShapeType type = ShapeType::None;  ///< [default None]
  double radius = 0.0;               ///< Sphere and capsule radius. [m] [> 0] [default 0: set it]
  /// Capsule: half the length of the inner segment (cap centres). [m] [>= 0] [default 0]
  double halfHeight = 0.0;
  Vec3 halfExtents{0.0};  ///< Box half sizes along C's axes. [m] [> 0] [default 0: set it]
  /// A shape from createShape (type must be None; the sizes above are not read). [default none]
  ShapeId created{};
};

/// A static triangle mesh in body space (level geometry: floors, stairs, ramps). Static bodies
/// only (an engine's mesh-mesh collision of moving meshes is neither cheap nor robust: give moving
/// objects a convex hull or a compound). Triangles are index triples into `vertices`; either
/// winding (both faces collide). Copied by createShape.
struct TriangleMeshDesc {
  std::span<const Vec3> vertices;          ///< [m] finite, at most 2^24
  std::span<const std::uint32_t> indices;  ///< 3 per triangle, each < vertices.size()
};
/// The convex hull of points in body space (a crate, a rock, a vehicle's body). Copied.
struct ConvexHullDesc {
  std::span<const Vec3> points;  ///< [m] finite, at least 4 not in one plane
};
/// A height grid in body space: `columns` x `rows` samples, sample (i, j) at
/// x = (i - (columns - 1) / 2) spacing, z = (j - (rows - 1) / 2) spacing, y = heights[j * columns + i]
/// (so the grid is centred on the body's origin in X and Z, heights as given). Static only.
/// Copied.
struct HeightfieldDesc {
  int columns = 0;                  ///< [>= 2]
  int rows = 0;                     ///< [>= 2]
  double spacing = 1.0;             ///< [m] [> 0] [default 1]
  std::span<const double> heights;  ///< [m] columns * rows, finite
};
/// One part of a compound: a primitive (ShapeDesc with a type) or a created convex hull, placed
/// in the compound's body space.
struct CompoundChild {
  Transform bodyFromChild;
  ShapeDesc shape;
};
/// Several convex parts as one shape (a table, a vehicle, a crate stack that moves as one).
struct CompoundDesc {
  std::span<const CompoundChild> children;  ///< at least 1
};

struct BodyDesc {
  ShapeDesc shape;
  MotionType motion = MotionType::Dynamic;  ///< [default Dynamic]
  double mass = 1.0;                        ///< Used when dynamic. [kg] [> 0] [default 1]
  /// Principal moments in C; zero = computed from the shape. [kg m^2] [default 0]
  Vec3 inertia{0.0};
  Transform worldFromBody;  ///< T_WC at creation.
  CollisionFilter filter;
  double friction = 0.8;  ///< [>= 0] [default 0.8]
  /// Rolling resistance: the contact's resisting torque is at most this times its normal force,
  /// the lever of a contact patch (soft tissue flattens against the floor; a rigid capsule
  /// would roll and rock for ever). [m] [>= 0] [default 0: none]
  double rollingFriction = 0.0;
  double restitution = 0.0;               ///< [0, 1] [default 0]
  double linearDamping = 0.05;            ///< [1/s] [>= 0] [default 0.05]
  double angularDamping = 0.05;           ///< [1/s] [>= 0] [default 0.05]
  bool enableContinuousCollision = true;  ///< Swept test for fast bodies (no tunnelling). [default true]
  std::uint64_t userData = 0;             ///< The caller's, untouched by the engine. [default 0]
};

/// What a ray or a capsule cast hit first (PhysicsWorld::castRay, castCapsule).
struct CastHit {
  double fraction = 1.0;  ///< Along the path, [0, 1]; 1 and no body when nothing was hit.
  Vec3 point{0.0};        ///< The hit point, world. [m]
  Vec3 normal{0.0};       ///< The surface normal there, unit, world.
  /// The body hit, when it is one of this PhysicsWorld's (a character's body, a level piece made
  /// with createBody); invalid for an object the game added to its engine world itself.
  BodyId body;
  /// The engine's own object hit (Bullet: the btCollisionObject*), whoever made it: how a game
  /// recognises its own objects. Null when nothing was hit.
  const void* engineObject = nullptr;
  bool hit() const { return engineObject != nullptr; }
};

/// A contact of a reported body (PhysicsWorld::setContactReport) during the last step: one per
/// (body, other object) pair whose normal impulse summed over the step's substeps reached the
/// body's threshold. Delivered after step() in contactEvents().
struct ContactEvent {
  BodyId body;  ///< The reported body.
  /// The other body when it is one of this world's; invalid for a game's own engine object.
  BodyId other;
  const void* otherEngineObject = nullptr;  ///< The other's engine object (Bullet: btCollisionObject*).
  /// The deepest point (midway between the two surfaces) in the substep that pushed hardest,
  /// world. [m]
  Vec3 point{0.0};
  Vec3 normal{0.0};      ///< Unit, world, pointing from the other object toward `body`.
  double impulse = 0.0;  ///< Normal impulse over the step, all points and substeps. [N s] [>= threshold]
};

/// A 6-DoF joint between body A (parent) and body B (child), with one frame in each body
/// (SPEC.md section 1: T_CA_J and T_CB_J). Linear DoFs are locked (anchors coincide).
/// Angular DoFs, about the axes of J, are limited per axis with the Euler convention of
/// `jointAngles()` below: lower == upper locks the axis, lower > upper frees it.
struct JointDesc {
  BodyId bodyA;
  BodyId bodyB;
  Transform bodyAFromJoint;  ///< T_CA_J
  Transform bodyBFromJoint;  ///< T_CB_J
  Vec3 angularLower{0.0};    ///< [rad] about X (twist), Y, Z of J [default 0: locked]
  Vec3 angularUpper{0.0};    ///< [rad] [default 0]
  /// A and B collide with each other (SPEC.md section 2: adjacent bodies never do). [default false]
  bool collideConnected = false;
  /// The joint breaks (stops acting, for good) in the first substep whose constraint force, the
  /// magnitude of the anchor rows' impulse over the substep divided by the substep, exceeds this.
  /// Infinite: never (and no measurement is made). [N] [> 0] [default infinite]
  double breakForce = std::numeric_limits<double>::infinity();
  /// The same for the constraint torque about the anchor (limit and motor rows included). [N m]
  /// [> 0] [default infinite]
  double breakTorque = std::numeric_limits<double>::infinity();
};

/// What a breakable joint measured (PhysicsWorld::jointBreakState). A broken joint applies no
/// force, no limit and no motor; its two bodies keep ignoring each other (its collision exclusion
/// stays: at the break they overlap at the joint, and colliding would push them apart in one
/// substep). It never mends; destroy it to drop it.
struct JointBreakState {
  bool broken = false;
  /// |F| and |tau| about the anchor the joint carried over the substep it broke in (before
  /// breaking: over the last substep it was solved in; 0 for an unbreakable joint). [N] [N m]
  double force = 0.0;
  double torque = 0.0;
  /// The substep of the last step() it broke in, [0, substeps); -1 when it did not break in the
  /// last step() (earlier, or never).
  int substep = -1;
};

/// Joint angles of a relative rotation qRel = inverse(qA_J) * qB_J as used for limits:
/// qRel = Rx(a.x) * Ry(a.y) * Rz(a.z) (intrinsic X, then Y, then Z), |a.y| <= pi/2. [rad]
/// So a.x turns about A's joint X axis, a.z about B's joint Z axis, a.y about the axis between;
/// a pure rotation of B by +t about a joint axis gives +t on that axis. a.x and a.z lie in
/// [-pi, pi]. At |a.y| = pi/2 (gimbal lock) only a.x +- a.z is defined: a.z is reported as 0.
/// This is exactly the angle btGeneric6DofSpring2Constraint (RotateOrder RO_XYZ) limits and
/// reports with getAngle() for the constraint the Bullet adapter builds (its Bullet body A is
/// our B; Bullet's own angles for the unswapped order are jointAngles(inverse(qRel))).
Vec3 jointAngles(const Quat& jointAFromJointB);
Quat fromJointAngles(const Vec3& angles);
/// How far each of the joint angles `angles` (jointAngles) can move while the joint turns by
/// `turn` [rad] about any fixed axis: under an angular velocity w the rates of Rx Ry Rz are at
/// most |w| for y and |w| / cos y for x and z, and y stays within |angles.y| + turn. Infinite
/// where y could reach pi/2 - 1e-3 (near gimbal lock) or for a NaN. [rad]
Vec3 jointAngleReach(const Vec3& angles, double turn);

/// Principal moments of inertia in body space C of a solid shape of uniform density (what
/// BodyDesc::inertia = 0 means). Capsules are exact (cylinder plus hemispheres). [kg m^2]
Vec3 shapePrincipalInertia(const ShapeDesc& shape, double mass);

/// Radius of a sphere around a shape's centre that holds it (the speed of its farthest point per
/// rad/s, which sleeping uses; the bounds of group sleeping, of the crowd's clusters, and the
/// commit's quick test of which bodies may touch). [m] 0 for ShapeType::None.
double shapeBoundingRadius(const ShapeDesc& shape);

/// The engine's own implicit angular spring (PD servo) on a joint, solved inside the
/// constraint solver: stable at stiffness an explicit drive cannot reach at 60 Hz.
struct JointMotorSettings {
  bool enabled = false;             ///< [default false]
  Quat target{1.0, 0.0, 0.0, 0.0};  ///< Target qRel = inverse(qA_J) * qB_J. [default identity]
  Vec3 stiffness{0.0};              ///< Per axis of J. [N m/rad] [>= 0] [default 0]
  Vec3 damping{0.0};                ///< Per axis of J. [N m s/rad] [>= 0] [default 0]
  double maxTorque = std::numeric_limits<double>::infinity();  ///< Per axis. [N m] [> 0] [default +inf]
  /// Target joint-angle rates (d jointAngles / dt of a moving target), per axis of J; the
  /// servo drives toward the target moving at these rates: tau = Kp (e + h r - h w') +
  /// Kd (r - w'). [rad/s] [default 0: static target]
  Vec3 targetRates{0.0};
  /// True: the servo is a PD on the joint angles whose rows ask for the rates it means (an
  /// engine whose rows turn about the dual of the Euler axes, as Bullet's 6-DoF spring2, measures
  /// rate * cos(y) on the X and Z rows: their targets and compliances are scaled by it). False:
  /// the rates are asked of the rows as they are (near the gimbal lock X and Z are then driven at
  /// up to 1 / cos(y) the rate meant; ServoTargets::PerAxis, for comparison). [default true]
  bool angleRateRows = true;
};

/// Per-step statistics of a world (SPEC.md section 7).
struct StepStats {
  int dynamicBodies = 0;   ///< Dynamic bodies in the simulation.
  int activeBodies = 0;    ///< Dynamic bodies awake.
  int sleepingBodies = 0;  ///< Dynamic bodies asleep.
  int kinematicBodies = 0;
  int contactPoints = 0;     ///< Contact points in all manifolds after the step.
  int solverIterations = 0;  ///< Velocity iterations per substep.
  int substeps = 0;          ///< Substeps taken during the last step().
  /// Bodies disabled (setEnabled(false)) during the last step because they left the world
  /// (WorldSettings::worldHalfExtent) or their state became non-finite.
  int bodiesLeftWorld = 0;
  /// Contact events not delivered because WorldSettings::maxContactEvents were already taken.
  int droppedContactEvents = 0;
};

/// What every engine behind PhysicsWorld offers (Jolt's PhysicsSettings, PhysX's scene and body
/// settings, ODE's world, Bullet's dynamics world each have these): passed to the adapter's
/// factory, read once at creation (settings() reports the values in use after the adapter
/// clamped them). An engine's own tuning (Bullet's warm-started joint rows and contact iteration
/// count, ODE's ERPs and solver choice) is in that adapter's own settings struct
/// (BulletSettings in physics_bullet.h, OdeSettings in physics_ode.h), not here.
struct WorldSettings {
  /// Acceleration of every dynamic body, world frame. [m/s^2] [default (0, -9.81, 0)]
  Vec3 gravity{0.0, -9.81, 0.0};
  /// Velocity iterations of the engine's solver per substep (an engine with a direct solver
  /// ignores it and reports 0 in StepStats::solverIterations). [>= 1] [default 10, as Jolt]
  int solverIterations = 10;
  /// A body may sleep while every point of its shape moves slower than this, as Jolt's point
  /// velocity threshold: its linear speed below it and its angular speed below it divided by
  /// its shape's bounding radius (shapeBoundingRadius). 0: bodies never sleep. [m/s] [>= 0]
  /// [default 0.03, as Jolt]
  double sleepLinearSpeed = 0.03;
  double sleepTime = 0.5;  ///< Time under the threshold before sleeping. [s] [> 0] [default 0.5]
  /// The fraction of a joint's position error (a limit passed, anchors apart) its rows correct
  /// per substep (Baumgarte; Jolt's mBaumgarte, ODE's ERP, Bullet's m_erp). The core reads it
  /// back from settings() to predict how far a joint overshoots a limit (the limit look-ahead,
  /// HandoffSettings::limitLookAhead): an adapter whose limit rows use another figure reports
  /// that one or says so in its header. [0, 1] [default 0.2]
  double jointErp = 0.2;
  /// Bodies beyond this distance from the origin are out of the world: disabled after the step
  /// and counted in StepStats::bodiesLeftWorld. [m] [> 0] [default 2000]
  double worldHalfExtent = 2000.0;
  /// Solve each simulation island on its own, its bodies, contacts and joints in a fixed order,
  /// so that what happens to one character (a fault, an extra contact, bodies removed and added)
  /// cannot change another's results, not even in the last bit (SPEC.md section 8: several
  /// characters in one world each behave as they would alone). Off: the engine's own batching
  /// and ordering (results still deterministic for the same input), slightly cheaper. An engine
  /// that cannot promise it reports false in settings(). [default true]
  bool islandOrderedSolve = true;
  /// Joint rows get this many times solverIterations (Jolt: a constraint's velocity-steps
  /// override; PhysX: the bodies' solver iteration counts; ODE quick-step: the world's
  /// iterations). An engine with a direct solver ignores it. [>= 1] [default 2]
  int jointIterationFactor = 2;
  /// The engine's collision bits that stand for handoff's layers (LayerBits). The defaults are
  /// handoff's own bits 0-3; a game's world maps them where its own groups leave room.
  LayerBits layerBits{};
  /// The most contact events one step() delivers (room reserved up front, for 4 times as many
  /// touching pairs: reporting never allocates during a step); further ones are counted in
  /// StepStats::droppedContactEvents.
  /// [>= 0] [default 256]
  int maxContactEvents = 256;
};

/// A point where a body's shape comes near another body (closestPoints()).
struct SurfacePoint {
  Vec3 point{0.0};        ///< On the queried body's surface, world. [m]
  Vec3 normal{0.0};       ///< Unit, from the other body toward the queried one.
  double distance = 0.0;  ///< Gap along the normal; negative when penetrating. [m]
};

/// Receives every substep before the solver runs: explicit drives and pins apply their
/// impulses here so they act in the same step as contacts and joints (SPEC.md section 5).
/// Thread-safety: called on the thread that steps the world, inside step().
class SubstepListener {
 public:
  virtual ~SubstepListener() = default;
  /// Called with the substep length. [s]. Must not allocate or throw.
  virtual void onSubstep(double substepDt) = 0;
};

/// One independent simulation space. Thread-safety: one thread at a time; separate worlds may be
/// stepped on separate threads at once (see the top of this header).
class PhysicsWorld {
 public:
  virtual ~PhysicsWorld() = default;
  PhysicsWorld() = default;
  PhysicsWorld(const PhysicsWorld&) = delete;
  PhysicsWorld& operator=(const PhysicsWorld&) = delete;

  // --- Creation (may allocate) ---
  virtual Result<BodyId> createBody(const BodyDesc& desc) = 0;
  virtual void destroyBody(BodyId body) = 0;
  virtual Result<JointId> createJoint(const JointDesc& desc) = 0;
  virtual void destroyJoint(JointId joint) = 0;
  /// Static world pieces: an infinite plane (normal, offset) and boxes.
  virtual BodyId addGroundPlane(const Vec3& normal, double offset, double friction = 0.8) = 0;
  virtual BodyId addStaticBox(const Transform& worldFromBox, const Vec3& halfExtents,
                              double friction = 0.8) = 0;
  /// Level geometry and a game's own shapes, made once and used by any number of bodies
  /// (BodyDesc::shape.created). The data is copied. Errors name what is wrong (an index out of
  /// range, a non-finite vertex, too few points). An engine without a kind refuses it with an error.
  virtual Result<ShapeId> createShape(const TriangleMeshDesc& desc) = 0;
  virtual Result<ShapeId> createShape(const ConvexHullDesc& desc) = 0;
  virtual Result<ShapeId> createShape(const HeightfieldDesc& desc) = 0;
  virtual Result<ShapeId> createShape(const CompoundDesc& desc) = 0;
  /// Drops the caller's reference: the shape lives on while bodies use it. An invalid or
  /// already destroyed handle is ignored.
  virtual void destroyShape(ShapeId shape) = 0;
  virtual int bodyCount() const = 0;   ///< Bodies alive, static ones included.
  virtual int jointCount() const = 0;  ///< Joints alive.

  // --- Per-step state [step-safe] ---
  /// Switches a body between kinematic and dynamic: collision flags, mass and inertia (a
  /// kinematic body has zero inverse mass), activation. Velocities are kept.
  virtual void setMotionType(BodyId body, MotionType motion) = 0;
  virtual MotionType motionType(BodyId body) const = 0;
  /// Moves a kinematic body to `worldFromBody` over the next step of length `dt`: the engine
  /// derives its velocity and pushes what it touches (no teleport).
  virtual void moveKinematic(BodyId body, const Transform& worldFromBody, double dt) = 0;
  /// Teleports a body (no derived velocity). Call resetWarmStart on its joints afterwards.
  virtual void setTransform(BodyId body, const Transform& worldFromBody) = 0;
  virtual Transform transform(BodyId body) const = 0;
  virtual void setLinearVelocity(BodyId body, const Vec3& velocity) = 0;
  virtual void setAngularVelocity(BodyId body, const Vec3& omega) = 0;
  virtual Vec3 linearVelocity(BodyId body) const = 0;
  virtual Vec3 angularVelocity(BodyId body) const = 0;
  virtual double mass(BodyId body) const = 0;  ///< The dynamic mass, also while kinematic. [kg]
  /// World inertia tensor (I_world = R I_C R^T) of the dynamic mass properties. [kg m^2]
  virtual glm::dmat3 worldInertia(BodyId body) const = 0;
  /// Impulses on a dynamic body (no effect on static or kinematic ones). [N s], [N m s]
  virtual void applyLinearImpulse(BodyId body, const Vec3& impulse, const Vec3& worldPoint) = 0;
  virtual void applyAngularImpulse(BodyId body, const Vec3& angularImpulse) = 0;
  virtual void setCollisionFilter(BodyId body, const CollisionFilter& filter) = 0;
  virtual CollisionFilter collisionFilter(BodyId body) const = 0;
  /// Removes a body from the simulation (collision and solver) without destroying it, or adds
  /// it back. Used for the character capsule and for freezing.
  virtual void setEnabled(BodyId body, bool enabled) = 0;
  virtual bool isEnabled(BodyId body) const = 0;
  virtual bool isSleeping(BodyId body) const = 0;
  /// BodyDesc::userData of a body; 0 for an invalid handle.
  virtual std::uint64_t userData(BodyId body) const = 0;
  virtual void wake(BodyId body) = 0;
  /// Puts a dynamic body to sleep now, with zero velocities, whatever the engine's own sleep
  /// timer says (handoff-side sleeping of a settled character, see docs/CROWDS.md). It wakes as
  /// the engine wakes sleeping bodies: wake(), a teleport, an awake body coming into contact.
  /// Put every body of a touching group to sleep together, or the awake ones wake the others.
  virtual void sleep(BodyId body) = 0;
  /// Forgets what the engine carries from earlier substeps into the solve of a joint and of its
  /// two bodies' contacts (accumulated impulses used to warm-start: Jolt's
  /// Constraint::ResetWarmStart, Bullet's cached contact impulses): the core calls it after it
  /// teleports a pose (setTransform), where those impulses belong to another configuration.
  /// An engine that carries nothing between substeps (ODE) makes it a no-op. [step-safe]
  virtual void resetWarmStart(JointId joint) = 0;
  /// resetWarmStart of each joint, at once (an engine may visit its contacts once for all).
  virtual void resetWarmStarts(std::span<const JointId> joints) {
    for (JointId joint : joints) resetWarmStart(joint);
  }
  virtual void setJointMotor(JointId joint, const JointMotorSettings& motor) = 0;
  /// Replaces a joint's two frames (T_CA_J, T_CB_J), e.g. to re-anchor it at the committed pose.
  /// Non-finite frames are ignored (assert in debug).
  virtual void setJointFrames(JointId joint, const Transform& bodyAFromJoint,
                              const Transform& bodyBFromJoint) = 0;
  /// Replaces a joint's angular limits (JointDesc::angularLower/Upper conventions). Limited axes
  /// are clamped to the engine's range; non-finite values are ignored (assert in debug).
  virtual void setJointLimits(JointId joint, const Vec3& angularLower, const Vec3& angularUpper) = 0;
  /// Switches collision between two particular bodies off or on (both directions), whatever
  /// their filters say: e.g. a ragdoll's non-adjacent bodies that touch in the pose being
  /// committed, until they separate. Switching off also drops their current contacts.
  virtual void setPairCollision(BodyId a, BodyId b, bool enabled) = 0;
  /// Current qRel = inverse(qA_J) * qB_J of a joint, from the bodies' poses.
  virtual Quat jointRelativeRotation(JointId joint) const = 0;
  /// World distance between a joint's two anchors (0 when the linear constraint holds). [m]
  virtual double jointAnchorSeparation(JointId joint) const = 0;
  /// Whether a joint has broken (JointDesc::breakForce / breakTorque) and the force and torque it
  /// carried when it did. An invalid handle reports an unbroken joint.
  virtual JointBreakState jointBreakState(JointId joint) const = 0;

  // --- Stepping ---
  /// Advances by dt in `substeps` equal substeps; the substep listeners run before each substep.
  virtual void step(double dt, int substeps) = 0;
  virtual const StepStats& lastStepStats() const = 0;
  virtual const WorldSettings& settings() const = 0;

  // --- Substep listeners (one per owner, as Jolt's AddStepListener) ---
  /// Adds a listener that runs before every substep, after the ones added before it (or, `first`,
  /// before them all: a probe reading the state the previous substep left, before any listener
  /// applies impulses). Each owner (a Character's drives and pins, a first-substep probe, a
  /// game's own force field) adds and removes its own, so several characters share a world.
  /// False (nothing added) for null or a listener already added. May allocate: not during a step.
  bool addSubstepListener(SubstepListener* listener, bool first = false);
  /// Removes `listener`; nothing when it is not there. Not during a step.
  void removeSubstepListener(SubstepListener* listener);
  bool hasSubstepListener(const SubstepListener* listener) const;
  int substepListenerCount() const { return static_cast<int>(listeners_.size()); }

  // --- Owners: who made a body (a character's ragdoll names its bodies here) ---
  /// What owns a body: `owner` an object of the caller's, `kind` a tag saying what type it is
  /// (the address of an object of the registering code: handoff's Ragdoll uses its own, see
  /// ragdollBodyInfo), `index` the owner's index for it (the ragdoll's body). Null owner: none.
  struct BodyOwner {
    const void* owner = nullptr;
    const void* kind = nullptr;
    int index = -1;
  };
  /// Records (or, null owner, forgets) the owner of a body. May allocate: not during a step.
  void setBodyOwner(BodyId body, BodyOwner owner);
  /// The owner recorded for `body`, or a null owner. [step-safe]
  BodyOwner bodyOwner(BodyId body) const;

  // --- Queries ---
  /// True when a capsule (axis +Y of worldFromCapsule) overlaps any enabled body whose layer
  /// is in `mask`.
  virtual bool capsuleOverlaps(const Transform& worldFromCapsule, double radius, double halfHeight,
                               std::uint32_t mask) const = 0;
  /// castCapsule's fraction: the part [0, 1] of the path that is free (1 = no hit).
  double sweepCapsule(const Transform& from, const Vec3& to, double radius, double halfHeight,
                      std::uint32_t mask) const {
    return castCapsule(from, to, radius, halfHeight, mask).fraction;
  }
  /// Casts a ray from `from` to `to` against enabled objects whose layer is in `mask` (handoff
  /// layers, translated as WorldSettings::layerBits says; in a world the game owns its own
  /// objects are seen through their engine groups); the first hit, or hit() false.
  virtual CastHit castRay(const Vec3& from, const Vec3& to, std::uint32_t mask) const = 0;
  /// Sweeps a capsule (axis +Y of `from`, orientation kept) to `to`; the first hit as castRay.
  /// A sweep that starts in contact reports an arbitrary fraction: check capsuleOverlaps first.
  virtual CastHit castCapsule(const Transform& from, const Vec3& to, double radius, double halfHeight,
                              std::uint32_t mask) const = 0;
  /// castRay's fraction in [0, 1] (1 when nothing is hit); `hitNormal` receives the normal.
  double rayCast(const Vec3& from, const Vec3& to, std::uint32_t mask, Vec3* hitNormal = nullptr) const {
    const CastHit hit = castRay(from, to, mask);
    if (hitNormal != nullptr && hit.hit()) *hitNormal = hit.normal;
    return hit.fraction;
  }
  /// Asks for contact events of `body` (ContactEvent) whose impulse over a substep reaches
  /// `minImpulse` [N s] (>= 0); a negative value stops them. [default: not reported]
  virtual void setContactReport(BodyId body, double minImpulse) = 0;
  /// The contact events of the last step(), ordered by the reported body's handle, then the other's. Valid
  /// until the next step or destroyBody. [step-safe]
  virtual std::span<const ContactEvent> contactEvents() const = 0;
  /// Number of contact points that involve `body` after the last step.
  virtual int contactCount(BodyId body) const = 0;
  /// Closest points of `body`'s shape, placed at `worldFromBody` (the body itself does not
  /// move), to enabled bodies whose layer is in `mask` within `maxDistance`: e.g. the floor under
  /// a limb about to go dynamic. Writes up to out.size() points and returns how many. An engine
  /// without the query reports none.
  virtual int closestPoints(BodyId body, const Transform& worldFromBody, double maxDistance,
                            std::uint32_t mask, std::span<SurfacePoint> out) const {
    (void)body, (void)worldFromBody, (void)maxDistance, (void)mask, (void)out;
    return 0;
  }
  /// Separates `body` from what it starts inside (a foot committed a few centimetres in the
  /// floor) by position alone, at most `maxSpeed` [m/s] (> 0; 0 or less removes the limit): its
  /// contacts push it out without giving it velocity (Bullet: split impulse for every contact of
  /// the body, the push capped; the joints of the bodies jointed to it close what the push opens,
  /// up to the same speed, by position too), where the engine's own push (Baumgarte) would throw
  /// it out, and its joints the bodies hanging from it, with a velocity it never had. The limit
  /// lifts itself once no contact of the body is deeper than the depth the engine's own push
  /// would clear at `maxSpeed`, after `maxTime` [s] (> 0: what is still inside then is being
  /// pressed in, not left over from the start: a body crushed against the floor gets the engine's
  /// full push back), or when the body is destroyed or made kinematic or static. Returns whether
  /// the engine applies it (an engine or a world that cannot, such as a game's own Bullet world,
  /// returns false and leaves its contacts as they are).
  virtual bool limitDepenetration(BodyId body, double maxSpeed, double maxTime) {
    (void)body, (void)maxSpeed, (void)maxTime;
    return false;
  }
  /// Whether `body`'s depenetration limit is still on (limitDepenetration). [step-safe]
  virtual bool depenetrationLimited(BodyId body) const {
    (void)body;
    return false;
  }
  /// The displacement [m] limitDepenetration's push has given `body` by position since the last
  /// call (the pushed body and the bodies jointed to it), and resets it: work done on a ragdoll
  /// from outside its dynamics (its potential energy rises by -m g . displacement), which an
  /// energy account must count as such. Zero for an engine without the push. Not during a step.
  virtual Vec3 takeDepenetrationPush(BodyId body) {
    (void)body;
    return Vec3{0.0};
  }

 protected:
  /// Every adapter calls this before each substep, with its length. [s]
  void runSubstepListeners(double substepDt) {
    for (SubstepListener* listener : listeners_) listener->onSubstep(substepDt);
  }

 private:
  std::vector<SubstepListener*> listeners_;
  struct OwnerEntry {
    std::uint32_t body;
    BodyOwner owner;
  };
  std::vector<OwnerEntry> owners_;  // sorted by body handle
};

}  // namespace handoff
