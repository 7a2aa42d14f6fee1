// The live workbench behind `handoff live` (docs/WORKBENCH.md): a scenario being written. The
// session is a ScenarioSession (handoff/runner.h) on a Scenario that starts with the character,
// its ragdoll, the chosen clip and no events; every trigger from the page is appended as a
// scenario event at the next frame's time, so saveScenarioJson(session.scenario()) is the
// session and `handoff run` on it plays the same frames. Tuning (joint limits and drives, body
// masses and radii, the handoff and recovery settings) starts a new session on the same scenario
// with the new ragdoll and fast-forwards it to just before the last trigger.
//
// No HTTP here: commands and results are JSON values, frames are JSON text; the server
// (server.cpp) holds the one Workbench behind a mutex. Not thread-safe.
#pragma once

#include "handoff/asset.h"
#include "handoff/import.h"
#include "handoff/replay.h"
#include "handoff/result.h"
#include "handoff/runner.h"
#include "handoff/scenario.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace handoff::live {

struct WorkbenchOptions {
  /// The data folder: the runner's search folder, and the only folder requests may name
  /// character files in.
  std::filesystem::path dataDir;
  /// Where saves and exports go (created when needed).
  std::filesystem::path outDir = "out/live";
  /// Private scratch folder: tuned assets, the rig glb (created by the server: a TempFolder).
  std::filesystem::path scratchDir;
  /// A re-simulation after tuning starts streaming this long before the last trigger. [s] [>= 0]
  double leadIn = 0.5;
  /// The session stops (pauses, with a message) at this scenario time. [s] [default 600]
  double maxTime = 600.0;
  /// The figures panel's checks are refreshed every this many frames. [>= 1] [default 30]
  int checksEvery = 30;
  /// A session start's fast-forward (after tuning, replay) gives up after this long, leaving the
  /// previous session running. [s] [default 20]
  double maxStartSeconds = 20.0;
};

/// Smallest time step tuning may set (the scenario loader takes any in (0, 0.1]). [s]
inline constexpr double kMinDt = 0.001;

/// Edits of one joint's final values (RagdollAsset::joints, relative to the bind pose, in J).
struct JointEdit {
  std::optional<Vec3> lower, upper;  ///< [rad]
  std::optional<double> stiffness, damping, maxTorque;
};
/// Edits of one body.
struct BodyEdit {
  std::optional<double> mass;    ///< [kg] (inertia scales with it)
  std::optional<double> radius;  ///< Capsule or sphere radius [m] (inertia follows the shape)
};
/// What the page tuned on top of the scenario's ragdoll.
struct Tuning {
  /// Group presets (anatomical, before the bind-pose shift): BuildOptions::overridesJson
  /// "groups", merged into the scenario's ragdoll.build.joints. Built ragdolls only.
  nlohmann::json groups = nlohmann::json::object();
  std::map<std::string, JointEdit> joints;  ///< By joint name.
  std::map<std::string, BodyEdit> bodies;   ///< By body name.
  bool empty() const { return groups.empty() && joints.empty() && bodies.empty(); }
};

/// The placement context of a trigger: the event time and where the character is.
struct TriggerContext {
  double time = 0.0;            ///< Event time. [s]
  Vec3 pelvis{0.0};             ///< Pelvis body centre of mass. [m]
  Vec3 heading{1.0, 0.0, 0.0};  ///< Horizontal unit direction the character moves or faces.
  Transform worldFromRoot;      ///< The displayed root.
  double groundHeight = 0.0;    ///< Where walls and boxes stand. [m]
};

/// A page command ({"type": "ragdoll" | "powered" | "partial" | "animate" | "getup_allowed" |
/// "teleport" | "clip" | "wall" | "box" | "impulse", ...}, docs/WORKBENCH.md) as the scenario
/// event it stands for, at ctx.time. Only the shape is checked here (types, finite numbers);
/// ScenarioSession::addEvent checks ranges and names as the scenario loader would.
Result<ScenarioEvent> eventFromCommand(const nlohmann::json& command, const TriggerContext& ctx);

