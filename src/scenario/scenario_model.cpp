// Scenario helpers: names, world geometry, file resolution and validation against the character.
#include "handoff/scenario.h"

#include "handoff/level.h"
#include "scenario/scenario_internal.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <system_error>

namespace handoff {

namespace scenario_detail {

std::string validUtf8(const std::string& text) { return handoff::validUtf8(text); }

std::string formatNumber(double value) {
  std::array<char, 64> buffer{};
  // Whole numbers below 1e15 in plain digits ("100000", not "1e+05"); others in the shortest form.
  const bool whole = std::abs(value) < 1e15 && value == std::floor(value);
  const auto [end, error] =
      whole ? std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::fixed)
            : std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  if (error != std::errc{}) return "?";
  return std::string(buffer.data(), end);
}

}  // namespace scenario_detail

using scenario_detail::formatNumber;

Quat yawRotation(double yaw) { return glm::angleAxis(yaw, Vec3{0.0, 1.0, 0.0}); }

ScenarioBox wallBox(const ScenarioWall& wall) {
  const Vec3 along{wall.to.x - wall.from.x, 0.0, wall.to.z - wall.from.z};
  const double length = glm::length(along);
  ScenarioBox box;
  box.center = 0.5 * (wall.from + wall.to) + Vec3{0.0, 0.5 * wall.height, 0.0};
  box.halfExtents = Vec3{0.5 * length, 0.5 * wall.height, 0.5 * wall.thickness};
  box.yaw = length > 0.0 ? std::atan2(-along.z, along.x) : 0.0;
  box.friction = wall.friction;
  return box;
}

std::vector<ScenarioBox> stepBoxes(const ScenarioSteps& steps) {
  std::vector<ScenarioBox> boxes;
  const Vec3 horizontal{steps.direction.x, 0.0, steps.direction.z};
  const double length = glm::length(horizontal);
  if (!(length > 0.0) || steps.count <= 0) return boxes;
  const Vec3 forward = horizontal / length;
  const double yaw = std::atan2(-forward.z, forward.x);
  boxes.reserve(static_cast<std::size_t>(steps.count));
  for (int i = 0; i < steps.count; ++i) {
    const double top = (i + 1) * steps.rise;
    ScenarioBox box;
    box.center = steps.origin + forward * ((i + 0.5) * steps.run) + Vec3{0.0, 0.5 * top, 0.0};
    box.halfExtents = Vec3{0.5 * steps.run, 0.5 * top, 0.5 * steps.width};
    box.yaw = yaw;
    box.friction = steps.friction;
    boxes.push_back(box);
  }
  return boxes;
}

std::vector<ScenarioBox> staticBoxes(const ScenarioWorld& world) {
  std::vector<ScenarioBox> boxes = world.boxes;
  for (const ScenarioWall& wall : world.walls) boxes.push_back(wallBox(wall));
  for (const ScenarioSteps& steps : world.steps) {
    const std::vector<ScenarioBox> flight = stepBoxes(steps);
    boxes.insert(boxes.end(), flight.begin(), flight.end());
  }
  return boxes;
}

namespace {

constexpr const char* kRegionNames[] = {"full_body", "upper_body", "lower_body", "spine",
                                        "head",      "arms",       "legs",       "left_arm",
                                        "right_arm", "left_leg",   "right_leg"};
static_assert(std::size(kRegionNames) == static_cast<std::size_t>(BodyRegion::Count));

}  // namespace

const char* bodyRegionName(BodyRegion region) {
  const auto index = static_cast<std::size_t>(region);
  return index < std::size(kRegionNames) ? kRegionNames[index] : "?";
}

std::optional<BodyRegion> bodyRegionFromName(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kRegionNames); ++i) {
    if (name == kRegionNames[i]) return static_cast<BodyRegion>(i);
  }
  return std::nullopt;
}

