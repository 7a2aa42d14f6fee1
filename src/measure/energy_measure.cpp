// A full ragdoll's total mechanical energy after its handoff (measure.h, EnergyMeasure).
#include "handoff/measure.h"

#include <algorithm>
#include <cmath>

namespace handoff {

EnergyMeasure::EnergyMeasure() {
  before_.owner = this;
  after_.owner = this;
  after_.after = true;
}

EnergyMeasure::~EnergyMeasure() { end(); }

void EnergyMeasure::begin(PhysicsWorld& world, const Character& character, double commitTime, double window,
                          HandoffMetrics& out) {
  end();
  world_ = &world;
  bodies_.clear();
  const Ragdoll& ragdoll = character.ragdoll();
  for (int b = 0; b < ragdoll.bodyCount(); ++b) bodies_.push_back(ragdoll.body(b));
  for (int p = 0; p < character.propCount(); ++p) {
    const BodyId body = character.propBody(p);
    if (body.valid()) bodies_.push_back(body);
  }
  commitTime_ = commitTime;
  window_ = window;
  elapsed_ = 0.0;
  work_ = workMagnitude_ = 0.0;
  worstGain_ = worstGainAt_ = released_ = 0.0;
  samples_ = 1;
  sampled_ = true;
  for (const BodyId body : bodies_) world.takeDepenetrationPush(body);  // from before the commit
  pe0_ = potential();
  e0_ = energy();
  out.energyMeasured = true;
  out.kineticAtHandoff = e0_ - pe0_;
  out.energySamples = samples_;
  world.addSubstepListener(&before_, /*first=*/true);
  world.addSubstepListener(&after_);
  open_ = true;
}

void EnergyMeasure::beforeStep() {
  if (!open_) return;
  // Last again: a listener added since the commit (the drives of a powered entry) runs before it.
  world_->removeSubstepListener(&after_);
  world_->addSubstepListener(&after_);
}

double EnergyMeasure::potential() const {
  const Vec3 g = world_->settings().gravity;
  double pe = 0.0;
  for (const BodyId body : bodies_) {
    if (world_->motionType(body) != MotionType::Dynamic) continue;
    pe -= world_->mass(body) * glm::dot(g, world_->transform(body).translation);
  }
  return pe;
}

double EnergyMeasure::energy() const {
  if (world_ == nullptr) return 0.0;
  double kinetic = 0.0;
  for (const BodyId body : bodies_) {
    if (world_->motionType(body) != MotionType::Dynamic) continue;
    const Vec3 v = world_->linearVelocity(body);
    const Vec3 w = world_->angularVelocity(body);
    kinetic += 0.5 * world_->mass(body) * glm::dot(v, v) + 0.5 * glm::dot(w, world_->worldInertia(body) * w);
  }
  return kinetic + potential();
}

void EnergyMeasure::addWork(double joules) {
  if (!open_) return;
  work_ += joules;
  workMagnitude_ += std::abs(joules);
}

void EnergyMeasure::sample(double at) {
  if (at > window_ + 1e-9) return;
  ++samples_;
  // The push out of static geometry (limitDepenetration) moves bodies by position, from outside
  // the ragdoll's dynamics: the potential energy it adds is work done on it.
  const Vec3 g = world_->settings().gravity;
  for (const BodyId body : bodies_) {
    const Vec3 push = world_->takeDepenetrationPush(body);
    if (push == Vec3{0.0}) continue;
    const double joules = -world_->mass(body) * glm::dot(g, push);
    work_ += joules;
    workMagnitude_ += std::abs(joules);
  }
  const double pe = potential();
  released_ = std::max(released_, pe0_ - pe);
  // E - W never rises above E(commit) for a passive ragdoll. Measured against E(commit), not
  // against its lowest value so far: a hard impact's sequential-impulse solve swings E by a
  // substep's worth while it dissipates hundreds of joules (the mesh stairs: -1000 J in 0.1 s
  // with one +123 J substep in it), which is no explosion.
  const double gain = energy() - work_ - e0_;
  if (gain > worstGain_) {
    worstGain_ = gain;
    worstGainAt_ = at;
  }
}

void EnergyMeasure::Probe::onSubstep(double substepDt) {
  EnergyMeasure& m = *owner;
  if (!m.open_) return;
  if (!after) {
    // The state the previous substep left, before any listener's impulse of this one (the first
    // substep's was read at the commit or at the end of the step before).
    if (!m.sampled_) m.sample(m.elapsed_);
    m.sampled_ = false;
    m.beforeListeners_ = m.energy();
    m.elapsed_ += substepDt;
    return;
  }
  // Every other listener has run: what its impulses did is work done on the ragdoll.
  m.addWork(m.energy() - m.beforeListeners_);
}

void EnergyMeasure::observe(const Character& character, double time, HandoffMetrics& out) {
  if (!open_) return;
  // Passive: a ragdoll whose joint motors are off or passive dampers. The gather's servos (and
  // powered drives) are the engine's implicit motors, whose work no listener sees: the window
  // closes when they take the joints (the step that just ran was still passive).
  const Ragdoll& r = character.ragdoll();
  bool ragdoll = character.state() == CharacterState::Ragdoll;
  for (size_t j = 0; ragdoll && j < r.asset().joints.size(); ++j) {
    const MotorOwner owner = r.motorOwner(static_cast<int>(j));
    ragdoll = owner == MotorOwner::None || owner == MotorOwner::Damper;
  }
  if (!sampled_) sample(elapsed_);
  sampled_ = true;
  out.energySamples = samples_;
  out.energyTime = std::min(elapsed_, window_);
  out.energyReleased = released_;
  out.energyWork = work_;
  out.energyWorkMagnitude = workMagnitude_;
  out.worstEnergyGain = worstGain_;
  out.worstEnergyGainTime = worstGainAt_;
  if (!ragdoll || time - commitTime_ > window_ - 1e-9) end();
}

void EnergyMeasure::end() {
  if (world_ != nullptr && open_) {
    world_->removeSubstepListener(&before_);
    world_->removeSubstepListener(&after_);
  }
  open_ = false;
}

}  // namespace handoff
