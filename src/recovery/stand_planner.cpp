// Stand planner: finds standable ground for the character capsule through PhysicsWorld queries
// (SPEC.md section 4: "a capsule query moves the root to a standable spot; if it is blocked,
// delay the recovery or choose another pose").
#include "handoff/recovery.h"

#include <cmath>

namespace handoff {
namespace {

struct SpotResult {
  StandReason reason = StandReason::Clear;
  Transform worldFromRoot;
  double groundHeight = 0.0;
  Vec3 groundNormal{0.0};
};

bool settingsValid(const StandPlannerSettings& s, const CapsuleDef& capsule) {
  const auto nonNegative = [](double x) { return std::isfinite(x) && x >= 0.0; };
  return nonNegative(s.probeAbove) && std::isfinite(s.probeBelow) && s.probeBelow > 0.0 &&
         nonNegative(s.skin) && std::isfinite(s.maxSlope) && s.maxSlope >= 0.0 && s.maxSlope < kPi / 2 &&
         s.ringCount >= 0 && s.candidatesPerRing >= 1 && std::isfinite(s.ringSpacing) &&
         s.ringSpacing > 0.0 && std::isfinite(capsule.radius) && capsule.radius > 0.0 &&
         nonNegative(capsule.halfHeight);
}

/// Tests one spot: ground under it, reachable from `reachFrom`, capsule free.
SpotResult testSpot(const PhysicsWorld& world, const Transform& proposedRoot, const Vec3& spot,
                    const Vec3& reachFrom, const CapsuleDef& capsule, const StandPlannerSettings& settings) {
  SpotResult r;
  const Vec3 from{spot.x, proposedRoot.translation.y + settings.probeAbove, spot.z};
  const Vec3 to{spot.x, proposedRoot.translation.y - settings.probeBelow, spot.z};
  Vec3 normal{0.0};
  const double fraction = world.rayCast(from, to, settings.groundMask, &normal);
  if (!(fraction < 1.0)) {
    r.reason = StandReason::NoGround;
    return r;
  }
  r.groundHeight = from.y + fraction * (to.y - from.y);
  const double normalLength = glm::length(normal);
  r.groundNormal = normalLength > 0.0 ? normal / normalLength : Vec3{0.0};
  if (glm::dot(r.groundNormal, kRecoveryUp) < std::cos(settings.maxSlope)) {
    r.reason = StandReason::GroundTooSteep;
    return r;
  }
  r.worldFromRoot = Transform{proposedRoot.rotation, Vec3{spot.x, r.groundHeight, spot.z}};
  // A wall between the fallen body and the spot: the get-up would pass through it.
  const Vec3 reachTarget = r.worldFromRoot.translation + kRecoveryUp * (capsule.radius + settings.skin);
  if (world.rayCast(reachFrom, reachTarget, settings.blockMask) < 1.0) {
    r.reason = StandReason::Unreachable;
    return r;
  }
  if (world.capsuleOverlaps(capsuleOnRoot(r.worldFromRoot, capsule, settings.skin), capsule.radius,
                            capsule.halfHeight, settings.blockMask)) {
    r.reason = StandReason::CapsuleBlocked;
    return r;
  }
  r.reason = StandReason::Clear;
  return r;
}

}  // namespace

const char* standDecisionName(StandDecision decision) {
  switch (decision) {
    case StandDecision::Stand:
      return "stand";
    case StandDecision::Relocate:
      return "relocate";
    case StandDecision::Delay:
      return "delay";
  }
  return "unknown";
}

const char* standReasonName(StandReason reason) {
  switch (reason) {
    case StandReason::Clear:
      return "clear";
    case StandReason::CapsuleBlocked:
      return "capsule_blocked";
    case StandReason::NoGround:
      return "no_ground";
    case StandReason::GroundTooSteep:
      return "ground_too_steep";
    case StandReason::NoFreeSpotNearby:
      return "no_free_spot_nearby";
    case StandReason::Unreachable:
      return "unreachable";
    case StandReason::InvalidInput:
      return "invalid_input";
  }
  return "unknown";
}

Transform capsuleOnRoot(const Transform& worldFromRoot, const CapsuleDef& capsule, double skin) {
  // Yaw only: the capsule stays upright whatever the root's rotation.
  return Transform{worldFromRoot.rotation,
                   worldFromRoot.translation + kRecoveryUp * (skin + capsule.radius + capsule.halfHeight)};
}

StandPlan planStand(const PhysicsWorld& world, const Transform& proposedRoot, const Vec3& reachFrom,
                    const CapsuleDef& capsule, const StandPlannerSettings& settings) {
  StandPlan plan;
  plan.worldFromRoot = proposedRoot;
  if (!isFinite(proposedRoot) || !isFinite(reachFrom) || !settingsValid(settings, capsule)) {
    plan.decision = StandDecision::Delay;
    plan.reason = StandReason::InvalidInput;
    return plan;
  }

  const Vec3 proposed = proposedRoot.translation;
  SpotResult spot = testSpot(world, proposedRoot, proposed, reachFrom, capsule, settings);
  plan.candidatesTested = 1;
  plan.proposedSpotReason = spot.reason;
  if (spot.reason == StandReason::Clear) {
    plan.decision = StandDecision::Stand;
    plan.reason = StandReason::Clear;
    plan.worldFromRoot = spot.worldFromRoot;
    plan.groundHeight = spot.groundHeight;
    plan.groundNormal = spot.groundNormal;
    return plan;
  }
  plan.reason = spot.reason;

  // Rings nearest first; within a ring start toward the fallen body and alternate sides.
  const Vec3 towardBody = reachFrom - proposed;
  const double baseAngle =
      std::hypot(towardBody.x, towardBody.z) > 1e-9 ? std::atan2(towardBody.z, towardBody.x) : 0.0;
  const double step = 2.0 * kPi / settings.candidatesPerRing;
  for (int ring = 1; ring <= settings.ringCount; ++ring) {
    const double radius = ring * settings.ringSpacing;
    for (int i = 0; i < settings.candidatesPerRing; ++i) {
      const int magnitude = (i + 1) / 2;
      const double angle = baseAngle + ((i % 2 == 1) ? magnitude : -magnitude) * step;
      const Vec3 candidate = proposed + Vec3{radius * std::cos(angle), 0.0, radius * std::sin(angle)};
      ++plan.candidatesTested;
      const SpotResult c = testSpot(world, proposedRoot, candidate, reachFrom, capsule, settings);
      if (c.reason == StandReason::Clear) {
        plan.decision = StandDecision::Relocate;
        plan.worldFromRoot = c.worldFromRoot;
        plan.groundHeight = c.groundHeight;
        plan.groundNormal = c.groundNormal;
        plan.relocationDistance = radius;
        return plan;
      }
    }
  }
  plan.decision = StandDecision::Delay;
  plan.reason = StandReason::NoFreeSpotNearby;
  return plan;
}

}  // namespace handoff
