// ScenarioSession: a scenario played one frame at a time on a Character in a Bullet world
// (runner.h describes the timing). ScenarioRunner::run is a session stepped to its end.
#include "handoff/runner.h"

#include "handoff/physics_bullet.h"
#include "runner/runner_internal.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string_view>
#include <utility>

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

// ---------------------------------------------------------------------------------------------
// Setup

Status ScenarioSession::Impl::createWorld() {
  WorldSettings ws;
  ws.gravity = s.world.gravity;
  ws.solverIterations = s.settings.solverIterations;
  world = options.createWorld ? options.createWorld(ws) : createBulletWorld(ws);
  if (!world) return Error{"RunOptions::createWorld returned no world"};
  if (s.world.ground.enabled) {
    world->addGroundPlane(Vec3{0, 1, 0}, s.world.ground.height, s.world.ground.friction);
  }
  for (const ScenarioBox& b : staticBoxes(s.world)) {
    world->addStaticBox(b.worldFromBox(), b.halfExtents, b.friction);
    boxes.push_back({b.worldFromBox(), b.halfExtents});
  }
  if (l->level) {
    LevelPlacement placement;
    placement.worldFromLevel = s.world.level->worldFromLevel();
    placement.friction = s.world.level->friction;
    Result<std::vector<BodyId>> added = addLevel(*world, *l->level, placement);
    if (!added) return Error{"world.level.file: " + added.error()};
  }
  return {};
}

void ScenarioSession::Impl::makeSettings() {
  // The library's CharacterSettings with what the scenario names (its settings embed the
  // library's structs: a scenario that names nothing runs what a Character user gets).
  cs.handoff = s.settings.handoff;
  cs.handoff.mode = mode;
  cs.settle = s.recovery.settle;
  cs.transition = s.recovery.transition;
  // An `impulse` while animated runs the library's own hit reaction (CharacterSettings::
  // hitReaction: pelvis and feet pinned, back to animation once settled), with the scenario's
  // drive solver as `powered` and `partial` have it (the default, implicit, is the library's).
  cs.hitReaction.solver = s.settings.driveSolver;
  cs.animationOwnedBones = s.settings.animationOwnedBones;
  cs.dropPropsAtDeath = s.settings.dropPropsAtDeath;
}

void ScenarioSession::Impl::startReplay() {
  if (!replay) return;
  const Skeleton& skeleton = l->character->skeleton;
  replay->name = s.name;
  replay->frameRate = 1.0 / dt;
  replay->skeleton = skeleton;
  describeRagdoll(*l->asset, *replay);
  replay->mesh = mergeSkinnedMeshes(l->character->meshes);
  replay->groundHeight = s.world.ground.height;
  replay->staticMeshes.clear();
  if (l->level) {
    for (const LevelMesh& mesh : l->level->meshes) {
      replay->staticMeshes.push_back(
          {mesh.name, s.world.level->worldFromLevel(), mesh.vertices, mesh.indices});
    }
  }
  replay->frames.clear();
  replay->events.clear();
}

