// The broken ragdolls of data/diagnose/ (docs/DIAGNOSE.md, played by scenarios/diagnose/) are the
// default DeepMimic ragdoll with exactly one edit each, and the validator names each mistake. If
// the builder changes, regenerate them: `handoff build-asset deepmimic/humanoid3d_run.bvh` from
// data/, then the edit of data/README.md's diagnose/ table.
#include "asset_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace handoff {
namespace {
using namespace asset_test;

RagdollAsset defaultDeepMimicRagdoll(const Skeleton& skeleton) {
  BuildOptions options;
  options.skeletonName = "deepmimic/humanoid3d_run.bvh";
  Result<RagdollAsset> built = buildRagdoll(skeleton, options);
  EXPECT_TRUE(built.ok()) << (built ? "" : built.error());
  return built ? *built : RagdollAsset{};
}

std::vector<const Finding*> findingsCoded(const std::vector<Finding>& findings, const std::string& code) {
  std::vector<const Finding*> out;
  for (const Finding& f : findings) {
    if (f.code == code) out.push_back(&f);
  }
  return out;
}

struct BrokenAsset {
  const char* file;
  std::function<void(RagdollAsset&)> edit;
  const char* finding;  ///< The validator's code for the mistake.
  Finding::Severity severity;
  std::vector<std::string> subjects;  ///< What the findings name.
};

TEST(DiagnoseAssets, EachIsTheDefaultRagdollWithOneEditTheValidatorNames) {
  const Skeleton skeleton = loadSkeleton("deepmimic/humanoid3d_run.bvh");
  const RagdollAsset built = defaultDeepMimicRagdoll(skeleton);
  ASSERT_EQ(built.joints.size(), 12u);
  const std::vector<Finding> healthy = validateRagdoll(built, skeleton);
  // Adjacent shapes overlap at every joint but the shoulders (the upper arms hang clear of the
  // chest capsule).
  std::vector<std::string> overlapping;
  for (const JointDef& j : built.joints) {
    if (j.group != JointGroup::Shoulder) overlapping.push_back(j.name);
  }
  const std::vector<BrokenAsset> cases = {
      {"diagnose/adjacent_overlap.json",
       [](RagdollAsset& a) {
         for (JointDef& j : a.joints) j.adjacentCollision = true;
       },
       "adjacent_overlap", Finding::Severity::Warning, overlapping},
      {"diagnose/mass_ratio_10.json",
       [](RagdollAsset& a) {
         BodyDef& thigh = a.bodies[static_cast<size_t>(a.findBody("left_hip"))];
         const double mass = a.bodies[static_cast<size_t>(a.findBody("left_knee"))].mass * 0.1;
         thigh.inertia = thigh.inertia * (mass / thigh.mass);
         thigh.mass = mass;
         a.totalMass = 0.0;
         for (const BodyDef& b : a.bodies) a.totalMass += b.mass;
       },
       "mass_ratio",
       Finding::Severity::Warning,
       {"left_knee/left_hip"}},
      {"diagnose/limits_exclude_pose.json",
       [](RagdollAsset& a) {
         for (JointDef& j : a.joints) {
           if (j.name == "left_knee" || j.name == "right_knee") j.preset.angularLower.z = 1.5;
         }
       },
       "limit_excludes_bind",
       Finding::Severity::Error,
       {"left_knee", "right_knee"}},
  };
  for (const BrokenAsset& c : cases) {
    SCOPED_TRACE(c.file);
    Result<RagdollAsset> loaded = loadRagdollFile(dataPath(c.file));
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    RagdollAsset expected = built;
    c.edit(expected);
    // Bit for bit: the saved text holds every field with doubles that round-trip.
    EXPECT_EQ(saveRagdollJson(*loaded), saveRagdollJson(expected));
    EXPECT_NE(saveRagdollJson(*loaded), saveRagdollJson(built));

    EXPECT_TRUE(findingsCoded(healthy, c.finding).empty()) << "the built ragdoll already has " << c.finding;
    const std::vector<Finding> found = validateRagdoll(*loaded, skeleton);
    const std::vector<const Finding*> named = findingsCoded(found, c.finding);
    std::vector<std::string> subjects;
    for (const Finding* f : named) {
      std::printf("  %s\n", formatFinding(*f).c_str());
      EXPECT_EQ(f->severity, c.severity);
      subjects.push_back(f->subject);
    }
    std::vector<std::string> want = c.subjects;
    std::sort(subjects.begin(), subjects.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(subjects, want);
  }
}

}  // namespace
}  // namespace handoff
