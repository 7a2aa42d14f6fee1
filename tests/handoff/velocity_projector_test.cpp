// VelocityProjector on whole characters: the leaves-first factorisation of a joint tree gives the
// projection a dense solve gives (checked against Gaussian elimination of J M^-1 J^T here), in any
// joint order, with or without prepare(), and on joints that close a loop (dense fallback).
//
//            head
//             |
//   hand-fore-upper-chest-upper-fore-hand      (15 bodies, 14 joints; elbows and knees hinges)
//             |
//           spine
//             |
//   foot-shin-thigh-pelvis-thigh-shin-foot
#include "handoff/handoff.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace handoff {
namespace {

struct Character {
  std::vector<ConsistencyBody> bodies;
  std::vector<ConsistencyJoint> joints;
  std::vector<Vec3> v, w;
  int rows = 0;
};

// parent of each body (-1: the pelvis), and whether its joint is a hinge (X and Y locked)
constexpr int kParent[15] = {-1, 0, 1, 2, 2, 4, 5, 2, 7, 8, 0, 10, 11, 0, 13};
constexpr bool kHinge[15] = {false, false, false, false, false, true,  false, false,
                             true,  false, false, true,  false, false, true};

Character randomCharacter(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0), mass(0.5, 12.0), inertia(0.005, 0.3);
  Character c;
  c.bodies.resize(15);
  for (int b = 0; b < 15; ++b) {
    const Quat q = glm::normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
    const glm::dmat3 r = glm::mat3_cast(q);
    glm::dmat3 d(0.0);
    for (int i = 0; i < 3; ++i) d[i][i] = 1.0 / inertia(rng);
    const Vec3 parentCentre = kParent[b] < 0 ? Vec3{0.0, 1.0, 0.0} : c.bodies[size_t(kParent[b])].centre;
    c.bodies[size_t(b)] = ConsistencyBody{1.0 / mass(rng), r * d * glm::transpose(r),
                                          parentCentre + 0.3 * Vec3{u(rng), u(rng), u(rng)}};
  }
  for (int b = 1; b < 15; ++b) {
    ConsistencyJoint j;
    j.parent = kParent[b];
    j.child = b;
    j.anchor = 0.5 * (c.bodies[size_t(j.parent)].centre + c.bodies[size_t(b)].centre) +
               0.02 * Vec3{u(rng), u(rng), u(rng)};
    const Quat frameA = glm::normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
    const Quat frameB = glm::normalize(frameA * fromRotationVector(0.4 * Vec3{u(rng), u(rng), u(rng)}));
    j.lockedCount = lockedAxisRows(frameA, frameB, kHinge[b] ? 0b011 : 0b000, j.lockedAxes);
    c.rows += 3 + j.lockedCount;
    c.joints.push_back(j);
  }
  for (int b = 0; b < 15; ++b) {
    c.v.push_back(2.0 * Vec3{u(rng), u(rng), u(rng)});
    c.w.push_back(6.0 * Vec3{u(rng), u(rng), u(rng)});
  }
  return c;
}