Status ScenarioSession::Impl::create() {
  const Skeleton& skeleton = l->character->skeleton;
  const RagdollAsset& asset = *l->asset;
  const size_t jointCount = static_cast<size_t>(skeleton.jointCount());
  const size_t bodyCount = asset.bodies.size();
  dt = s.settings.dt;
  substeps = s.settings.substeps;
  if (Status st = createWorld(); !st) return st;
  makeSettings();

  clip = &l->clip;
  wrap = s.clip.wrap;
  clipStart = s.clip.startTime;
  clipSpeed = s.clip.speed;
  root = s.root.worldFromRoot();
  for (const auto& [time, c] : l->clipSwitches) switches.push_back(std::shared_ptr<const Clip>(l, &c));
  if (s.recovery.landing) {
    Result<Clip> landing = runner_detail::loadSwitchClip(*cache, options, s, *l, *s.recovery.landing);
    if (!landing) return Error{"recovery.landing: " + landing.error()};
    landingClip = std::make_shared<const Clip>(std::move(landing).value());
  }
  locals.resize(jointCount);
  dense.resize(jointCount);
  poses.resize(bodyCount);

  // Events at t = 0 that change the start (teleport, clip, wall) apply before the character exists.
  collectDue(0.0);
  teleportPending = false;  // the start is not a jump
  if (s.lookAt) {
    lookAtJoint = skeleton.findJoint(s.lookAt->bone);
    if (lookAtJoint < 0 || skeleton.parents[static_cast<size_t>(lookAtJoint)] == kNoParent) {
      return Error{"lookAt.bone: '" + s.lookAt->bone + "' is not a bone under the skeleton's root"};
    }
    lookAtModels.resize(jointCount);
  }
  sampleAt(0.0, locals);
  lookAt(locals);
  Result<std::unique_ptr<Character>> created =
      Character::create(*world, l->asset, skeleton, cs, root, locals);
  if (!created) return Error{"character: " + created.error()};
  ch = std::move(created).value();
  ch->setGetUpClips(l->supine, l->prone);
  for (size_t i = 0; i < s.props.size(); ++i) {
    Result<int> prop = ch->addProp(propDesc(s.props[i]));
    if (!prop) return Error{"props[" + std::to_string(i) + "]: " + prop.error()};
    propIndex.push_back(prop.value());
  }
  startReplay();

  pelvisJoint = asset.map[Slot::Pelvis];
  result.jointCount = skeleton.jointCount();
  result.bodyCount = static_cast<int>(bodyCount);
  pelvisBody = std::max(0, asset.bodyForSlot(Slot::Pelvis));
  result.pelvisBody = asset.bodies[static_cast<size_t>(pelvisBody)].name;
  recoveryJumps.emplace(*ch);
  if (lookAtJoint >= 0) lookAtMeasure.emplace(*ch, lookAtJoint);
  returns.emplace(*ch);
  resumedNow.resize(jointCount);
  resumedBefore.resize(jointCount);
  lastPelvisWorld = world->transform(ch->ragdoll().body(pelvisBody)).translation;

  runPostEvents(0.0);
  propMeasure.observe(*ch, *world, dt, result.props);
  recordFrame(0.0, true);
  return {};
}

// ---------------------------------------------------------------------------------------------
// Animation and events

void ScenarioSession::Impl::sampleAt(double sceneTime, std::span<Transform> out) const {
  clip->sample(clipStart + clipSpeed * (sceneTime - clipSceneStart), wrap, out);
}

// The look-at, as a game's gaze system: the bone's local rotation turned toward the target from
// its parent as displayed at the last frame (at t = 0, as the animation poses it).
void ScenarioSession::Impl::lookAt(std::span<Transform> animation) {
  if (lookAtJoint < 0) return;
  const Skeleton& skeleton = l->character->skeleton;
  const auto joint = static_cast<size_t>(lookAtJoint);
  const auto parent = static_cast<size_t>(skeleton.parents[joint]);
  Transform worldFromParent;
  if (ch) {
    localToModel(skeleton, ch->displayLocals(), lookAtModels);
    worldFromParent = ch->displayRoot() * lookAtModels[parent];
  } else {
    localToModel(skeleton, animation, lookAtModels);
    worldFromParent = root * lookAtModels[parent];
  }
  Transform& local = animation[joint];
  local.rotation = lookAtLocalRotation(skeleton, lookAtJoint, l->asset->modelForward, worldFromParent,
                                       local.translation, s.lookAt->target, local.rotation);
  lookAtAsked = local.rotation;
}

bool ScenarioSession::Impl::due(double t) const {
  return nextEvent < s.events.size() && s.events[nextEvent].time <= t + 1e-9;
}

