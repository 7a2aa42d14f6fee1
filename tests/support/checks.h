// A threshold row of a scenario result by name (the runner tests' common look-up).
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

}  // namespace handoff::test
