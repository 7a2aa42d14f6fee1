// Builder details on the synthetic T-pose skeleton: shapes, masses, stabilization, joint frames,
// overrides, options, and the shape distance used for overlaps.
#include "asset_test_util.h"

#include "asset/asset_internal.h"

namespace handoff {
namespace {
using namespace asset_test;

RagdollAsset build(const Skeleton& s, const BuildOptions& options, BuildReport* report = nullptr) {
  Result<RagdollAsset> a = buildRagdoll(s, options, report);
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error());
  return a.ok() ? *a : RagdollAsset{};
}

BuildOptions unstabilized() {
  BuildOptions o;
  o.stabilize = false;
  return o;
}

// --- Shapes --------------------------------------------------------------------------------------

TEST(Builder, ShapesFollowTheBonesOfTheTPose) {
  const Skeleton s = tPoseSkeleton();
  const RagdollAsset a = build(s, unstabilized());
  ASSERT_EQ(a.bodies.size(), 16u);
  std::vector<Transform> models(static_cast<size_t>(s.jointCount()));
  localToModel(s, s.restLocal, models);
  std::vector<Transform> bodies(a.bodies.size());
  bodyPosesFromModels(a, models, Transform::identity(), bodies);
  const auto at = [&](Slot slot) -> std::pair<const BodyDef&, const Transform&> {
    const int i = a.bodyForSlot(slot);
    return {a.bodies[static_cast<size_t>(i)], bodies[static_cast<size_t>(i)]};
  };
  // Left upper arm: shoulder (0.19, 1.5, 0) to elbow (0.48, 1.5, 0): a capsule along +X of
  // length 0.29 centred at x = 0.335, radius 0.16 x 0.29.
  {
    auto [def, pose] = at(Slot::UpperArmL);
    EXPECT_EQ(def.shape.type, ShapeType::Capsule);
    EXPECT_NEAR(def.shape.halfHeight, 0.145, 1e-12);
    EXPECT_NEAR(def.shape.radius, 0.16 * 0.29, 1e-12);
    EXPECT_LT(glm::length(pose.translation - Vec3{0.335, 1.5, 0.0}), 1e-12);
    EXPECT_LT(glm::length(pose.transformVector(Vec3{0, 1, 0}) - Vec3{1, 0, 0}), 1e-12);
    EXPECT_LT(glm::length(pose.transformVector(Vec3{0, 0, 1}) - Vec3{0, 0, 1}), 1e-12);  // C's Z: forward
  }
  // Head: a sphere touching the crown (end site 0.2 above the head joint at 1.64 m), radius
  // 0.36 x neck-base-to-crown (neck at 1.54 m to crown at 1.84 m: 0.3 m) = 0.108 m.
  {
    auto [def, pose] = at(Slot::Head);
    EXPECT_EQ(def.shape.type, ShapeType::Sphere);
    EXPECT_NEAR(def.shape.radius, 0.108, 1e-12);
    EXPECT_LT(glm::length(pose.translation - Vec3{0.0, 1.84 - 0.108, 0.0}), 1e-12);
  }
  // Left foot: a flat box from 0.28 x 0.14 behind the ankle to the toe tip 0.2 ahead, from the
  // floor (toe at 0.02 m below... the toe end site is the lowest point, y = 0.02) up to the ankle.
  {
    auto [def, pose] = at(Slot::FootL);
    EXPECT_EQ(def.shape.type, ShapeType::Box);
    const Vec3 ankle = models[static_cast<size_t>(s.findJoint("LeftFoot"))].translation;  // (0.1, 0.08, 0)
    const double reach = 0.2;                                                             // to the toe tip
    EXPECT_NEAR(def.shape.halfExtents.z, 0.5 * 1.28 * reach, 1e-12);
    EXPECT_NEAR(pose.translation.y - def.shape.halfExtents.y, ankle.y - 0.06, 1e-12);  // sole on the toe
    EXPECT_NEAR(pose.translation.y + def.shape.halfExtents.y, ankle.y, 1e-12);         // top at the ankle
    EXPECT_NEAR(pose.translation.z + def.shape.halfExtents.z, reach, 1e-12);           // front at the toe tip
    EXPECT_LT(glm::length(pose.transformVector(Vec3{0, 1, 0}) - Vec3{0, 1, 0}), 1e-12);  // flat
  }
  // Hand: a box along the hand from the wrist to the fingertip (0.19 m).
  {
    auto [def, pose] = at(Slot::HandR);
    EXPECT_NEAR(def.shape.halfExtents.y, 0.095, 1e-12);
    EXPECT_LT(glm::length(pose.transformVector(Vec3{0, 1, 0}) - Vec3{-1, 0, 0}), 1e-12);
  }
  // Capsule frames: +Y along the bone, origin at the centre of mass.
  for (const BodyDef& b : a.bodies) {
    if (b.shape.type == ShapeType::Capsule) {
      EXPECT_GT(b.shape.halfHeight, 0.0) << b.name;
      EXPECT_GT(b.shape.radius, 0.0) << b.name;
    }
  }
  EXPECT_EQ(a.modelForward, Vec3(0.0, 0.0, 1.0));
  EXPECT_LT(glm::length(a.chestForwardInBody - Vec3{0.0, 0.0, 1.0}), 1e-12);
  // Capsule of the character: standing height 1.84 m (floor at the toe tips, 0.02 m).
  EXPECT_NEAR(a.capsule.radius + a.capsule.halfHeight, 0.5 * 1.82, 1e-12);
  EXPECT_NEAR(a.capsule.bindCenter.y, 0.02 + 0.91, 1e-12);
}

TEST(Builder, RatiosAreOverridable) {
  const Skeleton s = tPoseSkeleton();
  BuildOptions o = unstabilized();
  o.ratios.upperArm = 0.1;
  o.headRadiusScale = 0.9;
  o.hands = false;
  o.feet = false;
  const RagdollAsset a = build(s, o);
  EXPECT_EQ(a.bodies.size(), 12u);
  EXPECT_NEAR(a.bodies[static_cast<size_t>(a.bodyForSlot(Slot::UpperArmL))].shape.radius, 0.029, 1e-12);
  EXPECT_NEAR(a.bodies[static_cast<size_t>(a.bodyForSlot(Slot::Head))].shape.radius, 0.9 * 0.108, 1e-12);
  o.limbRadiusRatio = 0.05;
  const RagdollAsset thin = build(s, o);
  EXPECT_NEAR(thin.bodies[static_cast<size_t>(thin.bodyForSlot(Slot::UpperLegR))].shape.radius, 0.05 * 0.44,
              1e-12);
  EXPECT_EQ(thin.map[Slot::HandL], s.findJoint("LeftHand"));  // mapped, but no body
  EXPECT_EQ(thin.bodyForSlot(Slot::HandL), -1);
}

// --- Masses ------------------------------------------------------------------------------------

TEST(Builder, MassesFollowDeLevaAndSumToTheTotal) {
  const Skeleton s = tPoseSkeleton();
  BuildOptions o = unstabilized();
  o.totalMass = 83.0;
  const RagdollAsset a = build(s, o);
  const auto mass = [&](Slot slot) { return a.bodies[static_cast<size_t>(a.bodyForSlot(slot))].mass; };
  // de Leva (1996), males: percent of body mass.
  EXPECT_NEAR(mass(Slot::Pelvis), 0.1117 * 83.0, 1e-9);
  EXPECT_NEAR(mass(Slot::LowerSpine), 0.1633 * 83.0, 1e-9);
  EXPECT_NEAR(mass(Slot::Chest), 0.1596 * 83.0, 1e-9);
  EXPECT_NEAR(mass(Slot::Head), 0.0694 * 83.0, 1e-9);
  EXPECT_NEAR(mass(Slot::UpperArmL), 0.0271 * 83.0, 1e-9);
  EXPECT_NEAR(mass(Slot::LowerArmR), 0.0162 * 83.0, 1e-9);
  EXPECT_NEAR(mass(Slot::HandL), 0.0061 * 83.0, 1e-9);
  EXPECT_NEAR(mass(Slot::UpperLegR), 0.1416 * 83.0, 1e-9);
  EXPECT_NEAR(mass(Slot::LowerLegL), 0.0433 * 83.0, 1e-9);
  EXPECT_NEAR(mass(Slot::FootR), 0.0137 * 83.0, 1e-9);
  double sum = 0.0;
  for (const BodyDef& b : a.bodies) {
    sum += b.mass;
    // Inertia of the solid shape with the body's mass.
    const Vec3 expected = shapePrincipalInertia(b.shape, b.mass);
    EXPECT_LT(glm::length(b.inertia - expected), 1e-15) << b.name;
  }
  EXPECT_NEAR(sum, 83.0, 1e-9);
  // Missing slots hand their mass to their parents: no hands -> forearms; no lower spine ->
  // half to the pelvis, half to the chest.
  o.hands = false;
  o.mapJson = R"({"lower_spine": null})";
  const RagdollAsset b = build(s, o);
  const auto massB = [&](Slot slot) { return b.bodies[static_cast<size_t>(b.bodyForSlot(slot))].mass; };
  EXPECT_NEAR(massB(Slot::LowerArmL), (0.0162 + 0.0061) * 83.0, 1e-9);
  EXPECT_NEAR(massB(Slot::Pelvis), (0.1117 + 0.5 * 0.1633) * 83.0, 1e-9);
  EXPECT_NEAR(massB(Slot::Chest), (0.1596 + 0.5 * 0.1633) * 83.0, 1e-9);
  double sumB = 0.0;
  for (const BodyDef& body : b.bodies) sumB += body.mass;
  EXPECT_NEAR(sumB, 83.0, 1e-9);
}

// --- Stabilize ---------------------------------------------------------------------------------

TEST(Stabilize, HandComputedChain) {
  // root 10 kg -> a 1 kg -> b 1 kg: ratios clamp(0.1) = 0.8 and clamp(1) = 1 give relative
  // masses 1, 0.8, 0.8 (sum 2.6) of the 12 kg total: 4.6154, 3.6923, 3.6923 kg.
  RagdollAsset a;
  for (int i = 0; i < 3; ++i) {
    BodyDef b;
    b.name = "b" + std::to_string(i);
    b.parentBody = i - 1;
    b.mass = i == 0 ? 10.0 : 1.0;
    b.inertia = Vec3{i == 0 ? 0.01 : 1.0, 0.5, 1.0} * b.mass;
    a.bodies.push_back(b);
  }
  const std::vector<Finding> findings = stabilize(a);
  EXPECT_NEAR(a.bodies[0].mass, 12.0 / 2.6, 1e-12);
  EXPECT_NEAR(a.bodies[1].mass, 12.0 * 0.8 / 2.6, 1e-12);
  EXPECT_NEAR(a.bodies[2].mass, 12.0 * 0.8 / 2.6, 1e-12);
  EXPECT_DOUBLE_EQ(a.bodies[0].mass + a.bodies[1].mass + a.bodies[2].mass, 12.0);
  // Inertia: scaled with mass, then b1's moments raised to min(2 x its largest, b2's largest);
  // the root's to min(2 x 12/2.6 x 0.5 x... its largest, sum of all descendants' largest).
  const double m1 = 12.0 * 0.8 / 2.6;
  EXPECT_NEAR(a.bodies[2].inertia.x, m1, 1e-12);                      // leaf: only scaled
  EXPECT_NEAR(a.bodies[1].inertia.y, std::min(2.0 * m1, m1), 1e-12);  // 0.5 m1 raised to m1
  const double rootLargest = 12.0 / 2.6;  // (0.01, 0.5, 1) x 10 kg scaled to 4.615 kg: largest 4.615
  EXPECT_NEAR(a.bodies[0].inertia.x, std::min(2.0 * rootLargest, m1 + m1), 1e-12);
  int massNotes = 0;
  for (const Finding& f : findings) massNotes += f.code == "stabilize_mass";
  EXPECT_EQ(massNotes, 3);
}

TEST(Stabilize, BuiltAssetKeepsTotalAndClampsRatios) {
  const Skeleton s = tPoseSkeleton();
  BuildReport report;
  BuildOptions o;
  o.totalMass = 64.0;
  const RagdollAsset a = build(s, o, &report);
  double sum = 0.0;
  for (const BodyDef& b : a.bodies) {
    sum += b.mass;
    if (b.parentBody < 0) continue;
    const double ratio = b.mass / a.bodies[static_cast<size_t>(b.parentBody)].mass;
    EXPECT_GE(ratio, 0.8 - 1e-12) << b.name;
    EXPECT_LE(ratio, 1.2 + 1e-12) << b.name;
  }
  EXPECT_NEAR(sum, 64.0, 1e-9);
  EXPECT_TRUE(std::any_of(report.findings.begin(), report.findings.end(), [](const Finding& f) {
    return f.code == "stabilize_mass" && f.subject == "LeftHand";
  }));
  // A parent is at least as hard to turn as min(2x itself, its subtree's sum).
  for (size_t i = 0; i < a.bodies.size(); ++i) {
    double childSum = 0.0;
    for (size_t k = i + 1; k < a.bodies.size(); ++k) {
      for (int p = a.bodies[k].parentBody; p >= 0; p = a.bodies[static_cast<size_t>(p)].parentBody) {
        if (p == static_cast<int>(i)) {
          const Vec3& in = a.bodies[k].inertia;
          childSum += std::max({in.x, in.y, in.z});
          break;
        }
      }
    }
    if (childSum == 0.0) continue;
    const Vec3& in = a.bodies[i].inertia;
    EXPECT_GE(std::min({in.x, in.y, in.z}), std::min(childSum, std::max({in.x, in.y, in.z})) * (1.0 - 1e-12))
        << a.bodies[i].name;
  }
  // Off: anthropometric masses stay.
  const RagdollAsset raw = build(s, unstabilized());
  EXPECT_NEAR(raw.bodies[static_cast<size_t>(raw.bodyForSlot(Slot::HandL))].mass, 0.0061 * 70.0, 1e-12);
}

// --- Joints --------------------------------------------------------------------------------------

TEST(Builder, JointFramesAndGroups) {
  const Skeleton s = tPoseSkeleton();
  const RagdollAsset a = build(s, BuildOptions{});
  ASSERT_EQ(a.joints.size(), a.bodies.size() - 1);
  std::vector<Transform> models(static_cast<size_t>(s.jointCount()));
  localToModel(s, s.restLocal, models);
  std::vector<Transform> bodies(a.bodies.size());
  bodyPosesFromModels(a, models, Transform::identity(), bodies);
  for (const JointDef& j : a.joints) {
    const BodyDef& child = a.bodies[static_cast<size_t>(j.childBody)];
    EXPECT_EQ(j.name, child.name);
    EXPECT_EQ(j.parentBody, child.parentBody);
    const Transform frameA = bodies[static_cast<size_t>(j.parentBody)] * j.bodyAFromJoint;
    const Transform frameB = bodies[static_cast<size_t>(j.childBody)] * j.bodyBFromJoint;
    // Anchor at the child bone's joint; both frames identical at bind.
    EXPECT_LT(glm::length(frameA.translation - models[static_cast<size_t>(child.joint)].translation), 1e-12)
        << j.name;
    EXPECT_LT(angleBetween(frameA.rotation, frameB.rotation), 1e-9) << j.name;
  }
  const auto group = [&](const char* bone) {
    for (const JointDef& j : a.joints) {
      if (j.name == bone) return j.group;
    }
    return JointGroup::Count;
  };
  EXPECT_EQ(group("Spine"), JointGroup::Spine);
  EXPECT_EQ(group("Chest"), JointGroup::Spine);
  EXPECT_EQ(group("Head"), JointGroup::Neck);
  EXPECT_EQ(group("LeftArm"), JointGroup::Shoulder);
  EXPECT_EQ(group("RightForeArm"), JointGroup::Elbow);
  EXPECT_EQ(group("LeftHand"), JointGroup::Wrist);
  EXPECT_EQ(group("RightUpLeg"), JointGroup::Hip);
  EXPECT_EQ(group("LeftLeg"), JointGroup::Knee);
  EXPECT_EQ(group("RightFoot"), JointGroup::Ankle);
  // Left and right mirror each other: the right hip's Y (abduction) range is the left's negated.
  const JointDef* hipL = nullptr;
  const JointDef* hipR = nullptr;
  for (const JointDef& j : a.joints) {
    if (j.name == "LeftUpLeg") hipL = &j;
    if (j.name == "RightUpLeg") hipR = &j;
  }
  ASSERT_TRUE(hipL && hipR);
  EXPECT_EQ(hipR->preset.angularLower.y, -hipL->preset.angularUpper.y);
  EXPECT_EQ(hipR->preset.angularUpper.y, -hipL->preset.angularLower.y);
  EXPECT_EQ(hipR->preset.angularLower.z, hipL->preset.angularLower.z);
  // Positive Z at the hip is flexion: the thigh swings forward.
  const Vec3 z =
      (bodies[static_cast<size_t>(hipL->childBody)] * hipL->bodyBFromJoint).transformVector(Vec3{0, 0, 1});
  EXPECT_GT(glm::dot(glm::angleAxis(0.5, z) * Vec3{0, -1, 0}, Vec3{0, 0, 1}), 0.4);
}

TEST(Builder, OverridesByGroupAndBone) {
  const Skeleton s = tPoseSkeleton();
  BuildOptions o;
  o.overridesJson = R"({"groups": {"knee": {"upper": [0, 0, 2.0], "stiffness": 50}},
                        "LeftForeArm": {"lower": [0, 0, 0], "upper": [0, 0, 1.5], "maxTorque": 33, "breakTorque": 900},
                        "NoSuchBone": {"damping": 1}})";
  BuildReport report;
  const RagdollAsset a = build(s, o, &report);
  for (const JointDef& j : a.joints) {
    if (j.group == JointGroup::Knee) {
      EXPECT_NEAR(j.preset.angularUpper.z, 2.0, 1e-12);
      EXPECT_NEAR(j.preset.driveStiffness, 50.0 * (70.0 / 70.0) * (1.82 / 1.75) * (1.82 / 1.75), 1e-9);
    }
    if (j.name == "LeftForeArm") {
      EXPECT_EQ(j.preset.angularUpper.z, 1.5);
      EXPECT_EQ(j.preset.maxDriveTorque, 33.0);
      EXPECT_EQ(j.breakTorque, 900.0);
      EXPECT_TRUE(std::isinf(j.breakForce));
    }
  }
  EXPECT_TRUE(std::any_of(report.findings.begin(), report.findings.end(), [](const Finding& f) {
    return f.code == "override" && f.subject == "NoSuchBone" && f.severity == Finding::Severity::Warning;
  }));
  for (const char* bad : {R"({"LeftForeArm": {"stiff": 1}})", R"({"groups": {"tail": {}}})",
                          R"({"LeftForeArm": {"upper": [0, 0]}})", R"({"LeftForeArm": {"damping": -1}})",
                          R"({"LeftForeArm": {"maxTorque": 0}})", R"({"LeftForeArm": )"}) {
    o.overridesJson = bad;
    Result<RagdollAsset> r = buildRagdoll(s, o);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().find("overrides"), std::string::npos) << r.error();
  }
  // An override that excludes the bind pose is caught by the validator.
  o.overridesJson = R"({"LeftLeg": {"lower": [0, 0, 0.3]}})";
  BuildReport failed;
  Result<RagdollAsset> r = buildRagdoll(s, o, &failed);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("limit_excludes_bind [LeftLeg]"), std::string::npos) << r.error();
  EXPECT_TRUE(failed.hasErrors());
}

