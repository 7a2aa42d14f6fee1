// The joint's Bullet subclasses (CentredAnchorConstraint, JointWarmStartSolver; bullet_parts.h)
// and the rows of the joint motors (BulletWorld::updateMotor).
//
// Decisions worth knowing:
// - Joint motors are implicit PD servos: one Bullet motor row per open axis, re-targeted every
//   substep as the soft constraint of tau = Kp (e - h w') - Kd w' (w' the angle's rate at the end
//   of the substep; a row turns about the dual Euler axis and measures rate * cos(y) on X and Z,
//   JointMotorSettings::angleRateRows), bounded by maxTorque (Bullet 3.24 treats the motor bound
//   as a force). See updateMotor() for the soft-drive case, where Bullet's row CFM would make its
//   solver diverge. (Bullet's own spring row is explicit in the stiffness and ignores any torque
//   limit.)
// - Bullet does not warm-start joint rows (btSequentialImpulseConstraintSolver rebuilds them with
//   zero impulse every substep; btGeneric6DofSpring2Constraint keeps no accumulated impulse);
//   contacts are warm-started per manifold point. BulletSettings::warmStartJoints makes the
//   adapter's solver (JointWarmStartSolver) do it for joint rows. resetWarmStart() therefore clears the
//   constraint's applied-impulse feedback and the cached impulses of every contact point touching
//   either of the joint's bodies.
#include "physics_bullet/bullet_parts.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace handoff::bullet_detail {
namespace {

// Tuning (measured by tests/physics_bullet; see the report).

/// Largest row CFM given to a motor row (Bullet's solver diverges at 1; see updateMotor()).
constexpr double kMaxMotorCfm = 0.5;
/// Smallest scale from an Euler angle's rate to its motor row's velocity (|cos y|, see
/// updateMotor). Asset limits keep |y| <= 1.4 rad (0.17); this only keeps a row that measures
/// nothing at the gimbal lock itself from becoming a rigid lock at zero rate.
constexpr double kMinRowFromRate = 1e-3;

double wrapAngle(double a) {
  a = std::remainder(a, 2.0 * kPi);
  return a;
}

}  // namespace

// --- CentredAnchorConstraint ---------------------------------------------------------------------

void CentredAnchorConstraint::getInfo2(btConstraintInfo2* info) {
  btGeneric6DofSpring2Constraint::getInfo2(info);
  btConstraintInfo1 rows;
  getInfo1(&rows);
  const btVector3 mid = 0.5 * (getCalculatedTransformA().getOrigin() + getCalculatedTransformB().getOrigin());
  const btVector3 relA = mid - getRigidBodyA().getCenterOfMassPosition();
  const btVector3 relB = mid - getRigidBodyB().getCenterOfMassPosition();
  for (int r = 0; r < rows.m_numConstraintRows; ++r) {
    const int o = r * info->rowskip;
    const btVector3 n(info->m_J1linearAxis[o], info->m_J1linearAxis[o + 1], info->m_J1linearAxis[o + 2]);
    if (n.length2() == 0.0) continue;  // an angular row
    const btVector3 a = relA.cross(n), b = -relB.cross(n);
    for (int i = 0; i < 3; ++i) {
      info->m_J1angularAxis[o + i] = a[i];
      info->m_J2angularAxis[o + i] = b[i];
    }
  }
}

// --- JointWarmStartSolver ------------------------------------------------------------------------

template <typename F>
void JointWarmStartSolver::forEachJoint(F&& f) {
  const int n = m_tmpSolverNonContactConstraintPool.size();
  int first = 0;
  while (first < n) {
    const void* owner = m_tmpSolverNonContactConstraintPool[first].m_originalContactPoint;
    int end = first + 1;
    while (end < n && m_tmpSolverNonContactConstraintPool[end].m_originalContactPoint == owner) ++end;
    const int id = static_cast<const btTypedConstraint*>(owner)->getUserConstraintId();
    if (id >= 0 && static_cast<std::size_t>(id) < rows_.size())
      f(rows_[static_cast<std::size_t>(id)], first, end - first);
    first = end;
  }
}

