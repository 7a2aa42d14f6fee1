// What src/rig/import.cpp, import_meshes.cpp and import_finish.cpp share: the flattened Assimp node graph,
// what a scene builds before its units and axes are settled, and that last step (finish, orientBvh).
#pragma once

#include "handoff/import.h"

#include <assimp/scene.h>
#include <glm/glm.hpp>

#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace handoff::import_detail {

using Mat4 = glm::dmat4;

/// Assimp's row-major matrix and vector in glm's types.
inline Mat4 toMat4(const aiMatrix4x4& m) {
  Mat4 result(1.0);
  for (unsigned row = 0; row < 4; ++row) {
    for (unsigned col = 0; col < 4; ++col) result[static_cast<int>(col)][static_cast<int>(row)] = m[row][col];
  }
  return result;
}

inline Vec3 toVec3(const aiVector3D& v) { return Vec3{v.x, v.y, v.z}; }

/// A value for a message, `precision` significant digits.
inline std::string format(double value, int precision = 6) {
  std::ostringstream out;
  out.precision(precision);
  out << value;
  return out.str();
}

/// The node graph of an Assimp scene, flattened in depth-first pre-order (parents first).
struct SceneGraph {
  std::vector<const aiNode*> nodes;
  std::vector<int> parent;
  std::vector<int> depth;
  std::vector<Mat4> local;   ///< Rest local matrix (file units, may carry scale).
  std::vector<Mat4> global;  ///< Rest matrix in the scene root's space.
  std::unordered_multimap<std::string, int> byName;

  int count() const { return static_cast<int>(nodes.size()); }
  bool hasMeshes(int node) const { return nodes[static_cast<size_t>(node)]->mNumMeshes > 0; }
  std::string name(int node) const { return nodes[static_cast<size_t>(node)]->mName.C_Str(); }

  /// The node named `name`. Several nodes may share a name (glTF allows it: RobotExpressive
  /// has a joint "Head" with a mesh child "Head"): a node without meshes is preferred, then
  /// the first in depth-first order. -1 when there is none.
  int find(const std::string& nodeName) const {
    const auto [begin, end] = byName.equal_range(nodeName);
    int best = -1;
    for (auto it = begin; it != end; ++it) {
      const int candidate = it->second;
      if (best < 0) {
        best = candidate;
        continue;
      }
      const bool candidateBetter = (!hasMeshes(candidate) && hasMeshes(best)) ||
                                   (hasMeshes(candidate) == hasMeshes(best) && candidate < best);
      if (candidateBetter) best = candidate;
    }
    return best;
  }
};

/// Scene -> skeleton, clips and meshes (in file units; the unit scale is applied afterwards).
struct Built {
  ImportedAsset asset;
  SceneGraph graph;
  std::vector<int> jointNode;  ///< Scene node of each joint.
  Quat upFromFile{1.0, 0.0, 0.0, 0.0};
  std::optional<double> declaredUnitScale;  ///< Metres per file unit the format declares.
  /// FBX: the uniform scale of the nodes above the root joint (an armature's), baked into it, and
  /// the outermost such node with a scale.
  double ancestorScale = 1.0;
  std::string scaledAncestor;
  bool fbx = false;
};

/// Units, up axis, hemisphere-continuous rotations and the checks every import ends with
/// (import_finish.cpp).
Status finish(Built& built, const std::string& source, const ImportOptions& options);
/// Bind-pose meshes in model space (Y up, file units) into built.asset.meshes
/// (import_meshes.cpp).
void buildMeshes(const aiScene& scene, Built& built);
/// A BVH's up axis and rest pose from its motion when its offsets are a local-frame stick.
void orientBvh(ImportedAsset& asset);

}  // namespace handoff::import_detail
