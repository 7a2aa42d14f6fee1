// The workbench behind `handoff live` (apps/handoff/live/workbench.h) on the DeepMimic run: page
// commands become scenario events at the next frame, tuning re-simulates from before the last
// trigger, and a saved session is what `handoff run` plays, frame for frame.
#include "live/workbench.h"
#include "live/files.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

namespace handoff::live {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const TriggerContext kContext{0.5, Vec3{1.0, 0.9, 2.0}, Vec3{1.0, 0.0, 0.0}, Transform{}, 0.0};

json J(const char* text) { return json::parse(text); }

ScenarioEvent event(const json& command) {
  Result<ScenarioEvent> e = eventFromCommand(command, kContext);
  EXPECT_TRUE(e) << command.dump() << ": " << e.error();
  return e ? *e : ScenarioEvent{};
}

TEST(EventFromCommand, EveryTriggerIsTheScenarioEventItStandsFor) {
  EXPECT_EQ(event({{"type", "ragdoll"}}).type(), EventType::Ragdoll);
  EXPECT_EQ(event({{"type", "ragdoll"}}).time, 0.5);
  const auto powered =
      std::get<ScenarioEvent::Powered>(event({{"type", "powered"}, {"weight", 0.5}}).payload);
  EXPECT_EQ(powered.weight, 0.5);
  EXPECT_EQ(powered.rampTime, 0.2);
  const auto partial = std::get<ScenarioEvent::Partial>(
      event({{"type", "partial"}, {"bodies", {{"chest", 0.7}}}, {"regions", {{"left_arm", 1}}}}).payload);
  EXPECT_EQ(partial.bodies.at("chest"), 0.7);
  EXPECT_EQ(partial.regions.at(BodyRegion::LeftArm), 1.0);
  EXPECT_EQ(
      std::get<ScenarioEvent::Animate>(event({{"type", "animate"}, {"blendTime", 0.4}}).payload).blendTime,
      0.4);
  EXPECT_FALSE(
      std::get<ScenarioEvent::GetUpAllowed>(event({{"type", "getup_allowed"}, {"allowed", false}}).payload)
          .allowed);
  const auto teleport = std::get<ScenarioEvent::Teleport>(
      event({{"type", "teleport"}, {"position", {1, 0, -2}}, {"yaw", 1.5}}).payload);
  EXPECT_EQ(teleport.position, Vec3(1, 0, -2));
  EXPECT_EQ(teleport.yaw, 1.5);
  const auto clip =
      std::get<ScenarioEvent::Clip>(
          event({{"type", "clip"}, {"name", "humanoid3d_run"}, {"speed", 0}, {"wrap", "clamp"}}).payload)
          .clip;
  EXPECT_EQ(clip.name, "humanoid3d_run");
  EXPECT_EQ(clip.speed, 0.0);
  EXPECT_EQ(clip.wrap, WrapMode::Clamp);
  EXPECT_TRUE(clip.file.empty());  // the character file
  const auto hit = std::get<ScenarioEvent::Impulse>(
      event({{"type", "impulse"}, {"body", "chest"}, {"impulse", {0, 0, 80}}, {"point", {0, 0.1, 0}}})
          .payload);
  EXPECT_EQ(hit.body, "chest");
  EXPECT_EQ(hit.impulse, Vec3(0, 0, 80));
  EXPECT_EQ(*hit.point, Vec3(0, 0.1, 0));
  EXPECT_EQ(hit.pointSpace, PointSpace::Body);
  EXPECT_EQ(event({{"type", "ragdoll"}, {"label", "live"}}).label, "live");
}

TEST(EventFromCommand, WallsAndBoxesStandInTheWayOnTheGround) {
  // Heading +X from the pelvis at (1, 0.9, 2): a wall 1.5 m ahead, across the heading (its local
  // X along world Z), 2 m tall on the ground.
  const ScenarioBox wall = std::get<ScenarioEvent::Wall>(event({{"type", "wall"}}).payload).box;
  EXPECT_NEAR(glm::length(wall.center - Vec3(2.5, 1.0, 2.0)), 0.0, 1e-12);
  EXPECT_NEAR(glm::length(wall.halfExtents - Vec3(1.5, 1.0, 0.1)), 0.0, 1e-12);
  EXPECT_NEAR(glm::length(yawRotation(wall.yaw) * Vec3(1, 0, 0) - Vec3(0, 0, 1)), 0.0, 1e-12);
  const ScenarioBox box =
      std::get<ScenarioEvent::Wall>(
          event({{"type", "box"}, {"distance", 0.5}, {"halfExtents", {0.3, 0.2, 0.4}}}).payload)
          .box;
  EXPECT_NEAR(glm::length(box.center - Vec3(1.5, 0.2, 2.0)), 0.0, 1e-12);
  EXPECT_NEAR(glm::length(yawRotation(box.yaw) * Vec3(1, 0, 0) - Vec3(1, 0, 0)), 0.0, 1e-12);
}

TEST(EventFromCommand, RefusesMalformedCommandsOneByOne) {
  const json bad[] = {
      json::array(),
      {{"kind", "ragdoll"}},
      {{"type", "explode"}},
      {{"type", "powered"}, {"weight", "full"}},
      {{"type", "partial"}, {"regions", {{"tail", 1}}}},
      {{"type", "partial"}, {"bodies", {{"chest", "x"}}}},
      {{"type", "getup_allowed"}, {"allowed", 1}},
      {{"type", "teleport"}, {"position", {1, 2}}},
      {{"type", "clip"}, {"index", -1}},
      {{"type", "clip"}, {"wrap", "bounce"}},
      {{"type", "impulse"}, {"impulse", {1, 2, 3}}},
      {{"type", "impulse"}, {"body", "chest"}},
      {{"type", "impulse"}, {"body", "chest"}, {"impulse", {1, "2", 3}}},
      {{"type", "impulse"}, {"body", "chest"}, {"impulse", {1, 2, 3}}, {"pointSpace", "screen"}},
      {{"type", "box"}, {"halfExtents", {1, 1}}},
  };
  for (const json& c : bad) {
    Result<ScenarioEvent> e = eventFromCommand(c, kContext);
    EXPECT_FALSE(e) << "accepted " << c.dump();
    if (!e) std::printf("  %-80s -> %s\n", c.dump().c_str(), e.error().c_str());
  }
}

/// The DeepMimic run, as `handoff live` opens it, in a fresh scratch folder.
class WorkbenchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<TempFolder> t = TempFolder::create("handoff-workbench-test-");
    ASSERT_TRUE(t) << t.error();
    temp_.emplace(std::move(t).value());
    fs::create_directories(temp_->path() / "scratch");
    WorkbenchOptions o;
    o.dataDir = HANDOFF_DATA_DIR;
    o.outDir = temp_->path() / "out";
    o.scratchDir = temp_->path() / "scratch";
    wb_ = std::make_unique<Workbench>(o);
    Status st = wb_->open(wb_->scenarioForCharacter("deepmimic/humanoid3d_run.bvh"), "test");
    ASSERT_TRUE(st) << st.error();
  }
  void play(double seconds) {
    const double until = wb_->time() + seconds;
    while (wb_->time() + 1e-9 < until) ASSERT_TRUE(wb_->step());
  }
  json series() { return json::parse(wb_->metrics())["series"]; }
  json state() { return json::parse(wb_->frameJson())["state"]; }
  std::optional<TempFolder> temp_;
  std::unique_ptr<Workbench> wb_;
};

