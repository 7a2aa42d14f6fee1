// The scenario runner (docs/SCENARIOS.md, SPEC.md section 7): plays a scenario on a Character in
// a Bullet world at its fixed frame step, executes the timed events, records a Replay, measures
// every handoff (per body: jump, inherited and post-step velocities, clamps), the time series
// the report plots, and checks the SPEC thresholds that apply. Also the suite behind
// `handoff demo`, the naive baselines and the report (metrics.json and report.html).
// ScenarioSession plays the same run one frame at a time (a live workbench steps it and adds
// events as the user clicks); ScenarioRunner::run is a session stepped to its end.
//
// Timing: frame k advances the scenario from k * dt to (k + 1) * dt. Events due at or before
// the frame's end time are applied around it in file order: `teleport`, `clip` and `wall` before
// the step (they change the animation input or the world the step sees), all others (`ragdoll`,
// `impulse`, `powered`, ...) right after the step, at the pose the frame ended on. So a
// `ragdoll` at 0.5 s commits the animated pose of t = 0.5 s and the first physics step is the
// next frame.
//
// Thread-safety: a ScenarioRunner and its sessions are used by one thread; separate runners are
// independent.
#pragma once

#include "handoff/controller.h"
#include "handoff/measure.h"
#include "handoff/replay.h"
#include "handoff/result.h"
#include "handoff/scenario.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace handoff {

/// One SPEC threshold (or scenario expectation) checked against a run. JSON: {"name", "value",
/// "threshold", "pass", ...}. `name` starts with its capability: "handoff.", "recovery.",
/// "powered.", "robustness.".
struct ThresholdCheck {
  std::string name;         ///< e.g. "handoff.no_pop_first_step".
  std::string description;  ///< What is measured and against what.
  std::string unit;         ///< Of value and threshold ("mm", "m/s", "count", ...).
  std::string comparison;   ///< "<=" (value must not exceed threshold) or ">=".
  double value = 0.0;       ///< The figure measured, in `unit`.
  double threshold = 0.0;   ///< The bound, in `unit`.
  bool ran = true;          ///< False: the check could not run (note says why); then pass is false.
  bool pass = false;
  std::string note;
};

/// Per-frame figures (one entry per replay frame, the same numbers the replay carries).
struct TimeSeries {
  std::vector<double> time;             ///< [s]
  std::vector<std::string> state;       ///< characterStateName
  std::vector<Vec3> pelvisPosition;     ///< Pelvis body centre of mass (engine pose). [m]
  std::vector<double> pelvisHeight;     ///< [m]
  std::vector<double> pelvisSpeed;      ///< [m/s]
  std::vector<double> maxJointStretch;  ///< [m] (0 unless Ragdoll or Powered: no joint is simulated)
  std::vector<double> settleWindow;     ///< [s]
  std::vector<double> blendWeight;      ///< [0, 1]
  std::vector<double> driveWeight;      ///< [0, 1]
  std::vector<int> contacts;
  std::vector<int> activeBodies;
  std::vector<int> sleepingBodies;
};

/// The same handoff with a naive baseline (HandoffSettings::mode), for comparison.
struct BaselineResult {
  std::string mode;
  std::optional<HandoffMetrics> handoff;
  std::string replayFile;  ///< Written .glb (file name only), empty if none.
};

/// The same scenario run with the other drive solver (RunOptions::driveComparison): a
/// comparison the report shows beside the run, like the naive baselines, not a SPEC threshold
/// row. A scenario run with the implicit drive (the default) shows what the explicit one does on
/// the same frames, and the reverse.
struct DriveComparison {
  std::string driveMode;                  ///< "explicit" or "implicit".
  bool ok = false;                        ///< Ran to the end.
  std::optional<HandoffMetrics> powered;  ///< The first powered entry.
  double poweredMaxPositionError = 0.0;   ///< [m]
  double poweredMaxRmsJointError = 0.0;   ///< [rad]
  bool poweredReturned = false;
  bool knockedOut = false;  ///< A "knockout" event: the powered ragdoll fell into a full ragdoll.
  std::vector<HitReactionMetrics> hitReactions;
  /// The checks of that run whose names start with "powered." (what they would say; they count
  /// nowhere).
  std::vector<ThresholdCheck> checks;
};

