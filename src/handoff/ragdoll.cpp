// Ragdoll: creation and destruction of its bodies, joints and capsule, the animated pose, and
// the commit's entry points (the commit itself: ragdoll_commit.cpp).
#include "handoff/handoff.h"

#include "handoff/ragdoll_internal.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace handoff {

using ragdoll_detail::capsulePose;
using ragdoll_detail::kMaxStaticContactsPerBody;

Status createRagdollBodies(PhysicsWorld& world, const RagdollAsset& asset, MotionType motion,
                           std::span<const Transform> worldFromBodies, std::span<BodyId> bodies,
                           std::span<JointId> joints, bool enabled) {
  const size_t bodyCount = asset.bodies.size();
  if (worldFromBodies.size() != bodyCount || bodies.size() != bodyCount ||
      joints.size() != asset.joints.size()) {
    return Error{"ragdoll bodies: the asset has " + std::to_string(bodyCount) + " bodies and " +
                 std::to_string(asset.joints.size()) + " joints, given " +
                 std::to_string(worldFromBodies.size()) + " poses, " + std::to_string(bodies.size()) +
                 " body and " + std::to_string(joints.size()) + " joint slots"};
  }
  std::fill(bodies.begin(), bodies.end(), BodyId{});
  std::fill(joints.begin(), joints.end(), JointId{});
  auto undo = [&](size_t createdBodies, size_t createdJoints) {
    for (size_t j = 0; j < createdJoints; ++j) world.destroyJoint(joints[j]);
    for (size_t b = 0; b < createdBodies; ++b) world.destroyBody(bodies[b]);
    std::fill(bodies.begin(), bodies.end(), BodyId{});
    std::fill(joints.begin(), joints.end(), JointId{});
  };
  for (const JointDef& def : asset.joints) {
    if (def.parentBody < 0 || static_cast<size_t>(def.parentBody) >= bodyCount || def.childBody < 0 ||
        static_cast<size_t>(def.childBody) >= bodyCount) {
      return Error{"joint '" + def.name + "' connects bodies that do not exist"};
    }
  }
  for (size_t b = 0; b < bodyCount; ++b) {
    const BodyDef& def = asset.bodies[b];
    BodyDesc desc;
    desc.shape = def.shape;
    desc.motion = motion;
    desc.mass = def.mass;
    desc.inertia = def.inertia;
    desc.worldFromBody = worldFromBodies[b];
    desc.filter = def.filter;
    desc.friction = def.friction;
    desc.rollingFriction = def.rollingFriction;
    desc.restitution = def.restitution;
    desc.linearDamping = def.linearDamping;
    desc.angularDamping = def.angularDamping;
    Result<BodyId> id = world.createBody(desc);
    if (!id) {
      undo(b, 0);
      return Error{"body '" + def.name + "': " + id.error()};
    }
    bodies[b] = *id;
    if (!enabled) world.setEnabled(*id, false);
  }
  for (size_t j = 0; j < asset.joints.size(); ++j) {
    const JointDef& def = asset.joints[j];
    Result<JointId> id = world.createJoint(jointDescFor(def, bodies));
    if (!id) {
      undo(bodyCount, j);
      return Error{"joint '" + def.name + "': " + id.error()};
    }
    joints[j] = *id;
  }
  return {};
}

Ragdoll::Ragdoll(PhysicsWorld& world, std::shared_ptr<const RagdollAsset> asset)
    : world_(&world), asset_(std::move(asset)) {}

Ragdoll::~Ragdoll() {
  for (JointId j : joints_) world_->destroyJoint(j);
  for (BodyId b : bodies_) {
    world_->setBodyOwner(b, {});
    world_->destroyBody(b);
  }
  if (capsule_.valid()) {
    world_->setBodyOwner(capsule_, {});
    world_->destroyBody(capsule_);
  }
}

namespace {
/// BodyOwner::kind of a ragdoll's bodies (its address is the tag): index = body, -1 = capsule.
constexpr char kRagdollOwnerKind = 'R';
}  // namespace

