// Skeletons of the rig families users bring, built from each family's published bone names and
// hierarchy (docs/RIGS.md): one table per family. Every table places its joints on the same
// 1.75 m T-pose (metres, Y up, facing +Z, the character's left at +X) through named landmarks, so
// each family differs only in names, hierarchy and helper bones, as real rigs do.
#pragma once

#include "handoff/rig.h"

#include <map>
#include <string>
#include <vector>

namespace handoff::test {

/// A landmark of the reference T-pose; "_l" landmarks mirror to "_r" (x negated). [m]
inline Vec3 landmark(const std::string& name) {
  static const std::map<std::string, Vec3> kLeft = {
      {"root", {0.0, 0.0, 0.0}},          {"pelvis", {0.0, 0.95, 0.0}},      {"hip", {0.09, 0.92, 0.0}},
      {"thigh_mid", {0.09, 0.71, 0.005}}, {"knee", {0.09, 0.50, 0.01}},      {"shin_mid", {0.09, 0.29, 0.005}},
      {"ankle", {0.09, 0.08, 0.0}},       {"toe", {0.09, 0.02, 0.14}},       {"toe_end", {0.09, 0.02, 0.20}},
      {"spine1", {0.0, 1.05, 0.0}},       {"spine2", {0.0, 1.17, 0.0}},      {"chest", {0.0, 1.30, 0.0}},
      {"upper_chest", {0.0, 1.40, 0.0}},  {"neck", {0.0, 1.50, 0.0}},        {"neck2", {0.0, 1.55, 0.0}},
      {"head", {0.0, 1.60, 0.01}},        {"head_top", {0.0, 1.78, 0.01}},   {"eye", {0.03, 1.68, 0.08}},
      {"face", {0.0, 1.66, 0.09}},        {"brow", {0.03, 1.72, 0.10}},      {"clavicle", {0.03, 1.45, 0.0}},
      {"shoulder", {0.17, 1.45, 0.0}},    {"upperarm_mid", {0.31, 1.45, 0.0}}, {"elbow", {0.45, 1.45, 0.0}},
      {"forearm_mid", {0.57, 1.45, 0.0}}, {"wrist", {0.70, 1.45, 0.0}},      {"finger", {0.80, 1.45, 0.0}},
      {"finger_end", {0.88, 1.45, 0.0}},  {"hair_top", {0.0, 1.84, -0.02}},  {"hair_back", {0.0, 1.62, -0.12}},
      {"hair_low", {0.0, 1.25, -0.14}},   {"skirt", {0.12, 0.90, 0.06}},     {"skirt_low", {0.15, 0.62, 0.08}},
  };
  std::string key = name;
  double side = 1.0;
  if (key.size() > 2 && key.compare(key.size() - 2, 2, "_l") == 0) {
    key.resize(key.size() - 2);
  } else if (key.size() > 2 && key.compare(key.size() - 2, 2, "_r") == 0) {
    key.resize(key.size() - 2);
    side = -1.0;
  }
  const auto it = kLeft.find(key);
  if (it == kLeft.end()) return Vec3{0.0, -100.0, 0.0};  // a typo shows as a failed map
  return Vec3{side * it->second.x, it->second.y, it->second.z};
}

/// One joint of a family table: its name, its parent's name ("" for a root) and its landmark.
struct RigRow {
  std::string name;
  std::string parent;
  std::string at;
};

/// A family: its rows, the slots it must map to (slot name -> bone) and the right hip height.
struct RigFamily {
  std::string family;
  std::vector<RigRow> rows;
  std::vector<std::pair<std::string, std::string>> expected;
  double hipHeight = 0.95;  ///< Pelvis landmark above the floor (the toe end). [m]
};

/// The skeleton of a table: rows in order (parents first), rest rotations identity.
inline Skeleton buildFamily(const RigFamily& f) {
  Skeleton s;
  std::vector<Vec3> model;
  for (const RigRow& r : f.rows) {
    const int parent = r.parent.empty() ? kNoParent : s.findJoint(r.parent);
    const Vec3 p = landmark(r.at);
    s.jointNames.push_back(r.name);
    s.parents.push_back(parent);
    s.restLocal.push_back(Transform::fromTranslation(parent == kNoParent ? p : p - model[static_cast<size_t>(parent)]));
    s.endSiteOffset.push_back(Vec3{0.0});
    model.push_back(p);
  }
  return s;
}

/// Rows for both sides: "{s}" in name/parent becomes `left`/`right`, "{x}" in the landmark "_l"/"_r".
inline void sides(std::vector<RigRow>& rows, const std::vector<RigRow>& pattern, const std::string& left,
                  const std::string& right) {
  for (const bool isLeft : {true, false}) {
    for (RigRow r : pattern) {
      for (std::string* text : {&r.name, &r.parent}) {
        for (size_t at = text->find("{s}"); at != std::string::npos; at = text->find("{s}"))
          text->replace(at, 3, isLeft ? left : right);
      }
      if (const size_t at = r.at.find("{x}"); at != std::string::npos) r.at.replace(at, 3, isLeft ? "_l" : "_r");
      rows.push_back(r);
    }
  }
}

/// Expected limb slots for both sides from one pattern.
inline void expectSides(RigFamily& f, const std::vector<std::pair<std::string, std::string>>& pattern,
                        const std::string& left, const std::string& right) {
  for (const bool isLeft : {true, false}) {
    for (auto [slot, bone] : pattern) {
      slot += isLeft ? "_l" : "_r";
      for (size_t at = bone.find("{s}"); at != std::string::npos; at = bone.find("{s}"))
        bone.replace(at, 3, isLeft ? left : right);
      f.expected.emplace_back(slot, bone);
    }
  }
}

/// Mixamo-style names with a prefix ("mixamorig:" for Mixamo, "" for Ready Player Me, "Character1_"
/// for Unity's sample humanoids, CMU without the prefix but with its hip joints).
inline RigFamily mixamoLike(const std::string& family, const std::string& p) {
  RigFamily f{family, {}, {}};
  f.rows = {{p + "Hips", "", "pelvis"},          {p + "Spine", p + "Hips", "spine1"},
            {p + "Spine1", p + "Spine", "spine2"}, {p + "Spine2", p + "Spine1", "chest"},
            {p + "Neck", p + "Spine2", "neck"},    {p + "Head", p + "Neck", "head"},
            {p + "HeadTop_End", p + "Head", "head_top"}, {p + "LeftEye", p + "Head", "eye_l"},
            {p + "RightEye", p + "Head", "eye_r"}};
  sides(f.rows,
        {{p + "{s}Shoulder", p + "Spine2", "clavicle{x}"},
         {p + "{s}Arm", p + "{s}Shoulder", "shoulder{x}"},
         {p + "{s}ForeArm", p + "{s}Arm", "elbow{x}"},
         {p + "{s}Hand", p + "{s}ForeArm", "wrist{x}"},
         {p + "{s}HandMiddle1", p + "{s}Hand", "finger{x}"},
         {p + "{s}HandMiddle4", p + "{s}HandMiddle1", "finger_end{x}"},
         {p + "{s}UpLeg", p + "Hips", "hip{x}"},
         {p + "{s}Leg", p + "{s}UpLeg", "knee{x}"},
         {p + "{s}Foot", p + "{s}Leg", "ankle{x}"},
         {p + "{s}ToeBase", p + "{s}Foot", "toe{x}"},
         {p + "{s}Toe_End", p + "{s}ToeBase", "toe_end{x}"}},
        "Left", "Right");
  f.expected = {{"pelvis", p + "Hips"}, {"head", p + "Head"}};
  expectSides(f,
              {{"upper_arm", p + "{s}Arm"},
               {"lower_arm", p + "{s}ForeArm"},
               {"hand", p + "{s}Hand"},
               {"upper_leg", p + "{s}UpLeg"},
               {"lower_leg", p + "{s}Leg"},
               {"foot", p + "{s}Foot"}},
              "Left", "Right");
  return f;
}

inline std::vector<RigFamily> rigFamilies() {
  std::vector<RigFamily> all;
  all.push_back(mixamoLike("Mixamo", "mixamorig:"));
  all.push_back(mixamoLike("Ready Player Me", ""));
  all.push_back(mixamoLike("Unity Character1", "Character1_"));

  {  // Unreal Engine 4/5 mannequin: twist bones, IK foot bones at the ankles under the root.
    RigFamily f{"Unreal UE5", {}, {}};
    f.rows = {{"root", "", "root"},           {"pelvis", "root", "pelvis"},     {"spine_01", "pelvis", "spine1"},
              {"spine_02", "spine_01", "spine2"}, {"spine_03", "spine_02", "chest"},
              {"spine_04", "spine_03", "upper_chest"}, {"spine_05", "spine_04", "neck"},
              {"neck_01", "spine_05", "neck2"}, {"head", "neck_01", "head"},
              {"ik_foot_root", "root", "root"}};
    sides(f.rows,
          {{"clavicle_{s}", "spine_05", "clavicle{x}"},         {"upperarm_{s}", "clavicle_{s}", "shoulder{x}"},
           {"upperarm_twist_01_{s}", "upperarm_{s}", "upperarm_mid{x}"},
           {"lowerarm_{s}", "upperarm_{s}", "elbow{x}"},
           {"lowerarm_twist_01_{s}", "lowerarm_{s}", "forearm_mid{x}"},
           {"hand_{s}", "lowerarm_{s}", "wrist{x}"},             {"middle_01_{s}", "hand_{s}", "finger{x}"},
           {"thigh_{s}", "pelvis", "hip{x}"},                    {"thigh_twist_01_{s}", "thigh_{s}", "thigh_mid{x}"},
           {"calf_{s}", "thigh_{s}", "knee{x}"},                 {"calf_twist_01_{s}", "calf_{s}", "shin_mid{x}"},
           {"foot_{s}", "calf_{s}", "ankle{x}"},                 {"ball_{s}", "foot_{s}", "toe{x}"},
           {"ik_foot_{s}", "ik_foot_root", "ankle{x}"}},
          "l", "r");
    f.expected = {{"pelvis", "pelvis"}, {"head", "head"}};
    expectSides(f,
                {{"upper_arm", "upperarm_{s}"}, {"lower_arm", "lowerarm_{s}"}, {"hand", "hand_{s}"},
                 {"upper_leg", "thigh_{s}"}, {"lower_leg", "calf_{s}"}, {"foot", "foot_{s}"}},
                "l", "r");
    all.push_back(f);
  }
  {  // Reallusion CC3/CC4: thighs under CC_Base_Pelvis beside CC_Base_Waist; twist and share bones.
    RigFamily f{"Character Creator CC4", {}, {}};
    f.rows = {{"CC_Base_BoneRoot", "", "root"},
              {"CC_Base_Hip", "CC_Base_BoneRoot", "pelvis"},
              {"CC_Base_Pelvis", "CC_Base_Hip", "pelvis"},
              {"CC_Base_Waist", "CC_Base_Hip", "spine1"},
              {"CC_Base_Spine01", "CC_Base_Waist", "spine2"},
              {"CC_Base_Spine02", "CC_Base_Spine01", "chest"},
              {"CC_Base_NeckTwist01", "CC_Base_Spine02", "neck"},
              {"CC_Base_NeckTwist02", "CC_Base_NeckTwist01", "neck2"},
              {"CC_Base_Head", "CC_Base_NeckTwist02", "head"},
              {"CC_Base_FacialBone", "CC_Base_Head", "face"},
              {"CC_Base_L_Eye", "CC_Base_FacialBone", "eye_l"},
              {"CC_Base_R_Eye", "CC_Base_FacialBone", "eye_r"}};
    sides(f.rows,
          {{"CC_Base_{s}_Clavicle", "CC_Base_Spine02", "clavicle{x}"},
           {"CC_Base_{s}_Upperarm", "CC_Base_{s}_Clavicle", "shoulder{x}"},
           {"CC_Base_{s}_UpperarmTwist01", "CC_Base_{s}_Upperarm", "upperarm_mid{x}"},
           {"CC_Base_{s}_Forearm", "CC_Base_{s}_Upperarm", "elbow{x}"},
           {"CC_Base_{s}_ElbowShareBone", "CC_Base_{s}_Forearm", "elbow{x}"},
           {"CC_Base_{s}_ForearmTwist01", "CC_Base_{s}_Forearm", "forearm_mid{x}"},
           {"CC_Base_{s}_Hand", "CC_Base_{s}_Forearm", "wrist{x}"},
           {"CC_Base_{s}_Mid1", "CC_Base_{s}_Hand", "finger{x}"},
           {"CC_Base_{s}_Thigh", "CC_Base_Pelvis", "hip{x}"},
           {"CC_Base_{s}_ThighTwist01", "CC_Base_{s}_Thigh", "thigh_mid{x}"},
           {"CC_Base_{s}_KneeShareBone", "CC_Base_{s}_Thigh", "knee{x}"},
           {"CC_Base_{s}_Calf", "CC_Base_{s}_Thigh", "knee{x}"},
           {"CC_Base_{s}_CalfTwist01", "CC_Base_{s}_Calf", "shin_mid{x}"},
           {"CC_Base_{s}_Foot", "CC_Base_{s}_Calf", "ankle{x}"},
           {"CC_Base_{s}_ToeBase", "CC_Base_{s}_Foot", "toe{x}"}},
          "L", "R");
    f.expected = {{"pelvis", "CC_Base_Hip"}, {"head", "CC_Base_Head"}};
    expectSides(f,
                {{"upper_arm", "CC_Base_{s}_Upperarm"}, {"lower_arm", "CC_Base_{s}_Forearm"},
                 {"hand", "CC_Base_{s}_Hand"}, {"upper_leg", "CC_Base_{s}_Thigh"},
                 {"lower_leg", "CC_Base_{s}_Calf"}, {"foot", "CC_Base_{s}_Foot"}},
                "L", "R");
    all.push_back(f);
  }
  {  // VRoid / VRM: hair chains above and down the back of the head, skirt chains off the hips.
    RigFamily f{"VRoid", {}, {}};
    f.rows = {{"Root", "", "root"},
              {"J_Bip_C_Hips", "Root", "pelvis"},
              {"J_Bip_C_Spine", "J_Bip_C_Hips", "spine1"},
              {"J_Bip_C_Chest", "J_Bip_C_Spine", "chest"},
              {"J_Bip_C_UpperChest", "J_Bip_C_Chest", "upper_chest"},
              {"J_Bip_C_Neck", "J_Bip_C_UpperChest", "neck"},
              {"J_Bip_C_Head", "J_Bip_C_Neck", "head"},
              {"J_Adj_L_FaceEye", "J_Bip_C_Head", "eye_l"},
              {"J_Adj_R_FaceEye", "J_Bip_C_Head", "eye_r"},
              {"J_Sec_Hair1_01", "J_Bip_C_Head", "head_top"},
              {"J_Sec_Hair1_02", "J_Sec_Hair1_01", "hair_top"},
              {"J_Sec_Hair2_01", "J_Bip_C_Head", "hair_back"},
              {"J_Sec_Hair2_02", "J_Sec_Hair2_01", "hair_low"}};
    sides(f.rows,
          {{"J_Bip_{s}_Shoulder", "J_Bip_C_UpperChest", "clavicle{x}"},
           {"J_Bip_{s}_UpperArm", "J_Bip_{s}_Shoulder", "shoulder{x}"},
           {"J_Bip_{s}_LowerArm", "J_Bip_{s}_UpperArm", "elbow{x}"},
           {"J_Bip_{s}_Hand", "J_Bip_{s}_LowerArm", "wrist{x}"},
           {"J_Bip_{s}_Middle1", "J_Bip_{s}_Hand", "finger{x}"},
           {"J_Bip_{s}_UpperLeg", "J_Bip_C_Hips", "hip{x}"},
           {"J_Bip_{s}_LowerLeg", "J_Bip_{s}_UpperLeg", "knee{x}"},
           {"J_Bip_{s}_Foot", "J_Bip_{s}_LowerLeg", "ankle{x}"},
           {"J_Bip_{s}_ToeBase", "J_Bip_{s}_Foot", "toe{x}"},
           {"J_Sec_{s}_Skirt_01", "J_Bip_C_Hips", "skirt{x}"},
           {"J_Sec_{s}_Skirt_02", "J_Sec_{s}_Skirt_01", "skirt_low{x}"}},
          "L", "R");
    f.expected = {{"pelvis", "J_Bip_C_Hips"}, {"head", "J_Bip_C_Head"}};
    expectSides(f,
                {{"upper_arm", "J_Bip_{s}_UpperArm"}, {"lower_arm", "J_Bip_{s}_LowerArm"}, {"hand", "J_Bip_{s}_Hand"},
                 {"upper_leg", "J_Bip_{s}_UpperLeg"}, {"lower_leg", "J_Bip_{s}_LowerLeg"}, {"foot", "J_Bip_{s}_Foot"}},
                "L", "R");
    all.push_back(f);
  }
  {  // Unity sample named "<Name>...": the legs hang off the spine bone.
    RigFamily f{"Unity <Name>", {}, {}};
    f.rows = {{"RobotHips", "", "pelvis"},          {"RobotSpine", "RobotHips", "spine1"},
              {"RobotChest", "RobotSpine", "chest"}, {"RobotNeck", "RobotChest", "neck"},
              {"RobotHead", "RobotNeck", "head"},    {"RobotHeadTop", "RobotHead", "head_top"}};
    sides(f.rows,
          {{"Robot{s}Shoulder", "RobotChest", "clavicle{x}"}, {"Robot{s}Arm", "Robot{s}Shoulder", "shoulder{x}"},
           {"Robot{s}ForeArm", "Robot{s}Arm", "elbow{x}"},    {"Robot{s}Hand", "Robot{s}ForeArm", "wrist{x}"},
           {"Robot{s}Finger", "Robot{s}Hand", "finger{x}"},   {"Robot{s}UpLeg", "RobotSpine", "hip{x}"},
           {"Robot{s}Leg", "Robot{s}UpLeg", "knee{x}"},       {"Robot{s}Foot", "Robot{s}Leg", "ankle{x}"},
           {"Robot{s}Toe", "Robot{s}Foot", "toe_end{x}"}},
          "Left", "Right");
    f.expected = {{"pelvis", "RobotHips"}, {"head", "RobotHead"}};
    expectSides(f,
                {{"upper_arm", "Robot{s}Arm"}, {"lower_arm", "Robot{s}ForeArm"}, {"hand", "Robot{s}Hand"},
                 {"upper_leg", "Robot{s}UpLeg"}, {"lower_leg", "Robot{s}Leg"}, {"foot", "Robot{s}Foot"}},
                "Left", "Right");
    all.push_back(f);
  }
  {  // DAZ Genesis 8: Bend/Twist limb segments, abdomen/chest/neck pairs.
    RigFamily f{"DAZ Genesis 8", {}, {}};
    f.rows = {{"hip", "", "pelvis"},
              {"pelvis", "hip", "pelvis"},
              {"abdomenLower", "hip", "spine1"},
              {"abdomenUpper", "abdomenLower", "spine2"},
              {"chestLower", "abdomenUpper", "chest"},
              {"chestUpper", "chestLower", "upper_chest"},
              {"neckLower", "chestUpper", "neck"},
              {"neckUpper", "neckLower", "neck2"},
              {"head", "neckUpper", "head"},
              {"lEye", "head", "eye_l"},
              {"rEye", "head", "eye_r"}};
    sides(f.rows,
          {{"{s}Collar", "chestUpper", "clavicle{x}"},
           {"{s}ShldrBend", "{s}Collar", "shoulder{x}"},
           {"{s}ShldrTwist", "{s}ShldrBend", "upperarm_mid{x}"},
           {"{s}ForearmBend", "{s}ShldrTwist", "elbow{x}"},
           {"{s}ForearmTwist", "{s}ForearmBend", "forearm_mid{x}"},
           {"{s}Hand", "{s}ForearmTwist", "wrist{x}"},
           {"{s}Mid1", "{s}Hand", "finger{x}"},
           {"{s}ThighBend", "pelvis", "hip{x}"},
           {"{s}ThighTwist", "{s}ThighBend", "thigh_mid{x}"},
           {"{s}Shin", "{s}ThighTwist", "knee{x}"},
           {"{s}Foot", "{s}Shin", "ankle{x}"},
           {"{s}Toe", "{s}Foot", "toe{x}"}},
          "l", "r");
    f.expected = {{"pelvis", "hip"}, {"head", "head"}};
    expectSides(f,
                {{"upper_arm", "{s}ShldrBend"}, {"lower_arm", "{s}ForearmBend"}, {"hand", "{s}Hand"},
                 {"upper_leg", "{s}ThighBend"}, {"lower_leg", "{s}Shin"}, {"foot", "{s}Foot"}},
                "l", "r");
    all.push_back(f);
  }
  {  // MakeHuman / MPFB default skeleton: segmented limbs (01/02), pelvis.L/R under the root.
    RigFamily f{"MakeHuman MPFB", {}, {}};
    f.rows = {{"root", "", "pelvis"},        {"spine05", "root", "spine1"},   {"spine04", "spine05", "spine2"},
              {"spine03", "spine04", "chest"}, {"spine02", "spine03", "upper_chest"}, {"spine01", "spine02", "neck"},
              {"neck01", "spine01", "neck2"}, {"head", "neck01", "head"},      {"head_end", "head", "head_top"}};
    sides(f.rows,
          {{"clavicle.{s}", "spine01", "clavicle{x}"},       {"shoulder01.{s}", "clavicle.{s}", "shoulder{x}"},
           {"upperarm01.{s}", "shoulder01.{s}", "shoulder{x}"}, {"upperarm02.{s}", "upperarm01.{s}", "upperarm_mid{x}"},
           {"lowerarm01.{s}", "upperarm02.{s}", "elbow{x}"},   {"lowerarm02.{s}", "lowerarm01.{s}", "forearm_mid{x}"},
           {"wrist.{s}", "lowerarm02.{s}", "wrist{x}"},        {"finger3-1.{s}", "wrist.{s}", "finger{x}"},
           {"pelvis.{s}", "root", "pelvis"},                   {"upperleg01.{s}", "pelvis.{s}", "hip{x}"},
           {"upperleg02.{s}", "upperleg01.{s}", "thigh_mid{x}"}, {"lowerleg01.{s}", "upperleg02.{s}", "knee{x}"},
           {"lowerleg02.{s}", "lowerleg01.{s}", "shin_mid{x}"}, {"foot.{s}", "lowerleg02.{s}", "ankle{x}"},
           {"toe1-1.{s}", "foot.{s}", "toe{x}"}},
          "L", "R");
    f.expected = {{"pelvis", "root"}, {"head", "head"}};
    expectSides(f,
                {{"upper_arm", "upperarm01.{s}"}, {"lower_arm", "lowerarm01.{s}"}, {"hand", "wrist.{s}"},
                 {"upper_leg", "upperleg01.{s}"}, {"lower_leg", "lowerleg01.{s}"}, {"foot", "foot.{s}"}},
                "L", "R");
    all.push_back(f);
  }
  {  // Blender's Human Meta-Rig: a face rig under spine.006, pelvis.L/R beside the thighs.
    RigFamily f{"Blender metarig", {}, {}};
    f.rows = {{"spine", "", "pelvis"},           {"spine.001", "spine", "spine1"},   {"spine.002", "spine.001", "spine2"},
              {"spine.003", "spine.002", "chest"}, {"spine.004", "spine.003", "neck"}, {"spine.005", "spine.004", "neck2"},
              {"spine.006", "spine.005", "head"},  {"face", "spine.006", "head"},     {"nose", "face", "face"},
              {"brow.T.L", "face", "brow_l"},      {"brow.T.L.003", "brow.T.L", "hair_top"},
              {"brow.T.R", "face", "brow_r"},      {"ear.L", "face", "eye_l"},        {"ear.R", "face", "eye_r"}};
    sides(f.rows,
          {{"pelvis.{s}", "spine", "pelvis"},          {"thigh.{s}", "spine", "hip{x}"},
           {"shin.{s}", "thigh.{s}", "knee{x}"},       {"foot.{s}", "shin.{s}", "ankle{x}"},
           {"toe.{s}", "foot.{s}", "toe{x}"},          {"shoulder.{s}", "spine.003", "clavicle{x}"},
           {"upper_arm.{s}", "shoulder.{s}", "shoulder{x}"}, {"forearm.{s}", "upper_arm.{s}", "elbow{x}"},
           {"hand.{s}", "forearm.{s}", "wrist{x}"},    {"f_middle.01.{s}", "hand.{s}", "finger{x}"}},
          "L", "R");
    f.expected = {{"pelvis", "spine"}, {"head", "spine.006"}};
    expectSides(f,
                {{"upper_arm", "upper_arm.{s}"}, {"lower_arm", "forearm.{s}"}, {"hand", "hand.{s}"},
                 {"upper_leg", "thigh.{s}"}, {"lower_leg", "shin.{s}"}, {"foot", "foot.{s}"}},
                "L", "R");
    all.push_back(f);
  }
  {  // Rigify: DEF- deform bones, limbs in segments, thighs and arms under ORG-/MCH- control bones.
    RigFamily f{"Rigify", {}, {}};
    f.rows = {{"root", "", "root"},
              {"DEF-spine", "root", "pelvis"},           {"DEF-spine.001", "DEF-spine", "spine1"},
              {"DEF-spine.002", "DEF-spine.001", "spine2"}, {"DEF-spine.003", "DEF-spine.002", "chest"},
              {"DEF-spine.004", "DEF-spine.003", "neck"}, {"DEF-spine.005", "DEF-spine.004", "neck2"},
              {"DEF-spine.006", "DEF-spine.005", "head"}, {"DEF-spine.006_end", "DEF-spine.006", "head_top"},
              {"MCH-torso.parent", "root", "spine1"},    {"torso", "MCH-torso.parent", "spine1"},
              {"ORG-spine", "torso", "pelvis"},          {"ORG-spine.003", "torso", "chest"}};
    sides(f.rows,
          {{"DEF-thigh.{s}", "ORG-spine", "hip{x}"},               {"DEF-thigh.{s}.001", "DEF-thigh.{s}", "thigh_mid{x}"},
           {"DEF-shin.{s}", "DEF-thigh.{s}.001", "knee{x}"},        {"DEF-shin.{s}.001", "DEF-shin.{s}", "shin_mid{x}"},
           {"DEF-foot.{s}", "DEF-shin.{s}.001", "ankle{x}"},        {"DEF-toe.{s}", "DEF-foot.{s}", "toe{x}"},
           {"ORG-shoulder.{s}", "ORG-spine.003", "clavicle{x}"},   {"DEF-shoulder.{s}", "ORG-shoulder.{s}", "clavicle{x}"},
           {"DEF-upper_arm.{s}", "ORG-shoulder.{s}", "shoulder{x}"},
           {"DEF-upper_arm.{s}.001", "DEF-upper_arm.{s}", "upperarm_mid{x}"},
           {"DEF-forearm.{s}", "DEF-upper_arm.{s}.001", "elbow{x}"},
           {"DEF-forearm.{s}.001", "DEF-forearm.{s}", "forearm_mid{x}"},
           {"DEF-hand.{s}", "DEF-forearm.{s}.001", "wrist{x}"},     {"DEF-f_middle.01.{s}", "DEF-hand.{s}", "finger{x}"}},
          "L", "R");
    f.expected = {{"pelvis", "DEF-spine"}, {"head", "DEF-spine.006"}};
    expectSides(f,
                {{"upper_arm", "DEF-upper_arm.{s}"}, {"lower_arm", "DEF-forearm.{s}"}, {"hand", "DEF-hand.{s}"},
                 {"upper_leg", "DEF-thigh.{s}"}, {"lower_leg", "DEF-shin.{s}"}, {"foot", "DEF-foot.{s}"}},
                "L", "R");
    all.push_back(f);
  }
  {  // 3ds Max Biped: the thighs hang off "Bip01 Spine", the pelvis is "Bip01 Pelvis" above it.
    RigFamily f{"3ds Max Biped", {}, {}};
    f.rows = {{"Bip01", "", "root"},
              {"Bip01 Pelvis", "Bip01", "pelvis"},         {"Bip01 Spine", "Bip01 Pelvis", "spine1"},
              {"Bip01 Spine1", "Bip01 Spine", "chest"},    {"Bip01 Neck", "Bip01 Spine1", "neck"},
              {"Bip01 Head", "Bip01 Neck", "head"},        {"Bip01 HeadNub", "Bip01 Head", "head_top"}};
    sides(f.rows,
          {{"Bip01 {s} Clavicle", "Bip01 Neck", "clavicle{x}"}, {"Bip01 {s} UpperArm", "Bip01 {s} Clavicle", "shoulder{x}"},
           {"Bip01 {s} Forearm", "Bip01 {s} UpperArm", "elbow{x}"}, {"Bip01 {s} Hand", "Bip01 {s} Forearm", "wrist{x}"},
           {"Bip01 {s} Finger2", "Bip01 {s} Hand", "finger{x}"},   {"Bip01 {s} Thigh", "Bip01 Spine", "hip{x}"},
           {"Bip01 {s} Calf", "Bip01 {s} Thigh", "knee{x}"},       {"Bip01 {s} Foot", "Bip01 {s} Calf", "ankle{x}"},
           {"Bip01 {s} Toe0", "Bip01 {s} Foot", "toe{x}"}},
          "L", "R");
    f.expected = {{"pelvis", "Bip01 Pelvis"}, {"head", "Bip01 Head"}};
    expectSides(f,
                {{"upper_arm", "Bip01 {s} UpperArm"}, {"lower_arm", "Bip01 {s} Forearm"}, {"hand", "Bip01 {s} Hand"},
                 {"upper_leg", "Bip01 {s} Thigh"}, {"lower_leg", "Bip01 {s} Calf"}, {"foot", "Bip01 {s} Foot"}},
                "L", "R");
    all.push_back(f);
  }
  {  // CMU (and LAFAN1-style motion datasets): hip joints between the pelvis and the thighs.
    RigFamily f{"CMU", {}, {}};
    f.rows = {{"Hips", "", "pelvis"},         {"LowerBack", "Hips", "pelvis"}, {"Spine", "LowerBack", "spine2"},
              {"Spine1", "Spine", "chest"},    {"Neck", "Spine1", "neck"},       {"Neck1", "Neck", "neck2"},
              {"Head", "Neck1", "head"},       {"HeadEnd", "Head", "head_top"}};
    sides(f.rows,
          {{"{s}Shoulder", "Spine1", "clavicle{x}"}, {"{s}Arm", "{s}Shoulder", "shoulder{x}"},
           {"{s}ForeArm", "{s}Arm", "elbow{x}"},     {"{s}Hand", "{s}ForeArm", "wrist{x}"},
           {"{s}FingerBase", "{s}Hand", "finger{x}"}, {"{s}HipJoint", "Hips", "pelvis"},
           {"{s}UpLeg", "{s}HipJoint", "hip{x}"},    {"{s}Leg", "{s}UpLeg", "knee{x}"},
           {"{s}Foot", "{s}Leg", "ankle{x}"},        {"{s}ToeBase", "{s}Foot", "toe{x}"}},
          "Left", "Right");
    // CMU names its hip joints LHipJoint/RHipJoint.
    for (RigRow& r : f.rows) {
      if (r.name == "LeftHipJoint") r.name = "LHipJoint";
      if (r.name == "RightHipJoint") r.name = "RHipJoint";
      if (r.parent == "LeftHipJoint") r.parent = "LHipJoint";
      if (r.parent == "RightHipJoint") r.parent = "RHipJoint";
    }
    f.expected = {{"pelvis", "Hips"}, {"head", "Head"}};
    expectSides(f,
                {{"upper_arm", "{s}Arm"}, {"lower_arm", "{s}ForeArm"}, {"hand", "{s}Hand"},
                 {"upper_leg", "{s}UpLeg"}, {"lower_leg", "{s}Leg"}, {"foot", "{s}Foot"}},
                "Left", "Right");
    all.push_back(f);
  }
  return all;
}

}  // namespace handoff::test
