// Issue 20: any humanoid rig a user brings. The map matrix over rig families (tables built from
// each family's published names and hierarchy), the real files of data/rigs/ (README there), and
// validate's findings on implausible assets, each shown by a broken one.
#include "asset_test_util.h"
#include "support/rig_families.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace handoff {
namespace {
using namespace asset_test;

std::string bone(const Skeleton& s, const HumanoidMap& map, Slot slot) {
  return map[slot] >= 0 ? s.jointNames[static_cast<size_t>(map[slot])] : "-";
}

double floorOf(const Skeleton& s) {
  std::vector<Transform> models(static_cast<size_t>(s.jointCount()));
  localToModel(s, s.restLocal, models);
  double floor = std::numeric_limits<double>::infinity();
  for (int j = 0; j < s.jointCount(); ++j) {
    floor = std::min({floor, models[static_cast<size_t>(j)].translation.y,
                      models[static_cast<size_t>(j)].transformPoint(s.endSiteOffset[static_cast<size_t>(j)]).y});
  }
  return floor;
}

double jointHeight(const Skeleton& s, int joint) {
  std::vector<Transform> models(static_cast<size_t>(s.jointCount()));
  localToModel(s, s.restLocal, models);
  return models[static_cast<size_t>(joint)].translation.y - floorOf(s);
}

bool hasCode(const std::vector<Finding>& findings, const std::string& code, Finding::Severity severity) {
  return std::any_of(findings.begin(), findings.end(),
                     [&](const Finding& f) { return f.code == code && f.severity == severity; });
}

// --- The matrix: family x slot ------------------------------------------------------------------

TEST(RigFamilies, EveryFamilyMapsSlotBySlot) {
  std::printf("[ matrix   ] %-22s %-5s %-6s %s\n", "family", "slots", "conf", "hip [m]");
  for (const test::RigFamily& family : test::rigFamilies()) {
    const Skeleton s = test::buildFamily(family);
    ASSERT_TRUE(s.validate()) << family.family << ": " << s.validate().error();
    Result<HumanoidMapReport> report = mapHumanoidReport(s);
    ASSERT_TRUE(report.ok()) << family.family << ": " << report.error();
    int passed = 0;
    for (const auto& [slot, expected] : family.expected) {
      const std::optional<Slot> sl = slotFromName(slot);
      ASSERT_TRUE(sl) << slot;
      EXPECT_EQ(bone(s, report->map, *sl), expected) << family.family << " " << slot;
      passed += bone(s, report->map, *sl) == expected;
    }
    EXPECT_EQ(passed, 14) << family.family << ": every limb segment, hands, feet, pelvis and head";
    // Chest and lower spine are chosen by height: on the spine, between the pelvis and the head.
    for (Slot spine : {Slot::Chest}) {
      ASSERT_GE(report->map[spine], 0) << family.family;
      const double y = jointHeight(s, report->map[spine]);
      EXPECT_GT(y, jointHeight(s, report->map[Slot::Pelvis])) << family.family;
      EXPECT_LT(y, jointHeight(s, report->map[Slot::Head])) << family.family;
    }
    const double hip = jointHeight(s, report->map[Slot::Pelvis]);
    const double truth = test::landmark("pelvis").y - floorOf(s);
    EXPECT_NEAR(hip, truth, 0.05) << family.family;
    for (const Finding& f : report->findings) {
      EXPECT_EQ(f.severity, Finding::Severity::Info) << family.family << ": " << formatFinding(f);
    }
    EXPECT_GE(report->confidence, 0.6) << family.family;
    std::printf("[ matrix   ] %-22s %2d/14 %.2f   %.3f (truth %.3f)  head %s, thigh %s\n", family.family.c_str(),
                passed, report->confidence, hip, truth, bone(s, report->map, Slot::Head).c_str(),
                bone(s, report->map, Slot::UpperLegL).c_str());
  }
}

TEST(RigFamilies, EveryFamilyBuildsAValidRagdoll) {
  for (const test::RigFamily& family : test::rigFamilies()) {
    const Skeleton s = test::buildFamily(family);
    BuildReport report;
    Result<RagdollAsset> asset = buildRagdoll(s, BuildOptions{}, &report);
    ASSERT_TRUE(asset.ok()) << family.family << ": " << asset.error();
    // Every slot has a body, the lower spine when it is long enough to get one (lower_spine_skipped).
    EXPECT_GE(asset->bodies.size(), 15u) << family.family;
    for (Slot slot : {Slot::HandL, Slot::HandR, Slot::FootL, Slot::FootR, Slot::Head})
      EXPECT_GE(asset->bodyForSlot(slot), 0) << family.family << " " << slotName(slot);
    EXPECT_FALSE(hasErrors(validateRagdoll(*asset, s))) << family.family;
  }
}

TEST(RigFamilies, VrmHumanBonesDecideTheSlots) {
  // A VRoid skeleton whose file names its humanoid bones; here the file says the chest is the
  // upper chest, which the mapper's height rule would not pick.
  test::RigFamily vroid;
  for (const test::RigFamily& f : test::rigFamilies()) {
    if (f.family == "VRoid") vroid = f;
  }
  const Skeleton s = test::buildFamily(vroid);
  MapInputs inputs;
  const std::vector<std::pair<std::string, std::string>> roles = {
      {"hips", "J_Bip_C_Hips"},           {"spine", "J_Bip_C_Spine"},          {"chest", "J_Bip_C_UpperChest"},
      {"head", "J_Bip_C_Head"},           {"leftUpperArm", "J_Bip_L_UpperArm"}, {"leftLowerArm", "J_Bip_L_LowerArm"},
      {"leftHand", "J_Bip_L_Hand"},       {"rightUpperArm", "J_Bip_R_UpperArm"}, {"rightLowerArm", "J_Bip_R_LowerArm"},
      {"rightHand", "J_Bip_R_Hand"},      {"leftUpperLeg", "J_Bip_L_UpperLeg"}, {"leftLowerLeg", "J_Bip_L_LowerLeg"},
      {"leftFoot", "J_Bip_L_Foot"},       {"rightUpperLeg", "J_Bip_R_UpperLeg"}, {"rightLowerLeg", "J_Bip_R_LowerLeg"},
      {"rightFoot", "J_Bip_R_Foot"}};
  for (const auto& [role, joint] : roles) inputs.fileHumanoid.push_back(HumanoidBone{role, joint});
  Result<HumanoidMapReport> report = mapHumanoidReport(s, inputs);
  ASSERT_TRUE(report.ok()) << report.error();
  EXPECT_EQ(bone(s, report->map, Slot::Chest), "J_Bip_C_UpperChest");
  for (int i = 0; i < kSlotCount; ++i) {
    EXPECT_EQ(report->slots[static_cast<size_t>(i)].source, MapSource::FileHumanoid) << slotName(static_cast<Slot>(i));
    EXPECT_DOUBLE_EQ(report->slots[static_cast<size_t>(i)].confidence, 0.95);
  }
  // A file map missing a required slot is not used: names and structure decide.
  inputs.fileHumanoid.erase(inputs.fileHumanoid.begin() + 3);  // no head
  Result<HumanoidMapReport> partial = mapHumanoidReport(s, inputs);
  ASSERT_TRUE(partial.ok()) << partial.error();
  EXPECT_EQ(partial->slots[static_cast<size_t>(Slot::Head)].source, MapSource::Name);
  EXPECT_EQ(bone(s, partial->map, Slot::Head), "J_Bip_C_Head");
}

TEST(RigFamilies, ScrambledNamesStillMapByStructure) {
  // Unreal's mannequin with every name replaced: twist bones, IK feet and all. The structure alone
  // finds the same pelvis, thighs and head, with structure as the source and a lower confidence.
  test::RigFamily ue;
  for (const test::RigFamily& f : test::rigFamilies()) {
    if (f.family == "Unreal UE5") ue = f;
  }
  Skeleton s = test::buildFamily(ue);
  const Skeleton named = s;
  for (size_t i = 0; i < s.jointNames.size(); ++i) s.jointNames[i] = "b" + std::to_string(i);
  Result<HumanoidMapReport> report = mapHumanoidReport(s);
  ASSERT_TRUE(report.ok()) << report.error();
  EXPECT_EQ(bone(named, report->map, Slot::Pelvis), "pelvis");
  EXPECT_EQ(bone(named, report->map, Slot::Head), "head");
  EXPECT_EQ(report->slots[static_cast<size_t>(Slot::UpperLegL)].source, MapSource::Structure);
  EXPECT_LT(report->confidence, 0.9);
}

// --- The real files of data/rigs/ --------------------------------------------------------------

struct RealRig {
  const char* file;
  double unitScale;  ///< 0: auto
  double hip;        ///< The right rest hip height. [m]
  std::vector<std::pair<Slot, std::string>> slots;
};

const std::vector<RealRig>& realRigs() {
  static const std::vector<RealRig> rigs = {
      {"rigs/quaternius_modular_men_Adventurer.glb", 0.0, 0.894,
       {{Slot::Pelvis, "Hips"}, {Slot::Head, "Head"}, {Slot::UpperLegL, "UpperLeg.L"}, {Slot::UpperLegR, "UpperLeg.R"},
        {Slot::FootL, "Foot.L"}}},
      {"rigs/quaternius_KnightCharacter.glb", 0.4466, 0.95,
       {{Slot::Pelvis, "Body"}, {Slot::Head, "Head"}, {Slot::UpperLegL, "UpperLeg.L"}, {Slot::FootL, "Foot.L"},
        {Slot::FootR, "Foot.R"}}},
      {"rigs/quaternius_cyberpunk_Character.glb", 0.0, 0.637,
       {{Slot::Head, "Head"}, {Slot::UpperLegL, "UpperLeg.L"}, {Slot::FootL, "Foot.L"}, {Slot::FootR, "Foot.R"}}},
      {"rigs/makehuman_default_tpose.bvh", 0.0, 0.87,
       {{Slot::Pelvis, "root"}, {Slot::Head, "head"}, {Slot::UpperLegL, "upperleg01.L"}, {Slot::UpperLegR, "upperleg01.R"},
        {Slot::LowerLegL, "lowerleg01.L"}}},
      {"rigs/makehuman_mhx_walk1.bvh", 0.0, 0.98,
       {{Slot::Pelvis, "Root"}, {Slot::Head, "Head"}, {Slot::UpperLegL, "UpLeg_L"}, {Slot::UpperLegR, "UpLeg_R"},
        {Slot::LowerArmL, "LoArm_L"}, {Slot::LowerArmR, "LoArm_R"}}},
      {"rigs/gdquest_mannequiny-0.3.0.glb", 0.0, 0.95,
       {{Slot::Pelvis, "pelvis"}, {Slot::Head, "head"}, {Slot::UpperLegL, "thigh.l"}, {Slot::UpperLegR, "thigh.r"},
        {Slot::LowerArmL, "lowerarm.l"}, {Slot::LowerArmR, "lowerarm.r"}}},
      {"rigs/blender_metarig.glb", 0.0, 1.01,
       {{Slot::Pelvis, "spine"}, {Slot::Head, "spine.006"}, {Slot::UpperLegL, "thigh.L"}, {Slot::UpperLegR, "thigh.R"}}},
      {"rigs/rigify_deform_only.fbx", 0.0, 1.01,
       {{Slot::Pelvis, "DEF-spine"}, {Slot::Head, "DEF-spine.006"}, {Slot::UpperLegL, "DEF-thigh.L"},
        {Slot::UpperLegR, "DEF-thigh.R"}, {Slot::LowerArmL, "DEF-forearm.L"}}},
  };
  return rigs;
}

TEST(RigFiles, EachImportsInMetresMapsAndBuildsAsItsReadmeSays) {
  for (const RealRig& rig : realRigs()) {
    ImportOptions options;
    options.unitScale = rig.unitScale;
    Result<ImportedAsset> imported = importFile(dataPath(rig.file), options);
    ASSERT_TRUE(imported.ok()) << imported.error();
    EXPECT_NEAR(imported->hipHeight, rig.hip, 0.05) << rig.file;
    const Skeleton& s = imported->skeleton;
    BuildOptions build;
    build.humanoidBones = imported->humanoidBones;
    BuildReport report;
    Result<RagdollAsset> asset = buildRagdoll(s, build, &report);
    ASSERT_TRUE(asset.ok()) << rig.file << ": " << asset.error();
    for (const auto& [slot, name] : rig.slots) EXPECT_EQ(bone(s, asset->map, slot), name) << rig.file << " " << slotName(slot);
    const std::vector<Finding> findings = validateRagdoll(*asset, s);
    EXPECT_FALSE(hasErrors(findings)) << rig.file;
    int warnings = 0;
    for (const Finding& f : findings) warnings += f.severity == Finding::Severity::Warning;
    std::printf("[ rig file ] %-44s hip %.3f m  pelvis %-10s head %-14s thigh %-12s bodies %zu  conf %.2f  warnings %d\n",
                rig.file, imported->hipHeight, bone(s, asset->map, Slot::Pelvis).c_str(),
                bone(s, asset->map, Slot::Head).c_str(), bone(s, asset->map, Slot::UpperLegL).c_str(),
                asset->bodies.size(), report.map.confidence, warnings);
  }
}

TEST(RigFiles, TheKnightOutOfHumanScaleIsRefusedByTheImportWithTheFix) {
  Result<ImportedAsset> giant = importFile(dataPath("rigs/quaternius_KnightCharacter.glb"));
  ASSERT_FALSE(giant.ok());
  EXPECT_NE(giant.error().find("2.127 m"), std::string::npos) << giant.error();
  EXPECT_NE(giant.error().find("--unit-scale 0.4466"), std::string::npos) << giant.error();
  // Given that scale it is human-sized, with foot bodies.
  ImportOptions options;
  options.unitScale = 0.4466;
  Result<ImportedAsset> knight = importFile(dataPath("rigs/quaternius_KnightCharacter.glb"), options);
  ASSERT_TRUE(knight.ok()) << knight.error();
  EXPECT_NEAR(knight->hipHeight, 0.95, 0.002);
  Result<RagdollAsset> asset = buildRagdoll(knight->skeleton, BuildOptions{});
  ASSERT_TRUE(asset.ok()) << asset.error();
  EXPECT_GE(asset->bodyForSlot(Slot::FootL), 0);
  EXPECT_GE(asset->bodyForSlot(Slot::FootR), 0);
  EXPECT_LT(asset->bodies[static_cast<size_t>(asset->bodyForSlot(Slot::UpperLegL))].shape.radius, 0.12);
}

TEST(RigFiles, ImportFixesEachFormatPath) {
  // glTF: the mannequin's node transforms hold a pose; the inverse bind matrices are its bind pose.
  Result<ImportedAsset> gd = importFile(dataPath("rigs/gdquest_mannequiny-0.3.0.glb"));
  ASSERT_TRUE(gd.ok());
  EXPECT_TRUE(std::any_of(gd->warnings.begin(), gd->warnings.end(),
                          [](const std::string& w) { return w.find("inverse bind matrices") != std::string::npos; }));
  // BVH Z-up in decimetres: the up axis comes from the legs, the unit from the hip.
  Result<ImportedAsset> mh = importFile(dataPath("rigs/makehuman_default_tpose.bvh"));
  ASSERT_TRUE(mh.ok());
  EXPECT_EQ(mh->unitScale, 0.1);
  EXPECT_TRUE(std::any_of(mh->warnings.begin(), mh->warnings.end(),
                          [](const std::string& w) { return w.find("up axis +Z inferred") != std::string::npos; }));
  // FBX: UnitScaleFactor (centimetres) is applied.
  Result<ImportedAsset> fbx = importFile(dataPath("rigs/rigify_deform_only.fbx"));
  ASSERT_TRUE(fbx.ok());
  EXPECT_FALSE(fbx->unitScale != 0.01 && !(std::abs(fbx->unitScale - 0.01) < 1e-9)) << fbx->unitScale;
}

// A LAFAN1 / Bandai-Namco style BVH: every OFFSET along the bone's local X, so the zero-rotation
// pose is a straight stick, and every joint's position channels carry the real T-pose.
std::string localXBvh(const test::RigFamily& family, double unit) {
  const Skeleton s = test::buildFamily(family);
  std::vector<Transform> models(static_cast<size_t>(s.jointCount()));
  localToModel(s, s.restLocal, models);
  std::ostringstream out;
  std::vector<std::vector<int>> kids(static_cast<size_t>(s.jointCount()));
  for (int j = 1; j < s.jointCount(); ++j) kids[static_cast<size_t>(s.parents[static_cast<size_t>(j)])].push_back(j);
  std::ostringstream frame;
  const auto write = [&](auto&& self, int j, int depth) -> void {
    const std::string pad(static_cast<size_t>(depth) * 2, ' ');
    const double length = glm::length(s.restLocal[static_cast<size_t>(j)].translation) * unit;
    out << pad << (depth == 0 ? "ROOT " : "JOINT ") << s.jointNames[static_cast<size_t>(j)] << "\n" << pad << "{\n"
        << pad << "  OFFSET " << (depth == 0 ? 0.0 : length) << " 0 0\n"
        << pad << "  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation\n";
    const Vec3 t = s.restLocal[static_cast<size_t>(j)].translation * unit;
    frame << t.x << " " << t.y << " " << t.z << " 0 0 0 ";
    if (kids[static_cast<size_t>(j)].empty()) {
      out << pad << "  End Site\n" << pad << "  {\n" << pad << "    OFFSET " << 0.05 * unit << " 0 0\n" << pad << "  }\n";
    }
    for (int c : kids[static_cast<size_t>(j)]) self(self, c, depth + 1);
    out << pad << "}\n";
  };
  out << "HIERARCHY\n";
  write(write, 0, 0);
  out << "MOTION\nFrames: 2\nFrame Time: 0.033333\n" << frame.str() << "\n" << frame.str() << "\n";
  return out.str();
}

TEST(RigFiles, LocalXMotionDatasetTakesItsRestPoseFromTheFirstFrame) {
  test::RigFamily cmu;
  for (const test::RigFamily& f : test::rigFamilies()) {
    if (f.family == "CMU") cmu = f;
  }
  Result<ImportedAsset> imported = importBvhText(localXBvh(cmu, 100.0), "lafan_style.bvh");
  ASSERT_TRUE(imported.ok()) << imported.error();
  EXPECT_EQ(imported->unitScale, 0.01);  // centimetres, from the first frame's hip
  EXPECT_NEAR(imported->hipHeight, 0.93, 0.05);
  EXPECT_TRUE(std::any_of(imported->warnings.begin(), imported->warnings.end(),
                          [](const std::string& w) { return w.find("straight stick") != std::string::npos; }));
  Result<HumanoidMap> map = mapHumanoid(imported->skeleton);
  ASSERT_TRUE(map.ok()) << map.error();
  EXPECT_EQ(bone(imported->skeleton, *map, Slot::UpperLegL), "LeftUpLeg");
  EXPECT_EQ(bone(imported->skeleton, *map, Slot::FootR), "RightFoot");
  EXPECT_EQ(bone(imported->skeleton, *map, Slot::Head), "Head");
}

// Meshopt-compressed files are read (tests/asset/gltf_meshopt_test.cpp); what cannot be decoded is
// named there.
TEST(RigFiles, UnreadableGltfContainersAreNamed) {
  std::string glb = "glTF";
  glb += std::string("\x02\x00\x00\x00\xff\xff\x00\x00", 8);  // header length past the end
  Result<ImportedAsset> truncated = importFileData(glb, "cut.glb");
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.error().find("GLB header length"), std::string::npos) << truncated.error();
}

