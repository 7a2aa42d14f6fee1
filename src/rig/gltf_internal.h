// Private to the glTF check (gltf_check.h): JSON access that names the path of what is wrong,
// the buffers and buffer views of a document, its accessors, and the three steps of the check in
// their own files: gltf_buffers.cpp (buffers, data URIs, external files, buffer views),
// gltf_structure.cpp (indices, accessor bounds, the node tree, index and joint values) and
// gltf_check.cpp (the container, the rewrite, VRM).
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace handoff::detail::gltf {

using Json = nlohmann::json;

/// The first problem found, thrown to checkGltf (which returns it as an Error).
struct Invalid {
  std::string message;
};

[[noreturn]] inline void invalid(const std::string& path, const std::string& what) {
  throw Invalid{path + ": " + what};
}

inline std::string member(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}
inline std::string item(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

inline std::uint32_t readU32(std::string_view data, size_t at) {
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

inline size_t componentSize(long long type) {
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

inline size_t componentCount(const std::string& type) {
  static const std::array<std::pair<const char*, size_t>, 7> kTypes{
      {{"SCALAR", 1}, {"VEC2", 2}, {"VEC3", 3}, {"VEC4", 4}, {"MAT2", 4}, {"MAT3", 9}, {"MAT4", 16}}};
  for (const auto& [name, n] : kTypes) {
    if (type == name) return n;
  }
  return 0;
}

// ------------------------------------------------------------------------------------------------
// JSON access that names the path of what is wrong.

inline const Json& objectAt(const Json& value, const std::string& path) {
  if (!value.is_object()) invalid(path, "is not an object");
  return value;
}

inline const Json* find(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

/// An integer member in [minimum, kMaxCount]; `fallback` when absent (absent and no fallback: error).
inline std::uint64_t natural(const Json& object, const char* key, const std::string& path,
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

inline std::string text(const Json& object, const char* key, const std::string& path,
                        std::optional<std::string> fallback) {
  const Json* value = find(object, key);
  if (value == nullptr) {
    if (!fallback) invalid(member(path, key), "is missing");
    return *fallback;
  }
  if (!value->is_string()) invalid(member(path, key), "is not a string");
  return value->get<std::string>();
}

inline void numbers(const Json& object, const char* key, const std::string& path, size_t expected) {
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

inline bool hasMeshopt(const Json& object) {
  const Json* extensions = find(object, "extensions");
  return extensions != nullptr && extensions->is_object() &&
         (extensions->contains("EXT_meshopt_compression") || extensions->contains("KHR_meshopt_compression"));
}

inline const char* meshoptName(const Json& object) {
  return object["extensions"].contains("EXT_meshopt_compression") ? "EXT_meshopt_compression"
                                                                  : "KHR_meshopt_compression";
}

// ------------------------------------------------------------------------------------------------
// Buffers, buffer views and accessors.

/// The bytes of every buffer (truncated to its byteLength); nullopt for a meshopt fallback buffer
/// without data.
struct Buffers {
  std::vector<std::optional<std::string_view>> data;
  bool external = false;  ///< A buffer is a file beside the glTF file (the rewrite carries its bytes).
  std::vector<std::string> owned;  ///< Decoded data URIs and external files (data points here).
};

struct View {
  size_t buffer = 0;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::uint64_t stride = 0;  ///< 0: tightly packed
  bool compressed = false;   ///< Holds meshopt data: its bytes are not the view's content.
};

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

/// Every buffer's bytes: the GLB's BIN chunk, data URIs, external files beside the file (`baseDir`;
/// empty for bytes in memory, where an external buffer is an error). An external file is read only
/// when its URI is a relative path without '..' to a regular file inside `baseDir` (symbolic links
/// resolved), exactly byteLength bytes of it, 1 GiB in all; an error about it is the same whatever
/// the file outside is (missing, a device, a FIFO, a link out), so that it reveals nothing.
Buffers resolveBuffers(const Json& doc, std::optional<std::string_view> glbBin, const std::string& baseDir,
                       std::uint64_t maxExternalBytes);

/// Every image URI that is not a data URI names a relative path without '..' and, beside a file
/// (`baseDir` not empty), nothing but a regular file inside its folder (a missing image is not an
/// error: Assimp does not read external images).
void checkImageUris(const Json& doc, const std::string& baseDir);

/// The buffer views, checked against their buffers.
std::vector<View> checkViews(const Json& doc, const Buffers& buffers);

/// Bytes of a buffer view's content, nullopt when they are not at hand (meshopt-compressed).
inline std::optional<std::string_view> viewBytes(const Buffers& buffers, const std::vector<View>& views,
                                                 size_t v) {
  const View& view = views[v];
  if (view.compressed || !buffers.data[view.buffer]) return std::nullopt;
  return buffers.data[view.buffer]->substr(static_cast<size_t>(view.offset),
                                           static_cast<size_t>(view.length));
}

/// Decodes every primitive compressed with KHR_draco_mesh_compression (Draco) into plain data in
/// `out`, the copy of `doc` being rewritten: each of its accessors gets a buffer view of the
/// decoded values (appended to the rewrite's buffer by `append`, which returns the byte offset),
/// floats for every attribute but JOINTS_n (kept in their integer type) and 32-bit indices; the
/// extension is removed from the primitive. Decoded bytes count towards `decodedTotal`, bounded by
/// kMaxDecodedBytes. Returns how many primitives were decoded.
size_t decodeDraco(const Json& doc, const Buffers& buffers, const std::vector<View>& views, Json& out,
                   const std::function<size_t(std::string_view)>& append, std::uint64_t& decodedTotal);

/// Checks everything but the buffers and views: indices, accessor bounds, the node tree, index and
/// joint values. Returns the accessors.
std::vector<Accessor> checkStructure(const Json& doc, const Buffers& buffers, const std::vector<View>& views);

}  // namespace handoff::detail::gltf
