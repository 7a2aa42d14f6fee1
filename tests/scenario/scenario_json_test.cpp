// Scenario JSON: a complete file round-trips, and every malformed input is rejected with a
// message naming the file and the JSON path (or line:column) of the problem.
#include "handoff/scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace handoff {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Every section and every event type, with non-default values.
const char* const kComplete = R"({
  "version": 1,
  "name": "complete",
  "description": "every field",
  "character": { "file": "chars/hero.bvh", "unitScale": 0.01, "map": "hero_map.json" },
  "ragdoll": { "totalMass": 82.5, "build": { "hands": false, "feet": true, "stabilize": false,
               "limbRadiusRatio": 0.15, "headRadiusScale": 1.1, "clearance": 0.01,
               "joints": { "groups": { "elbow": { "stiffness": 80 } }, "LeftKnee": { "damping": 3 } } } },
  "clip": { "file": "clips/run.bvh", "name": "run", "startTime": 0.25, "wrap": "loop", "speed": 0.5 },
  "root": { "position": [1, 0, -2], "yaw": 0.5 },
  "world": {
    "gravity": [0, -9.8, 0],
    "ground": { "enabled": true, "height": -0.1, "friction": 0.7 },
    "boxes": [ { "center": [3, 0.5, 0], "halfExtents": [0.5, 0.5, 2], "yaw": 0.3, "friction": 1.2 } ],
    "walls": [ { "from": [0, 0, 4], "to": [5, 0, 4], "height": 3, "thickness": 0.25, "friction": 0.6 } ],
    "steps": [ { "count": 4, "rise": 0.2, "run": 0.35, "width": 1.5, "origin": [0, 0, -3],
                 "direction": [0, 0, -1], "friction": 0.9 } ]
  },
  "settings": { "dt": 0.008333333333333333, "substeps": 4, "solverIterations": 14, "handoffMode": "naive_zero_velocity",
                "displayBlendTime": 0.2, "maxLinearSpeed": 30, "maxAngularSpeed": 40, "driveMode": "explicit", "limitLookAhead": 0.05, "jointConsistency": false, "maxDepenetrationSpeed": 0.02, "animationOwnedBones": ["Head", "RightHand"], "capsuleOnlyWhileAnimated": true },
  "recovery": { "supine": { "file": "getup_up.bvh", "index": 0 }, "prone": { "name": "getup_down", "wrap": "clamp" },
                "transitionTime": 0.3, "settleWindow": 0.75, "gatherTime": 0, "completeGetUps": false }, "lookAt": { "bone": "Head", "target": [1, 1.6, 3] },
  "events": [
    { "time": 0, "type": "getup_allowed", "allowed": false },
    { "time": 0.1, "type": "clip", "index": 2, "startTime": 0.1, "wrap": "clamp", "speed": 0 },
    { "time": 0.2, "type": "powered", "weight": 0.8, "rampTime": 0.15, "label": "powered" },
    { "time": 0.3, "type": "impulse", "body": "Chest", "impulse": [0, 0, -150], "impulseSpace": "root",
      "point": [0, 0.1, 0.05], "pointSpace": "body" },
    { "time": 0.3, "type": "impulse", "body": "head", "impulse": [10, 0, 0] },
    { "time": 0.4, "type": "partial", "bodies": { "LeftElbow": 1 }, "regions": { "upper_body": 0.6, "left_leg": 0.2 },
      "rampTime": 0.05 },
    { "time": 0.5, "type": "teleport", "position": [10, 0, 5], "yaw": 1.5 },
    { "time": 0.6, "type": "wall", "center": [2, 1, 2], "halfExtents": [0.1, 1, 1], "yaw": -0.4, "friction": 0.5 },
    { "time": 0.7, "type": "ragdoll" },
    { "time": 1.5, "type": "animate", "blendTime": 0.4 },
    { "time": 2.0, "type": "getup_allowed" },
    { "time": 3.0, "type": "end", "label": "done" }
  ],
  "endTime": 3.0,
  "expectations": { "max_pop_mm": 1.0, "settle_within_s": 4 }
})";

std::string errorOf(const std::string& text, const std::string& source = "scenario.json") {
  Result<Scenario> result = loadScenarioJson(text, source);
  if (result) {
    ADD_FAILURE() << "accepted:\n" << text;
    return "";
  }
  return result.error();
}

// A valid minimal scenario with `events` and extra top-level text spliced in.
std::string withEvents(const std::string& events, const std::string& extra = "") {
  return R"({ "character": { "file": "c.bvh" }, "endTime": 5, "events": [)" + events + "]" + extra + "}";
}

