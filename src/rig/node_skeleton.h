// The joints of a file that has neither skinned bones nor animated nodes, but whose skeleton is
// there as plain nodes: a VRM whose meshes are rigid parts (its humanBones name every bone), an
// outfit asset with the character's skeleton as nodes (Ready Player Me's "mixamorig:Hips" tree).
#pragma once

#include <string>
#include <vector>

#include "handoff/rig.h"

namespace handoff::detail {

/// A node graph in depth-first pre-order (parents before children; parent -1 for the root).
struct NodeTree {
  std::vector<std::string> names;
  std::vector<int> parents;
  std::vector<char> hasMeshes;
};

/// Fewest nodes a mesh-less tree under a hips-named node needs to be taken as a skeleton.
inline constexpr int kMinNodeSkeleton = 10;

/// The nodes to take as joints, and why (for the import warnings):
/// 1. the nodes the file's own humanoid bones name (VRM humanBones), when there are any;
/// 2. else the first node named as a pelvis ("Hips", "mixamorig:Hips", "Character1_Hips",
///    "pelvis", "hip") whose mesh-less subtree (mesh nodes and what hangs below them left out)
///    has at least kMinNodeSkeleton nodes: that subtree.
/// Empty when neither applies (rigid parts without a humanoid description stay refused).
std::vector<int> nodeSkeleton(const NodeTree& tree, const std::vector<HumanoidBone>& humanoidBones,
                              std::string& reason);

}  // namespace handoff::detail
