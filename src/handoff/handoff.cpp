#include "handoff/handoff.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace handoff {

const char* authorityName(Authority authority) {
  switch (authority) {
    case Authority::Animation:
      return "animated";
    case Authority::Physics:
      return "ragdoll";
    case Authority::Drive:
      return "powered";
  }
  return "?";
}

const char* handoffModeName(HandoffMode mode) {
  switch (mode) {
    case HandoffMode::Inherit:
      return "inherit";
    case HandoffMode::ZeroVelocity:
      return "naive_zero_velocity";
    case HandoffMode::BindPose:
      return "naive_bind_pose";
  }
  return "?";
}

std::string clampReasonText(std::uint8_t reasons) {
  std::string text;
  auto add = [&](const char* s) {
    if (!text.empty()) text += ", ";
    text += s;
  };
  if (reasons & kClampTeleport) add("teleport");
  if (reasons & kClampLinearLimit) add("linear limit");
  if (reasons & kClampAngularLimit) add("angular limit");
  if (reasons & kClampNoHistory) add("no history");
  if (reasons & kClampJointConsistency) add("joint consistency");
  if (reasons & kClampStaticContact) add("static contact");
  return text;
}

// ---------------------------------------------------------------------------------------------
// PoseHistory

PoseHistory::PoseHistory(int bodyCount)
    : bodyCount_(bodyCount),
      bodies_(static_cast<size_t>(3 * std::max(bodyCount, 0))),
      scratch_(static_cast<size_t>(2 * std::max(bodyCount, 0))) {}

int PoseHistory::slot(int age) const {
  assert(age >= 0 && age < count_ && "history sample out of range");
  return (newest_ - age + 3) % 3;
}

double PoseHistory::time(int age) const { return times_[slot(age)]; }
const Transform& PoseHistory::root(int age) const { return roots_[slot(age)]; }
bool PoseHistory::teleport(int age) const { return teleports_[slot(age)]; }
const Transform& PoseHistory::body(int age, int bodyIndex) const {
  assert(bodyIndex >= 0 && bodyIndex < bodyCount_ && "body index out of range");
  return bodies_[static_cast<size_t>(slot(age) * bodyCount_ + bodyIndex)];
}

Status PoseHistory::insertBeforeNewest(double time, const Transform& worldFromRoot,
                                       std::span<const Transform> worldFromBodies) {
  if (count_ < 1) return Error{"no sample to insert before"};
  const double newest = times_[newest_];
  const double older = count_ >= 2 ? this->time(1) : -std::numeric_limits<double>::infinity();
  if (!std::isfinite(time) || !(time < newest) || !(time > older)) {
    return Error{"a dense sample at " + std::to_string(time) + " s is not between the two newest samples"};
  }
  // Keep (older, newest), then rebuild as older -> inserted -> newest.
  const bool haveOlder = count_ >= 2;
  const double olderTime = haveOlder ? older : 0.0;
  const Transform olderRoot = haveOlder ? root(1) : Transform{};
  const bool olderTeleport = haveOlder && teleport(1);
  const Transform newestRoot = root(0);
  const bool newestTeleport = teleport(0);
  const size_t n = static_cast<size_t>(bodyCount_);
  for (size_t b = 0; b < n; ++b) {
    scratch_[b] = haveOlder ? body(1, static_cast<int>(b)) : Transform{};
    scratch_[n + b] = body(0, static_cast<int>(b));
  }
  const std::span<const Transform> olderBodies(scratch_.data(), n), newestBodies(scratch_.data() + n, n);
  // A dense sample on the new side of a flagged jump takes the flag: the jump is then between
  // the older sample and it, and the newest pair is the motion after the jump.
  const bool afterJump = haveOlder && newestTeleport &&
                         glm::length(worldFromRoot.translation - newestRoot.translation) <
                             glm::length(worldFromRoot.translation - olderRoot.translation);
  clear();
  Status s;
  if (haveOlder) s = push(olderTime, olderRoot, olderBodies, olderTeleport);
  if (s) s = push(time, worldFromRoot, worldFromBodies, afterJump);
  if (s) s = push(newest, newestRoot, newestBodies, newestTeleport && !afterJump);
  if (s) denseAfterTeleport_ = afterJump;
  return s;
}

void PoseHistory::clear() {
  count_ = 0;
  newest_ = -1;
  denseAfterTeleport_ = false;
}

Status PoseHistory::push(double time, const Transform& worldFromRoot,
                         std::span<const Transform> worldFromBodies, bool teleport) {
  if (!std::isfinite(time)) return Error{"sample time is not finite"};
  if (count_ > 0 && !(time > times_[newest_])) {
    return Error{"sample time " + std::to_string(time) + " s does not advance past " +
                 std::to_string(times_[newest_]) + " s (a zero or negative time step)"};
  }
  if (static_cast<int>(worldFromBodies.size()) != bodyCount_) {
    return Error{"sample has " + std::to_string(worldFromBodies.size()) + " body poses, expected " +
                 std::to_string(bodyCount_)};
  }
  if (!isFinite(worldFromRoot)) return Error{"root transform is not finite"};
  for (int b = 0; b < bodyCount_; ++b) {
    if (!isFinite(worldFromBodies[static_cast<size_t>(b)])) {
      return Error{"body " + std::to_string(b) + " pose is not finite"};
    }
  }
  newest_ = (newest_ + 1) % 3;
  count_ = std::min(count_ + 1, 3);
  denseAfterTeleport_ = false;
  times_[newest_] = time;
  roots_[newest_] = worldFromRoot;
  teleports_[newest_] = teleport;
  std::copy(worldFromBodies.begin(), worldFromBodies.end(),
            bodies_.begin() + static_cast<std::ptrdiff_t>(newest_ * bodyCount_));
  return {};
}

// ---------------------------------------------------------------------------------------------
// Velocity inheritance

