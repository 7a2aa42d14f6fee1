// The velocity-consistency step of the commit (see VelocityProjector in handoff/handoff.h):
// the smallest change of the inherited velocities, in the kinetic-energy metric, that satisfies
// the joints' velocity constraints and the binding static contacts. One direct solve of the
// rows' effective-mass system (J M^-1 J^T) lambda = -J v. The joints of a ragdoll form a tree:
// with the joint rows ordered leaves first, the LDL^T factorisation of that system has no fill-in
// (a perfect elimination order: a joint row couples only to the rows of the joints at its two
// bodies; cf. Baraff 1996, "Linear-time dynamics using Lagrange multipliers"), so the joints cost
// O(rows) instead of O(rows^3). Contacts are push-only, found with a few active-set passes; the
// joint factor is computed once, and each pass refactors only the contacts' dense Schur
// complement. The arithmetic is that of one dense LDL^T of [joint rows; active contacts] with the
// contacts last, in their given order: the same rows are dropped as dependent.
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
/// A joint pivot below this fraction of its diagonal (a row dependent, or nearly, on the others)
/// makes the projector factor the joints again in their given order: which of the dependent rows
/// is dropped then does not depend on the tree order.
constexpr double kNearlyDependentPivot = 1e-6;
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
      jointOrder_(static_cast<size_t>(maxJointRows)),
      jointRows_(static_cast<size_t>(maxJointRows)),
      parent_(static_cast<size_t>(maxBodies)),
      depth_(static_cast<size_t>(maxBodies)),
      bodyRowStart_(static_cast<size_t>(maxBodies + 1)),
      bodyRows_(static_cast<size_t>(2 * maxJointRows)),
      nzStart_(static_cast<size_t>(maxJointRows + 1)),
      nz_(static_cast<size_t>(maxJointRows * (maxJointRows + 1) / 2)),
      nzCode_(nz_.size()),
      given_(static_cast<size_t>(maxJointRows)),
      factor_(static_cast<size_t>((maxJointRows + maxContacts) * maxJointRows)),
      scaled_(static_cast<size_t>(maxJointRows)),
      contactScaled_(static_cast<size_t>(maxContacts * maxJointRows)),
      schur_(static_cast<size_t>(maxContacts * maxContacts)),
      contactDiagonal_(static_cast<size_t>(maxContacts)),
      active_(static_cast<size_t>(maxContacts * maxContacts)),
      activeRows_(static_cast<size_t>(maxContacts)),
      rhs_(static_cast<size_t>(maxJointRows + maxContacts)),
      lambda_(static_cast<size_t>(maxJointRows + maxContacts)),
      contactOn_(static_cast<size_t>(maxContacts)),
      baseLinear_(static_cast<size_t>(maxBodies)),
      baseAngular_(static_cast<size_t>(maxBodies)),
      maxBodies_(maxBodies),
      maxJointRows_(maxJointRows),
      maxContacts_(maxContacts) {}

namespace {

/// Which bodies two rows share: bit 0 i.b = j.b, bit 1 i.a = j.b, bit 2 i.b = j.a, bit 3 i.a = j.a.
template <class R>
std::uint8_t sharedBodies(const R& i, const R& j) {
  return static_cast<std::uint8_t>((i.b == j.b ? 1 : 0) | (i.a >= 0 && i.a == j.b ? 2 : 0) |
                                   (j.a >= 0 && i.b == j.a ? 4 : 0) | (i.a >= 0 && i.a == j.a ? 8 : 0));
}

/// sharedBodies() of two rows of one joint (or of two joints between the same two bodies).
constexpr std::uint8_t kSameBodies = 1 | 8;

/// J_i M^-1 J_j^T: rows couple through the bodies they share (`shared`: sharedBodies(i, j)).
template <class R>
double coupling(const R& i, const R& j, std::uint8_t shared) {
  double s = 0.0;
  if (shared & 1) s += glm::dot(i.linB, j.wLinB) + glm::dot(i.angB, j.wAngB);
  if (shared & 2) s += glm::dot(i.linA, j.wLinB) + glm::dot(i.angA, j.wAngB);
  if (shared & 4) s += glm::dot(i.linB, j.wLinA) + glm::dot(i.angB, j.wAngA);
  if (shared & 8) s += glm::dot(i.linA, j.wLinA) + glm::dot(i.angA, j.wAngA);
  return s;
}
template <class R>
double coupling(const R& i, const R& j) {
  return coupling(i, j, sharedBodies(i, j));
}

/// J_i v: the row's velocity.
template <class R>
double rowVelocity(const R& row, std::span<const Vec3> v, std::span<const Vec3> w) {
  double s =
      glm::dot(row.linB, v[static_cast<size_t>(row.b)]) + glm::dot(row.angB, w[static_cast<size_t>(row.b)]);
  if (row.a >= 0) {
    s +=
        glm::dot(row.linA, v[static_cast<size_t>(row.a)]) + glm::dot(row.angA, w[static_cast<size_t>(row.a)]);
  }
  return s;
}
}  // namespace

