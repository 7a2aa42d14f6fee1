// Joints on ODE: a ball joint for the anchors, an angular motor (user mode) for the limits and
// one for the servo rows.
//
// Decisions worth knowing:
// - ODE's body 1 is the joint's B (the child), body 2 its A (null when A is static): an ODE
//   angular row measures axis . (w1 - w2), so a rotation of B by +t about a joint axis reads +t,
//   handoff::jointAngles' sign. A joint whose B is static is refused (ODE's reversed attachment
//   would flip the rows' sign).
// - Before every substep both angular motors get three global axes, the dual basis of the Euler
//   axes of jointAngles (e0 = A's joint X, e1 = the intermediate Y, e2 = B's joint Z):
//   d0 = e1 x e2, d1 = e1, d2 = e0 x e1 (unit, as e1 is orthogonal to e0 and e2), so row i
//   measures only angle i's rate (x' cos y, y', z' cos y), and the limit motor gets the angles
//   of jointAngles (dJointSetAMotorAngle): ODE's limits act on exactly the interface's angles.
// - Stops: lower == upper locks an axis (ODE's lo == hi row, both directions), lower > upper
//   frees it (no stop). Stop ERP OdeSettings::limitErp, CFM OdeSettings::jointCfm.
// - Servo rows: target velocity r + Kp e / (h Kp + Kd), CFM 1 / (h Kp + Kd), force bound
//   maxTorque: the implicit PD tau = Kp (e + h r - h w') + Kd (r - w'). With angleRateRows the X
//   and Z rows (measuring rate * cos y) get the velocity times cos y and the CFM times cos^2 y.
#include "physics_ode/ode_parts.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace handoff::ode_detail {

namespace {

bool locked(double lo, double hi) { return lo == hi; }
bool freeAxis(double lo, double hi) { return lo > hi; }

double wrapAngle(double a) {
  while (a > kPi) a -= 2.0 * kPi;
  while (a < -kPi) a += 2.0 * kPi;
  return a;
}

const int kParamGroups[3] = {0, dParamGroup, 2 * dParamGroup};

/// Limits in the ranges the rows can hold: X and Z in [-pi, pi], Y in [-pi/2, pi/2] (limited axes).
void clampLimits(Vec3& lower, Vec3& upper) {
  for (int i = 0; i < 3; ++i) {
    if (freeAxis(lower[i], upper[i])) continue;
    const double r = i == 1 ? 0.5 * kPi : kPi;
    lower[i] = std::clamp(lower[i], -r, r);
    upper[i] = std::clamp(upper[i], -r, r);
  }
}

}  // namespace

Transform OdeWorld::jointFrameA(const JointSlot& joint) const {
  return poseOf(bodies_[joint.a]) * joint.aFromJoint;
}
Transform OdeWorld::jointFrameB(const JointSlot& joint) const {
  return poseOf(bodies_[joint.b]) * joint.bFromJoint;
}

void OdeWorld::rebuildJointPairs() {
  jointPairs_.clear();
  for (const JointSlot& j : joints_) {
    if (j.alive && !j.collideConnected) jointPairs_.emplace_back(std::min(j.a, j.b), std::max(j.a, j.b));
  }
  std::sort(jointPairs_.begin(), jointPairs_.end());
}

