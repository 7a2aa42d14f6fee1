// GLB container and JSON before Assimp; meshopt decoding and dequantization into a rewritten GLB; the
// VRM humanoid (gltf_check.h). Buffers: gltf_buffers.cpp; indices and bounds: gltf_structure.cpp;
// Draco: gltf_draco.cpp.
#include "rig/gltf_check.h"
#include "handoff/rig.h"
#include "rig/gltf_animations.h"
#include "rig/gltf_internal.h"

#include <meshoptimizer.h>
#include <glm/gtc/matrix_transform.hpp>
#include <glm/gtc/quaternion.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <set>

namespace handoff::detail {
namespace gltf {
namespace {

// ------------------------------------------------------------------------------------------------
// The rewrite: meshopt buffer views decoded, quantized data as floats, one buffer, a GLB.

/// Accessors whose values are real numbers to Assimp: vertex attributes but joints, morph targets,
/// animation keys and values, inverse bind matrices.
std::set<size_t> realAccessors(const Json& doc) {
  std::set<size_t> real;
  const auto add = [&](const Json* value) {
    if (value != nullptr && value->is_number_unsigned()) real.insert(value->get<size_t>());
  };
  static const Json kNone = Json::array();
  const auto list = [](const Json& object, const char* key) -> const Json& {
    const Json* value = find(object, key);
    return value != nullptr ? *value : kNone;
  };
  for (const Json& mesh : list(doc, "meshes")) {
    for (const Json& primitive : list(mesh, "primitives")) {
      if (const Json* attributes = find(primitive, "attributes")) {
        for (const auto& [name, value] : attributes->items()) {
          if (name.rfind("JOINTS_", 0) != 0) add(&value);
        }
      }
      for (const Json& target : list(primitive, "targets")) {
        for (const auto& [name, value] : target.items()) add(&value);
      }
    }
  }
  for (const Json& animation : list(doc, "animations")) {
    for (const Json& sampler : list(animation, "samplers")) {
      add(find(sampler, "input"));
      add(find(sampler, "output"));
    }
  }
  for (const Json& skin : list(doc, "skins")) add(find(skin, "inverseBindMatrices"));
  return real;
}

/// A meshopt buffer view's decoded content.
std::string decodeView(const Json& doc, const Buffers& buffers, size_t v, std::uint64_t& decodedTotal) {
  const Json& view = doc["bufferViews"][v];
  const char* name = meshoptName(view);
  const std::string path = member(member(item("bufferViews", v), "extensions"), name);
  const Json& ext = objectAt(view["extensions"][name], path);
  const std::uint64_t buffer = natural(ext, "buffer", path, std::nullopt);
  if (buffer >= buffers.data.size()) invalid(member(path, "buffer"), "is not a buffer index");
  if (!buffers.data[static_cast<size_t>(buffer)])
    invalid(member(path, "buffer"), "is a fallback buffer without data");
  const std::string_view source = *buffers.data[static_cast<size_t>(buffer)];
  const std::uint64_t offset = natural(ext, "byteOffset", path, 0);
  const std::uint64_t length = natural(ext, "byteLength", path, std::nullopt, 1);
  if (offset + length > source.size())
    invalid(path, "the compressed bytes run past buffer " + std::to_string(buffer));
  const std::uint64_t stride = natural(ext, "byteStride", path, std::nullopt, 1);
  const std::uint64_t count = natural(ext, "count", path, std::nullopt, 1);
  const std::string mode = text(ext, "mode", path, std::nullopt);
  const std::string filter = text(ext, "filter", path, std::string("NONE"));
  // meshopt's codecs shrink data by a few times, by 64 at most (all-zero vertex data); 1024 times
  // the compressed bytes is no real file, and the decoded total is bounded.
  decodedTotal += count * stride;
  if (count * stride > 1024 * length + 65536 || decodedTotal > kMaxDecodedBytes) {
    invalid(path, std::to_string(count) + " elements of " + std::to_string(stride) + " bytes from " +
                      std::to_string(length) + " compressed bytes: more than meshopt data can hold");
  }
  std::string out(static_cast<size_t>(count * stride), '\0');
  const auto* in = reinterpret_cast<const unsigned char*>(source.data() + offset);
  int rc = 0;
  if (mode == "ATTRIBUTES") {
    if (stride % 4 != 0 || stride > 256)
      invalid(member(path, "byteStride"), "is not a multiple of 4 up to 256 (mode ATTRIBUTES)");
    rc = meshopt_decodeVertexBuffer(out.data(), static_cast<size_t>(count), static_cast<size_t>(stride), in,
                                    static_cast<size_t>(length));
  } else if (mode == "TRIANGLES" || mode == "INDICES") {
    if (stride != 2 && stride != 4) invalid(member(path, "byteStride"), "is not 2 or 4 (mode " + mode + ")");
    if (mode == "TRIANGLES" && count % 3 != 0)
      invalid(member(path, "count"), "is not a multiple of 3 (mode TRIANGLES)");
    rc = mode == "TRIANGLES"
             ? meshopt_decodeIndexBuffer(out.data(), static_cast<size_t>(count), static_cast<size_t>(stride),
                                         in, static_cast<size_t>(length))
             : meshopt_decodeIndexSequence(out.data(), static_cast<size_t>(count),
                                           static_cast<size_t>(stride), in, static_cast<size_t>(length));
  } else {
    invalid(member(path, "mode"), "is '" + mode + "': meshoptimizer " +
                                      std::to_string(MESHOPTIMIZER_VERSION / 1000) + "." +
                                      std::to_string(MESHOPTIMIZER_VERSION % 1000 / 10) +
                                      " decodes ATTRIBUTES, TRIANGLES and INDICES");
  }
  if (rc != 0) {
    invalid(path, rc == -1
                      ? "encoded with a meshopt codec version that meshoptimizer 0.18 cannot decode"
                      : "the compressed data is malformed (meshoptimizer error " + std::to_string(rc) + ")");
  }
  if (filter == "NONE") return out;
  if (mode != "ATTRIBUTES")
    invalid(member(path, "filter"), "is '" + filter + "' on mode " + mode + " (filters are for ATTRIBUTES)");
  if (filter == "OCTAHEDRAL") {
    if (stride != 4 && stride != 8) invalid(member(path, "byteStride"), "is not 4 or 8 (filter OCTAHEDRAL)");
    meshopt_decodeFilterOct(out.data(), static_cast<size_t>(count), static_cast<size_t>(stride));
  } else if (filter == "QUATERNION") {
    if (stride != 8) invalid(member(path, "byteStride"), "is not 8 (filter QUATERNION)");
    meshopt_decodeFilterQuat(out.data(), static_cast<size_t>(count), static_cast<size_t>(stride));
  } else if (filter == "EXPONENTIAL") {
    meshopt_decodeFilterExp(out.data(), static_cast<size_t>(count), static_cast<size_t>(stride));
  } else {
    invalid(member(path, "filter"),
            "is '" + filter +
                "': meshoptimizer 0.18 decodes the filters NONE, OCTAHEDRAL, QUATERNION and "
                "EXPONENTIAL");
  }
  return out;
}

/// A quantized accessor's values as floats (glTF's normalisation rules for normalized ones).
std::string dequantize(const Accessor& accessor, std::string_view bytes) {
  const size_t size = componentSize(accessor.componentType);
  std::string out(static_cast<size_t>(accessor.count) * accessor.components * sizeof(float), '\0');
  for (std::uint64_t e = 0; e < accessor.count; ++e) {
    for (size_t c = 0; c < accessor.components; ++c) {
      const char* p = bytes.data() + accessor.offset + e * accessor.stride + c * size;
      double value = 0.0;
      double scale = 1.0;
      switch (accessor.componentType) {
        case kByte:
          value = static_cast<std::int8_t>(*p), scale = 127.0;
          break;
        case kUnsignedByte:
          value = static_cast<std::uint8_t>(*p), scale = 255.0;
          break;
        case kShort: {
          std::int16_t v = 0;
          std::memcpy(&v, p, sizeof v);
          value = v, scale = 32767.0;
          break;
        }
        case kUnsignedShort: {
          std::uint16_t v = 0;
          std::memcpy(&v, p, sizeof v);
          value = v, scale = 65535.0;
          break;
        }
        default: {
          std::uint32_t v = 0;
          std::memcpy(&v, p, sizeof v);
          value = v, scale = 4294967295.0;
          break;
        }
      }
      const auto f = static_cast<float>(accessor.normalized ? std::max(value / scale, -1.0) : value);
      std::memcpy(out.data() + (e * accessor.components + c) * sizeof(float), &f, sizeof f);
    }
  }
  return out;
}

void removeExtension(Json& doc, const char* list, const char* name) {
  if (!doc.contains(list) || !doc[list].is_array()) return;
  Json kept = Json::array();
  for (const Json& e : doc[list]) {
    if (!(e.is_string() && e.get<std::string>() == name)) kept.push_back(e);
  }
  if (kept.empty()) {
    doc.erase(list);
  } else {
    doc[list] = std::move(kept);
  }
}

std::string writeGlb(const Json& doc, const std::string& bin) {
  std::string json = doc.dump();
  json.resize((json.size() + 3) / 4 * 4, ' ');
  const auto u32 = [](std::string& out, size_t v) {
    const auto x = static_cast<std::uint32_t>(v);
    out.append(reinterpret_cast<const char*>(&x), sizeof x);
  };
  std::string out;
  u32(out, kGlbMagic);
  u32(out, 2);
  u32(out, 12 + 8 + json.size() + 8 + bin.size());
  u32(out, json.size());
  u32(out, kChunkJson);
  out += json;
  u32(out, bin.size());
  u32(out, kChunkBin);
  out += bin;
  return out;
}

/// Every node's transform in the scene's space (glTF: matrix, or translation * rotation * scale);
/// the node tree is checked acyclic.
std::vector<glm::dmat4> nodeGlobals(const Json& doc) {
  const Json* nodes = find(doc, "nodes");
  const size_t n = nodes != nullptr ? nodes->size() : 0;
  std::vector<glm::dmat4> local(n, glm::dmat4(1.0));
  std::vector<long long> parent(n, -1);
  const auto vec = [](const Json& node, const char* key, size_t i, double fallback) {
    return node.contains(key) ? (*find(node, key))[i].get<double>() : fallback;
  };
  for (size_t i = 0; i < n; ++i) {
    const Json& node = (*nodes)[i];
    if (node.contains("matrix")) {
      for (int c = 0; c < 4; ++c) {
        for (int r = 0; r < 4; ++r)
          local[i][c][r] = node["matrix"][static_cast<size_t>(4 * c + r)].get<double>();
      }
    } else {
      const glm::dvec3 t{vec(node, "translation", 0, 0), vec(node, "translation", 1, 0),
                         vec(node, "translation", 2, 0)};
      const glm::dquat q{vec(node, "rotation", 3, 1), vec(node, "rotation", 0, 0),
                         vec(node, "rotation", 1, 0), vec(node, "rotation", 2, 0)};
      const glm::dvec3 scale{vec(node, "scale", 0, 1), vec(node, "scale", 1, 1), vec(node, "scale", 2, 1)};
      local[i] = glm::translate(glm::dmat4(1.0), t) * glm::mat4_cast(q) * glm::scale(glm::dmat4(1.0), scale);
    }
    if (const Json* children = find(node, "children")) {
      for (const Json& c : *children) parent[c.get<size_t>()] = static_cast<long long>(i);
    }
  }
  std::vector<glm::dmat4> global(n);
  std::vector<char> done(n, 0);
  for (size_t i = 0; i < n; ++i) {
    std::vector<size_t> chain;
    for (long long at = static_cast<long long>(i); at >= 0 && !done[static_cast<size_t>(at)];
         at = parent[static_cast<size_t>(at)])
      chain.push_back(static_cast<size_t>(at));
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const long long p = parent[*it];
      global[*it] = p >= 0 ? global[static_cast<size_t>(p)] * local[*it] : local[*it];
      done[*it] = 1;
    }
  }
  return global;
}

/// Largest total of zero bytes written for accessors without a buffer view. [bytes]
constexpr std::uint64_t kMaxZeroBytes = 256ull << 20;

/// The rewritten GLB, or an empty string when the file has no meshopt buffer views, no quantized
/// real-valued accessors, no skin without inverse bind matrices, no external buffer, no accessor
/// without a buffer view and no per-node animations to merge.
std::string rewrite(const Json& doc, const Buffers& buffers, const std::vector<View>& views,
                    const std::vector<Accessor>& accessors, std::vector<std::string>& warnings) {
  const std::set<size_t> real = realAccessors(doc);
  const bool compressed = std::any_of(views.begin(), views.end(), [](const View& v) { return v.compressed; });
  const bool quantized = std::any_of(real.begin(), real.end(), [&](size_t a) {
    return a < accessors.size() && accessors[a].componentType != kFloat;
  });
  // glTF lets a skin leave out its inverse bind matrices; Assimp 5.2 crashes on such a skin (found
  // by handoff_fuzz_import). The rewrite writes them out as three.js reads such a skin: the
  // inverses of the joints' node transforms, the node pose being the bind pose (identities, the
  // specification's literal default, would put every joint at the origin).
  std::vector<size_t> withoutBind;
  if (const Json* skins = find(doc, "skins")) {
    for (size_t k = 0; k < skins->size(); ++k) {
      if (!(*skins)[k].contains("inverseBindMatrices")) withoutBind.push_back(k);
    }
  }
  // An accessor without a buffer view is all zeros (sparse ones aside); Assimp 5.2 refuses it
  // ("data is null"). Per-node animations on one timeline are one clip (gltf_animations.h).
  // Accessors of Draco-compressed primitives have no buffer view either: their data is in the
  // extension, decoded below (gltf_draco.cpp).
  std::set<size_t> draco;
  if (const Json* meshes = find(doc, "meshes")) {
    for (const Json& mesh : *meshes) {
      if (!mesh.contains("primitives")) continue;
      for (const Json& primitive : mesh["primitives"]) {
        if (!primitive.contains("extensions") ||
            !primitive["extensions"].contains("KHR_draco_mesh_compression"))
          continue;
        if (!primitive.contains("attributes") || !primitive["attributes"].is_object()) continue;
        for (const auto& [name, index] : primitive["attributes"].items()) draco.insert(index.get<size_t>());
        if (primitive.contains("indices")) draco.insert(primitive["indices"].get<size_t>());
      }
    }
  }
  std::vector<size_t> zeros;
  std::uint64_t zeroBytes = 0;
  for (size_t a = 0; a < accessors.size(); ++a) {
    if (accessors[a].view || accessors[a].sparse || draco.count(a)) continue;
    zeros.push_back(a);
    zeroBytes += accessors[a].count * accessors[a].elementSize;
    if (zeroBytes > kMaxZeroBytes)
      invalid(item("accessors", a), "has no bufferView and too many elements to read as zeros");
  }
  const std::optional<Json> merged = mergePerNodeAnimations(doc);
  // External buffers were read by the check: the rewrite carries their bytes, so that Assimp
  // reads no file but the one checked.
  if (!compressed && !quantized && withoutBind.empty() && zeros.empty() && !merged && !buffers.external &&
      draco.empty())
    return {};

  Json out = doc;
  std::string bin;
  const auto append = [&](std::string_view bytes) {
    bin.resize((bin.size() + 3) / 4 * 4, '\0');
    const size_t at = bin.size();
    bin.append(bytes);
    return at;
  };
  std::vector<std::string> content(views.size());
  std::uint64_t decodedTotal = 0;
  size_t decoded = 0;
  for (size_t v = 0; v < views.size(); ++v) {
    Json& view = out["bufferViews"][v];
    if (views[v].compressed) {
      const char* name = meshoptName(view);
      content[v] = decodeView(doc, buffers, v, decodedTotal);
      view["extensions"].erase(name);
      if (view["extensions"].empty()) view.erase("extensions");
      ++decoded;
    } else {
      content[v] = std::string(*viewBytes(buffers, views, v));
    }
    view["buffer"] = 0;
    view["byteOffset"] = append(content[v]);
    view["byteLength"] = content[v].size();
  }
  const size_t dracoDecoded = decodeDraco(doc, buffers, views, out, append, decodedTotal);
  size_t converted = 0;
  for (const size_t a : real) {
    if (a >= accessors.size() || accessors[a].componentType == kFloat) continue;
    const Accessor& accessor = accessors[a];
    const std::string path = item("accessors", a);
    if (accessor.sparse) invalid(member(path, "sparse"), "a sparse quantized accessor is not read");
    if (!accessor.view) continue;  // all zeros, whatever the type
    const Accessor& checked = accessor;
    const std::string_view bytes = content[*checked.view];
    if (checked.offset + checked.stride * (checked.count - 1) + checked.elementSize > bytes.size()) {
      invalid(path, "runs past its decoded buffer view");
    }
    const std::string floats = dequantize(checked, bytes);
    Json view = {{"buffer", 0}, {"byteOffset", append(floats)}, {"byteLength", floats.size()}};
    out["bufferViews"].push_back(std::move(view));
    Json& target = out["accessors"][a];
    target["bufferView"] = out["bufferViews"].size() - 1;
    target["byteOffset"] = 0;
    target["componentType"] = kFloat;
    target.erase("normalized");
    target.erase("min");
    target.erase("max");
    ++converted;
  }
  if (!withoutBind.empty()) {
    const std::vector<glm::dmat4> global = nodeGlobals(doc);
    for (const size_t k : withoutBind) {
      const Json& joints = doc["skins"][k]["joints"];
      std::string matrices(joints.size() * 16 * sizeof(float), '\0');
      for (size_t j = 0; j < joints.size(); ++j) {
        const glm::dmat4 inverse = glm::inverse(global[joints[j].get<size_t>()]);
        for (int c = 0; c < 4; ++c) {
          for (int r = 0; r < 4; ++r) {
            const auto f =
                static_cast<float>(std::isfinite(inverse[c][r]) ? inverse[c][r] : (c == r ? 1.0 : 0.0));
            std::memcpy(matrices.data() +
                            (16 * j + 4 * static_cast<size_t>(c) + static_cast<size_t>(r)) * sizeof(float),
                        &f, sizeof f);
          }
        }
      }
      out["bufferViews"].push_back(
          {{"buffer", 0}, {"byteOffset", append(matrices)}, {"byteLength", matrices.size()}});
      out["accessors"].push_back({{"bufferView", out["bufferViews"].size() - 1},
                                  {"componentType", kFloat},
                                  {"count", joints.size()},
                                  {"type", "MAT4"}});
      out["skins"][k]["inverseBindMatrices"] = out["accessors"].size() - 1;
      warnings.push_back(
          "skin " + std::to_string(k) +
          " has no inverse bind matrices: its joints' node pose is the bind pose (as three.js reads it)");
    }
  }
  for (const size_t a : zeros) {
    const std::string bytes(accessors[a].count * accessors[a].elementSize, '\0');
    out["bufferViews"].push_back(
        {{"buffer", 0}, {"byteOffset", append(bytes)}, {"byteLength", bytes.size()}});
    out["accessors"][a]["bufferView"] = out["bufferViews"].size() - 1;
  }
  if (!zeros.empty())
    warnings.push_back(std::to_string(zeros.size()) + " accessors without a bufferView read as zeros");
  if (merged) {
    warnings.push_back("merged " + std::to_string(doc["animations"].size()) +
                       " per-node animations on one timeline into one clip");
    out["animations"] = *merged;
  }
  bin.resize((bin.size() + 3) / 4 * 4, '\0');
  out["buffers"] = Json::array({Json{{"byteLength", std::max<size_t>(bin.size(), 4)}}});
  if (bin.empty()) bin.assign(4, '\0');
  for (const char* name : {"EXT_meshopt_compression", "KHR_meshopt_compression", "KHR_mesh_quantization",
                           "KHR_draco_mesh_compression"}) {
    removeExtension(out, "extensionsUsed", name);
    removeExtension(out, "extensionsRequired", name);
  }
  if (compressed || quantized) {
    warnings.push_back("decoded " + std::to_string(decoded) + " meshopt-compressed buffer views and " +
                       std::to_string(converted) + " quantized accessors (meshoptimizer) before Assimp");
  }
  if (dracoDecoded > 0) {
    warnings.push_back("decoded " + std::to_string(dracoDecoded) +
                       " Draco-compressed primitives (KHR_draco_mesh_compression) before Assimp");
  }
  return writeGlb(out, bin);
}

/// VRM 0.x: extensions.VRM.humanoid.humanBones = [{"bone": "hips", "node": 3}, ...];
/// VRM 1.0: extensions.VRMC_vrm.humanoid.humanBones = {"hips": {"node": 3}, ...}.
void readVrmHumanoid(const Json& doc, GltfInfo& info) {
  const auto nodeName = [&](const Json& index) -> std::string {
    if (!index.is_number_integer() || !doc.contains("nodes") || !doc["nodes"].is_array()) return {};
    const auto i = index.get<long long>();
    if (i < 0 || static_cast<size_t>(i) >= doc["nodes"].size()) return {};
    const Json& node = doc["nodes"][static_cast<size_t>(i)];
    if (!node.is_object() || !node.contains("name") || !node["name"].is_string()) return {};
    return node["name"].get<std::string>();
  };
  const auto add = [&](const std::string& role, const Json& index) {
    const std::string name = nodeName(index);
    if (name.empty()) {
      info.warnings.push_back("VRM human bone '" + role + "' names no named node; ignored");
      return;
    }
    info.humanoidBones.push_back(HumanoidBone{role, name});
  };
  if (!doc.contains("extensions") || !doc["extensions"].is_object()) return;
  const Json& ext = doc["extensions"];
  if (ext.contains("VRMC_vrm") && ext["VRMC_vrm"].is_object()) {
    const Json& vrm = ext["VRMC_vrm"];
    if (vrm.contains("humanoid") && vrm["humanoid"].is_object() && vrm["humanoid"].contains("humanBones") &&
        vrm["humanoid"]["humanBones"].is_object()) {
      for (const auto& [role, bone] : vrm["humanoid"]["humanBones"].items()) {
        if (bone.is_object() && bone.contains("node")) add(role, bone["node"]);
      }
    }
  } else if (ext.contains("VRM") && ext["VRM"].is_object()) {
    const Json& vrm = ext["VRM"];
    if (vrm.contains("humanoid") && vrm["humanoid"].is_object() && vrm["humanoid"].contains("humanBones") &&
        vrm["humanoid"]["humanBones"].is_array()) {
      for (const Json& bone : vrm["humanoid"]["humanBones"]) {
        if (bone.is_object() && bone.contains("bone") && bone["bone"].is_string() && bone.contains("node"))
          add(bone["bone"].get<std::string>(), bone["node"]);
      }
    }
  }
}

/// GltfInfo::nodeMeshNames of a checked document (its node and mesh indices are valid).
void readNodeMeshNames(const Json& doc, GltfInfo& info) {
  const Json* nodes = find(doc, "nodes");
  const Json* meshes = find(doc, "meshes");
  if (nodes == nullptr) return;
  for (const Json& node : *nodes) {
    std::string name;
    if (const Json* mesh = find(node, "mesh"); mesh != nullptr && meshes != nullptr) {
      const Json& m = (*meshes)[mesh->get<size_t>()];
      if (const Json* text = find(m, "name"); text != nullptr && text->is_string())
        name = text->get<std::string>();
    }
    info.nodeMeshNames.push_back(std::move(name));
  }
}

/// Buffers, views and the structure of a document, checked.
struct Checked {
  Buffers buffers;
  std::vector<View> views;
  std::vector<Accessor> accessors;
};

void checkDocument(const Json& doc, std::optional<std::string_view> bin, const std::string& baseDir,
                   std::uint64_t maxExternalBytes, Checked& out) {
  out.buffers = resolveBuffers(doc, bin, baseDir, maxExternalBytes);
  checkImageUris(doc, baseDir);
  out.views = checkViews(doc, out.buffers);
  out.accessors = checkStructure(doc, out.buffers, out.views);
}

}  // namespace
}  // namespace gltf

