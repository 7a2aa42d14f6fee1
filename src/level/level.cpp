// Level geometry from a glTF / GLB file (include/handoff/level.h).
//
// The file goes through the same glTF check and contained Assimp read as a character's
// (src/rig/gltf_read.h: bounds, external buffers, meshopt and Draco decoded before Assimp); this
// file walks the scene Assimp returns, node transforms applied, into plain triangles.
#include "handoff/level.h"

#include "handoff/rig.h"
#include "rig/gltf_read.h"

#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <assimp/Importer.hpp>
#include <glm/glm.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace handoff {
namespace {

/// Shortest edge of a kept triangle. [m]
constexpr double kMinEdge = 1e-6;
/// Smallest area of a kept triangle. [m^2]
constexpr double kMinArea = 1e-12;
/// Most vertices of one mesh (TriangleMeshDesc's bound, 2^24).
constexpr size_t kMaxMeshVertices = size_t{1} << 24;

std::string format(double value) {
  std::ostringstream out;
  out.precision(6);
  out << value;
  return out.str();
}

glm::dmat4 toGlm(const aiMatrix4x4& m) {
  glm::dmat4 out(1.0);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 4; ++c)
      out[c][r] = static_cast<double>(m[static_cast<unsigned>(r)][static_cast<unsigned>(c)]);
  }
  return out;
}

/// A node of the scene that carries meshes, with its transform into the level's space.
struct MeshNode {
  const aiNode* node = nullptr;
  glm::dmat4 levelFromNode{1.0};
};

/// Every node with meshes, depth first in file order (parents before children).
void collect(const aiNode* node, const glm::dmat4& parent, std::vector<MeshNode>& out, int depth) {
  if (node == nullptr || depth > 1024) return;  // the check bounds glTF nesting at 256 levels
  const glm::dmat4 global = parent * toGlm(node->mTransformation);
  if (node->mNumMeshes > 0) out.push_back({node, global});
  for (unsigned c = 0; c < node->mNumChildren; ++c) collect(node->mChildren[c], global, out, depth + 1);
}

/// The glTF node index of a name Assimp gave a node without one ("nodes[3]"), or -1.
long long generatedNodeIndex(const std::string& name) {
  constexpr std::string_view kPrefix = "nodes[";
  if (name.size() < kPrefix.size() + 2 || name.compare(0, kPrefix.size(), kPrefix) != 0 || name.back() != ']')
    return -1;
  const std::string digits = name.substr(kPrefix.size(), name.size() - kPrefix.size() - 1);
  if (digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
      }))
    return -1;
  return std::stoll(digits);
}

/// The node's name, or its mesh's when the file gave the node none.
std::string meshNodeName(const aiNode& node, const std::vector<std::string>& nodeMeshNames) {
  std::string name = node.mName.C_Str();
  const long long index = generatedNodeIndex(name);
  if (index >= 0 && static_cast<size_t>(index) < nodeMeshNames.size() &&
      !nodeMeshNames[static_cast<size_t>(index)].empty())
    name = nodeMeshNames[static_cast<size_t>(index)];
  return name;
}

size_t triangleFaces(const aiMesh& mesh) {
  size_t n = 0;
  for (unsigned f = 0; f < mesh.mNumFaces; ++f) n += mesh.mFaces[f].mNumIndices == 3 ? 1 : 0;
  return n;
}

