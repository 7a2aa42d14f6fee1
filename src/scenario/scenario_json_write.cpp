// Scenario JSON, writing: the canonical saver (every field, defaults included) and the names of
// the format's enums.
#include "scenario/scenario_json_read.h"

#include <string>
#include <variant>

namespace handoff {

using scenario_json::kDriveSolvers;
using scenario_json::kEventTypes;
using scenario_json::kHandoffModes;
using scenario_json::kImpulseSpaces;
using scenario_json::kPointSpaces;
using scenario_json::kPropShapes;
using scenario_json::kWrapModes;
using scenario_json::nameIn;

namespace {

// ---------------------------------------------------------------------------------------------

using ojson = nlohmann::ordered_json;

ojson vec3Json(const Vec3& v) { return ojson::array({v.x, v.y, v.z}); }
ojson quatJson(const Quat& q) { return ojson::array({q.w, q.x, q.y, q.z}); }

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
  if (const std::optional<ScenarioLevel>& level = s.world.level) {
    world["level"] = ojson{{"file", level->file},
                           {"position", vec3Json(level->position)},
                           {"rotation", quatJson(level->rotation)},
                           {"friction", level->friction},
                           {"unitScale", level->unitScale}};
  }
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
  if (h.maxDepenetrationSpeed != dh.maxDepenetrationSpeed)
    settings["maxDepenetrationSpeed"] = h.maxDepenetrationSpeed;
  if (!st.animationOwnedBones.empty()) settings["animationOwnedBones"] = st.animationOwnedBones;
  if (st.dropPropsAtDeath != defaults.dropPropsAtDeath) settings["dropPropsAtDeath"] = st.dropPropsAtDeath;
  if (st.capsuleOnlyWhileAnimated != defaults.capsuleOnlyWhileAnimated)
    settings["capsuleOnlyWhileAnimated"] = st.capsuleOnlyWhileAnimated;
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
  if (s.recovery.gather.duration != dr.gather.duration) recovery["gatherTime"] = s.recovery.gather.duration;
  if (s.recovery.completeGetUps != dr.completeGetUps) recovery["completeGetUps"] = s.recovery.completeGetUps;
  out["recovery"] = recovery;
  if (s.lookAt) out["lookAt"] = ojson{{"bone", s.lookAt->bone}, {"target", vec3Json(s.lookAt->target)}};
  if (!s.props.empty()) {
    const auto rigid = [](const Transform& t) {
      return ojson{{"rotation", quatJson(t.rotation)}, {"translation", vec3Json(t.translation)}};
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
