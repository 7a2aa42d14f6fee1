// Helpers shared by the recovery module's files (internal): the stance measures of retargeting
// and get-up completion, and how errors name a get-up clip.
#pragma once

#include "handoff/asset.h"
#include "handoff/rig.h"

#include <algorithm>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace handoff::recovery_detail {

/// How errors name a get-up clip.
inline std::string clipLabel(const Clip& clip) { return "get-up clip '" + clip.name + "'"; }

/// 1 for the joints in the subtrees of the joints mapped to slots `a` and `b` (themselves
/// included), 0 elsewhere. Parents come before children in a Skeleton.
inline std::vector<char> jointsUnder(const Skeleton& skeleton, const HumanoidMap& map, Slot a, Slot b) {
  const int n = skeleton.jointCount();
  std::vector<char> under(static_cast<size_t>(n), 0);
  for (int j = 0; j < n; ++j) {
    const int parent = skeleton.parents[static_cast<size_t>(j)];
    under[static_cast<size_t>(j)] = static_cast<char>(
        j == map[a] || j == map[b] || (parent != kNoParent && under[static_cast<size_t>(parent)]));
  }
  return under;
}

/// Lowest point (y) of both legs, joints and end sites from either upper leg down, in a model
/// pose. Both upper legs must be mapped.
inline double lowestLegPoint(const Skeleton& skeleton, const HumanoidMap& map,
                             std::span<const Transform> models) {
  const std::vector<char> inLeg = jointsUnder(skeleton, map, Slot::UpperLegL, Slot::UpperLegR);
  double lowest = std::numeric_limits<double>::infinity();
  for (int j = 0; j < skeleton.jointCount(); ++j) {
    if (!inLeg[static_cast<size_t>(j)]) continue;
    const Transform& m = models[static_cast<size_t>(j)];
    lowest = std::min(lowest, m.translation.y);
    lowest = std::min(lowest, m.transformPoint(skeleton.endSiteOffset[static_cast<size_t>(j)]).y);
  }
  return lowest;
}

/// Pelvis height above the lowest point of both legs in a model pose. [m]
inline double hipHeightAboveFeet(const Skeleton& skeleton, const HumanoidMap& map,
                                 std::span<const Transform> models) {
  return models[static_cast<size_t>(map[Slot::Pelvis])].translation.y - lowestLegPoint(skeleton, map, models);
}

}  // namespace handoff::recovery_detail
