// OdeWorld: construction, settings, handles, bodies and their per-step state.
//
// Decisions worth knowing (the full list is in include/handoff/physics_ode.h):
// - ODE is initialised once per process (dInitODE2) and each thread that touches an ODE world gets
//   ODE's per-thread collision data (dAllocateODEDataForThread) the first time it does.
// - Static bodies are geoms without a dBody: their pose is the adapter's (placed on each geom).
// - Impulses change velocities directly (dv = J / m, dw = I_world^-1 (r x J)): ODE has no impulse
//   call, and a force of J / h in the next substep would arrive one substep late.
#include "physics_ode/ode_parts.h"

#include "physics_ode/ode_internal.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace handoff {
namespace ode_detail {

namespace {

std::atomic<long> gOdeAllocations{0}, gOdeReallocations{0}, gOdeFrees{0};
std::atomic<std::size_t> gOdeBytes{0};

void* countingAlloc(dsizeint size) {
  gOdeAllocations.fetch_add(1, std::memory_order_relaxed);
  gOdeBytes.fetch_add(size, std::memory_order_relaxed);
  return std::malloc(size);
}
void* countingRealloc(void* ptr, dsizeint, dsizeint newSize) {
  gOdeReallocations.fetch_add(1, std::memory_order_relaxed);
  gOdeBytes.fetch_add(newSize, std::memory_order_relaxed);
  return std::realloc(ptr, newSize);
}
void countingFree(void* ptr, dsizeint) {
  gOdeFrees.fetch_add(1, std::memory_order_relaxed);
  std::free(ptr);
}

}  // namespace

void countOdeAllocations(bool on) {
  gOdeAllocations = 0;
  gOdeReallocations = 0;
  gOdeFrees = 0;
  gOdeBytes = 0;
  dSetAllocHandler(on ? &countingAlloc : nullptr);
  dSetReallocHandler(on ? &countingRealloc : nullptr);
  dSetFreeHandler(on ? &countingFree : nullptr);
}

OdeAllocationCounts odeAllocationCounts() {
  return OdeAllocationCounts{gOdeAllocations.load(), gOdeReallocations.load(), gOdeFrees.load(),
                             gOdeBytes.load()};
}

void ensureOdeThread() {
  static std::once_flag init;
  std::call_once(init, [] { dInitODE2(0); });
  thread_local const bool threadReady = dAllocateODEDataForThread(dAllocateMaskAll) != 0;
  assert(threadReady && "dAllocateODEDataForThread failed");
  (void)threadReady;
}

namespace {

OdeSettings sanitiseOde(OdeSettings o) {
  const OdeSettings d;
  if (!finite(o.anchorErp)) o.anchorErp = d.anchorErp;
  o.anchorErp = std::clamp(o.anchorErp, 0.0, 1.0);
  if (!finite(o.limitErp)) o.limitErp = d.limitErp;
  o.limitErp = std::clamp(o.limitErp, 0.0, 1.0);
  if (!finite(o.contactErp)) o.contactErp = d.contactErp;
  o.contactErp = std::clamp(o.contactErp, 0.0, 1.0);
  if (!(finite(o.contactCfm) && o.contactCfm >= 0.0)) o.contactCfm = d.contactCfm;
  if (!(finite(o.jointCfm) && o.jointCfm >= 0.0)) o.jointCfm = d.jointCfm;
  if (!(finite(o.maxCorrectingSpeed) && o.maxCorrectingSpeed > 0.0))
    o.maxCorrectingSpeed = d.maxCorrectingSpeed;
  if (!(finite(o.surfaceLayer) && o.surfaceLayer >= 0.0)) o.surfaceLayer = d.surfaceLayer;
  if (!(finite(o.bounceThreshold) && o.bounceThreshold >= 0.0)) o.bounceThreshold = d.bounceThreshold;
  o.maxContactsPerPair = std::clamp(o.maxContactsPerPair, 1, kMaxContactsPerPair);
  if (!(finite(o.anchorProjection) && o.anchorProjection >= 0.0)) o.anchorProjection = d.anchorProjection;
  return o;
}

}  // namespace

OdeWorld::OdeWorld(const WorldSettings& settings, const OdeSettings& ode)
    : settings_(sanitiseWorldSettings(settings)), ode_(sanitiseOde(ode)) {
  ensureOdeThread();
  world_ = dWorldCreate();
  space_ = dHashSpaceCreate(nullptr);
  contactGroup_ = dJointGroupCreate(0);
  dWorldSetGravity(world_, settings_.gravity.x, settings_.gravity.y, settings_.gravity.z);
  dWorldSetERP(world_, settings_.jointErp);
  dWorldSetCFM(world_, ode_.jointCfm);
  dWorldSetQuickStepNumIterations(world_, settings_.solverIterations * settings_.jointIterationFactor);
  dWorldSetContactMaxCorrectingVel(world_, ode_.maxCorrectingSpeed);
  dWorldSetContactSurfaceLayer(world_, ode_.surfaceLayer);
  // Sleep timers start from the world's defaults when a body is made (ODE copies them then and
  // resets a body's countdown only when it moves or is enabled).
  dWorldSetAutoDisableFlag(world_, 0);
  dWorldSetAutoDisableTime(world_, settings_.sleepTime);
  dWorldSetAutoDisableSteps(world_, 1);
  dWorldSetAutoDisableAverageSamplesCount(world_, 1);
  queryRay_ = dCreateRay(nullptr, 1.0);
  dGeomRaySetClosestHit(queryRay_, 1);
  queryCapsule_ = dCreateCapsule(nullptr, 0.1, 0.2);
  querySphere_ = dCreateSphere(nullptr, 0.1);
  queryBox_ = dCreateBox(nullptr, 0.1, 0.1, 0.1);
  events_.reserve(static_cast<std::size_t>(settings_.maxContactEvents));
  pairEvents_.reserve(4 * static_cast<std::size_t>(settings_.maxContactEvents) + 16);
  feedbackPool_.resize(16 * static_cast<std::size_t>(settings_.maxContactEvents) + 64);
  reported_.reserve(feedbackPool_.size());
  pairContacts_.reserve(1024);
  excludedPairs_.reserve(64);
}

OdeWorld::~OdeWorld() {
  ensureOdeThread();
  dJointGroupEmpty(contactGroup_);
  for (std::uint32_t i = 0; i < joints_.size(); ++i) {
    if (joints_[i].alive) destroyJointAt(i);
  }
  for (BodySlot& slot : bodies_) {
    if (!slot.alive) continue;
    for (GeomPart& g : slot.geoms) dGeomDestroy(g.geom);
    if (slot.body != nullptr) dBodyDestroy(slot.body);
  }
  for (CreatedShape& c : created_) {
    if (c.mesh != nullptr) dGeomTriMeshDataDestroy(c.mesh);
    if (c.heightfield != nullptr) dGeomHeightfieldDataDestroy(c.heightfield);
  }
  dGeomDestroy(queryRay_);
  dGeomDestroy(queryCapsule_);
  dGeomDestroy(querySphere_);
  dGeomDestroy(queryBox_);
  dJointGroupDestroy(contactGroup_);
  dSpaceDestroy(space_);
  dWorldDestroy(world_);
}

// --- Handles -------------------------------------------------------------------------------------

BodySlot* OdeWorld::slotOf(BodyId id) {
  return const_cast<BodySlot*>(static_cast<const OdeWorld*>(this)->slotOf(id));
}

const BodySlot* OdeWorld::slotOf(BodyId id) const {
  return liveSlot(bodies_, id.value, [](const BodySlot& slot) { return slot.alive; });
}

JointSlot* OdeWorld::slotOf(JointId id) {
  return const_cast<JointSlot*>(static_cast<const OdeWorld*>(this)->slotOf(id));
}

const JointSlot* OdeWorld::slotOf(JointId id) const {
  return liveSlot(joints_, id.value, [](const JointSlot& slot) { return slot.alive; });
}

Transform OdeWorld::poseOf(const BodySlot& slot) const {
  if (slot.body == nullptr) return slot.staticPose;
  return Transform{quatFromOde(dBodyGetQuaternion(slot.body)), fromOde(dBodyGetPosition(slot.body))};
}

// --- Bodies ---------------------------------------------------------------------------------------

Result<BodyId> OdeWorld::createBody(const BodyDesc& desc) {
  ensureOdeThread();
  if (Status valid = adapter::validateBodyDesc(desc); !valid.ok()) return Error{valid.error()};
  const ShapeDesc& s = desc.shape;
  const bool movable = desc.motion != MotionType::Static;
  const Vec3& I = desc.inertia;
  const bool inertiaZero = I.x == 0.0 && I.y == 0.0 && I.z == 0.0;
  if (s.created.valid()) {
    CreatedShape* c = createdOf(s.created);
    if (c == nullptr) return Error{"createBody: shape.created is not a live shape of this world"};
    if (c->staticOnly() && movable)
      return Error{
          "createBody: a triangle mesh or heightfield shape is for static bodies only (give a moving "
          "object a compound)"};
  }

  std::uint32_t created = kIndexMask;
  Vec3 lo{0.0}, hi{0.0};
  Result<std::vector<GeomPart>> geoms = makeGeoms(s, &created, &lo, &hi);
  if (!geoms) return Error{geoms.error()};
  Vec3 inertia{0.0};
  double radius = 0.0;
  if (s.created.valid()) {
    radius = std::max(glm::length(lo), glm::length(hi));
    if (movable) {
      const Vec3 size = hi - lo;
      inertia = inertiaZero ? desc.mass / 12.0 *
                                  Vec3{size.y * size.y + size.z * size.z, size.x * size.x + size.z * size.z,
                                       size.x * size.x + size.y * size.y}
                            : I;
    }
  } else {
    radius = shapeBoundingRadius(s);
    if (movable) inertia = inertiaZero ? shapePrincipalInertia(s, desc.mass) : I;
  }
  Result<BodyId> id = addBody(desc, std::move(*geoms), created, inertia, radius);
  if (id && !s.created.valid()) bodies_[id->value & kIndexMask].shape = s;
  return id;
}

Result<BodyId> OdeWorld::addBody(const BodyDesc& desc, std::vector<GeomPart> geoms, std::uint32_t created,
                                 const Vec3& inertia, double boundingRadius) {
  std::uint32_t index = 0;
  if (!freeBodies_.empty()) {
    index = freeBodies_.back();
    freeBodies_.pop_back();
  } else {
    if (bodies_.size() >= kIndexMask) {
      for (GeomPart& g : geoms) dGeomDestroy(g.geom);
      if (created != kIndexMask) releaseCreated(created);
      return Error{"createBody: too many bodies in one world"};
    }
    index = static_cast<std::uint32_t>(bodies_.size());
    bodies_.emplace_back();
  }
  BodySlot& slot = bodies_[index];
  const std::uint32_t generation = slot.generation;
  slot = BodySlot{};
  slot.generation = generation;
  slot.alive = true;
  slot.geoms = std::move(geoms);
  slot.createdShape = created;
  slot.motion = desc.motion;
  slot.mass = desc.motion == MotionType::Static ? 0.0 : desc.mass;
  slot.inertia = inertia;
  slot.friction = desc.friction;
  slot.rollingFriction = desc.rollingFriction;
  slot.restitution = desc.restitution;
  slot.linearDamping = desc.linearDamping;
  slot.angularDamping = desc.angularDamping;
  slot.boundingRadius = boundingRadius;
  slot.filter = desc.filter;
  slot.userData = desc.userData;
  const Transform pose{normalizeOrIdentity(desc.worldFromBody.rotation), desc.worldFromBody.translation};
  for (GeomPart& g : slot.geoms) {
    dGeomSetData(g.geom, reinterpret_cast<void*>(static_cast<std::uintptr_t>(index) + 1));
  }
  if (desc.motion == MotionType::Static) {
    slot.staticPose = pose;
    placeStaticGeoms(slot);
  } else {
    slot.body = dBodyCreate(world_);
    dBodySetData(slot.body, reinterpret_cast<void*>(static_cast<std::uintptr_t>(index) + 1));
    dBodySetFiniteRotationMode(slot.body, 1);
    dBodySetGyroscopicMode(slot.body, 1);
    for (GeomPart& g : slot.geoms) {
      dGeomSetBody(g.geom, slot.body);
      const Transform& o = g.bodyFromGeom;
      if (o.translation != Vec3{0.0})
        dGeomSetOffsetPosition(g.geom, o.translation.x, o.translation.y, o.translation.z);
      if (o.rotation != Quat{1.0, 0.0, 0.0, 0.0}) {
        dQuaternion q;
        toOde(o.rotation, q);
        dGeomSetOffsetQuaternion(g.geom, q);
      }
    }
    setBodyPose(slot, pose);
    applyMassAndMotion(slot);
  }
  applyFilter(slot);
  ++bodyCount_;
  excludedPairs_.reserve(excludedPairs_.size() + 8);
  return idOf(index);
}

void OdeWorld::destroyBody(BodyId id) {
  BodySlot* slot = slotOf(id);
  if (slot == nullptr) return;
  ensureOdeThread();
  const std::uint32_t index = id.value & kIndexMask;
  // Its joints go first (ODE joints keep pointers to their bodies).
  while (!slot->joints.empty()) destroyJointAt(slot->joints.back());
  dJointGroupEmpty(contactGroup_);
  for (GeomPart& g : slot->geoms) dGeomDestroy(g.geom);
  slot->geoms.clear();
  if (slot->body != nullptr) dBodyDestroy(slot->body);
  slot->body = nullptr;
  if (slot->createdShape != kIndexMask) releaseCreated(slot->createdShape);
  if (slot->reportMinImpulse >= 0.0) --reportedBodies_;
  std::erase_if(excludedPairs_, [&](const auto& p) { return p.first == index || p.second == index; });
  std::erase_if(pairContacts_, [&](const PairContacts& p) { return p.a == index || p.b == index; });
  events_.clear();
  slot->alive = false;
  slot->generation = (slot->generation + 1) & kGenerationMask;
  freeBodies_.push_back(index);
  --bodyCount_;
  rebuildJointPairs();
}

BodyId OdeWorld::addGroundPlane(const Vec3& normal, double offset, double friction) {
  ensureOdeThread();
  const Vec3 n = glm::length(normal) > 0.0 ? glm::normalize(normal) : Vec3{0.0, 1.0, 0.0};
  GeomPart part;
  part.geom = dCreatePlane(space_, n.x, n.y, n.z, offset);
  BodyDesc desc;
  desc.motion = MotionType::Static;
  desc.friction = std::max(0.0, friction);
  desc.filter = CollisionFilter{layers::kStatic, layers::kAll};
  std::vector<GeomPart> geoms{part};
  Result<BodyId> id = addBody(desc, std::move(geoms), kIndexMask, Vec3{0.0}, 0.0);
  return id ? *id : BodyId{};
}

BodyId OdeWorld::addStaticBox(const Transform& worldFromBox, const Vec3& halfExtents, double friction) {
  BodyDesc desc;
  desc.shape.type = ShapeType::Box;
  desc.shape.halfExtents = halfExtents;
  desc.motion = MotionType::Static;
  desc.worldFromBody = worldFromBox;
  desc.friction = friction;
  desc.filter = CollisionFilter{layers::kStatic, layers::kAll};
  Result<BodyId> id = createBody(desc);
  return id ? *id : BodyId{};
}

void OdeWorld::applyFilter(BodySlot& slot) {
  slot.layerBits = toWorldBits(slot.filter.layer, settings_.layerBits);
  slot.maskBits = toWorldBits(slot.filter.mask, settings_.layerBits);
  for (GeomPart& g : slot.geoms) {
    dGeomSetCategoryBits(g.geom, slot.layerBits);
    dGeomSetCollideBits(g.geom, slot.maskBits);
  }
}

void OdeWorld::applySleepSettings(BodySlot& slot) {
  if (slot.body == nullptr) return;
  const bool sleeps = slot.motion == MotionType::Dynamic && settings_.sleepLinearSpeed > 0.0;
  dBodySetAutoDisableFlag(slot.body, sleeps ? 1 : 0);
  if (!sleeps) return;
  dBodySetAutoDisableLinearThreshold(slot.body, settings_.sleepLinearSpeed);
  dBodySetAutoDisableAngularThreshold(slot.body,
                                      settings_.sleepLinearSpeed / std::max(slot.boundingRadius, 1e-3));
  dBodySetAutoDisableTime(slot.body, settings_.sleepTime);
  dBodySetAutoDisableSteps(slot.body, 1);
  dBodySetAutoDisableAverageSamplesCount(slot.body, 1);
  if (dBodyIsEnabled(slot.body) != 0) dBodyEnable(slot.body);  // restarts the countdown
}

void OdeWorld::applyMassAndMotion(BodySlot& slot) {
  dMass m;
  dMassSetParameters(&m, slot.mass, 0.0, 0.0, 0.0, slot.inertia.x, slot.inertia.y, slot.inertia.z, 0.0, 0.0,
                     0.0);
  dBodySetMass(slot.body, &m);
  if (slot.motion == MotionType::Kinematic) {
    dBodySetKinematic(slot.body);
  } else {
    dBodySetDynamic(slot.body);
  }
  applySleepSettings(slot);
}

void OdeWorld::setBodyPose(BodySlot& slot, const Transform& pose) {
  if (slot.body == nullptr) {
    slot.staticPose = pose;
    placeStaticGeoms(slot);
    return;
  }
  dBodySetPosition(slot.body, pose.translation.x, pose.translation.y, pose.translation.z);
  dQuaternion q;
  toOde(pose.rotation, q);
  dBodySetQuaternion(slot.body, q);
}

// --- Per-step state ----------------------------------------------------------------------------------

void OdeWorld::setMotionType(BodyId id, MotionType motion) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->body == nullptr || motion == MotionType::Static || motion == slot->motion) return;
  const Vec3 v = fromOde(dBodyGetLinearVel(slot->body));
  const Vec3 w = fromOde(dBodyGetAngularVel(slot->body));
  slot->motion = motion;
  slot->movePending = false;
  applyMassAndMotion(*slot);
  for (std::uint32_t j : slot->joints) updateJointActive(joints_[j]);
  dBodySetLinearVel(slot->body, v.x, v.y, v.z);
  dBodySetAngularVel(slot->body, w.x, w.y, w.z);
  if (slot->enabled) dBodyEnable(slot->body);
}

