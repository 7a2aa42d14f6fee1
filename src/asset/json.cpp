// Versioned JSON for ragdoll assets: lossless save, tolerant-but-strict load with default merge.
#include "handoff/asset.h"
#include "handoff/rig.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

namespace handoff {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;
constexpr const char* kFormat = "handoff-ragdoll";

// ---------------------------------------------------------------------------------------------
// Save
// ---------------------------------------------------------------------------------------------
OrderedJson vec(const Vec3& v) { return OrderedJson::array({v.x, v.y, v.z}); }

OrderedJson number(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

OrderedJson transform(const Transform& t) {
  OrderedJson j;
  j["rotation"] = OrderedJson::array({t.rotation.w, t.rotation.x, t.rotation.y, t.rotation.z});
  j["translation"] = vec(t.translation);
  return j;
}

OrderedJson filter(const CollisionFilter& f) {
  OrderedJson j;
  j["layer"] = f.layer;
  j["mask"] = f.mask;
  return j;
}

OrderedJson shape(const ShapeDesc& s) {
  OrderedJson j;
  j["type"] = shapeTypeName(s.type);
  const bool round = s.type == ShapeType::Sphere || s.type == ShapeType::Capsule;
  if (round || s.radius != 0.0) j["radius"] = s.radius;
  if (s.type == ShapeType::Capsule || s.halfHeight != 0.0) j["halfHeight"] = s.halfHeight;
  if (s.type == ShapeType::Box || s.halfExtents != Vec3{0.0}) j["halfExtents"] = vec(s.halfExtents);
  return j;
}

// ---------------------------------------------------------------------------------------------
// Load
// ---------------------------------------------------------------------------------------------
enum class Range { Any, Positive, NonNegative, Unit01 };

class Reader {
 public:
  Reader(std::string source, std::vector<Finding>& findings)
      : source_(std::move(source)), findings_(findings) {}

  void error(const std::string& path, const std::string& message) {
    findings_.push_back({Finding::Severity::Error, "json", path, message});
    errors_ += "\n  " + path + ": " + message;
  }
  void warning(const std::string& code, const std::string& path, const std::string& message) {
    findings_.push_back({Finding::Severity::Warning, code, path, message});
  }
  bool failed() const { return !errors_.empty(); }
  const std::string& errors() const { return errors_; }

  /// An unknown field is an error, as in every loader: a misspelt key would otherwise leave its
  /// value at the default without a word.
  void knownKeys(const Json& obj, const std::string& path, std::initializer_list<const char*> known) {
    for (const auto& [key, value] : obj.items()) {
      bool ok = false;
      for (const char* k : known) ok = ok || key == k;
      if (ok) continue;
      const std::vector<std::string> names(known.begin(), known.end());
      const std::string suggestion = didYouMean(key, names);
      std::string message = "unknown field '" + validUtf8(key) + "'" + suggestion;
      if (suggestion.empty()) {
        message += "; allowed:";
        for (const char* k : known) message += std::string(" ") + k;
      }
      error(path.empty() ? "(root)" : path, message);  // the object holding it: a key may hold spaces
    }
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  // Each reader leaves `out` unchanged when the key is missing and returns whether it was present.
  bool real(const Json& obj, const char* key, const std::string& path, double& out, Range range,
            bool allowInfinity = false) {
    if (!obj.contains(key)) return false;
    const Json& v = obj[key];
    const std::string at = join(path, key);
    double x = 0.0;
    if (allowInfinity && v.is_string() && v.get<std::string>() == "inf") {
      x = std::numeric_limits<double>::infinity();
    } else if (!v.is_number()) {
      error(at,
            std::string("expected a number") + (allowInfinity ? " or \"inf\"" : "") + ", got " + typeName(v));
      return true;
    } else {
      x = v.get<double>();
    }
    if (std::isnan(x) || (!allowInfinity && !std::isfinite(x))) {
      error(at, "must be finite");
      return true;
    }
    switch (range) {
      case Range::Positive:
        if (!(x > 0.0)) return error(at, "must be > 0, got " + show(x)), true;
        break;
      case Range::NonNegative:
        if (!(x >= 0.0)) return error(at, "must be >= 0, got " + show(x)), true;
        break;
      case Range::Unit01:
        if (!(x >= 0.0 && x <= 1.0)) return error(at, "must be in [0, 1], got " + show(x)), true;
        break;
      case Range::Any:
        break;
    }
    out = x;
    return true;
  }

  bool integer(const Json& obj, const char* key, const std::string& path, int& out, int minimum) {
    if (!obj.contains(key)) return false;
    const Json& v = obj[key];
    if (!v.is_number_integer())
      return error(join(path, key), "expected an integer, got " + typeName(v)), true;
    const auto x = v.get<std::int64_t>();
    if (x < minimum || x > 1000000) {
      return error(join(path, key),
                   "must be an integer >= " + std::to_string(minimum) + ", got " + std::to_string(x)),
             true;
    }
    out = static_cast<int>(x);
    return true;
  }

  bool mask(const Json& obj, const char* key, const std::string& path, std::uint32_t& out) {
    if (!obj.contains(key)) return false;
    const Json& v = obj[key];
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 0xffffffffLL) {
      return error(join(path, key), "expected an unsigned 32-bit integer, got " + typeName(v)), true;
    }
    out = static_cast<std::uint32_t>(v.get<std::int64_t>());
    return true;
  }

  bool boolean(const Json& obj, const char* key, const std::string& path, bool& out) {
    if (!obj.contains(key)) return false;
    const Json& v = obj[key];
    if (!v.is_boolean()) return error(join(path, key), "expected true or false, got " + typeName(v)), true;
    out = v.get<bool>();
    return true;
  }

  bool string(const Json& obj, const char* key, const std::string& path, std::string& out) {
    if (!obj.contains(key)) return false;
    const Json& v = obj[key];
    if (!v.is_string()) return error(join(path, key), "expected a string, got " + typeName(v)), true;
    out = v.get<std::string>();
    return true;
  }

  bool vector(const Json& obj, const char* key, const std::string& path, Vec3& out, bool unit = false) {
    if (!obj.contains(key)) return false;
    const Json& v = obj[key];
    const std::string at = join(path, key);
    if (!v.is_array() || v.size() != 3) return error(at, "expected [x, y, z], got " + typeName(v)), true;
    Vec3 r;
    for (int i = 0; i < 3; ++i) {
      if (!v[static_cast<size_t>(i)].is_number()) {
        return error(at + "[" + std::to_string(i) + "]",
                     "expected a number, got " + typeName(v[static_cast<size_t>(i)])),
               true;
      }
      r[i] = v[static_cast<size_t>(i)].get<double>();
    }
    if (!isFinite(r)) return error(at, "must be finite"), true;
    if (unit && std::abs(glm::length(r) - 1.0) > 1e-6) return error(at, "must be a unit vector"), true;
    out = r;
    return true;
  }

  bool rigid(const Json& obj, const char* key, const std::string& path, Transform& out) {
    if (!obj.contains(key)) return false;
    const Json& v = obj[key];
    const std::string at = join(path, key);
    if (!v.is_object())
      return error(at, "expected {\"rotation\": [w, x, y, z], \"translation\": [x, y, z]}"), true;
    knownKeys(v, at, {"rotation", "translation"});
    Transform t;
    if (v.contains("rotation")) {
      const Json& q = v["rotation"];
      bool ok = q.is_array() && q.size() == 4;
      for (size_t i = 0; ok && i < 4; ++i) ok = q[i].is_number();
      if (!ok) return error(at + ".rotation", "expected a quaternion [w, x, y, z], got " + typeName(q)), true;
      t.rotation = Quat{q[0].get<double>(), q[1].get<double>(), q[2].get<double>(), q[3].get<double>()};
      if (!isFinite(t.rotation) || std::abs(glm::length(t.rotation) - 1.0) > 1e-6) {
        return error(at + ".rotation", "must be a finite unit quaternion"), true;
      }
    }
    vector(v, "translation", at, t.translation);
    out = t;
    return true;
  }

  static std::string typeName(const Json& v) {
    return v.is_number()   ? "number " + v.dump()
           : v.is_string() ? "string " + v.dump()
                           : std::string(v.type_name());
  }
  static std::string show(double x) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
  }

 private:
  std::string source_;
  std::vector<Finding>& findings_;
  std::string errors_;
};

void readFilter(Reader& r, const Json& obj, const char* key, const std::string& path, CollisionFilter& out) {
  if (!obj.contains(key)) return;
  const Json& v = obj[key];
  const std::string at = Reader::join(path, key);
  if (!v.is_object()) return r.error(at, "expected {\"layer\": n, \"mask\": n}, got " + Reader::typeName(v));
  r.knownKeys(v, at, {"layer", "mask"});
  r.mask(v, "layer", at, out.layer);
  r.mask(v, "mask", at, out.mask);
}

// de Leva (1996) fraction of a slot; used only to default a missing body mass (see builder.cpp).
double defaultMassFraction(Slot slot) {
  constexpr std::array<double, kSlotCount> percent = {11.17, 16.33, 15.96, 6.94, 2.71, 1.62,  0.61, 2.71,
                                                      1.62,  0.61,  14.16, 4.33, 1.37, 14.16, 4.33, 1.37};
  return percent[static_cast<size_t>(slot)] / 100.0;
}

// nlohmann's indented dump puts every array element on its own line; vectors and quaternions
// read better as [x, y, z]. Collapses arrays that hold only numbers (no string, array or object).
std::string collapseFlatArrays(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size()) {
        out.push_back(text[++i]);
      } else if (c == '"') {
        inString = false;
      }
      continue;
    }
    if (c == '"') inString = true;
    const size_t close = c == '[' ? text.find(']', i) : std::string::npos;
    if (close == std::string::npos || text.find_first_of("[{\"", i + 1) < close) {
      out.push_back(c);
      continue;
    }
    out.push_back('[');
    for (size_t k = i + 1; k < close; ++k) {
      if (text[k] == ' ' || text[k] == '\n') continue;
      out.push_back(text[k]);
      if (text[k] == ',') out.push_back(' ');
    }
    out.push_back(']');
    i = close;
  }
  return out;
}

}  // namespace

