// Page commands -> scenario events, their validation by the scenario loader, and the joint and
// body edits of the tuning panel.
#include "live/workbench.h"

#include <cmath>

namespace handoff::live {

using json = nlohmann::json;

namespace {

/// The command's field `key` as a finite number, `fallback` when absent.
Result<double> numberField(const json& object, const char* key, double fallback) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_number()) return Error{std::string(key) + ": expected a number"};
  const double value = it->get<double>();
  if (!std::isfinite(value)) return Error{std::string(key) + ": not a finite number"};
  return value;
}

Result<Vec3> vectorValue(const json& value, const std::string& what) {
  if (!value.is_array() || value.size() != 3) return Error{what + ": expected [x, y, z]"};
  Vec3 v{0.0};
  for (int i = 0; i < 3; ++i) {
    if (!value[static_cast<size_t>(i)].is_number()) return Error{what + ": expected [x, y, z] numbers"};
    v[i] = value[static_cast<size_t>(i)].get<double>();
    if (!std::isfinite(v[i])) return Error{what + ": not finite"};
  }
  return v;
}

Result<std::optional<Vec3>> vectorField(const json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::optional<Vec3>{};
  Result<Vec3> v = vectorValue(*it, key);
  if (!v) return Error{v.error()};
  return std::optional<Vec3>{*v};
}

Result<std::map<std::string, double>> weightMap(const json& object, const char* key) {
  std::map<std::string, double> out;
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return out;
  if (!it->is_object()) return Error{std::string(key) + ": expected an object name -> weight"};
  for (const auto& [name, value] : it->items()) {
    if (!value.is_number() || !std::isfinite(value.get<double>())) {
      return Error{std::string(key) + "." + name + ": expected a number"};
    }
    out[name] = value.get<double>();
  }
  return out;
}

/// yaw (scenario convention: local +X turns to (cos yaw, 0, -sin yaw)) that turns +X onto `x`.
double yawOfX(const Vec3& x) { return std::atan2(-x.z, x.x); }

}  // namespace