TEST_F(WorkbenchTest, OpensTheCharacterRunningWithNoEvents) {
  EXPECT_EQ(wb_->scenario().character.file, "deepmimic/humanoid3d_run.bvh");
  EXPECT_TRUE(wb_->scenario().events.empty());
  EXPECT_EQ(wb_->asset().bodies.size(), 13u);
  EXPECT_EQ(wb_->frame(), 0);
  const json s = wb_->state();
  EXPECT_EQ(s["clips"][0]["name"], "humanoid3d_run");
  EXPECT_EQ(s["map"][0]["slot"], "pelvis");
  EXPECT_EQ(s["map"][0]["bone"], "root");
  EXPECT_TRUE(fs::exists(wb_->rigGlbPath()));
  play(0.5);
  EXPECT_EQ(wb_->frame(), 30);
  EXPECT_EQ(state(), "animated");
  // The frame carries every body and joint of the session.
  const json f = json::parse(wb_->frameJson());
  EXPECT_EQ(f["bodies"].size(), 13u * 7u);
  EXPECT_EQ(f["locals"].size(), 13u * 7u);
  EXPECT_EQ(f["angles"].size(), 12u * 3u);
  EXPECT_EQ(f["f"], 30);
}

TEST_F(WorkbenchTest, ATriggerActsInTheNextFrameAndIsKeptInTheScenario) {
  play(0.5);
  Result<json> r = wb_->command({{"type", "ragdoll"}});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ((*r)["frame"], 31);
  EXPECT_EQ((*r)["event"]["type"], "ragdoll");
  ASSERT_EQ(wb_->scenario().events.size(), 1u);
  EXPECT_EQ(wb_->scenario().events[0].time, 31 * wb_->scenario().settings.dt);
  EXPECT_EQ(state(), "animated");
  ASSERT_TRUE(wb_->step());
  EXPECT_EQ(state(), "ragdoll");
  // A refused trigger changes nothing and says why.
  Result<json> bad = wb_->command({{"type", "impulse"}, {"body", "chset"}, {"impulse", {0, 0, 50}}});
  ASSERT_FALSE(bad);
  std::printf("refused: %s\n", bad.error().c_str());
  EXPECT_NE(bad.error().find("chset"), std::string::npos);
  EXPECT_EQ(wb_->scenario().events.size(), 1u);
}