btScalar JointWarmStartSolver::solveGroupCacheFriendlySetup(btCollisionObject** bodies, int numBodies,
                                                            btPersistentManifold** manifolds,
                                                            int numManifolds, btTypedConstraint** constraints,
                                                            int numConstraints,
                                                            const btContactSolverInfo& info,
                                                            btIDebugDraw* debugDrawer) {
  const btScalar r = btSequentialImpulseConstraintSolver::solveGroupCacheFriendlySetup(
      bodies, numBodies, manifolds, numManifolds, constraints, numConstraints, info, debugDrawer);
  splitRows_.clear();
  chainSet_ = false;
  if (limitedBodies > 0) {
    limitDepenetration(info);
    if (info.m_splitImpulse) splitJointRows(info);
  }
  softenMotorRows();
  if (!enabled) return r;
  forEachJoint([&](Rows& rows, int first, int count) {
    if (rows.count != count) return;
    for (int k = 0; k < count; ++k) {
      btSolverConstraint& row = m_tmpSolverNonContactConstraintPool[first + k];
      // Motor rows (the only rows with compliance) start cold: their target moves every
      // step with the animation, so last substep's impulse is no estimate of this one's.
      if (row.m_cfm > 0) continue;
      const double impulse = std::clamp(rows.impulse[k], static_cast<double>(row.m_lowerLimit),
                                        static_cast<double>(row.m_upperLimit));
      if (impulse == 0.0) continue;
      row.m_appliedImpulse = impulse;
      btSolverBody& a = m_tmpSolverBodyPool[row.m_solverBodyIdA];
      btSolverBody& b = m_tmpSolverBodyPool[row.m_solverBodyIdB];
      a.internalApplyImpulse(row.m_contactNormal1 * a.internalGetInvMass(), row.m_angularComponentA, impulse);
      b.internalApplyImpulse(row.m_contactNormal2 * b.internalGetInvMass(), row.m_angularComponentB, impulse);
    }
  });
  return r;
}

void JointWarmStartSolver::softenMotorRows() {
  // Bullet's row update is delta = rhs - cfm lambda - J dv / jmj with rhs = (v_t - w0) / jmj: its
  // fixed point is the soft constraint w' = v_t - cfm jmj lambda, but the step is SOR with factor
  // 1 + cfm (the diagonal jmj lacks the row's own compliance cfm jmj), which diverges for cfm >= 1.
  // A motor row softer than kMaxMotorCfm (BulletWorld::updateMotor gives it its exact cfm) is
  // rescaled to the Gauss-Seidel step on the diagonal jmj (1 + cfm): the same fixed point, stable
  // at any compliance. Stiffer rows are left as Bullet set them. Motor rows are the only joint
  // rows with compliance (limit and locked rows have CFM 0).
  for (int i = 0; i < m_tmpSolverNonContactConstraintPool.size(); ++i) {
    btSolverConstraint& row = m_tmpSolverNonContactConstraintPool[i];
    if (!(row.m_cfm > kMaxMotorCfm)) continue;
    const btScalar scale = btScalar(1) / (btScalar(1) + row.m_cfm);
    row.m_jacDiagABInv *= scale;
    row.m_rhs *= scale;
    row.m_cfm *= scale;
  }
}

JointWarmStartSolver::Depenetration* JointWarmStartSolver::limitOf(int solverBody) {
  const btRigidBody* body = m_tmpSolverBodyPool[solverBody].m_originalBody;
  if (body == nullptr) return nullptr;
  const int index = body->getUserIndex();
  if (index < 0 || static_cast<std::size_t>(index) >= depenetration.size()) return nullptr;
  Depenetration& d = depenetration[static_cast<std::size_t>(index)];
  return d.maxSpeed > 0.0 ? &d : nullptr;
}