TEST(Builder, InvalidOptionsAreRejected) {
  const Skeleton s = tPoseSkeleton();
  const auto rejects = [&](auto change, const char* what) {
    BuildOptions o;
    change(o);
    Result<RagdollAsset> r = buildRagdoll(s, o);
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_NE(r.error().find(what), std::string::npos) << r.error();
  };
  rejects([](BuildOptions& o) { o.totalMass = 0.0; }, "totalMass");
  rejects([](BuildOptions& o) { o.totalMass = std::numeric_limits<double>::quiet_NaN(); }, "totalMass");
  rejects([](BuildOptions& o) { o.headRadiusScale = -1.0; }, "headRadiusScale");
  rejects([](BuildOptions& o) { o.limbRadiusRatio = 0.6; }, "limbRadiusRatio");
  rejects([](BuildOptions& o) { o.ratios.chest = 0.0; }, "ratios");
  rejects([](BuildOptions& o) { o.stabilizeOptions.minMassRatio = 2.0; }, "stabilizeOptions");
  rejects([](BuildOptions& o) { o.clearance = -1.0; }, "clearance");
  Skeleton broken = s;
  broken.restLocal[2].translation.x = std::numeric_limits<double>::infinity();
  Result<RagdollAsset> r = buildRagdoll(broken, BuildOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("skeleton"), std::string::npos);
}

