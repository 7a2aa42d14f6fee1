// JSON: lossless round trip, default merge for partial files, rejection naming the field.
#include "asset_test_util.h"

#include <cstdio>
#include <cstring>
#include <fstream>

namespace handoff {
namespace {
using namespace asset_test;

bool same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }  // bit for bit
bool same(const Vec3& a, const Vec3& b) { return same(a.x, b.x) && same(a.y, b.y) && same(a.z, b.z); }
bool same(const Quat& a, const Quat& b) {
  return same(a.w, b.w) && same(a.x, b.x) && same(a.y, b.y) && same(a.z, b.z);
}
bool same(const Transform& a, const Transform& b) {
  return same(a.rotation, b.rotation) && same(a.translation, b.translation);
}

void expectIdentical(const RagdollAsset& a, const RagdollAsset& b) {
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.skeletonName, b.skeletonName);
  EXPECT_TRUE(same(a.totalMass, b.totalMass));
  EXPECT_TRUE(same(a.chestForwardInBody, b.chestForwardInBody));
  EXPECT_TRUE(same(a.modelForward, b.modelForward));
  EXPECT_TRUE(same(a.modelUp, b.modelUp));
  EXPECT_TRUE(same(a.capsule.radius, b.capsule.radius) && same(a.capsule.halfHeight, b.capsule.halfHeight) &&
              same(a.capsule.bindCenter, b.capsule.bindCenter));
  EXPECT_EQ(a.collision.world, b.collision.world);
  EXPECT_EQ(a.collision.ragdoll, b.collision.ragdoll);
  EXPECT_EQ(a.collision.capsule, b.collision.capsule);
  EXPECT_EQ(a.map.joint, b.map.joint);
  ASSERT_EQ(a.bodies.size(), b.bodies.size());
  for (size_t i = 0; i < a.bodies.size(); ++i) {
    const BodyDef& x = a.bodies[i];
    const BodyDef& y = b.bodies[i];
    SCOPED_TRACE(x.name);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.joint, y.joint);
    EXPECT_EQ(x.slot, y.slot);
    EXPECT_EQ(x.parentBody, y.parentBody);
    EXPECT_TRUE(same(x.boneFromBody, y.boneFromBody));
    EXPECT_EQ(x.shape.type, y.shape.type);
    EXPECT_TRUE(same(x.shape.radius, y.shape.radius) && same(x.shape.halfHeight, y.shape.halfHeight) &&
                same(x.shape.halfExtents, y.shape.halfExtents));
    EXPECT_TRUE(same(x.mass, y.mass));
    EXPECT_TRUE(same(x.inertia, y.inertia));
    EXPECT_TRUE(same(x.friction, y.friction) && same(x.restitution, y.restitution) &&
                same(x.linearDamping, y.linearDamping) && same(x.angularDamping, y.angularDamping));
    EXPECT_EQ(x.filter, y.filter);
  }
  ASSERT_EQ(a.joints.size(), b.joints.size());
  for (size_t i = 0; i < a.joints.size(); ++i) {
    const JointDef& x = a.joints[i];
    const JointDef& y = b.joints[i];
    SCOPED_TRACE(x.name);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.group, y.group);
    EXPECT_EQ(x.parentBody, y.parentBody);
    EXPECT_EQ(x.childBody, y.childBody);
    EXPECT_TRUE(same(x.bodyAFromJoint, y.bodyAFromJoint) && same(x.bodyBFromJoint, y.bodyBFromJoint));
    EXPECT_TRUE(same(x.preset.angularLower, y.preset.angularLower) &&
                same(x.preset.angularUpper, y.preset.angularUpper));
    EXPECT_TRUE(same(x.preset.driveStiffness, y.preset.driveStiffness) &&
                same(x.preset.driveDamping, y.preset.driveDamping) &&
                same(x.preset.maxDriveTorque, y.preset.maxDriveTorque));
    EXPECT_TRUE(same(x.breakForce, y.breakForce) && same(x.breakTorque, y.breakTorque));
    EXPECT_EQ(x.adjacentCollision, y.adjacentCollision);
  }
}

RagdollAsset builtAsset(const char* file) {
  BuildOptions options;
  options.skeletonName = file;
  options.totalMass = 81.3;
  Result<RagdollAsset> a = buildRagdoll(loadSkeleton(file), options);
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error());
  return a.ok() ? *a : RagdollAsset{};
}