bool regionContains(BodyRegion region, Slot slot) {
  const bool leftArm = slot == Slot::UpperArmL || slot == Slot::LowerArmL || slot == Slot::HandL;
  const bool rightArm = slot == Slot::UpperArmR || slot == Slot::LowerArmR || slot == Slot::HandR;
  const bool leftLeg = slot == Slot::UpperLegL || slot == Slot::LowerLegL || slot == Slot::FootL;
  const bool rightLeg = slot == Slot::UpperLegR || slot == Slot::LowerLegR || slot == Slot::FootR;
  switch (region) {
    case BodyRegion::FullBody:
      return slot != Slot::Count;
    case BodyRegion::UpperBody:
      return slot == Slot::LowerSpine || slot == Slot::Chest || slot == Slot::Head || leftArm || rightArm;
    case BodyRegion::LowerBody:
      return slot == Slot::Pelvis || leftLeg || rightLeg;
    case BodyRegion::Spine:
      return slot == Slot::Pelvis || slot == Slot::LowerSpine || slot == Slot::Chest;
    case BodyRegion::Head:
      return slot == Slot::Head;
    case BodyRegion::Arms:
      return leftArm || rightArm;
    case BodyRegion::Legs:
      return leftLeg || rightLeg;
    case BodyRegion::LeftArm:
      return leftArm;
    case BodyRegion::RightArm:
      return rightArm;
    case BodyRegion::LeftLeg:
      return leftLeg;
    case BodyRegion::RightLeg:
      return rightLeg;
    case BodyRegion::Count:
      break;
  }
  return false;
}

// -----------------------------------------------------------------------------------------------
// Files
// -----------------------------------------------------------------------------------------------

namespace {

std::string sourceOf(const Scenario& scenario) {
  return scenario.sourceName.empty() ? (scenario.name.empty() ? std::string("scenario") : scenario.name)
                                     : scenario.sourceName;
}

bool isFile(const std::filesystem::path& path) {
  std::error_code error;
  return std::filesystem::is_regular_file(path, error);
}

/// The resolved path, or the error text (without the source prefix).
Result<std::string> resolve(const Scenario& scenario, const std::string& file,
                            std::span<const std::string> searchDirs) {
  if (file.empty()) return Error{"empty file name"};
  const std::filesystem::path given(file);
  if (given.is_absolute()) {
    if (isFile(given)) return given.string();
    return Error{"'" + file + "' not found"};
  }
  std::vector<std::filesystem::path> bases;
  bases.emplace_back(scenario.baseDir.empty() ? std::filesystem::path(".")
                                              : std::filesystem::path(scenario.baseDir));
  for (const std::string& dir : searchDirs) bases.emplace_back(dir);
  std::string looked;
  for (const std::filesystem::path& base : bases) {
    const std::filesystem::path candidate = (base / given).lexically_normal();
    if (isFile(candidate)) return candidate.string();
    looked += (looked.empty() ? "" : ", ") + base.string();
  }
  return Error{"'" + file + "' not found (looked in " + looked + ")"};
}

class Problems {
 public:
  explicit Problems(std::string source) : source_(std::move(source)) {}
  void add(const std::string& path, const std::string& what) {
    message_ += (message_.empty() ? "" : "\n") + source_ + ": " + path + ": " + what;
  }
  Status status() const {
    return message_.empty() ? Status{} : Status{Error{scenario_detail::validUtf8(message_)}};
  }
  bool empty() const { return message_.empty(); }

