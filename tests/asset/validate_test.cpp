// The validator: one test per finding kind, each made by breaking a good asset.
#include "asset_test_util.h"

#include <functional>

namespace handoff {
namespace {
using namespace asset_test;

class Validator : public ::testing::Test {
 protected:
  void SetUp() override {
    skeleton_ = tPoseSkeleton();
    Result<RagdollAsset> built = buildRagdoll(skeleton_, BuildOptions{});
    ASSERT_TRUE(built.ok()) << built.error();
    good_ = *built;
    ASSERT_TRUE(validateRagdoll(good_, skeleton_).empty());
  }

  int body(Slot slot) const { return good_.bodyForSlot(slot); }
  int joint(Slot childSlot) const { return body(childSlot) - 1; }  // one joint per non-root body, in order

  /// Breaks a copy of the good asset and expects exactly the given finding (code, severity,
  /// subject containing `subject`), and no other finding of that severity or worse.
  void expectFinding(const std::function<void(RagdollAsset&)>& breakIt, const std::string& code,
                     Finding::Severity severity, const std::string& subject,
                     const ValidateOptions& options = {}) {
    RagdollAsset a = good_;
    breakIt(a);
    const std::vector<Finding> findings = validateRagdoll(a, skeleton_, options);
    bool found = false;
    std::string all;
    for (const Finding& f : findings) {
      all += "\n  " + formatFinding(f);
      if (f.code == code && f.severity == severity && f.subject.find(subject) != std::string::npos &&
          f.message.find(subject) != std::string::npos) {
        found = true;
      }
    }
    EXPECT_TRUE(found) << "expected " << severityName(severity) << " " << code << " [" << subject
                       << "], got:" << all;
    EXPECT_EQ(hasErrors(findings), severity == Finding::Severity::Error) << all;
  }