TEST(ScenarioJson, CompleteFileLoads) {
  Result<Scenario> loaded = loadScenarioJson(kComplete, "dir/complete.json");
  ASSERT_TRUE(loaded) << loaded.error();
  const Scenario& s = *loaded;
  EXPECT_EQ(s.name, "complete");
  EXPECT_EQ(s.baseDir, "dir");
  EXPECT_EQ(s.character.unitScale, 0.01);
  EXPECT_EQ(s.ragdoll.totalMass, 82.5);
  EXPECT_FALSE(s.ragdoll.build.hands);
  EXPECT_THAT(s.ragdoll.build.jointOverridesJson, HasSubstr("\"elbow\""));
  EXPECT_EQ(s.clip.name, "run");
  EXPECT_EQ(s.clip.wrap, WrapMode::Loop);
  EXPECT_EQ(s.clip.speed, 0.5);
  EXPECT_EQ(std::get<ScenarioEvent::Clip>(s.events[1].payload).clip.speed, 0.0);  // a held pose
  EXPECT_EQ(s.recovery.supine->speed, 1.0);  // get-up clips play at their own rate
  EXPECT_EQ(s.settings.substeps, 4);
  EXPECT_EQ(s.settings.solverIterations, 14);
  EXPECT_EQ(s.settings.handoff.mode, HandoffMode::ZeroVelocity);
  EXPECT_EQ(s.settings.driveSolver, DriveSolver::Explicit);
  EXPECT_EQ(s.settings.handoff.limitLookAhead, 0.05);
  EXPECT_FALSE(s.settings.handoff.jointConsistency);
  EXPECT_TRUE(s.settings.handoff.staticContacts);
  EXPECT_EQ(s.settings.handoff.maxDepenetrationSpeed, 0.02);
  EXPECT_TRUE(s.settings.capsuleOnlyWhileAnimated);
  ASSERT_TRUE(s.recovery.supine.has_value());
  EXPECT_EQ(s.recovery.supine->file, "getup_up.bvh");
  EXPECT_FALSE(s.recovery.completeGetUps);
  EXPECT_EQ(s.recovery.gather.duration, 0.0);  // no gather
  ASSERT_EQ(s.events.size(), 12u);
  EXPECT_EQ(s.events[0].type(), EventType::GetUpAllowed);
  const auto& impulse = std::get<ScenarioEvent::Impulse>(s.events[3].payload);
  EXPECT_EQ(impulse.body, "Chest");
  EXPECT_EQ(impulse.impulse, Vec3(0, 0, -150));
  EXPECT_EQ(impulse.impulseSpace, ImpulseSpace::Root);
  ASSERT_TRUE(impulse.point.has_value());
  const auto& defaults = std::get<ScenarioEvent::Impulse>(s.events[4].payload);
  EXPECT_FALSE(defaults.point.has_value());
  EXPECT_EQ(defaults.impulseSpace, ImpulseSpace::World);
  const auto& partial = std::get<ScenarioEvent::Partial>(s.events[5].payload);
  EXPECT_EQ(partial.regions.at(BodyRegion::UpperBody), 0.6);
  EXPECT_EQ(partial.bodies.at("LeftElbow"), 1.0);
  EXPECT_TRUE(std::get<ScenarioEvent::GetUpAllowed>(s.events[10].payload).allowed);
  EXPECT_EQ(s.events[11].label, "done");
  EXPECT_EQ(s.endTime, 3.0);
  EXPECT_EQ(s.expectations.at("max_pop_mm"), 1.0);
  EXPECT_EQ(s.settings.animationOwnedBones, (std::vector<std::string>{"Head", "RightHand"}));
  ASSERT_TRUE(s.lookAt);
  EXPECT_EQ(s.lookAt->bone, "Head");
  EXPECT_EQ(s.lookAt->target, (Vec3{1.0, 1.6, 3.0}));
}

TEST(ScenarioJson, RoundTripIsLosslessAndStable) {
  Result<Scenario> first = loadScenarioJson(kComplete, "dir/complete.json");
  ASSERT_TRUE(first) << first.error();
  const std::string saved = saveScenarioJson(*first);
  Result<Scenario> second = loadScenarioJson(saved, "dir/complete.json");
  ASSERT_TRUE(second) << second.error() << "\n" << saved;
  EXPECT_TRUE(*first == *second) << saved;
  EXPECT_EQ(saveScenarioJson(*second), saved);
}

TEST(ScenarioJson, RoundTripOfAwkwardDoubles) {
  Result<Scenario> loaded = loadScenarioJson(withEvents(R"({"time": 0.1, "type": "ragdoll"})"), "s.json");
  ASSERT_TRUE(loaded) << loaded.error();
  Scenario s = *loaded;
  s.settings.dt = 1.0 / 60.0;
  s.root.yaw = std::nextafter(3.0, 4.0);
  s.root.position = Vec3{1e-300, -0.0, 1234.123456789123};
  s.events[0].time = 0.1 + 0.2;
  Result<Scenario> back = loadScenarioJson(saveScenarioJson(s), "s.json");
  ASSERT_TRUE(back) << back.error();
  EXPECT_TRUE(s == *back);
}