MotionType OdeWorld::motionType(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, MotionType::Static);
  return slot->motion;
}

void OdeWorld::moveKinematic(BodyId id, const Transform& worldFromBody, double dt) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->motion != MotionType::Kinematic || !isFinite(worldFromBody) || !(dt > 0.0)) return;
  const Transform from = poseOf(*slot);
  const Transform to{normalizeOrIdentity(worldFromBody.rotation), worldFromBody.translation};
  slot->movePending = true;
  slot->moveFrom = from;
  slot->moveTo = to;
  slot->moveLinear = (to.translation - from.translation) / dt;
  slot->moveAngular = toRotationVector(shortArc(to.rotation * glm::conjugate(from.rotation))) / dt;
  dBodySetLinearVel(slot->body, slot->moveLinear.x, slot->moveLinear.y, slot->moveLinear.z);
  dBodySetAngularVel(slot->body, slot->moveAngular.x, slot->moveAngular.y, slot->moveAngular.z);
  if (slot->enabled) dBodyEnable(slot->body);
}

void OdeWorld::setTransform(BodyId id, const Transform& worldFromBody) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (!isFinite(worldFromBody)) return;
  setBodyPose(*slot, Transform{normalizeOrIdentity(worldFromBody.rotation), worldFromBody.translation});
  slot->movePending = false;
  if (slot->body != nullptr && slot->enabled) dBodyEnable(slot->body);
  // Its joint partners and what touches it wake with it: ODE's island walk enables every body
  // joined to an awake one by a joint or by a contact of the next substep.
}

