// handoff::PhysicsWorld on Bullet 3 (double precision): btDiscreteDynamicsWorld, btDbvtBroadphase,
// btSequentialImpulseConstraintSolver, btGeneric6DofSpring2Constraint joints.
//
// Decisions worth knowing:
// - Joints are built with Bullet's body A = our body B (frames swapped), so that the constraint's
//   Euler angles (RO_XYZ) are exactly handoff::jointAngles(qRel) with qRel = inverse(qA_J) * qB_J.
//   In the natural order Bullet's angles are those of inverse(qRel) (B turning by +t reads -t).
// - A step of n substeps is n calls of stepSimulation(h, 0, h) (Bullet's variable-step mode:
//   exactly one internal step of h each). The fixed-step accumulator of stepSimulation(dt, n, h)
//   may take n - 1 or n + 1 substeps when dt / h rounds below n, and carries time over.
// - Kinematic moves: Bullet derives a kinematic body's velocity in saveKinematicState() from its
//   interpolation transform at the start of every stepSimulation call. We keep that transform
//   equal to the world transform (so Bullet derives zero), give a moving body its move's velocity
//   before every substep (contacts and joint rows read it) and advance its pose by the substep's
//   fraction of the move after every substep; after step() it is exactly at the target.
// - Bullet's sleep timer threshold is the process-wide gDeactivationTime;
//   btCollisionObject::setDeactivationTime() sets a body's accumulated timer, not a threshold.
//   WorldSettings::sleepTime is honoured per world by rescaling each awake body's timer after
//   every substep (the timer advances h * gDeactivationTime / sleepTime), so no global is written.
// - The rest of the adapter is in the files named at the top of bullet_parts.h, each with its
//   own decisions: collision, shapes, constraints and motors, the anchor projection.
#include "handoff/physics_bullet.h"

#include "physics_bullet/bullet_internal.h"
#include "physics_bullet/bullet_parts.h"

