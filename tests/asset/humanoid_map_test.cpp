// Humanoid mapping: naming schemes, structure-only mapping, failures, T- and A-pose.
#include "asset_test_util.h"

#include <map>

namespace handoff {
namespace {
using namespace asset_test;

using Names = std::map<std::string, std::string>;

/// tPoseSkeleton() with its joints renamed (names missing from `names` keep theirs).
Skeleton renamed(Skeleton s, const Names& names) {
  for (std::string& n : s.jointNames) {
    if (auto it = names.find(n); it != names.end()) n = it->second;
  }
  return s;
}

/// Copy of `s` without the subtree of joint `name`.
Skeleton withoutSubtree(const Skeleton& s, const std::string& name) {
  const int cut = s.findJoint(name);
  std::vector<int> newIndex(static_cast<size_t>(s.jointCount()), -1);
  Skeleton out;
  for (int j = 0; j < s.jointCount(); ++j) {
    bool removed = false;
    for (int k = j; k != kNoParent; k = s.parents[static_cast<size_t>(k)]) removed = removed || k == cut;
    if (removed) continue;
    const int parent = s.parents[static_cast<size_t>(j)];
    newIndex[static_cast<size_t>(j)] =
        addJoint(out, s.jointNames[static_cast<size_t>(j)],
                 parent == kNoParent ? kNoParent : newIndex[static_cast<size_t>(parent)],
                 s.restLocal[static_cast<size_t>(j)].translation,
                 s.restLocal[static_cast<size_t>(j)].rotation, s.endSiteOffset[static_cast<size_t>(j)]);
  }
  return out;
}

/// Expected slot -> canonical (tPoseSkeleton) joint name.
const std::vector<std::pair<Slot, std::string>> kCanonical = {
    {Slot::Pelvis, "Hips"},     {Slot::LowerSpine, "Spine"},     {Slot::Chest, "Chest"},
    {Slot::Head, "Head"},       {Slot::UpperArmL, "LeftArm"},    {Slot::LowerArmL, "LeftForeArm"},
    {Slot::HandL, "LeftHand"},  {Slot::UpperArmR, "RightArm"},   {Slot::LowerArmR, "RightForeArm"},
    {Slot::HandR, "RightHand"}, {Slot::UpperLegL, "LeftUpLeg"},  {Slot::LowerLegL, "LeftLeg"},
    {Slot::FootL, "LeftFoot"},  {Slot::UpperLegR, "RightUpLeg"}, {Slot::LowerLegR, "RightLeg"},
    {Slot::FootR, "RightFoot"}};

void expectCanonicalMap(const Skeleton& s, const Names& names) {
  Result<HumanoidMap> map = mapHumanoid(s);
  ASSERT_TRUE(map.ok()) << map.error();
  for (const auto& [slot, canonical] : kCanonical) {
    const auto it = names.find(canonical);
    EXPECT_EQ(mapped(s, *map, slot), it == names.end() ? canonical : it->second) << slotName(slot);
  }
}

// --- Naming schemes on the same shape ---------------------------------------------------------

TEST(HumanoidMap, MixamoNames) {
  Names names;
  for (const std::string& n : tPoseSkeleton().jointNames) names[n] = "mixamorig:" + n;
  expectCanonicalMap(renamed(tPoseSkeleton(), names), names);
}

TEST(HumanoidMap, UnrealNamesWithTwistAndIkBones) {
  const Names names = {{"Hips", "pelvis"},
                       {"Spine", "spine_01"},
                       {"Chest", "spine_02"},
                       {"Neck", "neck_01"},
                       {"Head", "head"},
                       {"LeftShoulder", "clavicle_l"},
                       {"LeftArm", "upperarm_l"},
                       {"LeftForeArm", "lowerarm_l"},
                       {"LeftHand", "hand_l"},
                       {"LeftHandMiddle1", "middle_01_l"},
                       {"RightShoulder", "clavicle_r"},
                       {"RightArm", "upperarm_r"},
                       {"RightForeArm", "lowerarm_r"},
                       {"RightHand", "hand_r"},
                       {"RightHandMiddle1", "middle_01_r"},
                       {"LeftUpLeg", "thigh_l"},
                       {"LeftLeg", "calf_l"},
                       {"LeftFoot", "foot_l"},
                       {"LeftToeBase", "ball_l"},
                       {"RightUpLeg", "thigh_r"},
                       {"RightLeg", "calf_r"},
                       {"RightFoot", "foot_r"},
                       {"RightToeBase", "ball_r"}};
  // Unreal's mannequin: a root at the floor above the pelvis, IK bones at the feet and hands
  // under it, twist bones half way along the limbs.
  Skeleton base = renamed(tPoseSkeleton(), names);
  Skeleton s;
  const int root = addJoint(s, "root", kNoParent, {0.0, 0.0, 0.0});
  for (int j = 0; j < base.jointCount(); ++j) {
    const int parent = base.parents[static_cast<size_t>(j)];
    const Vec3 offset = base.restLocal[static_cast<size_t>(j)].translation;  // pelvis 1 m above the root
    addJoint(s, base.jointNames[static_cast<size_t>(j)], parent == kNoParent ? root : parent + 1, offset,
             base.restLocal[static_cast<size_t>(j)].rotation, base.endSiteOffset[static_cast<size_t>(j)]);
  }
  addJoint(s, "upperarm_twist_01_l", s.findJoint("upperarm_l"), {0.145, 0.0, 0.0});
  addJoint(s, "calf_twist_01_r", s.findJoint("calf_r"), {0.0, -0.2, 0.0});
  const int ikFoot = addJoint(s, "ik_foot_root", root, {0.0, 0.0, 0.0});
  addJoint(s, "ik_foot_l", ikFoot, {0.1, 0.02, 0.0});
  addJoint(s, "ik_foot_r", ikFoot, {-0.1, 0.02, 0.0});
  addJoint(s, "ik_hand_root", root, {0.0, 0.0, 0.0});
  expectCanonicalMap(s, names);
}

TEST(HumanoidMap, UnityAndRigifyNames) {
  const Names unity = {{"LeftArm", "LeftUpperArm"},     {"LeftForeArm", "LeftLowerArm"},
                       {"RightArm", "RightUpperArm"},   {"RightForeArm", "RightLowerArm"},
                       {"LeftUpLeg", "LeftUpperLeg"},   {"LeftLeg", "LeftLowerLeg"},
                       {"RightUpLeg", "RightUpperLeg"}, {"RightLeg", "RightLowerLeg"},
                       {"LeftToeBase", "LeftToes"},     {"RightToeBase", "RightToes"}};
  expectCanonicalMap(renamed(tPoseSkeleton(), unity), unity);
  const Names rigify = {{"Hips", "DEF-hips"},
                        {"Spine", "DEF-spine.001"},
                        {"Chest", "DEF-spine.002"},
                        {"Neck", "DEF-neck"},
                        {"Head", "DEF-head"},
                        {"LeftShoulder", "DEF-shoulder.L"},
                        {"LeftArm", "DEF-upper_arm.L"},
                        {"LeftForeArm", "DEF-forearm.L"},
                        {"LeftHand", "DEF-hand.L"},
                        {"RightShoulder", "DEF-shoulder.R"},
                        {"RightArm", "DEF-upper_arm.R"},
                        {"RightForeArm", "DEF-forearm.R"},
                        {"RightHand", "DEF-hand.R"},
                        {"LeftUpLeg", "DEF-thigh.L"},
                        {"LeftLeg", "DEF-shin.L"},
                        {"LeftFoot", "DEF-foot.L"},
                        {"LeftToeBase", "DEF-toe.L"},
                        {"RightUpLeg", "DEF-thigh.R"},
                        {"RightLeg", "DEF-shin.R"},
                        {"RightFoot", "DEF-foot.R"},
                        {"RightToeBase", "DEF-toe.R"}};
  expectCanonicalMap(renamed(tPoseSkeleton(), rigify), rigify);
}

TEST(HumanoidMap, RealSkeletonsMapToTheirNamedJoints) {
  struct Expect {
    const char* file;
    std::vector<std::pair<Slot, std::string>> slots;
  };
  const std::vector<Expect> cases = {
      {"cmu/01_01.bvh",
       {{Slot::Pelvis, "Hips"},
        {Slot::LowerSpine, "Spine"},
        {Slot::Chest, "Spine1"},
        {Slot::Head, "Head"},
        {Slot::UpperArmL, "LeftArm"},
        {Slot::LowerArmR, "RightForeArm"},
        {Slot::HandL, "LeftHand"},
        {Slot::UpperLegR, "RightUpLeg"},
        {Slot::LowerLegL, "LeftLeg"},
        {Slot::FootR, "RightFoot"}}},
      {"cmu/Boxing_Toes.bvh",
       {{Slot::Pelvis, "Hips"},
        {Slot::LowerSpine, "Ab"},
        {Slot::Chest, "Chest"},
        {Slot::Head, "Head"},
        {Slot::UpperArmL, "LeftShoulder"},
        {Slot::LowerArmR, "RightElbow"},
        {Slot::HandL, "LeftWrist"},
        {Slot::UpperLegR, "RightHip"},
        {Slot::LowerLegL, "LeftKnee"},
        {Slot::FootR, "RightAnkle"}}},
      {"deepmimic/humanoid3d_jump.bvh",
       {{Slot::Pelvis, "root"},
        {Slot::LowerSpine, "-"},
        {Slot::Chest, "chest"},
        {Slot::Head, "neck"},
        {Slot::UpperArmL, "left_shoulder"},
        {Slot::LowerArmR, "right_elbow"},
        {Slot::HandL, "-"},
        {Slot::UpperLegR, "right_hip"},
        {Slot::LowerLegL, "left_knee"},
        {Slot::FootR, "right_ankle"}}},
      {"mesh2motion/human-base-animations.glb",
       {{Slot::Pelvis, "DEF-hips"},
        {Slot::LowerSpine, "DEF-spine.001"},
        {Slot::Chest, "DEF-spine.003"},
        {Slot::Head, "DEF-head"},
        {Slot::UpperArmL, "DEF-upper_arm.L"},
        {Slot::LowerArmR, "DEF-forearm.R"},
        {Slot::HandL, "DEF-hand.L"},
        {Slot::UpperLegR, "DEF-thigh.R"},
        {Slot::LowerLegL, "DEF-shin.L"},
        {Slot::FootR, "DEF-foot.R"}}},
      {"robot-expressive/RobotExpressive.glb",
       {{Slot::Pelvis, "Body"},
        {Slot::Chest, "Torso"},
        {Slot::Head, "Head"},
        {Slot::UpperArmL, "UpperArm.L"},
        {Slot::LowerArmR, "LowerArm.R"},
        {Slot::UpperLegR, "UpperLeg.R"},
        {Slot::LowerLegL, "LowerLeg.L"},
        {Slot::FootL, "Foot.L"}}},  // parented to the root, standing at the ankle
  };
  for (const Expect& c : cases) {
    const Skeleton s = loadSkeleton(c.file);
    Result<HumanoidMap> map = mapHumanoid(s);
    ASSERT_TRUE(map.ok()) << c.file << ": " << map.error();
    for (const auto& [slot, name] : c.slots)
      EXPECT_EQ(mapped(s, *map, slot), name) << c.file << " " << slotName(slot);
  }
}

// --- Structure only ---------------------------------------------------------------------------

/// The same skeleton with every name replaced by "bone_<index>": no name can help.
Skeleton scrambled(Skeleton s) {
  for (size_t i = 0; i < s.jointNames.size(); ++i) s.jointNames[i] = "bone_" + std::to_string(i * 7 % 101);
  return s;
}

TEST(HumanoidMap, ScrambledNamesMapByStructureToTheSameSlots) {
  std::vector<std::pair<std::string, Skeleton>> skeletons = {{"synthetic", tPoseSkeleton()}};
  for (const char* f : {"cmu/01_01.bvh", "cmu/Boxing_Toes.bvh", "deepmimic/humanoid3d_run.bvh",
                        "mesh2motion/human-base-animations.glb"}) {
    skeletons.emplace_back(f, loadSkeleton(f));
  }
  for (const auto& [label, s] : skeletons) {
    Result<HumanoidMap> named = mapHumanoid(s);
    ASSERT_TRUE(named.ok()) << label << ": " << named.error();
    std::vector<Finding> notes;
    Result<HumanoidMap> structural = mapHumanoid(scrambled(s), &notes);
    ASSERT_TRUE(structural.ok()) << label << ": " << structural.error();
    for (int i = 0; i < kSlotCount; ++i) {
      EXPECT_EQ(structural->joint[static_cast<size_t>(i)], named->joint[static_cast<size_t>(i)])
          << label << " slot " << slotName(static_cast<Slot>(i)) << ": by name "
          << mapped(s, *named, static_cast<Slot>(i)) << ", by structure "
          << mapped(s, *structural, static_cast<Slot>(i));
    }
    const bool byProportion = std::any_of(notes.begin(), notes.end(), [](const Finding& f) {
      return f.message.find("by proportion") != std::string::npos;
    });
    EXPECT_TRUE(byProportion) << label;
  }
}

TEST(HumanoidMap, UnambiguousSideNamesDecideAgainstContraryGeometry) {
  // Turn the character to face -Z: a joint named "Left..." now stands on the character's right
  // only if the names lie; here they do not, so sides follow names and geometry alike.
  Skeleton s = tPoseSkeleton();
  s.restLocal[0].rotation = glm::angleAxis(kPi, Vec3{0.0, 1.0, 0.0});
  expectCanonicalMap(s, {});
  // Swap the names of the two legs: the leg named left stands on the right. The names are
  // unambiguous (one leg left, one right), so they decide (issue 31: a rig plainly named left and
  // right was mapped swapped because "geometry wins"); geometry reports the conflict.
  Names swap = {{"LeftUpLeg", "RightUpLeg"},     {"RightUpLeg", "LeftUpLeg"},    {"LeftLeg", "RightLeg"},
                {"RightLeg", "LeftLeg"},         {"LeftFoot", "RightFoot"},      {"RightFoot", "LeftFoot"},
                {"LeftToeBase", "RightToeBase"}, {"RightToeBase", "LeftToeBase"}};
  const Skeleton lying = renamed(tPoseSkeleton(), swap);
  std::vector<Finding> notes;
  Result<HumanoidMap> map = mapHumanoid(lying, &notes);
  ASSERT_TRUE(map.ok());
  EXPECT_EQ(mapped(lying, *map, Slot::UpperLegL), "LeftUpLeg");  // named left, though it stands at -X
  EXPECT_EQ(mapped(lying, *map, Slot::FootR), "RightFoot");
  const auto conflict = std::find_if(notes.begin(), notes.end(),
                                     [](const Finding& f) { return f.code == "map_side_conflict"; });
  ASSERT_NE(conflict, notes.end());
  EXPECT_EQ(conflict->severity, Finding::Severity::Warning);
  EXPECT_NE(conflict->message.find("the unambiguous names decide"), std::string::npos) << conflict->message;
}

// --- Failures ---------------------------------------------------------------------------------

TEST(HumanoidMap, MissingLegFailsListingSlotsAndCandidates) {
  const Skeleton s = withoutSubtree(tPoseSkeleton(), "RightUpLeg");
  Result<HumanoidMap> map = mapHumanoid(s);
  ASSERT_FALSE(map.ok());
  const std::string& e = map.error();
  EXPECT_NE(e.find("missing slots upper_leg_r, lower_leg_r"), std::string::npos) << e;
  EXPECT_EQ(e.find("upper_leg_l"), std::string::npos) << e;
  EXPECT_NE(e.find("Candidates considered"), std::string::npos) << e;
  EXPECT_NE(e.find("LeftUpLeg>LeftLeg>LeftFoot>LeftToeBase"), std::string::npos) << e;  // the leg it found
  EXPECT_NE(e.find("pelvis Hips"), std::string::npos) << e;
  // The builder reports the same.
  Result<RagdollAsset> asset = buildRagdoll(s, BuildOptions{});
  ASSERT_FALSE(asset.ok());
  EXPECT_NE(asset.error().find("upper_leg_r"), std::string::npos);
}

TEST(HumanoidMap, MissingArmAndHeadlessFail) {
  Result<HumanoidMap> noArm = mapHumanoid(withoutSubtree(tPoseSkeleton(), "LeftShoulder"));
  ASSERT_FALSE(noArm.ok());
  EXPECT_NE(noArm.error().find("upper_arm"), std::string::npos) << noArm.error();
  Skeleton single;
  addJoint(single, "only", kNoParent, {0.0, 1.0, 0.0});
  Result<HumanoidMap> one = mapHumanoid(single);
  ASSERT_FALSE(one.ok());
  EXPECT_NE(one.error().find("pelvis not found"), std::string::npos) << one.error();
  Skeleton broken = tPoseSkeleton();
  broken.parents[3] = 7;  // not topological
  EXPECT_FALSE(mapHumanoid(broken).ok());
}

// --- Explicit map -------------------------------------------------------------------------------

TEST(HumanoidMap, ExplicitJsonMapOverridesAndFillsTheRest) {
  const Skeleton s = tPoseSkeleton();
  Result<HumanoidMap> map = mapHumanoidFromJson(s, R"({"lower_spine": null, "chest": "Spine"})", "map.json");
  ASSERT_TRUE(map.ok()) << map.error();
  EXPECT_EQ(mapped(s, *map, Slot::LowerSpine), "-");
  EXPECT_EQ(mapped(s, *map, Slot::Chest), "Spine");
  EXPECT_EQ(mapped(s, *map, Slot::UpperArmL), "LeftArm");  // filled automatically

  Result<HumanoidMap> badSlot = mapHumanoidFromJson(s, R"({"tail": "Hips"})", "map.json");
  ASSERT_FALSE(badSlot.ok());
  EXPECT_NE(badSlot.error().find("unknown slot 'tail'"), std::string::npos) << badSlot.error();
  Result<HumanoidMap> typo = mapHumanoidFromJson(s, R"({"upperarm_l": "LeftArm"})", "map.json");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().find("upperarm_l: unknown slot 'upperarm_l' (did you mean 'upper_arm_l'?)"),
            std::string::npos)
      << typo.error();
  Result<HumanoidMap> field = mapHumanoidFromJson(s, R"({"version": 1, "slot": {}})", "map.json");
  ASSERT_FALSE(field.ok());
  EXPECT_NE(field.error().find("slot: unknown field 'slot' (did you mean 'slots'?)"), std::string::npos)
      << field.error();
  Result<HumanoidMap> badBone = mapHumanoidFromJson(s, R"({"head": "Skull"})", "map.json");
  ASSERT_FALSE(badBone.ok());
  EXPECT_NE(badBone.error().find("no bone 'Skull'"), std::string::npos) << badBone.error();
  Result<HumanoidMap> nullRequired = mapHumanoidFromJson(s, R"({"head": null})", "map.json");
  EXPECT_FALSE(nullRequired.ok());
  Result<HumanoidMap> crossed = mapHumanoidFromJson(s, R"({"lower_arm_l": "RightForeArm"})", "map.json");
  ASSERT_FALSE(crossed.ok());
  EXPECT_NE(crossed.error().find("not below"), std::string::npos) << crossed.error();
  Result<HumanoidMap> parse = mapHumanoidFromJson(s, R"({"head": )", "map.json");
  ASSERT_FALSE(parse.ok());
  EXPECT_NE(parse.error().find("map.json"), std::string::npos);
  // 100,000 nested arrays (the workbench's map upload, issue 27): an error naming the file and the
  // depth, not a stack overflow in the recursive JSON parser.
  const std::string deep = R"({"head": )" + std::string(100000, '[') + std::string(100000, ']') + "}";
  Result<HumanoidMap> tooDeep = mapHumanoidFromJson(s, deep, "map.json");
  ASSERT_FALSE(tooDeep.ok());
  EXPECT_NE(tooDeep.error().find("map.json: arrays and objects nested deeper than 64 levels"),
            std::string::npos)
      << tooDeep.error();