TEST(ScenarioJson, DefaultsOfAMinimalFile) {
  Result<Scenario> loaded =
      loadScenarioJson(R"({"character": {"file": "a.bvh"}, "endTime": 1})", "x/min.json");
  ASSERT_TRUE(loaded) << loaded.error();
  const Scenario& s = *loaded;
  EXPECT_EQ(s.name, "min");  // the file stem
  EXPECT_EQ(s.character.unitScale, 0.0);
  EXPECT_EQ(s.ragdoll.totalMass, 70.0);
  EXPECT_EQ(s.clip.index, 0);
  EXPECT_EQ(s.clip.wrap, WrapMode::Clamp);
  EXPECT_EQ(s.clip.speed, 1.0);
  EXPECT_EQ(s.settings.dt, 1.0 / 60.0);
  EXPECT_EQ(s.settings.substeps, 2);
  EXPECT_EQ(s.settings.solverIterations, WorldSettings{}.solverIterations);
  // The loader's defaults are the library's: a scenario that names nothing runs what a user of
  // Character with default CharacterSettings gets.
  const CharacterSettings library;
  EXPECT_TRUE(s.settings.handoff == library.handoff);
  EXPECT_EQ(s.settings.handoff.mode, HandoffMode::Inherit);
  EXPECT_EQ(s.settings.handoff.limitLookAhead, HandoffSettings::kDerived);
  EXPECT_TRUE(s.settings.handoff.jointConsistency);
  EXPECT_TRUE(s.settings.handoff.staticContacts);
  EXPECT_EQ(s.settings.driveSolver, PoweredSettings{}.solver);
  EXPECT_EQ(s.settings.driveSolver, library.hitReaction.solver);
  EXPECT_TRUE(s.recovery.transition == library.transition);
  EXPECT_TRUE(s.recovery.settle == library.settle);
  EXPECT_TRUE(s.recovery.gather == library.gather);
  // Saved again it names no handoff or recovery tuning.
  const std::string saved = saveScenarioJson(s);
  for (const char* key : {"limitLookAhead", "jointConsistency", "staticContacts", "maxDepenetrationSpeed",
                          "maxLinearSpeed", "displayBlendTime", "driveMode", "transitionTime", "settleWindow",
                          "gatherTime", "stepTime", "capsuleOnlyWhileAnimated"}) {
    EXPECT_EQ(saved.find(key), std::string::npos) << key << " in\n" << saved;
  }
  EXPECT_TRUE(s.world.ground.enabled);
  EXPECT_EQ(s.world.gravity, Vec3(0, -9.81, 0));
  EXPECT_TRUE(s.events.empty());
}

TEST(ScenarioJson, EndEventGivesTheEndTime) {
  Result<Scenario> loaded = loadScenarioJson(
      R"({"character": {"file": "a.bvh"}, "events": [{"time": 0.5, "type": "ragdoll"}, {"time": 2, "type": "end"}]})",
      "s.json");
  ASSERT_TRUE(loaded) << loaded.error();
  EXPECT_EQ(loaded->endTime, 2.0);
}

TEST(ScenarioJson, EqualEventTimesKeepFileOrder) {
  Result<Scenario> loaded = loadScenarioJson(
      withEvents(
          R"({"time": 0.5, "type": "teleport", "position": [1, 0, 0]}, {"time": 0.5, "type": "ragdoll"})"),
      "s.json");
  ASSERT_TRUE(loaded) << loaded.error();
  EXPECT_EQ(loaded->events[0].type(), EventType::Teleport);
  EXPECT_EQ(loaded->events[1].type(), EventType::Ragdoll);
}

// ---- Malformed files: each names the file and the field. ----

TEST(ScenarioJsonErrors, WrongTypes) {
  EXPECT_THAT(errorOf(withEvents(R"({"time": 0, "type": "ragdoll"}, {"time": 1, "type": "ragdoll"},
                                  {"time": "2", "type": "ragdoll"})")),
              HasSubstr("scenario.json: events[2].time: expected a number, got string"));
  EXPECT_THAT(errorOf(R"({"character": {"file": 3}, "endTime": 1})"),
              HasSubstr("scenario.json: character.file: expected a string, got number 3"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 0, "type": "getup_allowed", "allowed": "yes"})")),
              HasSubstr("events[0].allowed: expected true or false, got string 'yes'"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "settings": {"substeps": 2.5})")),
              HasSubstr("settings.substeps: expected an integer, got number 2.5"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "world": {"boxes": [{"center": [1, 2]}]})")),
              HasSubstr("world.boxes[0].center: expected an array of 3 numbers, got an array of 2"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "root": {"position": [0, null, 0]})")),
              HasSubstr("root.position[1]: expected a number, got null"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 0, "type": 7})")),
              HasSubstr("events[0].type: expected a string, got number 7"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "expectations": {"max_pop_mm": "1"})")),
              HasSubstr("expectations.max_pop_mm: expected a number, got string"));
}

// settings.animationOwnedBones and lookAt: names and the gaze target, errors at their paths.
TEST(ScenarioJson, LimbLagEventLoadsAndRoundTrips) {
  Result<Scenario> s = loadScenarioJson(
      withEvents(
          R"({"time": 0.5, "type": "limb_lag"}, {"time": 1, "type": "limb_lag", "slots": ["hand_l", "hand_r"],
                     "weight": 0.5, "rampTime": 0.3})"),
      "lag.json");
  ASSERT_TRUE(s) << s.error();
  const auto& plain = std::get<ScenarioEvent::LimbLag>(s->events[0].payload);
  EXPECT_TRUE(plain.slots.empty());  // LimbLagSettings' slots
  EXPECT_EQ(plain.weight, 1.0);
  EXPECT_EQ(plain.rampTime, 0.2);
  const auto& hands = std::get<ScenarioEvent::LimbLag>(s->events[1].payload);
  EXPECT_EQ(hands.slots, (std::vector<Slot>{Slot::HandL, Slot::HandR}));
  EXPECT_EQ(hands.weight, 0.5);
  EXPECT_EQ(hands.rampTime, 0.3);
  Result<Scenario> back = loadScenarioJson(saveScenarioJson(*s), "back.json");
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back->events, s->events);
}

