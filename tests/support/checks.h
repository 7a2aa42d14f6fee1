// A threshold row of a scenario result by name (the runner tests' common look-up), and a run of a
// scenario alone (no baselines, no drive comparison) on the shipped data.
#pragma once

#include "handoff/runner.h"

#include <algorithm>
#include <string>

namespace handoff::test {

/// The check named `name` in `r.checks`; nullptr when the run has no such row.
inline const ThresholdCheck* findThresholdCheck(const ScenarioResult& r, const std::string& name) {
  const auto it =
      std::find_if(r.checks.begin(), r.checks.end(), [&](const ThresholdCheck& c) { return c.name == name; });
  return it == r.checks.end() ? nullptr : &*it;
}

/// `s` run once on the shipped data, without the naive baselines or the other drive solver.
inline ScenarioResult runScenarioAlone(const Scenario& s) {
  RunOptions options;
  options.searchDirs = {HANDOFF_DATA_DIR};
  options.baselines = false;
  options.driveComparison = false;
  ScenarioRunner runner(options);
  return runner.run(s);
}

}  // namespace handoff::test