#include <BulletCollision/CollisionDispatch/btSimulationIslandManager.h>
#include <btBulletCollisionCommon.h>
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace handoff {
namespace bullet_detail {
namespace {

// Tuning (measured by tests/physics_bullet; see the report).

/// ERP of the locked linear axes of a joint (anchor coincidence) per substep. With the world's
/// joint ERP (0.2 by default) a pendulum at 60 Hz x 2 drifts 3 mm and loses 6 % of its energy;
/// 0.8 gives 0.8 mm and 1.8 %. No CFM: the anchor rows are rigid.
constexpr double kLinearStopErp = 0.8;

int toGroup(std::uint32_t bits) { return static_cast<int>(bits); }

/// Bullet's damping d is the fraction of velocity lost per second: v *= (1 - d)^dt. Ours is a rate
/// c [1/s] with v *= exp(-c dt), so d = 1 - exp(-c).
double toBulletDamping(double rate) { return std::clamp(1.0 - std::exp(-rate), 0.0, 1.0); }

bool finite(double v) { return std::isfinite(v); }

std::string fmt(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::string fmt(const Vec3& v) {
  std::ostringstream s;
  s << "(" << v.x << ", " << v.y << ", " << v.z << ")";
  return s.str();
}

}  // namespace

// btDiscreteDynamicsWorld solving every simulation island on its own, with its manifolds and
// constraints in a canonical order (by the adapter's slot indices, which a body keeps for its
// life). Bullet sorts them by island only (an unstable quicksort over the whole world) and
// batches islands, so whatever happened to one character (a contact more, bodies removed and
// added back) reordered another's rows and changed its results in the last bits, which chaotic
// ragdoll motion grows to centimetres. With this order a character's results depend on its own
// island only (issue 9: a fault in one character leaves the others bit for bit unchanged).
class IslandOrderedWorld final : public btDiscreteDynamicsWorld {
 public:
  IslandOrderedWorld(btDispatcher* dispatcher, btBroadphaseInterface* broadphase, btConstraintSolver* solver,
                     btCollisionConfiguration* config, bool ordered)
      : btDiscreteDynamicsWorld(dispatcher, broadphase, solver, config), ordered_(ordered) {}

  /// Releases the CCD's predictive manifolds that hold `body`. Bullet makes them at every
  /// internal step and releases them only at the next one (after the pre-tick callback), and
  /// removeRigidBody leaves them: a body destroyed between steps stayed referenced by one, read
  /// by the next pre-tick's manifold refresh after it was freed.
  void forgetPredictiveContacts(const btCollisionObject* body) {
    for (int i = m_predictiveManifolds.size() - 1; i >= 0; --i) {
      btPersistentManifold* m = m_predictiveManifolds[i];
      if (m->getBody0() != body && m->getBody1() != body) continue;
      m_dispatcher1->releaseManifold(m);
      m_predictiveManifolds.swap(i, m_predictiveManifolds.size() - 1);
      m_predictiveManifolds.pop_back();
    }
  }

  void solveConstraints(btContactSolverInfo& info) override {
    if (!ordered_) {  // WorldSettings::islandOrderedSolve off: Bullet's own batching and order
      btDiscreteDynamicsWorld::solveConstraints(info);
      return;
    }
    sorted_.clear();
    for (int i = 0; i < m_constraints.size(); ++i) {
      if (m_constraints[i]->isEnabled()) sorted_.push_back(m_constraints[i]);  // broken joints are not
    }
    std::sort(sorted_.begin(), sorted_.end(), [](const btTypedConstraint* a, const btTypedConstraint* b) {
      const int ia = islandOf(*a), ib = islandOf(*b);
      return ia != ib ? ia < ib : a->getUserConstraintId() < b->getUserConstraintId();
    });
    Callback callback(*this, info);
    m_constraintSolver->prepareSolve(getCollisionWorld()->getNumCollisionObjects(),
                                     getCollisionWorld()->getDispatcher()->getNumManifolds());
    m_islandManager->buildAndProcessIslands(getCollisionWorld()->getDispatcher(), getCollisionWorld(),
                                            &callback);
    m_constraintSolver->allSolved(info, m_debugDrawer);
  }

 private:
  static int islandOf(const btTypedConstraint& c) {
    const int a = c.getRigidBodyA().getIslandTag();
    return a >= 0 ? a : c.getRigidBodyB().getIslandTag();
  }
  // Orders constraints by island alone, for finding one island's run in the sorted list.
  struct IslandLess {
    bool operator()(const btTypedConstraint* c, int island) const { return islandOf(*c) < island; }
    bool operator()(int island, const btTypedConstraint* c) const { return island < islandOf(*c); }
  };
  static bool objectBefore(const btCollisionObject* a, const btCollisionObject* b) {
    return a->getUserIndex() < b->getUserIndex();
  }

  struct Callback final : btSimulationIslandManager::IslandCallback {
    Callback(IslandOrderedWorld& world, btContactSolverInfo& info) : world_(world), info_(info) {}
    void processIsland(btCollisionObject** bodies, int numBodies, btPersistentManifold** manifolds,
                       int numManifolds, int islandId) override {
      std::vector<btTypedConstraint*>& all = world_.sorted_;
      btTypedConstraint** first = all.empty() ? nullptr : all.data();
      int count = static_cast<int>(all.size());
      if (islandId >= 0) {  // this island's constraints: one contiguous run after the sort
        const auto [begin, end] = std::equal_range(all.begin(), all.end(), islandId, IslandLess{});
        first = begin == end ? nullptr : &*begin;
        count = static_cast<int>(end - begin);
        std::sort(bodies, bodies + numBodies, objectBefore);
        std::sort(manifolds, manifolds + numManifolds,
                  [](const btPersistentManifold* a, const btPersistentManifold* b) {
                    const int a0 = std::min(a->getBody0()->getUserIndex(), a->getBody1()->getUserIndex());
                    const int a1 = std::max(a->getBody0()->getUserIndex(), a->getBody1()->getUserIndex());
                    const int b0 = std::min(b->getBody0()->getUserIndex(), b->getBody1()->getUserIndex());
                    const int b1 = std::max(b->getBody0()->getUserIndex(), b->getBody1()->getUserIndex());
                    return a0 != b0 ? a0 < b0 : a1 < b1;
                  });
      }
      world_.m_constraintSolver->solveGroup(bodies, numBodies, manifolds, numManifolds, first, count, info_,
                                            world_.m_debugDrawer, world_.getDispatcher());
    }
    IslandOrderedWorld& world_;
    btContactSolverInfo& info_;
  };

  bool ordered_;
  std::vector<btTypedConstraint*> sorted_;
};

BulletWorld::BulletWorld(const WorldSettings& settings) : settings_(settings) {
  // Sanitise: the settings() getter reports what is in use.
  if (!isFinite(settings_.gravity)) settings_.gravity = Vec3{0.0, -9.81, 0.0};
  settings_.solverIterations = std::max(1, settings_.solverIterations);
  settings_.jointIterationFactor = std::max(1, settings_.jointIterationFactor);
  if (!finite(settings_.jointErp)) settings_.jointErp = 0.2;
  settings_.jointErp = std::clamp(settings_.jointErp, 0.0, 1.0);
  if (!finite(settings_.sleepLinearSpeed) || settings_.sleepLinearSpeed < 0.0)
    settings_.sleepLinearSpeed = 0.03;
  if (!finite(settings_.sleepTime) || settings_.sleepTime <= 0.0) settings_.sleepTime = 0.5;
  if (!(settings_.worldHalfExtent > 0.0)) settings_.worldHalfExtent = 2000.0;

  config_ = std::make_unique<btDefaultCollisionConfiguration>();
  dispatcher_ = std::make_unique<SpeculativeDispatcher>(config_.get());
  broadphase_ = std::make_unique<btDbvtBroadphase>();
  solver_ = std::make_unique<JointWarmStartSolver>();
  solver_->enabled = settings_.warmStartJoints;
  queryCapsule_ = std::make_unique<ResizableCapsule>();
  queryObject_ = std::make_unique<btCollisionObject>();
  queryObject_->setCollisionShape(queryCapsule_.get());
  world_ = std::make_unique<IslandOrderedWorld>(dispatcher_.get(), broadphase_.get(), solver_.get(),
                                                config_.get(), settings_.islandOrderedSolve);
  world_->setGravity(toBt(settings_.gravity));
  // Sleeping and static bodies keep their AABBs; teleports update them explicitly.
  world_->setForceUpdateAllAabbs(false);
  btContactSolverInfo& info = world_->getSolverInfo();
  // Bullet solves contacts only in the first m_numIterations iterations; the joint rows' extra
  // iterations (WorldSettings::jointIterationFactor) come after them, so the joints have the
  // last word. WorldSettings::contactsIterateWithJoints gives contacts the joints' count.
  info.m_numIterations = settings_.contactsIterateWithJoints
                             ? settings_.jointIterationFactor * settings_.solverIterations
                             : settings_.solverIterations;
  info.m_erp = settings_.jointErp;  // Baumgarte of joint rows without their own ERP
  world_->setInternalTickCallback(&BulletWorld::preTickCallback, this, true);
  world_->setInternalTickCallback(&BulletWorld::postTickCallback, this, false);
}

BulletWorld::~BulletWorld() {
  // Constraints reference bodies: destroy them first, then the bodies, then (members) the world,
  // solver, broadphase, dispatcher and configuration in that order.
  for (std::uint32_t i = 0; i < joints_.size(); ++i) {
    if (joints_[i].constraint) destroyJointAt(i);
  }
  for (BodySlot& slot : bodies_) {
    if (!slot.body) continue;
    if (slot.enabled) world_->removeRigidBody(slot.body.get());
    slot.body.reset();
  }
}

// --- Handles -------------------------------------------------------------------------------------

BodySlot* BulletWorld::slotOf(BodyId id) {
  return const_cast<BodySlot*>(static_cast<const BulletWorld*>(this)->slotOf(id));
}

const BodySlot* BulletWorld::slotOf(BodyId id) const {
  if (!id.valid()) return nullptr;
  const std::uint32_t index = id.value & kIndexMask;
  const std::uint32_t generation = id.value >> kIndexBits;
  if (index >= bodies_.size()) return nullptr;
  const BodySlot& slot = bodies_[index];
  if (!slot.body || slot.generation != generation) return nullptr;
  return &slot;
}

JointSlot* BulletWorld::slotOf(JointId id) {
  return const_cast<JointSlot*>(static_cast<const BulletWorld*>(this)->slotOf(id));
}

const JointSlot* BulletWorld::slotOf(JointId id) const {
  if (!id.valid()) return nullptr;
  const std::uint32_t index = id.value & kIndexMask;
  const std::uint32_t generation = id.value >> kIndexBits;
  if (index >= joints_.size()) return nullptr;
  const JointSlot& slot = joints_[index];
  if (!slot.constraint || slot.generation != generation) return nullptr;
  return &slot;
}

// Invalid handles in [step-safe] calls: assert in debug builds, ignored in release builds.
#define HANDOFF_BODY_OR_RETURN(var, id, ...)          \
  auto* var = slotOf(id);                             \
  assert(var != nullptr && "invalid or dead BodyId"); \
  if (var == nullptr) return __VA_ARGS__
#define HANDOFF_JOINT_OR_RETURN(var, id, ...)          \
  auto* var = slotOf(id);                              \
  assert(var != nullptr && "invalid or dead JointId"); \
  if (var == nullptr) return __VA_ARGS__

// --- Bodies ---------------------------------------------------------------------------------------

Result<BodyId> BulletWorld::createBody(const BodyDesc& desc) {
  const ShapeDesc& s = desc.shape;
  ShapeKey key;
  switch (s.type) {
    case ShapeType::Sphere:
      if (!(finite(s.radius) && s.radius > 0.0))
        return Error{"createBody: shape.radius must be finite and > 0 (got " + fmt(s.radius) + ")"};
      key.kind = ShapeKey::Kind::Sphere;
      key.v[0] = s.radius;
      break;
    case ShapeType::Capsule:
      if (!(finite(s.radius) && s.radius > 0.0))
        return Error{"createBody: shape.radius must be finite and > 0 (got " + fmt(s.radius) + ")"};
      if (!(finite(s.halfHeight) && s.halfHeight >= 0.0))
        return Error{"createBody: shape.halfHeight must be finite and >= 0 (got " + fmt(s.halfHeight) + ")"};
      key.kind = ShapeKey::Kind::Capsule;
      key.v[0] = s.radius;
      key.v[1] = s.halfHeight;
      break;
    case ShapeType::Box:
      if (!(isFinite(s.halfExtents) && s.halfExtents.x > 0.0 && s.halfExtents.y > 0.0 &&
            s.halfExtents.z > 0.0))
        return Error{"createBody: shape.halfExtents must be finite and > 0 (got " + fmt(s.halfExtents) + ")"};
      key.kind = ShapeKey::Kind::Box;
      key.v[0] = s.halfExtents.x;
      key.v[1] = s.halfExtents.y;
      key.v[2] = s.halfExtents.z;
      break;
    case ShapeType::None:
    default:
      return Error{"createBody: shape.type must be Sphere, Capsule or Box"};
  }
  const bool movable = desc.motion != MotionType::Static;
  if (movable && !(finite(desc.mass) && desc.mass > 0.0)) {
    return Error{"createBody: mass must be finite and > 0 for a dynamic or kinematic body (got " +
                 fmt(desc.mass) + ")"};
  }
  const Vec3& I = desc.inertia;
  const bool inertiaZero = I.x == 0.0 && I.y == 0.0 && I.z == 0.0;
  if (!inertiaZero && !(isFinite(I) && I.x > 0.0 && I.y > 0.0 && I.z > 0.0)) {
    return Error{"createBody: inertia must be all zero (computed from the shape) or finite and > 0 (got " +
                 fmt(I) + ")"};
  }
  if (!isFinite(desc.worldFromBody)) return Error{"createBody: worldFromBody must be finite"};
  if (glm::dot(desc.worldFromBody.rotation, desc.worldFromBody.rotation) < 1e-12)
    return Error{"createBody: worldFromBody.rotation must be a unit quaternion (got zero)"};
  if (!(finite(desc.friction) && desc.friction >= 0.0))
    return Error{"createBody: friction must be finite and >= 0 (got " + fmt(desc.friction) + ")"};
  if (!(finite(desc.rollingFriction) && desc.rollingFriction >= 0.0))
    return Error{"createBody: rollingFriction must be finite and >= 0 (got " + fmt(desc.rollingFriction) +
                 ")"};
  if (!(finite(desc.restitution) && desc.restitution >= 0.0 && desc.restitution <= 1.0))
    return Error{"createBody: restitution must be in [0, 1] (got " + fmt(desc.restitution) + ")"};
  if (!(finite(desc.linearDamping) && desc.linearDamping >= 0.0))
    return Error{"createBody: linearDamping must be finite and >= 0 (got " + fmt(desc.linearDamping) + ")"};
  if (!(finite(desc.angularDamping) && desc.angularDamping >= 0.0))
    return Error{"createBody: angularDamping must be finite and >= 0 (got " + fmt(desc.angularDamping) + ")"};

  const Vec3 inertia = !movable ? Vec3{0.0} : (inertiaZero ? shapePrincipalInertia(s, desc.mass) : I);
  return addBody(desc, key, inertia);
}

Result<BodyId> BulletWorld::addBody(const BodyDesc& desc, const ShapeKey& key, const Vec3& inertia) {
  std::uint32_t index = 0;
  if (!freeBodies_.empty()) {
    index = freeBodies_.back();
    freeBodies_.pop_back();
  } else {
    if (bodies_.size() >= kIndexMask) return Error{"createBody: too many bodies in one world"};
    index = static_cast<std::uint32_t>(bodies_.size());
    bodies_.emplace_back();
  }
  BodySlot& slot = bodies_[index];
  slot.shape = acquireShape(key);
  slot.shape->getBoundingSphere(slot.boundingCentre, slot.boundingRadius);
  slot.breakingThreshold =
      std::max(gContactBreakingThreshold, slot.shape->getContactBreakingThreshold(gContactBreakingThreshold));
  slot.motion = desc.motion;
  slot.mass = desc.motion == MotionType::Static ? 0.0 : desc.mass;
  slot.inertia = toBt(inertia);
  slot.filter = desc.filter;
  slot.enabled = true;
  slot.userData = desc.userData;
  slot.joints.clear();
  slot.movePending = false;

  btRigidBody::btRigidBodyConstructionInfo ci(
      desc.motion == MotionType::Dynamic ? slot.mass : 0.0, nullptr, slot.shape,
      desc.motion == MotionType::Dynamic ? slot.inertia : btVector3(0, 0, 0));
  ci.m_startWorldTransform = toBt(desc.worldFromBody);
  ci.m_friction = desc.friction;
  ci.m_restitution = desc.restitution;
  ci.m_rollingFriction = desc.rollingFriction;
  ci.m_linearDamping = toBulletDamping(desc.linearDamping);
  ci.m_angularDamping = toBulletDamping(desc.angularDamping);
  // Jolt's point velocity rule (WorldSettings::sleepLinearSpeed): the shape's farthest point
  // moves at |omega| times its bounding radius.
  const double reach = shapeBoundingRadius(desc.shape);
  ci.m_linearSleepingThreshold = settings_.sleepLinearSpeed;
  ci.m_angularSleepingThreshold = settings_.sleepLinearSpeed / (reach > 0.0 ? reach : 1.0);
  slot.body = std::make_unique<btRigidBody>(ci);
  btRigidBody& body = *slot.body;
  body.setUserIndex(static_cast<int>(index));
  body.setGravity(toBt(settings_.gravity));  // also for bodies that start kinematic
  if (desc.motion == MotionType::Static) {
    body.setCollisionFlags(body.getCollisionFlags() | btCollisionObject::CF_STATIC_OBJECT);
  } else {
    applyMotionType(slot, desc.motion);
  }
  if (desc.motion != MotionType::Static && desc.enableContinuousCollision) {
    double radius = 0.0;
    switch (key.kind) {
      case ShapeKey::Kind::Sphere:
      case ShapeKey::Kind::Capsule:
        radius = key.v[0];
        break;
      case ShapeKey::Kind::Box:
        radius = std::min({key.v[0], key.v[1], key.v[2]});
        break;
      case ShapeKey::Kind::Plane:
        break;
    }
    // Sweep when a substep moves the body by more than half its thinnest radius; the swept
    // sphere fits inside the shape so it never reports hits the shape would not have.
    body.setCcdMotionThreshold(0.5 * radius);
    body.setCcdSweptSphereRadius(0.8 * radius);
  }
  addToWorld(slot);
  ++liveBodies_;
  return handleOf(index);
}

void BulletWorld::applyMotionType(BodySlot& slot, MotionType motion) {
  btRigidBody& body = *slot.body;
  if (motion == MotionType::Kinematic) {
    // Zero inverse mass and inertia: a kinematic body with mass makes joints explode (bullet3 #334).
    body.setMassProps(0.0, btVector3(0.0, 0.0, 0.0));  // also sets CF_STATIC_OBJECT: clear it below
    body.setCollisionFlags((body.getCollisionFlags() & ~btCollisionObject::CF_STATIC_OBJECT) |
                           btCollisionObject::CF_KINEMATIC_OBJECT);
    body.updateInertiaTensor();
    body.forceActivationState(DISABLE_DEACTIVATION);
  } else {
    body.setCollisionFlags(body.getCollisionFlags() &
                           ~(btCollisionObject::CF_STATIC_OBJECT | btCollisionObject::CF_KINEMATIC_OBJECT));
    body.setMassProps(slot.mass, slot.inertia);
    body.setGravity(toBt(settings_.gravity));
    body.updateInertiaTensor();
    body.forceActivationState(ACTIVE_TAG);
    body.activate(true);
    slot.movePending = false;
  }
  slot.motion = motion;
}

void BulletWorld::addToWorld(BodySlot& slot) {
  slot.worldGroup = toGroup(slot.filter.layer);
  world_->addRigidBody(slot.body.get(), slot.worldGroup, toGroup(slot.filter.mask));
  if (slot.shape->getShapeType() == STATIC_PLANE_PROXYTYPE) {
    planesInWorld_.push_back(static_cast<std::uint32_t>(&slot - bodies_.data()));
  } else {
    for (int bit = 0; bit < 32; ++bit) othersInWorld_[bit] += (slot.worldGroup >> bit) & 1;
    updateGroupsInWorld();
  }
}

void BulletWorld::removeFromWorld(BodySlot& slot) {
  world_->removeRigidBody(slot.body.get());
  if (slot.shape->getShapeType() == STATIC_PLANE_PROXYTYPE) {
    const auto index = static_cast<std::uint32_t>(&slot - bodies_.data());
    planesInWorld_.erase(std::find(planesInWorld_.begin(), planesInWorld_.end(), index));
  } else {
    for (int bit = 0; bit < 32; ++bit) othersInWorld_[bit] -= (slot.worldGroup >> bit) & 1;
    updateGroupsInWorld();
  }
}

void BulletWorld::updateGroupsInWorld() {
  groupsWithOne_ = groupsWithTwo_ = 0;
  for (int bit = 0; bit < 32; ++bit) {
    if (othersInWorld_[bit] >= 1) groupsWithOne_ |= 1u << bit;
    if (othersInWorld_[bit] >= 2) groupsWithTwo_ |= 1u << bit;
  }
}

BodyId BulletWorld::addGroundPlane(const Vec3& normal, double offset, double friction) {
  const double len = glm::length(normal);
  if (!(isFinite(normal) && len > 1e-12 && finite(offset) && finite(friction) && friction >= 0.0)) {
    assert(false && "addGroundPlane: invalid normal, offset or friction");
    return BodyId{};
  }
  const Vec3 n = normal / len;
  ShapeKey key;
  key.kind = ShapeKey::Kind::Plane;
  key.v[0] = n.x;
  key.v[1] = n.y;
  key.v[2] = n.z;
  key.v[3] = offset;
  BodyDesc desc;
  desc.motion = MotionType::Static;
  desc.mass = 0.0;
  desc.filter = CollisionFilter{layers::kStatic, layers::kAll};
  desc.friction = friction;
  desc.enableContinuousCollision = false;
  Result<BodyId> id = addBody(desc, key, Vec3{0.0});
  return id ? *id : BodyId{};
}

BodyId BulletWorld::addStaticBox(const Transform& worldFromBox, const Vec3& halfExtents, double friction) {
  BodyDesc desc;
  desc.shape.type = ShapeType::Box;
  desc.shape.halfExtents = halfExtents;
  desc.motion = MotionType::Static;
  desc.worldFromBody = worldFromBox;
  desc.filter = CollisionFilter{layers::kStatic, layers::kAll};
  desc.friction = friction;
  desc.enableContinuousCollision = false;
  Result<BodyId> id = createBody(desc);
  assert(id.ok() && "addStaticBox: invalid transform, half extents or friction");
  return id ? *id : BodyId{};
}

void BulletWorld::destroyBody(BodyId id) {
  BodySlot* slot = slotOf(id);
  assert(slot != nullptr && "destroyBody: invalid or dead BodyId");
  if (slot == nullptr) return;
  // Joints attached to the body go with it (a constraint must not outlive its bodies).
  while (!slot->joints.empty()) destroyJointAt(slot->joints.back());
  wakeTouching(*slot);
  if (slot->enabled) removeFromWorld(*slot);
  static_cast<IslandOrderedWorld&>(*world_).forgetPredictiveContacts(slot->body.get());
  slot->body.reset();
  releaseShape(slot->shape);
  slot->shape = nullptr;
  slot->movePending = false;
  slot->generation = (slot->generation + 1u) & kGenerationMask;
  const std::uint32_t index = id.value & kIndexMask;
  freeBodies_.push_back(index);
  --liveBodies_;
}

// --- Joints ---------------------------------------------------------------------------------------

Result<JointId> BulletWorld::createJoint(const JointDesc& desc) {
  BodySlot* a = slotOf(desc.bodyA);
  BodySlot* b = slotOf(desc.bodyB);
  if (a == nullptr) return Error{"createJoint: bodyA is not a live body of this world"};
  if (b == nullptr) return Error{"createJoint: bodyB is not a live body of this world"};
  if (a == b) return Error{"createJoint: bodyA and bodyB are the same body"};
  if (!isFinite(desc.bodyAFromJoint)) return Error{"createJoint: bodyAFromJoint must be finite"};
  if (!isFinite(desc.bodyBFromJoint)) return Error{"createJoint: bodyBFromJoint must be finite"};
  if (glm::dot(desc.bodyAFromJoint.rotation, desc.bodyAFromJoint.rotation) < 1e-12)
    return Error{"createJoint: bodyAFromJoint.rotation must be a unit quaternion (got zero)"};
  if (glm::dot(desc.bodyBFromJoint.rotation, desc.bodyBFromJoint.rotation) < 1e-12)
    return Error{"createJoint: bodyBFromJoint.rotation must be a unit quaternion (got zero)"};
  if (std::isnan(desc.breakForce) || !(desc.breakForce > 0.0))
    return Error{"createJoint: breakForce must be > 0 (infinite: never breaks), got " + fmt(desc.breakForce)};
  if (std::isnan(desc.breakTorque) || !(desc.breakTorque > 0.0))
    return Error{"createJoint: breakTorque must be > 0 (infinite: never breaks), got " +
                 fmt(desc.breakTorque)};
  static const char* const kAxis[3] = {"x", "y", "z"};
  Vec3 lower = desc.angularLower;
  Vec3 upper = desc.angularUpper;
  for (int i = 0; i < 3; ++i) {
    if (!finite(lower[i]))
      return Error{std::string("createJoint: angularLower.") + kAxis[i] +
                   " must be finite (lower > upper frees it)"};
    if (!finite(upper[i]))
      return Error{std::string("createJoint: angularUpper.") + kAxis[i] +
                   " must be finite (lower > upper frees it)"};
    if (lower[i] > upper[i]) {
      // Free. Canonical values: Bullet wraps limits into [-pi, pi], which could turn a free pair
      // such as (3.5, 3.0) into a limited one.
      lower[i] = 1.0;
      upper[i] = -1.0;
      continue;
    }
    const double bound = i == 1 ? 0.5 * kPi : kPi;
    if (lower[i] < -bound || upper[i] > bound) {
      return Error{std::string("createJoint: angular limits about ") + kAxis[i] + " must lie in [" +
                   fmt(-bound) + ", " + fmt(bound) + "] (got [" + fmt(lower[i]) + ", " + fmt(upper[i]) +
                   "])" + (i == 1 ? ": the middle Euler axis is singular at +-pi/2" : "")};
    }
  }

  std::uint32_t index = 0;
  if (!freeJoints_.empty()) {
    index = freeJoints_.back();
    freeJoints_.pop_back();
  } else {
    if (joints_.size() >= kIndexMask) return Error{"createJoint: too many joints in one world"};
    index = static_cast<std::uint32_t>(joints_.size());
    joints_.emplace_back();
  }
  JointSlot& joint = joints_[index];
  joint.bodyA = desc.bodyA.value & kIndexMask;
  joint.bodyB = desc.bodyB.value & kIndexMask;
  joint.aFromJoint = desc.bodyAFromJoint;
  joint.bFromJoint = desc.bodyBFromJoint;
  joint.collideConnected = desc.collideConnected;
  joint.inWorld = false;
  joint.motor = JointMotorSettings{};
  joint.motorTargetEuler = jointAngles(joint.motor.target);
  joint.motorTargetAngles = Vec3{0.0};
  joint.breakForce = desc.breakForce;
  joint.breakTorque = desc.breakTorque;
  joint.breakState = JointBreakState{};
  joint.feedback.reset();

  // Bullet's A is our B (see the top of this file): the constraint's angles are jointAngles(qRel).
  // Anchor impulses at the anchors' midpoint (CentredAnchorConstraint): the joint solver never
  // changes the bodies' total angular momentum.
  joint.constraint = std::make_unique<CentredAnchorConstraint>(*b->body, *a->body, toBt(desc.bodyBFromJoint),
                                                               toBt(desc.bodyAFromJoint), RO_XYZ);
  btGeneric6DofSpring2Constraint& c = *joint.constraint;
  c.setUserConstraintId(static_cast<int>(index));
  solver_->prepare(index);
  c.setLinearLowerLimit(btVector3(0.0, 0.0, 0.0));
  c.setLinearUpperLimit(btVector3(0.0, 0.0, 0.0));
  applyLimits(joint, lower, upper);
  for (int axis = 0; axis < 3; ++axis) {
    c.setParam(BT_CONSTRAINT_STOP_ERP, kLinearStopErp, axis);
    c.setParam(BT_CONSTRAINT_STOP_CFM, 0.0, axis);
    c.setParam(BT_CONSTRAINT_STOP_CFM, 0.0, axis + 3);
    c.setParam(BT_CONSTRAINT_ERP, 1.0, axis + 3);  // motor ERP: see updateMotor()
  }
  c.setOverrideNumSolverIterations(settings_.jointIterationFactor * settings_.solverIterations);
  if (finite(desc.breakForce) || finite(desc.breakTorque)) {
    // Measured by the adapter, not by Bullet's breaking impulse threshold: that one threshold is
    // compared with each row's scalar impulse on its own (a force along a diagonal is split over
    // three rows) and is the same for linear and angular rows, so it can separate neither the
    // force's magnitude nor force from torque.
    joint.feedback = std::make_unique<btJointFeedback>();
    c.setJointFeedback(joint.feedback.get());
    breakableJoints_.push_back(index);
  }

  if (!desc.collideConnected) {
    // Collision exclusion is kept on the bodies independently of the constraint's presence in the
    // world (setEnabled removes and re-adds constraints). Drop an existing pair so no stale
    // manifold between the two bodies is solved.
    a->body->addConstraintRef(&c);
    b->body->addConstraintRef(&c);
    btBroadphaseProxy* pa = a->body->getBroadphaseHandle();
    btBroadphaseProxy* pb = b->body->getBroadphaseHandle();
    if (pa != nullptr && pb != nullptr) {
      world_->getPairCache()->removeOverlappingPair(pa, pb, dispatcher_.get());
    }
  }
  a->joints.push_back(index);
  b->joints.push_back(index);
  ++liveJoints_;
  updateJointMembership(joint);
  a->body->activate();
  b->body->activate();
  return JointId{(joint.generation << kIndexBits) | index};
}

void BulletWorld::updateJointMembership(JointSlot& joint) {
  const bool want = bodies_[joint.bodyA].enabled && bodies_[joint.bodyB].enabled;
  if (want == joint.inWorld) return;
  if (want) {
    world_->addConstraint(joint.constraint.get(), false);  // collision exclusion handled by us
    solver_->forget(static_cast<std::uint32_t>(joint.constraint->getUserConstraintId()));  // starts cold
  } else {
    world_->removeConstraint(joint.constraint.get());
  }
  joint.inWorld = want;
}

void BulletWorld::destroyJointAt(std::uint32_t index) {
  JointSlot& joint = joints_[index];
  btGeneric6DofSpring2Constraint* c = joint.constraint.get();
  if (joint.inWorld) world_->removeConstraint(c);
  joint.inWorld = false;
  BodySlot& a = bodies_[joint.bodyA];
  BodySlot& b = bodies_[joint.bodyB];
  if (!joint.collideConnected) {
    a.body->removeConstraintRef(c);
    b.body->removeConstraintRef(c);
  }
  for (BodySlot* s : {&a, &b}) {
    auto it = std::find(s->joints.begin(), s->joints.end(), index);
    if (it != s->joints.end()) s->joints.erase(it);
  }
  if (joint.feedback) {
    breakableJoints_.erase(std::find(breakableJoints_.begin(), breakableJoints_.end(), index));
    joint.feedback.reset();
  }
  joint.constraint.reset();
  joint.generation = (joint.generation + 1u) & kGenerationMask;
  freeJoints_.push_back(index);
  --liveJoints_;
  a.body->activate();
  b.body->activate();
}

void BulletWorld::destroyJoint(JointId id) {
  JointSlot* joint = slotOf(id);
  assert(joint != nullptr && "destroyJoint: invalid or dead JointId");
  if (joint == nullptr) return;
  destroyJointAt(id.value & kIndexMask);
}

void BulletWorld::wakeJointed(const BodySlot& slot) {
  for (std::uint32_t j : slot.joints) {
    const JointSlot& joint = joints_[j];
    bodies_[joint.bodyA].body->activate();
    bodies_[joint.bodyB].body->activate();
  }
}

/// Wakes the bodies in contact with `slot` (Bullet does not when a support disappears or moves).
void BulletWorld::wakeTouching(const BodySlot& slot) {
  if (!slot.enabled) return;
  const btCollisionObject* self = slot.body.get();
  const int numManifolds = dispatcher_->getNumManifolds();
  for (int m = 0; m < numManifolds; ++m) {
    btPersistentManifold* manifold = dispatcher_->getManifoldByIndexInternal(m);
    const btCollisionObject* o0 = manifold->getBody0();
    const btCollisionObject* o1 = manifold->getBody1();
    if (o0 == self) o1->activate();
    if (o1 == self) o0->activate();
  }
}

// --- Per-step state -------------------------------------------------------------------------------

void BulletWorld::setMotionType(BodyId id, MotionType motion) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  // Static bodies have no dynamic mass, and Bullet keeps static bodies out of its list of moving
  // bodies: only kinematic <-> dynamic switches are supported.
  assert(slot->motion != MotionType::Static && motion != MotionType::Static &&
         "setMotionType switches between kinematic and dynamic only");
  if (slot->motion == MotionType::Static || motion == MotionType::Static) return;
  if (slot->motion == motion) return;
  // Velocities are kept: btRigidBody::setMassProps does not touch them.
  applyMotionType(*slot, motion);
  wakeJointed(*slot);
}

MotionType BulletWorld::motionType(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, MotionType::Static);
  return slot->motion;
}

void BulletWorld::moveKinematic(BodyId id, const Transform& worldFromBody, double dt) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  assert(slot->motion == MotionType::Kinematic && "moveKinematic on a body that is not kinematic");
  assert(isFinite(worldFromBody) && dt > 0.0 && "moveKinematic: non-finite target or dt <= 0");
  if (slot->motion != MotionType::Kinematic || !isFinite(worldFromBody) || !(dt > 0.0)) return;
  btRigidBody& body = *slot->body;
  const Transform start = fromBt(body.getWorldTransform());
  Transform target = worldFromBody;
  target.rotation = alignHemisphere(normalizeOrIdentity(target.rotation), start.rotation);
  slot->moveStart = start;
  slot->moveTarget = target;
  slot->moveRotation = toRotationVector(target.rotation * glm::conjugate(start.rotation));
  slot->moveLinearVelocity = (target.translation - start.translation) / dt;
  slot->moveAngularVelocity = handoff::angularVelocity(start.rotation, target.rotation, dt).omega;
  // Called from a substep listener during step(): the move covers the remaining substeps.
  slot->moveFirstSubstep = stepping_ ? substepIndex_ : 0;
  slot->movePending = true;
  body.setLinearVelocity(toBt(slot->moveLinearVelocity));
  body.setAngularVelocity(toBt(slot->moveAngularVelocity));
  // A sleeping island jointed to a kinematic body is not woken by Bullet when the body moves.
  wakeJointed(*slot);
}