InheritedVelocities inheritVelocities(const PoseHistory& history, const HandoffSettings& settings,
                                      std::span<Vec3> rawLinear, std::span<Vec3> rawAngular,
                                      std::span<Vec3> linear, std::span<Vec3> angular,
                                      std::span<std::uint8_t> clamps) {
  const int n = history.bodyCount();
  assert(static_cast<int>(rawLinear.size()) >= n && static_cast<int>(rawAngular.size()) >= n &&
         static_cast<int>(linear.size()) >= n && static_cast<int>(angular.size()) >= n &&
         static_cast<int>(clamps.size()) >= n && "output spans too short");
  InheritedVelocities info;
  std::uint8_t common = kClampNone;
  bool haveVelocity = history.size() >= 2;
  // Across a teleport the body's motion is taken in the root's frame (the pose relative to the
  // root is continuous through the jump: the newest pair, as fresh as without a teleport) plus
  // the root's own motion of the pair before the jump, carried through the root's turn.
  bool acrossJump = false;
  bool rootMotion = false;
  Vec3 rootLinear{0.0}, rootAngular{0.0};
  if (haveVelocity) {
    info.rootJump = glm::length(history.root(0).translation - history.root(1).translation);
    info.teleportFlagged = history.teleport(0);
    if (history.denseAfterTeleport()) {
      // The newest pair was sampled after the flagged jump: a valid velocity. The record still
      // names the jump (between samples 2 and 1), which gives no velocity.
      info.teleportFlagged = true;
      info.rootJump = glm::length(history.root(1).translation - history.root(2).translation);
    } else if (info.teleportFlagged || info.rootJump > settings.teleportDistance) {
      info.teleportDetected = info.rootJump > settings.teleportDistance;
      common |= kClampTeleport;
      // The newest pair spans the jump: use the pair before it, carried through the root's
      // rotation change, or nothing.
      acrossJump = true;
      rootMotion =
          history.size() >= 3 && !history.teleport(1) &&
          glm::length(history.root(1).translation - history.root(2).translation) <= settings.teleportDistance;
      if (rootMotion) {
        const double rootDt = history.time(1) - history.time(2);
        const Quat carry =
            normalizeOrIdentity(history.root(0).rotation * glm::inverse(history.root(1).rotation));
        rootLinear = carry * ((history.root(1).translation - history.root(2).translation) / rootDt);
        rootAngular =
            carry * angularVelocity(history.root(2).rotation, history.root(1).rotation, rootDt).omega;
      }
    }
  } else {
    common |= kClampNoHistory;
  }
  if (haveVelocity) info.sampleDt = history.time(0) - history.time(1);

  for (int b = 0; b < n; ++b) {
    const size_t i = static_cast<size_t>(b);
    Vec3 v{0.0}, w{0.0};
    if (haveVelocity && acrossJump) {
      // v = v_root + w_root x r + R_root v_rel (a point moving in a moving frame).
      const Transform& root0 = history.root(0);
      const Transform rel0 = history.root(1).inverse() * history.body(1, b);
      const Transform rel1 = root0.inverse() * history.body(0, b);
      const Vec3 r = history.body(0, b).translation - root0.translation;
      v = root0.rotation * ((rel1.translation - rel0.translation) / info.sampleDt) + rootLinear +
          glm::cross(rootAngular, r);
      w = root0.rotation * angularVelocity(rel0.rotation, rel1.rotation, info.sampleDt).omega + rootAngular;
    } else if (haveVelocity) {
      const Transform& p0 = history.body(1, b);
      const Transform& p1 = history.body(0, b);
      v = (p1.translation - p0.translation) / info.sampleDt;
      w = angularVelocity(p0.rotation, p1.rotation, info.sampleDt).omega;
    }
    // Raw: the newest pair's difference, what a naive implementation would inherit (for a
    // teleport, the jump that was rejected). Without a teleport it is the pair just differenced.
    if (haveVelocity && !acrossJump) {
      rawLinear[i] = v;
      rawAngular[i] = w;
    } else if (history.size() >= 2) {
      const Transform& p0 = history.body(1, b);
      const Transform& p1 = history.body(0, b);
      const double dt = history.time(0) - history.time(1);
      rawLinear[i] = (p1.translation - p0.translation) / dt;
      rawAngular[i] = angularVelocity(p0.rotation, p1.rotation, dt).omega;
    } else {
      rawLinear[i] = Vec3{0.0};
      rawAngular[i] = Vec3{0.0};
    }
    std::uint8_t reasons = common;
    const double speed = glm::length(v);
    if (speed > settings.maxLinearSpeed) {
      v *= settings.maxLinearSpeed / speed;
      reasons |= kClampLinearLimit;
    }
    const double spin = glm::length(w);
    if (spin > settings.maxAngularSpeed) {
      w *= settings.maxAngularSpeed / spin;
      reasons |= kClampAngularLimit;
    }
    linear[i] = v;
    angular[i] = w;
    clamps[i] = reasons;
  }
  return info;
}

// ---------------------------------------------------------------------------------------------
// Write-back and display blend

void writeBackPose(const Skeleton& skeleton, const RagdollAsset& asset,
                   std::span<const Transform> worldFromBodies, const Transform& worldFromRoot,
                   std::span<const Transform> animatedLocals, std::span<const std::uint8_t> physicsMask,
                   std::span<Transform> scratchModels, std::span<Transform> outLocals) {
  const int n = skeleton.jointCount();
  assert(static_cast<int>(animatedLocals.size()) >= n && static_cast<int>(scratchModels.size()) >= n &&
         static_cast<int>(outLocals.size()) >= n && "pose spans too short");
  assert((physicsMask.empty() || static_cast<int>(physicsMask.size()) >= n) && "mask too short");
  const Transform rootFromWorld = worldFromRoot.inverse();
  for (int j = 0; j < n; ++j) {
    const size_t i = static_cast<size_t>(j);
    const int parent = skeleton.parents[i];
    const int b = asset.bodyForJoint(j);
    const bool physics = b >= 0 && (physicsMask.empty() || physicsMask[i] != 0);
    if (physics) {
      // T_WB = T_WC * inverse(T_BC), then into root space.
      const BodyDef& def = asset.bodies[static_cast<size_t>(b)];
      scratchModels[i] = rootFromWorld * worldFromBodies[static_cast<size_t>(b)] * def.boneFromBody.inverse();
    } else {
      // Rides along: the animated local transform under the (possibly physical) parent.
      scratchModels[i] = parent == kNoParent ? animatedLocals[i]
                                             : scratchModels[static_cast<size_t>(parent)] * animatedLocals[i];
    }
  }
  modelToLocal(skeleton, scratchModels, outLocals);
}

double displayBlendWeight(double timeSinceCommit, double blendTime) {
  if (!(blendTime > 0.0)) return 1.0;
  return std::clamp(timeSinceCommit / blendTime, 0.0, 1.0);
}

// ---------------------------------------------------------------------------------------------
// Ragdoll

