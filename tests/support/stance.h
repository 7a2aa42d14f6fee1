// Stance figures of a posed skeleton for the get-up and retargeting tests: the lowest point under a
// joint (its joints and end sites) and the pelvis height above the feet.
#pragma once

#include "handoff/asset.h"
#include "handoff/rig.h"

#include <algorithm>
#include <limits>
#include <span>

namespace handoff::test {

/// Lowest point (joints and end sites, y) of the subtree under `top` in a pose of every joint
/// (model or world transforms). [m]
inline double lowestUnder(const Skeleton& s, std::span<const Transform> pose, int top) {
  double lowest = std::numeric_limits<double>::infinity();
  for (int j = 0; j < s.jointCount(); ++j) {
    int a = j;
    while (a != kNoParent && a != top) a = s.parents[static_cast<size_t>(a)];
    if (a != top) continue;
    const Transform& m = pose[static_cast<size_t>(j)];
    lowest = std::min({lowest, m.translation.y, m.transformPoint(s.endSiteOffset[static_cast<size_t>(j)]).y});
  }
  return lowest;
}

/// Pelvis above the lowest foot point (joints and end sites under either foot slot). [m]
inline double hipAboveFeet(const Skeleton& s, const HumanoidMap& map, std::span<const Transform> pose) {
  const double feet =
      std::min(lowestUnder(s, pose, map[Slot::FootL]), lowestUnder(s, pose, map[Slot::FootR]));
  return pose[static_cast<size_t>(map[Slot::Pelvis])].translation.y - feet;
}

}  // namespace handoff::test
