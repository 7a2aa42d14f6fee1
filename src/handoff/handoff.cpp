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
  if (reasons & kClampPenetration) add("penetration (pushed out by position)");
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

}  // namespace handoff
