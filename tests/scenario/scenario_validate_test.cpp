// Scenario validation against the character (clips, bone names), file resolution, and the world
// geometry helpers.
#include "handoff/scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>

#include <cmath>
#include <string>

namespace handoff {
namespace {

using ::testing::HasSubstr;

const std::string kData = HANDOFF_DATA_DIR;
const std::string kSource = HANDOFF_SOURCE_DIR;

//   Hips ── Chest ── LeftHand
const char* const kTinyBvh = R"(HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Chest
  {
    OFFSET 0 0.3 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT LeftHand
    {
      OFFSET 0.3 0.2 0
      CHANNELS 3 Zrotation Xrotation Yrotation
      End Site
      {
        OFFSET 0.1 0 0
      }
    }
  }
}
MOTION
Frames: 3
Frame Time: 0.1
0 1 0 0 0 0 0 0 0 0 0 0
0 1 0 0 0 0 10 0 0 0 0 0
0 1 0 0 0 0 20 0 0 0 0 0
)";

const ImportedAsset& tiny() {
  static const ImportedAsset asset = [] {
    ImportOptions options;
    options.unitScale = 1.0;
    Result<ImportedAsset> result = importBvhText(kTinyBvh, "tiny.bvh", options);
    EXPECT_TRUE(result) << (result ? "" : result.error());
    return result ? std::move(result).value() : ImportedAsset{};
  }();
  return asset;
}

Scenario load(const std::string& body) {
  const std::string text = R"({"character": {"file": "tiny.bvh"}, "endTime": 5)" + body + "}";
  Result<Scenario> result = loadScenarioJson(text, "scenario.json");
  EXPECT_TRUE(result) << (result ? "" : result.error());
  return result ? std::move(result).value() : Scenario{};
}

std::string validationError(const Scenario& scenario) {
  Status status = validateScenarioAgainst(scenario, tiny());
  if (status) {
    ADD_FAILURE() << "validated:\n" << saveScenarioJson(scenario);
    return "";
  }
  return status.error();
}

TEST(ScenarioValidate, GoodScenarioPasses) {
  ASSERT_EQ(tiny().clips.size(), 1u);
  const Scenario s = load(R"(, "clip": {"name": "tiny", "startTime": 0.1},
    "events": [{"time": 0.5, "type": "impulse", "body": "LeftHand", "impulse": [1, 0, 0]},
               {"time": 0.6, "type": "impulse", "body": "pelvis", "impulse": [1, 0, 0]},
               {"time": 0.7, "type": "partial", "bodies": {"Chest": 1, "head": 0.5}},
               {"time": 0.8, "type": "clip", "index": 0, "startTime": 3, "wrap": "loop"},
               {"time": 0.9, "type": "clip", "file": "elsewhere.bvh", "name": "not checked here"}])");
  Status status = validateScenarioAgainst(s, tiny());
  EXPECT_TRUE(status) << status.error();
}

TEST(ScenarioValidate, UnknownBoneNamesSuggestTheClosest) {
  EXPECT_THAT(validationError(load(R"(, "events": [{"time": 0.1, "type": "ragdoll"},
      {"time": 0.5, "type": "impulse", "body": "LeftHnd", "impulse": [1, 0, 0]}])")),
              HasSubstr("scenario.json: events[1].body: no bone named 'LeftHnd' (did you mean 'LeftHand'?)"));
  EXPECT_THAT(
      validationError(load(R"(, "events": [{"time": 0.5, "type": "partial", "bodies": {"Chets": 1}}])")),
      HasSubstr("events[0].bodies.Chets: no bone named 'Chets' (did you mean 'Chest'?)"));
  EXPECT_THAT(validationError(load(
                  R"(, "events": [{"time": 0.5, "type": "impulse", "body": "Tail", "impulse": [1, 0, 0]}])")),
              HasSubstr("events[0].body: no bone named 'Tail' (a bone of the character or a slot name"));
}

// Bones left to the animation and the look-at's bone: bones of the skeleton (no slot names),
// never its root.
TEST(ScenarioValidate, OwnedBonesAndLookAtBone) {
  Status good = validateScenarioAgainst(
      load(
          R"(, "settings": {"animationOwnedBones": ["LeftHand"]}, "lookAt": {"bone": "Chest", "target": [0, 1, 2]})"),
      tiny());
  EXPECT_TRUE(good) << good.error();
  EXPECT_THAT(
      validationError(load(R"(, "settings": {"animationOwnedBones": ["Chest", "LeftHnd"]})")),
      HasSubstr("scenario.json: settings.animationOwnedBones[1]: no bone named 'LeftHnd' (did you mean "
                "'LeftHand'?)"));
  EXPECT_THAT(validationError(load(R"(, "settings": {"animationOwnedBones": ["Hips"]})")),
              HasSubstr("settings.animationOwnedBones[0]: 'Hips' is the skeleton's root"));
  EXPECT_THAT(validationError(load(R"(, "lookAt": {"bone": "head", "target": [0, 1, 2]})")),
              HasSubstr("lookAt.bone: no bone named 'head'"));
}

