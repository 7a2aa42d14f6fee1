// The builder on the real skeletons of the data folder (issue 3, "What it must show").
#include "asset_test_util.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace handoff {
namespace {
using namespace asset_test;

struct Case {
  const char* file;
  int minBodies;
  int maxBodies;
  /// Bodies out of human size, each a "body_size" warning and the only warnings of the build and of
  /// validate (RobotExpressive is a cartoon robot: a 0.51 m head, 0.39 m trunk, 0.19 m forearms).
  std::vector<std::string> oversized = {};
};

class RealSkeleton : public ::testing::TestWithParam<Case> {};

TEST_P(RealSkeleton, BuildsAValidRagdoll) {
  const Case c = GetParam();
  const Skeleton skeleton = loadSkeleton(c.file);
  ASSERT_GT(skeleton.jointCount(), 0);
  BuildOptions options;
  options.totalMass = 72.5;
  options.skeletonName = c.file;
  BuildReport report;
  Result<RagdollAsset> asset = buildRagdoll(skeleton, options, &report);
  ASSERT_TRUE(asset.ok()) << asset.error();
  EXPECT_FALSE(report.hasErrors());
  const auto expected = [&](const Finding& f) {
    return f.code == "body_size" && f.severity == Finding::Severity::Warning &&
           std::find(c.oversized.begin(), c.oversized.end(), f.subject) != c.oversized.end();
  };
  for (const Finding& f : report.findings) {
    if (f.severity != Finding::Severity::Info && !expected(f))
      ADD_FAILURE() << c.file << ": " << formatFinding(f);
    if (f.code != "stabilize_mass" && f.code != "stabilize_inertia")
      std::printf("   %s\n", formatFinding(f).c_str());
  }
  const Measures m = measure(*asset, skeleton);
  std::printf(
      "[ figures  ] %-45s bodies %2d  axis %.2e deg (%s)  end %.2e m (%s)  anchor %.2e m  mass %.9f\n",
      c.file, m.bodies, m.worstAxisDegrees, m.worstAxisBody.c_str(), m.worstEndMetres, m.worstEndBody.c_str(),
      m.worstAnchorMetres, m.massSum);
  EXPECT_GE(m.bodies, c.minBodies);
  EXPECT_LE(m.bodies, c.maxBodies);
  EXPECT_GE(m.bodies, 11);
  EXPECT_LE(m.bodies, 18);
  EXPECT_LT(m.worstAxisDegrees, 1.0) << m.worstAxisBody;
  EXPECT_LT(m.worstEndMetres, 0.02) << m.worstEndBody;
  EXPECT_LT(m.worstAnchorMetres, 0.001);
  EXPECT_LE(m.worstLimitExcess, 1e-9);
  EXPECT_NEAR(m.massSum, 72.5, 1e-6);
  const std::vector<Finding> findings = validateRagdoll(*asset, skeleton);
  EXPECT_EQ(findings.size(), c.oversized.size());
  for (const Finding& f : findings) EXPECT_TRUE(expected(f)) << c.file << ": " << formatFinding(f);
  for (const BodyDef& b : asset->bodies) {
    std::printf("             %-14s %-22s %-8s r %.3f hh %.3f  %.3f kg\n", slotName(b.slot), b.name.c_str(),
                b.shape.type == ShapeType::Capsule  ? "capsule"
                : b.shape.type == ShapeType::Sphere ? "sphere"
                                                    : "box",
                b.shape.radius, b.shape.halfHeight, b.mass);
  }
}

INSTANTIATE_TEST_SUITE_P(Data, RealSkeleton,
                         ::testing::Values(Case{"cmu/01_01.bvh", 15, 15}, Case{"cmu/Boxing_Toes.bvh", 16, 16},
                                           Case{"deepmimic/humanoid3d_run.bvh", 13, 13},
                                           Case{"mesh2motion/human-base-animations.glb", 16, 16},
                                           Case{"robot-expressive/RobotExpressive.glb",
                                                15,
                                                15,
                                                {"Body", "Torso", "Head", "LowerArm.L", "LowerArm.R"}}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = info.param.file;
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace handoff
