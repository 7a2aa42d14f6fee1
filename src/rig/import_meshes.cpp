// Bind-pose meshes of an imported scene (include/handoff/import.h): skinned meshes with their
// four largest influences, rigid meshes bound to the joint above them.
#include "rig/import_internal.h"

#include <assimp/scene.h>
#include <glm/glm.hpp>
#include <glm/gtc/matrix_inverse.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace handoff::import_detail {

using Mat3 = glm::dmat3;

/// Bind-pose meshes in model space (Y up, file units). Skinned meshes keep their four largest
/// influences; a rigid mesh under a joint is bound to that joint with weight 1.
void buildMeshes(const aiScene& scene, Built& built) {
  const SceneGraph& graph = built.graph;
  ImportedAsset& asset = built.asset;
  const int jointCount = asset.skeleton.jointCount();
  std::vector<int> jointOfNode(static_cast<size_t>(graph.count()), -1);
  for (int j = 0; j < jointCount; ++j)
    jointOfNode[static_cast<size_t>(built.jointNode[static_cast<size_t>(j)])] = j;
  const Mat4 up = glm::mat4_cast(built.upFromFile);

  for (int n = 0; n < graph.count(); ++n) {
    const aiNode* node = graph.nodes[static_cast<size_t>(n)];
    for (unsigned k = 0; k < node->mNumMeshes; ++k) {
      if (node->mMeshes[k] >= scene.mNumMeshes) continue;
      const aiMesh* mesh = scene.mMeshes[node->mMeshes[k]];
      if (mesh == nullptr || mesh->mNumVertices == 0 || mesh->mVertices == nullptr) continue;
      const size_t vertexCount = mesh->mNumVertices;
      SkinnedMesh out;
      out.name = mesh->mName.length > 0 ? mesh->mName.C_Str() : graph.name(n);
      out.positions.resize(vertexCount);
      out.normals.assign(vertexCount, Vec3{0.0, 1.0, 0.0});
      out.jointIndices.assign(vertexCount * 4, 0);
      out.jointWeights.assign(vertexCount * 4, 0.0F);

      int ownerJoint = -1;  // nearest joint at or above the mesh node
      for (int p = n; p >= 0 && ownerJoint < 0; p = graph.parent[static_cast<size_t>(p)]) {
        ownerJoint = jointOfNode[static_cast<size_t>(p)];
      }

      if (mesh->mNumBones > 0) {
        std::vector<std::vector<std::pair<float, int>>> influences(vertexCount);
        std::vector<Mat4> skin(mesh->mNumBones);
        std::vector<int> boneJoint(mesh->mNumBones, -1);
        for (unsigned b = 0; mesh->mBones != nullptr && b < mesh->mNumBones; ++b) {
          const aiBone* bone = mesh->mBones[b];
          if (bone == nullptr) continue;
          const int boneNode = graph.find(bone->mName.C_Str());
          if (boneNode < 0 || jointOfNode[static_cast<size_t>(boneNode)] < 0) continue;
          boneJoint[b] = jointOfNode[static_cast<size_t>(boneNode)];
          skin[b] = up * graph.global[static_cast<size_t>(boneNode)] * toMat4(bone->mOffsetMatrix);
          for (unsigned w = 0; bone->mWeights != nullptr && w < bone->mNumWeights; ++w) {
            const aiVertexWeight& weight = bone->mWeights[w];
            if (weight.mVertexId < vertexCount && weight.mWeight > 0.0F && std::isfinite(weight.mWeight)) {
              influences[weight.mVertexId].emplace_back(weight.mWeight, static_cast<int>(b));
            }
          }
        }
        for (size_t v = 0; v < vertexCount; ++v) {
          auto& list = influences[v];
          std::sort(list.begin(), list.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
          if (list.size() > 4) list.resize(4);
          float total = 0.0F;
          for (const auto& [weight, bone] : list) total += weight;
          const glm::dvec4 p(toVec3(mesh->mVertices[v]), 1.0);
          const Vec3 normal = mesh->mNormals != nullptr ? toVec3(mesh->mNormals[v]) : Vec3{0.0};
          if (list.empty() || !(total > 0.0F)) {
            // Unweighted vertex: rides with the mesh node's joint (or the root).
            const int joint = ownerJoint >= 0 ? ownerJoint : 0;
            out.jointIndices[v * 4] = static_cast<std::uint16_t>(joint);
            out.jointWeights[v * 4] = 1.0F;
            const Mat4 m = up * graph.global[static_cast<size_t>(n)];
            out.positions[v] = Vec3(m * p);
            if (mesh->mNormals != nullptr) out.normals[v] = glm::inverseTranspose(Mat3(m)) * normal;
            continue;
          }
          Mat4 blended(0.0);
          for (size_t i = 0; i < list.size(); ++i) {
            const float weight = list[i].first / total;
            out.jointIndices[v * 4 + i] =
                static_cast<std::uint16_t>(boneJoint[static_cast<size_t>(list[i].second)]);
            out.jointWeights[v * 4 + i] = weight;
            blended += static_cast<double>(weight) * skin[static_cast<size_t>(list[i].second)];
          }
          out.positions[v] = Vec3(blended * p);
          if (mesh->mNormals != nullptr) out.normals[v] = glm::inverseTranspose(Mat3(blended)) * normal;
        }
      } else {
        if (ownerJoint < 0) {
          asset.warnings.push_back("mesh '" + out.name + "' is not attached to the skeleton; skipped");
          continue;
        }
        const Mat4 m = up * graph.global[static_cast<size_t>(n)];
        const Mat3 normalMatrix = glm::inverseTranspose(Mat3(m));
        for (size_t v = 0; v < vertexCount; ++v) {
          out.positions[v] = Vec3(m * glm::dvec4(toVec3(mesh->mVertices[v]), 1.0));
          if (mesh->mNormals != nullptr) out.normals[v] = normalMatrix * toVec3(mesh->mNormals[v]);
          out.jointIndices[v * 4] = static_cast<std::uint16_t>(ownerJoint);
          out.jointWeights[v * 4] = 1.0F;
        }
      }
      for (Vec3& normal : out.normals) {
        const double length = glm::length(normal);
        normal = length > 0.0 && std::isfinite(length) ? normal / length : Vec3{0.0, 1.0, 0.0};
      }
      for (unsigned f = 0; mesh->mFaces != nullptr && f < mesh->mNumFaces; ++f) {
        const aiFace& face = mesh->mFaces[f];
        if (face.mNumIndices != 3 || face.mIndices == nullptr) continue;  // points and lines
        if (face.mIndices[0] >= vertexCount || face.mIndices[1] >= vertexCount ||
            face.mIndices[2] >= vertexCount) {
          continue;
        }
        out.indices.insert(out.indices.end(), face.mIndices, face.mIndices + 3);
      }
      if (out.indices.empty()) continue;
      asset.meshes.push_back(std::move(out));
    }
  }
}

}  // namespace handoff::import_detail
