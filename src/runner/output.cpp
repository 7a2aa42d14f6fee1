// runToFolder: the output folder of `handoff demo` and `handoff run`.
#include "handoff/runner.h"

#include <filesystem>
#include <fstream>

namespace handoff {
namespace {

Status writeText(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return Error{"cannot write '" + path.string() + "'"};
  return {};
}

}  // namespace

Result<std::vector<ScenarioResult>> runToFolder(std::span<const Scenario> scenarios,
                                                const std::string& folder, const RunOptions& options,
                                                const RunProgress& progress) {
  namespace fs = std::filesystem;
  const fs::path out(folder);
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) return Error{"cannot create '" + folder + "': " + ec.message()};
  ScenarioRunner runner(options);
  std::vector<ScenarioResult> results;
  int index = 0;
  for (const Scenario& s : scenarios) {
    Replay replay;
    std::vector<Replay> baselineReplays;
    ScenarioResult r = runner.run(s, &replay, &baselineReplays);
    if (r.ok) {
      const fs::path glb = out / (s.name + ".glb");
      if (Status w = writeReplayGlb(replay, glb.string()); w) {
        r.replayFile = glb.filename().string();
      } else {
        r.notRun.push_back("replay not written: " + w.error());
      }
      for (size_t b = 0; b < baselineReplays.size() && b < r.baselines.size(); ++b) {
        const fs::path path = out / (baselineReplays[b].name + ".glb");
        if (baselineReplays[b].frames.empty()) continue;
        if (Status w = writeReplayGlb(baselineReplays[b], path.string()); w) {
          r.baselines[b].replayFile = path.filename().string();
        } else {
          r.notRun.push_back("baseline replay not written: " + w.error());
        }
      }
    }
    results.push_back(std::move(r));
    if (progress) progress(results.back(), ++index, static_cast<int>(scenarios.size()));
  }
  if (Status w = writeText(out / "metrics.json", metricsJson(results)); !w) return Error{w.error()};
  if (Status w = writeText(out / "report.html", reportHtml(results)); !w) return Error{w.error()};
  return results;
}

}  // namespace handoff
