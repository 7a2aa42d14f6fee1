// Speculative contacts: the adapter's collision dispatcher (SpeculativeDispatcher, bullet_parts.h).
//
// Decisions worth knowing:
// - Contacts are speculative up to what a pair can close in one substep (SpeculativeDispatcher).
// - Each shape's angular motion disc and contact breaking threshold are computed once, when the
//   world creates the shape (ShapeMotion, its user pointer), not from its AABB on every refresh.
#include "physics_bullet/bullet_parts.h"

#include <algorithm>

namespace handoff::bullet_detail {

double contactBreakingThreshold(const btCollisionShape& shape) {
  const auto* cached = static_cast<const ShapeMotion*>(shape.getUserPointer());
  return cached != nullptr && cached->breakingFactor == gContactBreakingThreshold
             ? cached->breaking
             : shape.getContactBreakingThreshold(gContactBreakingThreshold);
}

namespace {

// Tuning (measured by tests/physics_bullet; see the report).

/// Upper bound of the speculative contact distance. [m]
constexpr double kMaxSpeculativeDistance = 1.0;

double angularMotionDisc(const btCollisionShape& shape) {
  const auto* cached = static_cast<const ShapeMotion*>(shape.getUserPointer());
  return cached != nullptr ? cached->disc : shape.getAngularMotionDisc();
}

/// Distance a body may travel toward anything in one substep: |v| h + |w| R h (R: the shape's
/// bounding radius). Static bodies do not move. [m]
double substepReach(const btCollisionObject& object, double h) {
  const btRigidBody* body = btRigidBody::upcast(&object);
  if (body == nullptr || object.isStaticObject()) return 0.0;
  return h * (body->getLinearVelocity().length() +
              body->getAngularVelocity().length() * angularMotionDisc(*object.getCollisionShape()));
}

}  // namespace

btPersistentManifold* SpeculativeDispatcher::getNewManifold(const btCollisionObject* b0,
                                                            const btCollisionObject* b1) {
  btPersistentManifold* manifold = btCollisionDispatcher::getNewManifold(b0, b1);
  widen(*manifold, manifold->getContactBreakingThreshold(), substep_);
  return manifold;
}

void SpeculativeDispatcher::refreshSpeculative(btDispatcher& dispatcher, double h, const void* owner) {
  const int count = dispatcher.getNumManifolds();
  for (int i = 0; i < count; ++i) {
    btPersistentManifold& m = *dispatcher.getManifoldByIndexInternal(i);
    const btCollisionObject& a = *m.getBody0();
    const btCollisionObject& b = *m.getBody1();
    if (!a.isActive() && !b.isActive()) continue;
    if (owner != nullptr && a.getUserPointer() != owner && b.getUserPointer() != owner) continue;
    const double base = std::min(contactBreakingThreshold(*a.getCollisionShape()),
                                 contactBreakingThreshold(*b.getCollisionShape()));
    widen(m, base, h);
  }
}

void SpeculativeDispatcher::widen(btPersistentManifold& m, double base, double h) {
  const double reach = substepReach(*m.getBody0(), h) + substepReach(*m.getBody1(), h);
  m.setContactBreakingThreshold(std::max(base, std::min(reach, kMaxSpeculativeDistance)));
}

}  // namespace handoff::bullet_detail
