// Pieces shared by the runner's source files (not part of the public API).
#pragma once

#include "handoff/runner.h"

#include <map>
#include <memory>
#include <string>

namespace handoff::runner_detail {

/// Imported files, cached per path and unit scale, and built or loaded ragdolls.
struct Cache {
  std::map<std::string, std::shared_ptr<const ImportedAsset>> files;
  std::map<std::string, std::shared_ptr<const RagdollAsset>> assets;
  Result<std::shared_ptr<const ImportedAsset>> import(const std::string& path, double unitScale);
};

/// Everything one run needs, loaded once per scenario (shared by its baselines).
struct Loaded {
  std::shared_ptr<const ImportedAsset> character;
  std::shared_ptr<const RagdollAsset> asset;
  Clip clip;                                          ///< The clip playing from t = 0.
  std::vector<std::pair<double, Clip>> clipSwitches;  ///< Per `clip` event (same order).
  std::optional<GetUpClip> supine, prone;
};

/// Counts gathered while stepping that only the checks read.
struct RunCounters {
  int blockingViolations = 0;  ///< Steps with other than exactly one blocking representation.
  int bodiesLeftWorld = 0;     ///< Bodies the engine disabled (left the world, non-finite).
};

/// SPEC thresholds (and the scenario's expectations) that apply to a finished run.
std::vector<ThresholdCheck> checksFor(const Scenario& scenario, const ScenarioResult& result,
                                      const RunCounters& counters);

}  // namespace handoff::runner_detail