bool VelocityProjector::orderJoints(std::span<const ConsistencyJoint> joints, int bodyCount,
                                    bool leavesFirst) {
  // The joints that take part and their rows: as many as fit, in the given order (3 anchor rows,
  // then the locked axes). The same list as the last call's keeps its order and structure.
  auto valid = [&](int b) { return b >= 0 && b < bodyCount; };
  bool unchanged = structureValid_ && leavesFirst == structureLeavesFirst_ && bodyCount == structureBodies_;
  int used = 0, rowTotal = 0;
  for (size_t j = 0; j < joints.size() && rowTotal < maxJointRows_; ++j) {
    const ConsistencyJoint& joint = joints[j];
    if (!valid(joint.parent) || !valid(joint.child)) continue;
    const int rows = std::min(3 + std::clamp(joint.lockedCount, 0, 3), maxJointRows_ - rowTotal);
    GivenJoint& given = given_[static_cast<size_t>(used)];
    unchanged = unchanged && used < givenCount_ && given.joint == static_cast<int>(j) &&
                given.parent == joint.parent && given.child == joint.child && given.rows == rows;
    given = GivenJoint{static_cast<int>(j), joint.parent, joint.child, rows};
    ++used;
    rowTotal += rows;
  }
  unchanged = unchanged && used == givenCount_;
  givenCount_ = used;
  if (unchanged) return true;
  structureValid_ = false;
  for (int u = 0; u < used; ++u) {
    jointOrder_[static_cast<size_t>(u)] = given_[static_cast<size_t>(u)].joint;
    jointRows_[static_cast<size_t>(u)] = given_[static_cast<size_t>(u)].rows;
  }
  // A forest when every body is the child of at most one joint and no chain of parents loops.
  jointRowCount_ = 0;
  jointCount_ = used;
  forest_ = leavesFirst;
  if (!forest_) return false;
  std::fill(parent_.begin(), parent_.begin() + bodyCount, -1);
  for (int u = 0; u < used; ++u) {
    const ConsistencyJoint& joint = joints[static_cast<size_t>(jointOrder_[static_cast<size_t>(u)])];
    int& parent = parent_[static_cast<size_t>(joint.child)];
    if (joint.child == joint.parent || parent != -1) forest_ = false;
    parent = joint.parent;
  }
  for (int b = 0; b < bodyCount && forest_; ++b) {
    int depth = 0;
    for (int x = b; parent_[static_cast<size_t>(x)] >= 0 && depth <= bodyCount;
         x = parent_[static_cast<size_t>(x)])
      ++depth;
    depth_[static_cast<size_t>(b)] = depth;
    if (depth > bodyCount) forest_ = false;
  }
  // Leaves first: deepest child first, the given order among equals (insertion sort, no allocation).
  if (forest_) {
    auto depthOf = [&](int u) {
      return depth_[static_cast<size_t>(
          joints[static_cast<size_t>(jointOrder_[static_cast<size_t>(u)])].child)];
    };
    for (int u = 1; u < used; ++u) {
      const int joint = jointOrder_[static_cast<size_t>(u)], rows = jointRows_[static_cast<size_t>(u)];
      const int depth = depthOf(u);
      int v = u;
      for (; v > 0 && depthOf(v - 1) < depth; --v) {
        jointOrder_[static_cast<size_t>(v)] = jointOrder_[static_cast<size_t>(v - 1)];
        jointRows_[static_cast<size_t>(v)] = jointRows_[static_cast<size_t>(v - 1)];
      }
      jointOrder_[static_cast<size_t>(v)] = joint;
      jointRows_[static_cast<size_t>(v)] = rows;
    }
  }
  return false;
}

