// Scenario JSON: a strict loader (every problem named by file and position or JSON path) and a
// canonical saver. docs/SCENARIOS.md is the format's reference.
//
// Parsing goes through nlohmann's SAX interface with our own DOM builder, so that the JSON path
// is known at every syntax error, number overflow (1e999) and duplicate key; the DOM is then
// read field by field with the allowed keys of each object checked up front.
#include "handoff/scenario.h"

#include "scenario/scenario_internal.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <utility>

namespace handoff {

using json = nlohmann::json;

namespace {

/// Thrown inside the loader only; caught at the API boundary.
struct LoadError {
  std::string message;
};

constexpr std::size_t kMaxDepth = 64;

std::string childPath(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}
std::string indexPath(const std::string& path, std::size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

// ---------------------------------------------------------------------------------------------
// Parsing: a DOM builder over nlohmann's SAX events that knows the JSON path at every event.
// ---------------------------------------------------------------------------------------------

class DomBuilder final : public nlohmann::json_sax<json> {
 public:
  json root;
  std::string errorPath;     ///< JSON path of the failure.
  std::string errorMessage;  ///< What went wrong.
  bool hasPosition = false;  ///< errorPosition is meaningful (a syntax error or overflow).
  std::size_t errorPosition = 0;

  bool null() override { return add(json(nullptr)); }
  bool boolean(bool value) override { return add(json(value)); }
  bool number_integer(json::number_integer_t value) override { return add(json(value)); }
  bool number_unsigned(json::number_unsigned_t value) override { return add(json(value)); }
  bool number_float(json::number_float_t value, const json::string_t& /*text*/) override {
    if (!std::isfinite(value)) return fail("number is not finite");
    return add(json(value));
  }
  bool string(json::string_t& value) override { return add(json(std::move(value))); }
  bool binary(json::binary_t& /*value*/) override { return fail("binary values are not JSON"); }
  bool start_object(std::size_t /*elements*/) override { return open(json::object(), false); }
  bool key(json::string_t& key) override {
    Frame& frame = frames_.back();
    if (frame.container->contains(key)) return fail("duplicate key '" + key + "'");
    frame.key = std::move(key);
    frame.keyPending = true;
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t /*elements*/) override { return open(json::array(), true); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t position, const std::string& lastToken,
                   const nlohmann::json::exception& error) override {
    errorPath = path();
    errorMessage = cleanMessage(error.what());
    hasPosition = true;
    errorPosition = position;
    // A number overflow is reported at the number's last character: point at its first.
    constexpr int kNumberOverflow = 406;
    if (error.id == kNumberOverflow && !lastToken.empty() && position >= lastToken.size()) {
      errorPosition = position - lastToken.size() + 1;
    }
    return false;
  }

 private:
  struct Frame {
    json* container = nullptr;
    bool array = false;
    std::size_t count = 0;    // elements so far (arrays)
    std::size_t current = 0;  // index of the element being built (arrays)
    std::string key;          // key of the value being built (objects)
    bool keyPending = false;  // a key was read and its value is not complete yet
  };

  // nlohmann's messages start with "[json.exception.parse_error.101] parse error at line 1,
  // column 5: "; we give file:line:column ourselves.
  static std::string cleanMessage(std::string message) {
    if (!message.empty() && message.front() == '[') {
      const std::size_t end = message.find("] ");
      if (end != std::string::npos) message.erase(0, end + 2);
    }
    if (message.rfind("parse error", 0) == 0) {
      const std::size_t colon = message.find(": ");
      if (colon != std::string::npos) message.erase(0, colon + 2);
    }
    return message;
  }

  std::string path() const {
    std::string result;
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      const Frame& frame = frames_[i];
      const bool top = i + 1 == frames_.size();
      if (frame.array) {
        result = indexPath(result, top ? frame.count : frame.current);
      } else if (!top || frame.keyPending) {
        result = childPath(result, frame.key);
      }
    }
    return result;
  }

  bool fail(std::string message) {
    errorPath = path();
    errorMessage = std::move(message);
    return false;
  }

  json* insert(json&& value) {
    if (frames_.empty()) {
      root = std::move(value);
      return &root;
    }
    Frame& frame = frames_.back();
    if (frame.array) {
      frame.current = frame.count++;
      frame.container->push_back(std::move(value));
      return &frame.container->back();
    }
    json& slot = (*frame.container)[frame.key];
    slot = std::move(value);
    return &slot;
  }
  void valueDone() {
    if (!frames_.empty() && !frames_.back().array) frames_.back().keyPending = false;
  }
  bool add(json&& value) {
    insert(std::move(value));
    valueDone();
    return true;
  }
  bool open(json&& container, bool array) {
    if (frames_.size() >= kMaxDepth)
      return fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    json* inserted = insert(std::move(container));
    Frame frame;
    frame.container = inserted;
    frame.array = array;
    frames_.push_back(std::move(frame));
    return true;
  }
  bool close() {
    frames_.pop_back();
    valueDone();
    return true;
  }

  std::vector<Frame> frames_;
};

/// 1-based line and column of the character at 1-based `position` (nlohmann's byte count).
std::pair<std::size_t, std::size_t> lineColumn(const std::string& text, std::size_t position) {
  const std::size_t offset = std::min(position > 0 ? position - 1 : 0, text.size());
  std::size_t line = 1;
  std::size_t lineStart = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      lineStart = i + 1;
    }
  }
  return {line, offset - lineStart + 1};
}

// ---------------------------------------------------------------------------------------------
// Reading the DOM
// ---------------------------------------------------------------------------------------------

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Range {
  double lo = -kInf;
  double hi = kInf;
  bool loOpen = false;  // lo excluded
  bool hiOpen = false;  // hi excluded
};
constexpr Range kAny{};
constexpr Range kUnit{0.0, 1.0, false, false};
constexpr Range kFriction{0.0, 10.0, false, false};
constexpr Range kDuration{0.0, 10.0, false, false};  // ramps and blends [s]
constexpr Range kTime{0.0, kScenarioMaxTime, false, false};
constexpr Range kPosition{-kScenarioWorldExtent, kScenarioWorldExtent, false, false};
constexpr Range kImpulse{-kScenarioMaxImpulse, kScenarioMaxImpulse, false, false};

