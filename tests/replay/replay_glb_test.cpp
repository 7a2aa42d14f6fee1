// Replays written as binary glTF and read back with tinygltf and with Assimp: joint count, key
// count, the root/pelvis trajectory to 1e-4 m, the skin, and the viewer's extras.
#include "handoff/replay.h"

#include "replay/gltf.h"
#include "replay/replay_fixture.h"

#include <assimp/anim.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <gtest/gtest.h>
#include <assimp/Importer.hpp>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace handoff {
namespace {

using nlohmann::json;
using replay_test::Source;

constexpr double kTrajectoryTolerance = 1e-4;  // [m]

std::string dataPath(const std::string& relative) { return std::string(HANDOFF_DATA_DIR) + "/" + relative; }

/// Where the tests leave their files (kept for inspection: the viewer can open the folder).
std::string outputPath(const std::string& file) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "handoff_replay_tests";
  std::filesystem::create_directories(dir);
  return (dir / file).string();
}

const Source& source(const std::string& relative) {
  static std::map<std::string, Source> cache;
  auto it = cache.find(relative);
  if (it == cache.end()) {
    Result<Source> loaded = replay_test::loadSource(dataPath(relative));
    if (!loaded) {
      ADD_FAILURE() << loaded.error();
      return cache[relative];
    }
    it = cache.emplace(relative, std::move(loaded).value()).first;
  }
  return it->second;
}

/// The world position of joint `joint` in a replay frame.
Vec3 jointWorld(const Replay& replay, const ReplayFrame& frame, int joint) {
  std::vector<Transform> models(frame.locals.size());
  localToModel(replay.skeleton, frame.locals, models);
  return (frame.worldFromRoot * models[static_cast<size_t>(joint)]).translation;
}

// ---------------------------------------------------------------------------------------------
// tinygltf side

std::vector<float> readFloats(const tinygltf::Model& model, int accessorIndex) {
  const tinygltf::Accessor& accessor = model.accessors.at(static_cast<size_t>(accessorIndex));
  EXPECT_EQ(accessor.componentType, TINYGLTF_COMPONENT_TYPE_FLOAT);
  const tinygltf::BufferView& view = model.bufferViews.at(static_cast<size_t>(accessor.bufferView));
  const size_t components =
      static_cast<size_t>(tinygltf::GetNumComponentsInType(static_cast<uint32_t>(accessor.type)));
  const size_t stride = view.byteStride ? view.byteStride : components * sizeof(float);
  std::vector<float> out;
  const unsigned char* base =
      model.buffers.at(static_cast<size_t>(view.buffer)).data.data() + view.byteOffset + accessor.byteOffset;
  for (size_t i = 0; i < accessor.count; ++i) {
    for (size_t c = 0; c < components; ++c) {
      float v;
      std::memcpy(&v, base + i * stride + c * sizeof(float), sizeof(float));
      out.push_back(v);
    }
  }
  return out;
}

/// A glb loaded with tinygltf, with per-frame node transforms evaluated from its animation.
struct GltfReplay {
  tinygltf::Model model;
  std::vector<int> parent;                    // per node
  std::map<int, std::vector<float>> t, r, s;  // animated outputs per node
  size_t keyCount = 0;
  std::vector<float> times;

  int node(const std::string& name) const {
    for (size_t i = 0; i < model.nodes.size(); ++i) {
      if (model.nodes[i].name == name) return static_cast<int>(i);
    }
    return -1;
  }

  glm::dmat4 local(int n, size_t frame) const {
    const tinygltf::Node& node = model.nodes[static_cast<size_t>(n)];
    Vec3 translation{0.0}, scale{1.0};
    Quat rotation{1.0, 0.0, 0.0, 0.0};
    if (node.translation.size() == 3)
      translation = Vec3{node.translation[0], node.translation[1], node.translation[2]};
    if (node.rotation.size() == 4)
      rotation = Quat{node.rotation[3], node.rotation[0], node.rotation[1], node.rotation[2]};
    if (node.scale.size() == 3) scale = Vec3{node.scale[0], node.scale[1], node.scale[2]};
    if (auto it = t.find(n); it != t.end()) {
      const float* p = &it->second[3 * frame];
      translation = Vec3{p[0], p[1], p[2]};
    }
    if (auto it = r.find(n); it != r.end()) {
      const float* p = &it->second[4 * frame];
      rotation = Quat{p[3], p[0], p[1], p[2]};
    }
    if (auto it = s.find(n); it != s.end()) {
      const float* p = &it->second[3 * frame];
      scale = Vec3{p[0], p[1], p[2]};
    }
    glm::dmat4 m = glm::mat4_cast(glm::normalize(rotation));
    m[0] *= scale.x;
    m[1] *= scale.y;
    m[2] *= scale.z;
    m[3] = glm::dvec4(translation, 1.0);
    return m;
  }