bool VelocityProjector::factorJoints() {
  // L D L^T of the joint rows in place: row k of factor_ holds L(k, p) for p < k and D(k) at k.
  // Only the rows k couples to (nz, ascending) are visited: in a forest the others stay zero (no
  // fill-in), so L(k, j) = (A(k, j) - sum over p in nz(k), p < j of L(k, p) D(p) L(j, p)) / D(j).
  const int nj = jointRowCount_;
  const size_t width = static_cast<size_t>(maxJointRows_);
  double* scaled = scaled_.data();  // L(k, p) D(p) of the current row
  bool independent = true;
  for (int k = 0; k < nj; ++k) {
    double* lk = factor_.data() + static_cast<size_t>(k) * width;
    const int* nzBegin = nz_.data() + static_cast<size_t>(nzStart_[static_cast<size_t>(k)]);
    const int* nzEnd = nz_.data() + static_cast<size_t>(nzStart_[static_cast<size_t>(k + 1)]);
    const Row& rk = rows_[static_cast<size_t>(k)];
    const std::uint8_t* shared = nzCode_.data() + static_cast<size_t>(nzStart_[static_cast<size_t>(k)]);
    for (const int* j = nzBegin; j != nzEnd; ++j, ++shared) {
      const double* lj = factor_.data() + static_cast<size_t>(*j) * width;
      const Row& rj = rows_[static_cast<size_t>(*j)];
      double s = coupling(rk, rj, *shared);
      if (forest_ && *shared != kSameBodies) {
        // Rows of two joints at one body X: in a tree, what both couple to is the rows at X
        // (L(j, p) is zero for the other rows of nz(k)), ascending as in nz(k) and ending at j.
        const int x = (*shared & 3) != 0 ? rj.b : rj.a;
        for (const int* p = bodyRows_.data() + bodyRowStart_[static_cast<size_t>(x)]; *p != *j; ++p)
          s -= scaled[*p] * lj[*p];
      } else {
        for (const int* p = nzBegin; p != j; ++p) s -= scaled[*p] * lj[*p];
      }
      // L(k, j) D(j) is s itself: the next entries need it at once, the quotient can wait.
      const double dj = lj[*j];
      const bool kept = dj > 0.0;
      lk[*j] = kept ? s / dj : 0.0;
      scaled[*j] = kept ? s : 0.0;
    }
    const double diagonal = coupling(rk, rk);
    double d = diagonal;
    for (const int* p = nzBegin; p != nzEnd; ++p) d -= lk[*p] * scaled[*p];
    if (d > kPivotTolerance * diagonal && d > 0.0) {
      lk[k] = d;
      independent = independent && d > kNearlyDependentPivot * diagonal;
    } else {
      lk[k] = 0.0;  // dropped
      for (const int* p = nzBegin; p != nzEnd; ++p) lk[*p] = 0.0;
      independent = independent && !(diagonal > 0.0);
    }
  }
  return independent;
}