void JointWarmStartSolver::limitDepenetration(const btContactSolverInfo& info) {
  // Bullet's contact row (setupContactConstraint) pushes a point `penetration` deep out at
  // erp2 |penetration| / h: in the velocity row (Baumgarte: the body keeps that velocity) unless
  // the split impulse takes it (deeper than m_splitImpulsePenetrationThreshold). For a limited
  // body every push faster than its limit goes to the split-impulse row (a position change with
  // no velocity), capped; slower ones stay as Bullet set them (a foot resting on the floor).
  const double h = info.m_timeStep;
  for (int i = 0; i < m_tmpSolverContactConstraintPool.size(); ++i) {
    btSolverConstraint& c = m_tmpSolverContactConstraintPool[i];
    Depenetration* a = limitOf(c.m_solverBodyIdA);
    Depenetration* b = limitOf(c.m_solverBodyIdB);
    if (a == nullptr && b == nullptr) continue;
    const auto& cp = *static_cast<const btManifoldPoint*>(c.m_originalContactPoint);
    constexpr int kOwnErp = BT_CONTACT_FLAG_HAS_CONTACT_CFM | BT_CONTACT_FLAG_HAS_CONTACT_ERP |
                            BT_CONTACT_FLAG_CONTACT_STIFFNESS_DAMPING;
    if ((cp.m_contactPointFlags & kOwnErp) != 0) continue;  // a contact with its own softness
    const double penetration = static_cast<double>(cp.getDistance()) + info.m_linearSlop;
    if (a != nullptr) a->deepest = std::min(a->deepest, penetration);
    if (b != nullptr) b->deepest = std::min(b->deepest, penetration);
    if (!(penetration < 0.0)) continue;
    const double speed = -penetration * info.m_erp2 / h;  // Bullet's own push [m/s]
    const double cap = std::min(a != nullptr ? a->maxSpeed : speed, b != nullptr ? b->maxSpeed : speed);
    if (speed <= cap) continue;  // within the limit: Bullet's own push, as without one
    const double push = cap;
    const double jacobian = c.m_jacDiagABInv;
    if (!info.m_splitImpulse) {  // no split rows: the velocity push capped
      c.m_rhs -= static_cast<btScalar>((speed - push) * jacobian);
      continue;
    }
    if (penetration > info.m_splitImpulsePenetrationThreshold)  // Bullet put it in the velocity row
      c.m_rhs -= static_cast<btScalar>(speed * jacobian);
    c.m_rhsPenetration = static_cast<btScalar>(push * jacobian);
  }
}

