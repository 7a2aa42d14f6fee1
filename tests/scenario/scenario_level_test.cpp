// The scenario field world.level (issue 26): a level from a glTF / GLB file, placed by position
// and rotation, loads, round-trips, and every malformed value is refused naming the field.
#include "handoff/scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <string>

namespace handoff {
namespace {

using ::testing::HasSubstr;

std::string levelScenario(const std::string& world) {
  return R"({"character": {"file": "c.bvh"}, "endTime": 5, "world": )" + world + "}";
}

std::string levelErrorOf(const std::string& text) {
  Result<Scenario> result = loadScenarioJson(text, "dir/stairs.json");
  if (result) {
    ADD_FAILURE() << "accepted:\n" << text;
    return "";
  }
  return result.error();
}

TEST(ScenarioLevel, LoadsAndRoundTrips) {
  const std::string text =
      levelScenario(R"({"ground": {"enabled": false}, "level": {"file": "../data/levels/stairs.gltf",
      "position": [1, -0.5, 2], "rotation": [0.7071067811865476, 0, 0.7071067811865476, 0], "friction": 0.6,
      "unitScale": 0.01}})");
  Result<Scenario> s = loadScenarioJson(text, "dir/stairs.json");
  ASSERT_TRUE(s) << s.error();
  ASSERT_TRUE(s->world.level);
  const ScenarioLevel& level = *s->world.level;
  EXPECT_EQ(level.file, "../data/levels/stairs.gltf");
  EXPECT_EQ(level.position, (Vec3{1.0, -0.5, 2.0}));
  EXPECT_EQ(level.friction, 0.6);
  EXPECT_EQ(level.unitScale, 0.01);
  EXPECT_FALSE(s->world.ground.enabled);
  // worldFromLevel: a quarter turn about +Y takes the level's +X to world -Z, then translates.
  const Vec3 p = level.worldFromLevel().transformPoint(Vec3{1.0, 0.0, 0.0});
  EXPECT_NEAR(p.x, 1.0, 1e-12);
  EXPECT_NEAR(p.y, -0.5, 1e-12);
  EXPECT_NEAR(p.z, 1.0, 1e-12);

  const std::string saved = saveScenarioJson(*s);
  EXPECT_THAT(saved, HasSubstr("\"level\""));
  Result<Scenario> back = loadScenarioJson(saved, "dir/stairs.json");
  ASSERT_TRUE(back) << back.error() << "\n" << saved;
  EXPECT_TRUE(*back == *s) << saved;
  EXPECT_EQ(saveScenarioJson(*back), saved);
}

TEST(ScenarioLevel, DefaultsAndAbsence) {
  Result<Scenario> none = loadScenarioJson(levelScenario("{}"), "s.json");
  ASSERT_TRUE(none) << none.error();
  EXPECT_FALSE(none->world.level);
  EXPECT_THAT(saveScenarioJson(*none), ::testing::Not(HasSubstr("\"level\"")));

  Result<Scenario> s = loadScenarioJson(levelScenario(R"({"level": {"file": "l.glb"}})"), "s.json");
  ASSERT_TRUE(s) << s.error();
  ASSERT_TRUE(s->world.level);
  EXPECT_EQ(*s->world.level, ScenarioLevel{"l.glb"});
  EXPECT_EQ(s->world.level->position, Vec3{0.0});
  EXPECT_EQ(s->world.level->rotation, (Quat{1.0, 0.0, 0.0, 0.0}));
  EXPECT_EQ(s->world.level->friction, 0.8);
  EXPECT_EQ(s->world.level->unitScale, 1.0);
  EXPECT_TRUE(s->world.ground.enabled);
}

TEST(ScenarioLevel, ErrorsNameTheField) {
  EXPECT_THAT(levelErrorOf(levelScenario(R"({"level": {}})")),
              HasSubstr("dir/stairs.json: world.level.file: missing (required: a .gltf or .glb file)"));
  EXPECT_THAT(levelErrorOf(levelScenario(R"({"level": {"file": ""}})")),
              HasSubstr("world.level.file: must not be empty"));
  EXPECT_THAT(levelErrorOf(levelScenario(R"({"level": "stairs.gltf"})")),
              HasSubstr("world.level: expected an object, got string 'stairs.gltf'"));
  EXPECT_THAT(levelErrorOf(levelScenario(R"({"level": {"file": "l.glb", "yaw": 1}})")),
              HasSubstr("world.level: unknown field 'yaw' of a level"));
  EXPECT_THAT(levelErrorOf(levelScenario(R"({"level": {"file": "l.glb", "rotation": [1, 0, 0, 0.5]}})")),
              HasSubstr("world.level.rotation: must be a unit quaternion"));
  EXPECT_THAT(levelErrorOf(levelScenario(R"({"level": {"file": "l.glb", "rotation": [1, 0, 0]}})")),
              HasSubstr("world.level.rotation: expected a quaternion [w, x, y, z]"));
  EXPECT_THAT(levelErrorOf(levelScenario(R"({"level": {"file": "l.glb", "position": [0, 1e5, 0]}})")),
              HasSubstr("world.level.position[1]: must be <= 10000, got 100000"));
  EXPECT_THAT(levelErrorOf(levelScenario(R"({"level": {"file": "l.glb", "friction": -1}})")),
              HasSubstr("world.level.friction: must be >= 0, got -1"));
  EXPECT_THAT(levelErrorOf(levelScenario(R"({"level": {"file": "l.glb", "unitScale": 0}})")),
              HasSubstr("world.level.unitScale: must be > 0, got 0"));
}

TEST(ScenarioLevel, ValidateNamesAMissingLevelFile) {
  Result<Scenario> s = loadScenarioJson(
      R"({"character": {"file": "deepmimic/humanoid3d_run.bvh"}, "endTime": 1,
          "world": {"level": {"file": "levels/no_such_level.gltf"}}})",
      "scenario.json");
  ASSERT_TRUE(s) << s.error();
  const std::string dataDir = HANDOFF_DATA_DIR;
  const Status st = validateScenarioFiles(*s, std::span<const std::string>(&dataDir, 1));
  ASSERT_FALSE(st);
  EXPECT_THAT(st.error(), HasSubstr("world.level.file"));
  EXPECT_THAT(st.error(), HasSubstr("no_such_level.gltf"));
}

}  // namespace
}  // namespace handoff
