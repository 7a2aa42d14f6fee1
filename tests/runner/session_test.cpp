// ScenarioSession: a scenario played frame by frame, events added while it steps (what the live
// workbench does as the user clicks), then saved with saveScenarioJson and run afresh by the
// runner (what `handoff run` does with the saved file): the same frames and figures bit for bit.
#include "handoff/runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <unistd.h>

namespace handoff {
namespace {

namespace fs = std::filesystem;

RunOptions dataOptions() {
  RunOptions options;
  options.searchDirs = {HANDOFF_DATA_DIR};
  options.baselines = false;
  options.driveComparison = false;
  return options;
}

/// The DeepMimic runner looping its clip on flat ground, get-up forbidden from the start (so
/// the get-up clips are loaded only when an added event allows a get-up), no other event.
Scenario baseScenario() {
  const char* text = R"({
    "version": 1, "name": "session_base",
    "character": { "file": "../data/deepmimic/humanoid3d_run.bvh" },
    "clip": { "name": "humanoid3d_run", "wrap": "loop" },
    "events": [ { "time": 0.0, "type": "getup_allowed", "allowed": false } ],
    "endTime": 1.0
  })";
  Result<Scenario> s =
      loadScenarioJson(text, std::string(HANDOFF_SOURCE_DIR) + "/scenarios/session_base.json");
  EXPECT_TRUE(s.ok()) << (s ? "" : s.error());
  return s ? *s : Scenario{};
}

ScenarioEvent::Impulse impulseOn(const char* body, const Vec3& j, ImpulseSpace space = ImpulseSpace::World) {
  ScenarioEvent::Impulse p;
  p.body = body;
  p.impulse = j;
  p.impulseSpace = space;
  return p;
}

/// Bit-equal transforms.
bool same(std::span<const Transform> a, std::span<const Transform> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].rotation != b[i].rotation || a[i].translation != b[i].translation) return false;
  }
  return true;
}

ScenarioEvent eventAt(double time, ScenarioEvent::Payload payload, std::string label = {}) {
  ScenarioEvent e;
  e.time = time;
  e.payload = std::move(payload);
  e.label = std::move(label);
  return e;
}

/// Steps the session until time() reaches `t` (frames of the scenario's dt).
void stepTo(ScenarioSession& session, double t) {
  while (session.time() < t - 1e-9 && session.step()) {
  }
}

void expectSameSeries(const TimeSeries& a, const TimeSeries& b) {
  EXPECT_EQ(a.time, b.time);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.pelvisPosition, b.pelvisPosition);
  EXPECT_EQ(a.pelvisHeight, b.pelvisHeight);
  EXPECT_EQ(a.pelvisSpeed, b.pelvisSpeed);
  EXPECT_EQ(a.maxJointStretch, b.maxJointStretch);
  EXPECT_EQ(a.settleWindow, b.settleWindow);
  EXPECT_EQ(a.blendWeight, b.blendWeight);
  EXPECT_EQ(a.driveWeight, b.driveWeight);
  EXPECT_EQ(a.contacts, b.contacts);
  EXPECT_EQ(a.activeBodies, b.activeBodies);
  EXPECT_EQ(a.sleepingBodies, b.sleepingBodies);
}

