// Issue 31: valid glTF files the importer refused or read wrong, made here as small GLBs: a VRM
// whose meshes are rigid parts (no skin, no animation) but whose humanBones name every bone, an
// outfit whose skeleton is plain nodes under "mixamorig:Hips", an animation channel whose output
// accessor has no buffer view (all zeros by the specification), and per-node animations sharing
// one timeline (one clip, not one clip per node).
#include "glb_test_util.h"
#include "handoff/asset.h"
#include "handoff/import.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <string>
#include <vector>

namespace handoff {
namespace {
using Json = nlohmann::json;
using asset_test::glb;

struct Bone {
  const char* name;
  int parent;
  double x, y, z;
  const char* vrm;  ///< VRM humanoid role, nullptr: none.
};

/// A T-posed humanoid (hips 1 m high, facing +Z, left at +X) as glTF nodes, with an "Armature"
/// node above it. `prefix` goes before every name.
const std::vector<Bone>& humanoid() {
  static const std::vector<Bone> bones = {
      {"Hips", -1, 0, 1.0, 0, "hips"},
      {"Spine", 0, 0, 0.12, 0, "spine"},
      {"Chest", 1, 0, 0.15, 0, "chest"},
      {"Neck", 2, 0, 0.2, 0, "neck"},
      {"Head", 3, 0, 0.1, 0, "head"},
      {"HeadTop", 4, 0, 0.2, 0, nullptr},
      {"LeftArm", 2, 0.18, 0.12, 0, "leftUpperArm"},
      {"LeftForeArm", 6, 0.28, 0, 0, "leftLowerArm"},
      {"LeftHand", 7, 0.25, 0, 0, "leftHand"},
      {"LeftFingers", 8, 0.08, 0, 0, nullptr},
      {"RightArm", 2, -0.18, 0.12, 0, "rightUpperArm"},
      {"RightForeArm", 10, -0.28, 0, 0, "rightLowerArm"},
      {"RightHand", 11, -0.25, 0, 0, "rightHand"},
      {"RightFingers", 12, -0.08, 0, 0, nullptr},
      {"LeftUpLeg", 0, 0.1, -0.05, 0, "leftUpperLeg"},
      {"LeftLeg", 14, 0, -0.45, 0, "leftLowerLeg"},
      {"LeftFoot", 15, 0, -0.45, 0, "leftFoot"},
      {"LeftToe", 16, 0, -0.05, 0.14, nullptr},
      {"RightUpLeg", 0, -0.1, -0.05, 0, "rightUpperLeg"},
      {"RightLeg", 18, 0, -0.45, 0, "rightLowerLeg"},
      {"RightFoot", 19, 0, -0.45, 0, "rightFoot"},
      {"RightToe", 20, 0, -0.05, 0.14, nullptr},
  };
  return bones;
}

/// Nodes: 0 "Armature" (the scene root), then the humanoid's bones as nodes 1.., names as given
/// by `name(bone index)`.
Json humanoidNodes(const std::function<std::string(size_t)>& name) {
  const std::vector<Bone>& bones = humanoid();
  Json nodes = Json::array();
  nodes.push_back({{"name", "Armature"}, {"children", Json::array({1})}});
  for (size_t i = 0; i < bones.size(); ++i) {
    nodes.push_back({{"name", name(i)}, {"translation", {bones[i].x, bones[i].y, bones[i].z}}});
  }
  for (size_t i = 0; i < bones.size(); ++i) {
    if (bones[i].parent >= 0) nodes[static_cast<size_t>(bones[i].parent) + 1]["children"].push_back(i + 1);
  }
  return nodes;
}

Json sceneDoc(Json nodes) {
  return {{"asset", {{"version", "2.0"}}}, {"scene", 0}, {"scenes", {{{"nodes", {0}}}}}, {"nodes", nodes}};
}

ImportOptions direct() {
  ImportOptions options;
  options.isolateParser = false;
  return options;
}

std::string bytesOf(const std::vector<float>& values) {
  std::string out(values.size() * sizeof(float), '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

TEST(ImportNodes, RigidPartVrmTakesItsSkeletonFromHumanBones) {
  // Node names no rig family uses: only the VRM 1.0 humanBones say which bone is which. No skin,
  // no animation: before issue 31 "no skeleton".
  Json doc = sceneDoc(humanoidNodes([](size_t i) { return "node" + std::to_string(i); }));
  Json bones = Json::object();
  for (size_t i = 0; i < humanoid().size(); ++i) {
    if (humanoid()[i].vrm) bones[humanoid()[i].vrm] = {{"node", i + 1}};
  }
  doc["extensionsUsed"] = {"VRMC_vrm"};
  doc["extensions"]["VRMC_vrm"] = {{"specVersion", "1.0"}, {"humanoid", {{"humanBones", bones}}}};
  Result<ImportedAsset> imported = importFileData(glb(doc, ""), "rigid.vrm", direct());
  ASSERT_TRUE(imported.ok()) << imported.error();
  bool named = false;
  for (const std::string& w : imported->warnings)
    named = named || w.find("humanoid bones name") != std::string::npos;
  EXPECT_TRUE(named);
  EXPECT_NEAR(imported->hipHeight, 1.0, 1e-6);
  MapInputs inputs;
  inputs.fileHumanoid = imported->humanoidBones;
  Result<HumanoidMapReport> report = mapHumanoidReport(imported->skeleton, inputs);
  ASSERT_TRUE(report.ok()) << report.error();
  const Skeleton& s = imported->skeleton;
  EXPECT_EQ(s.jointNames[static_cast<size_t>(report->map[Slot::Pelvis])], "node0");
  EXPECT_EQ(s.jointNames[static_cast<size_t>(report->map[Slot::LowerArmR])], "node11");
  EXPECT_EQ(s.jointNames[static_cast<size_t>(report->map[Slot::UpperLegL])], "node14");
  EXPECT_EQ(report->slots[static_cast<size_t>(Slot::Pelvis)].source, MapSource::FileHumanoid);
}

TEST(ImportNodes, OutfitSkeletonOfPlainNodesUnderHips) {
  // Ready Player Me's outfit assets: the character's mixamorig skeleton as plain nodes, no skin.
  Json doc = sceneDoc(humanoidNodes([](size_t i) { return std::string("mixamorig:") + humanoid()[i].name; }));
  Result<ImportedAsset> imported = importFileData(glb(doc, ""), "outfit.glb", direct());
  ASSERT_TRUE(imported.ok()) << imported.error();
  EXPECT_EQ(imported->skeleton.jointNames.front(), "mixamorig:Hips");
  Result<HumanoidMap> map = mapHumanoid(imported->skeleton);
  ASSERT_TRUE(map.ok()) << map.error();
  EXPECT_EQ(imported->skeleton.jointNames[static_cast<size_t>((*map)[Slot::UpperLegL])],
            "mixamorig:LeftUpLeg");
  // Fewer than kMinNodeSkeleton mesh-less nodes under a hips-named node stay "no skeleton".
  Json few = sceneDoc({{{"name", "Armature"}, {"children", {1}}},
                       {{"name", "Hips"}, {"children", {2}}},
                       {{"name", "Spine"}}});
  EXPECT_FALSE(importFileData(glb(few, ""), "few.glb", direct()).ok());
}

/// The humanoid with one animation per bone (each rotating its bone about X, one sampler, same
/// timeline); the Hips' translation channel's output accessor has no buffer view when
/// `zeroTranslation`.
Json perNodeAnimations(std::string& bin, bool zeroTranslation) {
  Json doc = sceneDoc(humanoidNodes([](size_t i) { return std::string(humanoid()[i].name); }));
  bin = bytesOf({0.0f, 0.5f, 1.0f});  // times
  const std::string rotations = bytesOf({0, 0, 0, 1, 0.0998334f, 0, 0, 0.9950042f, 0, 0, 0, 1});
  bin += rotations;
  doc["buffers"] = {{{"byteLength", bin.size()}}};
  doc["bufferViews"] = {{{"buffer", 0}, {"byteOffset", 0}, {"byteLength", 12}},
                        {{"buffer", 0}, {"byteOffset", 12}, {"byteLength", 48}}};
  doc["accessors"] = {{{"bufferView", 0},
                       {"componentType", 5126},
                       {"count", 3},
                       {"type", "SCALAR"},
                       {"min", {0.0}},
                       {"max", {1.0}}},
                      {{"bufferView", 1}, {"componentType", 5126}, {"count", 3}, {"type", "VEC4"}}};
  doc["animations"] = Json::array();
  for (size_t i = 0; i < humanoid().size(); ++i) {
    doc["animations"].push_back(
        {{"channels", {{{"sampler", 0}, {"target", {{"node", i + 1}, {"path", "rotation"}}}}}},
         {"samplers", {{{"input", 0}, {"output", 1}}}}});
  }
  if (zeroTranslation) {
    doc["accessors"].push_back({{"componentType", 5126}, {"count", 3}, {"type", "VEC3"}});  // no bufferView
    doc["animations"][0]["channels"].push_back(
        {{"sampler", 1}, {"target", {{"node", 1}, {"path", "translation"}}}});
    doc["animations"][0]["samplers"].push_back({{"input", 0}, {"output", 2}});
  }
  return doc;
}

TEST(ImportNodes, PerNodeAnimationsOnOneTimelineAreOneClip) {
  std::string bin;
  const Json doc = perNodeAnimations(bin, false);
  Result<ImportedAsset> imported = importFileData(glb(doc, bin), "per_node.glb", direct());
  ASSERT_TRUE(imported.ok()) << imported.error();
  ASSERT_EQ(imported->clips.size(), 1u);  // was 22 one-bone clips
  const Clip& clip = imported->clips[0];
  EXPECT_NEAR(clip.duration(), 1.0, 1e-9);
  // Every bone turns by 0.2 rad about X at 0.5 s: the merged clip drives all of them.
  std::vector<Transform> locals(static_cast<size_t>(clip.jointCount));
  clip.sample(0.5, WrapMode::Clamp, locals);
  for (const char* bone : {"Hips", "LeftForeArm", "RightFoot"}) {
    const int j = imported->skeleton.findJoint(bone);
    ASSERT_GE(j, 0) << bone;
    EXPECT_NEAR(glm::angle(locals[static_cast<size_t>(j)].rotation), 0.2, 1e-4) << bone;
  }
}

TEST(ImportNodes, AccessorWithoutBufferViewReadsAsZeros) {
  std::string bin;
  const Json doc = perNodeAnimations(bin, true);
  Result<ImportedAsset> imported = importFileData(glb(doc, bin), "zeros.glb", direct());
  ASSERT_TRUE(imported.ok()) << imported.error();
  ASSERT_FALSE(imported->clips.empty());
  const int hips = imported->skeleton.findJoint("Hips");
  ASSERT_GE(hips, 0);
  std::vector<Transform> locals(static_cast<size_t>(imported->clips[0].jointCount));
  imported->clips[0].sample(0.5, WrapMode::Clamp, locals);
  // The zeros put the hips at the armature's origin (their rest translation is 1 m up).
  EXPECT_NEAR(glm::length(locals[static_cast<size_t>(hips)].translation), 0.0, 1e-9);
}

}  // namespace
}  // namespace handoff