Result<ScenarioEvent> eventFromCommand(const json& command, const TriggerContext& ctx) {
  if (!command.is_object()) return Error{"a command is a JSON object"};
  const auto typeIt = command.find("type");
  if (typeIt == command.end() || !typeIt->is_string()) return Error{"type: expected a string"};
  const std::string type = typeIt->get<std::string>();
  ScenarioEvent e;
  e.time = ctx.time;
  if (const auto label = command.find("label"); label != command.end() && label->is_string()) {
    e.label = label->get<std::string>().substr(0, 200);
  }
  const auto fail = [&](const std::string& message) { return Error{type + ": " + message}; };
#define HANDOFF_LIVE_NUMBER(var, key, fallback)             \
  Result<double> var = numberField(command, key, fallback); \
  if (!var) return fail(var.error())

  if (type == "ragdoll") {
    e.payload = ScenarioEvent::Ragdoll{};
  } else if (type == "powered") {
    HANDOFF_LIVE_NUMBER(weight, "weight", 1.0);
    HANDOFF_LIVE_NUMBER(ramp, "rampTime", 0.2);
    e.payload = ScenarioEvent::Powered{*weight, *ramp};
  } else if (type == "partial") {
    ScenarioEvent::Partial p;
    Result<std::map<std::string, double>> bodies = weightMap(command, "bodies");
    if (!bodies) return fail(bodies.error());
    p.bodies = std::move(bodies).value();
    Result<std::map<std::string, double>> regions = weightMap(command, "regions");
    if (!regions) return fail(regions.error());
    for (const auto& [name, w] : *regions) {
      const std::optional<BodyRegion> region = bodyRegionFromName(name);
      if (!region) return fail("regions." + name + ": no such region");
      p.regions[*region] = w;
    }
    HANDOFF_LIVE_NUMBER(ramp, "rampTime", 0.1);
    p.rampTime = *ramp;
    e.payload = std::move(p);
  } else if (type == "animate") {
    HANDOFF_LIVE_NUMBER(blend, "blendTime", 0.25);
    e.payload = ScenarioEvent::Animate{*blend};
  } else if (type == "getup_allowed") {
    const auto it = command.find("allowed");
    if (it != command.end() && !it->is_boolean()) return fail("allowed: expected true or false");
    e.payload = ScenarioEvent::GetUpAllowed{it == command.end() || it->get<bool>()};
  } else if (type == "teleport") {
    Result<std::optional<Vec3>> position = vectorField(command, "position");
    if (!position) return fail(position.error());
    HANDOFF_LIVE_NUMBER(yaw, "yaw", 0.0);
    ScenarioEvent::Teleport t;
    t.position = position->value_or(Vec3{0.0});
    t.yaw = *yaw;
    e.payload = t;
  } else if (type == "clip") {
    ScenarioClip clip;
    if (const auto name = command.find("name"); name != command.end() && !name->is_null()) {
      if (!name->is_string()) return fail("name: expected a string");
      clip.name = name->get<std::string>();
    }
    HANDOFF_LIVE_NUMBER(index, "index", 0.0);
    if (*index < 0 || *index > 1e6 || *index != std::floor(*index))
      return fail("index: expected a whole number >= 0");
    clip.index = static_cast<int>(*index);
    HANDOFF_LIVE_NUMBER(start, "startTime", 0.0);
    HANDOFF_LIVE_NUMBER(speed, "speed", 1.0);
    clip.startTime = *start;
    clip.speed = *speed;
    if (const auto wrap = command.find("wrap"); wrap != command.end() && !wrap->is_null()) {
      if (*wrap == "loop") {
        clip.wrap = WrapMode::Loop;
      } else if (*wrap == "clamp") {
        clip.wrap = WrapMode::Clamp;
      } else {
        return fail("wrap: expected \"loop\" or \"clamp\"");
      }
    }
    e.payload = ScenarioEvent::Clip{clip};
  } else if (type == "wall" || type == "box") {
    // In the way: ahead of the pelvis along the heading, standing on the ground.
    const Vec3 heading = glm::length(Vec3{ctx.heading.x, 0.0, ctx.heading.z}) > 1e-9
                             ? glm::normalize(Vec3{ctx.heading.x, 0.0, ctx.heading.z})
                             : Vec3{1.0, 0.0, 0.0};
    const Vec3 across{-heading.z, 0.0, heading.x};
    HANDOFF_LIVE_NUMBER(distance, "distance", type == "wall" ? 1.5 : 1.0);
    ScenarioBox box;
    if (type == "wall") {
      HANDOFF_LIVE_NUMBER(width, "width", 3.0);
      HANDOFF_LIVE_NUMBER(height, "height", 2.0);
      HANDOFF_LIVE_NUMBER(thickness, "thickness", 0.2);
      box.halfExtents = Vec3{*width, *height, *thickness} * 0.5;
      box.yaw = yawOfX(across);
    } else {
      Result<std::optional<Vec3>> half = vectorField(command, "halfExtents");
      if (!half) return fail(half.error());
      box.halfExtents = half->value_or(Vec3{0.25, 0.2, 0.6});
      box.yaw = yawOfX(heading);
    }
    const Vec3 ahead = ctx.pelvis + heading * *distance;
    box.center = Vec3{ahead.x, ctx.groundHeight + box.halfExtents.y, ahead.z};
    e.payload = ScenarioEvent::Wall{box};
  } else if (type == "impulse") {
    ScenarioEvent::Impulse hit;
    const auto body = command.find("body");
    if (body == command.end() || !body->is_string()) return fail("body: expected a body or bone name");
    hit.body = body->get<std::string>();
    const auto impulse = command.find("impulse");
    if (impulse == command.end()) return fail("impulse: expected [x, y, z] N s");
    Result<Vec3> j = vectorValue(*impulse, "impulse");
    if (!j) return fail(j.error());
    hit.impulse = *j;
    Result<std::optional<Vec3>> point = vectorField(command, "point");
    if (!point) return fail(point.error());
    hit.point = *point;
    if (const auto space = command.find("pointSpace"); space != command.end() && !space->is_null()) {
      if (*space == "world") {
        hit.pointSpace = PointSpace::World;
      } else if (*space != "body") {
        return fail("pointSpace: expected \"body\" or \"world\"");
      }
    }
    e.payload = std::move(hit);
  } else {
    return Error{"unknown command type '" + type.substr(0, 40) + "'"};
  }
#undef HANDOFF_LIVE_NUMBER
  return e;
}