void expectSameHandoff(const HandoffMetrics& a, const HandoffMetrics& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.time, b.time);
  EXPECT_EQ(a.committed, b.committed);
  EXPECT_EQ(a.maxPositionJump, b.maxPositionJump);
  EXPECT_EQ(a.maxFirstStepMove, b.maxFirstStepMove);
  EXPECT_EQ(a.worstPopExcess, b.worstPopExcess);
  EXPECT_EQ(a.maxVelocityChange, b.maxVelocityChange);
  EXPECT_EQ(a.worstVelocityExcess, b.worstVelocityExcess);
  EXPECT_EQ(a.worstSubstepVelocityExcess, b.worstSubstepVelocityExcess);
  EXPECT_EQ(a.followTime, b.followTime);
  EXPECT_EQ(a.worstSpeedExcess, b.worstSpeedExcess);
  EXPECT_EQ(a.maxJointSeparation, b.maxJointSeparation);
  EXPECT_EQ(a.hitAllowance, b.hitAllowance);
  EXPECT_EQ(a.firstStepImpulse, b.firstStepImpulse);
  ASSERT_EQ(a.bodies.size(), b.bodies.size());
  for (size_t i = 0; i < a.bodies.size(); ++i) {
    EXPECT_EQ(a.bodies[i].inheritedLinear, b.bodies[i].inheritedLinear) << a.bodies[i].name;
    EXPECT_EQ(a.bodies[i].postStepLinear, b.bodies[i].postStepLinear) << a.bodies[i].name;
    EXPECT_EQ(a.bodies[i].postSubstepLinear, b.bodies[i].postSubstepLinear) << a.bodies[i].name;
  }
}