namespace {
/// Static contact points per body the commit's velocity step considers.
constexpr int kMaxStaticContactsPerBody = 4;
/// A consistency correction larger than this is recorded as a clamp. [m/s] [rad/s]
constexpr double kCorrectionReported = 1e-3;
/// Static surfaces closer than this (plus what a body covers in one step) are looked at. [m]
constexpr double kStaticContactMargin = 0.005;

// The character capsule stands on the root's ground height under the pelvis (clips whose root
// joint is the pelvis carry their root motion in it), turned with the root's yaw.
Transform capsulePose(const RagdollAsset& asset, const Transform& worldFromRoot,
                      const Transform& rootFromPelvis) {
  const Vec3 pelvis = worldFromRoot.transformPoint(rootFromPelvis.translation);
  const double bottom = worldFromRoot.translation.y;
  return Transform{worldFromRoot.rotation,
                   Vec3{pelvis.x, bottom + asset.capsule.radius + asset.capsule.halfHeight, pelvis.z}};
}
}  // namespace

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
  for (BodyId b : bodies_) world_->destroyBody(b);
  if (capsule_.valid()) world_->destroyBody(capsule_);
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
  for (int b = 0; b < bodyCount(); ++b) {
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

namespace {
/// `x` back to its defaults with `name`, keeping the name's storage (a reused record allocates
/// nothing for names that fit).
template <class T>
void resetNamed(T& x, const std::string& name) {
  static const T kDefaults{};
  x = kDefaults;  // copy-assigning the empty name keeps x.name's storage
  x.name.assign(name);
}
}  // namespace

void Ragdoll::commitBodies(const HandoffSettings& settings, std::span<const std::uint8_t> mask,
                           Authority authority, HandoffRecord& record) {
  const auto selected = [&mask](int b) { return mask.empty() || mask[static_cast<size_t>(b)] != 0; };
  {
    // Every field back to its default; the vectors and strings keep their storage.
    std::vector<BodyHandoff> bodies = std::move(record.bodies);
    std::vector<JointHandoff> joints = std::move(record.joints);
    std::string failure = std::move(record.failure);
    record = HandoffRecord{};
    failure.clear();
    record.failure = std::move(failure);
    record.bodies = std::move(bodies);
    record.joints = std::move(joints);
  }
  // The joints are rewritten (names kept) once the commit gets that far; an abandoned commit
  // reports none.
  struct JointsOnlyIfCommitted {
    HandoffRecord& record;
    ~JointsOnlyIfCommitted() {
      if (!record.committed) record.joints.clear();
    }
  } jointsGuard{record};
  record.mode = settings.mode;
  const int n = bodyCount();
  record.bodies.resize(static_cast<size_t>(n));
  for (int b = 0; b < n; ++b)
    resetNamed(record.bodies[static_cast<size_t>(b)], asset_->bodies[static_cast<size_t>(b)].name);
  if (history_.size() < 1) {
    record.failure = "no animated pose has been set yet";
    return;
  }
  if (!mask.empty() && static_cast<int>(mask.size()) != n) {
    record.failure = "body mask has " + std::to_string(mask.size()) + " entries, the ragdoll " +
                     std::to_string(n) + " bodies";
    return;
  }
  for (int b = 0; b < n; ++b) {
    if (selected(b) && authority_[static_cast<size_t>(b)] != Authority::Animation) {
      record.failure = "body '" + asset_->bodies[static_cast<size_t>(b)].name +
                       "' is not animated (already " + authorityName(authority_[static_cast<size_t>(b)]) +
                       ")";
      return;
    }
  }
  record.time = history_.time(0);
  const InheritedVelocities info =
      inheritVelocities(history_, settings, rawLinear_, rawAngular_, linear_, angular_, clamps_);
  record.teleportFlagged = info.teleportFlagged;
  record.teleportDetected = info.teleportDetected;
  record.rootJump = info.rootJump;
  record.sampleDt = info.sampleDt;

  // 1. Freeze the target pose and velocities, and check all of it before touching the engine.
  for (int b = 0; b < n; ++b) {
    const size_t i = static_cast<size_t>(b);
    BodyHandoff& out = record.bodies[i];
    if (!selected(b)) {
      // Not committed: dynamic bodies keep their state, animated ones stay where they are.
      scratchPoses_[i] = world_->transform(bodies_[i]);
      out.poseBefore = out.poseAfter = scratchPoses_[i];
      out.linearVelocity = world_->linearVelocity(bodies_[i]);
      out.angularVelocity = world_->angularVelocity(bodies_[i]);
      out.keptDynamic = authority_[i] != Authority::Animation;
      continue;
    }
    out.rawLinearVelocity = rawLinear_[i];
    out.rawAngularVelocity = rawAngular_[i];
    out.finiteDifferenceLinearVelocity = linear_[i];
    out.finiteDifferenceAngularVelocity = angular_[i];
    out.clamps = clamps_[i];
    out.teleport = (clamps_[i] & kClampTeleport) != 0;
    switch (settings.mode) {
      case HandoffMode::Inherit:
        scratchPoses_[i] = history_.body(0, b);
        out.linearVelocity = linear_[i];
        out.angularVelocity = angular_[i];
        break;
      case HandoffMode::ZeroVelocity:
        scratchPoses_[i] = history_.body(0, b);
        break;
      case HandoffMode::BindPose:
        scratchPoses_[i] = history_.root(0) * rootFromBodyBind_[i];
        break;
    }
    if (!isFinite(scratchPoses_[i]) || !isFinite(out.linearVelocity) || !isFinite(out.angularVelocity)) {
      record.failure = "body '" + out.name + "' cannot be initialised: its pose or velocity is not finite";
      return;
    }
    if (!bodies_[i].valid()) {
      record.failure = "body '" + out.name + "' has no engine body";
      return;
    }
  }
  for (size_t j = 0; j < joints_.size(); ++j) {
    if (!joints_[j].valid()) {
      record.failure = "joint '" + asset_->joints[j].name + "' has no engine joint";
      return;
    }
  }
  if (settings.mode == HandoffMode::Inherit && (settings.jointConsistency || settings.staticContacts)) {
    makeVelocitiesConsistent(settings, record, mask);
    for (const BodyHandoff& out : record.bodies) {
      if (!isFinite(out.linearVelocity) || !isFinite(out.angularVelocity)) {
        record.failure =
            "body '" + out.name + "' cannot be initialised: its consistent velocity is not finite";
        return;
      }
    }
  }

  // 2. One write phase: poses (snapped where the engine disagrees), velocities, filters; then all
  //    bodies dynamic together, joint warm starts cleared, the capsule off.
  // The angle test's atan2 only near the tolerance: the half angle's tangent, |d.xyz| / |d.w| of
  // d = conj(a) b, below tan(tolerance / 2) by more than rounding is within it.
  const double tanHalfTolerance = settings.angleTolerance > 0.0 && settings.angleTolerance < 3.0
                                      ? std::tan(0.5 * settings.angleTolerance) * (1.0 - 1e-9)
                                      : -1.0;
  const auto turnedPast = [&](const Quat& a, const Quat& b) {
    const Quat d = glm::conjugate(a) * b;
    if (glm::length(Vec3{d.x, d.y, d.z}) < std::abs(d.w) * tanHalfTolerance) return false;
    return angleBetween(a, b) > settings.angleTolerance;
  };
  for (int b = 0; b < n; ++b) {
    if (!selected(b)) continue;
    const size_t i = static_cast<size_t>(b);
    BodyHandoff& out = record.bodies[i];
    const BodyId id = bodies_[i];
    out.poseBefore = world_->transform(id);
    const Transform& target = scratchPoses_[i];
    if (glm::length(out.poseBefore.translation - target.translation) > settings.poseTolerance ||
        turnedPast(out.poseBefore.rotation, target.rotation)) {
      world_->setTransform(id, target);
      out.snapped = true;
    }
    world_->setCollisionFilter(id, asset_->bodies[i].filter);
    world_->setLinearVelocity(id, out.linearVelocity);
    world_->setAngularVelocity(id, out.angularVelocity);
  }
  const double lookAhead = limitLookAheadFor(settings);
  limitLookAhead_ = std::isfinite(lookAhead) ? std::max(lookAhead, 0.0) : 0.0;
  setJointsForPose(record, mask);
  for (int b = 0; b < n; ++b) {
    if (!selected(b)) continue;
    world_->setMotionType(bodies_[static_cast<size_t>(b)], MotionType::Dynamic);
    authority_[static_cast<size_t>(b)] = authority;
  }
  for (int b = 0; b < n; ++b) {
    if (!selected(b)) continue;
    // Velocities again after the switch: an engine may clear them when mass properties change.
    world_->setLinearVelocity(bodies_[static_cast<size_t>(b)],
                              record.bodies[static_cast<size_t>(b)].linearVelocity);
    world_->setAngularVelocity(bodies_[static_cast<size_t>(b)],
                               record.bodies[static_cast<size_t>(b)].angularVelocity);
  }
  size_t resetCount = 0;
  for (size_t j = 0; j < joints_.size(); ++j) {
    if (selected(asset_->joints[j].parentBody) || selected(asset_->joints[j].childBody))
      scratchJoints_[resetCount++] = joints_[j];
  }
  world_->resetWarmStarts(std::span<const JointId>(scratchJoints_.data(), resetCount));
  world_->setEnabled(capsule_, false);
  for (int b = 0; b < n; ++b) {
    if (!selected(b)) continue;
    record.bodies[static_cast<size_t>(b)].poseAfter = world_->transform(bodies_[static_cast<size_t>(b)]);
  }
  record.committed = true;
}

void Ragdoll::makeVelocitiesConsistent(const HandoffSettings& settings, HandoffRecord& record,
                                       std::span<const std::uint8_t> mask) {
  // Bodies outside the mask keep their velocities: for the projector they have infinite mass,
  // so the joints to them correct only the committed side (and momentum is then not conserved:
  // the fixed bodies act from outside).
  const auto selected = [&mask](int b) { return mask.empty() || mask[static_cast<size_t>(b)] != 0; };
  const int n = bodyCount();
  for (int b = 0; b < n; ++b) {
    const size_t i = static_cast<size_t>(b);
    const BodyDef& def = asset_->bodies[i];
    const Transform& pose = scratchPoses_[i];
    Vec3 inertia = def.inertia;
    if (!(inertia.x > 0.0 && inertia.y > 0.0 && inertia.z > 0.0))
      inertia = shapePrincipalInertia(def.shape, def.mass);
    const glm::dmat3 rotation = glm::mat3_cast(pose.rotation);
    const glm::dmat3 inverseLocal(Vec3{1.0 / inertia.x, 0.0, 0.0}, Vec3{0.0, 1.0 / inertia.y, 0.0},
                                  Vec3{0.0, 0.0, 1.0 / inertia.z});
    ConsistencyBody& body = consistencyBodies_[i];
    body.inverseMass = selected(b) ? 1.0 / def.mass : 0.0;
    body.inverseInertia = selected(b) ? rotation * inverseLocal * glm::transpose(rotation) : glm::dmat3(0.0);
    body.centre = pose.translation;
    linear_[i] = record.bodies[i].linearVelocity;
    angular_[i] = record.bodies[i].angularVelocity;
  }
  consistencyJoints_.clear();
  if (settings.jointConsistency) {
    for (size_t j = 0; j < asset_->joints.size(); ++j) {
      const JointDef& def = asset_->joints[j];
      if (!selected(def.parentBody) && !selected(def.childBody)) continue;  // keeps its state
      if (broken_[j]) continue;                                             // holds nothing together
      ConsistencyJoint joint;
      joint.parent = def.parentBody;
      joint.child = def.childBody;
      const Transform& worldFromA = scratchPoses_[static_cast<size_t>(def.parentBody)];
      const Transform worldFromJointB =
          scratchPoses_[static_cast<size_t>(def.childBody)] * def.bodyBFromJoint;
      joint.anchor = worldFromJointB.translation;  // where setJointsForPose anchors it
      std::uint8_t locked = 0;
      for (int axis = 0; axis < 3; ++axis) {
        if (def.preset.angularLower[axis] == def.preset.angularUpper[axis])
          locked |= static_cast<std::uint8_t>(1u << axis);
      }
      joint.lockedCount = lockedAxisRows(worldFromA.rotation * def.bodyAFromJoint.rotation,
                                         worldFromJointB.rotation, locked, joint.lockedAxes);
      consistencyJoints_.push_back(joint);
    }
  }
  consistencyContacts_.clear();
  if (settings.staticContacts) {
    // Points of each body that could reach static geometry within the look-ahead at its speed.
    SurfacePoint points[kMaxStaticContactsPerBody];
    for (int b = 0; b < n; ++b) {
      if (!selected(b)) continue;
      const size_t i = static_cast<size_t>(b);
      const ShapeDesc& shape = asset_->bodies[i].shape;
      const double extent = std::max({shape.radius + shape.halfHeight, glm::length(shape.halfExtents)});
      const double reach = kStaticContactMargin + stepTimeFor(settings) * (glm::length(linear_[i]) +
                                                                           glm::length(angular_[i]) * extent);
      const int found =
          world_->closestPoints(bodies_[i], scratchPoses_[i], reach, settings.staticContactMask, points);
      for (int k = 0; k < found; ++k) {
        ConsistencyContact contact;
        contact.body = b;
        contact.point = points[k].point;
        contact.normal = points[k].normal;
        contact.distance = points[k].distance;
        consistencyContacts_.push_back(contact);
      }
    }
  }
  const VelocityProjector::Outcome outcome =
      projector_.project(consistencyBodies_, consistencyJoints_, consistencyContacts_, stepTimeFor(settings),
                         linear_, angular_, jointLinear_, jointAngular_, contactLinear_, contactAngular_);
  record.staticContacts = outcome.contactsUsed;
  record.consistencyResidual = outcome.residual;
  for (int b = 0; b < n; ++b) {
    if (!selected(b)) continue;
    const size_t i = static_cast<size_t>(b);
    BodyHandoff& out = record.bodies[i];
    out.jointLinearCorrection = jointLinear_[i];
    out.jointAngularCorrection = jointAngular_[i];
    out.contactLinearCorrection = contactLinear_[i];
    out.contactAngularCorrection = contactAngular_[i];
    out.linearVelocity = linear_[i];
    out.angularVelocity = angular_[i];
    if (glm::length(jointLinear_[i]) > kCorrectionReported ||
        glm::length(jointAngular_[i]) > kCorrectionReported) {
      out.clamps |= kClampJointConsistency;
    }
    if (glm::length(contactLinear_[i]) > kCorrectionReported ||
        glm::length(contactAngular_[i]) > kCorrectionReported) {
      out.clamps |= kClampStaticContact;
    }
  }
}

Status Ragdoll::addDenseSample(double time, const Transform& worldFromRoot,
                               std::span<const Transform> models) {
  if (static_cast<int>(models.size()) < jointCountNeeded_) return Error{"the model pose has too few joints"};
  if (!isFinite(worldFromRoot)) return Error{"root transform is not finite"};
  for (int b = 0; b < bodyCount(); ++b) {
    const BodyDef& def = asset_->bodies[static_cast<size_t>(b)];
    const Transform& model = models[static_cast<size_t>(def.joint)];
    if (!isFinite(model)) return Error{"bone '" + def.name + "' pose is not finite"};
    scratchPoses_[static_cast<size_t>(b)] = worldFromRoot * model * def.boneFromBody;
  }
  return history_.insertBeforeNewest(time, worldFromRoot, scratchPoses_);
}

HandoffRecord Ragdoll::commitAt(const HandoffSettings& settings, double time, const Transform& worldFromRoot,
                                std::span<const Transform> models, bool teleport) {
  auto fail = [&](std::string why) {
    HandoffRecord record;
    record.mode = settings.mode;
    record.time = time;
    record.failure = std::move(why);
    record.bodies.resize(asset_->bodies.size());
    for (size_t b = 0; b < asset_->bodies.size(); ++b) record.bodies[b].name = asset_->bodies[b].name;
    return record;
  };
  if (static_cast<int>(models.size()) < jointCountNeeded_) return fail("the model pose has too few joints");
  if (!isFinite(worldFromRoot)) return fail("the root transform is not finite");
  for (const BodyDef& def : asset_->bodies) {
    if (!isFinite(models[static_cast<size_t>(def.joint)])) {
      return fail("body '" + def.name + "' cannot be initialised: bone '" + def.name +
                  "' pose is not finite");
    }
  }
  if (history_.size() == 0 || time > history_.time(0)) {
    for (int b = 0; b < bodyCount(); ++b) {
      const BodyDef& def = asset_->bodies[static_cast<size_t>(b)];
      scratchPoses_[static_cast<size_t>(b)] =
          worldFromRoot * models[static_cast<size_t>(def.joint)] * def.boneFromBody;
    }
    if (Status s = history_.push(time, worldFromRoot, scratchPoses_, teleport || teleportNext_); !s) {
      return fail(s.error());
    }
    teleportNext_ = false;
    worldFromRoot_ = worldFromRoot;
  }
  return commit(settings);
}

namespace {
constexpr double kLimitMargin = 0.02;             // [rad] room kept around an out-of-limit angle
constexpr double kContactMargin = 0.005;          // [m] pairs closer than this at the commit are suspended
constexpr double kContactLookAhead = 1.0 / 60.0;  // [s] ... or that their speeds close within a frame
constexpr double kBulletMiddleAxisMax = kPi / 2 - 1e-3;  // Euler Y must stay inside +-pi/2

/// The joint's angles now and after `lookAhead` at its relative angular velocity `omegaInA` (in
/// A's joint frame), each "ahead" angle unwrapped next to its current one. The Euler rates are
/// not the components of omegaInA, so the angles are taken from the rotated frame: but only when
/// an ahead angle could reach past a limit axis's [lower, upper] less kLimitMargin
/// (jointAngleReach); otherwise `ahead` is `now`, which widens the limits exactly as the ahead
/// angles would (not at all).
void anglesNowAndAhead(const Quat& aFromB, const Vec3& omegaInA, double lookAhead, const Vec3& lower,
                       const Vec3& upper, Vec3& now, Vec3& ahead) {
  now = jointAngles(aFromB);
  const Vec3 reach = jointAngleReach(now, glm::length(omegaInA) * lookAhead);
  constexpr double kRounding = 1e-9;  // [rad] the bound's own rounding, and that of the angles
  bool mayWiden = false;
  for (int axis = 0; axis < 3; ++axis) {
    if (!(lower[axis] < upper[axis])) continue;
    // false for an infinite reach: then the ahead angles are taken
    mayWiden = mayWiden || !(now[axis] - reach[axis] - kLimitMargin >= lower[axis] + kRounding) ||
               !(now[axis] + reach[axis] + kLimitMargin <= upper[axis] - kRounding);
  }
  if (!mayWiden) {
    ahead = now;
    return;
  }
  const Vec3 later = jointAngles(fromRotationVector(omegaInA * lookAhead) * aFromB);
  for (int axis = 0; axis < 3; ++axis)
    ahead[axis] = now[axis] + std::remainder(later[axis] - now[axis], 2.0 * kPi);
}
}  // namespace

void Ragdoll::setJointsForPose(HandoffRecord& record, std::span<const std::uint8_t> mask) {
  const auto selected = [&mask](int b) { return mask.empty() || mask[static_cast<size_t>(b)] != 0; };
  record.joints.resize(joints_.size());
  for (size_t j = 0; j < joints_.size(); ++j) {
    const JointDef& def = asset_->joints[j];
    JointHandoff& out = record.joints[j];
    resetNamed(out, def.name);
    // Joints between bodies not committed now keep their frames and limits; so do broken ones.
    if ((!selected(def.parentBody) && !selected(def.childBody)) || broken_[j]) {
      out.lower = lower_[j];
      out.upper = upper_[j];
      continue;
    }
    const Transform& worldFromA = scratchPoses_[static_cast<size_t>(def.parentBody)];
    const Transform worldFromJointB = scratchPoses_[static_cast<size_t>(def.childBody)] * def.bodyBFromJoint;
    // Anchor: where the child joint is now, in the parent body (rotation of the frame kept, so
    // the limits keep their meaning).
    Transform aFromJoint = def.bodyAFromJoint;
    aFromJoint.translation = worldFromA.inverse().transformPoint(worldFromJointB.translation);
    out.anchorGap = glm::length(aFromJoint.translation - def.bodyAFromJoint.translation);
    world_->setJointFrames(joints_[j], aFromJoint, def.bodyBFromJoint);
    // Limits: the committed pose must be inside them, or the solver pops it back. And a joint
    // moving toward a limit gets the room its motion needs over HandoffSettings::limitLookAhead.
    const Quat jointAFromWorld = glm::inverse(worldFromA.rotation * aFromJoint.rotation);
    const Quat aFromB = jointAFromWorld * worldFromJointB.rotation;
    const Vec3& lo = def.preset.angularLower;
    const Vec3& hi = def.preset.angularUpper;
    Vec3 ahead{0.0};  // read only on limited axes
    if (lo.x < hi.x || lo.y < hi.y || lo.z < hi.z) {
      const Vec3 relativeOmega =
          jointAFromWorld * (record.bodies[static_cast<size_t>(def.childBody)].angularVelocity -
                             record.bodies[static_cast<size_t>(def.parentBody)].angularVelocity);
      anglesNowAndAhead(aFromB, relativeOmega, limitLookAhead_, lo, hi, out.angles, ahead);
    } else {
      out.angles = jointAngles(aFromB);
    }
    for (int axis = 0; axis < 3; ++axis) {
      const double a = out.angles[axis];
      if (lo[axis] == hi[axis]) {
        out.lower[axis] = out.upper[axis] = a;  // locked where the animation holds it
        if (std::abs(a - lo[axis]) > 1e-6) out.lockedOffAxes |= static_cast<std::uint8_t>(1u << axis);
      } else if (lo[axis] > hi[axis]) {
        out.lower[axis] = lo[axis];  // free axis
        out.upper[axis] = hi[axis];
      } else {
        out.lower[axis] = std::min({lo[axis], a - kLimitMargin, ahead[axis] - kLimitMargin});
        out.upper[axis] = std::max({hi[axis], a + kLimitMargin, ahead[axis] + kLimitMargin});
        if (out.lower[axis] != lo[axis] || out.upper[axis] != hi[axis]) {
          out.widenedAxes |= static_cast<std::uint8_t>(1u << axis);
        }
      }
    }
    if (lo.y <= hi.y) {
      out.lower.y = std::max(out.lower.y, -kBulletMiddleAxisMax);
      out.upper.y = std::min(out.upper.y, kBulletMiddleAxisMax);
    }
    lower_[j] = out.lower;
    upper_[j] = out.upper;
    world_->setJointLimits(joints_[j], out.lower, out.upper);
  }
  // Non-adjacent bodies touching in the committed pose (an arm against the chest, the thighs):
  // colliding would push them apart in the first step. Their collision waits until they separate.
  // With internal collisions off no pair collides: nothing to suspend.
  suspendedCount_ = 0;
  if (internalCollisions_) {
    for (size_t b = 0; b < scratchBounds_.size(); ++b) {
      scratchBounds_[b] = placeBoundingCapsule(asset_->bodies[b].shape, scratchPoses_[b]);
      scratchSpeeds_[b] = glm::length(record.bodies[b].linearVelocity);
    }
  }
  for (size_t p = 0; p < nonAdjacentPairs_.size(); ++p) {
    const auto [a, b] = nonAdjacentPairs_[p];
    if (!selected(a) && !selected(b)) {
      suspendedCount_ += suspended_[p];
      continue;
    }
    const auto ia = static_cast<size_t>(a), ib = static_cast<size_t>(b);
    const bool touch =
        internalCollisions_ && pairsTouching(a, b, scratchPoses_[ia], scratchPoses_[ib], scratchSpeeds_[ia],
                                             scratchSpeeds_[ib], &scratchBounds_[ia], &scratchBounds_[ib]);
    suspended_[p] = touch ? 1 : 0;
    suspendedCount_ += touch ? 1 : 0;
    applyPairCollision(p);
  }
  record.suspendedPairs = suspendedCount_;
  record.internalCollisions = internalCollisions_;
}

bool Ragdoll::pairsTouching(int a, int b, const Transform& worldFromA, const Transform& worldFromB,
                            double speedA, double speedB, const PlacedBoundingCapsule* boundsA,
                            const PlacedBoundingCapsule* boundsB) const {
  // Touching, or closing faster than one frame can resolve without a push.
  const double reach = kContactMargin + kContactLookAhead * (speedA + speedB);
  // Quick rejections with the same answer (surfaces at least `reach` apart): the bounding
  // spheres, then the bounding capsules (most pairs, a hand and a foot, never reach the exact
  // distance). The margin keeps the rounding of the bound from deciding a pair at the reach.
  constexpr double kBoundMargin = 1e-9;  // [m]
  const double radii = boundingRadius_[static_cast<size_t>(a)] + boundingRadius_[static_cast<size_t>(b)];
  const Vec3 between = worldFromA.translation - worldFromB.translation;
  const double centres2 = glm::dot(between, between);
  // Far apart by more than rounding: the test below says the same, without its square root.
  const double farther = (radii + reach + kBoundMargin) * (1.0 + 1e-12);
  if (centres2 > farther * farther) return false;
  const double centres = std::sqrt(centres2);
  if (centres - boundingRadius_[static_cast<size_t>(a)] - boundingRadius_[static_cast<size_t>(b)] >=
      reach + kBoundMargin)
    return false;
  const ShapeDesc& shapeA = asset_->bodies[static_cast<size_t>(a)].shape;
  const ShapeDesc& shapeB = asset_->bodies[static_cast<size_t>(b)].shape;
  const double bound = boundsA && boundsB ? boundingCapsuleDistance(*boundsA, *boundsB)
                                          : shapeDistanceLowerBound(shapeA, worldFromA, shapeB, worldFromB);
  if (bound >= reach + kBoundMargin) return false;
  return shapeSurfaceDistance(shapeA, worldFromA, shapeB, worldFromB) < reach;
}

void Ragdoll::applyPairCollision(size_t pair) {
  const std::uint8_t want = internalCollisions_ && !suspended_[pair] ? 1 : 0;
  if (want == pairColliding_[pair]) return;
  const auto [a, b] = nonAdjacentPairs_[pair];
  world_->setPairCollision(bodies_[static_cast<size_t>(a)], bodies_[static_cast<size_t>(b)], want != 0);
  pairColliding_[pair] = want;
}

void Ragdoll::setInternalCollisions(bool enabled) {
  if (enabled == internalCollisions_) return;
  internalCollisions_ = enabled;
  suspendedCount_ = 0;
  for (size_t p = 0; p < nonAdjacentPairs_.size(); ++p) {
    bool touch = false;
    if (enabled) {
      // Limbs that passed into each other while they ignored each other separate first.
      const auto [a, b] = nonAdjacentPairs_[p];
      const BodyId ia = bodies_[static_cast<size_t>(a)], ib = bodies_[static_cast<size_t>(b)];
      touch = pairsTouching(a, b, world_->transform(ia), world_->transform(ib),
                            glm::length(world_->linearVelocity(ia)), glm::length(world_->linearVelocity(ib)));
    }
    suspended_[p] = touch ? 1 : 0;
    suspendedCount_ += touch ? 1 : 0;
    applyPairCollision(p);
  }
}

int Ragdoll::collidingPairCount() const {
  return static_cast<int>(std::count(pairColliding_.begin(), pairColliding_.end(), std::uint8_t{1}));
}

void Ragdoll::updateLimits() {
  if (suspendedCount_ > 0) {
    for (size_t p = 0; p < nonAdjacentPairs_.size(); ++p) {
      if (!suspended_[p]) continue;
      const auto [a, b] = nonAdjacentPairs_[p];
      const BodyId ia = bodies_[static_cast<size_t>(a)], ib = bodies_[static_cast<size_t>(b)];
      if (!pairsTouching(a, b, world_->transform(ia), world_->transform(ib),
                         glm::length(world_->linearVelocity(ia)), glm::length(world_->linearVelocity(ib)))) {
        suspended_[p] = 0;
        --suspendedCount_;
        applyPairCollision(p);
      }
    }
  }
  for (size_t j = 0; j < joints_.size(); ++j) {
    if (broken_[j]) continue;
    const JointPreset& preset = asset_->joints[j].preset;
    Vec3 lower = lower_[j], upper = upper_[j];
    bool changed = false;
    bool needAngles = false;
    for (int axis = 0; axis < 3; ++axis) {
      const bool open = preset.angularLower[axis] < preset.angularUpper[axis];
      if (open && (lower[axis] < preset.angularLower[axis] || upper[axis] > preset.angularUpper[axis])) {
        needAngles = true;
      }
    }
    if (!needAngles) continue;
    const Vec3 angles = jointAngles(world_->jointRelativeRotation(joints_[j]));
    for (int axis = 0; axis < 3; ++axis) {
      if (!(preset.angularLower[axis] < preset.angularUpper[axis])) continue;
      // Tighten toward the asset's limit, never past the current angle.
      const double newLower =
          std::max(lower[axis], std::min(preset.angularLower[axis], angles[axis] - kLimitMargin));
      const double newUpper =
          std::min(upper[axis], std::max(preset.angularUpper[axis], angles[axis] + kLimitMargin));
      if (newLower != lower[axis] || newUpper != upper[axis]) changed = true;
      lower[axis] = newLower;
      upper[axis] = newUpper;
    }
    if (changed) {
      lower_[j] = lower;
      upper_[j] = upper;
      world_->setJointLimits(joints_[j], lower, upper);
    }
  }
}

void Ragdoll::recordFirstStep(HandoffRecord& record) const {
  if (!record.committed) return;
  for (int b = 0; b < bodyCount() && b < static_cast<int>(record.bodies.size()); ++b) {
    BodyHandoff& out = record.bodies[static_cast<size_t>(b)];
    const BodyId id = bodies_[static_cast<size_t>(b)];
    out.poseAfterFirstStep = world_->transform(id);
    out.linearVelocityAfterFirstStep = world_->linearVelocity(id);
    out.angularVelocityAfterFirstStep = world_->angularVelocity(id);
    out.firstStepRecorded = true;
  }
}

void FirstSubstepProbe::record(double substepDt) {
  if (!record_->committed || record_->firstSubstepTime > 0.0) return;
  const PhysicsWorld& world = ragdoll_->world();
  for (int b = 0; b < ragdoll_->bodyCount() && b < static_cast<int>(record_->bodies.size()); ++b) {
    BodyHandoff& out = record_->bodies[static_cast<size_t>(b)];
    const BodyId id = ragdoll_->body(b);
    out.poseAfterFirstSubstep = world.transform(id);
    out.linearVelocityAfterFirstSubstep = world.linearVelocity(id);
    out.angularVelocityAfterFirstSubstep = world.angularVelocity(id);
    out.firstSubstepRecorded = true;
  }
  record_->firstSubstepTime = substepDt;
}

void FirstSubstepProbe::onSubstep(double substepDt) {
  // Called before each substep's solve: the second call sees the state the first one left.
  if (calls_ == 0) firstSubstep_ = substepDt;
  if (calls_ == 1) record(firstSubstep_);
  ++calls_;
}

void FirstSubstepProbe::finish() {
  if (calls_ == 1) record(firstSubstep_);
}

void Ragdoll::readBodyPoses(std::span<Transform> worldFromBodies) const {
  assert(static_cast<int>(worldFromBodies.size()) >= bodyCount() && "output span too short");
  for (int b = 0; b < bodyCount(); ++b) {
    worldFromBodies[static_cast<size_t>(b)] = world_->transform(bodies_[static_cast<size_t>(b)]);
  }
}

double Ragdoll::maxJointSeparation() const {
  double worst = 0.0;
  for (size_t j = 0; j < joints_.size(); ++j) {
    if (broken_[j]) continue;
    const JointDef& def = asset_->joints[j];
    if (authority(def.parentBody) == Authority::Animation && authority(def.childBody) == Authority::Animation)
      continue;
    worst = std::max(worst, world_->jointAnchorSeparation(joints_[j]));
  }
  return worst;
}

int Ragdoll::updateBreaks(double stepEndTime, double dt) {
  int count = 0;
  const int substeps = std::max(1, world_->lastStepStats().substeps);
  for (const int j : breakableJoints_) {
    const size_t i = static_cast<size_t>(j);
    if (broken_[i]) continue;
    const JointBreakState state = world_->jointBreakState(joints_[i]);
    if (!state.broken) continue;
    broken_[i] = 1;
    JointBreak b;
    b.joint = j;
    // Broken in an earlier step (not seen then): counted at the end of this one.
    const int substep = state.substep >= 0 ? std::min(state.substep, substeps - 1) : substeps - 1;
    b.time = stepEndTime - dt + dt * (substep + 1) / substeps;
    b.force = state.force;
    b.torque = state.torque;
    breaks_.push_back(b);  // within the reserved room
    ++count;
  }
  return count;
}

const char* motorOwnerName(MotorOwner owner) {
  switch (owner) {
    case MotorOwner::None:
      return "none";
    case MotorOwner::Damper:
      return "damper";
    case MotorOwner::Gather:
      return "gather";
    case MotorOwner::Drive:
      return "drive";
  }
  return "?";
}

bool Ragdoll::acquireMotors(MotorOwner owner) {
  assert(owner != MotorOwner::None && "acquireMotors: no owner");
  for (const MotorOwner held : motorOwners_) {
    if (held != MotorOwner::None && held != owner) {
      ++refusedMotorRequests_;
      return false;
    }
  }
  std::fill(motorOwners_.begin(), motorOwners_.end(), owner);
  return true;
}

void Ragdoll::releaseMotors(MotorOwner owner) {
  for (size_t j = 0; j < motorOwners_.size(); ++j) {
    if (motorOwners_[j] != owner || owner == MotorOwner::None) continue;
    world_->setJointMotor(joints_[j], JointMotorSettings{});
    motorOn_[j] = 0;
    motorOwners_[j] = MotorOwner::None;
  }
}

bool Ragdoll::setJointMotor(int index, MotorOwner owner, const JointMotorSettings& motor) {
  const size_t j = static_cast<size_t>(index);
  if (owner == MotorOwner::None || motorOwners_[j] != owner) {
    ++refusedMotorRequests_;
    return false;
  }
  world_->setJointMotor(joints_[j], motor);
  motorOn_[j] = motor.enabled ? 1 : 0;
  return true;
}

void Ragdoll::resetBodies(std::span<const Transform> worldFromBodies) {
  assert(static_cast<int>(worldFromBodies.size()) == bodyCount() && "resetBodies: one pose per body");
  for (size_t b = 0; b < bodies_.size(); ++b) {
    world_->setTransform(bodies_[b], worldFromBodies[b]);
    world_->setLinearVelocity(bodies_[b], Vec3{0.0});
    world_->setAngularVelocity(bodies_[b], Vec3{0.0});
    if (!world_->isEnabled(bodies_[b])) world_->setEnabled(bodies_[b], true);
  }
  for (const JointId joint : joints_) world_->resetWarmStart(joint);
}

void Ragdoll::carryDynamicBodies(const Transform& jump) {
  for (size_t b = 0; b < bodies_.size(); ++b) {
    if (authority_[b] == Authority::Animation) continue;
    const BodyId body = bodies_[b];
    world_->setTransform(body, jump * world_->transform(body));
    world_->setLinearVelocity(body, jump.rotation * world_->linearVelocity(body));
    world_->setAngularVelocity(body, jump.rotation * world_->angularVelocity(body));
  }
}

void Ragdoll::applyImpulse(int index, const Vec3& impulse, const Vec3& worldPoint) {
  world_->applyLinearImpulse(bodies_[static_cast<size_t>(index)], impulse, worldPoint);
}

void Ragdoll::setCollisionWith(BodyId other, int index, bool enabled) {
  world_->setPairCollision(other, index < bodyCount() ? bodies_[static_cast<size_t>(index)] : capsule_,
                           enabled);
}

void Ragdoll::wakeBodies() {
  for (const BodyId body : bodies_) world_->wake(body);
}

void Ragdoll::placeCapsule(const Transform& worldFromCapsule) {
  world_->setTransform(capsule_, worldFromCapsule);
}

void Ragdoll::moveCapsule(const Transform& worldFromCapsule, double dt) {
  world_->moveKinematic(capsule_, worldFromCapsule, dt);
}

void Ragdoll::makeAnimated(bool blocking) {
  for (int b = 0; b < bodyCount(); ++b) {
    world_->setMotionType(bodies_[static_cast<size_t>(b)], MotionType::Kinematic);
    world_->setLinearVelocity(bodies_[static_cast<size_t>(b)], Vec3{0.0});
    world_->setAngularVelocity(bodies_[static_cast<size_t>(b)], Vec3{0.0});
    authority_[static_cast<size_t>(b)] = Authority::Animation;
  }
  setBlocking(blocking);
  world_->setEnabled(capsule_, true);
  history_.clear();
  teleportNext_ = true;
}

void Ragdoll::setDynamicAuthority(Authority authority) {
  for (Authority& a : authority_) {
    if (a != Authority::Animation) a = authority;
  }
}

void Ragdoll::makeBodiesAnimated(std::span<const std::uint8_t> mask) {
  assert(static_cast<int>(mask.size()) == bodyCount() && "makeBodiesAnimated: mask size");
  for (int b = 0; b < bodyCount() && b < static_cast<int>(mask.size()); ++b) {
    const size_t i = static_cast<size_t>(b);
    if (!mask[i] || authority_[i] == Authority::Animation) continue;
    world_->setMotionType(bodies_[i], MotionType::Kinematic);
    world_->setLinearVelocity(bodies_[i], Vec3{0.0});
    world_->setAngularVelocity(bodies_[i], Vec3{0.0});
    authority_[i] = Authority::Animation;
  }
}

void Ragdoll::setBlocking(bool blocking) {
  for (int b = 0; b < bodyCount(); ++b) {
    const CollisionFilter filter =
        blocking ? asset_->bodies[static_cast<size_t>(b)].filter : CollisionFilter{layers::kRagdoll, 0u};
    world_->setCollisionFilter(bodies_[static_cast<size_t>(b)], filter);
  }
}

}  // namespace handoff
