// The cost of one handoff commit for a 15-body character (CMU 01_01), with and without the
// velocity-consistency step, and of keeping N animated characters' kinematic bodies in sync
// with their animation every step (N = 1, 16, 128), on the DeepMimic character, beside its floor
// (the same bodies moved by Bullet alone, bench/sync_floor.h); and the same characters capsule
// only (their bodies out of the simulation while animated) beside a capsule moved by Bullet.
#include <benchmark/benchmark.h>

#include <chrono>

#include "support/clip_scene_bench.h"
#include "sync_floor.h"

namespace {

using handoff::bench::Crowd;
using handoff::bench::SyncFloor;

void perCharacter(benchmark::State& state) {
  state.counters["characters"] = static_cast<double>(state.range(0));
  state.counters["us_per_character"] = benchmark::Counter(
      static_cast<double>(state.range(0)) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert, benchmark::Counter::OneK::kIs1000);
}

void BM_HandoffCommit(benchmark::State& state) {
  Crowd crowd;
  if (!crowd.load("cmu/01_01.bvh")) {
    state.SkipWithError("cannot load the 15-body character");
    return;
  }
  handoff::HandoffSettings settings;
  settings.jointConsistency = settings.staticContacts = state.range(0) != 0;
  // The caller's record, kept across commits as a game keeps one per character: its storage is
  // reused, so the figure is the commit's own work. Each iteration rebuilds the character (not
  // timed) and times the commit alone (manual time: no pause/resume of the harness in it).
  handoff::HandoffRecord record;
  for (auto _ : state) {
    crowd.reset(1);
    crowd.track(3);
    const auto start = std::chrono::steady_clock::now();
    crowd.ragdolls[0]->commit(settings, record);
    const auto stop = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(record.committed);
    if (!record.committed) {
      state.SkipWithError(record.failure.c_str());
      break;
    }
    state.SetIterationTime(std::chrono::duration<double>(stop - start).count());
  }
  state.counters["bodies"] = static_cast<double>(crowd.asset->bodies.size());
  state.counters["consistency"] = static_cast<double>(state.range(0));
}
// Arg: 1 = with the velocity-consistency step (the default), 0 = without.
BENCHMARK(BM_HandoffCommit)->Arg(1)->Arg(0)->UseManualTime()->Unit(benchmark::kMicrosecond);

// Per step: sample the clip, local -> model, body poses, kinematic moves, and the world step.
void BM_AnimatedSync(benchmark::State& state) {
  Crowd crowd;
  if (!crowd.load("deepmimic/humanoid3d_run.bvh")) {
    state.SkipWithError("cannot load the default character");
    return;
  }
  crowd.reset(static_cast<int>(state.range(0)));
  // Arg 1 = 1: capsule only (Ragdoll::setCapsuleOnly), the bodies out of the simulation.
  if (state.range(1) != 0) {
    for (auto& ragdoll : crowd.ragdolls) (void)ragdoll->setCapsuleOnly(true);
  }
  crowd.track(2);
  for (auto _ : state) crowd.track(1);
  perCharacter(state);
}

// The floor of BM_AnimatedSync (bench/sync_floor.h): the same clip, characters and body poses
// moved by Bullet alone. Arg 0: characters; arg 1: 0 Bullet's default kinematic pairing, 1 the
// adapter's pairs, 2 the capsule alone (the floor of a capsule-only character).
void BM_AnimatedSyncFloor(benchmark::State& state) {
  Crowd crowd;
  if (!crowd.load("deepmimic/humanoid3d_run.bvh")) {
    state.SkipWithError("cannot load the default character");
    return;
  }
  const auto pairs = static_cast<SyncFloor::Pairs>(state.range(1));
  SyncFloor floor(crowd, static_cast<int>(state.range(0)), pairs);
  floor.step();
  floor.step();
  for (auto _ : state) floor.step();
  state.counters["pairs"] = floor.pairCount();
  perCharacter(state);
}

// The figure and its floors registered alternately, 1, 16 and 128 characters. Run with
// --benchmark_enable_random_interleaving=true --benchmark_repetitions=N for floors and figures
// measured in turns (docs/BENCHMARKS.md).
const bool registered = [] {
  struct Entry {
    const char* name;
    void (*run)(benchmark::State&);
    int mode;  // the second argument
  };
  const Entry entries[] = {{"BM_AnimatedSyncFloor/bullet_default", BM_AnimatedSyncFloor, 0},
                           {"BM_AnimatedSyncFloor/same_pairs", BM_AnimatedSyncFloor, 1},
                           {"BM_AnimatedSync", BM_AnimatedSync, 0},
                           {"BM_AnimatedSyncFloor/capsule_only", BM_AnimatedSyncFloor, 2},
                           {"BM_AnimatedSync/capsule_only", BM_AnimatedSync, 1}};
  for (const int n : {1, 16, 128}) {
    for (const Entry& e : entries)
      benchmark::RegisterBenchmark(e.name, e.run)->Args({n, e.mode})->Unit(benchmark::kMicrosecond);
  }
  return true;
}();

}  // namespace
