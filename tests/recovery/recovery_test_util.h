// Shared helpers of the recovery tests: real data from HANDOFF_DATA_DIR, humanoid maps,
// world poses of clips.
#pragma once

#include "handoff/asset.h"
#include "handoff/import.h"
#include "handoff/recovery.h"
#include "handoff/rig.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace handoff::test {

inline std::string dataPath(const std::string& relative) {
  return std::string(HANDOFF_DATA_DIR) + "/" + relative;
}

/// A clip with its skeleton and humanoid map (the map from handoff::mapHumanoid).
struct LoadedClip {
  Skeleton skeleton;
  Clip clip;
  HumanoidMap map;
};

inline LoadedClip loadClip(const std::string& relative) {
  LoadedClip out;
  Result<ImportedAsset> asset = importFile(dataPath(relative));
  EXPECT_TRUE(asset.ok()) << (asset.ok() ? "" : asset.error());
  if (!asset.ok()) return out;
  EXPECT_FALSE(asset->clips.empty()) << relative << " has no clip";
  out.skeleton = asset->skeleton;
  if (!asset->clips.empty()) out.clip = asset->clips.front();
  Result<HumanoidMap> map = mapHumanoid(out.skeleton);
  EXPECT_TRUE(map.ok()) << relative << ": " << (map.ok() ? "" : map.error());
  if (map.ok()) out.map = *map;
  return out;
}

/// Model pose (rootFromJoint) of a local pose.
inline std::vector<Transform> modelsOf(const Skeleton& skeleton, std::span<const Transform> locals) {
  std::vector<Transform> models(static_cast<size_t>(skeleton.jointCount()));
  localToModel(skeleton, locals, models);
  return models;
}

/// World transforms of every bone: worldFromRoot * model.
inline std::vector<Transform> worldOf(const Skeleton& skeleton, std::span<const Transform> locals,
                                      const Transform& worldFromRoot) {
  std::vector<Transform> world = modelsOf(skeleton, locals);
  for (Transform& t : world) t = worldFromRoot * t;
  return world;
}

/// Horizontal heading of a vector, radians about +Y (atan2 of -z, x so +X is 0, +Z is -pi/2...
/// only differences are used).
inline double headingOf(const Vec3& v) { return std::atan2(-v.z, v.x); }

/// Smallest absolute difference of two angles. [rad]
inline double angleDifference(double a, double b) {
  double d = std::fmod(a - b, 2.0 * kPi);
  if (d > kPi) d -= 2.0 * kPi;
  if (d < -kPi) d += 2.0 * kPi;
  return std::abs(d);
}

inline double degrees(double radians) { return radians * 180.0 / kPi; }

/// A random rotation of at most `maxAngle` radians about a random axis.
inline Quat randomRotation(std::mt19937& rng, double maxAngle) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  Vec3 axis{unit(rng), unit(rng), unit(rng)};
  if (glm::length(axis) < 1e-3) axis = Vec3{1.0, 0.0, 0.0};
  std::uniform_real_distribution<double> angle(-maxAngle, maxAngle);
  return glm::angleAxis(angle(rng), glm::normalize(axis));
}

}  // namespace handoff::test