Transform OdeWorld::transform(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, Transform{});
  return poseOf(*slot);
}

void OdeWorld::setLinearVelocity(BodyId id, const Vec3& v) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->body == nullptr || !isFinite(v)) return;
  dBodySetLinearVel(slot->body, v.x, v.y, v.z);
  if (slot->enabled && v != Vec3{0.0}) dBodyEnable(slot->body);
}

void OdeWorld::setAngularVelocity(BodyId id, const Vec3& w) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->body == nullptr || !isFinite(w)) return;
  dBodySetAngularVel(slot->body, w.x, w.y, w.z);
  if (slot->enabled && w != Vec3{0.0}) dBodyEnable(slot->body);
}

Vec3 OdeWorld::linearVelocity(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, Vec3{0.0});
  return slot->body == nullptr ? Vec3{0.0} : fromOde(dBodyGetLinearVel(slot->body));
}

Vec3 OdeWorld::angularVelocity(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, Vec3{0.0});
  return slot->body == nullptr ? Vec3{0.0} : fromOde(dBodyGetAngularVel(slot->body));
}

double OdeWorld::mass(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, 0.0);
  return slot->mass;
}

glm::dmat3 OdeWorld::worldInertia(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, glm::dmat3(0.0));
  const glm::dmat3 r = glm::mat3_cast(poseOf(*slot).rotation);
  glm::dmat3 d(0.0);
  d[0][0] = slot->inertia.x;
  d[1][1] = slot->inertia.y;
  d[2][2] = slot->inertia.z;
  return r * d * glm::transpose(r);
}

