// The cost of one handoff commit for a 15-body character (CMU 01_01), with and without the
// velocity-consistency step, and of keeping N animated characters' kinematic bodies in sync
// with their animation every step (N = 1, 16, 128), on the DeepMimic character.
#include <benchmark/benchmark.h>

#include <chrono>

#include "support/clip_scene_bench.h"

namespace {

using handoff::bench::Crowd;

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
  crowd.track(2);
  for (auto _ : state) crowd.track(1);
  state.counters["characters"] = static_cast<double>(state.range(0));
  state.counters["us_per_character"] = benchmark::Counter(
      static_cast<double>(state.range(0)) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert, benchmark::Counter::OneK::kIs1000);
}
BENCHMARK(BM_AnimatedSync)->Arg(1)->Arg(16)->Arg(128)->Unit(benchmark::kMicrosecond);

}  // namespace