TEST(AssetJson, RoundTripIsLossless) {
  for (const char* file :
       {"deepmimic/humanoid3d_run.bvh", "cmu/01_01.bvh", "mesh2motion/human-base-animations.glb"}) {
    SCOPED_TRACE(file);
    RagdollAsset asset = builtAsset(file);
    asset.joints[0].breakForce = 1234.5;   // finite and infinite break limits both survive
    asset.joints[1].adjacentCollision = true;
    asset.bodies[1].friction = 0.1 + 0.2;  // a double with no short decimal form
    asset.bodies[2].linearDamping = -0.0 + 1e-300;
    const std::string text = saveRagdollJson(asset);
    std::vector<Finding> findings;
    Result<RagdollAsset> loaded = loadRagdollJson(text, "round-trip.json", &findings);
    ASSERT_TRUE(loaded.ok()) << loaded.error();
    EXPECT_TRUE(findings.empty());
    expectIdentical(asset, *loaded);
    EXPECT_EQ(saveRagdollJson(*loaded), text);
  }
}

// The engine joint carries the switch: built assets keep adjacent bodies apart, a file that turns
// it on makes the joint's two bodies collide (what `handoff diagnose` toggles).
TEST(AssetJson, AdjacentCollisionReachesTheEngineJoint) {
  RagdollAsset asset = builtAsset("deepmimic/humanoid3d_run.bvh");
  std::vector<BodyId> bodies(asset.bodies.size());
  for (size_t i = 0; i < bodies.size(); ++i) bodies[i].value = static_cast<std::uint32_t>(i);
  for (const JointDef& def : asset.joints) {
    EXPECT_FALSE(def.adjacentCollision) << def.name;
    EXPECT_FALSE(jointDescFor(def, bodies).collideConnected) << def.name;
  }
  asset.joints[3].adjacentCollision = true;
  const JointDesc on = jointDescFor(asset.joints[3], bodies);
  EXPECT_TRUE(on.collideConnected);
  EXPECT_EQ(on.bodyA.value, static_cast<std::uint32_t>(asset.joints[3].parentBody));
  Result<RagdollAsset> loaded = loadRagdollJson(saveRagdollJson(asset), "on.json");
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EXPECT_TRUE(loaded->joints[3].adjacentCollision);
  EXPECT_FALSE(loaded->joints[2].adjacentCollision);
}

TEST(AssetJson, InvalidUtf8BoneNameIsReplacedNotThrown) {
  RagdollAsset asset = builtAsset("deepmimic/humanoid3d_run.bvh");
  asset.bodies[0].name = "h\xE9ros";  // Latin-1, as in some BVH files
  std::string text;
  EXPECT_NO_THROW(text = saveRagdollJson(asset));
  Result<RagdollAsset> loaded = loadRagdollJson(text, "latin1.json");
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EXPECT_EQ(loaded->bodies[0].name, "h\xEF\xBF\xBDros");  // U+FFFD
}

TEST(AssetJson, FileRoundTripAndMissingFile) {
  const RagdollAsset asset = builtAsset("deepmimic/humanoid3d_run.bvh");
  const std::string path = ::testing::TempDir() + "handoff_asset_test.json";
  ASSERT_TRUE(saveRagdollFile(asset, path).ok());
  Result<RagdollAsset> loaded = loadRagdollFile(path);
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  expectIdentical(asset, *loaded);
  std::remove(path.c_str());
  Result<RagdollAsset> missing = loadRagdollFile(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find(path), std::string::npos);
  EXPECT_FALSE(saveRagdollFile(asset, "/nonexistent-dir/x.json").ok());
}

// Written by hand: no capsule, collision, calibration or map sections, bodies with only a name,
// slot, joint and shape, joints with only a name (the child body) and frames.
constexpr const char* kPartial = R"({
  "version": 1,
  "bodies": [
    {"name": "Hips", "slot": "pelvis", "joint": 0, "shape": {"type": "sphere", "radius": 0.12}, "mass": 10},
    {"name": "Spine", "slot": "chest", "joint": 1, "shape": {"type": "capsule", "radius": 0.1, "halfHeight": 0.1},
     "boneFromBody": {"translation": [0, 0.1, 0]}}
  ],
  "joints": [
    {"name": "Spine", "bodyAFromJoint": {"translation": [0, 0.12, 0]}, "bodyBFromJoint": {"translation": [0, -0.1, 0]}}
  ]
})";

