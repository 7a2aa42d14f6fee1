// A face-down fall gets the face-down get-up (issue 31). The pre-get-up gather pulls the settled
// ragdoll's joints toward the chosen clip's first frame; on a body that lies twisted (chest face
// down, pelvis on its side, a leg swung far out) the servos levered the body over, and it got up
// with the face-up clip. On main (3ae24ef): of the DeepMimic run ensemble's 22 face-down falls 15
// (68 %) got up with the prone clip (6 face up, 1 not standing by the end; a gather tipped the
// body over in 9); of the Mesh2Motion jog's 23 face-down trips 4 (17 %; tipped over in 22).
// After: 22 of 22 and 23 of 23.
#include "handoff/runner.h"
#include "support/ensemble.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace handoff {
namespace {

// One member: the DeepMimic run handed to a full ragdoll at `handoff` (anywhere in its cycle),
// at any yaw, pushed forward at the chest with `push` N s (a part of it sideways) or tripped
// (no push: it falls over its own momentum), then left to settle and get up.
struct Member {
  bool mesh2motion = false;  // Mesh2Motion's jog (retargeted DeepMimic get-ups) instead of the run
  double handoff = 0.0, yaw = 0.0, push = 0.0, side = 0.0;
  bool ran = false;
  std::string firstGather;                  // the facing the controller chose at the first settle ("" none)
  bool rolledOver = false;                  // a gather stopped because the body rolled over
  std::string getUp;                        // facing of the first get-up that ran ("" none)
  bool finished = false;                    // that get-up finished (stood up)
  double footJump = 0.0, pelvisJump = 0.0;  // its worst per-frame jumps [m]
};

std::string scenarioJson(const Member& m) {
  char events[512];
  std::snprintf(events, sizeof events,
                R"({ "time": 0.0, "type": "getup_allowed", "allowed": true },
      { "time": %.4f, "type": "ragdoll", "label": "fall" })",
                m.handoff);
  // Mesh2Motion gets the runner's default get-ups (the DeepMimic pair retargeted onto its rig).
  std::string text = m.mesh2motion ? R"({ "version": 1, "name": "prone_getup",
    "character": { "file": "../data/mesh2motion/human-base-animations.glb" },
    "clip": { "name": "Jog_Fwd_Loop", "wrap": "loop" },)"
                                   : R"({ "version": 1, "name": "prone_getup",
    "character": { "file": "../data/deepmimic/humanoid3d_run.bvh" },
    "clip": { "name": "humanoid3d_run", "wrap": "loop" },
    "recovery": {
      "supine": { "file": "../data/deepmimic/humanoid3d_getup_faceup.bvh" },
      "prone": { "file": "../data/deepmimic/humanoid3d_getup_facedown.bvh" } },)";
  text += R"( "root": { "position": [0, 0, 0], "yaw": )" + std::to_string(m.yaw) + R"( },
    "events": [ )" +
          events;
  if (m.push > 0.0) {
    char push[256];
    std::snprintf(push, sizeof push,
                  R"(, { "time": %.4f, "type": "impulse", "body": "chest", "impulse": [%.3f, 0, %.3f],
      "impulseSpace": "root", "label": "push" })",
                  m.handoff, m.push, m.side);
    text += push;
  }
  text += " ], \"endTime\": " + std::to_string(m.handoff + 12.0) + " }";
  return text;
}

void play(Member& m) {
  Result<Scenario> s =
      loadScenarioJson(scenarioJson(m), std::string(HANDOFF_SOURCE_DIR) + "/scenarios/prone_getup.json");
  if (!s) {
    ADD_FAILURE() << s.error();
    return;
  }
  RunOptions options;
  options.searchDirs = {HANDOFF_DATA_DIR};  // the runner's default get-ups (Mesh2Motion's)
  options.baselines = false;
  options.driveComparison = false;
  ScenarioRunner runner(options);
  const ScenarioResult r = runner.run(*s);
  m.ran = r.ok;
  if (!r.ok) ADD_FAILURE() << r.error;
  for (const CharacterEvent& e : r.events) {
    if (e.kind != CharacterEventKind::Gather) continue;
    const std::string detail = e.detail;
    if (m.firstGather.empty()) {
      if (detail.rfind("prone clip", 0) == 0) m.firstGather = "prone";
      if (detail.rfind("supine clip", 0) == 0) m.firstGather = "supine";
    }
    if (detail.find("rolled over") != std::string::npos) m.rolledOver = true;
  }
  if (!r.recoveries.empty()) {
    m.getUp = r.recoveries[0].facing;
    m.finished = r.recoveries[0].finished;
    m.footJump = r.recoveries[0].worstFootJump;
    m.pelvisJump = r.recoveries[0].worstPelvisJump;
  }
}

