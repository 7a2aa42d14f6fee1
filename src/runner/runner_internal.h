// Pieces shared by the runner's source files (not part of the public API).
#pragma once

#include "handoff/level.h"
#include "handoff/runner.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace handoff::runner_detail {

/// Imported files, cached per path and unit scale, and built or loaded ragdolls.
struct Cache {
  std::map<std::string, std::shared_ptr<const ImportedAsset>> files;
  std::map<std::string, std::shared_ptr<const RagdollAsset>> assets;
  std::map<std::pair<std::string, double>, std::shared_ptr<const Level>>
      levels;  ///< Per path and unit scale.
  Result<std::shared_ptr<const ImportedAsset>> import(const std::string& path, double unitScale);
};

/// Everything one run needs, loaded once per scenario (shared by its baselines).
struct Loaded {
  std::string characterPath;  ///< The character file, resolved.
  std::shared_ptr<const ImportedAsset> character;
  std::shared_ptr<const RagdollAsset> asset;
  Clip clip;                                          ///< The clip playing from t = 0.
  std::vector<std::pair<double, Clip>> clipSwitches;  ///< Per `clip` event (same order).
  std::optional<GetUpClip> supine, prone;
  std::shared_ptr<const Level> level;  ///< world.level, read; null without one.
};

/// Loads what `scenario` names through the cache (docs/SCENARIOS.md, "How a scenario is played").
/// Errors name the scenario field.
Result<Loaded> load(Cache& cache, const RunOptions& options, const Scenario& scenario);
/// The clip a `clip` event names, on the character's skeleton.
Result<Clip> loadSwitchClip(Cache& cache, const RunOptions& options, const Scenario& scenario,
                            const Loaded& loaded, const ScenarioClip& ref);
/// The supine and prone get-up clips of `scenario` (its own or the runner's defaults).
Result<std::pair<GetUpClip, GetUpClip>> loadScenarioGetUps(Cache& cache, const RunOptions& options,
                                                           const Scenario& scenario, const Loaded& loaded);
/// Whether any `getup_allowed` event (or the Character's default) ever allows a get-up.
bool getUpEverAllowed(const Scenario& scenario);

/// The body an impulse names: a slot name, or a bone (its body, or its nearest ancestor's); -1: none.
int bodyNamed(const RagdollAsset& asset, const Skeleton& skeleton, const std::string& name);

/// What a scenario's result says before it runs (name, description, source, character, clip,
/// drive mode).
ScenarioResult described(const Scenario& scenario);

/// Counts gathered while stepping that only the checks read.
struct RunCounters {
  int blockingViolations = 0;  ///< Steps with other than exactly one blocking representation.
  int bodiesLeftWorld = 0;     ///< Bodies the engine disabled (left the world, non-finite).
};

/// SPEC thresholds (and the scenario's expectations) that apply to a finished run.
std::vector<ThresholdCheck> checksFor(const Scenario& scenario, const ScenarioResult& result,
                                      const RunCounters& counters);

}  // namespace handoff::runner_detail

namespace handoff {
struct ScenarioRunner::Impl {
  runner_detail::Cache cache;
};
}  // namespace handoff
