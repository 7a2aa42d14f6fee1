#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli.h"
#include "handoff/physics_bullet.h"

#include <CLI/CLI.hpp>

namespace handoff::cli {
namespace {
std::string& dataOverride() {
  static std::string dir;
  return dir;
}
}  // namespace

void setDataDirOverride(const std::string& dir) { dataOverride() = dir; }

std::string dataDir() {
  if (!dataOverride().empty()) return dataOverride();
  if (const char* env = std::getenv("HANDOFF_DATA"); env && *env) return env;
  if (std::filesystem::exists(HANDOFF_DEFAULT_DATA_DIR)) return HANDOFF_DEFAULT_DATA_DIR;
  return HANDOFF_INSTALLED_DATA_DIR;
}

}  // namespace handoff::cli

int main(int argc, char** argv) {
  CLI::App app{"handoff: animation <-> ragdoll handoff without pops, explosions or lost momentum"};
  app.require_subcommand(1);
  // The Bullet build the library was linked against matters to a game that links Bullet itself
  // (handoff::bulletPrecision()).
  app.set_version_flag("--version", std::string("handoff ") + HANDOFF_VERSION + " (Bullet, " +
                                        handoff::bulletPrecision() + " precision)");
  std::string data;
  app.add_option("--data", data, "folder with the shipped characters and clips")
      ->check(CLI::ExistingDirectory);
  app.parse_complete_callback([&] { handoff::cli::setDataDirOverride(data); });
  int exitCode = 0;
  const handoff::cli::Command tool(&app);
  handoff::cli::addInspectCommand(tool, exitCode);
  handoff::cli::addDemoCommand(tool, exitCode);
  handoff::cli::addAssetCommands(tool, exitCode);
  handoff::cli::addBenchCommands(tool, exitCode);
  handoff::cli::addLiveCommand(tool, exitCode);
  handoff::cli::addDiagnoseCommand(tool, exitCode);
  handoff::cli::addCorpusCommand(tool, exitCode);
  handoff::cli::addLevelCommand(tool, exitCode);
  CLI11_PARSE(app, argc, argv);
  return exitCode;
}
