// What the Character does to a full ragdoll after the handoff's first step. Its joint limits:
// limits widened at the commit (a mocap pose outside the asset's ranges, a joint swinging toward
// a limit) ease back to the asset's as the joints come inside them, and limbs whose collision was
// suspended because they touched in the committed pose collide again once apart
// (Ragdoll::updateLimits, after every ragdoll step). Its passive joint dampers
// (CharacterSettings::ragdollJointDamping): internal, they keep the momentum and take energy.
#include "handoff/controller.h"
#include "handoff/physics_bullet.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "support/robust_scene.h"

namespace handoff {
namespace {

using test::kRobustDt;
constexpr double kLimitsMargin = 0.02;  // Ragdoll's room around an out-of-limit angle [rad]

TEST(RagdollLimits, WidenedLimitsEaseBackAfterTheCommit) {
  const test::Character& c = test::loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  WorldSettings ws;
  auto world = createBulletWorld(ws);
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  CharacterSettings settings;
  // The demo's room for joints moving toward a limit: more axes widened at the commit.
  settings.handoff.limitLookAhead = kRobustDt * (1.0 + 1.0 / ws.jointErp);
  std::string error;
  std::optional<test::DrivenCharacter> d =
      test::DrivenCharacter::create(*world, c, Transform::identity(), &error, settings);
  ASSERT_TRUE(d) << error;
  Character& ch = *d->character;
  const auto frame = [&]() { ASSERT_TRUE(d->frame(*world, 2)); };
  for (int i = 0; i < 30; ++i) frame();  // 0.5 s into the run: mid-stride
  const HandoffRecord& record = ch.goRagdoll();
  ASSERT_TRUE(record.committed) << record.failure;
  const Ragdoll& r = ch.ragdoll();
  const int joints = static_cast<int>(c.asset->joints.size());
  std::vector<Vec3> committedLower(static_cast<size_t>(joints)), committedUpper(static_cast<size_t>(joints));
  int widened = 0;
  for (int j = 0; j < joints; ++j) {
    committedLower[static_cast<size_t>(j)] = r.jointLower(j);
    committedUpper[static_cast<size_t>(j)] = r.jointUpper(j);
    for (int axis = 0; axis < 3; ++axis)
      widened += (record.joints[static_cast<size_t>(j)].widenedAxes >> axis) & 1;
  }
  const int suspendedAtCommit = r.suspendedPairCount();
  for (int i = 0; i < 180; ++i) frame();  // 3 s after the commit: lying on the ground

  int eased = 0, stillOutside = 0;
  for (int j = 0; j < joints; ++j) {
    const JointDef& def = c.asset->joints[static_cast<size_t>(j)];
    const Vec3 angles = jointAngles(r.world().jointRelativeRotation(r.joint(j)));
    for (int axis = 0; axis < 3; ++axis) {
      const double lo = def.preset.angularLower[axis], hi = def.preset.angularUpper[axis];
      if (!(lo < hi)) continue;  // locked or free: no limit to ease
      const double lower = r.jointLower(j)[axis], upper = r.jointUpper(j)[axis];
      // Never wider than the commit made it, never tighter than the asset's.
      EXPECT_GE(lower, committedLower[static_cast<size_t>(j)][axis] - 1e-12) << def.name << " axis " << axis;
      EXPECT_LE(upper, committedUpper[static_cast<size_t>(j)][axis] + 1e-12) << def.name << " axis " << axis;
      EXPECT_LE(lower, lo) << def.name << " axis " << axis;
      EXPECT_GE(upper, hi) << def.name << " axis " << axis;
      // A bound still wider than the asset's hugs the joint, which is outside the asset's range.
      if (lower < lo) {
        ++stillOutside;
        EXPECT_LE(angles[axis] - lower, kLimitsMargin + 0.05) << def.name << " axis " << axis;
      }
      if (upper > hi) {
        ++stillOutside;
        EXPECT_LE(upper - angles[axis], kLimitsMargin + 0.05) << def.name << " axis " << axis;
      }
      if (lower > committedLower[static_cast<size_t>(j)][axis] ||
          upper < committedUpper[static_cast<size_t>(j)][axis])
        ++eased;
    }
  }
  std::printf(
      "[ limits ] %d axes widened at the commit, %d eased back within 3 s, %d still outside the asset's "
      "range; %d suspended pairs at the commit, %d now\n",
      widened, eased, stillOutside, suspendedAtCommit, r.suspendedPairCount());
  EXPECT_GE(widened, 1);
  EXPECT_GE(eased, widened - stillOutside);
  EXPECT_GE(eased, 1);
  EXPECT_EQ(r.suspendedPairCount(), 0);
}

struct FreeFall {
  Vec3 momentum0{0.0}, momentum1{0.0}, angular0{0.0}, angular1{0.0};  // [N s], [N m s] about the COM
  double energy0 = 0.0, energy1 = 0.0;  // kinetic energy in the centre-of-mass frame [J]
  std::vector<Vec3> afterFirstStep;     // body velocities [m/s]
};

// The run handed over 0.5 s in, in a world without gravity or ground: only the joints act.
FreeFall freeRagdoll(double damping) {
  FreeFall f;
  const test::Character& c = test::loadCharacter("deepmimic/humanoid3d_run.bvh");
  if (!c.asset) return f;
  WorldSettings ws;
  ws.gravity = Vec3{0.0};
  auto world = createBulletWorld(ws);
  CharacterSettings settings;
  settings.ragdollJointDamping = damping;
  std::string error;
  std::optional<test::DrivenCharacter> d =
      test::DrivenCharacter::create(*world, c, Transform::identity(), &error, settings);
  EXPECT_TRUE(d) << error;
  if (!d) return f;
  Character& ch = *d->character;
  const auto frame = [&]() { EXPECT_TRUE(d->frame(*world, 2)); };
  const Ragdoll& r = ch.ragdoll();
  const auto measure = [&](Vec3& momentum, Vec3& angular, double& energy) {
    double mass = 0.0;
    Vec3 centre{0.0};
    momentum = Vec3{0.0};
    for (int b = 0; b < r.bodyCount(); ++b) {
      const double m = world->mass(r.body(b));
      mass += m;
      centre += m * world->transform(r.body(b)).translation;
      momentum += m * world->linearVelocity(r.body(b));
    }
    centre /= mass;
    const Vec3 vCentre = momentum / mass;
    angular = Vec3{0.0};
    energy = 0.0;
    for (int b = 0; b < r.bodyCount(); ++b) {
      const BodyId id = r.body(b);
      const double m = world->mass(id);
      const Vec3 v = world->linearVelocity(id) - vCentre, w = world->angularVelocity(id);
      const glm::dmat3 inertia = world->worldInertia(id);
      angular += glm::cross(world->transform(id).translation - centre, m * v) + inertia * w;
      energy += 0.5 * m * glm::dot(v, v) + 0.5 * glm::dot(w, inertia * w);
    }
  };
  for (int i = 0; i < 30; ++i) frame();
  EXPECT_TRUE(ch.goRagdoll().committed);
  frame();
  for (int b = 0; b < r.bodyCount(); ++b) f.afterFirstStep.push_back(world->linearVelocity(r.body(b)));
  measure(f.momentum0, f.angular0, f.energy0);
  for (int i = 0; i < 60; ++i) frame();  // 1 s
  measure(f.momentum1, f.angular1, f.energy1);
  return f;
}

// The dampers act between bodies only: in free fall without gravity the character's momentum and
// angular momentum stay, its kinetic energy relative to its centre of mass drops faster than
// without them, and the handoff's first step is exactly the same with or without them.
TEST(RagdollDampers, KeepMomentumTakeEnergyAndLeaveTheFirstStepAlone) {
  const FreeFall off = freeRagdoll(0.0);
  const FreeFall on = freeRagdoll(1.0);
  ASSERT_EQ(off.afterFirstStep.size(), on.afterFirstStep.size());
  ASSERT_FALSE(on.afterFirstStep.empty());
  for (size_t b = 0; b < on.afterFirstStep.size(); ++b)
    EXPECT_EQ(on.afterFirstStep[b], off.afterFirstStep[b]) << b;
  // Every body's own damping (BodyDesc: 0.05/s on v and on w) scales every velocity alike, so
  // the character's momentum and angular momentum decay by exactly exp(-0.05 t) whatever moves
  // inside; the joints, contacts between its own bodies and the dampers are internal.
  const double bodyDamping = std::exp(-0.05 * 1.0);
  for (const FreeFall* f : {&off, &on}) {
    // Linear: to rounding. Angular: to 1 % (Bullet applies anchor impulses at each body's own
    // anchor: a couple while the anchors are a few mm apart).
    EXPECT_LT(glm::length(f->momentum1 - bodyDamping * f->momentum0), 1e-6 * glm::length(f->momentum0));
    EXPECT_LT(glm::length(f->angular1 - bodyDamping * f->angular0), 0.01 * glm::length(f->angular0) + 0.05);
  }
  std::printf(
      "[ dampers ] 1 s of free flight without gravity: kinetic energy about the centre of mass %.1f -> "
      "%.1f J without dampers, %.1f -> %.1f J at 1/s\n",
      off.energy0, off.energy1, on.energy0, on.energy1);
  EXPECT_NEAR(on.energy0, off.energy0, 1e-9 * off.energy0);  // the same state after the first step
  // Without dampers the limits' stops, the self-collisions and 0.05/s of body damping take
  // energy; with them the relative swings also decay at about 1/s.
  EXPECT_LT(on.energy1, 0.8 * off.energy1);
}

}  // namespace
}  // namespace handoff
