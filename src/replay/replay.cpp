// Replays: describeRagdoll and the binary glTF writer (docs/VIEWER.md describes what the viewer
// reads from the file).
//
// Layout of the written file: nodes 0..J-1 are the skeleton joints (node name = joint name,
// hierarchy = skeleton, so skin joint i is node i); then the skinned mesh node "skin:<name>"
// when the replay has a mesh, one node "body:<name>" per body, "capsule", "ground" and
// "static:<i>" per static box, "level:<i>" per static mesh. One animation "replay" samples every frame time:
// translation and rotation per joint (the root joints' channels hold worldFromRoot * local), per body
// (worldFromBody) and for the capsule, plus the capsule's scale (1 enabled, 0 disabled, STEP).
// scene.extras.handoff carries the per-frame state the animation cannot (docs/VIEWER.md).
#include "handoff/replay.h"

#include "replay/gltf.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <exception>
#include <fstream>
#include <limits>
#include <sstream>

namespace handoff {

void describeRagdoll(const RagdollAsset& asset, Replay& replay) {
  replay.bodies.clear();
  replay.joints.clear();
  replay.bodies.reserve(asset.bodies.size());
  for (const BodyDef& body : asset.bodies) {
    replay.bodies.push_back(ReplayBody{body.name, body.joint, body.shape, body.boneFromBody});
  }
  replay.joints.reserve(asset.joints.size());
  for (const JointDef& joint : asset.joints) {
    replay.joints.push_back(ReplayJoint{joint.name, joint.parentBody, joint.childBody, joint.bodyAFromJoint,
                                        joint.bodyBFromJoint, joint.preset.angularLower,
                                        joint.preset.angularUpper});
  }
  replay.capsule = asset.capsule;
}

std::optional<SkinnedMesh> mergeSkinnedMeshes(const std::vector<SkinnedMesh>& meshes) {
  if (meshes.empty()) return std::nullopt;
  SkinnedMesh merged;
  merged.name = meshes.front().name;
  merged.inverseBind = meshes.front().inverseBind;
  const bool normals = std::all_of(meshes.begin(), meshes.end(), [](const SkinnedMesh& m) {
    return m.normals.size() == m.positions.size();
  });
  for (const SkinnedMesh& mesh : meshes) {
    if (mesh.inverseBind.size() != merged.inverseBind.size()) return std::nullopt;
    const auto offset = static_cast<std::uint32_t>(merged.positions.size());
    merged.positions.insert(merged.positions.end(), mesh.positions.begin(), mesh.positions.end());
    if (normals) merged.normals.insert(merged.normals.end(), mesh.normals.begin(), mesh.normals.end());
    for (std::uint32_t index : mesh.indices) merged.indices.push_back(index + offset);
    merged.jointIndices.insert(merged.jointIndices.end(), mesh.jointIndices.begin(), mesh.jointIndices.end());
    merged.jointWeights.insert(merged.jointWeights.end(), mesh.jointWeights.begin(), mesh.jointWeights.end());
  }
  return merged;
}

namespace {

using nlohmann::json;

constexpr int kArrayBuffer = TINYGLTF_TARGET_ARRAY_BUFFER;
constexpr int kElementArrayBuffer = TINYGLTF_TARGET_ELEMENT_ARRAY_BUFFER;
constexpr int kNoTarget = 0;

/// A triangle mesh in float, ready for a glTF primitive.
struct MeshData {
  std::vector<float> positions;  // xyz
  std::vector<float> normals;    // xyz
  std::vector<std::uint32_t> indices;

