// handoff demo: the main job on the built-in default character and clips.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli.h"
#include "handoff/import.h"

namespace handoff::cli {

void addDemoCommand(CLI::App& app, int& exitCode) {
  auto out = std::make_shared<std::string>("out/demo");
  CLI::App* cmd = app.add_subcommand("demo", "run the built-in suite on the default character");
  cmd->add_option("--out", *out, "output folder");
  cmd->callback([out, &exitCode] {
    const std::filesystem::path data = dataDir();
    const char* clips[] = {"humanoid3d_run.bvh",           "humanoid3d_jump.bvh",
                           "humanoid3d_spin.bvh",          "humanoid3d_dance_spin.bvh",
                           "humanoid3d_backflip.bvh",      "humanoid3d_getup_faceup.bvh",
                           "humanoid3d_getup_facedown.bvh"};
    std::printf("handoff demo: default character (DeepMimic humanoid) from %s\n", data.string().c_str());
    for (const char* name : clips) {
      const std::filesystem::path file = data / "deepmimic" / name;
      Result<ImportedAsset> imported = importFile(file.string());
      if (!imported) {
        std::cerr << "error: " << imported.error() << "\n";
        exitCode = 1;
        return;
      }
      const Clip& c = imported->clips.at(0);
      std::printf("  %-32s %2d joints %4d frames %6.1f Hz %6.2f s  hip %.2f m\n", name,
                  imported->skeleton.jointCount(), c.frameCount, c.frameRate, c.duration(),
                  imported->hipHeight);
    }
    std::filesystem::create_directories(*out);
  });
}

}  // namespace handoff::cli
