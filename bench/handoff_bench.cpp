// The cost of one handoff commit, and of keeping N animated characters' kinematic bodies in
// sync with their animation every step (N = 1, 16, 128), on the default character.
#include <benchmark/benchmark.h>

#include "support/clip_scene_bench.h"

namespace {

using handoff::bench::Crowd;

void BM_HandoffCommit(benchmark::State& state) {
  Crowd crowd;
  if (!crowd.load("deepmimic/humanoid3d_run.bvh")) {
    state.SkipWithError("cannot load the default character");
    return;
  }
  for (auto _ : state) {
    state.PauseTiming();
    crowd.reset(1);
    crowd.track(3);
    state.ResumeTiming();
    handoff::HandoffRecord record = crowd.ragdolls[0]->commit({});
    benchmark::DoNotOptimize(record.committed);
  }
  state.counters["bodies"] = static_cast<double>(crowd.asset->bodies.size());
}
BENCHMARK(BM_HandoffCommit)->Unit(benchmark::kMicrosecond);

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