  std::uint32_t addVertex(const Vec3& p, const Vec3& n) {
    const auto index = static_cast<std::uint32_t>(positions.size() / 3);
    positions.insert(positions.end(),
                     {static_cast<float>(p.x), static_cast<float>(p.y), static_cast<float>(p.z)});
    normals.insert(normals.end(),
                   {static_cast<float>(n.x), static_cast<float>(n.y), static_cast<float>(n.z)});
    return index;
  }
};

/// Surface of revolution about +Y: rows of (polar angle from +Y, offset along Y), `segments`
/// around. Used for spheres (one row set) and capsules (two hemispheres apart).
void addLathe(MeshData& mesh, double radius, const std::vector<std::pair<double, double>>& rows,
              int segments) {
  const auto first = static_cast<std::uint32_t>(mesh.positions.size() / 3);
  for (const auto& [phi, offsetY] : rows) {
    for (int s = 0; s <= segments; ++s) {
      const double theta = 2.0 * kPi * s / segments;
      const Vec3 n{std::sin(phi) * std::cos(theta), std::cos(phi), std::sin(phi) * std::sin(theta)};
      mesh.addVertex(radius * n + Vec3{0.0, offsetY, 0.0}, n);
    }
  }
  const auto stride = static_cast<std::uint32_t>(segments + 1);
  for (std::uint32_t r = 0; r + 1 < rows.size(); ++r) {
    for (std::uint32_t s = 0; s < static_cast<std::uint32_t>(segments); ++s) {
      const std::uint32_t a = first + r * stride + s, b = a + 1, c = a + stride, d = c + 1;
      // Counter-clockwise seen from outside.
      mesh.indices.insert(mesh.indices.end(), {a, b, c, b, d, c});
    }
  }
}

void addSphere(MeshData& mesh, double radius, int segments = 20, int rings = 12) {
  std::vector<std::pair<double, double>> rows;
  for (int k = 0; k <= rings; ++k) rows.emplace_back(kPi * k / rings, 0.0);
  addLathe(mesh, radius, rows, segments);
}

/// Capsule along +Y: cap centres at +-halfHeight.
void addCapsule(MeshData& mesh, double radius, double halfHeight, int segments = 20, int capRings = 6) {
  std::vector<std::pair<double, double>> rows;
  for (int k = 0; k <= capRings; ++k) rows.emplace_back(0.5 * kPi * k / capRings, halfHeight);
  for (int k = 0; k <= capRings; ++k) rows.emplace_back(0.5 * kPi + 0.5 * kPi * k / capRings, -halfHeight);
  addLathe(mesh, radius, rows, segments);
}

/// A quad centred at `c` spanned by the half vectors u and v, facing n = normalize(u x v).
void addQuad(MeshData& mesh, const Vec3& c, const Vec3& u, const Vec3& v) {
  const Vec3 n = glm::normalize(glm::cross(u, v));
  const std::uint32_t a = mesh.addVertex(c - u - v, n);
  const std::uint32_t b = mesh.addVertex(c + u - v, n);
  const std::uint32_t d = mesh.addVertex(c + u + v, n);
  const std::uint32_t e = mesh.addVertex(c - u + v, n);
  mesh.indices.insert(mesh.indices.end(), {a, b, d, a, d, e});
}

void addBox(MeshData& mesh, const Vec3& h) {
  const Vec3 x{h.x, 0.0, 0.0}, y{0.0, h.y, 0.0}, z{0.0, 0.0, h.z};
  addQuad(mesh, x, y, z);
  addQuad(mesh, -x, z, y);
  addQuad(mesh, y, z, x);
  addQuad(mesh, -y, x, z);
  addQuad(mesh, z, x, y);
  addQuad(mesh, -z, y, x);
}

MeshData shapeMesh(const ShapeDesc& shape) {
  MeshData mesh;
  switch (shape.type) {
    case ShapeType::Sphere:
      addSphere(mesh, shape.radius);
      break;
    case ShapeType::Capsule:
      addCapsule(mesh, shape.radius, shape.halfHeight);
      break;
    case ShapeType::Box:
      addBox(mesh, shape.halfExtents);
      break;
    case ShapeType::None:
      break;
  }
  return mesh;
}

json vec3Json(const Vec3& v) { return json::array({v.x, v.y, v.z}); }
/// Quaternion in glTF order [x, y, z, w].
json quatJson(const Quat& q) { return json::array({q.x, q.y, q.z, q.w}); }
json transformJson(const Transform& t) {
  return json{{"translation", vec3Json(t.translation)}, {"rotation", quatJson(t.rotation)}};
}

std::vector<double> quatVector(const Quat& q) { return {q.x, q.y, q.z, q.w}; }
std::vector<double> vec3Vector(const Vec3& v) { return {v.x, v.y, v.z}; }

/// Builds the glTF model: one buffer, one view per accessor.
class ModelBuilder {
 public:
  ModelBuilder() {
    model_.asset.version = "2.0";
    model_.asset.generator = "handoff replay writer";
    model_.buffers.emplace_back();
  }
  tinygltf::Model& model() { return model_; }

  int addView(const void* data, std::size_t bytes, int target) {
    std::vector<unsigned char>& bin = model_.buffers[0].data;
    while (bin.size() % 4 != 0) bin.push_back(0);
    tinygltf::BufferView view;
    view.buffer = 0;
    view.byteOffset = bin.size();
    view.byteLength = bytes;
    view.target = target;
    const auto* bytesIn = static_cast<const unsigned char*>(data);
    bin.insert(bin.end(), bytesIn, bytesIn + bytes);
    model_.bufferViews.push_back(view);
    return static_cast<int>(model_.bufferViews.size() - 1);
  }

  /// Float accessor of `type` (TINYGLTF_TYPE_*) with `components` floats per element.
  int addFloats(const std::vector<float>& data, int type, int components, int target, bool withBounds) {
    tinygltf::Accessor accessor;
    accessor.bufferView = addView(data.data(), data.size() * sizeof(float), target);
    accessor.componentType = TINYGLTF_COMPONENT_TYPE_FLOAT;
    accessor.type = type;
    accessor.count = data.size() / static_cast<std::size_t>(components);
    if (withBounds) {
      accessor.minValues.assign(static_cast<std::size_t>(components),
                                std::numeric_limits<double>::infinity());
      accessor.maxValues.assign(static_cast<std::size_t>(components),
                                -std::numeric_limits<double>::infinity());
      for (std::size_t i = 0; i < data.size(); ++i) {
        const std::size_t c = i % static_cast<std::size_t>(components);
        accessor.minValues[c] = std::min(accessor.minValues[c], static_cast<double>(data[i]));
        accessor.maxValues[c] = std::max(accessor.maxValues[c], static_cast<double>(data[i]));
      }
    }
    model_.accessors.push_back(accessor);
    return static_cast<int>(model_.accessors.size() - 1);
  }