TEST_F(WorkbenchTest, PlaybackFollowsTheWallClockAtTheChosenSpeed) {
  wb_->setPlaying(true);
  wb_->setSpeed(0.5);
  EXPECT_EQ(wb_->advance(0.1), 3);  // 0.05 s of scene time at 60 Hz
  wb_->setPlaying(false);
  EXPECT_EQ(wb_->advance(1.0), 0);
  ASSERT_TRUE(wb_->command({{"type", "step"}}));
  EXPECT_EQ(wb_->frame(), 4);
}

TEST_F(WorkbenchTest, TuningTheKneeReplaysTheFallFromBeforeTheTrigger) {
  play(0.6);
  ASSERT_TRUE(wb_->command({{"type", "ragdoll"}}));
  const int trigger = wb_->frame() + 1;
  play(1.5);
  const json before = series();
  const int session = wb_->sessionId();
  const auto knee = [&] {
    return *std::find_if(wb_->asset().joints.begin(), wb_->asset().joints.end(),
                         [](const JointDef& j) { return j.name == "left_knee"; });
  };
  const double kneeUpper = knee().preset.angularUpper.z;

  // Knees held nearly straight (anatomical flexion range 0 .. 0.05 rad instead of 0 .. 2.6).
  Result<json> r = wb_->tune(J(R"({"groups": {"knee": {"upper": [0, 0, 0.05]}}})"));
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(wb_->sessionId(), session + 1);
  // Re-simulated to the lead-in (0.5 s) before the trigger.
  EXPECT_NEAR((*r)["from"].get<double>(), trigger * wb_->scenario().settings.dt - 0.5, 1e-9);
  EXPECT_LT(knee().preset.angularUpper.z, kneeUpper - 2.0);
  play(2.0);
  const json after = series();
  double beforeTrigger = 0.0, afterTrigger = 0.0;
  for (int k = 0; k < static_cast<int>(before["time"].size()); ++k) {
    const json& a = before["pelvisPosition"][static_cast<size_t>(k)];
    const json& b = after["pelvisPosition"][static_cast<size_t>(k)];
    const double d =
        std::hypot(a[0].get<double>() - b[0].get<double>(), a[1].get<double>() - b[1].get<double>(),
                   a[2].get<double>() - b[2].get<double>());
    (k <= trigger ? beforeTrigger : afterTrigger) = std::max(k <= trigger ? beforeTrigger : afterTrigger, d);
  }
  std::printf("pelvis: largest difference up to the trigger %.3g m, after it %.3f m\n", beforeTrigger,
              afterTrigger);
  EXPECT_EQ(beforeTrigger, 0.0);  // the same frames, bit for bit
  EXPECT_GT(afterTrigger, 0.02);  // straight knees fall differently

  // A bad value is refused and the session goes on as it was.
  Result<json> bad = wb_->tune(J(R"({"bodies": {"chest": {"mass": -1}}})"));
  ASSERT_FALSE(bad);
  std::printf("refused: %s\n", bad.error().c_str());
  EXPECT_EQ(wb_->sessionId(), session + 1);
  EXPECT_FALSE(wb_->tune(J(R"({"groups": {"kneee": {"upper": [0, 0, 1]}}})")));
  EXPECT_FALSE(wb_->tune(J(R"({"joints": {"left_knee": {"stiff": 1}}})")));
  EXPECT_FALSE(wb_->tune(J(R"({"settings": {"substeps": 0}})")));
  EXPECT_FALSE(wb_->tune(J(R"({"group": {"knee": {"upper": [0, 0, 1]}}})")));  // a misspelt section
}