/// Every member that settled face down (the controller chose the prone clip at its first settle)
/// gets up with the prone clip (not rolled onto its back) and stands up by the end; the
/// ensemble holds enough such falls to say so (at least a third of its members).
void expectProneGetUps(const char* label, const std::vector<Member>& runs) {
  const int members = static_cast<int>(runs.size());
  int prone = 0, keptProne = 0, tipped = 0;
  std::vector<double> footJumps, pelvisJumps;
  for (size_t i = 0; i < runs.size(); ++i) {
    const Member& m = runs[i];
    ASSERT_TRUE(m.ran) << "member " << i;
    std::printf(
        "[%s] member %2zu: handoff %.2f s, yaw %6.1f, push %2.0f N s (side %5.1f): first gather %-6s%s, "
        "get-up %-6s %s\n",
        label, i, m.handoff, m.yaw, m.push, m.side, m.firstGather.empty() ? "-" : m.firstGather.c_str(),
        m.rolledOver ? " (rolled over)" : "", m.getUp.empty() ? "-" : m.getUp.c_str(),
        m.finished ? "stood up" : "");
    if (m.firstGather != "prone") continue;
    ++prone;
    // A gather may stop with the body tipped onto its side ("rolled over": the hold band) and the
    // body settle face down again; what counts is the clip it gets up with.
    if (m.rolledOver) ++tipped;
    const bool ok = m.getUp == "prone" && m.finished;
    if (ok) ++keptProne;
    footJumps.push_back(m.footJump);
    pelvisJumps.push_back(m.pelvisJump);
    EXPECT_TRUE(ok) << label << " member " << i << " settled face down but "
                    << (m.rolledOver ? "the gather rolled it over, " : "") << "got up with the "
                    << (m.getUp.empty() ? "no" : m.getUp) << " clip"
                    << (m.finished ? "" : ", not standing by the end");
  }
  std::sort(footJumps.begin(), footJumps.end());
  std::sort(pelvisJumps.begin(), pelvisJumps.end());
  std::printf(
      "[%s] %d of %d falls settled face down; %d of them (%.0f %%) got up with the prone clip; a gather "
      "stopped with the body tipped over in %d\n",
      label, prone, members, keptProne, prone > 0 ? 100.0 * keptProne / prone : 0.0, tipped);
  if (!footJumps.empty()) {
    std::printf(
        "[%s] their get-ups' worst per-frame jumps: foot median %.1f max %.1f mm, pelvis median %.1f max "
        "%.1f mm\n",
        label, footJumps[footJumps.size() / 2] * 1e3, footJumps.back() * 1e3,
        pelvisJumps[pelvisJumps.size() / 2] * 1e3, pelvisJumps.back() * 1e3);
  }
  if (test::kEnsembleStatistics) {
    EXPECT_GE(prone * 3, members) << label << ": too few face-down falls to say anything";
  }
}

// 32 falls of the DeepMimic run (handoff 0.3-1.0 s, any yaw; half tripped, a quarter pushed
// forward at the chest with 30 N s, a quarter with 60 N s, up to 30 % of it sideways).
TEST(ProneGetUp, AFaceDownFallGetsUpWithTheProneClip) {
  const int members = test::ensembleSize(32);
  const std::vector<Member> runs = test::runEnsemble<Member>(members, 31u, [](int, std::mt19937& rng) {
    Member m;
    m.handoff = test::uniform(rng, 0.3, 1.0);
    m.yaw = test::uniform(rng, -180.0, 180.0);
    const double pushes[4] = {0.0, 0.0, 30.0, 60.0};
    m.push = pushes[std::min(3, static_cast<int>(test::uniform(rng, 0.0, 4.0)))];
    m.side = test::uniform(rng, -0.3, 0.3) * m.push;
    play(m);
    return m;
  });
  expectProneGetUps("prone getup", runs);
}

// Another rig and clip: Mesh2Motion's jog tripped (handed to a ragdoll, no push) at 0.25-0.55 s,
// any yaw, 24 falls; its get-ups are the DeepMimic pair retargeted.
TEST(ProneGetUp, AFaceDownTripOfTheMesh2MotionJogGetsUpWithTheProneClip) {
  const int members = test::ensembleSize(24);
  const std::vector<Member> runs = test::runEnsemble<Member>(members, 131u, [](int, std::mt19937& rng) {
    Member m;
    m.mesh2motion = true;
    m.handoff = test::uniform(rng, 0.25, 0.55);
    m.yaw = test::uniform(rng, -180.0, 180.0);
    play(m);
    return m;
  });
  expectProneGetUps("prone getup mesh2motion", runs);
}

}  // namespace
}  // namespace handoff
