// handoff live [CHARACTER_FILE | SCENARIO.json] [--host H] [--port N] [--out DIR] [--bench [S]]:
// the live ragdoll workbench (docs/WORKBENCH.md): a local server running the library and the
// page that drives it.
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli.h"
#include "live/server.h"

namespace handoff::cli {

void addLiveCommand(Command app, int& exitCode) {
  struct Args {
    std::string file, host = "127.0.0.1", out = "out/live";
    int port = 8766;
    double maxUploadMb = 64.0;
    double bench = 0.0;
  };
  auto args = std::make_shared<Args>();
  Command cmd = app.subcommand(
      "live", "the live workbench: trigger, hit and tune a ragdoll in the browser (prints the URL)");
  cmd.option("file", args->file,
             "character file (BVH, glTF/GLB, FBX, COLLADA) or scenario JSON to start from "
             "(default: the DeepMimic run of the data folder)");
  cmd.option("--host", args->host, "interface to listen on (default 127.0.0.1: this machine only)");
  cmd.option("--port", args->port, "port (0 picks a free one)").range(0, 65535);
  cmd.option("--out", args->out, "folder for saved scenarios, assets and exported replays");
  cmd.option("--max-upload-mb", args->maxUploadMb, "largest upload accepted [MiB]").range(0.001, 4096.0);
  cmd.option("--bench", args->bench,
             "no server: play the file for this many seconds with a scripted ragdoll and hit, print the "
             "server time per frame")
      .valueOptional("8");
  cmd.callback([args, cmd, &exitCode] {
    live::ServerOptions options;
    options.host = args->host;
    options.port = args->port;
    options.webDir = HANDOFF_WEB_DIR;
    options.dataDir = dataDir();
    options.outDir = args->out;
    options.maxUploadBytes = static_cast<std::size_t>(args->maxUploadMb * 1024.0 * 1024.0);
    if (!args->file.empty()) {
      const std::filesystem::path path(args->file);
      if (!std::filesystem::exists(path)) {
        std::cerr << "error: " << args->file << ": no such file\n";
        exitCode = 1;
        return;
      }
      if (path.extension() == ".json") {
        Result<Scenario> s = loadScenarioFile(args->file);
        if (!s) {
          std::cerr << "error: " << s.error() << "\n";
          exitCode = 1;
          return;
        }
        options.start = std::move(s).value();
        options.startOrigin = "scenario: " + args->file;
      } else {
        options.startCharacter = std::filesystem::absolute(path).string();
        options.startOrigin = "file: " + args->file;
      }
    }
    if (cmd.count("--bench") > 0) {
      exitCode = live::runBench(options, args->bench > 0.0 ? args->bench : 8.0);
      return;
    }
    exitCode = live::runServer(options);
  });
}

}  // namespace handoff::cli
