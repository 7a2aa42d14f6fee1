// Level geometry from glTF (include/handoff/level.h) on the project's own staircase,
// tests/data/level/ (make_stairs.py says what each file holds; the figures below follow from it).
#include "handoff/level.h"
#include "handoff/physics.h"
#include "handoff/physics_bullet.h"
#include "support/files.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace handoff {
namespace {

const std::string kDir = std::string(HANDOFF_SOURCE_DIR) + "/tests/data/level/";

/// Assimp keeps node transforms and vertices in single precision: a coordinate of a few metres
/// through a rotation is exact to a few float ulps. [m]
constexpr double kFloatTol = 2e-6;

const LevelMesh* findMesh(const Level& level, const std::string& name) {
  for (const LevelMesh& mesh : level.meshes) {
    if (mesh.name == name) return &mesh;
  }
  return nullptr;
}

void expectBounds(const LevelMesh& mesh, const Vec3& lo, const Vec3& hi) {
  Vec3 mn = mesh.vertices.front(), mx = mesh.vertices.front();
  for (const Vec3& v : mesh.vertices) mn = glm::min(mn, v), mx = glm::max(mx, v);
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(mn[k], lo[k], kFloatTol) << mesh.name << " min axis " << k;
    EXPECT_NEAR(mx[k], hi[k], kFloatTol) << mesh.name << " max axis " << k;
  }
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// A scratch folder of this process's own (tests of several builds may run at once).
std::filesystem::path scratch(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("handoff_level_test_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

/// What every reading of the staircase level must give (make_stairs.py).
void expectStairs(const Level& level) {
  ASSERT_EQ(level.meshes.size(), 3u);  // floor, stairs, ramp; the lines-only guide omitted
  EXPECT_EQ(level.meshes[0].name, "Floor");
  EXPECT_EQ(level.meshes[1].name, "Stairs");
  EXPECT_EQ(level.meshes[2].name, "ramp");  // an unnamed node is named by its mesh
  EXPECT_EQ(level.meshes[0].indices.size(), 2u * 3u);
  EXPECT_EQ(level.meshes[1].indices.size(), 12u * 3u);
  EXPECT_EQ(level.meshes[2].indices.size(), 5u * 3u);  // a strip of 4 vertices and a fan of 5
  EXPECT_EQ(level.triangleCount(), 19u);
  EXPECT_EQ(level.droppedDegenerate, 1u);
  EXPECT_EQ(findMesh(level, "Hidden"), nullptr);  // scene 0 is not the default scene
  // Pivot (rotation 90 degrees about +Y) * Stairs (translation, scale (1, 0.5, 1)).
  expectBounds(level.meshes[1], Vec3{-1.0, 0.0, -1.4}, Vec3{0.0, 0.6, -0.5});
  expectBounds(level.meshes[2], Vec3{2.0, 0.0, 0.0}, Vec3{3.0, 0.5, 2.5});
  const Vec3 lo{-3.0, 0.0, -3.0}, hi{3.0, 0.6, 3.0};
  for (int k = 0; k < 3; ++k) {
    EXPECT_NEAR(level.boundsMin[k], lo[k], kFloatTol);
    EXPECT_NEAR(level.boundsMax[k], hi[k], kFloatTol);
  }
  // The treads in the level's space: tread 1 at y = 0.4 spans z in [-1.1, -0.8].
  const LevelMesh& stairs = level.meshes[1];
  int treadOne = 0;
  for (size_t t = 0; t < stairs.indices.size(); t += 3) {
    const Vec3 a = stairs.vertices[stairs.indices[t]], b = stairs.vertices[stairs.indices[t + 1]],
               c = stairs.vertices[stairs.indices[t + 2]];
    if (std::abs(a.y - 0.4) < kFloatTol && std::abs(b.y - 0.4) < kFloatTol &&
        std::abs(c.y - 0.4) < kFloatTol) {
      ++treadOne;
      for (const Vec3& p : {a, b, c}) {
        EXPECT_GE(p.z, -1.1 - kFloatTol);
        EXPECT_LE(p.z, -0.8 + kFloatTol);
      }
    }
  }
  EXPECT_EQ(treadOne, 2);
  const bool warnedGuide = std::any_of(
      level.warnings.begin(), level.warnings.end(),
      [](const std::string& w) { return contains(w, "'Guide'") && contains(w, "point or line"); });
  EXPECT_TRUE(warnedGuide);
}

TEST(Level, StaircaseGltfWithNodeTransforms) {
  Result<Level> level = loadLevel(kDir + "stairs.gltf");
  ASSERT_TRUE(level.ok()) << level.error();
  EXPECT_EQ(level->source, kDir + "stairs.gltf");
  expectStairs(*level);
  for (const std::string& w : level->warnings) std::printf("warning: %s\n", w.c_str());
}

TEST(Level, GlbAndExternalBufferGiveTheSameLevel) {
  for (const char* file : {"stairs.glb", "stairs_external.gltf"}) {
    SCOPED_TRACE(file);
    Result<Level> level = loadLevel(kDir + file);
    ASSERT_TRUE(level.ok()) << level.error();
    expectStairs(*level);
  }
}

TEST(Level, UnitScaleAppliesAfterTheNodes) {
  LevelOptions options;
  options.unitScale = 0.5;
  Result<Level> level = loadLevel(kDir + "stairs.gltf", options);
  ASSERT_TRUE(level.ok()) << level.error();
  EXPECT_NEAR(level->boundsMax.y, 0.3, kFloatTol);
  EXPECT_NEAR(level->boundsMin.z, -1.5, kFloatTol);
  options.unitScale = 0.0;
  EXPECT_FALSE(loadLevel(kDir + "stairs.gltf", options).ok());
}

TEST(Level, NonFiniteVertexIsRefusedNamingTheMesh) {
  Result<Level> level = loadLevel(kDir + "stairs_nonfinite.gltf");
  ASSERT_FALSE(level.ok());
  EXPECT_TRUE(contains(level.error(), "stairs_nonfinite.gltf")) << level.error();
  EXPECT_TRUE(contains(level.error(), "mesh 'Stairs'")) << level.error();
  EXPECT_TRUE(contains(level.error(), "vertex 5")) << level.error();
  EXPECT_TRUE(contains(level.error(), "not a finite number")) << level.error();
}

TEST(Level, BoundsOfTheOptionsAreRefused) {
  LevelOptions options;
  // The bound counts the file's triangles before the degenerate one is dropped: 20.
  options.maxTriangles = 20;
  EXPECT_TRUE(loadLevel(kDir + "stairs.gltf", options).ok());
  options.maxTriangles = 19;
  Result<Level> level = loadLevel(kDir + "stairs.gltf", options);
  ASSERT_FALSE(level.ok());
  EXPECT_TRUE(contains(level.error(), "stairs.gltf: 20 triangles, more than LevelOptions::maxTriangles (19)"))
      << level.error();
  options = LevelOptions{};
  options.maxFileBytes = 1000;
  level = loadLevel(kDir + "stairs.gltf", options);
  ASSERT_FALSE(level.ok());
  EXPECT_TRUE(contains(level.error(), "more than LevelOptions::maxFileBytes (1000)")) << level.error();
}

TEST(Level, MissingExternalBufferIsRefusedNamingIt) {
  Result<Level> level = loadLevel(kDir + "stairs_missing_buffer.gltf");
  ASSERT_FALSE(level.ok());
  EXPECT_TRUE(contains(level.error(), "stairs_missing_buffer.gltf")) << level.error();
  EXPECT_TRUE(contains(level.error(), "buffers[0].uri")) << level.error();
  EXPECT_TRUE(contains(level.error(), "no_such_buffer.bin")) << level.error();
}

TEST(Level, WhatIsNotGltfIsRefused) {
  const std::filesystem::path dir = scratch("not_gltf");
  const std::string text = (dir / "notes.gltf").string();
  std::ofstream(text) << "HIERARCHY\nROOT Hips\n";
  Result<Level> level = loadLevel(text);
  ASSERT_FALSE(level.ok());
  EXPECT_TRUE(contains(level.error(), text + ": not a glTF or GLB file")) << level.error();
  const std::string json = (dir / "other.gltf").string();
  std::ofstream(json) << R"({"asset": {"version": "1.0"}})";
  level = loadLevel(json);
  ASSERT_FALSE(level.ok());
  EXPECT_TRUE(contains(level.error(), json + ": glTF asset.version '1.0'")) << level.error();
  level = loadLevel((dir / "absent.glb").string());
  ASSERT_FALSE(level.ok());
  EXPECT_TRUE(contains(level.error(), "absent.glb: file not found")) << level.error();
  std::filesystem::remove_all(dir);
}

TEST(Level, AddLevelMakesStaticBodiesAndUndoesOnError) {
  Result<Level> level = loadLevel(kDir + "stairs.gltf");
  ASSERT_TRUE(level.ok()) << level.error();
  auto world = createBulletWorld();
  Result<std::vector<BodyId>> bodies = addLevel(*world, *level);
  ASSERT_TRUE(bodies.ok()) << bodies.error();
  ASSERT_EQ(bodies->size(), 3u);
  EXPECT_EQ(world->bodyCount(), 3);
  for (const BodyId body : *bodies) EXPECT_EQ(world->motionType(body), MotionType::Static);
  // A ray down onto tread 2 (y = 0.6, z in [-1.4, -1.1]) hits the stairs body.
  const CastHit hit = world->castRay(Vec3{-0.5, 2.0, -1.25}, Vec3{-0.5, -1.0, -1.25}, layers::kAll);
  ASSERT_TRUE(hit.hit());
  EXPECT_EQ(hit.body, (*bodies)[1]);
  EXPECT_NEAR(hit.point.y, 0.6, kFloatTol);
  // A level whose last mesh the engine refuses: nothing stays added.
  Level broken = *level;
  broken.meshes.back().indices.back() = 1000;
  Result<std::vector<BodyId>> failed = addLevel(*world, broken);
  ASSERT_FALSE(failed.ok());
  EXPECT_TRUE(contains(failed.error(), "stairs.gltf: mesh 'ramp': createShape(TriangleMeshDesc)"))
      << failed.error();
  EXPECT_EQ(world->bodyCount(), 3);
  // A placement that is wrong adds nothing.
  LevelPlacement bad;
  bad.friction = std::nan("");
  failed = addLevel(*world, *level, bad);
  ASSERT_FALSE(failed.ok());
  EXPECT_TRUE(contains(failed.error(), "LevelPlacement::friction")) << failed.error();
  bad = LevelPlacement{};
  bad.restitution = 1.5;
  EXPECT_FALSE(addLevel(*world, *level, bad).ok());
  bad = LevelPlacement{};
  bad.worldFromLevel.translation.x = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(addLevel(*world, *level, bad).ok());
  EXPECT_EQ(world->bodyCount(), 3);
  // Placed 2 m up and turned 90 degrees about +Y: tread 2 (level z in [-1.4, -1.1]) is at world
  // x in [-1.4, -1.1] (rotY90 maps (x, y, z) to (z, y, -x)), y = 2.6.
  auto moved = createBulletWorld();
  LevelPlacement placement;
  placement.worldFromLevel = Transform{glm::angleAxis(M_PI / 2, Vec3{0, 1, 0}), Vec3{0.0, 2.0, 0.0}};
  ASSERT_TRUE(addLevel(*moved, *level, placement).ok());
  const CastHit placed = moved->castRay(Vec3{-1.25, 4.0, 0.5}, Vec3{-1.25, 0.0, 0.5}, layers::kAll);
  ASSERT_TRUE(placed.hit());
  EXPECT_NEAR(placed.point.y, 2.6, 1e-5);
}

// A sphere dropped on the loaded stairs comes to rest on the tread under it, at the tread's height
// plus its radius. Tolerance: the solver holds a resting contact with a penetration of the order
// of a millimetre (Bullet's default ERP and no linear slop); 2 mm, while missing the tread by one
// step would be 200 mm off.
TEST(Level, SphereComesToRestOnTheLoadedStairs) {
  Result<Level> level = loadLevel(kDir + "stairs.glb");
  ASSERT_TRUE(level.ok()) << level.error();
  auto world = createBulletWorld();
  ASSERT_TRUE(addLevel(*world, *level).ok());
  constexpr double kRadius = 0.1;
  const struct { double z, tread; } cases[] = {{-0.65, 0.2}, {-0.95, 0.4}, {-1.25, 0.6}, {1.0, 0.0}};
  for (const auto& c : cases) {
    BodyDesc sphere;
    sphere.shape.type = ShapeType::Sphere;
    sphere.shape.radius = kRadius;
    sphere.mass = 1.0;
    sphere.rollingFriction = 0.01;
    sphere.worldFromBody = Transform::fromTranslation(Vec3{-0.5, 1.5, c.z});
    sphere.filter = CollisionFilter{layers::kDebris, layers::kAll};
    Result<BodyId> id = world->createBody(sphere);
    ASSERT_TRUE(id.ok()) << id.error();
    for (int i = 0; i < 180; ++i) world->step(1.0 / 60.0, 2);
    const Transform at = world->transform(*id);
    std::printf("tread %.1f: sphere centre y %.5f (expected %.5f), z %.4f, speed %.2e m/s\n", c.tread,
                at.translation.y, c.tread + kRadius, at.translation.z,
                glm::length(world->linearVelocity(*id)));
    EXPECT_NEAR(at.translation.y, c.tread + kRadius, 2e-3);
    EXPECT_NEAR(at.translation.z, c.z, 1e-3);
    EXPECT_LT(glm::length(world->linearVelocity(*id)), 1e-2);
    world->destroyBody(*id);
  }
}

}  // namespace
}  // namespace handoff

namespace handoff {
namespace {

// KHR_draco_mesh_compression (required by the file), decoded with Draco before Assimp: the
// ecctrl character-controller test map (tests/data/level/ecctrl_testmap.LICENSE.txt), 26 meshes.
// Expected counts are the file's index accessors' (count / 3); its ramps are named by their slope.
TEST(Level, DracoCompressedTestMap) {
  Result<Level> level = loadLevel(kDir + "ecctrl_testmap.glb");
  ASSERT_TRUE(level.ok()) << level.error();
  const std::vector<std::pair<std::string, size_t>> expected{{"R100Disk", 252},
                                                             {"RampJump", 50},
                                                             {"Box10X10", 12},
                                                             {"CircleSlope", 158},
                                                             {"CircleStair", 734},
                                                             {"Box0.5X8", 12},
                                                             {"HalfCylinder0.3X8", 48},
                                                             {"Ramp20", 10},
                                                             {"Ramp45", 10},
                                                             {"Ramp30", 10},
                                                             {"Ramp10", 10},
                                                             {"R10Ball", 4992},
                                                             {"Cylinder5X40", 124},
                                                             {"Box24X24", 12},
                                                             {"RampU", 182},
                                                             {"Track", 1322},
                                                             {"BaseFloor", 260},
                                                             {"Trip0.5X4", 12},
                                                             {"Pillar10X100", 1664},
                                                             {"R80Disk", 252},
                                                             {"Box1X1", 12},
                                                             {"Box4X6", 12},
                                                             {"R1Ball", 528},
                                                             {"PillarJumps", 88},
                                                             {"Seesaw", 104},
                                                             {"Logo", 1220}};
  ASSERT_EQ(level->meshes.size(), expected.size());
  for (size_t m = 0; m < expected.size(); ++m) {
    EXPECT_EQ(level->meshes[m].name, expected[m].first);
    EXPECT_EQ(level->meshes[m].indices.size() / 3, expected[m].second) << expected[m].first;
  }
  EXPECT_EQ(level->triangleCount(), 12090u);
  EXPECT_EQ(level->droppedDegenerate, 0u);
  EXPECT_TRUE(std::any_of(level->warnings.begin(), level->warnings.end(), [](const std::string& w) {
    return contains(w, "decoded 26 Draco-compressed primitives");
  }));
  // Each RampN has faces at N degrees from horizontal (Draco quantizes positions: 0.5 degree).
  for (const int slope : {10, 20, 30, 45}) {
    const LevelMesh* ramp = findMesh(*level, "Ramp" + std::to_string(slope));
    ASSERT_NE(ramp, nullptr);
    double closest = 90.0;
    for (size_t t = 0; t < ramp->indices.size(); t += 3) {
      const Vec3 a = ramp->vertices[ramp->indices[t]], b = ramp->vertices[ramp->indices[t + 1]],
                 c = ramp->vertices[ramp->indices[t + 2]];
      const Vec3 n = glm::normalize(glm::cross(b - a, c - a));
      const double degrees = std::acos(std::min(1.0, std::abs(n.y))) * 180.0 / M_PI;
      if (std::abs(degrees - slope) < std::abs(closest - slope)) closest = degrees;
    }
    std::printf("Ramp%d: the face closest to its slope is at %.3f degrees\n", slope, closest);
    EXPECT_NEAR(closest, slope, 0.5) << "Ramp" << slope;
  }
  // Y up, metres: the base floor is 200 m across and the tallest pillar's disk at about 101 m.
  EXPECT_NEAR(level->boundsMin.x, -100.0, 0.01);
  EXPECT_NEAR(level->boundsMax.x, 100.0, 0.01);
  EXPECT_NEAR(level->boundsMax.y, 102.0, 0.01);
}

}  // namespace
}  // namespace handoff

namespace handoff {
namespace {

/// tests/data/level/draco_box.glb (the ecctrl map's Box1X1 alone, 12 triangles) with its JSON
/// changed by `edit` and its Draco bytes by `corrupt`, written to a file of its own.
template <class Edit, class Corrupt>
std::string brokenDracoBox(const std::string& name, Edit edit, Corrupt corrupt) {
  std::string glb = test::readFile(kDir + "draco_box.glb");
  std::uint32_t jsonLength = 0;
  std::memcpy(&jsonLength, glb.data() + 12, 4);
  nlohmann::json doc = nlohmann::json::parse(glb.substr(20, jsonLength));
  std::string bin = glb.substr(28 + jsonLength);
  edit(doc);
  corrupt(bin);
  std::string json = doc.dump();
  json.resize((json.size() + 3) / 4 * 4, ' ');
  std::string out;
  const auto u32 = [&](std::uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
  u32(0x46546C67);
  u32(2);
  u32(static_cast<std::uint32_t>(28 + json.size() + bin.size()));
  u32(static_cast<std::uint32_t>(json.size()));
  u32(0x4E4F534A);
  out += json;
  u32(static_cast<std::uint32_t>(bin.size()));
  u32(0x004E4942);
  out += bin;
  const std::filesystem::path dir = scratch("draco");
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << out;
  return path;
}

TEST(Level, DracoPrimitiveAloneAndItsErrors) {
  Result<Level> box = loadLevel(kDir + "draco_box.glb");
  ASSERT_TRUE(box.ok()) << box.error();
  ASSERT_EQ(box->meshes.size(), 1u);
  EXPECT_EQ(box->meshes[0].name, "Box1X1");
  EXPECT_EQ(box->triangleCount(), 12u);
  // A 1 m cube at its node's translation (-40, 0.5, 110).
  EXPECT_NEAR(box->boundsMin.x, -40.5, 1e-3);
  EXPECT_NEAR(box->boundsMax.y, 1.0, 1e-3);
  EXPECT_NEAR(box->boundsMax.z, 110.5, 1e-3);
  const auto keep = [](auto&) {};
  const std::string draco = "meshes[0].primitives[0].extensions.KHR_draco_mesh_compression";
  // Garbled compressed bytes (past Draco's header).
  std::string path = brokenDracoBox("garbled.glb", keep, [](std::string& bin) {
    for (size_t i = 16; i < bin.size(); ++i) bin[i] = static_cast<char>(0xA5 ^ bin[i]);
  });
  Result<Level> level = loadLevel(path);
  ASSERT_FALSE(level.ok());
  EXPECT_TRUE(contains(level.error(), path + ": " + draco)) << level.error();
  // A vertex count that is not the decoded one.
  path = brokenDracoBox(
      "count.glb",
      [](nlohmann::json& doc) {
        for (int a = 0; a < 3; ++a) doc["accessors"][a]["count"] = 25;  // the three attributes
      },
      keep);
  level = loadLevel(path);
  ASSERT_FALSE(level.ok());
  EXPECT_TRUE(contains(level.error(), draco + ": decodes to 24 vertices, POSITION's count is 25"))
      << level.error();
  // Accessors announcing more than 213 compressed bytes can hold.
  path = brokenDracoBox(
      "huge.glb",
      [](nlohmann::json& doc) {
        for (nlohmann::json& accessor : doc["accessors"]) accessor["count"] = 10'000'000;
      },
      keep);
  level = loadLevel(path);
  ASSERT_FALSE(level.ok());
  EXPECT_TRUE(contains(level.error(), "more than Draco data can hold")) << level.error();
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

}  // namespace
}  // namespace handoff

namespace handoff {
namespace {

// The Draco map as Bullet geometry (26 static meshes, 12,090 triangles over 200 x 380 m): rays
// find Ramp20's slope and Box1X1's top, and a sphere dropped on the box rests on it (the 2 mm of
// SphereComesToRestOnTheLoadedStairs; its radius puts its centre 0.1 m above the top).
TEST(Level, DracoTestMapInABulletWorld) {
  Result<Level> level = loadLevel(kDir + "ecctrl_testmap.glb");
  ASSERT_TRUE(level.ok()) << level.error();
  auto world = createBulletWorld();
  Result<std::vector<BodyId>> bodies = addLevel(*world, *level);
  ASSERT_TRUE(bodies.ok()) << bodies.error();
  EXPECT_EQ(world->bodyCount(), 26);
  // Ramp20 (x in [20, 50], z in [-90, -80]) climbs from y = 0 at x = 20 to its 20 m plateau at
  // 10 tan 20 = 3.64 m (x = 30), and down again from x = 40: at x = 25 the ray meets the slope.
  // Heights within 1 cm: Draco quantizes positions (here the plateau is 0.7 mm off 10 tan 20).
  const CastHit ramp = world->castRay(Vec3{25.0, 10.0, -85.0}, Vec3{25.0, -1.0, -85.0}, layers::kAll);
  ASSERT_TRUE(ramp.hit());
  const double slope = std::acos(std::abs(ramp.normal.y)) * 180.0 / M_PI;
  std::printf("Ramp20 at x = 25: y %.4f m, slope %.3f degrees\n", ramp.point.y, slope);
  EXPECT_NEAR(slope, 20.0, 0.05);
  EXPECT_NEAR(ramp.point.y, 5.0 * std::tan(20.0 * M_PI / 180.0), 0.01);
  // Box1X1: a 1 m cube at (-40, 0.5, 110).
  const CastHit top = world->castRay(Vec3{-40.0, 5.0, 110.0}, Vec3{-40.0, -1.0, 110.0}, layers::kAll);
  ASSERT_TRUE(top.hit());
  EXPECT_NEAR(top.point.y, 1.0, 1e-3);
  BodyDesc sphere;
  sphere.shape.type = ShapeType::Sphere;
  sphere.shape.radius = 0.1;
  sphere.mass = 1.0;
  sphere.rollingFriction = 0.01;
  sphere.worldFromBody = Transform::fromTranslation(Vec3{-40.0, 3.0, 110.0});
  sphere.filter = CollisionFilter{layers::kDebris, layers::kAll};
  Result<BodyId> id = world->createBody(sphere);
  ASSERT_TRUE(id.ok()) << id.error();
  for (int i = 0; i < 180; ++i) world->step(1.0 / 60.0, 2);
  std::printf("sphere on Box1X1: centre y %.5f m\n", world->transform(*id).translation.y);
  EXPECT_NEAR(world->transform(*id).translation.y, 1.1, 2e-3);
}

}  // namespace
}  // namespace handoff
