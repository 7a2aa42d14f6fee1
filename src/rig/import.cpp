// Import through Assimp (include/handoff/import.h).
//
// Pipeline: Assimp scene -> flattened node graph (double precision 4x4 matrices) -> joint set
// (skin bones, else animated nodes, plus the ancestors that connect them) -> model space
// (modelFromFile = unit scale * up-axis rotation * transforms of the nodes above the root joint)
// -> rigid local transforms, clips resampled on a uniform grid, skinned meshes. BVH text is
// checked line by line first (bvh_check.h) and its keys are taken from the text in double
// precision; Assimp's reading of the hierarchy is cross-checked against the text.
#include "handoff/import.h"

#include "rig/assimp_read.h"
#include "rig/bvh_check.h"
#include "rig/collada_check.h"
#include "rig/fbx_check.h"
#include "rig/gltf_check.h"
#include "rig/gltf_read.h"
#include "rig/import_internal.h"
#include "rig/node_skeleton.h"

#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <assimp/Importer.hpp>
#include <glm/gtc/matrix_inverse.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <sstream>
#include <unordered_map>
#include <utility>

namespace handoff {
namespace {

using import_detail::buildMeshes;
using import_detail::Built;
using import_detail::finish;
using import_detail::format;
using import_detail::orientBvh;
using import_detail::SceneGraph;
using import_detail::toMat4;
using import_detail::toVec3;

using Mat4 = glm::dmat4;
using Mat3 = glm::dmat3;

constexpr int kMaxFramesPerClip = 1'000'000;
constexpr size_t kMaxKeysPerClip = 50'000'000;

// ------------------------------------------------------------------------------------------------
// Small conversions.

Quat toQuat(const aiQuaternion& q) { return normalizeOrIdentity(Quat{q.w, q.x, q.y, q.z}); }
Vec3 column(const Mat4& m, int c) { return Vec3{m[c][0], m[c][1], m[c][2]}; }

Mat4 composeTrs(const Vec3& t, const Quat& r, const Vec3& s) {
  Mat4 m = glm::mat4_cast(r);
  m[0] *= s.x;
  m[1] *= s.y;
  m[2] *= s.z;
  m[3] = glm::dvec4(t, 1.0);
  return m;
}

struct Trs {
  Vec3 translation{0.0};
  Quat rotation{1.0, 0.0, 0.0, 0.0};
  Vec3 scale{1.0};
};

/// Rigid part of an affine matrix: translation, and the rotation of its column-normalised 3x3
/// (exact for translate-rotate-scale with a diagonal scale). Reports scale and mirroring.
struct RigidPart {
  Transform transform;
  Vec3 scale{1.0};
  bool mirrored = false;
};

RigidPart rigidPart(const Mat4& m) {
  RigidPart result;
  Vec3 c0 = column(m, 0);
  Vec3 c1 = column(m, 1);
  Vec3 c2 = column(m, 2);
  result.scale = Vec3{glm::length(c0), glm::length(c1), glm::length(c2)};
  result.transform.translation = column(m, 3);
  if (!(result.scale.x > 0.0 && result.scale.y > 0.0 && result.scale.z > 0.0)) return result;
  c0 /= result.scale.x;
  c1 /= result.scale.y;
  c2 /= result.scale.z;
  if (glm::dot(glm::cross(c0, c1), c2) < 0.0) {
    result.mirrored = true;
    c2 = -c2;
    result.scale.z = -result.scale.z;
  }
  // Gram-Schmidt: removes the shear that a non-uniform parent scale leaves on a rotated child.
  c1 = glm::normalize(c1 - glm::dot(c1, c0) * c0);
  c2 = glm::cross(c0, c1);
  result.transform.rotation = normalizeOrIdentity(glm::quat_cast(Mat3(c0, c1, c2)));
  return result;
}

Trs decompose(const Mat4& m) {
  const RigidPart part = rigidPart(m);
  return Trs{part.transform.translation, part.transform.rotation, part.scale};
}

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string extensionOf(const std::string& path) {
  return lowercase(std::filesystem::path(path).extension().string());
}

std::string stemOf(const std::string& path) {
  const std::string stem = std::filesystem::path(path).stem().string();
  return stem.empty() ? std::string("Motion") : stem;
}

// ------------------------------------------------------------------------------------------------
// The node graph of an Assimp scene, flattened in depth-first pre-order (parents first).

SceneGraph flatten(const aiScene& scene) {
  SceneGraph graph;
  std::vector<std::pair<const aiNode*, int>> stack{{scene.mRootNode, -1}};
  while (!stack.empty()) {
    const auto [node, parent] = stack.back();
    stack.pop_back();
    const int index = graph.count();
    graph.nodes.push_back(node);
    graph.parent.push_back(parent);
    graph.depth.push_back(parent < 0 ? 0 : graph.depth[static_cast<size_t>(parent)] + 1);
    graph.local.push_back(toMat4(node->mTransformation));
    graph.global.push_back(parent < 0 ? graph.local.back()
                                      : graph.global[static_cast<size_t>(parent)] * graph.local.back());
    graph.byName.emplace(node->mName.C_Str(), index);
    for (unsigned c = node->mNumChildren; c-- > 0;) {
      if (node->mChildren[c] != nullptr) stack.emplace_back(node->mChildren[c], index);
    }
  }
  return graph;
}

int lowestCommonAncestor(const SceneGraph& graph, int a, int b) {
  while (graph.depth[static_cast<size_t>(a)] > graph.depth[static_cast<size_t>(b)])
    a = graph.parent[static_cast<size_t>(a)];
  while (graph.depth[static_cast<size_t>(b)] > graph.depth[static_cast<size_t>(a)])
    b = graph.parent[static_cast<size_t>(b)];
  while (a != b) {
    a = graph.parent[static_cast<size_t>(a)];
    b = graph.parent[static_cast<size_t>(b)];
  }
  return a;
}

bool isAncestorOrSelf(const SceneGraph& graph, int ancestor, int node) {
  for (int n = node; n >= 0; n = graph.parent[static_cast<size_t>(n)]) {
    if (n == ancestor) return true;
  }
  return false;
}

// ------------------------------------------------------------------------------------------------
// Keyframe sampling of an aiNodeAnim (linear / short-arc slerp, clamped at both ends).

template <class Key>
size_t keyBefore(const Key* keys, unsigned count, double time) {
  // Index i with keys[i].mTime <= time < keys[i + 1].mTime, for keys[0].mTime < time < last.
  const Key* it =
      std::upper_bound(keys, keys + count, time, [](double t, const Key& key) { return t < key.mTime; });
  return static_cast<size_t>(std::max<std::ptrdiff_t>(0, (it - keys) - 1));
}

Vec3 sampleVector(const aiVectorKey* keys, unsigned count, double time, const Vec3& fallback) {
  if (count == 0) return fallback;
  if (count == 1 || time <= keys[0].mTime) return toVec3(keys[0].mValue);
  if (time >= keys[count - 1].mTime) return toVec3(keys[count - 1].mValue);
  const size_t i = keyBefore(keys, count, time);
  const double span = keys[i + 1].mTime - keys[i].mTime;
  const double alpha = span > 0.0 ? (time - keys[i].mTime) / span : 0.0;
  return glm::mix(toVec3(keys[i].mValue), toVec3(keys[i + 1].mValue), alpha);
}

Quat sampleRotation(const aiQuatKey* keys, unsigned count, double time, const Quat& fallback) {
  if (count == 0) return fallback;
  if (count == 1 || time <= keys[0].mTime) return toQuat(keys[0].mValue);
  if (time >= keys[count - 1].mTime) return toQuat(keys[count - 1].mValue);
  const size_t i = keyBefore(keys, count, time);
  const double span = keys[i + 1].mTime - keys[i].mTime;
  const double alpha = span > 0.0 ? (time - keys[i].mTime) / span : 0.0;
  return slerpShortArc(toQuat(keys[i].mValue), toQuat(keys[i + 1].mValue), alpha);
}

template <class Key>
bool keysSorted(const Key* keys, unsigned count) {
  for (unsigned i = 0; i < count; ++i) {
    if (!std::isfinite(keys[i].mTime)) return false;
    if (i > 0 && keys[i].mTime < keys[i - 1].mTime) return false;
  }
  return true;
}

// ------------------------------------------------------------------------------------------------
// Scene -> skeleton, clips and meshes (in file units; the unit scale is applied afterwards).

struct ModelSpace {
  Quat upFromFile{1.0, 0.0, 0.0, 0.0};
  std::vector<std::string>* warnings = nullptr;
  bool warnedScale = false;
  bool warnedMirror = false;