bool ScenarioSession::Impl::applyPre(const ScenarioEvent& e) {
  switch (e.type()) {
    case EventType::Teleport: {
      const auto& p = std::get<ScenarioEvent::Teleport>(e.payload);
      root = Transform{yawRotation(p.yaw), p.position};
      teleportPending = true;
      return true;
    }
    case EventType::Clip: {
      const auto& p = std::get<ScenarioEvent::Clip>(e.payload);
      clipHold = switches[nextSwitch++];
      clip = clipHold.get();
      wrap = p.clip.wrap;
      clipStart = p.clip.startTime;
      clipSpeed = p.clip.speed;
      clipSceneStart = e.time;
      return true;
    }
    case EventType::Wall: {
      const auto& p = std::get<ScenarioEvent::Wall>(e.payload);
      world->addStaticBox(p.box.worldFromBox(), p.box.halfExtents, p.box.friction);
      boxes.push_back({p.box.worldFromBox(), p.box.halfExtents});
      return true;
    }
    default:
      return false;
  }
}

void ScenarioSession::Impl::collectDue(double t) {
  postEvents.clear();
  while (due(t)) {
    const size_t i = nextEvent++;
    if (!applyPre(s.events[i])) postEvents.push_back(i);
  }
}

void ScenarioSession::Impl::notRun(const ScenarioEvent& e, const std::string& why) {
  const std::string line = std::string(eventTypeName(e.type())) + " at " +
                           std::to_string(e.time).substr(0, 5) + " s: not run: " + why;
  if (std::find(result.notRun.begin(), result.notRun.end(), line) == result.notRun.end()) {
    result.notRun.push_back(line);
  }
}

void ScenarioSession::Impl::runPostEvents(double t) {
  for (size_t i : postEvents) {
    const ScenarioEvent& e = s.events[i];
    switch (e.type()) {
      case EventType::Ragdoll:
        commit(t);
        break;
      case EventType::Impulse:
        impulse(e, t);
        break;
      case EventType::GetUpAllowed:
        ch->setGetUpAllowed(std::get<ScenarioEvent::GetUpAllowed>(e.payload).allowed);
        break;
      case EventType::Powered:
        powered(e, t);
        break;
      case EventType::Partial:
        partial(e, t);
        break;
      case EventType::LimbLag:
        limbLag(e, t);
        break;
      case EventType::Animate:
        if (Status st = ch->goAnimated(std::get<ScenarioEvent::Animate>(e.payload).blendTime); !st) {
          notRun(e, st.error());
        }
        break;
      case EventType::Grab:
      case EventType::Drop: {
        const auto* g = std::get_if<ScenarioEvent::Grab>(&e.payload);
        const std::string& name = g ? g->prop : std::get<ScenarioEvent::Drop>(e.payload).prop;
        const auto it = std::find_if(s.props.begin(), s.props.end(),
                                     [&](const ScenarioProp& p) { return p.name == name; });
        if (it == s.props.end()) {
          notRun(e, "no prop named '" + name + "'");
          break;
        }
        const int prop = propIndex[static_cast<size_t>(it - s.props.begin())];
        if (Status st = g ? ch->grabProp(prop) : ch->dropProp(prop); !st) notRun(e, st.error());
        break;
      }
      case EventType::End:
      default:
        break;
    }
  }
}

void ScenarioSession::Impl::commit(double t) {
  // The animation sampled 1/8 frame before: a nearly instantaneous velocity (SPEC section 3,
  // "sample more densely"). Right after a teleport it is sampled at the new place, as a game
  // would: the jump stays between the older samples and gives no velocity.
  sampleAt(t - dt / 8, dense);
  const Quat asked = lookAtAsked;
  lookAt(dense);
  lookAtAsked = asked;  // the frame's own input keeps its figure
  const AnimationInput d{t - dt / 8, root, dense, false};
  measure(ch->goRagdoll(&d), t, "handoff");
}

