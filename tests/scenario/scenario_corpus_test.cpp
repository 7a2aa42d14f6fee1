// Replays the fuzz seed corpus (tests/fuzz/corpus/scenario/) with the fuzz target's checks in
// every build, so inputs that once crashed stay fixed: drop a crash file there (named bad_* or
// good_*) and it becomes a regression test. good_* files must load, bad_* files must be refused;
// every rejection names the file and is valid UTF-8; every accepted file round-trips.
#include "handoff/scenario.h"
#include "support/files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

namespace handoff {
namespace {

const std::string kCorpus = std::string(HANDOFF_SOURCE_DIR) + "/tests/fuzz/corpus/scenario";

std::vector<std::string> corpusFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus))
    files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

class ScenarioCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(ScenarioCorpus, BehavesAsTheFuzzTargetRequires) {
  const std::string name = std::filesystem::path(GetParam()).filename().string();
  const std::string text = test::readFile(GetParam());
  Result<Scenario> loaded = loadScenarioJson(text, name);
  if (!loaded) {
    EXPECT_EQ(name.rfind("bad_", 0), 0u) << loaded.error();
    EXPECT_THAT(loaded.error(), ::testing::StartsWith(name + ":"));
    EXPECT_NO_THROW((void)nlohmann::json(loaded.error()).dump()) << "message is not valid UTF-8";
    return;
  }
  EXPECT_EQ(name.rfind("good_", 0), 0u) << "accepted";
  Result<Scenario> back = loadScenarioJson(saveScenarioJson(*loaded), name);
  ASSERT_TRUE(back) << back.error();
  EXPECT_TRUE(*back == *loaded);
}

INSTANTIATE_TEST_SUITE_P(Seeds, ScenarioCorpus, ::testing::ValuesIn(corpusFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = std::filesystem::path(info.param).stem().string();
                           std::replace_if(
                               name.begin(), name.end(),
                               [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
                           return name;
                         });

}  // namespace
}  // namespace handoff