Result<GltfInfo> checkGltf(std::string_view data, bool binary, const std::string& source,
                           const std::string& baseDir, std::uint64_t maxExternalBytes) {
  using namespace gltf;
  std::string_view json = data;
  std::optional<std::string_view> bin;
  if (binary) {
    if (data.size() < 12)
      return Error{source + ": not a GLB file: " + std::to_string(data.size()) + " bytes"};
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
        return Error{source + ": GLB chunk at byte " + std::to_string(at) + " is " +
                     std::to_string(chunkLength) + " bytes long, past the end of the file"};
      }
      if (first) {
        if (type != kChunkJson) return Error{source + ": the first GLB chunk is not JSON"};
        json = data.substr(at + 8, chunkLength);
        first = false;
      } else if (type == kChunkBin && !bin) {
        bin = data.substr(at + 8, chunkLength);
      }  // unknown chunk types are skipped by the specification
      at += 8 + static_cast<size_t>(chunkLength);
    }
    if (first) return Error{source + ": the GLB file has no JSON chunk"};
  }
  if (const std::optional<size_t> at = jsonTooDeep(json)) {
    return Error{source + ": the glTF JSON nests arrays and objects deeper than " +
                 std::to_string(kMaxJsonDepth) + " levels (byte " + std::to_string(*at) + " of the JSON)"};
  }
  const Json doc = Json::parse(json.begin(), json.end(), nullptr, false);
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
  try {
    Checked checked;
    checkDocument(doc, bin, baseDir, maxExternalBytes, checked);
    info.rewritten = rewrite(doc, checked.buffers, checked.views, checked.accessors, info.warnings);
    if (!info.rewritten.empty()) {
      // The rewritten file is checked like any other (index and joint values are at hand now).
      const std::string_view out = info.rewritten;
      const Json rewritten = Json::parse(out.substr(20, readU32(out, 12)));
      Checked again;
      checkDocument(rewritten, out.substr(28 + readU32(out, 12)), {}, maxExternalBytes, again);
    }
  } catch (const Invalid& problem) {
    return Error{source + ": " + problem.message};
  } catch (const nlohmann::json::exception& e) {
    return Error{source + ": malformed glTF (" + std::string(e.what()) + ")"};
  }
  readVrmHumanoid(doc, info);
  readNodeMeshNames(doc, info);
  return info;
}

}  // namespace handoff::detail
