// The shipped scenarios (scenarios/*.json) load, round-trip, and validate against their
// character files.
#include "handoff/scenario.h"
#include "support/files.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace handoff {
namespace {

const std::string kSource = HANDOFF_SOURCE_DIR;
const std::string kData = HANDOFF_DATA_DIR;

std::vector<std::string> exampleFiles() {
  std::vector<std::string> files;
  // The shipped scenarios and the broken ragdolls of `handoff diagnose` (docs/DIAGNOSE.md).
  for (const char* folder : {"/scenarios", "/scenarios/diagnose"}) {
    for (const auto& entry : std::filesystem::directory_iterator(kSource + folder)) {
      if (entry.path().extension() == ".json") files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ScenarioExamples, TheSuiteIsComplete) {
  std::set<std::string> names;
  for (const std::string& file : exampleFiles()) names.insert(std::filesystem::path(file).stem().string());
  for (const char* required :
       {"run_handoff", "jump_handoff", "spin_handoff", "punch_handoff", "teleport_handoff",
        "death_down_steps", "knockdown_getup_supine", "knockdown_getup_prone", "powered_hit_reaction",
        "arm_break", "walk_limb_lag", "prop_hit_death", "ledge_landing", "knockback", "adjacent_overlap",
        "mass_ratio_10", "limits_exclude_pose"}) {
    EXPECT_TRUE(names.count(required)) << "missing scenarios/" << required << ".json";
  }
}

class ScenarioExample : public ::testing::TestWithParam<std::string> {};

TEST_P(ScenarioExample, LoadsRoundTripsAndValidates) {
  Result<Scenario> loaded = loadScenarioFile(GetParam());
  ASSERT_TRUE(loaded) << loaded.error();
  EXPECT_EQ(loaded->name, std::filesystem::path(GetParam()).stem().string());
  EXPECT_FALSE(loaded->description.empty());

  Result<Scenario> back = loadScenarioJson(saveScenarioJson(*loaded), GetParam());
  ASSERT_TRUE(back) << back.error();
  EXPECT_TRUE(*loaded == *back);

  const std::string dirs[] = {kData};
  Status files = validateScenarioFiles(*loaded, dirs);
  EXPECT_TRUE(files) << files.error();

  // And against the imported character directly.
  Result<std::string> path = resolveScenarioFile(*loaded, loaded->character.file);
  ASSERT_TRUE(path) << path.error();
  ImportOptions options;
  options.unitScale = loaded->character.unitScale;
  Result<ImportedAsset> character = importFile(*path, options);
  ASSERT_TRUE(character) << character.error();
  Status status = validateScenarioAgainst(*loaded, *character);
  EXPECT_TRUE(status) << status.error();
}

INSTANTIATE_TEST_SUITE_P(Scenarios, ScenarioExample, ::testing::ValuesIn(exampleFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return std::filesystem::path(info.param).stem().string();
                         });

TEST(ScenarioExamples, DeathDownStepsStandsOnTheLandingAtTheTopStep) {
  Result<Scenario> s = loadScenarioFile(kSource + "/scenarios/death_down_steps.json");
  ASSERT_TRUE(s) << s.error();
  ASSERT_EQ(s->world.steps.size(), 1u);
  const std::vector<ScenarioBox> steps = stepBoxes(s->world.steps[0]);
  const ScenarioBox& top = steps.back();
  const ScenarioBox& landing = s->world.boxes.at(0);
  const double topHeight = top.center.y + top.halfExtents.y;
  EXPECT_NEAR(landing.center.y + landing.halfExtents.y, topHeight, 1e-12);
  EXPECT_NEAR(s->root.position.y, topHeight, 1e-12);
  // The landing starts where the top step ends (steps rise toward +Z), the root is on the landing.
  EXPECT_NEAR(landing.center.z - landing.halfExtents.z, top.center.z + top.halfExtents.x, 1e-12);
  EXPECT_GT(s->root.position.z, landing.center.z - landing.halfExtents.z);
}

TEST(ScenarioExamples, TheDocumentedCompleteExampleLoads) {
  const std::string doc = test::readFile(kSource + "/docs/SCENARIOS.md");
  const std::size_t begin = doc.find("```json\n");
  ASSERT_NE(begin, std::string::npos);
  const std::size_t end = doc.find("```", begin + 8);
  ASSERT_NE(end, std::string::npos);
  Result<Scenario> s =
      loadScenarioJson(doc.substr(begin + 8, end - begin - 8), kSource + "/docs/example.json");
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ(s->events.size(), 10u);
  EXPECT_EQ(s->endTime, 6.0);
}

}  // namespace
}  // namespace handoff