std::string saveRagdollJson(const RagdollAsset& asset) {
  OrderedJson doc;
  doc["format"] = kFormat;
  doc["version"] = asset.version;
  doc["skeleton"] = asset.skeletonName;
  doc["totalMass"] = asset.totalMass;
  doc["calibration"] = {{"modelForward", vec(asset.modelForward)},
                        {"modelUp", vec(asset.modelUp)},
                        {"chestForwardInBody", vec(asset.chestForwardInBody)}};
  doc["capsule"] = {{"radius", asset.capsule.radius},
                    {"halfHeight", asset.capsule.halfHeight},
                    {"bindCenter", vec(asset.capsule.bindCenter)}};
  doc["collision"] = {{"world", filter(asset.collision.world)},
                      {"ragdoll", filter(asset.collision.ragdoll)},
                      {"capsule", filter(asset.collision.capsule)}};
  OrderedJson map = OrderedJson::object();
  for (int s = 0; s < kSlotCount; ++s) {
    if (asset.map.joint[static_cast<size_t>(s)] >= 0)
      map[slotName(static_cast<Slot>(s))] = asset.map.joint[static_cast<size_t>(s)];
  }
  doc["map"] = map;
  OrderedJson bodies = OrderedJson::array();
  for (const BodyDef& b : asset.bodies) {
    OrderedJson j;
    j["name"] = b.name;
    j["joint"] = b.joint;
    j["slot"] = slotName(b.slot);
    j["parent"] = b.parentBody;
    j["boneFromBody"] = transform(b.boneFromBody);
    j["shape"] = shape(b.shape);
    j["mass"] = b.mass;
    j["inertia"] = vec(b.inertia);
    j["friction"] = b.friction;
    j["rollingFriction"] = b.rollingFriction;
    j["restitution"] = b.restitution;
    j["linearDamping"] = b.linearDamping;
    j["angularDamping"] = b.angularDamping;
    j["filter"] = filter(b.filter);
    bodies.push_back(j);
  }
  doc["bodies"] = bodies;
  OrderedJson joints = OrderedJson::array();
  for (const JointDef& d : asset.joints) {
    OrderedJson j;
    j["name"] = d.name;
    j["group"] = jointGroupName(d.group);
    j["parent"] = d.parentBody;
    j["child"] = d.childBody;
    j["bodyAFromJoint"] = transform(d.bodyAFromJoint);
    j["bodyBFromJoint"] = transform(d.bodyBFromJoint);
    j["lower"] = vec(d.preset.angularLower);
    j["upper"] = vec(d.preset.angularUpper);
    j["stiffness"] = d.preset.driveStiffness;
    j["damping"] = d.preset.driveDamping;
    j["maxTorque"] = number(d.preset.maxDriveTorque);
    j["breakForce"] = number(d.breakForce);
    j["breakTorque"] = number(d.breakTorque);
    j["adjacentCollision"] = d.adjacentCollision;
    joints.push_back(j);
  }
  doc["joints"] = joints;
  // Invalid UTF-8 in a bone name (a Latin-1 BVH) is replaced rather than thrown.
  return collapseFlatArrays(doc.dump(2, ' ', false, OrderedJson::error_handler_t::replace)) + "\n";
}

