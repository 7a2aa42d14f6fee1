// Stand planner against the real Bullet world (SPEC.md section 4: a capsule query moves the root
// to a standable spot; blocked -> delay or another spot, with the reason recorded).
#include "handoff/physics_bullet.h"
#include "recovery/recovery_test_util.h"
#include "support/test_math.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <limits>
#include <memory>

namespace handoff {
namespace {

using test::vecNear;

/// The face-up get-up lying at `heading` with its pelvis at `pelvisXZ`: the fallen pelvis and
/// the proposed root (0.86 m toward the feet, where the character will stand).
struct Fallen {
  Transform worldFromPelvis;
  RootPlacement placement;
};

class StandPlannerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clip_ = test::loadClip("deepmimic/humanoid3d_getup_faceup.bvh");
    Result<GetUpClipInfo> info = computeGetUpClipInfo(clip_.clip, clip_.skeleton, clip_.map);
    ASSERT_TRUE(info.ok()) << info.error();
    info_ = *info;
    world_ = createBulletWorld();
    ASSERT_NE(world_, nullptr);
  }

  Fallen fall(double heading, const Vec3& pelvisXZ) const {
    const auto first = test::modelsOf(clip_.skeleton, clip_.clip.frame(0));
    const auto P = static_cast<size_t>(info_.pelvisJoint);
    const Transform worldFromClip{glm::angleAxis(heading, kRecoveryUp), Vec3{0.0}};
    Fallen f;
    f.worldFromPelvis = worldFromClip * first[P];
    f.worldFromPelvis.translation.x = pelvisXZ.x;
    f.worldFromPelvis.translation.z = pelvisXZ.z;
    f.placement = placeRoot(f.worldFromPelvis, info_, Vec3{0.0, 0.0, 1.0}, Vec3{0.0, 0.0, 1.0});
    return f;
  }

  /// The ragdoll's own bodies lie on the floor around the pelvis (kRagdoll layer): the planner
  /// must not mistake them for walls.
  void addRagdollStandIns(const Fallen& f) {
    BodyDesc d;
    d.shape = ShapeDesc{ShapeType::Capsule, 0.12, 0.25, Vec3{0.0}};
    d.motion = MotionType::Kinematic;
    d.filter = CollisionFilter{layers::kRagdoll, layers::kAll};
    d.worldFromBody = Transform{glm::angleAxis(kPi / 2, Vec3{1.0, 0.0, 0.0}), f.worldFromPelvis.translation};
    ASSERT_TRUE(world_->createBody(d).ok());
    d.worldFromBody.translation = f.placement.worldFromRoot.translation + Vec3{0.0, 0.12, 0.0};  // the feet
    ASSERT_TRUE(world_->createBody(d).ok());
  }

  /// A wall perpendicular to the standing forward, its near face `distance` from the pelvis
  /// along the forward, 0.2 m thick, 3 m high, 4 m wide.
  void addWall(const Fallen& f, double distance, double thickness = 0.2) {
    const Vec3 n = f.placement.worldForward;
    const Vec3 centre = f.worldFromPelvis.translation + n * (distance + 0.5 * thickness);
    // Box +Z along the standing forward: thickness along it.
    world_->addStaticBox(Transform{yawBetween(Vec3{0.0, 0.0, 1.0}, n), Vec3{centre.x, 1.5, centre.z}},
                         Vec3{2.0, 1.5, 0.5 * thickness}, 0.8);
  }

  test::LoadedClip clip_;
  GetUpClipInfo info_;
  std::unique_ptr<PhysicsWorld> world_;
  CapsuleDef capsule_{};  // the asset default: radius 0.3, half height 0.6
};

TEST_F(StandPlannerTest, OpenFloorStandsOnTheProposedSpotSnappedToTheGround) {
  world_->addGroundPlane(kRecoveryUp, 0.0);
  const Fallen f = fall(0.7, Vec3{1.0, 0.0, -2.0});
  ASSERT_TRUE(f.placement.valid);
  addRagdollStandIns(f);
  const StandPlan plan =
      planStand(*world_, f.placement.worldFromRoot, f.worldFromPelvis.translation, capsule_);
  EXPECT_EQ(plan.decision, StandDecision::Stand) << standReasonName(plan.reason);
  EXPECT_EQ(plan.reason, StandReason::Clear);
  EXPECT_EQ(plan.proposedSpotReason, StandReason::Clear);
  EXPECT_EQ(plan.candidatesTested, 1);
  EXPECT_NEAR(plan.groundHeight, 0.0, 1e-6);
  EXPECT_TRUE(vecNear(plan.groundNormal, kRecoveryUp, 1e-6));
  const Vec3 expected{f.placement.worldFromRoot.translation.x, 0.0, f.placement.worldFromRoot.translation.z};
  EXPECT_TRUE(vecNear(plan.worldFromRoot.translation, expected, 1e-6));
  EXPECT_TRUE(test::rotNear(plan.worldFromRoot.rotation, f.placement.worldFromRoot.rotation, 1e-12))
      << "yaw kept";
  EXPECT_EQ(plan.relocationDistance, 0.0);
}

