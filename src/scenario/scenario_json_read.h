// The scenario JSON loader's shared reading tools (not part of the public API): the Reader that
// turns a DOM value into typed fields with range checks and errors naming the JSON path, the
// enum name tables, and the section readers each scenario_json_*.cpp file defines.
// docs/SCENARIOS.md is the format's reference.
#pragma once

#include "handoff/scenario.h"

#include "scenario/scenario_internal.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace handoff::scenario_json {

using json = nlohmann::json;

/// Thrown inside the loader only; caught at the API boundary.
struct LoadError {
  std::string message;
};

inline std::string childPath(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}
inline std::string indexPath(const std::string& path, std::size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

// ---------------------------------------------------------------------------------------------
// Reading the DOM
// ---------------------------------------------------------------------------------------------

inline constexpr double kInf = std::numeric_limits<double>::infinity();

struct Range {
  double lo = -kInf;
  double hi = kInf;
  bool loOpen = false;  // lo excluded
  bool hiOpen = false;  // hi excluded
};
inline constexpr Range kAny{};
inline constexpr Range kUnit{0.0, 1.0, false, false};
inline constexpr Range kFriction{0.0, 10.0, false, false};
inline constexpr Range kDuration{0.0, 10.0, false, false};  // ramps and blends [s]
inline constexpr Range kTime{0.0, kScenarioMaxTime, false, false};
inline constexpr Range kPosition{-kScenarioWorldExtent, kScenarioWorldExtent, false, false};
inline constexpr Range kImpulse{-kScenarioMaxImpulse, kScenarioMaxImpulse, false, false};

inline std::string describe(const json& value) {
  if (value.is_number()) return "number " + scenario_detail::formatNumber(value.get<double>());
  if (value.is_string()) {
    std::string text = value.get<std::string>();
    if (text.size() > 40) text = text.substr(0, 40) + "...";
    return "string '" + text + "'";
  }
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  return value.type_name();
}

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw LoadError{source_ + ": " + (path.empty() ? std::string() : path + ": ") + what};
  }

  void expectObject(const json& value, const std::string& path) const {
    if (!value.is_object()) fail(path, std::string("expected an object, got ") + describe(value));
  }
  void expectArray(const json& value, const std::string& path) const {
    if (!value.is_array()) fail(path, std::string("expected an array, got ") + describe(value));
  }

  /// Refuses more than `bound` entries of an array or object (`bound` is named by `boundName`, a
  /// constant of handoff/scenario.h), before anything is built from them.
  void checkCount(const json& value, const std::string& path, std::size_t bound,
                  const char* boundName) const {
    if (value.size() > bound) {
      fail(path, std::to_string(value.size()) + " entries; at most " + std::to_string(bound) + " (" +
                     boundName + ")");
    }
  }

  /// An array of distinct, non-empty names (`what`: "a bone name", "a slot name"), at most
  /// kScenarioMaxNames.
  std::vector<std::string> nameList(const json& value, const std::string& path, const char* what) const {
    expectArray(value, path);
    checkCount(value, path, kScenarioMaxNames, "kScenarioMaxNames");
    std::vector<std::string> names;
    for (std::size_t i = 0; i < value.size(); ++i) {
      const json& item = value[i];
      const std::string at = indexPath(path, i);
      if (!item.is_string()) fail(at, std::string("expected ") + what + ", got " + describe(item));
      std::string name = item.get<std::string>();
      if (name.empty()) fail(at, "must not be empty");
      const auto seen = std::find(names.begin(), names.end(), name);
      if (seen != names.end())
        fail(at, "'" + name + "' is already listed at " +
                     indexPath(path, static_cast<std::size_t>(seen - names.begin())));
      names.push_back(std::move(name));
    }
    return names;
  }

  /// Rejects keys outside `allowed`, suggesting the closest allowed one.
  void checkKeys(const json& object, const std::string& path, const std::vector<const char*>& allowed,
                 const std::string& context = "") const {
    for (auto it = object.begin(); it != object.end(); ++it) {
      const bool known =
          std::any_of(allowed.begin(), allowed.end(), [&](const char* k) { return it.key() == k; });
      if (known) continue;
      std::vector<std::string> names(allowed.begin(), allowed.end());
      const std::string suggestion = didYouMean(it.key(), names);
      std::string message = "unknown field '" + it.key() + "'" + context + suggestion;
      if (suggestion.empty()) {
        message += "; allowed:";
        for (const char* name : allowed) message += std::string(" ") + name;
      }
      fail(path, message);
    }
  }

  static const json* find(const json& object, const char* key) {
    const auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
  }

  double toNumber(const json& value, const std::string& path, const Range& range) const {
    if (!value.is_number()) fail(path, "expected a number, got " + describe(value));
    const double number = value.get<double>();
    if (!std::isfinite(number)) fail(path, "number is not finite");
    checkRange(number, path, range);
    return number;
  }
  void checkRange(double number, const std::string& path, const Range& range) const {
    using scenario_detail::formatNumber;
    if (range.loOpen ? !(number > range.lo) : !(number >= range.lo)) {
      fail(path, std::string("must be ") + (range.loOpen ? "> " : ">= ") + formatNumber(range.lo) + ", got " +
                     formatNumber(number));
    }
    if (range.hiOpen ? !(number < range.hi) : !(number <= range.hi)) {
      fail(path, std::string("must be ") + (range.hiOpen ? "< " : "<= ") + formatNumber(range.hi) + ", got " +
                     formatNumber(number));
    }
  }
  double number(const json& object, const std::string& path, const char* key, double fallback,
                const Range& range = kAny) const {
    const json* value = find(object, key);
    return value ? toNumber(*value, childPath(path, key), range) : fallback;
  }
  double requiredNumber(const json& object, const std::string& path, const char* key,
                        const Range& range = kAny) const {
    const json* value = find(object, key);
    if (!value) fail(childPath(path, key), "missing (required)");
    return toNumber(*value, childPath(path, key), range);
  }

  int integer(const json& object, const std::string& path, const char* key, int fallback, int lo,
              int hi) const {
    const json* value = find(object, key);
    if (!value) return fallback;
    const std::string where = childPath(path, key);
    if (!value->is_number()) fail(where, "expected an integer, got " + describe(*value));
    const double number = value->get<double>();
    if (!std::isfinite(number) || number != std::floor(number)) {
      fail(where, "expected an integer, got " + describe(*value));
    }
    checkRange(number, where, Range{static_cast<double>(lo), static_cast<double>(hi), false, false});
    return static_cast<int>(number);
  }

  bool boolean(const json& object, const std::string& path, const char* key, bool fallback) const {
    const json* value = find(object, key);
    if (!value) return fallback;
    if (!value->is_boolean()) fail(childPath(path, key), "expected true or false, got " + describe(*value));
    return value->get<bool>();
  }

  std::string string(const json& object, const std::string& path, const char* key, std::string fallback,
                     bool allowEmpty = true) const {
    const json* value = find(object, key);
    if (!value) return fallback;
    if (!value->is_string()) fail(childPath(path, key), "expected a string, got " + describe(*value));
    std::string text = value->get<std::string>();
    if (!allowEmpty && text.empty()) fail(childPath(path, key), "must not be empty");
    return text;
  }

  Vec3 toVec3(const json& value, const std::string& path, const Range& range) const {
    if (!value.is_array() || value.size() != 3) {
      fail(path, "expected an array of 3 numbers, got " +
                     (value.is_array() ? "an array of " + std::to_string(value.size()) : describe(value)));
    }
    Vec3 result{0.0};
    for (int i = 0; i < 3; ++i) {
      result[i] =
          toNumber(value[static_cast<std::size_t>(i)], indexPath(path, static_cast<std::size_t>(i)), range);
    }
    return result;
  }
  Vec3 vec3(const json& object, const std::string& path, const char* key, const Vec3& fallback,
            const Range& range = kAny) const {
    const json* value = find(object, key);
    return value ? toVec3(*value, childPath(path, key), range) : fallback;
  }

  /// A string out of a fixed set of names, with a suggestion on a near miss.
  template <class Enum, std::size_t N>
  Enum choice(const json& object, const std::string& path, const char* key, Enum fallback,
              const std::pair<const char*, Enum> (&table)[N]) const {
    const json* value = find(object, key);
    if (!value) return fallback;
    return choiceOf(*value, childPath(path, key), table, "value");
  }
  template <class Enum, std::size_t N>
  Enum choiceOf(const json& value, const std::string& path, const std::pair<const char*, Enum> (&table)[N],
                const char* what) const {
    if (!value.is_string()) fail(path, "expected a string, got " + describe(value));
    const std::string text = value.get<std::string>();
    for (const auto& [name, item] : table) {
      if (text == name) return item;
    }
    std::vector<std::string> names;
    for (const auto& entry : table) names.emplace_back(entry.first);
    std::string message = "unknown " + std::string(what) + " '" + text + "'" + didYouMean(text, names);
    message += "; expected one of";
    for (std::size_t i = 0; i < names.size(); ++i) message += (i ? ", " : " ") + names[i];
    fail(path, message);
  }

 private:
  std::string source_;
};

