// handoff corpus <dir> [--json] [--quick] [--times N] [--seed S]: the corpus run of issue 31. A
// corpus folder holds rigs.tsv (per rig file, the right bone of nine slots, read from each file's
// own hierarchy) and clips.tsv (per clip, what happens when and its duration). For every rig the
// run imports, maps, builds and validates as `build-asset` does and compares the slots with
// rigs.tsv; a file rigs.tsv marks out of human scale or without a skeleton is right when refused.
// Then every clip of clips.tsv is handed off at a seeded set of times across the clip, as a full
// ragdoll and as a powered ragdoll, each a scenario the scenario runner plays and checks, so the
// rows (SPEC section 3's "handoff." rows and the rest) are the runner's own checks. Prints per
// file results, per class rates and per row pass rates with their distributions; --json the
// same as one JSON document. Exit 0 always unless the corpus cannot be read (rates are a
// measurement, not a gate; the CTest entry checks the figures it needs). A levels.tsv beside them
// (file, description, units, up axis) adds the levels, each loaded and held against the figures
// its row states (cmd_corpus_levels.cpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "handoff/asset.h"
#include "handoff/import.h"
#include "handoff/runner.h"
#include "handoff/scenario.h"

namespace handoff::cli {
namespace {

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json;

/// The slots rigs.tsv gives, in its column order (after "file").
struct TsvSlot {
  const char* column;
  std::vector<Slot> slots;  ///< The project's slots the column is compared with (first mapped one).
};
const std::vector<TsvSlot>& tsvSlots() {
  static const std::vector<TsvSlot> columns = {
      {"pelvis", {Slot::Pelvis}},
      {"spine_or_chest", {Slot::Chest, Slot::LowerSpine}},
      {"head", {Slot::Head}},
      {"left_thigh", {Slot::UpperLegL}},
      {"left_shin", {Slot::LowerLegL}},
      {"left_foot", {Slot::FootL}},
      {"right_upper_arm", {Slot::UpperArmR}},
      {"right_forearm", {Slot::LowerArmR}},
      {"right_hand", {Slot::HandR}},
  };
  return columns;
}

std::vector<std::string> splitTabs(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream s(line);
  while (std::getline(s, field, '\t')) out.push_back(field);
  return out;
}

std::vector<std::string> splitBar(const std::string& text) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream s(text);
  while (std::getline(s, item, '|')) out.push_back(item);
  return out;
}

/// Rows of a TSV file after its header; errors name the file and line.
Result<std::vector<std::vector<std::string>>> readTsv(const fs::path& path, size_t columns) {
  std::ifstream in(path);
  if (!in) return Error{path.string() + ": cannot read the file"};
  std::vector<std::vector<std::string>> rows;
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (lineNo == 1 || line.empty()) continue;
    std::vector<std::string> fields = splitTabs(line);
    if (fields.size() < columns) {
      return Error{path.string() + ":" + std::to_string(lineNo) + ": expected " + std::to_string(columns) +
                   " tab-separated fields, got " + std::to_string(fields.size())};
    }
    rows.push_back(std::move(fields));
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Rigs

struct RigRow {
  std::string file;
  std::vector<std::vector<std::string>> expected;  ///< Per tsvSlots() column: right bones ("-": none).
  std::string comment;
  bool shouldRefuse = false;
  std::string refuseReason;  ///< "out-of-human-scale" or "no-skeleton".
  std::string family;        ///< File name up to the first '_' (the class the rates are per).
};

struct RigOutcome {
  std::string file, family, status;  ///< status: OK, REFUSED, WRONG, FAILED, ACCEPTED-*.
  bool right = false;
  std::string stage;  ///< Where it stopped: import, map, build, validate, "" (all ran).
  std::string error;
  std::vector<std::string> mismatches;  ///< "column=got (want a|b)".
  ordered_json slots = ordered_json::object();
  int joints = 0;
  double hipHeight = 0.0, unitScale = 0.0, confidence = 0.0;
};

std::string firstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

RigOutcome runRig(const fs::path& dir, const RigRow& row) {
  RigOutcome out;
  out.file = row.file;
  out.family = row.family;
  const std::string path = (dir / row.file).string();
  const auto refused = [&](const std::string& stage, const std::string& error) {
    out.stage = stage;
    out.error = firstLine(error);
    out.right = row.shouldRefuse;
    out.status = row.shouldRefuse ? "REFUSED" : "FAILED";
    return out;
  };
  Result<ImportedAsset> imported = importFile(path);
  if (!imported) return refused("import", imported.error());
  out.joints = imported->skeleton.jointCount();
  out.hipHeight = imported->hipHeight;
  out.unitScale = imported->unitScale;
  MapInputs inputs;
  inputs.fileHumanoid = imported->humanoidBones;
  Result<HumanoidMapReport> report = mapHumanoidReport(imported->skeleton, inputs);
  if (!report) return refused("map", report.error());
  out.confidence = report->confidence;
  BuildOptions options;
  options.skeletonName = row.file;
  options.humanoidBones = imported->humanoidBones;
  BuildReport buildReport;
  Result<RagdollAsset> asset = buildRagdoll(imported->skeleton, options, &buildReport);
  if (!asset) return refused("build", asset.error());
  const std::vector<Finding> findings = validateRagdoll(*asset, imported->skeleton);
  if (hasErrors(findings)) {
    std::string first;
    for (const Finding& f : findings) {
      if (f.severity == Finding::Severity::Error) {
        first = formatFinding(f);
        break;
      }
    }
    return refused("validate", first);
  }
  const std::vector<std::string>& names = imported->skeleton.jointNames;
  for (size_t c = 0; c < tsvSlots().size(); ++c) {
    const TsvSlot& column = tsvSlots()[c];
    int joint = -1;
    for (Slot s : column.slots) {
      joint = report->map[s];
      if (joint >= 0) break;
    }
    const std::string got = joint >= 0 ? names[static_cast<size_t>(joint)] : "-";
    out.slots[column.column] = got;
    const std::vector<std::string>& want = row.expected[c];
    if (std::find(want.begin(), want.end(), got) == want.end()) {
      std::string alternatives;
      for (const std::string& w : want) alternatives += (alternatives.empty() ? "" : "|") + w;
      out.mismatches.push_back(std::string(column.column) + "=" + got + " (want " + alternatives + ")");
    }
  }
  if (row.shouldRefuse) {
    out.status = "ACCEPTED-" + row.refuseReason;
    out.right = false;
    out.error = "built although rigs.tsv marks it " + row.refuseReason;
  } else {
    out.right = out.mismatches.empty();
    out.status = out.right ? "OK" : "WRONG";
  }
  return out;
}

Result<std::vector<RigRow>> readRigs(const fs::path& dir) {
  const size_t columns = 1 + tsvSlots().size();
  Result<std::vector<std::vector<std::string>>> rows = readTsv(dir / "rigs.tsv", columns);
  if (!rows) return Error{rows.error()};
  std::vector<RigRow> rigs;
  for (const std::vector<std::string>& fields : *rows) {
    RigRow r;
    r.file = fields[0];
    for (size_t c = 0; c < tsvSlots().size(); ++c) r.expected.push_back(splitBar(fields[1 + c]));
    r.comment = fields.back();
    const bool noBones = r.expected[0].size() == 1 && r.expected[0][0] == "-";
    if (r.comment.find("out-of-human-scale") != std::string::npos) {
      r.shouldRefuse = true;
      r.refuseReason = "out-of-human-scale";
    } else if (noBones || r.comment.find("not a skeleton") != std::string::npos) {
      r.shouldRefuse = true;
      r.refuseReason = "no-skeleton";
    }
    const std::string stem = fs::path(r.file).stem().string();
    r.family = stem.substr(0, stem.find('_'));
    rigs.push_back(std::move(r));
  }
  return rigs;
}

// ---------------------------------------------------------------------------------------------
// Clips

struct ClipRow {
  std::string file, clip;
  double duration = 0.0;
};

Result<std::vector<ClipRow>> readClips(const fs::path& dir) {
  Result<std::vector<std::vector<std::string>>> rows = readTsv(dir / "clips.tsv", 4);
  if (!rows) return Error{rows.error()};
  std::vector<ClipRow> clips;
  for (const std::vector<std::string>& fields : *rows) {
    ClipRow c;
    c.file = fields[0];
    c.clip = fields[1] == "(whole file)" ? "" : fields[1];
    c.duration = std::atof(fields[3].c_str());
    clips.push_back(std::move(c));
  }
  return clips;
}

/// splitmix64: the same numbers on every platform and standard library.
struct SeededRandom {
  std::uint64_t state;
  double uniform() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
  }
};

/// `count` handoff times across [0, duration]: one per equal stretch, at a seeded place in it,
/// kept a frame inside the clip.
std::vector<double> handoffTimes(double duration, int count, SeededRandom& random) {
  std::vector<double> times;
  const double frame = 1.0 / 60.0;
  const double lo = frame, hi = std::max(lo, duration - frame);
  for (int i = 0; i < count; ++i) {
    const double t = lo + (hi - lo) * (i + random.uniform()) / count;
    times.push_back(std::round(t * 60.0) / 60.0);  // on the scenario's frame grid
  }
  return times;
}

/// Metres per file unit for a clip's file: the file's own (0) when it imports at human scale, else
/// the scale that puts its rest hip at 0.95 m (clips.tsv: "use only with a unit fix").
Result<double> clipUnitScale(const std::string& path) {
  Result<ImportedAsset> imported = importFile(path);
  if (imported) return 0.0;
  ImportOptions loose;
  loose.requireHumanScale = false;
  Result<ImportedAsset> any = importFile(path, loose);
  if (!any) return Error{any.error()};
  if (!(any->hipHeight > 0.0)) return Error{imported.error()};
  return any->unitScale * 0.95 / any->hipHeight;
}

/// Follow window after each handoff (the runner's RunOptions::followWindow), plus a margin.
constexpr double kAfterHandoff = 2.5;

Scenario clipScenario(const std::string& file, const ClipRow& row, double unitScale, double time,
                      bool powered, bool capsuleOnly) {
  Scenario s;
  s.settings.capsuleOnlyWhileAnimated = capsuleOnly;
  s.name = fs::path(row.file).stem().string() + (row.clip.empty() ? "" : "|" + row.clip) +
           (powered ? " powered" : " ragdoll") + " @" + std::to_string(time).substr(0, 5);
  s.character.file = file;
  s.character.unitScale = unitScale;
  s.clip.name = row.clip;
  s.clip.wrap = WrapMode::Clamp;
  s.sourceName = s.name;
  ScenarioEvent noGetUp;
  noGetUp.payload = ScenarioEvent::GetUpAllowed{false};
  s.events.push_back(noGetUp);
  ScenarioEvent handoff;
  handoff.time = time;
  if (powered) {
    handoff.payload = ScenarioEvent::Powered{};
  } else {
    handoff.payload = ScenarioEvent::Ragdoll{};
  }
  s.events.push_back(handoff);
  s.endTime = time + kAfterHandoff;
  return s;
}

/// A check's row: its name without the "[body]" part.
std::string rowName(const std::string& name) { return name.substr(0, name.find('[')); }

struct RowStats {
  int ran = 0, passed = 0, notRun = 0;
  std::string unit, comparison;
  double threshold = 0.0;
  std::vector<double> values;
  std::vector<std::string> failures;  ///< "scenario: value".
};

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t i = static_cast<size_t>(pos);
  const double f = pos - static_cast<double>(i);
  return i + 1 < v.size() ? v[i] * (1.0 - f) + v[i + 1] * f : v[i];
}

