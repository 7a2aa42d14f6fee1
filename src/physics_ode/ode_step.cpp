// Stepping the ODE world: substep listeners, joint rows, the near callback and contact joints,
// the solver, kinematic moves, damping, breaking, bodies leaving the world, contact events.
//
// Decisions worth knowing:
// - step(dt, n) takes exactly n ODE steps of dt / n. Each substep: the listeners, the joints'
//   axes and angles (ode_joints.cpp), collision into a fresh contact joint group, ODE's random
//   seed (OdeSettings::solverSeed), the solver, then the kinematic poses, damping, breaks and
//   contact feedback.
// - The near callback puts the geom with a moving body first (ODE then attaches the contact as
//   (body, other)) and skips pairs where neither body is awake: a sleeping body is woken by ODE's
//   island walk once an awake body has a contact with it.
#include "physics_ode/ode_parts.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <span>

namespace handoff::ode_detail {

namespace {

void nearCallback(void* data, dGeomID g1, dGeomID g2) { static_cast<OdeWorld*>(data)->addContacts(g1, g2); }

bool awake(const BodySlot& s) { return s.body != nullptr && dBodyIsEnabled(s.body) != 0; }

// ODE's random generator (dRandSetSeed, read by the quick-step solver's row shuffle) is one
// process-wide seed: worlds solving on two threads at once raced on it and shuffled each other's
// rows. The seed and the solve take this lock, so worlds on several threads (a crowd's spaces)
// solve one at a time, each from its own seed, and stay bit-for-bit those of one thread; their
// collision detection and everything else in the step still runs in parallel.
std::mutex& solverLock() {
  static std::mutex lock;
  return lock;
}

}  // namespace

void OdeWorld::addContacts(dGeomID g1, dGeomID g2) {
  std::uint32_t i = slotOfGeom(g1);
  std::uint32_t j = slotOfGeom(g2);
  if (!pairCollides(i, j)) return;
  if (!awake(bodies_[i]) && !awake(bodies_[j])) return;
  if (bodies_[i].body == nullptr) {
    std::swap(g1, g2);
    std::swap(i, j);
  }
  BodySlot& a = bodies_[i];
  BodySlot& b = bodies_[j];
  dContactGeom points[kMaxContactsPerPair];
  const int n = dCollide(g1, g2, ode_.maxContactsPerPair, points, sizeof(dContactGeom));
  if (n <= 0) return;
  dContact c{};
  c.surface.mode = dContactApprox1 | dContactSoftERP | dContactSoftCFM;
  c.surface.mu = a.friction * b.friction;
  c.surface.soft_erp = ode_.contactErp;
  c.surface.soft_cfm = ode_.contactCfm;
  const double restitution = a.restitution * b.restitution;
  if (restitution > 0.0) {
    c.surface.mode |= dContactBounce;
    c.surface.bounce = restitution;
    c.surface.bounce_vel = ode_.bounceThreshold;
  }
  const double rolling = std::max(a.rollingFriction, b.rollingFriction);
  if (rolling > 0.0) {
    c.surface.mode |= dContactRolling;
    c.surface.rho = c.surface.rho2 = c.surface.rhoN = rolling;
  }
  if (pairContacts_.size() < pairContacts_.capacity()) pairContacts_.push_back(PairContacts{i, j, n});
  const bool report = a.reportMinImpulse >= 0.0 || b.reportMinImpulse >= 0.0;
  for (int k = 0; k < n; ++k) {
    c.geom = points[k];
    dJointID joint = dJointCreateContact(world_, contactGroup_, &c);
    dJointAttach(joint, a.body, b.body);
    ++a.contacts;
    ++b.contacts;
    ++contactPoints_;
    if (report && feedbackUsed_ < static_cast<int>(feedbackPool_.size()) &&
        reported_.size() < reported_.capacity()) {
      dJointSetFeedback(joint, &feedbackPool_[static_cast<std::size_t>(feedbackUsed_)]);
      ReportedPoint p;
      p.body1 = i;
      p.body2 = j;
      p.geom1 = g1;
      p.geom2 = g2;
      p.point = fromOde(points[k].pos);
      p.normal = fromOde(points[k].normal);
      p.depth = points[k].depth;
      p.feedback = feedbackUsed_++;
      reported_.push_back(p);
    }
  }
}

void OdeWorld::collide(double h) {
  (void)h;
  dJointGroupEmpty(contactGroup_);
  // A sleeping body keeps the count of its last awake substep (its pairs are not collided while
  // it sleeps; its contacts have not changed).
  for (BodySlot& s : bodies_) {
    if (s.body == nullptr || dBodyIsEnabled(s.body) != 0) s.contacts = 0;
  }
  contactPoints_ = 0;
  feedbackUsed_ = 0;
  reported_.clear();
  // Pairs not collided this substep (neither body awake) keep their record, as their bodies keep
  // their counts.
  std::erase_if(pairContacts_,
                [this](const PairContacts& p) { return awake(bodies_[p.a]) || awake(bodies_[p.b]); });
  dSpaceCollide(space_, this, &nearCallback);
}

void OdeWorld::readContactEvents(double h) {
  for (const ReportedPoint& p : reported_) {
    const dJointFeedback& fb = feedbackPool_[static_cast<std::size_t>(p.feedback)];
    for (int side = 0; side < 2; ++side) {
      const std::uint32_t body = side == 0 ? p.body1 : p.body2;
      const std::uint32_t other = side == 0 ? p.body2 : p.body1;
      if (body == kIndexMask || bodies_[body].reportMinImpulse < 0.0) continue;
      const Vec3 normal = side == 0 ? p.normal : -p.normal;  // from the other toward `body`
      const Vec3 force = fromOde(side == 0 ? fb.f1 : fb.f2);
      const double impulse = std::max(0.0, glm::dot(force, normal)) * h;
      PairEvent* e = nullptr;
      for (PairEvent& candidate : pairEvents_) {
        if (candidate.body == body && candidate.other == other) {
          e = &candidate;
          break;
        }
      }
      if (e == nullptr) {
        if (pairEvents_.size() >= pairEvents_.capacity()) {
          ++stats_.droppedContactEvents;
          continue;
        }
        PairEvent fresh;
        fresh.body = body;
        fresh.other = other;
        fresh.otherObject = side == 0 ? static_cast<const void*>(p.geom2) : static_cast<const void*>(p.geom1);
        pairEvents_.push_back(fresh);
        e = &pairEvents_.back();
      }
      e->substepImpulse += impulse;
      if (p.depth > e->deepest) {
        e->deepest = p.depth;
        e->substepPoint = p.point;
        e->substepNormal = normal;
      }
    }
  }
  for (PairEvent& e : pairEvents_) {
    e.impulse += e.substepImpulse;
    if (e.substepImpulse > e.bestSubstep && e.deepest >= 0.0) {
      e.bestSubstep = e.substepImpulse;
      e.point = e.substepPoint;
      e.normal = e.substepNormal;
    }
    e.substepImpulse = 0.0;
    e.deepest = -1.0;
  }
}

void OdeWorld::finishContactEvents() {
  std::sort(pairEvents_.begin(), pairEvents_.end(), [this](const PairEvent& x, const PairEvent& y) {
    const std::uint32_t bx = idOf(x.body).value, by = idOf(y.body).value;
    if (bx != by) return bx < by;
    const std::uint32_t ox = x.other == kIndexMask ? kIndexMask : idOf(x.other).value;
    const std::uint32_t oy = y.other == kIndexMask ? kIndexMask : idOf(y.other).value;
    return ox < oy;
  });
  for (const PairEvent& e : pairEvents_) {
    if (e.impulse < bodies_[e.body].reportMinImpulse || e.bestSubstep < 0.0) continue;
    if (static_cast<int>(events_.size()) >= settings_.maxContactEvents) {
      ++stats_.droppedContactEvents;
      continue;
    }
    ContactEvent ev;
    ev.body = idOf(e.body);
    ev.other = e.other == kIndexMask ? BodyId{} : idOf(e.other);
    ev.otherEngineObject = e.otherObject;
    ev.point = e.point;
    ev.normal = glm::length(e.normal) > 0.0 ? glm::normalize(e.normal) : e.normal;
    ev.impulse = e.impulse;
    events_.push_back(ev);
  }
}

void OdeWorld::step(double dt, int substeps) {
  if (!(dt > 0.0) || !finite(dt) || substeps < 1) return;
  ensureOdeThread();
  const double h = dt / substeps;
  substepH_ = h;
  stats_ = StepStats{};
  events_.clear();
  pairEvents_.clear();
  if (breakableJoints_ > 0) {
    for (JointSlot& j : joints_) j.breakState.substep = -1;
  }
  for (BodySlot& s : bodies_) {
    if (!s.alive || s.motion != MotionType::Kinematic || !s.enabled) continue;
    const Vec3 v = s.movePending ? s.moveLinear : Vec3{0.0};
    const Vec3 w = s.movePending ? s.moveAngular : Vec3{0.0};
    dBodySetLinearVel(s.body, v.x, v.y, v.z);
    dBodySetAngularVel(s.body, w.x, w.y, w.z);
  }
  for (int sub = 0; sub < substeps; ++sub) {
    substepIndex_ = sub;
    runSubstepListeners(h);
    for (JointSlot& j : joints_) {
      if (j.alive && j.active && !j.breakState.broken) updateJointRows(j, h);
    }
    collide(h);
    {
      const std::lock_guard<std::mutex> solving(solverLock());
      dRandSetSeed(ode_.solverSeed);
      if (ode_.exactSolver) {
        dWorldStep(world_, h);
      } else {
        dWorldQuickStep(world_, h);
      }
    }
    const double f = static_cast<double>(sub + 1) / substeps;
    for (BodySlot& s : bodies_) {
      if (!s.alive || s.body == nullptr || !s.enabled) continue;
      if (s.motion == MotionType::Kinematic) {
        if (s.movePending) {
          const Quat arc = shortArc(s.moveTo.rotation * glm::conjugate(s.moveFrom.rotation));
          const Transform pose{fromRotationVector(toRotationVector(arc) * f) * s.moveFrom.rotation,
                               s.moveFrom.translation + f * (s.moveTo.translation - s.moveFrom.translation)};
          setBodyPose(s, sub + 1 == substeps ? s.moveTo : pose);
        } else {
          dBodySetLinearVel(s.body, 0.0, 0.0, 0.0);
          dBodySetAngularVel(s.body, 0.0, 0.0, 0.0);
        }
        continue;
      }
      if (dBodyIsEnabled(s.body) == 0) continue;
      const double kv = std::exp(-s.linearDamping * h);
      const double kw = std::exp(-s.angularDamping * h);
      const dReal* v = dBodyGetLinearVel(s.body);
      const dReal* w = dBodyGetAngularVel(s.body);
      dBodySetLinearVel(s.body, v[0] * kv, v[1] * kv, v[2] * kv);
      dBodySetAngularVel(s.body, w[0] * kw, w[1] * kw, w[2] * kw);
    }
    if (breakableJoints_ > 0) {
      for (JointSlot& j : joints_) {
        if (j.alive && j.active && !j.breakState.broken && j.breakable()) measureBreak(j, h, sub);
      }
    }
    if (ode_.anchorProjection > 0.0) projectAnchors();
    if (reportedBodies_ > 0) readContactEvents(h);
  }
  for (std::uint32_t i = 0; i < bodies_.size(); ++i) {
    BodySlot& s = bodies_[i];
    if (!s.alive || s.body == nullptr || !s.enabled) continue;
    s.movePending = false;
    const Vec3 p = fromOde(dBodyGetPosition(s.body));
    const bool bad = !isFinite(p) || !isFinite(fromOde(dBodyGetLinearVel(s.body))) ||
                     !isFinite(fromOde(dBodyGetAngularVel(s.body))) ||
                     !isFinite(quatFromOde(dBodyGetQuaternion(s.body)));
    if (bad || std::max({std::abs(p.x), std::abs(p.y), std::abs(p.z)}) > settings_.worldHalfExtent) {
      setEnabled(idOf(i), false);
      ++stats_.bodiesLeftWorld;
      continue;
    }
    if (s.motion == MotionType::Kinematic) {
      ++stats_.kinematicBodies;
    } else {
      ++stats_.dynamicBodies;
      if (dBodyIsEnabled(s.body) != 0) {
        ++stats_.activeBodies;
      } else {
        ++stats_.sleepingBodies;
      }
    }
  }
  stats_.contactPoints = contactPoints_;
  stats_.solverIterations =
      ode_.exactSolver ? 0 : settings_.solverIterations * settings_.jointIterationFactor;
  stats_.substeps = substeps;
  finishContactEvents();
}

}  // namespace handoff::ode_detail