void OdeWorld::applyLinearImpulse(BodyId id, const Vec3& impulse, const Vec3& worldPoint) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->motion != MotionType::Dynamic || !isFinite(impulse) || !isFinite(worldPoint)) return;
  const Vec3 v = fromOde(dBodyGetLinearVel(slot->body)) + impulse / slot->mass;
  dBodySetLinearVel(slot->body, v.x, v.y, v.z);
  const Vec3 r = worldPoint - fromOde(dBodyGetPosition(slot->body));
  applyAngularImpulse(id, glm::cross(r, impulse));
  if (slot->enabled) dBodyEnable(slot->body);
}

void OdeWorld::applyAngularImpulse(BodyId id, const Vec3& angularImpulse) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->motion != MotionType::Dynamic || !isFinite(angularImpulse)) return;
  const glm::dmat3 r = glm::mat3_cast(poseOf(*slot).rotation);
  const Vec3 local = glm::transpose(r) * angularImpulse;
  const Vec3 dwLocal{local.x / slot->inertia.x, local.y / slot->inertia.y, local.z / slot->inertia.z};
  const Vec3 w = fromOde(dBodyGetAngularVel(slot->body)) + r * dwLocal;
  dBodySetAngularVel(slot->body, w.x, w.y, w.z);
  if (slot->enabled) dBodyEnable(slot->body);
}