  glm::dmat4 world(int n, size_t frame) const {
    glm::dmat4 m = local(n, frame);
    for (int p = parent[static_cast<size_t>(n)]; p >= 0; p = parent[static_cast<size_t>(p)])
      m = local(p, frame) * m;
    return m;
  }
};

/// scenes[0].extras.handoff as written (tinygltf's Value drops empty arrays, so the JSON chunk
/// of the glb is read directly, as three.js does).
json readExtras(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  const std::string glb((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_GE(glb.size(), 20u);
  std::uint32_t length = 0;
  std::memcpy(&length, glb.data() + 12, 4);
  const json document = json::parse(glb.substr(20, length));
  return document.at("scenes").at(0).at("extras").at("handoff");
}

::testing::AssertionResult loadGltf(const std::string& path, GltfReplay& out) {
  tinygltf::TinyGLTF loader;
  std::string err, warn;
  if (!loader.LoadBinaryFromFile(&out.model, &err, &warn, path)) {
    return ::testing::AssertionFailure() << "tinygltf: " << err;
  }
  if (!warn.empty()) return ::testing::AssertionFailure() << "tinygltf warning: " << warn;
  out.parent.assign(out.model.nodes.size(), -1);
  for (size_t i = 0; i < out.model.nodes.size(); ++i) {
    for (int c : out.model.nodes[i].children) out.parent[static_cast<size_t>(c)] = static_cast<int>(i);
  }
  if (out.model.animations.size() != 1) return ::testing::AssertionFailure() << "expected one animation";
  const tinygltf::Animation& animation = out.model.animations[0];
  if (animation.name != "replay")
    return ::testing::AssertionFailure() << "animation named " << animation.name;
  for (const tinygltf::AnimationChannel& channel : animation.channels) {
    const tinygltf::AnimationSampler& sampler = animation.samplers.at(static_cast<size_t>(channel.sampler));
    const std::vector<float> input = readFloats(out.model, sampler.input);
    if (out.keyCount == 0) {
      out.keyCount = input.size();
      out.times = input;
    } else if (input.size() != out.keyCount) {
      return ::testing::AssertionFailure() << "channels with different key counts";
    }
    std::vector<float> output = readFloats(out.model, sampler.output);
    if (channel.target_path == "translation") out.t[channel.target_node] = std::move(output);
    if (channel.target_path == "rotation") out.r[channel.target_node] = std::move(output);
    if (channel.target_path == "scale") out.s[channel.target_node] = std::move(output);
  }
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------------------------------------
// Assimp side

struct AssimpReplay {
  Assimp::Importer importer;
  const aiScene* scene = nullptr;
  std::map<std::string, const aiNodeAnim*> channels;

  aiMatrix4x4 local(const aiNode* node, size_t frame) const {
    auto it = channels.find(node->mName.C_Str());
    if (it == channels.end()) return node->mTransformation;
    const aiNodeAnim* c = it->second;
    const aiVector3D scale = c->mNumScalingKeys > frame ? c->mScalingKeys[frame].mValue : aiVector3D(1, 1, 1);
    return aiMatrix4x4(scale, c->mRotationKeys[frame].mValue, c->mPositionKeys[frame].mValue);
  }
  aiMatrix4x4 world(const aiNode* node, size_t frame) const {
    aiMatrix4x4 m = local(node, frame);
    for (const aiNode* p = node->mParent; p; p = p->mParent) m = local(p, frame) * m;
    return m;
  }
};

::testing::AssertionResult loadAssimp(const std::string& path, AssimpReplay& out) {
  out.scene = out.importer.ReadFile(path, aiProcess_ValidateDataStructure);
  if (!out.scene) return ::testing::AssertionFailure() << "Assimp: " << out.importer.GetErrorString();
  if (out.scene->mNumAnimations != 1)
    return ::testing::AssertionFailure() << "Assimp: expected one animation";
  const aiAnimation* animation = out.scene->mAnimations[0];
  for (unsigned i = 0; i < animation->mNumChannels; ++i) {
    out.channels[animation->mChannels[i]->mNodeName.C_Str()] = animation->mChannels[i];
  }
  return ::testing::AssertionSuccess();
}

Vec3 translationOf(const glm::dmat4& m) { return Vec3{m[3]}; }
Vec3 translationOf(const aiMatrix4x4& m) { return Vec3{m.a4, m.b4, m.c4}; }

// ---------------------------------------------------------------------------------------------

/// A DeepMimic run replay with a moved root, the second half as a "ragdoll" (authority 1, the
/// capsule off), contacts and events: exercises every extras field.
Replay runReplay() {
  const Source& run = source("deepmimic/humanoid3d_run.bvh");
  const Transform worldFromRoot{glm::angleAxis(0.5, Vec3{0, 1, 0}), Vec3{1.0, 0.0, -2.0}};
  Replay replay = replay_test::recordClip(run, run.imported.clips.at(0), "run", worldFromRoot, 0, 40);
  for (size_t f = 20; f < replay.frames.size(); ++f) {
    ReplayFrame& frame = replay.frames[f];
    frame.state = f < 30 ? "ragdoll" : "recovering";
    frame.authority.assign(replay.bodies.size(), 1);
    frame.capsuleEnabled = false;
    frame.contacts = {frame.worldFromBodies.back().translation, Vec3{0.5, 0.0, 0.25}};
    frame.figures.contactPoints = 2;
    frame.figures.activeBodies = static_cast<int>(replay.bodies.size());
  }
  replay.events = {{replay.frames[20].time, "ragdoll", "handoff mid-run"},
                   {replay.frames[30].time + 0.001, "getup", "get-up"}};
  replay.boxes = {
      {Transform{glm::angleAxis(0.3, Vec3{0, 1, 0}), Vec3{2.0, 0.25, 0.0}}, Vec3{0.5, 0.25, 1.0}}};
  return replay;
}

TEST(ReplayGlb, DescribeRagdollCopiesBodiesJointsAndCapsule) {
  const Source& run = source("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(run.asset);
  Replay replay;
  describeRagdoll(*run.asset, replay);
  ASSERT_EQ(replay.bodies.size(), run.asset->bodies.size());
  ASSERT_EQ(replay.joints.size(), run.asset->joints.size());
  for (size_t b = 0; b < replay.bodies.size(); ++b) {
    EXPECT_EQ(replay.bodies[b].name, run.asset->bodies[b].name);
    EXPECT_EQ(replay.bodies[b].joint, run.asset->bodies[b].joint);
    EXPECT_EQ(replay.bodies[b].shape.type, run.asset->bodies[b].shape.type);
    EXPECT_EQ(replay.bodies[b].boneFromBody.translation, run.asset->bodies[b].boneFromBody.translation);
  }
  for (size_t j = 0; j < replay.joints.size(); ++j) {
    EXPECT_EQ(replay.joints[j].name, run.asset->joints[j].name);
    EXPECT_EQ(replay.joints[j].childBody, run.asset->joints[j].childBody);
    EXPECT_EQ(replay.joints[j].angularLower, run.asset->joints[j].preset.angularLower);
    EXPECT_EQ(replay.joints[j].angularUpper, run.asset->joints[j].preset.angularUpper);
  }
  EXPECT_EQ(replay.capsule.radius, run.asset->capsule.radius);
}

TEST(ReplayGlb, RunReadsBackThroughTinygltf) {
  const Replay replay = runReplay();
  const std::string path = outputPath("run.glb");
  const Status written = writeReplayGlb(replay, path);
  ASSERT_TRUE(written) << written.error();

  GltfReplay gltf;
  ASSERT_TRUE(loadGltf(path, gltf));
  const Skeleton& skeleton = replay.skeleton;
  // Joint nodes: index = joint index, names and hierarchy of the skeleton.
  for (int j = 0; j < skeleton.jointCount(); ++j) {
    ASSERT_EQ(gltf.model.nodes[static_cast<size_t>(j)].name, skeleton.jointNames[static_cast<size_t>(j)]);
    EXPECT_EQ(gltf.parent[static_cast<size_t>(j)], skeleton.parents[static_cast<size_t>(j)]);
  }
  int jointNodes = 0;
  for (const tinygltf::Node& node : gltf.model.nodes) jointNodes += skeleton.findJoint(node.name) >= 0;
  EXPECT_EQ(jointNodes, skeleton.jointCount());
  EXPECT_EQ(gltf.keyCount, replay.frames.size());
  ASSERT_EQ(gltf.times.size(), replay.frames.size());
  for (size_t f = 0; f < replay.frames.size(); ++f) EXPECT_NEAR(gltf.times[f], replay.frames[f].time, 1e-6);

  // Root joint channel = worldFromRoot * local[root]; every joint's world position matches.
  double worst = 0.0;
  for (size_t f = 0; f < replay.frames.size(); ++f) {
    const ReplayFrame& frame = replay.frames[f];
    const Vec3 root = (frame.worldFromRoot * frame.locals[0]).translation;
    worst = std::max(worst, glm::length(translationOf(gltf.local(0, f)) - root));
    for (int j = 0; j < skeleton.jointCount(); ++j) {
      worst = std::max(worst, glm::length(translationOf(gltf.world(j, f)) - jointWorld(replay, frame, j)));
    }
    for (size_t b = 0; b < replay.bodies.size(); ++b) {
      const int node = gltf.node("body:" + replay.bodies[b].name);
      ASSERT_GE(node, 0);
      worst = std::max(
          worst, glm::length(translationOf(gltf.world(node, f)) - frame.worldFromBodies[b].translation));
    }
    const int capsule = gltf.node("capsule");
    ASSERT_GE(capsule, 0);
    EXPECT_EQ(gltf.world(capsule, f)[1][1], frame.capsuleEnabled ? 1.0 : 0.0) << "frame " << f;
  }
  EXPECT_LT(worst, kTrajectoryTolerance);
  RecordProperty("trajectory_error_m", std::to_string(worst));
  std::printf("run: worst joint/body position error after the glb round trip %.3g m\n", worst);

  // Shapes: mesh bounds equal the shape's extents.
  for (const ReplayBody& body : replay.bodies) {
    const tinygltf::Node& node = gltf.model.nodes[static_cast<size_t>(gltf.node("body:" + body.name))];
    ASSERT_GE(node.mesh, 0) << body.name;
    const tinygltf::Primitive& primitive = gltf.model.meshes[static_cast<size_t>(node.mesh)].primitives.at(0);
    const tinygltf::Accessor& positions =
        gltf.model.accessors[static_cast<size_t>(primitive.attributes.at("POSITION"))];
    const double top = positions.maxValues.at(1);
    switch (body.shape.type) {
      case ShapeType::Capsule:
        EXPECT_NEAR(top, body.shape.halfHeight + body.shape.radius, 1e-6) << body.name;
        break;
      case ShapeType::Sphere:
        EXPECT_NEAR(top, body.shape.radius, 1e-6) << body.name;
        break;
      case ShapeType::Box:
        EXPECT_NEAR(top, body.shape.halfExtents.y, 1e-6) << body.name;
        break;
      case ShapeType::None:
        break;
    }
    EXPECT_GE(primitive.material, 0);
  }
  EXPECT_GE(gltf.node("ground"), 0);
  EXPECT_GE(gltf.node("static:0"), 0);

  // The viewer's extras: tinygltf sees them, and they hold what was recorded.
  const tinygltf::Value& handoffValue = gltf.model.scenes.at(0).extras.Get("handoff");
  ASSERT_TRUE(handoffValue.IsObject());
  EXPECT_EQ(handoffValue.Get("states").ArrayLen(), replay.frames.size());
  const json extras = readExtras(path);
  ASSERT_TRUE(extras.is_object());
  EXPECT_EQ(extras["version"], 1);
  EXPECT_EQ(extras["frameCount"], replay.frames.size());
  EXPECT_DOUBLE_EQ(extras["frameRate"].get<double>(), replay.frameRate);
  ASSERT_EQ(extras["times"].size(), replay.frames.size());
  ASSERT_EQ(extras["states"].size(), replay.frames.size());
  EXPECT_EQ(extras["states"][0], "animated");
  EXPECT_EQ(extras["states"][25], "ragdoll");
  EXPECT_EQ(extras["states"][35], "recovering");
  ASSERT_EQ(extras["authority"].size(), replay.frames.size());
  EXPECT_EQ(extras["authority"][0].size(), replay.bodies.size());
  EXPECT_EQ(extras["authority"][0][0], 0);
  EXPECT_EQ(extras["authority"][25][0], 1);
  EXPECT_EQ(extras["capsuleEnabled"][0], true);
  EXPECT_EQ(extras["capsuleEnabled"][25], false);
  EXPECT_EQ(extras["contacts"][0].size(), 0u);
  ASSERT_EQ(extras["contacts"][25].size(), 2u);
  EXPECT_NEAR(extras["contacts"][25][1][0].get<double>(), 0.5, 1e-12);
  EXPECT_EQ(extras["figures"]["contactPoints"][25], 2);
  EXPECT_NEAR(extras["figures"]["pelvisHeight"][3].get<double>(), replay.frames[3].figures.pelvisHeight,
              1e-12);
  ASSERT_EQ(extras["events"].size(), 2u);
  EXPECT_EQ(extras["events"][0]["kind"], "ragdoll");
  EXPECT_EQ(extras["events"][0]["frame"], 20);
  EXPECT_EQ(extras["events"][1]["frame"], 31);
  ASSERT_EQ(extras["bodies"].size(), replay.bodies.size());
  EXPECT_EQ(extras["bodies"][0]["node"], "body:" + replay.bodies[0].name);
  ASSERT_EQ(extras["joints"].size(), replay.joints.size());
  EXPECT_EQ(extras["joints"][0]["lower"].size(), 3u);
  EXPECT_EQ(extras["skeleton"]["joints"].size(), static_cast<size_t>(skeleton.jointCount()));
  EXPECT_EQ(extras["rootBody"], 0);
  EXPECT_EQ(extras["boxes"].size(), 1u);
}

TEST(ReplayGlb, RunReadsBackThroughAssimp) {
  const Replay replay = runReplay();
  const std::string path = outputPath("run_assimp.glb");
  const Status written = writeReplayGlb(replay, path);
  ASSERT_TRUE(written) << written.error();

  AssimpReplay in;
  ASSERT_TRUE(loadAssimp(path, in));
  const Skeleton& skeleton = replay.skeleton;
  for (const std::string& name : skeleton.jointNames) {
    const aiNode* node = in.scene->mRootNode->FindNode(name.c_str());
    ASSERT_NE(node, nullptr) << name;
    ASSERT_TRUE(in.channels.count(name)) << name;
    EXPECT_EQ(in.channels[name]->mNumPositionKeys, replay.frames.size()) << name;
    EXPECT_EQ(in.channels[name]->mNumRotationKeys, replay.frames.size()) << name;
  }
  const aiAnimation* animation = in.scene->mAnimations[0];
  EXPECT_STREQ(animation->mName.C_Str(), "replay");
  const double ticks = animation->mTicksPerSecond > 0 ? animation->mTicksPerSecond : 1.0;
  const aiNodeAnim* rootChannel = in.channels.at(skeleton.jointNames[0]);
  for (size_t f = 0; f < replay.frames.size(); ++f) {
    EXPECT_NEAR(rootChannel->mPositionKeys[f].mTime / ticks, replay.frames[f].time, 1e-5);
  }

  double worst = 0.0;
  const aiNode* rootNode = in.scene->mRootNode->FindNode(skeleton.jointNames[0].c_str());
  for (size_t f = 0; f < replay.frames.size(); ++f) {
    const ReplayFrame& frame = replay.frames[f];
    const Vec3 root = (frame.worldFromRoot * frame.locals[0]).translation;
    worst = std::max(worst, glm::length(translationOf(in.world(rootNode, f)) - root));
    for (int j = 0; j < skeleton.jointCount(); ++j) {
      const aiNode* node = in.scene->mRootNode->FindNode(skeleton.jointNames[static_cast<size_t>(j)].c_str());
      worst = std::max(worst, glm::length(translationOf(in.world(node, f)) - jointWorld(replay, frame, j)));
    }
    for (size_t b = 0; b < replay.bodies.size(); ++b) {
      const aiNode* node = in.scene->mRootNode->FindNode(("body:" + replay.bodies[b].name).c_str());
      ASSERT_NE(node, nullptr);
      worst = std::max(worst,
                       glm::length(translationOf(in.world(node, f)) - frame.worldFromBodies[b].translation));
    }
  }
  EXPECT_LT(worst, kTrajectoryTolerance);
  std::printf("run (Assimp): worst joint/body position error %.3g m\n", worst);
  // One mesh per body shape, plus capsule, ground and box.
  EXPECT_EQ(in.scene->mNumMeshes, replay.bodies.size() + 3);
}

TEST(ReplayGlb, SkinnedMesh2MotionReadsBackWithItsBones) {
  const Source& m2m = source("mesh2motion/human-base-animations.glb");
  ASSERT_TRUE(m2m.asset);
  ASSERT_FALSE(m2m.imported.meshes.empty());
  ASSERT_FALSE(m2m.imported.clips.empty());
  // The longest clip, 90 frames of it.
  const Clip* clip = &m2m.imported.clips[0];
  for (const Clip& c : m2m.imported.clips) {
    if (c.frameCount > clip->frameCount) clip = &c;
  }
  Replay replay = replay_test::recordClip(m2m, *clip, "mesh2motion " + clip->name,
                                          Transform::fromTranslation(Vec3{0.0, 0.0, 0.5}), 0, 90);
  const std::string path = outputPath("mesh2motion.glb");
  const Status written = writeReplayGlb(replay, path);
  ASSERT_TRUE(written) << written.error();
  const Skeleton& skeleton = replay.skeleton;
  // Every mesh of the file (one per material) merged into the replay's skin.
  ASSERT_TRUE(replay.mesh);
  size_t vertices = 0, triangles = 0;
  for (const SkinnedMesh& mesh : m2m.imported.meshes) {
    vertices += mesh.positions.size();
    triangles += mesh.indices.size() / 3;
  }
  EXPECT_EQ(replay.mesh->positions.size(), vertices);
  EXPECT_EQ(replay.mesh->indices.size(), 3 * triangles);
  EXPECT_EQ(*std::max_element(replay.mesh->indices.begin(), replay.mesh->indices.end()), vertices - 1);
  const int pelvis = m2m.asset->map[Slot::Pelvis];
  ASSERT_GE(pelvis, 0);

  // tinygltf: the skin's joints are the skeleton nodes, with the importer's inverse binds.
  GltfReplay gltf;
  ASSERT_TRUE(loadGltf(path, gltf));
  ASSERT_EQ(gltf.model.skins.size(), 1u);
  const tinygltf::Skin& skin = gltf.model.skins[0];
  ASSERT_EQ(skin.joints.size(), static_cast<size_t>(skeleton.jointCount()));
  for (size_t j = 0; j < skin.joints.size(); ++j) EXPECT_EQ(skin.joints[j], static_cast<int>(j));
  const std::vector<float> inverseBind = readFloats(gltf.model, skin.inverseBindMatrices);
  ASSERT_EQ(inverseBind.size(), 16 * skin.joints.size());
  for (size_t j = 0; j < skin.joints.size(); ++j) {
    const Transform& ib = replay.mesh->inverseBind[j];
    EXPECT_NEAR(inverseBind[16 * j + 12], ib.translation.x, 1e-5);
    EXPECT_NEAR(inverseBind[16 * j + 13], ib.translation.y, 1e-5);
    EXPECT_NEAR(inverseBind[16 * j + 14], ib.translation.z, 1e-5);
  }
  const int meshNode = gltf.node("skin:" + replay.mesh->name);
  ASSERT_GE(meshNode, 0);
  const tinygltf::Primitive& primitive =
      gltf.model.meshes[static_cast<size_t>(gltf.model.nodes[static_cast<size_t>(meshNode)].mesh)]
          .primitives.at(0);
  EXPECT_EQ(gltf.model.accessors[static_cast<size_t>(primitive.attributes.at("POSITION"))].count,
            replay.mesh->positions.size());
  EXPECT_TRUE(primitive.attributes.count("JOINTS_0"));
  EXPECT_TRUE(primitive.attributes.count("WEIGHTS_0"));
  EXPECT_EQ(gltf.keyCount, replay.frames.size());
  double worst = 0.0;
  for (size_t f = 0; f < replay.frames.size(); ++f) {
    worst = std::max(worst, glm::length(translationOf(gltf.world(pelvis, f)) -
                                        jointWorld(replay, replay.frames[f], pelvis)));
  }
  EXPECT_LT(worst, kTrajectoryTolerance);
  std::printf("mesh2motion (tinygltf): pelvis '%s' trajectory error %.3g m over %zu frames\n",
              skeleton.jointNames[static_cast<size_t>(pelvis)].c_str(), worst, replay.frames.size());

  // Assimp: the skinned mesh comes with its bones, named after the joints.
  AssimpReplay in;
  ASSERT_TRUE(loadAssimp(path, in));
  const aiMesh* skinned = nullptr;
  for (unsigned m = 0; m < in.scene->mNumMeshes; ++m) {
    if (in.scene->mMeshes[m]->HasBones()) skinned = in.scene->mMeshes[m];
  }
  ASSERT_NE(skinned, nullptr) << "Assimp found no skinned mesh";
  EXPECT_EQ(skinned->mNumVertices, replay.mesh->positions.size());
  std::printf("mesh2motion (Assimp): %u bones for %d joints\n", skinned->mNumBones, skeleton.jointCount());
  EXPECT_GT(skinned->mNumBones, static_cast<unsigned>(skeleton.jointCount() / 2));
  for (unsigned b = 0; b < skinned->mNumBones; ++b) {
    const int joint = skeleton.findJoint(skinned->mBones[b]->mName.C_Str());
    ASSERT_GE(joint, 0) << skinned->mBones[b]->mName.C_Str();
    const aiMatrix4x4& offset = skinned->mBones[b]->mOffsetMatrix;
    const Vec3 expected = replay.mesh->inverseBind[static_cast<size_t>(joint)].translation;
    EXPECT_NEAR(offset.a4, expected.x, 1e-5);
    EXPECT_NEAR(offset.b4, expected.y, 1e-5);
    EXPECT_NEAR(offset.c4, expected.z, 1e-5);
  }
  const aiNode* pelvisNode =
      in.scene->mRootNode->FindNode(skeleton.jointNames[static_cast<size_t>(pelvis)].c_str());
  ASSERT_NE(pelvisNode, nullptr);
  EXPECT_EQ(in.channels.at(pelvisNode->mName.C_Str())->mNumPositionKeys, replay.frames.size());
  double worstAssimp = 0.0;
  for (size_t f = 0; f < replay.frames.size(); ++f) {
    worstAssimp = std::max(worstAssimp, glm::length(translationOf(in.world(pelvisNode, f)) -
                                                    jointWorld(replay, replay.frames[f], pelvis)));
  }
  EXPECT_LT(worstAssimp, kTrajectoryTolerance);
}

TEST(ReplayGlb, BadReplaysAreRejectedNamingTheProblem) {
  Replay replay = runReplay();
  replay.frames.resize(5);
  const std::string path = outputPath("bad.glb");

  Replay noFrames = replay;
  noFrames.frames.clear();
  Status s = writeReplayGlb(noFrames, path);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("no frames"), std::string::npos) << s.error();

  Replay shortPose = replay;
  shortPose.frames[3].locals.pop_back();
  s = writeReplayGlb(shortPose, path);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("frame 3"), std::string::npos) << s.error();

  Replay stuck = replay;
  stuck.frames[2].time = stuck.frames[1].time;
  s = writeReplayGlb(stuck, path);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("does not advance"), std::string::npos) << s.error();

  Replay nan = replay;
  nan.frames[4].worldFromBodies[2].translation.x = std::nan("");
  s = writeReplayGlb(nan, path);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find(replay.bodies[2].name), std::string::npos) << s.error();

  Replay badBody = replay;
  badBody.bodies[1].joint = 999;
  s = writeReplayGlb(badBody, path);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find(replay.bodies[1].name), std::string::npos) << s.error();

  s = writeReplayGlb(replay, "/nonexistent-folder/x.glb");
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("/nonexistent-folder/x.glb"), std::string::npos) << s.error();
}