Result<RagdollAsset> loadRagdollJson(const std::string& text, const std::string& sourceName,
                                     std::vector<Finding>* findingsOut) {
  std::vector<Finding> scratch;
  std::vector<Finding>& findings = findingsOut ? *findingsOut : scratch;
  Json doc;
  // Line and column (1-based) of the byte at `offset`.
  const auto position = [&](size_t offset) {
    const size_t end = std::min(offset, text.size());
    size_t line = 1;
    size_t column = 1;
    for (size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return sourceName + ":" + std::to_string(line) + ":" + std::to_string(column) + " (byte " +
           std::to_string(offset + 1) + "): ";
  };
  const auto reject = [&](const std::string& where, std::string what) -> Result<RagdollAsset> {
    if (const size_t p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    // nlohmann quotes the bytes it read last, which may not be UTF-8.
    const std::string message = validUtf8(where + what);
    findings.push_back({Finding::Severity::Error, "json", sourceName, message});
    return Error{message};
  };
  if (const std::optional<size_t> at = jsonTooDeep(text)) {
    return reject(position(*at),
                  "arrays and objects nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  try {
    doc = Json::parse(text);
  } catch (const Json::parse_error& e) {
    // e.byte: 1-based index of the byte nlohmann stopped at.
    return reject(position(e.byte > 0 ? e.byte - 1 : 0), e.what());
  } catch (const Json::out_of_range& e) {
    // A number overflow (1e400) has no byte offset: point at the number nlohmann quotes.
    const std::string what = e.what();
    const size_t open = what.find('\'');
    const size_t close = open == std::string::npos ? open : what.find('\'', open + 1);
    const size_t at =
        close == std::string::npos ? std::string::npos : text.find(what.substr(open + 1, close - open - 1));
    return reject(position(at == std::string::npos ? 0 : at), what);
  }
  Reader r(sourceName, findings);
  if (!doc.is_object()) {
    r.error("(root)", "expected a JSON object, got " + Reader::typeName(doc));
    return Error{sourceName + ":" + r.errors()};
  }
  RagdollAsset asset;
  r.knownKeys(doc, "",
              {"format", "version", "skeleton", "totalMass", "calibration", "capsule", "collision", "map",
               "bodies", "joints"});
  std::string format = kFormat;
  if (r.string(doc, "format", "", format) && format != kFormat) {
    r.error("format", "expected \"" + std::string(kFormat) + "\", got \"" + format + "\"");
  }
  if (!doc.contains("version")) {
    r.warning("json", "version", "no version: assuming " + std::to_string(RagdollAsset::kVersion));
  } else if (r.integer(doc, "version", "", asset.version, 1) && asset.version > RagdollAsset::kVersion) {
    r.error("version", "written by a newer version (" + std::to_string(asset.version) +
                           "); this build reads up to " + std::to_string(RagdollAsset::kVersion));
  }
  r.string(doc, "skeleton", "", asset.skeletonName);
  const bool hasTotal = r.real(doc, "totalMass", "", asset.totalMass, Range::Positive);
  if (doc.contains("calibration")) {
    const Json& c = doc["calibration"];
    if (!c.is_object()) {
      r.error("calibration", "expected an object, got " + Reader::typeName(c));
    } else {
      r.knownKeys(c, "calibration", {"modelForward", "modelUp", "chestForwardInBody"});
      r.vector(c, "modelForward", "calibration", asset.modelForward, true);
      r.vector(c, "modelUp", "calibration", asset.modelUp, true);
      r.vector(c, "chestForwardInBody", "calibration", asset.chestForwardInBody, true);
    }
  }
  if (doc.contains("capsule")) {
    const Json& c = doc["capsule"];
    if (!c.is_object()) {
      r.error("capsule", "expected an object, got " + Reader::typeName(c));
    } else {
      r.knownKeys(c, "capsule", {"radius", "halfHeight", "bindCenter"});
      r.real(c, "radius", "capsule", asset.capsule.radius, Range::Positive);
      r.real(c, "halfHeight", "capsule", asset.capsule.halfHeight, Range::NonNegative);
      r.vector(c, "bindCenter", "capsule", asset.capsule.bindCenter);
    }
  }
  if (doc.contains("collision")) {
    const Json& c = doc["collision"];
    if (!c.is_object()) {
      r.error("collision", "expected an object, got " + Reader::typeName(c));
    } else {
      r.knownKeys(c, "collision", {"world", "ragdoll", "capsule"});
      readFilter(r, c, "world", "collision", asset.collision.world);
      readFilter(r, c, "ragdoll", "collision", asset.collision.ragdoll);
      readFilter(r, c, "capsule", "collision", asset.collision.capsule);
    }
  }
  if (doc.contains("map")) {
    const Json& m = doc["map"];
    if (!m.is_object()) {
      r.error("map", "expected an object {\"slot\": joint index}, got " + Reader::typeName(m));
    } else {
      for (const auto& [key, value] : m.items()) {
        const std::optional<Slot> slot = slotFromName(key);
        if (!slot) {
          std::vector<std::string> names;
          for (int i = 0; i < kSlotCount; ++i) names.emplace_back(slotName(static_cast<Slot>(i)));
          r.error("map", "unknown slot '" + validUtf8(key) + "'" + didYouMean(key, names));
          continue;
        }
        r.integer(m, key.c_str(), "map", asset.map.joint[static_cast<size_t>(*slot)], -1);
      }
    }
  }
  // Bodies.
  if (!doc.contains("bodies")) {
    r.error("bodies", "missing: an asset needs at least one body");
  } else if (!doc["bodies"].is_array()) {
    r.error("bodies", "expected an array, got " + Reader::typeName(doc["bodies"]));
  } else {
    const Json& list = doc["bodies"];
    for (size_t i = 0; i < list.size(); ++i) {
      const Json& j = list[i];
      const std::string at = "bodies[" + std::to_string(i) + "]";
      BodyDef b;
      b.filter = asset.collision.ragdoll;
      if (!j.is_object()) {
        r.error(at, "expected an object, got " + Reader::typeName(j));
        continue;
      }
      r.knownKeys(j, at,
                  {"name", "joint", "slot", "parent", "boneFromBody", "shape", "mass", "inertia", "friction",
                   "rollingFriction", "restitution", "linearDamping", "angularDamping", "filter"});
      if (!r.string(j, "name", at, b.name) || b.name.empty())
        r.error(at + ".name", "missing: the bone's name");
      r.integer(j, "joint", at, b.joint, -1);
      std::string slot;
      if (!r.string(j, "slot", at, slot)) {
        r.error(at + ".slot", "missing: one of pelvis, lower_spine, chest, head, upper_arm_l, ...");
      } else if (const std::optional<Slot> s = slotFromName(slot)) {
        b.slot = *s;
      } else {
        r.error(at + ".slot", "unknown slot \"" + slot + "\"");
      }
      // Default parent: the nearest present body of the parent slots.
      b.parentBody = -1;
      for (Slot up = parentSlot(b.slot); up != Slot::Count && b.parentBody < 0; up = parentSlot(up)) {
        b.parentBody = asset.bodyForSlot(up);
      }
      r.integer(j, "parent", at, b.parentBody, -1);
      r.rigid(j, "boneFromBody", at, b.boneFromBody);
      if (!j.contains("shape")) {
        r.error(at + ".shape", "missing: {\"type\": \"capsule\", \"radius\": r, \"halfHeight\": h}");
      } else if (!j["shape"].is_object()) {
        r.error(at + ".shape", "expected an object, got " + Reader::typeName(j["shape"]));
      } else {
        const Json& s = j["shape"];
        const std::string sat = at + ".shape";
        r.knownKeys(s, sat, {"type", "radius", "halfHeight", "halfExtents"});
        std::string type;
        if (!r.string(s, "type", sat, type)) r.error(sat + ".type", "missing: sphere, capsule or box");
        if (type == "sphere") {
          b.shape.type = ShapeType::Sphere;
        } else if (type == "capsule") {
          b.shape.type = ShapeType::Capsule;
        } else if (type == "box") {
          b.shape.type = ShapeType::Box;
        } else if (!type.empty()) {
          r.error(sat + ".type", "unknown shape \"" + type + "\" (sphere, capsule or box)");
        }
        const bool round = b.shape.type == ShapeType::Sphere || b.shape.type == ShapeType::Capsule;
        if (!r.real(s, "radius", sat, b.shape.radius, round ? Range::Positive : Range::NonNegative) &&
            round) {
          r.error(sat + ".radius", "missing");
        }
        r.real(s, "halfHeight", sat, b.shape.halfHeight, Range::NonNegative);
        if (!r.vector(s, "halfExtents", sat, b.shape.halfExtents) && b.shape.type == ShapeType::Box) {
          r.error(sat + ".halfExtents", "missing");
        } else if (b.shape.type == ShapeType::Box &&
                   !(b.shape.halfExtents.x > 0.0 && b.shape.halfExtents.y > 0.0 &&
                     b.shape.halfExtents.z > 0.0)) {
          r.error(sat + ".halfExtents", "must all be > 0");
        }
      }
      b.mass = defaultMassFraction(b.slot) * (hasTotal ? asset.totalMass : 70.0);
      r.real(j, "mass", at, b.mass, Range::Positive);
      if (!r.vector(j, "inertia", at, b.inertia)) b.inertia = shapePrincipalInertia(b.shape, b.mass);
      if (j.contains("inertia") && !(b.inertia.x > 0.0 && b.inertia.y > 0.0 && b.inertia.z > 0.0)) {
        r.error(at + ".inertia", "principal moments must be > 0");
      }
      r.real(j, "friction", at, b.friction, Range::NonNegative);
      r.real(j, "rollingFriction", at, b.rollingFriction, Range::NonNegative);
      r.real(j, "restitution", at, b.restitution, Range::Unit01);
      r.real(j, "linearDamping", at, b.linearDamping, Range::NonNegative);
      r.real(j, "angularDamping", at, b.angularDamping, Range::NonNegative);
      readFilter(r, j, "filter", at, b.filter);
      asset.bodies.push_back(b);
    }
  }
  if (!hasTotal) {
    asset.totalMass = 0.0;
    for (const BodyDef& b : asset.bodies) asset.totalMass += b.mass;
  }
  // Joints.
  if (!doc.contains("joints")) {
    if (asset.bodies.size() > 1)
      r.warning("json", "joints", "no joints section: the bodies are not connected");
  } else if (!doc["joints"].is_array()) {
    r.error("joints", "expected an array, got " + Reader::typeName(doc["joints"]));
  } else {
    const Json& list = doc["joints"];
    for (size_t i = 0; i < list.size(); ++i) {
      const Json& j = list[i];
      const std::string at = "joints[" + std::to_string(i) + "]";
      if (!j.is_object()) {
        r.error(at, "expected an object, got " + Reader::typeName(j));
        continue;
      }
      r.knownKeys(j, at,
                  {"name", "group", "parent", "child", "bodyAFromJoint", "bodyBFromJoint", "lower", "upper",
                   "stiffness", "damping", "maxTorque", "breakForce", "breakTorque", "adjacentCollision"});
      JointDef d;
      r.string(j, "name", at, d.name);
      d.childBody = d.name.empty() ? -1 : asset.findBody(d.name);
      const bool hasChild = r.integer(j, "child", at, d.childBody, 0);
      if (d.childBody < 0 || d.childBody >= static_cast<int>(asset.bodies.size())) {
        r.error(at + (hasChild ? ".child" : ".name"),
                "does not name a body (give \"child\": body index, or \"name\": the child body's name)");
        continue;
      }
      const BodyDef& child = asset.bodies[static_cast<size_t>(d.childBody)];
      if (d.name.empty()) d.name = child.name;
      d.parentBody = child.parentBody;
      r.integer(j, "parent", at, d.parentBody, 0);
      d.group = jointGroupForSlot(child.slot);
      std::string group;
      if (r.string(j, "group", at, group)) {
        if (const std::optional<JointGroup> g = jointGroupFromName(group)) {
          d.group = *g;
        } else {
          r.error(at + ".group", "unknown joint group \"" + group + "\"");
        }
      }
      d.preset = defaultJointPreset(d.group);
      r.rigid(j, "bodyAFromJoint", at, d.bodyAFromJoint);
      r.rigid(j, "bodyBFromJoint", at, d.bodyBFromJoint);
      r.vector(j, "lower", at, d.preset.angularLower);
      r.vector(j, "upper", at, d.preset.angularUpper);
      r.real(j, "stiffness", at, d.preset.driveStiffness, Range::NonNegative);
      r.real(j, "damping", at, d.preset.driveDamping, Range::NonNegative);
      r.real(j, "maxTorque", at, d.preset.maxDriveTorque, Range::Positive, true);
      r.real(j, "breakForce", at, d.breakForce, Range::Positive, true);
      r.real(j, "breakTorque", at, d.breakTorque, Range::Positive, true);
      r.boolean(j, "adjacentCollision", at, d.adjacentCollision);
      asset.joints.push_back(d);
    }
  }
  if (r.failed()) return Error{sourceName + ": invalid ragdoll asset:" + r.errors()};
  return asset;
}

Result<RagdollAsset> loadRagdollFile(const std::string& path, std::vector<Finding>* findings) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open the file"};
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Error{path + ": read error"};
  return loadRagdollJson(text.str(), path, findings);
}

Status saveRagdollFile(const RagdollAsset& asset, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Error{path + ": cannot open the file for writing"};
  out << saveRagdollJson(asset);
  out.close();
  if (!out) return Error{path + ": write error"};
  return {};
}

}  // namespace handoff