/// A fall that landed on its feet (Character::landings, LandingSettings). Its continuity back to
/// animation is the ReturnMetrics entry with from "landing".
struct LandingMetrics {
  double time = 0.0;           ///< Landed (animated again). [s]
  std::string from;            ///< "ragdoll" or "powered".
  double airTime = 0.0;        ///< From leaving the world to the touch-down. [s]
  double touchdownTime = 0.0;  ///< From the touch-down to the landing. [s]
  double fallHeight = 0.0;     ///< Pelvis drop from leaving the world to the landing. [m]
  double footOffset = 0.0;     ///< The checks' figures at the landing (LandingRecord). [m]
  double pelvisHeight = 0.0;   ///< [1]
  double tilt = 0.0;           ///< [rad]
  double angularSpeed = 0.0;   ///< [rad/s]
  double exitBlend = 0.0;      ///< The display's blend into the animation. [s]
};

/// A knock-back (an `impulse` event with "knockback": true): the throw, the flight, the end.
struct KnockbackMetrics {
  double time = 0.0;            ///< [s]
  double impulse = 0.0;         ///< |impulse|. [N s]
  double velocityChange = 0.0;  ///< |impulse| / total mass. [m/s]
  /// Pelvis (body centre of mass) horizontal displacement from the knock-back to the first
  /// touch-down after a flight (Character::flights); 0 while it has not touched down. [m]
  double flightDistance = 0.0;
  double flightTime = 0.0;  ///< From the knock-back to that touch-down. [s]
  bool touchedDown = false;
  /// How it ended: "landing" (on its feet), "getup" (a get-up finished), "" (neither by the end).
  std::string recovery;
  bool recovered = false;  ///< Animated again, standing, by the end.
  // Bookkeeping (not in metrics.json): the character's counts at the knock-back.
  Vec3 pelvisStart{0.0};
  size_t flightsBefore = 0, landingsBefore = 0, recoveriesBefore = 0;
};

struct ScenarioResult {
  std::string name;
  std::string description;
  std::string source;  ///< Scenario file or "built-in".
  std::string character;
  std::string clip;
  int jointCount = 0;      ///< Skeleton joints (the replay's animated nodes).
  int bodyCount = 0;       ///< Ragdoll bodies.
  std::string pelvisBody;  ///< Name of the body the pelvis series follow.
  bool ok = false;         ///< Ran to the end (false: error says why).
  std::string error;
  std::vector<std::string> notRun;  ///< Events or features that could not run, with the reason.
  double endTime = 0.0;             ///< [s]
  double dt = 0.0;                  ///< Frame step. [s]
  int frames = 0;                   ///< Frames played.
  std::vector<HandoffMetrics> handoffs;
  std::vector<RecoveryMetrics> recoveries;
  std::vector<HitReactionMetrics> hitReactions;
  /// Every joint that broke, with the load before and the split ragdoll after (measure.h).
  std::vector<JointBreakMetrics> jointBreaks;
  std::vector<CharacterEvent> events;
  TimeSeries series;
  std::vector<ThresholdCheck> checks;
  std::vector<BaselineResult> baselines;
  std::string driveMode;  ///< The scenario's drive solver ("explicit", "implicit").
  std::vector<DriveComparison> driveComparisons;
  /// Powered mode (SPEC sections 5 and 6): largest body distance to the animated pose and
  /// largest RMS joint error while powered; whether it was back to animation at the end.
  double poweredMaxPositionError = 0.0;  ///< [m]
  double poweredMaxRmsJointError = 0.0;  ///< [rad]
  bool poweredReturned = false;
  /// Every return to animation (a finished get-up, a powered return, a landing) and its blend: the
  /// kinematic bodies' and the displayed attachment points' per-frame motion beyond the resumed
  /// animation's own (ReturnMeasure).
  std::vector<ReturnMetrics> returns;
  std::vector<LandingMetrics> landings;      ///< Falls that landed on their feet.
  std::vector<KnockbackMetrics> knockbacks;  ///< Knock-backs, in event order.
  /// The look-at's bone against the gaze (Scenario::lookAt), when the scenario has one.
  std::optional<LookAtMetrics> lookAt;
  /// Every limb lag ("limb_lag" event) until its return to animation (LimbLagMeasure).
  std::vector<LimbLagMetrics> limbLags;
  /// Every prop in the hand (Scenario::props): its grip while held and its release (PropMeasure).
  std::vector<PropMetrics> props;
  std::string replayFile;  ///< Written .glb (file name only), empty if none.
  double seconds = 0.0;    ///< Wall-clock run time (not part of the deterministic output). [s]
  bool passed() const;     ///< ok, nothing left un-run, and every check passes.
};

