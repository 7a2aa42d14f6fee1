// handoff level <file> [--json] [--scale S]: the static triangle meshes a glTF/GLB level gives
// (loadLevel), so a user sees before a run whether the level came in right: per mesh its
// triangles, vertices and bounds, the level's bounds, how much of its surface faces each axis (a
// Y-up level in metres has most of its area facing Y and a size of metres to kilometres), the
// degenerate triangles dropped and the warnings. Exit 1 when the file cannot be read as a level.
#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cli.h"
#include "handoff/level.h"

namespace handoff::cli {
namespace {

std::array<double, 3> vec(const Vec3& v) { return {v.x, v.y, v.z}; }

}  // namespace

LevelFigures levelFigures(const Level& level) {
  LevelFigures f;
  f.meshes = level.meshes.size();
  f.triangles = level.triangleCount();
  f.extent = level.boundsMax - level.boundsMin;
  for (const LevelMesh& mesh : level.meshes) {
    for (size_t t = 0; t + 2 < mesh.indices.size(); t += 3) {
      const Vec3& a = mesh.vertices[mesh.indices[t]];
      const Vec3 n =
          glm::cross(mesh.vertices[mesh.indices[t + 1]] - a, mesh.vertices[mesh.indices[t + 2]] - a);
      // |n| is twice the area; |n_k| / 2 is the area's projection on the plane normal to axis k.
      for (int k = 0; k < 3; ++k) f.facing[static_cast<size_t>(k)] += 0.5 * std::abs(n[k]);
      f.area += 0.5 * glm::length(n);
    }
  }
  return f;
}

nlohmann::ordered_json levelJson(const Level& level) {
  const LevelFigures f = levelFigures(level);
  nlohmann::ordered_json j;
  j["file"] = level.source;
  j["meshes"] = f.meshes;
  j["triangles"] = f.triangles;
  j["droppedDegenerate"] = level.droppedDegenerate;
  j["boundsMin"] = vec(level.boundsMin);
  j["boundsMax"] = vec(level.boundsMax);
  j["area"] = f.area;
  j["areaFacing"] = {{"x", f.facing[0]}, {"y", f.facing[1]}, {"z", f.facing[2]}};
  nlohmann::ordered_json meshes = nlohmann::ordered_json::array();
  for (const LevelMesh& mesh : level.meshes) {
    Vec3 lo = mesh.vertices.front(), hi = mesh.vertices.front();
    for (const Vec3& v : mesh.vertices) lo = glm::min(lo, v), hi = glm::max(hi, v);
    meshes.push_back({{"name", mesh.name},
                      {"triangles", mesh.indices.size() / 3},
                      {"vertices", mesh.vertices.size()},
                      {"boundsMin", vec(lo)},
                      {"boundsMax", vec(hi)}});
  }
  j["perMesh"] = meshes;
  j["warnings"] = level.warnings;
  return j;
}

void addLevelCommand(Command app, int& exitCode) {
  struct Args {
    std::string file;
    bool json = false;
    double scale = 1.0;
  };
  auto args = std::make_shared<Args>();
  Command cmd = app.subcommand(
      "level",
      "print the static triangle meshes a glTF/GLB level gives (meshes, triangles, bounds, warnings)");
  cmd.option("file", args->file, "glTF (.gltf with its buffers) or GLB file").required();
  cmd.flag("--json", args->json, "print one JSON object");
  cmd.option("--scale", args->scale, "metres per file unit, after the node transforms [default 1]");
  cmd.callback([args, &exitCode] {
    LevelOptions options;
    options.unitScale = args->scale;
    Result<Level> level = loadLevel(args->file, options);
    if (!level) {
      std::cerr << "error: " << level.error() << "\n";
      exitCode = 1;
      return;
    }
    if (args->json) {
      std::cout << levelJson(*level).dump(2) << "\n";
      return;
    }
    const LevelFigures f = levelFigures(*level);
    std::printf("%s: %zu meshes, %zu triangles (%zu degenerate dropped)\n", level->source.c_str(), f.meshes,
                f.triangles, level->droppedDegenerate);
    std::printf("bounds [m]: (%.3f, %.3f, %.3f) to (%.3f, %.3f, %.3f), size %.3f x %.3f x %.3f\n",
                level->boundsMin.x, level->boundsMin.y, level->boundsMin.z, level->boundsMax.x,
                level->boundsMax.y, level->boundsMax.z, f.extent.x, f.extent.y, f.extent.z);
    std::printf("surface %.1f m^2, facing X %.0f %%, Y (up) %.0f %%, Z %.0f %%\n", f.area,
                100.0 * f.facing[0] / f.totalFacing(), 100.0 * f.facing[1] / f.totalFacing(),
                100.0 * f.facing[2] / f.totalFacing());
    std::printf("  %-24s %9s %9s   bounds [m]\n", "mesh", "triangles", "vertices");
    for (const LevelMesh& mesh : level->meshes) {
      Vec3 lo = mesh.vertices.front(), hi = mesh.vertices.front();
      for (const Vec3& v : mesh.vertices) lo = glm::min(lo, v), hi = glm::max(hi, v);
      std::printf("  %-24s %9zu %9zu   (%.3f, %.3f, %.3f) to (%.3f, %.3f, %.3f)\n", mesh.name.c_str(),
                  mesh.indices.size() / 3, mesh.vertices.size(), lo.x, lo.y, lo.z, hi.x, hi.y, hi.z);
    }
    for (const std::string& w : level->warnings) std::printf("warning: %s\n", w.c_str());
  });
}

}  // namespace handoff::cli
