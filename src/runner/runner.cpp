// The scenario runner: loads a scenario's character, ragdoll, clips and world, plays it on a
// Character at the scenario's fixed step, executes its events, records the replay and measures
// the handoffs (runner.h describes the timing). The checks are in checks.cpp, the report in
// report.cpp.
#include "handoff/runner.h"

#include "handoff/physics_bullet.h"
#include "runner/runner_internal.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>
#include <utility>

namespace handoff {
namespace {

std::string cacheKey(const std::string& path, double unitScale) {
  std::ostringstream s;
  s.precision(17);
  s << path << '|' << unitScale;
  return s.str();
}

/// The clip a reference names in an imported file.
Result<const Clip*> findClip(const ImportedAsset& file, const ScenarioClip& ref,
                             const std::string& fileName) {
  if (!ref.name.empty()) {
    for (const Clip& c : file.clips) {
      if (c.name == ref.name) return &c;
    }
    return Error{fileName + ": no clip named '" + ref.name + "'"};
  }
  if (ref.index < 0 || static_cast<size_t>(ref.index) >= file.clips.size()) {
    return Error{fileName + ": no clip at index " + std::to_string(ref.index)};
  }
  return &file.clips[static_cast<size_t>(ref.index)];
}

}  // namespace

bool ScenarioResult::passed() const {
  if (!ok || !notRun.empty()) return false;
  return std::all_of(checks.begin(), checks.end(), [](const ThresholdCheck& c) { return c.ran && c.pass; });
}

namespace runner_detail {

Result<std::shared_ptr<const ImportedAsset>> Cache::import(const std::string& path, double unitScale) {
  const std::string key = cacheKey(path, unitScale);
  if (auto it = files.find(key); it != files.end()) return it->second;
  ImportOptions options;
  options.unitScale = unitScale;
  Result<ImportedAsset> imported = importFile(path, options);
  if (!imported) return Error{imported.error()};
  auto shared = std::make_shared<const ImportedAsset>(std::move(imported).value());
  files.emplace(key, shared);
  return shared;
}

}  // namespace runner_detail

struct ScenarioRunner::Impl {
  runner_detail::Cache cache;
};

ScenarioRunner::ScenarioRunner(RunOptions options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>()) {}
ScenarioRunner::~ScenarioRunner() = default;

namespace {

using runner_detail::Loaded;

Result<Clip> loadClipRef(runner_detail::Cache& impl, const Scenario& s, const ScenarioClip& ref,
                         const ImportedAsset& character, const std::string& characterPath,
                         std::span<const std::string> dirs, bool sameSkeleton) {
  if (ref.file.empty()) {
    Result<const Clip*> clip = findClip(character, ref, characterPath);
    if (!clip) return Error{clip.error()};
    return **clip;
  }
  Result<std::string> path = resolveScenarioFile(s, ref.file, dirs);
  if (!path) return Error{path.error()};
  Result<std::shared_ptr<const ImportedAsset>> file = impl.import(*path, 0.0);
  if (!file) return Error{file.error()};
  Result<const Clip*> clip = findClip(**file, ref, *path);
  if (!clip) return Error{clip.error()};
  if (sameSkeleton && (*file)->skeleton.jointNames != character.skeleton.jointNames) {
    return Error{*path + ": the clip's skeleton differs from the character's"};
  }
  return **clip;
}

/// A get-up clip reference resolved and imported.
struct GetUpSource {
  std::string path;
  std::shared_ptr<const ImportedAsset> file;
  const Clip* clip = nullptr;
};

Result<GetUpSource> importGetUp(runner_detail::Cache& impl, const Scenario& s, const ScenarioClip& ref,
                                std::span<const std::string> dirs) {
  Result<std::string> path = resolveScenarioFile(s, ref.file, dirs);
  if (!path) return Error{path.error()};
  Result<std::shared_ptr<const ImportedAsset>> file = impl.import(*path, 0.0);
  if (!file) return Error{file.error()};
  Result<const Clip*> clip = findClip(**file, ref, *path);
  if (!clip) return Error{clip.error()};
  return GetUpSource{*path, *file, *clip};
}

bool sameRig(const Skeleton& a, const Skeleton& b) {
  return a.jointNames == b.jointNames && a.parents == b.parents;
}

/// The supine and prone get-up clips on the character's skeleton (prepareGetUpClips): as is when
/// the rigs match, retargeted otherwise; when both come from one rig, a clip that ends below
/// standing is completed against the pair's standing reference (the last frame of the one that
/// ends tallest) unless `complete` is off.
Result<std::pair<GetUpClip, GetUpClip>> loadGetUps(runner_detail::Cache& impl, const Scenario& s,
                                                   const ScenarioClip& supineRef,
                                                   const ScenarioClip& proneRef,
                                                   const ImportedAsset& character, const RagdollAsset& asset,
                                                   std::span<const std::string> dirs, bool complete) {
  Result<GetUpSource> up = importGetUp(impl, s, supineRef, dirs);
  if (!up) return Error{"recovery.supine: " + up.error()};
  Result<GetUpSource> down = importGetUp(impl, s, proneRef, dirs);
  if (!down) return Error{"recovery.prone: " + down.error()};
  const std::array<const GetUpSource*, 2> sources{&*up, &*down};
  std::array<HumanoidMap, 2> maps{asset.map, asset.map};
  for (size_t i = 0; i < 2; ++i) {
    if (sameRig(sources[i]->file->skeleton, character.skeleton)) continue;
    Result<HumanoidMap> map = mapHumanoid(sources[i]->file->skeleton);
    if (!map)
      return Error{std::string(i == 0 ? "recovery.supine: " : "recovery.prone: ") + sources[i]->path + ": " +
                   map.error()};
    maps[i] = *map;
  }
  GetUpPrepareOptions options;
  options.completion.enabled = complete;
  const bool pair = sameRig(up->file->skeleton, down->file->skeleton);
  if (pair) {
    const std::array<Clip, 2> clips{*up->clip, *down->clip};
    Result<int> reference = standingReferenceClip(clips, up->file->skeleton, maps[0]);
    if (!reference) return Error{"recovery: " + reference.error()};
    const Clip& standing = clips[static_cast<size_t>(*reference)];
    const std::span<const Transform> f = standing.frame(standing.frameCount - 1);
    options.standingLocals.assign(f.begin(), f.end());
  }
  std::array<GetUpClip, 2> out;
  for (size_t i = 0; i < 2; ++i) {
    GetUpPrepareOptions own = options;
    if (!pair) {
      // Alone a clip is its own standing reference: nothing to complete against.
      const std::span<const Transform> f = sources[i]->clip->frame(sources[i]->clip->frameCount - 1);
      own.standingLocals.assign(f.begin(), f.end());
    }
    Result<std::vector<GetUpClip>> prepared =
        prepareGetUpClips(std::span<const Clip>(sources[i]->clip, 1), sources[i]->file->skeleton, maps[i],
                          character.skeleton, asset.map, own);
    if (!prepared) {
      return Error{std::string(i == 0 ? "recovery.supine: " : "recovery.prone: ") + sources[i]->path + ": " +
                   prepared.error()};
    }
    out[i] = std::move(prepared->front());
  }
  return std::pair{std::move(out[0]), std::move(out[1])};
}

bool getUpEverAllowed(const Scenario& s) {
  bool allowed = true;  // Character default
  for (const ScenarioEvent& e : s.events) {
    if (const auto* g = std::get_if<ScenarioEvent::GetUpAllowed>(&e.payload)) {
      allowed = g->allowed;
      if (allowed) return true;
    }
  }
  return allowed;
}

Result<Loaded> load(runner_detail::Cache& impl, const RunOptions& options, const Scenario& s) {
  const std::span<const std::string> dirs = options.searchDirs;
  Loaded l;
  Result<std::string> characterPath = resolveScenarioFile(s, s.character.file, dirs);
  if (!characterPath) return Error{"character.file: " + characterPath.error()};
  Result<std::shared_ptr<const ImportedAsset>> character = impl.import(*characterPath, s.character.unitScale);
  if (!character) return Error{"character.file: " + character.error()};
  l.character = *character;
  if (Status v = validateScenarioAgainst(s, *l.character); !v) return Error{v.error()};

  // The ragdoll: an asset file, or built from the skeleton (cached per build options).
  if (!s.ragdoll.asset.empty()) {
    Result<std::string> path = resolveScenarioFile(s, s.ragdoll.asset, dirs);
    if (!path) return Error{"ragdoll.asset: " + path.error()};
    auto it = impl.assets.find(*path);
    if (it == impl.assets.end()) {
      Result<RagdollAsset> asset = loadRagdollFile(*path);
      if (!asset) return Error{"ragdoll.asset: " + asset.error()};
      it = impl.assets.emplace(*path, std::make_shared<const RagdollAsset>(std::move(asset).value())).first;
    }
    l.asset = it->second;
  } else {
    BuildOptions b;
    b.totalMass = s.ragdoll.totalMass;
    b.hands = s.ragdoll.build.hands;
    b.feet = s.ragdoll.build.feet;
    b.stabilize = s.ragdoll.build.stabilize;
    b.limbRadiusRatio = s.ragdoll.build.limbRadiusRatio;
    b.headRadiusScale = s.ragdoll.build.headRadiusScale;
    b.clearance = s.ragdoll.build.clearance;
    b.overridesJson = s.ragdoll.build.jointOverridesJson;
    b.skeletonName = *characterPath;
    std::string mapKey;
    if (!s.character.map.empty()) {
      Result<std::string> mapPath = resolveScenarioFile(s, s.character.map, dirs);
      if (!mapPath) return Error{"character.map: " + mapPath.error()};
      std::ifstream in(*mapPath, std::ios::binary);
      if (!in) return Error{"character.map: cannot read '" + *mapPath + "'"};
      std::ostringstream text;
      text << in.rdbuf();
      b.mapJson = text.str();
      mapKey = *mapPath;
    }
    std::ostringstream key;
    key.precision(17);
    key << cacheKey(*characterPath, s.character.unitScale) << '|' << mapKey << '|' << b.totalMass << '|'
        << b.hands << b.feet << b.stabilize << '|' << b.limbRadiusRatio << '|' << b.headRadiusScale << '|'
        << b.clearance << '|' << b.overridesJson;
    auto it = impl.assets.find(key.str());
    if (it == impl.assets.end()) {
      Result<RagdollAsset> asset = buildRagdoll(l.character->skeleton, b);
      if (!asset) return Error{"ragdoll: " + asset.error()};
      it = impl.assets.emplace(key.str(), std::make_shared<const RagdollAsset>(std::move(asset).value()))
               .first;
    }
    l.asset = it->second;
  }

  Result<Clip> clip = loadClipRef(impl, s, s.clip, *l.character, *characterPath, dirs, true);
  if (!clip) return Error{"clip: " + clip.error()};
  l.clip = std::move(clip).value();
  for (size_t i = 0; i < s.events.size(); ++i) {
    if (const auto* c = std::get_if<ScenarioEvent::Clip>(&s.events[i].payload)) {
      Result<Clip> switched = loadClipRef(impl, s, c->clip, *l.character, *characterPath, dirs, true);
      if (!switched) return Error{"events[" + std::to_string(i) + "]: " + switched.error()};
      l.clipSwitches.emplace_back(s.events[i].time, std::move(switched).value());
    }
  }

  if (getUpEverAllowed(s)) {
    ScenarioClip supine, prone;
    supine.file = options.defaultSupine;
    prone.file = options.defaultProne;
    if (s.recovery.supine) supine = *s.recovery.supine;
    if (s.recovery.prone) prone = *s.recovery.prone;
    Result<std::pair<GetUpClip, GetUpClip>> getUps =
        loadGetUps(impl, s, supine, prone, *l.character, *l.asset, dirs,
                   options.completeGetUps && s.recovery.completeGetUps);
    if (!getUps) return Error{getUps.error()};
    l.supine = std::move(getUps->first);
    l.prone = std::move(getUps->second);
  }
  return l;
}

/// The body an impulse names: a slot name, or a bone (its body, or its nearest ancestor's).
int bodyNamed(const RagdollAsset& asset, const Skeleton& skeleton, const std::string& name) {
  if (std::optional<Slot> slot = slotFromName(name)) {
    const int b = asset.bodyForSlot(*slot);
    if (b >= 0) return b;
  }
  for (int j = 0; j < skeleton.jointCount(); ++j) {
    if (skeleton.jointNames[static_cast<size_t>(j)] != name) continue;
    for (int k = j; k != kNoParent; k = skeleton.parents[static_cast<size_t>(k)]) {
      const int b = asset.bodyForJoint(k);
      if (b >= 0) return b;
    }
  }
  return -1;
}

/// What a run measures while it steps (the checks are computed from it afterwards).
struct Tracker {
  int open = -1;         // index of the handoff still being followed
  HandoffRecord record;  // its record, for recordFirstStep
  std::vector<Transform> animatedPoses;
  double commitTime = 0.0;
  int stepsSinceCommit = 0;
};

}  // namespace

namespace runner_detail {

/// One run of a scenario with a given handoff mode up to `endTime`. Returns false (with
/// result.error) when the character cannot be created.
bool runOnce(const Loaded& l, const Scenario& s, HandoffMode mode, double endTime, const RunOptions& options,
             ScenarioResult& result, Replay* replay) {
  const Skeleton& skeleton = l.character->skeleton;
  const RagdollAsset& asset = *l.asset;
  const size_t jointCount = static_cast<size_t>(skeleton.jointCount());
  const size_t bodyCount = asset.bodies.size();
  const double dt = s.settings.dt;
  const int substeps = s.settings.substeps;
  const int frames = std::max(1, static_cast<int>(std::lround(endTime / dt)));
  const double kGravity = glm::length(s.world.gravity);

  WorldSettings ws;
  ws.gravity = s.world.gravity;
  std::unique_ptr<PhysicsWorld> world = createBulletWorld(ws);
  if (s.world.ground.enabled) {
    world->addGroundPlane(Vec3{0, 1, 0}, s.world.ground.height, s.world.ground.friction);
  }
  std::vector<ReplayStaticBox> boxes;
  for (const ScenarioBox& b : staticBoxes(s.world)) {
    world->addStaticBox(b.worldFromBox(), b.halfExtents, b.friction);
    boxes.push_back({b.worldFromBox(), b.halfExtents});
  }

  CharacterSettings cs;
  cs.handoff.mode = mode;
  cs.handoff.maxLinearSpeed = s.settings.maxLinearSpeed;
  cs.handoff.maxAngularSpeed = s.settings.maxAngularSpeed;
  cs.handoff.displayBlendTime = s.settings.displayBlendTime;
  cs.handoff.stepTime = dt;
  cs.handoff.limitLookAhead = s.settings.limitLookAhead;
  cs.handoff.jointConsistency = s.settings.jointConsistency;
  cs.handoff.staticContacts = s.settings.staticContacts;
  cs.settle.window = s.recovery.settleWindow;
  cs.transition.duration = s.recovery.transitionTime;
  // An `impulse` while animated runs the library's own hit reaction (CharacterSettings::
  // hitReaction: pelvis and feet pinned, back to animation once settled), with the scenario's
  // drive solver as `powered` and `partial` have it (the default, implicit, is the library's).
  cs.hitReaction.solver = s.settings.driveSolver;

  // Animation state.
  const Clip* clip = &l.clip;
  WrapMode wrap = s.clip.wrap;
  double clipStart = s.clip.startTime;  // clip time at scene time clipSceneStart
  double clipSceneStart = 0.0;
  double clipSpeed = s.clip.speed;  // clip seconds per scene second (0: the pose at clipStart, held)
  Transform root = s.root.worldFromRoot();
  size_t nextSwitch = 0;
  std::vector<Transform> locals(jointCount), dense(jointCount), models(jointCount), poses(bodyCount);
  const auto sampleAt = [&](double sceneTime, std::span<Transform> out) {
    clip->sample(clipStart + clipSpeed * (sceneTime - clipSceneStart), wrap, out);
  };

  size_t nextEvent = 0;
  const auto due = [&](double t) {
    return nextEvent < s.events.size() && s.events[nextEvent].time <= t + 1e-9;
  };
  // Events at t = 0 that change the start (teleport, clip, wall) apply before the character exists.
  bool teleportPending = false;
  std::vector<const ScenarioEvent*> postEvents;
  const auto applyPre = [&](const ScenarioEvent& e) -> bool {
    switch (e.type()) {
      case EventType::Teleport: {
        const auto& p = std::get<ScenarioEvent::Teleport>(e.payload);
        root = Transform{yawRotation(p.yaw), p.position};
        teleportPending = true;
        return true;
      }
      case EventType::Clip: {
        const auto& p = std::get<ScenarioEvent::Clip>(e.payload);
        clip = &l.clipSwitches[nextSwitch++].second;
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
  };
  const auto collectDue = [&](double t) {
    postEvents.clear();
    while (due(t)) {
      const ScenarioEvent& e = s.events[nextEvent++];
      if (!applyPre(e)) postEvents.push_back(&e);
    }
  };

  collectDue(0.0);
  teleportPending = false;  // the start is not a jump
  sampleAt(0.0, locals);
  Result<std::unique_ptr<Character>> created = Character::create(*world, l.asset, skeleton, cs, root, locals);
  if (!created) {
    result.error = "character: " + created.error();
    return false;
  }
  Character& ch = **created;
  ch.setGetUpClips(l.supine, l.prone);

  if (replay) {
    replay->name = s.name;
    replay->frameRate = 1.0 / dt;
    replay->skeleton = skeleton;
    describeRagdoll(asset, *replay);
    replay->mesh = mergeSkinnedMeshes(l.character->meshes);
    replay->groundHeight = s.world.ground.height;
    replay->frames.clear();
    replay->events.clear();
  }

  const int pelvisJoint = asset.map[Slot::Pelvis];
  result.jointCount = skeleton.jointCount();
  result.bodyCount = static_cast<int>(bodyCount);
  const int pelvisBody = std::max(0, asset.bodyForSlot(Slot::Pelvis));
  result.pelvisBody = asset.bodies[static_cast<size_t>(pelvisBody)].name;
  // The ankles: the joints under the lower legs (what the get-up jump is measured on).
  const auto ankleOf = [&](Slot lowerLeg) {
    const int knee = asset.map[lowerLeg];
    if (knee < 0) return -1;
    const std::vector<int> children = skeleton.children(knee);
    return children.empty() ? knee : children[0];
  };
  const int ankles[2] = {ankleOf(Slot::LowerLegL), ankleOf(Slot::LowerLegR)};

  Tracker tracker;
  int openHit = -1;  // the hit reaction still being followed (index in result.hitReactions)
  int hitBody = -1;  // its body
  std::vector<Transform> animatedBodies(bodyCount);
  std::vector<Transform> displayModels(jointCount), clipA(jointCount), clipB(jointCount), clipMa(jointCount),
      clipMb(jointCount);
  Vec3 lastPelvis{0.0}, lastAnkles[2] = {Vec3{0.0}, Vec3{0.0}};
  bool haveLast = false;
  size_t recoveriesSeen = 0;
  int blockingViolations = 0;
  int bodiesLeftWorld = 0;
  Vec3 lastPelvisWorld = world->transform(ch.ragdoll().body(pelvisBody)).translation;

  const auto recordFrame = [&](double t, bool first) {
    ch.ragdoll().readBodyPoses(poses);
    const StepStats& stats = world->lastStepStats();
    const Vec3 pelvisWorld = poses[static_cast<size_t>(pelvisBody)].translation;
    TimeSeries& ts = result.series;
    ts.time.push_back(t);
    ts.state.push_back(characterStateName(ch.state()));
    ts.pelvisPosition.push_back(pelvisWorld);
    ts.pelvisHeight.push_back(pelvisWorld.y);
    ts.pelvisSpeed.push_back(first ? 0.0 : glm::length(pelvisWorld - lastPelvisWorld) / dt);
    lastPelvisWorld = pelvisWorld;
    // Joints between kinematic bodies are not simulated (the animation moves both ends); while
    // powered the drives and pins act through simulated joints.
    const bool simulatedJoints =
        ch.state() == CharacterState::Ragdoll || ch.state() == CharacterState::Powered;
    ts.maxJointStretch.push_back(simulatedJoints ? ch.ragdoll().maxJointSeparation() : 0.0);
    ts.settleWindow.push_back(ch.state() == CharacterState::Ragdoll ? ch.settle().timeInWindow() : 0.0);
    ts.blendWeight.push_back(ch.blendWeight());
    ts.driveWeight.push_back(ch.state() == CharacterState::Powered ? ch.driveWeight() : 0.0);
    if (ch.state() == CharacterState::Powered && !first) {
      result.poweredMaxPositionError = std::max(result.poweredMaxPositionError, ch.poweredMaxPositionError());
      result.poweredMaxRmsJointError = std::max(result.poweredMaxRmsJointError, ch.poweredRmsJointError());
    }
    ts.contacts.push_back(stats.contactPoints);
    ts.activeBodies.push_back(stats.activeBodies);
    ts.sleepingBodies.push_back(stats.sleepingBodies);
    if (!replay) return;
    ReplayFrame frame;
    frame.time = t;
    frame.state = ts.state.back();
    frame.worldFromRoot = ch.displayRoot();
    frame.locals.assign(ch.displayLocals().begin(), ch.displayLocals().end());
    frame.worldFromBodies = poses;
    for (size_t b = 0; b < bodyCount; ++b) {
      const std::uint8_t a = static_cast<std::uint8_t>(ch.ragdoll().authority(static_cast<int>(b)));
      frame.authority.push_back(ch.state() == CharacterState::Recovering ? kReplayAuthorityRecovering : a);
      if (world->contactCount(ch.ragdoll().body(static_cast<int>(b))) > 0) {
        frame.contacts.push_back(shapeLowestPoint(asset.bodies[b].shape, poses[b]));
      }
    }
    frame.capsuleEnabled = world->isEnabled(ch.ragdoll().capsule());
    frame.worldFromCapsule = world->transform(ch.ragdoll().capsule());
    ReplayFigures& f = frame.figures;
    f.pelvisHeight = ts.pelvisHeight.back();
    f.pelvisSpeed = ts.pelvisSpeed.back();
    f.maxJointStretch = ts.maxJointStretch.back();
    f.settleWindow = ts.settleWindow.back();
    f.blendWeight = ts.blendWeight.back();
    f.driveWeight = ts.driveWeight.back();
    f.contactPoints = ts.contacts.back();
    f.activeBodies = ts.activeBodies.back();
    replay->frames.push_back(std::move(frame));
  };

  const auto notRun = [&](const ScenarioEvent& e, const std::string& why) {
    const std::string line = std::string(eventTypeName(e.type())) + " at " +
                             std::to_string(e.time).substr(0, 5) + " s: not run: " + why;
    if (std::find(result.notRun.begin(), result.notRun.end(), line) == result.notRun.end()) {
      result.notRun.push_back(line);
    }
  };

  // The animation's own linear velocity per body at the newest animated sample (SPEC section 3
  // on the character's history, whatever the handoff mode).
  const auto animationVelocities = [&]() {
    std::vector<Vec3> rawL(bodyCount), rawA(bodyCount), lin(bodyCount), ang(bodyCount);
    std::vector<std::uint8_t> clamps(bodyCount);
    HandoffSettings hs = cs.handoff;
    hs.mode = HandoffMode::Inherit;
    inheritVelocities(ch.ragdoll().history(), hs, rawL, rawA, lin, ang, clamps);
    return lin;
  };

  // Measures a commit (a `ragdoll` handoff or a powered entry) from the Character's record.
  const auto measure = [&](const HandoffRecord& record, double t, const char* kind) {
    HandoffMetrics m;
    m.kind = kind;
    m.time = t;
    m.mode = scenarioHandoffModeName(mode);
    m.committed = record.committed;
    m.failure = record.failure;
    m.teleportFlagged = record.teleportFlagged;
    m.teleportDetected = record.teleportDetected;
    m.rootJump = record.rootJump;
    m.sampleDt = record.sampleDt;
    result.handoffs.push_back(m);
    if (!record.committed) return;
    // The animation's own velocity (SPEC section 3 on the same history, whatever the mode) and
    // the animated pose the player saw.
    const PoseHistory& h = ch.ragdoll().history();
    const std::vector<Vec3> lin = animationVelocities();
    tracker.record = record;
    tracker.animatedPoses.resize(bodyCount);
    HandoffMetrics& hm = result.handoffs.back();
    for (size_t b = 0; b < bodyCount; ++b) {
      tracker.animatedPoses[b] = h.body(0, static_cast<int>(b));
      const BodyHandoff& bh = record.bodies[b];
      BodyHandoffMetrics bm;
      bm.name = bh.name;
      bm.positionJump = glm::length(bh.poseAfter.translation - tracker.animatedPoses[b].translation);
      bm.animatedVelocity = lin[b];
      bm.inheritedLinear = bh.linearVelocity;
      bm.inheritedAngular = bh.angularVelocity;
      bm.clamps = clampReasonText(bh.clamps);
      bm.teleport = bh.teleport;
      bm.snapped = bh.snapped;
      hm.maxPositionJump = std::max(hm.maxPositionJump, bm.positionJump);
      hm.bodies.push_back(bm);
    }
    tracker.open = static_cast<int>(result.handoffs.size()) - 1;
    tracker.commitTime = t;
    tracker.stepsSinceCommit = 0;
  };

  const auto commit = [&](double t) {
    // The animation sampled 1/8 frame before: a nearly instantaneous velocity (SPEC section 3,
    // "sample more densely"). Right after a teleport it is sampled at the new place, as a game
    // would: the jump stays between the older samples and gives no velocity.
    sampleAt(t - dt / 8, dense);
    const AnimationInput d{t - dt / 8, root, dense, false};
    measure(ch.goRagdoll(&d), t, "handoff");
  };

  // Per asset body, the physics weight a `partial` event gives it: its own entry (bone or slot
  // name), else the largest weight of the regions containing its slot, else 0.
  const auto partialWeights = [&](const ScenarioEvent::Partial& p) {
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
      const int b = bodyNamed(asset, skeleton, name);
      if (b >= 0) weights[static_cast<size_t>(b)] = w;
    }
    return weights;
  };
  const auto poweredEntry = [&](const ScenarioEvent& e, double t, const Status& st, size_t recordsBefore) {
    if (!st) {
      notRun(e, st.error());
    } else if (ch.handoffs().size() > recordsBefore) {
      measure(ch.handoffs().back(), t, "powered");
    }
  };

  // After the first step past a commit: the before/after figures of every body.
  const auto afterFirstStep = [&]() {
    HandoffMetrics& hm = result.handoffs[static_cast<size_t>(tracker.open)];
    ch.ragdoll().recordFirstStep(tracker.record);
    hm.firstStepRecorded = true;
    hm.worstPopExcess = -1e300;
    hm.worstVelocityExcess = -1e300;
    hm.worstSubstepVelocityExcess = -1e300;
    const double h = tracker.record.firstSubstepTime;
    hm.substepTime = h;
    for (size_t b = 0; b < bodyCount; ++b) {
      const BodyHandoff& bh = tracker.record.bodies[b];
      BodyHandoffMetrics& bm = hm.bodies[b];
      const double speed = glm::length(bm.animatedVelocity);
      bm.postStepLinear = bh.linearVelocityAfterFirstStep;
      bm.postStepAngular = bh.angularVelocityAfterFirstStep;
      bm.firstStepMove =
          glm::length(bh.poseAfterFirstStep.translation - tracker.animatedPoses[b].translation);
      bm.allowedMove = speed * dt + kGravity * dt * dt;
      bm.velocityChange = glm::length(bm.postStepLinear - bm.animatedVelocity);
      bm.velocityAllowed = 0.05 * speed + kGravity * dt;
      bm.inContact = world->contactCount(ch.ragdoll().body(static_cast<int>(b))) > 0;
      hm.maxFirstStepMove = std::max(hm.maxFirstStepMove, bm.firstStepMove);
      hm.worstPopExcess = std::max(hm.worstPopExcess, bm.firstStepMove - bm.allowedMove);
      // A body that meets the world in that step is stopped by it, as it must be: the velocity
      // criterion is about what the joints and gravity do.
      if (bm.inContact) {
        ++hm.bodiesInContact;
        continue;
      }
      hm.maxVelocityChange = std::max(hm.maxVelocityChange, bm.velocityChange);
      hm.worstVelocityExcess = std::max(hm.worstVelocityExcess, bm.velocityChange - bm.velocityAllowed);
      if (bh.firstSubstepRecorded) {
        bm.postSubstepLinear = bh.linearVelocityAfterFirstSubstep;
        bm.substepVelocityChange = glm::length(bm.postSubstepLinear - bm.inheritedLinear);
        bm.substepVelocityAllowed = 0.05 * glm::length(bm.inheritedLinear) + kGravity * h;
        hm.maxSubstepVelocityChange = std::max(hm.maxSubstepVelocityChange, bm.substepVelocityChange);
        hm.worstSubstepVelocityExcess =
            std::max(hm.worstSubstepVelocityExcess, bm.substepVelocityChange - bm.substepVelocityAllowed);
      }
    }
    if (hm.worstVelocityExcess < -1e299) hm.worstVelocityExcess = 0.0;
    if (hm.worstSubstepVelocityExcess < -1e299) hm.worstSubstepVelocityExcess = 0.0;
    hm.worstSpeedExcess = -1e300;
    if (hm.kind == "powered") {
      // The animation through the same step (the newest history sample is its pose at the step's
      // end), by the same allowances: what the drives were asked to follow.
      const PoseHistory& h = ch.ragdoll().history();
      const std::vector<Vec3> lin = animationVelocities();
      hm.animationPopExcess = hm.animationVelocityExcess = -1e300;
      for (size_t b = 0; b < bodyCount; ++b) {
        const BodyHandoffMetrics& bm = hm.bodies[b];
        const double move =
            glm::length(h.body(0, static_cast<int>(b)).translation - tracker.animatedPoses[b].translation);
        hm.animationPopExcess = std::max(hm.animationPopExcess, move - bm.allowedMove);
        if (bm.inContact) continue;
        hm.animationVelocityExcess = std::max(hm.animationVelocityExcess,
                                              glm::length(lin[b] - bm.animatedVelocity) - bm.velocityAllowed);
      }
      if (hm.animationVelocityExcess < -1e299) hm.animationVelocityExcess = 0.0;
    }
  };

  // The seconds after: no explosion (no body faster than it started plus free fall plus 1 m/s),
  // joint anchors together.
  const auto follow = [&](double t) {
    HandoffMetrics& hm = result.handoffs[static_cast<size_t>(tracker.open)];
    const double since = t - tracker.commitTime;
    const bool simulated = ch.state() == CharacterState::Ragdoll || ch.state() == CharacterState::Powered;
    if (!simulated || since > options.followWindow + 1e-9) {
      tracker.open = -1;
      return;
    }
    hm.followTime = since;
    for (size_t b = 0; b < bodyCount; ++b) {
      const double speed = glm::length(world->linearVelocity(ch.ragdoll().body(static_cast<int>(b))));
      const double allowed =
          glm::length(hm.bodies[b].inheritedLinear) + kGravity * since + 1.0 + hm.hitAllowance;
      hm.worstSpeedExcess = std::max(hm.worstSpeedExcess, speed - allowed);
    }
    hm.maxJointSeparation = std::max(hm.maxJointSeparation, ch.ragdoll().maxJointSeparation());
  };

  // A hit reaction until it ends: how far the hit threw the bodies while powered, then the
  // return to animation (the errors at the last powered frame) or the knock-out.
  const auto followHit = [&](double t) {
    HitReactionMetrics& hit = result.hitReactions[static_cast<size_t>(openHit)];
    if (ch.state() == CharacterState::Powered) {
      localToModel(skeleton, locals, models);
      bodyPosesFromModels(asset, models, root, animatedBodies);
      const size_t b = static_cast<size_t>(hitBody);
      hit.peakHitBodyDeviation = std::max(
          hit.peakHitBodyDeviation, glm::length(world->transform(ch.ragdoll().body(hitBody)).translation -
                                                animatedBodies[b].translation));
      hit.peakDeviation = std::max(hit.peakDeviation, ch.poweredMaxPositionError());
      hit.rmsAtReturn = ch.poweredRmsJointError();
      hit.maxAtReturn = ch.poweredMaxJointError();
      return;
    }
    if (ch.state() == CharacterState::Animated) {
      hit.returned = true;
      hit.returnTime = t - hit.time;
    } else {
      hit.knockedOut = ch.state() == CharacterState::Ragdoll;
      hit.knockoutTime = t - hit.time;
    }
    openHit = -1;
  };

  const auto runPostEvents = [&](double t) {
    for (const ScenarioEvent* e : postEvents) {
      switch (e->type()) {
        case EventType::Ragdoll:
          commit(t);
          break;
        case EventType::Impulse: {
          const auto& p = std::get<ScenarioEvent::Impulse>(e->payload);
          const int b = bodyNamed(asset, skeleton, p.body);
          if (b < 0) {
            notRun(*e, "no body for '" + p.body + "'");
            break;
          }
          const Transform bodyPose = world->transform(ch.ragdoll().body(b));
          const Vec3 impulse =
              p.impulseSpace == ImpulseSpace::Root ? root.transformVector(p.impulse) : p.impulse;
          Vec3 point = bodyPose.translation;
          if (p.point)
            point = p.pointSpace == PointSpace::Body ? bodyPose.transformPoint(*p.point) : *p.point;
          const bool wasAnimated = ch.state() == CharacterState::Animated;
          const size_t before = ch.handoffs().size();
          const Status st = ch.applyImpulse(b, impulse, point);
          if (st && wasAnimated && ch.state() == CharacterState::Powered && ch.handoffs().size() > before) {
            // The hit reaction: the Character went powered by itself, then took the impulse.
            measure(ch.handoffs().back(), t, "powered");
            HitReactionMetrics hit;
            hit.time = t;
            hit.body = asset.bodies[static_cast<size_t>(b)].name;
            hit.impulse = glm::length(impulse);
            result.hitReactions.push_back(hit);
            openHit = static_cast<int>(result.hitReactions.size()) - 1;
            hitBody = b;
          }
          if (!st) {
            notRun(*e, st.error());
          } else if (tracker.open >= 0 && ch.state() != CharacterState::Animated) {
            HandoffMetrics& hm = result.handoffs[static_cast<size_t>(tracker.open)];
            const double mass = world->mass(ch.ragdoll().body(b));
            hm.hitAllowance += glm::length(impulse) / mass;
            if (tracker.stepsSinceCommit == 0) {
              char text[160];
              std::snprintf(text, sizeof text, "%.0f N s on %s (%.1f kg) at %.3f s", glm::length(impulse),
                            asset.bodies[static_cast<size_t>(b)].name.c_str(), mass, t);
              hm.firstStepImpulse = text;
            }
          }
          break;
        }
        case EventType::GetUpAllowed:
          ch.setGetUpAllowed(std::get<ScenarioEvent::GetUpAllowed>(e->payload).allowed);
          break;
        case EventType::Powered: {
          const auto& p = std::get<ScenarioEvent::Powered>(e->payload);
          PoweredSettings ps = cs.hitReaction;
          ps.solver = s.settings.driveSolver;
          ps.weight = p.weight;
          ps.rampTime = p.rampTime;
          ps.bodyWeights.clear();
          ps.returnWhenSettled = false;  // the scenario says when (`animate`)
          const size_t before = ch.handoffs().size();
          poweredEntry(*e, t, ch.goPowered(ps), before);
          break;
        }
        case EventType::Partial: {
          const auto& p = std::get<ScenarioEvent::Partial>(e->payload);
          const std::vector<double> weights = partialWeights(p);
          const size_t before = ch.handoffs().size();
          if (ch.state() == CharacterState::Powered) {
            if (Status st = ch.setBodyWeights(weights); !st) notRun(*e, st.error());
          } else {
            PoweredSettings ps = cs.hitReaction;
            ps.solver = s.settings.driveSolver;
            ps.returnWhenSettled = false;
            poweredEntry(*e, t, ch.goPartial(weights, p.rampTime, ps), before);
          }
          break;
        }
        case EventType::Animate:
          if (Status st = ch.goAnimated(std::get<ScenarioEvent::Animate>(e->payload).blendTime); !st) {
            notRun(*e, st.error());
          }
          break;
        case EventType::End:
        default:
          break;
      }
    }
  };

  runPostEvents(0.0);
  recordFrame(0.0, true);
  for (int k = 0; k < frames; ++k) {
    const double t1 = (k + 1) * dt;
    teleportPending = false;
    collectDue(t1);
    const bool teleportThisFrame = teleportPending;
    sampleAt(t1, locals);
    const AnimationInput input{t1, root, locals, teleportThisFrame};
    if (Status st = ch.preStep(input, dt); !st) {
      result.error = "frame " + std::to_string(k + 1) + ": " + st.error();
      return false;
    }
    // The first step after a commit: a probe records the bodies after its first substep (the
    // listener the Character installed while powered keeps running behind it).
    const bool firstStep = tracker.open >= 0 && tracker.stepsSinceCommit == 0;
    FirstSubstepProbe probe(ch.ragdoll(), tracker.record,
                            ch.state() == CharacterState::Powered ? &ch.substepListener() : nullptr);
    if (firstStep) world->setSubstepListener(&probe);
    world->step(dt, substeps);
    if (firstStep) {
      probe.finish();
      world->setSubstepListener(probe.next());
    }
    bodiesLeftWorld += world->lastStepStats().bodiesLeftWorld;
    if (tracker.open >= 0) ++tracker.stepsSinceCommit;
    if (firstStep) afterFirstStep();
    ch.postStep(dt);
    if (tracker.open >= 0) follow(t1);
    if (openHit >= 0) followHit(t1);
    if (ch.blockingRepresentations() != 1) ++blockingViolations;

    // Recovery jumps of the displayed pelvis and ankles, beyond the get-up clip's own motion.
    localToModel(skeleton, ch.displayLocals(), displayModels);
    const Vec3 p =
        ch.displayRoot().transformPoint(displayModels[static_cast<size_t>(pelvisJoint)].translation);
    Vec3 a[2];
    for (int i = 0; i < 2; ++i) {
      a[i] = ankles[i] >= 0
                 ? ch.displayRoot().transformPoint(displayModels[static_cast<size_t>(ankles[i])].translation)
                 : p;
    }
    while (recoveriesSeen < ch.recoveries().size()) {
      result.recoveries.push_back({});
      ++recoveriesSeen;
    }
    if (haveLast && ch.state() == CharacterState::Recovering && !ch.recoveries().empty()) {
      const RecoveryRecord& rec = ch.recoveries().back();
      const GetUpClip* g = rec.facing == Facing::Supine ? &*l.supine : &*l.prone;
      const double since = ch.time() - rec.startTime;
      sampleGetUpInRoot(g->clip, skeleton, g->info, since, clipA);
      sampleGetUpInRoot(g->clip, skeleton, g->info, std::max(0.0, since - dt), clipB);
      localToModel(skeleton, clipA, clipMa);
      localToModel(skeleton, clipB, clipMb);
      const auto clipMove = [&](int joint) {
        return glm::length(clipMa[static_cast<size_t>(joint)].translation -
                           clipMb[static_cast<size_t>(joint)].translation);
      };
      RecoveryMetrics& rm = result.recoveries.back();
      rm.worstPelvisJump = std::max(rm.worstPelvisJump, glm::length(p - lastPelvis) - clipMove(pelvisJoint));
      for (int i = 0; i < 2; ++i) {
        if (ankles[i] >= 0) {
          rm.worstFootJump =
              std::max(rm.worstFootJump, glm::length(a[i] - lastAnkles[i]) - clipMove(ankles[i]));
        }
      }
    }
    lastPelvis = p;
    lastAnkles[0] = a[0];
    lastAnkles[1] = a[1];
    haveLast = true;
    if (ch.takeRecoveryFinished()) {
      // The game resumes its clip from where the character stands.
      root = rootToStartClip(*clip, skeleton, pelvisJoint, asset.modelForward, ch.displayRoot());
      clipStart = 0.0;
      clipSceneStart = t1;
    }

    runPostEvents(t1);
    recordFrame(t1, false);
  }

  for (size_t i = 0; i < ch.recoveries().size() && i < result.recoveries.size(); ++i) {
    const RecoveryRecord& r = ch.recoveries()[i];
    RecoveryMetrics& rm = result.recoveries[i];
    rm.facing = facingName(r.facing);
    rm.settleTime = r.settleTime;
    rm.startTime = r.startTime;
    rm.finished = r.finished;
    rm.cancelled = r.cancelled;
    const GetUpClip* g =
        r.facing == Facing::Supine ? (l.supine ? &*l.supine : nullptr) : (l.prone ? &*l.prone : nullptr);
    if (g != nullptr) rm.getUpTail = g->info.completion.tailDuration;
  }
  result.events = ch.events();
  result.poweredReturned = ch.state() == CharacterState::Animated &&
                           std::any_of(ch.events().begin(), ch.events().end(),
                                       [](const CharacterEvent& e) { return e.kind == "unpowered"; });
  result.frames = frames;
  result.dt = dt;
  result.endTime = frames * dt;
  runner_detail::RunCounters counters{blockingViolations, bodiesLeftWorld};
  result.checks = runner_detail::checksFor(s, result, counters);
  if (replay) {
    replay->boxes = boxes;
    for (const CharacterEvent& e : ch.events()) replay->events.push_back({e.time, e.kind, e.detail});
    for (const ScenarioEvent& e : s.events) {
      if (!e.label.empty()) replay->events.push_back({e.time, eventTypeName(e.type()), e.label});
    }
    std::stable_sort(replay->events.begin(), replay->events.end(),
                     [](const ReplayEvent& a, const ReplayEvent& b) { return a.time < b.time; });
  }
  return true;
}

}  // namespace runner_detail

ScenarioResult ScenarioRunner::run(const Scenario& scenario, Replay* replay,
                                   std::vector<Replay>* baselineReplays) {
  const auto started = std::chrono::steady_clock::now();
  ScenarioResult result;
  result.name = scenario.name;
  result.description = scenario.description;
  result.source = scenario.sourceName.empty() ? "built-in" : scenario.sourceName;
  result.character = scenario.character.file;
  result.clip = scenario.clip.name.empty() ? "#" + std::to_string(scenario.clip.index) : scenario.clip.name;
  result.driveMode = driveSolverName(scenario.settings.driveSolver);
  Result<Loaded> loaded = load(impl_->cache, options_, scenario);
  if (!loaded) {
    result.error = loaded.error();
  } else {
    result.ok = runner_detail::runOnce(*loaded, scenario, scenario.settings.handoffMode, scenario.endTime,
                                       options_, result, replay);
    // The naive baselines on the same frames, up to baselineSeconds after the first handoff.
    if (result.ok && options_.baselines && scenario.settings.handoffMode == HandoffMode::Inherit &&
        !result.handoffs.empty()) {
      const double end = std::min(scenario.endTime, result.handoffs.front().time + options_.baselineSeconds);
      for (HandoffMode mode : {HandoffMode::ZeroVelocity, HandoffMode::BindPose}) {
        ScenarioResult b;
        b.name = scenario.name;
        Replay baselineReplay;
        BaselineResult br;
        br.mode = scenarioHandoffModeName(mode);
        if (runner_detail::runOnce(*loaded, scenario, mode, end, options_, b,
                                   baselineReplays ? &baselineReplay : nullptr) &&
            !b.handoffs.empty()) {
          br.handoff = b.handoffs.front();
        }
        result.baselines.push_back(br);
        if (baselineReplays) {
          baselineReplay.name = scenario.name + "." + br.mode;
          baselineReplays->push_back(std::move(baselineReplay));
        }
      }
    }
    // The other drive solver on the same frames, when the scenario powers the character.
    const bool powered = std::any_of(result.handoffs.begin(), result.handoffs.end(),
                                     [](const HandoffMetrics& h) { return h.kind == "powered"; });
    if (result.ok && options_.driveComparison && powered) {
      Scenario other = scenario;
      other.settings.driveSolver = scenario.settings.driveSolver == DriveSolver::Explicit
                                       ? DriveSolver::Implicit
                                       : DriveSolver::Explicit;
      ScenarioResult o;
      o.name = scenario.name;
      DriveComparison dc;
      dc.driveMode = driveSolverName(other.settings.driveSolver);
      dc.ok = runner_detail::runOnce(*loaded, other, scenario.settings.handoffMode, scenario.endTime,
                                     options_, o, nullptr);
      for (const HandoffMetrics& h : o.handoffs) {
        if (h.kind == "powered" && !dc.powered) dc.powered = h;
      }
      dc.poweredMaxPositionError = o.poweredMaxPositionError;
      dc.poweredMaxRmsJointError = o.poweredMaxRmsJointError;
      dc.poweredReturned = o.poweredReturned;
      dc.hitReactions = o.hitReactions;
      dc.knockedOut = std::any_of(o.events.begin(), o.events.end(),
                                  [](const CharacterEvent& e) { return e.kind == "knockout"; });
      for (const ThresholdCheck& c : o.checks) {
        if (c.name.rfind("powered.", 0) == 0) dc.checks.push_back(c);
      }
      result.driveComparisons.push_back(std::move(dc));
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace handoff
