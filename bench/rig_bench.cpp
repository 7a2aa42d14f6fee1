// Sampling a clip and converting local -> model for the CMU 31-joint skeleton: the per-frame
// cost of the animation side, per character.
#include <benchmark/benchmark.h>

#include "handoff/import.h"

namespace {

void BM_SampleAndLocalToModel_Cmu31(benchmark::State& state) {
  auto imported = handoff::importFile(std::string(HANDOFF_DATA_DIR) + "/cmu/01_01.bvh");
  if (!imported) {
    state.SkipWithError(imported.error().c_str());
    return;
  }
  const handoff::Skeleton& skeleton = imported->skeleton;
  const handoff::Clip& clip = imported->clips.at(0);
  std::vector<handoff::Transform> locals(static_cast<size_t>(skeleton.jointCount()));
  std::vector<handoff::Transform> models(locals.size());
  double t = 0.0;
  for (auto _ : state) {
    clip.sample(t, handoff::WrapMode::Loop, locals);
    handoff::localToModel(skeleton, locals, models);
    benchmark::DoNotOptimize(models.data());
    t += 1.0 / 60.0 + 1e-4;  // irregular times: interpolate, never hit a key exactly
  }
  state.counters["joints"] = skeleton.jointCount();
}
BENCHMARK(BM_SampleAndLocalToModel_Cmu31);

}  // namespace