// --- validate on broken assets -----------------------------------------------------------------

TEST(ValidatePlausibility, AGiantIsAnImplausibleScaleError) {
  Skeleton s = tPoseSkeleton();
  for (Transform& t : s.restLocal) t.translation *= 3.0;  // a 5.4 m character in "metres"
  for (Vec3& e : s.endSiteOffset) e *= 3.0;
  BuildReport report;
  Result<RagdollAsset> asset = buildRagdoll(s, BuildOptions{}, &report);
  EXPECT_FALSE(asset.ok());
  EXPECT_TRUE(hasCode(report.findings, "implausible_scale", Finding::Severity::Error));
}

TEST(ValidatePlausibility, ATooLongShankIsAProportionWarning) {
  const Skeleton s = tPoseSkeleton();
  Result<RagdollAsset> asset = buildRagdoll(s, BuildOptions{});
  ASSERT_TRUE(asset.ok()) << asset.error();
  EXPECT_FALSE(hasCode(validateRagdoll(*asset, s), "proportion", Finding::Severity::Warning));
  RagdollAsset broken = *asset;
  broken.bodies[static_cast<size_t>(broken.bodyForSlot(Slot::LowerLegL))].shape.halfHeight *= 3.0;
  EXPECT_TRUE(hasCode(validateRagdoll(broken, s), "proportion", Finding::Severity::Warning));
}