void BulletWorld::setTransform(BodyId id, const Transform& worldFromBody) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  assert(isFinite(worldFromBody) && "setTransform: non-finite transform");
  if (!isFinite(worldFromBody)) return;
  btRigidBody& body = *slot->body;
  wakeTouching(*slot);
  const btTransform xf = toBt(worldFromBody);
  body.setCenterOfMassTransform(xf);  // also updates the world inertia tensor
  body.setInterpolationWorldTransform(xf);
  slot->movePending = false;
  if (slot->enabled) world_->updateSingleAabb(&body);
  if (slot->motion == MotionType::Dynamic) body.activate(true);
  wakeJointed(*slot);
}

Transform BulletWorld::transform(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, Transform{});
  return fromBt(slot->body->getWorldTransform());
}

void BulletWorld::setLinearVelocity(BodyId id, const Vec3& velocity) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->motion == MotionType::Static || !isFinite(velocity)) return;
  slot->body->setLinearVelocity(toBt(velocity));
  if (slot->motion == MotionType::Dynamic) slot->body->activate(true);
}

void BulletWorld::setAngularVelocity(BodyId id, const Vec3& omega) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->motion == MotionType::Static || !isFinite(omega)) return;
  slot->body->setAngularVelocity(toBt(omega));
  if (slot->motion == MotionType::Dynamic) slot->body->activate(true);
}