TEST(Builder, BodyPosesFromModelsComposesRootBoneAndBody) {
  const Skeleton s = tPoseSkeleton();
  const RagdollAsset a = build(s, BuildOptions{});
  std::vector<Transform> models(static_cast<size_t>(s.jointCount()));
  localToModel(s, s.restLocal, models);
  const Transform worldFromRoot{glm::angleAxis(0.7, glm::normalize(Vec3{0.2, 1.0, 0.1})),
                                Vec3{3.0, -1.0, 2.0}};
  std::vector<Transform> out(a.bodies.size());
  bodyPosesFromModels(a, models, worldFromRoot, out);
  for (size_t i = 0; i < a.bodies.size(); ++i) {
    const Transform expected =
        worldFromRoot * models[static_cast<size_t>(a.bodies[i].joint)] * a.bodies[i].boneFromBody;
    EXPECT_LT(glm::length(out[i].translation - expected.translation), 1e-12);
    EXPECT_LT(angleBetween(out[i].rotation, expected.rotation), 1e-12);
  }
}

// --- Shape distance (GJK) against values computed by hand --------------------------------------

TEST(ShapeDistance, HandComputedPairs) {
  using asset_detail::PlacedShape;
  using asset_detail::surfaceDistance;
  ShapeDesc sphere{ShapeType::Sphere, 0.5, 0.0, Vec3{0.0}};
  ShapeDesc capsule{ShapeType::Capsule, 0.25, 1.0, Vec3{0.0}};
  ShapeDesc box{ShapeType::Box, 0.0, 0.0, Vec3{1.0, 2.0, 3.0}};
  const Transform at0 = Transform::identity();
  // Spheres 2 m apart: 2 - 0.5 - 0.5.
  EXPECT_NEAR(surfaceDistance({sphere, at0}, {sphere, Transform::fromTranslation({2.0, 0.0, 0.0})}), 1.0,
              1e-12);
  // Parallel capsules (axis Y) 1 m apart: 1 - 0.5.
  EXPECT_NEAR(surfaceDistance({capsule, at0}, {capsule, Transform::fromTranslation({1.0, 0.5, 0.0})}), 0.5,
              1e-12);
  // Crossing capsules (one along X) 3 m apart along Z: 3 - 0.5.
  const Transform alongX{glm::angleAxis(0.5 * kPi, Vec3{0.0, 0.0, 1.0}), Vec3{0.0, 0.0, 3.0}};
  EXPECT_NEAR(surfaceDistance({capsule, at0}, {capsule, alongX}), 2.5, 1e-12);
  // Sphere beyond the box's corner (1, 2, 3) by (1, 1, 1): sqrt(3) - 0.5.
  EXPECT_NEAR(surfaceDistance({box, at0}, {sphere, Transform::fromTranslation({2.0, 3.0, 4.0})}),
              std::sqrt(3.0) - 0.5, 1e-9);
  // Capsule end above the box's top face: segment from y = 4 to 6 over the face at y = 2: 2 - 0.25.
  EXPECT_NEAR(surfaceDistance({box, at0}, {capsule, Transform::fromTranslation({0.3, 5.0, -0.4})}), 1.75,
              1e-12);
  // Rotated boxes, face to face along X after a quarter turn about X of the second one.
  const Transform turned{glm::angleAxis(0.5 * kPi, Vec3{1.0, 0.0, 0.0}), Vec3{5.0, 0.0, 0.0}};
  EXPECT_NEAR(surfaceDistance({box, at0}, {box, turned}), 3.0, 1e-9);
  // Overlapping: a penetration (negative), at least as deep as the radii when cores meet.
  EXPECT_LT(surfaceDistance({sphere, at0}, {capsule, Transform::fromTranslation({0.1, 0.0, 0.0})}), -0.6);
  EXPECT_NEAR(surfaceDistance({sphere, at0}, {sphere, Transform::fromTranslation({0.0, 0.9, 0.0})}), -0.1,
              1e-12);
  // Intersecting cores: the exact depth, by separating axes. Boxes overlapping by 0.1 along X
  // (the second one turned a quarter about X, so its extent along X is still 1).
  const Transform overlapped{turned.rotation, Vec3{1.9, 0.0, 0.0}};
  EXPECT_NEAR(surfaceDistance({box, at0}, {box, overlapped}), -0.1, 1e-9);
  // A sphere whose centre is inside the box, 0.2 below its top face: depth 0.2 + 0.5.
  EXPECT_NEAR(surfaceDistance({box, at0}, {sphere, Transform::fromTranslation({0.0, 1.8, 0.0})}), -0.7, 1e-9);
  // Crossing capsules whose segments intersect: depth = both radii.
  const Transform crossing{glm::angleAxis(0.5 * kPi, Vec3{0.0, 0.0, 1.0}), Vec3{0.0, 0.0, 0.0}};
  EXPECT_NEAR(surfaceDistance({capsule, at0}, {capsule, crossing}), -0.5, 1e-9);
  // A capsule pushed 0.3 deep into a box face along its axis: 0.3 + 0.25.
  EXPECT_NEAR(surfaceDistance({box, at0}, {capsule, Transform::fromTranslation({0.0, 2.0 + 1.0 - 0.3, 0.0})}),
              -0.55, 1e-9);
  // The public wrapper agrees.
  EXPECT_EQ(shapeSurfaceDistance(box, at0, box, overlapped), surfaceDistance({box, at0}, {box, overlapped}));
}