Result<JointId> OdeWorld::createJoint(const JointDesc& desc) {
  ensureOdeThread();
  const BodySlot* a = slotOf(desc.bodyA);
  const BodySlot* b = slotOf(desc.bodyB);
  if (a == nullptr) return Error{"createJoint: bodyA is not a live body of this world"};
  if (b == nullptr) return Error{"createJoint: bodyB is not a live body of this world"};
  if (Status valid = adapter::validateJointDesc(desc); !valid.ok()) return Error{valid.error()};
  if (b->body == nullptr)
    return Error{
        "createJoint: bodyB is static; the ODE adapter needs the child (B) to be a moving body (make the "
        "static body A)"};

  std::uint32_t index = 0;
  if (!freeJoints_.empty()) {
    index = freeJoints_.back();
    freeJoints_.pop_back();
  } else {
    index = static_cast<std::uint32_t>(joints_.size());
    joints_.emplace_back();
  }
  JointSlot& j = joints_[index];
  const std::uint32_t generation = j.generation;
  j = JointSlot{};
  j.generation = generation;
  j.alive = true;
  j.a = desc.bodyA.value & kIndexMask;
  j.b = desc.bodyB.value & kIndexMask;
  j.aFromJoint =
      Transform{normalizeOrIdentity(desc.bodyAFromJoint.rotation), desc.bodyAFromJoint.translation};
  j.bFromJoint =
      Transform{normalizeOrIdentity(desc.bodyBFromJoint.rotation), desc.bodyBFromJoint.translation};
  j.lower = desc.angularLower;
  j.upper = desc.angularUpper;
  clampLimits(j.lower, j.upper);
  j.collideConnected = desc.collideConnected;
  j.breakForce = desc.breakForce;
  j.breakTorque = desc.breakTorque;
  dBodyID bodyA = bodies_[j.a].body;
  dBodyID bodyB = bodies_[j.b].body;
  j.ball = dJointCreateBall(world_, nullptr);
  dJointAttach(j.ball, bodyB, bodyA);
  dJointSetBallParam(j.ball, dParamERP, ode_.anchorErp);
  dJointSetBallParam(j.ball, dParamCFM, ode_.jointCfm);
  j.limits = dJointCreateAMotor(world_, nullptr);
  j.motor = dJointCreateAMotor(world_, nullptr);
  for (dJointID m : {j.limits, j.motor}) {
    dJointAttach(m, bodyB, bodyA);
    dJointSetAMotorMode(m, dAMotorUser);
    dJointSetAMotorNumAxes(m, 3);
  }
  for (int i = 0; i < 3; ++i) {
    dJointSetAMotorParam(j.limits, dParamStopERP + kParamGroups[i], ode_.limitErp);
    dJointSetAMotorParam(j.limits, dParamStopCFM + kParamGroups[i], ode_.jointCfm);
    dJointSetAMotorParam(j.motor, dParamFMax + kParamGroups[i], 0.0);
  }
  setJointFrames(JointId{index | (j.generation << kIndexBits)}, j.aFromJoint, j.bFromJoint);
  setJointLimits(JointId{index | (j.generation << kIndexBits)}, j.lower, j.upper);
  if (j.breakable()) {
    dJointSetFeedback(j.ball, &j.feedback[0]);
    dJointSetFeedback(j.limits, &j.feedback[1]);
    dJointSetFeedback(j.motor, &j.feedback[2]);
    ++breakableJoints_;
  }
  bodies_[j.a].joints.push_back(index);
  bodies_[j.b].joints.push_back(index);
  updateJointActive(j);
  updateJointRows(j, 1.0 / 60.0);
  ++jointCount_;
  rebuildJointPairs();
  return JointId{index | (j.generation << kIndexBits)};
}

void OdeWorld::destroyJointAt(std::uint32_t index) {
  JointSlot& j = joints_[index];
  dJointDestroy(j.ball);
  dJointDestroy(j.limits);
  dJointDestroy(j.motor);
  if (j.breakable()) --breakableJoints_;
  for (std::uint32_t body : {j.a, j.b}) std::erase(bodies_[body].joints, index);
  j.ball = j.limits = j.motor = nullptr;
  j.alive = false;
  j.generation = (j.generation + 1) & kGenerationMask;
  freeJoints_.push_back(index);
  --jointCount_;
}

void OdeWorld::destroyJoint(JointId id) {
  if (slotOf(id) == nullptr) return;
  ensureOdeThread();
  destroyJointAt(id.value & kIndexMask);
  rebuildJointPairs();
}

void OdeWorld::updateJointActive(JointSlot& j) {
  // A joint between two bodies that do not move under forces (kinematic or static) has rows
  // without mass: ODE's exact solver reports them singular. It takes part again as soon as one
  // body is dynamic.
  const BodySlot& a = bodies_[j.a];
  const BodySlot& b = bodies_[j.b];
  j.active = a.enabled && b.enabled && (a.motion == MotionType::Dynamic || b.motion == MotionType::Dynamic);
  const bool on = j.active && !j.breakState.broken;
  for (dJointID part : {j.ball, j.limits, j.motor}) {
    if (on) {
      dJointEnable(part);
    } else {
      dJointDisable(part);
    }
  }
  if (on && bodies_[j.b].body != nullptr) dBodyEnable(bodies_[j.b].body);
}