Vec3 BulletWorld::linearVelocity(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, Vec3{0.0});
  return fromBt(slot->body->getLinearVelocity());
}

Vec3 BulletWorld::angularVelocity(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, Vec3{0.0});
  return fromBt(slot->body->getAngularVelocity());
}

double BulletWorld::mass(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, 0.0);
  return slot->mass;
}

glm::dmat3 BulletWorld::worldInertia(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, glm::dmat3{0.0});
  const glm::dmat3 r = glm::mat3_cast(fromBt(slot->body->getWorldTransform().getRotation()));
  glm::dmat3 d{0.0};
  d[0][0] = slot->inertia.x();
  d[1][1] = slot->inertia.y();
  d[2][2] = slot->inertia.z();
  return r * d * glm::transpose(r);
}

void BulletWorld::applyLinearImpulse(BodyId id, const Vec3& impulse, const Vec3& worldPoint) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->motion != MotionType::Dynamic || !isFinite(impulse) || !isFinite(worldPoint)) return;
  btRigidBody& body = *slot->body;
  body.activate(true);
  body.applyImpulse(toBt(impulse), toBt(worldPoint) - body.getCenterOfMassPosition());
}

void BulletWorld::applyAngularImpulse(BodyId id, const Vec3& angularImpulse) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->motion != MotionType::Dynamic || !isFinite(angularImpulse)) return;
  slot->body->activate(true);
  slot->body->applyTorqueImpulse(toBt(angularImpulse));
}