TEST(NameKey, TokensSidesAndPrefixes) {
  using asset_detail::nameKey;
  EXPECT_EQ(nameKey("mixamorig:LeftForeArm").core, "forearm");
  EXPECT_EQ(nameKey("mixamorig:LeftForeArm").side, 'L');
  EXPECT_EQ(nameKey("DEF-upper_arm.R.001").core, "upperarm");
  EXPECT_EQ(nameKey("DEF-upper_arm.R.001").side, 'R');
  EXPECT_EQ(nameKey("calf_r").core, "calf");
  EXPECT_EQ(nameKey("LHipJoint").core, "hipjoint");
  EXPECT_EQ(nameKey("LHipJoint").side, 'L');
  EXPECT_EQ(nameKey("Bip01 L Thigh").core, "thigh");
  EXPECT_EQ(nameKey("spine_03").core, "spine");
  EXPECT_EQ(nameKey("Spine1").core, "spine");
  EXPECT_EQ(nameKey("left_knee").core, "knee");
  EXPECT_EQ(nameKey("Hips").side, 0);
  EXPECT_EQ(nameKey("RFingers").core, "fingers");
}

// Stabilization moves mass into hands and feet (child/parent ratio clamped to 0.8); each joint's
// drive torque limit follows the mass of the subtree it moves, so a limit that moved an
// anthropometric hand still moves the heavier one as fast. Gains stay.
TEST(Builder, StabilizationScalesDriveTorqueWithTheSubtreeMass) {
  const Skeleton s = tPoseSkeleton();
  BuildReport report;
  const RagdollAsset plain = build(s, unstabilized());
  const RagdollAsset stable = build(s, BuildOptions{}, &report);
  BuildOptions keep;
  keep.stabilizeOptions.scaleDriveTorque = false;
  const RagdollAsset kept = build(s, keep);
  ASSERT_EQ(plain.joints.size(), stable.joints.size());
  const auto subtreeMass = [](const RagdollAsset& a, int body) {
    double m = 0.0;
    for (size_t b = 0; b < a.bodies.size(); ++b) {
      for (int p = static_cast<int>(b); p >= 0; p = a.bodies[static_cast<size_t>(p)].parentBody) {
        if (p == body) {
          m += a.bodies[b].mass;
          break;
        }
      }
    }
    return m;
  };
  double largest = 0.0;
  int found = 0;
  for (size_t j = 0; j < stable.joints.size(); ++j) {
    const JointDef& before = plain.joints[j];
    const JointDef& after = stable.joints[j];
    const double factor = subtreeMass(stable, after.childBody) / subtreeMass(plain, before.childBody);
    EXPECT_NEAR(after.preset.maxDriveTorque, before.preset.maxDriveTorque * factor, 1e-9 * factor)
        << after.name;
    EXPECT_EQ(after.preset.driveStiffness, before.preset.driveStiffness) << after.name;
    EXPECT_EQ(after.preset.driveDamping, before.preset.driveDamping) << after.name;
    EXPECT_EQ(kept.joints[j].preset.maxDriveTorque, before.preset.maxDriveTorque) << after.name;
    largest = std::max(largest, factor);
    found += std::count_if(report.findings.begin(), report.findings.end(), [&](const Finding& f) {
      return f.code == "stabilize_drive" && f.subject == after.name;
    });
  }
  std::printf("[ builder ] largest torque-limit factor %.2f, %d stabilize_drive findings\n", largest, found);
  EXPECT_GT(largest, 2.0);  // the hands: several times their anthropometric mass
  EXPECT_GE(found, 1);
}

}  // namespace
}  // namespace handoff