  Skeleton skeleton_;
  RagdollAsset good_;
};

TEST_F(Validator, Overlap) {
  // Swell the left thigh until it reaches the right one (10 cm further than the hip width allows).
  expectFinding(
      [&](RagdollAsset& a) { a.bodies[static_cast<size_t>(body(Slot::UpperLegL))].shape.radius = 0.13; },
      "overlap", Finding::Severity::Error, "LeftUpLeg");
  // Boxes whose cores intersect (the feet widened into each other) are caught too.
  expectFinding(
      [&](RagdollAsset& a) { a.bodies[static_cast<size_t>(body(Slot::FootL))].shape.halfExtents.x = 0.17; },
      "overlap", Finding::Severity::Error, "RightFoot");
  // Overlaps below the tolerance are ignored; adjacent bodies (thigh and pelvis) never count.
  RagdollAsset touching = good_;
  touching.bodies[static_cast<size_t>(body(Slot::LowerSpine))].shape.radius = 0.05;  // out of the way
  BodyDef& thigh = touching.bodies[static_cast<size_t>(body(Slot::UpperLegL))];
  const BodyDef& other = touching.bodies[static_cast<size_t>(body(Slot::UpperLegR))];
  thigh.shape.radius = 0.2 - other.shape.radius + 0.0005;  // hips are 0.2 m apart: 0.5 mm overlap
  for (const Finding& f : validateRagdoll(touching, skeleton_))
    EXPECT_NE(f.code, "overlap") << formatFinding(f);
  ValidateOptions strict;
  strict.overlapTolerance = 0.0001;
  expectFinding([&](RagdollAsset& a) { a = touching; }, "overlap", Finding::Severity::Error, "RightUpLeg",
                strict);
}

TEST_F(Validator, AnchorMismatch) {
  expectFinding(
      [&](RagdollAsset& a) {
        a.joints[static_cast<size_t>(joint(Slot::LowerLegR))].bodyBFromJoint.translation +=
            Vec3{0.0, 0.002, 0.0};
      },
      "anchor_mismatch", Finding::Severity::Error, "RightLeg");
  // Within the 1 mm tolerance: fine.
  RagdollAsset a = good_;
  a.joints[static_cast<size_t>(joint(Slot::LowerLegR))].bodyBFromJoint.translation += Vec3{0.0, 0.0009, 0.0};
  EXPECT_TRUE(validateRagdoll(a, skeleton_).empty());
}

TEST_F(Validator, MassRatio) {
  expectFinding(
      [&](RagdollAsset& a) {
        BodyDef& hand = a.bodies[static_cast<size_t>(body(Slot::HandL))];
        hand.mass = 2.5 * a.bodies[static_cast<size_t>(body(Slot::LowerArmL))].mass;
        hand.inertia = shapePrincipalInertia(hand.shape, hand.mass);
      },
      "mass_ratio", Finding::Severity::Warning, "LeftHand");
}

TEST_F(Validator, ExtremeMass) {
  expectFinding([&](RagdollAsset& a) { a.bodies[static_cast<size_t>(body(Slot::HandR))].mass = 0.05; },
                "extreme_mass", Finding::Severity::Warning, "RightHand");
  expectFinding([&](RagdollAsset& a) { a.bodies[0].mass = 150.0; }, "extreme_mass",
                Finding::Severity::Warning, "Hips");
}

TEST_F(Validator, InvalidMass) {
  expectFinding([&](RagdollAsset& a) { a.bodies[static_cast<size_t>(body(Slot::Head))].mass = -1.0; },
                "invalid_mass", Finding::Severity::Error, "Head");
  expectFinding([&](RagdollAsset& a) { a.bodies[static_cast<size_t>(body(Slot::Head))].inertia.y = 0.0; },
                "invalid_mass", Finding::Severity::Error, "Head");
  expectFinding(
      [&](RagdollAsset& a) {
        a.bodies[static_cast<size_t>(body(Slot::Head))].inertia = Vec3{1.0, 0.1, 0.1};
      },
      "invalid_mass", Finding::Severity::Warning, "Head");  // triangle inequality
}

TEST_F(Validator, LimitExcludesBind) {
  // A knee whose limits start at 0.2 rad of flexion: the straight bind pose is outside.
  expectFinding(
      [&](RagdollAsset& a) {
        a.joints[static_cast<size_t>(joint(Slot::LowerLegL))].preset.angularLower.z = 0.2;
      },
      "limit_excludes_bind", Finding::Severity::Error, "LeftLeg");
  // A locked axis locked away from the bind angle.
  expectFinding(
      [&](RagdollAsset& a) {
        JointPreset& p = a.joints[static_cast<size_t>(joint(Slot::HandR))].preset;
        p.angularLower.x = p.angularUpper.x = 0.3;
      },
      "limit_excludes_bind", Finding::Severity::Error, "RightHand");
  // The frames decide, not the numbers alone: rotating the child's joint frame by -0.4 rad about
  // the hinge puts the bind pose at -0.4 (hyperextended), outside [0, 2.6].
  expectFinding(
      [&](RagdollAsset& a) {
        Transform& f = a.joints[static_cast<size_t>(joint(Slot::LowerArmL))].bodyBFromJoint;
        f.rotation = f.rotation * glm::angleAxis(-0.4, Vec3{0.0, 0.0, 1.0});
      },
      "limit_excludes_bind", Finding::Severity::Error, "LeftForeArm");
}

TEST_F(Validator, LimitRangeAndFreeAxis) {
  expectFinding(
      [&](RagdollAsset& a) {
        JointPreset& p = a.joints[static_cast<size_t>(joint(Slot::UpperArmL))].preset;
        p.angularLower.y = -1.7;  // beyond the middle Euler angle's +-pi/2
      },
      "limit_range", Finding::Severity::Error, "LeftArm");
  expectFinding(
      [&](RagdollAsset& a) {
        a.joints[static_cast<size_t>(joint(Slot::Head))].preset.angularUpper.x =
            std::numeric_limits<double>::quiet_NaN();
      },
      "limit_range", Finding::Severity::Error, "Head");
  expectFinding(
      [&](RagdollAsset& a) {
        JointPreset& p = a.joints[static_cast<size_t>(joint(Slot::Head))].preset;
        p.angularLower.x = 1.0;
        p.angularUpper.x = -1.0;
      },
      "free_axis", Finding::Severity::Warning, "Head");
}

TEST_F(Validator, DegenerateShape) {
  expectFinding(
      [&](RagdollAsset& a) {
        a.bodies[static_cast<size_t>(body(Slot::LowerArmR))].shape.radius =
            std::numeric_limits<double>::quiet_NaN();
      },
      "degenerate_shape", Finding::Severity::Error, "RightForeArm");
  expectFinding([&](RagdollAsset& a) { a.bodies[static_cast<size_t>(body(Slot::Head))].shape.radius = 0.0; },
                "degenerate_shape", Finding::Severity::Error, "Head");
  expectFinding(
      [&](RagdollAsset& a) { a.bodies[static_cast<size_t>(body(Slot::FootL))].shape.halfExtents.z = -0.1; },
      "degenerate_shape", Finding::Severity::Error, "LeftFoot");
  expectFinding(
      [&](RagdollAsset& a) { a.bodies[static_cast<size_t>(body(Slot::Chest))].shape.type = ShapeType::None; },
      "degenerate_shape", Finding::Severity::Error, "Chest");
}

TEST_F(Validator, DegenerateFrame) {
  expectFinding(
      [&](RagdollAsset& a) { a.bodies[static_cast<size_t>(body(Slot::Chest))].boneFromBody.rotation *= 2.0; },
      "degenerate_frame", Finding::Severity::Error, "Chest");
  expectFinding(
      [&](RagdollAsset& a) {
        a.joints[static_cast<size_t>(joint(Slot::Chest))].bodyAFromJoint.translation.x =
            std::numeric_limits<double>::infinity();
      },
      "degenerate_frame", Finding::Severity::Error, "Chest");
}

TEST_F(Validator, InvalidDrive) {
  expectFinding(
      [&](RagdollAsset& a) {
        a.joints[static_cast<size_t>(joint(Slot::UpperLegR))].preset.driveStiffness = -5.0;
      },
      "invalid_drive", Finding::Severity::Error, "RightUpLeg");
  expectFinding(
      [&](RagdollAsset& a) { a.joints[static_cast<size_t>(joint(Slot::UpperLegR))].breakForce = 0.0; },
      "invalid_drive", Finding::Severity::Error, "RightUpLeg");
}

TEST_F(Validator, BadTopology) {
  expectFinding(
      [&](RagdollAsset& a) { a.joints[static_cast<size_t>(joint(Slot::LowerArmL))].parentBody = 0; },
      "bad_topology", Finding::Severity::Error, "LeftForeArm");
  expectFinding([&](RagdollAsset& a) { a.joints.erase(a.joints.begin() + joint(Slot::FootR)); },
                "bad_topology", Finding::Severity::Error, "RightFoot");
  expectFinding([&](RagdollAsset& a) { a.bodies[static_cast<size_t>(body(Slot::Chest))].parentBody = 5; },
                "bad_topology", Finding::Severity::Error, "Chest");
  RagdollAsset empty;
  const std::vector<Finding> f = validateRagdoll(empty, skeleton_);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].code, "bad_topology");
}