void OdeWorld::setCollisionFilter(BodyId id, const CollisionFilter& filter) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  slot->filter = filter;
  applyFilter(*slot);
}

CollisionFilter OdeWorld::collisionFilter(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, CollisionFilter{});
  return slot->filter;
}

void OdeWorld::setEnabled(BodyId id, bool enabled) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->enabled == enabled) return;
  slot->enabled = enabled;
  for (GeomPart& g : slot->geoms) {
    if (enabled) {
      dGeomEnable(g.geom);
    } else {
      dGeomDisable(g.geom);
    }
  }
  if (slot->body != nullptr) {
    if (enabled) {
      dBodyEnable(slot->body);
    } else {
      dBodyDisable(slot->body);
    }
  }
  for (std::uint32_t j : slot->joints) updateJointActive(joints_[j]);
  slot->contacts = 0;
  const std::uint32_t index = id.value & kIndexMask;
  std::erase_if(pairContacts_, [&](const PairContacts& p) { return p.a == index || p.b == index; });
}

bool OdeWorld::isEnabled(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, false);
  return slot->enabled;
}

bool OdeWorld::isSleeping(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, false);
  return slot->enabled && slot->body != nullptr && slot->motion == MotionType::Dynamic &&
         dBodyIsEnabled(slot->body) == 0;
}

