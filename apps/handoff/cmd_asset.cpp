// handoff build-asset <skeleton file> [--map map.json] [--mass 70] [--unit-scale s] -o asset.json
// handoff map <skeleton file> [--map map.json] [--unit-scale s] > map.json
// handoff validate <asset.json> [--skeleton file]
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli.h"
#include "handoff/asset.h"
#include "handoff/import.h"

namespace handoff::cli {
namespace {

bool readText(const std::string& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  text = s.str();
  return true;
}

void printFindings(const std::vector<Finding>& findings, bool verbose, std::FILE* out = stdout) {
  for (const Finding& f : findings) {
    if (!verbose && f.severity == Finding::Severity::Info) continue;
    std::fprintf(out, "  %s\n", formatFinding(f).c_str());
  }
}

/// The slot -> bone table: bone, how it was decided, confidence.
void printMap(const Skeleton& skeleton, const HumanoidMapReport& report, std::FILE* out) {
  std::fprintf(out, "  humanoid map (confidence %.2f):\n", report.confidence);
  for (int i = 0; i < kSlotCount; ++i) {
    const int j = report.map.joint[static_cast<size_t>(i)];
    const SlotDecision& d = report.slots[static_cast<size_t>(i)];
    std::fprintf(out, "    %-12s %-28s %-9s %.2f\n", slotName(static_cast<Slot>(i)),
                 j >= 0 ? skeleton.jointNames[static_cast<size_t>(j)].c_str() : "-", mapSourceName(d.source),
                 d.confidence);
  }
}

}  // namespace

void addAssetCommands(Command app, int& exitCode) {
  struct BuildArgs {
    std::string skeleton, map, overrides, out;
    double mass = 70.0;
    double scale = 0.0;
    bool noStabilize = false;
    bool verbose = false;
  };
  auto build = std::make_shared<BuildArgs>();
  Command b = app.subcommand("build-asset", "build a ragdoll asset (JSON) for a skeleton file");
  b.option("skeleton", build->skeleton, "BVH, glTF/GLB, FBX or COLLADA file").required();
  b.option("-o,--out", build->out, "asset file to write").required();
  b.option("--map", build->map, "explicit humanoid map (JSON: slot -> bone name)");
  b.option("--overrides", build->overrides, "per-group / per-bone joint overrides (JSON)");
  b.option("--mass", build->mass, "total mass [kg]").positive();
  b.option("--unit-scale,--scale", build->scale,
           "metres per file unit (default: the file's or auto-detected)");
  b.flag("--no-stabilize", build->noStabilize, "keep anatomical masses (no Jolt-style stabilization)");
  b.flag("-v,--verbose", build->verbose, "also print informational findings");
  b.callback([build, &exitCode] {
    ImportOptions importOptions;
    importOptions.unitScale = build->scale;
    Result<ImportedAsset> imported = importFile(build->skeleton, importOptions);
    if (!imported) {
      std::cerr << "error: " << imported.error() << "\n";
      exitCode = 1;
      return;
    }
    BuildOptions options;
    options.totalMass = build->mass;
    options.stabilize = !build->noStabilize;
    options.skeletonName = build->skeleton;
    options.humanoidBones = imported->humanoidBones;
    options.mapSource = build->map;
    std::string text;
    if (!build->map.empty()) {
      if (!readText(build->map, text)) {
        std::cerr << "error: " << build->map << ": cannot read the file\n";
        exitCode = 1;
        return;
      }
      options.mapJson = text;
    }
    if (!build->overrides.empty()) {
      if (!readText(build->overrides, options.overridesJson)) {
        std::cerr << "error: " << build->overrides << ": cannot read the file\n";
        exitCode = 1;
        return;
      }
    }
    BuildReport report;
    Result<RagdollAsset> asset = buildRagdoll(imported->skeleton, options, &report);
    std::printf("%s: %d joints, unit scale %.6g, hip height %.3f m\n", build->skeleton.c_str(),
                imported->skeleton.jointCount(), imported->unitScale, imported->hipHeight);
    for (const std::string& w : imported->warnings) std::printf("  import: %s\n", w.c_str());
    if (asset || report.map.confidence > 0.0) printMap(imported->skeleton, report.map, stdout);
    printFindings(report.findings, build->verbose);
    if (!asset) {
      std::cerr << "error: " << asset.error() << "\n";
      exitCode = 1;
      return;
    }
    double total = 0.0;
    for (const BodyDef& body : asset->bodies) total += body.mass;
    std::printf("  %zu bodies, %zu joints, %.3f kg\n", asset->bodies.size(), asset->joints.size(), total);
    for (const BodyDef& body : asset->bodies) {
      std::printf("    %-24s %-12s %6.2f kg\n", body.name.c_str(), slotName(body.slot), body.mass);
    }
    if (Status s = saveRagdollFile(*asset, build->out); !s) {
      std::cerr << "error: " << s.error() << "\n";
      exitCode = 1;
      return;
    }
    std::printf("  wrote %s\n", build->out.c_str());
  });

  struct ValidateArgs {
    std::string asset, skeleton;
    double scale = 0.0;
    bool verbose = false;
  };
  auto validate = std::make_shared<ValidateArgs>();
  Command v = app.subcommand("validate", "check a ragdoll asset (exit 1 on errors)");
  v.option("asset", validate->asset, "asset JSON file").required();
  v.option("--skeleton", validate->skeleton,
           "the skeleton file it was built from (enables the bind-pose checks)");
  v.option("--unit-scale,--scale", validate->scale,
           "metres per file unit of the skeleton (default: auto-detect)");
  v.flag("-v,--verbose", validate->verbose, "also print informational findings");
  v.callback([validate, &exitCode] {
    std::vector<Finding> findings;
    Result<RagdollAsset> asset = loadRagdollFile(validate->asset, &findings);
    if (!asset) {
      printFindings(findings, validate->verbose);
      std::cerr << "error: " << asset.error() << "\n";
      exitCode = 1;
      return;
    }
    std::printf("%s: version %d, %zu bodies, %zu joints\n", validate->asset.c_str(), asset->version,
                asset->bodies.size(), asset->joints.size());
    if (validate->skeleton.empty()) {
      // Without the skeleton: what the asset is made of (topology, indices, counts, ranges).
      const std::vector<Finding> checks = validateRagdollStructure(*asset);
      findings.insert(findings.end(), checks.begin(), checks.end());
    } else {
      ImportOptions importOptions;
      importOptions.unitScale = validate->scale;
      Result<ImportedAsset> imported = importFile(validate->skeleton, importOptions);
      if (!imported) {
        std::cerr << "error: " << imported.error() << "\n";
        exitCode = 1;
        return;
      }
      if (Status s = resolveJoints(*asset, imported->skeleton); !s) {
        std::cerr << "error: " << s.error() << "\n";
        exitCode = 1;
        return;
      }
      const std::vector<Finding> checks = validateRagdoll(*asset, imported->skeleton);
      findings.insert(findings.end(), checks.begin(), checks.end());
    }
    printFindings(findings, validate->verbose);
    const bool errors = hasErrors(findings);
    std::printf("  %s\n", errors ? "FAILED: errors block use" : "ok");
    if (errors) exitCode = 1;
  });

  struct MapArgs {
    std::string skeleton, map;
    double scale = 0.0;
    bool verbose = false;
  };
  auto mapArgs = std::make_shared<MapArgs>();
  Command m = app.subcommand(
      "map", "print the humanoid map (JSON, the format --map reads) to stdout, the report to stderr");
  m.option("skeleton", mapArgs->skeleton, "BVH, glTF/GLB, FBX or COLLADA file").required();
  m.option("--map", mapArgs->map, "a map file to start from (its slots are kept)");
  m.option("--unit-scale,--scale", mapArgs->scale,
           "metres per file unit (default: the file's or auto-detected)");
  m.flag("-v,--verbose", mapArgs->verbose, "also print informational findings");
  m.callback([mapArgs, &exitCode] {
    ImportOptions importOptions;
    importOptions.unitScale = mapArgs->scale;
    Result<ImportedAsset> imported = importFile(mapArgs->skeleton, importOptions);
    if (!imported) {
      std::cerr << "error: " << imported.error() << "\n";
      exitCode = 1;
      return;
    }
    MapInputs inputs;
    inputs.fileHumanoid = imported->humanoidBones;
    if (!mapArgs->map.empty()) {
      std::string text;
      if (!readText(mapArgs->map, text)) {
        std::cerr << "error: " << mapArgs->map << ": cannot read the file\n";
        exitCode = 1;
        return;
      }
      inputs.userJson = text;
      inputs.userSource = mapArgs->map;
    }
    Result<HumanoidMapReport> report = mapHumanoidReport(imported->skeleton, inputs);
    if (!report) {
      std::cerr << "error: " << report.error() << "\n";
      exitCode = 1;
      return;
    }
    std::fprintf(stderr, "%s: %d joints, unit scale %.6g, hip height %.3f m\n", mapArgs->skeleton.c_str(),
                 imported->skeleton.jointCount(), imported->unitScale, imported->hipHeight);
    printMap(imported->skeleton, *report, stderr);
    printFindings(report->findings, mapArgs->verbose, stderr);
    std::cout << humanoidMapJson(imported->skeleton, report->map);
  });
}

}  // namespace handoff::cli
