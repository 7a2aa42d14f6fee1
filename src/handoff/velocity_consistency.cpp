// The velocity-consistency step of the commit (see VelocityProjector in handoff/handoff.h):
// the smallest change of the inherited velocities, in the kinetic-energy metric, that satisfies
// the joints' velocity constraints and the binding static contacts. One direct solve of the
// rows' effective-mass system (J M^-1 J^T) lambda = -J v (a ragdoll has at most ~100 rows);
// contacts are push-only, found with a few active-set passes.
#include "handoff/handoff.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace handoff {

namespace {
constexpr int kMaxActiveSetPasses = 8;
/// A pivot below this fraction of its diagonal marks a row that depends on earlier ones (four
/// corners of a box on the floor): it takes no impulse, the others satisfy it.
constexpr double kPivotTolerance = 1e-10;
}  // namespace

int lockedAxisRows(const Quat& jointFrameA, const Quat& jointFrameB, std::uint8_t lockedMask, Vec3 out[3]) {
  // Bullet's btGeneric6DofSpring2Constraint (RO_XYZ, built with our B as its A) computes the same
  // three directions in calculateAngleInfo(): the dual basis of the Euler axes, normalised.
  const Vec3 xA = jointFrameA * Vec3{1.0, 0.0, 0.0};
  const Vec3 zB = jointFrameB * Vec3{0.0, 0.0, 1.0};
  const Vec3 between = glm::cross(zB, xA);
  if (!(glm::length(between) > 1e-9)) return 0;  // gimbal lock: the engine's rows degenerate too
  const Vec3 axes[3] = {glm::cross(between, zB), between, glm::cross(xA, between)};
  int count = 0;
  for (int i = 0; i < 3; ++i) {
    if (!(lockedMask & (1u << i))) continue;
    const double len = glm::length(axes[i]);
    if (!(len > 1e-12)) continue;
    out[count++] = axes[i] / len;
  }
  return count;
}

VelocityProjector::VelocityProjector(int maxBodies, int maxJointRows, int maxContacts)
    : rows_(static_cast<size_t>(maxJointRows + maxContacts)),
      active_(static_cast<size_t>(maxJointRows + maxContacts)),
      matrix_(static_cast<size_t>((maxJointRows + maxContacts) * (maxJointRows + maxContacts))),
      lambda_(static_cast<size_t>(maxJointRows + maxContacts)),
      rhs_(static_cast<size_t>(maxJointRows + maxContacts)),
      contactOn_(static_cast<size_t>(maxContacts)),
      baseLinear_(static_cast<size_t>(maxBodies)),
      baseAngular_(static_cast<size_t>(maxBodies)),
      maxBodies_(maxBodies),
      maxJointRows_(maxJointRows),
      maxContacts_(maxContacts) {}

int VelocityProjector::solve(int n) {
  // matrix_ holds the n x n system (row-major) and rhs_ the right-hand side. LDL^T in place on
  // the lower triangle; dependent rows (tiny pivots) are dropped with lambda = 0.
  double* a = matrix_.data();
  auto at = [&](int i, int j) -> double& { return a[static_cast<size_t>(i * n + j)]; };
  int solved = 0;
  for (int k = 0; k < n; ++k) {
    const double diagonal = at(k, k);
    for (int j = 0; j < k; ++j) {
      double s = at(k, j);
      for (int p = 0; p < j; ++p) s -= at(k, p) * at(j, p) * at(p, p);
      at(k, j) = at(j, j) > 0.0 ? s / at(j, j) : 0.0;
    }
    double d = diagonal;
    for (int p = 0; p < k; ++p) d -= at(k, p) * at(k, p) * at(p, p);
    if (d > kPivotTolerance * diagonal && d > 0.0) {
      at(k, k) = d;
      ++solved;
    } else {
      at(k, k) = 0.0;  // dropped
      for (int p = 0; p < k; ++p) at(k, p) = 0.0;
    }
  }
  for (int k = 0; k < n; ++k) {
    double s = rhs_[static_cast<size_t>(k)];
    for (int p = 0; p < k; ++p) s -= at(k, p) * lambda_[static_cast<size_t>(p)];
    lambda_[static_cast<size_t>(k)] = s;
  }
  for (int k = 0; k < n; ++k) {
    lambda_[static_cast<size_t>(k)] = at(k, k) > 0.0 ? lambda_[static_cast<size_t>(k)] / at(k, k) : 0.0;
  }
  for (int k = n - 1; k >= 0; --k) {
    double s = lambda_[static_cast<size_t>(k)];
    if (at(k, k) > 0.0) {
      for (int p = k + 1; p < n; ++p) s -= at(p, k) * lambda_[static_cast<size_t>(p)];
    }
    lambda_[static_cast<size_t>(k)] = at(k, k) > 0.0 ? s : 0.0;
  }
  return solved;
}