bool finite(const Vec3& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

/// True when the triangle is kept: no edge shorter than kMinEdge, area at least kMinArea.
bool wellShaped(const Vec3& a, const Vec3& b, const Vec3& c) {
  const double shortest = std::min({glm::length(b - a), glm::length(c - b), glm::length(a - c)});
  const double area = 0.5 * glm::length(glm::cross(b - a, c - a));
  return shortest >= kMinEdge && area >= kMinArea;
}

Result<Level> buildLevel(const aiScene& scene, const std::string& source, const LevelOptions& options,
                         detail::GltfInfo info) {
  std::vector<MeshNode> nodes;
  collect(scene.mRootNode, glm::dmat4(1.0), nodes, 0);
  // The bound is checked on Assimp's counts, before anything is copied.
  size_t total = 0;
  for (const MeshNode& n : nodes) {
    for (unsigned m = 0; m < n.node->mNumMeshes; ++m) {
      if (n.node->mMeshes[m] < scene.mNumMeshes) total += triangleFaces(*scene.mMeshes[n.node->mMeshes[m]]);
    }
  }
  if (total > options.maxTriangles) {
    return Error{source + ": " + std::to_string(total) +
                 " triangles, more than LevelOptions::maxTriangles (" + std::to_string(options.maxTriangles) +
                 ")"};
  }
  Level level;
  level.source = source;
  level.warnings = std::move(info.warnings);
  bool anyVertex = false;
  for (const MeshNode& n : nodes) {
    LevelMesh out;
    out.name = meshNodeName(*n.node, info.nodeMeshNames);
    const glm::dmat4 transform = glm::dmat4(options.unitScale) * n.levelFromNode;
    size_t skipped = 0;
    for (unsigned m = 0; m < n.node->mNumMeshes; ++m) {
      if (n.node->mMeshes[m] >= scene.mNumMeshes) continue;
      const aiMesh& mesh = *scene.mMeshes[n.node->mMeshes[m]];
      if (triangleFaces(mesh) == 0) {  // points or lines only: their vertices are not the level's
        skipped += mesh.mNumFaces;
        continue;
      }
      if (out.vertices.size() + mesh.mNumVertices > kMaxMeshVertices) {
        return Error{source + ": mesh '" + out.name + "': more than " + std::to_string(kMaxMeshVertices) +
                     " vertices (a triangle mesh's most, TriangleMeshDesc)"};
      }
      const auto base = static_cast<std::uint32_t>(out.vertices.size());
      for (unsigned v = 0; v < mesh.mNumVertices; ++v) {
        const aiVector3D& p = mesh.mVertices[v];
        const glm::dvec4 q = transform * glm::dvec4(p.x, p.y, p.z, 1.0);
        const Vec3 vertex{q.x, q.y, q.z};
        if (!finite(vertex)) {
          return Error{source + ": mesh '" + out.name + "': vertex " + std::to_string(v) + " of primitive " +
                       std::to_string(m) + " is not a finite number (" + format(vertex.x) + ", " +
                       format(vertex.y) + ", " + format(vertex.z) + ") in the level's space"};
        }
        out.vertices.push_back(vertex);
      }
      for (unsigned f = 0; f < mesh.mNumFaces; ++f) {
        const aiFace& face = mesh.mFaces[f];
        if (face.mNumIndices != 3) {
          ++skipped;
          continue;
        }
        const std::uint32_t a = face.mIndices[0], b = face.mIndices[1], c = face.mIndices[2];
        if (a >= mesh.mNumVertices || b >= mesh.mNumVertices || c >= mesh.mNumVertices) {
          return Error{source + ": mesh '" + out.name + "': face " + std::to_string(f) +
                       " indexes past its primitive's " + std::to_string(mesh.mNumVertices) + " vertices"};
        }
        if (!wellShaped(out.vertices[base + a], out.vertices[base + b], out.vertices[base + c])) {
          ++level.droppedDegenerate;
          continue;
        }
        out.indices.insert(out.indices.end(), {base + a, base + b, base + c});
      }
    }
    if (skipped > 0) {
      level.warnings.push_back("mesh '" + out.name + "': " + std::to_string(skipped) +
                               " point or line primitives skipped (only triangles collide)");
    }
    if (out.indices.empty()) {
      level.warnings.push_back("mesh '" + out.name + "': no triangle left; omitted");
      continue;
    }
    for (const Vec3& v : out.vertices) {
      level.boundsMin = anyVertex ? glm::min(level.boundsMin, v) : v;
      level.boundsMax = anyVertex ? glm::max(level.boundsMax, v) : v;
      anyVertex = true;
    }
    level.meshes.push_back(std::move(out));
  }
  if (level.droppedDegenerate > 0) {
    level.warnings.push_back(
        std::to_string(level.droppedDegenerate) +
        " degenerate triangles dropped (an edge under 1e-6 m or an area under 1e-12 m^2)");
  }
  if (level.meshes.empty()) return Error{source + ": no triangle in the default scene"};
  return level;
}

/// GLB magic, or text whose first character that is not white space opens a JSON object.
bool looksLikeGltf(std::string_view bytes) {
  if (detail::isBinaryGltf(bytes)) return true;
  const size_t first = bytes.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && bytes[first] == '{';
}

}  // namespace

