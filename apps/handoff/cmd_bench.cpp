// handoff bench crowd [--threads N] [--json] [--steps 500] [--piles 16] [--per-pile 10]
//                     [--no-sleep] [--freeze] [--joint-iteration-factor N] [--mass-death] [--calibrate]
// Jolt's PerformanceTest "Ragdoll" scene with handoff's ragdolls on Bullet (docs/BENCHMARKS.md).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "handoff/crowd.h"
#include "handoff/physics_bullet.h"

namespace handoff::cli {
namespace {

// The reference (issue 8): Jolt PerformanceTest Ragdoll, 3,680 bodies, on a 2-core machine.
constexpr double kReferenceNsPerBodyStep1 = 3400.0;  // 1 thread
constexpr double kReferenceMsPerStep2 = 6.2;         // 2 threads
constexpr double kReferenceBodies = 3680.0;
constexpr double kReferenceNsPerBodyStep2 = kReferenceMsPerStep2 * 1e6 / kReferenceBodies;  // ~1685 ns

double referenceNs(int threads) { return threads >= 2 ? kReferenceNsPerBodyStep2 : kReferenceNsPerBodyStep1; }
// The plain Bullet 3.24 pile on the same 2-core machine, 1 thread.
constexpr double kBulletCalibrationNsPerBodyStep = 5700.0;

/// The machine's 1-minute load average (the machine is shared: figures need it beside them).
double loadAverage() {
  double load[1] = {-1.0};
  return getloadavg(load, 1) == 1 ? load[0] : -1.0;
}

std::string hex(std::uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

nlohmann::json pileJson(const PileBenchResult& r) {
  return {{"threads", r.threads},
          {"ragdolls", r.ragdolls},
          {"bodies", r.bodies},
          {"joints", r.joints},
          {"steps", r.steps},
          {"steps_per_second", r.stepsPerSecond},
          {"ms_per_step", r.msPerStep},
          {"worst_step_ms", r.worstStepMs},
          {"cpu_ms_per_step", r.cpuMsPerStep},
          {"ns_per_body_step", r.nsPerBodyStep},
          {"reference_ns_per_body_step", referenceNs(r.threads)},
          {"ratio_to_reference", r.nsPerBodyStep / referenceNs(r.threads)},
          {"active_bodies_end", r.activeBodiesEnd},
          {"sleeping_bodies_end", r.sleepingBodiesEnd},
          {"frozen_bodies_end", r.frozenBodiesEnd},
          {"contact_points_end", r.contactPointsEnd},
          {"spaces_end", r.spacesEnd},
          {"all_asleep_s", r.allAsleepTime},
          {"max_speed_before_sleep_m_s", r.maxSpeedBeforeSleep},
          {"max_angular_speed_before_sleep_rad_s", r.maxAngularSpeedBeforeSleep},
          {"max_speed_end_m_s", r.maxSpeedEnd},
          {"peak_rss_kb", r.peakRssKb},
          {"hash", hex(r.hash)}};
}

nlohmann::json massJson(const MassDeathOptions& o, const MassDeathResult& r) {
  return {{"characters", r.characters},
          {"threads", r.threads},
          {"freezing", o.freezing},
          {"lod", o.lod},
          {"reduced_characters", r.reducedCharacters},
          {"frames", r.frames},
          {"worst_frame_ms", r.worstFrameMs},
          {"p95_frame_ms", r.p95FrameMs},
          {"mean_frame_ms", r.meanFrameMs},
          {"frames_over_16_6_ms", r.framesOver16ms},
          {"mean_commit_us", r.meanCommitUs},
          {"worst_commit_us", r.worstCommitUs},
          {"active_bodies_end", r.activeBodiesEnd},
          {"sleeping_bodies_end", r.sleepingBodiesEnd},
          {"frozen_bodies_end", r.frozenBodiesEnd},
          {"pool_misses", r.poolMisses},
          {"hash", hex(r.hash)}};
}

void printPile(const PileBenchResult& r) {
  std::printf(
      "%d thread%s: %7.1f steps/s  %7.2f ms/step (worst %.2f, cpu %.2f)  %6.0f ns/body-step  %.2fx reference "
      "(%.0f ns)\n"
      "           end: %d active, %d sleeping, %d frozen bodies, %d contact points, %d spaces, all asleep at "
      "%.2f s\n"
      "           fastest body before the last awake step %.3f m/s %.3f rad/s, at the end %.3f m/s\n"
      "           peak memory %.1f MiB, hash %s\n",
      r.threads, r.threads == 1 ? " " : "s", r.stepsPerSecond, r.msPerStep, r.worstStepMs, r.cpuMsPerStep,
      r.nsPerBodyStep, r.nsPerBodyStep / referenceNs(r.threads), referenceNs(r.threads), r.activeBodiesEnd,
      r.sleepingBodiesEnd, r.frozenBodiesEnd, r.contactPointsEnd, r.spacesEnd, r.allAsleepTime,
      r.maxSpeedBeforeSleep, r.maxAngularSpeedBeforeSleep, r.maxSpeedEnd, r.peakRssKb / 1024.0,
      hex(r.hash).c_str());
}

}  // namespace

void addBenchCommands(Command app, int& exitCode) {
  struct Args {
    int threads = 0;
    int steps = 500;
    int piles = 16;
    int perPile = 10;
    bool json = false;
    bool noSleep = false;
    bool freeze = false;
    int jointIterationFactor = 0;
    bool massDeath = false;
    bool calibrate = false;
    std::string engine = "bullet";
  };
  auto args = std::make_shared<Args>();
  Command bench = app.subcommand("bench", "performance benchmarks (docs/BENCHMARKS.md)");
  bench.requireSubcommand(1);
  Command crowd = bench.subcommand("crowd", "Jolt's PerformanceTest Ragdoll scene with handoff's ragdolls");
  crowd.option("--threads", args->threads, "thread count (default: 1 and 2)").range(1, 64);
  crowd.option("--steps", args->steps, "steps of 1/60 s").range(1, 100000);
  crowd.option("--piles", args->piles, "piles (on a square grid 4 m apart)").range(1, 1024);
  crowd.option("--per-pile", args->perPile, "ragdolls per pile").range(1, 100);
  crowd.flag("--json", args->json, "print one JSON object");
  crowd.option("--engine", args->engine, "physics engine of every space (bullet, or ode when built)")
      .oneOf(engineNames());
  crowd.flag("--no-sleep", args->noSleep, "Bullet's own deactivation only (no handoff-side sleeping)");
  crowd.flag("--freeze", args->freeze, "freeze sleeping ragdolls");
  crowd
      .option("--joint-iteration-factor", args->jointIterationFactor,
              "joint rows' iterations per velocity iteration (default: the crowd's "
              "CrowdSettings::world.jointIterationFactor, 1)")
      .range(1, 16);
  crowd.flag("--mass-death", args->massDeath,
             "also run the mass death (200 characters), freezing and LOD on and off");
  crowd.flag("--calibrate", args->calibrate,
             "also run the issue's plain Bullet pile (same layout, 16-capsule ragdolls, 1 thread) in "
             "this process and print the ratios it calibrates");
  crowd.callback([args, &exitCode] {
    Result<CrowdCharacter> character = loadCrowdCharacter(dataDir());
    if (!character) {
      std::cerr << "error: " << character.error() << "\n";
      exitCode = 1;
      return;
    }
    std::vector<int> threadCounts =
        args->threads > 0 ? std::vector<int>{args->threads} : std::vector<int>{1, 2};
    std::vector<PileBenchResult> runs;
    std::vector<double> loads;
    if (!args->json) {
      std::printf(
          "Ragdoll piles: %d x %d ragdolls of %zu bodies (%d bodies), %d steps of 1/60 s, joint rows "
          "x%d%s%s, %s\n",
          args->piles, args->perPile, character->asset->bodies.size(),
          args->piles * args->perPile * static_cast<int>(character->asset->bodies.size()), args->steps,
          args->jointIterationFactor > 0 ? args->jointIterationFactor
                                         : CrowdSettings{}.world.jointIterationFactor,
          args->noSleep ? ", Bullet deactivation only" : "", args->freeze ? ", freezing" : "",
          args->engine == "bullet" ? (std::string(bulletPrecision()) + "-precision Bullet").c_str() : "ODE");
    }
    // The plain Bullet pile first: machine factor = its cost here / the 5.7 us.
    nlohmann::json calibration;
    double machineFactor = 0.0;
    if (args->calibrate) {
      BulletCalibrationOptions co;
      co.piles = args->piles;
      co.perPile = args->perPile;
      co.steps = args->steps;
      const double loadBefore = loadAverage();
      Result<BulletCalibrationResult> c = runBulletCalibrationPile(co);
      if (!c) {
        std::cerr << "error: " << c.error() << "\n";
        exitCode = 1;
        return;
      }
      machineFactor = c->nsPerBodyStep / kBulletCalibrationNsPerBodyStep;
      calibration = {{"bodies", c->bodies},
                     {"ms_per_step", c->msPerStep},
                     {"ns_per_body_step", c->nsPerBodyStep},
                     {"issue_ns_per_body_step", kBulletCalibrationNsPerBodyStep},
                     {"machine_factor", machineFactor},
                     {"active_bodies_end", c->activeBodiesEnd},
                     {"load_average_before", loadBefore},
                     {"load_average_after", loadAverage()}};
      if (!args->json) {
        std::printf(
            "plain Bullet pile (%d bodies, 1 thread): %.2f ms/step, %.0f ns/body-step = %.2fx the issue's "
            "5700 ns on this machine now; %d bodies awake at the end (load %.2f)\n",
            c->bodies, c->msPerStep, c->nsPerBodyStep, machineFactor, c->activeBodiesEnd, loadAverage());
      }
    }
    for (int t : threadCounts) {
      PileBenchOptions o;
      o.piles = args->piles;
      o.perPile = args->perPile;
      o.steps = args->steps;
      o.threads = t;
      o.handoffSleeping = !args->noSleep;
      o.freezing = args->freeze;
      o.jointIterationFactor = args->jointIterationFactor;
      if (args->engine != "bullet") o.createWorld = worldFactory(args->engine);
      Result<PileBenchResult> r = runPileBenchmark(*character, o);
      if (!r) {
        std::cerr << "error: " << r.error() << "\n";
        exitCode = 1;
        return;
      }
      if (!args->json) {
        printPile(*r);
        std::printf("           load average %.2f", loadAverage());
        if (machineFactor > 0.0) {
          std::printf(
              "; calibrated by the plain Bullet pile: %.0f ns/body-step, %.2fx reference, crowd / plain "
              "Bullet %.2f",
              r->nsPerBodyStep / machineFactor, r->nsPerBodyStep / machineFactor / referenceNs(t),
              r->nsPerBodyStep / (machineFactor * kBulletCalibrationNsPerBodyStep));
        }
        std::printf("\n");
      }
      runs.push_back(*r);
      loads.push_back(loadAverage());
    }
    const bool identical = std::all_of(runs.begin(), runs.end(),
                                       [&](const PileBenchResult& r) { return r.hash == runs[0].hash; });
    if (!args->json && runs.size() > 1) {
      std::printf("state hash %s across thread counts\n", identical ? "identical" : "DIFFERS");
    }
    nlohmann::json mass = nlohmann::json::array();
    if (args->massDeath) {
      for (bool on : {true, false}) {
        MassDeathOptions o;
        o.threads = threadCounts.back();
        o.freezing = on;
        o.lod = on;
        Result<MassDeathResult> r = runMassDeathBenchmark(*character, o);
        if (!r) {
          std::cerr << "error: " << r.error() << "\n";
          exitCode = 1;
          return;
        }
        mass.push_back(massJson(o, *r));
        mass.back()["load_average_after"] = loadAverage();
        if (!args->json) {
          std::printf(
              "mass death, %d characters within %.1f s, %d thread%s, freezing and LOD %s (%d reduced):\n"
              "           frame worst %.2f ms, p95 %.2f ms, mean %.2f ms, %d frames over 16.6 ms; commit "
              "mean %.1f us, "
              "worst %.1f us\n"
              "           end: %d active, %d sleeping, %d frozen bodies, %d pool misses\n",
              r->characters, o.deathWindow, o.threads, o.threads == 1 ? "" : "s", on ? "on" : "off",
              r->reducedCharacters, r->worstFrameMs, r->p95FrameMs, r->meanFrameMs, r->framesOver16ms,
              r->meanCommitUs, r->worstCommitUs, r->activeBodiesEnd, r->sleepingBodiesEnd, r->frozenBodiesEnd,
              r->poolMisses);
          std::printf("           load average %.2f\n", loadAverage());
        }
      }
    }
    if (args->json) {
      const auto calibrated = [&](nlohmann::json& j, const PileBenchResult& r, double load) {
        j["load_average_after"] = load;
        if (machineFactor <= 0.0) return;
        j["calibrated_ns_per_body_step"] = r.nsPerBodyStep / machineFactor;
        j["calibrated_ratio_to_reference"] = r.nsPerBodyStep / machineFactor / referenceNs(r.threads);
        j["ratio_to_plain_bullet"] = r.nsPerBodyStep / (machineFactor * kBulletCalibrationNsPerBodyStep);
      };
      nlohmann::json out = pileJson(runs.back());
      calibrated(out, runs.back(), loads.back());
      if (args->calibrate) out["bullet_calibration"] = calibration;
      out["scene"] = "jolt_performance_test_ragdoll";
      out["engine"] = args->engine;
      out["bullet_precision"] = bulletPrecision();
      out["handoff_sleeping"] = !args->noSleep;
      out["freezing"] = args->freeze;
      out["joint_iteration_factor"] = args->jointIterationFactor > 0
                                          ? args->jointIterationFactor
                                          : CrowdSettings{}.world.jointIterationFactor;
      nlohmann::json all = nlohmann::json::array();
      for (size_t i = 0; i < runs.size(); ++i) {
        all.push_back(pileJson(runs[i]));
        calibrated(all.back(), runs[i], loads[i]);
      }
      out["runs"] = all;
      out["hash_identical_across_threads"] = identical;
      if (args->massDeath) out["mass_death"] = mass;
      std::cout << out.dump(2) << "\n";
    }
    if (!identical) exitCode = 1;
  });
  addSoakBenchCommand(bench, exitCode);
}

}  // namespace handoff::cli
