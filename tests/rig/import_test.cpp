// Import of real files: BVH (CMU, DeepMimic), glTF (Mesh2Motion, RobotExpressive), FBX and
// COLLADA (assimp test models). Data comes from the project's data/ folder (HANDOFF_DATA_DIR).
#include "handoff/import.h"
#include "support/files.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace handoff {
namespace {

const std::string kData = HANDOFF_DATA_DIR;

const ImportedAsset& load(const std::string& relativePath) {
  static std::map<std::string, std::unique_ptr<ImportedAsset>> cache;
  auto& slot = cache[relativePath];
  if (!slot) {
    Result<ImportedAsset> result = importFile(kData + "/" + relativePath);
    if (!result) {
      ADD_FAILURE() << result.error();
      slot = std::make_unique<ImportedAsset>();
    } else {
      slot = std::make_unique<ImportedAsset>(std::move(result).value());
    }
  }
  return *slot;
}

std::vector<Transform> modelPose(const Skeleton& skeleton, std::span<const Transform> locals) {
  std::vector<Transform> models(static_cast<size_t>(skeleton.jointCount()));
  localToModel(skeleton, locals, models);
  return models;
}

double modelY(const ImportedAsset& asset, std::span<const Transform> locals, const std::string& joint) {
  const int index = asset.skeleton.findJoint(joint);
  EXPECT_GE(index, 0) << joint;
  if (index < 0) return 0.0;
  return modelPose(asset.skeleton, locals)[static_cast<size_t>(index)].translation.y;
}

bool allKeysHemisphereContinuous(const Clip& clip) {
  for (int f = 1; f < clip.frameCount; ++f) {
    for (int j = 0; j < clip.jointCount; ++j) {
      if (glm::dot(clip.frame(f)[static_cast<size_t>(j)].rotation,
                   clip.frame(f - 1)[static_cast<size_t>(j)].rotation) < 0.0) {
        return false;
      }
    }
  }
  return true;
}

// ------------------------------------------------------------------------------------------------
// An independent BVH reader and forward kinematics for the tests: its own tokeniser, rotation
// matrices written out by hand, composed per joint in the order of its CHANNELS line.

struct RefJoint {
  std::string name;
  int parent = -1;
  glm::dvec3 offset{0.0};
  std::vector<std::string> channels;
  bool hasEnd = false;
  glm::dvec3 end{0.0};
};

struct RefBvh {
  std::vector<RefJoint> joints;
  int frames = 0;
  double frameTime = 0.0;
  std::vector<std::vector<double>> motion;  // [frame][value]
};

RefBvh parseReference(const std::string& text) {
  RefBvh bvh;
  std::istringstream in(text);
  std::string token;
  std::vector<int> open;  // joints whose '{' is open
  bool inEndSite = false;
  bool pendingJoint = false;
  while (in >> token) {
    if (token == "ROOT" || token == "JOINT") {
      RefJoint joint;
      in >> joint.name;
      joint.parent = open.empty() ? -1 : open.back();
      bvh.joints.push_back(joint);
      pendingJoint = true;
    } else if (token == "End") {
      in >> token;  // Site
      inEndSite = true;
    } else if (token == "{") {
      if (pendingJoint) open.push_back(static_cast<int>(bvh.joints.size()) - 1);
      pendingJoint = false;
    } else if (token == "}") {
      if (inEndSite) {
        inEndSite = false;
      } else {
        open.pop_back();
      }
    } else if (token == "OFFSET") {
      glm::dvec3 v;
      in >> v.x >> v.y >> v.z;
      RefJoint& joint = bvh.joints[static_cast<size_t>(open.back())];
      if (inEndSite) {
        joint.hasEnd = true;
        joint.end = v;
      } else {
        joint.offset = v;
      }
    } else if (token == "CHANNELS") {
      int n = 0;
      in >> n;
      for (int i = 0; i < n; ++i) {
        in >> token;
        bvh.joints[static_cast<size_t>(open.back())].channels.push_back(token);
      }
    } else if (token == "MOTION") {
      break;
    }
  }
  in >> token >> bvh.frames >> token >> token >> bvh.frameTime;
  size_t perFrame = 0;
  for (const RefJoint& joint : bvh.joints) perFrame += joint.channels.size();
  bvh.motion.assign(static_cast<size_t>(bvh.frames), std::vector<double>(perFrame));
  for (auto& frame : bvh.motion) {
    for (double& value : frame) in >> value;
  }
  return bvh;
}

glm::dmat3 axisRotation(char axis, double degrees) {
  const double a = degrees * kPi / 180.0;
  const double c = std::cos(a);
  const double s = std::sin(a);
  // glm matrices are built from columns.
  switch (axis) {
    case 'X':
      return glm::dmat3(glm::dvec3(1, 0, 0), glm::dvec3(0, c, s), glm::dvec3(0, -s, c));
    case 'Y':
      return glm::dmat3(glm::dvec3(c, 0, -s), glm::dvec3(0, 1, 0), glm::dvec3(s, 0, c));
    default:
      return glm::dmat3(glm::dvec3(c, s, 0), glm::dvec3(-s, c, 0), glm::dvec3(0, 0, 1));
  }
}

struct RefPose {
  std::vector<glm::dvec3> joint;  // model-space positions [file units]
  std::vector<glm::dvec3> end;    // end site positions (joint position when none)
};

RefPose referencePose(const RefBvh& bvh, int frame) {
  RefPose pose;
  std::vector<glm::dmat3> rotation(bvh.joints.size());
  size_t value = 0;
  for (size_t j = 0; j < bvh.joints.size(); ++j) {
    const RefJoint& joint = bvh.joints[j];
    glm::dvec3 translation = joint.offset;
    glm::dmat3 local(1.0);
    for (const std::string& channel : joint.channels) {
      const double v = bvh.motion[static_cast<size_t>(frame)][value++];
      const char axis = channel[0];
      if (channel.find("position") != std::string::npos) {
        translation[axis - 'X'] = v;
      } else {
        local = local * axisRotation(axis, v);  // intrinsic: listed order, left to right
      }
    }
    if (joint.parent < 0) {
      rotation[j] = local;
      pose.joint.push_back(translation);
    } else {
      const size_t p = static_cast<size_t>(joint.parent);
      rotation[j] = rotation[p] * local;
      pose.joint.push_back(pose.joint[p] + rotation[p] * translation);
    }
    pose.end.push_back(pose.joint.back() + rotation[j] * (joint.hasEnd ? joint.end : glm::dvec3(0.0)));
  }
  return pose;
}

/// Compares every joint and end site position of the library with the reference, in file units.
void expectMatchesReference(const std::string& relativePath, const std::vector<std::string>& mustHaveJoints) {
  SCOPED_TRACE(relativePath);
  const ImportedAsset& asset = load(relativePath);
  const RefBvh bvh = parseReference(test::readFile(kData + "/" + relativePath));
  ASSERT_EQ(asset.skeleton.jointCount(), static_cast<int>(bvh.joints.size()));
  ASSERT_EQ(asset.clips.size(), 1u);
  const Clip& clip = asset.clips[0];
  ASSERT_EQ(clip.frameCount, bvh.frames);
  for (const std::string& name : mustHaveJoints) EXPECT_GE(asset.skeleton.findJoint(name), 0) << name;

  const double unit = asset.unitScale;  // library positions are metres; the reference file units
  constexpr double kTolerance = 1e-5;   // [file units]
  const int last = clip.frameCount - 1;
  for (const int frame : {0, 1, last / 3, last / 2, last - 1, last}) {
    const RefPose reference = referencePose(bvh, frame);
    const std::vector<Transform> models = modelPose(asset.skeleton, clip.frame(frame));
    double worst = 0.0;
    for (size_t j = 0; j < bvh.joints.size(); ++j) {
      ASSERT_EQ(asset.skeleton.jointNames[j], bvh.joints[j].name);
      const glm::dvec3 position = models[j].translation / unit;
      const glm::dvec3 end = models[j].transformPoint(asset.skeleton.endSiteOffset[j]) / unit;
      for (int axis = 0; axis < 3; ++axis) {
        EXPECT_NEAR(position[axis], reference.joint[j][axis], kTolerance)
            << bvh.joints[j].name << " frame " << frame << " axis " << axis;
        EXPECT_NEAR(end[axis], reference.end[j][axis], kTolerance)
            << bvh.joints[j].name << " end site, frame " << frame << " axis " << axis;
        worst = std::max({worst, std::abs(position[axis] - reference.joint[j][axis]),
                          std::abs(end[axis] - reference.end[j][axis])});
      }
    }
    std::ostringstream text;
    text << worst;
    ::testing::Test::RecordProperty("worst_error_frame_" + std::to_string(frame), text.str());
  }
}

// ------------------------------------------------------------------------------------------------
// BVH

TEST(ImportBvh, Cmu0101CountsRateAndUnits) {
  const ImportedAsset& asset = load("cmu/01_01.bvh");
  EXPECT_EQ(asset.skeleton.jointCount(), 31);
  EXPECT_EQ(asset.skeleton.jointNames[0], "Hips");
  ASSERT_EQ(asset.clips.size(), 1u);
  EXPECT_EQ(asset.clips[0].name, "01_01");
  EXPECT_EQ(asset.clips[0].frameCount, 2752);
  EXPECT_EQ(asset.clips[0].frameRate, 120.0);  // "Frame Time: .0083333" snapped to 120 Hz
  EXPECT_NEAR(asset.clips[0].duration(), 2751.0 / 120.0, 1e-12);
  // The hip stands 16.29 file units high. CMU's data is in ASF units of 1/0.45 inch (0.05644 m),
  // a candidate: the hip comes out at 0.92 m (inches would give a 0.41 m child-sized hip).
  EXPECT_TRUE(asset.unitScaleDetected);
  EXPECT_EQ(asset.unitScale, 0.0254 / 0.45);
  EXPECT_NEAR(asset.hipHeight, 16.29 * 0.0254 / 0.45, 0.01);
  // End Sites are not joints.
  for (const std::string& name : asset.skeleton.jointNames)
    EXPECT_EQ(name.find("EndSite"), std::string::npos);
  EXPECT_TRUE(allKeysHemisphereContinuous(asset.clips[0]));
}

TEST(ImportBvh, BoxingToesCountsRateAndUnits) {
  const ImportedAsset& asset = load("cmu/Boxing_Toes.bvh");
  EXPECT_EQ(asset.skeleton.jointCount(), 21);
  ASSERT_EQ(asset.clips.size(), 1u);
  EXPECT_EQ(asset.clips[0].frameCount, 3069);
  EXPECT_EQ(asset.clips[0].frameRate, 100.0);
  EXPECT_TRUE(asset.unitScaleDetected);
  EXPECT_EQ(asset.unitScale, 0.01);  // centimetres
  EXPECT_NEAR(asset.hipHeight, 0.92, 0.02);
  // The file holds one frame line more than "Frames: 3069" declares: ignored, with a warning.
  const bool warned = std::any_of(asset.warnings.begin(), asset.warnings.end(), [](const std::string& w) {
    return w.find("line 3199") != std::string::npos && w.find("ignored") != std::string::npos;
  });
  EXPECT_TRUE(warned);
  EXPECT_TRUE(allKeysHemisphereContinuous(asset.clips[0]));
}

struct DeepMimicClip {
  const char* file;
  int frames;
  double rate;  // [Hz]
};

class ImportDeepMimic : public ::testing::TestWithParam<DeepMimicClip> {};

TEST_P(ImportDeepMimic, CountsRateAndUnits) {
  const DeepMimicClip& expected = GetParam();
  const ImportedAsset& asset = load(std::string("deepmimic/") + expected.file);
  EXPECT_EQ(asset.skeleton.jointCount(), 13);
  EXPECT_EQ(asset.skeleton.jointNames[0], "root");
  ASSERT_EQ(asset.clips.size(), 1u);
  EXPECT_EQ(asset.clips[0].frameCount, expected.frames);
  EXPECT_EQ(asset.clips[0].frameRate, expected.rate);
  EXPECT_TRUE(asset.unitScaleDetected);
  EXPECT_EQ(asset.unitScale, 1.0);  // metres
  EXPECT_NEAR(asset.hipHeight, 0.8814, 1e-3);
  // The neck's End Site is the head, 0.2775 m above it.
  const int neck = asset.skeleton.findJoint("neck");
  ASSERT_GE(neck, 0);
  EXPECT_NEAR(asset.skeleton.endSiteOffset[static_cast<size_t>(neck)].y, 0.2775, 1e-4);
  EXPECT_TRUE(allKeysHemisphereContinuous(asset.clips[0]));
}

INSTANTIATE_TEST_SUITE_P(AllClips, ImportDeepMimic,
                         ::testing::Values(DeepMimicClip{"humanoid3d_run.bvh", 25, 30.0},
                                           DeepMimicClip{"humanoid3d_jump.bvh", 107, 60.0},
                                           DeepMimicClip{"humanoid3d_spin.bvh", 107, 24.0},
                                           DeepMimicClip{"humanoid3d_dance_spin.bvh", 122, 120.0},
                                           DeepMimicClip{"humanoid3d_backflip.bvh", 29, 16.0},
                                           DeepMimicClip{"humanoid3d_getup_faceup.bvh", 227, 60.0},
                                           DeepMimicClip{"humanoid3d_getup_facedown.bvh", 183, 60.0}));

TEST(ImportBvh, Cmu0101PositionsMatchIndependentForwardKinematics) {
  // 01_01: channels "Zrotation Yrotation Xrotation" on every joint.
  expectMatchesReference("cmu/01_01.bvh",
                         {"LeftHand", "RThumb", "LFingers", "LeftToeBase", "RightFoot", "Head"});
}

TEST(ImportBvh, BoxingToesPositionsMatchIndependentForwardKinematics) {
  // Boxing_Toes: channels "Zrotation Xrotation Yrotation" (a different order), centimetres.
  expectMatchesReference("cmu/Boxing_Toes.bvh", {"LeftWrist", "RightWrist", "LeftToes", "RightToes", "Head"});
}

TEST(ImportBvh, DeepMimicPositionsMatchIndependentForwardKinematics) {
  expectMatchesReference("deepmimic/humanoid3d_backflip.bvh", {"right_elbow", "left_ankle", "neck"});
  expectMatchesReference("deepmimic/humanoid3d_getup_faceup.bvh", {"right_elbow", "left_ankle", "neck"});
}

TEST(ImportBvh, TextAndFileGiveTheSameAsset) {
  const std::string path = kData + "/deepmimic/humanoid3d_run.bvh";
  Result<ImportedAsset> fromText = importBvhText(test::readFile(path), path);
  ASSERT_TRUE(fromText) << fromText.error();
  const ImportedAsset& fromFile = load("deepmimic/humanoid3d_run.bvh");
  EXPECT_EQ(fromText->skeleton.jointNames, fromFile.skeleton.jointNames);
  ASSERT_EQ(fromText->clips.size(), 1u);
  ASSERT_EQ(fromText->clips[0].keys.size(), fromFile.clips[0].keys.size());
  for (size_t k = 0; k < fromFile.clips[0].keys.size(); ++k) {
    EXPECT_EQ(fromText->clips[0].keys[k].translation, fromFile.clips[0].keys[k].translation);
    EXPECT_EQ(fromText->clips[0].keys[k].rotation, fromFile.clips[0].keys[k].rotation);
  }
}

TEST(ImportBvh, ExplicitUnitScaleIsAppliedAsGiven) {
  ImportOptions options;
  options.unitScale = 0.0254;  // inches, overriding the detected CMU unit
  Result<ImportedAsset> asset = importFile(kData + "/cmu/01_01.bvh", options);
  ASSERT_TRUE(asset) << asset.error();
  EXPECT_FALSE(asset->unitScaleDetected);
  EXPECT_EQ(asset->unitScale, 0.0254);
  EXPECT_NEAR(asset->hipHeight, 0.41, 0.01);
  const ImportedAsset& detected = load("cmu/01_01.bvh");
  const Vec3 a = asset->clips[0].frame(100)[0].translation;
  const Vec3 b = detected.clips[0].frame(100)[0].translation;
  EXPECT_NEAR(a.y / 0.0254, b.y / (0.0254 / 0.45), 1e-9);
}

// A leg of `leg` file units under the pelvis: the detected unit makes the hip 0.9 m high.
std::string legBvh(double leg, bool lyingInRestPose = false) {
  std::ostringstream text;
  text << "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n"
       << "  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation\n"
       << "  JOINT Leg\n  {\n"
       << (lyingInRestPose ? "    OFFSET 0 0 " + std::to_string(-leg / 2)
                           : "    OFFSET 0 " + std::to_string(-leg / 2) + " 0")
       << "\n    CHANNELS 3 Zrotation Yrotation Xrotation\n    End Site\n    {\n"
       << (lyingInRestPose ? "      OFFSET 0 0 " + std::to_string(-leg / 2)
                           : "      OFFSET 0 " + std::to_string(-leg / 2) + " 0")
       << "\n    }\n  }\n}\nMOTION\nFrames: 2\nFrame Time: 0.0333333\n";
  // Lying: the first frame turns the root -90 degrees about X, standing the leg up (-Z -> -Y).
  const char* rotation = lyingInRestPose ? " 0 0 -90" : " 0 0 0";
  for (int f = 0; f < 2; ++f) text << "0 " << leg << " 0" << rotation << " 0 0 0\n";
  return text.str();
}

TEST(ImportBvh, DetectsEachCandidateUnitFromTheHipHeight) {
  const std::vector<std::pair<double, double>> legAndUnit{
      {0.9, 1.0}, {90.0, 0.01},   {0.9 / 0.0254, 0.0254},
      {9.0, 0.1}, {900.0, 0.001}, {0.9 * 0.45 / 0.0254, 0.0254 / 0.45}};
  for (const auto& [leg, unit] : legAndUnit) {
    Result<ImportedAsset> asset = importBvhText(legBvh(leg), "leg.bvh");
    ASSERT_TRUE(asset) << asset.error();
    EXPECT_TRUE(asset->unitScaleDetected);
    EXPECT_EQ(asset->unitScale, unit) << "leg " << leg;
    EXPECT_NEAR(asset->hipHeight, 0.9, 1e-6) << "leg " << leg;
    EXPECT_EQ(asset->clips[0].frameRate, 30.0);
  }
}

TEST(ImportBvh, DegenerateRestPoseDetectsUnitsFromTheFirstFrame) {
  // All offsets lie in the ground plane: the rest pose has no hip height, the first frame does.
  Result<ImportedAsset> asset = importBvhText(legBvh(90.0, true), "lying.bvh");
  ASSERT_TRUE(asset) << asset.error();
  EXPECT_EQ(asset->unitScale, 0.01);
  EXPECT_NEAR(asset->hipHeight, 0.9, 1e-6);
  const bool warned = std::any_of(asset->warnings.begin(), asset->warnings.end(), [](const std::string& w) {
    return w.find("first frame") != std::string::npos;
  });
  EXPECT_TRUE(warned);
}

TEST(ImportBvh, RotationOrderFollowsEachChannelsLine) {
  // One joint, two frames rotating 90 degrees about Z then X in the two listed orders: the
  // intrinsic composition differs, and the end site lands where the listed order puts it.
  for (const std::string order : {"Zrotation Xrotation", "Xrotation Zrotation"}) {
    const std::string text =
        "HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n CHANNELS 2 " + order +
        "\n End Site\n {\n  OFFSET 0 1 0\n }\n}\nMOTION\nFrames: 1\nFrame Time: 0.1\n90 90\n";
    Result<ImportedAsset> asset = importBvhText(text, "order.bvh");
    ASSERT_TRUE(asset) << asset.error();
    const Transform& key = asset->clips[0].frame(0)[0];
    const Vec3 tip = key.transformPoint(asset->skeleton.endSiteOffset[0] / asset->unitScale);
    // Rz(90) * Rx(90) * (0,1,0) = Rz(90) * (0,0,1) = (0,0,1); Rx(90) * Rz(90) * (0,1,0) = Rx(90) * (-1,0,0).
    const Vec3 expected = order[0] == 'Z' ? Vec3{0, 0, 1} : Vec3{-1, 0, 0};
    EXPECT_NEAR(glm::length(tip - expected), 0.0, 1e-12) << order;
  }
}

// ------------------------------------------------------------------------------------------------
// glTF

TEST(ImportGltf, Mesh2MotionSkeletonAndClips) {
  const ImportedAsset& asset = load("mesh2motion/human-base-animations.glb");
  EXPECT_EQ(asset.skeleton.jointCount(), 53);
  EXPECT_EQ(asset.skeleton.jointNames[0], "root");
  for (const char* name : {"DEF-hips", "DEF-head", "DEF-hand.L", "DEF-hand.R", "DEF-foot.L", "DEF-toe.R"}) {
    EXPECT_GE(asset.skeleton.findJoint(name), 0) << name;
  }
  EXPECT_EQ(asset.unitScale, 1.0);
  EXPECT_NEAR(asset.hipHeight, 0.917, 0.01);
  ASSERT_EQ(asset.clips.size(), 44u);

  // Durations as Assimp reports them (glTF seconds as float milliseconds at 1000 ticks/s).
  const std::map<std::string, double> durations{{"Death01", 2.375},
                                                {"Jog_Fwd_Loop", 0.916666687},
                                                {"Sprint_Loop", 0.666666687},
                                                {"Jump_Start", 1.33333337},
                                                {"Jump_Loop", 2.5},
                                                {"Jump_Land", 1.25},
                                                {"Roll", 1.45833337},
                                                {"Walk_Loop", 1.33333337},
                                                {"Hit_Chest", 0.333333344},
                                                {"Hit_Head", 0.416666656},
                                                {"T-Pose", 0.5},
                                                {"Crouch_Idle_Loop", 2.91666675}};
  std::map<std::string, const Clip*> byName;
  for (const Clip& clip : asset.clips) byName[clip.name] = &clip;
  for (const auto& [name, duration] : durations) {
    ASSERT_TRUE(byName.count(name)) << name;
    const Clip& clip = *byName[name];
    EXPECT_NEAR(clip.duration(), duration, 1e-6) << name;
  }
  for (const Clip& clip : asset.clips) {
    SCOPED_TRACE(clip.name);
    // Resampled at 60 Hz with the rate adjusted so that the last frame falls on the duration:
    // frameCount = ceil(duration * 60) + 1, where a float duration such as Hit_Chest's
    // 0.333333344 s (20.0000006 frames) counts as 20.
    const double duration = clip.duration();
    EXPECT_EQ(clip.frameCount, static_cast<int>(std::ceil(duration * 60.0 - 1e-4)) + 1);
    EXPECT_NEAR(clip.frameRate * duration, clip.frameCount - 1, 1e-9);
    EXPECT_GE(clip.frameRate, 60.0 - 1e-4 / duration);
    EXPECT_LT(clip.frameRate, 60.0 + 1.0 / duration);
    EXPECT_TRUE(allKeysHemisphereContinuous(clip));
    EXPECT_TRUE(clip.validate(asset.skeleton).ok());
  }
  const Clip& death = *byName["Death01"];
  EXPECT_EQ(death.frameCount, 144);  // ceil(2.375 * 60) + 1
  EXPECT_NEAR(death.frameRate, 143.0 / 2.375, 1e-9);
  // Death01 ends lying on the ground: the head drops from standing height to near the floor.
  EXPECT_GT(modelY(asset, death.frame(0), "DEF-head"), 1.3);
  EXPECT_LT(modelY(asset, death.frame(death.frameCount - 1), "DEF-head"), 0.4);
}

TEST(ImportGltf, ResampleRateOption) {
  ImportOptions options;
  options.resampleRate = 30.0;
  Result<ImportedAsset> asset = importFile(kData + "/mesh2motion/human-base-animations.glb", options);
  ASSERT_TRUE(asset) << asset.error();
  const auto death = std::find_if(asset->clips.begin(), asset->clips.end(),
                                  [](const Clip& clip) { return clip.name == "Death01"; });
  ASSERT_NE(death, asset->clips.end());
  EXPECT_EQ(death->frameCount, 73);  // ceil(2.375 * 30) + 1
  EXPECT_NEAR(death->duration(), 2.375, 1e-12);
  // Frames at the same time agree with the 60 Hz import (every other frame).
  const ImportedAsset& at60 = load("mesh2motion/human-base-animations.glb");
  const auto death60 = std::find_if(at60.clips.begin(), at60.clips.end(),
                                    [](const Clip& clip) { return clip.name == "Death01"; });
  ASSERT_NE(death60, at60.clips.end());
  // Frame 36 at 72/2.375 Hz and frame 71 at 143/2.375 Hz are not the same time; the last ones are.
  for (int j = 0; j < death->jointCount; ++j) {
    const Transform& a = death->frame(72)[static_cast<size_t>(j)];
    const Transform& b = death60->frame(143)[static_cast<size_t>(j)];
    EXPECT_NEAR(glm::length(a.translation - b.translation), 0.0, 1e-12);
    EXPECT_NEAR(angleBetween(a.rotation, b.rotation), 0.0, 1e-9);
  }
}

TEST(ImportGltf, Mesh2MotionStandsUpAndHasASkinnedMesh) {
  const ImportedAsset& asset = load("mesh2motion/human-base-animations.glb");
  const std::span<const Transform> rest = asset.skeleton.restLocal;
  EXPECT_GT(modelY(asset, rest, "DEF-head"), modelY(asset, rest, "DEF-hips") + 0.4);
  EXPECT_GT(modelY(asset, rest, "DEF-hips"), modelY(asset, rest, "DEF-foot.L") + 0.6);

  ASSERT_EQ(asset.meshes.size(), 3u);  // one mesh of three primitives
  double lowest = 1e9;
  double highest = -1e9;
  for (const SkinnedMesh& mesh : asset.meshes) {
    SCOPED_TRACE(mesh.name);
    const size_t n = mesh.positions.size();
    ASSERT_GT(n, 0u);
    ASSERT_EQ(mesh.normals.size(), n);
    ASSERT_EQ(mesh.jointIndices.size(), 4 * n);
    ASSERT_EQ(mesh.jointWeights.size(), 4 * n);
    ASSERT_EQ(mesh.inverseBind.size(), 53u);
    ASSERT_EQ(mesh.indices.size() % 3, 0u);
    for (const std::uint32_t index : mesh.indices) ASSERT_LT(index, n);
    for (size_t v = 0; v < n; ++v) {
      float total = 0.0F;
      for (size_t i = 0; i < 4; ++i) {
        ASSERT_LT(mesh.jointIndices[4 * v + i], 53);
        total += mesh.jointWeights[4 * v + i];
      }
      ASSERT_NEAR(total, 1.0F, 1e-5F);
      ASSERT_NEAR(glm::length(mesh.normals[v]), 1.0, 1e-9);
      lowest = std::min(lowest, mesh.positions[v].y);
      highest = std::max(highest, mesh.positions[v].y);
    }
  }
  // A human of about 1.8 m standing on the ground.
  EXPECT_NEAR(lowest, 0.0, 0.05);
  EXPECT_NEAR(highest, 1.8, 0.15);
}

TEST(ImportGltf, RobotExpressiveMergesSkinsAndBakesTheArmature) {
  const ImportedAsset& asset = load("robot-expressive/RobotExpressive.glb");
  // The two skins list the same 43 joints: one skeleton, rooted at the skins' common root "Bone".
  EXPECT_EQ(asset.skeleton.jointCount(), 43);
  EXPECT_EQ(asset.skeleton.jointNames[0], "Bone");
  EXPECT_EQ(asset.skeleton.parents[0], kNoParent);
  // Joint and mesh nodes share names ("Head" the joint has a mesh child "Head"); joints win.
  for (const char* name : {"Hips", "Torso", "Head", "Foot.L", "LowerLeg.R", "Middle2.L", "PoleTarget.R"}) {
    EXPECT_GE(asset.skeleton.findJoint(name), 0) << name;
  }
  EXPECT_EQ(asset.unitScale, 1.0);
  // The armature node (scale 100, -90 degrees about X) is baked into the root joint: "Bone"
  // itself turns +90 degrees about X, so the root's rest rotation is the identity, and its
  // translation (-3.2e-5, 0.00195, -5.9e-5) becomes 100 x (x, z, -y).
  const Transform& root = asset.skeleton.restLocal[0];
  EXPECT_NEAR(angleBetween(root.rotation, Quat{1, 0, 0, 0}), 0.0, 1e-5);
  EXPECT_NEAR(root.translation.x, -0.0031955, 1e-6);
  EXPECT_NEAR(root.translation.y, -0.0058852, 1e-6);
  EXPECT_NEAR(root.translation.z, -0.1950481, 1e-6);
  // The robot stands up along +Y: head above the body above the feet, in the rest pose and in
  // every frame of its idle and walk.
  const std::span<const Transform> rest = asset.skeleton.restLocal;
  EXPECT_GT(modelY(asset, rest, "Head"), modelY(asset, rest, "Body") + 1.0);
  EXPECT_GT(modelY(asset, rest, "Body"), modelY(asset, rest, "Foot.L") + 1.0);
  for (const Clip& clip : asset.clips) {
    if (clip.name != "Idle" && clip.name != "Walking") continue;
    for (int f = 0; f < clip.frameCount; ++f) {
      ASSERT_GT(modelY(asset, clip.frame(f), "Head"), modelY(asset, clip.frame(f), "Body") + 1.0)
          << clip.name << f;
    }
  }
  // The robot is about 4.4 m tall in its own units (glTF metres; three.js frames it with a camera
  // 10 m away). Its pelvis is "Body", the parent of both legs, 1.38 m above the feet: the
  // skeleton's first joint with three children is the floor-level control root "Bone" (parent of
  // the body, the feet and their IK pole targets), which the hip height measure skips.
  EXPECT_GT(asset.hipHeight, 0.5);
  EXPECT_LT(asset.hipHeight, 1.5);
  EXPECT_NEAR(asset.hipHeight, 1.378, 0.01);
}

TEST(ImportGltf, RobotExpressiveClipsAndUnanimatedJoints) {
  const ImportedAsset& asset = load("robot-expressive/RobotExpressive.glb");
  std::vector<std::string> names;
  for (const Clip& clip : asset.clips) names.push_back(clip.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"Dance", "Death", "Idle", "Jump", "No", "Punch", "Running", "Sitting",
                                      "Standing", "ThumbsUp", "Walking", "WalkJump", "Wave", "Yes"}));
  for (const Clip& clip : asset.clips) {
    EXPECT_TRUE(clip.validate(asset.skeleton).ok()) << clip.name;
    EXPECT_TRUE(allKeysHemisphereContinuous(clip)) << clip.name;
  }
  // "Idle" animates 7 joints: every other joint keeps its rest local transform in every frame.
  const Clip& idle = asset.clips[2];
  int restingJoints = 0;
  for (int j = 0; j < idle.jointCount; ++j) {
    bool resting = true;
    for (int f = 0; f < idle.frameCount && resting; ++f) {
      const Transform& key = idle.frame(f)[static_cast<size_t>(j)];
      const Transform& rest = asset.skeleton.restLocal[static_cast<size_t>(j)];
      resting = glm::length(key.translation - rest.translation) < 1e-9 &&
                angleBetween(key.rotation, rest.rotation) < 1e-9;
    }
    restingJoints += resting ? 1 : 0;
  }
  EXPECT_GE(restingJoints, 43 - 7);
  // Death ends lying down.
  const Clip& death = asset.clips[1];
  EXPECT_LT(modelY(asset, death.frame(death.frameCount - 1), "Head"),
            0.5 * modelY(asset, death.frame(0), "Head"));
}