TEST(AssetJson, PartialFileLoadsWithDefaults) {
  std::vector<Finding> findings;
  Result<RagdollAsset> a = loadRagdollJson(kPartial, "partial.json", &findings);
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_TRUE(findings.empty());
  ASSERT_EQ(a->bodies.size(), 2u);
  const RagdollAsset defaults;
  const BodyDef& chest = a->bodies[1];
  EXPECT_EQ(chest.parentBody, 0);                 // from the slot hierarchy: chest -> (lower spine) -> pelvis
  EXPECT_NEAR(chest.mass, 0.1596 * 70.0, 1e-12);  // de Leva's upper trunk of the default 70 kg
  EXPECT_EQ(chest.inertia, shapePrincipalInertia(chest.shape, chest.mass));
  EXPECT_EQ(chest.friction, BodyDef{}.friction);
  EXPECT_EQ(chest.angularDamping, BodyDef{}.angularDamping);
  EXPECT_EQ(chest.filter, defaults.collision.ragdoll);
  EXPECT_EQ(chest.boneFromBody.rotation, Quat(1.0, 0.0, 0.0, 0.0));
  EXPECT_EQ(a->bodies[0].mass, 10.0);
  EXPECT_NEAR(a->totalMass, 10.0 + chest.mass, 1e-12);  // the sum when not given
  EXPECT_EQ(a->capsule.radius, defaults.capsule.radius);
  EXPECT_EQ(a->collision.capsule, defaults.collision.capsule);
  EXPECT_EQ(a->modelForward, defaults.modelForward);
  ASSERT_EQ(a->joints.size(), 1u);
  const JointDef& j = a->joints[0];
  EXPECT_EQ(j.childBody, 1);
  EXPECT_EQ(j.parentBody, 0);
  EXPECT_EQ(j.group, JointGroup::Spine);  // from the child's slot
  const JointPreset spine = defaultJointPreset(JointGroup::Spine);
  EXPECT_EQ(j.preset.angularLower, spine.angularLower);
  EXPECT_EQ(j.preset.driveStiffness, spine.driveStiffness);
  EXPECT_TRUE(std::isinf(j.breakForce));
  EXPECT_FALSE(j.adjacentCollision);  // adjacent bodies never collide unless the file says so
  // It validates against a matching two-joint skeleton: anchors meet at the spine joint.
  Skeleton s;
  addJoint(s, "Hips", kNoParent, {0.0, 1.0, 0.0});
  addJoint(s, "Spine", 0, {0.0, 0.12, 0.0});
  for (const Finding& f : validateRagdoll(*a, s)) {
    EXPECT_NE(f.severity, Finding::Severity::Error) << formatFinding(f);
  }
}

// The same policy as the scenario loader: an unknown field is an error naming its path, with the
// closest known field when one is close, else the allowed ones.
TEST(AssetJson, UnknownFieldsAreErrorsNamingTheirPath) {
  std::string text = kPartial;
  text.replace(text.find("\"version\": 1,"), 13, "\"version\": 1, \"colour\": \"red\",");
  text.replace(text.find("\"mass\": 10"), 10, "\"mass\": 10, \"mas\": 1000");
  std::vector<Finding> findings;
  Result<RagdollAsset> a = loadRagdollJson(text, "partial.json", &findings);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().find("partial.json"), std::string::npos) << a.error();
  EXPECT_NE(a.error().find("bodies[0]: unknown field 'mas' (did you mean 'mass'?)"), std::string::npos)
      << a.error();
  EXPECT_NE(a.error().find("(root): unknown field 'colour'; allowed: format version skeleton"),
            std::string::npos)
      << a.error();
  int errors = 0;
  for (const Finding& f : findings) errors += f.severity == Finding::Severity::Error;
  EXPECT_EQ(errors, 2);
}

struct BadCase {
  const char* from;
  const char* to;
  const char* path;    ///< Expected in the error message.
  const char* reason;  ///< Expected in the error message.
};

