// The check and Assimp's read of a glTF / GLB / VRM file (gltf_read.h).
#include "rig/gltf_read.h"

#include "handoff/rig.h"

#include <assimp/Importer.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <utility>

namespace handoff::detail {

bool isBinaryGltf(std::string_view bytes) { return bytes.size() >= 4 && bytes.substr(0, 4) == "glTF"; }

Result<ReadResult> readGltf(Assimp::Importer& importer, std::string_view data, const std::string& source,
                            const std::string& path, bool inMemory, const ParserLimits& limits,
                            unsigned flags, GltfInfo& info) {
  const bool binary = isBinaryGltf(data);
  const std::string baseDir =
      path.empty() ? std::string() : std::filesystem::absolute(path).parent_path().string();
  // External buffers are read here, in this process: no more than the worker may hold.
  const double workerBytes = limits.memoryMiB * 1024.0 * 1024.0;
  const std::uint64_t maxExternal = workerBytes < static_cast<double>(kMaxExternalBytes)
                                        ? static_cast<std::uint64_t>(std::max(workerBytes, 0.0))
                                        : kMaxExternalBytes;
  Result<GltfInfo> checked = checkGltf(data, binary, source, baseDir, maxExternal);
  if (!checked) return Error{validUtf8(checked.error())};
  info = std::move(checked.value());
  std::string_view bytes = data;
  std::string hint = binary ? "glb" : "gltf";
  // A rewritten file is in memory (its external buffers carried in it).
  const bool fromMemory = inMemory || path.empty() || !info.rewritten.empty();
  if (!info.rewritten.empty()) {
    bytes = info.rewritten;
    hint = "glb";
  }
  Result<ReadResult> read =
      readAssimp(importer, source, limits,
                 ParseRequest{fromMemory, fromMemory ? std::string() : path,
                              fromMemory ? bytes : std::string_view(), hint, flags, hint});
  if (!read) return Error{validUtf8(read.error())};
  return read;
}

}  // namespace handoff::detail
