// handoff bench soak [--minutes 60] [--characters 8] [--seed 1] [--json]
// Characters living a long game session in one world (include/handoff/soak.h, issue 28): resident
// memory and the characters' history sizes every game minute.
#include <cstdio>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "handoff/soak.h"

namespace handoff::cli {
namespace {

nlohmann::json historyJson(const SoakHistorySizes& h) {
  return {{"events", h.events},
          {"handoffs", h.handoffs},
          {"recoveries", h.recoveries},
          {"flights", h.flights},
          {"landings", h.landings},
          {"breaks", h.breaks},
          {"prop_releases", h.propReleases}};
}

SoakHistorySizes total(const SoakSample& s) {
  SoakHistorySizes t;
  for (const SoakHistorySizes& h : s.histories) {
    t.events += h.events;
    t.handoffs += h.handoffs;
    t.recoveries += h.recoveries;
    t.flights += h.flights;
    t.landings += h.landings;
    t.breaks += h.breaks;
    t.propReleases += h.propReleases;
  }
  return t;
}

}  // namespace

void addSoakBenchCommand(Command bench, int& exitCode) {
  struct Args {
    SoakOptions options;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  Command soak = bench.subcommand(
      "soak",
      "8 characters for an hour of game time: hits, deaths, get-ups, props, limb lag, teleports; "
      "resident memory and history sizes per game minute");
  soak.option("--minutes", args->options.minutes, "game time (default 60)").range(0.05, 10000.0);
  soak.option("--characters", args->options.characters, "characters (default 8)").range(1, 256);
  soak.option("--seed", args->options.seed, "hit bodies and directions (default 1)");
  soak.flag("--json", args->json, "print one JSON object");
  soak.callback([args, &exitCode] {
    if (!args->json) {
      std::printf("soak: %d characters, %.1f game minutes, hit every %.1f s, death every %.1f s\n",
                  args->options.characters, args->options.minutes, args->options.hitInterval,
                  args->options.deathInterval);
      std::printf(
          "%6s %9s %7s  %s\n", "minute", "RSS KiB", "wall s",
          "history sizes, all characters (events handoffs recoveries flights landings breaks releases)");
    }
    const auto print = [&](const SoakSample& s) {
      if (args->json) return;
      const SoakHistorySizes t = total(s);
      std::printf("%6.1f %9ld %7.1f  %zu %zu %zu %zu %zu %zu %zu\n", s.gameSeconds / 60.0, s.residentKb,
                  s.wallSeconds, t.events, t.handoffs, t.recoveries, t.flights, t.landings, t.breaks,
                  t.propReleases);
      std::fflush(stdout);
    };
    Result<SoakResult> r = runSoak(dataDir(), args->options, print);
    if (!r) {
      std::cerr << "error: " << r.error() << "\n";
      exitCode = 1;
      return;
    }
    const SoakSample& last = r->samples.back();
    const SoakSample* five = nullptr;
    for (const SoakSample& s : r->samples) {
      if (s.gameSeconds >= 300.0 - 1e-6) {
        five = &s;
        break;
      }
    }
    const double growth =
        five ? 100.0 * (static_cast<double>(last.residentKb) - static_cast<double>(five->residentKb)) /
                   static_cast<double>(five->residentKb)
             : 0.0;
    if (args->json) {
      nlohmann::json samples = nlohmann::json::array();
      for (const SoakSample& s : r->samples) {
        nlohmann::json per = nlohmann::json::array();
        for (const SoakHistorySizes& h : s.histories) per.push_back(historyJson(h));
        samples.push_back({{"game_minutes", s.gameSeconds / 60.0},
                           {"rss_kb", s.residentKb},
                           {"wall_s", s.wallSeconds},
                           {"hits", s.hits},
                           {"deaths", s.deaths},
                           {"recovered", s.recovered},
                           {"teleports", s.teleports},
                           {"limb_lags", s.limbLags},
                           {"histories", per}});
      }
      nlohmann::json out{{"characters", args->options.characters},
                         {"minutes", args->options.minutes},
                         {"faults", r->faults},
                         {"samples", samples}};
      if (five) out["rss_growth_since_minute_5_percent"] = growth;
      std::cout << out.dump(2) << "\n";
      return;
    }
    std::printf(
        "counted: %ld hits, %ld deaths, %ld get-ups or landings finished, %ld teleports, %ld limb lags, "
        "%d faults\n",
        last.hits, last.deaths, last.recovered, last.teleports, last.limbLags, r->faults);
    std::printf("per character at the end (events handoffs recoveries flights landings breaks releases):\n");
    for (size_t i = 0; i < last.histories.size(); ++i) {
      const SoakHistorySizes& h = last.histories[i];
      std::printf("  %2zu: %zu %zu %zu %zu %zu %zu %zu\n", i, h.events, h.handoffs, h.recoveries, h.flights,
                  h.landings, h.breaks, h.propReleases);
    }
    if (five) {
      std::printf("RSS: minute 5 %ld KiB, last %ld KiB: %+.2f %%\n", five->residentKb, last.residentKb,
                  growth);
    }
  });
}

}  // namespace handoff::cli
