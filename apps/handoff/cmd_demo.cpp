// handoff demo | run | export | view: the scenario runner's commands (docs/SCENARIOS.md).
//   demo [--out DIR]                  the built-in suite -> DIR/report.html, metrics.json, *.glb
//   run SCENARIO.json... [--out DIR]  the same for given scenario files
//   (demo and run: --engine bullet|ode, the physics engine the runs play in; ode when built
//   with the ODE adapter, HANDOFF_ODE)
//   export SCENARIO.json -o FILE.glb  one scenario's replay only (no baselines, no report)
//   view FOLDER [--port N]            serves the web viewer on the folder's replays
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

#include "cli.h"
#include "handoff/physics_bullet.h"
#include "handoff/runner.h"

namespace handoff::cli {
namespace {

namespace fs = std::filesystem;

std::string scenarioDir() {
  if (fs::exists(HANDOFF_DEFAULT_SCENARIO_DIR)) return HANDOFF_DEFAULT_SCENARIO_DIR;
  return HANDOFF_INSTALLED_SCENARIO_DIR;
}

/// Runs scenarios into `out` with progress lines; `results` gets every scenario's result. Returns
/// the exit code: 0 when every scenario passed, 1 otherwise.
int runSuite(const std::vector<Scenario>& scenarios, const fs::path& out, bool baselines, bool completeGetUps,
             const std::string& engine, std::vector<ScenarioResult>* results = nullptr) {
  RunOptions options;
  options.searchDirs = {dataDir()};
  options.baselines = baselines;
  options.completeGetUps = completeGetUps;
  if (engine != "bullet") options.createWorld = worldFactory(engine);
  std::printf("engine: %s\n", engine.c_str());
  const auto progress = [](const ScenarioResult& r, int index, int count) {
    const int passed = static_cast<int>(std::count_if(
        r.checks.begin(), r.checks.end(), [](const ThresholdCheck& c) { return c.ran && c.pass; }));
    std::printf("[%d/%d] %-26s %-5s %2d/%-2zu checks, %d handoff(s), %d frames, %.1f s\n", index, count,
                r.name.c_str(), r.passed() ? "PASS" : "FAIL", passed, r.checks.size(),
                static_cast<int>(r.handoffs.size()), r.frames, r.seconds);
    if (!r.ok) std::printf("      error: %s\n", r.error.c_str());
    for (const std::string& line : r.notRun) std::printf("      %s\n", line.c_str());
    for (const ThresholdCheck& c : r.checks) {
      if (c.ran && !c.pass) {
        std::printf("      fail: %s = %.4g %s (threshold %s %.4g)\n", c.name.c_str(), c.value, c.unit.c_str(),
                    c.comparison.c_str(), c.threshold);
      }
    }
    std::fflush(stdout);
  };
  Result<std::vector<ScenarioResult>> ran = runToFolder(scenarios, out.string(), options, progress);
  if (!ran) {
    std::cerr << "error: " << ran.error() << "\n";
    return 1;
  }
  const int passed = static_cast<int>(
      std::count_if(ran->begin(), ran->end(), [](const ScenarioResult& r) { return r.passed(); }));
  std::printf("%d of %zu scenarios passed\nreport:  %s\nmetrics: %s\nreplays: %s/*.glb (handoff view %s)\n",
              passed, ran->size(), (out / "report.html").string().c_str(),
              (out / "metrics.json").string().c_str(), out.string().c_str(), out.string().c_str());
  const int code = passed == static_cast<int>(ran->size()) ? 0 : 1;
  if (results != nullptr) *results = std::move(ran).value();
  return code;
}

/// `--compare-engines`: the suite on every built engine, each into out/<engine>, then
/// out/engines.md side by side. Exit code: Bullet's run's (the reference engine), or 1 when a run
/// could not complete; another engine's failed rows are the comparison's findings.
int compareEngines(const std::vector<Scenario>& scenarios, const fs::path& out, bool baselines,
                   bool completeGetUps) {
  std::vector<EngineRun> runs;
  int code = 0;
  for (const std::string& engine : engineNames()) {
    EngineRun run{engine, {}};
    const int c = runSuite(scenarios, out / engine, baselines, completeGetUps, engine, &run.results);
    if (run.results.empty()) return 1;  // the run could not complete (runSuite said why)
    if (engine == "bullet") code = c;
    runs.push_back(std::move(run));
  }
  if (Status s = writeEngineComparison(out / "engines.md", runs); !s) {
    std::cerr << "error: " << s.error() << "\n";
    return 1;
  }
  std::printf("engines side by side: %s\n", (out / "engines.md").string().c_str());
  return code;
}

Result<std::vector<Scenario>> loadAll(const std::vector<std::string>& files) {
  std::vector<Scenario> scenarios;
  for (const std::string& f : files) {
    Result<Scenario> s = loadScenarioFile(f);
    if (!s) return Error{s.error()};
    scenarios.push_back(std::move(s).value());
  }
  return scenarios;
}

}  // namespace

void addDemoCommand(Command app, int& exitCode) {
  auto engine = std::make_shared<std::string>("bullet");
  auto out = std::make_shared<std::string>("out/demo");
  auto noBaselines = std::make_shared<bool>(false);
  Command cmd =
      app.subcommand("demo", "run the built-in suite on the default characters (report, metrics, replays)");
  cmd.option("--out", *out, "output folder");
  cmd.option("--engine", *engine, "physics engine the scenarios play in (bullet, or ode when built)")
      .oneOf(engineNames());
  cmd.flag("--no-baselines", *noBaselines, "skip the naive baselines");
  auto compare = std::make_shared<bool>(false);
  cmd.flag("--compare-engines", *compare,
           "run the suite on every built engine (out/<engine>) and write out/engines.md side by side")
      .excludes("--engine");
  auto noCompletion = std::make_shared<bool>(false);
  cmd.flag("--no-getup-completion", *noCompletion,
           "play get-up clips as they are (no completion tail for a clip that ends below standing)");
  cmd.callback([out, noBaselines, noCompletion, engine, compare, &exitCode] {
    Result<std::vector<Scenario>> suite = builtInSuite(scenarioDir());
    if (!suite) {
      std::cerr << "error: " << suite.error() << "\n";
      exitCode = 1;
      return;
    }
    std::printf("handoff demo: %zu scenarios, data from %s\n", suite->size(), dataDir().c_str());
    exitCode = *compare ? compareEngines(*suite, *out, !*noBaselines, !*noCompletion)
                        : runSuite(*suite, *out, !*noBaselines, !*noCompletion, *engine);
  });

  auto files = std::make_shared<std::vector<std::string>>();
  auto runOut = std::make_shared<std::string>();
  auto runNoBaselines = std::make_shared<bool>(false);
  Command run = app.subcommand("run", "run scenario files (report, metrics, replays into --out)");
  run.option("scenario", *files, "scenario JSON files").required().existingFile();
  run.option("--out", *runOut, "output folder (default out/<first scenario's name>)");
  run.flag("--no-baselines", *runNoBaselines, "skip the naive baselines");
  run.option("--engine", *engine, "physics engine the scenarios play in (bullet, or ode when built)")
      .oneOf(engineNames());
  auto runNoCompletion = std::make_shared<bool>(false);
  run.flag("--no-getup-completion", *runNoCompletion,
           "play get-up clips as they are (no completion tail for a clip that ends below standing)");
  run.callback([files, runOut, runNoBaselines, runNoCompletion, engine, &exitCode] {
    Result<std::vector<Scenario>> scenarios = loadAll(*files);
    if (!scenarios) {
      std::cerr << "error: " << scenarios.error() << "\n";
      exitCode = 1;
      return;
    }
    const std::string folder = runOut->empty() ? "out/" + scenarios->front().name : *runOut;
    exitCode = runSuite(*scenarios, folder, !*runNoBaselines, !*runNoCompletion, *engine);
  });

  auto exportFile = std::make_shared<std::string>();
  auto exportOut = std::make_shared<std::string>();
  Command exp = app.subcommand("export", "run one scenario and write its replay as binary glTF (.glb)");
  exp.option("scenario", *exportFile, "scenario JSON file").required().existingFile();
  exp.option("-o,--output", *exportOut, "output .glb (default <scenario name>.glb)");
  exp.callback([exportFile, exportOut, &exitCode] {
    Result<Scenario> s = loadScenarioFile(*exportFile);
    if (!s) {
      std::cerr << "error: " << s.error() << "\n";
      exitCode = 1;
      return;
    }
    RunOptions options;
    options.searchDirs = {dataDir()};
    options.baselines = false;
    ScenarioRunner runner(options);
    Replay replay;
    const ScenarioResult r = runner.run(*s, &replay);
    if (!r.ok) {
      std::cerr << "error: " << r.error << "\n";
      exitCode = 1;
      return;
    }
    const std::string path = exportOut->empty() ? s->name + ".glb" : *exportOut;
    if (Status w = writeReplayGlb(replay, path); !w) {
      std::cerr << "error: " << w.error() << "\n";
      exitCode = 1;
      return;
    }
    std::printf("%s: %zu frames at %.0f Hz, %zu bodies, %zu events%s\n", path.c_str(), replay.frames.size(),
                replay.frameRate, replay.bodies.size(), replay.events.size(),
                replay.mesh ? ", skinned mesh" : "");
  });

  auto viewFolder = std::make_shared<std::string>();
  auto port = std::make_shared<int>(8765);
  Command view = app.subcommand("view", "serve the web viewer on a folder of replays and print its URL");
  view.option("folder", *viewFolder, "folder with .glb replays").required().existingDirectory();
  view.option("--port", *port, "port (0 picks a free one)");
  view.callback([viewFolder, port, &exitCode] {
    const fs::path serve = fs::path(HANDOFF_WEB_DIR) / "serve.mjs";
    if (!fs::exists(serve)) {
      std::cerr << "error: the viewer is not here: " << serve.string() << "\n";
      exitCode = 1;
      return;
    }
    if (!fs::exists(fs::path(HANDOFF_WEB_DIR) / "node_modules" / "three")) {
      std::cerr << "error: three.js is missing: run `npm ci` in " << HANDOFF_WEB_DIR << "\n";
      exitCode = 1;
      return;
    }
    std::fflush(stdout);
    // serve.mjs prints the URL; exec so that Ctrl-C stops the server.
    const std::string portText = std::to_string(*port);
    const std::string script = serve.string();
    std::vector<char*> argv = {const_cast<char*>("node"),
                               const_cast<char*>(script.c_str()),
                               const_cast<char*>(viewFolder->c_str()),
                               const_cast<char*>("--port"),
                               const_cast<char*>(portText.c_str()),
                               nullptr};
    execvp("node", argv.data());
    std::perror("error: cannot run node");
    exitCode = 1;
  });
}

}  // namespace handoff::cli
