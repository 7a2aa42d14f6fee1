// glTF buffers: the GLB's BIN chunk, data URIs, external files; buffer views (gltf_internal.h).
#include "rig/gltf_internal.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace handoff::detail::gltf {
namespace {

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

}  // namespace

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

}  // namespace handoff::detail::gltf
