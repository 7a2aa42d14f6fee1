// The handoff command-line tool. Uses only the public API (include/handoff/).
#pragma once

#include <nlohmann/json.hpp>

#include "command.h"
#include "handoff/level.h"
#include "handoff/physics.h"
#include "handoff/result.h"
#include "handoff/runner.h"

#include <array>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace handoff::cli {

/// Folder holding the shipped characters and clips: --data, then $HANDOFF_DATA, then the
/// source tree's data/, then the installed copy.
std::string dataDir();
void setDataDirOverride(const std::string& dir);

/// Each command registers itself on the app; the callback sets the exit code.
/// The engines --engine accepts: "bullet", and "ode" and "ode-quick" (ODE's iterative solver)
/// when the ODE adapter is built.
std::vector<std::string> engineNames();
using WorldFactory = std::function<std::unique_ptr<PhysicsWorld>(const WorldSettings&)>;
/// Creates worlds of `engine` (one of engineNames()).
WorldFactory worldFactory(const std::string& engine);

/// One engine's run of a suite (`handoff demo --compare-engines`).
struct EngineRun {
  std::string engine;
  std::vector<ScenarioResult> results;
};
/// Writes `file` (markdown): every scenario's threshold rows with each run's figure and verdict
/// side by side, in the first run's order.
Status writeEngineComparison(const std::filesystem::path& file, const std::vector<EngineRun>& runs);

void addInspectCommand(Command app, int& exitCode);
void addDemoCommand(Command app, int& exitCode);
void addAssetCommands(Command app, int& exitCode);
void addBenchCommands(Command app, int& exitCode);
/// `handoff bench soak` (cmd_bench_soak.cpp) on the `bench` command.
void addSoakBenchCommand(Command bench, int& exitCode);
void addLiveCommand(Command app, int& exitCode);
void addDiagnoseCommand(Command app, int& exitCode);
void addCorpusCommand(Command app, int& exitCode);
void addLevelCommand(Command app, int& exitCode);

/// What `handoff level` and the corpus's level rows report of a level (cmd_level.cpp).
struct LevelFigures {
  std::size_t meshes = 0;
  std::size_t triangles = 0;
  Vec3 extent{0.0};                       ///< boundsMax - boundsMin. [m]
  double area = 0.0;                      ///< Surface of every triangle. [m^2]
  std::array<double, 3> facing{0, 0, 0};  ///< The surface projected along X, Y, Z. [m^2]
  double totalFacing() const {
    return facing[0] + facing[1] + facing[2] > 0 ? facing[0] + facing[1] + facing[2] : 1.0;
  }
};
LevelFigures levelFigures(const Level& level);
/// The level as `handoff level --json` prints it.
nlohmann::ordered_json levelJson(const Level& level);
/// The corpus's levels (cmd_corpus_levels.cpp): each row of levels.tsv (file, description, units,
/// up axis) loaded and checked against what it states; a line per level on `progress`. Returns
/// {"right", "count", "files"}; `right` counts the levels whose every stated figure holds.
nlohmann::ordered_json runCorpusLevels(const std::filesystem::path& dir,
                                       const std::vector<std::vector<std::string>>& rows, std::FILE* progress,
                                       bool text, int& right);

}  // namespace handoff::cli