// A prop's hand: a bone of the skeleton (the Character finds the body on it or above it).
TEST(ScenarioValidate, PropBone) {
  const char* prop =
      R"(, "props": [{"name": "sword", "bone": "%s", "shape": {"type": "sphere", "radius": 0.1}}])";
  char text[200];
  std::snprintf(text, sizeof text, prop, "LeftHand");
  Status good = validateScenarioAgainst(load(text), tiny());
  EXPECT_TRUE(good) << good.error();
  std::snprintf(text, sizeof text, prop, "LeftHnd");
  EXPECT_THAT(validationError(load(text)),
              HasSubstr("scenario.json: props[0].bone: no bone named 'LeftHnd' (did you mean 'LeftHand'?)"));
}

TEST(ScenarioValidate, UnknownClip) {
  EXPECT_THAT(
      validationError(load(R"(, "clip": {"name": "tny"})")),
      HasSubstr("scenario.json: clip.name: no clip named 'tny' in the character file 'tiny.bvh' (did you "
                "mean 'tiny'?); clips: tiny"));
  EXPECT_THAT(validationError(load(R"(, "clip": {"index": 3})")),
              HasSubstr("clip.index: 3 is out of range: the character file 'tiny.bvh' has 1 clip(s)"));
  EXPECT_THAT(validationError(load(R"(, "events": [{"time": 1, "type": "clip", "name": "run"}])")),
              HasSubstr("events[0].name: no clip named 'run'"));
  EXPECT_THAT(validationError(load(R"(, "recovery": {"prone": {"name": "getup"}})")),
              HasSubstr("recovery.prone.name: no clip named 'getup'"));
}

TEST(ScenarioValidate, StartTimePastTheEndOfAClampedClip) {
  EXPECT_THAT(validationError(load(R"(, "clip": {"startTime": 5})")),
              HasSubstr("clip.startTime: 5 s is past the end of clip 'tiny' (0.2 s)"));
  Status looped = validateScenarioAgainst(load(R"(, "clip": {"startTime": 5, "wrap": "loop"})"), tiny());
  EXPECT_TRUE(looped) << looped.error();
}

TEST(ScenarioValidate, ReportsEveryProblem) {
  const std::string error = validationError(load(R"(, "clip": {"name": "x"},
      "events": [{"time": 0.5, "type": "impulse", "body": "LeftHnd", "impulse": [1, 0, 0]}])"));
  EXPECT_THAT(error, HasSubstr("clip.name"));
  EXPECT_THAT(error, HasSubstr("events[0].body"));
}

TEST(ScenarioFiles, ResolvesRelativeToTheScenarioThenTheDataDirs) {
  Result<Scenario> s = loadScenarioJson(
      R"({"character": {"file": "deepmimic/humanoid3d_run.bvh"}, "endTime": 1})", "mem.json");
  ASSERT_TRUE(s) << s.error();
  Result<std::string> missing = resolveScenarioFile(*s, s->character.file);
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error(), HasSubstr("mem.json: 'deepmimic/humanoid3d_run.bvh' not found (looked in .)"));
  const std::string dirs[] = {"/nonexistent", kData};
  Result<std::string> found = resolveScenarioFile(*s, s->character.file, dirs);
  ASSERT_TRUE(found) << found.error();
  EXPECT_THAT(*found, HasSubstr("humanoid3d_run.bvh"));
  Status status = validateScenarioFiles(*s, dirs);
  EXPECT_TRUE(status) << status.error();
}

TEST(ScenarioFiles, MissingCharacterFile) {
  Result<Scenario> s =
      loadScenarioJson(R"({"character": {"file": "nope.bvh"}, "endTime": 1})", "/tmp/x/s.json");
  ASSERT_TRUE(s) << s.error();
  Status status = validateScenarioFiles(*s);
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error(),
              HasSubstr("/tmp/x/s.json: character.file: 'nope.bvh' not found (looked in /tmp/x)"));
}

TEST(ScenarioFiles, SeparateClipFileMustCarryTheCharactersSkeleton) {
  Result<Scenario> s = loadScenarioJson(R"({"character": {"file": "../data/deepmimic/humanoid3d_run.bvh"},
      "events": [{"time": 0.5, "type": "clip", "file": "../data/cmu/Boxing_Toes.bvh"},
                 {"time": 0.6, "type": "clip", "file": "../data/deepmimic/humanoid3d_jump.bvh", "name": "jmp"}],
      "endTime": 1})",
                                        kSource + "/scenarios/mem.json");
  ASSERT_TRUE(s) << s.error();
  Status status = validateScenarioFiles(*s);
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error(),
              HasSubstr("events[0].file: '../data/cmu/Boxing_Toes.bvh' has another skeleton than the "
                        "character (joint 0 is 'Hips', the character's 'root')"));
  EXPECT_THAT(status.error(),
              HasSubstr("events[1].name: no clip named 'jmp' in '../data/deepmimic/humanoid3d_jump.bvh'; "
                        "clips: humanoid3d_jump"));
}

