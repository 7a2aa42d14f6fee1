// Issue 31: a BVH whose OFFSETs are in each bone's local frame (Rokoko, Bandai-Namco, iClone /
// Character Creator exports): every offset lies along its parent's local X, so the zero-rotation
// pose is a straight stick and the real rest pose is only in the motion. Made here from a shipped
// clip, the way those exporters write one: each joint's frame is turned by a constant rotation A
// that takes its X axis onto its first child's bone, each offset is re-expressed in the turned
// parent frame (along X for the first child; a branch's other children carry theirs in position
// channels), and the rest rotation is folded into every frame (q' = inverse(A_parent) q A). The
// motion is the same motion: the import must stand it up (rest pose and up axis from the motion)
// and map it by its names.
#include "asset_test_util.h"

#include <gtest/gtest.h>
#include <glm/gtc/quaternion.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

namespace handoff {
namespace {
using namespace asset_test;

/// Z, Y, X Euler angles (degrees) with R = Rz * Ry * Rx, BVH's "Zrotation Yrotation Xrotation".
Vec3 eulerZyx(const Quat& q) {
  const glm::dmat3 m = glm::mat3_cast(q);  // m[column][row]
  const double y = std::asin(std::clamp(-m[0][2], -1.0, 1.0));
  const double x = std::atan2(m[1][2], m[2][2]);
  const double z = std::atan2(m[0][1], m[0][0]);
  return Vec3{z, y, x} * (180.0 / kPi);
}

/// A skeleton and its frames (local transforms, metres) written as a local-frame BVH (see the
/// file comment), in centimetres at `rate`.
std::string localFrameBvh(const Skeleton& s, const std::vector<std::vector<Transform>>& frames, double rate) {
  const size_t n = static_cast<size_t>(s.jointCount());
  std::vector<std::vector<int>> kids(n);
  for (size_t j = 1; j < n; ++j) kids[static_cast<size_t>(s.parents[j])].push_back(static_cast<int>(j));
  // A_j: X onto the first child's offset (identity for a leaf).
  std::vector<Quat> turn(n, Quat{1.0, 0.0, 0.0, 0.0});
  for (size_t j = 0; j < n; ++j) {
    if (kids[j].empty()) continue;
    const Vec3 o = s.restLocal[static_cast<size_t>(kids[j][0])].translation;
    if (glm::length(o) > 1e-9) turn[j] = rotationBetween(Vec3{1.0, 0.0, 0.0}, glm::normalize(o));
  }
  const auto isFirst = [&](size_t j) {
    return s.parents[j] == kNoParent || kids[static_cast<size_t>(s.parents[j])][0] == static_cast<int>(j);
  };
  std::ostringstream out;
  out.precision(9);
  const auto write = [&](auto&& self, size_t j, int depth) -> void {
    const std::string pad(static_cast<size_t>(depth) * 2, ' ');
    const double length = 100.0 * glm::length(s.restLocal[j].translation);
    out << pad << (depth == 0 ? "ROOT " : "JOINT ") << s.jointNames[j] << "\n"
        << pad << "{\n"
        << pad << "  OFFSET " << (depth == 0 ? 0.0 : length) << " 0 0\n";
    if (depth == 0 || !isFirst(j)) {
      out << pad << "  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation\n";
    } else {
      out << pad << "  CHANNELS 3 Zrotation Yrotation Xrotation\n";
    }
    if (kids[j].empty())
      out << pad << "  End Site\n" << pad << "  {\n" << pad << "    OFFSET 5 0 0\n" << pad << "  }\n";
    for (int c : kids[j]) self(self, static_cast<size_t>(c), depth + 1);
    out << pad << "}\n";
  };
  out << "HIERARCHY\n";
  write(write, 0, 0);
  out << "MOTION\nFrames: " << frames.size() << "\nFrame Time: " << 1.0 / rate << "\n";
  const auto frameLine = [&](auto&& self, size_t j, std::span<const Transform> keys) -> void {
    const Transform& key = keys[j];
    const int p = s.parents[j];
    const Quat parentTurn = p == kNoParent ? Quat{1.0, 0.0, 0.0, 0.0} : turn[static_cast<size_t>(p)];
    const Quat q = glm::inverse(parentTurn) * key.rotation * turn[j];
    if (p == kNoParent || !isFirst(j)) {
      const Vec3 t = 100.0 * (glm::inverse(parentTurn) * key.translation);
      out << t.x << " " << t.y << " " << t.z << " ";
    }
    const Vec3 e = eulerZyx(q);
    out << e.x << " " << e.y << " " << e.z << " ";
    for (int c : kids[j]) self(self, static_cast<size_t>(c), keys);
  };
  for (const std::vector<Transform>& frame : frames) {
    frameLine(frameLine, 0, frame);
    out << "\n";
  }
  return out.str();
}

std::vector<Transform> modelPose(const Skeleton& s, std::span<const Transform> locals) {
  std::vector<Transform> models(static_cast<size_t>(s.jointCount()));
  localToModel(s, locals, models);
  return models;
}

TEST(LocalFrameBvh, RestPoseAndUpAxisComeFromTheMotionsFirstUprightFrame) {
  Result<ImportedAsset> original = importFile(dataPath("cmu/01_01.bvh"));
  ASSERT_TRUE(original.ok()) << original.error();
  ASSERT_FALSE(original->clips.empty());
  const Skeleton& s = original->skeleton;
  const Clip& clip = original->clips[0];
  // The motion starts with the character lying on its back for a fifth of a second (the first
  // frame turned a quarter turn about X at floor level), as a capture starting on the ground
  // does: neither the stick nor the first frame says which way is up.
  std::vector<std::vector<Transform>> frames;
  const int lying = static_cast<int>(std::round(0.2 * clip.frameRate));
  for (int f = 0; f < lying; ++f) {
    std::vector<Transform> pose(clip.frame(0).begin(), clip.frame(0).end());
    pose[0].rotation = glm::angleAxis(-0.5 * kPi, Vec3{1.0, 0.0, 0.0}) * pose[0].rotation;
    pose[0].translation.y = 0.15;
    frames.push_back(std::move(pose));
  }
  for (int f = 0; f < clip.frameCount; ++f) frames.emplace_back(clip.frame(f).begin(), clip.frame(f).end());
  Result<ImportedAsset> stick = importBvhText(localFrameBvh(s, frames, clip.frameRate), "local_frame.bvh");
  ASSERT_TRUE(stick.ok()) << stick.error();
  const auto warned = [&](const std::string& text) {
    return std::any_of(stick->warnings.begin(), stick->warnings.end(),
                       [&](const std::string& w) { return w.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(warned("straight stick")) << ::testing::PrintToString(stick->warnings);
  EXPECT_TRUE(warned("first upright frame (" + std::to_string(lying) + ")"))
      << ::testing::PrintToString(stick->warnings);
  EXPECT_NEAR(stick->unitScale, 0.01, 1e-12);
  // Standing (the first upright frame's hip, not the lying one's 0.15 m), Y up as the original.
  EXPECT_GT(stick->hipHeight, 0.8);
  EXPECT_LT(stick->hipHeight, 1.1);
  // The same motion: every joint of a frame mid-clip where the original puts it (model space).
  ASSERT_EQ(stick->clips.size(), 1u);
  const int f = clip.frameCount / 2;
  const std::vector<Transform> a = modelPose(s, clip.frame(f));
  const std::vector<Transform> b = modelPose(stick->skeleton, stick->clips[0].frame(lying + f));
  for (int j = 0; j < s.jointCount(); ++j) {
    EXPECT_LT(glm::length(a[static_cast<size_t>(j)].translation - b[static_cast<size_t>(j)].translation),
              0.002)
        << s.jointNames[static_cast<size_t>(j)];
  }
  // Mapped by its names: legs as legs, arms as arms.
  Result<HumanoidMapReport> map = mapHumanoidReport(stick->skeleton);
  ASSERT_TRUE(map.ok()) << map.error();
  const auto bone = [&](Slot slot) {
    const int j = map->map[slot];
    return j >= 0 ? stick->skeleton.jointNames[static_cast<size_t>(j)] : std::string("-");
  };
  EXPECT_EQ(bone(Slot::UpperLegL), "LeftUpLeg");
  EXPECT_EQ(bone(Slot::LowerArmR), "RightForeArm");
  EXPECT_EQ(bone(Slot::Head), "Head");
}

}  // namespace
}  // namespace handoff