void BulletWorld::setCollisionFilter(BodyId id, const CollisionFilter& filter) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->filter == filter) return;
  slot->filter = filter;
  if (!slot->enabled) return;  // applied when enabled again
  // The broadphase only pairs proxies when they move, so editing the proxy's group/mask in place
  // would miss pairs between resting bodies that the new filter allows. Re-inserting the body
  // removes its pairs (and their manifolds) and pairs it afresh under the new filter.
  wakeTouching(*slot);
  removeFromWorld(*slot);
  addToWorld(*slot);
  if (slot->motion == MotionType::Dynamic) slot->body->activate(true);
}

CollisionFilter BulletWorld::collisionFilter(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, CollisionFilter{});
  return slot->filter;
}

void BulletWorld::setEnabled(BodyId id, bool enabled) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->enabled == enabled) return;
  if (!enabled) wakeTouching(*slot);  // while its manifolds still exist
  slot->enabled = enabled;
  if (enabled) {
    addToWorld(*slot);
    if (slot->motion == MotionType::Dynamic) slot->body->activate(true);
  } else {
    slot->movePending = false;
  }
  // A joint takes part in the simulation while both of its bodies do.
  for (std::uint32_t j : slot->joints) updateJointMembership(joints_[j]);
  if (!enabled) removeFromWorld(*slot);
  wakeJointed(*slot);
}

bool BulletWorld::isEnabled(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, false);
  return slot->enabled;
}

bool BulletWorld::isSleeping(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, false);
  return slot->motion == MotionType::Dynamic && slot->body->getActivationState() == ISLAND_SLEEPING;
}

void BulletWorld::wake(BodyId id) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->motion == MotionType::Dynamic) slot->body->activate(true);
}

void BulletWorld::sleep(BodyId id) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->motion != MotionType::Dynamic || !slot->enabled) return;
  btRigidBody& body = *slot->body;
  body.setLinearVelocity(btVector3(0, 0, 0));
  body.setAngularVelocity(btVector3(0, 0, 0));
  // ISLAND_SLEEPING is kept by Bullet's island manager while every body of the island sleeps;
  // an awake body whose bounds overlap it joins the island and wakes it (WANTS_DEACTIVATION).
  body.forceActivationState(ISLAND_SLEEPING);
}

void BulletWorld::resetWarmStart(JointId id) { resetWarmStarts(std::span<const JointId>(&id, 1)); }

void BulletWorld::resetWarmStarts(std::span<const JointId> ids) {
  // The joints' own impulses, then one pass over the manifolds: the contacts of every body at one
  // of the joints.
  const std::uint32_t pass = ++warmResetPass_;
  bool any = false;
  for (JointId id : ids) {
    JointSlot* joint = slotOf(id);
    assert(joint != nullptr && "invalid or dead JointId");
    if (joint == nullptr) continue;
    joint->constraint->internalSetAppliedImpulse(0.0);
    solver_->forget(id.value & kIndexMask);
    bodies_[joint->bodyA].warmResetPass = bodies_[joint->bodyB].warmResetPass = pass;
    any = true;
  }
  if (!any) return;
  auto marked = [&](const btCollisionObject* object) {
    const int index = object->getUserIndex();
    return index >= 0 && static_cast<size_t>(index) < bodies_.size() &&
           bodies_[static_cast<size_t>(index)].body.get() == object &&
           bodies_[static_cast<size_t>(index)].warmResetPass == pass;
  };
  const int numManifolds = dispatcher_->getNumManifolds();
  for (int m = 0; m < numManifolds; ++m) {
    btPersistentManifold* manifold = dispatcher_->getManifoldByIndexInternal(m);
    if (manifold->getNumContacts() == 0) continue;
    if (!marked(manifold->getBody0()) && !marked(manifold->getBody1())) continue;
    for (int p = 0; p < manifold->getNumContacts(); ++p) {
      btManifoldPoint& point = manifold->getContactPoint(p);
      point.m_appliedImpulse = 0.0;
      point.m_appliedImpulseLateral1 = 0.0;
      point.m_appliedImpulseLateral2 = 0.0;
      point.m_prevRHS = 0.0;
    }
  }
}

void BulletWorld::setJointMotor(JointId id, const JointMotorSettings& motor) {
  HANDOFF_JOINT_OR_RETURN(joint, id);
  JointMotorSettings m = motor;
  for (int i = 0; i < 3; ++i) {
    if (!(finite(m.stiffness[i]) && m.stiffness[i] >= 0.0)) m.stiffness[i] = 0.0;
    if (!(finite(m.damping[i]) && m.damping[i] >= 0.0)) m.damping[i] = 0.0;
  }
  if (!(m.maxTorque > 0.0)) m.enabled = false;  // also NaN
  if (!isFinite(m.target)) m.target = Quat{1.0, 0.0, 0.0, 0.0};
  if (!isFinite(m.targetRates)) m.targetRates = Vec3{0.0};
  m.target = normalizeOrIdentity(m.target);
  joint->motor = m;
  joint->motorTargetEuler = jointAngles(m.target);
  applyLimits(*joint, joint->lower, joint->upper);  // clamps the motor's target
  btGeneric6DofSpring2Constraint& c = *joint->constraint;
  for (int i = 0; i < 3; ++i) {
    c.enableSpring(3 + i, false);
    c.setServo(3 + i, false);
    if (!m.enabled) c.enableMotor(3 + i, false);
  }
  bodies_[joint->bodyA].body->activate();
  bodies_[joint->bodyB].body->activate();
}

