// Ragdoll::commitBodies: the handoff from animation to physics (joints for the pose, velocities,
// suspended pairs), and the limits eased back after it (updateLimits).
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

using ragdoll_detail::kCorrectionReported;
using ragdoll_detail::kMaxStaticContactsPerBody;
using ragdoll_detail::kStaticContactMargin;

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
      // Not committed: dynamic bodies keep their state, animated ones stay where they are and
      // move on with the animation (out of the simulation: at the newest animated pose, where the
      // write phase puts them back, at the animation's velocity, the kinematic move's).
      scratchPoses_[i] = bodyPose(b);
      out.linearVelocity = capsuleOnly_ ? linear_[i] : world_->linearVelocity(bodies_[i]);
      out.angularVelocity = capsuleOnly_ ? angular_[i] : world_->angularVelocity(bodies_[i]);
      out.poseBefore = out.poseAfter = scratchPoses_[i];
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
  // Capsule only: every body back in the simulation at the newest animated pose first, as the
  // kinematic bodies would have been (the snap test below then sees the same poses).
  leaveCapsuleOnly();
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
  // Bodies inside static geometry deeper than they can leave in a step at the depenetration
  // speed: pushed out by position (HandoffSettings::maxDepenetrationSpeed), for twice the time
  // that takes (the joints hold the push back); deeper after that, something presses them in.
  const double speed = settings.maxDepenetrationSpeed;
  const double deepAllowed = speed * stepTimeFor(settings);
  for (int b = 0; b < n; ++b) {
    if (!selected(b)) continue;
    BodyHandoff& out = record.bodies[static_cast<size_t>(b)];
    if (speed > 0.0 && out.penetration > deepAllowed &&
        world_->limitDepenetration(bodies_[static_cast<size_t>(b)], speed, 2.0 * out.penetration / speed)) {
      out.clamps |= kClampPenetration;
      record.depenetrationSpeed = speed;
    }
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
        record.bodies[i].penetration = std::max(record.bodies[i].penetration, -points[k].distance);
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
/// `angle` [rad] (as jointAngles gives it, within +-pi) or angle +- 2 pi: the one inside
/// [lower, upper], else the one nearest that window; `angle` itself on a tie.
double unwrappedIntoWindow(double angle, double lower, double upper) {
  const auto outside = [lower, upper](double a) { return std::max({0.0, lower - a, a - upper}); };
  double best = angle;
  for (const double candidate : {angle - 2.0 * kPi, angle + 2.0 * kPi}) {
    if (outside(candidate) < outside(best)) best = candidate;
  }
  return best;
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
  if (enabled) leaveCapsuleOnly();  // the touching test below reads the bodies' poses
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
      // The engine's angle wraps at +-pi; a widened window may reach past it (a shoulder turning
      // through pi at the commit: [-0.9, 4.03]). Taken wrapped, -3.13 would tighten that window
      // to [-0.9, 0.9] with the joint at 3.15, and the solver would throw the arm back (the
      // salsa corpus clip: +700 J in 6 substeps). The angle is the one of a +-2 pi k inside the
      // window, or nearest it.
      const double angle = unwrappedIntoWindow(angles[axis], lower[axis], upper[axis]);
      // Tighten toward the asset's limit, never past the current angle.
      const double newLower =
          std::max(lower[axis], std::min(preset.angularLower[axis], angle - kLimitMargin));
      const double newUpper =
          std::min(upper[axis], std::max(preset.angularUpper[axis], angle + kLimitMargin));
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

}  // namespace handoff