// Every event type the workbench adds, each at the session's current time as a click would
// (ragdoll, impulse, powered, partial, animate, teleport, clip, wall, getup_allowed), plus one
// set ahead of time and an end time moved while stepping. The saved scenario run afresh gives
// the same time series, handoffs, hit reactions, recoveries and checks, and the same replay.
TEST(Session, EventsAddedWhileSteppingReplayBitForBitFromTheSavedScenario) {
  ScenarioRunner runner(dataOptions());
  Replay liveReplay;
  Result<std::unique_ptr<ScenarioSession>> started =
      ScenarioSession::start(runner, baseScenario(), std::nullopt, &liveReplay);
  ASSERT_TRUE(started.ok()) << started.error();
  ScenarioSession& session = **started;
  EXPECT_EQ(session.frame(), 0);
  EXPECT_EQ(session.frameCount(), 60);
  ASSERT_TRUE(session.setEndTime(11.0));
  EXPECT_EQ(session.frameCount(), 660);

  // Refused, nothing changed: before the session's time, an `end`, an unknown body, past the end.
  stepTo(session, 0.1);
  const size_t eventsBefore = session.scenario().events.size();
  Status early = session.addEvent(eventAt(0.05, ScenarioEvent::Ragdoll{}));
  EXPECT_FALSE(early);
  Status end = session.addEvent(eventAt(0.2, ScenarioEvent::End{}));
  EXPECT_FALSE(end);
  Status badBody = session.addEvent(eventAt(0.2, impulseOn("LeftHnd", Vec3{1, 0, 0})));
  EXPECT_FALSE(badBody);
  Status late = session.addEvent(eventAt(11.5, ScenarioEvent::Ragdoll{}));
  EXPECT_FALSE(late);
  std::printf("[session] refused: %s | %s | %s | %s\n", early ? "" : early.error().c_str(),
              end ? "" : end.error().c_str(), badBody ? "" : badBody.error().c_str(),
              late ? "" : late.error().c_str());
  EXPECT_EQ(session.scenario().events.size(), eventsBefore);

  // At the current time: acts in the next frame, kept at that frame's time.
  ScenarioEvent::Wall wall;
  wall.box.center = Vec3{0.0, 1.0, 4.0};
  wall.box.halfExtents = Vec3{2.0, 1.0, 0.1};
  ASSERT_TRUE(session.addEvent(eventAt(session.time(), wall, "wall ahead")));
  EXPECT_EQ(session.scenario().events.back().time, (session.frame() + 1) * session.dt());
  // Ahead of time, then another before it: kept in time order.
  ASSERT_TRUE(session.addEvent(eventAt(0.5, ScenarioEvent::Powered{1.0, 0.2})));
  ASSERT_TRUE(session.addEvent(eventAt(0.3, ScenarioEvent::Teleport{Vec3{0.5, 0.0, 0.0}, 0.3})));
  stepTo(session, 0.4);
  ScenarioEvent::Clip clip;
  clip.clip.file = "../data/deepmimic/humanoid3d_jump.bvh";
  clip.clip.startTime = 0.2;
  clip.clip.wrap = WrapMode::Loop;
  ASSERT_TRUE(session.addEvent(eventAt(session.time(), clip)));
  stepTo(session, 0.7);
  ASSERT_EQ(session.character().state(), CharacterState::Powered);
  const ScenarioEvent::Impulse hit = impulseOn("chest", Vec3{0.0, 0.0, -40.0}, ImpulseSpace::Root);
  ASSERT_TRUE(session.addEvent(eventAt(session.time(), hit, "hit while powered")));
  stepTo(session, 0.9);
  ScenarioEvent::Partial partial;
  partial.regions[BodyRegion::UpperBody] = 0.6;
  partial.bodies["right_elbow"] = 1.0;
  ASSERT_TRUE(session.addEvent(eventAt(session.time(), partial)));
  stepTo(session, 1.1);
  ASSERT_TRUE(session.addEvent(eventAt(session.time(), ScenarioEvent::Animate{0.25})));
  stepTo(session, 1.5);
  ASSERT_EQ(session.character().state(), CharacterState::Animated);
  ASSERT_TRUE(session.addEvent(
      eventAt(session.time(), impulseOn("chest", Vec3{0.0, 0.0, 60.0}, ImpulseSpace::Root), "hit reaction")));
  stepTo(session, 3.0);
  ASSERT_TRUE(session.addEvent(eventAt(session.time(), ScenarioEvent::Ragdoll{}, "knockdown")));
  ASSERT_TRUE(session.addEvent(
      eventAt(session.time(), impulseOn("chest", Vec3{-120.0, 0.0, 0.0}, ImpulseSpace::Root))));
  stepTo(session, 3.2);
  ASSERT_TRUE(session.addEvent(eventAt(session.time(), ScenarioEvent::GetUpAllowed{true})));
  while (session.step()) {
  }
  EXPECT_EQ(session.frame(), 660);
  EXPECT_FALSE(session.step());
  const ScenarioResult live = session.finish();
  ASSERT_TRUE(live.ok) << live.error;
  EXPECT_TRUE(live.notRun.empty()) << live.notRun.front();
  std::printf("[session] %zu events, %zu handoffs, %zu hit reactions, %zu recoveries, %zu checks\n",
              session.scenario().events.size(), live.handoffs.size(), live.hitReactions.size(),
              live.recoveries.size(), live.checks.size());
  for (const CharacterEvent& e : live.events)
    std::printf("  %.3f %s %s\n", e.time, eventKindName(e.kind), e.detail);
  ASSERT_EQ(live.handoffs.size(), 3u);  // the powered entry, the hit reaction and the knockdown
  EXPECT_EQ(live.hitReactions.size(), 1u);
  ASSERT_EQ(live.recoveries.size(), 1u);  // allowed late: the get-up clips loaded then
  EXPECT_TRUE(live.recoveries[0].finished);

  // Saved, loaded back from the file, run as `handoff run` runs it.
  const fs::path file =
      fs::temp_directory_path() / ("handoff_session_" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream out(file, std::ios::binary);
    out << saveScenarioJson(session.scenario());
  }
  Result<Scenario> saved = loadScenarioFile(file.string());
  fs::remove(file);
  ASSERT_TRUE(saved.ok()) << saved.error();
  EXPECT_EQ(saved->events, session.scenario().events);
  Replay freshReplay;
  const ScenarioResult fresh = runner.run(*saved, &freshReplay);
  ASSERT_TRUE(fresh.ok) << fresh.error;

  expectSameSeries(live.series, fresh.series);
  ASSERT_EQ(live.handoffs.size(), fresh.handoffs.size());
  for (size_t i = 0; i < live.handoffs.size(); ++i) expectSameHandoff(live.handoffs[i], fresh.handoffs[i]);
  // Every figure of the report: metrics.json of both (the source file aside).
  ScenarioResult liveNamed = live;
  liveNamed.source = fresh.source;
  EXPECT_EQ(metricsJson(std::span(&liveNamed, 1)), metricsJson(std::span(&fresh, 1)));
  // The same replay frames.
  ASSERT_EQ(liveReplay.frames.size(), freshReplay.frames.size());
  for (size_t f = 0; f < liveReplay.frames.size(); ++f) {
    ASSERT_TRUE(same(liveReplay.frames[f].locals, freshReplay.frames[f].locals)) << "frame " << f;
    ASSERT_TRUE(same(liveReplay.frames[f].worldFromBodies, freshReplay.frames[f].worldFromBodies))
        << "frame " << f;
  }
  EXPECT_EQ(liveReplay.boxes.size(), freshReplay.boxes.size());
  EXPECT_EQ(liveReplay.events.size(), freshReplay.events.size());
}

