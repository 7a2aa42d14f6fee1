// The state of one ScenarioSession (runner.h) shared by the files that implement it:
// session.cpp (set-up and the public calls), session_events.cpp (the animation and the scenario
// events), session_frame.cpp (one frame, its measures and the result). Internal to the runner.
#pragma once

#include "handoff/runner.h"

#include "runner/runner_internal.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace handoff {

using runner_detail::Loaded;

struct ScenarioSession::Impl {
  runner_detail::Cache* cache = nullptr;
  RunOptions options;
  Scenario s;
  std::shared_ptr<const Loaded> l;
  HandoffMode mode = HandoffMode::Inherit;
  Replay* replay = nullptr;
  double dt = 0.0;
  int substeps = 1;
  int frames = 1;
  int frame = 0;
  bool failed = false;
  bool finished = false;

  std::unique_ptr<PhysicsWorld> world;
  std::vector<ReplayStaticBox> boxes;
  CharacterSettings cs;
  std::unique_ptr<Character> ch;

  // Get-up clips loaded when an added `getup_allowed` first allows a get-up.
  std::optional<GetUpClip> supine, prone;
  // The clip the game plays after a landing (Scenario::recovery.landing), and landings seen.
  std::shared_ptr<const Clip> landingClip;
  std::uint64_t landingsSeen = 0;
  // Clips of the `clip` events in event order (the loaded ones, then those of added events).
  std::vector<std::shared_ptr<const Clip>> switches;

  // Animation state.
  const Clip* clip = nullptr;
  std::shared_ptr<const Clip> clipHold;  // keeps a switched clip alive
  WrapMode wrap = WrapMode::Clamp;
  double clipStart = 0.0;  // clip time at scene time clipSceneStart
  double clipSceneStart = 0.0;
  double clipSpeed = 1.0;  // clip seconds per scene second (0: the pose at clipStart, held)
  Transform root;
  size_t nextSwitch = 0;
  size_t nextEvent = 0;
  bool teleportPending = false;
  std::vector<size_t> postEvents;  // indexes into s.events
  std::vector<Transform> locals, dense, poses;

  // Measures (measure.h), each filling its entry of the result.
  int pelvisJoint = -1;
  int pelvisBody = 0;
  HandoffMeasure handoff;
  FollowMeasure follow;
  // A full ragdoll's energy (declared after the world: removes its listeners before it goes).
  EnergyMeasure energy;
  int openHandoff = -1;  // the handoff followed (index in result.handoffs)
  HitReactionMeasure hit;
  int openHit = -1;  // the hit reaction followed (index in result.hitReactions)
  std::optional<RecoveryJumpMeasure> recoveryJumps;
  JumpFigures recoveryFigures;  // of the newest recovery
  PoweredTrackingMeasure poweredTracking;
  JointBreakMeasure jointBreaks;
  PoweredTrackingMetrics poweredFigures;
  runner_detail::RunCounters counters;
  Vec3 lastPelvisWorld{0.0};
  std::optional<ReturnMeasure> returns;
  std::vector<Transform> resumedNow, resumedBefore;  // the clip at this frame and the one before
  // The look-at (Scenario::lookAt): its joint, the local rotation it gave this frame, its measure.
  int lookAtJoint = -1;
  Quat lookAtAsked{1.0, 0.0, 0.0, 0.0};
  std::optional<LookAtMeasure> lookAtMeasure;
  LookAtMetrics lookAtFigures;
  LimbLagMeasure limbLagMeasure;
  PropMeasure propMeasure;
  std::vector<int> propIndex;  // per Scenario::props, the Character's prop index
  std::vector<Transform> lookAtModels;

  ScenarioResult result;

  Status create();
  Status createWorld();
  void makeSettings();
  void startReplay();
  void sampleAt(double sceneTime, std::span<Transform> out) const;
  void lookAt(std::span<Transform> animation);
  bool due(double t) const;
  bool applyPre(const ScenarioEvent& e);
  void collectDue(double t);
  bool playFrame();
  void stepWorld();
  void observe(double t, const AnimationInput& input);
  void measureRecovery();
  void recordFrame(double t, bool first);
  void appendSeries(double t, bool first);
  ReplayFrame replayFrame(double t) const;
  void notRun(const ScenarioEvent& e, const std::string& why);
  void measure(const HandoffRecord& record, double t, const char* kind);
  void commit(double t);
  std::vector<double> partialWeights(const ScenarioEvent::Partial& p) const;
  void limbLag(const ScenarioEvent& e, double t);
  void poweredEntry(const ScenarioEvent& e, double t, const Status& st, size_t recordsBefore);
  void runPostEvents(double t);
  void impulse(const ScenarioEvent& e, double t);
  void powered(const ScenarioEvent& e, double t);
  void knockback(const ScenarioEvent& e, double t);
  void measureKnockbacks();
  void partial(const ScenarioEvent& e, double t);
  void fillEnd(ScenarioResult& r, int framesPlayed) const;
  /// How far the result has read the character's histories (History sequence numbers).
  struct Cursors {
    std::uint64_t events = 0, landings = 0;
  };
  Cursors cursors;
  /// The character's new events and landings into `r`, and the figures of its retained
  /// recoveries and landings that change after they are recorded (finished, exit blends): run
  /// every frame, so that runs of any length keep every item (HistorySettings bounds the rings).
  void drainInto(ScenarioResult& r, Cursors& c) const;
  const GetUpClip* getUp(Facing facing) const;
  Status prepareEvent(const ScenarioEvent& e, size_t index);
};

}  // namespace handoff
