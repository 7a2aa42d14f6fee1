// GLB container, JSON and extension checks before Assimp (gltf_check.h).
#include "rig/gltf_check.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <cstring>

namespace handoff::detail {
namespace {

std::uint32_t readU32(std::string_view data, size_t at) {
  std::uint32_t v = 0;
  std::memcpy(&v, data.data() + at, sizeof v);  // GLB is little-endian, as every target here
  return v;
}

constexpr std::uint32_t kGlbMagic = 0x46546C67;  // "glTF"
constexpr std::uint32_t kChunkJson = 0x4E4F534A;
constexpr std::uint32_t kChunkBin = 0x004E4942;

/// Extensions that change how geometry or buffers are read and that Assimp 5.2 does not implement.
/// A file that requires one cannot be read; a file that only uses one has a fallback.
struct Unreadable {
  const char* name;
  const char* what;
};
constexpr std::array<Unreadable, 2> kUnreadable{{
    {"EXT_meshopt_compression", "meshoptimizer-compressed buffer views"},
    {"KHR_meshopt_compression", "meshoptimizer-compressed buffer views"},
}};

/// VRM 0.x: extensions.VRM.humanoid.humanBones = [{"bone": "hips", "node": 3}, ...];
/// VRM 1.0: extensions.VRMC_vrm.humanoid.humanBones = {"hips": {"node": 3}, ...}.
void readVrmHumanoid(const nlohmann::json& doc, GltfInfo& info) {
  const auto nodeName = [&](const nlohmann::json& index) -> std::string {
    if (!index.is_number_integer() || !doc.contains("nodes") || !doc["nodes"].is_array()) return {};
    const auto i = index.get<long long>();
    if (i < 0 || static_cast<size_t>(i) >= doc["nodes"].size()) return {};
    const nlohmann::json& node = doc["nodes"][static_cast<size_t>(i)];
    if (!node.is_object() || !node.contains("name") || !node["name"].is_string()) return {};
    return node["name"].get<std::string>();
  };
  const auto add = [&](const std::string& role, const nlohmann::json& index) {
    const std::string name = nodeName(index);
    if (name.empty()) {
      info.warnings.push_back("VRM human bone '" + role + "' names no named node; ignored");
      return;
    }
    info.humanoidBones.push_back(HumanoidBone{role, name});
  };
  if (!doc.contains("extensions") || !doc["extensions"].is_object()) return;
  const nlohmann::json& ext = doc["extensions"];
  if (ext.contains("VRMC_vrm") && ext["VRMC_vrm"].is_object()) {
    const nlohmann::json& vrm = ext["VRMC_vrm"];
    if (vrm.contains("humanoid") && vrm["humanoid"].is_object() && vrm["humanoid"].contains("humanBones") &&
        vrm["humanoid"]["humanBones"].is_object()) {
      for (const auto& [role, bone] : vrm["humanoid"]["humanBones"].items()) {
        if (bone.is_object() && bone.contains("node")) add(role, bone["node"]);
      }
    }
  } else if (ext.contains("VRM") && ext["VRM"].is_object()) {
    const nlohmann::json& vrm = ext["VRM"];
    if (vrm.contains("humanoid") && vrm["humanoid"].is_object() && vrm["humanoid"].contains("humanBones") &&
        vrm["humanoid"]["humanBones"].is_array()) {
      for (const nlohmann::json& bone : vrm["humanoid"]["humanBones"]) {
        if (bone.is_object() && bone.contains("bone") && bone["bone"].is_string() && bone.contains("node"))
          add(bone["bone"].get<std::string>(), bone["node"]);
      }
    }
  }
}

}  // namespace

Result<GltfInfo> checkGltf(std::string_view data, bool binary, const std::string& source) {
  std::string_view json = data;
  if (binary) {
    if (data.size() < 12) return Error{source + ": not a GLB file: " + std::to_string(data.size()) + " bytes"};
    if (readU32(data, 0) != kGlbMagic) return Error{source + ": not a GLB file: the magic is not 'glTF'"};
    if (const std::uint32_t version = readU32(data, 4); version != 2) {
      return Error{source + ": GLB version " + std::to_string(version) + ": only glTF 2.0 is read"};
    }
    const std::uint32_t length = readU32(data, 8);
    if (length > data.size() || length < 20) {
      return Error{source + ": GLB header length " + std::to_string(length) + " but the file has " +
                   std::to_string(data.size()) + " bytes (truncated or corrupt)"};
    }
    size_t at = 12;
    bool first = true;
    while (at + 8 <= length) {
      const std::uint32_t chunkLength = readU32(data, at);
      const std::uint32_t type = readU32(data, at + 4);
      if (chunkLength > length - at - 8) {
        return Error{source + ": GLB chunk at byte " + std::to_string(at) + " is " + std::to_string(chunkLength) +
                     " bytes long, past the end of the file"};
      }
      if (first) {
        if (type != kChunkJson) return Error{source + ": the first GLB chunk is not JSON"};
        json = data.substr(at + 8, chunkLength);
        first = false;
      } else if (type != kChunkBin) {
        // Unknown chunk types are skipped by the specification.
      }
      at += 8 + static_cast<size_t>(chunkLength);
    }
    if (first) return Error{source + ": the GLB file has no JSON chunk"};
  }
  const nlohmann::json doc = nlohmann::json::parse(json.begin(), json.end(), nullptr, false);
  if (doc.is_discarded()) return Error{source + ": the glTF JSON does not parse"};
  if (!doc.is_object()) return Error{source + ": the glTF JSON is not an object"};
  if (!doc.contains("asset") || !doc["asset"].is_object() || !doc["asset"].contains("version") ||
      !doc["asset"]["version"].is_string()) {
    return Error{source + ": glTF without asset.version"};
  }
  if (const std::string version = doc["asset"]["version"].get<std::string>(); version.rfind("2.", 0) != 0) {
    return Error{source + ": glTF asset.version '" + version + "': only glTF 2.0 is read"};
  }
  GltfInfo info;
  const auto listed = [&](const char* key, const std::string& name) {
    if (!doc.contains(key) || !doc[key].is_array()) return false;
    for (const nlohmann::json& e : doc[key]) {
      if (e.is_string() && e.get<std::string>() == name) return true;
    }
    return false;
  };
  for (const Unreadable& u : kUnreadable) {
    if (listed("extensionsRequired", u.name)) {
      return Error{source + ": requires the glTF extension " + u.name + " (" + u.what +
                   "), which the importer (Assimp 5.2) cannot read: export the file without it (e.g. "
                   "gltfpack without -c / -cc, or Blender without compression)"};
    }
    if (listed("extensionsUsed", u.name)) {
      info.warnings.push_back(std::string("uses the glTF extension ") + u.name +
                              " without requiring it: its uncompressed fallback buffers are read");
    }
  }
  readVrmHumanoid(doc, info);
  return info;
}

}  // namespace handoff::detail