std::uint64_t OdeWorld::userData(BodyId id) const {
  const BodySlot* slot = slotOf(id);
  return slot == nullptr ? 0 : slot->userData;
}

void OdeWorld::wake(BodyId id) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->body != nullptr && slot->enabled) dBodyEnable(slot->body);
}

void OdeWorld::sleep(BodyId id) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  if (slot->body == nullptr || !slot->enabled || slot->motion != MotionType::Dynamic) return;
  dBodySetLinearVel(slot->body, 0.0, 0.0, 0.0);
  dBodySetAngularVel(slot->body, 0.0, 0.0, 0.0);
  dBodyDisable(slot->body);
}

void OdeWorld::setPairCollision(BodyId a, BodyId b, bool enabled) {
  const BodySlot* sa = slotOf(a);
  const BodySlot* sb = slotOf(b);
  assert(sa != nullptr && sb != nullptr && "invalid or dead BodyId");
  if (sa == nullptr || sb == nullptr) return;
  const std::uint32_t ia = a.value & kIndexMask;
  const std::uint32_t ib = b.value & kIndexMask;
  const std::pair<std::uint32_t, std::uint32_t> key{std::min(ia, ib), std::max(ia, ib)};
  const auto it = std::lower_bound(excludedPairs_.begin(), excludedPairs_.end(), key);
  const bool present = it != excludedPairs_.end() && *it == key;
  if (!enabled && !present) {
    excludedPairs_.insert(it, key);
    // Their contacts go at once (the contact joints of the last substep are not solved again).
    for (PairContacts& p : pairContacts_) {
      if (std::min(p.a, p.b) != key.first || std::max(p.a, p.b) != key.second) continue;
      bodies_[p.a].contacts -= p.points;
      bodies_[p.b].contacts -= p.points;
      contactPoints_ -= p.points;
      stats_.contactPoints -= p.points;
      p.points = 0;
    }
  } else if (enabled && present) {
    excludedPairs_.erase(it);
  }
}