TEST(ImportGltf, RobotExpressiveMeshes) {
  const ImportedAsset& asset = load("robot-expressive/RobotExpressive.glb");
  // 4 skinned primitives (the hands) and 15 rigid parts bound to their parent joint.
  ASSERT_EQ(asset.meshes.size(), 19u);
  double lowest = 1e9;
  double highest = -1e9;
  for (const SkinnedMesh& mesh : asset.meshes) {
    ASSERT_EQ(mesh.inverseBind.size(), 43u);
    for (size_t v = 0; v < mesh.positions.size(); ++v) {
      lowest = std::min(lowest, mesh.positions[v].y);
      highest = std::max(highest, mesh.positions[v].y);
    }
  }
  EXPECT_NEAR(lowest, 0.0, 0.05);
  EXPECT_NEAR(highest, 4.44, 0.05);
}

// ------------------------------------------------------------------------------------------------
// FBX and COLLADA (assimp's test models, BSD-3-clause, copied to data/assimp).

TEST(ImportFbx, HuesitosSkeletalAnimation) {
  const ImportedAsset& asset = load("assimp/huesitos.fbx");
  // Nine bones under an animated "Armature" node (scale 100, -90 degrees about X).
  EXPECT_EQ(asset.skeleton.jointCount(), 9);
  EXPECT_EQ(asset.skeleton.jointNames[0], "Bone");
  for (const char* name : {"Bone.001", "Bone.004", "Bone.006", "Bone.008"}) {
    EXPECT_GE(asset.skeleton.findJoint(name), 0) << name;
  }
  // FBX UnitScaleFactor 1: centimetres.
  EXPECT_TRUE(asset.unitScaleDetected);
  EXPECT_EQ(asset.unitScale, 0.01);
  ASSERT_EQ(asset.clips.size(), 1u);
  const Clip& clip = asset.clips[0];
  EXPECT_EQ(clip.name, "Armature|Action");
  EXPECT_NEAR(clip.duration(), 39.0 / 25.0, 1e-9);  // 39 ticks at 25 ticks/s
  EXPECT_EQ(clip.frameCount, 95);                   // ceil(1.56 * 60) + 1
  // The bones move.
  double largest = 0.0;
  for (int j = 0; j < clip.jointCount; ++j) {
    largest =
        std::max(largest, angleBetween(clip.frame(0)[static_cast<size_t>(j)].rotation,
                                       clip.frame(clip.frameCount / 2)[static_cast<size_t>(j)].rotation));
  }
  EXPECT_GT(largest, 0.2);
  // Y up, the armature baked: the chain rises along +Y and its tip reaches the top of the
  // skinned cylinder it deforms.
  ASSERT_EQ(asset.meshes.size(), 1u);
  double top = -1e9;
  for (const Vec3& p : asset.meshes[0].positions) top = std::max(top, p.y);
  const std::vector<Transform> models = modelPose(asset.skeleton, asset.skeleton.restLocal);
  const int tipJoint = asset.skeleton.findJoint("Bone.008");
  const double tip = models[static_cast<size_t>(tipJoint)]
                         .transformPoint(asset.skeleton.endSiteOffset[static_cast<size_t>(tipJoint)])
                         .y;
  EXPECT_GT(tip, models[0].translation.y + 5.0);
  EXPECT_NEAR(tip, top, 0.1);
}

TEST(ImportCollada, ZUpBoxAnimation) {
  const ImportedAsset& asset = load("assimp/box_nested_animation.dae");
  ASSERT_EQ(asset.skeleton.jointCount(), 1);
  EXPECT_EQ(asset.skeleton.jointNames[0], "Armature_Bone");
  // Blender's Z-up armature at (1, -1, 0) lands at (1, 0, 1) in Y-up model space.
  const Vec3 root = asset.skeleton.restLocal[0].translation;
  EXPECT_NEAR(glm::length(root - Vec3{1, 0, 1}), 0.0, 1e-6);
  ASSERT_EQ(asset.clips.size(), 1u);
  EXPECT_NEAR(asset.clips[0].duration(), 1.66666698, 1e-6);
  ASSERT_EQ(asset.meshes.size(), 1u);
  double lowest = 1e9;
  double highest = -1e9;
  for (const Vec3& p : asset.meshes[0].positions) {
    lowest = std::min(lowest, p.y);
    highest = std::max(highest, p.y);
  }
  EXPECT_NEAR(lowest, 0.0, 1e-6);  // the cube rests on the ground
  EXPECT_NEAR(highest, 2.0, 1e-6);
}

}  // namespace
}  // namespace handoff