inline constexpr std::pair<const char*, WrapMode> kWrapModes[] = {{"clamp", WrapMode::Clamp},
                                                                  {"loop", WrapMode::Loop}};
inline constexpr std::pair<const char*, HandoffMode> kHandoffModes[] = {
    {"inherit", HandoffMode::Inherit},
    {"naive_zero_velocity", HandoffMode::ZeroVelocity},
    {"naive_bind_pose", HandoffMode::BindPose}};
inline constexpr std::pair<const char*, DriveSolver> kDriveSolvers[] = {{"explicit", DriveSolver::Explicit},
                                                                        {"implicit", DriveSolver::Implicit}};
inline constexpr std::pair<const char*, ImpulseSpace> kImpulseSpaces[] = {{"world", ImpulseSpace::World},
                                                                          {"root", ImpulseSpace::Root}};
inline constexpr std::pair<const char*, PointSpace> kPointSpaces[] = {{"body", PointSpace::Body},
                                                                      {"world", PointSpace::World}};
inline constexpr std::pair<const char*, EventType> kEventTypes[] = {
    {"ragdoll", EventType::Ragdoll},
    {"impulse", EventType::Impulse},
    {"teleport", EventType::Teleport},
    {"powered", EventType::Powered},
    {"partial", EventType::Partial},
    {"animate", EventType::Animate},
    {"getup_allowed", EventType::GetUpAllowed},
    {"wall", EventType::Wall},
    {"clip", EventType::Clip},
    {"limb_lag", EventType::LimbLag},
    {"grab", EventType::Grab},
    {"drop", EventType::Drop},
    {"end", EventType::End}};

