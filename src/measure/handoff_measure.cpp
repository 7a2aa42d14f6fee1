// The handoff, follow, hit-reaction and powered-tracking measures (measure.h).
#include "handoff/measure.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>

namespace handoff {
namespace {

/// The animation's own linear velocity per body at the newest animated sample (SPEC section 3
/// on the character's pose history, whatever the handoff mode).
std::vector<Vec3> animationVelocities(const Character& character) {
  const auto bodyCount = static_cast<size_t>(character.ragdoll().bodyCount());
  std::vector<Vec3> rawL(bodyCount), rawA(bodyCount), lin(bodyCount), ang(bodyCount);
  std::vector<std::uint8_t> clamps(bodyCount);
  HandoffSettings hs = character.settings().handoff;
  hs.mode = HandoffMode::Inherit;
  inheritVelocities(character.ragdoll().history(), hs, rawL, rawA, lin, ang, clamps);
  return lin;
}

double gravityOf(const PhysicsWorld& world) { return glm::length(world.settings().gravity); }

/// The centre of mass of the ragdoll's bodies off the animation. [m]
Vec3 dynamicCentreOfMass(const Ragdoll& ragdoll) {
  const PhysicsWorld& world = ragdoll.world();
  Vec3 sum{0.0};
  double mass = 0.0;
  for (int b = 0; b < ragdoll.bodyCount(); ++b) {
    if (ragdoll.authority(b) == Authority::Animation) continue;
    const double m = world.mass(ragdoll.body(b));
    sum += m * ragdoll.bodyPose(b).translation;
    mass += m;
  }
  return mass > 0.0 ? sum / mass : sum;
}

/// The bodies handed over as one rigid body at the commit: its centre of mass's velocity and its
/// angular velocity (angular momentum about the centre of mass over the inertia about it).
void rigidMotion(const Ragdoll& ragdoll, const HandoffRecord& record, Vec3& comVelocity, Vec3& omega) {
  const PhysicsWorld& world = ragdoll.world();
  double mass = 0.0;
  Vec3 c{0.0}, momentum{0.0};
  for (int b = 0; b < ragdoll.bodyCount(); ++b) {
    if (ragdoll.authority(b) == Authority::Animation) continue;
    const BodyHandoff& bh = record.bodies[static_cast<size_t>(b)];
    const double m = world.mass(ragdoll.body(b));
    mass += m;
    c += m * bh.poseAfter.translation;
    momentum += m * bh.linearVelocity;
  }
  comVelocity = omega = Vec3{0.0};
  if (!(mass > 0.0)) return;
  c /= mass;
  comVelocity = momentum / mass;
  Vec3 angular{0.0};
  glm::dmat3 inertia(0.0);
  for (int b = 0; b < ragdoll.bodyCount(); ++b) {
    if (ragdoll.authority(b) == Authority::Animation) continue;
    const BodyHandoff& bh = record.bodies[static_cast<size_t>(b)];
    const double m = world.mass(ragdoll.body(b));
    const glm::dmat3 own = world.worldInertia(ragdoll.body(b));
    const Vec3 r = bh.poseAfter.translation - c;
    angular += m * glm::cross(r, bh.linearVelocity - comVelocity) + own * bh.angularVelocity;
    inertia += own + m * (glm::dot(r, r) * glm::dmat3(1.0) - glm::outerProduct(r, r));
  }
  if (std::abs(glm::determinant(inertia)) > 1e-12) omega = glm::inverse(inertia) * angular;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// HandoffMeasure

HandoffMetrics HandoffMeasure::begin(const Character& character, const HandoffRecord& record, double time,
                                     std::string kind) {
  HandoffMetrics m;
  m.kind = std::move(kind);
  m.time = time;
  m.committed = record.committed;
  m.failure = record.failure;
  m.teleportFlagged = record.teleportFlagged;
  m.teleportDetected = record.teleportDetected;
  m.rootJump = record.rootJump;
  m.depenetrationSpeed = record.depenetrationSpeed;
  m.sampleDt = record.sampleDt;
  if (!record.committed) return m;
  // The animation's own velocity and the animated pose the player saw.
  const PoseHistory& h = character.ragdoll().history();
  std::vector<Vec3> lin = animationVelocities(character);
  const size_t bodyCount = lin.size();
  // The record's sequence number in the character's handoff ring (afterStep reads it back).
  const History<HandoffRecord>& records = character.handoffs();
  recordIndex_ = records.total();
  for (std::uint64_t seq = records.firstSequence(); seq < records.total(); ++seq) {
    if (&records.at(seq) == &record) recordIndex_ = seq;
  }
  assert(recordIndex_ < records.total() && "record is not one of the character's");
  animatedPoses_.resize(bodyCount);
  for (size_t b = 0; b < bodyCount; ++b) {
    const BodyHandoff& bh = record.bodies[b];
    // A body that stayed dynamic through the commit (a powered ragdoll dying) continues its own
    // motion: its pose and velocity at the commit are its reference, not the animation's.
    animatedPoses_[b] = bh.keptDynamic ? bh.poseAfter : h.body(0, static_cast<int>(b));
    if (bh.keptDynamic) lin[b] = bh.linearVelocity;
    BodyHandoffMetrics bm;
    bm.name = bh.name;
    bm.handedOver = character.ragdoll().authority(static_cast<int>(b)) != Authority::Animation;
    bm.positionJump = glm::length(bh.poseAfter.translation - animatedPoses_[b].translation);
    bm.animatedVelocity = lin[b];
    bm.inheritedLinear = bh.linearVelocity;
    bm.inheritedAngular = bh.angularVelocity;
    bm.clamps = clampReasonText(bh.clamps);
    bm.teleport = bh.teleport;
    bm.snapped = bh.snapped;
    m.maxPositionJump = std::max(m.maxPositionJump, bm.positionJump);
    m.bodies.push_back(bm);
  }
  rigidMotion(character.ragdoll(), record, comVelocity_, spin_);
  m.comSpeed = glm::length(comVelocity_);
  m.spinRate = glm::length(spin_);
  pending_ = true;
  return m;
}

void HandoffMeasure::afterStep(const PhysicsWorld& world, const Character& character, double dt,
                               HandoffMetrics& out) {
  if (!pending_) return;
  pending_ = false;
  if (!character.handoffs().retained(recordIndex_)) return;  // overwritten (HistorySettings::handoffs)
  const HandoffRecord& record = character.handoffs().at(recordIndex_);
  if (!record.bodies.empty() && !record.bodies[0].firstStepRecorded) return;  // not stepped yet
  const std::vector<Vec3> rigid = rigidJointVelocityChange(character.ragdoll().asset(), record, dt);
  const double g = gravityOf(world);
  out.firstStepRecorded = true;
  out.worstPopExcess = -1e300;
  out.worstVelocityExcess = -1e300;
  out.worstSubstepVelocityExcess = -1e300;
  out.worstFrameVelocityExcess = -1e300;
  const double h = record.firstSubstepTime;
  out.substepTime = h;
  for (size_t b = 0; b < out.bodies.size(); ++b) {
    const BodyHandoff& bh = record.bodies[b];
    BodyHandoffMetrics& bm = out.bodies[b];
    const double speed = glm::length(bm.animatedVelocity);
    if (!bm.handedOver) continue;
    bm.postStepLinear = bh.linearVelocityAfterFirstStep;
    bm.postStepAngular = bh.angularVelocityAfterFirstStep;
    bm.firstStepMove = glm::length(bh.poseAfterFirstStep.translation - animatedPoses_[b].translation);
    // With the push out of static geometry the record names (the chain follows a pushed body).
    bm.allowedMove = speed * dt + g * dt * dt + record.depenetrationSpeed * dt;
    bm.velocityChange = glm::length(bm.postStepLinear - bm.animatedVelocity);
    bm.velocityAllowed = 0.05 * speed + g * dt;
    bm.inContact = world.contactCount(character.ragdoll().body(static_cast<int>(b))) > 0;
    out.maxFirstStepMove = std::max(out.maxFirstStepMove, bm.firstStepMove);
    out.worstPopExcess = std::max(out.worstPopExcess, bm.firstStepMove - bm.allowedMove);
    // A body that meets the world in that step is stopped by it, as it must be: the velocity
    // criterion is about what the joints and gravity do.
    if (bm.inContact) {
      ++out.bodiesInContact;
      continue;
    }
    out.maxVelocityChange = std::max(out.maxVelocityChange, bm.velocityChange);
    out.worstVelocityExcess = std::max(out.worstVelocityExcess, bm.velocityChange - bm.velocityAllowed);
    bm.rigidChange = rigid[b];
    bm.frameVelocityChange = glm::length(
        bm.postStepLinear - (bm.inheritedLinear + world.settings().gravity * dt + bm.rigidChange));
    bm.frameVelocityAllowed = 0.05 * glm::length(bm.inheritedLinear) + g * dt;
    out.worstFrameVelocityExcess =
        std::max(out.worstFrameVelocityExcess, bm.frameVelocityChange - bm.frameVelocityAllowed);
    if (bh.firstSubstepRecorded) {
      bm.postSubstepLinear = bh.linearVelocityAfterFirstSubstep;
      // Against free fall over the substep, as the frame row is over the frame: a body held up
      // through its joints by a foot on the floor takes a support force with a sideways part, and
      // |dv| alone would count that part against it (docs/SCENARIOS.md, velocity_continuity).
      bm.substepVelocityChange =
          glm::length(bm.postSubstepLinear - (bm.inheritedLinear + world.settings().gravity * h));
      bm.substepVelocityAllowed = 0.05 * glm::length(bm.inheritedLinear) + g * h;
      out.maxSubstepVelocityChange = std::max(out.maxSubstepVelocityChange, bm.substepVelocityChange);
      out.worstSubstepVelocityExcess =
          std::max(out.worstSubstepVelocityExcess, bm.substepVelocityChange - bm.substepVelocityAllowed);
    }
  }
  if (out.worstVelocityExcess < -1e299) out.worstVelocityExcess = 0.0;
  if (out.worstSubstepVelocityExcess < -1e299) out.worstSubstepVelocityExcess = 0.0;
  if (out.worstFrameVelocityExcess < -1e299) out.worstFrameVelocityExcess = 0.0;
  if (out.kind != "powered") return;
  // A powered entry: the animation through the same step (the newest history sample is its
  // pose at the step's end), by the same allowances: what the drives were asked to follow.
  const PoseHistory& history = character.ragdoll().history();
  const std::vector<Vec3> lin = animationVelocities(character);
  out.animationPopExcess = out.animationVelocityExcess = -1e300;
  for (size_t b = 0; b < out.bodies.size(); ++b) {
    const BodyHandoffMetrics& bm = out.bodies[b];
    if (!bm.handedOver) continue;
    const double move =
        glm::length(history.body(0, static_cast<int>(b)).translation - animatedPoses_[b].translation);
    out.animationPopExcess = std::max(out.animationPopExcess, move - bm.allowedMove);
    if (bm.inContact) continue;
    out.animationVelocityExcess =
        std::max(out.animationVelocityExcess, glm::length(lin[b] - bm.animatedVelocity) - bm.velocityAllowed);
  }
  if (out.animationVelocityExcess < -1e299) out.animationVelocityExcess = 0.0;
}

// ---------------------------------------------------------------------------------------------
// FollowMeasure

void FollowMeasure::begin(double commitTime, double window) {
  commitTime_ = commitTime;
  window_ = window;
  open_ = true;
  observed_ = false;
}

void FollowMeasure::observe(const Character& character, double time, HandoffMetrics& out) {
  if (!open_) return;
  if (!observed_) out.worstSpeedExcess = -1e300;  // from the first step on
  observed_ = true;
  const double since = time - commitTime_;
  const bool simulated =
      character.state() == CharacterState::Ragdoll || character.state() == CharacterState::Powered;
  if (!simulated || since > window_ + 1e-9) {
    open_ = false;
    return;
  }
  const Ragdoll& ragdoll = character.ragdoll();
  const double g = gravityOf(ragdoll.world());
  out.followTime = since;
  const Vec3 c = dynamicCentreOfMass(ragdoll);
  // Powered: the ragdoll's pose history holds the animation the drives follow (its two newest
  // samples: the step that just ended).
  const PoseHistory& history = ragdoll.history();
  const bool powered = character.state() == CharacterState::Powered && history.size() >= 2 &&
                       history.time(0) > history.time(1) && !history.teleport(0);
  for (size_t b = 0; b < out.bodies.size(); ++b) {
    // A body on the animation (a partial ragdoll's) moves as the animation does.
    if (ragdoll.authority(static_cast<int>(b)) == Authority::Animation) continue;
    const BodyId body = ragdoll.body(static_cast<int>(b));
    const double speed = glm::length(ragdoll.world().linearVelocity(body));
    const double inherited = glm::length(out.bodies[b].inheritedLinear);
    // Only a spinning handoff gets the rigid motion's allowance (SPEC: keep the plain bound where
    // no body spins): a running character's bodies turn at about 1.4 rad/s as one, and |v_com|
    // would otherwise lift every slow body's bound to the run's speed.
    const double rigid =
        out.spinRate >= kSpinningRate
            ? out.comSpeed + out.spinRate * glm::length(ragdoll.world().transform(body).translation - c)
            : 0.0;
    const double animated = powered ? glm::length(history.body(0, static_cast<int>(b)).translation -
                                                  history.body(1, static_cast<int>(b)).translation) /
                                          (history.time(0) - history.time(1))
                                    : 0.0;
    // The body and the body it hangs from as one rigid body, as a limit locking their joint makes
    // them: their momentum-weighted velocity at the commit (a hand swung against the travel is
    // carried on at its forearm's speed once the swing stops).
    const int parent = ragdoll.asset().bodies[b].parentBody;
    double pair = 0.0;
    if (parent >= 0 && ragdoll.authority(parent) != Authority::Animation) {
      const size_t p = static_cast<size_t>(parent);
      const double mb = ragdoll.asset().bodies[b].mass, mp = ragdoll.asset().bodies[p].mass;
      pair =
          glm::length((mb * out.bodies[b].inheritedLinear + mp * out.bodies[p].inheritedLinear) / (mb + mp));
    }
    const double allowed = std::max({inherited, pair, rigid, animated}) + g * since + 1.0 + out.hitAllowance;
    if (speed - allowed > out.worstSpeedExcess) {
      out.worstSpeedExcess = speed - allowed;
      out.worstSpeedSpinAllowance = std::max(0.0, rigid - inherited);
      out.worstSpeedAnimationAllowance = std::max(0.0, animated - std::max(inherited, rigid));
      out.worstSpeedPairAllowance = std::max(0.0, pair - std::max({inherited, rigid, animated}));
      out.worstSpeedBody = out.bodies[b].name;
      out.worstSpeedTime = since;
    }
  }
  out.maxJointSeparation = std::max(out.maxJointSeparation, ragdoll.maxJointSeparation());
}

void FollowMeasure::addImpulse(const Character& character, int body, const Vec3& impulse,
                               HandoffMetrics& out) const {
  if (!open_) return;
  out.hitAllowance += glm::length(impulse) / character.ragdoll().world().mass(character.ragdoll().body(body));
}

// ---------------------------------------------------------------------------------------------
// HitReactionMeasure

HitReactionMetrics HitReactionMeasure::begin(const Character& character, int body, const Vec3& impulse,
                                             double time) {
  HitReactionMetrics hit;
  hit.time = time;
  hit.body = character.ragdoll().asset().bodies[static_cast<size_t>(body)].name;
  hit.impulse = glm::length(impulse);
  body_ = body;
  open_ = true;
  models_.resize(static_cast<size_t>(character.skeleton().jointCount()));
  animatedBodies_.resize(static_cast<size_t>(character.ragdoll().bodyCount()));
  return hit;
}

void HitReactionMeasure::observe(const Character& character, const AnimationInput& animation, double time,
                                 HitReactionMetrics& out) {
  if (!open_) return;
  if (character.state() == CharacterState::Powered) {
    localToModel(character.skeleton(), animation.locals, models_);
    bodyPosesFromModels(character.ragdoll().asset(), models_, animation.worldFromRoot, animatedBodies_);
    const Vec3 hitBody = character.ragdoll().bodyPose(body_).translation;
    out.peakHitBodyDeviation =
        std::max(out.peakHitBodyDeviation,
                 glm::length(hitBody - animatedBodies_[static_cast<size_t>(body_)].translation));
    out.peakDeviation = std::max(out.peakDeviation, character.poweredMaxPositionError());
    out.rmsAtReturn = character.poweredRmsJointError();
    out.maxAtReturn = character.poweredMaxJointError();
    return;
  }
  if (character.state() == CharacterState::Animated) {
    out.returned = true;
    out.returnTime = time - out.time;
  } else {
    out.knockedOut = character.state() == CharacterState::Ragdoll;
    out.knockoutTime = time - out.time;
  }
  open_ = false;
}

// ---------------------------------------------------------------------------------------------
// PoweredTrackingMeasure

void PoweredTrackingMeasure::observe(const Character& character, PoweredTrackingMetrics& out) const {
  if (character.state() != CharacterState::Powered) return;
  out.maxPositionError = std::max(out.maxPositionError, character.poweredMaxPositionError());
  out.maxRmsJointError = std::max(out.maxRmsJointError, character.poweredRmsJointError());
}

void JointBreakMeasure::observe(const Character& character, std::vector<JointBreakMetrics>& out) {
  const Ragdoll& ragdoll = character.ragdoll();
  const RagdollAsset& asset = ragdoll.asset();
  if (!started_) {
    started_ = true;
    for (size_t j = 0; j < asset.joints.size(); ++j) {
      if (std::isfinite(asset.joints[j].breakForce) || std::isfinite(asset.joints[j].breakTorque))
        joints_.push_back(Joint{static_cast<int>(j)});
    }
  }
  const std::span<const JointBreak> breaks = character.jointBreaks();
  for (size_t k = out.size(); k < breaks.size(); ++k) {
    const JointBreak& b = breaks[k];
    const JointDef& def = asset.joints[static_cast<size_t>(b.joint)];
    JointBreakMetrics m;
    m.joint = b.joint;
    m.name = def.name;
    m.time = b.time;
    m.force = b.force;
    m.torque = b.torque;
    m.breakForce = def.breakForce;
    m.breakTorque = def.breakTorque;
    m.byTorque = !(b.force > def.breakForce);
    for (const Joint& j : joints_) {
      if (j.index != b.joint) continue;
      m.loadBefore = m.byTorque ? j.torque : j.force;
      m.worstFrameChange = m.byTorque ? j.worstTorqueChange : j.worstForceChange;
    }
    out.push_back(m);
  }
  for (Joint& j : joints_) {
    if (ragdoll.jointBroken(j.index)) continue;
    const JointBreakState state = ragdoll.world().jointBreakState(ragdoll.joint(j.index));
    if (j.seen) {
      j.worstForceChange = std::max(j.worstForceChange, std::abs(state.force - j.force));
      j.worstTorqueChange = std::max(j.worstTorqueChange, std::abs(state.torque - j.torque));
    }
    j.seen = true;
    j.force = state.force;
    j.torque = state.torque;
  }
  const bool ragdollState = character.state() == CharacterState::Ragdoll;
  for (size_t k = 0; k < out.size(); ++k) {
    JointBreakMetrics& m = out[k];
    m.otherJointsMaxStretch = std::max(m.otherJointsMaxStretch, ragdoll.maxJointSeparation());
    if (!ragdollState) ++m.framesNotRagdoll;
  }
}

}  // namespace handoff
