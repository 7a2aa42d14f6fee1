// handoff inspect <file> [--json]: what was imported, so a user sees at once whether a file
// came in right.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

#include "cli.h"
#include "handoff/import.h"

namespace handoff::cli {

void addInspectCommand(Command app, int& exitCode) {
  struct Args {
    std::string file;
    bool json = false;
    double scale = 0.0;
  };
  auto args = std::make_shared<Args>();
  Command cmd = app.subcommand("inspect", "print the skeleton and clips a file imports to");
  cmd.option("file", args->file, "BVH, glTF/GLB, FBX or COLLADA file").required();
  cmd.flag("--json", args->json, "print one JSON object");
  cmd.option("--scale", args->scale, "metres per file unit (default: auto-detect)");
  cmd.callback([args, &exitCode] {
    ImportOptions options;
    options.unitScale = args->scale;
    Result<ImportedAsset> imported = importFile(args->file, options);
    if (!imported) {
      std::cerr << "error: " << imported.error() << "\n";
      exitCode = 1;
      return;
    }
    const ImportedAsset& a = *imported;
    const Skeleton& s = a.skeleton;
    if (args->json) {
      nlohmann::json j;
      j["file"] = args->file;
      j["joint_count"] = s.jointCount();
      j["unit_scale"] = a.unitScale;
      j["unit_scale_detected"] = a.unitScaleDetected;
      j["hip_height"] = a.hipHeight;
      nlohmann::json joints = nlohmann::json::array();
      for (int i = 0; i < s.jointCount(); ++i) {
        const int p = s.parents[static_cast<size_t>(i)];
        joints.push_back({{"name", s.jointNames[static_cast<size_t>(i)]},
                          {"parent", p == kNoParent ? nlohmann::json(nullptr)
                                                    : nlohmann::json(s.jointNames[static_cast<size_t>(p)])}});
      }
      j["joints"] = joints;
      nlohmann::json clips = nlohmann::json::array();
      for (const Clip& c : a.clips) {
        clips.push_back({{"name", c.name},
                         {"frame_count", c.frameCount},
                         {"frame_rate", c.frameRate},
                         {"duration", c.duration()}});
      }
      j["clips"] = clips;
      j["frame_count"] = a.clips.empty() ? 0 : a.clips[0].frameCount;
      j["frame_rate"] = a.clips.empty() ? 0.0 : a.clips[0].frameRate;
      j["duration"] = a.clips.empty() ? 0.0 : a.clips[0].duration();
      j["meshes"] = a.meshes.size();
      j["warnings"] = a.warnings;
      std::cout << j.dump(2) << "\n";
      return;
    }
    std::printf("%s\n", args->file.c_str());
    std::printf("  unit scale      %.6g m per unit (%s)\n", a.unitScale,
                a.unitScaleDetected ? "auto-detected" : "given");
    std::printf("  hip height      %.3f m (bind pose)\n", a.hipHeight);
    std::printf("  joints          %d\n", s.jointCount());
    for (int i = 0; i < s.jointCount(); ++i) {
      int depth = 0;
      for (int p = s.parents[static_cast<size_t>(i)]; p != kNoParent; p = s.parents[static_cast<size_t>(p)])
        ++depth;
      std::printf("    %3d %*s%s\n", i, depth * 2, "", s.jointNames[static_cast<size_t>(i)].c_str());
    }
    std::printf("  clips           %zu\n", a.clips.size());
    for (const Clip& c : a.clips) {
      std::printf("    %-28s %6d frames  %8.3f Hz  %8.3f s\n", c.name.c_str(), c.frameCount, c.frameRate,
                  c.duration());
    }
    std::printf("  skinned meshes  %zu\n", a.meshes.size());
    for (const std::string& w : a.warnings) std::printf("  warning: %s\n", w.c_str());
  });
}

}  // namespace handoff::cli