/// The asset with the joint and body edits applied (limits and drives set, masses and radii
/// changed with the inertia scaled: by the mass ratio, and per axis by the ratio of the shape's
/// own inertia after and before a radius change). Errors name the joint or body.
Result<RagdollAsset> applyEdits(const RagdollAsset& asset, const Tuning& tuning);

/// Mean, median, 95th percentile and maximum of samples (negative ones skipped: unfilled). [ms]
struct TimeStats {
  double mean = 0.0, median = 0.0, p95 = 0.0, max = 0.0;
  int count = 0;
};
TimeStats timeStats(const std::vector<double>& samples);

/// The figures of a run as metrics.json has them (one scenario), for the page and the tests.
std::string resultJson(const ScenarioResult& result);
/// The checks alone, with metrics.json's fields (value null when the check did not run).
nlohmann::json checksJson(const ScenarioResult& result);

class Workbench {
 public:
  explicit Workbench(WorkbenchOptions options);
  ~Workbench();
  Workbench(const Workbench&) = delete;
  Workbench& operator=(const Workbench&) = delete;

  /// The scenario `handoff live FILE` starts from: the file (relative to the data folder when
  /// it is inside it), its first clip looping from 0, the runner's defaults, no events.
  Scenario scenarioForCharacter(const std::string& file) const;

  /// Opens a scenario (its events kept, an `end` event dropped): imports the character, starts
  /// a session. On error nothing changes (the previous session keeps running).
  Status open(Scenario scenario, std::string origin);
  /// The character file just opened is an upload (a save copies it next to the scenario).
  void markUploaded();

  // --- playback ------------------------------------------------------------------------------
  bool playing() const { return playing_; }
  void setPlaying(bool playing) { playing_ = playing; }
  double speed() const { return speed_; }
  void setSpeed(double speed);  ///< Clamped to [0.05, 4].
  /// Real time: advances the scenario by wallSeconds * speed while playing, stepping whole
  /// frames (at most maxFrames). Returns the frames stepped.
  int advance(double wallSeconds, int maxFrames = 8);
  /// One frame (also while paused). False at maxTime.
  bool step();

  /// A page command: playback ("play", "pause", "step", "speed") or a trigger (see
  /// eventFromCommand), appended to the scenario. Returns {"ok": true, "event": {...},
  /// "frame": n} or an error.
  Result<nlohmann::json> command(const nlohmann::json& command);
  /// Tuning (docs/WORKBENCH.md): {"groups": {...}, "joints": {...}, "bodies": {...},
  /// "settings": {...}, "recovery": {...}, "reset": bool (every edit and setting back to the
  /// opened scenario's), "resetSettings": bool}. Rebuilds, starts a
  /// new session and fast-forwards it to leadIn before the last trigger. On error nothing
  /// changes.
  Result<nlohmann::json> tune(const nlohmann::json& request);
  /// Re-simulates from leadIn before the last trigger with the current values.
  Status replayLastTrigger();

  /// Writes outDir/<name>.json (the scenario, ragdoll.asset = <name>.asset.json) and
  /// outDir/<name>.asset.json (the session's asset), after stepping to the last event if one is
  /// pending. Uploaded character files are copied next to them. Returns the written paths.
  /// Files are never written through a symlink, nor over an existing file unless `overwrite`.
  Result<nlohmann::json> save(const std::string& name, bool overwrite = false);
  /// Writes outDir/<name>.glb: the session's replay so far (played again to its end, with its
  /// events and static boxes). Written as save() writes.
  Result<std::string> exportReplay(const std::string& name, bool overwrite = false);
  /// The files of outDir that save(name) (or exportReplay(name) when `replay`) would replace:
  /// existing files or symlinks. Empty when the name is unusable.
  std::vector<std::string> existingOutputs(const std::string& name, bool replay) const;