std::size_t Level::triangleCount() const {
  std::size_t n = 0;
  for (const LevelMesh& mesh : meshes) n += mesh.indices.size() / 3;
  return n;
}

Result<Level> loadLevel(const std::string& path, const LevelOptions& options) {
  if (!(options.unitScale > 0.0) || !std::isfinite(options.unitScale)) {
    return Error{path + ": LevelOptions::unitScale must be positive and finite, got " +
                 format(options.unitScale)};
  }
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return Error{path + ": file not found"};
  if (!std::filesystem::is_regular_file(status)) return Error{path + ": not a regular file"};
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return Error{path + ": cannot tell the file's size"};
  if (size > options.maxFileBytes) {
    return Error{path + ": " + std::to_string(size) + " bytes, more than LevelOptions::maxFileBytes (" +
                 std::to_string(options.maxFileBytes) + ")"};
  }
  try {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error{path + ": cannot open the file for reading"};
    std::string bytes(static_cast<size_t>(size), '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(size));
    if (in.gcount() != static_cast<std::streamsize>(size)) return Error{path + ": read error"};
    if (!looksLikeGltf(bytes)) {
      return Error{path + ": not a glTF or GLB file (neither the GLB magic 'glTF' nor a JSON object)"};
    }
    Assimp::Importer importer;
    detail::GltfInfo info;
    // Triangulate: Assimp's glTF reader gives strips and fans as triangles already, polygons of other
    // formats would be split; points and lines stay (and are skipped with a warning).
    Result<detail::ReadResult> read = detail::readGltf(importer, bytes, path, path, false,
                                                       detail::ParserLimits{}, aiProcess_Triangulate, info);
    if (!read) return Error{read.error()};
    if (read->scene == nullptr || read->scene->mRootNode == nullptr)
      return Error{path + ": Assimp read no scene"};
    Result<Level> level = buildLevel(*read->scene, path, options, std::move(info));
    if (!level) return Error{validUtf8(level.error())};
    return level;
  } catch (const std::bad_alloc&) {
    return Error{path + ": out of memory while loading the level"};
  } catch (const std::exception& e) {
    return Error{path + ": loading the level failed: " + e.what()};
  }
}

Result<std::vector<BodyId>> addLevel(PhysicsWorld& world, const Level& level,
                                     const LevelPlacement& placement) {
  // Checked here, whatever the engine checks: nothing is made from a placement that is wrong.
  const Transform& pose = placement.worldFromLevel;
  if (!isFinite(pose) || !(glm::dot(pose.rotation, pose.rotation) > 1e-12))
    return Error{level.source + ": LevelPlacement::worldFromLevel must be finite with a non-zero rotation"};
  if (!(std::isfinite(placement.friction) && placement.friction >= 0.0))
    return Error{level.source + ": LevelPlacement::friction must be finite and >= 0, got " +
                 format(placement.friction)};
  if (!(placement.restitution >= 0.0 && placement.restitution <= 1.0))
    return Error{level.source + ": LevelPlacement::restitution must be in [0, 1], got " +
                 format(placement.restitution)};
  std::vector<BodyId> bodies;
  bodies.reserve(level.meshes.size());
  const auto undo = [&](const std::string& message) -> Result<std::vector<BodyId>> {
    for (auto it = bodies.rbegin(); it != bodies.rend(); ++it) world.destroyBody(*it);
    return Error{message};
  };
  for (const LevelMesh& mesh : level.meshes) {
    const std::string what = level.source + ": mesh '" + mesh.name + "': ";
    Result<ShapeId> shape = world.createShape(TriangleMeshDesc{mesh.vertices, mesh.indices});
    if (!shape) return undo(what + shape.error());
    BodyDesc desc;
    desc.shape.created = *shape;
    desc.motion = MotionType::Static;
    desc.mass = 0.0;
    desc.worldFromBody = placement.worldFromLevel;
    desc.filter = placement.filter;
    desc.friction = placement.friction;
    desc.restitution = placement.restitution;
    desc.enableContinuousCollision = false;
    Result<BodyId> body = world.createBody(desc);
    // The body holds the shape: dropping the caller's reference frees it with the body.
    world.destroyShape(*shape);
    if (!body) return undo(what + body.error());
    bodies.push_back(*body);
  }
  return bodies;
}

}  // namespace handoff