// The projection by a dense solve: rows J (as VelocityProjector builds them), A = J M^-1 J^T,
// A lambda = -J v by Gaussian elimination with partial pivoting, v += M^-1 J^T lambda.
void denseProjection(const Character& c, std::vector<Vec3>& v, std::vector<Vec3>& w) {
  struct Row {
    int a, b;
    Vec3 linA, angA, linB, angB;
  };
  std::vector<Row> rows;
  for (const ConsistencyJoint& j : c.joints) {
    const Vec3 rA = j.anchor - c.bodies[size_t(j.parent)].centre,
               rB = j.anchor - c.bodies[size_t(j.child)].centre;
    for (int k = 0; k < 3; ++k) {
      Vec3 e{0.0};
      e[k] = 1.0;
      rows.push_back({j.parent, j.child, -e, -glm::cross(rA, e), e, glm::cross(rB, e)});
    }
    for (int k = 0; k < j.lockedCount; ++k)
      rows.push_back({j.parent, j.child, Vec3{0.0}, -j.lockedAxes[k], Vec3{0.0}, j.lockedAxes[k]});
  }
  const size_t n = rows.size();
  auto impulse = [&](const Row& r, double l, std::vector<Vec3>& lin, std::vector<Vec3>& ang) {
    const ConsistencyBody &ba = c.bodies[size_t(r.a)], &bb = c.bodies[size_t(r.b)];
    lin[size_t(r.a)] += l * ba.inverseMass * r.linA;
    ang[size_t(r.a)] += l * (ba.inverseInertia * r.angA);
    lin[size_t(r.b)] += l * bb.inverseMass * r.linB;
    ang[size_t(r.b)] += l * (bb.inverseInertia * r.angB);
  };
  auto velocity = [&](const Row& r, const std::vector<Vec3>& lin, const std::vector<Vec3>& ang) {
    return glm::dot(r.linA, lin[size_t(r.a)]) + glm::dot(r.angA, ang[size_t(r.a)]) +
           glm::dot(r.linB, lin[size_t(r.b)]) + glm::dot(r.angB, ang[size_t(r.b)]);
  };
  std::vector<double> a(n * (n + 1));  // [A | b]
  for (size_t j = 0; j < n; ++j) {
    std::vector<Vec3> lin(15, Vec3{0.0}), ang(15, Vec3{0.0});
    impulse(rows[j], 1.0, lin, ang);
    for (size_t i = 0; i < n; ++i) a[i * (n + 1) + j] = velocity(rows[i], lin, ang);
  }
  for (size_t i = 0; i < n; ++i) a[i * (n + 1) + n] = -velocity(rows[i], v, w);
  for (size_t k = 0; k < n; ++k) {
    size_t pivot = k;
    for (size_t i = k + 1; i < n; ++i)
      if (std::abs(a[i * (n + 1) + k]) > std::abs(a[pivot * (n + 1) + k])) pivot = i;
    for (size_t j = 0; j <= n; ++j) std::swap(a[k * (n + 1) + j], a[pivot * (n + 1) + j]);
    for (size_t i = k + 1; i < n; ++i) {
      const double f = a[i * (n + 1) + k] / a[k * (n + 1) + k];
      for (size_t j = k; j <= n; ++j) a[i * (n + 1) + j] -= f * a[k * (n + 1) + j];
    }
  }
  std::vector<double> lambda(n);
  for (size_t k = n; k-- > 0;) {
    double s = a[k * (n + 1) + n];
    for (size_t j = k + 1; j < n; ++j) s -= a[k * (n + 1) + j] * lambda[j];
    lambda[k] = s / a[k * (n + 1) + k];
  }
  for (size_t i = 0; i < n; ++i) impulse(rows[i], lambda[i], v, w);
}

struct Projected {
  std::vector<Vec3> v, w;
  VelocityProjector::Outcome outcome;
};
Projected project(VelocityProjector& projector, const Character& c,
                  const std::vector<ConsistencyJoint>& joints) {
  Projected p{c.v, c.w, {}};
  std::vector<Vec3> jl(15), ja(15), cl(15), ca(15);
  p.outcome = projector.project(c.bodies, joints, {}, 1.0 / 60, p.v, p.w, jl, ja, cl, ca);
  return p;
}

// Largest joint violation: anchors moving apart, relative turn about a locked axis. [m/s] [rad/s]
double violation(const Character& c, const std::vector<Vec3>& v, const std::vector<Vec3>& w) {
  double worst = 0.0;
  for (const ConsistencyJoint& j : c.joints) {
    const size_t a = size_t(j.parent), b = size_t(j.child);
    const Vec3 va = v[a] + glm::cross(w[a], j.anchor - c.bodies[a].centre);
    const Vec3 vb = v[b] + glm::cross(w[b], j.anchor - c.bodies[b].centre);
    worst = std::max(worst, glm::length(va - vb));
    for (int k = 0; k < j.lockedCount; ++k)
      worst = std::max(worst, std::abs(glm::dot(w[b] - w[a], j.lockedAxes[k])));
  }
  return worst;
}

double difference(const Projected& p, const std::vector<Vec3>& v, const std::vector<Vec3>& w) {
  double d = 0.0;
  for (size_t b = 0; b < v.size(); ++b)
    d = std::max({d, glm::length(p.v[b] - v[b]), glm::length(p.w[b] - w[b])});
  return d;
}