// A snapshot while stepping carries the checks on the frames played; ScenarioRunner::run on the
// same scenario is a session stepped to its end.
// settings.solverIterations is the world's: the engine reports the iterations it ran, and a
// ragdoll lying under one iteration stretches its joints more than under the default ten.
TEST(Session, SolverIterationsReachTheWorld) {
  ScenarioRunner runner(dataOptions());
  double stretch[2] = {0.0, 0.0};
  for (int k = 0; k < 2; ++k) {
    Scenario s = baseScenario();
    s.settings.solverIterations = k == 0 ? 1 : WorldSettings{}.solverIterations;
    s.events.push_back(eventAt(0.3, ScenarioEvent::Ragdoll{}));
    Result<std::unique_ptr<ScenarioSession>> session = ScenarioSession::start(runner, s);
    ASSERT_TRUE(session.ok()) << session.error();
    ASSERT_TRUE((*session)->step());
    EXPECT_EQ((*session)->world().lastStepStats().solverIterations, s.settings.solverIterations);
    while ((*session)->step()) {
    }
    const ScenarioResult r = (*session)->finish();
    ASSERT_TRUE(r.ok) << r.error;
    for (double v : r.series.maxJointStretch) stretch[k] = std::max(stretch[k], v);
  }
  std::printf("largest joint stretch: 1 iteration %.2f mm, %d iterations %.2f mm\n", stretch[0] * 1e3,
              WorldSettings{}.solverIterations, stretch[1] * 1e3);
  EXPECT_GT(stretch[0], stretch[1]);
}

TEST(Session, SnapshotSoFarAndFinishEqualTheRun) {
  Result<Scenario> s =
      loadScenarioFile(std::string(HANDOFF_SOURCE_DIR) + "/scenarios/powered_hit_reaction.json");
  ASSERT_TRUE(s.ok()) << s.error();
  ScenarioRunner runner(dataOptions());
  Result<std::unique_ptr<ScenarioSession>> started = ScenarioSession::start(runner, *s);
  ASSERT_TRUE(started.ok()) << started.error();
  ScenarioSession& session = **started;
  for (int k = 0; k < 30; ++k) ASSERT_TRUE(session.step());
  const ScenarioResult half = session.snapshot();
  EXPECT_EQ(half.frames, 30);
  EXPECT_EQ(half.series.time.size(), 31u);  // frame 0 and 30 played
  EXPECT_FALSE(half.checks.empty());
  while (session.step()) {
  }
  const ScenarioResult live = session.finish();
  const ScenarioResult run = runner.run(*s);
  ASSERT_TRUE(run.ok) << run.error;
  expectSameSeries(live.series, run.series);
  EXPECT_EQ(metricsJson(std::span(&live, 1)), metricsJson(std::span(&run, 1)));
  // After finish: no more steps, no more events.
  EXPECT_FALSE(session.step());
  EXPECT_FALSE(session.addEvent(eventAt(session.time(), ScenarioEvent::Ragdoll{})));
}

}  // namespace
}  // namespace handoff
