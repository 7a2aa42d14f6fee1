// The joint-anchor projection after every substep (BulletWorld::projectJointAnchors).
//
// Decisions worth knowing:
// - Anchors: after every substep, joints whose anchors are more than kProjectionTolerance apart
//   are projected back (non-linear Gauss-Seidel, like Jolt's position iterations), see
//   projectJointAnchors(). It removes the arc drift of fast-spinning links on impacts. The
//   projection never moves a body deeper into a static or kinematic body than it was (it once
//   put a limb 6.6 cm into a wall hit at 40 m/s): keepProjectedBodiesOutOfFixedBodies().
#include "physics_bullet/bullet_parts.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace handoff::bullet_detail {
namespace {

// Tuning (measured by tests/physics_bullet; see the report).

/// Position passes over the joints' anchor constraints after every substep (see
/// projectJointAnchors()); Jolt's default is 2 position iterations. With 4, a violent 10 m fall
/// stays within 6 mm (no projection: 11 cm at 1 substep, 2.7 cm at 2).
constexpr int kJointPositionIterations = 4;
/// Anchor errors below this are left to the velocity solver; only the excess is projected.
/// Projecting every small error costs energy (a pendulum at one 60 Hz substep loses 15 %); 5 mm
/// lies above a normal swing's drift (3 mm at one substep). [m]
constexpr double kProjectionTolerance = 5e-3;

}  // namespace

void BulletWorld::projectJointAnchors() {
  // Non-linear Gauss-Seidel on the anchor (point) constraints, after Bullet integrated the
  // substep: the velocity solve keeps anchors' relative velocity at zero, but integrating fast
  // rotations (omega * h large, e.g. thin limbs hitting the ground) moves anchors apart along the
  // arc by about omega^2 r h^2 / 2 per substep, which Baumgarte only removes over later substeps.
  // Each pass moves the two bodies along the point constraint's effective mass
  // K = (1/mA + 1/mB) I - [rA]x IA^-1 [rA]x - [rB]x IB^-1 [rB]x so the anchors coincide (as Jolt's
  // position iterations do). Velocities are untouched.
  bool anyProjected = false;
  for (int pass = 0; pass < kJointPositionIterations; ++pass) {
    bool movedInPass = false;
    for (JointSlot& joint : joints_) {
      if (!joint.constraint || !joint.inWorld || joint.breakState.broken) continue;
      btRigidBody& a = *bodies_[joint.bodyA].body;
      btRigidBody& b = *bodies_[joint.bodyB].body;
      const double invMassA = a.getInvMass();
      const double invMassB = b.getInvMass();
      if (invMassA == 0.0 && invMassB == 0.0) continue;
      if (!a.isActive() && !b.isActive()) continue;
      const btTransform& ta = a.getCenterOfMassTransform();
      const btTransform& tb = b.getCenterOfMassTransform();
      const btVector3 pa = ta * toBt(joint.aFromJoint.translation);
      const btVector3 pb = tb * toBt(joint.bFromJoint.translation);
      const btVector3 gap = pb - pa;
      const double gapLength = gap.length();
      if (!(gapLength > kProjectionTolerance)) continue;
      // Only the excess over the tolerance: small drift stays with the velocity solver, whose
      // Baumgarte term is gentler on energy than moving bodies without changing their velocity.
      const btVector3 error = gap * ((gapLength - kProjectionTolerance) / gapLength);
      const btVector3 ra = pa - ta.getOrigin();
      const btVector3 rb = pb - tb.getOrigin();
      const btMatrix3x3 skewA(0.0, -ra.z(), ra.y(), ra.z(), 0.0, -ra.x(), -ra.y(), ra.x(), 0.0);
      const btMatrix3x3 skewB(0.0, -rb.z(), rb.y(), rb.z(), 0.0, -rb.x(), -rb.y(), rb.x(), 0.0);
      btMatrix3x3 k =
          skewA * a.getInvInertiaTensorWorld() * skewA + skewB * b.getInvInertiaTensorWorld() * skewB;
      k = btMatrix3x3(invMassA + invMassB, 0.0, 0.0, 0.0, invMassA + invMassB, 0.0, 0.0, 0.0,
                      invMassA + invMassB) -
          k;
      if (!(std::abs(k.determinant()) > 1e-18)) continue;
      const btVector3 p = k.inverse() * error;  // a "positional impulse": +p on A, -p on B
      const auto move = [](BodySlot& slot, const btVector3& impulse, const btVector3& r, double invMass) {
        if (invMass == 0.0) return;
        btRigidBody& body = *slot.body;
        btTransform t = body.getCenterOfMassTransform();
        if (!slot.projected) {
          slot.projected = true;
          slot.beforeProjection = t;
        }
        t.setOrigin(t.getOrigin() + impulse * invMass);
        const btVector3 theta = body.getInvInertiaTensorWorld() * r.cross(impulse);
        const double angle = theta.length();
        if (angle > 0.0) {
          btQuaternion q = btQuaternion(theta / angle, angle) * t.getRotation();
          q.normalize();
          t.setRotation(q);
        }
        body.setCenterOfMassTransform(t);  // keeps velocities, updates the world inertia
      };
      move(bodies_[joint.bodyA], p, ra, invMassA);
      move(bodies_[joint.bodyB], -p, rb, invMassB);
      movedInPass = true;
    }
    if (!movedInPass) break;
    anyProjected = true;
    keepProjectedBodiesOutOfFixedBodies();
  }
  if (!anyProjected) return;
  for (const JointSlot& joint : joints_) {
    if (!joint.constraint) continue;
    bodies_[joint.bodyA].projected = false;
    bodies_[joint.bodyB].projected = false;
  }
}