TEST(ValidatePlausibility, SwappedLegsAreASideSwap) {
  const Skeleton s = tPoseSkeleton();
  BuildOptions options;
  options.mapJson = R"({"upper_leg_l": "RightUpLeg", "lower_leg_l": "RightLeg", "foot_l": "RightFoot",
                        "upper_leg_r": "LeftUpLeg", "lower_leg_r": "LeftLeg", "foot_r": "LeftFoot"})";
  BuildReport report;
  Result<RagdollAsset> asset = buildRagdoll(s, options, &report);
  ASSERT_TRUE(asset.ok()) << asset.error();
  EXPECT_TRUE(hasCode(validateRagdoll(*asset, s), "side_swap", Finding::Severity::Warning));
  EXPECT_EQ(report.map.slots[static_cast<size_t>(Slot::UpperLegL)].source, MapSource::User);
  EXPECT_LT(report.map.slots[static_cast<size_t>(Slot::UpperLegL)].confidence, 1.0);  // halved by the finding
  Result<RagdollAsset> straight = buildRagdoll(s, BuildOptions{});
  ASSERT_TRUE(straight.ok());
  EXPECT_FALSE(hasCode(validateRagdoll(*straight, s), "side_swap", Finding::Severity::Warning));
}

TEST(ValidatePlausibility, AHeadOnABrowIsAHeadOffset) {
  test::RigFamily meta;
  for (const test::RigFamily& f : test::rigFamilies()) {
    if (f.family == "Blender metarig") meta = f;
  }
  const Skeleton s = test::buildFamily(meta);
  BuildOptions options;
  options.mapJson = R"({"version": 1, "slots": {"head": "brow.T.L"}})";
  BuildReport report;
  Result<RagdollAsset> asset = buildRagdoll(s, options, &report);
  ASSERT_TRUE(asset.ok()) << asset.error();
  EXPECT_TRUE(hasCode(validateRagdoll(*asset, s), "head_offset", Finding::Severity::Warning));
  EXPECT_TRUE(hasCode(report.map.findings, "head_offset", Finding::Severity::Warning));
}