namespace {

/// Per body, the principal moments the asset loader gives a body of that shape and mass when the
/// file has no "inertia" (the shape's own), for the bodies listed.
Result<std::vector<Vec3>> shapeInertias(const RagdollAsset& asset, const std::vector<int>& bodies) {
  json j = json::parse(saveRagdollJson(asset));
  for (int b : bodies) j["bodies"][static_cast<size_t>(b)].erase("inertia");
  Result<RagdollAsset> loaded = loadRagdollJson(j.dump(), "tuned asset");
  if (!loaded) return Error{loaded.error()};
  std::vector<Vec3> out;
  for (int b : bodies) out.push_back(loaded->bodies[static_cast<size_t>(b)].inertia);
  return out;
}

}  // namespace

Result<RagdollAsset> applyEdits(const RagdollAsset& asset, const Tuning& tuning) {
  RagdollAsset out = asset;
  for (const auto& entry : tuning.joints) {
    // Named, not a structured binding: lambdas below capture it (clang 14 cannot capture bindings).
    const std::string& name = entry.first;
    const JointEdit& edit = entry.second;
    const auto it =
        std::find_if(out.joints.begin(), out.joints.end(), [&](const JointDef& j) { return j.name == name; });
    if (it == out.joints.end()) return Error{"joints." + name + ": no joint of that name in the ragdoll"};
    JointPreset& p = it->preset;
    if (edit.lower) p.angularLower = *edit.lower;
    if (edit.upper) p.angularUpper = *edit.upper;
    for (int i = 0; i < 3; ++i) {
      if (!std::isfinite(p.angularLower[i]) || !std::isfinite(p.angularUpper[i])) {
        return Error{"joints." + name + ": limits must be finite"};
      }
    }
    const auto check = [&](const std::optional<double>& v, double& field, const char* what,
                           bool positive) -> Status {
      if (!v) return {};
      if (!std::isfinite(*v) || *v < 0.0 || (positive && *v == 0.0)) {
        return Error{"joints." + name + "." + what + ": must be " + (positive ? "> 0" : ">= 0")};
      }
      field = *v;
      return {};
    };
    if (Status s = check(edit.stiffness, p.driveStiffness, "stiffness", false); !s) return Error{s.error()};
    if (Status s = check(edit.damping, p.driveDamping, "damping", false); !s) return Error{s.error()};
    if (Status s = check(edit.maxTorque, p.maxDriveTorque, "maxTorque", true); !s) return Error{s.error()};
  }
  std::vector<int> resized;
  std::vector<double> radii;
  for (const auto& [name, edit] : tuning.bodies) {
    const int b = out.findBody(name);
    if (b < 0) return Error{"bodies." + name + ": no body of that name in the ragdoll"};
    BodyDef& body = out.bodies[static_cast<size_t>(b)];
    if (edit.mass) {
      if (!std::isfinite(*edit.mass) || *edit.mass <= 0.0)
        return Error{"bodies." + name + ".mass: must be > 0"};
      body.inertia *= *edit.mass / body.mass;
      body.mass = *edit.mass;
    }
    if (edit.radius) {
      if (body.shape.type != ShapeType::Capsule && body.shape.type != ShapeType::Sphere) {
        return Error{"bodies." + name + ".radius: only capsules and spheres have a radius"};
      }
      if (!std::isfinite(*edit.radius) || *edit.radius <= 0.0) {
        return Error{"bodies." + name + ".radius: must be > 0"};
      }
      resized.push_back(b);
      radii.push_back(*edit.radius);
    }
  }
  if (!resized.empty()) {
    // The stabilised inertia follows the shape: scaled per axis by the shape's own inertia after
    // and before the change (at the body's mass).
    Result<std::vector<Vec3>> before = shapeInertias(out, resized);
    if (!before) return Error{before.error()};
    for (size_t i = 0; i < resized.size(); ++i)
      out.bodies[static_cast<size_t>(resized[i])].shape.radius = radii[i];
    Result<std::vector<Vec3>> after = shapeInertias(out, resized);
    if (!after) return Error{after.error()};
    for (size_t i = 0; i < resized.size(); ++i) {
      Vec3& inertia = out.bodies[static_cast<size_t>(resized[i])].inertia;
      for (int a = 0; a < 3; ++a) inertia[a] *= (*after)[i][a] / (*before)[i][a];
    }
  }
  // Every value within the asset loader's ranges: tuning takes what a file may hold, no more.
  if (!tuning.joints.empty() || !tuning.bodies.empty()) {
    Result<RagdollAsset> checked = loadRagdollJson(saveRagdollJson(out), "tuning");
    if (!checked) return Error{checked.error()};
  }
  return out;
}

}  // namespace handoff::live
