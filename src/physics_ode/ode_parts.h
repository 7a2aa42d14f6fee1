// The ODE adapter's parts, shared by the files of src/physics_ode (the only code that includes ODE):
//   ode_world.cpp    OdeWorld: construction, settings, handles, bodies and their per-step state
//   ode_shapes.cpp   geoms of bodies, createShape (meshes, heightfields, compounds)
//   ode_joints.cpp   joints: ball + limit motor + servo motor, frames, limits, angles, breaking
//   ode_step.cpp     stepping: the near callback, kinematic moves, damping, sleeping, events
//   ode_queries.cpp  queries: overlap, casts, contact counts
// The decisions are listed in include/handoff/physics_ode.h.
#pragma once

#include "handoff/physics_ode.h"

#include "physics/adapter_support.h"

#include <ode/ode.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace handoff::ode_detail {

// The handle layout, messages, settings clamping and validation are shared with the Bullet
// adapter (physics/adapter_support.h).
using adapter::fmt;
using adapter::kGenerationMask;
using adapter::kIndexBits;
using adapter::kIndexMask;
using adapter::liveSlot;
using adapter::sanitiseWorldSettings;
inline constexpr int kMaxContactsPerPair = 16;
/// ODE's capsules lie along their Z: Rx(-90 deg) turns Z onto the interface's Y.
inline const Quat kCapsuleTurn{0.70710678118654752440, -0.70710678118654752440, 0.0, 0.0};

inline Vec3 fromOde(const dReal* v) { return Vec3{v[0], v[1], v[2]}; }
inline Quat quatFromOde(const dReal* q) { return Quat{q[0], q[1], q[2], q[3]}; }
inline void toOde(const Quat& q, dQuaternion out) {
  const Quat n = normalizeOrIdentity(q);
  out[0] = n.w;
  out[1] = n.x;
  out[2] = n.y;
  out[3] = n.z;
}
inline bool finite(double v) { return std::isfinite(v); }

/// Makes sure ODE is initialised and this thread has ODE's per-thread collision data.
void ensureOdeThread();

/// One geom of a body and where it sits in the body's frame C (capsules include the Z-to-Y turn).
struct GeomPart {
  dGeomID geom = nullptr;
  Transform bodyFromGeom;
};

struct BodySlot {
  std::uint32_t generation = 0;
  bool alive = false;
  dBodyID body = nullptr;  // null: static (geoms only)
  std::vector<GeomPart> geoms;
  std::uint32_t createdShape = kIndexMask;
  MotionType motion = MotionType::Static;
  double mass = 0.0;
  Vec3 inertia{0.0};  // principal, C
  double friction = 0.8, rollingFriction = 0.0, restitution = 0.0;
  double linearDamping = 0.0, angularDamping = 0.0;
  double boundingRadius = 0.0;
  ShapeDesc shape;                            // the primitive (type None for a made shape or a plane)
  CollisionFilter filter;                     // handoff bits
  std::uint32_t layerBits = 0, maskBits = 0;  // engine bits
  std::uint64_t userData = 0;
  bool enabled = true;
  Transform staticPose;  // static bodies
  // Kinematic move of the next step.
  bool movePending = false;
  Transform moveFrom, moveTo;
  Vec3 moveLinear{0.0}, moveAngular{0.0};
  double reportMinImpulse = -1.0;
  int contacts = 0;                   // contact points of the last substep
  std::vector<std::uint32_t> joints;  // slots of the joints on this body
};

struct JointSlot {
  std::uint32_t generation = 0;
  bool alive = false;
  dJointID ball = nullptr, limits = nullptr, motor = nullptr;
  std::uint32_t a = kIndexMask, b = kIndexMask;  // body slots
  Transform aFromJoint, bFromJoint;
  Vec3 lower{0.0}, upper{0.0};
  bool collideConnected = false;
  double breakForce = std::numeric_limits<double>::infinity();
  double breakTorque = std::numeric_limits<double>::infinity();
  JointMotorSettings motorSettings;
  dJointFeedback feedback[3] = {};
  JointBreakState breakState;
  bool active = true;  // both bodies enabled, one of them dynamic
  bool breakable() const { return std::isfinite(breakForce) || std::isfinite(breakTorque); }
};

/// A made shape (createShape): the data ODE reads is kept here.
struct CreatedShape {
  enum class Kind : std::uint8_t { None, Mesh, Heightfield, Compound } kind = Kind::None;
  std::uint32_t generation = 0;
  int refs = 0;
  bool handleAlive = false;
  std::vector<double> vertices;  // mesh: xyz
  std::vector<dTriIndex> indices;
  dTriMeshDataID mesh = nullptr;
  std::vector<double> heights;
  dHeightfieldDataID heightfield = nullptr;
  std::vector<CompoundChild> children;  // primitives only
  Vec3 lo{0.0}, hi{0.0};                // bounds in the shape's frame
  bool staticOnly() const { return kind == Kind::Mesh || kind == Kind::Heightfield; }
};

/// A contact joint of the current substep whose feedback is read for contact events.
struct ReportedPoint {
  std::uint32_t body1 = kIndexMask, body2 = kIndexMask;  // slots (body2 may be static or none)
  dGeomID geom1 = nullptr, geom2 = nullptr;
  Vec3 point{0.0}, normal{0.0};  // normal from geom2 toward geom1
  double depth = 0.0;
  int feedback = -1;
};