std::string describe(const json& value) {
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

  /// An array of distinct, non-empty names (`what`: "a bone name", "a slot name").
  std::vector<std::string> nameList(const json& value, const std::string& path, const char* what) const {
    expectArray(value, path);
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

constexpr std::pair<const char*, WrapMode> kWrapModes[] = {{"clamp", WrapMode::Clamp},
                                                           {"loop", WrapMode::Loop}};
constexpr std::pair<const char*, HandoffMode> kHandoffModes[] = {
    {"inherit", HandoffMode::Inherit},
    {"naive_zero_velocity", HandoffMode::ZeroVelocity},
    {"naive_bind_pose", HandoffMode::BindPose}};
constexpr std::pair<const char*, DriveSolver> kDriveSolvers[] = {{"explicit", DriveSolver::Explicit},
                                                                 {"implicit", DriveSolver::Implicit}};
constexpr std::pair<const char*, ImpulseSpace> kImpulseSpaces[] = {{"world", ImpulseSpace::World},
                                                                   {"root", ImpulseSpace::Root}};
constexpr std::pair<const char*, PointSpace> kPointSpaces[] = {{"body", PointSpace::Body},
                                                               {"world", PointSpace::World}};
constexpr std::pair<const char*, EventType> kEventTypes[] = {{"ragdoll", EventType::Ragdoll},
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
const Keys kClipKeys = {"file", "name", "index", "startTime", "wrap", "speed"};
const Keys kBoxKeys = {"center", "halfExtents", "yaw", "friction"};
const Keys kEventKeys = {"time", "type", "label"};

Keys concat(Keys a, const Keys& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

ScenarioClip readClipFields(const Reader& r, const json& object, const std::string& path) {
  ScenarioClip clip;
  clip.file = r.string(object, path, "file", "", false);
  clip.name = r.string(object, path, "name", "", false);
  if (Reader::find(object, "name") && Reader::find(object, "index")) {
    r.fail(childPath(path, "index"), "give either 'name' or 'index', not both");
  }
  clip.index = r.integer(object, path, "index", 0, 0, 1000000);
  clip.startTime = r.number(object, path, "startTime", 0.0, kTime);
  clip.wrap = r.choice(object, path, "wrap", WrapMode::Clamp, kWrapModes);
  clip.speed = r.number(object, path, "speed", 1.0, Range{0.0, 100.0, false, false});
  return clip;
}

/// A clip reference; `played` false for get-up clips (recovery.supine, recovery.prone), which
/// play at their own rate: no `speed`.
ScenarioClip readClip(const Reader& r, const json& value, const std::string& path, bool played) {
  r.expectObject(value, path);
  r.checkKeys(value, path, kClipKeys);
  if (!played && Reader::find(value, "speed")) {
    r.fail(childPath(path, "speed"), "a get-up clip plays at its own rate (speed is for played clips)");
  }
  return readClipFields(r, value, path);
}

ScenarioCharacter readCharacter(const Reader& r, const json& value, const std::string& path) {
  r.expectObject(value, path);
  r.checkKeys(value, path, {"file", "unitScale", "map"});
  ScenarioCharacter character;
  if (!Reader::find(value, "file")) r.fail(childPath(path, "file"), "missing (required)");
  character.file = r.string(value, path, "file", "", false);
  character.unitScale = r.number(value, path, "unitScale", 0.0, Range{0.0, 1000.0, false, false});
  character.map = r.string(value, path, "map", "", false);
  return character;
}

ScenarioRagdoll readRagdoll(const Reader& r, const json& value, const std::string& path) {
  r.expectObject(value, path);
  r.checkKeys(value, path, {"asset", "totalMass", "build"});
  ScenarioRagdoll ragdoll;
  ragdoll.asset = r.string(value, path, "asset", "", false);
  if (!ragdoll.asset.empty()) {
    for (const char* key : {"totalMass", "build"}) {
      if (Reader::find(value, key)) {
        r.fail(childPath(path, key),
               "not used when ragdoll.asset is given (the asset carries its own masses "
               "and shapes); remove one of the two");
      }
    }
  }
  ragdoll.totalMass = r.number(value, path, "totalMass", 70.0, Range{0.0, 10000.0, true, false});
  if (const json* build = Reader::find(value, "build")) {
    const std::string where = childPath(path, "build");
    r.expectObject(*build, where);
    r.checkKeys(*build, where,
                {"hands", "feet", "stabilize", "limbRadiusRatio", "headRadiusScale", "clearance", "joints"});
    ScenarioBuild& b = ragdoll.build;
    b.hands = r.boolean(*build, where, "hands", true);
    b.feet = r.boolean(*build, where, "feet", true);
    b.stabilize = r.boolean(*build, where, "stabilize", true);
    b.limbRadiusRatio = r.number(*build, where, "limbRadiusRatio", 0.0, kUnit);
    b.headRadiusScale = r.number(*build, where, "headRadiusScale", 1.0, Range{0.0, 10.0, true, false});
    b.clearance = r.number(*build, where, "clearance", 0.005, Range{0.0, 0.1, false, false});
    if (const json* joints = Reader::find(*build, "joints")) {
      r.expectObject(*joints, childPath(where, "joints"));
      b.jointOverridesJson = joints->dump();
    }
  }
  return ragdoll;
}

ScenarioRoot readRoot(const Reader& r, const json& value, const std::string& path) {
  r.expectObject(value, path);
  r.checkKeys(value, path, {"position", "yaw"});
  ScenarioRoot root;
  root.position = r.vec3(value, path, "position", Vec3{0.0}, kPosition);
  root.yaw = r.number(value, path, "yaw", 0.0);
  return root;
}

ScenarioBox readBoxFields(const Reader& r, const json& object, const std::string& path) {
  ScenarioBox box;
  if (!Reader::find(object, "center")) r.fail(childPath(path, "center"), "missing (required)");
  box.center = r.vec3(object, path, "center", Vec3{0.0}, kPosition);
  box.halfExtents =
      r.vec3(object, path, "halfExtents", Vec3{0.5}, Range{0.0, kScenarioWorldExtent, true, false});
  box.yaw = r.number(object, path, "yaw", 0.0);
  box.friction = r.number(object, path, "friction", 0.8, kFriction);
  return box;
}

ScenarioWorld readWorld(const Reader& r, const json& value, const std::string& path) {
  r.expectObject(value, path);
  r.checkKeys(value, path, {"gravity", "ground", "boxes", "walls", "steps"});
  ScenarioWorld world;
  world.gravity = r.vec3(value, path, "gravity", world.gravity, Range{-1000.0, 1000.0, false, false});
  if (const json* ground = Reader::find(value, "ground")) {
    const std::string where = childPath(path, "ground");
    r.expectObject(*ground, where);
    r.checkKeys(*ground, where, {"enabled", "height", "friction"});
    world.ground.enabled = r.boolean(*ground, where, "enabled", true);
    world.ground.height = r.number(*ground, where, "height", 0.0, kPosition);
    world.ground.friction = r.number(*ground, where, "friction", 0.8, kFriction);
  }
  if (const json* boxes = Reader::find(value, "boxes")) {
    const std::string where = childPath(path, "boxes");
    r.expectArray(*boxes, where);
    for (std::size_t i = 0; i < boxes->size(); ++i) {
      const std::string at = indexPath(where, i);
      r.expectObject((*boxes)[i], at);
      r.checkKeys((*boxes)[i], at, kBoxKeys);
      world.boxes.push_back(readBoxFields(r, (*boxes)[i], at));
    }
  }
  if (const json* walls = Reader::find(value, "walls")) {
    const std::string where = childPath(path, "walls");
    r.expectArray(*walls, where);
    for (std::size_t i = 0; i < walls->size(); ++i) {
      const std::string at = indexPath(where, i);
      const json& w = (*walls)[i];
      r.expectObject(w, at);
      r.checkKeys(w, at, {"from", "to", "height", "thickness", "friction"});
      ScenarioWall wall;
      for (const char* key : {"from", "to"}) {
        if (!Reader::find(w, key)) r.fail(childPath(at, key), "missing (required)");
      }
      wall.from = r.vec3(w, at, "from", wall.from, kPosition);
      wall.to = r.vec3(w, at, "to", wall.to, kPosition);
      if (wall.from.y != wall.to.y) {
        r.fail(childPath(at, "to"), "must be at the height of 'from' (y " +
                                        scenario_detail::formatNumber(wall.to.y) + " vs " +
                                        scenario_detail::formatNumber(wall.from.y) + ")");
      }
      if (std::hypot(wall.to.x - wall.from.x, wall.to.z - wall.from.z) < 1e-6) {
        r.fail(childPath(at, "to"), "must differ from 'from' (a wall needs a length)");
      }
      wall.height = r.number(w, at, "height", 2.5, Range{0.0, kScenarioWorldExtent, true, false});
      wall.thickness = r.number(w, at, "thickness", 0.2, Range{0.0, kScenarioWorldExtent, true, false});
      wall.friction = r.number(w, at, "friction", 0.8, kFriction);
      world.walls.push_back(wall);
    }
  }
  if (const json* steps = Reader::find(value, "steps")) {
    const std::string where = childPath(path, "steps");
    r.expectArray(*steps, where);
    for (std::size_t i = 0; i < steps->size(); ++i) {
      const std::string at = indexPath(where, i);
      const json& s = (*steps)[i];
      r.expectObject(s, at);
      r.checkKeys(s, at, {"count", "rise", "run", "width", "origin", "direction", "friction"});
      ScenarioSteps flight;
      flight.count = r.integer(s, at, "count", flight.count, 1, 500);
      flight.rise = r.number(s, at, "rise", flight.rise, Range{0.0, 2.0, true, false});
      flight.run = r.number(s, at, "run", flight.run, Range{0.0, 10.0, true, false});
      flight.width = r.number(s, at, "width", flight.width, Range{0.0, 100.0, true, false});
      flight.origin = r.vec3(s, at, "origin", flight.origin, kPosition);
      flight.direction = r.vec3(s, at, "direction", flight.direction, Range{-1e6, 1e6, false, false});
      if (flight.direction.y != 0.0 || std::hypot(flight.direction.x, flight.direction.z) < 1e-9) {
        r.fail(childPath(at, "direction"), "must be horizontal (y = 0) and non-zero");
      }
      flight.friction = r.number(s, at, "friction", flight.friction, kFriction);
      world.steps.push_back(flight);
    }
  }
  return world;
}

ScenarioSettings readSettings(const Reader& r, const json& value, const std::string& path) {
  r.expectObject(value, path);
  r.checkKeys(value, path,
              {"dt", "substeps", "solverIterations", "handoffMode", "displayBlendTime", "maxLinearSpeed",
               "maxAngularSpeed", "teleportDistance", "driveMode", "stepTime", "limitLookAhead",
               "jointConsistency", "staticContacts", "animationOwnedBones", "dropPropsAtDeath"});
  ScenarioSettings s;
  HandoffSettings& h = s.handoff;
  s.dt = r.number(value, path, "dt", s.dt, Range{0.0, 0.1, true, false});
  s.substeps = r.integer(value, path, "substeps", s.substeps, 1, 64);
  s.solverIterations = r.integer(value, path, "solverIterations", s.solverIterations, 1, 1000);
  h.mode = r.choice(value, path, "handoffMode", h.mode, kHandoffModes);
  h.displayBlendTime = r.number(value, path, "displayBlendTime", h.displayBlendTime, kDuration);
  h.maxLinearSpeed = r.number(value, path, "maxLinearSpeed", h.maxLinearSpeed, Range{0.0, 1000.0, true, false});
  h.maxAngularSpeed =
      r.number(value, path, "maxAngularSpeed", h.maxAngularSpeed, Range{0.0, 1000.0, true, false});
  h.teleportDistance =
      r.number(value, path, "teleportDistance", h.teleportDistance, Range{0.0, 1000.0, true, false});
  s.driveSolver = r.choice(value, path, "driveMode", s.driveSolver, kDriveSolvers);
  // Absent: the library derives them from the step (HandoffSettings::kDerived).
  h.stepTime = r.number(value, path, "stepTime", h.stepTime, Range{0.0, 0.1, true, false});
  h.limitLookAhead = r.number(value, path, "limitLookAhead", h.limitLookAhead, Range{0.0, 1.0, false, false});
  h.jointConsistency = r.boolean(value, path, "jointConsistency", h.jointConsistency);
  h.staticContacts = r.boolean(value, path, "staticContacts", h.staticContacts);
  s.dropPropsAtDeath = r.boolean(value, path, "dropPropsAtDeath", s.dropPropsAtDeath);
  if (const json* owned = Reader::find(value, "animationOwnedBones"))
    s.animationOwnedBones = r.nameList(*owned, childPath(path, "animationOwnedBones"), "a bone name");
  return s;
}

ScenarioLookAt readLookAt(const Reader& r, const json& value, const std::string& path) {
  r.expectObject(value, path);
  r.checkKeys(value, path, {"bone", "target"});
  ScenarioLookAt lookAt;
  if (!Reader::find(value, "bone")) r.fail(childPath(path, "bone"), "missing (required)");
  lookAt.bone = r.string(value, path, "bone", "", false);
  if (!Reader::find(value, "target")) r.fail(childPath(path, "target"), "missing (required)");
  lookAt.target = r.vec3(value, path, "target", Vec3{0.0}, kPosition);
  return lookAt;
}

/// {"rotation": [w, x, y, z], "translation": [x, y, z]} (as the asset's frames), both optional.
Transform readRigid(const Reader& r, const json& object, const std::string& path, const char* key) {
  Transform t;
  const json* value = Reader::find(object, key);
  if (!value) return t;
  const std::string at = childPath(path, key);
  r.expectObject(*value, at);
  r.checkKeys(*value, at, {"rotation", "translation"}, " of a frame");
  if (const json* q = Reader::find(*value, "rotation")) {
    const std::string where = childPath(at, "rotation");
    if (!q->is_array() || q->size() != 4)
      r.fail(where, "expected a quaternion [w, x, y, z], got " + describe(*q));
    double c[4];
    for (std::size_t i = 0; i < 4; ++i) c[i] = r.toNumber((*q)[i], indexPath(where, i), Range{-1.0, 1.0});
    t.rotation = Quat{c[0], c[1], c[2], c[3]};
    if (std::abs(glm::length(t.rotation) - 1.0) > 1e-6) r.fail(where, "must be a unit quaternion");
  }
  t.translation = r.vec3(*value, at, "translation", Vec3{0.0}, Range{-100.0, 100.0});
  return t;
}

constexpr std::pair<const char*, ShapeType> kPropShapes[] = {
    {"sphere", ShapeType::Sphere}, {"capsule", ShapeType::Capsule}, {"box", ShapeType::Box}};

ScenarioProp readProp(const Reader& r, const json& value, const std::string& path) {
  r.expectObject(value, path);
  r.checkKeys(value, path,
              {"name", "bone", "shape", "mass", "handFromGrip", "propFromGrip", "friction", "restitution"},
              " of a prop");
  ScenarioProp prop;
  for (const char* key : {"name", "bone", "shape"}) {
    if (!Reader::find(value, key)) r.fail(childPath(path, key), "missing (required)");
  }
  prop.name = r.string(value, path, "name", "", false);
  prop.bone = r.string(value, path, "bone", "", false);
  const json& shape = value["shape"];
  const std::string at = childPath(path, "shape");
  r.expectObject(shape, at);
  if (!Reader::find(shape, "type"))
    r.fail(childPath(at, "type"), "missing (required: sphere, capsule or box)");
  prop.shape.type = r.choice(shape, at, "type", ShapeType::None, kPropShapes);
  constexpr Range kSize{0.0, 10.0, true, false};
  if (prop.shape.type == ShapeType::Box) {
    r.checkKeys(shape, at, {"type", "halfExtents"}, " of a box");
    if (!Reader::find(shape, "halfExtents")) r.fail(childPath(at, "halfExtents"), "missing (required)");
    prop.shape.halfExtents = r.vec3(shape, at, "halfExtents", Vec3{0.0}, kSize);
  } else if (prop.shape.type == ShapeType::Capsule) {
    r.checkKeys(shape, at, {"type", "radius", "halfHeight"}, " of a capsule");
    prop.shape.radius = r.requiredNumber(shape, at, "radius", kSize);
    prop.shape.halfHeight = r.requiredNumber(shape, at, "halfHeight", Range{0.0, 10.0});
  } else {
    r.checkKeys(shape, at, {"type", "radius"}, " of a sphere");
    prop.shape.radius = r.requiredNumber(shape, at, "radius", kSize);
  }
  prop.mass = r.number(value, path, "mass", prop.mass, Range{0.0, 1000.0, true, false});
  prop.handFromGrip = readRigid(r, value, path, "handFromGrip");
  prop.propFromGrip = readRigid(r, value, path, "propFromGrip");
  prop.friction = r.number(value, path, "friction", prop.friction, kFriction);
  prop.restitution = r.number(value, path, "restitution", prop.restitution, kUnit);
  return prop;
}

ScenarioRecovery readRecovery(const Reader& r, const json& value, const std::string& path) {
  r.expectObject(value, path);
  r.checkKeys(value, path,
              {"supine", "prone", "landing", "transitionTime", "maxPointSpeed", "maxTransitionTime",
               "settleWindow", "settleLinearSpeed", "settleAngularSpeed", "completeGetUps"});
  ScenarioRecovery recovery;
  if (const json* supine = Reader::find(value, "supine"))
    recovery.supine = readClip(r, *supine, childPath(path, "supine"), false);
  if (const json* prone = Reader::find(value, "prone"))
    recovery.prone = readClip(r, *prone, childPath(path, "prone"), false);
  if (const json* landing = Reader::find(value, "landing"))
    recovery.landing = readClip(r, *landing, childPath(path, "landing"), true);
  TransitionSettings& t = recovery.transition;
  t.duration = r.number(value, path, "transitionTime", t.duration, Range{0.0, 5.0, false, false});
  t.maxPointSpeed = r.number(value, path, "maxPointSpeed", t.maxPointSpeed, Range{0.0, 100.0, false, false});
  t.maxDuration = r.number(value, path, "maxTransitionTime", t.maxDuration, Range{0.0, 60.0, true, false});
  if (t.maxDuration < t.duration) r.fail(childPath(path, "maxTransitionTime"), "must be >= transitionTime");
  SettleSettings& st = recovery.settle;
  st.window = r.number(value, path, "settleWindow", st.window, Range{0.0, 10.0, true, false});
  st.maxLinearSpeed =
      r.number(value, path, "settleLinearSpeed", st.maxLinearSpeed, Range{0.0, 100.0, true, false});
  st.maxAngularSpeed =
      r.number(value, path, "settleAngularSpeed", st.maxAngularSpeed, Range{0.0, 100.0, true, false});
  recovery.completeGetUps = r.boolean(value, path, "completeGetUps", recovery.completeGetUps);
  return recovery;
}

ScenarioEvent readEvent(const Reader& r, const json& value, const std::string& path) {
  r.expectObject(value, path);
  const json* typeValue = Reader::find(value, "type");
  if (!typeValue) r.fail(childPath(path, "type"), "missing (required)");
  const EventType type = r.choiceOf(*typeValue, childPath(path, "type"), kEventTypes, "event type");
  const std::string context = " for a '" + std::string(eventTypeName(type)) + "' event";

  ScenarioEvent event;
  switch (type) {
    case EventType::Ragdoll:
      r.checkKeys(value, path, kEventKeys, context);
      event.payload = ScenarioEvent::Ragdoll{};
      break;
    case EventType::Impulse: {
      r.checkKeys(
          value, path,
          concat(kEventKeys, Keys{"body", "impulse", "impulseSpace", "point", "pointSpace", "knockback"}),
          context);
      ScenarioEvent::Impulse impulse;
      impulse.knockback = r.boolean(value, path, "knockback", false);
      if (impulse.knockback) {
        // A knock-back throws the whole character (Character::knockBack): no body, no point.
        for (const char* key : {"body", "point", "pointSpace"}) {
          if (Reader::find(value, key))
            r.fail(childPath(path, key),
                   "not allowed with \"knockback\": true (the impulse is spread over "
                   "every body by its mass)");
        }
      } else {
        if (!Reader::find(value, "body")) r.fail(childPath(path, "body"), "missing (required)");
        impulse.body = r.string(value, path, "body", "", false);
      }
      if (!Reader::find(value, "impulse")) r.fail(childPath(path, "impulse"), "missing (required)");
      impulse.impulse = r.vec3(value, path, "impulse", Vec3{0.0}, kImpulse);
      impulse.impulseSpace = r.choice(value, path, "impulseSpace", ImpulseSpace::World, kImpulseSpaces);
      if (const json* point = Reader::find(value, "point")) {
        impulse.point = r.toVec3(*point, childPath(path, "point"), kPosition);
      }
      impulse.pointSpace = r.choice(value, path, "pointSpace", PointSpace::Body, kPointSpaces);
      event.payload = impulse;
      break;
    }
    case EventType::Teleport: {
      r.checkKeys(value, path, concat(kEventKeys, Keys{"position", "yaw"}), context);
      ScenarioEvent::Teleport teleport;
      if (!Reader::find(value, "position")) r.fail(childPath(path, "position"), "missing (required)");
      teleport.position = r.vec3(value, path, "position", Vec3{0.0}, kPosition);
      teleport.yaw = r.number(value, path, "yaw", 0.0);
      event.payload = teleport;
      break;
    }
    case EventType::Powered: {
      r.checkKeys(value, path, concat(kEventKeys, Keys{"weight", "rampTime", "pinned"}), context);
      ScenarioEvent::Powered powered;
      powered.pinned = r.boolean(value, path, "pinned", powered.pinned);
      powered.weight = r.number(value, path, "weight", powered.weight, kUnit);
      powered.rampTime = r.number(value, path, "rampTime", powered.rampTime, kDuration);
      event.payload = powered;
      break;
    }
    case EventType::Partial: {
      r.checkKeys(value, path, concat(kEventKeys, Keys{"bodies", "regions", "rampTime"}), context);
      ScenarioEvent::Partial partial;
      if (const json* bodies = Reader::find(value, "bodies")) {
        const std::string where = childPath(path, "bodies");
        r.expectObject(*bodies, where);
        for (auto it = bodies->begin(); it != bodies->end(); ++it) {
          if (it.key().empty()) r.fail(where, "empty body name");
          partial.bodies[it.key()] = r.toNumber(it.value(), childPath(where, it.key()), kUnit);
        }
      }
      if (const json* regions = Reader::find(value, "regions")) {
        const std::string where = childPath(path, "regions");
        r.expectObject(*regions, where);
        for (auto it = regions->begin(); it != regions->end(); ++it) {
          const std::optional<BodyRegion> region = bodyRegionFromName(it.key());
          if (!region) {
            std::vector<std::string> names;
            for (int i = 0; i < static_cast<int>(BodyRegion::Count); ++i) {
              names.emplace_back(bodyRegionName(static_cast<BodyRegion>(i)));
            }
            std::string message =
                "unknown region '" + it.key() + "'" + didYouMean(it.key(), names) + "; expected one of";
            for (std::size_t i = 0; i < names.size(); ++i) message += (i ? ", " : " ") + names[i];
            r.fail(where, message);
          }
          partial.regions[*region] = r.toNumber(it.value(), childPath(where, it.key()), kUnit);
        }
      }
      if (partial.bodies.empty() && partial.regions.empty()) {
        r.fail(path, "a 'partial' event needs 'bodies' or 'regions' with at least one weight");
      }
      partial.rampTime = r.number(value, path, "rampTime", partial.rampTime, kDuration);
      event.payload = partial;
      break;
    }
    case EventType::LimbLag: {
      r.checkKeys(value, path, concat(kEventKeys, Keys{"slots", "weight", "rampTime"}), context);
      ScenarioEvent::LimbLag lag;
      if (const json* slots = Reader::find(value, "slots")) {
        const std::string where = childPath(path, "slots");
        const std::vector<std::string> names = r.nameList(*slots, where, "a slot name");
        for (std::size_t i = 0; i < names.size(); ++i) {
          const std::optional<Slot> slot = slotFromName(names[i]);
          if (!slot) {
            std::vector<std::string> known;
            for (int k = 0; k < static_cast<int>(Slot::Count); ++k) known.emplace_back(slotName(static_cast<Slot>(k)));
            r.fail(indexPath(where, i), "unknown slot '" + names[i] + "'" + didYouMean(names[i], known));
          }
          lag.slots.push_back(*slot);
        }
        if (lag.slots.empty()) r.fail(where, "must list at least one slot (leave it out for the forearms and hands)");
      }
      lag.weight = r.number(value, path, "weight", lag.weight, Range{0.0, 1.0, true, false});
      lag.rampTime = r.number(value, path, "rampTime", lag.rampTime, kDuration);
      event.payload = lag;
      break;
    }
    case EventType::Animate: {
      r.checkKeys(value, path, concat(kEventKeys, Keys{"blendTime"}), context);
      ScenarioEvent::Animate animate;
      animate.blendTime = r.number(value, path, "blendTime", animate.blendTime, kDuration);
      event.payload = animate;
      break;
    }
    case EventType::GetUpAllowed: {
      r.checkKeys(value, path, concat(kEventKeys, Keys{"allowed"}), context);
      ScenarioEvent::GetUpAllowed allowed;
      allowed.allowed = r.boolean(value, path, "allowed", true);
      event.payload = allowed;
      break;
    }
    case EventType::Wall:
      r.checkKeys(value, path, concat(kEventKeys, kBoxKeys), context);
      event.payload = ScenarioEvent::Wall{readBoxFields(r, value, path)};
      break;
    case EventType::Clip:
      r.checkKeys(value, path, concat(kEventKeys, kClipKeys), context);
      event.payload = ScenarioEvent::Clip{readClipFields(r, value, path)};
      break;
    case EventType::Grab:
    case EventType::Drop: {
      r.checkKeys(value, path, concat(kEventKeys, Keys{"prop"}), context);
      if (!Reader::find(value, "prop")) r.fail(childPath(path, "prop"), "missing (required)");
      std::string prop = r.string(value, path, "prop", "", false);
      if (type == EventType::Grab) {
        event.payload = ScenarioEvent::Grab{std::move(prop)};
      } else {
        event.payload = ScenarioEvent::Drop{std::move(prop)};
      }
      break;
    }
    case EventType::End:
      r.checkKeys(value, path, kEventKeys, context);
      event.payload = ScenarioEvent::End{};
      break;
  }
  event.time = r.requiredNumber(value, path, "time", kTime);
  event.label = r.string(value, path, "label", "");
  return event;
}

std::string stemOf(const std::string& sourceName) {
  return std::filesystem::path(sourceName).stem().string();
}

Scenario readScenario(const Reader& r, const json& root, const std::string& sourceName) {
  if (!root.is_object()) r.fail("", "expected a JSON object at the top level, got " + describe(root));
  r.checkKeys(root, "",
              {"version", "name", "description", "character", "ragdoll", "clip", "root", "world", "settings",
               "recovery", "lookAt", "props", "events", "endTime", "expectations"});
  Scenario s;
  s.sourceName = sourceName;
  s.baseDir = std::filesystem::path(sourceName).parent_path().string();
  s.version = r.integer(root, "", "version", kScenarioVersion, 1, 1000000);
  if (s.version > kScenarioVersion) {
    r.fail("version", std::to_string(s.version) + " is newer than this build reads (" +
                          std::to_string(kScenarioVersion) + ")");
  }
  s.name = r.string(root, "", "name", stemOf(sourceName));
  s.description = r.string(root, "", "description", "");

  const json* character = Reader::find(root, "character");
  if (!character) r.fail("character", "missing (required: at least character.file)");
  s.character = readCharacter(r, *character, "character");
  if (const json* v = Reader::find(root, "ragdoll")) s.ragdoll = readRagdoll(r, *v, "ragdoll");
  if (const json* v = Reader::find(root, "clip")) s.clip = readClip(r, *v, "clip", true);
  if (const json* v = Reader::find(root, "root")) s.root = readRoot(r, *v, "root");
  if (const json* v = Reader::find(root, "world")) s.world = readWorld(r, *v, "world");
  if (const json* v = Reader::find(root, "settings")) s.settings = readSettings(r, *v, "settings");
  if (const json* v = Reader::find(root, "recovery")) s.recovery = readRecovery(r, *v, "recovery");
  if (const json* v = Reader::find(root, "lookAt")) s.lookAt = readLookAt(r, *v, "lookAt");
  if (const json* props = Reader::find(root, "props")) {
    r.expectArray(*props, "props");
    for (std::size_t i = 0; i < props->size(); ++i) {
      const std::string at = indexPath("props", i);
      ScenarioProp prop = readProp(r, (*props)[i], at);
      for (std::size_t k = 0; k < s.props.size(); ++k) {
        if (s.props[k].name == prop.name) {
          r.fail(childPath(at, "name"),
                 "'" + prop.name + "' is already the name of " + indexPath("props", k));
        }
      }
      s.props.push_back(std::move(prop));
    }
  }

  std::optional<std::size_t> endEvent;
  if (const json* events = Reader::find(root, "events")) {
    r.expectArray(*events, "events");
    for (std::size_t i = 0; i < events->size(); ++i) {
      const std::string path = indexPath("events", i);
      ScenarioEvent event = readEvent(r, (*events)[i], path);
      if (endEvent) {
        r.fail(path, "comes after the 'end' event (" + indexPath("events", *endEvent) +
                         "); 'end' must be the last event");
      }
      if (!s.events.empty() && event.time < s.events.back().time) {
        r.fail(childPath(path, "time"), scenario_detail::formatNumber(event.time) + " s is before " +
                                            indexPath("events", i - 1) + ".time (" +
                                            scenario_detail::formatNumber(s.events.back().time) +
                                            " s): events must be in time order");
      }
      if (event.type() == EventType::End) endEvent = i;
      const std::string* prop = nullptr;
      if (const auto* g = std::get_if<ScenarioEvent::Grab>(&event.payload)) prop = &g->prop;
      if (const auto* d = std::get_if<ScenarioEvent::Drop>(&event.payload)) prop = &d->prop;
      if (prop && std::none_of(s.props.begin(), s.props.end(),
                               [&](const ScenarioProp& p) { return p.name == *prop; })) {
        std::vector<std::string> names;
        for (const ScenarioProp& p : s.props) names.push_back(p.name);
        r.fail(childPath(path, "prop"), "no prop named '" + *prop + "' in props" + didYouMean(*prop, names));
      }
      s.events.push_back(std::move(event));
    }
  }

  if (const json* endTime = Reader::find(root, "endTime")) {
    s.endTime = r.toNumber(*endTime, "endTime", Range{0.0, kScenarioMaxTime, true, false});
    if (endEvent && s.events[*endEvent].time != s.endTime) {
      r.fail("endTime", scenario_detail::formatNumber(s.endTime) + " s differs from the 'end' event (" +
                            indexPath("events", *endEvent) +
                            ".time = " + scenario_detail::formatNumber(s.events[*endEvent].time) + " s)");
    }
  } else if (endEvent) {
    s.endTime = s.events[*endEvent].time;
    if (s.endTime <= 0.0)
      r.fail(indexPath("events", *endEvent) + ".time", "the 'end' event must be after t = 0");
  } else {
    r.fail("endTime", "missing (required unless the events finish with an 'end' event)");
  }
  if (!s.events.empty() && s.events.back().time > s.endTime) {
    r.fail("endTime", scenario_detail::formatNumber(s.endTime) + " s is before the last event (" +
                          indexPath("events", s.events.size() - 1) +
                          ".time = " + scenario_detail::formatNumber(s.events.back().time) + " s)");
  }

  if (const json* expectations = Reader::find(root, "expectations")) {
    r.expectObject(*expectations, "expectations");
    for (auto it = expectations->begin(); it != expectations->end(); ++it) {
      if (it.key().empty()) r.fail("expectations", "empty name");
      s.expectations[it.key()] = r.toNumber(it.value(), childPath("expectations", it.key()), kAny);
    }
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// Saving
// ---------------------------------------------------------------------------------------------

using ojson = nlohmann::ordered_json;

ojson vec3Json(const Vec3& v) { return ojson::array({v.x, v.y, v.z}); }

void writeClipFields(ojson& out, const ScenarioClip& clip) {
  if (!clip.file.empty()) out["file"] = clip.file;
  if (!clip.name.empty()) {
    out["name"] = clip.name;
  } else {
    out["index"] = clip.index;
  }
  out["startTime"] = clip.startTime;
  out["wrap"] = nameIn(kWrapModes, clip.wrap);
}
/// A played clip (`clip`, `clip` events) also has its playback rate.
void writePlayedClipFields(ojson& out, const ScenarioClip& clip) {
  writeClipFields(out, clip);
  out["speed"] = clip.speed;
}
ojson clipJson(const ScenarioClip& clip, bool played) {
  ojson out = ojson::object();
  if (played) {
    writePlayedClipFields(out, clip);
  } else {
    writeClipFields(out, clip);
  }
  return out;
}
void writeBoxFields(ojson& out, const ScenarioBox& box) {
  out["center"] = vec3Json(box.center);
  out["halfExtents"] = vec3Json(box.halfExtents);
  out["yaw"] = box.yaw;
  out["friction"] = box.friction;
}

}  // namespace

// -----------------------------------------------------------------------------------------------
// Public API
// -----------------------------------------------------------------------------------------------

namespace {

Result<Scenario> loadScenarioJsonUnchecked(const std::string& text, const std::string& sourceName) {
  try {
    if (std::all_of(text.begin(), text.end(),
                    [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; })) {
      return Error{sourceName + ": empty file (expected a JSON object)"};
    }
    DomBuilder builder;
    const bool parsed = json::sax_parse(text, &builder, json::input_format_t::json, true, false);
    if (!parsed) {
      std::string message = sourceName;
      if (builder.hasPosition) {
        const auto [line, column] = lineColumn(text, builder.errorPosition);
        message += ":" + std::to_string(line) + ":" + std::to_string(column);
      }
      message += ": ";
      if (!builder.errorPath.empty()) message += builder.errorPath + ": ";
      message += builder.errorMessage.empty() ? "malformed JSON" : builder.errorMessage;
      return Error{message};
    }
    const Reader reader(sourceName);
    return readScenario(reader, builder.root, sourceName);
  } catch (const LoadError& error) {
    return Error{error.message};
  } catch (const std::exception& error) {
    return Error{sourceName + ": " + error.what()};
  } catch (...) {
    return Error{sourceName + ": unknown error while reading the scenario"};
  }
}

}  // namespace

Result<Scenario> loadScenarioJson(const std::string& text, const std::string& sourceName) {
  Result<Scenario> result = loadScenarioJsonUnchecked(text, sourceName);
  if (!result) return Error{scenario_detail::validUtf8(result.error())};
  return result;
}

Result<Scenario> loadScenarioFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open the scenario file"};
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Error{path + ": cannot read the scenario file"};
  return loadScenarioJson(text.str(), path);
}

std::string saveScenarioJson(const Scenario& s) {
  ojson out = ojson::object();
  out["version"] = s.version;
  out["name"] = s.name;
  out["description"] = s.description;

  ojson character = ojson::object();
  character["file"] = s.character.file;
  character["unitScale"] = s.character.unitScale;
  if (!s.character.map.empty()) character["map"] = s.character.map;
  out["character"] = character;

  ojson ragdoll = ojson::object();
  if (!s.ragdoll.asset.empty()) {
    ragdoll["asset"] = s.ragdoll.asset;
  } else {
    ragdoll["totalMass"] = s.ragdoll.totalMass;
    const ScenarioBuild& b = s.ragdoll.build;
    ojson build = ojson::object();
    build["hands"] = b.hands;
    build["feet"] = b.feet;
    build["stabilize"] = b.stabilize;
    build["limbRadiusRatio"] = b.limbRadiusRatio;
    build["headRadiusScale"] = b.headRadiusScale;
    build["clearance"] = b.clearance;
    if (!b.jointOverridesJson.empty()) {
      ojson joints = ojson::parse(b.jointOverridesJson, nullptr, false);
      // Text that is not JSON is kept as a string so the loader reports it rather than losing it.
      build["joints"] = joints.is_discarded() ? ojson(b.jointOverridesJson) : joints;
    }
    ragdoll["build"] = build;
  }
  out["ragdoll"] = ragdoll;

  out["clip"] = clipJson(s.clip, true);
  out["root"] = ojson{{"position", vec3Json(s.root.position)}, {"yaw", s.root.yaw}};

  ojson world = ojson::object();
  world["gravity"] = vec3Json(s.world.gravity);
  world["ground"] = ojson{{"enabled", s.world.ground.enabled},
                          {"height", s.world.ground.height},
                          {"friction", s.world.ground.friction}};
  ojson boxes = ojson::array();
  for (const ScenarioBox& box : s.world.boxes) {
    ojson b = ojson::object();
    writeBoxFields(b, box);
    boxes.push_back(b);
  }
  world["boxes"] = boxes;
  ojson walls = ojson::array();
  for (const ScenarioWall& wall : s.world.walls) {
    walls.push_back(ojson{{"from", vec3Json(wall.from)},
                          {"to", vec3Json(wall.to)},
                          {"height", wall.height},
                          {"thickness", wall.thickness},
                          {"friction", wall.friction}});
  }
  world["walls"] = walls;
  ojson steps = ojson::array();
  for (const ScenarioSteps& flight : s.world.steps) {
    steps.push_back(ojson{{"count", flight.count},
                          {"rise", flight.rise},
                          {"run", flight.run},
                          {"width", flight.width},
                          {"origin", vec3Json(flight.origin)},
                          {"direction", vec3Json(flight.direction)},
                          {"friction", flight.friction}});
  }
  world["steps"] = steps;
  out["world"] = world;

  // Settings: only what differs from the library's defaults, so a saved scenario runs what a
  // Character user gets unless it says otherwise.
  const ScenarioSettings& st = s.settings;
  const ScenarioSettings defaults;
  const HandoffSettings& h = st.handoff;
  const HandoffSettings& dh = defaults.handoff;
  ojson settings = ojson::object();
  settings["dt"] = st.dt;
  settings["substeps"] = st.substeps;
  if (st.solverIterations != defaults.solverIterations) settings["solverIterations"] = st.solverIterations;
  if (h.mode != dh.mode) settings["handoffMode"] = nameIn(kHandoffModes, h.mode);
  if (h.displayBlendTime != dh.displayBlendTime) settings["displayBlendTime"] = h.displayBlendTime;
  if (h.maxLinearSpeed != dh.maxLinearSpeed) settings["maxLinearSpeed"] = h.maxLinearSpeed;
  if (h.maxAngularSpeed != dh.maxAngularSpeed) settings["maxAngularSpeed"] = h.maxAngularSpeed;
  if (h.teleportDistance != dh.teleportDistance) settings["teleportDistance"] = h.teleportDistance;
  if (st.driveSolver != defaults.driveSolver) settings["driveMode"] = nameIn(kDriveSolvers, st.driveSolver);
  if (h.stepTime != dh.stepTime) settings["stepTime"] = h.stepTime;
  if (h.limitLookAhead != dh.limitLookAhead) settings["limitLookAhead"] = h.limitLookAhead;
  if (h.jointConsistency != dh.jointConsistency) settings["jointConsistency"] = h.jointConsistency;
  if (h.staticContacts != dh.staticContacts) settings["staticContacts"] = h.staticContacts;
  if (!st.animationOwnedBones.empty()) settings["animationOwnedBones"] = st.animationOwnedBones;
  if (st.dropPropsAtDeath != defaults.dropPropsAtDeath) settings["dropPropsAtDeath"] = st.dropPropsAtDeath;
  out["settings"] = settings;

  const ScenarioRecovery dr;
  ojson recovery = ojson::object();
  if (s.recovery.supine) recovery["supine"] = clipJson(*s.recovery.supine, false);
  if (s.recovery.prone) recovery["prone"] = clipJson(*s.recovery.prone, false);
  if (s.recovery.landing) recovery["landing"] = clipJson(*s.recovery.landing, true);
  const TransitionSettings& t = s.recovery.transition;
  if (t.duration != dr.transition.duration) recovery["transitionTime"] = t.duration;
  if (t.maxPointSpeed != dr.transition.maxPointSpeed) recovery["maxPointSpeed"] = t.maxPointSpeed;
  if (t.maxDuration != dr.transition.maxDuration) recovery["maxTransitionTime"] = t.maxDuration;
  const SettleSettings& se = s.recovery.settle;
  if (se.window != dr.settle.window) recovery["settleWindow"] = se.window;
  if (se.maxLinearSpeed != dr.settle.maxLinearSpeed) recovery["settleLinearSpeed"] = se.maxLinearSpeed;
  if (se.maxAngularSpeed != dr.settle.maxAngularSpeed) recovery["settleAngularSpeed"] = se.maxAngularSpeed;
  if (s.recovery.completeGetUps != dr.completeGetUps) recovery["completeGetUps"] = s.recovery.completeGetUps;
  out["recovery"] = recovery;
  if (s.lookAt) out["lookAt"] = ojson{{"bone", s.lookAt->bone}, {"target", vec3Json(s.lookAt->target)}};
  if (!s.props.empty()) {
    const auto rigid = [](const Transform& t) {
      return ojson{{"rotation", ojson::array({t.rotation.w, t.rotation.x, t.rotation.y, t.rotation.z})},
                   {"translation", vec3Json(t.translation)}};
    };
    ojson props = ojson::array();
    for (const ScenarioProp& p : s.props) {
      ojson shape = ojson{{"type", nameIn(kPropShapes, p.shape.type)}};
      if (p.shape.type == ShapeType::Box) {
        shape["halfExtents"] = vec3Json(p.shape.halfExtents);
      } else {
        shape["radius"] = p.shape.radius;
        if (p.shape.type == ShapeType::Capsule) shape["halfHeight"] = p.shape.halfHeight;
      }
      props.push_back(ojson{{"name", p.name},
                            {"bone", p.bone},
                            {"shape", shape},
                            {"mass", p.mass},
                            {"handFromGrip", rigid(p.handFromGrip)},
                            {"propFromGrip", rigid(p.propFromGrip)},
                            {"friction", p.friction},
                            {"restitution", p.restitution}});
    }
    out["props"] = props;
  }

  ojson events = ojson::array();
  for (const ScenarioEvent& event : s.events) {
    ojson e = ojson::object();
    e["time"] = event.time;
    e["type"] = eventTypeName(event.type());
    if (!event.label.empty()) e["label"] = event.label;
    if (const auto* impulse = std::get_if<ScenarioEvent::Impulse>(&event.payload)) {
      if (impulse->knockback) {
        e["knockback"] = true;
      } else {
        e["body"] = impulse->body;
      }
      e["impulse"] = vec3Json(impulse->impulse);
      e["impulseSpace"] = nameIn(kImpulseSpaces, impulse->impulseSpace);
      if (!impulse->knockback) {
        if (impulse->point) e["point"] = vec3Json(*impulse->point);
        e["pointSpace"] = nameIn(kPointSpaces, impulse->pointSpace);
      }
    } else if (const auto* teleport = std::get_if<ScenarioEvent::Teleport>(&event.payload)) {
      e["position"] = vec3Json(teleport->position);
      e["yaw"] = teleport->yaw;
    } else if (const auto* powered = std::get_if<ScenarioEvent::Powered>(&event.payload)) {
      e["weight"] = powered->weight;
      e["rampTime"] = powered->rampTime;
      e["pinned"] = powered->pinned;
    } else if (const auto* partial = std::get_if<ScenarioEvent::Partial>(&event.payload)) {
      if (!partial->bodies.empty()) {
        ojson bodies = ojson::object();
        for (const auto& [name, weight] : partial->bodies) bodies[name] = weight;
        e["bodies"] = bodies;
      }
      if (!partial->regions.empty()) {
        ojson regions = ojson::object();
        for (const auto& [region, weight] : partial->regions) regions[bodyRegionName(region)] = weight;
        e["regions"] = regions;
      }
      e["rampTime"] = partial->rampTime;
    } else if (const auto* lag = std::get_if<ScenarioEvent::LimbLag>(&event.payload)) {
      if (!lag->slots.empty()) {
        ojson slots = ojson::array();
        for (const Slot slot : lag->slots) slots.push_back(slotName(slot));
        e["slots"] = slots;
      }
      e["weight"] = lag->weight;
      e["rampTime"] = lag->rampTime;
    } else if (const auto* animate = std::get_if<ScenarioEvent::Animate>(&event.payload)) {
      e["blendTime"] = animate->blendTime;
    } else if (const auto* allowed = std::get_if<ScenarioEvent::GetUpAllowed>(&event.payload)) {
      e["allowed"] = allowed->allowed;
    } else if (const auto* wall = std::get_if<ScenarioEvent::Wall>(&event.payload)) {
      writeBoxFields(e, wall->box);
    } else if (const auto* clip = std::get_if<ScenarioEvent::Clip>(&event.payload)) {
      writePlayedClipFields(e, clip->clip);
    } else if (const auto* grab = std::get_if<ScenarioEvent::Grab>(&event.payload)) {
      e["prop"] = grab->prop;
    } else if (const auto* drop = std::get_if<ScenarioEvent::Drop>(&event.payload)) {
      e["prop"] = drop->prop;
    }
    events.push_back(e);
  }
  out["events"] = events;
  out["endTime"] = s.endTime;

  ojson expectations = ojson::object();
  for (const auto& [name, value] : s.expectations) expectations[name] = value;
  out["expectations"] = expectations;
  return out.dump(2) + "\n";
}

const char* eventTypeName(EventType type) { return nameIn(kEventTypes, type); }

std::optional<EventType> eventTypeFromName(std::string_view name) {
  for (const auto& [text, type] : kEventTypes) {
    if (name == text) return type;
  }
  return std::nullopt;
}

PropDesc propDesc(const ScenarioProp& prop) {
  PropDesc d;
  d.name = prop.name;
  d.handBone = prop.bone;
  d.shape = prop.shape;
  d.mass = prop.mass;
  d.handFromGrip = prop.handFromGrip;
  d.propFromGrip = prop.propFromGrip;
  d.friction = prop.friction;
  d.restitution = prop.restitution;
  return d;
}

const char* driveSolverName(DriveSolver solver) { return nameIn(kDriveSolvers, solver); }

const char* scenarioHandoffModeName(HandoffMode mode) { return nameIn(kHandoffModes, mode); }

}  // namespace handoff
