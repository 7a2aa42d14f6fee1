// GLB container, JSON, structure, bounds and extension checks before Assimp; meshopt decoding and
// dequantization into a rewritten GLB (gltf_check.h).
#include "rig/gltf_check.h"
#include "rig/gltf_animations.h"

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
namespace {
namespace gltf {

using Json = nlohmann::json;

/// The first problem found, thrown to checkGltf (which returns it as an Error).
struct Invalid {
  std::string message;
};

[[noreturn]] void invalid(const std::string& path, const std::string& what) {
  throw Invalid{path + ": " + what};
}

std::string member(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}
std::string item(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

std::uint32_t readU32(std::string_view data, size_t at) {
  std::uint32_t v = 0;
  std::memcpy(&v, data.data() + at, sizeof v);  // GLB is little-endian, as every target here
  return v;
}

constexpr std::uint32_t kGlbMagic = 0x46546C67;  // "glTF"
constexpr std::uint32_t kChunkJson = 0x4E4F534A;
constexpr std::uint32_t kChunkBin = 0x004E4942;
/// Counts, lengths and offsets above this are refused (a glTF 2.0 accessor count is an integer the
/// importers keep in 32 bits). [elements or bytes]
constexpr std::uint64_t kMaxCount = std::uint64_t{1} << 32;
/// Decoded meshopt data a file may produce. [bytes]
constexpr std::uint64_t kMaxDecodedBytes = std::uint64_t{1} << 30;

constexpr int kByte = 5120, kUnsignedByte = 5121, kShort = 5122, kUnsignedShort = 5123, kUnsignedInt = 5125,
              kFloat = 5126;

size_t componentSize(long long type) {
  switch (type) {
    case kByte:
    case kUnsignedByte:
      return 1;
    case kShort:
    case kUnsignedShort:
      return 2;
    case kUnsignedInt:
    case kFloat:
      return 4;
    default:
      return 0;
  }
}

size_t componentCount(const std::string& type) {
  static const std::array<std::pair<const char*, size_t>, 7> kTypes{
      {{"SCALAR", 1}, {"VEC2", 2}, {"VEC3", 3}, {"VEC4", 4}, {"MAT2", 4}, {"MAT3", 9}, {"MAT4", 16}}};
  for (const auto& [name, n] : kTypes) {
    if (type == name) return n;
  }
  return 0;
}

// ------------------------------------------------------------------------------------------------
// JSON access that names the path of what is wrong.

const Json& objectAt(const Json& value, const std::string& path) {
  if (!value.is_object()) invalid(path, "is not an object");
  return value;
}

const Json* find(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

/// An integer member in [minimum, kMaxCount]; `fallback` when absent (absent and no fallback: error).
std::uint64_t natural(const Json& object, const char* key, const std::string& path,
                      std::optional<std::uint64_t> fallback, std::uint64_t minimum = 0) {
  const Json* value = find(object, key);
  if (value == nullptr) {
    if (!fallback) invalid(member(path, key), "is missing");
    return *fallback;
  }
  if (!value->is_number_integer()) invalid(member(path, key), "is not an integer");
  if (value->is_number_unsigned()) {
    const auto n = value->get<std::uint64_t>();
    if (n < minimum || n > kMaxCount)
      invalid(member(path, key), "is " + std::to_string(n) + ", out of range");
    return n;
  }
  const auto n = value->get<long long>();
  if (n < static_cast<long long>(minimum))
    invalid(member(path, key), "is " + std::to_string(n) + ", out of range");
  return static_cast<std::uint64_t>(n);
}

std::string text(const Json& object, const char* key, const std::string& path,
                 std::optional<std::string> fallback) {
  const Json* value = find(object, key);
  if (value == nullptr) {
    if (!fallback) invalid(member(path, key), "is missing");
    return *fallback;
  }
  if (!value->is_string()) invalid(member(path, key), "is not a string");
  return value->get<std::string>();
}

void numbers(const Json& object, const char* key, const std::string& path, size_t expected) {
  const Json* value = find(object, key);
  if (value == nullptr) return;
  if (!value->is_array() || (expected > 0 && value->size() != expected)) {
    invalid(member(path, key), expected > 0 ? "is not an array of " + std::to_string(expected) + " numbers"
                                            : "is not an array of numbers");
  }
  for (const Json& n : *value) {
    if (!n.is_number() || !std::isfinite(n.get<double>()))
      invalid(member(path, key), "holds a value that is not a finite number");
  }
}

// ------------------------------------------------------------------------------------------------
// Buffers and buffer views.

bool hasMeshopt(const Json& object) {
  const Json* extensions = find(object, "extensions");
  return extensions != nullptr && extensions->is_object() &&
         (extensions->contains("EXT_meshopt_compression") || extensions->contains("KHR_meshopt_compression"));
}

const char* meshoptName(const Json& object) {
  return object["extensions"].contains("EXT_meshopt_compression") ? "EXT_meshopt_compression"
                                                                  : "KHR_meshopt_compression";
}

/// Decoded bytes of a data: URI (base64 only). nullopt when it is not base64 or malformed.
std::optional<std::string> decodeDataUri(const std::string& uri) {
  const size_t comma = uri.find(',');
  if (comma == std::string::npos || uri.compare(comma - std::min<size_t>(comma, 7), 7, ";base64") != 0) {
    return std::nullopt;
  }
  std::string out;
  out.reserve((uri.size() - comma) / 4 * 3);
  std::uint32_t bits = 0;
  int held = 0;
  size_t padding = 0;
  for (size_t i = comma + 1; i < uri.size(); ++i) {
    const char c = uri[i];
    int v = -1;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    if (c >= '0' && c <= '9') v = c - '0' + 52;
    if (c == '+' || c == '-') v = 62;
    if (c == '/' || c == '_') v = 63;
    if (c == '=') {
      ++padding;
      continue;
    }
    if (v < 0 || padding > 0) return std::nullopt;
    bits = (bits << 6) | static_cast<std::uint32_t>(v);
    held += 6;
    if (held >= 8) {
      held -= 8;
      out.push_back(static_cast<char>((bits >> held) & 0xFF));
    }
  }
  if (padding > 2) return std::nullopt;
  return out;
}

/// The bytes of every buffer (truncated to its byteLength); nullopt for a meshopt fallback buffer
/// without data.
struct Buffers {
  std::vector<std::optional<std::string_view>> data;
  std::vector<std::string> owned;  ///< Decoded data URIs and external files (data points here).
};

Buffers resolveBuffers(const Json& doc, std::optional<std::string_view> glbBin, const std::string& baseDir) {
  Buffers buffers;
  const Json* list = find(doc, "buffers");
  if (list == nullptr) return buffers;
  if (!list->is_array()) invalid("buffers", "is not an array");
  buffers.owned.reserve(list->size());
  for (size_t b = 0; b < list->size(); ++b) {
    const std::string path = item("buffers", b);
    const Json& buffer = objectAt((*list)[b], path);
    const std::uint64_t length = natural(buffer, "byteLength", path, std::nullopt, 1);
    const std::string uri = text(buffer, "uri", path, std::string());
    std::optional<std::string_view> bytes;
    if (uri.empty()) {
      const Json* ext = find(buffer, "extensions");
      bool fallback = false;
      for (const char* name : {"EXT_meshopt_compression", "KHR_meshopt_compression"}) {
        const Json* meshopt = ext != nullptr && ext->is_object() ? find(*ext, name) : nullptr;
        const Json* flag = meshopt != nullptr && meshopt->is_object() ? find(*meshopt, "fallback") : nullptr;
        fallback = fallback || (flag != nullptr && flag->is_boolean() && flag->get<bool>());
      }
      if (fallback) {
        buffers.data.emplace_back();
        continue;
      }
      if (b != 0 || !glbBin) invalid(path, "has no uri (only a GLB's first buffer may be its BIN chunk)");
      bytes = *glbBin;
    } else if (uri.rfind("data:", 0) == 0) {
      std::optional<std::string> decoded = decodeDataUri(uri);
      if (!decoded) invalid(member(path, "uri"), "is a data URI that is not valid base64");
      bytes = buffers.owned.emplace_back(std::move(*decoded));
    } else {
      if (baseDir.empty()) {
        invalid(member(path, "uri"),
                "names the external file '" + uri + "', which an import from memory cannot read");
      }
      const std::filesystem::path file = std::filesystem::path(baseDir) / uri;
      std::ifstream in(file, std::ios::binary);
      if (!in) invalid(member(path, "uri"), "names '" + uri + "', which cannot be opened");
      bytes =
          buffers.owned.emplace_back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    }
    if (bytes->size() < length) {
      invalid(member(path, "byteLength"), "is " + std::to_string(length) + " but the data has " +
                                              std::to_string(bytes->size()) + " bytes");
    }
    buffers.data.emplace_back(bytes->substr(0, static_cast<size_t>(length)));
  }
  return buffers;
}

struct View {
  size_t buffer = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::uint64_t stride = 0;  ///< 0: tightly packed
  bool compressed = false;   ///< Holds meshopt data: its bytes are not the view's content.
};

std::vector<View> checkViews(const Json& doc, const Buffers& buffers) {
  std::vector<View> views;
  const Json* list = find(doc, "bufferViews");
  if (list == nullptr) return views;
  if (!list->is_array()) invalid("bufferViews", "is not an array");
  const Json* bufferList = find(doc, "buffers");
  for (size_t v = 0; v < list->size(); ++v) {
    const std::string path = item("bufferViews", v);
    const Json& view = objectAt((*list)[v], path);
    View out;
    out.buffer = static_cast<size_t>(natural(view, "buffer", path, std::nullopt));
    if (out.buffer >= buffers.data.size()) invalid(member(path, "buffer"), "is not a buffer index");
    out.offset = natural(view, "byteOffset", path, 0);
    out.length = natural(view, "byteLength", path, std::nullopt, 1);
    out.stride = natural(view, "byteStride", path, 0);
    if (out.stride != 0 && (out.stride < 4 || out.stride > 252 || out.stride % 4 != 0)) {
      invalid(member(path, "byteStride"), "is " + std::to_string(out.stride) + " (4-252, a multiple of 4)");
    }
    const std::uint64_t bufferLength = (*bufferList)[out.buffer]["byteLength"].get<std::uint64_t>();
    if (out.offset + out.length > bufferLength) {
      invalid(path, "bytes " + std::to_string(out.offset) + "-" + std::to_string(out.offset + out.length) +
                        " run past buffer " + std::to_string(out.buffer) + "'s " +
                        std::to_string(bufferLength));
    }
    out.compressed = hasMeshopt(view);
    if (!buffers.data[out.buffer] && !out.compressed) {
      invalid(path,
              "reads the meshopt fallback buffer " + std::to_string(out.buffer) + ", which holds no data");
    }
    views.push_back(out);
  }
  return views;
}

// ------------------------------------------------------------------------------------------------
// Everything else: indices, accessor bounds, the node tree, index and joint values.

struct Accessor {
  std::uint64_t count = 0;
  long long componentType = 0;
  std::string type;
  size_t components = 0;
  size_t elementSize = 0;
  bool normalized = false;
  std::optional<size_t> view;
  std::uint64_t offset = 0;
  std::uint64_t stride = 0;
  bool sparse = false;
};

class Structure {
 public:
  Structure(const Json& doc, const Buffers& buffers, const std::vector<View>& views)
      : doc_(doc), buffers_(buffers), views_(views) {}

  void check() {
    for (const char* key : {"accessors", "animations", "buffers", "bufferViews", "cameras", "images",
                            "materials", "meshes", "nodes", "samplers", "scenes", "skins", "textures"}) {
      const Json& list = collection(key);
      for (size_t i = 0; i < list.size(); ++i) objectAt(list[i], item(key, i));
    }
    checkAccessors();
    checkNodes();
    checkScenes();
    checkSkins();
    checkMeshes();
    checkAnimations();
    checkMaterials();
  }

  const std::vector<Accessor>& accessors() const { return accessors_; }

  /// Bytes of a buffer view's content, nullopt when they are not at hand (meshopt-compressed).
  std::optional<std::string_view> viewBytes(size_t v) const {
    const View& view = views_[v];
    if (view.compressed || !buffers_.data[view.buffer]) return std::nullopt;
    return buffers_.data[view.buffer]->substr(static_cast<size_t>(view.offset),
                                              static_cast<size_t>(view.length));
  }

 private:
  const Json& collection(const char* key) const {
    static const Json kEmpty = Json::array();
    const Json* list = find(doc_, key);
    if (list == nullptr) return kEmpty;
    if (!list->is_array()) invalid(key, "is not an array");
    return *list;
  }

  /// An index into `key`'s collection; nullopt when absent and not required.
  std::optional<size_t> ref(const Json& object, const char* member_, const char* key, const std::string& path,
                            bool required) const {
    if (!required && !object.contains(member_)) return std::nullopt;
    const std::uint64_t i = natural(object, member_, path, std::nullopt);
    if (i >= collection(key).size()) {
      invalid(member(path, member_), "is " + std::to_string(i) + ", not an index into " + key + " (" +
                                         std::to_string(collection(key).size()) + ")");
    }
    return static_cast<size_t>(i);
  }

  const Json& indexList(const Json& object, const char* member_, const std::string& path,
                        bool required) const {
    static const Json kEmpty = Json::array();
    const Json* list = find(object, member_);
    if (list == nullptr) {
      if (required) invalid(member(path, member_), "is missing");
      return kEmpty;
    }
    if (!list->is_array()) invalid(member(path, member_), "is not an array");
    return *list;
  }

  void checkAccessors() {
    const Json& list = collection("accessors");
    for (size_t a = 0; a < list.size(); ++a) {
      const std::string path = item("accessors", a);
      const Json& accessor = list[a];
      Accessor out;
      out.componentType = static_cast<long long>(natural(accessor, "componentType", path, std::nullopt));
      const size_t size = componentSize(out.componentType);
      if (size == 0)
        invalid(member(path, "componentType"),
                "is " + std::to_string(out.componentType) + ", not a glTF component type");
      out.type = text(accessor, "type", path, std::nullopt);
      out.components = componentCount(out.type);
      if (out.components == 0)
        invalid(member(path, "type"), "is '" + out.type + "', not a glTF accessor type");
      out.elementSize = out.components * size;
      out.count = natural(accessor, "count", path, std::nullopt, 1);
      if (const Json* normalized = find(accessor, "normalized")) {
        if (!normalized->is_boolean()) invalid(member(path, "normalized"), "is not a boolean");
        out.normalized = normalized->get<bool>();
      }
      numbers(accessor, "min", path, out.components);
      numbers(accessor, "max", path, out.components);
      out.view = ref(accessor, "bufferView", "bufferViews", path, false);
      out.offset = natural(accessor, "byteOffset", path, 0);
      if (out.view) {
        const View& view = views_[*out.view];
        out.stride = view.stride != 0 ? view.stride : out.elementSize;
        if (out.stride < out.elementSize) {
          invalid(path, "elements of " + std::to_string(out.elementSize) + " bytes in buffer view " +
                            std::to_string(*out.view) + " whose stride is " + std::to_string(out.stride));
        }
        const std::uint64_t end = out.offset + out.stride * (out.count - 1) + out.elementSize;
        if (end > view.length) {
          invalid(path, std::to_string(out.count) + " elements end at byte " + std::to_string(end) +
                            ", past buffer view " + std::to_string(*out.view) + "'s " +
                            std::to_string(view.length));
        }
      } else if (accessor.contains("byteOffset")) {
        invalid(member(path, "byteOffset"), "is given without a bufferView");
      }
      if (const Json* sparse = find(accessor, "sparse")) checkSparse(*sparse, member(path, "sparse"), out);
      accessors_.push_back(out);
    }
  }

  void checkSparse(const Json& sparse, const std::string& path, Accessor& accessor) {
    objectAt(sparse, path);
    accessor.sparse = true;
    const std::uint64_t count = natural(sparse, "count", path, std::nullopt, 1);
    if (count > accessor.count) invalid(member(path, "count"), "is more than the accessor's count");
    const std::string indicesPath = member(path, "indices");
    const std::string valuesPath = member(path, "values");
    if (!sparse.contains("indices")) invalid(indicesPath, "is missing");
    if (!sparse.contains("values")) invalid(valuesPath, "is missing");
    const Json& indices = objectAt(sparse["indices"], indicesPath);
    const Json& values = objectAt(sparse["values"], valuesPath);
    const size_t indexView = *ref(indices, "bufferView", "bufferViews", indicesPath, true);
    const auto indexType =
        static_cast<long long>(natural(indices, "componentType", indicesPath, std::nullopt));
    if (indexType != kUnsignedByte && indexType != kUnsignedShort && indexType != kUnsignedInt) {
      invalid(member(indicesPath, "componentType"), "is not an unsigned integer type");
    }
    const std::uint64_t indexOffset = natural(indices, "byteOffset", indicesPath, 0);
    if (indexOffset + count * componentSize(indexType) > views_[indexView].length) {
      invalid(indicesPath, "runs past buffer view " + std::to_string(indexView));
    }
    const size_t valueView = *ref(values, "bufferView", "bufferViews", valuesPath, true);
    const std::uint64_t valueOffset = natural(values, "byteOffset", valuesPath, 0);
    if (valueOffset + count * accessor.elementSize > views_[valueView].length) {
      invalid(valuesPath, "runs past buffer view " + std::to_string(valueView));
    }
    if (const std::optional<std::string_view> bytes = viewBytes(indexView)) {
      for (std::uint64_t i = 0; i < count; ++i) {
        const std::uint64_t index = component(*bytes, indexOffset + i * componentSize(indexType), indexType);
        if (index >= accessor.count) {
          invalid(indicesPath, "index " + std::to_string(index) + " is past the accessor's " +
                                   std::to_string(accessor.count) + " elements");
        }
      }
    }
  }

  static std::uint64_t component(std::string_view bytes, std::uint64_t at, long long type) {
    switch (type) {
      case kUnsignedByte:
        return static_cast<std::uint8_t>(bytes[static_cast<size_t>(at)]);
      case kUnsignedShort: {
        std::uint16_t v = 0;
        std::memcpy(&v, bytes.data() + at, sizeof v);
        return v;
      }
      default: {
        std::uint32_t v = 0;
        std::memcpy(&v, bytes.data() + at, sizeof v);
        return v;
      }
    }
  }

  /// The largest integer component of an (unsigned integer) accessor, its sparse values included;
  /// nullopt when its data is not at hand.
  std::optional<std::uint64_t> largest(size_t a) const {
    const Accessor& accessor = accessors_[a];
    if (!accessor.view || accessor.sparse)
      return accessor.view ? std::nullopt : std::optional<std::uint64_t>(0);
    const std::optional<std::string_view> bytes = viewBytes(*accessor.view);
    if (!bytes) return std::nullopt;
    const size_t size = componentSize(accessor.componentType);
    std::uint64_t most = 0;
    for (std::uint64_t e = 0; e < accessor.count; ++e) {
      for (size_t c = 0; c < accessor.components; ++c) {
        most = std::max(most, component(*bytes, accessor.offset + e * accessor.stride + c * size,
                                        accessor.componentType));
      }
    }
    return most;
  }

  void expect(size_t a, const std::string& path, std::initializer_list<const char*> types,
              std::initializer_list<int> componentTypes) const {
    const Accessor& accessor = accessors_[a];
    if (std::none_of(types.begin(), types.end(), [&](const char* t) { return accessor.type == t; })) {
      invalid(path, "accessor " + std::to_string(a) + " is " + accessor.type + ", not " + *types.begin());
    }
    if (std::none_of(componentTypes.begin(), componentTypes.end(),
                     [&](int t) { return accessor.componentType == t; })) {
      invalid(path, "accessor " + std::to_string(a) + " has component type " +
                        std::to_string(accessor.componentType) + ", which is not read there");
    }
  }

  void checkNodes() {
    const Json& nodes = collection("nodes");
    parent_.assign(nodes.size(), -1);
    for (size_t n = 0; n < nodes.size(); ++n) {
      const std::string path = item("nodes", n);
      const Json& node = nodes[n];
      const Json& children = indexList(node, "children", path, false);
      for (size_t c = 0; c < children.size(); ++c) {
        const std::string childPath = item(member(path, "children"), c);
        if (!children[c].is_number_unsigned() || children[c].get<std::uint64_t>() >= nodes.size()) {
          invalid(childPath, "is not a node index");
        }
        const auto child = children[c].get<size_t>();
        if (child == n) invalid(childPath, "is the node itself");
        if (parent_[child] >= 0) {
          invalid(childPath, "node " + std::to_string(child) + " already has the parent " +
                                 std::to_string(parent_[child]));
        }
        parent_[child] = static_cast<long long>(n);
      }
      ref(node, "mesh", "meshes", path, false);
      ref(node, "skin", "skins", path, false);
      ref(node, "camera", "cameras", path, false);
      numbers(node, "matrix", path, 16);
      numbers(node, "translation", path, 3);
      numbers(node, "rotation", path, 4);
      numbers(node, "scale", path, 3);
      numbers(node, "weights", path, 0);
      if (const Json* ext = find(node, "extensions"); ext != nullptr && ext->is_object()) {
        if (const Json* light = find(*ext, "KHR_lights_punctual"); light != nullptr) {
          const std::string lightPath = member(member(path, "extensions"), "KHR_lights_punctual");
          const std::uint64_t index = natural(objectAt(*light, lightPath), "light", lightPath, std::nullopt);
          if (index >= lightCount())
            invalid(member(lightPath, "light"), "is not an index into KHR_lights_punctual.lights");
        }
      }
    }
    // One parent each: the nodes form a forest unless a parent chain returns to where it started.
    std::vector<char> state(nodes.size(), 0);  // 0 unseen, 1 on the current chain, 2 known to reach a root
    for (size_t n = 0; n < nodes.size(); ++n) {
      std::vector<size_t> chain;
      long long at = static_cast<long long>(n);
      while (at >= 0 && state[static_cast<size_t>(at)] == 0) {
        state[static_cast<size_t>(at)] = 1;
        chain.push_back(static_cast<size_t>(at));
        at = parent_[static_cast<size_t>(at)];
      }
      if (at >= 0 && state[static_cast<size_t>(at)] == 1) {
        invalid(item("nodes", static_cast<size_t>(at)), "is its own ancestor (the children form a cycle)");
      }
      for (const size_t c : chain) state[c] = 2;
    }
  }

  size_t lightCount() const {
    const Json* ext = find(doc_, "extensions");
    if (ext == nullptr || !ext->is_object()) return 0;
    const Json* lights = find(*ext, "KHR_lights_punctual");
    if (lights == nullptr || !lights->is_object() || !lights->contains("lights") ||
        !(*lights)["lights"].is_array())
      return 0;
    return (*lights)["lights"].size();
  }

  void checkScenes() {
    const Json& scenes = collection("scenes");
    ref(doc_, "scene", "scenes", "", false);
    for (size_t s = 0; s < scenes.size(); ++s) {
      const std::string path = item("scenes", s);
      const Json& roots = indexList(scenes[s], "nodes", path, false);
      for (size_t r = 0; r < roots.size(); ++r) {
        const std::string rootPath = item(member(path, "nodes"), r);
        if (!roots[r].is_number_unsigned() || roots[r].get<std::uint64_t>() >= parent_.size()) {
          invalid(rootPath, "is not a node index");
        }
        if (parent_[roots[r].get<size_t>()] >= 0) invalid(rootPath, "is a child node, not a root");
      }
    }
  }

  void checkSkins() {
    const Json& skins = collection("skins");
    for (size_t s = 0; s < skins.size(); ++s) {
      const std::string path = item("skins", s);
      const Json& joints = indexList(skins[s], "joints", path, true);
      if (joints.empty()) invalid(member(path, "joints"), "is empty");
      for (size_t j = 0; j < joints.size(); ++j) {
        if (!joints[j].is_number_unsigned() || joints[j].get<std::uint64_t>() >= parent_.size()) {
          invalid(item(member(path, "joints"), j), "is not a node index");
        }
      }
      ref(skins[s], "skeleton", "nodes", path, false);
      if (const std::optional<size_t> ibm = ref(skins[s], "inverseBindMatrices", "accessors", path, false)) {
        expect(*ibm, member(path, "inverseBindMatrices"), {"MAT4"}, {kFloat});
        if (accessors_[*ibm].count < joints.size()) {
          invalid(member(path, "inverseBindMatrices"), "has " + std::to_string(accessors_[*ibm].count) +
                                                           " matrices for " + std::to_string(joints.size()) +
                                                           " joints");
        }
      }
    }
  }

  void checkMeshes() {
    const Json& meshes = collection("meshes");
    // The fewest joints of the skins a mesh is drawn with: its JOINTS values must index them all.
    std::vector<std::uint64_t> jointLimit(meshes.size(), kMaxCount);
    const Json& nodes = collection("nodes");
    for (const Json& node : nodes) {
      if (node.contains("mesh") && node.contains("skin")) {
        const auto mesh = node["mesh"].get<size_t>();
        jointLimit[mesh] = std::min<std::uint64_t>(
            jointLimit[mesh], collection("skins")[node["skin"].get<size_t>()]["joints"].size());
      }
    }
    for (size_t m = 0; m < meshes.size(); ++m) {
      const std::string path = item("meshes", m);
      const Json& primitives = indexList(meshes[m], "primitives", path, true);
      if (primitives.empty()) invalid(member(path, "primitives"), "is empty");
      numbers(meshes[m], "weights", path, 0);
      for (size_t p = 0; p < primitives.size(); ++p) {
        const std::string primitivePath = item(member(path, "primitives"), p);
        const Json& primitive = objectAt(primitives[p], primitivePath);
        const std::string attributesPath = member(primitivePath, "attributes");
        if (!primitive.contains("attributes")) invalid(attributesPath, "is missing");
        const Json& attributes = objectAt(primitive["attributes"], attributesPath);
        if (!attributes.contains("POSITION")) invalid(attributesPath, "has no POSITION");
        const size_t position = *ref(attributes, "POSITION", "accessors", attributesPath, true);
        expect(position, member(attributesPath, "POSITION"), {"VEC3"},
               {kFloat, kByte, kUnsignedByte, kShort, kUnsignedShort});
        const std::uint64_t vertices = accessors_[position].count;
        for (const auto& [name, value] : attributes.items()) {
          const std::string attributePath = member(attributesPath, name);
          const size_t a = *ref(attributes, name.c_str(), "accessors", attributesPath, true);
          if (accessors_[a].count != vertices) {
            invalid(attributePath, "has " + std::to_string(accessors_[a].count) + " elements for " +
                                       std::to_string(vertices) + " vertices");
          }
          if (name == "NORMAL") expect(a, attributePath, {"VEC3"}, {kFloat, kByte, kShort});
          if (name == "TANGENT") expect(a, attributePath, {"VEC4"}, {kFloat, kByte, kShort});
          if (name.rfind("JOINTS_", 0) == 0) {
            expect(a, attributePath, {"VEC4"}, {kUnsignedByte, kUnsignedShort});
            if (const std::optional<std::uint64_t> most = largest(a); most && *most >= jointLimit[m]) {
              invalid(attributePath, "joint " + std::to_string(*most) + " is past the " +
                                         std::to_string(jointLimit[m]) +
                                         " joints of the skin the mesh is drawn with");
            }
          }
          if (name.rfind("WEIGHTS_", 0) == 0)
            expect(a, attributePath, {"VEC4"}, {kFloat, kUnsignedByte, kUnsignedShort});
        }
        if (const std::optional<size_t> indices =
                ref(primitive, "indices", "accessors", primitivePath, false)) {
          expect(*indices, member(primitivePath, "indices"), {"SCALAR"},
                 {kUnsignedByte, kUnsignedShort, kUnsignedInt});
          if (const std::optional<std::uint64_t> most = largest(*indices); most && *most >= vertices) {
            invalid(member(primitivePath, "indices"), "index " + std::to_string(*most) + " is past the " +
                                                          std::to_string(vertices) + " vertices");
          }
        }
        if (natural(primitive, "mode", primitivePath, 4) > 6)
          invalid(member(primitivePath, "mode"), "is not 0-6");
        ref(primitive, "material", "materials", primitivePath, false);
        const Json& targets = indexList(primitive, "targets", primitivePath, false);
        for (size_t t = 0; t < targets.size(); ++t) {
          const std::string targetPath = item(member(primitivePath, "targets"), t);
          const Json& target = objectAt(targets[t], targetPath);
          for (const auto& [name, value] : target.items()) {
            const size_t a = *ref(target, name.c_str(), "accessors", targetPath, true);
            if (accessors_[a].count != vertices)
              invalid(member(targetPath, name), "does not have one element per vertex");
          }
        }
        if (const Json* ext = find(primitive, "extensions"); ext != nullptr && ext->is_object()) {
          if (const Json* draco = find(*ext, "KHR_draco_mesh_compression")) {
            const std::string dracoPath =
                member(member(primitivePath, "extensions"), "KHR_draco_mesh_compression");
            ref(objectAt(*draco, dracoPath), "bufferView", "bufferViews", dracoPath, true);
            const std::string dracoAttributes = member(dracoPath, "attributes");
            if (!draco->contains("attributes")) invalid(dracoAttributes, "is missing");
            for (const auto& [name, id] : objectAt((*draco)["attributes"], dracoAttributes).items()) {
              if (!id.is_number_unsigned()) invalid(member(dracoAttributes, name), "is not an attribute id");
            }
          }
        }
      }
    }
  }

  void checkAnimations() {
    const Json& animations = collection("animations");
    for (size_t a = 0; a < animations.size(); ++a) {
      const std::string path = item("animations", a);
      const Json& samplers = indexList(animations[a], "samplers", path, true);
      const Json& channels = indexList(animations[a], "channels", path, true);
      struct Keys {
        std::uint64_t input = 0;
        std::uint64_t outputs = 0;
        size_t output = 0;
        bool cubic = false;
      };
      std::vector<Keys> keys;
      for (size_t s = 0; s < samplers.size(); ++s) {
        const std::string samplerPath = item(member(path, "samplers"), s);
        const Json& sampler = objectAt(samplers[s], samplerPath);
        const size_t input = *ref(sampler, "input", "accessors", samplerPath, true);
        expect(input, member(samplerPath, "input"), {"SCALAR"}, {kFloat});
        const size_t output = *ref(sampler, "output", "accessors", samplerPath, true);
        const std::string interpolation = text(sampler, "interpolation", samplerPath, std::string("LINEAR"));
        if (interpolation != "LINEAR" && interpolation != "STEP" && interpolation != "CUBICSPLINE") {
          invalid(member(samplerPath, "interpolation"),
                  "is '" + interpolation + "', not LINEAR, STEP or CUBICSPLINE");
        }
        keys.push_back(
            {accessors_[input].count, accessors_[output].count, output, interpolation == "CUBICSPLINE"});
      }
      for (size_t c = 0; c < channels.size(); ++c) {
        const std::string channelPath = item(member(path, "channels"), c);
        const Json& channel = objectAt(channels[c], channelPath);
        const std::uint64_t s = natural(channel, "sampler", channelPath, std::nullopt);
        if (s >= keys.size())
          invalid(member(channelPath, "sampler"), "is not an index into the animation's samplers");
        const std::string targetPath = member(channelPath, "target");
        if (!channel.contains("target")) invalid(targetPath, "is missing");
        const Json& target = objectAt(channel["target"], targetPath);
        // The specification lets a channel without a node be ignored; Assimp 5.2 crashes on it.
        if (!target.contains("node"))
          invalid(member(targetPath, "node"), "is missing (Assimp 5.2 cannot read such a channel)");
        ref(target, "node", "nodes", targetPath, true);
        const std::string property = text(target, "path", targetPath, std::nullopt);
        const Keys& k = keys[static_cast<size_t>(s)];
        const std::uint64_t perKey = k.cubic ? 3 : 1;
        if (property == "translation" || property == "scale") {
          expect(k.output, member(targetPath, "path"), {"VEC3"},
                 {kFloat, kByte, kUnsignedByte, kShort, kUnsignedShort});
        } else if (property == "rotation") {
          expect(k.output, member(targetPath, "path"), {"VEC4"},
                 {kFloat, kByte, kUnsignedByte, kShort, kUnsignedShort});
        } else if (property == "weights") {
          expect(k.output, member(targetPath, "path"), {"SCALAR"},
                 {kFloat, kByte, kUnsignedByte, kShort, kUnsignedShort});
          if (k.outputs % (k.input * perKey) != 0)
            invalid(channelPath, "the morph weights are not a whole number per key");
          continue;
        } else {
          invalid(member(targetPath, "path"),
                  "is '" + property + "', not translation, rotation, scale or weights");
        }
        if (k.outputs != k.input * perKey) {
          invalid(channelPath, "sampler " + std::to_string(s) + " has " + std::to_string(k.outputs) +
                                   " values for " + std::to_string(k.input) + " key times");
        }
      }
    }
  }

  void checkTextureRefs(const Json& value, const std::string& path) {
    if (value.is_object()) {
      for (const auto& [key, child] : value.items()) {
        const std::string childPath = member(path, key);
        if (key.size() > 7 && key.compare(key.size() - 7, 7, "Texture") == 0 && child.is_object()) {
          ref(child, "index", "textures", childPath, true);
          natural(child, "texCoord", childPath, 0);
        }
        checkTextureRefs(child, childPath);
      }
    } else if (value.is_array()) {
      for (size_t i = 0; i < value.size(); ++i) checkTextureRefs(value[i], item(path, i));
    }
  }

  void checkMaterials() {
    const Json& materials = collection("materials");
    for (size_t m = 0; m < materials.size(); ++m) checkTextureRefs(materials[m], item("materials", m));
    const Json& textures = collection("textures");
    for (size_t t = 0; t < textures.size(); ++t) {
      const std::string path = item("textures", t);
      ref(textures[t], "source", "images", path, false);
      ref(textures[t], "sampler", "samplers", path, false);
      if (const Json* ext = find(textures[t], "extensions"); ext != nullptr && ext->is_object()) {
        for (const auto& [name, value] : ext->items()) {
          if (value.is_object())
            ref(value, "source", "images", member(member(path, "extensions"), name), false);
        }
      }
    }
    const Json& images = collection("images");
    for (size_t i = 0; i < images.size(); ++i) {
      const std::string path = item("images", i);
      if (ref(images[i], "bufferView", "bufferViews", path, false)) {
        text(images[i], "mimeType", path, std::nullopt);
      } else {
        text(images[i], "uri", path, std::nullopt);
      }
    }
    const Json& cameras = collection("cameras");
    for (size_t c = 0; c < cameras.size(); ++c) {
      const std::string path = item("cameras", c);
      const std::string type = text(cameras[c], "type", path, std::nullopt);
      if (type != "perspective" && type != "orthographic")
        invalid(member(path, "type"), "is not perspective or orthographic");
      if (!cameras[c].contains(type)) invalid(member(path, type), "is missing");
      objectAt(cameras[c][type], member(path, type));
    }
  }

  const Json& doc_;
  const Buffers& buffers_;
  const std::vector<View>& views_;
  std::vector<Accessor> accessors_;
  std::vector<long long> parent_;
};

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
/// real-valued accessors, no skin without inverse bind matrices, no accessor without a buffer view
/// and no per-node animations to merge.
std::string rewrite(const Json& doc, const Buffers& buffers, const std::vector<View>& views,
                    const Structure& structure, std::vector<std::string>& warnings) {
  const std::vector<Accessor>& accessors = structure.accessors();
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
  // extension (not decoded here), so they are left as they are.
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
  if (!compressed && !quantized && withoutBind.empty() && zeros.empty() && !merged) return {};

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
      content[v] = std::string(*structure.viewBytes(v));
    }
    view["buffer"] = 0;
    view["byteOffset"] = append(content[v]);
    view["byteLength"] = content[v].size();
  }
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
  for (const char* name : {"EXT_meshopt_compression", "KHR_meshopt_compression", "KHR_mesh_quantization"}) {
    removeExtension(out, "extensionsUsed", name);
    removeExtension(out, "extensionsRequired", name);
  }
  if (compressed || quantized) {
    warnings.push_back("decoded " + std::to_string(decoded) + " meshopt-compressed buffer views and " +
                       std::to_string(converted) + " quantized accessors (meshoptimizer) before Assimp");
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

/// Buffers, views and the structure of a document, checked.
struct Checked {
  Buffers buffers;
  std::vector<View> views;
  std::optional<Structure> structure;
};

void checkDocument(const Json& doc, std::optional<std::string_view> bin, const std::string& baseDir,
                   Checked& out) {
  out.buffers = resolveBuffers(doc, bin, baseDir);
  out.views = checkViews(doc, out.buffers);
  out.structure.emplace(doc, out.buffers, out.views);
  out.structure->check();
}

}  // namespace gltf
}  // namespace

Result<GltfInfo> checkGltf(std::string_view data, bool binary, const std::string& source,
                           const std::string& baseDir) {
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
    checkDocument(doc, bin, baseDir, checked);
    info.rewritten = rewrite(doc, checked.buffers, checked.views, *checked.structure, info.warnings);
    if (!info.rewritten.empty()) {
      // The rewritten file is checked like any other (index and joint values are at hand now).
      const std::string_view out = info.rewritten;
      const Json rewritten = Json::parse(out.substr(20, readU32(out, 12)));
      Checked again;
      checkDocument(rewritten, out.substr(28 + readU32(out, 12)), {}, again);
    }
  } catch (const Invalid& problem) {
    return Error{source + ": " + problem.message};
  } catch (const nlohmann::json::exception& e) {
    return Error{source + ": malformed glTF (" + std::string(e.what()) + ")"};
  }
  readVrmHumanoid(doc, info);
  return info;
}

}  // namespace handoff::detail
