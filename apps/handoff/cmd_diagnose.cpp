// handoff diagnose SCENARIO [--json]: finds the cause of a pop, explosion or stretch (SPEC.md
// section 7, docs/DIAGNOSE.md). Runs the scenario as given, then once per change, one change at a
// time: adjacent self-collision switched, masses equalised, each joint group's limits relaxed,
// the commit's joint-consistency step switched, one more solver iteration. Prints which change
// removes or reduces the failing pop / explosion / stretch checks, largest effect first, with the
// figures before and after. Asset changes are edits of the ragdoll the scenario runs (the
// session's asset), saved to a scratch file the changed scenario loads.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "cli.h"
#include "handoff/runner.h"

namespace handoff::cli {
namespace {

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json;

/// Relaxed limits: each limited axis opened this far beyond its limits and the bind pose. [rad]
constexpr double kRelaxMargin = 0.5;
/// Bullet's 6-DoF joint keeps its middle (Y) axis inside +-pi/2; the relaxed limit stays short of it.
constexpr double kMiddleAxisMax = 1.45;
/// A change that does not make every problem pass "reduces" them when its effect (Outcome::effect)
/// is at least this, "worsens" them at minus this.
constexpr double kEffectThreshold = 0.1;

/// The kind of problem a check row measures, or nullptr for rows diagnose does not look at.
const char* problemKind(const std::string& name) {
  if (name == "robustness.max_joint_stretch") return "stretch";
  const size_t dot = name.find('.');
  if (dot == std::string::npos) return nullptr;
  const std::string cap = name.substr(0, dot);
  if (cap != "handoff" && cap != "powered") return nullptr;
  std::string base = name.substr(dot + 1);
  base = base.substr(0, base.find('['));
  if (base == "no_pop_at_commit" || base == "no_pop_first_step" || base == "velocity_continuity" ||
      base == "velocity_continuity_frame")
    return "pop";
  if (base == "no_explosion_2s") return "explosion";
  if (base == "joint_anchor_drift") return "stretch";
  return nullptr;
}

/// How far a check is on the wrong side of its threshold: > 0 when it fails, <= 0 (the margin left)
/// when it passes. In its unit.
double excess(const ThresholdCheck& c) {
  return c.comparison == ">=" ? c.threshold - c.value : c.value - c.threshold;
}

const ThresholdCheck* findCheck(const ScenarioResult& r, const std::string& name) {
  for (const ThresholdCheck& c : r.checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

/// One change of the diagnosis: what it does to the scenario and (for asset changes) the ragdoll.
struct Change {
  std::string id;     ///< Stable key (JSON "name"), e.g. "relax_limits_knee".
  std::string label;  ///< What the table prints, e.g. "knee limits relaxed (2 joints)".
  bool editsAsset = false;
  std::function<void(Scenario&)> scenario;
  std::function<void(RagdollAsset&)> asset;
};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

/// Opens the limited axes of a joint: kRelaxMargin beyond both its limits and the bind pose (0);
/// a locked axis opens around its lock, a free axis stays free.
void relaxLimits(JointDef& joint) {
  Vec3& lo = joint.preset.angularLower;
  Vec3& hi = joint.preset.angularUpper;
  for (int axis = 0; axis < 3; ++axis) {
    if (lo[axis] > hi[axis]) continue;
    const double bound = axis == 1 ? kMiddleAxisMax : std::numbers::pi;
    lo[axis] = std::max(-bound, std::min(lo[axis], 0.0) - kRelaxMargin);
    hi[axis] = std::min(bound, std::max(hi[axis], 0.0) + kRelaxMargin);
  }
}

std::vector<Change> changesFor(const Scenario& scenario, const RagdollAsset& asset) {
  std::vector<Change> changes;
  const bool anyAdjacent = std::any_of(asset.joints.begin(), asset.joints.end(),
                                       [](const JointDef& j) { return j.adjacentCollision; });
  {
    Change c;
    c.id = anyAdjacent ? "adjacent_collision_off" : "adjacent_collision_on";
    c.label = anyAdjacent ? "adjacent self-collision off" : "adjacent self-collision on";
    c.editsAsset = true;
    c.asset = [on = !anyAdjacent](RagdollAsset& a) {
      for (JointDef& j : a.joints) j.adjacentCollision = on;
    };
    changes.push_back(std::move(c));
  }
  {
    Change c;
    c.id = "equal_masses";
    c.label = "masses equal (" + fmt("%.2f", asset.totalMass / std::max<size_t>(1, asset.bodies.size())) +
              " kg each)";
    c.editsAsset = true;
    c.asset = [](RagdollAsset& a) {
      // The builder's stabilization with a ratio of exactly 1: every child as heavy as its
      // parent, the total kept, inertias scaled with the masses and not raised further.
      StabilizeOptions o;
      o.minMassRatio = 1.0;
      o.maxMassRatio = 1.0;
      o.maxInertiaIncrease = 1.0;
      stabilize(a, o);
      double total = 0.0;
      for (const BodyDef& b : a.bodies) total += b.mass;
      a.totalMass = total;
    };
    changes.push_back(std::move(c));
  }
  for (int g = 0; g < kJointGroupCount; ++g) {
    const auto group = static_cast<JointGroup>(g);
    const auto count = std::count_if(asset.joints.begin(), asset.joints.end(),
                                     [&](const JointDef& j) { return j.group == group; });
    if (count == 0) continue;
    Change c;
    c.id = std::string("relax_limits_") + jointGroupName(group);
    c.label = std::string(jointGroupName(group)) + " limits relaxed (" + std::to_string(count) +
              (count == 1 ? " joint)" : " joints)");
    c.editsAsset = true;
    c.asset = [group](RagdollAsset& a) {
      for (JointDef& j : a.joints) {
        if (j.group == group) relaxLimits(j);
      }
    };
    changes.push_back(std::move(c));
  }
  {
    const bool on = scenario.settings.handoff.jointConsistency;
    Change c;
    c.id = on ? "joint_consistency_off" : "joint_consistency_on";
    c.label = on ? "joint consistency off" : "joint consistency on";
    c.scenario = [on](Scenario& s) { s.settings.handoff.jointConsistency = !on; };
    changes.push_back(std::move(c));
  }
  {
    const int n = scenario.settings.solverIterations;
    Change c;
    c.id = "solver_iterations_" + std::to_string(n + 1);
    c.label = "solver iterations " + std::to_string(n) + " -> " + std::to_string(n + 1);
    c.scenario = [n](Scenario& s) { s.settings.solverIterations = n + 1; };
    changes.push_back(std::move(c));
  }
  return changes;
}

/// A failing pop / explosion / stretch row of the plain run.
struct Problem {
  std::string name, kind, unit, comparison;
  double value = 0.0, threshold = 0.0, excess = 0.0;
};

struct Outcome {
  const Change* change = nullptr;
  bool ok = false;
  std::string error;
  std::vector<const ThresholdCheck*> after;  ///< Per problem (nullptr: the row is missing).
  /// Mean over the problems of how far the change moved the figure toward its threshold, in
  /// units of the plain run's excess: 1 lands on the threshold, 2 as far beyond it (on the
  /// passing side) as it had been on the failing side, < 0 worse. A missing row counts 0.
  double effect = 0.0;
  int removed = 0;  ///< Problems that pass after the change.
  std::vector<std::string> newFailures;
  ScenarioResult result;
  /// Every failing row passes after the change and no row that passed fails.
  bool cures() const { return ok && removed == static_cast<int>(after.size()) && newFailures.empty(); }
  const char* verdict() const {
    if (!ok) return "error";
    if (cures()) return "removes";
    // A change that clears the failing rows but fails a row that passed swaps one problem for
    // another: not a cure.
    if (removed == static_cast<int>(after.size())) return "trades";
    if (effect >= kEffectThreshold) return "reduces";
    if (effect <= -kEffectThreshold) return "worsens";
    return "no effect";
  }
};

void score(Outcome& o, const std::vector<Problem>& problems, const ScenarioResult& plain) {
  o.after.clear();
  double sum = 0.0;
  for (const Problem& p : problems) {
    const ThresholdCheck* c = findCheck(o.result, p.name);
    o.after.push_back(c);
    if (c && c->ran) {
      sum += (p.excess - excess(*c)) / p.excess;
      o.removed += c->pass ? 1 : 0;
    }
  }
  o.effect = problems.empty() ? 0.0 : sum / static_cast<double>(problems.size());
  for (const ThresholdCheck& c : o.result.checks) {
    const ThresholdCheck* before = findCheck(plain, c.name);
    if (c.ran && !c.pass && (!before || before->pass)) o.newFailures.push_back(c.name);
  }
}

std::string figure(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", std::abs(v) < 5e-5 ? 0.0 : v);
  return buf;
}

void printTable(const Scenario& s, const std::string& file, const std::vector<Problem>& problems,
                const std::vector<Outcome>& outcomes) {
  std::printf("handoff diagnose: %s (%s)\n", s.name.c_str(), file.c_str());
  std::printf("plain run: %zu pop/explosion/stretch check(s) fail\n", problems.size());
  for (const Problem& p : problems) {
    std::printf("  %-9s %-32s %10s %-4s (%s %s)\n", p.kind.c_str(), p.name.c_str(), figure(p.value).c_str(),
                p.unit.c_str(), p.comparison.c_str(), figure(p.threshold).c_str());
  }
  std::printf("\n %2s  %-36s %-9s %7s", "#", "change", "verdict", "effect");
  std::vector<int> widths;
  for (const Problem& p : problems) {
    const std::string head = p.name + " [" + p.unit + "]";
    widths.push_back(std::max(18, static_cast<int>(head.size())));
    std::printf("  %-*s", widths.back(), head.c_str());
  }
  std::printf("  new failures\n");
  int rank = 0;
  for (const Outcome& o : outcomes) {
    std::printf(" %2d  %-36s %-9s", ++rank, o.change->label.c_str(), o.verdict());
    if (!o.ok) {
      std::printf(" %7s  %s\n", "-", o.error.c_str());
      continue;
    }
    std::printf(" %6.0f%%", 100.0 * o.effect);
    for (size_t i = 0; i < problems.size(); ++i) {
      const ThresholdCheck* c = o.after[i];
      const std::string cell = figure(problems[i].value) + " -> " +
                               (c && c->ran ? figure(c->value) + (c->pass ? " ok" : "") : std::string("-"));
      std::printf("  %-*s", widths[i], cell.c_str());
    }
    std::string fails;
    for (const std::string& n : o.newFailures) fails += (fails.empty() ? "" : ", ") + n;
    std::printf("  %s\n", fails.empty() ? "-" : fails.c_str());
  }
}

ordered_json toJson(const Scenario& s, const std::string& file, const std::vector<Problem>& problems,
                    const std::vector<Outcome>& outcomes) {
  ordered_json j;
  j["scenario"] = s.name;
  j["file"] = file;
  ordered_json ps = ordered_json::array();
  for (const Problem& p : problems) {
    ps.push_back({{"name", p.name},
                  {"kind", p.kind},
                  {"unit", p.unit},
                  {"comparison", p.comparison},
                  {"threshold", p.threshold},
                  {"value", p.value}});
  }
  j["problems"] = ps;
  ordered_json cs = ordered_json::array();
  int rank = 0;
  for (const Outcome& o : outcomes) {
    ordered_json c;
    c["rank"] = ++rank;
    c["name"] = o.change->id;
    c["label"] = o.change->label;
    c["ok"] = o.ok;
    if (!o.ok) c["error"] = o.error;
    c["verdict"] = o.verdict();
    c["effect"] = o.effect;
    c["removed"] = o.removed;
    ordered_json rows = ordered_json::array();
    for (size_t i = 0; i < problems.size() && o.ok; ++i) {
      const ThresholdCheck* after = o.after[i];
      ordered_json row{{"name", problems[i].name}, {"before", problems[i].value}};
      if (after && after->ran) {
        row["after"] = after->value;
        row["pass"] = after->pass;
      } else {
        row["after"] = nullptr;
        row["pass"] = false;
      }
      rows.push_back(row);
    }
    c["checks"] = rows;
    c["newFailures"] = o.newFailures;
    cs.push_back(c);
  }
  j["changes"] = cs;
  return j;
}

/// Removes the scratch folder when the command ends.
struct ScratchDir {
  fs::path path;
  ~ScratchDir() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};

int diagnose(const std::string& file, bool json) {
  Result<Scenario> loaded = loadScenarioFile(file);
  if (!loaded) {
    std::cerr << "error: " << loaded.error() << "\n";
    return 1;
  }
  const Scenario& scenario = *loaded;
  RunOptions options;
  options.searchDirs = {dataDir()};
  options.baselines = false;
  options.driveComparison = false;
  ScenarioRunner runner(options);

  const auto started = std::chrono::steady_clock::now();
  const auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  std::fprintf(stderr, "diagnose %s: plain run...", scenario.name.c_str());
  std::fflush(stderr);
  const ScenarioResult plain = runner.run(scenario);
  if (!plain.ok) {
    std::fprintf(stderr, "\n");
    std::cerr << "error: " << plain.error << "\n";
    return 1;
  }
  std::vector<Problem> problems;
  for (const ThresholdCheck& c : plain.checks) {
    const char* kind = problemKind(c.name);
    if (!kind || !c.ran || c.pass || !(excess(c) > 0.0)) continue;
    problems.push_back({c.name, kind, c.unit, c.comparison, c.value, c.threshold, excess(c)});
  }
  std::fprintf(stderr, " %zu problem check(s) fail (%.1f s)\n", problems.size(), seconds());

  std::vector<Change> changes;  // outlives the outcomes that point at them
  std::vector<Outcome> outcomes;
  if (!problems.empty()) {
    // The ragdoll the scenario runs (its asset file, or the one built from the skeleton).
    Result<std::unique_ptr<ScenarioSession>> probe = ScenarioSession::start(runner, scenario);
    if (!probe) {
      std::cerr << "error: " << probe.error() << "\n";
      return 1;
    }
    const RagdollAsset asset = (*probe)->asset();
    probe->reset();
    changes = changesFor(scenario, asset);
    ScratchDir scratch;
    scratch.path = fs::temp_directory_path() / ("handoff-diagnose-" + std::to_string(::getpid()));
    std::error_code ec;
    fs::create_directories(scratch.path, ec);
    if (ec) {
      std::cerr << "error: cannot create " << scratch.path.string() << ": " << ec.message() << "\n";
      return 1;
    }
    int index = 0;
    for (const Change& change : changes) {
      ++index;
      std::fprintf(stderr, "[%d/%zu] %-36s", index, changes.size(), change.label.c_str());
      std::fflush(stderr);
      Scenario s = scenario;
      if (change.scenario) change.scenario(s);
      Outcome o;
      o.change = &change;
      if (change.editsAsset) {
        RagdollAsset edited = asset;
        change.asset(edited);
        const fs::path path = scratch.path / (change.id + ".json");
        if (Status w = saveRagdollFile(edited, path.string()); !w) {
          std::cerr << "\nerror: " << w.error() << "\n";
          return 1;
        }
        s.ragdoll.asset = path.string();
        s.ragdoll.build = ScenarioBuild{};
        s.ragdoll.totalMass = ScenarioRagdoll{}.totalMass;
      }
      o.result = runner.run(s);
      o.ok = o.result.ok;
      o.error = o.result.error;
      if (o.ok) score(o, problems, plain);
      std::fprintf(stderr, " %-9s (%.1f s)\n", o.verdict(), seconds());
      outcomes.push_back(std::move(o));
    }
    // Cures (every failing row passes, no new failure) first, then largest effect first (a
    // change that removes every problem has effect of at least 1); at equal effect the one that
    // makes more checks pass; errors last; ties in the order tried.
    std::stable_sort(outcomes.begin(), outcomes.end(), [](const Outcome& a, const Outcome& b) {
      if (a.ok != b.ok) return a.ok;
      if (a.cures() != b.cures()) return a.cures();
      if (a.effect != b.effect) return a.effect > b.effect;
      return a.removed > b.removed;
    });
  }

  if (json) {
    std::printf("%s\n", toJson(scenario, file, problems, outcomes).dump(2).c_str());
  } else if (problems.empty()) {
    std::printf(
        "handoff diagnose: %s (%s)\nno pop, explosion or stretch check fails in the plain run: "
        "nothing to diagnose\n",
        scenario.name.c_str(), file.c_str());
  } else {
    printTable(scenario, file, problems, outcomes);
  }
  return 0;
}

}  // namespace

void addDiagnoseCommand(Command app, int& exitCode) {
  auto file = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  Command cmd = app.subcommand(
      "diagnose",
      "find the cause of a pop, explosion or stretch: rerun a scenario with one change at a time "
      "(adjacent self-collision, equal masses, each joint group's limits relaxed, joint consistency, "
      "one more solver iteration)");
  cmd.option("scenario", *file, "scenario JSON file").required().existingFile();
  cmd.flag("--json", *json, "print the diagnosis as JSON instead of the table");
  cmd.callback([file, json, &exitCode] { exitCode = diagnose(*file, *json); });
}

}  // namespace handoff::cli
