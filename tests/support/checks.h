// A threshold row of a scenario result by name (the runner tests' common look-up), a handoff of
// a clip at a time as a scenario, a run of a scenario alone (no baselines, no drive comparison) on the
// shipped data, and the same run with a velocity put into every ragdoll body behind the solver's back (a game
// bug the rows must catch).
#pragma once

#include "handoff/runner.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace handoff::test {

/// The check named `name` in `r.checks`; nullptr when the run has no such row.
inline const ThresholdCheck* findThresholdCheck(const ScenarioResult& r, const std::string& name) {
  const auto it =
      std::find_if(r.checks.begin(), r.checks.end(), [&](const ThresholdCheck& c) { return c.name == name; });
  return it == r.checks.end() ? nullptr : &*it;
}

/// `s` run once on the shipped data, without the naive baselines or the other drive solver.
inline RunOptions aloneRunOptions() {
  RunOptions options;
  options.searchDirs = {HANDOFF_DATA_DIR};
  options.baselines = false;
  options.driveComparison = false;
  return options;
}

/// A scenario that plays `clip` of `file` (a path from the project's scenarios/ folder, as the
/// shipped scenarios name their data; `clip` empty: the file's only clip) from 0 s, gets-up off,
/// and hands the character to a full ragdoll at `time` [s], followed for `follow` [s]. `extra`:
/// more top-level members, each with its leading comma (`, "root": {...}`).
inline Result<Scenario> ragdollAt(const std::string& file, const std::string& clip, double time,
                                  double follow, const std::string& extra = "",
                                  const std::string& wrap = "clamp") {
  const auto number = [](double x) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", x);
    return std::string(text);
  };
  const std::string text = R"({ "version": 1, "name": "ragdoll_at", "character": { "file": ")" + file +
                           R"(" }, "clip": { )" + (clip.empty() ? "" : R"("name": ")" + clip + R"(", )") +
                           R"("wrap": ")" + wrap + R"(" },
    "events": [ { "time": 0.0, "type": "getup_allowed", "allowed": false },
                { "time": )" +
                           number(time) + R"(, "type": "ragdoll" } ],
    "endTime": )" + number(time + follow) +
                           extra + " }";
  return loadScenarioJson(text, std::string(HANDOFF_SOURCE_DIR) + "/scenarios/ragdoll_at.json");
}

inline ScenarioResult runScenarioAlone(const Scenario& s) {
  ScenarioRunner runner(aloneRunOptions());
  return runner.run(s);
}

/// `s` run alone, every ragdoll body's linear velocity raised by `kick` once, at the first step
/// boundary at or after scene time `at`, written straight into the world (no impulse the runner
/// sees). `kicked` tells whether the run reached `at`. A start that fails gives a result with
/// ok false and the error.
inline ScenarioResult runWithVelocityKick(const Scenario& s, double at, const Vec3& kick, bool& kicked) {
  kicked = false;
  ScenarioRunner runner(aloneRunOptions());
  auto started = ScenarioSession::start(runner, s);
  if (!started.ok()) {
    ScenarioResult failed;
    failed.error = started.error();
    return failed;
  }
  ScenarioSession& session = **started;
  while (session.step()) {
    if (kicked || session.time() < at) continue;
    // The session owns the world; the test plays the game that writes to it.
    auto& world = const_cast<PhysicsWorld&>(session.world());
    const Ragdoll& ragdoll = session.character().ragdoll();
    for (int b = 0; b < ragdoll.bodyCount(); ++b) {
      world.setLinearVelocity(ragdoll.body(b), world.linearVelocity(ragdoll.body(b)) + kick);
    }
    kicked = true;
  }
  return session.finish();
}

}  // namespace handoff::test
