// The Bullet adapter's parts, shared by the files of src/physics_bullet (the only code that includes
// Bullet; test hooks without Bullet types are in bullet_internal.h):
//   bullet_collision.cpp    speculative contacts (SpeculativeDispatcher, ShapeMotion)
//   bullet_shapes.cpp       the world's shape cache (ShapeKey, ShapeEntry)
//   bullet_constraints.cpp  the joint's constraint and solver subclasses, the joint motors' rows
//   bullet_projection.cpp   the joint-anchor projection after every substep
//   bullet_island_order.h   the island-ordered btDiscreteDynamicsWorld (WorldSettings::islandOrderedSolve)
//   bullet_world.cpp        BulletWorld, the PhysicsWorld on Bullet: construction, handles, test hooks
//   bullet_bodies.cpp       its bodies and their per-step state
//   bullet_joints.cpp       its joints: creation, warm start, motors, frames, limits, measurements
//   bullet_step.cpp         stepping: tick callbacks, kinematic moves, breaks, sleeping, statistics
//   bullet_queries.cpp      queries: overlap, casts, contact counts, closest points
//   bullet_created_shapes.cpp  meshes, hulls, heightfields and compounds (createShape)
//   bullet_contacts.cpp     contact events (setContactReport, contactEvents)
//   bullet_join.cpp         joining a btDiscreteDynamicsWorld the game owns (joinBulletWorld)
// Each file starts with the decisions it makes.
#pragma once

#include "handoff/physics_bullet.h"

#include "physics/adapter_support.h"

