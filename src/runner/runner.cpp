// ScenarioRunner::run: the scenario's own run as a ScenarioSession stepped to its end, then the
// naive baselines and the other drive solver, each a session of its own on the same loaded files
// (runner.h). Loading is in load.cpp, the session in session*.cpp (session_impl.h), the checks in
// checks.cpp, the report in report.cpp.
#include "handoff/runner.h"

#include "runner/runner_internal.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace handoff {

bool ScenarioResult::passed() const {
  if (!ok || !notRun.empty()) return false;
  return std::all_of(checks.begin(), checks.end(), [](const ThresholdCheck& c) { return c.ran && c.pass; });
}

ScenarioRunner::ScenarioRunner(RunOptions options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>()) {}
ScenarioRunner::~ScenarioRunner() = default;

namespace runner_detail {

ScenarioResult described(const Scenario& scenario) {
  ScenarioResult result;
  result.name = scenario.name;
  result.description = scenario.description;
  result.source = scenario.sourceName.empty() ? "built-in" : scenario.sourceName;
  result.character = scenario.character.file;
  result.clip = scenario.clip.name.empty() ? "#" + std::to_string(scenario.clip.index) : scenario.clip.name;
  result.driveMode = driveSolverName(scenario.settings.driveSolver);
  return result;
}

}  // namespace runner_detail

namespace {

using runner_detail::described;
using runner_detail::Loaded;

bool anyPowered(const ScenarioResult& r) {
  return std::any_of(r.handoffs.begin(), r.handoffs.end(),
                     [](const HandoffMetrics& h) { return h.kind == "powered"; });
}

/// What the report shows of a run with the other drive solver.
DriveComparison comparisonOf(const ScenarioResult& o, DriveSolver solver) {
  DriveComparison dc;
  dc.driveMode = driveSolverName(solver);
  dc.ok = o.ok;
  for (const HandoffMetrics& h : o.handoffs) {
    if (h.kind == "powered" && !dc.powered) dc.powered = h;
  }
  dc.poweredMaxPositionError = o.poweredMaxPositionError;
  dc.poweredMaxRmsJointError = o.poweredMaxRmsJointError;
  dc.poweredReturned = o.poweredReturned;
  dc.hitReactions = o.hitReactions;
  dc.knockedOut = std::any_of(o.events.begin(), o.events.end(),
                              [](const CharacterEvent& e) { return e.kind == CharacterEventKind::Knockout; });
  for (const ThresholdCheck& c : o.checks) {
    if (c.name.rfind("powered.", 0) == 0) dc.checks.push_back(c);
  }
  return dc;
}

}  // namespace

ScenarioResult ScenarioRunner::play(const Scenario& scenario, std::shared_ptr<const Loaded> loaded,
                                    HandoffMode mode, double endTime, Replay* replay) {
  Result<std::unique_ptr<ScenarioSession>> session =
      ScenarioSession::startLoaded(*this, scenario, std::move(loaded), mode, endTime, replay);
  if (!session) {
    ScenarioResult failed = described(scenario);
    failed.error = session.error();
    return failed;
  }
  while ((*session)->step()) {
  }
  return (*session)->finish();
}

ScenarioResult ScenarioRunner::run(const Scenario& scenario, Replay* replay,
                                   std::vector<Replay>* baselineReplays) {
  const auto started = std::chrono::steady_clock::now();
  Result<Loaded> load = runner_detail::load(impl_->cache, options_, scenario);
  if (!load) {
    ScenarioResult result = described(scenario);
    result.error = load.error();
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return result;
  }
  const auto loaded = std::make_shared<const Loaded>(std::move(load).value());
  ScenarioResult result = play(scenario, loaded, scenario.settings.handoff.mode, scenario.endTime, replay);
  // The naive baselines on the same frames, up to baselineSeconds after the first handoff.
  if (result.ok && options_.baselines && scenario.settings.handoff.mode == HandoffMode::Inherit &&
      !result.handoffs.empty()) {
    const double end = std::min(scenario.endTime, result.handoffs.front().time + options_.baselineSeconds);
    for (HandoffMode mode : {HandoffMode::ZeroVelocity, HandoffMode::BindPose}) {
      Replay baselineReplay;
      BaselineResult br;
      br.mode = scenarioHandoffModeName(mode);
      const ScenarioResult b = play(scenario, loaded, mode, end, baselineReplays ? &baselineReplay : nullptr);
      if (b.ok && !b.handoffs.empty()) br.handoff = b.handoffs.front();
      result.baselines.push_back(br);
      if (baselineReplays) {
        baselineReplay.name = scenario.name + "." + br.mode;
        baselineReplays->push_back(std::move(baselineReplay));
      }
    }
  }
  // The other drive solver on the same frames, when the scenario powers the character.
  if (result.ok && options_.driveComparison && anyPowered(result)) {
    Scenario other = scenario;
    other.settings.driveSolver = scenario.settings.driveSolver == DriveSolver::Explicit
                                     ? DriveSolver::Implicit
                                     : DriveSolver::Explicit;
    const ScenarioResult o = play(other, loaded, scenario.settings.handoff.mode, scenario.endTime, nullptr);
    result.driveComparisons.push_back(comparisonOf(o, other.settings.driveSolver));
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace handoff