 private:
  std::string source_;
  std::string message_;
};

std::string clipList(const ImportedAsset& asset) {
  std::string list;
  const std::size_t shown = std::min<std::size_t>(asset.clips.size(), 12);
  for (std::size_t i = 0; i < shown; ++i) list += (i ? ", " : "") + asset.clips[i].name;
  if (shown < asset.clips.size()) list += ", ... (" + std::to_string(asset.clips.size()) + " clips)";
  return list;
}

/// Checks a clip reference against the file that holds it.
void checkClip(const ScenarioClip& clip, const std::string& path, const ImportedAsset& asset,
               const std::string& fileLabel, Problems& problems) {
  if (asset.clips.empty()) {
    problems.add(path, fileLabel + " has no clips");
    return;
  }
  const Clip* found = nullptr;
  if (!clip.name.empty()) {
    for (const Clip& candidate : asset.clips) {
      if (candidate.name == clip.name) found = &candidate;
    }
    if (!found) {
      std::vector<std::string> names;
      for (const Clip& candidate : asset.clips) names.push_back(candidate.name);
      problems.add(path + ".name", "no clip named '" + clip.name + "' in " + fileLabel +
                                       didYouMean(clip.name, names) + "; clips: " + clipList(asset));
      return;
    }
  } else {
    if (clip.index < 0 || static_cast<std::size_t>(clip.index) >= asset.clips.size()) {
      problems.add(path + ".index", std::to_string(clip.index) + " is out of range: " + fileLabel + " has " +
                                        std::to_string(asset.clips.size()) + " clip(s)");
      return;
    }
    found = &asset.clips[static_cast<std::size_t>(clip.index)];
  }
  if (found->frameCount < 1) {
    problems.add(path, "clip '" + found->name + "' has no frames");
    return;
  }
  if (clip.wrap == WrapMode::Clamp && clip.startTime > found->duration() + 1e-9) {
    problems.add(path + ".startTime", formatNumber(clip.startTime) + " s is past the end of clip '" +
                                          found->name + "' (" + formatNumber(found->duration()) + " s)");
  }
}

void checkBody(const std::string& name, const std::string& path, const Skeleton& skeleton,
               Problems& problems) {
  if (skeleton.findJoint(name) >= 0 || slotFromName(name)) return;
  std::vector<std::string> candidates = skeleton.jointNames;
  for (int s = 0; s < kSlotCount; ++s) candidates.emplace_back(slotName(static_cast<Slot>(s)));
  problems.add(path, "no bone named '" + name + "'" + didYouMean(name, candidates) +
                         " (a bone of the character or a slot name such as 'chest')");
}

/// A bone (exact name, not a slot) that the animation keeps: one of the skeleton, not its root.
void checkOwnedBone(const std::string& name, const std::string& path, const Skeleton& skeleton,
                    Problems& problems) {
  const int joint = skeleton.findJoint(name);
  if (joint < 0) {
    problems.add(path, "no bone named '" + name + "'" + didYouMean(name, skeleton.jointNames));
  } else if (skeleton.parents[static_cast<std::size_t>(joint)] == kNoParent) {
    problems.add(path, "'" + name + "' is the skeleton's root, which the physics pose is written against");
  }
}

/// Every clip reference of a scenario with its JSON path.
std::vector<std::pair<std::string, const ScenarioClip*>> clipRefs(const Scenario& scenario,
                                                                  bool withRecovery) {
  std::vector<std::pair<std::string, const ScenarioClip*>> refs;
  refs.emplace_back("clip", &scenario.clip);
  for (std::size_t i = 0; i < scenario.events.size(); ++i) {
    if (const auto* clip = std::get_if<ScenarioEvent::Clip>(&scenario.events[i].payload)) {
      refs.emplace_back("events[" + std::to_string(i) + "]", &clip->clip);
    }
  }
  if (withRecovery) {
    if (scenario.recovery.supine) refs.emplace_back("recovery.supine", &*scenario.recovery.supine);
    if (scenario.recovery.prone) refs.emplace_back("recovery.prone", &*scenario.recovery.prone);
    if (scenario.recovery.landing) refs.emplace_back("recovery.landing", &*scenario.recovery.landing);
  }
  return refs;
}

void validateAgainst(const Scenario& scenario, const ImportedAsset& character, Problems& problems) {
  const std::string label = "the character file '" + scenario.character.file + "'";
  for (const auto& [path, clip] : clipRefs(scenario, true)) {
    if (clip->file.empty()) checkClip(*clip, path, character, label, problems);
  }
  for (std::size_t i = 0; i < scenario.events.size(); ++i) {
    const std::string path = "events[" + std::to_string(i) + "]";
    if (const auto* impulse = std::get_if<ScenarioEvent::Impulse>(&scenario.events[i].payload)) {
      if (!impulse->knockback) checkBody(impulse->body, path + ".body", character.skeleton, problems);
    } else if (const auto* partial = std::get_if<ScenarioEvent::Partial>(&scenario.events[i].payload)) {
      for (const auto& [name, weight] : partial->bodies) {
        checkBody(name, path + ".bodies." + name, character.skeleton, problems);
      }
    }
  }
  const std::vector<std::string>& owned = scenario.settings.animationOwnedBones;
  for (std::size_t i = 0; i < owned.size(); ++i) {
    checkOwnedBone(owned[i], "settings.animationOwnedBones[" + std::to_string(i) + "]", character.skeleton,
                   problems);
  }
  if (scenario.lookAt) checkOwnedBone(scenario.lookAt->bone, "lookAt.bone", character.skeleton, problems);
  for (std::size_t i = 0; i < scenario.props.size(); ++i) {
    const std::string& bone = scenario.props[i].bone;
    if (character.skeleton.findJoint(bone) < 0) {
      problems.add("props[" + std::to_string(i) + "].bone",
                   "no bone named '" + bone + "'" + didYouMean(bone, character.skeleton.jointNames));
    }
  }
}

std::string readText(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  ok = static_cast<bool>(in) || in.eof();
  return text.str();
}

}  // namespace

Result<std::string> resolveScenarioFile(const Scenario& scenario, const std::string& file,
                                        std::span<const std::string> searchDirs) {
  Result<std::string> resolved = resolve(scenario, file, searchDirs);
  if (!resolved) return Error{sourceOf(scenario) + ": " + resolved.error()};
  return resolved;
}

