// ScenarioSession: a scenario played one frame at a time on a Character in a Bullet world
// (runner.h describes the timing). ScenarioRunner::run is a session stepped to its end. This
// file: the set-up and the public calls (session_impl.h lists the rest).
#include "runner/session_impl.h"

#include "handoff/physics_bullet.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string_view>
#include <utility>

namespace handoff {

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
  cs.gather = s.recovery.gather;
  // An `impulse` while animated runs the library's own hit reaction (CharacterSettings::
  // hitReaction: pelvis and feet pinned, back to animation once settled), with the scenario's
  // drive solver as `powered` and `partial` have it (the default, implicit, is the library's).
  cs.hitReaction.solver = s.settings.driveSolver;
  cs.animationOwnedBones = s.settings.animationOwnedBones;
  cs.dropPropsAtDeath = s.settings.dropPropsAtDeath;
  cs.capsuleOnlyWhileAnimated = s.settings.capsuleOnlyWhileAnimated;
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
  lastPelvisWorld = ch->ragdoll().bodyPose(pelvisBody).translation;

  runPostEvents(0.0);
  propMeasure.observe(*ch, *world, dt, result.props);
  recordFrame(0.0, true);
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
