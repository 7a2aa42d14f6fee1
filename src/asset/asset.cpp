// Slot and group names, asset lookups, pose helpers.
#include "handoff/asset.h"

#include <algorithm>
#include <cassert>

namespace handoff {
namespace {
constexpr std::array<const char*, kSlotCount> kSlotNames = {
    "pelvis", "lower_spine", "chest",       "head",   "upper_arm_l", "lower_arm_l",
    "hand_l", "upper_arm_r", "lower_arm_r", "hand_r", "upper_leg_l", "lower_leg_l",
    "foot_l", "upper_leg_r", "lower_leg_r", "foot_r"};
constexpr std::array<const char*, kJointGroupCount> kGroupNames = {"spine", "neck", "shoulder", "elbow",
                                                                   "wrist", "hip",  "knee",     "ankle"};
}  // namespace

const char* slotName(Slot slot) {
  const auto i = static_cast<size_t>(slot);
  return i < kSlotNames.size() ? kSlotNames[i] : "invalid";
}

std::optional<Slot> slotFromName(std::string_view name) {
  for (size_t i = 0; i < kSlotNames.size(); ++i) {
    if (name == kSlotNames[i]) return static_cast<Slot>(i);
  }
  return std::nullopt;
}

bool slotRequired(Slot slot) {
  switch (slot) {
    case Slot::LowerSpine:
    case Slot::HandL:
    case Slot::HandR:
    case Slot::FootL:
    case Slot::FootR:
    case Slot::Count:
      return false;
    default:
      return true;
  }
}

Slot parentSlot(Slot slot) {
  switch (slot) {
    case Slot::Pelvis:
    case Slot::Count:
      return Slot::Count;
    case Slot::LowerSpine:
    case Slot::UpperLegL:
    case Slot::UpperLegR:
      return Slot::Pelvis;
    case Slot::Chest:
      return Slot::LowerSpine;
    case Slot::Head:
    case Slot::UpperArmL:
    case Slot::UpperArmR:
      return Slot::Chest;
    case Slot::LowerArmL:
      return Slot::UpperArmL;
    case Slot::HandL:
      return Slot::LowerArmL;
    case Slot::LowerArmR:
      return Slot::UpperArmR;
    case Slot::HandR:
      return Slot::LowerArmR;
    case Slot::LowerLegL:
      return Slot::UpperLegL;
    case Slot::FootL:
      return Slot::LowerLegL;
    case Slot::LowerLegR:
      return Slot::UpperLegR;
    case Slot::FootR:
      return Slot::LowerLegR;
  }
  return Slot::Count;
}

const char* jointGroupName(JointGroup group) {
  const auto i = static_cast<size_t>(group);
  return i < kGroupNames.size() ? kGroupNames[i] : "invalid";
}

std::optional<JointGroup> jointGroupFromName(std::string_view name) {
  for (size_t i = 0; i < kGroupNames.size(); ++i) {
    if (name == kGroupNames[i]) return static_cast<JointGroup>(i);
  }
  return std::nullopt;
}

const char* severityName(Finding::Severity severity) {
  switch (severity) {
    case Finding::Severity::Info:
      return "info";
    case Finding::Severity::Warning:
      return "warning";
    case Finding::Severity::Error:
      return "error";
  }
  return "?";
}

std::string formatFinding(const Finding& finding) {
  std::string s = std::string(severityName(finding.severity)) + " " + finding.code;
  if (!finding.subject.empty()) s += " [" + finding.subject + "]";
  return s + ": " + finding.message;
}

bool hasErrors(std::span<const Finding> findings) {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Finding& f) { return f.severity == Finding::Severity::Error; });
}

bool BuildReport::hasErrors() const { return handoff::hasErrors(findings); }

int BuildReport::count(Finding::Severity severity) const {
  return static_cast<int>(std::count_if(findings.begin(), findings.end(),
                                        [&](const Finding& f) { return f.severity == severity; }));
}

int RagdollAsset::findBody(std::string_view name) const {
  for (size_t i = 0; i < bodies.size(); ++i) {
    if (bodies[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int RagdollAsset::bodyForJoint(int joint) const {
  for (size_t i = 0; i < bodies.size(); ++i) {
    if (bodies[i].joint == joint) return static_cast<int>(i);
  }
  return -1;
}

int RagdollAsset::bodyForSlot(Slot slot) const {
  for (size_t i = 0; i < bodies.size(); ++i) {
    if (bodies[i].slot == slot) return static_cast<int>(i);
  }
  return -1;
}

Status resolveJoints(RagdollAsset& asset, const Skeleton& skeleton) {
  std::string missing;
  for (BodyDef& body : asset.bodies) {
    const int j = skeleton.findJoint(body.name);
    if (j < 0) {
      missing += (missing.empty() ? "" : ", ") + body.name;
      continue;
    }
    body.joint = j;
  }
  if (!missing.empty()) return Error{"the skeleton has no bones named " + missing};
  // Mapped slots without a body keep their index when it still names a joint of this skeleton.
  for (int s = 0; s < kSlotCount; ++s) {
    const int b = asset.bodyForSlot(static_cast<Slot>(s));
    if (b >= 0) asset.map.joint[static_cast<size_t>(s)] = asset.bodies[static_cast<size_t>(b)].joint;
  }
  return {};
}

void bodyPosesFromModels(const RagdollAsset& asset, std::span<const Transform> models,
                         const Transform& worldFromRoot, std::span<Transform> worldFromBodies) {
  assert(worldFromBodies.size() >= asset.bodies.size() && "output span too short");
  for (size_t i = 0; i < asset.bodies.size(); ++i) {
    const BodyDef& body = asset.bodies[i];
    assert(body.joint >= 0 && static_cast<size_t>(body.joint) < models.size() && "body joint out of range");
    worldFromBodies[i] = worldFromRoot * models[static_cast<size_t>(body.joint)] * body.boneFromBody;
  }
}

JointGroup jointGroupForSlot(Slot s) {
  switch (s) {
    case Slot::Head:
      return JointGroup::Neck;
    case Slot::UpperArmL:
    case Slot::UpperArmR:
      return JointGroup::Shoulder;
    case Slot::LowerArmL:
    case Slot::LowerArmR:
      return JointGroup::Elbow;
    case Slot::HandL:
    case Slot::HandR:
      return JointGroup::Wrist;
    case Slot::UpperLegL:
    case Slot::UpperLegR:
      return JointGroup::Hip;
    case Slot::LowerLegL:
    case Slot::LowerLegR:
      return JointGroup::Knee;
    case Slot::FootL:
    case Slot::FootR:
      return JointGroup::Ankle;
    default:
      return JointGroup::Spine;
  }
}

JointDesc jointDescFor(const JointDef& def, std::span<const BodyId> bodies) {
  JointDesc desc;
  desc.bodyA = bodies[static_cast<size_t>(def.parentBody)];
  desc.bodyB = bodies[static_cast<size_t>(def.childBody)];
  desc.bodyAFromJoint = def.bodyAFromJoint;
  desc.bodyBFromJoint = def.bodyBFromJoint;
  desc.angularLower = def.preset.angularLower;
  desc.angularUpper = def.preset.angularUpper;
  desc.collideConnected = def.adjacentCollision;
  desc.breakForce = def.breakForce;
  desc.breakTorque = def.breakTorque;
  return desc;
}

}  // namespace handoff
