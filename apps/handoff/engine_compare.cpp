// `handoff demo --compare-engines`: the same scenarios' threshold rows on every engine, side by
// side (engines.md in the output folder), so a user sees which figures are the core's (the same
// on both) and which are the engine's.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "cli.h"
#include "handoff/runner.h"

namespace handoff::cli {
namespace {

std::string figure(const ThresholdCheck* c) {
  if (c == nullptr) return "-";
  if (!c->ran) return "not run";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g %s", c->value, c->pass ? "pass" : "**FAIL**");
  return buf;
}

const ThresholdCheck* findCheck(const ScenarioResult* r, const std::string& name) {
  if (r == nullptr) return nullptr;
  for (const ThresholdCheck& c : r->checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

const ScenarioResult* findScenario(const std::vector<ScenarioResult>& results, const std::string& name) {
  for (const ScenarioResult& r : results) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

}  // namespace

Status writeEngineComparison(const std::filesystem::path& file, const std::vector<EngineRun>& runs) {
  std::ofstream out(file);
  if (!out) return Error{"cannot write " + file.string()};
  out << "# The demo's scenarios on " << runs.size() << " engines\n\n";
  out << "Each row: the figure measured and whether it passed its threshold, per engine (each engine's "
         "own report is in its folder). The same thresholds on every engine.\n\n";
  out << "| engine | scenarios passing every row | rows passing |\n|---|---|---|\n";
  for (const EngineRun& run : runs) {
    int scenarios = 0, rows = 0, ran = 0;
    for (const ScenarioResult& r : run.results) {
      scenarios += r.passed() ? 1 : 0;
      for (const ThresholdCheck& c : r.checks) {
        ran += 1;
        rows += c.ran && c.pass ? 1 : 0;
      }
    }
    out << "| " << run.engine << " | " << scenarios << " / " << run.results.size() << " | " << rows << " / "
        << ran << " |\n";
  }
  for (const ScenarioResult& first : runs.front().results) {
    out << "\n## " << first.name << "\n\n| row | threshold |";
    for (const EngineRun& run : runs) out << " " << run.engine << " |";
    out << "\n|---|---|";
    for (size_t i = 0; i < runs.size(); ++i) out << "---|";
    out << "\n";
    for (const ThresholdCheck& c : first.checks) {
      char threshold[64];
      std::snprintf(threshold, sizeof threshold, "%s %.4g %s", c.comparison.c_str(), c.threshold,
                    c.unit.c_str());
      out << "| " << c.name << " | " << threshold << " |";
      for (const EngineRun& run : runs)
        out << " " << figure(findCheck(findScenario(run.results, first.name), c.name)) << " |";
      out << "\n";
    }
  }
  if (!out) return Error{"cannot write " + file.string()};
  return {};
}

}  // namespace handoff::cli