template <class Enum, std::size_t N>
const char* nameIn(const std::pair<const char*, Enum> (&table)[N], Enum item) {
  for (const auto& [name, value] : table) {
    if (value == item) return name;
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------
// Sections
// ---------------------------------------------------------------------------------------------

using Keys = std::vector<const char*>;
inline const Keys kClipKeys = {"file", "name", "index", "startTime", "wrap", "speed"};
inline const Keys kBoxKeys = {"center", "halfExtents", "yaw", "friction"};
inline const Keys kEventKeys = {"time", "type", "label"};

inline Keys concat(Keys a, const Keys& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

inline constexpr std::pair<const char*, ShapeType> kPropShapes[] = {
    {"sphere", ShapeType::Sphere}, {"capsule", ShapeType::Capsule}, {"box", ShapeType::Box}};

// Section readers: each reads one object at `path`, checks its keys, and throws LoadError
// (Reader::fail) naming the field on the first problem.
ScenarioClip readClipFields(const Reader& r, const json& object, const std::string& path);
/// A clip reference; `played` false for get-up clips (recovery.supine, recovery.prone), which
/// play at their own rate: no `speed`.
ScenarioClip readClip(const Reader& r, const json& value, const std::string& path, bool played);
ScenarioCharacter readCharacter(const Reader& r, const json& value, const std::string& path);
ScenarioRagdoll readRagdoll(const Reader& r, const json& value, const std::string& path);
ScenarioRoot readRoot(const Reader& r, const json& value, const std::string& path);
ScenarioSettings readSettings(const Reader& r, const json& value, const std::string& path);
ScenarioLookAt readLookAt(const Reader& r, const json& value, const std::string& path);
ScenarioProp readProp(const Reader& r, const json& value, const std::string& path);
ScenarioRecovery readRecovery(const Reader& r, const json& value, const std::string& path);
ScenarioBox readBoxFields(const Reader& r, const json& object, const std::string& path);
ScenarioWorld readWorld(const Reader& r, const json& value, const std::string& path);
ScenarioEvent readEvent(const Reader& r, const json& value, const std::string& path);

}  // namespace handoff::scenario_json