TEST(VelocityProjector, TreeFactorisationMatchesADenseSolveInAnyJointOrder) {
  std::mt19937 rng(1996);  // kSeed: 200 random characters of the shape drawn above
  double worstDense = 0.0, worstShuffled = 0.0, worstViolation = 0.0, worstMomentum = 0.0, before = 0.0;
  for (int t = 0; t < 200; ++t) {
    const Character c = randomCharacter(rng);
    before = std::max(before, violation(c, c.v, c.w));
    VelocityProjector projector(15, c.rows, 0);
    const Projected p = project(projector, c, c.joints);
    std::vector<Vec3> v = c.v, w = c.w;
    denseProjection(c, v, w);
    worstDense = std::max(worstDense, difference(p, v, w));
    worstViolation = std::max(worstViolation, violation(c, p.v, p.w));
    EXPECT_LT(p.outcome.residual, 1e-9);
    // Internal impulses: the character's momentum about the origin is kept.
    Vec3 dl{0.0}, da{0.0};
    for (size_t b = 0; b < 15; ++b) {
      const double m = 1.0 / c.bodies[b].inverseMass;
      dl += m * (p.v[b] - c.v[b]);
      da += glm::cross(c.bodies[b].centre, m * (p.v[b] - c.v[b])) +
            glm::inverse(c.bodies[b].inverseInertia) * (p.w[b] - c.w[b]);
    }
    worstMomentum = std::max({worstMomentum, glm::length(dl), glm::length(da)});
    // The same character again through the same projector (its structure kept): bit-identical.
    const Projected again = project(projector, c, c.joints);
    EXPECT_EQ(difference(again, p.v, p.w), 0.0);
    // Laid out ahead with prepare(): bit-identical to laying out in project().
    VelocityProjector prepared(15, c.rows, 0);
    prepared.prepare(c.joints, 15);
    EXPECT_EQ(difference(project(prepared, c, c.joints), p.v, p.w), 0.0);
    // The joints in another order: the same projection up to rounding.
    std::vector<ConsistencyJoint> shuffled = c.joints;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    VelocityProjector other(15, c.rows, 0);
    worstShuffled = std::max(worstShuffled, difference(project(other, c, shuffled), p.v, p.w));
  }
  std::printf(
      "200 characters: joint violation %.3g -> %.3g, |tree - dense| %.3g, |shuffled - given| %.3g, "
      "momentum change %.3g\n",
      before, worstViolation, worstDense, worstShuffled, worstMomentum);
  EXPECT_GT(before, 1.0);
  EXPECT_LT(worstViolation, 1e-9);
  EXPECT_LT(worstDense, 1e-9);
  EXPECT_LT(worstShuffled, 1e-9);
  EXPECT_LT(worstMomentum, 1e-9);
}

TEST(VelocityProjector, JointsClosingALoopFallBackToTheDenseOrder) {
  // A hand holding the other hand (joint 13 -> 9 closes a loop through the chest): not a tree.
  std::mt19937 rng(7);  // kSeed
  double worst = 0.0, worstDense = 0.0;
  for (int t = 0; t < 50; ++t) {
    Character c = randomCharacter(rng);
    ConsistencyJoint grip;
    grip.parent = 6;
    grip.child = 9;
    grip.anchor = 0.5 * (c.bodies[6].centre + c.bodies[9].centre);
    c.joints.push_back(grip);
    c.rows += 3;
    VelocityProjector projector(15, c.rows, 0);
    const Projected p = project(projector, c, c.joints);
    std::vector<Vec3> v = c.v, w = c.w;
    denseProjection(c, v, w);
    worst = std::max(worst, violation(c, p.v, p.w));
    worstDense = std::max(worstDense, difference(p, v, w));
  }
  std::printf("50 characters with a loop: joint violation %.3g, |projector - dense| %.3g\n", worst,
              worstDense);
  EXPECT_LT(worst, 1e-9);
  EXPECT_LT(worstDense, 1e-9);
}

TEST(VelocityProjector, AReusedProjectorGivesWhatAFreshOneGivesWhateverItSolvedBefore) {
  // A ragdoll's projector solves one joint structure after another: a partial commit (the arm's
  // joints only), a loop (dense order), then the whole tree. Each must be the fresh projector's
  // result exactly: nothing of an earlier factorisation may be left in the later one.
  std::mt19937 rng(42);  // kSeed
  int checked = 0;
  double worst = 0.0;
  for (int t = 0; t < 50; ++t) {
    Character c = randomCharacter(rng);
    const std::vector<ConsistencyJoint> arm(c.joints.begin() + 3, c.joints.begin() + 6);  // bodies 4-6
    std::vector<ConsistencyJoint> loop = c.joints;
    ConsistencyJoint grip;
    grip.parent = 6;
    grip.child = 9;
    grip.anchor = 0.5 * (c.bodies[6].centre + c.bodies[9].centre);
    loop.push_back(grip);
    VelocityProjector reused(15, c.rows + 3, 0);
    VelocityProjector freshTree(15, c.rows + 3, 0);
    const Projected expected = project(freshTree, c, c.joints);
    for (const std::vector<ConsistencyJoint>* before :
         std::initializer_list<const std::vector<ConsistencyJoint>*>{&arm, &loop}) {
      project(reused, c, *before);
      const Projected p = project(reused, c, c.joints);
      worst = std::max(worst, difference(p, expected.v, expected.w));
      ++checked;
    }
  }
  std::printf("%d reuses after another structure: |reused - fresh| %.3g\n", checked, worst);
  EXPECT_EQ(checked, 100);
  EXPECT_EQ(worst, 0.0);
}

}  // namespace
}  // namespace handoff
