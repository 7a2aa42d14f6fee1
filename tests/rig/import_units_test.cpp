// Issue 20: FBX and COLLADA in metres, Y up, whatever units and armature scales they were written
// with. The FBX files are CMU motion (data/cmu/01_01.bvh) exported by Assimp's own FBX exporter
// under an armature node, in the layouts exporters write (the unit in UnitScaleFactor, in the
// armature's scale, or in both); the COLLADA file is written here in centimetres, Z up.
#include "handoff/import.h"

#include <assimp/scene.h>
#include <gtest/gtest.h>
#include <assimp/Exporter.hpp>
#include <assimp/Importer.hpp>

#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <string>

namespace handoff {
namespace {

const std::string kCmu = std::string(HANDOFF_DATA_DIR) + "/cmu/01_01.bvh";
constexpr double kCmuUnit = 0.0254 / 0.45;  // [m] the ASF unit of the CMU database (data/README.md)

/// 01_01.bvh (10 frames) as ASCII FBX: bone translations and keys in units of `boneUnit` metres,
/// under a node "Armature" scaled by `armatureScale`, with UnitScaleFactor `unitScaleFactor`
/// (centimetres per file unit).
std::string cmuFbx(double boneUnit, double armatureScale, double unitScaleFactor) {
  Assimp::Importer importer;
  if (importer.ReadFile(kCmu, 0) == nullptr) {
    ADD_FAILURE() << importer.GetErrorString();
    return {};
  }
  aiScene* scene = importer.GetOrphanedScene();
  const auto toFile = static_cast<float>(kCmuUnit / boneUnit);
  std::function<void(aiNode*)> scale = [&](aiNode* node) {
    node->mTransformation.a4 *= toFile;
    node->mTransformation.b4 *= toFile;
    node->mTransformation.c4 *= toFile;
    for (unsigned c = 0; c < node->mNumChildren; ++c) scale(node->mChildren[c]);
  };
  scale(scene->mRootNode);
  for (unsigned a = 0; a < scene->mNumAnimations; ++a) {
    aiAnimation* animation = scene->mAnimations[a];
    for (unsigned c = 0; c < animation->mNumChannels; ++c) {
      aiNodeAnim* channel = animation->mChannels[c];
      channel->mNumPositionKeys = std::min(channel->mNumPositionKeys, 10U);
      channel->mNumRotationKeys = std::min(channel->mNumRotationKeys, 10U);
      channel->mNumScalingKeys = std::min(channel->mNumScalingKeys, 10U);
      for (unsigned k = 0; k < channel->mNumPositionKeys; ++k) channel->mPositionKeys[k].mValue *= toFile;
    }
    animation->mDuration = 9.0;
  }
  auto* armature = new aiNode("Armature");
  const auto s = static_cast<float>(armatureScale);
  armature->mTransformation = aiMatrix4x4(aiVector3D(s, s, s), aiQuaternion(), aiVector3D(0.0F, 0.0F, 0.0F));
  armature->addChildren(1, &scene->mRootNode);
  auto* root = new aiNode("RootNode");
  root->addChildren(1, &armature);
  scene->mRootNode = root;
  Assimp::Exporter exporter;
  const aiExportDataBlob* blob = exporter.ExportToBlob(scene, "fbxa");
  delete scene;
  if (blob == nullptr) {
    ADD_FAILURE() << exporter.GetErrorString();
    return {};
  }
  std::string text(static_cast<const char*>(blob->data), blob->size);
  const std::string key = "\"UnitScaleFactor\", \"double\", \"Number\", \"\", ";
  const size_t at = text.find(key);
  EXPECT_NE(at, std::string::npos);
  if (at == std::string::npos) return {};
  const size_t end = text.find('\n', at);
  std::ostringstream factor;
  factor << unitScaleFactor;
  text.replace(at + key.size(), end - at - key.size(), factor.str());
  return text;
}

double trueCmuHip() {
  ImportOptions options;
  options.unitScale = kCmuUnit;
  Result<ImportedAsset> bvh = importFile(kCmu, options);
  EXPECT_TRUE(bvh.ok());
  return bvh.ok() ? bvh->hipHeight : 0.0;
}

TEST(ImportFbxUnits, UnitScaleFactorAndTheArmatureScaleGiveMetres) {
  const double expected = trueCmuHip();
  struct Case {
    const char* layout;
    double boneUnit;  // [m per file unit of the bone translations]
    double armatureScale;
    double unitScaleFactor;  // [cm per file unit]
  };
  for (const Case& c : {Case{"bones in m, armature 100, file in cm (Blender 'All Local')", 1.0, 100.0, 1.0},
                        Case{"bones in m, file in m (Blender 'FBX Units Scale')", 1.0, 1.0, 100.0},
                        Case{"bones in cm, file in cm (Maya, Mixamo)", 0.01, 1.0, 1.0},
                        Case{"bones in cm, armature 0.01, file in m", 0.01, 0.01, 100.0},
                        Case{"bones in inches, file in inches (UnitScaleFactor 2.54)", 0.0254, 1.0, 2.54}}) {
    Result<ImportedAsset> imported =
        importFileData(cmuFbx(c.boneUnit, c.armatureScale, c.unitScaleFactor), "cmu.fbx");
    ASSERT_TRUE(imported.ok()) << c.layout << ": " << imported.error();
    std::printf("%-62s unit %.4g m, hip %.4f m (BVH at its true unit: %.4f m)\n", c.layout,
                imported->unitScale, imported->hipHeight, expected);
    EXPECT_NEAR(imported->hipHeight, expected, 1e-3) << c.layout;
  }
}

TEST(ImportFbxUnits, AnArmatureScaleThatRepeatsTheUnitConversionIsTakenAsIt) {
  // Bones in metres, the armature scaled by 100 (to centimetres) and UnitScaleFactor 100 (metres)
  // as well: read literally the hip stands 92 m high (the issue's 79 m FBX of CMU motion).
  const double expected = trueCmuHip();
  Result<ImportedAsset> imported = importFileData(cmuFbx(1.0, 100.0, 100.0), "cmu_blender.fbx");
  ASSERT_TRUE(imported.ok()) << imported.error();
  std::printf("armature 100 and UnitScaleFactor 100: unit %.4g m, hip %.4f m\n", imported->unitScale,
              imported->hipHeight);
  EXPECT_NEAR(imported->hipHeight, expected, 1e-3);
  EXPECT_DOUBLE_EQ(imported->unitScale, 0.01);
  bool warned = false;
  for (const std::string& w : imported->warnings) {
    warned = warned || (w.find("armature node 'Armature' scales the skeleton by 100") != std::string::npos &&
                        w.find("would stand the hip 91.") != std::string::npos);
  }
  EXPECT_TRUE(warned);
  // The same with a scale that is no unit conversion is read as the file says, and refused.
  Result<ImportedAsset> giant = importFileData(cmuFbx(1.0, 50.0, 100.0), "cmu_giant.fbx");
  ASSERT_FALSE(giant.ok());
  EXPECT_NE(giant.error().find("--unit-scale"), std::string::npos) << giant.error();
}

TEST(ImportFbxUnits, AWrongUnitScaleFactorIsRefusedWithTheFixAndTheFixWorks) {
  // Bones in metres but UnitScaleFactor 1 (centimetres) and no armature scale: a 9 mm hip.
  const std::string fbx = cmuFbx(1.0, 1.0, 1.0);
  Result<ImportedAsset> refused = importFileData(fbx, "cmu_cm.fbx");
  ASSERT_FALSE(refused.ok());
  std::printf("%s\n", refused.error().c_str());
  EXPECT_NE(refused.error().find("the unit the file declares (0.01 m per unit)"), std::string::npos)
      << refused.error();
  const size_t at = refused.error().find("--unit-scale ");
  ASSERT_NE(at, std::string::npos);
  ImportOptions options;
  options.unitScale = std::stod(refused.error().substr(at + 13));
  Result<ImportedAsset> fixed = importFileData(fbx, "cmu_cm.fbx", options);
  ASSERT_TRUE(fixed.ok()) << fixed.error();
  EXPECT_NEAR(fixed->hipHeight, 0.95, 1e-3);
}

/// A COLLADA skeleton in centimetres, Z up: hips 95 cm above the soles, a spine and head, two legs;
/// every joint animated (two keys) so that the joints are the skeleton.
std::string colladaCentimetresZUp() {
  struct Joint {
    const char* name;
    int parent;
    double x, y, z;  // [cm] offset from the parent, Z up
  };
  const Joint joints[] = {
      {"Hips", -1, 0, 0, 95},     {"Spine", 0, 0, 0, 12},     {"Chest", 1, 0, 0, 20},
      {"Neck", 2, 0, 0, 22},      {"Head", 3, 0, 0, 10},      {"LeftUpLeg", 0, 9, 0, -5},
      {"LeftLeg", 5, 0, 0, -45},  {"LeftFoot", 6, 0, 0, -45}, {"RightUpLeg", 0, -9, 0, -5},
      {"RightLeg", 8, 0, 0, -45}, {"RightFoot", 9, 0, 0, -45}};
  const auto matrix = [](const Joint& j, double lift) {
    std::ostringstream m;
    m << "1 0 0 " << j.x << " 0 1 0 " << j.y << " 0 0 1 " << j.z + lift << " 0 0 0 1";
    return m.str();
  };
  std::ostringstream out;
  out << R"(<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit name="centimeter" meter="0.01"/><up_axis>Z_UP</up_axis></asset>
  <library_animations>
)";
  for (const Joint& j : joints) {
    const std::string n = j.name;
    out << "    <animation id=\"" << n << "-anim\">\n"
        << "      <source id=\"" << n << "-in\"><float_array id=\"" << n
        << "-in-a\" count=\"2\">0 1</float_array>"
        << "<technique_common><accessor source=\"#" << n << "-in-a\" count=\"2\" stride=\"1\">"
        << "<param name=\"TIME\" type=\"float\"/></accessor></technique_common></source>\n"
        << "      <source id=\"" << n << "-out\"><float_array id=\"" << n << "-out-a\" count=\"32\">"
        << matrix(j, 0) << " " << matrix(j, j.parent < 0 ? 2 : 0)
        << "</float_array><technique_common><accessor source=\"#" << n
        << "-out-a\" count=\"2\" stride=\"16\"><param name=\"TRANSFORM\" type=\"float4x4\"/></accessor>"
        << "</technique_common></source>\n"
        << "      <sampler id=\"" << n << "-s\"><input semantic=\"INPUT\" source=\"#" << n << "-in\"/>"
        << "<input semantic=\"OUTPUT\" source=\"#" << n << "-out\"/></sampler>\n"
        << "      <channel source=\"#" << n << "-s\" target=\"" << n << "/transform\"/>\n"
        << "    </animation>\n";
  }
  out << "  </library_animations>\n  <library_visual_scenes>\n    <visual_scene id=\"Scene\">\n";
  std::function<void(int, int)> node = [&](int index, int depth) {
    const Joint& j = joints[index];
    const std::string pad(static_cast<size_t>(6 + 2 * depth), ' ');
    out << pad << "<node id=\"" << j.name << "\" name=\"" << j.name << "\" sid=\"" << j.name
        << "\" type=\"JOINT\">\n"
        << pad << "  <matrix sid=\"transform\">" << matrix(j, 0) << "</matrix>\n";
    for (int c = 0; c < static_cast<int>(std::size(joints)); ++c) {
      if (joints[c].parent == index) node(c, depth + 1);
    }
    out << pad << "</node>\n";
  };
  node(0, 0);
  out << "    </visual_scene>\n  </library_visual_scenes>\n"
      << "  <scene><instance_visual_scene url=\"#Scene\"/></scene>\n</COLLADA>\n";
  return out.str();
}

TEST(ImportColladaUnits, CentimetresZUpComeInAsMetresYUp) {
  Result<ImportedAsset> imported = importFileData(colladaCentimetresZUp(), "cm_zup.dae");
  ASSERT_TRUE(imported.ok()) << imported.error();
  const Skeleton& s = imported->skeleton;
  std::vector<Transform> models(static_cast<size_t>(s.jointCount()));
  localToModel(s, s.restLocal, models);
  const Vec3 hips = models[static_cast<size_t>(s.findJoint("Hips"))].translation;
  const Vec3 head = models[static_cast<size_t>(s.findJoint("Head"))].translation;
  const Vec3 foot = models[static_cast<size_t>(s.findJoint("LeftFoot"))].translation;
  const Vec3 left = models[static_cast<size_t>(s.findJoint("LeftUpLeg"))].translation;
  std::printf(
      "COLLADA cm, Z up: unit %.3g, hip height %.4f m, hips (%.3f, %.3f, %.3f), head (%.3f, %.3f, %.3f)\n",
      imported->unitScale, imported->hipHeight, hips.x, hips.y, hips.z, head.x, head.y, head.z);
  EXPECT_NEAR(imported->hipHeight, 0.95, 1e-4);
  EXPECT_NEAR(hips.y - foot.y, 0.95, 1e-4);  // Y up, in metres
  EXPECT_NEAR(head.y - hips.y, 0.64, 1e-4);
  EXPECT_NEAR(head.x - hips.x, 0.0, 1e-6);
  EXPECT_NEAR(head.z - hips.z, 0.0, 1e-6);
  EXPECT_NEAR(left.x - hips.x, 0.09, 1e-6);  // the file's +X stays +X (a turn about X brings Z up to Y)
  ASSERT_EQ(imported->clips.size(), 1U);
  // The root's key lifts the hips 2 cm: 0.02 m along +Y.
  const Clip& clip = imported->clips[0];
  const int root = s.findJoint("Hips");
  const double lift =
      clip.keys[static_cast<size_t>((clip.frameCount - 1) * clip.jointCount + root)].translation.y -
      clip.keys[static_cast<size_t>(root)].translation.y;
  EXPECT_NEAR(lift, 0.02, 1e-6);
}

}  // namespace
}  // namespace handoff
