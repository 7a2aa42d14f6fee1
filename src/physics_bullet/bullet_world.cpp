// handoff::PhysicsWorld on Bullet 3 (single or double precision: bullet_precision.cpp):
// btDiscreteDynamicsWorld, btDbvtBroadphase, btSequentialImpulseConstraintSolver,
// btGeneric6DofSpring2Constraint joints.
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
#include "physics_bullet/bullet_island_order.h"
#include "physics_bullet/bullet_parts.h"

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

namespace handoff {
namespace bullet_detail {

BulletWorld::BulletWorld(const WorldSettings& settings, const BulletSettings& bullet)
    : settings_(sanitiseWorldSettings(settings)), bullet_(bullet) {
  config_ = std::make_unique<btDefaultCollisionConfiguration>();
  ownedDispatcher_ = std::make_unique<SpeculativeDispatcher>(config_.get());
  broadphase_ = std::make_unique<btDbvtBroadphase>();
  ownedSolver_ = std::make_unique<JointWarmStartSolver>();
  ownedSolver_->enabled = bullet_.warmStartJoints;
  queryCapsule_ = std::make_unique<ResizableCapsule>();
  queryObject_ = std::make_unique<btCollisionObject>();
  queryObject_->setCollisionShape(queryCapsule_.get());
  ownedWorld_ =
      std::make_unique<IslandOrderedWorld>(ownedDispatcher_.get(), broadphase_.get(), ownedSolver_.get(),
                                           config_.get(), settings_.islandOrderedSolve);
  world_ = ownedWorld_.get();
  dispatcher_ = ownedDispatcher_.get();
  solver_ = ownedSolver_.get();
  world_->setGravity(toBt(settings_.gravity));
  // Sleeping and static bodies keep their AABBs; teleports update them explicitly.
  world_->setForceUpdateAllAabbs(false);
  configureSolverInfo();
  world_->setInternalTickCallback(&BulletWorld::preTickCallback, this, true);
  world_->setInternalTickCallback(&BulletWorld::postTickCallback, this, false);
  events_.reserve(4 * static_cast<std::size_t>(settings_.maxContactEvents));
  eventPeaks_.resize(events_.capacity());
}

void BulletWorld::configureSolverInfo() {
  btContactSolverInfo& info = world_->getSolverInfo();
  // Bullet solves contacts only in the first m_numIterations iterations; the joint rows' extra
  // iterations (WorldSettings::jointIterationFactor) come after them, so the joints have the
  // last word. BulletSettings::contactsIterateWithJoints gives contacts the joints' count.
  info.m_numIterations = bullet_.contactsIterateWithJoints
                             ? settings_.jointIterationFactor * settings_.solverIterations
                             : settings_.solverIterations;
  info.m_erp = settings_.jointErp;  // Baumgarte of joint rows without their own ERP
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
  if (joined()) leaveGameWorld();
}

// --- Handles -------------------------------------------------------------------------------------

BodySlot* BulletWorld::slotOf(BodyId id) {
  return const_cast<BodySlot*>(static_cast<const BulletWorld*>(this)->slotOf(id));
}

const BodySlot* BulletWorld::slotOf(BodyId id) const {
  return liveSlot(bodies_, id.value, [](const BodySlot& slot) { return slot.body != nullptr; });
}

JointSlot* BulletWorld::slotOf(JointId id) {
  return const_cast<JointSlot*>(static_cast<const BulletWorld*>(this)->slotOf(id));
}

const JointSlot* BulletWorld::slotOf(JointId id) const {
  return liveSlot(joints_, id.value, [](const JointSlot& slot) { return slot.constraint != nullptr; });
}

BulletObjectCounts BulletWorld::objectCounts() const {
  BulletObjectCounts counts;
  counts.collisionObjects = world_->getNumCollisionObjects();
  for (int i = 0; i < counts.collisionObjects; ++i) {
    if (btRigidBody::upcast(world_->getCollisionObjectArray()[i]) != nullptr) ++counts.rigidBodies;
  }
  counts.constraints = world_->getNumConstraints();
  counts.overlappingPairs = world_->getBroadphase()->getOverlappingPairCache()->getNumOverlappingPairs();
  counts.manifolds = dispatcher_->getNumManifolds();
  counts.shapes = static_cast<int>(
      std::count_if(shapes_.begin(), shapes_.end(), [](const ShapeEntry& e) { return e.refs > 0; }) +
      std::count_if(created_.begin(), created_.end(),
                    [](const CreatedShape& e) { return e.shape != nullptr; }));
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

std::unique_ptr<PhysicsWorld> createBulletWorld(const WorldSettings& settings, const BulletSettings& bullet) {
  return std::make_unique<bullet_detail::BulletWorld>(settings, bullet);
}

BulletSettings bulletSettings(const PhysicsWorld& world) {
  const auto* bullet = dynamic_cast<const bullet_detail::BulletWorld*>(&world);
  return bullet ? bullet->bulletSettings() : BulletSettings{};
}

BulletObjectCounts bulletObjectCounts(const PhysicsWorld& world) {
  const auto* bullet = dynamic_cast<const bullet_detail::BulletWorld*>(&world);
  return bullet ? bullet->objectCounts() : BulletObjectCounts{};
}

}  // namespace handoff
