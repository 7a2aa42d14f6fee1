// Crowds (issue 8, docs/BENCHMARKS.md): Jolt's PerformanceTest "Ragdoll" scene with handoff's
// ragdolls on Bullet at 1 and 2 threads, the per-step cost of frozen ragdolls, and the mass death
// of 200 characters with freezing and LOD on and off. `handoff bench crowd` prints the same
// figures (and JSON); this target puts them under Google Benchmark.
#include <benchmark/benchmark.h>

#include "handoff/crowd.h"

#include <vector>

namespace {

using namespace handoff;

const CrowdCharacter* character() {
  static const Result<CrowdCharacter> c = loadCrowdCharacter(HANDOFF_DATA_DIR);
  return c.ok() ? &c.value() : nullptr;
}

// The whole reference scene (16 piles of 10, 500 steps) once per repetition; the time is the
// stepping only (manual time), setup excluded.
void BM_RagdollPiles(benchmark::State& state) {
  if (!character()) {
    state.SkipWithError("cannot load the default character");
    return;
  }
  PileBenchOptions o;
  o.threads = static_cast<int>(state.range(0));
  PileBenchResult last;
  for (auto _ : state) {
    Result<PileBenchResult> r = runPileBenchmark(*character(), o);
    if (!r) {
      state.SkipWithError(r.error().c_str());
      return;
    }
    last = *r;
    state.SetIterationTime(r->seconds);
  }
  const double reference = o.threads >= 2 ? 6.2e6 / 3680.0 : 3400.0;
  state.counters["bodies"] = last.bodies;
  state.counters["ms_per_step"] = last.msPerStep;
  state.counters["ns_per_body_step"] = last.nsPerBodyStep;
  state.counters["ratio_to_jolt"] = last.nsPerBodyStep / reference;
  state.counters["active_bodies_end"] = last.activeBodiesEnd;
  state.counters["all_asleep_s"] = last.allAsleepTime;
  state.counters["contacts_end"] = last.contactPointsEnd;
}
BENCHMARK(BM_RagdollPiles)->Arg(1)->Arg(2)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);

// One step of a crowd holding N frozen ragdolls and nothing else: what freezing saves. Compare
// with BM_SleepingRagdolls (the same ragdolls asleep but still in their spaces).
void frozenOrSleeping(benchmark::State& state, bool freezing) {
  if (!character()) {
    state.SkipWithError("cannot load the default character");
    return;
  }
  CrowdSettings settings;
  settings.freezing = freezing;
  StaticScene scene;
  scene.planes.push_back({Vec3{0, 1, 0}, 0.0, 1.0});
  auto made = Crowd::create(character()->asset, character()->skeleton, scene, settings);
  if (!made) {
    state.SkipWithError(made.error().c_str());
    return;
  }
  Crowd& crowd = **made;
  const RagdollAsset& a = *character()->asset;
  std::vector<Transform> dead(a.bodies.size()), pose(a.bodies.size());
  bodyPosesFromModels(a, character()->deadModels, Transform{}, dead);
  const std::vector<Vec3> zero(a.bodies.size(), Vec3{0.0});
  const int n = static_cast<int>(state.range(0));
  for (int i = 0; i < n; ++i) {
    const Transform place = Transform::fromTranslation(Vec3{3.0 * (i % 8), 0.0, 3.0 * (i / 8)});
    for (size_t b = 0; b < pose.size(); ++b) pose[b] = place * dead[b];
    (void)crowd.add(pose, zero, zero);
  }
  ThreadPool pool(1);
  for (int s = 0; s < 300; ++s) crowd.step(1.0 / 60.0, pool);  // settle, sleep, freeze
  for (auto _ : state) crowd.step(1.0 / 60.0, pool);
  state.counters["ragdolls"] = n;
  state.counters["simulated_bodies"] = crowd.stats().simulatedBodies;
  state.counters["frozen_bodies"] = crowd.stats().frozenBodies;
  state.counters["sleeping_bodies"] = crowd.stats().sleepingBodies;
}
void BM_FrozenRagdolls(benchmark::State& state) { frozenOrSleeping(state, true); }
void BM_SleepingRagdolls(benchmark::State& state) { frozenOrSleeping(state, false); }
BENCHMARK(BM_FrozenRagdolls)->Arg(64)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SleepingRagdolls)->Arg(64)->Unit(benchmark::kMicrosecond);

// 200 characters handed off within one second at 2 threads; arg: freezing and LOD on (1) or off.
void BM_MassDeath(benchmark::State& state) {
  if (!character()) {
    state.SkipWithError("cannot load the default character");
    return;
  }
  MassDeathOptions o;
  o.threads = 2;
  o.freezing = o.lod = state.range(0) != 0;
  MassDeathResult last;
  for (auto _ : state) {
    Result<MassDeathResult> r = runMassDeathBenchmark(*character(), o);
    if (!r) {
      state.SkipWithError(r.error().c_str());
      return;
    }
    last = *r;
    state.SetIterationTime(r->meanFrameMs * 1e-3 * r->frames);
  }
  state.counters["worst_frame_ms"] = last.worstFrameMs;
  state.counters["p95_frame_ms"] = last.p95FrameMs;
  state.counters["frames_over_16_6ms"] = last.framesOver16ms;
  state.counters["commit_us"] = last.meanCommitUs;
  state.counters["worst_commit_us"] = last.worstCommitUs;
  state.counters["pool_misses"] = last.poolMisses;
}
BENCHMARK(BM_MassDeath)->Arg(1)->Arg(0)->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
