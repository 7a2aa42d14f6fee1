// The cost of one handoff commit for a 15-body character (CMU 01_01), with and without the
// velocity-consistency step, and of keeping N animated characters' kinematic bodies in sync
// with their animation every step (N = 1, 16, 128), on the DeepMimic character.
#include <benchmark/benchmark.h>

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
  for (auto _ : state) {
    state.PauseTiming();
    crowd.reset(1);
    crowd.track(3);
    state.ResumeTiming();
    handoff::HandoffRecord record = crowd.ragdolls[0]->commit(settings);
    benchmark::DoNotOptimize(record.committed);
  }
  state.counters["bodies"] = static_cast<double>(crowd.asset->bodies.size());
  state.counters["consistency"] = static_cast<double>(state.range(0));
}
// Arg: 1 = with the velocity-consistency step (the default), 0 = without.
BENCHMARK(BM_HandoffCommit)->Arg(1)->Arg(0)->Unit(benchmark::kMicrosecond);

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
