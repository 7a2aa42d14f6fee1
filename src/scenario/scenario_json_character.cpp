// Scenario JSON, reading: the character, its ragdoll, clips, root, settings, look-at, props and
// recovery sections.
#include "scenario/scenario_json_read.h"

#include <cmath>
#include <string>

namespace handoff::scenario_json {

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

ScenarioSettings readSettings(const Reader& r, const json& value, const std::string& path) {
  r.expectObject(value, path);
  r.checkKeys(value, path,
              {"dt", "substeps", "solverIterations", "handoffMode", "displayBlendTime", "maxLinearSpeed",
               "maxAngularSpeed", "teleportDistance", "driveMode", "stepTime", "limitLookAhead",
               "jointConsistency", "staticContacts", "maxDepenetrationSpeed", "animationOwnedBones",
               "dropPropsAtDeath", "capsuleOnlyWhileAnimated"});
  ScenarioSettings s;
  HandoffSettings& h = s.handoff;
  s.dt = r.number(value, path, "dt", s.dt, Range{0.0, 0.1, true, false});
  s.substeps = r.integer(value, path, "substeps", s.substeps, 1, 64);
  s.solverIterations = r.integer(value, path, "solverIterations", s.solverIterations, 1, 1000);
  h.mode = r.choice(value, path, "handoffMode", h.mode, kHandoffModes);
  h.displayBlendTime = r.number(value, path, "displayBlendTime", h.displayBlendTime, kDuration);
  h.maxLinearSpeed =
      r.number(value, path, "maxLinearSpeed", h.maxLinearSpeed, Range{0.0, 1000.0, true, false});
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
  h.maxDepenetrationSpeed = r.number(value, path, "maxDepenetrationSpeed", h.maxDepenetrationSpeed,
                                     Range{0.0, 100.0, false, false});
  s.dropPropsAtDeath = r.boolean(value, path, "dropPropsAtDeath", s.dropPropsAtDeath);
  s.capsuleOnlyWhileAnimated = r.boolean(value, path, "capsuleOnlyWhileAnimated", s.capsuleOnlyWhileAnimated);
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
namespace {
Transform readRigid(const Reader& r, const json& object, const std::string& path, const char* key) {
  Transform t;
  const json* value = Reader::find(object, key);
  if (!value) return t;
  const std::string at = childPath(path, key);
  r.expectObject(*value, at);
  r.checkKeys(*value, at, {"rotation", "translation"}, " of a frame");
  if (const json* q = Reader::find(*value, "rotation")) t.rotation = r.toQuat(*q, childPath(at, "rotation"));
  t.translation = r.vec3(*value, at, "translation", Vec3{0.0}, Range{-100.0, 100.0});
  return t;
}
}  // namespace

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
               "settleWindow", "settleLinearSpeed", "settleAngularSpeed", "gatherTime", "completeGetUps"});
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
  recovery.gather.duration =
      r.number(value, path, "gatherTime", recovery.gather.duration, Range{0.0, 10.0, false, false});
  recovery.completeGetUps = r.boolean(value, path, "completeGetUps", recovery.completeGetUps);
  return recovery;
}

}  // namespace handoff::scenario_json