  // --- what the page reads --------------------------------------------------------------------
  /// The description: character, clips, bodies, joints (limits, drives), settings, map report,
  /// validator findings, static boxes, playback, timing. Changes when stateVersion() does.
  nlohmann::json state() const;
  int stateVersion() const { return stateVersion_; }
  /// The scenario events and the character's events. Changes when logVersion() does.
  nlohmann::json log() const;
  int logVersion() const { return logVersion_; }
  /// The latest frame as compact JSON text (docs/WORKBENCH.md, "Frame").
  const std::string& frameJson() const { return frameText_; }
  /// Counts encoded frames (a new frame to stream when it changes).
  std::uint64_t frameSerial() const { return frameSerial_; }
  int frame() const;
  double time() const;
  /// The session's figures and checks so far (metrics.json's scenario entry).
  std::string metrics() const;
  /// The rig glb: the current session's skeleton, bodies, joints, skin, one frame.
  std::string rigGlbPath() const { return rigPath_.string(); }
  int sessionId() const { return sessionId_; }
  const Scenario& scenario() const;
  const RagdollAsset& asset() const;
  std::string assetJson() const;
  /// Server time per frame (step + frame encoding), over the last 600 frames: wall-clock time,
  /// and the simulation thread's CPU time (what the frame costs when the machine is shared). [ms]
  struct Timing {
    TimeStats wall, cpu;
  };
  Timing timing() const;
  /// timing() and lastStartMs() as the page shows them.
  nlohmann::json timingJson() const;
  /// The last frame's server time: wall clock and thread CPU. [ms]
  double lastFrameMs() const { return lastMs_; }
  double lastFrameCpuMs() const { return lastCpuMs_; }
  /// Wall time of the last session start (import, build, session start, fast-forward). [ms]
  double lastStartMs() const { return lastStartMs_; }
  /// Messages for the page (errors of asynchronous work, the maxTime stop); cleared on read.
  std::vector<std::string> takeNotices();

 private:
  struct Session;
  Status startSession(const Scenario& scenario, const Tuning& tuning, double fastForwardTo, bool keepPlaying);
  /// Encodes the latest frame; `stepMs` and `stepCpuMs` (wall and CPU time of its step) plus the
  /// encoding go into timing().
  void encodeFrame(double stepMs, double stepCpuMs);
  void bumpState() { ++stateVersion_; }
  void bumpLog() { ++logVersion_; }
  TriggerContext triggerContext(double time) const;
  /// The session's scenario ending at the frame on show (after stepping to a pending event).
  Result<Scenario> scenarioSoFar();
  double lastTriggerTime() const;

  WorkbenchOptions options_;
  RunOptions runOptions_;
  std::unique_ptr<ScenarioRunner> runner_;
  std::unique_ptr<Session> session_;
  std::shared_ptr<const ImportedAsset> character_;
  std::string characterPath_;  ///< Resolved character file.
  std::string origin_;         ///< Where the scenario came from (for the page).
  bool uploaded_ = false;      ///< The character file is an upload (copied on save).
  Scenario base_;              ///< The scenario without the session's events and end time.
  Scenario opened_;            ///< base_ as opened (what a reset of the settings goes back to).
  Tuning tuning_;
  HumanoidMapReport mapReport_;  ///< How the character maps (its findings are the map notes).
  std::vector<Finding> findings_;
  bool playing_ = true;
  double speed_ = 1.0;
  double accumulator_ = 0.0;
  int sessionId_ = 0;
  int stateVersion_ = 1;
  int logVersion_ = 1;
  int assetCount_ = 0;
  std::uint64_t characterEventsSeen_ = 0;  ///< Character::events().total() at the last bump.
  std::string frameText_;
  std::uint64_t frameSerial_ = 0;
  std::string checksText_ = "[]";
  std::string timingText_ = "{}";
  std::filesystem::path rigPath_;
  std::vector<double> frameMs_, frameCpuMs_;
  double lastMs_ = 0.0, lastCpuMs_ = 0.0;
  std::size_t frameMsNext_ = 0;
  double lastStartMs_ = 0.0;
  std::vector<std::string> notices_;
};

}  // namespace handoff::live