RagdollBodyInfo ragdollBodyInfo(const PhysicsWorld& world, BodyId body) {
  const PhysicsWorld::BodyOwner owner = world.bodyOwner(body);
  if (owner.owner == nullptr) return {};
  if (owner.kind != &kRagdollOwnerKind) return {};
  const auto* ragdoll = static_cast<const Ragdoll*>(owner.owner);
  RagdollBodyInfo info;
  info.ragdoll = ragdoll;
  info.body = owner.index;
  info.capsule = owner.index < 0;
  if (info.capsule) return info;
  const RagdollAsset& asset = ragdoll->asset();
  const BodyDef& def = asset.bodies[static_cast<size_t>(owner.index)];
  info.slot = def.slot;
  info.bone = def.joint;
  for (size_t j = 0; j < asset.joints.size(); ++j) {
    if (asset.joints[j].childBody == owner.index) info.joint = static_cast<int>(j);
  }
  return info;
}

Result<std::unique_ptr<Ragdoll>> Ragdoll::create(PhysicsWorld& world,
                                                 std::shared_ptr<const RagdollAsset> asset,
                                                 const Skeleton& skeleton, const Transform& worldFromRoot,
                                                 std::span<const Transform> models) {
  if (!asset) return Error{"no ragdoll asset"};
  if (asset->bodies.empty()) return Error{"ragdoll asset has no bodies"};
  if (!isFinite(worldFromRoot)) return Error{"root transform is not finite"};
  std::unique_ptr<Ragdoll> r(new Ragdoll(world, asset));
  const int bodyCount = static_cast<int>(asset->bodies.size());
  for (const BodyDef& def : asset->bodies) {
    if (def.joint < 0 || def.joint >= skeleton.jointCount()) {
      return Error{"body '" + def.name + "' refers to joint " + std::to_string(def.joint) +
                   ", not in the skeleton"};
    }
    r->jointCountNeeded_ = std::max(r->jointCountNeeded_, def.joint + 1);
  }
  if (static_cast<int>(models.size()) < r->jointCountNeeded_) {
    return Error{"model pose has " + std::to_string(models.size()) + " joints, the asset needs " +
                 std::to_string(r->jointCountNeeded_)};
  }
  std::vector<Transform> bindModels(static_cast<size_t>(skeleton.jointCount()));
  localToModel(skeleton, skeleton.restLocal, bindModels);

  r->jointsOfBody_.resize(static_cast<size_t>(bodyCount));
  std::vector<Transform> worldFromBodies(static_cast<size_t>(bodyCount));
  bodyPosesFromModels(*asset, models, worldFromRoot, worldFromBodies);
  r->bodies_.resize(static_cast<size_t>(bodyCount));
  r->joints_.resize(asset->joints.size());
  if (Status created =
          createRagdollBodies(world, *asset, MotionType::Kinematic, worldFromBodies, r->bodies_, r->joints_);
      !created) {
    r->bodies_.clear();  // nothing left to destroy
    r->joints_.clear();
    return Error{created.error()};
  }
  for (const BodyDef& def : asset->bodies)
    r->rootFromBodyBind_.push_back(bindModels[static_cast<size_t>(def.joint)] * def.boneFromBody);
  for (size_t j = 0; j < asset->joints.size(); ++j) {
    const JointDef& def = asset->joints[j];
    const int jointIndex = static_cast<int>(j);
    r->jointsOfBody_[static_cast<size_t>(def.parentBody)].push_back(jointIndex);
    r->jointsOfBody_[static_cast<size_t>(def.childBody)].push_back(jointIndex);
    if (std::isfinite(def.breakForce) || std::isfinite(def.breakTorque))
      r->breakableJoints_.push_back(jointIndex);
  }
  r->broken_.assign(r->joints_.size(), 0);
  r->motorOwners_.assign(r->joints_.size(), MotorOwner::None);
  r->motorOn_.assign(r->joints_.size(), 0);
  r->breaks_.reserve(r->breakableJoints_.size());
  BodyDesc capsule;
  capsule.shape.type = ShapeType::Capsule;
  capsule.shape.radius = asset->capsule.radius;
  capsule.shape.halfHeight = asset->capsule.halfHeight;
  capsule.motion = MotionType::Kinematic;
  capsule.mass = asset->totalMass;
  capsule.worldFromBody =
      capsulePose(*asset, worldFromRoot, models[static_cast<size_t>(asset->bodies[0].joint)]);
  capsule.filter = {layers::kCapsule, layers::kStatic | layers::kCapsule | layers::kDebris};
  capsule.enableContinuousCollision = false;
  Result<BodyId> capsuleId = world.createBody(capsule);
  if (!capsuleId) return Error{"character capsule: " + capsuleId.error()};
  r->capsule_ = *capsuleId;
  // Who owns these bodies (ragdollBodyInfo: a ray cast or a contact event names the ragdoll).
  for (int b = 0; b < bodyCount; ++b)
    world.setBodyOwner(r->bodies_[static_cast<size_t>(b)], {r.get(), &kRagdollOwnerKind, b});
  world.setBodyOwner(r->capsule_, {r.get(), &kRagdollOwnerKind, -1});

  r->scratchJoints_.resize(r->joints_.size());
  r->authority_.assign(static_cast<size_t>(bodyCount), Authority::Animation);
  r->history_ = PoseHistory(bodyCount);
  r->scratchPoses_.resize(static_cast<size_t>(bodyCount));
  r->rawLinear_.resize(static_cast<size_t>(bodyCount));
  r->rawAngular_.resize(static_cast<size_t>(bodyCount));
  r->linear_.resize(static_cast<size_t>(bodyCount));
  r->angular_.resize(static_cast<size_t>(bodyCount));
  r->clamps_.resize(static_cast<size_t>(bodyCount));
  // The projector's capacity, and its joints' elimination order laid out once here (the commit's
  // projection reuses it).
  std::vector<ConsistencyJoint> topology(asset->joints.size());
  int jointRows = 0;
  for (size_t j = 0; j < asset->joints.size(); ++j) {
    const JointDef& def = asset->joints[j];
    topology[j].parent = def.parentBody;
    topology[j].child = def.childBody;
    for (int axis = 0; axis < 3; ++axis)
      topology[j].lockedCount += def.preset.angularLower[axis] == def.preset.angularUpper[axis];
    jointRows += 3 + topology[j].lockedCount;
  }
  r->projector_ = VelocityProjector(bodyCount, jointRows, kMaxStaticContactsPerBody * bodyCount);
  r->projector_.prepare(topology, bodyCount);
  r->consistencyBodies_.resize(static_cast<size_t>(bodyCount));
  r->consistencyJoints_.reserve(asset->joints.size());
  r->consistencyContacts_.reserve(static_cast<size_t>(kMaxStaticContactsPerBody * bodyCount));
  for (auto* v : {&r->jointLinear_, &r->jointAngular_, &r->contactLinear_, &r->contactAngular_}) {
    v->resize(static_cast<size_t>(bodyCount));
  }
  for (const JointDef& def : asset->joints) {
    r->lower_.push_back(def.preset.angularLower);
    r->upper_.push_back(def.preset.angularUpper);
  }
  for (int a = 0; a < bodyCount; ++a) {
    for (int b = a + 1; b < bodyCount; ++b) {
      bool adjacent = false;
      for (const JointDef& def : asset->joints) {
        adjacent = adjacent || (def.parentBody == a && def.childBody == b) ||
                   (def.parentBody == b && def.childBody == a);
      }
      if (!adjacent) r->nonAdjacentPairs_.emplace_back(a, b);
    }
  }
  for (const BodyDef& def : asset->bodies) r->boundingRadius_.push_back(shapeBoundingRadius(def.shape));
  r->scratchBounds_.resize(asset->bodies.size());
  r->scratchSpeeds_.resize(asset->bodies.size());
  r->suspended_.assign(r->nonAdjacentPairs_.size(), 0);
  r->pairColliding_.assign(r->nonAdjacentPairs_.size(), 1);
  r->worldFromRoot_ = worldFromRoot;
  return r;
}