TEST_F(StandPlannerTest, WallWhereTheCharacterWouldStandRelocatesAwayFromIt) {
  world_->addGroundPlane(kRecoveryUp, 0.0);
  const Fallen f = fall(-1.2, Vec3{0.0});
  addRagdollStandIns(f);
  addWall(f, 0.95);  // the root lies 0.86 m from the pelvis: the capsule (r 0.3) would cut the wall
  ASSERT_TRUE(world_->capsuleOverlaps(
      capsuleOnRoot(
          Transform{f.placement.worldFromRoot.rotation, Vec3{f.placement.worldFromRoot.translation.x, 0.0,
                                                             f.placement.worldFromRoot.translation.z}},
          capsule_, 0.02),
      capsule_.radius, capsule_.halfHeight, layers::kStatic));
  const StandPlan plan =
      planStand(*world_, f.placement.worldFromRoot, f.worldFromPelvis.translation, capsule_);
  EXPECT_EQ(plan.decision, StandDecision::Relocate) << standReasonName(plan.reason);
  EXPECT_EQ(plan.reason, StandReason::CapsuleBlocked);
  EXPECT_GT(plan.relocationDistance, 0.0);
  EXPECT_FALSE(world_->capsuleOverlaps(capsuleOnRoot(plan.worldFromRoot, capsule_, 0.02), capsule_.radius,
                                       capsule_.halfHeight, layers::kStatic));
  // Independent check: the capsule's axis stays a radius away from the wall's face.
  const double along =
      glm::dot(plan.worldFromRoot.translation - f.worldFromPelvis.translation, f.placement.worldForward);
  EXPECT_LE(along + capsule_.radius, 0.95 + 1e-6);
  std::printf("[planner] wall at 0.95 m: %s (%s), moved %.2f m, %d spots tested\n",
              standDecisionName(plan.decision), standReasonName(plan.reason), plan.relocationDistance,
              plan.candidatesTested);
}

// The root would be free on the far side of a thin wall between the body and it: standing
// there would pass the get-up through the wall. No spot on the near side fits: delay.
TEST_F(StandPlannerTest, WallBetweenTheBodyAndTheRootDelaysWithTheReason) {
  world_->addGroundPlane(kRecoveryUp, 0.0);
  const Fallen f = fall(2.0, Vec3{3.0, 0.0, 3.0});
  addRagdollStandIns(f);
  addWall(f, 0.45, 0.05);
  const StandPlan plan =
      planStand(*world_, f.placement.worldFromRoot, f.worldFromPelvis.translation, capsule_);
  EXPECT_EQ(plan.decision, StandDecision::Delay);
  EXPECT_EQ(plan.reason, StandReason::NoFreeSpotNearby);
  EXPECT_EQ(plan.proposedSpotReason, StandReason::Unreachable);
  EXPECT_FALSE(plan.ok());
  EXPECT_EQ(plan.candidatesTested, 1 + 3 * 8);
  EXPECT_TRUE(test::xfNear(plan.worldFromRoot, f.placement.worldFromRoot, 0.0, 0.0))
      << "delay keeps the proposal";
}

