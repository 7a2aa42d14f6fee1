// Hit reactions and partial modes that end for moving characters (issue 31): the return to
// animation was decided against fixed thresholds measured for a character standing still (3 deg
// RMS joint error, bodies within 0.3 m/s and 1 rad/s of the animation, the pelvis within 5 cm).
// Running, the drives track the DeepMimic run at 3-6.3 deg RMS undisturbed, the pinned pelvis up
// to 7.6 cm off, a foot 8 m/s off at its strike: a hit reaction on the run never returned (still
// powered at 4.0 s), nor did `animate` end a partial mode. The thresholds now grow with the
// animation's own motion (PoweredSettings::returnTrackingLag, returnSpeedFraction).
#include "handoff/runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace handoff {
namespace {

Scenario runScenario(const std::string& events, double endTime,
                     const std::string& file = "../data/deepmimic/humanoid3d_run.bvh",
                     const std::string& clip = "humanoid3d_run") {
  const std::string text = R"({
    "version": 1, "name": "moving_hit_return",
    "character": { "file": ")" +
                           file + R"(" },
    "clip": { "name": ")" + clip +
                           R"(", "wrap": "loop" },
    "events": [ { "time": 0.0, "type": "getup_allowed", "allowed": false }, )" +
                           events + R"( ],
    "endTime": )" + std::to_string(endTime) +
                           R"( })";
  Result<Scenario> s =
      loadScenarioJson(text, std::string(HANDOFF_SOURCE_DIR) + "/scenarios/moving_hit_return.json");
  EXPECT_TRUE(s.ok()) << (s ? "" : s.error());
  return s ? *s : Scenario{};
}

ScenarioResult play(const Scenario& s) {
  RunOptions options;
  options.baselines = false;
  options.driveComparison = false;
  ScenarioRunner runner(options);
  return runner.run(s);
}

Scenario hit(const char* impulse) {
  return runScenario(std::string(R"({ "time": 1.0, "type": "impulse", "body": "chest", "impulse": )") +
                         impulse + R"(, "impulseSpace": "root", "label": "hit" })",
                     4.0);
}

// The hit reaction of the running character: returned to the run (or knocked out) within the
// issue-6 1.5 s of the hit, from the front (60 N s) and from the side (40 N s). Before: both still
// powered at 4.0 s.
TEST(MovingHitReturn, TheRunHitAtTheChestReturnsToItsAnimation) {
  for (const char* impulse : {"[-60, 0, 0]", "[0, 0, 40]"}) {
    const ScenarioResult r = play(hit(impulse));
    ASSERT_TRUE(r.ok) << r.error;
    ASSERT_EQ(r.hitReactions.size(), 1u) << impulse;
    const HitReactionMetrics& m = r.hitReactions[0];
    std::printf(
        "[moving hit] %s N s at %.2f s: returned %d after %.3f s, knocked out %d, RMS at return %.2f deg\n",
        impulse, m.time, m.returned ? 1 : 0, m.returnTime, m.knockedOut ? 1 : 0, m.rmsAtReturn * 180.0 / kPi);
    EXPECT_TRUE(m.returned || m.knockedOut) << impulse << ": still powered at the end";
    if (m.returned) {
      EXPECT_LE(m.returnTime, 1.5) << impulse;
    }
    if (m.knockedOut) {
      EXPECT_LE(m.knockoutTime, 1.5) << impulse;
    }
    EXPECT_TRUE(r.poweredReturned || m.knockedOut) << impulse;
  }
}

// A partial mode on a moving character ends on `animate`: Mesh2Motion's jog with its forearms
// and hands lagging (limb lag), `animate` at 2.0 s. Before: still powered at the end (3.5 s).
TEST(MovingHitReturn, LimbLagOnAJogEndsAfterAnimate) {
  const ScenarioResult r =
      play(runScenario(R"({ "time": 0.5, "type": "limb_lag", "label": "limb lag on" },
      { "time": 2.0, "type": "animate", "blendTime": 0.25, "label": "limb lag off" })",
                       3.5, "../data/mesh2motion/human-base-animations.glb", "Jog_Fwd_Loop"));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.poweredReturned) << "still powered 1.5 s after `animate`";
  ASSERT_FALSE(r.returns.empty());
  std::printf("[moving hit] limb lag on the jog: back to animation at %.3f s (animate at 2.0 s)\n",
              r.returns[0].time);
  EXPECT_LE(r.returns[0].time, 2.0 + 1.0);
}

}  // namespace
}  // namespace handoff
