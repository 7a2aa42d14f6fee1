// ScenarioSession: one frame, the measures that follow it and the result (session_impl.h).
#include "runner/session_impl.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string_view>
#include <utility>

namespace handoff {

// ---------------------------------------------------------------------------------------------
// Measures

// Measures a commit (a `ragdoll` handoff or a powered entry) from the Character's record and
// follows it (a commit the Character refused is listed, not followed).
void ScenarioSession::Impl::measure(const HandoffRecord& record, double t, const char* kind) {
  result.handoffs.push_back(handoff.begin(*ch, record, t, kind));
  result.handoffs.back().mode = scenarioHandoffModeName(mode);
  if (!record.committed) return;
  openHandoff = static_cast<int>(result.handoffs.size()) - 1;
  follow.begin(t, options.followWindow);
  if (std::string_view(kind) == "handoff" && ch->state() == CharacterState::Ragdoll) {
    energy.begin(*world, *ch, t, options.followWindow, result.handoffs.back());
  } else {
    energy.end();
  }
}

// After postStep: the follow-ups of the open handoff and hit reaction, the recovery's jumps.
void ScenarioSession::Impl::observe(double t, const AnimationInput& input) {
  if (follow.open()) follow.observe(*ch, t, result.handoffs[static_cast<size_t>(openHandoff)]);
  if (energy.open()) energy.observe(*ch, t, result.handoffs[static_cast<size_t>(openHandoff)]);
  if (hit.open()) hit.observe(*ch, input, t, result.hitReactions[static_cast<size_t>(openHit)]);
  if (ch->blockingRepresentations() != 1) ++counters.blockingViolations;
  jointBreaks.observe(*ch, result.jointBreaks);
  measureRecovery();
  // The animation the character returns to: the played clip, this frame and the one before, on
  // the root it plays on now.
  sampleAt(t, resumedNow);
  sampleAt(std::max(clipSceneStart, t - dt), resumedBefore);
  returns->observe(*ch, root, resumedNow, resumedBefore, t, result.returns);
  measureKnockbacks();
  if (limbLagMeasure.open())
    limbLagMeasure.observe(*ch, root, resumedNow, resumedBefore, t, result.limbLags.back());
  if (lookAtMeasure) {
    lookAtMeasure->observe(*ch, lookAtAsked, s.lookAt->target, lookAtFigures);
    result.lookAt = lookAtFigures;
  }
}

// A knock-back's flight ends at the first touch-down after it.
void ScenarioSession::Impl::measureKnockbacks() {
  for (KnockbackMetrics& k : result.knockbacks) {
    if (k.touchedDown || !ch->flights().retained(k.flightsBefore)) continue;
    const FlightRecord& f = ch->flights().at(k.flightsBefore);
    const Vec3 d = f.pelvisAtTouchdown - k.pelvisStart;
    k.flightDistance = std::sqrt(d.x * d.x + d.z * d.z);
    k.flightTime = f.touchdown - k.time;
    k.touchedDown = true;
  }
}

// Recovery jumps of the displayed pelvis and feet beyond the get-up clip's own motion, into the
// newest recovery's metrics.
void ScenarioSession::Impl::measureRecovery() {
  while (result.recoveries.size() < ch->recoveries().total()) {
    result.recoveries.push_back({});
    recoveryFigures = {};
  }
  recoveryJumps->observe(*ch, recoveryFigures);
  if (result.recoveries.empty()) return;
  result.recoveries.back().worstPelvisJump = recoveryFigures.pelvisJump;
  result.recoveries.back().worstFootJump = recoveryFigures.footJump;
}

const GetUpClip* ScenarioSession::Impl::getUp(Facing facing) const {
  const std::optional<GetUpClip>& own = facing == Facing::Supine ? supine : prone;
  if (own) return &*own;
  const std::optional<GetUpClip>& loaded = facing == Facing::Supine ? l->supine : l->prone;
  return loaded ? &*loaded : nullptr;
}

// One frame of the record: the time series entry (and the powered tracking, which follows the
// frame's own events), then the replay frame showing the same figures.
void ScenarioSession::Impl::recordFrame(double t, bool first) {
  ch->ragdoll().readBodyPoses(poses);
  appendSeries(t, first);
  if (!first) {
    poweredTracking.observe(*ch, poweredFigures);
    result.poweredMaxPositionError = poweredFigures.maxPositionError;
    result.poweredMaxRmsJointError = poweredFigures.maxRmsJointError;
  }
  if (replay) replay->frames.push_back(replayFrame(t));
}

void ScenarioSession::Impl::appendSeries(double t, bool first) {
  const StepStats& stats = world->lastStepStats();
  const Vec3 pelvisWorld = poses[static_cast<size_t>(pelvisBody)].translation;
  TimeSeries& ts = result.series;
  ts.time.push_back(t);
  ts.state.push_back(characterStateName(ch->state()));
  ts.pelvisPosition.push_back(pelvisWorld);
  ts.pelvisHeight.push_back(pelvisWorld.y);
  ts.pelvisSpeed.push_back(first ? 0.0 : glm::length(pelvisWorld - lastPelvisWorld) / dt);
  lastPelvisWorld = pelvisWorld;
  // Joints between kinematic bodies are not simulated (the animation moves both ends); while
  // powered the drives and pins act through simulated joints.
  const bool simulatedJoints =
      ch->state() == CharacterState::Ragdoll || ch->state() == CharacterState::Powered;
  ts.maxJointStretch.push_back(simulatedJoints ? ch->ragdoll().maxJointSeparation() : 0.0);
  ts.settleWindow.push_back(ch->state() == CharacterState::Ragdoll ? ch->settle().timeInWindow() : 0.0);
  ts.blendWeight.push_back(ch->blendWeight());
  ts.driveWeight.push_back(ch->state() == CharacterState::Powered ? ch->driveWeight() : 0.0);
  ts.contacts.push_back(stats.contactPoints);
  ts.activeBodies.push_back(stats.activeBodies);
  ts.sleepingBodies.push_back(stats.sleepingBodies);
}

ReplayFrame ScenarioSession::Impl::replayFrame(double t) const {
  const RagdollAsset& asset = *l->asset;
  const TimeSeries& ts = result.series;
  ReplayFrame frame;
  frame.time = t;
  frame.state = ts.state.back();
  frame.worldFromRoot = ch->displayRoot();
  frame.locals.assign(ch->displayLocals().begin(), ch->displayLocals().end());
  frame.worldFromBodies = poses;
  for (size_t b = 0; b < asset.bodies.size(); ++b) {
    const std::uint8_t a = static_cast<std::uint8_t>(ch->ragdoll().authority(static_cast<int>(b)));
    frame.authority.push_back(ch->state() == CharacterState::Recovering ? kReplayAuthorityRecovering : a);
    if (world->contactCount(ch->ragdoll().body(static_cast<int>(b))) > 0) {
      frame.contacts.push_back(shapeLowestPoint(asset.bodies[b].shape, poses[b]));
    }
  }
  frame.capsuleEnabled = world->isEnabled(ch->ragdoll().capsule());
  frame.worldFromCapsule = world->transform(ch->ragdoll().capsule());
  ReplayFigures& f = frame.figures;
  f.pelvisHeight = ts.pelvisHeight.back();
  f.pelvisSpeed = ts.pelvisSpeed.back();
  f.maxJointStretch = ts.maxJointStretch.back();
  f.settleWindow = ts.settleWindow.back();
  f.blendWeight = ts.blendWeight.back();
  f.driveWeight = ts.driveWeight.back();
  f.contactPoints = ts.contacts.back();
  f.activeBodies = ts.activeBodies.back();
  return frame;
}

// ---------------------------------------------------------------------------------------------
// One frame

// The world step, then the character's postStep (which records a fresh commit's first step on
// its own record) and the handoff measure of that first step.
void ScenarioSession::Impl::stepWorld() {
  energy.beforeStep();
  world->step(dt, substeps);
  counters.bodiesLeftWorld += world->lastStepStats().bodiesLeftWorld;
  ch->postStep(dt);
  if (openHandoff >= 0) handoff.afterStep(*world, *ch, dt, result.handoffs[static_cast<size_t>(openHandoff)]);
}

bool ScenarioSession::Impl::playFrame() {
  const int k = frame;
  const double t1 = (k + 1) * dt;
  teleportPending = false;
  collectDue(t1);
  const bool teleportThisFrame = teleportPending;
  sampleAt(t1, locals);
  lookAt(locals);
  const AnimationInput input{t1, root, locals, teleportThisFrame};
  if (Status st = ch->preStep(input, dt); !st) {
    result.error = "frame " + std::to_string(k + 1) + ": " + st.error();
    return false;
  }
  stepWorld();
  observe(t1, input);
  if (ch->takeRecoveryFinished()) {
    // The game resumes its clip from where the character stands; after a landing on the feet,
    // the scenario's landing clip when it names one.
    const bool landed = ch->landings().total() > landingsSeen;
    landingsSeen = ch->landings().total();
    if (landed && landingClip) {
      clipHold = landingClip;
      clip = clipHold.get();
      wrap = s.recovery.landing->wrap;
      clipStart = s.recovery.landing->startTime;
      clipSpeed = s.recovery.landing->speed;
    } else {
      clipStart = 0.0;
    }
    root = rootToStartClip(*clip, l->character->skeleton, pelvisJoint, l->asset->modelForward,
                           ch->displayRoot(), clipStart);
    clipSceneStart = t1;
  }
  runPostEvents(t1);
  drainInto(result, cursors);
  propMeasure.observe(*ch, *world, dt, result.props);
  recordFrame(t1, false);
  return true;
}

// ---------------------------------------------------------------------------------------------
// The result

void ScenarioSession::Impl::drainInto(ScenarioResult& r, Cursors& c) const {
  const History<CharacterEvent>::Range events = ch->events().readSince(c.events);
  r.events.insert(r.events.end(), events.begin(), events.end());
  c.events = events.next;
  const History<RecoveryRecord>& recoveries = ch->recoveries();
  for (std::uint64_t i = recoveries.firstSequence(); i < recoveries.total() && i < r.recoveries.size(); ++i) {
    const RecoveryRecord& rec = recoveries.at(i);
    RecoveryMetrics& rm = r.recoveries[static_cast<size_t>(i)];
    rm.facing = facingName(rec.facing);
    rm.settleTime = rec.settleTime;
    rm.startTime = rec.startTime;
    rm.finished = rec.finished;
    rm.cancelled = rec.cancelled;
    if (const GetUpClip* g = getUp(rec.facing)) rm.getUpTail = g->info.completion.tailDuration;
  }
  const History<LandingRecord>& landings = ch->landings();
  r.landings.resize(static_cast<size_t>(landings.total()));
  for (std::uint64_t i = landings.firstSequence(); i < landings.total(); ++i) {
    const LandingRecord& rec = landings.at(i);
    LandingMetrics& m = r.landings[static_cast<size_t>(i)];
    m.time = rec.time;
    m.from = characterStateName(rec.from);
    if (rec.flight >= 0 && ch->flights().retained(static_cast<std::uint64_t>(rec.flight))) {
      const FlightRecord& f = ch->flights().at(static_cast<std::uint64_t>(rec.flight));
      m.airTime = f.touchdown - f.airStart;
      m.touchdownTime = rec.time - f.touchdown;
    }
    m.fallHeight = rec.pelvisAtAirStart.y - rec.pelvisAtLanding.y;
    m.footOffset = rec.footOffset;
    m.pelvisHeight = rec.pelvisHeight;
    m.tilt = rec.tilt;
    m.angularSpeed = rec.angularSpeed;
    m.exitBlend = rec.exitBlend;
  }
  c.landings = landings.total();
}

void ScenarioSession::Impl::fillEnd(ScenarioResult& r, int framesPlayed) const {
  for (KnockbackMetrics& k : r.knockbacks) {
    const bool landed = ch->landings().total() > k.landingsBefore;
    bool stoodUp = false;
    for (std::uint64_t i = k.recoveriesBefore; i < r.recoveries.size(); ++i)
      stoodUp = stoodUp || r.recoveries[static_cast<size_t>(i)].finished;
    k.recovery = landed ? "landing" : stoodUp ? "getup" : "";
    k.recovered = (landed || stoodUp) && ch->state() == CharacterState::Animated;
  }
  r.poweredReturned = ch->state() == CharacterState::Animated &&
                      std::any_of(r.events.begin(), r.events.end(), [](const CharacterEvent& e) {
                        return e.kind == CharacterEventKind::Unpowered;
                      });
  r.ok = true;
  r.frames = framesPlayed;
  r.dt = dt;
  r.endTime = framesPlayed * dt;
  r.checks = runner_detail::checksFor(s, r, counters);
}

}  // namespace handoff