double percent(int part, int whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

}  // namespace

void addCorpusCommand(Command app, int& exitCode) {
  struct Args {
    std::string dir;
    bool json = false, quick = false, rigsOnly = false, clipsOnly = false, levelsOnly = false;
    bool capsuleOnly = false;
    int times = 4;
    std::uint64_t seed = 31;
  };
  auto args = std::make_shared<Args>();
  Command c = app.subcommand(
      "corpus",
      "import, map, build and validate every rig of a corpus folder (rigs.tsv) and hand off every "
      "clip (clips.tsv) at seeded times, printing rates per class and per check row");
  c.option("dir", args->dir, "corpus folder (rigs.tsv, clips.tsv and the files they name)")
      .required()
      .existingDirectory();
  c.flag("--json", args->json, "print the results as one JSON document");
  c.option("--times", args->times, "handoff times per clip (each as full ragdoll and powered) [default 4]")
      .range(1, 100);
  c.flag("--quick", args->quick, "one handoff time per clip (the CI run)");
  c.option("--seed", args->seed, "seed of the handoff times [default 31]");
  c.flag("--rigs-only", args->rigsOnly, "only the rigs");
  c.flag("--clips-only", args->clipsOnly, "only the clips");
  c.flag("--levels-only", args->levelsOnly, "only the levels (levels.tsv)");
  c.flag("--capsule-only", args->capsuleOnly,
         "every clip's character capsule only while animated (CharacterSettings::capsuleOnlyWhileAnimated): "
         "its handoffs start from bodies out of the simulation");
  c.callback([args, &exitCode] {
    const fs::path dir = args->dir;
    const bool text = !args->json;
    // Progress goes to stderr with --json so stdout stays one document.
    std::FILE* progress = args->json ? stderr : stdout;
    ordered_json doc;
    doc["corpus"] = fs::absolute(dir).lexically_normal().string();
    const auto started = std::chrono::steady_clock::now();

    const bool everything = !args->rigsOnly && !args->clipsOnly && !args->levelsOnly;
    if (args->levelsOnly || (everything && fs::exists(dir / "levels.tsv"))) {
      Result<std::vector<std::vector<std::string>>> levels = readTsv(dir / "levels.tsv", 4);
      if (!levels) {
        std::cerr << "error: " << levels.error() << "\n";
        exitCode = 1;
        return;
      }
      int right = 0;
      doc["levels"] = runCorpusLevels(dir, *levels, progress, text, right);
    }

    if (everything || args->rigsOnly) {
      Result<std::vector<RigRow>> rigs = readRigs(dir);
      if (!rigs) {
        std::cerr << "error: " << rigs.error() << "\n";
        exitCode = 1;
        return;
      }
      std::map<std::string, std::pair<int, int>> byFamily, byStatus;
      int right = 0;
      ordered_json rigJson = ordered_json::array();
      if (text) std::printf("rigs (%zu):\n", rigs->size());
      for (size_t i = 0; i < rigs->size(); ++i) {
        const RigOutcome o = runRig(dir, (*rigs)[i]);
        right += o.right ? 1 : 0;
        auto& f = byFamily[o.family];
        f.first += o.right ? 1 : 0;
        f.second += 1;
        byStatus[o.status].second += 1;
        std::string detail = o.error;
        for (const std::string& m : o.mismatches) detail += (detail.empty() ? "" : "; ") + m;
        std::fprintf(progress, "[%zu/%zu] %-48s %-8s %s%s%s\n", i + 1, rigs->size(), o.file.c_str(),
                     o.status.c_str(), o.stage.empty() ? "" : o.stage.c_str(), o.stage.empty() ? "" : ": ",
                     detail.c_str());
        std::fflush(progress);
        ordered_json r;
        r["file"] = o.file;
        r["family"] = o.family;
        r["status"] = o.status;
        r["right"] = o.right;
        r["stage"] = o.stage;
        r["error"] = o.error;
        r["joints"] = o.joints;
        r["hipHeight"] = o.hipHeight;
        r["unitScale"] = o.unitScale;
        r["confidence"] = o.confidence;
        r["slots"] = o.slots;
        r["mismatches"] = o.mismatches;
        rigJson.push_back(std::move(r));
      }
      if (text) {
        std::printf("rigs right: %d of %zu (%.1f %%)\n  per family:", right, rigs->size(),
                    percent(right, static_cast<int>(rigs->size())));
        for (const auto& [family, n] : byFamily) std::printf(" %s %d/%d", family.c_str(), n.first, n.second);
        std::printf("\n  per status:");
        for (const auto& [status, n] : byStatus) std::printf(" %s %d", status.c_str(), n.second);
        std::printf("\n");
      }
      ordered_json families = ordered_json::object();
      for (const auto& [family, n] : byFamily) families[family] = {{"right", n.first}, {"count", n.second}};
      doc["rigs"] = {{"right", right},
                     {"count", rigs->size()},
                     {"rate", percent(right, static_cast<int>(rigs->size())) / 100.0},
                     {"families", families},
                     {"files", rigJson}};
    }

    if (everything || args->clipsOnly) {
      Result<std::vector<ClipRow>> clips = readClips(dir);
      if (!clips) {
        std::cerr << "error: " << clips.error() << "\n";
        exitCode = 1;
        return;
      }
      const int perClip = args->quick ? 1 : args->times;
      RunOptions options;
      options.baselines = false;
      options.driveComparison = false;
      options.searchDirs = {dataDir()};  // the default get-up clips
      ScenarioRunner runner(options);
      SeededRandom random{args->seed};
      std::map<std::string, RowStats> rows;
      std::map<std::string, double> scales;
      int runs = 0, completed = 0, passedAll = 0, nonFinite = 0;
      std::map<std::string, std::pair<int, int>> byMode;  // passed every row, count
      ordered_json runJson = ordered_json::array();
      const int total = static_cast<int>(clips->size()) * perClip * 2;
      if (text) std::printf("clips (%zu, %d times each, ragdoll and powered):\n", clips->size(), perClip);
      for (const ClipRow& row : *clips) {
        const std::string path = (dir / row.file).string();
        if (!scales.count(path)) {
          Result<double> scale = clipUnitScale(path);
          scales[path] = scale ? *scale : 0.0;
        }
        for (double t : handoffTimes(row.duration, perClip, random)) {
          for (const bool powered : {false, true}) {
            const Scenario s = clipScenario(path, row, scales[path], t, powered, args->capsuleOnly);
            const ScenarioResult r = runner.run(s);
            ++runs;
            const char* mode = powered ? "powered" : "ragdoll";
            int passed = 0;
            bool finite = true;
            for (const ThresholdCheck& check : r.checks) {
              RowStats& st = rows[rowName(check.name)];
              st.unit = check.unit;
              st.comparison = check.comparison;
              st.threshold = check.threshold;
              if (!check.ran) {
                ++st.notRun;
                continue;
              }
              ++st.ran;
              if (!std::isfinite(check.value)) finite = false;
              st.values.push_back(check.value);
              if (check.pass) {
                ++st.passed;
                ++passed;
              } else {
                st.failures.push_back(s.name + ": " + std::to_string(check.value));
              }
            }
            if (!finite) ++nonFinite;
            if (r.ok) ++completed;
            const bool all = r.passed();
            passedAll += all ? 1 : 0;
            byMode[mode].first += all ? 1 : 0;
            byMode[mode].second += 1;
            std::fprintf(progress, "[%d/%d] %-56s %-4s %2d/%-2zu checks%s%s\n", runs, total, s.name.c_str(),
                         all ? "PASS" : "FAIL", passed, r.checks.size(),
                         r.ok ? "" : "  error: ", r.ok ? "" : firstLine(r.error).c_str());
            for (const ThresholdCheck& check : r.checks) {
              if (check.ran && !check.pass) {
                std::fprintf(progress, "      fail: %s = %.4g %s (%s %.4g)\n", check.name.c_str(),
                             check.value, check.unit.c_str(), check.comparison.c_str(), check.threshold);
                // The row's own note (a powered row's: the animation's own motion measured alike)
                // says whether the miss is the physics' or the clip's.
                if (!check.note.empty()) std::fprintf(progress, "            %s\n", check.note.c_str());
              }
            }
            std::fflush(progress);
            ordered_json run;
            run["file"] = row.file;
            run["clip"] = row.clip;
            run["time"] = t;
            run["mode"] = mode;
            run["ok"] = r.ok;
            run["error"] = r.error;
            run["passed"] = all;
            ordered_json failed = ordered_json::array();
            for (const ThresholdCheck& check : r.checks) {
              if (!check.ran || !check.pass) failed.push_back({{"name", check.name}, {"value", check.value}});
            }
            run["failed"] = failed;
            runJson.push_back(std::move(run));
          }
        }
      }
      ordered_json rowJson = ordered_json::object();
      if (text) {
        std::printf("handoffs: %d runs, %d ran to the end, %d passed every row, %d with a non-finite value\n",
                    runs, completed, passedAll, nonFinite);
        for (const auto& [mode, n] : byMode) {
          std::printf("  %s: %d/%d passed every row\n", mode.c_str(), n.first, n.second);
        }
        std::printf("  %-44s %9s %7s  %-10s %10s %10s %10s %10s   bound\n", "row (SPEC 3: handoff.*)", "pass",
                    "rate", "unit", "min", "median", "p95", "max");
      }
      for (const auto& [name, st] : rows) {
        const double mn = st.values.empty() ? 0.0 : *std::min_element(st.values.begin(), st.values.end());
        const double mx = st.values.empty() ? 0.0 : *std::max_element(st.values.begin(), st.values.end());
        const bool section3 = name.rfind("handoff.", 0) == 0;
        if (text) {
          std::printf("  %-44s %4d/%-4d %6.1f%%  %-10s %10.4g %10.4g %10.4g %10.4g   %s %.4g%s\n",
                      name.c_str(), st.passed, st.ran, percent(st.passed, st.ran), st.unit.c_str(), mn,
                      quantile(st.values, 0.5), quantile(st.values, 0.95), mx, st.comparison.c_str(),
                      st.threshold,
                      st.notRun ? (" (" + std::to_string(st.notRun) + " not run)").c_str() : "");
        }
        rowJson[name] = {{"section3", section3},
                         {"passed", st.passed},
                         {"ran", st.ran},
                         {"notRun", st.notRun},
                         {"rate", percent(st.passed, st.ran) / 100.0},
                         {"unit", st.unit},
                         {"comparison", st.comparison},
                         {"threshold", st.threshold},
                         {"min", mn},
                         {"median", quantile(st.values, 0.5)},
                         {"p95", quantile(st.values, 0.95)},
                         {"max", mx},
                         {"failures", st.failures}};
      }
      doc["clips"] = {{"timesPerClip", perClip}, {"seed", args->seed},     {"runs", runs},
                      {"completed", completed},  {"passedAll", passedAll}, {"nonFinite", nonFinite},
                      {"rows", rowJson},         {"handoffs", runJson}};
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (text) {
      std::printf("corpus run took %.1f s\n", seconds);
    } else {
      std::cout << doc.dump(2) << "\n";
    }
  });
}

}  // namespace handoff::cli