TEST(ScenarioFiles, RagdollAssetAndMapFilesMustExist) {
  Result<Scenario> s = loadScenarioJson(R"({"character": {"file": "../data/deepmimic/humanoid3d_run.bvh",
      "map": "no_map.json"}, "ragdoll": {"asset": "no_asset.json"}, "endTime": 1})",
                                        kSource + "/scenarios/mem.json");
  ASSERT_TRUE(s) << s.error();
  Status status = validateScenarioFiles(*s);
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error(), HasSubstr("character.map: 'no_map.json' not found"));
  EXPECT_THAT(status.error(), HasSubstr("ragdoll.asset: 'no_asset.json' not found"));
}

// ---- Geometry ----

void expectNear(const Vec3& a, const Vec3& b) {
  EXPECT_NEAR(a.x, b.x, 1e-12);
  EXPECT_NEAR(a.y, b.y, 1e-12);
  EXPECT_NEAR(a.z, b.z, 1e-12);
}

TEST(ScenarioGeometry, YawTurnsXTowardMinusZ) {
  expectNear(yawRotation(kPi / 2) * Vec3(1, 0, 0), Vec3(0, 0, -1));
  ScenarioRoot root{Vec3{1, 2, 3}, kPi};
  expectNear(root.worldFromRoot().transformPoint(Vec3(1, 0, 0)), Vec3(0, 2, 3));
}

TEST(ScenarioGeometry, WallIsABoxStandingOnItsSegment) {
  //   from (0,0,4) ──────────── to (0,0,0)      (a wall along -Z, 3 m high, 0.2 m thick)
  ScenarioWall wall;
  wall.from = Vec3{0, 0, 4};
  wall.to = Vec3{0, 0, 0};
  wall.height = 3.0;
  wall.thickness = 0.2;
  const ScenarioBox box = wallBox(wall);
  expectNear(box.center, Vec3(0, 1.5, 2));
  expectNear(box.halfExtents, Vec3(2, 1.5, 0.1));
  // The box's local +X runs from `from` to `to`.
  expectNear(box.worldFromBox().transformPoint(Vec3(2, -1.5, 0)), wall.to);
  expectNear(box.worldFromBox().transformPoint(Vec3(-2, -1.5, 0)), wall.from);
}

TEST(ScenarioGeometry, StepsRiseAlongTheirDirection) {
  //            ┌──┐
  //         ┌──┘  │  rise 0.2, run 0.5, rising toward -Z from origin (1, 0, 0)
  //      ┌──┘     │
  //  ────┴────────┴──
  ScenarioSteps steps;
  steps.count = 3;
  steps.rise = 0.2;
  steps.run = 0.5;
  steps.width = 2.0;
  steps.origin = Vec3{1, 0, 0};
  steps.direction = Vec3{0, 0, -3};  // normalised on use
  const std::vector<ScenarioBox> boxes = stepBoxes(steps);
  ASSERT_EQ(boxes.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const ScenarioBox& box = boxes[static_cast<size_t>(i)];
    const double top = 0.2 * (i + 1);
    expectNear(box.center, Vec3(1, top / 2, -0.5 * (i + 0.5)));
    expectNear(box.halfExtents, Vec3(0.25, top / 2, 1.0));
    // Near bottom corner of step i along the direction, in world.
    expectNear(box.worldFromBox().transformPoint(Vec3(-0.25, -top / 2, 0)), Vec3(1, 0, -0.5 * i));
  }
  ScenarioWorld world;
  world.boxes.push_back(ScenarioBox{});
  world.walls.push_back(ScenarioWall{});
  world.steps.push_back(steps);
  EXPECT_EQ(staticBoxes(world).size(), 5u);
}

TEST(ScenarioNames, RegionsAndEventTypes) {
  for (int i = 0; i < static_cast<int>(BodyRegion::Count); ++i) {
    const auto region = static_cast<BodyRegion>(i);
    EXPECT_EQ(bodyRegionFromName(bodyRegionName(region)), region);
  }
  EXPECT_TRUE(regionContains(BodyRegion::UpperBody, Slot::Chest));
  EXPECT_TRUE(regionContains(BodyRegion::UpperBody, Slot::HandR));
  EXPECT_FALSE(regionContains(BodyRegion::UpperBody, Slot::Pelvis));
  EXPECT_TRUE(regionContains(BodyRegion::LowerBody, Slot::Pelvis));
  EXPECT_TRUE(regionContains(BodyRegion::LeftLeg, Slot::FootL));
  EXPECT_FALSE(regionContains(BodyRegion::LeftLeg, Slot::FootR));
  for (int s = 0; s < kSlotCount; ++s)
    EXPECT_TRUE(regionContains(BodyRegion::FullBody, static_cast<Slot>(s)));
  for (int i = 0; i <= static_cast<int>(EventType::End); ++i) {
    const auto type = static_cast<EventType>(i);
    EXPECT_EQ(eventTypeFromName(eventTypeName(type)), type);
  }
}

}  // namespace
}  // namespace handoff