TEST(ValidatePlausibility, APelvisBesideTheThighsIsAPelvisOffset) {
  Skeleton s = tPoseSkeleton();
  // Move the pelvis joint 0.4 m sideways, keeping every other joint where it was.
  s.restLocal[0].translation.x += 0.4;
  for (int j = 1; j < s.jointCount(); ++j) {
    if (s.parents[static_cast<size_t>(j)] == 0) s.restLocal[static_cast<size_t>(j)].translation.x -= 0.4;
  }
  Result<HumanoidMapReport> report = mapHumanoidReport(s);
  ASSERT_TRUE(report.ok()) << report.error();
  EXPECT_TRUE(hasCode(report->findings, "pelvis_offset", Finding::Severity::Warning));
  Result<HumanoidMapReport> straight = mapHumanoidReport(tPoseSkeleton());
  ASSERT_TRUE(straight.ok());
  EXPECT_FALSE(hasCode(straight->findings, "pelvis_offset", Finding::Severity::Warning));
}

TEST(ValidatePlausibility, AnOversizedHeadAndAThinShankAreBodySizeWarnings) {
  const Skeleton s = tPoseSkeleton();
  Result<RagdollAsset> asset = buildRagdoll(s, BuildOptions{});
  ASSERT_TRUE(asset.ok()) << asset.error();
  EXPECT_FALSE(hasCode(validateRagdoll(*asset, s), "body_size", Finding::Severity::Warning));
  const auto sized = [&](Slot slot, double factor) {
    RagdollAsset broken = *asset;
    BodyDef& body = broken.bodies[static_cast<size_t>(broken.bodyForSlot(slot))];
    body.shape.radius *= factor;
    std::vector<Finding> found;
    for (const Finding& f : validateRagdoll(broken, s)) {
      if (f.code == "body_size") found.push_back(f);
    }
    std::printf("%s radius %.3f m: %s\n", slotName(slot), body.shape.radius,
                found.empty() ? "no finding" : formatFinding(found.front()).c_str());
    return found.size() == 1 && found.front().subject == body.name;
  };
  // The head sphere of a 5 m giant's head on a human body, a shank as thin as a finger.
  EXPECT_TRUE(sized(Slot::Head, 3.0));
  EXPECT_TRUE(sized(Slot::LowerLegL, 0.2));
  EXPECT_TRUE(sized(Slot::Chest, 4.0));
  // A sturdy but human forearm is none.
  EXPECT_FALSE(sized(Slot::LowerArmR, 1.5));
}