  int addIndices(const std::vector<std::uint32_t>& indices) {
    tinygltf::Accessor accessor;
    accessor.bufferView =
        addView(indices.data(), indices.size() * sizeof(std::uint32_t), kElementArrayBuffer);
    accessor.componentType = TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT;
    accessor.type = TINYGLTF_TYPE_SCALAR;
    accessor.count = indices.size();
    model_.accessors.push_back(accessor);
    return static_cast<int>(model_.accessors.size() - 1);
  }

  int addJointIndices(const std::vector<std::uint16_t>& joints) {
    tinygltf::Accessor accessor;
    accessor.bufferView = addView(joints.data(), joints.size() * sizeof(std::uint16_t), kArrayBuffer);
    accessor.componentType = TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT;
    accessor.type = TINYGLTF_TYPE_VEC4;
    accessor.count = joints.size() / 4;
    model_.accessors.push_back(accessor);
    return static_cast<int>(model_.accessors.size() - 1);
  }

  int addMaterial(const std::string& name, const std::array<double, 4>& color, bool blend = false) {
    tinygltf::Material material;
    material.name = name;
    material.pbrMetallicRoughness.baseColorFactor = {color[0], color[1], color[2], color[3]};
    material.pbrMetallicRoughness.metallicFactor = 0.0;
    material.pbrMetallicRoughness.roughnessFactor = 0.8;
    if (blend) material.alphaMode = "BLEND";
    model_.materials.push_back(material);
    return static_cast<int>(model_.materials.size() - 1);
  }

  /// A mesh with one triangle primitive; -1 for an empty mesh.
  int addMesh(const std::string& name, const MeshData& data, int material) {
    if (data.indices.empty()) return -1;
    tinygltf::Primitive primitive;
    primitive.attributes["POSITION"] = addFloats(data.positions, TINYGLTF_TYPE_VEC3, 3, kArrayBuffer, true);
    primitive.attributes["NORMAL"] = addFloats(data.normals, TINYGLTF_TYPE_VEC3, 3, kArrayBuffer, false);
    primitive.indices = addIndices(data.indices);
    primitive.material = material;
    primitive.mode = TINYGLTF_MODE_TRIANGLES;
    tinygltf::Mesh mesh;
    mesh.name = name;
    mesh.primitives.push_back(primitive);
    model_.meshes.push_back(mesh);
    return static_cast<int>(model_.meshes.size() - 1);
  }

  int addNode(tinygltf::Node node) {
    model_.nodes.push_back(std::move(node));
    return static_cast<int>(model_.nodes.size() - 1);
  }

 private:
  tinygltf::Model model_;
};

/// Animation tracks of one node over all frames.
struct NodeTrack {
  int node = -1;
  std::vector<float> translations;  // xyz per frame
  std::vector<float> rotations;     // xyzw per frame, hemisphere-continuous
  Quat previous{1.0, 0.0, 0.0, 0.0};