void ScenarioSession::Impl::impulse(const ScenarioEvent& e, double t) {
  const RagdollAsset& asset = *l->asset;
  const auto& p = std::get<ScenarioEvent::Impulse>(e.payload);
  if (p.knockback) {
    knockback(e, t);
    return;
  }
  const int b = runner_detail::bodyNamed(asset, l->character->skeleton, p.body);
  if (b < 0) {
    notRun(e, "no body for '" + p.body + "'");
    return;
  }
  const Transform bodyPose = world->transform(ch->ragdoll().body(b));
  const Vec3 j = p.impulseSpace == ImpulseSpace::Root ? root.transformVector(p.impulse) : p.impulse;
  Vec3 point = bodyPose.translation;
  if (p.point) point = p.pointSpace == PointSpace::Body ? bodyPose.transformPoint(*p.point) : *p.point;
  const bool wasAnimated = ch->state() == CharacterState::Animated;
  const size_t before = ch->handoffs().total();
  const double energyBefore = energy.energy();
  const Status st = ch->applyImpulse(b, j, point);
  // A hit on a ragdoll is work done on it (HandoffMetrics::energyWork).
  if (st) energy.addWork(energy.energy() - energyBefore);
  if (st && wasAnimated && ch->state() == CharacterState::Powered && ch->handoffs().total() > before) {
    // The hit reaction: the Character went powered by itself, then took the impulse.
    measure(ch->handoffs().back(), t, "powered");
    result.hitReactions.push_back(hit.begin(*ch, b, j, t));
    openHit = static_cast<int>(result.hitReactions.size()) - 1;
  }
  if (!st) {
    notRun(e, st.error());
  } else if (follow.open() && ch->state() != CharacterState::Animated) {
    HandoffMetrics& hm = result.handoffs[static_cast<size_t>(openHandoff)];
    follow.addImpulse(*ch, b, j, hm);
    if (handoff.firstStepPending()) {
      char text[160];
      std::snprintf(text, sizeof text, "%.0f N s on %s (%.1f kg) at %.3f s", glm::length(j),
                    asset.bodies[static_cast<size_t>(b)].name.c_str(), world->mass(ch->ragdoll().body(b)), t);
      hm.firstStepImpulse = text;
    }
  }
}

// A knock-back (Character::knockBack): the commit, measured as a ragdoll handoff, then the throw.
void ScenarioSession::Impl::knockback(const ScenarioEvent& e, double t) {
  const auto& p = std::get<ScenarioEvent::Impulse>(e.payload);
  const Vec3 j = p.impulseSpace == ImpulseSpace::Root ? root.transformVector(p.impulse) : p.impulse;
  const size_t before = ch->handoffs().total();
  KnockbackMetrics k;
  k.time = t;
  k.impulse = glm::length(j);
  k.flightsBefore = ch->flights().total();
  k.landingsBefore = ch->landings().total();
  k.recoveriesBefore = ch->recoveries().total();
  k.pelvisStart = world->transform(ch->ragdoll().body(pelvisBody)).translation;
  const double energyBefore = energy.energy();
  const Status st = ch->knockBack(j);
  if (st) energy.addWork(energy.energy() - energyBefore);  // on a ragdoll already: work done on it
  if (!st) {
    notRun(e, st.error());
    return;
  }
  if (ch->handoffs().total() > before) measure(ch->handoffs().back(), t, "handoff");
  double mass = 0.0;
  for (int b = 0; b < ch->ragdoll().bodyCount(); ++b) mass += world->mass(ch->ragdoll().body(b));
  k.velocityChange = k.impulse / mass;
  result.knockbacks.push_back(k);
  if (follow.open()) {
    // Every body's velocity changes by j / total mass: the allowance of one body taking its share.
    HandoffMetrics& hm = result.handoffs[static_cast<size_t>(openHandoff)];
    const int b = pelvisBody;
    follow.addImpulse(*ch, b, j * (world->mass(ch->ragdoll().body(b)) / mass), hm);
    if (handoff.firstStepPending()) {
      char text[160];
      std::snprintf(text, sizeof text, "a %.0f N s knock-back over every body at %.3f s", k.impulse, t);
      hm.firstStepImpulse = text;
    }
  }
}

