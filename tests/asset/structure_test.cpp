// Issue 27, finding 11: broken assets pass. validateRagdollStructure checks what an asset is made
// of without its skeleton (what `handoff validate` without --skeleton runs) and, given the
// skeleton, its indices into it; validateRagdoll and Character::create run it. Finding 12: a mass
// of 1e308 kg and absurd gains are errors naming the body or joint and the field. Deep JSON is
// refused before it is parsed.
#include "asset_test_util.h"
#include "handoff/rig.h"

#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace handoff {
namespace structure_test {
namespace {
using namespace asset_test;

class Structure : public ::testing::Test {
 protected:
  void SetUp() override {
    skeleton_ = tPoseSkeleton();
    Result<RagdollAsset> built = buildRagdoll(skeleton_, BuildOptions{});
    ASSERT_TRUE(built.ok()) << built.error();
    good_ = *built;
    ASSERT_FALSE(hasErrors(validateRagdollStructure(good_)));
    ASSERT_FALSE(hasErrors(validateRagdollStructure(good_, &skeleton_)));
  }

  /// Breaks a copy of the good asset; expects an error with `code` whose message holds `words`,
  /// from the structure check with and without the skeleton (`withSkeleton` only: with it), and
  /// from validateRagdoll.
  void expectError(const std::function<void(RagdollAsset&)>& breakIt, const std::string& code,
                   const std::string& words, bool withSkeletonOnly = false) {
    RagdollAsset a = good_;
    breakIt(a);
    const auto has = [&](const std::vector<Finding>& findings) {
      std::string all;
      bool found = false;
      for (const Finding& f : findings) {
        all += "\n  " + formatFinding(f);
        found = found || (f.severity == Finding::Severity::Error && f.code == code &&
                          f.message.find(words) != std::string::npos);
      }
      EXPECT_TRUE(found) << "expected error " << code << " '" << words << "', got:" << all;
    };
    if (!withSkeletonOnly) has(validateRagdollStructure(a));
    has(validateRagdollStructure(a, &skeleton_));
    has(validateRagdoll(a, skeleton_));
  }

  int body(Slot slot) const { return good_.bodyForSlot(slot); }

  Skeleton skeleton_;
  RagdollAsset good_;
};

TEST_F(Structure, TopologyWithoutTheSkeleton) {
  // A cycle: the chest's parent is a body listed after it.
  const int chest = body(Slot::Chest);
  expectError([&](RagdollAsset& a) { a.bodies[static_cast<size_t>(chest)].parentBody = chest + 2; },
              "bad_topology", "has parent body " + std::to_string(chest + 2));
  // A body that is its own parent.
  expectError([&](RagdollAsset& a) { a.bodies[3].parentBody = 3; }, "bad_topology", "has parent body 3");
  // A parent out of range.
  expectError([&](RagdollAsset& a) { a.bodies[3].parentBody = 999; }, "bad_topology", "has parent body 999");
  // A joint between bodies that do not exist, a joint missing.
  expectError([&](RagdollAsset& a) { a.joints[2].childBody = 999; }, "bad_topology", "connects bodies");
  expectError([&](RagdollAsset& a) { a.joints.pop_back(); }, "bad_topology",
              "joints to its parent (needs 1)");
  // No bodies at all.
  expectError([&](RagdollAsset& a) { a.bodies.clear(); }, "bad_topology", "the asset has no bodies");
}

TEST_F(Structure, RangesWithoutTheSkeleton) {
  expectError([&](RagdollAsset& a) { a.bodies[1].mass = 1e308; }, "invalid_mass",
              "mass 1e+308 kg is not in [0.001, 1e+04] kg");
  expectError([&](RagdollAsset& a) { a.bodies[1].mass = 1e-300; }, "invalid_mass",
              "is not in [0.001, 1e+04]");
  expectError([&](RagdollAsset& a) { a.bodies[1].inertia.x = 1e308; }, "invalid_mass", "inertia");
  expectError([&](RagdollAsset& a) { a.joints[0].preset.angularLower.x = -100.0; }, "limit_range",
              "axis X limits [-100, ");
  expectError([&](RagdollAsset& a) { a.joints[0].preset.angularUpper.z = 100.0; }, "limit_range",
              "axis Z limits");
  expectError([&](RagdollAsset& a) { a.joints[1].preset.driveStiffness = 1e308; }, "invalid_drive",
              "stiffness 1e+308 N m/rad is not in [0, 1e+06]");
  expectError(
      [&](RagdollAsset& a) { a.joints[1].preset.driveDamping = std::numeric_limits<double>::infinity(); },
      "invalid_drive", "damping inf N m s/rad");
}

TEST_F(Structure, IndicesIntoTheSkeleton) {
  expectError([&](RagdollAsset& a) { a.bodies[2].joint = 999; }, "skeleton_mismatch", "refers to joint 999",
              true);
  expectError([&](RagdollAsset& a) { a.map[Slot::Head] = 999; }, "bad_reference",
              "map slot '" + std::string(slotName(Slot::Head)) + "' refers to joint 999", true);
  expectError([&](RagdollAsset& a) { a.map[Slot::Head] = -7; }, "bad_reference", "refers to joint -7", true);
}

TEST_F(Structure, TheJsonOfABrokenAssetLoadsAndIsRefusedByTheCheck) {
  // What `handoff validate` without --skeleton sees: the loader reads the file, the check refuses.
  std::string json = saveRagdollJson(good_);
  const std::string mass = "\"mass\": ";
  const size_t at = json.find(mass);
  ASSERT_NE(at, std::string::npos);
  json.replace(at + mass.size(), json.find_first_of(",\n}", at + mass.size()) - at - mass.size(), "1e308");
  const Result<RagdollAsset> loaded = loadRagdollJson(json, "heavy.json");
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EXPECT_TRUE(hasErrors(validateRagdollStructure(*loaded)));
}

TEST(AssetJson, DeepNestingIsRefusedBeforeParsing) {
  for (const char* open : {"[", "{\"a\":"}) {
    std::string deep = "{\"version\": 1, \"extra\": ";
    const int levels = 100000;
    for (int i = 0; i < levels; ++i) deep += open;
    deep += "0";
    for (int i = 0; i < levels; ++i) deep += open[0] == '[' ? "]" : "}";
    deep += "}";
    const Result<RagdollAsset> loaded = loadRagdollJson(deep, "deep.json");
    ASSERT_FALSE(loaded.ok());
    EXPECT_NE(loaded.error().find("deep.json:1:"), std::string::npos) << loaded.error().substr(0, 200);
    EXPECT_NE(loaded.error().find("nested deeper than 64 levels"), std::string::npos)
        << loaded.error().substr(0, 200);
  }
}

}  // namespace
}  // namespace structure_test
}  // namespace handoff