double Ragdoll::stepTimeFor(const HandoffSettings& settings) const {
  return settings.stepTime > 0.0 ? settings.stepTime : animationStep_;
}

double Ragdoll::limitLookAheadFor(const HandoffSettings& settings) const {
  if (settings.limitLookAhead >= 0.0) return settings.limitLookAhead;
  const double erp = world_->settings().jointErp;
  return stepTimeFor(settings) * (1.0 + (erp > 0.0 ? 1.0 / erp : 0.0));
}

Status Ragdoll::setAnimatedPose(double time, const Transform& worldFromRoot,
                                std::span<const Transform> models, bool teleport, double dt,
                                std::span<const Transform> worldFromBodies) {
  if (!(dt > 0.0) || !std::isfinite(dt)) return Error{"time step must be positive and finite"};
  if (static_cast<int>(models.size()) < jointCountNeeded_) {
    return Error{"model pose has " + std::to_string(models.size()) + " joints, the ragdoll needs " +
                 std::to_string(jointCountNeeded_)};
  }
  if (!isFinite(worldFromRoot)) return Error{"root transform is not finite"};
  for (int b = 0; b < bodyCount(); ++b) {
    const BodyDef& def = asset_->bodies[static_cast<size_t>(b)];
    const Transform& model = models[static_cast<size_t>(def.joint)];
    if (!isFinite(model)) return Error{"bone '" + def.name + "' pose is not finite"};
    scratchPoses_[static_cast<size_t>(b)] = worldFromRoot * model * def.boneFromBody;
  }
  if (!worldFromBodies.empty()) {
    if (static_cast<int>(worldFromBodies.size()) != bodyCount()) {
      return Error{"body poses: " + std::to_string(worldFromBodies.size()) + " for " +
                   std::to_string(bodyCount()) + " bodies"};
    }
    for (int b = 0; b < bodyCount(); ++b) {
      if (!isFinite(worldFromBodies[static_cast<size_t>(b)]))
        return Error{"body '" + asset_->bodies[static_cast<size_t>(b)].name + "' pose is not finite"};
    }
    std::copy(worldFromBodies.begin(), worldFromBodies.end(), scratchPoses_.begin());
  }
  const bool jump = teleport || teleportNext_;
  if (Status s = history_.push(time, worldFromRoot, scratchPoses_, jump); !s) return s;
  teleportNext_ = false;
  animationStep_ = dt;
  for (int b = 0; b < bodyCount() && !capsuleOnly_; ++b) {
    if (authority_[static_cast<size_t>(b)] != Authority::Animation) continue;
    if (jump) {
      world_->setTransform(bodies_[static_cast<size_t>(b)], scratchPoses_[static_cast<size_t>(b)]);
    } else {
      world_->moveKinematic(bodies_[static_cast<size_t>(b)], scratchPoses_[static_cast<size_t>(b)], dt);
    }
  }
  if (jump) {
    world_->resetWarmStarts(joints_);
    world_->setTransform(
        capsule_, capsulePose(*asset_, worldFromRoot, models[static_cast<size_t>(asset_->bodies[0].joint)]));
  } else {
    world_->moveKinematic(
        capsule_, capsulePose(*asset_, worldFromRoot, models[static_cast<size_t>(asset_->bodies[0].joint)]),
        dt);
  }
  worldFromRoot_ = worldFromRoot;
  return {};
}

HandoffRecord Ragdoll::commit(const HandoffSettings& settings) {
  HandoffRecord record;
  commitBodies(settings, {}, Authority::Physics, record);
  return record;
}

void Ragdoll::commit(const HandoffSettings& settings, HandoffRecord& record) {
  commitBodies(settings, {}, Authority::Physics, record);
}

HandoffRecord Ragdoll::commitBodies(const HandoffSettings& settings, std::span<const std::uint8_t> mask,
                                    Authority authority) {
  HandoffRecord record;
  commitBodies(settings, mask, authority, record);
  return record;
}

}  // namespace handoff
