// A look-at owning the head through a scenario (issue 19): scenarios/lookat_knockdown_hit.json
// knocks the DeepMimic humanoid down, gets it up and hits it while a look-at turns its head
// toward a fixed point; the report's lookat.head_vs_gaze row holds the worst frame. Without the
// head in settings.animationOwnedBones the same run fails the row.
#include "handoff/runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "support/checks.h"

namespace handoff {
namespace {

TEST(RunnerLookAt, TheOwnedHeadIsShownAsTheGazeAskedAndWithoutTheMaskItIsNot) {
  Result<Scenario> s =
      loadScenarioFile(std::string(HANDOFF_SOURCE_DIR) + "/scenarios/lookat_knockdown_hit.json");
  ASSERT_TRUE(s) << s.error();
  RunOptions options;
  options.searchDirs = {HANDOFF_DATA_DIR};
  options.baselines = false;
  options.driveComparison = false;
  ScenarioRunner runner(options);
  const ScenarioResult owned = runner.run(*s);
  ASSERT_TRUE(owned.ok) << owned.error;
  Scenario plain = *s;
  plain.settings.animationOwnedBones.clear();
  const ScenarioResult unowned = runner.run(plain);
  ASSERT_TRUE(unowned.ok) << unowned.error;
  for (const ScenarioResult* r : {&owned, &unowned}) {
    ASSERT_TRUE(r->lookAt);
    const ThresholdCheck* c = test::findThresholdCheck(*r, "lookat.head_vs_gaze");
    ASSERT_NE(c, nullptr);
    std::printf("[runner look-at] head %s: %d frames, head vs gaze asked %.2e deg (%s), %s\n",
                r == &owned ? "owned" : "not owned", r->lookAt->frames, c->value, c->pass ? "pass" : "FAIL",
                c->note.c_str());
  }
  EXPECT_TRUE(owned.passed());
  EXPECT_EQ(owned.lookAt->frames, owned.frames);
  EXPECT_LE(test::findThresholdCheck(owned, "lookat.head_vs_gaze")->value, 0.1);
  EXPECT_TRUE(test::findThresholdCheck(owned, "lookat.head_vs_gaze")->pass);
  // It ran through every state: the ragdoll, the get-up and the hit reaction, back to animation.
  ASSERT_EQ(owned.recoveries.size(), 1u);
  EXPECT_TRUE(owned.recoveries[0].finished);
  ASSERT_EQ(owned.hitReactions.size(), 1u);
  EXPECT_TRUE(owned.hitReactions[0].returned);
  // Not owned: the physics head and the get-up clip's head are shown instead.
  EXPECT_GT(test::findThresholdCheck(unowned, "lookat.head_vs_gaze")->value, 5.0);
  EXPECT_FALSE(test::findThresholdCheck(unowned, "lookat.head_vs_gaze")->pass);
}

}  // namespace
}  // namespace handoff