TEST_F(WorkbenchTest, SettingsGoThroughTheScenarioAndResetToTheOpenedOnes) {
  play(0.2);
  ASSERT_TRUE(wb_->tune(J(
      R"({"settings": {"displayBlendTime": 0.3, "substeps": 4, "solverIterations": 12, "maxDepenetrationSpeed": 0.02},
          "recovery": {"settleWindow": 0.8}})")));
  EXPECT_EQ(wb_->scenario().settings.handoff.displayBlendTime, 0.3);
  EXPECT_EQ(wb_->scenario().settings.handoff.maxDepenetrationSpeed, 0.02);
  EXPECT_EQ(wb_->state()["settings"]["maxDepenetrationSpeed"], 0.02);
  EXPECT_EQ(wb_->scenario().settings.substeps, 4);
  EXPECT_EQ(wb_->scenario().recovery.settle.window, 0.8);
  EXPECT_EQ(wb_->state()["settings"]["substeps"], 4);
  EXPECT_EQ(wb_->scenario().settings.solverIterations, 12);
  EXPECT_EQ(wb_->state()["settings"]["solverIterations"], 12);
  ASSERT_TRUE(wb_->tune(J(R"({"resetSettings": true})")));
  EXPECT_EQ(wb_->scenario().settings, ScenarioSettings{});
  EXPECT_EQ(wb_->scenario().recovery, ScenarioRecovery{});
}

TEST_F(WorkbenchTest, ASavedSessionIsWhatTheRunnerPlaysFrameForFrame) {
  play(0.4);
  ASSERT_TRUE(wb_->command({{"type", "impulse"}, {"body", "chest"}, {"impulse", {0, 0, 60}}}));
  play(0.6);
  ASSERT_TRUE(wb_->command({{"type", "ragdoll"}}));
  ASSERT_TRUE(wb_->command({{"type", "wall"}}));
  play(0.3);
  ASSERT_TRUE(wb_->tune(J(R"({"joints": {"left_elbow": {"upper": [0, 0, 1.0]}},
                                 "bodies": {"chest": {"mass": 12.0, "radius": 0.13}}})")));
  play(1.0);
  Result<json> saved = wb_->save("session");
  ASSERT_TRUE(saved) << saved.error();
  const fs::path scenarioFile = (*saved)["scenario"].get<std::string>();
  const fs::path assetFile = (*saved)["asset"].get<std::string>();

  // The asset loads back identical.
  Result<RagdollAsset> asset = loadRagdollFile(assetFile.string());
  ASSERT_TRUE(asset) << asset.error();
  EXPECT_EQ(saveRagdollJson(*asset), wb_->assetJson());
  EXPECT_EQ(asset->bodies[static_cast<size_t>(asset->findBody("chest"))].mass, 12.0);

  // The scenario plays the same frames and figures in a fresh runner.
  Result<Scenario> scenario = loadScenarioFile(scenarioFile.string());
  ASSERT_TRUE(scenario) << scenario.error();
  EXPECT_EQ(scenario->events.size(), 3u);
  RunOptions options;
  options.searchDirs = {HANDOFF_DATA_DIR};
  options.baselines = false;
  options.driveComparison = false;
  ScenarioRunner runner(options);
  const ScenarioResult run = runner.run(*scenario);
  ASSERT_TRUE(run.ok) << run.error;
  const json live = json::parse(wb_->metrics());
  const json file = json::parse(resultJson(run));
  EXPECT_EQ(file["frames"], live["frames"]);
  EXPECT_EQ(file["series"], live["series"]);  // bit for bit: doubles round-trip through the JSON
  EXPECT_EQ(file["checks"], live["checks"]);
  EXPECT_EQ(file["handoffs"], live["handoffs"]);
  EXPECT_EQ(file["events"], live["events"]);
  std::printf("saved %d frames, %zu events; %zu checks equal\n", file["frames"].get<int>(),
              scenario->events.size(), file["checks"].size());

  // The replay export.
  Result<std::string> glb = wb_->exportReplay("session");
  ASSERT_TRUE(glb) << glb.error();
  std::ifstream in(*glb, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  ASSERT_GT(bytes.size(), 20u);
  EXPECT_EQ(bytes.substr(0, 4), "glTF");
  std::uint32_t length = 0;
  std::memcpy(&length, bytes.data() + 12, 4);
  const json extras = json::parse(bytes.substr(20, length))["scenes"][0]["extras"]["handoff"];
  EXPECT_EQ(extras["frameCount"], file["frames"].get<int>() + 1);  // frame 0 and one per step
  std::vector<std::string> kinds;
  for (const json& e : extras["events"]) kinds.push_back(e["kind"]);
  std::printf("exported replay: %d frames, events:", extras["frameCount"].get<int>());
  for (const std::string& k : kinds) std::printf(" %s", k.c_str());
  std::printf(", %zu boxes\n", extras["boxes"].size());
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "ragdoll"), kinds.end());
  EXPECT_EQ(extras["boxes"].size(), 1u);  // the wall
}

TEST_F(WorkbenchTest, AFileThatDoesNotImportSaysWhyAndTheSessionGoesOn) {
  play(0.2);
  const int session = wb_->sessionId();
  const fs::path broken = temp_->path() / "broken.bvh";
  std::ofstream(broken) << "HIERARCHY\nROOT hips\n{\n  OFFSET 0 0\n";
  Status st = wb_->open(wb_->scenarioForCharacter(broken.string()), "upload");
  ASSERT_FALSE(st);
  std::printf("refused: %s\n", st.error().c_str());
  EXPECT_NE(st.error().find("broken.bvh"), std::string::npos);
  EXPECT_NE(st.error().find("broken.bvh:5:"), std::string::npos);  // the line where it breaks off
  EXPECT_EQ(wb_->sessionId(), session);
  EXPECT_TRUE(wb_->step());
  EXPECT_EQ(wb_->frame(), 13);
}

// A scenario with a level (issue 26): the session's world has the level's triangles, and the rig
// the page draws carries them as "level:<i>" nodes (web/overlay.js styles them as static pieces).
TEST_F(WorkbenchTest, AScenarioWithALevelDrawsItsTrianglesInTheRig) {
  Result<Scenario> stairs =
      loadScenarioFile(std::string(HANDOFF_DATA_DIR) + "/../scenarios/stairs_mesh.json");
  ASSERT_TRUE(stairs) << stairs.error();
  Status st = wb_->open(*stairs, "test");
  ASSERT_TRUE(st) << st.error();
  std::ifstream in(wb_->rigGlbPath(), std::ios::binary);
  const std::string glb((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(glb.size(), 20u);
  std::uint32_t length = 0;
  std::memcpy(&length, glb.data() + 12, 4);
  const json doc = json::parse(glb.substr(20, length));
  bool level = false;
  for (const json& node : doc["nodes"]) level = level || node.value("name", "") == "level:0";
  EXPECT_TRUE(level) << "no level:0 node in the rig";
  EXPECT_EQ(doc["scenes"][0]["extras"]["handoff"]["levelMeshes"][0]["triangles"], 72);
  // On the landing (1.44 m up, no ground there): the pelvis stays at running height over it.
  play(0.2);
  EXPECT_EQ(state(), "animated");
  EXPECT_GT(series()["pelvisHeight"].back().get<double>(), 1.44 + 0.6);
}

TEST(ApplyEdits, SetsJointValuesAndScalesInertiaWithMassAndShape) {
  RagdollAsset asset;
  {
    Result<ImportedAsset> imported =
        importFile(std::string(HANDOFF_DATA_DIR) + "/deepmimic/humanoid3d_run.bvh");
    ASSERT_TRUE(imported);
    Result<RagdollAsset> built = buildRagdoll(imported->skeleton, BuildOptions{});
    ASSERT_TRUE(built);
    asset = *built;
  }
  Tuning t;
  t.joints["left_knee"].upper = Vec3{0, 0, 1.0};
  t.joints["left_knee"].stiffness = 123.0;
  t.bodies["chest"].mass = 2.0 * asset.bodies[1].mass;
  t.bodies["left_hip"].radius =
      1.5 * asset.bodies[static_cast<size_t>(asset.findBody("left_hip"))].shape.radius;
  Result<RagdollAsset> edited = applyEdits(asset, t);
  ASSERT_TRUE(edited) << edited.error();
  const auto kneeOf = [](const RagdollAsset& a) {
    return *std::find_if(a.joints.begin(), a.joints.end(),
                         [](const JointDef& j) { return j.name == "left_knee"; });
  };
  const JointDef knee = kneeOf(*edited);
  EXPECT_EQ(knee.preset.angularUpper, Vec3(0, 0, 1.0));
  EXPECT_EQ(knee.preset.driveStiffness, 123.0);
  EXPECT_EQ(knee.preset.angularLower, kneeOf(asset).preset.angularLower);
  const BodyDef& chest = edited->bodies[1];
  EXPECT_EQ(chest.mass, 2.0 * asset.bodies[1].mass);
  for (int a = 0; a < 3; ++a) EXPECT_DOUBLE_EQ(chest.inertia[a], 2.0 * asset.bodies[1].inertia[a]);
  const size_t thigh = static_cast<size_t>(asset.findBody("left_hip"));
  // A thicker thigh: the moments about its long axis (Y) grow by about the radius ratio squared.
  const double ratioY = edited->bodies[thigh].inertia.y / asset.bodies[thigh].inertia.y;
  std::printf("thigh radius x1.5: inertia x %.3f %.3f %.3f\n",
              edited->bodies[thigh].inertia.x / asset.bodies[thigh].inertia.x, ratioY,
              edited->bodies[thigh].inertia.z / asset.bodies[thigh].inertia.z);
  EXPECT_GT(ratioY, 1.8);
  EXPECT_LT(ratioY, 2.3);
  EXPECT_EQ(edited->bodies[thigh].mass, asset.bodies[thigh].mass);

  for (const auto& [name, edit] : std::vector<std::pair<std::string, Tuning>>{
           {"unknown joint",
            [] {
              Tuning x;
              x.joints["left_kne"].stiffness = 1;
              return x;
            }()},
           {"negative damping",
            [] {
              Tuning x;
              x.joints["left_knee"].damping = -1;
              return x;
            }()},
           {"zero torque",
            [] {
              Tuning x;
              x.joints["left_knee"].maxTorque = 0;
              return x;
            }()},
           {"unknown body",
            [] {
              Tuning x;
              x.bodies["tail"].mass = 1;
              return x;
            }()},
           {"zero mass",
            [] {
              Tuning x;
              x.bodies["chest"].mass = 0;
              return x;
            }()},
           {"box radius",
            [] {
              Tuning x;
              x.bodies["left_ankle"].radius = 0.1;
              return x;
            }()},
       }) {
    Result<RagdollAsset> r = applyEdits(asset, edit);
    EXPECT_FALSE(r) << name;
    if (!r) std::printf("  %-18s -> %s\n", name.c_str(), r.error().c_str());
  }
}

}  // namespace
}  // namespace handoff::live