TEST(ScenarioJsonErrors, LimbLag) {
  EXPECT_THAT(errorOf(withEvents(R"({"time": 0, "type": "limb_lag", "slots": ["hand_k"]})")),
              HasSubstr("events[0].slots[0]: unknown slot 'hand_k' (did you mean 'hand_l'?)"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 0, "type": "limb_lag", "slots": ["hand_l", "hand_l"]})")),
              HasSubstr("events[0].slots[1]: 'hand_l' is already listed at events[0].slots[0]"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 0, "type": "limb_lag", "slots": []})")),
              HasSubstr("events[0].slots: must list at least one slot"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 0, "type": "limb_lag", "weight": 0})")),
              HasSubstr("events[0].weight"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 0, "type": "limb_lag", "wieght": 1})")),
              HasSubstr("events[0]: unknown field 'wieght' for a 'limb_lag' event (did you mean 'weight'?)"));
}

TEST(ScenarioJsonErrors, OwnedBonesAndLookAt) {
  EXPECT_THAT(errorOf(withEvents("", R"(, "settings": {"animationOwnedBones": "Head"})")),
              HasSubstr("scenario.json: settings.animationOwnedBones: expected an array, got string 'Head'"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "settings": {"animationOwnedBones": ["Head", 3]})")),
              HasSubstr("settings.animationOwnedBones[1]: expected a bone name, got number 3"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "settings": {"animationOwnedBones": [""]})")),
              HasSubstr("settings.animationOwnedBones[0]: must not be empty"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "settings": {"animationOwnedBones": ["Head", "Neck", "Head"]})")),
              HasSubstr("settings.animationOwnedBones[2]: 'Head' is already listed at "
                        "settings.animationOwnedBones[0]"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "lookAt": {"target": [0, 1, 2]})")),
              HasSubstr("scenario.json: lookAt.bone: missing (required)"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "lookAt": {"bone": "Head"})")),
              HasSubstr("lookAt.target: missing (required)"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "lookAt": {"bone": "Head", "target": [0, 1]})")),
              HasSubstr("lookAt.target: expected an array of 3 numbers, got an array of 2"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "lookAt": {"bone": "Head", "target": [0, 1e9, 0]})")),
              HasSubstr("lookAt.target[1]: must be <= 10000"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "lookAt": {"bone": "Head", "target": [0, 1, 0], "speed": 1})")),
              HasSubstr("lookAt: unknown field 'speed'"));
  // Absent: none, and nothing saved.
  Result<Scenario> plain = loadScenarioJson(withEvents(""), "scenario.json");
  ASSERT_TRUE(plain) << plain.error();
  EXPECT_FALSE(plain->lookAt);
  EXPECT_TRUE(plain->settings.animationOwnedBones.empty());
  const std::string saved = saveScenarioJson(*plain);
  EXPECT_EQ(saved.find("lookAt"), std::string::npos);
  EXPECT_EQ(saved.find("animationOwnedBones"), std::string::npos);
}