void BulletWorld::setJointFrames(JointId id, const Transform& bodyAFromJoint,
                                 const Transform& bodyBFromJoint) {
  HANDOFF_JOINT_OR_RETURN(joint, id);
  const bool valid = isFinite(bodyAFromJoint) && isFinite(bodyBFromJoint) &&
                     glm::dot(bodyAFromJoint.rotation, bodyAFromJoint.rotation) > 1e-12 &&
                     glm::dot(bodyBFromJoint.rotation, bodyBFromJoint.rotation) > 1e-12;
  assert(valid && "setJointFrames: non-finite or zero-rotation frame");
  if (!valid) return;
  joint->aFromJoint = bodyAFromJoint;
  joint->bFromJoint = bodyBFromJoint;
  // Bullet's A is our B. Written in place rather than with setFrames(), which also recomputes the
  // joint's cached transforms and angles (atan2s, most of the call's cost): the solver recomputes
  // them from the frames in every getInfo1 before getInfo2 reads them, and this adapter calls
  // calculateTransforms() before it reads them (the motor rows), so nothing reads a stale cache.
  joint->constraint->getFrameOffsetA() = toBt(bodyBFromJoint);
  joint->constraint->getFrameOffsetB() = toBt(bodyAFromJoint);
  bodies_[joint->bodyA].body->activate();
  bodies_[joint->bodyB].body->activate();
}

void BulletWorld::setPairCollision(BodyId idA, BodyId idB, bool enabled) {
  BodySlot* a = slotOf(idA);
  BodySlot* b = slotOf(idB);
  assert(a != nullptr && b != nullptr && "setPairCollision: not a live body");
  if (a == nullptr || b == nullptr || a == b) return;
  // Bullet keeps a per-object ignore list checked in the dispatcher's needsCollision; joints
  // that exclude their bodies use the same list (addConstraintRef). Only pairs that still collide
  // are added, and callers only switch back on pairs they switched off.
  if (!enabled) {
    if (a->body->checkCollideWith(b->body.get())) {
      a->body->setIgnoreCollisionCheck(b->body.get(), true);
      b->body->setIgnoreCollisionCheck(a->body.get(), true);
    }
    btBroadphaseProxy* pa = a->body->getBroadphaseHandle();
    btBroadphaseProxy* pb = b->body->getBroadphaseHandle();
    if (pa != nullptr && pb != nullptr)
      world_->getPairCache()->removeOverlappingPair(pa, pb, dispatcher_.get());
  } else {
    // A joint between them that excludes collision keeps doing so.
    for (std::uint32_t j : a->joints) {
      const JointSlot& joint = joints_[j];
      const BodySlot* other = &bodies_[joint.bodyA] == a ? &bodies_[joint.bodyB] : &bodies_[joint.bodyA];
      if (other == b && !joint.collideConnected) return;
    }
    a->body->setIgnoreCollisionCheck(b->body.get(), false);
    b->body->setIgnoreCollisionCheck(a->body.get(), false);
    // The broadphase pairs proxies only when one moves: re-pair resting bodies that overlap now.
    btBroadphaseProxy* pa = a->body->getBroadphaseHandle();
    btBroadphaseProxy* pb = b->body->getBroadphaseHandle();
    if (pa != nullptr && pb != nullptr &&
        TestAabbAgainstAabb2(pa->m_aabbMin, pa->m_aabbMax, pb->m_aabbMin, pb->m_aabbMax) &&
        world_->getPairCache()->findPair(pa, pb) == nullptr) {
      world_->getPairCache()->addOverlappingPair(pa, pb);
    }
    a->body->activate();
    b->body->activate();
  }
}

void BulletWorld::setJointLimits(JointId id, const Vec3& angularLower, const Vec3& angularUpper) {
  HANDOFF_JOINT_OR_RETURN(joint, id);
  const bool valid = isFinite(angularLower) && isFinite(angularUpper);
  assert(valid && "setJointLimits: non-finite limit");
  if (!valid) return;
  Vec3 lower = angularLower;
  Vec3 upper = angularUpper;
  for (int i = 0; i < 3; ++i) {
    if (lower[i] > upper[i]) {
      lower[i] = 1.0;  // free, canonical (see createJoint)
      upper[i] = -1.0;
      continue;
    }
    const double bound = i == 1 ? 0.5 * kPi : kPi;
    lower[i] = std::clamp(lower[i], -bound, bound);
    upper[i] = std::clamp(upper[i], -bound, bound);
  }
  applyLimits(*joint, lower, upper);
  bodies_[joint->bodyA].body->activate();
  bodies_[joint->bodyB].body->activate();
}

void BulletWorld::applyLimits(JointSlot& joint, const Vec3& lower, const Vec3& upper) {
  joint.lower = lower;
  joint.upper = upper;
  joint.constraint->setAngularLowerLimit(toBt(lower));
  joint.constraint->setAngularUpperLimit(toBt(upper));
  // Open axes clamp the motor's target to the limits; locked axes take none (no motor row).
  Vec3 target = joint.motorTargetEuler;
  for (int i = 0; i < 3; ++i) {
    if (lower[i] <= upper[i]) target[i] = std::clamp(target[i], lower[i], upper[i]);
  }
  joint.motorTargetAngles = target;
}

Quat BulletWorld::jointRelativeRotation(JointId id) const {
  HANDOFF_JOINT_OR_RETURN(joint, id, Quat{1.0, 0.0, 0.0, 0.0});
  const Quat qa =
      fromBt(bodies_[joint->bodyA].body->getWorldTransform().getRotation()) * joint->aFromJoint.rotation;
  const Quat qb =
      fromBt(bodies_[joint->bodyB].body->getWorldTransform().getRotation()) * joint->bFromJoint.rotation;
  return normalizeOrIdentity(glm::conjugate(qa) * qb);
}

double BulletWorld::jointAnchorSeparation(JointId id) const {
  HANDOFF_JOINT_OR_RETURN(joint, id, 0.0);
  const Transform wa = fromBt(bodies_[joint->bodyA].body->getWorldTransform());
  const Transform wb = fromBt(bodies_[joint->bodyB].body->getWorldTransform());
  return glm::length(wa.transformPoint(joint->aFromJoint.translation) -
                     wb.transformPoint(joint->bFromJoint.translation));
}

JointBreakState BulletWorld::jointBreakState(JointId id) const {
  HANDOFF_JOINT_OR_RETURN(joint, id, JointBreakState{});
  return joint->breakState;
}

// --- Stepping -------------------------------------------------------------------------------------

void BulletWorld::preTickCallback(btDynamicsWorld* world, btScalar timeStep) {
  static_cast<BulletWorld*>(world->getWorldUserInfo())->preTick(timeStep);
}

void BulletWorld::postTickCallback(btDynamicsWorld* world, btScalar timeStep) {
  static_cast<BulletWorld*>(world->getWorldUserInfo())->postTick(timeStep);
}

void BulletWorld::preTick(double h) {
  dispatcher_->refresh(h);
  // Kinematic moves: Bullet's saveKinematicState() (at the start of every stepSimulation call)
  // zeroed the velocity of kinematic bodies (our interpolation transform equals the world
  // transform); give moving ones their move's velocity again so contacts and joints see it. Their
  // pose advances in postTick().
  for (BodySlot& slot : bodies_) {
    if (!slot.movePending || !slot.body) continue;
    btRigidBody& body = *slot.body;
    body.setLinearVelocity(toBt(slot.moveLinearVelocity));
    body.setAngularVelocity(toBt(slot.moveAngularVelocity));
    body.setInterpolationLinearVelocity(toBt(slot.moveLinearVelocity));
    body.setInterpolationAngularVelocity(toBt(slot.moveAngularVelocity));
  }
  runSubstepListeners(h);
  for (JointSlot& joint : joints_) {
    if (joint.constraint && joint.inWorld && joint.motor.enabled && !joint.breakState.broken)
      updateMotor(joint, h);
  }
}

void BulletWorld::advanceKinematicMoves() {
  // At the end of substep k a moving kinematic body is at the fraction (k + 1 - k0) / (n - k0) of
  // its move (k0: the substep the move was requested in), where the bodies integrated with its
  // velocity expect it.
  const int k = substepIndex_;
  for (BodySlot& slot : bodies_) {
    if (!slot.movePending || !slot.body) continue;
    const int k0 = slot.moveFirstSubstep;
    const int remaining = substepCount_ - k0;
    const btTransform xf =
        k + 1 >= substepCount_
            ? toBt(slot.moveTarget)
            : toBt(Transform{
                  fromRotationVector(slot.moveRotation * (static_cast<double>(k + 1 - k0) / remaining)) *
                      slot.moveStart.rotation,
                  slot.moveStart.translation + (slot.moveTarget.translation - slot.moveStart.translation) *
                                                   (static_cast<double>(k + 1 - k0) / remaining)});
    slot.body->setWorldTransform(xf);
    slot.body->setInterpolationWorldTransform(xf);
  }
}

void BulletWorld::checkJointBreaks() {
  // Bullet's feedback (zeroed when the joint's rows are built, summed over its rows when the solve
  // finishes): the force and the torque about the centre of mass of Bullet's body A (our B) of
  // every row, impulse / substep. The anchor rows act at the anchors' midpoint
  // (CentredAnchorConstraint), so the torque about the anchor is the total minus that force's
  // moment. The constraint's calculated transforms are still those of the solve (the bodies have
  // integrated since).
  for (const std::uint32_t index : breakableJoints_) {
    JointSlot& joint = joints_[index];
    if (!joint.inWorld || joint.breakState.broken) continue;
    const btRigidBody& a = *bodies_[joint.bodyA].body;
    const btRigidBody& b = *bodies_[joint.bodyB].body;
    if (!a.isActive() && !b.isActive()) continue;  // not solved this substep: nothing new measured
    btGeneric6DofSpring2Constraint& c = *joint.constraint;
    const btTransform& anchorA = c.getCalculatedTransformA();  // Bullet's A: our body B
    const btTransform& anchorB = c.getCalculatedTransformB();
    const btVector3 centre = (anchorA * c.getFrameOffsetA().inverse()).getOrigin();
    const btVector3 mid = 0.5 * (anchorA.getOrigin() + anchorB.getOrigin());
    const btVector3 force = joint.feedback->m_appliedForceBodyA;
    const btVector3 torque = joint.feedback->m_appliedTorqueBodyA - (mid - centre).cross(force);
    joint.breakState.force = force.length();
    joint.breakState.torque = torque.length();
    if (!(joint.breakState.force > joint.breakForce) && !(joint.breakState.torque > joint.breakTorque))
      continue;
    joint.breakState.broken = true;
    joint.breakState.substep = substepIndex_;
    c.setEnabled(false);
    solver_->forget(index);
    bodies_[joint.bodyA].body->activate();
    bodies_[joint.bodyB].body->activate();
  }
}

