// The built-in suite of `handoff demo` through the library (runToFolder, the code the command
// runs) into a temporary folder, then its outputs checked: every SPEC threshold row, the
// report's numbers against metrics.json, and every .glb read back (tinygltf and Assimp) against
// the simulation.
#include "handoff/runner.h"

#include "replay/gltf.h"

#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <gtest/gtest.h>
#include <assimp/Importer.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include <unistd.h>

#include "support/bullet_precision.h"
#include "support/files.h"

namespace handoff {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// The suite, run once for the whole binary.
struct Demo {
  fs::path folder;
  std::vector<ScenarioResult> results;
  json metrics;
  std::string html;
  std::string error;
  ~Demo() {
    std::error_code ec;
    if (!folder.empty()) fs::remove_all(folder, ec);
  }
};

void runDemo(Demo& out) {
  // One folder per process: ctest runs each test of this file in its own process, in parallel.
  out.folder = fs::temp_directory_path() / ("handoff_demo_suite_" + std::to_string(::getpid()));
  fs::remove_all(out.folder);
  Result<std::vector<Scenario>> suite = builtInSuite(std::string(HANDOFF_SOURCE_DIR) + "/scenarios");
  if (!suite) {
    out.error = suite.error();
    return;
  }
  RunOptions options;
  options.searchDirs = {HANDOFF_DATA_DIR};
  Result<std::vector<ScenarioResult>> results = runToFolder(*suite, out.folder.string(), options);
  if (!results) {
    out.error = results.error();
    return;
  }
  out.results = std::move(results).value();
  out.metrics = json::parse(test::readFile(out.folder / "metrics.json"));
  out.html = test::readFile(out.folder / "report.html");
}

/// The suite, run once per process (its folder removed at exit).
const Demo& demo() {
  static Demo d;
  static const bool ran = (runDemo(d), true);
  (void)ran;
  return d;
}

TEST(DemoSuite, EveryScenarioRunsAndWritesItsOutputs) {
  const Demo& d = demo();
  ASSERT_TRUE(d.error.empty()) << d.error;
  ASSERT_EQ(d.results.size(), 14u);
  for (const ScenarioResult& r : d.results) {
    EXPECT_TRUE(r.ok) << r.name << ": " << r.error;
    EXPECT_TRUE(fs::exists(d.folder / (r.name + ".glb"))) << r.name;
    EXPECT_EQ(r.frames, static_cast<int>(std::lround(r.endTime / r.dt))) << r.name;
    std::printf("%-24s %s %zu checks, %zu handoffs, %zu recoveries, %.2f s\n", r.name.c_str(),
                r.passed() ? "PASS" : "FAIL", r.checks.size(), r.handoffs.size(), r.recoveries.size(),
                r.seconds);
  }
  // The default face-up clip stops mid-rise; the runner completes it to standing
  // (RunOptions::completeGetUps, GetUpCompletion: a 29-frame, 0.48 s tail) and reports the tail;
  // the face-down clip ends standing and gets none. metrics.json carries the same figure.
  int supineRecoveries = 0;
  for (size_t s = 0; s < d.results.size(); ++s) {
    const ScenarioResult& r = d.results[s];
    for (size_t i = 0; i < r.recoveries.size(); ++i) {
      const RecoveryMetrics& m = r.recoveries[i];
      std::printf("%-24s recovery %zu: %s, get-up completion tail %.3f s\n", r.name.c_str(), i,
                  m.facing.c_str(), m.getUpTail);
      if (m.facing == "supine") {
        ++supineRecoveries;
        EXPECT_GE(m.getUpTail, GetUpCompletionSettings{}.minDuration) << r.name;
      } else {
        EXPECT_EQ(m.getUpTail, 0.0) << r.name;
      }
      EXPECT_EQ(d.metrics["scenarios"][s]["recoveries"][i]["getUpTail"].get<double>(), m.getUpTail) << r.name;
    }
  }
  EXPECT_GE(supineRecoveries, 1) << "knockdown_getup_supine gets up with the face-up clip";
  // The handoffs the suite is about happened, and each baseline ran on the same frame.
  for (const ScenarioResult& r : d.results) {
    ASSERT_FALSE(r.handoffs.empty()) << r.name;
    EXPECT_TRUE(r.handoffs[0].committed) << r.name << ": " << r.handoffs[0].failure;
    ASSERT_EQ(r.baselines.size(), 2u) << r.name;
    for (const BaselineResult& b : r.baselines) {
      ASSERT_TRUE(b.handoff) << r.name << " " << b.mode;
      EXPECT_EQ(b.handoff->time, r.handoffs[0].time) << r.name << " " << b.mode;
    }
  }
}

TEST(DemoSuite, EverySpecThresholdRowPasses) {
  const Demo& d = demo();
  ASSERT_FALSE(d.results.empty()) << d.error;
  int rows = 0;
  for (const ScenarioResult& r : d.results) {
    for (const ThresholdCheck& c : r.checks) {
      ++rows;
      std::printf("%-24s %-40s %10.4g %-2s %8.4g %-6s %s\n", r.name.c_str(), c.name.c_str(), c.value,
                  c.comparison.c_str(), c.threshold, c.unit.c_str(),
                  !c.ran   ? "NOT RUN"
                  : c.pass ? "pass"
                           : "FAIL");
      EXPECT_TRUE(c.ran && c.pass) << r.name << ": " << c.name << " = " << c.value << " " << c.unit
                                   << " (threshold " << c.comparison << " " << c.threshold << ") "
                                   << c.description << " " << c.note;
    }
  }
  std::printf("%d threshold rows\n", rows);
  EXPECT_GT(rows, 60);
  // The naive baselines lose what the handoff keeps: at the same frame, zero velocity changes the
  // velocities by far more, and the bind pose jumps the bodies by far more.
  for (const ScenarioResult& r : d.results) {
    if (r.baselines.size() != 2 || !r.baselines[0].handoff || !r.baselines[1].handoff) continue;
    const HandoffMetrics& h = r.handoffs[0];
    const HandoffMetrics& zero = *r.baselines[0].handoff;
    const HandoffMetrics& bind = *r.baselines[1].handoff;
    std::printf(
        "%-24s max |dv| handoff %.3f zero-velocity %.3f m/s; max jump handoff %.2f bind-pose %.1f mm\n",
        r.name.c_str(), h.maxVelocityChange, zero.maxVelocityChange, h.maxPositionJump * 1e3,
        bind.maxPositionJump * 1e3);
    if (h.firstStepImpulse.empty()) {
      EXPECT_GT(zero.maxVelocityChange, h.maxVelocityChange) << r.name;
    }
    EXPECT_GT(bind.maxPositionJump, 0.1) << r.name;  // the bind pose is at least 10 cm off somewhere
    EXPECT_LE(h.maxPositionJump, 1e-4) << r.name;
  }
}

// The demo's hit reaction is issue 6's case (tests/controller/powered_physics_test.cpp,
// Powered.ChestHitReturnsToAnimation): Boxing_Toes' guard pose held (clip speed 0) on the ground,
// 150 N s at the chest while animated; the Character's own hit reaction (powered, pelvis and feet
// pinned) absorbs it and returns to the animation by itself within 1.5 s with an RMS joint error
// under 3 deg. The held pose gives the commit no velocity and no teleport.
void expectHitReactionReturnsToTheHeldPose(const Demo& d) {
  size_t index = d.results.size();
  for (size_t i = 0; i < d.results.size(); ++i) {
    if (d.results[i].name == "powered_hit_reaction") index = i;
  }
  ASSERT_LT(index, d.results.size());
  const ScenarioResult& r = d.results[index];
  EXPECT_TRUE(r.passed());
  ASSERT_EQ(r.hitReactions.size(), 1u);
  const HitReactionMetrics& hit = r.hitReactions[0];
  std::printf(
      "hit %.0f N s on %s at %.3f s: back to animation %d after %.3f s, RMS %.2f deg (max %.2f), hit "
      "body peak %.3f m, any body %.3f m, knocked out %d\n",
      hit.impulse, hit.body.c_str(), hit.time, hit.returned, hit.returnTime, hit.rmsAtReturn * 180.0 / kPi,
      hit.maxAtReturn * 180.0 / kPi, hit.peakHitBodyDeviation, hit.peakDeviation, hit.knockedOut);
  EXPECT_NEAR(hit.impulse, 150.0, 1e-9);
  EXPECT_FALSE(hit.knockedOut);
  EXPECT_TRUE(hit.returned);
  EXPECT_TRUE(r.poweredReturned);
  EXPECT_LT(hit.returnTime, 1.5);
  EXPECT_LT(hit.rmsAtReturn, 3.0 * kPi / 180.0);
  // The upper body reacted: the chest left its animated pose by far more than the 5 cm return
  // threshold (the bound powered_physics_test.cpp puts on the same hit).
  EXPECT_GT(hit.peakHitBodyDeviation, 0.15);
  // The powered entry is the hit's: the held pose has no velocity to inherit and no jump.
  ASSERT_EQ(r.handoffs.size(), 1u);
  const HandoffMetrics& h = r.handoffs[0];
  EXPECT_EQ(h.kind, "powered");
  EXPECT_EQ(h.time, hit.time);
  EXPECT_TRUE(h.committed);
  EXPECT_FALSE(h.firstStepImpulse.empty());
  EXPECT_FALSE(h.teleportDetected);
  EXPECT_LE(h.maxPositionJump, 1e-4);
  for (const BodyHandoffMetrics& b : h.bodies) {
    EXPECT_LT(glm::length(b.animatedVelocity), 1e-9) << b.name;
    EXPECT_LT(glm::length(b.inheritedLinear), 1e-9) << b.name;
    EXPECT_LT(glm::length(b.inheritedAngular), 1e-9) << b.name;
  }
  // The issue-6 rows ran and passed; no `animate` event: the return is the Character's own.
  int issue6Rows = 0;
  for (const ThresholdCheck& c : r.checks) {
    if (c.name == "powered.hit_return_time" || c.name == "powered.hit_rms_error_at_return" ||
        c.name == "powered.returned_to_animation" || c.name == "powered.no_knockout") {
      EXPECT_TRUE(c.ran && c.pass) << c.name << " " << c.value << " " << c.note;
      ++issue6Rows;
    }
  }
  EXPECT_EQ(issue6Rows, 4);
  EXPECT_EQ(r.series.state.back(), "animated");
  // metrics.json and the report carry the same figures; the other drive's reaction is beside it.
  const json& m = d.metrics["scenarios"][index]["hitReactions"][0];
  EXPECT_EQ(m["returnTime"].get<double>(), hit.returnTime);
  EXPECT_EQ(m["rmsAtReturn"].get<double>(), hit.rmsAtReturn);
  EXPECT_NE(d.html.find("/scenarios/" + std::to_string(index) + "/hitReactions/0/returnTime"),
            std::string::npos);
  ASSERT_EQ(r.driveComparisons.size(), 1u);
  ASSERT_EQ(r.driveComparisons[0].hitReactions.size(), 1u);
  EXPECT_NE(
      d.html.find("/scenarios/" + std::to_string(index) + "/driveComparisons/0/hitReactions/0/returned"),
      std::string::npos);
}

// The powered scenario runs with the default implicit drive; the report shows the explicit drive
// on the same frames beside it (RunOptions::driveComparison), a comparison and not a threshold
// row: its checks count nowhere.
// Issue 4's velocity check, read after the first physics step (the first substep, h = dt / 2):
// at every full-ragdoll handoff of the demo each body not touching the world keeps its inherited
// velocity within the allowance, and where no body touches the world the joints have changed no
// velocity at all: every body moved on with its inherited velocity plus gravity's |g| h. Over the
// whole frame the turning limbs' own rigid motion adds its |omega|^2 r dt (metrics:
// worstVelocityExcess).
TEST(DemoSuite, FirstPhysicsStepChangesVelocitiesByGravityAlone) {
  const Demo& d = demo();
  ASSERT_FALSE(d.results.empty()) << d.error;
  int handoffs = 0, airborne = 0;
  for (const ScenarioResult& r : d.results) {
    for (const HandoffMetrics& h : r.handoffs) {
      if (h.kind != "handoff" || !h.committed || !h.firstStepRecorded || !h.firstStepImpulse.empty())
        continue;
      ++handoffs;
      EXPECT_NEAR(h.substepTime, r.dt / 2, 1e-12) << r.name;  // every demo scenario: 2 substeps
      const Vec3 gravityStep = Vec3{0.0, -9.81, 0.0} * h.substepTime;
      double handoffWorst = 0.0;
      for (const BodyHandoffMetrics& b : h.bodies) {
        if (b.inContact) continue;
        handoffWorst =
            std::max(handoffWorst, glm::length(b.postSubstepLinear - b.inheritedLinear - gravityStep));
        EXPECT_NEAR(b.substepVelocityChange,
                    glm::length(b.postSubstepLinear - b.inheritedLinear - gravityStep), 1e-12);
        EXPECT_LE(b.substepVelocityChange, b.substepVelocityAllowed) << r.name << " " << b.name;
      }
      std::printf(
          "%-20s %d bodies touching the world, largest velocity change beyond gravity in the first "
          "physics step %.4f m/s\n",
          r.name.c_str(), h.bodiesInContact, handoffWorst);
      // Bullet's damping (0.05/s: 0.04 % of the velocity per substep) and rounding: 1.5 cm/s is a
      // fifth of gravity's 8.2 cm/s in that substep.
      if (h.bodiesInContact == 0) {
        ++airborne;
        EXPECT_LT(handoffWorst, 0.015) << r.name;
      }
    }
  }
  EXPECT_GE(handoffs, 6);
  EXPECT_GE(airborne, 1);
}

TEST(DemoSuite, PoweredScenarioShowsTheOtherDriveSideBySide) {
  const Demo& d = demo();
  ASSERT_FALSE(d.results.empty()) << d.error;
  int compared = 0;
  for (size_t s = 0; s < d.results.size(); ++s) {
    const ScenarioResult& r = d.results[s];
    const bool powered = std::any_of(r.handoffs.begin(), r.handoffs.end(),
                                     [](const HandoffMetrics& h) { return h.kind == "powered"; });
    if (!powered) {
      EXPECT_TRUE(r.driveComparisons.empty()) << r.name;
      continue;
    }
    ASSERT_EQ(r.driveComparisons.size(), 1u) << r.name;
    const DriveComparison& c = r.driveComparisons[0];
    EXPECT_EQ(r.driveMode, "implicit") << r.name << ": the default drive runs the threshold rows";
    EXPECT_EQ(c.driveMode, "explicit") << r.name;
    EXPECT_TRUE(c.ok) << r.name;
    ASSERT_TRUE(c.powered.has_value()) << r.name;
    EXPECT_EQ(c.powered->time, r.handoffs[0].time) << r.name << ": the same powered entry";
    EXPECT_FALSE(c.checks.empty()) << r.name;
    for (const ThresholdCheck& k : c.checks) EXPECT_EQ(k.name.rfind("powered.", 0), 0u) << k.name;
    // What the two drives did on the same frames (both tracked: errors finite and non-zero).
    EXPECT_GT(r.poweredMaxRmsJointError, 0.0) << r.name;
    EXPECT_GT(c.poweredMaxRmsJointError, 0.0) << r.name;
    std::printf(
        "%-24s implicit: step-1 pop %.2f mm, |dv| %.3f m/s, max rms %.1f deg, max distance %.3f m, returned "
        "%d; explicit: %.2f mm, %.3f m/s, %.1f deg, %.3f m, returned %d, knocked out %d\n",
        r.name.c_str(), r.handoffs[0].worstPopExcess * 1e3, r.handoffs[0].worstVelocityExcess,
        r.poweredMaxRmsJointError * 180.0 / kPi, r.poweredMaxPositionError, r.poweredReturned,
        c.powered->worstPopExcess * 1e3, c.powered->worstVelocityExcess,
        c.poweredMaxRmsJointError * 180.0 / kPi, c.poweredMaxPositionError, c.poweredReturned, c.knockedOut);
    EXPECT_EQ(d.metrics["scenarios"][s]["driveComparisons"].size(), 1u);
    EXPECT_EQ(d.metrics["scenarios"][s]["driveComparisons"][0]["driveMode"], "explicit");
    EXPECT_NE(d.html.find("/scenarios/" + std::to_string(s) + "/driveComparisons/0/powered/worstPopExcess"),
              std::string::npos);
    ++compared;
  }
  EXPECT_EQ(compared, 4) << "powered_hit_reaction, walk_limb_lag, prop_hit_death, ledge_landing";
  // In the same process (the suite runs once per test process): the hit reaction's own figures.
  expectHitReactionReturnsToTheHeldPose(d);
}

// A handoff right after a teleport is the handoff the character would have had in place: the
// teleport scenario runs the run clip to 0.5 s, moves the root 11 m and turns it a quarter, and
// hands off in that frame; run_handoff hands off at 0.5 s where it stands. The jump gives no
// velocity and the inherited state is the same motion, moved: the first-step figures agree to
// the rounding of the rotated coordinates (1e-9 m, 1e-9 m/s; measured 1e-12).
TEST(DemoSuite, HandoffRightAfterATeleportEqualsTheSameHandoffInPlace) {
  const Demo& d = demo();
  const ScenarioResult* run = nullptr;
  const ScenarioResult* teleport = nullptr;
  for (const ScenarioResult& r : d.results) {
    if (r.name == "run_handoff") run = &r;
    if (r.name == "teleport_handoff") teleport = &r;
  }
  ASSERT_TRUE(run && teleport) << d.error;
  ASSERT_EQ(run->handoffs.size(), 1u);
  ASSERT_EQ(teleport->handoffs.size(), 1u);
  const HandoffMetrics& a = run->handoffs[0];
  const HandoffMetrics& b = teleport->handoffs[0];
  ASSERT_TRUE(a.committed && b.committed);
  EXPECT_EQ(a.time, b.time);
  EXPECT_TRUE(b.teleportFlagged);
  EXPECT_NEAR(b.rootJump, std::sqrt(10.0 * 10.0 + 5.0 * 5.0), 0.5);  // the jump the record names
  ASSERT_EQ(a.bodies.size(), b.bodies.size());
  // Exact in double-precision Bullet (1e-9). Single precision stores the poses 12 m from the
  // origin in float (spacing 1.2e-7 x 12 m) and derives velocities from them over a substep of
  // 1/120 s: two roundings of each, not a different handoff.
  const double kPosition = test::bulletTolerance(1e-9, 12.0, 2.0);          // [m]
  const double kVelocity = test::bulletTolerance(1e-9, 12.0 * 120.0, 2.0);  // [m/s]
  std::printf("%-14s %12s %12s %14s\n", "body", "speed run", "teleport", "1st-step move");
  for (size_t i = 0; i < a.bodies.size(); ++i) {
    const BodyHandoffMetrics& x = a.bodies[i];
    const BodyHandoffMetrics& y = b.bodies[i];
    const double speedRun = glm::length(x.inheritedLinear), speedTeleport = glm::length(y.inheritedLinear);
    std::printf("%-14s %12.9f %12.9f %7.4f %7.4f mm\n", x.name.c_str(), speedRun, speedTeleport,
                x.firstStepMove * 1e3, y.firstStepMove * 1e3);
    EXPECT_NEAR(speedRun, speedTeleport, kVelocity) << x.name;
    EXPECT_NEAR(glm::length(x.postStepLinear), glm::length(y.postStepLinear), kVelocity) << x.name;
    EXPECT_NEAR(x.firstStepMove, y.firstStepMove, kPosition) << x.name;
    EXPECT_NEAR(x.velocityChange, y.velocityChange, kVelocity) << x.name;
  }
  EXPECT_NEAR(a.worstPopExcess, b.worstPopExcess, kPosition);
  EXPECT_NEAR(a.worstVelocityExcess, b.worstVelocityExcess, kVelocity);
}

TEST(DemoSuite, ReportNumbersEqualMetricsJson) {
  const Demo& d = demo();
  ASSERT_FALSE(d.html.empty()) << d.error;
  // The embedded document is metrics.json.
  const std::string open = "<script type=\"application/json\" id=\"metrics\">";
  const size_t a = d.html.find(open);
  ASSERT_NE(a, std::string::npos);
  const size_t b = d.html.find("</script>", a);
  ASSERT_NE(b, std::string::npos);
  EXPECT_EQ(json::parse(d.html.substr(a + open.size(), b - a - open.size())), d.metrics);
  // Every figure cell shows the value at its JSON pointer, as formatted.
  const std::regex cellRe(
      R"re(<td data-path="([^"]*)" data-digits="(\d+)"(?: data-scale="([^"]*)")?>([^<]*)</td>)re");
  int cells = 0, numbers = 0;
  for (auto it = std::sregex_iterator(d.html.begin(), d.html.end(), cellRe); it != std::sregex_iterator();
       ++it) {
    const std::smatch& m = *it;
    const json& v = d.metrics.at(json::json_pointer(m[1].str()));
    const int digits = std::stoi(m[2].str());
    const double scale = m[3].matched ? std::stod(m[3].str()) : 1.0;
    const auto format = [&](double x) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.*f", digits, x * scale);
      return std::string(buf);
    };
    std::string expected;
    if (v.is_null()) {
      expected = "—";
    } else if (v.is_boolean()) {
      expected = v.get<bool>() ? "yes" : "no";
    } else if (v.is_number()) {
      expected = format(v.get<double>());
      ++numbers;
    } else if (v.is_array()) {
      expected = "(";
      for (size_t i = 0; i < v.size(); ++i) expected += (i ? ", " : "") + format(v[i].get<double>());
      expected += ")";
      ++numbers;
    } else {
      continue;  // text (names, modes): HTML-escaped
    }
    EXPECT_EQ(m[4].str(), expected) << m[1].str();
    ++cells;
  }
  std::printf("%d figure cells in report.html equal metrics.json (%d numbers)\n", cells, numbers);
  EXPECT_GT(numbers, 1000);
  // Every threshold check of metrics.json is a row of the report.
  for (size_t s = 0; s < d.metrics["scenarios"].size(); ++s) {
    for (size_t c = 0; c < d.metrics["scenarios"][s]["checks"].size(); ++c) {
      const std::string path = "/scenarios/" + std::to_string(s) + "/checks/" + std::to_string(c) + "/value";
      EXPECT_NE(d.html.find("data-path=\"" + path + "\""), std::string::npos) << path;
    }
  }
  // And each check is an object {name, value, threshold, pass}.
  for (const json& sc : d.metrics["scenarios"]) {
    for (const json& c : sc["checks"]) {
      EXPECT_TRUE(c["name"].is_string());
      EXPECT_TRUE(c["value"].is_number() || (c["value"].is_null() && !c["ran"].get<bool>()));
      EXPECT_TRUE(c["threshold"].is_number());
      EXPECT_TRUE(c["pass"].is_boolean());
    }
  }
}

std::vector<float> readFloats(const tinygltf::Model& model, int accessorIndex) {
  const tinygltf::Accessor& accessor = model.accessors.at(static_cast<size_t>(accessorIndex));
  const tinygltf::BufferView& view = model.bufferViews.at(static_cast<size_t>(accessor.bufferView));
  const tinygltf::Buffer& buffer = model.buffers.at(static_cast<size_t>(view.buffer));
  const size_t components = accessor.type == TINYGLTF_TYPE_SCALAR ? 1
                            : accessor.type == TINYGLTF_TYPE_VEC3 ? 3
                                                                  : 4;
  std::vector<float> out(accessor.count * components);
  std::memcpy(out.data(), buffer.data.data() + view.byteOffset + accessor.byteOffset,
              out.size() * sizeof(float));
  return out;
}

TEST(DemoSuite, ReplaysLoadBackWithJointsFramesAndPelvisTrajectory) {
  const Demo& d = demo();
  ASSERT_FALSE(d.results.empty()) << d.error;
  int files = 0;
  for (const json& sc : d.metrics["scenarios"]) {
    const std::string name = sc["name"].get<std::string>();
    const size_t frames = sc["series"]["time"].size();
    const int jointCount = sc["jointCount"].get<int>();
    const std::string pelvisNode = "body:" + sc["pelvisBody"].get<std::string>();
    const fs::path path = d.folder / sc["replay"].get<std::string>();
    tinygltf::TinyGLTF loader;
    tinygltf::Model model;
    std::string err, warn;
    ASSERT_TRUE(loader.LoadBinaryFromFile(&model, &err, &warn, path.string())) << path << ": " << err;
    ASSERT_EQ(model.animations.size(), 1u) << name;
    // Joints: nodes with an animated rotation that are neither bodies nor the capsule.
    std::set<int> jointNodes;
    int pelvis = -1;
    for (size_t n = 0; n < model.nodes.size(); ++n) {
      if (model.nodes[n].name == pelvisNode) pelvis = static_cast<int>(n);
    }
    ASSERT_GE(pelvis, 0) << name << ": no node " << pelvisNode;
    std::vector<float> pelvisKeys, times;
    for (const tinygltf::AnimationChannel& ch : model.animations[0].channels) {
      const std::string& node = model.nodes.at(static_cast<size_t>(ch.target_node)).name;
      const tinygltf::AnimationSampler& sampler =
          model.animations[0].samplers.at(static_cast<size_t>(ch.sampler));
      if (ch.target_path == "rotation" && node.rfind("body:", 0) != 0 && node != "capsule") {
        jointNodes.insert(ch.target_node);
      }
      if (ch.target_node == pelvis && ch.target_path == "translation") {
        pelvisKeys = readFloats(model, sampler.output);
        times = readFloats(model, sampler.input);
      }
    }
    EXPECT_EQ(static_cast<int>(jointNodes.size()), jointCount) << name;
    ASSERT_EQ(times.size(), frames) << name;
    double worst = 0.0;
    const json& pelvisSeries = sc["series"]["pelvisPosition"];
    for (size_t f = 0; f < frames; ++f) {
      EXPECT_NEAR(times[f], sc["series"]["time"][f].get<double>(), 1e-5) << name << " frame " << f;
      for (int i = 0; i < 3; ++i) {
        worst = std::max(worst, std::abs(double(pelvisKeys[3 * f + static_cast<size_t>(i)]) -
                                         pelvisSeries[f][static_cast<size_t>(i)].get<double>()));
      }
    }
    // float32 keys of positions within 20 m: rounding below 2e-6 m.
    EXPECT_LT(worst, 1e-4) << name;
    // Assimp reads the same file: the same key count on the pelvis body's channel.
    Assimp::Importer importer;
    const aiScene* scene = importer.ReadFile(path.string(), aiProcess_ValidateDataStructure);
    ASSERT_TRUE(scene) << name << ": " << importer.GetErrorString();
    ASSERT_EQ(scene->mNumAnimations, 1u);
    bool found = false;
    for (unsigned c = 0; c < scene->mAnimations[0]->mNumChannels; ++c) {
      const aiNodeAnim* ch = scene->mAnimations[0]->mChannels[c];
      if (pelvisNode == ch->mNodeName.C_Str()) {
        found = true;
        EXPECT_EQ(ch->mNumPositionKeys, frames) << name;
        const aiVector3D last = ch->mPositionKeys[ch->mNumPositionKeys - 1].mValue;
        EXPECT_NEAR(last.y, pelvisSeries[frames - 1][1].get<double>(), 1e-4) << name;
      }
    }
    EXPECT_TRUE(found) << name;
    std::printf("%-24s %4zu frames, %2d joints, pelvis trajectory within %.2g m of the simulation\n",
                name.c_str(), frames, jointCount, worst);
    ++files;
  }
  EXPECT_EQ(files, 14);
}

TEST(Runner, SameScenarioTwiceGivesBitIdenticalMetrics) {
  Result<Scenario> s = loadScenarioFile(std::string(HANDOFF_SOURCE_DIR) + "/scenarios/jump_handoff.json");
  ASSERT_TRUE(s) << s.error();
  s->endTime = 1.5;
  RunOptions options;
  options.searchDirs = {HANDOFF_DATA_DIR};
  ScenarioRunner a(options), b(options);
  const ScenarioResult ra = a.run(*s), rb = b.run(*s);
  ASSERT_TRUE(ra.ok) << ra.error;
  EXPECT_EQ(metricsJson(std::span(&ra, 1)), metricsJson(std::span(&rb, 1)));
}

// clip.speed scales the playback: at half speed the character passes each pose of the clip at
// twice the scene time (the same pelvis: clip time 0.5 * (2k dt) is k dt exactly) and hands off
// with half the animation's velocity; at speed 0 it holds the start pose, with nothing to inherit.
TEST(Runner, ClipSpeedScalesThePlayback) {
  Result<Scenario> base = loadScenarioFile(std::string(HANDOFF_SOURCE_DIR) + "/scenarios/jump_handoff.json");
  ASSERT_TRUE(base) << base.error();
  ASSERT_EQ(base->events.size(), 2u);
  ASSERT_EQ(base->events[1].type(), EventType::Ragdoll);
  RunOptions options;
  options.searchDirs = {HANDOFF_DATA_DIR};
  options.baselines = false;
  ScenarioRunner runner(options);
  const auto runWith = [&](double speed, double startTime, double handoff) {
    Scenario s = *base;
    s.clip.speed = speed;
    s.clip.startTime = startTime;
    s.events[1].time = handoff;
    s.endTime = handoff + 0.1;
    return runner.run(s);
  };
  const ScenarioResult normal = runWith(1.0, 0.0, 0.5), half = runWith(0.5, 0.0, 1.0),
                       held = runWith(0.0, 0.5, 0.3);
  ASSERT_TRUE(normal.ok && half.ok && held.ok) << normal.error << half.error << held.error;
  for (size_t k = 0; k < 30; ++k) {
    EXPECT_LT(glm::length(half.series.pelvisPosition[2 * k] - normal.series.pelvisPosition[k]), 1e-12) << k;
  }
  for (size_t k = 0; k < 18; ++k) {  // held, animated up to its handoff at 0.3 s (frame 18)
    EXPECT_EQ(held.series.pelvisPosition[k], held.series.pelvisPosition[0]) << k;
  }
  ASSERT_EQ(normal.handoffs.size(), 1u);
  ASSERT_EQ(half.handoffs.size(), 1u);
  ASSERT_EQ(held.handoffs.size(), 1u);
  double worst = 0.0, fastest = 0.0;
  for (size_t b = 0; b < normal.handoffs[0].bodies.size(); ++b) {
    const Vec3 v1 = normal.handoffs[0].bodies[b].animatedVelocity,
               vHalf = half.handoffs[0].bodies[b].animatedVelocity;
    worst = std::max(worst, glm::length(vHalf - 0.5 * v1));
    fastest = std::max(fastest, glm::length(v1));
    EXPECT_EQ(held.handoffs[0].bodies[b].animatedVelocity, Vec3(0.0)) << b;
    EXPECT_EQ(held.handoffs[0].bodies[b].inheritedLinear, Vec3(0.0)) << b;
    EXPECT_EQ(held.handoffs[0].bodies[b].inheritedAngular, Vec3(0.0)) << b;
  }
  std::printf("jump at 0.5 s: fastest body %.3f m/s; at half speed |v - v/2| at most %.4f m/s\n", fastest,
              worst);
  // The velocity is a finite difference over the last 1/8 frame: dt/8 of clip time at speed 1,
  // dt/16 at half speed. They differ by about the clip's acceleration times dt/16 (1 ms): 0.01 m/s
  // allows 10 m/s^2 (measured 0.0023 m/s).
  EXPECT_GT(fastest, 1.0);
  EXPECT_LT(worst, 0.01);
}

TEST(Runner, ErrorsNameTheScenarioField) {
  RunOptions options;
  options.searchDirs = {HANDOFF_DATA_DIR};
  ScenarioRunner runner(options);
  const auto runText = [&](const std::string& text) {
    Result<Scenario> s = loadScenarioJson(text, std::string(HANDOFF_SOURCE_DIR) + "/scenarios/bad.json");
    if (!s) return s.error();
    const ScenarioResult r = runner.run(*s);
    EXPECT_FALSE(r.ok);
    return r.error;
  };
  const std::string head = R"({"character": {"file": "../data/deepmimic/humanoid3d_run.bvh"}, )";
  // Unknown clip: found when the runner opens the character.
  EXPECT_NE(runText(head + R"("clip": {"name": "humanoid3d_rn"}, "endTime": 1})")
                .find("clip.name: no clip named 'humanoid3d_rn'"),
            std::string::npos);
  // Missing character file.
  EXPECT_NE(runText(R"({"character": {"file": "nowhere.bvh"}, "endTime": 1})").find("character.file"),
            std::string::npos);
  // Unknown body of an impulse.
  EXPECT_NE(
      runText(
          head +
          R"("events": [{"time": 0.1, "type": "impulse", "body": "LeftHnd", "impulse": [1, 0, 0]}], "endTime": 1})")
          .find("events[0].body"),
      std::string::npos);
  // Wrong types, events out of order and negative times stop at loading, naming the field.
  EXPECT_NE(runText(head + R"("events": [{"time": "0.5", "type": "ragdoll"}], "endTime": 1})")
                .find("events[0].time: expected a number"),
            std::string::npos);
  EXPECT_NE(
      runText(
          head +
          R"("events": [{"time": 0.5, "type": "ragdoll"}, {"time": 0.4, "type": "ragdoll"}], "endTime": 1})")
          .find("events[1].time"),
      std::string::npos);
  EXPECT_NE(runText(head + R"("events": [{"time": -1, "type": "ragdoll"}], "endTime": 1})")
                .find("events[0].time: must be >= 0"),
            std::string::npos);
}

}  // namespace
}  // namespace handoff