Status validateScenarioAgainst(const Scenario& scenario, const ImportedAsset& character) {
  Problems problems(sourceOf(scenario));
  validateAgainst(scenario, character, problems);
  return problems.status();
}

Status validateScenarioFiles(const Scenario& scenario, std::span<const std::string> searchDirs) {
  const std::string source = sourceOf(scenario);
  Problems problems(source);

  Result<std::string> characterPath = resolve(scenario, scenario.character.file, searchDirs);
  if (!characterPath) {
    problems.add("character.file", characterPath.error());
    return problems.status();
  }
  ImportOptions options;
  options.unitScale = scenario.character.unitScale;
  Result<ImportedAsset> character = importFile(*characterPath, options);
  if (!character) {
    problems.add("character.file", character.error());
    return problems.status();
  }
  const Skeleton& skeleton = character->skeleton;

  if (!scenario.character.map.empty()) {
    Result<std::string> mapPath = resolve(scenario, scenario.character.map, searchDirs);
    if (!mapPath) {
      problems.add("character.map", mapPath.error());
    } else {
      bool ok = false;
      const std::string text = readText(*mapPath, ok);
      if (!ok) {
        problems.add("character.map", "cannot read '" + *mapPath + "'");
      } else if (Result<HumanoidMap> map = mapHumanoidFromJson(skeleton, text, *mapPath); !map) {
        problems.add("character.map", map.error());
      }
    }
  }
  if (!scenario.ragdoll.asset.empty()) {
    Result<std::string> assetPath = resolve(scenario, scenario.ragdoll.asset, searchDirs);
    if (!assetPath) {
      problems.add("ragdoll.asset", assetPath.error());
    } else if (Result<RagdollAsset> asset = loadRagdollFile(*assetPath); !asset) {
      problems.add("ragdoll.asset", asset.error());
    } else if (Status joints = resolveJoints(*asset, skeleton); !joints) {
      problems.add("ragdoll.asset", joints.error());
    }
  }

  if (scenario.world.level) {
    Result<std::string> levelPath = resolve(scenario, scenario.world.level->file, searchDirs);
    if (!levelPath) {
      problems.add("world.level.file", levelPath.error());
    } else {
      LevelOptions levelOptions;
      levelOptions.unitScale = scenario.world.level->unitScale;
      if (Result<Level> level = loadLevel(*levelPath, levelOptions); !level)
        problems.add("world.level.file", level.error());
    }
  }

  validateAgainst(scenario, *character, problems);

  // Clips in separate files: the played ones must carry the character's skeleton; get-up clips
  // may come from another rig (the runner retargets them).
  std::map<std::string, std::unique_ptr<ImportedAsset>> imported;
  for (const auto& [path, clip] : clipRefs(scenario, true)) {
    if (clip->file.empty()) continue;
    Result<std::string> clipPath = resolve(scenario, clip->file, searchDirs);
    if (!clipPath) {
      problems.add(path + ".file", clipPath.error());
      continue;
    }
    std::unique_ptr<ImportedAsset>& slot = imported[*clipPath];
    if (!slot) {
      Result<ImportedAsset> asset = importFile(*clipPath, options);
      if (!asset) {
        problems.add(path + ".file", asset.error());
        continue;
      }
      slot = std::make_unique<ImportedAsset>(std::move(asset).value());
    }
    const bool played = path.rfind("recovery.", 0) != 0;
    if (played && slot->skeleton.jointNames != skeleton.jointNames) {
      std::string detail;
      const std::size_t n = std::min(slot->skeleton.jointNames.size(), skeleton.jointNames.size());
      for (std::size_t j = 0; j < n && detail.empty(); ++j) {
        if (slot->skeleton.jointNames[j] != skeleton.jointNames[j]) {
          detail = "joint " + std::to_string(j) + " is '" + slot->skeleton.jointNames[j] +
                   "', the character's '" + skeleton.jointNames[j] + "'";
        }
      }
      if (detail.empty()) {
        detail = std::to_string(slot->skeleton.jointNames.size()) + " joints, the character has " +
                 std::to_string(skeleton.jointNames.size());
      }
      problems.add(path + ".file",
                   "'" + clip->file + "' has another skeleton than the character (" + detail + ")");
      continue;
    }
    checkClip(*clip, path, *slot, "'" + clip->file + "'", problems);
  }
  return problems.status();
}

}  // namespace handoff