struct RunOptions {
  /// Where file names in the scenario are also looked up (after the scenario's folder).
  std::vector<std::string> searchDirs;
  /// Run the naive baselines (zero velocity, bind pose) for each ragdoll handoff of an
  /// "inherit" scenario, over baselineSeconds after the first handoff. [default true]
  bool baselines = true;
  double baselineSeconds = 1.0;  ///< [s] [> 0] [default 1]
  /// Run each scenario with a powered or partial event once more with the other drive solver
  /// (ScenarioResult::driveComparisons). [default true]
  bool driveComparison = true;
  /// Window after a handoff for the explosion and anchor drift checks. [s] [>= 0] [default 2]
  double followWindow = 2.0;
  /// Default get-up clips (relative to searchDirs) for scenarios that allow get-up without
  /// naming clips. [default the DeepMimic pair below]
  std::string defaultSupine = "deepmimic/humanoid3d_getup_faceup.bvh";
  std::string defaultProne = "deepmimic/humanoid3d_getup_facedown.bvh";
  /// Complete a get-up clip that ends below standing (handoff::completeGetUpClip) against the
  /// standing reference of the supine/prone pair (the last frame of the one that ends tallest;
  /// only when both clips animate one rig; docs/TUNING.md gives the tail the default face-up clip
  /// gets). [default true]
  bool completeGetUps = true;
  /// Creates the physics world every run plays in (the scenario's own run, its baselines and the
  /// drive comparison), from the WorldSettings the scenario asks for (gravity, solver
  /// iterations): how a run goes onto another engine (`handoff demo --engine ode`:
  /// handoff::createOdeWorld). Must return a world. [default empty: handoff::createBulletWorld]
  std::function<std::unique_ptr<PhysicsWorld>(const WorldSettings&)> createWorld;
};

class ScenarioSession;
namespace runner_detail {
struct Loaded;
}

/// Runs scenarios, caching imported files and built ragdolls between runs. Thread-safety: one
/// thread at a time (the cache is not synchronised); separate runners are independent.
class ScenarioRunner {
 public:
  explicit ScenarioRunner(RunOptions options = {});
  ~ScenarioRunner();
  ScenarioRunner(const ScenarioRunner&) = delete;
  ScenarioRunner& operator=(const ScenarioRunner&) = delete;

  /// Runs one scenario (and its baselines). `replay` receives the recorded run; `baselineReplays`
  /// the baselines' (same order as ScenarioResult::baselines). Errors (files, a character that
  /// does not map) end up in ScenarioResult::error with ok = false.
  ScenarioResult run(const Scenario& scenario, Replay* replay = nullptr,
                     std::vector<Replay>* baselineReplays = nullptr);

  const RunOptions& options() const { return options_; }

 private:
  friend class ScenarioSession;
  struct Impl;
  /// One session started on `loaded` and stepped to `endTime`, finished.
  ScenarioResult play(const Scenario& scenario, std::shared_ptr<const runner_detail::Loaded> loaded,
                      HandoffMode mode, double endTime, Replay* replay);
  RunOptions options_;
  std::unique_ptr<Impl> impl_;
};

/// A scenario played one frame at a time: exactly what ScenarioRunner::run does for the
/// scenario's own run (the same events, steps, measures, replay frames and checks; not the
/// baselines or the drive comparison, which are sessions of their own), so a live session and
/// `handoff run` on the same scenario give bit-identical frames and figures.
///
///   auto session = ScenarioSession::start(runner, scenario);   // t = 0, frame 0 recorded
///   while ((*session)->step()) draw((*session)->character());
///   ScenarioResult result = (*session)->finish();
///
/// Thread-safety: used by one thread; it uses its runner's cache, so sessions of one runner
/// run on that runner's thread.
class ScenarioSession {
 public:
  /// Loads through the runner's cache (imported files and built ragdolls are reused), creates
  /// the world and the character at t = 0, applies the events due at t = 0 and records frame 0.
  /// `mode` replaces the scenario's settings.handoffMode when given. `replay` (optional, owned
  /// by the caller, outliving the session) receives one frame per step. The runner must outlive
  /// the session. Errors: a file, clip or field of the scenario (named), or the character.
  static Result<std::unique_ptr<ScenarioSession>> start(ScenarioRunner& runner, const Scenario& scenario,
                                                        std::optional<HandoffMode> mode = std::nullopt,
                                                        Replay* replay = nullptr);
  ~ScenarioSession();
  ScenarioSession(const ScenarioSession&) = delete;
  ScenarioSession& operator=(const ScenarioSession&) = delete;