TEST(AssetJson, WrongTypesAndRangesAreRejectedNamingTheField) {
  const std::vector<BadCase> cases = {
      {"\"mass\": 10", "\"mass\": -2", "bodies[0].mass", "must be > 0"},
      {"\"mass\": 10", "\"mass\": \"heavy\"", "bodies[0].mass", "expected a number, got string"},
      {"\"radius\": 0.12", "\"radius\": null", "bodies[0].shape.radius",
       "expected a number, got null"},  // NaN
      {"\"radius\": 0.12", "\"radius\": \"NaN\"", "bodies[0].shape.radius", "expected a number"},
      {"\"radius\": 0.1,", "\"radius\": 0,", "bodies[1].shape.radius", "must be > 0"},
      {"\"type\": \"sphere\"", "\"type\": \"cone\"", "bodies[0].shape.type", "unknown shape"},
      {"\"slot\": \"chest\"", "\"slot\": \"tail\"", "bodies[1].slot", "unknown slot"},
      {"\"joint\": 1", "\"joint\": 1.5", "bodies[1].joint", "expected an integer"},
      {"\"version\": 1", "\"version\": 7", "version", "newer version"},
      {"\"version\": 1", "\"version\": \"1\"", "version", "expected an integer"},
      {"\"translation\": [0, 0.1, 0]", "\"translation\": [0, 0.1]", "bodies[1].boneFromBody.translation",
       "expected [x, y, z]"},
      {"\"bodyAFromJoint\": {", "\"bodyAFromJoint\": {\"rotation\": [2, 0, 0, 0], ",
       "joints[0].bodyAFromJoint.rotation", "unit quaternion"},
      {"\"name\": \"Spine\", \"body", "\"name\": \"Spine\", \"group\": \"tail\", \"body", "joints[0].group",
       "unknown joint group"},
      {"\"name\": \"Spine\", \"body", "\"name\": \"Neck\", \"body", "joints[0].name", "does not name a body"},
      {"\"name\": \"Spine\", \"body", "\"name\": \"Spine\", \"stiffness\": -1, \"body", "joints[0].stiffness",
       "must be >= 0"},
      {"\"name\": \"Spine\", \"body", "\"name\": \"Spine\", \"maxTorque\": \"lots\", \"body",
       "joints[0].maxTorque", "expected a number or \"inf\""},
      {"\"name\": \"Spine\", \"body", "\"name\": \"Spine\", \"adjacentCollision\": 1, \"body",
       "joints[0].adjacentCollision", "expected true or false, got number"},
  };
  for (const BadCase& c : cases) {
    std::string text = kPartial;
    const size_t at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    text.replace(at, std::strlen(c.from), c.to);
    std::vector<Finding> findings;
    Result<RagdollAsset> a = loadRagdollJson(text, "bad.json", &findings);
    ASSERT_FALSE(a.ok()) << c.to;
    EXPECT_NE(a.error().find("bad.json"), std::string::npos) << a.error();
    EXPECT_NE(a.error().find(std::string(c.path) + ": "), std::string::npos) << c.to << " -> " << a.error();
    EXPECT_NE(a.error().find(c.reason), std::string::npos) << c.to << " -> " << a.error();
    EXPECT_TRUE(hasErrors(findings));
  }
}

TEST(AssetJson, ParseErrorsGiveFileLineAndColumn) {
  const std::string text = "{\n  \"version\": 1,\n  \"bodies\": [,]\n}\n";
  Result<RagdollAsset> a = loadRagdollJson(text, "broken.json");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.error().find("broken.json:3:14"), std::string::npos) << a.error();
  EXPECT_NE(a.error().find("byte"), std::string::npos) << a.error();
  EXPECT_FALSE(loadRagdollJson("[1, 2]", "array.json").ok());
  EXPECT_FALSE(loadRagdollJson("{}", "empty.json").ok());  // no bodies
  EXPECT_FALSE(loadRagdollJson("", "blank.json").ok());
}

TEST(AssetJson, LoadsTheVersion1File) {
  // tests/asset/data/tpose_v1.json was written by version 1 of saveRagdollJson (the first
  // version). It must keep loading, and validate against the skeleton it was built for.
  Result<RagdollAsset> a =
      loadRagdollFile(std::string(HANDOFF_SOURCE_DIR) + "/tests/asset/data/tpose_v1.json");
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a->version, 1);
  EXPECT_EQ(a->bodies.size(), 16u);
  EXPECT_EQ(a->joints.size(), 15u);
  EXPECT_FALSE(hasErrors(validateRagdoll(*a, tPoseSkeleton())));
}

}  // namespace
}  // namespace handoff