VelocityProjector::Outcome VelocityProjector::project(
    std::span<const ConsistencyBody> bodies, std::span<const ConsistencyJoint> joints,
    std::span<const ConsistencyContact> contacts, double lookAhead, std::span<Vec3> linear,
    std::span<Vec3> angular, std::span<Vec3> jointLinear, std::span<Vec3> jointAngular,
    std::span<Vec3> contactLinear, std::span<Vec3> contactAngular) {
  const int n = static_cast<int>(bodies.size());
  assert(n <= maxBodies_ && "more bodies than the projector's capacity");
  assert(linear.size() >= bodies.size() && angular.size() >= bodies.size() &&
         jointLinear.size() >= bodies.size() && jointAngular.size() >= bodies.size() &&
         contactLinear.size() >= bodies.size() && contactAngular.size() >= bodies.size() &&
         "output spans too short");
  Outcome outcome;
  const int bodyCount = std::min(n, maxBodies_);
  auto valid = [&](int b) { return b >= 0 && b < bodyCount; };

  // Rows: joints first (always on), then contacts.
  int rowCount = 0;
  auto addRow = [&](int a, const Vec3& linA, const Vec3& angA, int b, const Vec3& linB, const Vec3& angB,
                    int contact) {
    assert(static_cast<size_t>(rowCount) < rows_.size() && "more rows than the projector's capacity");
    Row& row = rows_[static_cast<size_t>(rowCount)];
    row.a = a;
    row.b = b;
    row.linA = linA;
    row.angA = angA;
    row.linB = linB;
    row.angB = angB;
    row.contact = contact;
    if (a >= 0) {
      row.wLinA = bodies[static_cast<size_t>(a)].inverseMass * linA;
      row.wAngA = bodies[static_cast<size_t>(a)].inverseInertia * angA;
    } else {
      row.wLinA = row.wAngA = Vec3{0.0};
    }
    row.wLinB = bodies[static_cast<size_t>(b)].inverseMass * linB;
    row.wAngB = bodies[static_cast<size_t>(b)].inverseInertia * angB;
    ++rowCount;
  };
  for (const ConsistencyJoint& joint : joints) {
    if (!valid(joint.parent) || !valid(joint.child)) continue;
    const Vec3 rA = joint.anchor - bodies[static_cast<size_t>(joint.parent)].centre;
    const Vec3 rB = joint.anchor - bodies[static_cast<size_t>(joint.child)].centre;
    for (int k = 0; k < 3 && rowCount < maxJointRows_; ++k) {
      Vec3 e{0.0};
      e[k] = 1.0;
      addRow(joint.parent, -e, -glm::cross(rA, e), joint.child, e, glm::cross(rB, e), -1);
    }
    for (int k = 0; k < joint.lockedCount && k < 3 && rowCount < maxJointRows_; ++k) {
      const Vec3& d = joint.lockedAxes[k];
      addRow(joint.parent, Vec3{0.0}, -d, joint.child, Vec3{0.0}, d, -1);
    }
  }
  const int firstContactRow = rowCount;
  int contactRows = 0;
  for (size_t c = 0; c < contacts.size() && contactRows < maxContacts_; ++c) {
    const ConsistencyContact& contact = contacts[c];
    if (!valid(contact.body)) continue;
    const Vec3 r = contact.point - bodies[static_cast<size_t>(contact.body)].centre;
    addRow(-1, Vec3{0.0}, Vec3{0.0}, contact.body, contact.normal, glm::cross(r, contact.normal),
           static_cast<int>(c));
    contactOn_[static_cast<size_t>(contactRows)] = 0;
    ++contactRows;
  }
  assert(contacts.size() <= static_cast<size_t>(maxContacts_) && "more contacts than the capacity");
  const int totalRows = rowCount;

  for (int b = 0; b < bodyCount; ++b) {
    baseLinear_[static_cast<size_t>(b)] = linear[static_cast<size_t>(b)];
    baseAngular_[static_cast<size_t>(b)] = angular[static_cast<size_t>(b)];
  }
  auto rowVelocity = [&](const Row& row, std::span<const Vec3> v, std::span<const Vec3> w) {
    double s =
        glm::dot(row.linB, v[static_cast<size_t>(row.b)]) + glm::dot(row.angB, w[static_cast<size_t>(row.b)]);
    if (row.a >= 0) {
      s += glm::dot(row.linA, v[static_cast<size_t>(row.a)]) +
           glm::dot(row.angA, w[static_cast<size_t>(row.a)]);
    }
    return s;
  };
  auto coupling = [](const Row& i, const Row& j) {
    double s = 0.0;
    if (i.b == j.b) s += glm::dot(i.linB, j.wLinB) + glm::dot(i.angB, j.wAngB);
    if (i.a >= 0 && i.a == j.b) s += glm::dot(i.linA, j.wLinB) + glm::dot(i.angA, j.wAngB);
    if (j.a >= 0 && i.b == j.a) s += glm::dot(i.linB, j.wLinA) + glm::dot(i.angB, j.wAngA);
    if (i.a >= 0 && i.a == j.a) s += glm::dot(i.linA, j.wLinA) + glm::dot(i.angA, j.wAngA);
    return s;
  };

  int activeCount = 0;
  for (int pass = 0; pass < kMaxActiveSetPasses; ++pass) {
    // Active rows: every joint row, contacts switched on (1).
    activeCount = 0;
    for (int r = 0; r < totalRows; ++r) {
      const Row& row = rows_[static_cast<size_t>(r)];
      if (row.contact >= 0 && contactOn_[static_cast<size_t>(r - firstContactRow)] != 1) continue;
      active_[static_cast<size_t>(activeCount++)] = r;
    }
    for (int i = 0; i < activeCount; ++i) {
      const Row& ri = rows_[static_cast<size_t>(active_[static_cast<size_t>(i)])];
      rhs_[static_cast<size_t>(i)] = -rowVelocity(ri, baseLinear_, baseAngular_);
      for (int j = 0; j <= i; ++j) {
        const double c = coupling(ri, rows_[static_cast<size_t>(active_[static_cast<size_t>(j)])]);
        matrix_[static_cast<size_t>(i * activeCount + j)] = c;
        matrix_[static_cast<size_t>(j * activeCount + i)] = c;
      }
    }
    solve(activeCount);
    for (int b = 0; b < bodyCount; ++b) {
      linear[static_cast<size_t>(b)] = baseLinear_[static_cast<size_t>(b)];
      angular[static_cast<size_t>(b)] = baseAngular_[static_cast<size_t>(b)];
    }
    for (int i = 0; i < activeCount; ++i) {
      const Row& row = rows_[static_cast<size_t>(active_[static_cast<size_t>(i)])];
      const double l = lambda_[static_cast<size_t>(i)];
      linear[static_cast<size_t>(row.b)] += l * row.wLinB;
      angular[static_cast<size_t>(row.b)] += l * row.wAngB;
      if (row.a >= 0) {
        linear[static_cast<size_t>(row.a)] += l * row.wLinA;
        angular[static_cast<size_t>(row.a)] += l * row.wAngA;
      }
    }
    // Push-only: a contact pulling (lambda < 0) leaves for good (2); a contact the corrected
    // velocities drive into the surface within the look-ahead joins (1).
    bool changed = false;
    for (int i = 0; i < activeCount; ++i) {
      const Row& row = rows_[static_cast<size_t>(active_[static_cast<size_t>(i)])];
      if (row.contact >= 0 && lambda_[static_cast<size_t>(i)] < 0.0) {
        contactOn_[static_cast<size_t>(active_[static_cast<size_t>(i)] - firstContactRow)] = 2;
        changed = true;
      }
    }
    if (!changed) {
      for (int c = 0; c < contactRows; ++c) {
        if (contactOn_[static_cast<size_t>(c)] != 0) continue;
        const Row& row = rows_[static_cast<size_t>(firstContactRow + c)];
        const double approach = rowVelocity(row, linear, angular);
        if (contacts[static_cast<size_t>(row.contact)].distance + lookAhead * approach < 0.0) {
          contactOn_[static_cast<size_t>(c)] = 1;
          changed = true;
        }
      }
    }
    if (!changed) break;
  }

  // Split the change into its joint and contact parts, and measure what is left.
  for (int b = 0; b < bodyCount; ++b) {
    jointLinear[static_cast<size_t>(b)] = jointAngular[static_cast<size_t>(b)] = Vec3{0.0};
    contactLinear[static_cast<size_t>(b)] = contactAngular[static_cast<size_t>(b)] = Vec3{0.0};
  }
  for (int i = 0; i < activeCount; ++i) {
    const Row& row = rows_[static_cast<size_t>(active_[static_cast<size_t>(i)])];
    const double l = lambda_[static_cast<size_t>(i)];
    std::span<Vec3> lin = row.contact >= 0 ? contactLinear : jointLinear;
    std::span<Vec3> ang = row.contact >= 0 ? contactAngular : jointAngular;
    lin[static_cast<size_t>(row.b)] += l * row.wLinB;
    ang[static_cast<size_t>(row.b)] += l * row.wAngB;
    if (row.a >= 0) {
      lin[static_cast<size_t>(row.a)] += l * row.wLinA;
      ang[static_cast<size_t>(row.a)] += l * row.wAngA;
    }
    if (row.contact >= 0) ++outcome.contactsUsed;
    outcome.residual = std::max(outcome.residual, std::abs(rowVelocity(row, linear, angular)));
  }
  return outcome;
}

}  // namespace handoff