void VelocityProjector::factorContacts(int contactRows) {
  // Each contact row against the factored joint rows (dense: the contact couples to the joints
  // of its body, and through their factor to every joint toward the root), then the Schur
  // complement S = A_cc - L_cj D L_cj^T of every pair of contacts.
  const int nj = jointRowCount_;
  const size_t width = static_cast<size_t>(maxJointRows_);
  const size_t cw = static_cast<size_t>(maxContacts_);
  for (int c = 0; c < contactRows; ++c) {
    const int k = nj + c;
    const Row& rk = rows_[static_cast<size_t>(k)];
    double* lk = factor_.data() + static_cast<size_t>(k) * width;
    double* sk = contactScaled_.data() + static_cast<size_t>(c) * width;  // L(k, p) D(p)
    for (int j = 0; j < nj; ++j) {
      const Row& rj = rows_[static_cast<size_t>(j)];
      const bool touches = rj.b == rk.b || rj.a == rk.b;
      double s = touches ? coupling(rk, rj) : 0.0;
      const double* lj = factor_.data() + static_cast<size_t>(j) * width;
      for (int q = nzStart_[static_cast<size_t>(j)]; q < nzStart_[static_cast<size_t>(j + 1)]; ++q) {
        const int p = nz_[static_cast<size_t>(q)];
        s -= sk[p] * lj[p];
      }
      const bool kept = lj[j] > 0.0;
      lk[j] = kept ? s / lj[j] : 0.0;
      sk[j] = kept ? s : 0.0;
    }
    contactDiagonal_[static_cast<size_t>(c)] = coupling(rk, rk);
    for (int l = 0; l <= c; ++l) {
      const Row& rl = rows_[static_cast<size_t>(nj + l)];
      const double* ll = factor_.data() + static_cast<size_t>(nj + l) * width;
      double s = l == c ? contactDiagonal_[static_cast<size_t>(c)] : rk.b == rl.b ? coupling(rk, rl) : 0.0;
      for (int p = 0; p < nj; ++p) s -= sk[p] * ll[p];
      schur_[static_cast<size_t>(c) * cw + static_cast<size_t>(l)] = s;
    }
  }
}

void VelocityProjector::solveActive(int count) {
  // LDL^T of the active contacts' Schur complement (dependent contacts, tiny pivots relative to
  // their own diagonal, are dropped with lambda = 0), then the substitutions through the contacts
  // and back through the joints. rhs_ holds -J v forward-substituted through the joint rows.
  const int nj = jointRowCount_;
  const size_t width = static_cast<size_t>(maxJointRows_);
  const size_t cw = static_cast<size_t>(maxContacts_);
  const size_t n = static_cast<size_t>(count);
  double* a = active_.data();
  auto at = [&](int i, int j) -> double& { return a[static_cast<size_t>(i) * n + static_cast<size_t>(j)]; };
  auto schur = [&](int i, int j) {
    const int ci = activeRows_[static_cast<size_t>(i)], cj = activeRows_[static_cast<size_t>(j)];
    return ci >= cj ? schur_[static_cast<size_t>(ci) * cw + static_cast<size_t>(cj)]
                    : schur_[static_cast<size_t>(cj) * cw + static_cast<size_t>(ci)];
  };
  for (int k = 0; k < count; ++k) {
    for (int j = 0; j < k; ++j) {
      double s = schur(k, j);
      for (int p = 0; p < j; ++p) s -= at(k, p) * at(j, p) * at(p, p);
      at(k, j) = at(j, j) > 0.0 ? s / at(j, j) : 0.0;
    }
    double d = schur(k, k);
    for (int p = 0; p < k; ++p) d -= at(k, p) * at(k, p) * at(p, p);
    if (d > kPivotTolerance * contactDiagonal_[static_cast<size_t>(activeRows_[static_cast<size_t>(k)])] &&
        d > 0.0) {
      at(k, k) = d;
    } else {
      at(k, k) = 0.0;  // dropped
      for (int p = 0; p < k; ++p) at(k, p) = 0.0;
    }
  }
  // lambda_: joint rows [0, nj), then the active contacts [nj, nj + count).
  double* contactLambda = lambda_.data() + static_cast<size_t>(nj);
  for (int k = 0; k < count; ++k) {
    double s = rhs_[static_cast<size_t>(nj + activeRows_[static_cast<size_t>(k)])];
    for (int p = 0; p < k; ++p) s -= at(k, p) * contactLambda[p];
    contactLambda[k] = s;
  }
  for (int k = 0; k < count; ++k) contactLambda[k] = at(k, k) > 0.0 ? contactLambda[k] / at(k, k) : 0.0;
  for (int k = count - 1; k >= 0; --k) {
    double s = contactLambda[k];
    if (at(k, k) > 0.0) {
      for (int p = k + 1; p < count; ++p) s -= at(p, k) * contactLambda[p];
    }
    contactLambda[k] = at(k, k) > 0.0 ? s : 0.0;
  }
  // Back through the joints: lambda = D^-1 y - L^T lambda, the later rows first.
  for (int j = 0; j < nj; ++j) {
    const double d = factor_[static_cast<size_t>(j) * width + static_cast<size_t>(j)];
    lambda_[static_cast<size_t>(j)] = d > 0.0 ? rhs_[static_cast<size_t>(j)] / d : 0.0;
  }
  for (int k = 0; k < count; ++k) {
    const double l = contactLambda[k];
    if (l == 0.0) continue;
    const double* lk = factor_.data() + static_cast<size_t>(nj + activeRows_[static_cast<size_t>(k)]) * width;
    for (int j = 0; j < nj; ++j) lambda_[static_cast<size_t>(j)] -= lk[j] * l;
  }
  for (int k = nj - 1; k >= 0; --k) {
    const double* lk = factor_.data() + static_cast<size_t>(k) * width;
    if (!(lk[k] > 0.0)) {
      lambda_[static_cast<size_t>(k)] = 0.0;
      continue;
    }
    const double l = lambda_[static_cast<size_t>(k)];
    for (int q = nzStart_[static_cast<size_t>(k)]; q < nzStart_[static_cast<size_t>(k + 1)]; ++q) {
      const int p = nz_[static_cast<size_t>(q)];
      lambda_[static_cast<size_t>(p)] -= lk[p] * l;
    }
  }
}