// Walls at every distance from 0.3 m to 1.6 m from the pelvis, 8 fall headings: the capsule never
// spawns inside a wall or behind it; every blocked case is relocated or delayed with a reason.
TEST_F(StandPlannerTest, TheCapsuleNeverSpawnsInsideAWall) {
  int stands = 0;
  int relocations = 0;
  int delays = 0;
  for (int k = 0; k < 8; ++k) {
    for (int d = 3; d <= 16; ++d) {
      world_ = createBulletWorld();
      world_->addGroundPlane(kRecoveryUp, 0.0);
      const double heading = k * kPi / 4 + 0.2;
      const double distance = 0.1 * d;
      const Fallen f = fall(heading, Vec3{0.5 * k, 0.0, -0.3 * d});
      addRagdollStandIns(f);
      addWall(f, distance);
      const StandPlan plan =
          planStand(*world_, f.placement.worldFromRoot, f.worldFromPelvis.translation, capsule_);
      if (plan.ok()) {
        EXPECT_FALSE(world_->capsuleOverlaps(capsuleOnRoot(plan.worldFromRoot, capsule_, 0.02),
                                             capsule_.radius, capsule_.halfHeight, layers::kStatic));
        const double along = glm::dot(plan.worldFromRoot.translation - f.worldFromPelvis.translation,
                                      f.placement.worldForward);
        EXPECT_LE(along + capsule_.radius, distance + 1e-6) << "heading " << k << " wall " << distance;
        EXPECT_NEAR(plan.worldFromRoot.translation.y, 0.0, 1e-6);
      } else {
        EXPECT_EQ(plan.reason, StandReason::NoFreeSpotNearby);
        EXPECT_NE(plan.proposedSpotReason, StandReason::Clear);
      }
      if (plan.decision == StandDecision::Stand) ++stands;
      if (plan.decision == StandDecision::Relocate) {
        ++relocations;
        EXPECT_NE(plan.reason, StandReason::Clear);
      }
      if (plan.decision == StandDecision::Delay) ++delays;
    }
  }
  EXPECT_GT(stands, 0);
  EXPECT_GT(relocations, 0);
  EXPECT_GT(delays, 0);
  std::printf(
      "[planner] 8 headings x 14 wall distances: %d stand, %d relocated, %d delayed, 0 inside a wall\n",
      stands, relocations, delays);
}

TEST_F(StandPlannerTest, SteepGroundAndNoGround) {
  // A 60 degree ramp under the proposed spot, flat floor around it.
  world_->addGroundPlane(kRecoveryUp, 0.0);
  const Fallen f = fall(0.0, Vec3{0.0});
  const Vec3 root = f.placement.worldFromRoot.translation;
  world_->addStaticBox(Transform{glm::angleAxis(kPi / 3, Vec3{1.0, 0.0, 0.0}), Vec3{root.x, 0.0, root.z}},
                       Vec3{0.15, 0.03, 0.15}, 0.8);
  StandPlannerSettings wide;
  wide.ringSpacing = 0.25;
  StandPlan plan =
      planStand(*world_, f.placement.worldFromRoot, f.worldFromPelvis.translation, capsule_, wide);
  EXPECT_EQ(plan.proposedSpotReason, StandReason::GroundTooSteep) << standReasonName(plan.proposedSpotReason);
  EXPECT_EQ(plan.decision, StandDecision::Relocate) << standReasonName(plan.reason);
  EXPECT_NEAR(plan.groundHeight, 0.0, 1e-6);

  // Nothing under the body at all.
  world_ = createBulletWorld();
  plan = planStand(*world_, f.placement.worldFromRoot, f.worldFromPelvis.translation, capsule_);
  EXPECT_EQ(plan.decision, StandDecision::Delay);
  EXPECT_EQ(plan.proposedSpotReason, StandReason::NoGround);
  EXPECT_EQ(plan.reason, StandReason::NoFreeSpotNearby);
}

TEST_F(StandPlannerTest, InvalidInputDelays) {
  world_->addGroundPlane(kRecoveryUp, 0.0);
  const Fallen f = fall(0.0, Vec3{0.0});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Transform badRoot = f.placement.worldFromRoot;
  badRoot.translation.x = nan;
  EXPECT_EQ(planStand(*world_, badRoot, f.worldFromPelvis.translation, capsule_).reason,
            StandReason::InvalidInput);
  EXPECT_EQ(planStand(*world_, f.placement.worldFromRoot, Vec3{nan}, capsule_).reason,
            StandReason::InvalidInput);
  StandPlannerSettings bad;
  bad.ringSpacing = 0.0;
  EXPECT_EQ(
      planStand(*world_, f.placement.worldFromRoot, f.worldFromPelvis.translation, capsule_, bad).reason,
      StandReason::InvalidInput);
  bad = StandPlannerSettings{};
  bad.maxSlope = kPi / 2;
  EXPECT_EQ(
      planStand(*world_, f.placement.worldFromRoot, f.worldFromPelvis.translation, capsule_, bad).decision,
      StandDecision::Delay);
  CapsuleDef thin;
  thin.radius = 0.0;
  EXPECT_EQ(planStand(*world_, f.placement.worldFromRoot, f.worldFromPelvis.translation, thin).reason,
            StandReason::InvalidInput);
}

}  // namespace
}  // namespace handoff
