// Stance measures shared by retargeting and get-up completion (internal to the recovery module).
#pragma once

#include "handoff/asset.h"
#include "handoff/rig.h"

#include <algorithm>
#include <limits>
#include <span>
#include <vector>

namespace handoff::recovery_detail {

/// Lowest point (y) of both legs, joints and end sites from either upper leg down, in a model
/// pose. Both upper legs must be mapped.
inline double lowestLegPoint(const Skeleton& skeleton, const HumanoidMap& map,
                             std::span<const Transform> models) {
  const int n = skeleton.jointCount();
  std::vector<char> inLeg(static_cast<size_t>(n), 0);
  double lowest = std::numeric_limits<double>::infinity();
  for (int j = 0; j < n; ++j) {
    const int parent = skeleton.parents[static_cast<size_t>(j)];
    inLeg[static_cast<size_t>(j)] =
        static_cast<char>(j == map[Slot::UpperLegL] || j == map[Slot::UpperLegR] ||
                          (parent != kNoParent && inLeg[static_cast<size_t>(parent)]));
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
