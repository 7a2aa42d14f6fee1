// What the Ragdoll's files share (ragdoll.cpp, ragdoll_commit.cpp, ragdoll_state.cpp): the
// commit's contact constants and where the character capsule stands.
#pragma once

#include "handoff/handoff.h"

namespace handoff::ragdoll_detail {

/// Static contact points per body the commit's velocity step considers.
inline constexpr int kMaxStaticContactsPerBody = 4;
/// A consistency correction larger than this is recorded as a clamp. [m/s] [rad/s]
inline constexpr double kCorrectionReported = 1e-3;
/// Static surfaces closer than this (plus what a body covers in one step) are looked at. [m]
inline constexpr double kStaticContactMargin = 0.005;

/// The character capsule stands on the root's ground height under the pelvis (clips whose root
/// joint is the pelvis carry their root motion in it), turned with the root's yaw.
inline Transform capsulePose(const RagdollAsset& asset, const Transform& worldFromRoot,
                             const Transform& rootFromPelvis) {
  const Vec3 pelvis = worldFromRoot.transformPoint(rootFromPelvis.translation);
  const double bottom = worldFromRoot.translation.y;
  return Transform{worldFromRoot.rotation,
                   Vec3{pelvis.x, bottom + asset.capsule.radius + asset.capsule.halfHeight, pelvis.z}};
}

}  // namespace handoff::ragdoll_detail
