// What the page reads of the Workbench: the description of the session (state()) and its event
// log (log()), split from workbench.cpp.
#include "live/workbench.h"
#include "live/workbench_internal.h"

#include <algorithm>

namespace handoff::live {

using json = nlohmann::json;

json Workbench::state() const {
  json j;
  if (!session_) return j;
  const ScenarioSession& session = *session_->session;
  const RagdollAsset& a = session.asset();
  const Skeleton& sk = character_->skeleton;
  j["sessionId"] = sessionId_;
  j["origin"] = origin_;
  j["rig"] = "api/rig.glb?s=" + std::to_string(sessionId_);
  j["character"] = {{"file", base_.character.file},
                    {"path", characterPath_},
                    {"uploaded", uploaded_},
                    {"joints", sk.jointCount()},
                    {"unitScale", character_->unitScale},
                    {"hipHeight", character_->hipHeight},
                    {"meshes", character_->meshes.size()},
                    {"warnings", character_->warnings}};
  json clips = json::array();
  for (const Clip& c : character_->clips) {
    clips.push_back(
        {{"name", c.name}, {"duration", c.duration()}, {"frames", c.frameCount}, {"rate", c.frameRate}});
  }
  j["clips"] = clips;
  const json saved = json::parse(saveScenarioJson(base_));
  j["clip"] = saved["clip"];
  // Every setting as the session runs it (a saved scenario names only what differs from the
  // library's defaults; the page shows them all, the derived look-ahead as derived).
  const ScenarioSettings& st = base_.settings;
  const HandoffSettings& h = st.handoff;
  const double erp = WorldSettings{}.jointErp;
  j["settings"] =
      json{{"dt", st.dt},
           {"substeps", st.substeps},
           {"solverIterations", st.solverIterations},
           {"handoffMode", saved["settings"].value("handoffMode", std::string("inherit"))},
           {"displayBlendTime", h.displayBlendTime},
           {"maxLinearSpeed", h.maxLinearSpeed},
           {"maxAngularSpeed", h.maxAngularSpeed},
           {"limitLookAhead", h.limitLookAhead >= 0.0 ? h.limitLookAhead : st.dt * (1.0 + 1.0 / erp)},
           {"limitLookAheadDerived", h.limitLookAhead < 0.0},
           {"jointConsistency", h.jointConsistency},
           {"staticContacts", h.staticContacts},
           {"maxDepenetrationSpeed", h.maxDepenetrationSpeed},
           {"driveMode", st.driveSolver == DriveSolver::Explicit ? "explicit" : "implicit"}};
  const ScenarioRecovery& rec = base_.recovery;
  j["recovery"] = json{{"transitionTime", rec.transition.duration},
                       {"maxPointSpeed", rec.transition.maxPointSpeed},
                       {"settleWindow", rec.settle.window},
                       {"completeGetUps", rec.completeGetUps}};
  j["dt"] = base_.settings.dt;
  // The way the character faces at the start of the session (the page puts its camera beside it).
  Vec3 forward = session.character().displayRoot().transformVector(a.modelForward);
  forward.y = 0.0;
  j["forward"] = vec(glm::length(forward) > 1e-9 ? glm::normalize(forward) : Vec3{1.0, 0.0, 0.0});
  j["groundHeight"] = base_.world.ground.height;
  j["groundEnabled"] = base_.world.ground.enabled;
  j["assetFile"] = session_->assetFile;

  json bodies = json::array();
  for (const BodyDef& b : a.bodies) {
    json body = {{"name", b.name},
                 {"slot", slotName(b.slot)},
                 {"mass", b.mass},
                 {"shape", b.shape.type == ShapeType::Capsule  ? "capsule"
                           : b.shape.type == ShapeType::Sphere ? "sphere"
                           : b.shape.type == ShapeType::Box    ? "box"
                                                               : "none"},
                 {"radius", b.shape.radius},
                 {"halfHeight", b.shape.halfHeight},
                 {"halfExtents", vec(b.shape.halfExtents)},
                 {"edited", tuning_.bodies.contains(b.name)}};
    bodies.push_back(body);
  }
  j["bodies"] = bodies;
  json joints = json::array();
  for (const JointDef& d : a.joints) {
    joints.push_back({{"name", d.name},
                      {"group", jointGroupName(d.group)},
                      {"parent", d.parentBody},
                      {"child", d.childBody},
                      {"lower", vec(d.preset.angularLower)},
                      {"upper", vec(d.preset.angularUpper)},
                      {"stiffness", d.preset.driveStiffness},
                      {"damping", d.preset.driveDamping},
                      {"maxTorque", d.preset.maxDriveTorque},
                      {"edited", tuning_.joints.contains(d.name)}});
  }
  j["joints"] = joints;
  // Group presets: anatomical values (docs/ASSET.md) with the scenario's and the page's overrides.
  json fileGroups = json::object();
  if (!base_.ragdoll.build.jointOverridesJson.empty()) {
    const json o = json::parse(base_.ragdoll.build.jointOverridesJson, nullptr, false);
    if (o.is_object() && o.contains("groups") && o["groups"].is_object()) fileGroups = o["groups"];
  }
  json groups = json::array();
  for (int g = 0; g < kJointGroupCount; ++g) {
    const JointGroup group = static_cast<JointGroup>(g);
    const JointPreset p = defaultJointPreset(group);
    json preset = {{"lower", vec(p.angularLower)},
                   {"upper", vec(p.angularUpper)},
                   {"stiffness", p.driveStiffness},
                   {"damping", p.driveDamping},
                   {"maxTorque", p.maxDriveTorque}};
    const std::string name = jointGroupName(group);
    if (fileGroups.contains(name)) preset.update(fileGroups[name]);
    if (tuning_.groups.contains(name)) preset.update(tuning_.groups[name]);
    const bool used =
        std::any_of(a.joints.begin(), a.joints.end(), [&](const JointDef& d) { return d.group == group; });
    groups.push_back(
        {{"name", name}, {"preset", preset}, {"edited", tuning_.groups.contains(name)}, {"used", used}});
  }
  j["groups"] = groups;
  j["groupsTunable"] = base_.ragdoll.asset.empty();
  json map = json::array();
  for (int s = 0; s < kSlotCount; ++s) {
    const int joint = a.map[static_cast<Slot>(s)];
    const SlotDecision& d = mapReport_.slots[static_cast<size_t>(s)];
    map.push_back(
        {{"slot", slotName(static_cast<Slot>(s))},
         {"source", mapSourceName(d.source)},
         {"confidence", d.confidence},
         {"bone", joint >= 0 && joint < sk.jointCount() ? json(sk.jointNames[static_cast<size_t>(joint)])
                                                        : json(nullptr)},
         {"required", slotRequired(static_cast<Slot>(s))}});
  }
  j["map"] = map;
  json notes = json::array();
  for (const Finding& f : mapReport_.findings) notes.push_back(findingJson(f));
  j["mapNotes"] = notes;
  j["mapConfidence"] = mapReport_.confidence;
  json findings = json::array();
  for (const Finding& f : findings_) findings.push_back(findingJson(f));
  j["findings"] = findings;
  j["playing"] = playing_;
  j["speed"] = speed_;
  j["leadIn"] = options_.leadIn;
  j["timing"] = timingJson();
  return j;
}

json Workbench::log() const {
  json j;
  if (!session_) return j;
  const ScenarioSession& session = *session_->session;
  const json saved = json::parse(saveScenarioJson(session.scenario()));
  j["sessionId"] = sessionId_;
  j["events"] = saved["events"];
  json character = json::array();
  for (const CharacterEvent& e : session.characterEvents()) {
    character.push_back({{"time", e.time}, {"kind", eventKindName(e.kind)}, {"detail", e.detail}});
  }
  j["characterEvents"] = character;
  // Static boxes: the world's and those placed by `wall` events so far.
  json boxes = json::array();
  const auto add = [&](const ScenarioBox& b) {
    boxes.push_back({{"center", vec(b.center)}, {"halfExtents", vec(b.halfExtents)}, {"yaw", b.yaw}});
  };
  for (const ScenarioBox& b : staticBoxes(session.scenario().world)) add(b);
  for (const ScenarioEvent& e : session.scenario().events) {
    if (const auto* w = std::get_if<ScenarioEvent::Wall>(&e.payload)) add(w->box);
  }
  j["boxes"] = boxes;
  return j;
}

}  // namespace handoff::live