bool OdeWorld::pairCollides(std::uint32_t i, std::uint32_t j) const {
  if (i == j || i == kIndexMask || j == kIndexMask) return false;
  const BodySlot& a = bodies_[i];
  const BodySlot& b = bodies_[j];
  if (!a.enabled || !b.enabled) return false;
  if (a.motion != MotionType::Dynamic && b.motion != MotionType::Dynamic) return false;
  if ((a.layerBits & b.maskBits) == 0 || (b.layerBits & a.maskBits) == 0) return false;
  const std::pair<std::uint32_t, std::uint32_t> key{std::min(i, j), std::max(i, j)};
  if (std::binary_search(excludedPairs_.begin(), excludedPairs_.end(), key)) return false;
  if (std::binary_search(jointPairs_.begin(), jointPairs_.end(), key)) return false;
  return true;
}

void OdeWorld::setContactReport(BodyId id, double minImpulse) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  const bool was = slot->reportMinImpulse >= 0.0;
  slot->reportMinImpulse = finite(minImpulse) && minImpulse >= 0.0 ? minImpulse : -1.0;
  reportedBodies_ += (slot->reportMinImpulse >= 0.0 ? 1 : 0) - (was ? 1 : 0);
}

int OdeWorld::contactCount(BodyId id) const {
  HANDOFF_BODY_OR_RETURN(slot, id, 0);
  return slot->enabled ? slot->contacts : 0;
}

}  // namespace ode_detail

std::unique_ptr<PhysicsWorld> createOdeWorld(const WorldSettings& settings, const OdeSettings& ode) {
  return std::make_unique<ode_detail::OdeWorld>(settings, ode);
}

const char* odeVersion() { return HANDOFF_ODE_VERSION; }

const char* odePrecision() {
#if defined(dDOUBLE)
  return "double";
#else
  return "single";
#endif
}

}  // namespace handoff
