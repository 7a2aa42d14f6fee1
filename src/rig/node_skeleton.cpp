#include "rig/node_skeleton.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace handoff::detail {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// "Hips", "mixamorig:Hips", "Character1_Hips", "J_Bip_C_Hips", "pelvis", "hip".
bool pelvisName(std::string_view name) {
  std::string core =
      lower(name.substr(name.find_last_of(':') == std::string_view::npos ? 0 : name.find_last_of(':') + 1));
  for (const char* n : {"hips", "hip", "pelvis"}) {
    const std::string s = n;
    if (core == s) return true;
    if (core.size() > s.size() + 1 && core.compare(core.size() - s.size(), s.size(), s) == 0 &&
        (core[core.size() - s.size() - 1] == '_' || core[core.size() - s.size() - 1] == ' '))
      return true;
  }
  return false;
}

/// The node named `name`, a mesh-less one first; -1 when none.
int findNode(const NodeTree& tree, const std::string& name) {
  int best = -1;
  for (int n = 0; n < static_cast<int>(tree.names.size()); ++n) {
    if (tree.names[static_cast<size_t>(n)] != name) continue;
    if (best < 0 || (tree.hasMeshes[static_cast<size_t>(best)] && !tree.hasMeshes[static_cast<size_t>(n)]))
      best = n;
  }
  return best;
}

}  // namespace

std::vector<int> nodeSkeleton(const NodeTree& tree, const std::vector<HumanoidBone>& humanoidBones,
                              std::string& reason) {
  std::vector<int> nodes;
  for (const HumanoidBone& bone : humanoidBones) {
    const int n = findNode(tree, bone.joint);
    if (n >= 0 && std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
  }
  if (!nodes.empty()) {
    std::sort(nodes.begin(), nodes.end());
    reason = "no skinned bones or animated nodes: the skeleton is the " + std::to_string(nodes.size()) +
             " nodes the file's humanoid bones name";
    return nodes;
  }
  const int count = static_cast<int>(tree.names.size());
  for (int hips = 0; hips < count; ++hips) {
    if (tree.hasMeshes[static_cast<size_t>(hips)] || !pelvisName(tree.names[static_cast<size_t>(hips)]))
      continue;
    std::vector<char> inside(static_cast<size_t>(count), 0);
    inside[static_cast<size_t>(hips)] = 1;
    nodes = {hips};
    for (int n = hips + 1; n < count; ++n) {
      const int parent = tree.parents[static_cast<size_t>(n)];
      if (parent >= 0 && inside[static_cast<size_t>(parent)] && !tree.hasMeshes[static_cast<size_t>(n)]) {
        inside[static_cast<size_t>(n)] = 1;
        nodes.push_back(n);
      }
    }
    if (static_cast<int>(nodes.size()) >= kMinNodeSkeleton) {
      reason = "no skinned bones or animated nodes: the skeleton is the " + std::to_string(nodes.size()) +
               " mesh-less nodes under '" + tree.names[static_cast<size_t>(hips)] + "'";
      return nodes;
    }
  }
  return {};
}

}  // namespace handoff::detail