// Props (issue 19): the hand, shape, mass and grip frames; grab / drop events naming a prop.
TEST(ScenarioJson, PropsLoadRoundTripAndNameTheirErrors) {
  const std::string sword = R"(, "props": [{"name": "sword", "bone": "RightHand",
      "shape": {"type": "capsule", "radius": 0.02, "halfHeight": 0.35}, "mass": 1.5,
      "handFromGrip": {"translation": [-0.07, 0, 0]},
      "propFromGrip": {"rotation": [0.7071067811865476, 0.7071067811865475, 0, 0], "translation": [0, -0.25, 0]},
      "friction": 0.5, "restitution": 0.1}], "settings": {"dropPropsAtDeath": false})";
  Result<Scenario> s = loadScenarioJson(
      withEvents(
          R"({"time": 1, "type": "drop", "prop": "sword"}, {"time": 2, "type": "grab", "prop": "sword"})",
          sword),
      "scenario.json");
  ASSERT_TRUE(s) << s.error();
  ASSERT_EQ(s->props.size(), 1u);
  const ScenarioProp& p = s->props[0];
  EXPECT_EQ(p.bone, "RightHand");
  EXPECT_EQ(p.shape.type, ShapeType::Capsule);
  EXPECT_EQ(p.shape.halfHeight, 0.35);
  EXPECT_EQ(p.mass, 1.5);
  EXPECT_EQ(p.handFromGrip.translation, (Vec3{-0.07, 0.0, 0.0}));
  EXPECT_EQ(p.propFromGrip.rotation.x, 0.7071067811865475);
  EXPECT_EQ(p.restitution, 0.1);
  EXPECT_FALSE(s->settings.dropPropsAtDeath);
  EXPECT_EQ(s->events[0].type(), EventType::Drop);
  EXPECT_EQ(std::get<ScenarioEvent::Grab>(s->events[1].payload).prop, "sword");
  const PropDesc d = propDesc(p);
  EXPECT_EQ(d.handBone, "RightHand");
  EXPECT_EQ(d.mass, 1.5);
  const std::string saved = saveScenarioJson(*s);
  Result<Scenario> back = loadScenarioJson(saved, "scenario.json");
  ASSERT_TRUE(back) << back.error() << "\n" << saved;
  EXPECT_TRUE(*s == *back) << saved;
  Scenario moved = *back;
  moved.props[0].propFromGrip.translation.y = -0.2;
  EXPECT_FALSE(*s == moved);

  // Unknown fields name the object holding them, with a suggestion.
  EXPECT_THAT(
      errorOf(withEvents(
          "",
          R"(, "props": [{"name": "a", "bone": "H", "shape": {"type": "sphere", "radius": 0.1}, "mas": 1}])")),
      HasSubstr("scenario.json: props[0]: unknown field 'mas' of a prop (did you mean 'mass'?)"));
  EXPECT_THAT(
      errorOf(withEvents(
          "",
          R"(, "props": [{"name": "a", "bone": "H", "shape": {"type": "capsule", "radius": 0.1, "halfHieght": 1}}])")),
      HasSubstr("props[0].shape: unknown field 'halfHieght' of a capsule (did you mean 'halfHeight'?)"));
  EXPECT_THAT(
      errorOf(withEvents("", R"(, "props": [{"name": "a", "bone": "H", "shape": {"type": "cube"}}])")),
      HasSubstr("props[0].shape.type: unknown value 'cube'"));
  EXPECT_THAT(
      errorOf(withEvents(
          "",
          R"(, "props": [{"name": "a", "bone": "H", "shape": {"type": "sphere", "radius": 0.1}, "handFromGrip": {"translaton": [0, 0, 0]}}])")),
      HasSubstr(
          "props[0].handFromGrip: unknown field 'translaton' of a frame (did you mean 'translation'?)"));
  EXPECT_THAT(
      errorOf(withEvents(
          "",
          R"(, "props": [{"name": "a", "bone": "H", "shape": {"type": "sphere", "radius": 0.1}, "propFromGrip": {"rotation": [1, 1, 0, 0]}}])")),
      HasSubstr("props[0].propFromGrip.rotation: must be a unit quaternion"));
  EXPECT_THAT(
      errorOf(withEvents("", R"(, "props": [{"name": "a", "shape": {"type": "sphere", "radius": 0.1}}])")),
      HasSubstr("props[0].bone: missing (required)"));
  EXPECT_THAT(
      errorOf(withEvents(
          "",
          R"(, "props": [{"name": "a", "bone": "H", "shape": {"type": "box", "halfExtents": [0.1, 0, 0.1]}}])")),
      HasSubstr("props[0].shape.halfExtents[1]: must be > 0"));
  EXPECT_THAT(errorOf(withEvents(
                  "", R"(, "props": [{"name": "a", "bone": "H", "shape": {"type": "sphere", "radius": 0.1}},
                                                    {"name": "a", "bone": "H", "shape": {"type": "sphere", "radius": 0.1}}])")),
              HasSubstr("props[1].name: 'a' is already the name of props[0]"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 1, "type": "drop", "prop": "swrod"})", sword)),
              HasSubstr("events[0].prop: no prop named 'swrod' in props (did you mean 'sword'?)"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 1, "type": "grab", "prop": "sword", "force": 1})", sword)),
              HasSubstr("events[0]: unknown field 'force' for a 'grab' event"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 1, "type": "drop"})", sword)),
              HasSubstr("events[0].prop: missing (required)"));
  // Absent: none, and nothing saved.
  Result<Scenario> plain = loadScenarioJson(withEvents(""), "scenario.json");
  ASSERT_TRUE(plain) << plain.error();
  EXPECT_TRUE(plain->props.empty());
  EXPECT_TRUE(plain->settings.dropPropsAtDeath);
  const std::string none = saveScenarioJson(*plain);
  EXPECT_EQ(none.find("props"), std::string::npos);
  EXPECT_EQ(none.find("dropPropsAtDeath"), std::string::npos);
}

TEST(ScenarioJsonErrors, BadNesting) {
  EXPECT_THAT(errorOf(R"({"character": {"file": "c.bvh"}, "endTime": 1, "events": {"time": 1}})"),
              HasSubstr("scenario.json: events: expected an array, got object"));
  EXPECT_THAT(errorOf(R"({"character": ["c.bvh"], "endTime": 1})"),
              HasSubstr("character: expected an object, got array"));
  EXPECT_THAT(errorOf(withEvents(R"([{"time": 1, "type": "ragdoll"}])")),
              HasSubstr("events[0]: expected an object, got array"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "world": {"boxes": {"center": [0, 0, 0]}})")),
              HasSubstr("world.boxes: expected an array, got object"));
  EXPECT_THAT(errorOf(R"([{"character": {"file": "c.bvh"}}])"),
              HasSubstr("scenario.json: expected a JSON object at the top level, got array"));
  // Brackets that do not match: a syntax error with line and column.
  EXPECT_THAT(errorOf("{\n  \"events\": [1, 2}\n}"),
              HasSubstr("scenario.json:2:18: events[2]: syntax error while parsing array - unexpected '}'"));
  std::string deep(100, '[');
  EXPECT_THAT(errorOf("{\"a\": " + deep), HasSubstr("nested deeper than 64 levels"));
}