#include <btBulletCollisionCommon.h>
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace handoff::bullet_detail {

// --- Handles and conversions ---------------------------------------------------------------------

// The handle layout, messages, settings clamping and validation are shared with the ODE adapter
// (physics/adapter_support.h).
using adapter::fmt;
using adapter::kGenerationMask;
using adapter::kIndexBits;
using adapter::kIndexMask;
using adapter::liveSlot;
using adapter::sanitiseWorldSettings;

inline btVector3 toBt(const Vec3& v) { return btVector3(v.x, v.y, v.z); }
inline Vec3 fromBt(const btVector3& v) { return Vec3{v.x(), v.y(), v.z()}; }
inline btQuaternion toBt(const Quat& q) { return btQuaternion(q.x, q.y, q.z, q.w); }
inline Quat fromBt(const btQuaternion& q) { return Quat{q.w(), q.x(), q.y(), q.z()}; }
inline btTransform toBt(const Transform& t) {
  return btTransform(toBt(normalizeOrIdentity(t.rotation)), toBt(t.translation));
}
inline Transform fromBt(const btTransform& t) {
  return Transform{fromBt(t.getRotation()), fromBt(t.getOrigin())};
}

inline int toGroup(std::uint32_t bits) { return static_cast<int>(bits); }

/// A world's bodies carry the BulletWorld that made them as their btCollisionObject user pointer
/// (their user index is their slot): how a query or a contact tells the adapter's bodies from
/// the objects a game added to its own world.

/// Bullet's damping d is the fraction of velocity lost per second: v *= (1 - d)^dt. Ours is a rate
/// c [1/s] with v *= exp(-c dt), so d = 1 - exp(-c).
inline double toBulletDamping(double rate) { return std::clamp(1.0 - std::exp(-rate), 0.0, 1.0); }

inline bool finite(double v) { return std::isfinite(v); }

// Invalid handles in [step-safe] calls of BulletWorld (HANDOFF_BODY_OR_RETURN,
// HANDOFF_JOINT_OR_RETURN of physics/adapter_support.h): assert in debug builds, ignored in
// release builds.

// --- Collision (bullet_collision.cpp) ------------------------------------------------------------

/// A shape's getAngularMotionDisc() and getContactBreakingThreshold(gContactBreakingThreshold),
/// computed once when the adapter creates the shape (its btCollisionShape user pointer): Bullet
/// derives both from getAabb() on every call, which the speculative refresh below did for every
/// manifold and substep (about a sixth of a crowd step). Shapes never change after creation.
struct ShapeMotion {
  double disc = 0.0;
  double breakingFactor = 0.0;  // the gContactBreakingThreshold `breaking` was computed with
  double breaking = 0.0;
};

/// A shape's contact breaking threshold (bullet_collision.cpp: computed once per shape). [m]
double contactBreakingThreshold(const btCollisionShape& shape);

/// Speculative contacts: a manifold's contact breaking threshold is the distance up to which the
/// narrowphase reports (and the solver treats as speculative, impulse only if closing faster
/// than distance / h) contact points. Bullet's is ~0.02 x shape size (5 mm for a 0.2 m limb),
/// so a limb end moving 12 cm per substep penetrates up to that before any contact exists; the
/// swept-sphere CCD only covers the body's centre. Widen every manifold to what the pair can
/// close in one substep (set on creation here, refreshed before every substep).
class SpeculativeDispatcher final : public btCollisionDispatcher {
 public:
  using btCollisionDispatcher::btCollisionDispatcher;
  btPersistentManifold* getNewManifold(const btCollisionObject* b0, const btCollisionObject* b1) override;
  /// Before a substep of length h: every manifold to max(Bullet's threshold, the pair's reach).
  /// Manifolds between two bodies that are both asleep (or static) are left alone: no narrowphase
  /// runs for such a pair (btCollisionDispatcher::needsCollision), and the substep that wakes one
  /// of them refreshes it before its next narrowphase. A sleeping pile costs no refresh.
  void refresh(double h) {
    substep_ = h;
    refreshSpeculative(*this, h, nullptr);
  }

  /// The same over any dispatcher (a world the game owns: its own dispatcher, whose new
  /// manifolds start with Bullet's threshold until the next refresh), only manifolds with a body
  /// whose user pointer is `owner` (null: all).
  static void refreshSpeculative(btDispatcher& dispatcher, double h, const void* owner);

 private:
  static void widen(btPersistentManifold& m, double base, double h);
  double substep_ = 1.0 / 60.0;
};

// --- Shapes (bullet_shapes.cpp) ------------------------------------------------------------------

/// What a cached shape is: its kind and parameters (sphere: radius; capsule: radius, half height;
/// box: half extents; plane: normal, offset). Bodies with equal keys share one Bullet shape.
struct ShapeKey {
  enum class Kind : std::uint8_t { Sphere, Capsule, Box, Plane } kind = Kind::Sphere;
  double v[4] = {0.0, 0.0, 0.0, 0.0};
  bool operator==(const ShapeKey& o) const {
    return kind == o.kind && v[0] == o.v[0] && v[1] == o.v[1] && v[2] == o.v[2] && v[3] == o.v[3];
  }
};

struct ShapeEntry {
  ShapeKey key;
  std::unique_ptr<btCollisionShape> shape;
  int refs = 0;
  std::unique_ptr<ShapeMotion> motion;  // the shape's user pointer
};

/// A shape made by createShape: the Bullet shape and the data it reads (Bullet keeps pointers
/// into the vertex, index and height arrays). Reference-counted: the caller's handle counts one,
/// each body using it one, each compound holding it one.
struct CreatedShape {
  std::unique_ptr<btCollisionShape> shape;  // null while the slot is free
  std::unique_ptr<ShapeMotion> motion;
  std::uint32_t generation = 0;
  int refs = 0;
  bool handleAlive = false;
  bool staticOnly = false;  // triangle meshes and heightfields
  double ccdRadius = 0.0;   // half the thinnest extent: the swept sphere of a moving body
  // Bounds in the shape's frame (Bullet's cached hull bounds count the margin twice). [m]
  btVector3 lo{0.0, 0.0, 0.0};
  btVector3 hi{0.0, 0.0, 0.0};
  std::vector<btScalar> vertices;  // triangle mesh
  std::vector<int> indices;
  std::unique_ptr<btTriangleIndexVertexArray> mesh;
  std::vector<btScalar> heights;                         // heightfield
  std::vector<std::unique_ptr<btCollisionShape>> parts;  // compound's own primitives, heightfield
  std::vector<std::uint32_t> heldShapes;                 // compound's created children (slots)
};

/// A capsule whose size can change without allocating (queries reuse one). btCapsuleShape keeps its
/// margin equal to its radius and ignores setMargin(), so resize both here.
class ResizableCapsule final : public btCapsuleShape {
 public:
  ResizableCapsule() : btCapsuleShape(0.1, 0.2) {}
  void resize(btScalar radius, btScalar halfHeight) {
    m_implicitShapeDimensions.setValue(radius, halfHeight, radius);
    m_collisionMargin = radius;
  }
};

// --- Constraints (bullet_constraints.cpp) --------------------------------------------------------

/// The 6-DoF spring2 joint with its anchor rows applied at ONE point. Bullet builds each locked
/// linear row with each body's own anchor (J1 = rA x n, J2 = -(rB x n)); while the anchors are
/// apart (the curvature of a substep's rotation, the error the rows are correcting) the pair
/// +lambda n at anchor A and -lambda n at anchor B is a couple (pA - pB) x lambda n: the joint
/// itself changes the bodies' total angular momentum. Here both bodies take the impulse at the
/// anchors' midpoint, so every anchor impulse is equal and opposite on one line of action (an
/// internal force); the row still measures the relative velocity there, the same constraint to
/// first order in the gap.
class CentredAnchorConstraint final : public btGeneric6DofSpring2Constraint {
 public:
  using btGeneric6DofSpring2Constraint::btGeneric6DofSpring2Constraint;
  void getInfo2(btConstraintInfo2* info) override;
};

/// btSequentialImpulseConstraintSolver with warm-started joint rows (BulletSettings::
/// warmStartJoints). Bullet's convertJoint() starts every joint row at zero impulse; here each
/// row starts at the impulse it ended the previous substep with (clamped to its current bounds)
/// and that impulse is applied to the solver bodies before the iterations, as Bullet does for
/// contact points. A joint's rows are matched by position while its row count is unchanged (a
/// limit engaging or releasing changes the count: that joint starts cold). Impulses are kept per
/// joint slot (the constraint's user id).
class JointWarmStartSolver final : public btSequentialImpulseConstraintSolver {
 public:
  static constexpr int kMaxRows = 12;  // 3 linear + 3 angular axes, each a limit and a motor row
  struct Rows {
    int count = 0;  // rows last substep; 0: cold
    double impulse[kMaxRows] = {};
  };
  bool enabled = false;
  /// Room for joint slot `index` (called when a joint is created: no allocation in a step).
  void prepare(std::uint32_t index) {
    if (rows_.size() <= index) rows_.resize(index + 1);
    rows_[index] = Rows{};
    splitRows_.reserve((static_cast<std::size_t>(index) + 1) * kMaxRows);  // no allocation in a step
  }
  void forget(std::uint32_t index) {
    if (index < rows_.size()) rows_[index] = Rows{};
  }
  /// PhysicsWorld::limitDepenetration per body slot (the Bullet user index): the body's push
  /// out of what it is inside is done by position (split impulse), at most maxSpeed, and gives it
  /// no velocity. `deepest`: its deepest contact in the substep being solved (<= 0). [m/s] [m]
  struct Depenetration {
    double maxSpeed = 0.0;  // 0: the engine's own push
    double deepest = 0.0;
    double timeLeft = 0.0;  // [s] until the limit lifts
  };
  std::vector<Depenetration> depenetration;
  int limitedBodies = 0;  // entries with maxSpeed > 0
  /// Room for body slot `index` (called when a body is created: no allocation in a step).
  void prepareBody(std::uint32_t index) {
    if (depenetration.size() <= index) depenetration.resize(index + 1);
    if (pushed.size() <= index) pushed.resize(index + 1);
    pushedChain_.reserve(static_cast<std::size_t>(index) + 2);  // the bodies and Bullet's fixed one
    setDepenetration(index, 0.0, 0.0);
    pushed[index] = btVector3(0, 0, 0);
  }
  /// Per body slot: the displacement the limited push and its chain's split joint rows gave the
  /// body since PhysicsWorld::takeDepenetrationPush last read it. [m]
  std::vector<btVector3> pushed;
  void setDepenetration(std::uint32_t index, double maxSpeed, double maxTime) {
    if (index >= depenetration.size()) return;
    Depenetration& d = depenetration[index];
    const bool on = maxSpeed > 0.0 && maxTime > 0.0;
    limitedBodies += (on ? 1 : 0) - (d.maxSpeed > 0.0 ? 1 : 0);
    d.maxSpeed = on ? maxSpeed : 0.0;
    d.timeLeft = on ? maxTime : 0.0;
    d.deepest = 0.0;
  }

 protected:
  btScalar solveGroupCacheFriendlySetup(btCollisionObject** bodies, int numBodies,
                                        btPersistentManifold** manifolds, int numManifolds,
                                        btTypedConstraint** constraints, int numConstraints,
                                        const btContactSolverInfo& info, btIDebugDraw* debugDrawer) override;
  btScalar solveGroupCacheFriendlyFinish(btCollisionObject** bodies, int numBodies,
                                         const btContactSolverInfo& info) override;
  void solveGroupCacheFriendlySplitImpulseIterations(btCollisionObject** bodies, int numBodies,
                                                     btPersistentManifold** manifolds, int numManifolds,
                                                     btTypedConstraint** constraints, int numConstraints,
                                                     const btContactSolverInfo& info,
                                                     btIDebugDraw* debugDrawer) override;

 private:
  /// The contacts of bodies with a depenetration limit: their push out moved from the velocity
  /// rows to the split-impulse rows and capped (bullet_constraints.cpp).
  void limitDepenetration(const btContactSolverInfo& info);
  Depenetration* limitOf(int solverBody);
  /// While a body is pushed out by position, the joint rows of every body jointed to it
  /// (directly or along the chain) correct their position error by position too (split rows):
  /// a push by position alone would otherwise come back through the joints as velocity
  /// (bullet_constraints.cpp).
  void splitJointRows(const btContactSolverInfo& info);
  std::vector<std::uint8_t> pushedChain_;  // per solver body: jointed to a limited body
  bool chainSet_ = false;                  // pushedChain_ describes the group being solved
  std::vector<int> splitRows_;             // non-contact rows with a position part in the split rows
  /// Motor rows softer than Bullet's SOR step can take: the exact Gauss-Seidel step instead
  /// (bullet_constraints.cpp).
  void softenMotorRows();
  /// Calls f(rows, first, count) for every joint's run of rows in the group being solved.
  template <typename F>
  void forEachJoint(F&& f);
  std::vector<Rows> rows_;
};

// --- The world (bullet_world.cpp) ----------------------------------------------------------------

/// A body of the world: its Bullet body and what the adapter keeps beside it. A slot's index is
/// the body's user index in Bullet and the low bits of its BodyId.
struct BodySlot {
  std::unique_ptr<btRigidBody> body;  // null while the slot is free
  btCollisionShape* shape = nullptr;
  std::uint32_t generation = 0;
  MotionType motion = MotionType::Dynamic;
  double mass = 0.0;                 // dynamic mass (0 for static bodies)
  btVector3 inertia{0.0, 0.0, 0.0};  // principal moments in C of the dynamic mass
  CollisionFilter filter;
  bool enabled = true;
  std::uint64_t userData = 0;
  std::vector<std::uint32_t> joints;  // joint slots attached to this body
  // Pending kinematic move (moveKinematic until the end of the next step).
  bool movePending = false;
  int moveFirstSubstep = 0;
  Transform moveStart;
  Transform moveTarget;
  Vec3 moveRotation{0.0};          // short-arc rotation vector from start to target (world)
  bool listedMoving = false;       // in BulletWorld::moving_ (until the end of the step)
  std::uint32_t aabbStep = 0;      // BulletWorld::steps_ when finishKinematicMoves set its AABB
  bool moveRotationKnown = false;  // moveRotation computed (only a move over substeps needs it)
  Vec3 moveLinearVelocity{0.0};
  Vec3 moveAngularVelocity{0.0};
  // Anchor projection (projectJointAnchors): whether it moved the body in this substep, and the
  // body's transform before it did.
  bool projected = false;
  btTransform beforeProjection = btTransform::getIdentity();
  std::uint32_t warmResetPass = 0;  // resetWarmStarts: the pass that clears this body's contacts
  // closestPoints: the shape's bounding sphere (in the body's frame) and the farthest a plane
  // test reports beyond the asked distance (the larger of the shape's and the global threshold).
  btVector3 boundingCentre{0.0, 0.0, 0.0};
  btScalar boundingRadius = 0.0;
  btScalar breakingThreshold = 0.0;
  int worldGroup = 0;  // the collision group it was added to Bullet's world with (addToWorld)
  std::uint32_t createdShape = kIndexMask;  // the CreatedShape slot it uses, or kIndexMask
  double reportMinImpulse = -1.0;           // setContactReport; < 0: not reported
};

/// A joint of the world: its constraint and what the adapter keeps beside it. A slot's index is
/// the constraint's user id in Bullet (JointWarmStartSolver's key) and the low bits of its JointId.
struct JointSlot {
  std::unique_ptr<btGeneric6DofSpring2Constraint> constraint;  // null while free
  std::uint32_t generation = 0;
  std::uint32_t bodyA = 0;
  std::uint32_t bodyB = 0;
  Transform aFromJoint;
  Transform bFromJoint;
  Vec3 lower{0.0};
  Vec3 upper{0.0};
  bool collideConnected = false;
  bool inWorld = false;
  JointMotorSettings motor;
  Vec3 motorTargetEuler{0.0};   // jointAngles(motor.target), kept with the target
  Vec3 motorTargetAngles{0.0};  // motorTargetEuler clamped to the limits
  // Breakable joints only (a finite JointDesc::breakForce or breakTorque): Bullet's per-substep
  // force and torque on its body A (our B), see checkJointBreaks().
  double breakForce = std::numeric_limits<double>::infinity();
  double breakTorque = std::numeric_limits<double>::infinity();
  std::unique_ptr<btJointFeedback> feedback;
  JointBreakState breakState;
};

/// handoff::PhysicsWorld on Bullet 3 (createBulletWorld). Its members are defined in the files
/// listed at the top of this header.
class BulletWorld final : public PhysicsWorld {
 public:
  BulletWorld(const WorldSettings& settings, const BulletSettings& bullet);
  /// A world the game owns (joinBulletWorld, bullet_join.cpp): nothing of the game's is replaced
  /// but its tick callbacks, which are chained.
  BulletWorld(btDiscreteDynamicsWorld& gameWorld, const WorldSettings& settings,
              const BulletSettings& bullet);
  ~BulletWorld() override;

  Result<BodyId> createBody(const BodyDesc& desc) override;
  void destroyBody(BodyId body) override;
  Result<JointId> createJoint(const JointDesc& desc) override;
  void destroyJoint(JointId joint) override;
  BodyId addGroundPlane(const Vec3& normal, double offset, double friction) override;
  BodyId addStaticBox(const Transform& worldFromBox, const Vec3& halfExtents, double friction) override;
  Result<ShapeId> createShape(const TriangleMeshDesc& desc) override;
  Result<ShapeId> createShape(const ConvexHullDesc& desc) override;
  Result<ShapeId> createShape(const HeightfieldDesc& desc) override;
  Result<ShapeId> createShape(const CompoundDesc& desc) override;
  void destroyShape(ShapeId shape) override;
  int bodyCount() const override { return liveBodies_; }
  int jointCount() const override { return liveJoints_; }

  void setMotionType(BodyId body, MotionType motion) override;
  MotionType motionType(BodyId body) const override;
  void moveKinematic(BodyId body, const Transform& worldFromBody, double dt) override;
  void setTransform(BodyId body, const Transform& worldFromBody) override;
  Transform transform(BodyId body) const override;
  void setLinearVelocity(BodyId body, const Vec3& velocity) override;
  void setAngularVelocity(BodyId body, const Vec3& omega) override;
  Vec3 linearVelocity(BodyId body) const override;
  Vec3 angularVelocity(BodyId body) const override;
  double mass(BodyId body) const override;
  glm::dmat3 worldInertia(BodyId body) const override;
  void applyLinearImpulse(BodyId body, const Vec3& impulse, const Vec3& worldPoint) override;
  void applyAngularImpulse(BodyId body, const Vec3& angularImpulse) override;
  void setCollisionFilter(BodyId body, const CollisionFilter& filter) override;
  CollisionFilter collisionFilter(BodyId body) const override;
  void setEnabled(BodyId body, bool enabled) override;
  bool isEnabled(BodyId body) const override;
  bool isSleeping(BodyId body) const override;
  std::uint64_t userData(BodyId body) const override;
  void wake(BodyId body) override;
  void sleep(BodyId body) override;
  void resetWarmStart(JointId joint) override;
  void resetWarmStarts(std::span<const JointId> joints) override;
  void setJointMotor(JointId joint, const JointMotorSettings& motor) override;
  void setJointFrames(JointId joint, const Transform& bodyAFromJoint,
                      const Transform& bodyBFromJoint) override;
  void setJointLimits(JointId joint, const Vec3& angularLower, const Vec3& angularUpper) override;
  void setPairCollision(BodyId a, BodyId b, bool enabled) override;
  Quat jointRelativeRotation(JointId joint) const override;
  double jointAnchorSeparation(JointId joint) const override;
  JointBreakState jointBreakState(JointId joint) const override;

  void step(double dt, int substeps) override;
  const StepStats& lastStepStats() const override { return stats_; }
  const WorldSettings& settings() const override { return settings_; }
  const BulletSettings& bulletSettings() const { return bullet_; }

  bool capsuleOverlaps(const Transform& worldFromCapsule, double radius, double halfHeight,
                       std::uint32_t mask) const override;
  CastHit castRay(const Vec3& from, const Vec3& to, std::uint32_t mask) const override;
  CastHit castCapsule(const Transform& from, const Vec3& to, double radius, double halfHeight,
                      std::uint32_t mask) const override;
  bool limitDepenetration(BodyId body, double maxSpeed, double maxTime) override;
  bool depenetrationLimited(BodyId body) const override;
  Vec3 takeDepenetrationPush(BodyId body) override;
  void setContactReport(BodyId body, double minImpulse) override;
  std::span<const ContactEvent> contactEvents() const override { return events_; }
  int contactCount(BodyId body) const override;
  /// closestPoints against the static planes alone (planesInWorld_).
  int planePoints(const btConvexShape& convex, const btTransform& worldFromConvex,
                  const btVector3& boundingCentre, btScalar boundingRadius, std::uint32_t mask,
                  std::span<SurfacePoint> out) const;
  void updateGroupsInWorld();
  int closestPoints(BodyId body, const Transform& worldFromBody, double maxDistance, std::uint32_t mask,
                    std::span<SurfacePoint> out) const override;

  BulletObjectCounts objectCounts() const;
  bool joined() const { return ownedWorld_ == nullptr; }
  void injectNonFiniteVelocity(BodyId body);

 private:
  static void preTickCallback(btDynamicsWorld* world, btScalar timeStep);
  static void postTickCallback(btDynamicsWorld* world, btScalar timeStep);
  static void joinedPreTickCallback(btDynamicsWorld* world, btScalar timeStep);   // bullet_join.cpp
  static void joinedPostTickCallback(btDynamicsWorld* world, btScalar timeStep);  // bullet_join.cpp
  void preTick(double h);
  void postTick(double h);

  BodySlot* slotOf(BodyId id);
  const BodySlot* slotOf(BodyId id) const;
  JointSlot* slotOf(JointId id);
  const JointSlot* slotOf(JointId id) const;
  BodyId handleOf(std::uint32_t index) const {
    return BodyId{(bodies_[index].generation << kIndexBits) | index};
  }
  /// The body of this world a Bullet object is, or an invalid handle (a game's own object).
  BodyId bodyOf(const btCollisionObject* object) const;
  /// Handoff layer bits (a filter's mask or layer, a query's mask) as the engine's groups.
  int worldBits(std::uint32_t bits) const { return toGroup(toWorldBits(bits, settings_.layerBits)); }
  void configureSolverInfo();                 // bullet_world.cpp
  void releaseDepenetrationLimits(double h);  // bullet_step.cpp: after every substep
  void leaveGameWorld();                      // bullet_join.cpp: the destructor of a joined world
  void startStep(int substeps);   // bullet_step.cpp: what every step (or external tick) starts with
  void finishStep(int substeps);  // and ends with
  void updateAabbsAfterStep();    // bullet_step.cpp: step()'s last pass (queries see the new bounds)

  btCollisionShape* acquireShape(const ShapeKey& key);  // bullet_shapes.cpp
  void releaseShape(btCollisionShape* shape);           // bullet_shapes.cpp
  CreatedShape* createdOf(ShapeId id);                  // bullet_created_shapes.cpp
  ShapeId addCreatedShape(CreatedShape&& shape);
  void releaseCreated(std::uint32_t index);
  /// A body's shape: `shape` and its CCD radius and sleep reach, from the cache or created.
  struct BodyShape {
    btCollisionShape* shape = nullptr;
    std::uint32_t created = kIndexMask;
    double ccdRadius = 0.0;
    double reach = 0.0;
  };
  Result<BodyId> addBody(const BodyDesc& desc, const BodyShape& shape, const Vec3& inertia);
  void collectContactEvents();  // bullet_contacts.cpp: after every substep
  void finishContactEvents();   // bullet_contacts.cpp: when a step ends
  void applyMotionType(BodySlot& slot, MotionType motion);
  void addToWorld(BodySlot& slot);
  void removeFromWorld(BodySlot& slot);
  void updateJointMembership(JointSlot& joint);
  void wakeJointed(const BodySlot& slot);
  void wakeTouching(const BodySlot& slot);
  void destroyJointAt(std::uint32_t index);
  void updateMotor(JointSlot& joint, double h);  // bullet_constraints.cpp
  void applyLimits(JointSlot& joint, const Vec3& lower, const Vec3& upper);
  void finishKinematicMoves();
  void projectJointAnchors();  // bullet_projection.cpp
  void checkJointBreaks();
  void keepProjectedBodiesOutOfFixedBodies();  // bullet_projection.cpp
  void advanceKinematicMoves();
  void collectStats(int substeps);

  WorldSettings settings_;
  BulletSettings bullet_;
  // An own world owns these (createBulletWorld); a joined one (joinBulletWorld) owns none of them.
  std::unique_ptr<btDefaultCollisionConfiguration> config_;
  std::unique_ptr<SpeculativeDispatcher> ownedDispatcher_;
  std::unique_ptr<btDbvtBroadphase> broadphase_;
  std::unique_ptr<JointWarmStartSolver> ownedSolver_;
  std::vector<ShapeEntry> shapes_;
  std::vector<CreatedShape> created_;
  std::vector<std::uint32_t> freeCreated_;
  std::unique_ptr<ResizableCapsule> queryCapsule_;
  std::unique_ptr<btCollisionObject> queryObject_;
  std::unique_ptr<btDiscreteDynamicsWorld> ownedWorld_;
  // The world in use, its dispatcher and (an own world only) the warm-starting solver.
  btDiscreteDynamicsWorld* world_ = nullptr;
  btDispatcher* dispatcher_ = nullptr;
  JointWarmStartSolver* solver_ = nullptr;
  // A joined world: the game's tick callbacks (chained from ours) and whether it holds objects
  // the adapter does not know (always, once joined: queries cannot take the planes-only path).
  btInternalTickCallback gamePreTick_ = nullptr;
  btInternalTickCallback gamePostTick_ = nullptr;
  bool foreignObjects_ = false;
  // Contact events: the reported bodies (slots, ascending) and the events of the last step.
  std::vector<std::uint32_t> reported_;
  std::vector<ContactEvent> events_;
  std::vector<double> eventPeaks_;  // per event: its largest substep impulse

  std::vector<BodySlot> bodies_;
  // The slots given a kinematic move since the last step ended (moveKinematic), in call order,
  // possibly repeated or no longer pending (checked against BodySlot::movePending): the step's
  // per-substep passes over moving bodies touch these instead of every slot. Sorted ascending
  // before the end-of-step pass, so the broadphase sees the bodies in slot order as before.
  // Reserved for every slot (addBody): no allocation in a step.
  std::vector<std::uint32_t> moving_;
  std::uint32_t warmResetPass_ = 0;  // resetWarmStarts calls so far
  // closestPoints: the static planes in Bullet's world (slot indices, in the order added) and,
  // per collision-group bit, how many other bodies are in it (and the bits with one or more, with
  // two or more of them: updateGroupsInWorld()).
  std::vector<std::uint32_t> planesInWorld_;
  int othersInWorld_[32] = {};
  std::uint32_t groupsWithOne_ = 0;
  std::uint32_t groupsWithTwo_ = 0;
  std::vector<std::uint32_t> freeBodies_;
  int liveBodies_ = 0;
  std::vector<JointSlot> joints_;
  std::vector<std::uint32_t> freeJoints_;
  int liveJoints_ = 0;
  std::vector<std::uint32_t> breakableJoints_;  // slots with a finite break force or torque

  StepStats stats_;
  int droppedEvents_ = 0;  // contact events not delivered in the current step
  // dt / substeps of the running step(), in double: what the tick callbacks hand on, not Bullet's
  // timeStep (a btScalar, float in a single-precision build).
  double substepLength_ = 0.0;
  bool externalTick_ = false;  // a joined world's tick the game's own stepSimulation runs
  bool stepping_ = false;
  int substepIndex_ = 0;
  int substepCount_ = 0;
  std::uint32_t steps_ = 0;  // startStep calls so far (BodySlot::aabbStep)
};

}  // namespace handoff::bullet_detail