  void push(const Transform& t) {
    const Quat q = alignHemisphere(normalizeOrIdentity(t.rotation), previous);
    previous = q;
    translations.insert(translations.end(),
                        {static_cast<float>(t.translation.x), static_cast<float>(t.translation.y),
                         static_cast<float>(t.translation.z)});
    rotations.insert(rotations.end(), {static_cast<float>(q.x), static_cast<float>(q.y),
                                       static_cast<float>(q.z), static_cast<float>(q.w)});
  }
};

Status checkReplay(const Replay& replay) {
  for (const ReplayStaticMesh& mesh : replay.staticMeshes) {
    const std::string where = "replay '" + replay.name + "': static mesh '" + mesh.name + "'";
    if (mesh.indices.size() % 3 != 0) return Error{where + ": index count not a multiple of 3"};
    for (std::size_t k = 0; k < mesh.indices.size(); ++k) {
      if (mesh.indices[k] >= mesh.vertices.size())
        return Error{where + ": index " + std::to_string(k) + " past its " +
                     std::to_string(mesh.vertices.size()) + " vertices"};
    }
    for (const Vec3& v : mesh.vertices) {
      if (!isFinite(v)) return Error{where + ": a vertex is not finite"};
    }
    if (!isFinite(mesh.worldFromMesh)) return Error{where + ": worldFromMesh is not finite"};
  }
  const Skeleton& skeleton = replay.skeleton;
  if (skeleton.jointCount() == 0) return Error{"replay '" + replay.name + "': the skeleton has no joints"};
  if (Status s = skeleton.validate(); !s) return Error{"replay '" + replay.name + "': " + s.error()};
  if (replay.frames.empty()) return Error{"replay '" + replay.name + "': no frames"};
  if (!(replay.frameRate > 0.0) || !std::isfinite(replay.frameRate)) {
    return Error{"replay '" + replay.name + "': frameRate must be positive"};
  }
  const std::size_t joints = static_cast<std::size_t>(skeleton.jointCount());
  for (std::size_t b = 0; b < replay.bodies.size(); ++b) {
    const ReplayBody& body = replay.bodies[b];
    if (body.joint < 0 || body.joint >= skeleton.jointCount()) {
      return Error{"replay '" + replay.name + "': body '" + body.name + "' rides on joint " +
                   std::to_string(body.joint) + ", which the skeleton does not have"};
    }
  }
  for (const ReplayJoint& joint : replay.joints) {
    const int bodies = static_cast<int>(replay.bodies.size());
    if (joint.parentBody < 0 || joint.parentBody >= bodies || joint.childBody < 0 ||
        joint.childBody >= bodies) {
      return Error{"replay '" + replay.name + "': joint '" + joint.name + "' references a missing body"};
    }
  }
  for (std::size_t f = 0; f < replay.frames.size(); ++f) {
    const ReplayFrame& frame = replay.frames[f];
    const std::string where = "replay '" + replay.name + "' frame " + std::to_string(f);
    if (!std::isfinite(frame.time)) return Error{where + ": time is not finite"};
    if (f > 0 && !(frame.time > replay.frames[f - 1].time)) {
      return Error{where + ": time " + std::to_string(frame.time) + " does not advance"};
    }
    if (frame.locals.size() != joints) {
      return Error{where + ": " + std::to_string(frame.locals.size()) + " local transforms for " +
                   std::to_string(joints) + " joints"};
    }
    if (frame.worldFromBodies.size() != replay.bodies.size()) {
      return Error{where + ": " + std::to_string(frame.worldFromBodies.size()) + " body poses for " +
                   std::to_string(replay.bodies.size()) + " bodies"};
    }
    if (!frame.authority.empty() && frame.authority.size() != replay.bodies.size()) {
      return Error{where + ": " + std::to_string(frame.authority.size()) + " authority values for " +
                   std::to_string(replay.bodies.size()) + " bodies"};
    }
    if (!isFinite(frame.worldFromRoot)) return Error{where + ": worldFromRoot is not finite"};
    for (std::size_t j = 0; j < joints; ++j) {
      if (!isFinite(frame.locals[j]))
        return Error{where + ": joint '" + skeleton.jointNames[j] + "' is not finite"};
    }
    for (std::size_t b = 0; b < replay.bodies.size(); ++b) {
      if (!isFinite(frame.worldFromBodies[b])) {
        return Error{where + ": body '" + replay.bodies[b].name + "' is not finite"};
      }
    }
  }
  if (replay.mesh) {
    const SkinnedMesh& mesh = *replay.mesh;
    const std::string where = "replay '" + replay.name + "' mesh '" + mesh.name + "'";
    const std::size_t vertices = mesh.positions.size();
    if (vertices == 0 || mesh.indices.empty() || mesh.indices.size() % 3 != 0) {
      return Error{where + ": needs vertices and whole triangles"};
    }
    if (!mesh.normals.empty() && mesh.normals.size() != vertices) return Error{where + ": normal count"};
    if (mesh.jointIndices.size() != 4 * vertices || mesh.jointWeights.size() != 4 * vertices) {
      return Error{where + ": needs 4 joint indices and weights per vertex"};
    }
    if (mesh.inverseBind.size() != joints) {
      return Error{where + ": needs one inverse bind transform per skeleton joint"};
    }
    for (std::uint32_t index : mesh.indices) {
      if (index >= vertices) return Error{where + ": index " + std::to_string(index) + " out of range"};
    }
    for (std::uint16_t joint : mesh.jointIndices) {
      if (joint >= joints) return Error{where + ": joint index " + std::to_string(joint) + " out of range"};
    }
  }
  return {};
}

/// Frame index of an event: the first frame at or after its time (the last frame when later).
int eventFrame(const Replay& replay, double time) {
  const auto it = std::lower_bound(replay.frames.begin(), replay.frames.end(), time - 1e-9,
                                   [](const ReplayFrame& f, double t) { return f.time < t; });
  if (it == replay.frames.end()) return static_cast<int>(replay.frames.size()) - 1;
  return static_cast<int>(it - replay.frames.begin());
}

/// The root body: the one no joint has as its child (the pelvis for a humanoid).
int rootBody(const Replay& replay) {
  for (std::size_t b = 0; b < replay.bodies.size(); ++b) {
    const bool isChild = std::any_of(replay.joints.begin(), replay.joints.end(), [&](const ReplayJoint& j) {
      return j.childBody == static_cast<int>(b);
    });
    if (!isChild) return static_cast<int>(b);
  }
  return replay.bodies.empty() ? -1 : 0;
}

json extrasJson(const Replay& replay, const std::vector<std::string>& bodyNodes,
                const std::string& meshNode) {
  const Skeleton& skeleton = replay.skeleton;
  json out;
  out["version"] = 1;
  out["name"] = replay.name;
  out["frameRate"] = replay.frameRate;
  out["frameCount"] = replay.frames.size();
  out["authorityNames"] = json::array({"animated", "ragdoll", "powered", "recovering"});

  json skeletonJson;
  skeletonJson["joints"] = skeleton.jointNames;
  skeletonJson["parents"] = skeleton.parents;
  out["skeleton"] = std::move(skeletonJson);
  out["rootBody"] = rootBody(replay);
  out["mesh"] = meshNode;

  json bodies = json::array();
  for (std::size_t b = 0; b < replay.bodies.size(); ++b) {
    const ReplayBody& body = replay.bodies[b];
    bodies.push_back(json{{"name", body.name},
                          {"node", bodyNodes[b]},
                          {"joint", body.joint},
                          {"bone", skeleton.jointNames[static_cast<std::size_t>(body.joint)]},
                          {"shape",
                           {{"type", shapeTypeName(body.shape.type)},
                            {"radius", body.shape.radius},
                            {"halfHeight", body.shape.halfHeight},
                            {"halfExtents", vec3Json(body.shape.halfExtents)}}},
                          {"boneFromBody", transformJson(body.boneFromBody)}});
  }
  out["bodies"] = std::move(bodies);

  json joints = json::array();
  for (const ReplayJoint& joint : replay.joints) {
    joints.push_back(json{{"name", joint.name},
                          {"parentBody", joint.parentBody},
                          {"childBody", joint.childBody},
                          {"bodyAFromJoint", transformJson(joint.bodyAFromJoint)},
                          {"bodyBFromJoint", transformJson(joint.bodyBFromJoint)},
                          {"lower", vec3Json(joint.angularLower)},
                          {"upper", vec3Json(joint.angularUpper)}});
  }
  out["joints"] = std::move(joints);
  out["capsule"] = json{{"node", "capsule"},
                        {"radius", replay.capsule.radius},
                        {"halfHeight", replay.capsule.halfHeight},
                        {"bindCenter", vec3Json(replay.capsule.bindCenter)}};
  out["groundHeight"] = replay.groundHeight;
  json boxes = json::array();
  for (std::size_t i = 0; i < replay.boxes.size(); ++i) {
    boxes.push_back(json{{"node", "static:" + std::to_string(i)},
                         {"worldFromBox", transformJson(replay.boxes[i].worldFromBox)},
                         {"halfExtents", vec3Json(replay.boxes[i].halfExtents)}});
  }
  out["boxes"] = std::move(boxes);
  json levelMeshes = json::array();
  for (std::size_t i = 0; i < replay.staticMeshes.size(); ++i) {
    levelMeshes.push_back(json{{"node", "level:" + std::to_string(i)},
                               {"name", replay.staticMeshes[i].name},
                               {"triangles", replay.staticMeshes[i].indices.size() / 3}});
  }
  if (!levelMeshes.empty()) out["levelMeshes"] = std::move(levelMeshes);

  json times = json::array(), states = json::array(), authority = json::array(), capsule = json::array(),
       contacts = json::array();
  json figures = {{"pelvisHeight", json::array()},    {"pelvisSpeed", json::array()},
                  {"maxJointStretch", json::array()}, {"settleWindow", json::array()},
                  {"blendWeight", json::array()},     {"driveWeight", json::array()},
                  {"contactPoints", json::array()},   {"activeBodies", json::array()}};
  for (const ReplayFrame& frame : replay.frames) {
    times.push_back(frame.time);
    states.push_back(frame.state);
    json a = json::array();
    for (std::size_t b = 0; b < replay.bodies.size(); ++b) {
      a.push_back(frame.authority.empty() ? 0 : static_cast<int>(frame.authority[b]));
    }
    authority.push_back(std::move(a));
    capsule.push_back(frame.capsuleEnabled);
    json c = json::array();
    for (const Vec3& p : frame.contacts) c.push_back(vec3Json(p));
    contacts.push_back(std::move(c));
    const ReplayFigures& f = frame.figures;
    figures["pelvisHeight"].push_back(f.pelvisHeight);
    figures["pelvisSpeed"].push_back(f.pelvisSpeed);
    figures["maxJointStretch"].push_back(f.maxJointStretch);
    figures["settleWindow"].push_back(f.settleWindow);
    figures["blendWeight"].push_back(f.blendWeight);
    figures["driveWeight"].push_back(f.driveWeight);
    figures["contactPoints"].push_back(f.contactPoints);
    figures["activeBodies"].push_back(f.activeBodies);
  }
  out["times"] = std::move(times);
  out["states"] = std::move(states);
  out["authority"] = std::move(authority);
  out["capsuleEnabled"] = std::move(capsule);
  out["contacts"] = std::move(contacts);
  out["figures"] = std::move(figures);

  json events = json::array();
  for (const ReplayEvent& event : replay.events) {
    events.push_back(json{{"time", event.time},
                          {"frame", eventFrame(replay, event.time)},
                          {"kind", event.kind},
                          {"detail", event.detail}});
  }
  out["events"] = std::move(events);
  return out;
}

std::uint32_t readU32(const std::string& s, std::size_t at) {
  std::uint32_t v = 0;
  std::memcpy(&v, s.data() + at, 4);  // glb is little-endian, as every platform we build on
  return v;
}
void appendU32(std::string& s, std::uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }

/// Puts `extras` into scenes[0].extras.handoff of a glb held in memory (tinygltf's own extras
/// serialisation turns empty arrays into null, so the JSON chunk is rewritten with nlohmann).
Result<std::string> injectExtras(const std::string& glb, json extras) {
  if (glb.size() < 20 || glb.compare(0, 4, "glTF") != 0) return Error{"internal: tinygltf wrote no glb"};
  const std::uint32_t jsonLength = readU32(glb, 12);
  if (readU32(glb, 16) != 0x4E4F534Au || 20 + static_cast<std::size_t>(jsonLength) > glb.size()) {
    return Error{"internal: malformed glb from tinygltf"};
  }
  json document = json::parse(glb.substr(20, jsonLength));
  document["scenes"][0]["extras"]["handoff"] = std::move(extras);
  std::string text = document.dump(-1, ' ', false, json::error_handler_t::replace);
  while (text.size() % 4 != 0) text.push_back(' ');
  const std::string rest = glb.substr(20 + jsonLength);  // the BIN chunk, already padded

  std::string out = "glTF";
  appendU32(out, 2);
  appendU32(out, static_cast<std::uint32_t>(12 + 8 + text.size() + rest.size()));
  appendU32(out, static_cast<std::uint32_t>(text.size()));
  appendU32(out, 0x4E4F534Au);  // "JSON"
  out += text;
  out += rest;
  return out;
}

Status writeImpl(const Replay& replay, const std::string& path) {
  if (Status s = checkReplay(replay); !s) return s;
  const Skeleton& skeleton = replay.skeleton;
  const std::size_t jointCount = static_cast<std::size_t>(skeleton.jointCount());
  const std::size_t frameCount = replay.frames.size();
  ModelBuilder builder;
  tinygltf::Model& model = builder.model();

  // Materials, created on first use (an unused one is a validator finding).
  int bodyMaterialIndex = -1, staticMaterialIndex = -1;
  const auto bodyMaterial = [&] {
    if (bodyMaterialIndex < 0) bodyMaterialIndex = builder.addMaterial("body", {0.25, 0.45, 0.85, 1.0});
    return bodyMaterialIndex;
  };
  const auto staticMaterial = [&] {
    if (staticMaterialIndex < 0) staticMaterialIndex = builder.addMaterial("static", {0.6, 0.5, 0.4, 1.0});
    return staticMaterialIndex;
  };

  // Skeleton nodes first: node index = joint index.
  std::vector<NodeTrack> tracks;
  std::vector<int> sceneNodes;
  for (std::size_t j = 0; j < jointCount; ++j) {
    tinygltf::Node node;
    node.name = skeleton.jointNames[j];
    builder.addNode(node);
    const int parent = skeleton.parents[j];
    if (parent == kNoParent) {
      sceneNodes.push_back(static_cast<int>(j));
    } else {
      model.nodes[static_cast<std::size_t>(parent)].children.push_back(static_cast<int>(j));
    }
    tracks.push_back(NodeTrack{static_cast<int>(j), {}, {}, Quat{1.0, 0.0, 0.0, 0.0}});
  }
  for (const ReplayFrame& frame : replay.frames) {
    for (std::size_t j = 0; j < jointCount; ++j) {
      tracks[j].push(skeleton.parents[j] == kNoParent ? frame.worldFromRoot * frame.locals[j]
                                                      : frame.locals[j]);
    }
  }

  // The skin.
  std::string meshNodeName;
  if (replay.mesh) {
    const SkinnedMesh& mesh = *replay.mesh;
    MeshData data;
    for (std::size_t v = 0; v < mesh.positions.size(); ++v) {
      data.addVertex(mesh.positions[v], mesh.normals.empty() ? Vec3{0.0, 1.0, 0.0} : mesh.normals[v]);
    }
    data.indices = mesh.indices;
    std::vector<float> weights(mesh.jointWeights.begin(), mesh.jointWeights.end());
    std::vector<std::uint16_t> jointIndices = mesh.jointIndices;
    for (std::size_t v = 0; v < mesh.positions.size(); ++v) {
      float sum = 0.0f;
      for (std::size_t k = 0; k < 4; ++k) {
        if (!(weights[4 * v + k] > 0.0f) || !std::isfinite(weights[4 * v + k])) {
          weights[4 * v + k] = 0.0f;
          jointIndices[4 * v + k] = 0;
        }
        sum += weights[4 * v + k];
      }
      if (sum > 0.0f) {
        for (std::size_t k = 0; k < 4; ++k) weights[4 * v + k] /= sum;
      } else {
        weights[4 * v] = 1.0f;  // an unweighted vertex follows the first root
      }
    }
    const int meshIndex = builder.addMesh(mesh.name.empty() ? "skin" : mesh.name, data,
                                          builder.addMaterial("skin", {0.8, 0.7, 0.62, 1.0}));
    tinygltf::Primitive& primitive = model.meshes[static_cast<std::size_t>(meshIndex)].primitives[0];
    primitive.attributes["JOINTS_0"] = builder.addJointIndices(jointIndices);
    primitive.attributes["WEIGHTS_0"] =
        builder.addFloats(weights, TINYGLTF_TYPE_VEC4, 4, kArrayBuffer, false);

    std::vector<float> inverseBind;
    inverseBind.reserve(16 * jointCount);
    for (const Transform& t : mesh.inverseBind) {
      glm::dmat4 m = glm::mat4_cast(normalizeOrIdentity(t.rotation));
      m[3] = glm::dvec4(t.translation, 1.0);
      for (int c = 0; c < 4; ++c) {
        for (int r = 0; r < 4; ++r) inverseBind.push_back(static_cast<float>(m[c][r]));  // column-major
      }
    }
    tinygltf::Skin skin;
    skin.name = "skeleton";
    skin.inverseBindMatrices = builder.addFloats(inverseBind, TINYGLTF_TYPE_MAT4, 16, kNoTarget, false);
    skin.skeleton = sceneNodes.front();
    for (std::size_t j = 0; j < jointCount; ++j) skin.joints.push_back(static_cast<int>(j));
    model.skins.push_back(skin);

    tinygltf::Node node;
    meshNodeName = "skin:" + (mesh.name.empty() ? std::string("mesh") : mesh.name);
    node.name = meshNodeName;
    node.mesh = meshIndex;
    node.skin = 0;
    sceneNodes.push_back(builder.addNode(node));
  }

  // Bodies.
  std::vector<std::string> bodyNodes;
  for (std::size_t b = 0; b < replay.bodies.size(); ++b) {
    const ReplayBody& body = replay.bodies[b];
    tinygltf::Node node;
    node.name = "body:" + body.name;
    bodyNodes.push_back(node.name);
    const MeshData shape = shapeMesh(body.shape);
    if (!shape.indices.empty()) node.mesh = builder.addMesh("shape:" + body.name, shape, bodyMaterial());
    const int index = builder.addNode(node);
    sceneNodes.push_back(index);
    NodeTrack track{index, {}, {}, Quat{1.0, 0.0, 0.0, 0.0}};
    for (const ReplayFrame& frame : replay.frames) track.push(frame.worldFromBodies[b]);
    tracks.push_back(std::move(track));
  }

  // Capsule: scale 1 while enabled, 0 while disabled.
  int capsuleNode = -1;
  std::vector<float> capsuleScale;
  {
    tinygltf::Node node;
    node.name = "capsule";
    MeshData data;
    addCapsule(data, replay.capsule.radius, replay.capsule.halfHeight);
    node.mesh = builder.addMesh("capsule", data, builder.addMaterial("capsule", {0.3, 0.8, 0.9, 0.25}, true));
    capsuleNode = builder.addNode(node);
    sceneNodes.push_back(capsuleNode);
    NodeTrack track{capsuleNode, {}, {}, Quat{1.0, 0.0, 0.0, 0.0}};
    for (const ReplayFrame& frame : replay.frames) {
      track.push(isFinite(frame.worldFromCapsule) ? frame.worldFromCapsule : Transform{});
      const float s = frame.capsuleEnabled ? 1.0f : 0.0f;
      capsuleScale.insert(capsuleScale.end(), {s, s, s});
    }
    tracks.push_back(std::move(track));
  }

  // Ground: a quad under everything that moves, and the static boxes.
  {
    Vec3 lo{std::numeric_limits<double>::infinity()}, hi{-std::numeric_limits<double>::infinity()};
    for (const ReplayFrame& frame : replay.frames) {
      const Vec3 root = (frame.worldFromRoot * frame.locals[0]).translation;
      lo = glm::min(lo, root);
      hi = glm::max(hi, root);
      for (const Transform& t : frame.worldFromBodies) {
        lo = glm::min(lo, t.translation);
        hi = glm::max(hi, t.translation);
      }
    }
    for (const ReplayStaticBox& box : replay.boxes) {
      lo = glm::min(lo, box.worldFromBox.translation);
      hi = glm::max(hi, box.worldFromBox.translation);
    }
    const Vec3 centre = 0.5 * (lo + hi);
    // Square, whole metres on a side, 3 m beyond the motion and at least 10 m wide.
    const double half = std::ceil(std::max({5.0, 0.5 * (hi.x - lo.x) + 3.0, 0.5 * (hi.z - lo.z) + 3.0}));
    MeshData data;
    addQuad(data, Vec3{centre.x, replay.groundHeight, centre.z}, Vec3{0.0, 0.0, half}, Vec3{half, 0.0, 0.0});
    tinygltf::Node node;
    node.name = "ground";
    node.mesh = builder.addMesh("ground", data, builder.addMaterial("ground", {0.55, 0.55, 0.52, 1.0}));
    sceneNodes.push_back(builder.addNode(node));
  }
  for (std::size_t i = 0; i < replay.boxes.size(); ++i) {
    const ReplayStaticBox& box = replay.boxes[i];
    MeshData data;
    addBox(data, box.halfExtents);
    tinygltf::Node node;
    node.name = "static:" + std::to_string(i);
    node.mesh = builder.addMesh(node.name, data, staticMaterial());
    node.translation = vec3Vector(box.worldFromBox.translation);
    node.rotation = quatVector(normalizeOrIdentity(box.worldFromBox.rotation));
    sceneNodes.push_back(builder.addNode(node));
  }

  for (std::size_t i = 0; i < replay.staticMeshes.size(); ++i) {
    const ReplayStaticMesh& mesh = replay.staticMeshes[i];
    // Flat shading: three vertices of its own per triangle, with the face normal.
    MeshData data;
    for (std::size_t k = 0; k + 2 < mesh.indices.size(); k += 3) {
      const std::array<std::uint32_t, 3> corner{mesh.indices[k], mesh.indices[k + 1], mesh.indices[k + 2]};
      const Vec3 &a = mesh.vertices[corner[0]], &b = mesh.vertices[corner[1]], &c = mesh.vertices[corner[2]];
      const Vec3 cross = glm::cross(b - a, c - a);
      const double length = glm::length(cross);
      const Vec3 n = length > 0.0 ? cross / length : Vec3{0.0, 1.0, 0.0};
      for (const Vec3* p : {&a, &b, &c}) data.indices.push_back(data.addVertex(*p, n));
    }
    if (data.indices.empty()) continue;
    tinygltf::Node node;
    node.name = "level:" + std::to_string(i);
    node.mesh = builder.addMesh(node.name, data, staticMaterial());
    node.translation = vec3Vector(mesh.worldFromMesh.translation);
    node.rotation = quatVector(normalizeOrIdentity(mesh.worldFromMesh.rotation));
    sceneNodes.push_back(builder.addNode(node));
  }

  // The animation.
  tinygltf::Animation animation;
  animation.name = "replay";
  std::vector<float> times;
  times.reserve(frameCount);
  for (const ReplayFrame& frame : replay.frames) times.push_back(static_cast<float>(frame.time));
  for (std::size_t f = 1; f < frameCount; ++f) {
    if (!(times[f] > times[f - 1])) {
      return Error{"replay '" + replay.name + "': frame times " + std::to_string(replay.frames[f - 1].time) +
                   " and " + std::to_string(replay.frames[f].time) + " are equal in single precision"};
    }
  }
  const int input = builder.addFloats(times, TINYGLTF_TYPE_SCALAR, 1, kNoTarget, true);
  const auto addChannel = [&](int node, const char* pathName, int output, const char* interpolation) {
    tinygltf::AnimationSampler sampler;
    sampler.input = input;
    sampler.output = output;
    sampler.interpolation = interpolation;
    animation.samplers.push_back(sampler);
    tinygltf::AnimationChannel channel;
    channel.sampler = static_cast<int>(animation.samplers.size() - 1);
    channel.target_node = node;
    channel.target_path = pathName;
    animation.channels.push_back(channel);
  };
  for (const NodeTrack& track : tracks) {
    addChannel(track.node, "translation",
               builder.addFloats(track.translations, TINYGLTF_TYPE_VEC3, 3, kNoTarget, false), "LINEAR");
    addChannel(track.node, "rotation",
               builder.addFloats(track.rotations, TINYGLTF_TYPE_VEC4, 4, kNoTarget, false), "LINEAR");
    // The rest pose of every animated node is its first frame (what a static viewer shows).
    tinygltf::Node& node = model.nodes[static_cast<std::size_t>(track.node)];
    node.translation = {track.translations[0], track.translations[1], track.translations[2]};
    node.rotation = {track.rotations[0], track.rotations[1], track.rotations[2], track.rotations[3]};
  }
  addChannel(capsuleNode, "scale", builder.addFloats(capsuleScale, TINYGLTF_TYPE_VEC3, 3, kNoTarget, false),
             "STEP");
  model.nodes[static_cast<std::size_t>(capsuleNode)].scale = {capsuleScale[0], capsuleScale[1],
                                                              capsuleScale[2]};
  model.animations.push_back(animation);

  tinygltf::Scene scene;
  scene.name = replay.name.empty() ? "replay" : replay.name;
  scene.nodes = sceneNodes;
  model.scenes.push_back(scene);
  model.defaultScene = 0;
  model.buffers[0].name = "replay";

  tinygltf::TinyGLTF writer;
  std::ostringstream stream;
  if (!writer.WriteGltfSceneToStream(&model, stream, false, true)) {
    return Error{"'" + path + "': tinygltf failed to serialise the replay"};
  }
  Result<std::string> glb = injectExtras(stream.str(), extrasJson(replay, bodyNodes, meshNodeName));
  if (!glb) return Error{"'" + path + "': " + glb.error()};

  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return Error{"cannot open '" + path + "' for writing"};
  file.write(glb->data(), static_cast<std::streamsize>(glb->size()));
  file.close();
  if (!file) return Error{"writing '" + path + "' failed"};
  return {};
}

}  // namespace

Status writeReplayGlb(const Replay& replay, const std::string& path) {
  try {
    return writeImpl(replay, path);
  } catch (const std::exception& e) {
    return Error{"writing replay '" + replay.name + "' to '" + path + "': " + e.what()};
  }
}

}  // namespace handoff