void JointWarmStartSolver::splitJointRows(const btContactSolverInfo& info) {
  // The chain: solver bodies jointed, directly or through others, to a limited body.
  const int bodyCount = m_tmpSolverBodyPool.size();
  pushedChain_.assign(static_cast<std::size_t>(bodyCount), 0);
  double cap = 0.0;  // the fastest push of the chain's limited bodies [m/s]
  for (int i = 0; i < bodyCount; ++i) {
    if (const Depenetration* d = limitOf(i)) {
      pushedChain_[static_cast<std::size_t>(i)] = 1;
      cap = std::max(cap, d->maxSpeed);
    }
  }
  if (!(cap > 0.0)) return;
  chainSet_ = true;
  const int rowCount = m_tmpSolverNonContactConstraintPool.size();
  const auto dynamic = [this](int b) { return m_tmpSolverBodyPool[b].m_originalBody != nullptr; };
  for (bool grew = true; grew;) {
    grew = false;
    for (int i = 0; i < rowCount; ++i) {
      const btSolverConstraint& row = m_tmpSolverNonContactConstraintPool[i];
      std::uint8_t& a = pushedChain_[static_cast<std::size_t>(row.m_solverBodyIdA)];
      std::uint8_t& b = pushedChain_[static_cast<std::size_t>(row.m_solverBodyIdB)];
      if (a == b) continue;
      if (a == 0 && dynamic(row.m_solverBodyIdA)) a = 1, grew = true;
      if (b == 0 && dynamic(row.m_solverBodyIdB)) b = 1, grew = true;
    }
  }
  // Bullet's joint row (convertJoint): rhs = (positional error + (0 - v_rel) damping) / jmj, v_rel
  // with the external impulses of the substep. The positional part moves to the split row; motor
  // rows (compliance > 0) keep theirs: their error is a target velocity.
  for (int i = 0; i < rowCount; ++i) {
    btSolverConstraint& row = m_tmpSolverNonContactConstraintPool[i];
    if (row.m_cfm > 0 || !(pushedChain_[static_cast<std::size_t>(row.m_solverBodyIdA)] ||
                           pushedChain_[static_cast<std::size_t>(row.m_solverBodyIdB)]))
      continue;
    const btSolverBody& a = m_tmpSolverBodyPool[row.m_solverBodyIdA];
    const btSolverBody& b = m_tmpSolverBodyPool[row.m_solverBodyIdB];
    const btScalar relative = row.m_contactNormal1.dot(a.m_linearVelocity + a.m_externalForceImpulse) +
                              row.m_relpos1CrossNormal.dot(a.m_angularVelocity + a.m_externalTorqueImpulse) +
                              row.m_contactNormal2.dot(b.m_linearVelocity + b.m_externalForceImpulse) +
                              row.m_relpos2CrossNormal.dot(b.m_angularVelocity + b.m_externalTorqueImpulse);
    const btScalar velocityPart = -relative * info.m_damping * row.m_jacDiagABInv;
    const btScalar positionPart = row.m_rhs - velocityPart;
    // A one-sided (limit) row's positional part is either an error (a joint past its limit) or
    // the gap it may still close in this substep (the 6-DoF spring2 limit rows are speculative):
    // only an error moves.
    const bool error = (row.m_lowerLimit == 0 && positionPart > 0) ||
                       (row.m_upperLimit == 0 && positionPart < 0) ||
                       (row.m_lowerLimit < 0 && row.m_upperLimit > 0);
    if (!error || row.m_jacDiagABInv == 0) continue;
    // What the push can have opened: an error closed at most at the push's own speed. A larger
    // one (a crush, a hit stretching the joint) keeps Bullet's velocity correction for the rest.
    const btScalar limit = static_cast<btScalar>(cap) * btFabs(row.m_jacDiagABInv);
    const btScalar split = std::clamp(positionPart, -limit, limit);
    row.m_rhsPenetration = split;
    row.m_rhs = velocityPart + (positionPart - split);
    row.m_appliedPushImpulse = 0;
    if (row.m_rhsPenetration != 0) splitRows_.push_back(i);
  }
}

