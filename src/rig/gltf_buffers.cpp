// glTF buffers: the GLB's BIN chunk, data URIs, external files; buffer views (gltf_internal.h).
#include "rig/gltf_internal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include <algorithm>
#include <cstdint>
#include <filesystem>
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

/// What an external URI that is not a readable file beside the glTF file is told: the same words
/// whatever the reason, so that an error does not say whether a file elsewhere exists or how big it is.
std::string notBeside(const std::string& uri) {
  return "names '" + uri +
         "', which is not a regular file inside the glTF file's folder (external files are relative paths "
         "without '..' to regular files beside it)";
}

/// `uri` percent-decoded (RFC 3986); nullopt when a '%' is not followed by two hex digits or the
/// result holds a NUL.
std::optional<std::string> percentDecoded(const std::string& uri) {
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(uri.size());
  for (size_t i = 0; i < uri.size(); ++i) {
    if (uri[i] != '%') {
      out.push_back(uri[i]);
      continue;
    }
    if (i + 2 >= uri.size() || hex(uri[i + 1]) < 0 || hex(uri[i + 2]) < 0) return std::nullopt;
    out.push_back(static_cast<char>(hex(uri[i + 1]) * 16 + hex(uri[i + 2])));
    i += 2;
  }
  if (out.find('\0') != std::string::npos) return std::nullopt;
  return out;
}

/// The relative path an external URI names, nullopt unless it is one that stays in its folder on
/// paper: no scheme, not absolute, no '..' component, no backslash (a separator on Windows).
std::optional<std::filesystem::path> relativePath(const std::string& uri) {
  const std::optional<std::string> decoded = percentDecoded(uri);
  if (!decoded || decoded->empty() || decoded->front() == '/' || decoded->find('\\') != std::string::npos)
    return std::nullopt;
  const size_t colon = decoded->find(':');
  if (colon != std::string::npos && decoded->find('/') > colon) return std::nullopt;  // a scheme or a drive
  const std::filesystem::path relative(*decoded);
  for (const std::filesystem::path& part : relative) {
    if (part == "..") return std::nullopt;
  }
  return relative;
}

/// The file `uri` names inside `baseDir`, symbolic links resolved, when it stays inside; nullopt
/// otherwise.
std::optional<std::filesystem::path> containedFile(const std::string& baseDir, const std::string& uri) {
  const std::optional<std::filesystem::path> relative = relativePath(uri);
  if (!relative) return std::nullopt;
  std::error_code error;
  const std::filesystem::path folder = std::filesystem::weakly_canonical(baseDir, error);
  if (error) return std::nullopt;
  const std::filesystem::path file = std::filesystem::weakly_canonical(folder / *relative, error);
  if (error) return std::nullopt;
  const std::filesystem::path inside = file.lexically_relative(folder);
  if (inside.empty() || *inside.begin() == ".." || inside == ".") return std::nullopt;
  return file;
}

/// Exactly `length` bytes of the regular file `uri` names inside `baseDir`. Opened without
/// following a last symbolic link and without blocking (a FIFO swapped in after the check is not
/// waited on), checked a regular file on the open descriptor, and never read past `length`.
std::string readExternal(const std::string& baseDir, const std::string& uri, std::uint64_t length,
                         const std::string& path) {
  const std::optional<std::filesystem::path> file = containedFile(baseDir, uri);
  if (!file) invalid(member(path, "uri"), notBeside(uri));
  const int fd = ::open(file->c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) invalid(member(path, "uri"), notBeside(uri));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) invalid(member(path, "uri"), notBeside(uri));
  if (static_cast<std::uint64_t>(info.st_size) < length) {
    invalid(member(path, "byteLength"),
            "is " + std::to_string(length) + " but the file '" + uri + "' is shorter");
  }
  std::string bytes(static_cast<size_t>(length), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      invalid(member(path, "uri"), "names '" + uri + "', which could not be read to its byteLength");
    done += static_cast<size_t>(n);
  }
  return bytes;
}

}  // namespace

Buffers resolveBuffers(const Json& doc, std::optional<std::string_view> glbBin, const std::string& baseDir,
                       std::uint64_t maxExternalBytes) {
  Buffers buffers;
  const Json* list = find(doc, "buffers");
  if (list == nullptr) return buffers;
  if (!list->is_array()) invalid("buffers", "is not an array");
  buffers.owned.reserve(list->size());
  std::uint64_t externalTotal = 0;
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
      if (length > maxExternalBytes || length > maxExternalBytes - externalTotal) {
        invalid(member(path, "byteLength"), "is " + std::to_string(length) +
                                                ": the external buffers may hold " +
                                                std::to_string(maxExternalBytes) + " bytes in all");
      }
      externalTotal += length;
      buffers.external = true;
      bytes = buffers.owned.emplace_back(readExternal(baseDir, uri, length, path));
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

void checkImageUris(const Json& doc, const std::string& baseDir) {
  const Json* images = find(doc, "images");
  if (images == nullptr || !images->is_array()) return;
  for (size_t i = 0; i < images->size(); ++i) {
    const Json& image = (*images)[i];
    const Json* uri = image.is_object() ? find(image, "uri") : nullptr;
    if (uri == nullptr || !uri->is_string()) continue;  // the structure check names what is wrong
    const std::string text = uri->get<std::string>();
    if (text.rfind("data:", 0) == 0) continue;
    const std::string path = member(item("images", i), "uri");
    if (!relativePath(text)) invalid(path, notBeside(text));
    if (baseDir.empty()) continue;
    const std::optional<std::filesystem::path> file = containedFile(baseDir, text);
    if (!file) invalid(path, notBeside(text));
    std::error_code error;
    const std::filesystem::file_status status = std::filesystem::status(*file, error);
    if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
      invalid(path, notBeside(text));
  }
}

}  // namespace handoff::detail::gltf