TEST(ScenarioJsonErrors, TruncatedAndEmpty) {
  const std::string full = kComplete;
  // Cut between two fields, and cut inside a string: both rejected with a position.
  EXPECT_THAT(errorOf(full.substr(0, full.find("\"endTime\""))),
              HasSubstr("syntax error while parsing object key - unexpected end of input"));
  const std::string inString = errorOf(full.substr(0, full.find("getup_allowed") + 3));
  EXPECT_THAT(inString, StartsWith("scenario.json:24:"));
  EXPECT_THAT(
      inString,
      HasSubstr("events[0].type: syntax error while parsing value - invalid string: missing closing quote"));
  EXPECT_THAT(errorOf("{\"character\": {\"file\": \"c.bvh\"},\n \"endTime\": 1"),
              HasSubstr("scenario.json:2:14: syntax error while parsing object - unexpected end of input"));
  EXPECT_THAT(errorOf(""), HasSubstr("scenario.json: empty file"));
  EXPECT_THAT(errorOf(" \n\t\r\n"), HasSubstr("scenario.json: empty file"));
  EXPECT_THAT(errorOf("{\n  \"name\": tru\n}"), HasSubstr("scenario.json:2:14: name: syntax error"));
  EXPECT_THAT(errorOf(R"({"character": {"file": "c.bvh"}, "endTime": 1} trailing)"),
              HasSubstr("expected end of input"));
}

TEST(ScenarioJsonErrors, NonFiniteAndOverflowingNumbers) {
  // nlohmann refuses 1e999 at parse time; we point at the number and name the path.
  EXPECT_THAT(errorOf("{\n  \"character\": {\"file\": \"c.bvh\"},\n  \"endTime\": 1,\n"
                      "  \"events\": [ {\"type\": \"ragdoll\", \"time\": 1e999} ]\n}"),
              HasSubstr("scenario.json:4:43: events[0].time: number overflow parsing '1e999'"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "root": {"position": [0, -1e400, 0]})")),
              HasSubstr("root.position[1]: number overflow parsing '-1e400'"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "root": {"yaw": NaN})")), HasSubstr("root.yaw: syntax error"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "root": {"yaw": Infinity})")), HasSubstr("root.yaw: syntax error"));
  // Finite but out of range.
  EXPECT_THAT(errorOf(withEvents("", R"(, "world": {"steps": [{"count": 1e20}]})")),
              HasSubstr("world.steps[0].count: must be <= 500, got 1e+20"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "settings": {"substeps": 18446744073709551616})")),
              HasSubstr("settings.substeps: must be <= 64"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "settings": {"solverIterations": 0})")),
              HasSubstr("settings.solverIterations: must be >= 1"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "recovery": {"gatherTime": -0.1})")),
              HasSubstr("recovery.gatherTime: must be >= 0"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "settings": {"dt": 0})")),
              HasSubstr("settings.dt: must be > 0, got 0"));
  EXPECT_THAT(errorOf(R"({"character": {"file": "c.bvh"}, "endTime": 1e300})"),
              HasSubstr("endTime: must be <= 3600, got 1e+300"));
  EXPECT_THAT(
      errorOf(withEvents(R"({"time": 1, "type": "impulse", "body": "chest", "impulse": [1e9, 0, 0]})")),
      HasSubstr("events[0].impulse[0]: must be <= 100000, got 1000000000"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 1, "type": "teleport", "position": [0, 0, 1e7]})")),
              HasSubstr("events[0].position[2]: must be <= 10000"));
}

TEST(ScenarioJsonErrors, EventsOutOfOrderAndNegativeTimes) {
  EXPECT_THAT(
      errorOf(withEvents(R"({"time": 0.5, "type": "ragdoll"}, {"time": 0.4, "type": "animate"})")),
      HasSubstr("scenario.json: events[1].time: 0.4 s is before events[0].time (0.5 s): events must be "
                "in time order"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": -1, "type": "ragdoll"})")),
              HasSubstr("scenario.json: events[0].time: must be >= 0, got -1"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "clip": {"startTime": -0.5})")),
              HasSubstr("clip.startTime: must be >= 0, got -0.5"));
  EXPECT_THAT(errorOf(R"({"character": {"file": "c.bvh"}, "endTime": -2})"),
              HasSubstr("endTime: must be > 0, got -2"));
  EXPECT_THAT(errorOf(withEvents(R"({"type": "ragdoll"})")), HasSubstr("events[0].time: missing (required)"));
}

// clip.speed (the playback rate; 0 holds the pose at startTime): a number >= 0, on played clips.
TEST(ScenarioJsonErrors, ClipSpeed) {
  EXPECT_THAT(errorOf(withEvents("", R"(, "clip": {"speed": "slow"})")),
              HasSubstr("scenario.json: clip.speed: expected a number, got string 'slow'"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "clip": {"speed": -1})")),
              HasSubstr("scenario.json: clip.speed: must be >= 0, got -1"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 1, "type": "clip", "index": 0, "speed": -0.5})")),
              HasSubstr("scenario.json: events[0].speed: must be >= 0, got -0.5"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 1, "type": "clip", "index": 0, "speed": true})")),
              HasSubstr("scenario.json: events[0].speed: expected a number, got true"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "recovery": {"supine": {"file": "up.bvh", "speed": 2}})")),
              HasSubstr("scenario.json: recovery.supine.speed: a get-up clip plays at its own rate"));
  Result<Scenario> held =
      loadScenarioJson(withEvents("", R"(, "clip": {"startTime": 0.5, "speed": 0})"), "s.json");
  ASSERT_TRUE(held) << held.error();
  EXPECT_EQ(held->clip.speed, 0.0);
  EXPECT_EQ(held->clip.startTime, 0.5);
}