void ScenarioSession::Impl::powered(const ScenarioEvent& e, double t) {
  const auto& p = std::get<ScenarioEvent::Powered>(e.payload);
  PoweredSettings ps = cs.hitReaction;
  ps.solver = s.settings.driveSolver;
  ps.weight = p.weight;
  ps.rampTime = p.rampTime;
  ps.pinPelvisAndFeet = p.pinned;
  ps.bodyWeights.clear();
  ps.returnWhenSettled = false;  // the scenario says when (`animate`)
  const size_t before = ch->handoffs().total();
  poweredEntry(e, t, ch->goPowered(ps), before);
}

void ScenarioSession::Impl::partial(const ScenarioEvent& e, double t) {
  const auto& p = std::get<ScenarioEvent::Partial>(e.payload);
  const std::vector<double> weights = partialWeights(p);
  const size_t before = ch->handoffs().total();
  if (ch->state() == CharacterState::Powered) {
    if (Status st = ch->setBodyWeights(weights); !st) notRun(e, st.error());
  } else {
    PoweredSettings ps = cs.hitReaction;
    ps.solver = s.settings.driveSolver;
    ps.returnWhenSettled = false;
    poweredEntry(e, t, ch->goPartial(weights, p.rampTime, ps), before);
  }
}

void ScenarioSession::Impl::limbLag(const ScenarioEvent& e, double t) {
  const auto& p = std::get<ScenarioEvent::LimbLag>(e.payload);
  LimbLagSettings lag;
  if (!p.slots.empty()) lag.slots = p.slots;
  lag.weight = p.weight;
  lag.rampTime = p.rampTime;
  PoweredSettings ps;
  ps.solver = s.settings.driveSolver;
  const size_t before = ch->handoffs().total();
  const Status st = ch->goLimbLag(lag, ps);
  poweredEntry(e, t, st, before);
  if (!st) return;
  result.limbLags.emplace_back();
  limbLagMeasure.begin(*ch, lag.rampTime, t, result.limbLags.back());
}

// Per asset body, the physics weight a `partial` event gives it: its own entry (bone or slot
// name), else the largest weight of the regions containing its slot, else 0.
std::vector<double> ScenarioSession::Impl::partialWeights(const ScenarioEvent::Partial& p) const {
  const RagdollAsset& asset = *l->asset;
  const size_t bodyCount = asset.bodies.size();
  std::vector<double> weights(bodyCount, 0.0);
  for (size_t b = 0; b < bodyCount; ++b) {
    for (int slot = 0; slot < static_cast<int>(Slot::Count); ++slot) {
      if (asset.bodyForSlot(static_cast<Slot>(slot)) != static_cast<int>(b)) continue;
      for (const auto& [region, w] : p.regions) {
        if (regionContains(region, static_cast<Slot>(slot))) weights[b] = std::max(weights[b], w);
      }
    }
  }
  for (const auto& [name, w] : p.bodies) {
    const int b = runner_detail::bodyNamed(asset, l->character->skeleton, name);
    if (b >= 0) weights[static_cast<size_t>(b)] = w;
  }
  return weights;
}

void ScenarioSession::Impl::poweredEntry(const ScenarioEvent& e, double t, const Status& st,
                                         size_t recordsBefore) {
  if (!st) {
    notRun(e, st.error());
  } else if (ch->handoffs().total() > recordsBefore) {
    measure(ch->handoffs().back(), t, "powered");
  }
}

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
  returns->observe(*ch, *world, root, resumedNow, resumedBefore, t, result.returns);
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

// ---------------------------------------------------------------------------------------------
// Adding events