void BulletWorld::keepProjectedBodiesOutOfFixedBodies() {
  // The projection moves bodies without looking at their contacts: a limb whose joint is pulled
  // by a heavier body hitting a wall at 40 m/s was put 6.6 cm into the wall (its centre past the
  // face). For every contact of a projected dynamic body with a static or kinematic one, undo
  // the part of the projection's displacement that put the contact point deeper than it was
  // before the projection (or into penetration, when it was apart), by translating the body
  // along the contact normal. Contacts between two dynamic bodies are left to the solver.
  const int manifolds = dispatcher_->getNumManifolds();
  for (int m = 0; m < manifolds; ++m) {
    const btPersistentManifold* manifold = dispatcher_->getManifoldByIndexInternal(m);
    if (manifold->getNumContacts() == 0) continue;
    const btCollisionObject* object0 = manifold->getBody0();
    const btCollisionObject* object1 = manifold->getBody1();
    const bool fixed0 = object0->isStaticOrKinematicObject();
    const bool fixed1 = object1->isStaticOrKinematicObject();
    if (fixed0 == fixed1) continue;
    const btCollisionObject* movedObject = fixed0 ? object1 : object0;
    const btCollisionObject* fixedObject = fixed0 ? object0 : object1;
    const int index = movedObject->getUserIndex();
    if (index < 0 || static_cast<std::size_t>(index) >= bodies_.size()) continue;
    BodySlot& slot = bodies_[static_cast<std::size_t>(index)];
    if (!slot.projected || slot.body.get() != movedObject) continue;
    const btTransform& now = slot.body->getCenterOfMassTransform();
    const btTransform& fixedTransform = fixedObject->getWorldTransform();
    double push = 0.0;
    btVector3 pushNormal(0.0, 0.0, 0.0);
    for (int c = 0; c < manifold->getNumContacts(); ++c) {
      const btManifoldPoint& point = manifold->getContactPoint(c);
      // Bullet's normal points from body 1 (B) toward body 0 (A); make it point from the fixed
      // body toward the moved one.
      const btVector3 normal = fixed0 ? -point.m_normalWorldOnB : point.m_normalWorldOnB;
      const btVector3& movedLocal = fixed0 ? point.m_localPointB : point.m_localPointA;
      const btVector3& fixedLocal = fixed0 ? point.m_localPointA : point.m_localPointB;
      const btVector3 onFixed = fixedTransform * fixedLocal;
      const double before = (slot.beforeProjection * movedLocal - onFixed).dot(normal);
      const double after = (now * movedLocal - onFixed).dot(normal);
      const double allowed = std::min(before, 0.0);
      if (after < allowed && allowed - after > push) {
        push = allowed - after;
        pushNormal = normal;
      }
    }
    if (push > 0.0) {
      btTransform t = now;
      t.setOrigin(t.getOrigin() + pushNormal * push);
      slot.body->setCenterOfMassTransform(t);
    }
  }
}

}  // namespace handoff::bullet_detail
