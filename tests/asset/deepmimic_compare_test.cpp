// The builder's ragdoll for the DeepMimic humanoid against DeepMimic's own hand-made physics
// definition of that character (data/deepmimic/humanoid3d_character.json). docs/ASSET.md has the
// table and explains the differences; the tolerances below are the justified ones from there.
#include "asset_test_util.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>

namespace handoff {
namespace {
using namespace asset_test;

struct DmBody {
  std::string shape;
  double mass = 0.0;
  Vec3 attach{0.0};
  Vec3 params{
      0.0};  // DeepMimic: sphere/capsule Param0 = diameter, capsule Param1 = cylinder length; box = sizes
};

struct DeepMimic {
  std::map<std::string, DmBody> bodies;
  std::map<std::string, std::string> jointTypes;
  double totalMass = 0.0;
};

DeepMimic loadDeepMimic() {
  std::ifstream in(dataPath("deepmimic/humanoid3d_character.json"));
  EXPECT_TRUE(in.good());
  DeepMimic dm;
  const nlohmann::json doc = nlohmann::json::parse(in);
  for (const auto& j : doc["Skeleton"]["Joints"])
    dm.jointTypes[j["Name"].get<std::string>()] = j["Type"].get<std::string>();
  for (const auto& b : doc["BodyDefs"]) {
    DmBody body;
    body.shape = b["Shape"].get<std::string>();
    body.mass = b["Mass"].get<double>();
    body.attach = Vec3{b["AttachX"].get<double>(), b["AttachY"].get<double>(), b["AttachZ"].get<double>()};
    body.params = Vec3{b["Param0"].get<double>(), b["Param1"].get<double>(), b["Param2"].get<double>()};
    dm.totalMass += body.mass;
    dm.bodies[b["Name"].get<std::string>()] = body;
  }
  return dm;
}

TEST(DeepMimicComparison, ShapesMassesAndJointTypes) {
  const DeepMimic dm = loadDeepMimic();
  ASSERT_NEAR(dm.totalMass, 45.0, 1e-9);
  const Skeleton skeleton = loadSkeleton("deepmimic/humanoid3d_backflip.bvh");
  BuildOptions options;
  options.totalMass = dm.totalMass;  // compare kilograms directly
  options.stabilize = false;         // anthropometric masses (stabilization flattens them on purpose)
  Result<RagdollAsset> built = buildRagdoll(skeleton, options);
  ASSERT_TRUE(built.ok()) << built.error();
  const RagdollAsset& asset = *built;

  std::printf("[ table    ] %-15s %-8s %8s %8s | %-8s %8s %8s | %s\n", "body", "dm shape", "dm kg", "dm r",
              "shape", "kg", "r", "centre offset (m)");
  for (const BodyDef& b : asset.bodies) {
    const auto it = dm.bodies.find(b.name);
    ASSERT_NE(it, dm.bodies.end()) << b.name;
    const DmBody& d = it->second;
    const double dmMass = d.mass + (b.slot == Slot::LowerArmL   ? dm.bodies.at("left_wrist").mass
                                    : b.slot == Slot::LowerArmR ? dm.bodies.at("right_wrist").mass
                                                                : 0.0);
    const double dmRadius = d.shape == "box" ? 0.0 : 0.5 * d.params.x;
    const double offset = glm::length(b.boneFromBody.translation - d.attach);
    std::printf("[ table    ] %-15s %-8s %8.3f %8.4f | %-8s %8.3f %8.4f | %.4f\n", b.name.c_str(),
                d.shape.c_str(), dmMass, dmRadius,
                b.shape.type == ShapeType::Capsule  ? "capsule"
                : b.shape.type == ShapeType::Sphere ? "sphere"
                                                    : "box",
                b.mass, b.shape.radius, offset);
    SCOPED_TRACE(b.name);
    // Per segment, de Leva's fractions and DeepMimic's round numbers agree within a factor 1.7
    // (largest: head 6.94 % vs 4.4 %, foot 1.37 % vs 2.2 %).
    EXPECT_GT(b.mass / dmMass, 1.0 / 1.7);
    EXPECT_LT(b.mass / dmMass, 1.7);
    switch (b.shape.type) {
      case ShapeType::Sphere:  // the head: both touch the crown, radius within 5 %, centre within 1 cm
        EXPECT_EQ(d.shape, "sphere");
        EXPECT_NEAR(b.shape.radius / dmRadius, 1.0, 0.05);
        EXPECT_LT(offset, 0.01);
        break;
      case ShapeType::Capsule:
        if (d.shape == "capsule") {
          // Limbs: same bone, centre at mid-bone within 1.5 cm, radius within 25 % (ours from
          // bone length ratios, DeepMimic's tuned by hand).
          EXPECT_LT(offset, 0.015);
          EXPECT_NEAR(b.shape.radius / dmRadius, 1.0, 0.25);
        } else {
          // Pelvis and chest: DeepMimic uses spheres; ours are capsules along the spine of
          // similar radius (within 25 %).
          EXPECT_EQ(d.shape, "sphere");
          EXPECT_NEAR(b.shape.radius / dmRadius, 1.0, 0.25);
        }
        break;
      case ShapeType::Box: {  // feet: length within 5 %, height within 10 %, centre within 1 cm
        EXPECT_EQ(d.shape, "box");
        EXPECT_NEAR(2.0 * b.shape.halfExtents.z / d.params.x, 1.0, 0.05);
        EXPECT_NEAR(2.0 * b.shape.halfExtents.y / d.params.y, 1.0, 0.10);
        EXPECT_LT(offset, 0.01);
        break;
      }
      case ShapeType::None:
        ADD_FAILURE();
    }
  }
  // Whole limbs and the trunk agree within 2 percentage points of the body mass.
  const auto percent = [&](std::initializer_list<Slot> slots) {
    double m = 0.0;
    for (Slot s : slots) m += asset.bodies[static_cast<size_t>(asset.bodyForSlot(s))].mass;
    return 100.0 * m / asset.totalMass;
  };
  const auto dmPercent = [&](std::initializer_list<const char*> names) {
    double m = 0.0;
    for (const char* n : names) m += dm.bodies.at(n).mass;
    return 100.0 * m / dm.totalMass;
  };
  EXPECT_NEAR(percent({Slot::Pelvis, Slot::Chest}), dmPercent({"root", "chest"}), 2.0);
  EXPECT_NEAR(percent({Slot::UpperLegL, Slot::LowerLegL, Slot::FootL}),
              dmPercent({"left_hip", "left_knee", "left_ankle"}), 2.0);
  EXPECT_NEAR(percent({Slot::UpperArmR, Slot::LowerArmR}),
              dmPercent({"right_shoulder", "right_elbow", "right_wrist"}), 2.0);
  EXPECT_NEAR(percent({Slot::Head}), dmPercent({"neck"}), 3.0);

  // Joint types: DeepMimic's spherical joints are our three-axis joints, its revolute knees and
  // elbows our hinges (one open axis, Z); its fixed wrists are our hands merged into the
  // forearms (no hand joint in this skeleton).
  for (const JointDef& j : asset.joints) {
    SCOPED_TRACE(j.name);
    int open = 0;
    int locked = 0;
    for (int a = 0; a < 3; ++a) {
      if (j.preset.angularLower[a] < j.preset.angularUpper[a]) ++open;
      if (j.preset.angularLower[a] == j.preset.angularUpper[a]) ++locked;
    }
    const std::string& type = dm.jointTypes.at(j.name);
    if (type == "revolute") {
      EXPECT_EQ(open, 1);
      EXPECT_EQ(locked, 2);
      EXPECT_LT(j.preset.angularLower.z, j.preset.angularUpper.z);
    } else {
      EXPECT_EQ(type, "spherical");
      EXPECT_EQ(open, 3);
    }
  }
  EXPECT_EQ(dm.jointTypes.at("left_wrist"), "fixed");
  EXPECT_EQ(asset.bodyForSlot(Slot::HandL), -1);
}

}  // namespace
}  // namespace handoff
