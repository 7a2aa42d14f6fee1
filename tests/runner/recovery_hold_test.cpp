// The recovery's per-frame jump (issue 5: no jump of the displayed pelvis or feet beyond the get-up
// clip's own motion) is measured against the clip time the character plays. A transition planned
// with a hold (the fallen pose far from the clip's first frame: the clip holds its first frame
// for `hold`, then plays, TransitionPlan) shifts that time by the hold; the runner used to sample
// the clip at the time since the transition started, and so compared every frame of such a
// recovery with the wrong frames of the clip. Mesh2Motion's jog, handed off at 0.44 s, falls into
// a pose the retargeted face-down clip needs a hold of 0.62 s for. (At 0.4 s it needed one while
// the gather rolled that fall onto its back and the bodiless `root` bone swung the body through
// the blend; since issue 31 that fall gets up face down with no hold.)
#include "handoff/controller.h"
#include "handoff/measure.h"
#include "handoff/recovery.h"
#include "handoff/runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace handoff {
namespace {

// Mesh2Motion's jog tripped at 0.44 s, gets up without a gather (recovery.gatherTime 0): the
// get-up starts from limbs far from the clip's first frame and its plan holds the clip. (The hold
// once came from a gather that happened to roll the body over; the gather now rarely does.)
Scenario jogFallsAndGetsUp() {
  const char* text = R"({
    "version": 1, "name": "jog_getup_hold",
    "character": { "file": "../data/mesh2motion/human-base-animations.glb" },
    "clip": { "name": "Jog_Fwd_Loop", "wrap": "loop" },
    "recovery": { "gatherTime": 0 },
    "events": [ { "time": 0.44, "type": "ragdoll", "label": "trip" } ],
    "endTime": 14.0
  })";
  Result<Scenario> s =
      loadScenarioJson(text, std::string(HANDOFF_SOURCE_DIR) + "/scenarios/jog_getup_hold.json");
  EXPECT_TRUE(s.ok()) << (s ? "" : s.error());
  return s ? *s : Scenario{};
}

/// The recovery's per-frame jumps recomputed here, apart from measure.h: the displayed pelvis and
/// feet (displayRoot * the model pose of displayLocals) on every Recovering frame and the frame the
/// recovery finished on, less the get-up clip's own move over the frame, the clip sampled at a
/// time the caller gives (the one Character plays, or the old runner's).
struct HoldJumps {
  const Character& ch;
  std::vector<int> tracked;
  int pelvis;
  std::vector<Transform> models, clipNow, clipBefore, clipModelsNow, clipModelsBefore;
  std::vector<Vec3> shown, shownLast;
  bool haveShown = false;

  explicit HoldJumps(const Character& character)
      : ch(character),
        tracked(character.trackedJoints().begin(), character.trackedJoints().end()),
        pelvis(character.ragdoll().asset().map[Slot::Pelvis]),
        models(static_cast<size_t>(character.skeleton().jointCount())),
        clipNow(models.size()),
        clipBefore(models.size()),
        clipModelsNow(models.size()),
        clipModelsBefore(models.size()),
        shown(tracked.size()),
        shownLast(tracked.size()) {}

  /// The displayed points of this frame (after the step).
  void look() {
    localToModel(ch.skeleton(), ch.displayLocals(), models);
    for (size_t i = 0; i < tracked.size(); ++i)
      shown[i] = ch.displayRoot().transformPoint(models[static_cast<size_t>(tracked[i])].translation);
  }
  /// This frame's moves beyond the clip's move from `clipBeforeTime` to `clipNowTime`. [s]
  void jumps(double clipNowTime, double clipBeforeTime, JumpFigures& out) {
    const GetUpClip& clip = *ch.recoveryClip();
    sampleGetUpInRoot(clip.clip, ch.skeleton(), clip.info, clipNowTime, clipNow);
    sampleGetUpInRoot(clip.clip, ch.skeleton(), clip.info, clipBeforeTime, clipBefore);
    localToModel(ch.skeleton(), clipNow, clipModelsNow);
    localToModel(ch.skeleton(), clipBefore, clipModelsBefore);
    for (size_t i = 0; i < tracked.size(); ++i) {
      const auto j = static_cast<size_t>(tracked[i]);
      const double moved = glm::length(shown[i] - shownLast[i]);
      const double own = glm::length(clipModelsNow[j].translation - clipModelsBefore[j].translation);
      double& jump = tracked[i] == pelvis ? out.pelvisJump : out.footJump;
      jump = std::max(jump, moved - own);
    }
  }
  void remember() {
    shownLast = shown;
    haveShown = true;
  }
};

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
  // Recomputed here: against the clip at transitionClipTime(since, plan) (what Character
  // displays) and at `since` (the old runner), on the frames RecoveryJumpMeasure measures.
  HoldJumps recomputed(ch);
  JumpFigures played, atSince;
  bool wasRecovering = false;
  double sinceBefore = 0.0;
  int recoveringFrames = 0;
  while (session.step()) {
    recomputed.look();
    const bool recovering = ch.state() == CharacterState::Recovering;
    const bool finished = !recovering && wasRecovering && ch.recoveries().back().finished;
    if ((recovering || finished) && ch.recoveryClip() != nullptr && recomputed.haveShown) {
      const RecoveryRecord& record = ch.recoveries().back();
      const double since = ch.time() - record.startTime;
      const double before = wasRecovering ? sinceBefore : since;  // first frame: the captured pose
      recomputed.jumps(transitionClipTime(since, record.transition),
                       transitionClipTime(before, record.transition), played);
      recomputed.jumps(since, before, atSince);
      sinceBefore = since;
      ++recoveringFrames;
    }
    recomputed.remember();
    wasRecovering = recovering;
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
  std::printf(
      "[recovery hold] recomputed over %d frames from the displayed pose: against the clip time "
      "played (transitionClipTime) pelvis %.4f mm, feet %.4f mm (runner %.4f, %.4f mm); against "
      "the clip at the time since the start (the old runner) pelvis %.1f mm, feet %.1f mm\n",
      recoveringFrames, played.pelvisJump * 1e3, played.footJump * 1e3, m.worstPelvisJump * 1e3,
      m.worstFootJump * 1e3, atSince.pelvisJump * 1e3, atSince.footJump * 1e3);
  EXPECT_TRUE(m.finished);
  // The runner's figures are the jumps of the pose Character displays against the clip it plays
  // (1e-6 m: the clip sampled at ch.time() - startTime instead of the character's summed steps).
  EXPECT_GT(recoveringFrames, 60);
  EXPECT_NEAR(m.worstPelvisJump, played.pelvisJump, 1e-6);
  EXPECT_NEAR(m.worstFootJump, played.footJump, 1e-6);
  // Against the clip at `since` the same frames give clearly other figures: a runner measuring
  // that way (the hold drift) fails the two checks above.
  EXPECT_GT(std::max(std::abs(atSince.pelvisJump - m.worstPelvisJump),
                     std::abs(atSince.footJump - m.worstFootJump)),
            0.005);
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
