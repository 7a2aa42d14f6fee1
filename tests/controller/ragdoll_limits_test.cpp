// The Character keeps a ragdoll's joint limits honest after a handoff: limits widened at the
// commit (a mocap pose outside the asset's ranges, a joint swinging toward a limit) ease back to
// the asset's as the joints come inside them, and limbs whose collision was suspended because
// they touched in the committed pose collide again once apart (Ragdoll::updateLimits, called by
// the Character after every ragdoll step).
#include "handoff/controller.h"
#include "handoff/physics_bullet.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "support/clip_scene.h"

namespace handoff {
namespace {

constexpr double kLimitsDt = 1.0 / 60.0;
constexpr double kLimitsMargin = 0.02;  // Ragdoll's room around an out-of-limit angle [rad]

TEST(RagdollLimits, WidenedLimitsEaseBackAfterTheCommit) {
  const test::Character& c = test::loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  WorldSettings ws;
  auto world = createBulletWorld(ws);
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  std::vector<Transform> locals(static_cast<size_t>(c.skeleton().jointCount()));
  c.clip().sample(0.0, WrapMode::Loop, locals);
  CharacterSettings settings;
  // The demo's room for joints moving toward a limit: more axes widened at the commit.
  settings.handoff.limitLookAhead = kLimitsDt * (1.0 + 1.0 / ws.jointErp);
  auto created = Character::create(*world, c.asset, c.skeleton(), settings, Transform::identity(), locals);
  ASSERT_TRUE(created) << created.error();
  Character& ch = **created;
  double time = 0.0;
  const auto frame = [&]() {
    time += kLimitsDt;
    c.clip().sample(time, WrapMode::Loop, locals);
    ASSERT_TRUE(ch.preStep(AnimationInput{time, Transform::identity(), locals, false}, kLimitsDt));
    world->step(kLimitsDt, 2);
    ch.postStep(kLimitsDt);
  };
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

}  // namespace
}  // namespace handoff
