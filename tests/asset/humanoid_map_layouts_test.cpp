// Issue 31: layouts of real rigs the mapper did not find a pelvis or legs in (corpus rigs from
// Quaternius), built on the rig families' reference T-pose (tests/support/rig_families.h).
#include "asset_test_util.h"
#include "support/rig_families.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace handoff {
namespace {

/// Trunk, head and arms of a Quaternius rig: Root > Hips > Spine > Chest > Neck > Head and the
/// arms off the chest. The legs are added by each test.
std::vector<test::RigRow> trunk() {
  std::vector<test::RigRow> rows = {
      {"Root", "", "root"},
      {"Hips", "Root", "pelvis"},
      {"Spine", "Hips", "spine1"},
      {"Chest", "Spine", "chest"},
      {"Neck", "Chest", "neck"},
      {"Head", "Neck", "head"},
      {"HeadTop", "Head", "head_top"},
  };
  test::sides(rows,
              {{"Shoulder.{s}", "Chest", "clavicle{x}"},
               {"UpperArm.{s}", "Shoulder.{s}", "shoulder{x}"},
               {"LowerArm.{s}", "UpperArm.{s}", "elbow{x}"},
               {"Hand.{s}", "LowerArm.{s}", "wrist{x}"},
               {"Finger.{s}", "Hand.{s}", "finger{x}"}},
              "L", "R");
  return rows;
}

using asset_test::mapped;

TEST(HumanoidMapLayouts, LegsHangingOffAFloorLevelRootBesideTheHips) {
  // Quaternius' modular characters: Root > Hips, UpperLeg.L, UpperLeg.R (the legs are no children
  // of the hips). The split of legs and spine is the root at the floor, which the pelvis search
  // skipped as an IK/root bone: "cannot map ... legs: none reaching the floor".
  test::RigFamily f;
  f.rows = trunk();
  test::sides(f.rows,
              {{"UpperLeg.{s}", "Root", "hip{x}"},
               {"LowerLeg.{s}", "UpperLeg.{s}", "knee{x}"},
               {"Foot.{s}", "LowerLeg.{s}", "ankle{x}"},
               {"Toe.{s}", "Foot.{s}", "toe{x}"}},
              "L", "R");
  const Skeleton s = test::buildFamily(f);
  std::vector<Finding> notes;
  Result<HumanoidMap> map = mapHumanoid(s, &notes);
  ASSERT_TRUE(map.ok()) << map.error();
  EXPECT_EQ(mapped(s, *map, Slot::Pelvis), "Hips");
  EXPECT_EQ(mapped(s, *map, Slot::UpperLegL), "UpperLeg.L");
  EXPECT_EQ(mapped(s, *map, Slot::FootR), "Foot.R");
  EXPECT_EQ(mapped(s, *map, Slot::LowerArmR), "LowerArm.R");
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const Finding& n) {
    return n.message.find("legs hang off Root beside the hips bone Hips") != std::string::npos;
  }));
  // And it builds: the thighs join the pelvis body though they are not below the hips bone.
  BuildOptions options;
  Result<RagdollAsset> asset = buildRagdoll(s, options);
  EXPECT_TRUE(asset.ok()) << asset.error();
}

TEST(HumanoidMapLayouts, LegsWhoseFeetAreIkBonesAtTheRoot) {
  // Quaternius' platformer character: the legs hang off Body (beside Hips) and end at the knee
  // joint's child LowerLeg; the feet are IK bones under Root. No chain reaches the floor.
  test::RigFamily f;
  f.rows = trunk();
  f.rows[1].parent = "Body";
  f.rows.insert(f.rows.begin() + 1, test::RigRow{"Body", "Root", "spine1"});
  test::sides(f.rows,
              {{"UpperLeg.{s}", "Body", "hip{x}"},
               {"LowerLeg.{s}", "UpperLeg.{s}", "knee{x}"},
               {"Foot.{s}", "Root", "ankle{x}"}},
              "L", "R");
  const Skeleton s = test::buildFamily(f);
  std::vector<Finding> notes;
  Result<HumanoidMap> map = mapHumanoid(s, &notes);
  ASSERT_TRUE(map.ok()) << map.error();
  EXPECT_EQ(mapped(s, *map, Slot::UpperLegL), "UpperLeg.L");
  EXPECT_EQ(mapped(s, *map, Slot::LowerLegR), "LowerLeg.R");
  const std::string pelvis = mapped(s, *map, Slot::Pelvis);
  EXPECT_TRUE(pelvis == "Body" || pelvis == "Hips") << pelvis;
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(), [](const Finding& n) {
    return n.message.find("no chain reaches the floor") != std::string::npos;
  }));
}

}  // namespace
}  // namespace handoff