/// tPoseSkeleton() with `hand` moved under the root (Hips), where it stood; the forearm keeps a
/// tip at the wrist when `forearmTip`.
Skeleton handUnderTheRoot(const std::string& hand, bool forearmTip) {
  Skeleton s = tPoseSkeleton();
  std::vector<Transform> models(static_cast<size_t>(s.jointCount()));
  localToModel(s, s.restLocal, models);
  const int h = s.findJoint(hand);
  const int forearm = s.parents[static_cast<size_t>(h)];
  if (forearmTip)
    s.endSiteOffset[static_cast<size_t>(forearm)] = s.restLocal[static_cast<size_t>(h)].translation;
  s.parents[static_cast<size_t>(h)] = 0;
  s.restLocal[static_cast<size_t>(h)] = models[0].inverse() * models[static_cast<size_t>(h)];
  return s;
}

TEST(RigFamilies, AHandParentedOutsideTheArmButAtTheWristIsTheHand) {
  for (const bool tip : {true, false}) {
    const Skeleton s = handUnderTheRoot("LeftHand", tip);
    Result<HumanoidMapReport> report = mapHumanoidReport(s);
    ASSERT_TRUE(report.ok()) << report.error();
    EXPECT_EQ(bone(s, report->map, Slot::HandL), "LeftHand") << (tip ? "forearm with a tip" : "no tip");
    EXPECT_EQ(bone(s, report->map, Slot::HandR), "RightHand");
    EXPECT_EQ(bone(s, report->map, Slot::LowerArmL), "LeftForeArm");
    Result<RagdollAsset> asset = buildRagdoll(s, BuildOptions{});
    ASSERT_TRUE(asset.ok()) << asset.error();
    const int hand = asset->bodyForSlot(Slot::HandL);
    ASSERT_GE(hand, 0);
    // The ragdoll's tree follows the slots: the hand hangs from the forearm body, not the pelvis.
    EXPECT_EQ(asset->bodies[static_cast<size_t>(hand)].parentBody, asset->bodyForSlot(Slot::LowerArmL));
    EXPECT_FALSE(hasErrors(validateRagdoll(*asset, s)));
  }
  // A hand under the root that does not stand at the wrist (a prop's grip at the hip) is not taken.
  Skeleton away = handUnderTheRoot("LeftHand", false);
  away.restLocal[static_cast<size_t>(away.findJoint("LeftHand"))].translation = Vec3{0.25, 0.0, 0.1};
  Result<HumanoidMapReport> report = mapHumanoidReport(away);
  ASSERT_TRUE(report.ok()) << report.error();
  EXPECT_EQ(bone(away, report->map, Slot::HandL), "-");
}

TEST(MapFiles, WrittenMapsReadBackAndErrorsNameTheJsonPath) {
  const Skeleton s = tPoseSkeleton();
  Result<HumanoidMapReport> report = mapHumanoidReport(s);
  ASSERT_TRUE(report.ok());
  const std::string json = humanoidMapJson(s, report->map);
  EXPECT_NE(json.find("\"version\": 1"), std::string::npos) << json;
  Result<HumanoidMap> back = mapHumanoidFromJson(s, json, "map.json");
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back->joint, report->map.joint);
  std::string wrong = json;
  wrong.replace(wrong.find("\"Head\""), 6, "\"Skull\"");
  Result<HumanoidMap> missing = mapHumanoidFromJson(s, wrong, "map.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("map.json: slots.head"), std::string::npos) << missing.error();
  EXPECT_NE(missing.error().find("'Skull'"), std::string::npos) << missing.error();
  Result<HumanoidMap> version = mapHumanoidFromJson(s, R"({"version": 2, "slots": {}})", "map.json");
  ASSERT_FALSE(version.ok());
  EXPECT_NE(version.error().find("version"), std::string::npos);
}

}  // namespace
}  // namespace handoff