void JointWarmStartSolver::solveGroupCacheFriendlySplitImpulseIterations(
    btCollisionObject** bodies, int numBodies, btPersistentManifold** manifolds, int numManifolds,
    btTypedConstraint** constraints, int numConstraints, const btContactSolverInfo& info,
    btIDebugDraw* debugDrawer) {
  if (splitRows_.empty() || !info.m_splitImpulse) {
    btSequentialImpulseConstraintSolver::solveGroupCacheFriendlySplitImpulseIterations(
        bodies, numBodies, manifolds, numManifolds, constraints, numConstraints, info, debugDrawer);
    return;
  }
  // Bullet's split iterations over the contacts, with the joints' split rows among them. A joint
  // row clamps at both of its limits (Bullet's split step knows only a contact's lower one).
  const int contacts = m_tmpSolverContactConstraintPool.size();
  for (int iteration = 0; iteration < info.m_numIterations; ++iteration) {
    btScalar residual = 0;
    for (int j = 0; j < contacts; ++j) {
      const btSolverConstraint& c = m_tmpSolverContactConstraintPool[m_orderTmpConstraintPool[j]];
      const btScalar r = resolveSplitPenetrationImpulse(m_tmpSolverBodyPool[c.m_solverBodyIdA],
                                                        m_tmpSolverBodyPool[c.m_solverBodyIdB], c);
      residual = std::max(residual, r * r);
    }
    for (const int i : splitRows_) {
      btSolverConstraint& c = m_tmpSolverNonContactConstraintPool[i];
      btSolverBody& a = m_tmpSolverBodyPool[c.m_solverBodyIdA];
      btSolverBody& b = m_tmpSolverBodyPool[c.m_solverBodyIdB];
      btScalar delta = c.m_rhsPenetration;
      delta -= (c.m_contactNormal1.dot(a.internalGetPushVelocity()) +
                c.m_relpos1CrossNormal.dot(a.internalGetTurnVelocity())) *
               c.m_jacDiagABInv;
      delta -= (c.m_contactNormal2.dot(b.internalGetPushVelocity()) +
                c.m_relpos2CrossNormal.dot(b.internalGetTurnVelocity())) *
               c.m_jacDiagABInv;
      const btScalar sum = std::clamp(c.m_appliedPushImpulse + delta, c.m_lowerLimit, c.m_upperLimit);
      delta = sum - c.m_appliedPushImpulse;
      c.m_appliedPushImpulse = sum;
      a.internalApplyPushImpulse(c.m_contactNormal1 * a.internalGetInvMass(), c.m_angularComponentA, delta);
      b.internalApplyPushImpulse(c.m_contactNormal2 * b.internalGetInvMass(), c.m_angularComponentB, delta);
      if (c.m_jacDiagABInv != 0)
        residual = std::max(residual, delta * delta / (c.m_jacDiagABInv * c.m_jacDiagABInv));
    }
    if (residual <= info.m_leastSquaresResidualThreshold) break;
  }
}

btScalar JointWarmStartSolver::solveGroupCacheFriendlyFinish(btCollisionObject** bodies, int numBodies,
                                                             const btContactSolverInfo& info) {
  // What the push moves by position (the writeback adds push velocity x h to each position).
  if (chainSet_ && info.m_splitImpulse) {
    for (int i = 0; i < m_tmpSolverBodyPool.size(); ++i) {
      const btSolverBody& body = m_tmpSolverBodyPool[i];
      if (!pushedChain_[static_cast<std::size_t>(i)] || body.m_originalBody == nullptr) continue;
      const int index = body.m_originalBody->getUserIndex();
      if (index >= 0 && static_cast<std::size_t>(index) < pushed.size())
        pushed[static_cast<std::size_t>(index)] += body.m_pushVelocity * info.m_timeStep;
    }
  }
  if (enabled) {
    forEachJoint([&](Rows& rows, int first, int count) {
      rows.count = count <= kMaxRows ? count : 0;
      for (int k = 0; k < rows.count; ++k)
        rows.impulse[k] = m_tmpSolverNonContactConstraintPool[first + k].m_appliedImpulse;
    });
  }
  return btSequentialImpulseConstraintSolver::solveGroupCacheFriendlyFinish(bodies, numBodies, info);
}

// --- Joint motors --------------------------------------------------------------------------------

