// The recovery's per-frame jump (issue 5: no jump of the displayed pelvis or feet beyond the get-up
// clip's own motion) is measured against the clip time the character plays. A transition planned
// with a hold (the fallen pose far from the clip's first frame: the clip holds its first frame
// for `hold`, then plays, TransitionPlan) shifts that time by the hold; the runner used to sample
// the clip at the time since the transition started, and so compared every frame of such a
// recovery with the wrong frames of the clip. Mesh2Motion's jog, handed off at 0.4 s, falls into
// a pose the retargeted face-up clip needs a hold for.
#include "handoff/measure.h"
#include "handoff/runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace handoff {
namespace {

Scenario jogFallsAndGetsUp() {
  const char* text = R"({
    "version": 1, "name": "jog_getup_hold",
    "character": { "file": "../data/mesh2motion/human-base-animations.glb" },
    "clip": { "name": "Jog_Fwd_Loop", "wrap": "loop" },
    "events": [ { "time": 0.4, "type": "ragdoll", "label": "trip" } ],
    "endTime": 14.0
  })";
  Result<Scenario> s =
      loadScenarioJson(text, std::string(HANDOFF_SOURCE_DIR) + "/scenarios/jog_getup_hold.json");
  EXPECT_TRUE(s.ok()) << (s ? "" : s.error());
  return s ? *s : Scenario{};
}

TEST(RecoveryJump, MeasuredAgainstTheClipTimePlayedThroughAPlannedHold) {
  RunOptions options;
  options.searchDirs = {HANDOFF_DATA_DIR};
  options.baselines = false;
  options.driveComparison = false;
  ScenarioRunner runner(options);
  Result<std::unique_ptr<ScenarioSession>> started = ScenarioSession::start(runner, jogFallsAndGetsUp());
  ASSERT_TRUE(started.ok()) << started.error();
  ScenarioSession& session = **started;
  const Character& ch = session.character();

  // The old way, beside the session's own measure: the same display measure, its reference the
  // clip sampled at the time since the transition started (no hold), on the Recovering frames.
  DisplayJumpMeasure unheld(ch);
  JumpFigures unheldFigures;
  std::vector<Transform> now(static_cast<size_t>(ch.skeleton().jointCount())), before(now.size());
  double largestClipShift = 0.0;  // |time since the start - clip time played|, the hold. [s]
  while (session.step()) {
    if (ch.state() != CharacterState::Recovering || ch.recoveryClip() == nullptr) {
      unheld.observe(ch);
      continue;
    }
    const GetUpClip& clip = *ch.recoveryClip();
    const double since = ch.time() - ch.recoveries().back().startTime;
    largestClipShift = std::max(largestClipShift, since - ch.recoveryClipTime());
    sampleGetUpInRoot(clip.clip, ch.skeleton(), clip.info, since, now);
    sampleGetUpInRoot(clip.clip, ch.skeleton(), clip.info, std::max(0.0, since - session.dt()), before);
    unheld.observe(ch, now, before, unheldFigures);
  }
  const ScenarioResult r = session.finish();
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.recoveries.size(), 1u);
  ASSERT_EQ(ch.recoveries().size(), 1u);
  const TransitionPlan& plan = ch.recoveries()[0].transition;
  const RecoveryMetrics& m = r.recoveries[0];
  std::printf(
      "[recovery hold] %s get-up, transition %.2f s with a hold of %.2f s (clip time behind the "
      "transition time by up to %.3f s); worst per-frame jump beyond the clip's own motion at the "
      "clip time played: pelvis %.1f mm, feet %.1f mm; against the un-held clip time (the old "
      "runner): pelvis %.1f mm, feet %.1f mm\n",
      m.facing.c_str(), plan.duration, plan.hold, largestClipShift, m.worstPelvisJump * 1e3,
      m.worstFootJump * 1e3, unheldFigures.pelvisJump * 1e3, unheldFigures.footJump * 1e3);
  EXPECT_TRUE(m.finished);
  // The scenario is about a hold: the plan has one, and the clip time played lags by it.
  EXPECT_GT(plan.hold, 0.2);
  EXPECT_NEAR(largestClipShift, plan.hold, 1e-9);
  // Issue 5 (2 cm per 60 Hz frame), measured against the frames the character shows; the
  // report's rows are these figures.
  EXPECT_LT(m.worstPelvisJump, 0.02);
  EXPECT_LT(m.worstFootJump, 0.02);
  const auto check = [&](const std::string& name) {
    const auto it = std::find_if(r.checks.begin(), r.checks.end(),
                                 [&](const ThresholdCheck& c) { return c.name == name; });
    return it == r.checks.end() ? nullptr : &*it;
  };
  ASSERT_NE(check("recovery.pelvis_jump_per_frame"), nullptr);
  EXPECT_EQ(check("recovery.pelvis_jump_per_frame")->value, m.worstPelvisJump * 1e3);
  EXPECT_EQ(check("recovery.foot_jump_per_frame")->value, m.worstFootJump * 1e3);
  // Against the un-held clip time the same display shows jumps above issue 5's 2 cm: the old
  // runner would have reported a failing row for a recovery that has none.
  EXPECT_GT(std::max(unheldFigures.pelvisJump, unheldFigures.footJump), 0.02);
}

}  // namespace
}  // namespace handoff
