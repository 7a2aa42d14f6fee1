// Contact events (PhysicsWorld::setContactReport, contactEvents): what a game plays sounds and
// applies damage from.
//
// Decisions worth knowing:
// - After every substep's solve the manifolds of the reported bodies are read: a manifold's
//   impulse is the sum of its points' normal impulses (Bullet's applied impulse, the substep's
//   total). An event's impulse is that summed over the step's substeps (a speculative contact
//   splits one impact over two substeps); its point (midway between the two surfaces) and normal
//   (Bullet's, turned to point toward the reported body) are those of the deepest point in the
//   substep that pushed hardest. Pairs whose step total stays under the body's threshold are
//   dropped when the step ends.
// - Candidates have room for 4 x WorldSettings::maxContactEvents from construction, the events
//   delivered for maxContactEvents, so a step never allocates; the rest are counted
//   (StepStats::droppedContactEvents).
// - Nothing is read while no body is reported (the cost is one test per substep).
#include "physics_bullet/bullet_parts.h"

#include <algorithm>
#include <cassert>
#include <cstdint>

namespace handoff::bullet_detail {

void BulletWorld::setContactReport(BodyId id, double minImpulse) {
  HANDOFF_BODY_OR_RETURN(slot, id);
  const auto index = id.value & kIndexMask;
  const bool was = slot->reportMinImpulse >= 0.0;
  const bool is = finite(minImpulse) && minImpulse >= 0.0;
  slot->reportMinImpulse = is ? minImpulse : -1.0;
  if (was == is) return;
  if (is) {
    reported_.insert(std::lower_bound(reported_.begin(), reported_.end(), index), index);
  } else {
    reported_.erase(std::find(reported_.begin(), reported_.end(), index));
  }
}

void BulletWorld::collectContactEvents() {
  if (reported_.empty()) return;
  const int numManifolds = dispatcher_->getNumManifolds();
  for (int m = 0; m < numManifolds; ++m) {
    const btPersistentManifold& manifold = *dispatcher_->getManifoldByIndexInternal(m);
    const int points = manifold.getNumContacts();
    if (points == 0) continue;
    for (int side = 0; side < 2; ++side) {
      const btCollisionObject* self = side == 0 ? manifold.getBody0() : manifold.getBody1();
      const btCollisionObject* other = side == 0 ? manifold.getBody1() : manifold.getBody0();
      const BodyId body = bodyOf(self);
      if (!body.valid()) continue;
      const BodySlot& slot = bodies_[body.value & kIndexMask];
      if (slot.reportMinImpulse < 0.0) continue;
      double impulse = 0.0;
      int deepest = 0;
      for (int p = 0; p < points; ++p) {
        const btManifoldPoint& point = manifold.getContactPoint(p);
        impulse += point.getAppliedImpulse();
        if (point.getDistance() < manifold.getContactPoint(deepest).getDistance()) deepest = p;
      }
      if (!(impulse > 0.0)) continue;
      const btManifoldPoint& point = manifold.getContactPoint(deepest);
      // Bullet's normal points from body 1 toward body 0.
      const Vec3 normal = fromBt(side == 0 ? point.m_normalWorldOnB : -point.m_normalWorldOnB);
      const Vec3 where = 0.5 * fromBt(point.m_positionWorldOnA + point.m_positionWorldOnB);
      auto found = std::find_if(events_.begin(), events_.end(), [&](const ContactEvent& e) {
        return e.body == body && e.otherEngineObject == other;
      });
      if (found == events_.end()) {
        if (events_.size() >= events_.capacity()) {
          ++droppedEvents_;
          continue;
        }
        events_.push_back(ContactEvent{body, bodyOf(other), other, where, normal, impulse});
        eventPeaks_[events_.size() - 1] = impulse;
        continue;
      }
      const auto at = static_cast<std::size_t>(found - events_.begin());
      found->impulse += impulse;
      if (impulse > eventPeaks_[at]) {
        eventPeaks_[at] = impulse;
        found->point = where;
        found->normal = normal;
      }
    }
  }
}

void BulletWorld::finishContactEvents() {
  std::erase_if(events_, [this](const ContactEvent& e) {
    return e.impulse < bodies_[e.body.value & kIndexMask].reportMinImpulse;
  });
  std::sort(events_.begin(), events_.end(), [](const ContactEvent& a, const ContactEvent& b) {
    return a.body.value != b.body.value ? a.body.value < b.body.value : a.other.value < b.other.value;
  });
  const auto limit = static_cast<std::size_t>(settings_.maxContactEvents);
  if (events_.size() > limit) {
    droppedEvents_ += static_cast<int>(events_.size() - limit);
    events_.resize(limit);
  }
}

}  // namespace handoff::bullet_detail