void OdeWorld::updateJointRows(JointSlot& j, double h) {
  const Transform fa = jointFrameA(j);
  const Transform fb = jointFrameB(j);
  const Vec3 angles = jointAngles(glm::conjugate(fa.rotation) * fb.rotation);
  const Vec3 e0 = fa.rotation * Vec3{1.0, 0.0, 0.0};
  const Vec3 e1 = fa.rotation * (glm::angleAxis(angles.x, Vec3{1.0, 0.0, 0.0}) * Vec3{0.0, 1.0, 0.0});
  const Vec3 e2 = fb.rotation * Vec3{0.0, 0.0, 1.0};
  const Vec3 d[3] = {glm::normalize(glm::cross(e1, e2)), e1, glm::normalize(glm::cross(e0, e1))};
  for (int i = 0; i < 3; ++i) {
    dJointSetAMotorAxis(j.limits, i, 0, d[i].x, d[i].y, d[i].z);
    dJointSetAMotorAngle(j.limits, i, angles[i]);
  }
  const JointMotorSettings& m = j.motorSettings;
  const bool motorOn = m.enabled && m.maxTorque > 0.0;
  const Vec3 target = motorOn ? jointAngles(m.target) : Vec3{0.0};
  const double cosY = std::max(std::cos(angles.y), 1e-3);
  for (int i = 0; i < 3; ++i) {
    const double kp = m.stiffness[i], kd = m.damping[i];
    const double s = h * kp + kd;
    if (!motorOn || locked(j.lower[i], j.upper[i]) || !(s > 0.0)) {
      dJointSetAMotorParam(j.motor, dParamFMax + kParamGroups[i], 0.0);
      continue;
    }
    dJointSetAMotorAxis(j.motor, i, 0, d[i].x, d[i].y, d[i].z);
    double t = target[i];
    if (!freeAxis(j.lower[i], j.upper[i])) t = std::clamp(t, j.lower[i], j.upper[i]);
    const double e = i == 1 ? t - angles[i] : wrapAngle(t - angles[i]);
    double vel = m.targetRates[i] + kp * e / s;
    double cfm = 1.0 / s;
    if (m.angleRateRows && i != 1) {
      vel *= cosY;
      cfm *= cosY * cosY;
    }
    dJointSetAMotorParam(j.motor, dParamVel + kParamGroups[i], vel);
    dJointSetAMotorParam(j.motor, dParamCFM + kParamGroups[i], cfm);
    dJointSetAMotorParam(j.motor, dParamFMax + kParamGroups[i], std::min(m.maxTorque, 1e12));
  }
}

void OdeWorld::measureBreak(JointSlot& j, double h, int substep) {
  (void)h;
  const BodySlot& b = bodies_[j.b];
  if (b.body == nullptr || dBodyIsEnabled(b.body) == 0) return;  // a sleeping island is not measured
  const Vec3 f = fromOde(j.feedback[0].f1);
  const Vec3 anchor = poseOf(b).transformPoint(j.bFromJoint.translation);
  const Vec3 com = fromOde(dBodyGetPosition(b.body));
  const Vec3 torque = fromOde(j.feedback[0].t1) - glm::cross(anchor - com, f) + fromOde(j.feedback[1].t1) +
                      fromOde(j.feedback[2].t1);
  j.breakState.force = glm::length(f);
  j.breakState.torque = glm::length(torque);
  if (j.breakState.force > j.breakForce || j.breakState.torque > j.breakTorque) {
    j.breakState.broken = true;
    j.breakState.substep = substep;
    updateJointActive(j);
  }
}

void OdeWorld::projectAnchors() {
  const double limit = ode_.anchorProjection;
  for (JointSlot& j : joints_) {
    if (!j.alive || !j.active || j.breakState.broken) continue;
    BodySlot& a = bodies_[j.a];
    BodySlot& b = bodies_[j.b];
    const Vec3 gap = jointFrameB(j).translation - jointFrameA(j).translation;
    const double length = glm::length(gap);
    if (!(length > limit)) continue;
    const double wa = a.motion == MotionType::Dynamic ? 1.0 / a.mass : 0.0;
    const double wb = b.motion == MotionType::Dynamic ? 1.0 / b.mass : 0.0;
    if (!(wa + wb > 0.0)) continue;
    if (wa > 0.0) {
      const Vec3 p = fromOde(dBodyGetPosition(a.body)) + gap * (wa / (wa + wb));
      dBodySetPosition(a.body, p.x, p.y, p.z);
    }
    if (wb > 0.0) {
      const Vec3 p = fromOde(dBodyGetPosition(b.body)) - gap * (wb / (wa + wb));
      dBodySetPosition(b.body, p.x, p.y, p.z);
    }
  }
}

void OdeWorld::resetWarmStart(JointId id) {
  // ODE's solvers start every step cold: there is nothing to clear.
  assert(slotOf(id) != nullptr && "invalid or dead JointId");
  (void)id;
}