void BulletWorld::updateMotor(JointSlot& joint, double h) {
  btGeneric6DofSpring2Constraint& c = *joint.constraint;
  const JointMotorSettings& m = joint.motor;
  c.calculateTransforms();
  const btRigidBody& ra = c.getRigidBodyA();
  const btRigidBody& rb = c.getRigidBodyB();
  for (int i = 0; i < 3; ++i) {
    const bool locked = joint.lower[i] == joint.upper[i];
    const double kp = m.stiffness[i];
    const double kd = m.damping[i];
    const double denom = h * kp + kd;
    if (locked || !(denom > 0.0)) {
      c.enableMotor(3 + i, false);
      continue;
    }
    const bool open = joint.lower[i] > joint.upper[i];
    double error = joint.motorTargetAngles[i] - c.getAngle(i);
    if (open && i != 1) error = wrapAngle(error);
    const btVector3 axis = c.getAxis(i);
    // Bullet's row i turns about axis i, the dual of the Euler axes (perpendicular to the other
    // two), so its velocity is the angle's rate times cos(angle y) for X and Z (1 for Y): by the
    // gimbal lock the rows of X and Z measure a fraction of their angles' rates. The PD below is
    // on the angles, so each row's target and compliance are scaled by that factor (scale the
    // target alone and the servo asks X and Z for 1 / cos y times the rates it means).
    const btVector3 eulerAxis = i == 0   ? c.getCalculatedTransformB().getBasis().getColumn(0)
                                : i == 2 ? c.getCalculatedTransformA().getBasis().getColumn(2)
                                         : axis;
    const double rowFromRate =
        m.angleRateRows ? std::max<double>(std::abs(eulerAxis.dot(axis)), kMinRowFromRate) : 1.0;
    // J M^-1 J^T of the angular row (zero for a static or kinematic body).
    const double jmj =
        axis.dot(ra.getInvInertiaTensorWorld() * axis) + axis.dot(rb.getInvInertiaTensorWorld() * axis);
    if (!(jmj > 1e-12)) {
      c.enableMotor(3 + i, false);
      continue;
    }
    // The implicit PD as a soft constraint on the row's rate w (= d angle / dt):
    //   lambda = h (Kp (e - h w') - Kd w')  <=>  w' = v_t - gamma_i lambda,
    //   v_t = Kp e / (h Kp + Kd),  gamma_i = 1 / (h (h Kp + Kd))   [an impulse compliance].
    // Bullet's row converges to lambda = (v_t - w') / (jmj (1 + cfm)), so cfm = gamma_i / jmj.
    // Bullet's Gauss-Seidel update omits cfm from the row's diagonal (it is SOR with factor
    // 1 + cfm), which diverges for cfm >= 1, i.e. for soft drives (a ragdoll's passive damper:
    // gamma ~ 60). Our solver (JointWarmStartSolver::softenMotorRows) puts cfm back into the
    // diagonal of every row softer than kMaxMotorCfm, so those rows get the exact compliance
    // and the implicit PD holds whatever else acts on the pair (gravity, the other joints).
    // A game's own solver (a joined world) does not: there soft rows keep cfm at kMaxMotorCfm
    // and move the target so the isolated pair still gets the exact implicit impulse,
    // w_t' = w0 + (v_t - w0) (1 + cfm) / (1 + gamma); such a row also resists, at the stiff
    // compliance, what other forces do to the pair (a passive damper then takes 3-4 times its
    // sum Kd |w'|^2 h: conformance joint.motor_damper_energy).
    // A moving target (rate r): tau = Kp (e + h r - h w') + Kd (r - w') gives v_t + r.
    // In row units (u = rowFromRate * rate, lambda = Q / rowFromRate for the angle's generalised
    // impulse Q): v_t and gamma_i gain the factor rowFromRate and rowFromRate^2.
    const double gamma = rowFromRate * rowFromRate / (h * denom * jmj);
    const double cfm = solver_ != nullptr ? gamma : std::min(gamma, kMaxMotorCfm);
    double target = rowFromRate * (kp * error / denom + m.targetRates[i]);
    if (gamma > cfm) {
      const double w0 = ra.getAngularVelocity().dot(axis) - rb.getAngularVelocity().dot(axis);
      target = w0 + (target - w0) * (1.0 + cfm) / (1.0 + gamma);
    }
    c.setTargetVelocity(3 + i, target);
    c.setParam(BT_CONSTRAINT_CFM, cfm, 3 + i);
    // Bullet 3.24 scales the motor bound by the substep (a force, not an impulse): checked by
    // Motor.TorqueLimitIsHonoured.
    c.setMaxMotorForce(3 + i, std::isinf(m.maxTorque) ? SIMD_INFINITY : m.maxTorque);
    c.enableMotor(3 + i, true);
  }
}

}  // namespace handoff::bullet_detail