TEST(ReplayGlb, SingleFrameAndNoBodies) {
  const Source& run = source("deepmimic/humanoid3d_run.bvh");
  Replay replay;
  replay.name = "pose";
  replay.skeleton = run.skeleton();
  const std::vector<Transform> rest = restPose(replay.skeleton);
  replay.frames.push_back(replay_test::animatedFrame(replay, 0.0, Transform{}, rest));
  const std::string path = outputPath("single.glb");
  const Status written = writeReplayGlb(replay, path);
  ASSERT_TRUE(written) << written.error();
  GltfReplay gltf;
  ASSERT_TRUE(loadGltf(path, gltf));
  EXPECT_EQ(gltf.keyCount, 1u);
  const json extras = readExtras(path);
  EXPECT_TRUE(extras["bodies"].is_array());
  EXPECT_EQ(extras["bodies"].size(), 0u);
  EXPECT_EQ(extras["events"].size(), 0u);
}

// A level's triangles (issue 26): each static mesh becomes a node "level:<i>" at its placement,
// flat shaded (three vertices per triangle), listed in extras.handoff.levelMeshes; a mesh that
// indexes past its vertices is refused naming it.
TEST(ReplayGlb, StaticMeshesAreLevelNodes) {
  Replay replay = runReplay();
  replay.frames.resize(3);
  ReplayStaticMesh ramp;
  ramp.name = "ramp";
  ramp.worldFromMesh = Transform{glm::angleAxis(0.5, Vec3{0, 1, 0}), Vec3{1.0, 0.0, -2.0}};
  ramp.vertices = {Vec3{0.0, 0.0, 0.0}, Vec3{1.0, 0.0, 0.0}, Vec3{1.0, 0.5, -1.0}, Vec3{0.0, 0.5, -1.0}};
  ramp.indices = {0, 1, 2, 0, 2, 3};
  replay.staticMeshes.push_back(ramp);
  const std::string path = outputPath("level.glb");
  const Status written = writeReplayGlb(replay, path);
  ASSERT_TRUE(written) << written.error();

  GltfReplay gltf;
  ASSERT_TRUE(loadGltf(path, gltf));
  const int node = gltf.node("level:0");
  ASSERT_GE(node, 0);
  const tinygltf::Node& n = gltf.model.nodes[static_cast<size_t>(node)];
  ASSERT_GE(n.mesh, 0);
  const tinygltf::Primitive& primitive = gltf.model.meshes[static_cast<size_t>(n.mesh)].primitives.at(0);
  EXPECT_EQ(gltf.model.accessors[static_cast<size_t>(primitive.indices)].count, 6u);
  EXPECT_EQ(gltf.model.accessors[static_cast<size_t>(primitive.attributes.at("POSITION"))].count, 6u);
  ASSERT_EQ(n.translation.size(), 3u);
  EXPECT_DOUBLE_EQ(n.translation[2], -2.0);
  const tinygltf::Value& extras = gltf.model.scenes[0].extras.Get("handoff");
  const tinygltf::Value& levels = extras.Get("levelMeshes");
  ASSERT_TRUE(levels.IsArray());
  ASSERT_EQ(levels.ArrayLen(), 1u);
  EXPECT_EQ(levels.Get(0).Get("name").Get<std::string>(), "ramp");
  EXPECT_EQ(levels.Get(0).Get("node").Get<std::string>(), "level:0");

  Replay bad = replay;
  bad.staticMeshes[0].indices[4] = 7;
  const Status refused = writeReplayGlb(bad, outputPath("bad_level.glb"));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("static mesh 'ramp': index 4 past its 4 vertices"), std::string::npos)
      << refused.error();

  // Without static meshes nothing about levels is written (replays without one are unchanged).
  replay.staticMeshes.clear();
  ASSERT_TRUE(writeReplayGlb(replay, path));
  GltfReplay plain;
  ASSERT_TRUE(loadGltf(path, plain));
  EXPECT_LT(plain.node("level:0"), 0);
  EXPECT_FALSE(plain.model.scenes[0].extras.Get("handoff").Has("levelMeshes"));
}

}  // namespace
}  // namespace handoff
