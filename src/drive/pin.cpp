// Pinning: world-space PD toward the animated pose (an external force). See handoff/drive.h.
#include "handoff/drive.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace handoff {
namespace {

double clampWeight(double weight) { return std::isfinite(weight) ? std::clamp(weight, 0.0, 1.0) : 0.0; }

// Scales `v` down to magnitude `limit` when longer; reports whether it did.
Vec3 clampMagnitude(const Vec3& v, double limit, bool* clamped) {
  const double length = glm::length(v);
  *clamped = length > limit;
  if (!*clamped) return v;
  return length > 0.0 ? v * (limit / length) : Vec3{0.0};
}

}  // namespace

PinGains weightedPinGains(const PinGains& gains, double weight) {
  const double w = clampWeight(weight);
  PinGains out = gains;
  out.linearStiffness *= w;
  out.angularStiffness *= w;
  // inf * 0 would be NaN: a zero weight is a zero limit.
  out.maxLinearAcceleration = w == 0.0 ? 0.0 : gains.maxLinearAcceleration * w;
  out.maxAngularAcceleration = w == 0.0 ? 0.0 : gains.maxAngularAcceleration * w;
  return out;
}

PinOutput computePin(const PinGains& gains, const PinInput& in) {
  PinOutput out;
  if (!isFinite(in.worldFromBody) || !isFinite(in.linearVelocity) || !isFinite(in.angularVelocity) ||
      !isFinite(in.target) || !isFinite(in.targetLinearVelocity) || !isFinite(in.targetAngularVelocity) ||
      !std::isfinite(in.weight)) {
    out.valid = false;
    return out;
  }
  const PinGains g = weightedPinGains(gains, in.weight);
  out.positionError = in.target.translation - in.worldFromBody.translation;
  out.rotationError =
      toRotationVector(shortArc(in.target.rotation * glm::conjugate(in.worldFromBody.rotation)));
  out.linearAcceleration = clampMagnitude(
      g.linearStiffness * out.positionError + g.linearDamping * (in.targetLinearVelocity - in.linearVelocity),
      g.maxLinearAcceleration, &out.saturatedLinear);
  out.angularAcceleration =
      clampMagnitude(g.angularStiffness * out.rotationError +
                         g.angularDamping * (in.targetAngularVelocity - in.angularVelocity),
                     g.maxAngularAcceleration, &out.saturatedAngular);
  return out;
}

PinApplier::PinApplier(PhysicsWorld& world, std::span<const BodyId> bodies, std::span<const PinGains> gains)
    : world_(world) {
  reset(bodies, gains);
}

void PinApplier::reset(std::span<const BodyId> bodies, std::span<const PinGains> gains) {
  assert(gains.size() == bodies.size() && "PinApplier: one PinGains per body");
  bodies_.assign(bodies.begin(), bodies.end());
  gains_.assign(gains.begin(), gains.end());
  targets_.assign(bodies.size(), Target{});
  weights_.assign(bodies.size(), 1.0);
  results_.assign(bodies.size(), PinOutput{});
  for (size_t i = 0; i < bodies_.size(); ++i) targets_[i].worldFromBody = world_.transform(bodies_[i]);
  resetExternalImpulse();
  enabled_ = true;
}

bool PinApplier::setTarget(int pin, const Transform& worldFromBody, const Vec3& linearVelocity,
                           const Vec3& angularVelocity, double timeAhead) {
  assert(pin >= 0 && pin < pinCount() && "PinApplier: pin index out of range");
  if (!isFinite(worldFromBody) || !isFinite(linearVelocity) || !isFinite(angularVelocity) ||
      glm::dot(worldFromBody.rotation, worldFromBody.rotation) < 1e-12 || !std::isfinite(timeAhead) ||
      timeAhead < 0.0)
    return false;
  Target& t = targets_[static_cast<size_t>(pin)];
  t.worldFromBody = Transform{glm::normalize(worldFromBody.rotation), worldFromBody.translation};
  t.linearVelocity = linearVelocity;
  t.angularVelocity = angularVelocity;
  t.timeAhead = timeAhead;
  return true;
}

namespace {
// The target pose `ahead` seconds before its own time, moved back along its velocities: the
// position by v ahead, the rotation by the turn omega ahead (world angular velocity).
Transform poseBefore(const Transform& pose, const Vec3& linearVelocity, const Vec3& angularVelocity,
                     double ahead) {
  if (ahead <= 0.0) return pose;
  return Transform{glm::normalize(fromRotationVector(-angularVelocity * ahead) * pose.rotation),
                   pose.translation - linearVelocity * ahead};
}
}  // namespace

bool PinApplier::setWeight(int pin, double weight) {
  assert(pin >= 0 && pin < pinCount() && "PinApplier: pin index out of range");
  if (!std::isfinite(weight) || weight < 0.0 || weight > 1.0) return false;
  weights_[static_cast<size_t>(pin)] = weight;
  return true;
}

bool PinApplier::setWeight(double weight) {
  if (!std::isfinite(weight) || weight < 0.0 || weight > 1.0) return false;
  std::fill(weights_.begin(), weights_.end(), weight);
  return true;
}

void PinApplier::onSubstep(double substepDt) {
  if (!enabled_ || !std::isfinite(substepDt) || substepDt <= 0.0) return;
  for (size_t i = 0; i < bodies_.size(); ++i) {
    const BodyId body = bodies_[i];
    PinInput in;
    in.worldFromBody = world_.transform(body);
    in.linearVelocity = world_.linearVelocity(body);
    in.angularVelocity = world_.angularVelocity(body);
    Target& target = targets_[i];
    in.target =
        poseBefore(target.worldFromBody, target.linearVelocity, target.angularVelocity, target.timeAhead);
    in.targetLinearVelocity = target.linearVelocity;
    in.targetAngularVelocity = target.angularVelocity;
    target.timeAhead = std::max(target.timeAhead - substepDt, 0.0);
    in.weight = weights_[i];
    results_[i] = computePin(gains_[i], in);
    const PinOutput& out = results_[i];
    if (!out.valid || world_.motionType(body) != MotionType::Dynamic) continue;
    const Vec3 linear = world_.mass(body) * out.linearAcceleration * substepDt;
    const Vec3 angular = world_.worldInertia(body) * out.angularAcceleration * substepDt;
    if (linear == Vec3{0.0} && angular == Vec3{0.0}) continue;
    if (world_.isSleeping(body)) world_.wake(body);
    const Vec3 centre = in.worldFromBody.translation;
    if (linear != Vec3{0.0}) world_.applyLinearImpulse(body, linear, centre);
    if (angular != Vec3{0.0}) world_.applyAngularImpulse(body, angular);
    linearImpulse_ += linear;
    linearImpulseApplied_ += glm::length(linear);
    angularImpulse_ += angular + glm::cross(centre, linear);
  }
}

bool SubstepListenerList::add(SubstepListener* listener) {
  if (listener == nullptr || count_ >= kCapacity) return false;
  listeners_[count_++] = listener;
  return true;
}

void SubstepListenerList::onSubstep(double substepDt) {
  for (int i = 0; i < count_; ++i) listeners_[i]->onSubstep(substepDt);
}

}  // namespace handoff
