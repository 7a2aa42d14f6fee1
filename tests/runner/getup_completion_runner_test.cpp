// The scenario runner completes a get-up clip that ends below standing (RunOptions::
// completeGetUps, on by default) and reports the tail; switched off it plays the clips as
// shipped. knockdown_getup_supine lands on its back and gets up with DeepMimic's face-up clip,
// which stops mid-rise.
#include "handoff/runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace handoff {
namespace {

/// Time of the first event of `kind` (-1: none). [s]
double eventTime(const ScenarioResult& r, const std::string& kind) {
  const auto it = std::find_if(r.events.begin(), r.events.end(), [&](const CharacterEvent& e) {
    return std::string(eventKindName(e.kind)) == kind;
  });
  return it == r.events.end() ? -1.0 : it->time;
}

TEST(RunnerGetUpCompletion, TheFaceUpClipIsCompletedUnlessSwitchedOff) {
  Result<Scenario> s =
      loadScenarioFile(std::string(HANDOFF_SOURCE_DIR) + "/scenarios/knockdown_getup_supine.json");
  ASSERT_TRUE(s.ok()) << s.error();
  // 0: RunOptions off, 1: on (the default), 2: on but the scenario's recovery.completeGetUps off.
  ScenarioResult results[3];
  for (int on = 0; on < 3; ++on) {
    RunOptions options;
    options.searchDirs = {HANDOFF_DATA_DIR};
    options.baselines = false;
    options.completeGetUps = on >= 1;
    Scenario scenario = *s;
    scenario.recovery.completeGetUps = on != 2;
    ScenarioRunner runner(options);
    results[on] = runner.run(scenario);
    const ScenarioResult& r = results[on];
    ASSERT_TRUE(r.ok) << r.error;
    ASSERT_EQ(r.recoveries.size(), 1u);
    std::printf(
        "[runner completion %s] %s get-up from %.2f s, tail %.3f s, stood up at %.2f s, worst jump beyond "
        "the "
        "clip pelvis %.1f mm, foot %.1f mm\n",
        on == 1 ? "on" : (on == 0 ? "off (RunOptions)" : "off (scenario)"), r.recoveries[0].facing.c_str(),
        r.recoveries[0].startTime, r.recoveries[0].getUpTail, eventTime(r, "recovered"),
        r.recoveries[0].worstPelvisJump * 1e3, r.recoveries[0].worstFootJump * 1e3);
    EXPECT_EQ(r.recoveries[0].facing, "supine");
    EXPECT_TRUE(r.recoveries[0].finished);
    // Issue 5: at most 2 cm per 60 Hz frame beyond the clip's own motion, tail included.
    EXPECT_LT(r.recoveries[0].worstPelvisJump, 0.02);
    EXPECT_LT(r.recoveries[0].worstFootJump, 0.02);
  }
  EXPECT_EQ(results[0].recoveries[0].getUpTail, 0.0);
  EXPECT_EQ(results[2].recoveries[0].getUpTail, 0.0);
  EXPECT_EQ(eventTime(results[2], "recovered"), eventTime(results[0], "recovered"));
  EXPECT_GE(results[1].recoveries[0].getUpTail, GetUpCompletionSettings{}.minDuration);
  // The fall and the settle are the same; the get-up lasts the tail longer (to a frame).
  EXPECT_EQ(results[0].recoveries[0].startTime, results[1].recoveries[0].startTime);
  EXPECT_NEAR(eventTime(results[1], "recovered") - eventTime(results[0], "recovered"),
              results[1].recoveries[0].getUpTail, 1.0 / 60.0 + 1e-9);
}

}  // namespace
}  // namespace handoff