Status ScenarioSession::Impl::prepareEvent(const ScenarioEvent& e, size_t index) {
  if (const auto* c = std::get_if<ScenarioEvent::Clip>(&e.payload)) {
    Result<Clip> loaded = runner_detail::loadSwitchClip(*cache, options, s, *l, c->clip);
    if (!loaded) return Error{loaded.error()};
    size_t before = 0;  // `clip` events ahead of this one
    for (size_t i = 0; i < index; ++i) before += s.events[i].type() == EventType::Clip ? 1 : 0;
    switches.insert(switches.begin() + static_cast<std::ptrdiff_t>(before),
                    std::make_shared<const Clip>(std::move(loaded).value()));
  }
  const auto* g = std::get_if<ScenarioEvent::GetUpAllowed>(&e.payload);
  if (g && g->allowed && !getUp(Facing::Supine) && !getUp(Facing::Prone)) {
    // A run of the saved scenario loads the get-up clips at the start; the Character reads
    // them only once a get-up is allowed, so setting them now is the same.
    Result<std::pair<GetUpClip, GetUpClip>> getUps =
        runner_detail::loadScenarioGetUps(*cache, options, s, *l);
    if (!getUps) return Error{getUps.error()};
    supine = std::move(getUps->first);
    prone = std::move(getUps->second);
    ch->setGetUpClips(supine, prone);
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// ScenarioSession

ScenarioSession::ScenarioSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ScenarioSession::~ScenarioSession() = default;

Result<std::unique_ptr<ScenarioSession>> ScenarioSession::start(ScenarioRunner& runner,
                                                                const Scenario& scenario,
                                                                std::optional<HandoffMode> mode,
                                                                Replay* replay) {
  Result<Loaded> loaded = runner_detail::load(runner.impl_->cache, runner.options(), scenario);
  if (!loaded) return Error{loaded.error()};
  return startLoaded(runner, scenario, std::make_shared<const Loaded>(std::move(loaded).value()),
                     mode.value_or(scenario.settings.handoff.mode), scenario.endTime, replay);
}

Result<std::unique_ptr<ScenarioSession>> ScenarioSession::startLoaded(
    ScenarioRunner& runner, const Scenario& scenario, std::shared_ptr<const runner_detail::Loaded> loaded,
    HandoffMode mode, double endTime, Replay* replay) {
  auto impl = std::make_unique<Impl>();
  impl->cache = &runner.impl_->cache;
  impl->options = runner.options();
  impl->s = scenario;
  impl->l = std::move(loaded);
  impl->mode = mode;
  impl->replay = replay;
  impl->frames = std::max(1, static_cast<int>(std::lround(endTime / scenario.settings.dt)));
  impl->result = runner_detail::described(scenario);
  if (Status st = impl->create(); !st) return Error{st.error()};
  return std::unique_ptr<ScenarioSession>(new ScenarioSession(std::move(impl)));
}

bool ScenarioSession::step() {
  Impl& m = *impl_;
  if (m.failed || m.finished || m.frame >= m.frames) return false;
  if (!m.playFrame()) {
    m.failed = true;
    return false;
  }
  ++m.frame;
  return true;
}

int ScenarioSession::frame() const { return impl_->frame; }
int ScenarioSession::frameCount() const { return impl_->frames; }
double ScenarioSession::time() const { return impl_->frame * impl_->dt; }
double ScenarioSession::dt() const { return impl_->dt; }
const Scenario& ScenarioSession::scenario() const { return impl_->s; }
const Character& ScenarioSession::character() const { return *impl_->ch; }
const PhysicsWorld& ScenarioSession::world() const { return *impl_->world; }
const RagdollAsset& ScenarioSession::asset() const { return *impl_->l->asset; }

namespace {

/// The scenario as it loads back from its canonical JSON: what a saved session replays.
Status loadsBack(const Scenario& candidate) {
  Result<Scenario> back = loadScenarioJson(saveScenarioJson(candidate), candidate.sourceName);
  if (!back) return Error{back.error()};
  if (back->events != candidate.events || back->endTime != candidate.endTime) {
    return Error{candidate.sourceName + ": the scenario does not load back as it is"};
  }
  return {};
}

}  // namespace

Status ScenarioSession::addEvent(const ScenarioEvent& event) {
  Impl& m = *impl_;
  const double now = time();
  if (m.finished) return Error{"the session has finished"};
  if (event.type() == EventType::End) return Error{"an `end` event: set the end time instead (setEndTime)"};
  if (!std::isfinite(event.time) || event.time < now - 1e-9) {
    return Error{std::string(eventTypeName(event.type())) + " at " + std::to_string(event.time) +
                 " s: before the session's time " + std::to_string(now) + " s"};
  }
  if (event.time > m.s.endTime + 1e-9) {
    return Error{std::string(eventTypeName(event.type())) + " at " + std::to_string(event.time) +
                 " s: after the end time " + std::to_string(m.s.endTime) + " s (setEndTime first)"};
  }
  ScenarioEvent added = event;
  // The frame at time() has played: an event due in it acts in the next frame.
  if (added.time <= now + 1e-9) added.time = (m.frame + 1) * m.dt;
  const auto at = std::upper_bound(m.s.events.begin(), m.s.events.end(), added.time,
                                   [](double t, const ScenarioEvent& e) { return t < e.time; });
  const size_t index = static_cast<size_t>(at - m.s.events.begin());
  Scenario candidate = m.s;
  candidate.events.insert(candidate.events.begin() + static_cast<std::ptrdiff_t>(index), added);
  if (Status st = loadsBack(candidate); !st) return st;
  if (Status st = validateScenarioAgainst(candidate, *m.l->character); !st) return st;
  if (Status st = m.prepareEvent(added, index); !st) return st;
  m.s.events.insert(m.s.events.begin() + static_cast<std::ptrdiff_t>(index), std::move(added));
  return {};
}

Status ScenarioSession::setEndTime(double endTime) {
  Impl& m = *impl_;
  if (m.finished) return Error{"the session has finished"};
  if (!std::isfinite(endTime) || endTime < time() - 1e-9) {
    return Error{"endTime " + std::to_string(endTime) + " s: before the session's time " +
                 std::to_string(time()) + " s"};
  }
  Scenario candidate = m.s;
  candidate.endTime = endTime;
  if (Status st = loadsBack(candidate); !st) return st;
  m.s.endTime = endTime;
  m.frames = std::max(1, static_cast<int>(std::lround(endTime / m.dt)));
  return {};
}

std::span<const CharacterEvent> ScenarioSession::characterEvents() const { return impl_->result.events; }

ScenarioResult ScenarioSession::snapshot() const {
  ScenarioResult r = impl_->result;
  if (!impl_->failed && !impl_->finished) {
    Impl::Cursors cursors = impl_->cursors;
    impl_->drainInto(r, cursors);
    impl_->fillEnd(r, impl_->frame);
  }
  return r;
}

ScenarioResult ScenarioSession::finish() {
  Impl& m = *impl_;
  if (m.finished) return m.result;
  m.finished = true;
  if (m.failed) return m.result;
  m.drainInto(m.result, m.cursors);
  m.fillEnd(m.result, m.frame);
  if (m.replay) {
    m.replay->boxes = m.boxes;
    for (const CharacterEvent& e : m.result.events) {
      m.replay->events.push_back({e.time, eventKindName(e.kind), e.detail});
    }
    for (const ScenarioEvent& e : m.s.events) {
      if (!e.label.empty()) m.replay->events.push_back({e.time, eventTypeName(e.type()), e.label});
    }
    std::stable_sort(m.replay->events.begin(), m.replay->events.end(),
                     [](const ReplayEvent& a, const ReplayEvent& b) { return a.time < b.time; });
  }
  return m.result;
}

}  // namespace handoff