  // A rig whose automatic mapping fails maps when the JSON names the missing slots.
  Skeleton odd = tPoseSkeleton();
  for (std::string& n : odd.jointNames) n = "x" + n;
  BuildOptions options;
  options.mapJson = R"({"pelvis": "xHips", "head": "xHead"})";
  Result<RagdollAsset> asset = buildRagdoll(odd, options);
  ASSERT_TRUE(asset.ok()) << asset.error();
  EXPECT_EQ(asset->bodies[0].name, "xHips");
}

// --- T-pose and A-pose --------------------------------------------------------------------------

/// tPoseSkeleton with its arms rotated down by `armDown` radians about the forward axis and the
/// elbows and knees bent by `bend` radians in their anatomical direction.
Skeleton posed(double armDown, double bend) {
  Skeleton s = tPoseSkeleton();
  for (double side : {1.0, -1.0}) {
    const std::string p = side > 0 ? "Left" : "Right";
    // Left arm along +X: down is a negative rotation about +Z (forward); the right mirrors it.
    rotateRestJoint(s, s.findJoint(p + "Arm"), glm::angleAxis(-side * armDown, Vec3{0.0, 0.0, 1.0}));
    // Elbow flexion brings the forearm forward (+Z) in both poses: about the upper arm's
    // down-and-out normal. The knee bends backward: about +X.
    std::vector<Transform> models(static_cast<size_t>(s.jointCount()));
    localToModel(s, s.restLocal, models);
    const int elbow = s.findJoint(p + "ForeArm");
    const Vec3 upperDir = glm::normalize(models[static_cast<size_t>(elbow)].translation -
                                         models[static_cast<size_t>(s.findJoint(p + "Arm"))].translation);
    const Vec3 flexAxis = glm::normalize(glm::cross(upperDir, Vec3{0.0, 0.0, 1.0}));
    rotateRestJoint(s, elbow, glm::angleAxis(bend, flexAxis));
    rotateRestJoint(s, s.findJoint(p + "Leg"), glm::angleAxis(bend, Vec3{1.0, 0.0, 0.0}));
  }
  return s;
}

TEST(HumanoidMap, TPoseAndAPoseMapAndYieldValidLimitsAndHingeAxes) {
  struct Pose {
    const char* label;
    double armDown;
    double bend;
  };
  for (const Pose& pose :
       {Pose{"T-pose", 0.0, 0.0}, Pose{"T-pose bent", 0.0, 0.35}, Pose{"A-pose", 0.75, 0.0},
        Pose{"A-pose bent", 0.75, 0.35}, Pose{"arms down", 1.45, 0.2}}) {
    SCOPED_TRACE(pose.label);
    const Skeleton s = posed(pose.armDown, pose.bend);
    expectCanonicalMap(s, {});
    BuildReport report;
    Result<RagdollAsset> asset = buildRagdoll(s, BuildOptions{}, &report);
    ASSERT_TRUE(asset.ok()) << asset.error();
    EXPECT_EQ(report.count(Finding::Severity::Error), 0);
    const Measures m = measure(*asset, s);
    EXPECT_LE(m.worstLimitExcess, 1e-9);
    EXPECT_LT(m.worstAnchorMetres, 1e-9);
    EXPECT_LT(m.worstAxisDegrees, 1.0);
    // Hinges: the open axis (J's Z) is perpendicular to the plane of the two bones, and positive
    // rotation about it bends the limb further (flexion).
    std::vector<Transform> models(static_cast<size_t>(s.jointCount()));
    localToModel(s, s.restLocal, models);
    std::vector<Transform> bodies(asset->bodies.size());
    bodyPosesFromModels(*asset, models, Transform::identity(), bodies);
    int hinges = 0;
    for (const JointDef& j : asset->joints) {
      if (j.group != JointGroup::Elbow && j.group != JointGroup::Knee) continue;
      ++hinges;
      const Vec3 axis =
          (bodies[static_cast<size_t>(j.childBody)] * j.bodyBFromJoint).transformVector(Vec3{0, 0, 1});
      const int joint = s.findJoint(j.name);
      const int parent = s.parents[static_cast<size_t>(joint)];
      const int child = s.findJoint(j.name == "LeftForeArm"    ? "LeftHand"
                                    : j.name == "RightForeArm" ? "RightHand"
                                    : j.name == "LeftLeg"      ? "LeftFoot"
                                                               : "RightFoot");
      const Vec3 upper =
          models[static_cast<size_t>(joint)].translation - models[static_cast<size_t>(parent)].translation;
      const Vec3 lower =
          models[static_cast<size_t>(child)].translation - models[static_cast<size_t>(joint)].translation;
      EXPECT_NEAR(degrees(angleBetweenDirections(axis, upper)), 90.0, 1.0) << j.name;
      EXPECT_NEAR(degrees(angleBetweenDirections(axis, lower)), 90.0, 1.0) << j.name;
      if (pose.bend > 0.0) {
        // Perpendicular to the limb plane: parallel to upper x lower, pointing the flexion way.
        EXPECT_LT(degrees(angleBetweenDirections(axis, glm::cross(upper, lower))), 1.0) << j.name;
        // Straight is at -bend, inside the limits; full flexion adds 2.6 rad.
        EXPECT_NEAR(j.preset.angularLower.z, -pose.bend, 1e-9) << j.name;
        EXPECT_NEAR(j.preset.angularUpper.z, 2.6 - pose.bend, 1e-9) << j.name;
      } else {
        // Straight limb: the hinge still bends the forearm forward / the shank backward.
        const Vec3 flexed = glm::angleAxis(0.5, axis) * lower;
        const double towardsForward = glm::dot(flexed - lower, asset->modelForward);
        EXPECT_GT(j.group == JointGroup::Elbow ? towardsForward : -towardsForward, 0.0) << j.name;
      }
      EXPECT_EQ(j.preset.angularLower.x, 0.0);
      EXPECT_EQ(j.preset.angularUpper.x, 0.0);
      EXPECT_EQ(j.preset.angularLower.y, 0.0);
      EXPECT_EQ(j.preset.angularUpper.y, 0.0);
    }
    EXPECT_EQ(hinges, 4);
    // Shoulders: the arm can hang down (neutral) in every pose: abduction limits relative to
    // the bind pose are shifted by the bind abduction (pi/2 - armDown).
    const JointDef& shoulder = asset->joints[static_cast<size_t>(asset->bodyForSlot(Slot::UpperArmL) - 1)];
    ASSERT_EQ(shoulder.group, JointGroup::Shoulder);
    EXPECT_NEAR(shoulder.preset.angularLower.z, -0.5 - (0.5 * kPi - pose.armDown), 1e-6);
    EXPECT_NEAR(shoulder.preset.angularUpper.z, 2.8 - (0.5 * kPi - pose.armDown), 1e-6);
  }
}

}  // namespace
}  // namespace handoff