/// Per (body, other) pair over one step.
struct PairEvent {
  std::uint32_t body = kIndexMask, other = kIndexMask;
  const void* otherObject = nullptr;
  double impulse = 0.0;         // over the step
  double substepImpulse = 0.0;  // this substep
  double bestSubstep = -1.0;    // the largest substep impulse so far
  double deepest = -1.0;        // this substep's deepest point
  Vec3 point{0.0}, normal{0.0}, substepPoint{0.0}, substepNormal{0.0};
};

class OdeWorld final : public PhysicsWorld {
 public:
  OdeWorld(const WorldSettings& settings, const OdeSettings& ode);
  ~OdeWorld() override;

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
  int bodyCount() const override { return bodyCount_; }
  int jointCount() const override { return jointCount_; }

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

  bool capsuleOverlaps(const Transform& worldFromCapsule, double radius, double halfHeight,
                       std::uint32_t mask) const override;
  CastHit castRay(const Vec3& from, const Vec3& to, std::uint32_t mask) const override;
  CastHit castCapsule(const Transform& from, const Vec3& to, double radius, double halfHeight,
                      std::uint32_t mask) const override;
  int closestPoints(BodyId body, const Transform& worldFromBody, double maxDistance, std::uint32_t mask,
                    std::span<SurfacePoint> out) const override;
  void setContactReport(BodyId body, double minImpulse) override;
  std::span<const ContactEvent> contactEvents() const override { return events_; }
  int contactCount(BodyId body) const override;

  // --- Shared by the adapter's files ---
  BodySlot* slotOf(BodyId id);
  const BodySlot* slotOf(BodyId id) const;
  JointSlot* slotOf(JointId id);
  const JointSlot* slotOf(JointId id) const;
  BodyId idOf(std::uint32_t index) const { return BodyId{index | (bodies_[index].generation << kIndexBits)}; }
  /// The body slot a geom of this world belongs to (kIndexMask for a query geom).
  static std::uint32_t slotOfGeom(dGeomID geom) {
    const auto tag = reinterpret_cast<std::uintptr_t>(dGeomGetData(geom));
    return tag == 0 ? kIndexMask : static_cast<std::uint32_t>(tag - 1);
  }
  Transform poseOf(const BodySlot& slot) const;
  /// Whether bodies at slots i and j may collide (filters, exclusions, motion).
  bool pairCollides(std::uint32_t i, std::uint32_t j) const;
  bool queryAccepts(dGeomID geom, std::uint32_t worldMask) const;

 private:
  friend struct NearCallback;
  Result<BodyId> addBody(const BodyDesc& desc, std::vector<GeomPart> geoms, std::uint32_t created,
                         const Vec3& inertia, double boundingRadius);
  Result<std::vector<GeomPart>> makeGeoms(const ShapeDesc& shape, std::uint32_t* created, Vec3* lo, Vec3* hi);
  dGeomID makePrimitive(const ShapeDesc& shape, Transform* turn);
  CreatedShape* createdOf(ShapeId id);
  void releaseCreated(std::uint32_t index);
  std::uint32_t newCreatedSlot();
  void placeStaticGeoms(BodySlot& slot);
  void applyFilter(BodySlot& slot);
  void applyMassAndMotion(BodySlot& slot);
  void applySleepSettings(BodySlot& slot);
  void setBodyPose(BodySlot& slot, const Transform& pose);
  void updateJointActive(JointSlot& joint);
  void updateJointRows(JointSlot& joint, double h);
  void measureBreak(JointSlot& joint, double h, int substep);
  void projectAnchors();
  void destroyJointAt(std::uint32_t index);
  void collide(double h);
  void readContactEvents(double h);
  void finishContactEvents();
  void rebuildJointPairs();
  Transform jointFrameA(const JointSlot& joint) const;
  Transform jointFrameB(const JointSlot& joint) const;

 public:
  /// Called from the near callback (ode_step.cpp).
  void addContacts(dGeomID g1, dGeomID g2);

 private:
  WorldSettings settings_;
  OdeSettings ode_;
  dWorldID world_ = nullptr;
  dSpaceID space_ = nullptr;
  dJointGroupID contactGroup_ = nullptr;
  mutable dGeomID queryRay_ = nullptr;
  mutable dGeomID queryCapsule_ = nullptr;
  mutable dGeomID querySphere_ = nullptr;  // closestPoints: the body's shape grown by the distance
  mutable dGeomID queryBox_ = nullptr;
  std::vector<BodySlot> bodies_;
  std::vector<std::uint32_t> freeBodies_;
  std::deque<JointSlot> joints_;  // stable addresses: ODE keeps pointers to the feedback
  std::vector<std::uint32_t> freeJoints_;
  std::vector<CreatedShape> created_;
  std::vector<std::uint32_t> freeCreated_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> jointPairs_;     // sorted (min, max) slots
  std::vector<std::pair<std::uint32_t, std::uint32_t>> excludedPairs_;  // setPairCollision
  int bodyCount_ = 0;
  int jointCount_ = 0;
  int breakableJoints_ = 0;
  StepStats stats_;
  double substepH_ = 1.0 / 60.0;
  int substepIndex_ = 0;
  int contactPoints_ = 0;
  int reportedBodies_ = 0;
  std::vector<dJointFeedback> feedbackPool_;
  int feedbackUsed_ = 0;
  std::vector<ReportedPoint> reported_;
  /// Contact points per colliding pair in the last substep (slot, slot, points): what
  /// setPairCollision(false) takes off both bodies' counts at once.
  struct PairContacts {
    std::uint32_t a, b;
    int points;
  };
  std::vector<PairContacts> pairContacts_;
  std::vector<PairEvent> pairEvents_;
  std::vector<ContactEvent> events_;
};

}  // namespace handoff::ode_detail