TEST(ScenarioJsonErrors, EndTime) {
  EXPECT_THAT(errorOf(R"({"character": {"file": "c.bvh"}, "endTime": 1,
                         "events": [{"time": 0.5, "type": "ragdoll"}, {"time": 2, "type": "animate"}]})"),
              HasSubstr("endTime: 1 s is before the last event (events[1].time = 2 s)"));
  EXPECT_THAT(errorOf(R"({"character": {"file": "c.bvh"}, "events": [{"time": 0.5, "type": "ragdoll"}]})"),
              HasSubstr("endTime: missing (required unless the events finish with an 'end' event)"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 1, "type": "end"}, {"time": 2, "type": "ragdoll"})")),
              HasSubstr("events[1]: comes after the 'end' event (events[0]); 'end' must be the last event"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 1, "type": "end"})")),
              HasSubstr("endTime: 5 s differs from the 'end' event (events[0].time = 1 s)"));
}

TEST(ScenarioJsonErrors, UnknownEventTypeAndFields) {
  EXPECT_THAT(
      errorOf(withEvents(R"({"time": 1, "type": "ragdol"})")),
      HasSubstr("scenario.json: events[0].type: unknown event type 'ragdol' (did you mean 'ragdoll'?); "
                "expected one of ragdoll, impulse, teleport"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 1, "type": "explode"})")),
              HasSubstr("events[0].type: unknown event type 'explode'; expected one of"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 1, "type": "ragdoll", "weight": 1})")),
              HasSubstr("events[0]: unknown field 'weight' for a 'ragdoll' event; allowed: time type label"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 1, "type": "impulse", "body": "chest", "impuls": [1, 0, 0]})")),
              HasSubstr("events[0]: unknown field 'impuls' for a 'impulse' event (did you mean 'impulse'?)"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "evnts": [])")),
              HasSubstr("scenario.json: unknown field 'evnts' (did you mean 'events'?)"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "endtime": 3)")),
              HasSubstr("unknown field 'endtime' (did you mean 'endTime'?)"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "settings": {"substep": 3})")),
              HasSubstr("settings: unknown field 'substep' (did you mean 'substeps'?)"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "world": {"ground": {"hieght": 1}})")),
              HasSubstr("world.ground: unknown field 'hieght' (did you mean 'height'?)"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "settings": {"handoffMode": "inherits"})")),
              HasSubstr("settings.handoffMode: unknown value 'inherits' (did you mean 'inherit'?)"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 1, "type": "partial", "regions": {"upper_bdy": 1}})")),
              HasSubstr("events[0].regions: unknown region 'upper_bdy' (did you mean 'upper_body'?)"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 1, "type": "partial"})")),
              HasSubstr("events[0]: a 'partial' event needs 'bodies' or 'regions'"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "clip": {"wrap": "repeat"})")),
              HasSubstr("clip.wrap: unknown value 'repeat'; expected one of clamp, loop"));
}

TEST(ScenarioJsonErrors, MissingCharacterAndRequiredFields) {
  EXPECT_THAT(errorOf(R"({"endTime": 1})"), HasSubstr("scenario.json: character: missing (required"));
  EXPECT_THAT(errorOf(R"({"character": {"unitScale": 1}, "endTime": 1})"),
              HasSubstr("scenario.json: character.file: missing (required)"));
  EXPECT_THAT(errorOf(R"({"character": {"file": ""}, "endTime": 1})"),
              HasSubstr("character.file: must not be empty"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 1, "type": "impulse", "impulse": [1, 0, 0]})")),
              HasSubstr("events[0].body: missing (required)"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 1, "type": "teleport"})")),
              HasSubstr("events[0].position: missing (required)"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 1})")), HasSubstr("events[0].type: missing (required)"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "world": {"walls": [{"from": [0, 0, 0]}]})")),
              HasSubstr("world.walls[0].to: missing (required)"));
}

TEST(ScenarioJsonErrors, ContradictionsAndRanges) {
  EXPECT_THAT(errorOf(withEvents("", R"(, "clip": {"name": "run", "index": 1})")),
              HasSubstr("clip.index: give either 'name' or 'index', not both"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "ragdoll": {"asset": "r.json", "totalMass": 80})")),
              HasSubstr("ragdoll.totalMass: not used when ragdoll.asset is given"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "world": {"walls": [{"from": [0, 0, 0], "to": [0, 0, 0]}]})")),
              HasSubstr("world.walls[0].to: must differ from 'from'"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "world": {"steps": [{"direction": [0, 1, 0]}]})")),
              HasSubstr("world.steps[0].direction: must be horizontal (y = 0) and non-zero"));
  EXPECT_THAT(
      errorOf(withEvents("", R"(, "world": {"boxes": [{"center": [0, 0, 0], "halfExtents": [1, 0, 1]}]})")),
      HasSubstr("world.boxes[0].halfExtents[1]: must be > 0, got 0"));
  EXPECT_THAT(errorOf(withEvents(R"({"time": 1, "type": "powered", "weight": 1.5})")),
              HasSubstr("events[0].weight: must be <= 1, got 1.5"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "settings": {"limitLookAhead": -0.1})")),
              HasSubstr("scenario.json: settings.limitLookAhead: must be >= 0, got -0.1"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "settings": {"limitLookAhead": 2})")),
              HasSubstr("scenario.json: settings.limitLookAhead: must be <= 1, got 2"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "settings": {"maxDepenetrationSpeed": -0.01})")),
              HasSubstr("scenario.json: settings.maxDepenetrationSpeed: must be >= 0, got -0.01"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "settings": {"jointConsistency": 1})")),
              HasSubstr("scenario.json: settings.jointConsistency: expected true or false, got number 1"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "settings": {"staticContacts": "yes"})")),
              HasSubstr("scenario.json: settings.staticContacts: expected true or false, got string 'yes'"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "settings": {"limitLookAhead": "long"})")),
              HasSubstr("scenario.json: settings.limitLookAhead: expected a number, got string 'long'"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "version": 2)")),
              HasSubstr("version: 2 is newer than this build reads (1)"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "ragdoll": {"build": {"joints": [1]}})")),
              HasSubstr("ragdoll.build.joints: expected an object, got array"));
}