void VelocityProjector::prepare(std::span<const ConsistencyJoint> joints, int bodyCount) {
  buildStructure(joints, std::min(bodyCount, maxBodies_), true);
}

void VelocityProjector::buildStructure(std::span<const ConsistencyJoint> joints, int bodyCount,
                                       bool leavesFirst) {
  // The joint rows in elimination order and the rows each couples to: those at its two bodies
  // (every earlier row when the joints are not a forest, or not taken leaves first).
  if (orderJoints(joints, bodyCount, leavesFirst)) return;
  int nj = 0;
  for (int u = 0; u < jointCount_; ++u) {
    const ConsistencyJoint& joint = joints[static_cast<size_t>(jointOrder_[static_cast<size_t>(u)])];
    for (int r = 0; r < jointRows_[static_cast<size_t>(u)]; ++r, ++nj) {
      rows_[static_cast<size_t>(nj)].a = joint.parent;
      rows_[static_cast<size_t>(nj)].b = joint.child;
    }
  }
  // The rows each joint row couples to: those at its two bodies (every earlier row when the
  // joints do not form a forest), and through which bodies (nzCode_, see coupling()).
  std::fill(bodyRowStart_.begin(), bodyRowStart_.begin() + bodyCount + 1, 0);
  for (int k = 0; k < nj; ++k) {
    ++bodyRowStart_[static_cast<size_t>(rows_[static_cast<size_t>(k)].a + 1)];
    ++bodyRowStart_[static_cast<size_t>(rows_[static_cast<size_t>(k)].b + 1)];
  }
  for (int b = 0; b < bodyCount; ++b)
    bodyRowStart_[static_cast<size_t>(b + 1)] += bodyRowStart_[static_cast<size_t>(b)];
  // (bodyRowStart_[b] is advanced while filling and shifted back after.)
  for (int k = 0; k < nj; ++k) {
    const Row& row = rows_[static_cast<size_t>(k)];
    bodyRows_[static_cast<size_t>(bodyRowStart_[static_cast<size_t>(row.a)]++)] = k;
    bodyRows_[static_cast<size_t>(bodyRowStart_[static_cast<size_t>(row.b)]++)] = k;
  }
  for (int b = bodyCount; b > 0; --b)
    bodyRowStart_[static_cast<size_t>(b)] = bodyRowStart_[static_cast<size_t>(b - 1)];
  bodyRowStart_[0] = 0;
  int nzCount = 0;
  for (int k = 0; k < nj; ++k) {
    nzStart_[static_cast<size_t>(k)] = nzCount;
    if (!forest_) {
      for (int p = 0; p < k; ++p) nz_[static_cast<size_t>(nzCount++)] = p;
      continue;
    }
    // Merge the two bodies' (ascending) row lists below k; the joint's own rows are in both.
    const Row& row = rows_[static_cast<size_t>(k)];
    int i = bodyRowStart_[static_cast<size_t>(row.a)], iEnd = bodyRowStart_[static_cast<size_t>(row.a + 1)];
    int j = bodyRowStart_[static_cast<size_t>(row.b)], jEnd = bodyRowStart_[static_cast<size_t>(row.b + 1)];
    while (true) {
      const int ri = i < iEnd ? bodyRows_[static_cast<size_t>(i)] : k;
      const int rj = j < jEnd ? bodyRows_[static_cast<size_t>(j)] : k;
      const int r = std::min(ri, rj);
      if (r >= k) break;
      nz_[static_cast<size_t>(nzCount++)] = r;
      if (ri == r) ++i;
      if (rj == r) ++j;
    }
  }
  nzStart_[static_cast<size_t>(nj)] = nzCount;
  // factorJoints() writes only the entries of nz; the others, which a forest's factor reads as
  // its zeros, may hold an earlier structure's values.
  std::fill(factor_.begin(),
            factor_.begin() +
                static_cast<std::ptrdiff_t>(static_cast<size_t>(nj) * static_cast<size_t>(maxJointRows_)),
            0.0);
  for (int k = 0; k < nj; ++k) {
    const Row& rk = rows_[static_cast<size_t>(k)];
    for (int q = nzStart_[static_cast<size_t>(k)]; q < nzStart_[static_cast<size_t>(k + 1)]; ++q) {
      nzCode_[static_cast<size_t>(q)] =
          sharedBodies(rk, rows_[static_cast<size_t>(nz_[static_cast<size_t>(q)])]);
    }
  }
  structureValid_ = true;
  structureLeavesFirst_ = leavesFirst;
  structureBodies_ = bodyCount;
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

  // Rows: joints first (always on), leaves first, then contacts in their given order.
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
  // The joint rows in the structure's order (buildStructure).
  auto addJointRows = [&]() {
    rowCount = 0;
    for (int u = 0; u < jointCount_; ++u) {
      const ConsistencyJoint& joint = joints[static_cast<size_t>(jointOrder_[static_cast<size_t>(u)])];
      const int rows = jointRows_[static_cast<size_t>(u)];
      const Vec3 rA = joint.anchor - bodies[static_cast<size_t>(joint.parent)].centre;
      const Vec3 rB = joint.anchor - bodies[static_cast<size_t>(joint.child)].centre;
      for (int k = 0; k < 3 && k < rows; ++k) {
        Vec3 e{0.0};
        e[k] = 1.0;
        addRow(joint.parent, -e, -glm::cross(rA, e), joint.child, e, glm::cross(rB, e), -1);
      }
      for (int k = 3; k < rows; ++k) {
        const Vec3& d = joint.lockedAxes[k - 3];
        addRow(joint.parent, Vec3{0.0}, -d, joint.child, Vec3{0.0}, d, -1);
      }
    }
    jointRowCount_ = rowCount;
  };
  buildStructure(joints, bodyCount, true);
  addJointRows();
  if (!factorJoints() && forest_) {
    // A joint row depends on others (joints held at both ends by bodies of infinite mass, or a
    // locked axis at gimbal lock): which row is dropped depends on the order, and the given order
    // (dense) drops the one it always did.
    buildStructure(joints, bodyCount, false);
    addJointRows();
    factorJoints();
  }
  const int nj = jointRowCount_;

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

  for (int b = 0; b < bodyCount; ++b) {
    baseLinear_[static_cast<size_t>(b)] = linear[static_cast<size_t>(b)];
    baseAngular_[static_cast<size_t>(b)] = angular[static_cast<size_t>(b)];
  }
  // The contacts against the factored joints; -J v forward-substituted through the joints.
  factorContacts(contactRows);
  const size_t width = static_cast<size_t>(maxJointRows_);
  for (int k = 0; k < rowCount; ++k) {
    rhs_[static_cast<size_t>(k)] = -rowVelocity(rows_[static_cast<size_t>(k)], baseLinear_, baseAngular_);
  }
  for (int k = 0; k < nj; ++k) {
    const double* lk = factor_.data() + static_cast<size_t>(k) * width;
    double s = rhs_[static_cast<size_t>(k)];
    for (int q = nzStart_[static_cast<size_t>(k)]; q < nzStart_[static_cast<size_t>(k + 1)]; ++q) {
      const int p = nz_[static_cast<size_t>(q)];
      s -= lk[p] * rhs_[static_cast<size_t>(p)];
    }
    rhs_[static_cast<size_t>(k)] = s;
  }
  for (int c = 0; c < contactRows; ++c) {
    const double* lk = factor_.data() + static_cast<size_t>(nj + c) * width;
    double s = rhs_[static_cast<size_t>(nj + c)];
    for (int p = 0; p < nj; ++p) s -= lk[p] * rhs_[static_cast<size_t>(p)];
    rhs_[static_cast<size_t>(nj + c)] = s;
  }

  // Applies the impulses of the joint rows and the `count` active contacts to (v, w).
  int activeCount = 0;
  auto forEachImpulse = [&](auto&& apply) {
    for (int k = 0; k < nj; ++k) apply(rows_[static_cast<size_t>(k)], lambda_[static_cast<size_t>(k)]);
    for (int i = 0; i < activeCount; ++i) {
      apply(rows_[static_cast<size_t>(nj + activeRows_[static_cast<size_t>(i)])],
            lambda_[static_cast<size_t>(nj + i)]);
    }
  };
  for (int pass = 0; pass < kMaxActiveSetPasses; ++pass) {
    // Active rows: every joint row, contacts switched on (1).
    activeCount = 0;
    for (int c = 0; c < contactRows; ++c) {
      if (contactOn_[static_cast<size_t>(c)] == 1) activeRows_[static_cast<size_t>(activeCount++)] = c;
    }
    solveActive(activeCount);
    // The change, split into its joint and contact parts; the velocities are the base plus both.
    for (int b = 0; b < bodyCount; ++b) {
      jointLinear[static_cast<size_t>(b)] = jointAngular[static_cast<size_t>(b)] = Vec3{0.0};
      contactLinear[static_cast<size_t>(b)] = contactAngular[static_cast<size_t>(b)] = Vec3{0.0};
    }
    forEachImpulse([&](const Row& row, double l) {
      std::span<Vec3> lin = row.contact >= 0 ? contactLinear : jointLinear;
      std::span<Vec3> ang = row.contact >= 0 ? contactAngular : jointAngular;
      lin[static_cast<size_t>(row.b)] += l * row.wLinB;
      ang[static_cast<size_t>(row.b)] += l * row.wAngB;
      if (row.a >= 0) {
        lin[static_cast<size_t>(row.a)] += l * row.wLinA;
        ang[static_cast<size_t>(row.a)] += l * row.wAngA;
      }
    });
    for (int b = 0; b < bodyCount; ++b) {
      const size_t i = static_cast<size_t>(b);
      linear[i] = baseLinear_[i] + jointLinear[i] + contactLinear[i];
      angular[i] = baseAngular_[i] + jointAngular[i] + contactAngular[i];
    }
    // Push-only: a contact pulling (lambda < 0) leaves for good (2); a contact the corrected
    // velocities drive into the surface within the look-ahead joins (1).
    bool changed = false;
    for (int i = 0; i < activeCount; ++i) {
      if (lambda_[static_cast<size_t>(nj + i)] < 0.0) {
        contactOn_[static_cast<size_t>(activeRows_[static_cast<size_t>(i)])] = 2;
        changed = true;
      }
    }
    if (!changed) {
      for (int c = 0; c < contactRows; ++c) {
        if (contactOn_[static_cast<size_t>(c)] != 0) continue;
        const Row& row = rows_[static_cast<size_t>(nj + c)];
        const double approach = rowVelocity(row, linear, angular);
        if (contacts[static_cast<size_t>(row.contact)].distance + lookAhead * approach < 0.0) {
          contactOn_[static_cast<size_t>(c)] = 1;
          changed = true;
        }
      }
    }
    if (!changed) break;
  }

  // What is left.
  forEachImpulse([&](const Row& row, double) {
    if (row.contact >= 0) ++outcome.contactsUsed;
    outcome.residual = std::max(outcome.residual, std::abs(rowVelocity(row, linear, angular)));
  });
  return outcome;
}

}  // namespace handoff
