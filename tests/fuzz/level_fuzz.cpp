// libFuzzer target for the level loader (loadLevel: the glTF check, meshopt and Draco decoding,
// Assimp in its worker process, the scene walk). The first byte picks the name (.glb or .gltf),
// the rest is the file, written to a file of its own (loadLevel reads files). Beyond "no crash, no
// sanitizer report, no leak": a rejection names the file and is valid UTF-8; an accepted level
// has finite vertices, indices in range, no triangle below the degenerate bounds, its bounds
// holding every vertex and at most LevelOptions::maxTriangles triangles.
#include "fuzz_check.h"
#include "handoff/level.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace {
constexpr const char* kTarget = "level_fuzz";

/// A folder of this process's own for the file under test, removed when the process ends.
struct Folder {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("handoff_level_fuzz_" + std::to_string(::getpid()));
  Folder() { std::filesystem::create_directories(path); }
  ~Folder() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};
const std::filesystem::path& folder() {
  static const Folder dir;
  return dir.path;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > 256 * 1024) return 0;
  const std::string path = (folder() / (data[0] % 2 == 0 ? "fuzz.glb" : "fuzz.gltf")).string();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  handoff::LevelOptions options;
  options.maxTriangles = 200'000;
  const handoff::Result<handoff::Level> level = handoff::loadLevel(path, options);
  if (!level) {
    handoff_fuzz::checkRejection(kTarget, level.error(), path);
    return 0;
  }
  if (level->meshes.empty()) handoff_fuzz::failure(kTarget, "a level without meshes accepted", "");
  if (level->triangleCount() > options.maxTriangles)
    handoff_fuzz::failure(kTarget, "maxTriangles passed", "");
  for (const handoff::LevelMesh& mesh : level->meshes) {
    if (mesh.indices.empty() || mesh.indices.size() % 3 != 0)
      handoff_fuzz::failure(kTarget, "a mesh without whole triangles accepted", mesh.name);
    for (const handoff::Vec3& v : mesh.vertices) {
      if (!std::isfinite(v.x) || !std::isfinite(v.y) || !std::isfinite(v.z))
        handoff_fuzz::failure(kTarget, "a non-finite vertex accepted", mesh.name);
      for (int k = 0; k < 3; ++k) {
        if (v[k] < level->boundsMin[k] || v[k] > level->boundsMax[k])
          handoff_fuzz::failure(kTarget, "a vertex outside the level's bounds", mesh.name);
      }
    }
    for (size_t t = 0; t < mesh.indices.size(); t += 3) {
      if (std::max({mesh.indices[t], mesh.indices[t + 1], mesh.indices[t + 2]}) >= mesh.vertices.size())
        handoff_fuzz::failure(kTarget, "an index out of range accepted", mesh.name);
      const handoff::Vec3 a = mesh.vertices[mesh.indices[t]], b = mesh.vertices[mesh.indices[t + 1]],
                          c = mesh.vertices[mesh.indices[t + 2]];
      if (!(0.5 * glm::length(glm::cross(b - a, c - a)) >= 1e-12))
        handoff_fuzz::failure(kTarget, "a degenerate triangle kept", mesh.name);
    }
  }
  return 0;
}