TEST(ScenarioJsonErrors, DuplicateKeys) {
  EXPECT_THAT(errorOf(withEvents(R"({"time": 1, "type": "ragdoll", "time": 2})")),
              HasSubstr("scenario.json: events[0]: duplicate key 'time'"));
}

TEST(ScenarioJsonErrors, MessagesAreValidUtf8) {
  const std::string error = errorOf("{\"name\": \"caf\xC3\xA9\", \"x\xFF\": 1}");
  EXPECT_THAT(error, HasSubstr("\\xFF"));
  const std::string raw = errorOf("{\"a\": \xFF}");
  EXPECT_EQ(raw.find('\xFF'), std::string::npos) << raw;
}

TEST(ScenarioFile, MissingFileIsAnError) {
  Result<Scenario> loaded = loadScenarioFile("/nonexistent/dir/s.json");
  ASSERT_FALSE(loaded);
  EXPECT_THAT(loaded.error(), HasSubstr("/nonexistent/dir/s.json: cannot open"));
}

}  // namespace
}  // namespace handoff

namespace handoff {
namespace {

// Issue 19: an `impulse` with "knockback": true (no body, no point), a `powered` event without
// pins, and recovery.landing (the clip played after a landing on the feet) load, round-trip and
// are checked like their neighbours.
TEST(ScenarioJson, KnockbackUnpinnedPoweredAndLandingClip) {
  const std::string text = withEvents(
      R"({ "time": 0.2, "type": "powered", "pinned": false },
         { "time": 0.5, "type": "impulse", "knockback": true, "impulse": [-300, 150, 0], "impulseSpace": "root" })",
      R"(, "recovery": { "landing": { "name": "land", "startTime": 1.5, "speed": 0.5 } })");
  Result<Scenario> s = loadScenarioJson(text, "kb.json");
  ASSERT_TRUE(s) << s.error();
  ASSERT_EQ(s->events.size(), 2u);
  EXPECT_FALSE(std::get<ScenarioEvent::Powered>(s->events[0].payload).pinned);
  const auto& k = std::get<ScenarioEvent::Impulse>(s->events[1].payload);
  EXPECT_TRUE(k.knockback);
  EXPECT_TRUE(k.body.empty());
  EXPECT_EQ(k.impulse, Vec3(-300, 150, 0));
  ASSERT_TRUE(s->recovery.landing.has_value());
  EXPECT_EQ(s->recovery.landing->name, "land");
  EXPECT_EQ(s->recovery.landing->startTime, 1.5);
  EXPECT_EQ(s->recovery.landing->speed, 0.5);
  Result<Scenario> back = loadScenarioJson(saveScenarioJson(*s), "kb.json");
  ASSERT_TRUE(back) << back.error();
  EXPECT_TRUE(*s == *back);
  // Defaults: pinned (the hit reaction's pins), no knock-back, no landing clip.
  Result<Scenario> plain = loadScenarioJson(withEvents(R"({ "time": 0.2, "type": "powered" })"), "p.json");
  ASSERT_TRUE(plain) << plain.error();
  EXPECT_TRUE(std::get<ScenarioEvent::Powered>(plain->events[0].payload).pinned);
  EXPECT_FALSE(plain->recovery.landing.has_value());

  EXPECT_THAT(errorOf(withEvents(R"({ "time": 0.5, "type": "impulse", "knockback": true, "body": "chest",
                                      "impulse": [1, 0, 0] })")),
              HasSubstr("events[0].body: not allowed with \"knockback\": true"));
  EXPECT_THAT(errorOf(withEvents(R"({ "time": 0.5, "type": "impulse", "knockback": true, "point": [0, 0, 0],
                                      "impulse": [1, 0, 0] })")),
              HasSubstr("events[0].point: not allowed"));
  EXPECT_THAT(
      errorOf(withEvents(R"({ "time": 0.5, "type": "impulse", "knockback": "yes", "impulse": [1, 0, 0] })")),
      HasSubstr("events[0].knockback"));
  EXPECT_THAT(errorOf(withEvents(R"({ "time": 0.5, "type": "impulse", "impulse": [1, 0, 0] })")),
              HasSubstr("events[0].body: missing (required)"));
  EXPECT_THAT(errorOf(withEvents(R"({ "time": 0.2, "type": "powered", "pinned": 1 })")),
              HasSubstr("events[0].pinned"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "recovery": { "landing": { "name": "x", "speed": -1 } })")),
              HasSubstr("recovery.landing.speed"));
  EXPECT_THAT(errorOf(withEvents("", R"(, "recovery": { "landing": { "name": "x", "pinned": true } })")),
              HasSubstr("recovery.landing: unknown field 'pinned'"));
}

}  // namespace
}  // namespace handoff