  /// Rigid model transform (Y up, file units) of a node whose scene-root matrix is `global`.
  Transform rigid(const Mat4& global, const std::string& nodeName) {
    const RigidPart part = rigidPart(global);
    const Vec3 s = glm::abs(part.scale);
    const double largest = std::max({s.x, s.y, s.z});
    const double smallest = std::min({s.x, s.y, s.z});
    if (!warnedScale && smallest > 0.0 && largest / smallest > 1.0 + 1e-3) {
      warnedScale = true;
      warnings->push_back("node '" + nodeName + "' has a non-uniform scale (" + format(s.x) + ", " +
                          format(s.y) + ", " + format(s.z) +
                          "): joint positions are kept exact, the rotation is orthonormalised (mean scale " +
                          format((s.x + s.y + s.z) / 3.0) + ")");
    }
    if (!warnedMirror && part.mirrored) {
      warnedMirror = true;
      warnings->push_back("node '" + nodeName +
                          "' is mirrored (negative scale): one axis is flipped to keep "
                          "the rotation proper");
    }
    return Transform::fromRotation(upFromFile) * part.transform;
  }
};

/// The bind pose of skinned files: a skin's inverse bind matrices (aiBone::mOffsetMatrix) are the
/// bind pose; the node transforms usually agree (every bone's global * offset is then the same
/// matrix, the mesh's placement) but a file saved in an animated pose (GDQuest's mannequin,
/// Quaternius' cyberpunk character) has them disagree. Then every bone's global becomes
/// meshNodeGlobal * inverse(offset) and the other nodes follow their parents with their own local
/// transforms. Nothing changes when the node pose is the bind pose.
void applySkinBindPose(const aiScene& scene, SceneGraph& graph, std::vector<std::string>& warnings) {
  const int nodeCount = graph.count();
  std::vector<int> meshNode(scene.mNumMeshes, -1);
  for (int node = 0; node < nodeCount; ++node) {
    const aiNode* n = graph.nodes[static_cast<size_t>(node)];
    for (unsigned k = 0; n->mMeshes != nullptr && k < n->mNumMeshes; ++k) {
      if (n->mMeshes[k] < scene.mNumMeshes && meshNode[n->mMeshes[k]] < 0) meshNode[n->mMeshes[k]] = node;
    }
  }
  std::vector<std::optional<Mat4>> bind(static_cast<size_t>(nodeCount));
  std::vector<int> bones;
  std::vector<Mat4> placement;  // global * offset per bone: the mesh placement it implies
  for (unsigned m = 0; m < scene.mNumMeshes; ++m) {
    const aiMesh* mesh = scene.mMeshes[m];
    if (mesh == nullptr || mesh->mBones == nullptr || meshNode[m] < 0) continue;
    for (unsigned b = 0; b < mesh->mNumBones; ++b) {
      if (mesh->mBones[b] == nullptr) continue;
      const int node = graph.find(mesh->mBones[b]->mName.C_Str());
      if (node < 0 || bind[static_cast<size_t>(node)]) continue;
      const Mat4 offset = toMat4(mesh->mBones[b]->mOffsetMatrix);
      const double det = glm::determinant(Mat3(offset));
      if (!std::isfinite(det) || std::abs(det) < 1e-30) continue;
      const Mat4 inverse = glm::inverse(offset);
      bool finite = true;
      for (int c = 0; c < 4; ++c) {
        for (int r = 0; r < 4; ++r) finite = finite && std::isfinite(inverse[c][r]);
      }
      if (!finite) continue;
      bind[static_cast<size_t>(node)] = graph.global[static_cast<size_t>(meshNode[m])] * inverse;
      bones.push_back(node);
      placement.push_back(graph.global[static_cast<size_t>(node)] * offset);
    }
  }
  if (bones.size() < 2) return;
  // Rigid meshes riding on bones (most of RobotExpressive) were modelled in the node pose: it is
  // their bind pose, whatever the skins say.
  for (int node = 0; node < nodeCount; ++node) {
    const aiNode* n = graph.nodes[static_cast<size_t>(node)];
    bool rigid = false;
    for (unsigned k = 0; n->mMeshes != nullptr && k < n->mNumMeshes; ++k) {
      const unsigned m = n->mMeshes[k];
      rigid =
          rigid || (m < scene.mNumMeshes && scene.mMeshes[m] != nullptr && scene.mMeshes[m]->mNumBones == 0);
    }
    if (!rigid) continue;
    for (int p = graph.parent[static_cast<size_t>(node)]; p >= 0; p = graph.parent[static_cast<size_t>(p)]) {
      if (bind[static_cast<size_t>(p)]) return;
    }
  }
  double extent = 0.0;
  for (const int node : bones) {
    extent = std::max(extent, glm::length(column(graph.global[static_cast<size_t>(node)], 3) -
                                          column(graph.global[static_cast<size_t>(bones[0])], 3)));
  }
  double linear = 0.0;
  for (int c = 0; c < 3; ++c) linear = std::max(linear, glm::length(column(placement[0], c)));
  int worst = -1;
  double worstOff = 0.0;
  for (size_t i = 1; i < bones.size(); ++i) {
    double off = glm::length(column(placement[i], 3) - column(placement[0], 3)) / std::max(extent, 1e-12);
    for (int c = 0; c < 3; ++c) {
      off = std::max(
          off, glm::length(column(placement[i], c) - column(placement[0], c)) / std::max(linear, 1e-12));
    }
    if (off > worstOff) {
      worstOff = off;
      worst = bones[i];
    }
  }
  if (!(worstOff > 1e-3)) return;  // the node pose is the bind pose (to float round-off)
  warnings.push_back("the node transforms hold a pose that is not the skin's bind pose (bone '" +
                     graph.name(worst) + "' disagrees by " + format(worstOff, 3) +
                     " relative); the bind pose is taken from the inverse bind matrices");
  for (int node = 0; node < nodeCount; ++node) {
    const int parent = graph.parent[static_cast<size_t>(node)];
    if (bind[static_cast<size_t>(node)]) {
      graph.global[static_cast<size_t>(node)] = *bind[static_cast<size_t>(node)];
    } else if (parent >= 0) {
      graph.global[static_cast<size_t>(node)] =
          graph.global[static_cast<size_t>(parent)] * graph.local[static_cast<size_t>(node)];
    }
  }
}

Status buildSkeleton(const aiScene& scene, const detail::SceneMeta& meta, const std::string& source,
                     Built& built) {
  SceneGraph& graph = built.graph;
  ImportedAsset& asset = built.asset;
  const int nodeCount = graph.count();

  // Up axis (FBX writes UpAxis/UpAxisSign; COLLADA's up_axis is already applied by Assimp to the
  // root node, glTF and BVH are Y up).
  if (const std::optional<int> upAxis = meta.integer("UpAxis"); upAxis && *upAxis >= 0 && *upAxis <= 2) {
    const int sign = meta.integer("UpAxisSign").value_or(1) < 0 ? -1 : 1;
    Vec3 up{0.0};
    up[*upAxis] = sign;
    built.upFromFile = rotationBetween(up, Vec3{0.0, 1.0, 0.0});
    if (*upAxis != 1 || sign != 1) {
      asset.warnings.push_back("up axis " + std::string(sign < 0 ? "-" : "+") + "XYZ"[*upAxis] +
                               " converted to +Y");
    }
  }

  // Joint set: the skin bones; else the animated nodes. Then the ancestors connecting them.
  std::vector<char> isJoint(static_cast<size_t>(nodeCount), 0);
  std::vector<int> base;
  for (unsigned m = 0; m < scene.mNumMeshes; ++m) {
    const aiMesh* mesh = scene.mMeshes[m];
    for (unsigned b = 0; mesh != nullptr && mesh->mBones != nullptr && b < mesh->mNumBones; ++b) {
      if (mesh->mBones[b] == nullptr) continue;
      const int node = graph.find(mesh->mBones[b]->mName.C_Str());
      if (node < 0) {
        asset.warnings.push_back("mesh '" + std::string(mesh->mName.C_Str()) + "' bone '" +
                                 mesh->mBones[b]->mName.C_Str() + "' names no node; ignored");
        continue;
      }
      if (!isJoint[static_cast<size_t>(node)]) base.push_back(node);
      isJoint[static_cast<size_t>(node)] = 1;
    }
  }
  const bool skinned = !base.empty();
  std::vector<int> animated;
  for (unsigned a = 0; a < scene.mNumAnimations; ++a) {
    const aiAnimation* animation = scene.mAnimations[a];
    for (unsigned c = 0;
         animation != nullptr && animation->mChannels != nullptr && c < animation->mNumChannels; ++c) {
      if (animation->mChannels[c] == nullptr) continue;
      const int node = graph.find(animation->mChannels[c]->mNodeName.C_Str());
      if (node >= 0) animated.push_back(node);
    }
  }
  if (!skinned) {
    for (const int node : animated) {
      if (!isJoint[static_cast<size_t>(node)]) base.push_back(node);
      isJoint[static_cast<size_t>(node)] = 1;
    }
  }
  if (base.empty()) {
    detail::NodeTree tree{{}, graph.parent, {}};
    for (int n = 0; n < nodeCount; ++n) {
      tree.names.push_back(graph.name(n));
      tree.hasMeshes.push_back(graph.hasMeshes(n) ? 1 : 0);
    }
    std::string reason;
    base = detail::nodeSkeleton(tree, asset.humanoidBones, reason);
    for (const int node : base) isJoint[static_cast<size_t>(node)] = 1;
    if (!base.empty()) asset.warnings.push_back(reason);
  }
  if (base.empty()) {
    return Error{source + ": no skeleton: the file has no skinned bones and no animated nodes"};
  }
  int root = base.front();
  for (const int node : base) root = lowestCommonAncestor(graph, root, node);
  if (const int above = graph.parent[static_cast<size_t>(root)]; above >= 0) {
    const Vec3 s = glm::abs(rigidPart(graph.global[static_cast<size_t>(above)]).scale);
    built.ancestorScale = (s.x + s.y + s.z) / 3.0;
    for (int n = above; n >= 0; n = graph.parent[static_cast<size_t>(n)]) {
      const Vec3 own = glm::abs(rigidPart(graph.local[static_cast<size_t>(n)]).scale);
      if (std::abs((own.x + own.y + own.z) / 3.0 - 1.0) > 1e-6) built.scaledAncestor = graph.name(n);
    }
  }
  if (skinned) {
    // Animated nodes inside the skin's subtree (bones without weights, helpers) are joints too;
    // animated nodes above the root are baked into the root, others are ignored.
    for (const int node : animated) {
      if (node != root && isAncestorOrSelf(graph, root, node)) isJoint[static_cast<size_t>(node)] = 1;
    }
  }
  for (int node = 0; node < nodeCount; ++node) {
    if (!isJoint[static_cast<size_t>(node)]) continue;
    for (int n = node; n != root && n >= 0; n = graph.parent[static_cast<size_t>(n)]) {
      isJoint[static_cast<size_t>(n)] = 1;
    }
  }
  isJoint[static_cast<size_t>(root)] = 1;
  // Nodes outside the root's subtree cannot be joints (they were animated nodes of another tree
  // in a file with a skin).
  for (int node = 0; node < nodeCount; ++node) {
    if (isJoint[static_cast<size_t>(node)] && !isAncestorOrSelf(graph, root, node))
      isJoint[static_cast<size_t>(node)] = 0;
  }

  std::vector<int> jointOfNode(static_cast<size_t>(nodeCount), -1);
  Skeleton& skeleton = asset.skeleton;
  for (int node = 0; node < nodeCount; ++node) {
    if (!isJoint[static_cast<size_t>(node)]) continue;
    const int joint = static_cast<int>(built.jointNode.size());
    jointOfNode[static_cast<size_t>(node)] = joint;
    built.jointNode.push_back(node);
    const int parentNode = graph.parent[static_cast<size_t>(node)];
    skeleton.parents.push_back(node == root || parentNode < 0 ? kNoParent
                                                              : jointOfNode[static_cast<size_t>(parentNode)]);
    std::string name = graph.name(node);
    if (name.empty()) name = "joint" + std::to_string(joint);
    skeleton.jointNames.push_back(name);
  }
  const int jointCount = skeleton.jointCount();
  if (jointCount > 65535) {
    return Error{source + ": " + std::to_string(jointCount) + " joints, more than the 65535 supported"};
  }
  // Unique names (Skeleton::validate requires them).
  {
    std::map<std::string, int> uses;
    for (const std::string& name : skeleton.jointNames) ++uses[name];
    std::map<std::string, int> next;
    for (std::string& name : skeleton.jointNames) {
      if (uses[name] < 2) continue;
      const std::string original = name;
      name = original + "#" + std::to_string(++next[original]);
      asset.warnings.push_back("joint name '" + original + "' appears more than once; renamed '" + name +
                               "'");
    }
  }

  if (skinned) applySkinBindPose(scene, graph, asset.warnings);

  // Rest pose in model space (Y up, file units), then local.
  ModelSpace space{built.upFromFile, &asset.warnings};
  std::vector<Transform> models(static_cast<size_t>(jointCount));
  for (int j = 0; j < jointCount; ++j) {
    const int node = built.jointNode[static_cast<size_t>(j)];
    models[static_cast<size_t>(j)] = space.rigid(graph.global[static_cast<size_t>(node)], graph.name(node));
  }
  skeleton.restLocal.resize(static_cast<size_t>(jointCount));
  modelToLocal(skeleton, models, skeleton.restLocal);

  // End sites: a joint without child joints takes its first leaf child node without meshes
  // (BVH "EndSite_<joint>", Blender's "<bone>_end") as its tip.
  skeleton.endSiteOffset.assign(static_cast<size_t>(jointCount), Vec3{0.0});
  std::vector<char> hasChildJoint(static_cast<size_t>(jointCount), 0);
  for (int j = 0; j < jointCount; ++j) {
    const int parent = skeleton.parents[static_cast<size_t>(j)];
    if (parent != kNoParent) hasChildJoint[static_cast<size_t>(parent)] = 1;
  }
  for (int j = 0; j < jointCount; ++j) {
    if (hasChildJoint[static_cast<size_t>(j)]) continue;
    const aiNode* node = graph.nodes[static_cast<size_t>(built.jointNode[static_cast<size_t>(j)])];
    for (unsigned c = 0; c < node->mNumChildren; ++c) {
      const aiNode* child = node->mChildren[c];
      if (child == nullptr || child->mNumChildren > 0 || child->mNumMeshes > 0) continue;
      const Vec3 tip = Transform::fromRotation(built.upFromFile)
                           .transformPoint(column(
                               graph.global[static_cast<size_t>(built.jointNode[static_cast<size_t>(j)])] *
                                   toMat4(child->mTransformation),
                               3));
      skeleton.endSiteOffset[static_cast<size_t>(j)] =
          models[static_cast<size_t>(j)].inverse().transformPoint(tip);
      break;
    }
  }
  return {};
}

/// The nodes whose transforms reach the joints (ancestors-or-self of a joint), in order.
std::vector<int> neededNodes(const SceneGraph& graph, const std::vector<int>& jointNode) {
  std::vector<char> needed(static_cast<size_t>(graph.count()), 0);
  for (const int node : jointNode) {
    for (int n = node; n >= 0 && !needed[static_cast<size_t>(n)]; n = graph.parent[static_cast<size_t>(n)]) {
      needed[static_cast<size_t>(n)] = 1;
    }
  }
  std::vector<int> result;
  for (int n = 0; n < graph.count(); ++n) {
    if (needed[static_cast<size_t>(n)]) result.push_back(n);
  }
  return result;
}

Status buildClips(const aiScene& scene, const std::string& source, const ImportOptions& options,
                  Built& built) {
  const SceneGraph& graph = built.graph;
  ImportedAsset& asset = built.asset;
  const Skeleton& skeleton = asset.skeleton;
  const int jointCount = skeleton.jointCount();
  const std::vector<int> needed = neededNodes(graph, built.jointNode);
  std::vector<Trs> restTrs(static_cast<size_t>(graph.count()));
  for (const int n : needed) restTrs[static_cast<size_t>(n)] = decompose(graph.local[static_cast<size_t>(n)]);
  ModelSpace space{built.upFromFile, &asset.warnings};
  space.warnedScale = true;  // reported once for the rest pose
  space.warnedMirror = true;

  for (unsigned a = 0; a < scene.mNumAnimations; ++a) {
    const aiAnimation* animation = scene.mAnimations[a];
    if (animation == nullptr) continue;
    Clip clip;
    clip.name = animation->mName.length > 0 ? animation->mName.C_Str() : "clip" + std::to_string(a);
    const std::string what = source + ": clip '" + clip.name + "'";
    double ticksPerSecond = animation->mTicksPerSecond;
    if (!(ticksPerSecond > 0.0) || !std::isfinite(ticksPerSecond)) {
      ticksPerSecond = 25.0;  // Assimp's documented default when the file gives none
      asset.warnings.push_back("clip '" + clip.name + "' has no tick rate; 25 ticks/s assumed");
    }
    const double duration = animation->mDuration / ticksPerSecond;  // [s]
    if (!std::isfinite(duration) || duration < 0.0) {
      return Error{what + " has an invalid duration (" + format(animation->mDuration) + " ticks)"};
    }
    const double exactFrames = duration * options.resampleRate;
    if (exactFrames > kMaxFramesPerClip) {
      return Error{what + " is implausibly long (" + format(duration) + " s)"};
    }
    if (duration > 0.0) {
      // frameCount = ceil(duration * rate) + 1 and frameRate = (frameCount - 1) / duration, so the
      // last frame falls exactly on the duration. Durations come from float key times (glTF's
      // 1/3 s arrives as 333.333344 ms): the 1e-4 frame tolerance keeps 20.0000006 frames at 20.
      clip.frameCount = static_cast<int>(std::ceil(exactFrames - 1e-4)) + 1;
      // A clip shorter than the tolerance is one frame (frameRate 0 would be an invalid clip).
      clip.frameRate = clip.frameCount > 1 ? (clip.frameCount - 1) / duration : options.resampleRate;
    } else {
      clip.frameCount = 1;
      clip.frameRate = options.resampleRate;
    }
    clip.jointCount = jointCount;
    if (static_cast<size_t>(clip.frameCount) * static_cast<size_t>(jointCount) > kMaxKeysPerClip) {
      return Error{what + " needs too many keys (" + std::to_string(clip.frameCount) + " frames x " +
                   std::to_string(jointCount) + " joints)"};
    }

    std::vector<const aiNodeAnim*> channelOf(static_cast<size_t>(graph.count()), nullptr);
    for (unsigned c = 0; animation->mChannels != nullptr && c < animation->mNumChannels; ++c) {
      const aiNodeAnim* channel = animation->mChannels[c];
      if (channel == nullptr) continue;
      const int node = graph.find(channel->mNodeName.C_Str());
      if (node < 0) continue;
      if (!keysSorted(channel->mPositionKeys, channel->mNumPositionKeys) ||
          !keysSorted(channel->mRotationKeys, channel->mNumRotationKeys) ||
          !keysSorted(channel->mScalingKeys, channel->mNumScalingKeys)) {
        return Error{what + " channel '" + std::string(channel->mNodeName.C_Str()) +
                     "' has key times that are not finite and increasing"};
      }
      if (channelOf[static_cast<size_t>(node)] == nullptr) channelOf[static_cast<size_t>(node)] = channel;
    }

    clip.keys.resize(static_cast<size_t>(clip.frameCount) * static_cast<size_t>(jointCount));
    std::vector<Mat4> global(static_cast<size_t>(graph.count()), Mat4(1.0));
    std::vector<Transform> models(static_cast<size_t>(jointCount));
    for (int f = 0; f < clip.frameCount; ++f) {
      const double seconds = f + 1 == clip.frameCount ? duration : f / clip.frameRate;
      const double ticks = seconds * ticksPerSecond;
      for (const int n : needed) {
        const aiNodeAnim* channel = channelOf[static_cast<size_t>(n)];
        Mat4 local = graph.local[static_cast<size_t>(n)];
        if (channel != nullptr) {
          const Trs& rest = restTrs[static_cast<size_t>(n)];
          local = composeTrs(
              sampleVector(channel->mPositionKeys, channel->mNumPositionKeys, ticks, rest.translation),
              sampleRotation(channel->mRotationKeys, channel->mNumRotationKeys, ticks, rest.rotation),
              sampleVector(channel->mScalingKeys, channel->mNumScalingKeys, ticks, rest.scale));
        }
        const int parent = graph.parent[static_cast<size_t>(n)];
        global[static_cast<size_t>(n)] = parent < 0 ? local : global[static_cast<size_t>(parent)] * local;
      }
      for (int j = 0; j < jointCount; ++j) {
        const int node = built.jointNode[static_cast<size_t>(j)];
        models[static_cast<size_t>(j)] = space.rigid(global[static_cast<size_t>(node)], graph.name(node));
      }
      const std::span<Transform> locals(
          clip.keys.data() + static_cast<size_t>(f) * static_cast<size_t>(jointCount),
          static_cast<size_t>(jointCount));
      modelToLocal(skeleton, models, locals);
    }
    asset.clips.push_back(std::move(clip));
  }
  return {};
}

// ------------------------------------------------------------------------------------------------
// Assimp front end.

// No aiProcess_ValidateDataStructure: it rejects scenes without meshes (every BVH, animation-only
// glTF/FBX files); the builders below check indices, counts and finiteness themselves. No
// aiProcess_LimitBoneWeights either: it drops the weightless skin joints that the skeleton needs.
constexpr unsigned kPostProcess = aiProcess_Triangulate | aiProcess_GenSmoothNormals;

detail::ParserLimits parserLimits(const ImportOptions& options) {
  return detail::ParserLimits{options.isolateParser, options.parserTimeLimit, options.parserMemoryLimit,
                              options.parserWorker};
}

Result<ImportedAsset> importScene(const aiScene& scene, const detail::SceneMeta& meta,
                                  const std::string& source, const ImportOptions& options,
                                  const detail::GltfInfo* gltf) {
  Built built;
  if (gltf != nullptr) {
    built.asset.warnings = gltf->warnings;
    built.asset.humanoidBones = gltf->humanoidBones;
  }
  built.graph = flatten(scene);
  if (Status status = buildSkeleton(scene, meta, source, built); !status) return Error{status.error()};
  if (Status status = buildClips(scene, source, options, built); !status) return Error{status.error()};
  buildMeshes(scene, built);

  // Units the format declares: glTF is metres by specification (armature scales are baked above),
  // FBX states centimetres per unit in UnitScaleFactor, COLLADA's <unit> is applied by Assimp.
  const std::string format = lowercase(meta.text("SourceAsset_Format"));
  if (format.find("gltf") != std::string::npos || format.find("collada") != std::string::npos) {
    built.declaredUnitScale = 1.0;
  } else if (format.find("fbx") != std::string::npos) {
    built.fbx = true;
    if (const std::optional<double> factor = meta.real("UnitScaleFactor"); factor && *factor > 0.0) {
      built.declaredUnitScale = *factor * 0.01;
    }
  }
  if (Status status = finish(built, source, options); !status) return Error{status.error()};
  std::vector<HumanoidBone> known;
  for (HumanoidBone& bone : built.asset.humanoidBones) {
    if (built.asset.skeleton.findJoint(bone.joint) >= 0) {
      known.push_back(std::move(bone));
    } else {
      built.asset.warnings.push_back("humanoid bone '" + bone.role + "' names '" + bone.joint +
                                     "', which is not a joint of the skeleton; ignored");
    }
  }
  built.asset.humanoidBones = std::move(known);
  return std::move(built.asset);
}

Status checkOptions(const std::string& source, const ImportOptions& options) {
  if (!(options.unitScale >= 0.0) || !std::isfinite(options.unitScale)) {
    return Error{source + ": ImportOptions::unitScale must be 0 (auto) or positive, got " +
                 format(options.unitScale)};
  }
  if (!(options.parserTimeLimit > 0.0) || !(options.parserMemoryLimit > 0.0)) {
    return Error{source + ": ImportOptions::parserTimeLimit and parserMemoryLimit must be positive"};
  }
  if (!(options.resampleRate > 0.0) || !std::isfinite(options.resampleRate)) {
    return Error{source + ": ImportOptions::resampleRate must be positive, got " +
                 format(options.resampleRate)};
  }
  return {};
}

/// BVH frame rate: 1 / frame time, snapped to the nearest whole rate when within 1e-4 relative
/// (files write 1/120 s as .0083333 and DeepMimic 1/60 s as 0.016666).
double bvhFrameRate(double frameTime) {
  const double rate = 1.0 / frameTime;
  const double whole = std::round(rate);
  return whole >= 1.0 && std::abs(rate - whole) <= 1e-4 * whole ? whole : rate;
}

/// Cross-check of the text's keys against Assimp's own (single precision, see bvh_check.h):
/// a difference beyond float round-off means Assimp read the motion differently; the text wins
/// and a warning says where.
void compareWithAssimp(const aiScene& scene, const detail::BvhData& bvh, const Clip& clip,
                       std::vector<std::string>& warnings) {
  if (scene.mNumAnimations != 1 || scene.mAnimations[0] == nullptr) {
    warnings.push_back("Assimp produced " + std::to_string(scene.mNumAnimations) +
                       " animations for the BVH motion; the text is used");
    return;
  }
  const aiAnimation& animation = *scene.mAnimations[0];
  double worstAngle = 0.0;     // [rad]
  double worstDistance = 0.0;  // relative to the joint's size
  std::string angleWhere;
  std::string distanceWhere;
  for (unsigned c = 0; c < animation.mNumChannels; ++c) {
    const aiNodeAnim* channel = animation.mChannels[c];
    if (channel == nullptr) continue;
    int joint = -1;
    for (int j = 0; j < static_cast<int>(bvh.joints.size()); ++j) {
      if (bvh.joints[static_cast<size_t>(j)].name == channel->mNodeName.C_Str()) joint = j;
    }
    if (joint < 0) continue;
    const std::string& name = bvh.joints[static_cast<size_t>(joint)].name;
    const double size = 1.0 + glm::length(bvh.joints[static_cast<size_t>(joint)].offset);
    for (int f = 0; f < clip.frameCount; ++f) {
      const Transform& ours = clip.keys[static_cast<size_t>(f) * static_cast<size_t>(clip.jointCount) +
                                        static_cast<size_t>(joint)];
      if (channel->mRotationKeys != nullptr &&
          channel->mNumRotationKeys == static_cast<unsigned>(clip.frameCount)) {
        const double angle = angleBetween(ours.rotation, toQuat(channel->mRotationKeys[f].mValue));
        if (angle > worstAngle) {
          worstAngle = angle;
          angleWhere = "joint '" + name + "' frame " + std::to_string(f);
        }
      }
      const unsigned positionKeys = channel->mNumPositionKeys;
      if (channel->mPositionKeys != nullptr && positionKeys > 0) {
        const unsigned key = std::min(static_cast<unsigned>(f), positionKeys - 1);
        const Vec3 theirs = toVec3(channel->mPositionKeys[key].mValue);
        const double distance =
            glm::length(ours.translation - theirs) / (size + glm::length(ours.translation));
        if (distance > worstDistance) {
          worstDistance = distance;
          distanceWhere = "joint '" + name + "' frame " + std::to_string(f);
        }
      }
    }
  }
  // Float round-off is about 1e-6 rad and 1e-7 relative on real files.
  if (worstAngle > 1e-4) {
    warnings.push_back("Assimp's own reading of the BVH rotations differs from the text by up to " +
                       format(worstAngle) + " rad (" + angleWhere + "); the text is used");
  }
  if (worstDistance > 1e-5) {
    warnings.push_back("Assimp's own reading of the BVH translations differs from the text (" +
                       distanceWhere +
                       ", e.g. position channels on a joint without exactly 6 channels); the text is used");
  }
}

Result<ImportedAsset> importBvh(std::string_view text, const std::string& source,
                                const ImportOptions& options) {
  Result<detail::BvhData> checked = detail::checkBvh(text, source);
  if (!checked) return Error{checked.error()};
  const detail::BvhData& bvh = checked.value();

  Assimp::Importer importer;
  Result<detail::ReadResult> read =
      detail::readAssimp(importer, source, parserLimits(options),
                         detail::ParseRequest{true, {}, text, "bvh", kPostProcess, "bvh"});
  if (!read) return Error{read.error()};
  const aiScene& scene = *read->scene;

  Built built;
  built.graph = flatten(scene);
  if (Status status = buildSkeleton(scene, read->meta, source, built); !status) return Error{status.error()};
  ImportedAsset& asset = built.asset;
  Skeleton& skeleton = asset.skeleton;

  // Assimp's hierarchy must be the text's: same joints, names and parents (its "EndSite_<joint>"
  // nodes are not joints).
  const int jointCount = static_cast<int>(bvh.joints.size());
  if (skeleton.jointCount() != jointCount) {
    return Error{source + ": Assimp read " + std::to_string(skeleton.jointCount()) +
                 " joints, the text has " + std::to_string(jointCount)};
  }
  for (int j = 0; j < jointCount; ++j) {
    const detail::BvhJoint& joint = bvh.joints[static_cast<size_t>(j)];
    if (skeleton.jointNames[static_cast<size_t>(j)] != joint.name ||
        skeleton.parents[static_cast<size_t>(j)] != joint.parent) {
      return Error{source + ":" + std::to_string(joint.line) +
                   ": Assimp's hierarchy disagrees with the text at joint '" + joint.name + "'"};
    }
  }
  asset.warnings.insert(asset.warnings.end(), bvh.warnings.begin(), bvh.warnings.end());

  // Rest pose and keys from the text in double precision (Assimp composes in float).
  for (int j = 0; j < jointCount; ++j) {
    const detail::BvhJoint& joint = bvh.joints[static_cast<size_t>(j)];
    skeleton.restLocal[static_cast<size_t>(j)] = Transform::fromTranslation(joint.offset);
    skeleton.endSiteOffset[static_cast<size_t>(j)] = joint.hasEndSite ? joint.endSiteOffset : Vec3{0.0};
  }
  if (bvh.frameCount > 0) {
    Clip clip;
    clip.name = stemOf(source);
    clip.jointCount = jointCount;
    clip.frameCount = bvh.frameCount;
    clip.frameRate = bvhFrameRate(bvh.frameTime);
    if (static_cast<size_t>(clip.frameCount) * static_cast<size_t>(jointCount) > kMaxKeysPerClip) {
      return Error{source + ": too many keys (" + std::to_string(clip.frameCount) + " frames x " +
                   std::to_string(jointCount) + " joints)"};
    }
    clip.keys.resize(static_cast<size_t>(clip.frameCount) * static_cast<size_t>(jointCount));
    for (int f = 0; f < clip.frameCount; ++f) {
      for (int j = 0; j < jointCount; ++j) {
        clip.keys[static_cast<size_t>(f) * static_cast<size_t>(jointCount) + static_cast<size_t>(j)] =
            detail::bvhLocal(bvh, j, f);
      }
    }
    compareWithAssimp(scene, bvh, clip, asset.warnings);
    asset.clips.push_back(std::move(clip));
  } else {
    asset.warnings.push_back("'Frames: 0': the file has a skeleton but no motion");
  }
  orientBvh(asset);
  if (Status status = finish(built, source, options); !status) return Error{status.error()};
  return std::move(built.asset);
}

bool looksLikeBvh(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string word;
  in >> word;
  return word == "HIERARCHY";
}

bool isCheckedFormat(const std::string& extension) {
  return extension == ".glb" || extension == ".gltf" || extension == ".vrm" || extension == ".fbx" ||
         extension == ".dae";
}

/// A glTF/GLB/VRM, FBX or COLLADA file (or any other format Assimp reads, unchecked) through its
/// format's checks and Assimp. `data` holds the bytes of the checked formats; `path` is the file
/// Assimp reads when it may need the files beside it (a .gltf's buffers), empty for bytes in memory.
Result<ImportedAsset> importThroughAssimp(std::string_view data, const std::string& source,
                                          const std::string& path, const std::string& extension,
                                          const ImportOptions& options) {
  detail::GltfInfo gltf;
  Assimp::Importer importer;
  if (extension == ".glb" || extension == ".gltf" || extension == ".vrm") {
    // Assimp picks its reader by extension: a .vrm (a GLB) is read from memory.
    Result<detail::ReadResult> read = detail::readGltf(importer, data, source, path, extension == ".vrm",
                                                       parserLimits(options), kPostProcess, gltf);
    if (!read) return Error{read.error()};
    Result<ImportedAsset> imported = importScene(*read->scene, read->meta, source, options, &gltf);
    if (!imported) return Error{validUtf8(imported.error())};
    return imported;
  }
  const bool fromMemory = path.empty();
  const std::string hint = extension.size() > 1 ? extension.substr(1) : std::string();
  std::string only;  // the extension whose Assimp importers are kept
  if (extension == ".fbx") {
    if (Status status = detail::checkFbx(data, source); !status) return Error{validUtf8(status.error())};
    only = "fbx";
  } else if (extension == ".dae") {
    if (Status status = detail::checkCollada(data, source); !status) return Error{validUtf8(status.error())};
    only = "dae";
  }
  Result<detail::ReadResult> read = detail::readAssimp(
      importer, source, parserLimits(options),
      detail::ParseRequest{fromMemory, fromMemory ? std::string() : path,
                           fromMemory ? data : std::string_view(), hint, kPostProcess, only});
  if (!read) return Error{validUtf8(read.error())};
  Result<ImportedAsset> imported = importScene(*read->scene, read->meta, source, options, &gltf);
  if (!imported) return Error{validUtf8(imported.error())};
  return imported;
}

}  // namespace

Result<ImportedAsset> importFile(const std::string& path, const ImportOptions& options) {
  if (Status status = checkOptions(path, options); !status) return Error{status.error()};
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return Error{path + ": file not found"};
  if (std::filesystem::is_directory(status)) return Error{path + ": is a directory, not a file"};

  try {
    const std::string extension = extensionOf(path);
    const bool bvh = extension == ".bvh" || looksLikeBvh(path);
    if (!bvh && !isCheckedFormat(extension)) {
      // Other formats Assimp reads (OBJ, 3DS, ...): no checks of ours, Assimp contained.
      return importThroughAssimp({}, path, path, extension, options);
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error{path + ": cannot open the file for reading"};
    std::ostringstream buffer;
    buffer << in.rdbuf();  // the stream buffer's bulk copy, not a character at a time
    if (in.bad()) return Error{path + ": read error"};
    const std::string bytes = std::move(buffer).str();
    if (bvh) {
      Result<ImportedAsset> imported = importBvh(bytes, path, options);
      if (!imported) return Error{validUtf8(imported.error())};
      return imported;
    }
    return importThroughAssimp(bytes, path, path, extension, options);
  } catch (const std::bad_alloc&) {
    return Error{path + ": out of memory while importing"};
  } catch (const std::exception& e) {
    return Error{path + ": import failed: " + e.what()};
  }
}

Result<ImportedAsset> importFileData(std::string_view data, const std::string& sourceName,
                                     const ImportOptions& options) {
  if (Status status = checkOptions(sourceName, options); !status) return Error{status.error()};
  try {
    const std::string extension = extensionOf(sourceName);
    if (extension == ".bvh" ||
        (data.substr(0, std::min<size_t>(data.size(), 64)).find("HIERARCHY") != std::string_view::npos)) {
      Result<ImportedAsset> imported = importBvh(data, sourceName, options);
      if (!imported) return Error{validUtf8(imported.error())};
      return imported;
    }
    if (extension.size() < 2) return Error{sourceName + ": no file extension to tell the format by"};
    return importThroughAssimp(data, sourceName, {}, extension, options);
  } catch (const std::bad_alloc&) {
    return Error{sourceName + ": out of memory while importing"};
  } catch (const std::exception& e) {
    return Error{sourceName + ": import failed: " + e.what()};
  }
}

Result<ImportedAsset> importBvhText(std::string_view text, const std::string& sourceName,
                                    const ImportOptions& options) {
  if (Status status = checkOptions(sourceName, options); !status) return Error{status.error()};
  try {
    Result<ImportedAsset> imported = importBvh(text, sourceName, options);
    // Messages quote the text (names, tokens), which may be any bytes.
    if (!imported) return Error{validUtf8(imported.error())};
    return imported;
  } catch (const std::bad_alloc&) {
    return Error{sourceName + ": out of memory while importing"};
  } catch (const std::exception& e) {
    return Error{sourceName + ": import failed: " + e.what()};
  }
}

}  // namespace handoff
