// Scenario bounds (issue 27, finding 13): what a scenario file may ask for is bounded, and a file
// past a bound comes back as an error naming the field and the bound, without throwing or
// building what it asks for (a 1e6-event file once ended in std::bad_alloc).
#include "handoff/scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>

namespace handoff {
namespace {

using ::testing::HasSubstr;

const std::string kHead = R"({"character": {"file": "hero.bvh"}, )";

/// `count` comma-separated copies of `item`.
std::string repeated(const std::string& item, std::size_t count) {
  std::string out;
  out.reserve((item.size() + 1) * count);
  for (std::size_t i = 0; i < count; ++i) {
    if (i) out += ',';
    out += item;
  }
  return out;
}

std::string withEvents(std::size_t count) {
  return kHead + R"("events": [)" + repeated(R"({"time":0,"type":"ragdoll"})", count) + R"(], "endTime": 1})";
}

Result<Scenario> load(const std::string& text) {
  Result<Scenario> s = Result<Scenario>(Error{"not loaded"});
  EXPECT_NO_THROW(s = loadScenarioJson(text, "big.json"));
  return s;
}

TEST(ScenarioBounds, MillionEventsIsAnErrorNotAThrow) {
  const std::string text = withEvents(1000000);  // 28 MB, as the finding's 53 MB file
  ASSERT_GT(text.size(), kScenarioMaxBytes);
  const Result<Scenario> s = load(text);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error(), HasSubstr("big.json: "));
  EXPECT_THAT(s.error(),
              HasSubstr("at most " + std::to_string(kScenarioMaxBytes) + " bytes (kScenarioMaxBytes)"));
}

TEST(ScenarioBounds, FileSizeRefusedBeforeReading) {
  const auto path = std::filesystem::temp_directory_path() / "handoff_scenario_bounds_big.json";
  {
    std::ofstream out(path, std::ios::binary);
    out << withEvents(200000);
  }
  ASSERT_GT(std::filesystem::file_size(path), kScenarioMaxBytes);
  const Result<Scenario> s = loadScenarioFile(path.string());
  std::filesystem::remove(path);
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error(), HasSubstr(path.string() + ": "));
  EXPECT_THAT(s.error(), HasSubstr("(kScenarioMaxBytes)"));
}

TEST(ScenarioBounds, EventCount) {
  ASSERT_TRUE(load(withEvents(kScenarioMaxEvents))) << load(withEvents(kScenarioMaxEvents)).error();
  const Result<Scenario> s = load(withEvents(kScenarioMaxEvents + 1));
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error(), HasSubstr("big.json: events: 10001 entries; at most 10000 (kScenarioMaxEvents)"));
}

TEST(ScenarioBounds, FrameCount) {
  // An hour at 60 Hz is the bound; the same hour at 1 kHz is 3.6 million frames.
  EXPECT_TRUE(load(kHead + R"("endTime": 3600})"));
  const Result<Scenario> s = load(kHead + R"("settings": {"dt": 0.001}, "endTime": 3600})");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error(), HasSubstr("big.json: endTime: 3600 s at settings.dt 0.001 s is 3600000 frames; "
                                   "at most 216000 (kScenarioMaxFrames)"));
  const Result<Scenario> tiny = load(kHead + R"("settings": {"dt": 1e-9}, "endTime": 1})");
  ASSERT_FALSE(tiny);
  EXPECT_THAT(tiny.error(), HasSubstr("(kScenarioMaxFrames)"));
}

TEST(ScenarioBounds, StaticBoxes) {
  const std::string box = R"({"center": [0, 0, 0]})";
  EXPECT_TRUE(load(kHead + R"("world": {"boxes": [)" + repeated(box, kScenarioMaxStaticBoxes) +
                   R"(]}, "endTime": 1})"));
  Result<Scenario> s = load(kHead + R"("world": {"boxes": [)" + repeated(box, kScenarioMaxStaticBoxes + 1) +
                            R"(]}, "endTime": 1})");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error(), HasSubstr("world.boxes: 10001 entries; at most 10000 (kScenarioMaxStaticBoxes)"));
  // Steps count with the boxes and walls: 21 flights of 500 steps pass the bound at the 21st.
  const std::string flight = R"({"count": 500})";
  s = load(kHead + R"("world": {"steps": [)" + repeated(flight, 21) + R"(]}, "endTime": 1})");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error(), HasSubstr("world.steps[20].count: the world's static boxes (boxes, walls and steps "
                                   "together) would number 10500; at most 10000 (kScenarioMaxStaticBoxes)"));
  const std::string wall = R"({"from": [0, 0, 0], "to": [1, 0, 0]})";
  s = load(kHead + R"("world": {"steps": [)" + repeated(flight, 20) + R"(], "walls": [)" + wall +
           R"(]}, "endTime": 1})");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error(), HasSubstr("world.steps[19].count: the world's static boxes (boxes, walls and steps "
                                   "together) would number 10001"));
}

TEST(ScenarioBounds, Props) {
  std::string props;
  for (std::size_t i = 0; i <= kScenarioMaxProps; ++i) {
    if (i) props += ',';
    props += R"({"name": "p)" + std::to_string(i) +
             R"(", "bone": "RightHand", "shape": {"type": "sphere", "radius": 0.05}})";
  }
  const Result<Scenario> s = load(kHead + R"("props": [)" + props + R"(], "endTime": 1})");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error(), HasSubstr("big.json: props: 65 entries; at most 64 (kScenarioMaxProps)"));
}

TEST(ScenarioBounds, NameListsAndMaps) {
  std::string names;
  std::string weights;
  std::string expectations;
  for (std::size_t i = 0; i <= kScenarioMaxNames; ++i) {
    const std::string name = "\"b" + std::to_string(i) + "\"";
    names += (i ? "," : "") + name;
    weights += (i ? "," : "") + name + ": 1";
    expectations += (i ? "," : "") + name + ": 1";
  }
  Result<Scenario> s =
      load(kHead + R"("settings": {"animationOwnedBones": [)" + names + R"(]}, "endTime": 1})");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error(),
              HasSubstr("settings.animationOwnedBones: 1001 entries; at most 1000 (kScenarioMaxNames)"));
  s = load(kHead + R"("events": [{"time": 0, "type": "partial", "bodies": {)" + weights +
           R"(}}], "endTime": 1})");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error(), HasSubstr("events[0].bodies: 1001 entries; at most 1000 (kScenarioMaxNames)"));
  s = load(kHead + R"("events": [{"time": 0, "type": "limb_lag", "slots": [)" + names +
           R"(]}], "endTime": 1})");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error(), HasSubstr("events[0].slots: 1001 entries; at most 1000 (kScenarioMaxNames)"));
  s = load(kHead + R"("endTime": 1, "expectations": {)" + expectations + "}}");
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error(), HasSubstr("expectations: 1001 entries; at most 1000 (kScenarioMaxNames)"));
}

}  // namespace
}  // namespace handoff