void BulletWorld::postTick(double h) {
  advanceKinematicMoves();
  checkJointBreaks();
  projectJointAnchors();
  // Per-world sleep time (see the top of this file): while a body stays under the sleep speeds,
  // Bullet adds h to its timer and puts it to sleep once the timer exceeds gDeactivationTime.
  // Rescale the increment so that happens after settings_.sleepTime.
  const double global = gDeactivationTime;
  if (global > 0.0) {
    const double extra = h * (global / settings_.sleepTime - 1.0);
    for (BodySlot& slot : bodies_) {
      if (!slot.body || !slot.enabled || slot.motion != MotionType::Dynamic) continue;
      btRigidBody& body = *slot.body;
      const int state = body.getActivationState();
      if ((state == ACTIVE_TAG || state == WANTS_DEACTIVATION) && body.getDeactivationTime() > 0.0) {
        body.setDeactivationTime(std::max(0.0, body.getDeactivationTime() + extra));
      }
    }
  }
  ++substepIndex_;
}

void BulletWorld::finishKinematicMoves() {
  for (BodySlot& slot : bodies_) {
    if (!slot.movePending || !slot.body) continue;
    btRigidBody& body = *slot.body;
    const btTransform xf = toBt(slot.moveTarget);
    body.setWorldTransform(xf);
    body.setInterpolationWorldTransform(xf);
    body.setLinearVelocity(toBt(slot.moveLinearVelocity));
    body.setAngularVelocity(toBt(slot.moveAngularVelocity));
    if (slot.enabled) world_->updateSingleAabb(&body);
    slot.movePending = false;
  }
}

void BulletWorld::step(double dt, int substeps) {
  assert(dt > 0.0 && finite(dt) && substeps >= 1 && "step: dt must be > 0 and substeps >= 1");
  if (!(dt > 0.0) || !finite(dt) || substeps < 1) return;
  const double h = dt / substeps;
  stepping_ = true;
  substepIndex_ = 0;
  substepCount_ = substeps;
  for (const std::uint32_t index : breakableJoints_) joints_[index].breakState.substep = -1;
  for (int i = 0; i < substeps; ++i) {
    // maxSubSteps = 0: Bullet's variable-step mode, exactly one internal step of h.
    world_->stepSimulation(h, 0, h);
  }
  stepping_ = false;
  finishKinematicMoves();
  collectStats(substeps);
  // Bullet refreshes AABBs at the start of the next step's collision detection; queries between
  // steps must see where this step left the bodies.
  world_->updateAabbs();
}

void BulletWorld::collectStats(int substeps) {
  StepStats s;
  const double extent = settings_.worldHalfExtent;
  for (std::uint32_t i = 0; i < bodies_.size(); ++i) {
    BodySlot& slot = bodies_[i];
    if (!slot.body || !slot.enabled) continue;
    if (slot.motion == MotionType::Dynamic) {
      const btRigidBody& body = *slot.body;
      const Vec3 p = fromBt(body.getCenterOfMassPosition());
      const bool inside = isFinite(p) && std::abs(p.x) <= extent && std::abs(p.y) <= extent &&
                          std::abs(p.z) <= extent && isFinite(fromBt(body.getLinearVelocity())) &&
                          isFinite(fromBt(body.getAngularVelocity()));
      if (!inside) {
        setEnabled(handleOf(i), false);
        ++s.bodiesLeftWorld;
        continue;
      }
      ++s.dynamicBodies;
      if (body.getActivationState() == ISLAND_SLEEPING) {
        ++s.sleepingBodies;
      } else {
        ++s.activeBodies;
      }
    } else if (slot.motion == MotionType::Kinematic) {
      ++s.kinematicBodies;
    }
  }
  const int numManifolds = dispatcher_->getNumManifolds();
  for (int m = 0; m < numManifolds; ++m)
    s.contactPoints += dispatcher_->getManifoldByIndexInternal(m)->getNumContacts();
  s.solverIterations = settings_.solverIterations;
  s.substeps = substeps;
  stats_ = s;
}

// --- Queries --------------------------------------------------------------------------------------

bool BulletWorld::capsuleOverlaps(const Transform& worldFromCapsule, double radius, double halfHeight,
                                  std::uint32_t mask) const {
  if (!isFinite(worldFromCapsule) || !(radius > 0.0) || !(halfHeight >= 0.0)) return false;
  struct Callback final : btCollisionWorld::ContactResultCallback {
    bool hit = false;
    bool needsCollision(btBroadphaseProxy* proxy) const override {
      return !hit && btCollisionWorld::ContactResultCallback::needsCollision(proxy);
    }
    btScalar addSingleResult(btManifoldPoint& cp, const btCollisionObjectWrapper*, int, int,
                             const btCollisionObjectWrapper*, int, int) override {
      if (cp.getDistance() <= 0.0) hit = true;
      return 0.0;
    }
  } callback;
  callback.m_collisionFilterGroup = -1;  // only the query's mask filters
  callback.m_collisionFilterMask = toGroup(mask);
  queryCapsule_->resize(radius, halfHeight);
  queryObject_->setWorldTransform(toBt(worldFromCapsule));
  world_->contactTest(queryObject_.get(), callback);
  return callback.hit;
}

double BulletWorld::sweepCapsule(const Transform& from, const Vec3& to, double radius, double halfHeight,
                                 std::uint32_t mask) const {
  if (!isFinite(from) || !isFinite(to) || !(radius > 0.0) || !(halfHeight >= 0.0)) return 1.0;
  const btTransform start = toBt(from);
  btTransform end = start;
  end.setOrigin(toBt(to));
  btCollisionWorld::ClosestConvexResultCallback callback(start.getOrigin(), end.getOrigin());
  callback.m_collisionFilterGroup = -1;
  callback.m_collisionFilterMask = toGroup(mask);
  queryCapsule_->resize(radius, halfHeight);
  world_->convexSweepTest(queryCapsule_.get(), start, end, callback);
  return callback.hasHit() ? std::clamp(static_cast<double>(callback.m_closestHitFraction), 0.0, 1.0) : 1.0;
}

double BulletWorld::rayCast(const Vec3& from, const Vec3& to, std::uint32_t mask, Vec3* hitNormal) const {
  if (!isFinite(from) || !isFinite(to)) return 1.0;
  btCollisionWorld::ClosestRayResultCallback callback(toBt(from), toBt(to));
  callback.m_collisionFilterGroup = -1;
  callback.m_collisionFilterMask = toGroup(mask);
  world_->rayTest(toBt(from), toBt(to), callback);
  if (!callback.hasHit()) return 1.0;
  if (hitNormal != nullptr) {
    const Vec3 n = fromBt(callback.m_hitNormalWorld);
    const double len = glm::length(n);
    *hitNormal = len > 0.0 ? n / len : Vec3{0.0};
  }
  return std::clamp(static_cast<double>(callback.m_closestHitFraction), 0.0, 1.0);
}

int BulletWorld::contactCount(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, 0);
  if (!slot->enabled) return 0;
  const btCollisionObject* object = slot->body.get();
  int count = 0;
  const int numManifolds = dispatcher_->getNumManifolds();
  for (int m = 0; m < numManifolds; ++m) {
    const btPersistentManifold* manifold = dispatcher_->getManifoldByIndexInternal(m);
    if (manifold->getBody0() == object || manifold->getBody1() == object) count += manifold->getNumContacts();
  }
  return count;
}