TEST_F(Validator, SkeletonMismatch) {
  expectFinding([&](RagdollAsset& a) { a.bodies[static_cast<size_t>(body(Slot::Head))].joint = 999; },
                "skeleton_mismatch", Finding::Severity::Error, "Head");
  expectFinding([&](RagdollAsset& a) { a.bodies[static_cast<size_t>(body(Slot::Head))].joint = 3; },
                "skeleton_mismatch", Finding::Severity::Error, "Head");  // joint 3 is "Neck"
  // resolveJoints repairs indices from names, and reports names the skeleton lacks.
  RagdollAsset a = good_;
  for (BodyDef& b : a.bodies) b.joint = -1;
  ASSERT_TRUE(resolveJoints(a, skeleton_).ok());
  EXPECT_TRUE(validateRagdoll(a, skeleton_).empty());
  a.bodies[1].name = "Nope";
  const Status st = resolveJoints(a, skeleton_);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().find("Nope"), std::string::npos);
}

TEST_F(Validator, CollisionFilterAndMaterial) {
  expectFinding(
      [&](RagdollAsset& a) {
        a.bodies[static_cast<size_t>(body(Slot::FootL))].filter.mask = layers::kRagdoll;
      },
      "collision_filter", Finding::Severity::Warning, "LeftFoot");
  expectFinding(
      [&](RagdollAsset& a) {
        a.bodies[static_cast<size_t>(body(Slot::FootL))].filter.mask |= layers::kCapsule;
      },
      "collision_filter", Finding::Severity::Warning, "LeftFoot");
  expectFinding([&](RagdollAsset& a) { a.bodies[static_cast<size_t>(body(Slot::FootL))].restitution = 1.5; },
                "invalid_material", Finding::Severity::Error, "LeftFoot");
}

TEST_F(Validator, GoodAssetDefaults) {
  // Collision: every body is a ragdoll body that meets the world, ragdolls and debris but not the
  // character capsule; adjacent bodies are excluded through their joint.
  for (const BodyDef& b : good_.bodies) {
    EXPECT_EQ(b.filter.layer, layers::kRagdoll);
    EXPECT_EQ(b.filter.mask, layers::kStatic | layers::kRagdoll | layers::kDebris);
  }
  EXPECT_EQ(good_.collision.capsule.layer, layers::kCapsule);
  EXPECT_EQ(good_.collision.capsule.mask & layers::kRagdoll, 0u);
  EXPECT_EQ(good_.collision.world.layer, layers::kStatic);
  for (const JointDef& j : good_.joints) {
    EXPECT_TRUE(std::isinf(j.breakForce) && std::isinf(j.breakTorque));
    EXPECT_GT(j.preset.driveStiffness, 0.0);
    EXPECT_GT(j.preset.maxDriveTorque, 0.0);
  }
}

}  // namespace
}  // namespace handoff