void OdeWorld::setJointMotor(JointId id, const JointMotorSettings& motor) {
  JointSlot* j = slotOf(id);
  assert(j != nullptr && "invalid or dead JointId");
  if (j == nullptr) return;
  JointMotorSettings m = motor;
  if (!isFinite(m.stiffness) || !isFinite(m.damping) || !isFinite(m.targetRates) || !isFinite(m.target) ||
      std::isnan(m.maxTorque)) {
    m.enabled = false;
  }
  m.stiffness = glm::max(m.stiffness, Vec3{0.0});
  m.damping = glm::max(m.damping, Vec3{0.0});
  m.target = normalizeOrIdentity(m.target);
  j->motorSettings = m;
  if (!m.enabled) {
    for (int i = 0; i < 3; ++i) dJointSetAMotorParam(j->motor, dParamFMax + kParamGroups[i], 0.0);
  }
  if (bodies_[j->b].body != nullptr && bodies_[j->b].enabled && m.enabled) dBodyEnable(bodies_[j->b].body);
}

void OdeWorld::setJointFrames(JointId id, const Transform& bodyAFromJoint, const Transform& bodyBFromJoint) {
  JointSlot* j = slotOf(id);
  assert(j != nullptr && "invalid or dead JointId");
  assert(isFinite(bodyAFromJoint) && isFinite(bodyBFromJoint) && "non-finite joint frames");
  if (j == nullptr || !isFinite(bodyAFromJoint) || !isFinite(bodyBFromJoint)) return;
  j->aFromJoint = Transform{normalizeOrIdentity(bodyAFromJoint.rotation), bodyAFromJoint.translation};
  j->bFromJoint = Transform{normalizeOrIdentity(bodyBFromJoint.rotation), bodyBFromJoint.translation};
  // dJointSetBallAnchor takes a world point (stored in body 1, B, from its current pose);
  // dJointSetBallAnchor2 stores its argument as body 2's (A's) local anchor as it is, or as a
  // world point when A is static (no ODE body).
  const Vec3 pB = poseOf(bodies_[j->b]).transformPoint(j->bFromJoint.translation);
  const Vec3 pA = bodies_[j->a].body != nullptr
                      ? j->aFromJoint.translation
                      : poseOf(bodies_[j->a]).transformPoint(j->aFromJoint.translation);
  dJointSetBallAnchor(j->ball, pB.x, pB.y, pB.z);
  dJointSetBallAnchor2(j->ball, pA.x, pA.y, pA.z);
}

void OdeWorld::setJointLimits(JointId id, const Vec3& angularLower, const Vec3& angularUpper) {
  JointSlot* j = slotOf(id);
  assert(j != nullptr && "invalid or dead JointId");
  assert(isFinite(angularLower) && isFinite(angularUpper) && "non-finite joint limits");
  if (j == nullptr || !isFinite(angularLower) || !isFinite(angularUpper)) return;
  j->lower = angularLower;
  j->upper = angularUpper;
  clampLimits(j->lower, j->upper);
  for (int i = 0; i < 3; ++i) {
    const int g = kParamGroups[i];
    // Widen first so that ODE accepts each stop whatever the previous ones were.
    dJointSetAMotorParam(j->limits, dParamLoStop + g, -dInfinity);
    dJointSetAMotorParam(j->limits, dParamHiStop + g, dInfinity);
    if (freeAxis(j->lower[i], j->upper[i])) continue;
    dJointSetAMotorParam(j->limits, dParamLoStop + g, j->lower[i]);
    dJointSetAMotorParam(j->limits, dParamHiStop + g, j->upper[i]);
  }
}

Quat OdeWorld::jointRelativeRotation(JointId id) const {
  const JointSlot* j = slotOf(id);
  assert(j != nullptr && "invalid or dead JointId");
  if (j == nullptr) return Quat{1.0, 0.0, 0.0, 0.0};
  return glm::conjugate(jointFrameA(*j).rotation) * jointFrameB(*j).rotation;
}

double OdeWorld::jointAnchorSeparation(JointId id) const {
  const JointSlot* j = slotOf(id);
  assert(j != nullptr && "invalid or dead JointId");
  if (j == nullptr) return 0.0;
  return glm::length(jointFrameA(*j).translation - jointFrameB(*j).translation);
}

JointBreakState OdeWorld::jointBreakState(JointId id) const {
  const JointSlot* j = slotOf(id);
  return j == nullptr ? JointBreakState{} : j->breakState;
}

}  // namespace handoff::ode_detail