int BulletWorld::closestPoints(BodyId id, const Transform& worldFromBody, double maxDistance,
                               std::uint32_t mask, std::span<SurfacePoint> out) const {
  HANDOFF_BODY_OR_RETURN(slot, id, 0);
  if (out.empty() || !isFinite(worldFromBody) || !(maxDistance >= 0.0) || !finite(maxDistance)) return 0;
  // Only static planes to ask (the usual ground): what contactTest would report, without its
  // broadphase query and algorithm per plane.
  const btCollisionShape& shape = *slot->body->getCollisionShape();
  // A group bit has others when it holds two bodies, or one that is not this body.
  const std::uint32_t selfGroups = slot->enabled ? static_cast<std::uint32_t>(slot->worldGroup) : 0u;
  const bool othersToAsk = (mask & (groupsWithTwo_ | (groupsWithOne_ & ~selfGroups))) != 0;
  if (!othersToAsk && btBroadphaseProxy::isConvex(shape.getShapeType())) {
    return planePoints(static_cast<const btConvexShape&>(shape), toBt(worldFromBody), slot->boundingCentre,
                       slot->boundingRadius, mask, out);
  }
  // A probe with the body's shape at the asked pose; contactTest reports points up to
  // m_closestDistanceThreshold apart among the pairs whose bounding boxes overlap (an infinite
  // plane always does; a box or step must be within the shape's collision margin).
  btCollisionObject probe;
  probe.setCollisionShape(slot->body->getCollisionShape());
  probe.setWorldTransform(toBt(worldFromBody));
  struct Callback final : btCollisionWorld::ContactResultCallback {
    const btCollisionObject* self = nullptr;
    const btCollisionObject* probe = nullptr;
    std::span<SurfacePoint> out;
    int count = 0;
    btVector3 sphereCentre{0.0, 0.0, 0.0};
    btScalar sphereReach = 0.0;  // bounding radius + the farthest distance the plane test reports
    bool needsCollision(btBroadphaseProxy* proxy) const override {
      if (proxy->m_clientObject == self || !btCollisionWorld::ContactResultCallback::needsCollision(proxy))
        return false;
      // An infinite plane overlaps every box: the bounding sphere rejects the far ones (a head
      // above the floor) before the narrow phase, which could report no point for them either.
      const auto* object = static_cast<const btCollisionObject*>(proxy->m_clientObject);
      if (object->getCollisionShape()->getShapeType() != STATIC_PLANE_PROXYTYPE) return true;
      const auto* plane = static_cast<const btStaticPlaneShape*>(object->getCollisionShape());
      const btTransform& worldFromPlane = object->getWorldTransform();
      const btVector3 normal = worldFromPlane.getBasis() * plane->getPlaneNormal();
      const btScalar height =
          normal.dot(sphereCentre - worldFromPlane.getOrigin()) - plane->getPlaneConstant();
      return height <= sphereReach;
    }
    btScalar addSingleResult(btManifoldPoint& cp, const btCollisionObjectWrapper* w0, int, int,
                             const btCollisionObjectWrapper*, int, int) override {
      if (count >= static_cast<int>(out.size())) return 0.0;
      const bool probeIsA = w0->getCollisionObject() == probe;
      SurfacePoint& p = out[static_cast<size_t>(count++)];
      p.point = fromBt(probeIsA ? cp.m_positionWorldOnA : cp.m_positionWorldOnB);
      p.normal = fromBt(probeIsA ? cp.m_normalWorldOnB : -cp.m_normalWorldOnB);
      p.distance = cp.getDistance();
      return 0.0;
    }
  } callback;
  callback.self = slot->body.get();
  callback.probe = &probe;
  callback.out = out;
  callback.m_collisionFilterGroup = -1;  // only the query's mask filters
  callback.m_collisionFilterMask = toGroup(mask);
  callback.m_closestDistanceThreshold = maxDistance;
  // The plane test reports points up to the manifold's breaking threshold (beyond maxDistance).
  callback.sphereCentre = probe.getWorldTransform() * slot->boundingCentre;
  callback.sphereReach = slot->boundingRadius + maxDistance + slot->breakingThreshold + 1e-6;
  world_->contactTest(&probe, callback);
  return callback.count;
}

int BulletWorld::planePoints(const btConvexShape& convex, const btTransform& worldFromConvex,
                             const btVector3& boundingCentre, btScalar boundingRadius, std::uint32_t mask,
                             std::span<SurfacePoint> out) const {
  // btConvexPlaneCollisionAlgorithm::processCollision for the pair (probe, plane), as contactTest
  // runs it (btSingleContactCallback, the closest-point algorithm, btBridgedManifoldResult): the
  // convex shape's support point toward the plane, reported while it is nearer than the pair's
  // manifold breaking threshold (Bullet 3.24's plane test does not read the query's distance).
  // The probe is no rigid body, so SpeculativeDispatcher widens nothing; with the default
  // collision configuration's perturbation threshold (0) there are no perturbed points.
  // A plane below the shape's bounding sphere by more than the threshold (and rounding) has no
  // point to report: the support point is no nearer than the sphere.
  const btVector3 sphereCentre = worldFromConvex * boundingCentre;
  int count = 0;
  for (const std::uint32_t index : planesInWorld_) {
    const BodySlot& plane = bodies_[index];
    // ContactResultCallback::needsCollision with the query's group -1 and mask.
    if ((plane.worldGroup & toGroup(mask)) == 0 || toGroup(plane.filter.mask) == 0) continue;
    if (count >= static_cast<int>(out.size())) break;
    const auto& planeShape = static_cast<const btStaticPlaneShape&>(*plane.shape);
    const btScalar threshold =
        (dispatcher_->getDispatcherFlags() &
         btCollisionDispatcher::CD_USE_RELATIVE_CONTACT_BREAKING_THRESHOLD)
            ? btMin(contactBreakingThreshold(convex), contactBreakingThreshold(planeShape))
            : gContactBreakingThreshold;
    const btTransform& worldFromPlane = plane.body->getWorldTransform();
    const btVector3& planeNormal = planeShape.getPlaneNormal();
    const btScalar& planeConstant = planeShape.getPlaneConstant();
    const btScalar sphereHeight =
        (worldFromPlane.getBasis() * planeNormal).dot(sphereCentre - worldFromPlane.getOrigin()) -
        planeConstant;
    if (sphereHeight - boundingRadius > threshold + 1e-6) continue;
    btTransform planeInConvex;
    planeInConvex = worldFromConvex.inverse() * worldFromPlane;
    btTransform convexInPlane;
    convexInPlane = worldFromPlane.inverse() * worldFromConvex;
    const btVector3 vtx = convex.localGetSupportingVertex(planeInConvex.getBasis() * -planeNormal);
    const btVector3 vtxInPlane = convexInPlane(vtx);
    const btScalar distance = (planeNormal.dot(vtxInPlane) - planeConstant);
    if (!(distance < threshold)) continue;
    const btVector3 vtxInPlaneProjected = vtxInPlane - distance * planeNormal;
    const btVector3 pointOnPlane = worldFromPlane * vtxInPlaneProjected;
    const btVector3 normalOnPlane = worldFromPlane.getBasis() * planeNormal;
    SurfacePoint& p = out[static_cast<size_t>(count++)];
    p.point = fromBt(pointOnPlane + normalOnPlane * distance);  // btBridgedManifoldResult's point on A
    p.normal = fromBt(normalOnPlane);
    p.distance = distance;
  }
  return count;
}

BulletObjectCounts BulletWorld::objectCounts() const {
  BulletObjectCounts counts;
  counts.collisionObjects = world_->getNumCollisionObjects();
  for (int i = 0; i < counts.collisionObjects; ++i) {
    if (btRigidBody::upcast(world_->getCollisionObjectArray()[i]) != nullptr) ++counts.rigidBodies;
  }
  counts.constraints = world_->getNumConstraints();
  counts.overlappingPairs = broadphase_->getOverlappingPairCache()->getNumOverlappingPairs();
  counts.manifolds = dispatcher_->getNumManifolds();
  counts.shapes = static_cast<int>(
      std::count_if(shapes_.begin(), shapes_.end(), [](const ShapeEntry& e) { return e.refs > 0; }));
  return counts;
}

void BulletWorld::injectNonFiniteVelocity(BodyId id) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  const btScalar nan = std::numeric_limits<btScalar>::quiet_NaN();
  slot->body->setLinearVelocity(btVector3(nan, nan, nan));
}

// --- Test hooks (bullet_internal.h) ---------------------------------------------------------------

void injectNonFiniteVelocity(PhysicsWorld& world, BodyId body) {
  if (auto* bullet = dynamic_cast<BulletWorld*>(&world)) bullet->injectNonFiniteVelocity(body);
}

Vec3 spring2Angles(const Transform& worldFromA, const Transform& aFromJoint, const Transform& worldFromB,
                   const Transform& bFromJoint, bool asBuiltByWorld) {
  btSphereShape sphere(0.1);
  btRigidBody::btRigidBodyConstructionInfo ci(1.0, nullptr, &sphere, btVector3(0.004, 0.004, 0.004));
  ci.m_startWorldTransform = toBt(worldFromA);
  btRigidBody a(ci);
  ci.m_startWorldTransform = toBt(worldFromB);
  btRigidBody b(ci);
  std::unique_ptr<btGeneric6DofSpring2Constraint> c =
      asBuiltByWorld
          ? std::make_unique<btGeneric6DofSpring2Constraint>(b, a, toBt(bFromJoint), toBt(aFromJoint), RO_XYZ)
          : std::make_unique<btGeneric6DofSpring2Constraint>(a, b, toBt(aFromJoint), toBt(bFromJoint),
                                                             RO_XYZ);
  c->calculateTransforms();
  return Vec3{c->getAngle(0), c->getAngle(1), c->getAngle(2)};
}

}  // namespace bullet_detail

std::unique_ptr<PhysicsWorld> createBulletWorld(const WorldSettings& settings) {
  return std::make_unique<bullet_detail::BulletWorld>(settings);
}

BulletObjectCounts bulletObjectCounts(const PhysicsWorld& world) {
  const auto* bullet = dynamic_cast<const bullet_detail::BulletWorld*>(&world);
  return bullet ? bullet->objectCounts() : BulletObjectCounts{};
}

}  // namespace handoff
