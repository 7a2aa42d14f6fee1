// The handoff command-line tool. Uses only the public API (include/handoff/).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace handoff::cli {

/// Folder holding the shipped characters and clips: --data, then $HANDOFF_DATA, then the
/// source tree's data/, then the installed copy.
std::string dataDir();
void setDataDirOverride(const std::string& dir);

/// Each command registers itself on the app; the callback sets the exit code.
void addInspectCommand(CLI::App& app, int& exitCode);
void addDemoCommand(CLI::App& app, int& exitCode);
void addAssetCommands(CLI::App& app, int& exitCode);
void addBenchCommands(CLI::App& app, int& exitCode);
/// `handoff bench soak` (cmd_bench_soak.cpp) on the `bench` command.
void addSoakBenchCommand(CLI::App& bench, int& exitCode);
void addLiveCommand(CLI::App& app, int& exitCode);
void addDiagnoseCommand(CLI::App& app, int& exitCode);
void addCorpusCommand(CLI::App& app, int& exitCode);

}  // namespace handoff::cli
