// Props in the hand (measure.h PropMeasure): the grip while held, the release and the frame after.
#include "handoff/measure.h"

#include <algorithm>

namespace handoff {

void PropMeasure::observe(const Character& character, const PhysicsWorld& world, double dt,
                          std::vector<PropMetrics>& out) {
  const int props = character.propCount();
  if (out.size() < static_cast<size_t>(props)) out.resize(static_cast<size_t>(props));
  for (int i = 0; i < props; ++i) {
    PropMetrics& m = out[static_cast<size_t>(i)];
    m.name = character.propDesc(i).name;
    m.collidingPairs = character.propCollidingPairs(i);
    if (!character.propHeld(i)) continue;
    const Transform hand = character.handGrip(i);
    const Transform prop = character.propGrip(i);
    const double distance = glm::length(prop.translation - hand.translation);
    ++m.heldFrames;
    if (world.motionType(character.ragdoll().body(character.propHandBody(i))) == MotionType::Dynamic) {
      ++m.simulatedHeldFrames;
      m.maxGripDistance = std::max(m.maxGripDistance, distance);
      m.maxGripAngle = std::max(m.maxGripAngle, angleBetween(prop.rotation, hand.rotation));
    } else {
      m.maxAnimatedGripDistance = std::max(m.maxAnimatedGripDistance, distance);
    }
  }

  const double g = glm::length(world.settings().gravity);
  const History<PropRelease>::Range releases = character.propReleases().readSince(releasesSeen_);
  releasesSeen_ = releases.next;
  for (auto it = releases.begin(); it != releases.end(); ++it) {
    const PropRelease& r = *it;
    PropMetrics& m = out[static_cast<size_t>(r.prop)];
    m.released = true;
    m.releaseTime = r.time;
    m.atDeath = r.atDeath;
    m.releaseState = characterStateName(character.state());
    m.releaseLinearError = glm::length(r.propPointVelocity - r.handPointVelocity);
    m.releaseAngularError = glm::length(r.propAngularVelocity - r.handAngularVelocity);
    m.releaseSpeed = glm::length(r.handPointVelocity);
    m.releaseAngularSpeed = glm::length(r.handAngularVelocity);
    m.releaseJump = glm::length(r.propVelocityAfter - r.propVelocityBefore);
    m.releaseJumpExcess = m.releaseJump - (0.05 * glm::length(r.propVelocityBefore) + g * dt);
    m.dropFrameMeasured = false;
    pending_.push_back({static_cast<int>(it.sequence()), r.propVelocityAfter, r.handVelocity});
  }
  // The frame after a release: what the prop and its hand did with the velocities they had.
  for (size_t k = 0; k < pending_.size();) {
    const auto seq = static_cast<std::uint64_t>(pending_[k].release);
    if (!character.propReleases().retained(seq)) {  // overwritten (HistorySettings::propReleases)
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(k));
      continue;
    }
    const PropRelease& r = character.propReleases().at(seq);
    if (!(r.time < character.time())) {
      ++k;  // released in this frame's postStep: its frame is the next one
      continue;
    }
    PropMetrics& m = out[static_cast<size_t>(r.prop)];
    const BodyId bodies[2] = {character.propBody(r.prop),
                              character.ragdoll().body(character.propHandBody(r.prop))};
    const Vec3 before[2] = {pending_[k].propVelocity, pending_[k].handVelocity};
    const char* names[2] = {"prop", "hand"};
    m.dropFrameMeasured = true;
    m.dropFrameExcess = -1e300;
    for (int b = 0; b < 2; ++b) {
      const double change = glm::length(world.linearVelocity(bodies[b]) - before[b]);
      const double excess = change - (0.05 * glm::length(before[b]) + g * dt);
      if (excess > m.dropFrameExcess) {
        m.dropFrameExcess = excess;
        m.dropFrameWorst = names[b];
      }
    }
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(k));
  }
}

}  // namespace handoff