  /// Plays the next frame (runner.h's timing at the top): the events due by its end before the
  /// step, Character::preStep, the world step, Character::postStep, the measures, the events
  /// due after the step, one replay frame and one time-series entry. Returns false (and does
  /// nothing) once frameCount() frames are played, after finish(), or after a frame failed
  /// (the result's error says why).
  bool step();
  int frame() const;       ///< Frames played so far. [0, frameCount()]
  int frameCount() const;  ///< Frames up to the end time: max(1, round(endTime / dt)).
  double time() const;     ///< Scene time after the frames played: frame() * dt. [s]
  double dt() const;       ///< The scenario's frame step. [s]

  /// Adds an event as if it had been in the file, kept in scenario() (saveScenarioJson(
  /// scenario()) replays this session bit for bit). Every type but `end` (see setEndTime).
  /// `event.time` >= time(); an event at time() (the frame on show, already played) acts in the
  /// next frame and is kept at that frame's end time, (frame() + 1) * dt. It goes after the
  /// events of equal or earlier time. Refused (nothing changed) when the event is before time(),
  /// after endTime, the scenario would not load back (a value out of range, named by its JSON
  /// path), a body or clip it names does not exist, or its clip file does not load.
  Status addEvent(const ScenarioEvent& event);
  /// Moves the end time (frameCount() follows). Refused before time(), before the last event,
  /// or out of range.
  Status setEndTime(double endTime);

  const Scenario& scenario() const;  ///< The scenario with the events added so far.
  const Character& character() const;
  const PhysicsWorld& world() const;
  const RagdollAsset& asset() const;
  /// The character's events so far, every one however long the session (drained from
  /// Character::events(), a bounded ring, at the end of every frame).
  std::span<const CharacterEvent> characterEvents() const;

  /// The figures so far, with the checks evaluated on the frames played (frames, endTime: the
  /// frames played).
  ScenarioResult snapshot() const;
  /// Ends the session and returns its result (what ScenarioRunner::run returns, without the
  /// baselines, drive comparisons and wall-clock seconds); fills the replay's events and boxes.
  /// Later calls return the same result.
  ScenarioResult finish();

 private:
  friend class ScenarioRunner;
  struct Impl;
  explicit ScenarioSession(std::unique_ptr<Impl> impl);
  /// A session on files already loaded (a run and its baselines share them), up to `endTime`.
  static Result<std::unique_ptr<ScenarioSession>> startLoaded(
      ScenarioRunner& runner, const Scenario& scenario, std::shared_ptr<const runner_detail::Loaded> loaded,
      HandoffMode mode, double endTime, Replay* replay);
  std::unique_ptr<Impl> impl_;
};

/// The built-in suite of `handoff demo` (SPEC section 7): the example scenarios found
/// in `scenarioDir` by file stem, in a fixed order. Missing files are errors.
Result<std::vector<Scenario>> builtInSuite(const std::string& scenarioDir);

/// Progress callback of runToFolder: the finished scenario, its 1-based index and the count.
using RunProgress = std::function<void(const ScenarioResult&, int index, int count)>;

/// What `handoff demo` and `handoff run` do: runs every scenario (with its baselines), writes
/// folder/<name>.glb (and folder/<name>.<baseline mode>.glb), then folder/metrics.json and
/// folder/report.html. Errors only for the folder (a scenario that fails to run is reported in
/// its result).
Result<std::vector<ScenarioResult>> runToFolder(std::span<const Scenario> scenarios,
                                                const std::string& folder, const RunOptions& options,
                                                const RunProgress& progress = {});

/// metrics.json: every figure of the report (schema in docs/SCENARIOS.md).
std::string metricsJson(std::span<const ScenarioResult> results);
/// report.html: a self-contained page (inline SVG, no scripts from outside) drawn from the same
/// JSON document metricsJson returns (embedded in the page as <script type="application/json"
/// id="metrics">).
std::string reportHtml(std::span<const ScenarioResult> results);

}  // namespace handoff
