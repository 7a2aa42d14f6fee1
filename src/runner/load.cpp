// Loading a scenario's character, ragdoll, clips and get-up clips through the runner's cache
// (docs/SCENARIOS.md, "How a scenario is played").
#include "runner/runner_internal.h"

#include <array>
#include <fstream>
#include <span>
#include <sstream>
#include <utility>

namespace handoff::runner_detail {
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

/// A clip reference in a file of its own, resolved and imported.
struct ClipSource {
  std::string path;
  std::shared_ptr<const ImportedAsset> file;
  const Clip* clip = nullptr;
};

Result<ClipSource> importClip(Cache& cache, const Scenario& s, const ScenarioClip& ref,
                              std::span<const std::string> dirs) {
  Result<std::string> path = resolveScenarioFile(s, ref.file, dirs);
  if (!path) return Error{path.error()};
  Result<std::shared_ptr<const ImportedAsset>> file = cache.import(*path, 0.0);
  if (!file) return Error{file.error()};
  Result<const Clip*> clip = findClip(**file, ref, *path);
  if (!clip) return Error{clip.error()};
  return ClipSource{*path, *file, *clip};
}

/// A played clip: in the character file, or in a file of its own on the same skeleton.
Result<Clip> loadClipRef(Cache& cache, const Scenario& s, const ScenarioClip& ref,
                         const ImportedAsset& character, const std::string& characterPath,
                         std::span<const std::string> dirs) {
  if (ref.file.empty()) {
    Result<const Clip*> clip = findClip(character, ref, characterPath);
    if (!clip) return Error{clip.error()};
    return **clip;
  }
  Result<ClipSource> source = importClip(cache, s, ref, dirs);
  if (!source) return Error{source.error()};
  if (source->file->skeleton.jointNames != character.skeleton.jointNames) {
    return Error{source->path + ": the clip's skeleton differs from the character's"};
  }
  return *source->clip;
}

bool sameRig(const Skeleton& a, const Skeleton& b) {
  return a.jointNames == b.jointNames && a.parents == b.parents;
}

/// The supine and prone get-up clips on the character's skeleton (prepareGetUpClips): as is when
/// the rigs match, retargeted otherwise; when both come from one rig, a clip that ends below
/// standing is completed against the pair's standing reference (the last frame of the one that
/// ends tallest) unless `complete` is off.
Result<std::pair<GetUpClip, GetUpClip>> loadGetUps(Cache& cache, const Scenario& s,
                                                   const ScenarioClip& supineRef,
                                                   const ScenarioClip& proneRef,
                                                   const ImportedAsset& character, const RagdollAsset& asset,
                                                   std::span<const std::string> dirs, bool complete) {
  Result<ClipSource> up = importClip(cache, s, supineRef, dirs);
  if (!up) return Error{"recovery.supine: " + up.error()};
  Result<ClipSource> down = importClip(cache, s, proneRef, dirs);
  if (!down) return Error{"recovery.prone: " + down.error()};
  const std::array<const ClipSource*, 2> sources{&*up, &*down};
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

}  // namespace

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

Result<Clip> loadSwitchClip(Cache& cache, const RunOptions& options, const Scenario& s, const Loaded& l,
                            const ScenarioClip& ref) {
  return loadClipRef(cache, s, ref, *l.character, l.characterPath, options.searchDirs);
}

Result<std::pair<GetUpClip, GetUpClip>> loadScenarioGetUps(Cache& cache, const RunOptions& options,
                                                           const Scenario& s, const Loaded& l) {
  ScenarioClip supine, prone;
  supine.file = options.defaultSupine;
  prone.file = options.defaultProne;
  if (s.recovery.supine) supine = *s.recovery.supine;
  if (s.recovery.prone) prone = *s.recovery.prone;
  return loadGetUps(cache, s, supine, prone, *l.character, *l.asset, options.searchDirs,
                    options.completeGetUps && s.recovery.completeGetUps);
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

Result<Loaded> load(Cache& cache, const RunOptions& options, const Scenario& s) {
  const std::span<const std::string> dirs = options.searchDirs;
  Loaded l;
  Result<std::string> characterPath = resolveScenarioFile(s, s.character.file, dirs);
  if (!characterPath) return Error{"character.file: " + characterPath.error()};
  Result<std::shared_ptr<const ImportedAsset>> character =
      cache.import(*characterPath, s.character.unitScale);
  if (!character) return Error{"character.file: " + character.error()};
  l.character = *character;
  if (Status v = validateScenarioAgainst(s, *l.character); !v) return Error{v.error()};

  if (const std::optional<ScenarioLevel>& level = s.world.level) {
    Result<std::string> path = resolveScenarioFile(s, level->file, dirs);
    if (!path) return Error{"world.level.file: " + path.error()};
    auto it = cache.levels.find({*path, level->unitScale});
    if (it == cache.levels.end()) {
      LevelOptions options;
      options.unitScale = level->unitScale;
      Result<Level> read = loadLevel(*path, options);
      if (!read) return Error{"world.level.file: " + read.error()};
      it = cache.levels
               .emplace(std::pair{*path, level->unitScale},
                        std::make_shared<const Level>(std::move(read).value()))
               .first;
    }
    l.level = it->second;
  }

  // The ragdoll: an asset file, or built from the skeleton (cached per build options).
  if (!s.ragdoll.asset.empty()) {
    Result<std::string> path = resolveScenarioFile(s, s.ragdoll.asset, dirs);
    if (!path) return Error{"ragdoll.asset: " + path.error()};
    auto it = cache.assets.find(*path);
    if (it == cache.assets.end()) {
      Result<RagdollAsset> asset = loadRagdollFile(*path);
      if (!asset) return Error{"ragdoll.asset: " + asset.error()};
      it = cache.assets.emplace(*path, std::make_shared<const RagdollAsset>(std::move(asset).value())).first;
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
    auto it = cache.assets.find(key.str());
    if (it == cache.assets.end()) {
      Result<RagdollAsset> asset = buildRagdoll(l.character->skeleton, b);
      if (!asset) return Error{"ragdoll: " + asset.error()};
      it = cache.assets.emplace(key.str(), std::make_shared<const RagdollAsset>(std::move(asset).value()))
               .first;
    }
    l.asset = it->second;
  }

  Result<Clip> clip = loadClipRef(cache, s, s.clip, *l.character, *characterPath, dirs);
  if (!clip) return Error{"clip: " + clip.error()};
  l.clip = std::move(clip).value();
  for (size_t i = 0; i < s.events.size(); ++i) {
    if (const auto* c = std::get_if<ScenarioEvent::Clip>(&s.events[i].payload)) {
      Result<Clip> switched = loadClipRef(cache, s, c->clip, *l.character, *characterPath, dirs);
      if (!switched) return Error{"events[" + std::to_string(i) + "]: " + switched.error()};
      l.clipSwitches.emplace_back(s.events[i].time, std::move(switched).value());
    }
  }

  l.characterPath = *characterPath;
  if (getUpEverAllowed(s)) {
    Result<std::pair<GetUpClip, GetUpClip>> getUps = loadScenarioGetUps(cache, options, s, l);
    if (!getUps) return Error{getUps.error()};
    l.supine = std::move(getUps->first);
    l.prone = std::move(getUps->second);
  }
  return l;
}

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

}  // namespace handoff::runner_detail
