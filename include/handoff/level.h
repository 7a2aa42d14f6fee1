// Level geometry from a glTF / GLB file: the static triangle meshes a game's level is made of
// (floors, stairs, ramps, walls), read into plain triangles and added to a PhysicsWorld as static
// triangle-mesh bodies, so ragdolls fall down a level's own stairs.
//
// What comes back:
// - Every TRIANGLES-mode primitive of every mesh node of the file's default scene (the first
//   scene when none is marked), with its node's world transform (the product of the node chain)
//   applied: vertices in the level's space, metres, Y up (glTF's own convention: a file's nodes
//   carry any unit scale). Points, lines and strips other than triangle strips/fans are skipped
//   with a warning naming the mesh; skinned and morph-target meshes take their bind shape.
// - Compressed files: EXT_meshopt_compression / KHR_mesh_quantization are decoded with
//   meshoptimizer, KHR_draco_mesh_compression with Draco, before Assimp reads the file (Assimp 5.2
//   reads neither).
// - Degenerate triangles (an edge shorter than 1e-6 m or an area below 1e-12 m^2) are dropped
//   and counted; non-finite vertices are an error naming the mesh.
// - The same checks as importFile: file size, external buffers and the decoded data are bounded
//   (LevelOptions), and every error names the file and, where there is one, the mesh.
//
// Thread-safety: loadLevel may run concurrently on different files; Level is plain data owned by
// the caller. addLevel mutates the world it is given (the world's own rules apply).
#pragma once

#include "handoff/math.h"
#include "handoff/physics.h"
#include "handoff/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace handoff {

/// One mesh of a level, all its triangle primitives merged, in the level's space.
struct LevelMesh {
  std::string name;                    ///< The node's name (or the mesh's when the node has none).
  std::vector<Vec3> vertices;          ///< [m] finite
  std::vector<std::uint32_t> indices;  ///< 3 per triangle, each < vertices.size()
};

struct Level {
  std::string source;                 ///< The file it was read from, as given.
  std::vector<LevelMesh> meshes;      ///< In file order; meshes with no triangle left are omitted.
  Vec3 boundsMin{0.0};                ///< Axis-aligned bounds of every vertex. [m]
  Vec3 boundsMax{0.0};                ///< [m]
  std::size_t droppedDegenerate = 0;  ///< Degenerate triangles dropped.
  std::vector<std::string> warnings;  ///< What was skipped and why.

  std::size_t triangleCount() const;
};

struct LevelOptions {
  /// Metres per file unit, applied after the node transforms. [> 0] [default 1: glTF is metres]
  double unitScale = 1.0;
  /// Largest file accepted. [bytes] [default 512 MiB]
  std::uint64_t maxFileBytes = 512ull << 20;
  /// Most triangles accepted over all meshes (a bound on memory: 36 bytes a triangle as read,
  /// about as much again inside the engine). [default 4,000,000]
  std::size_t maxTriangles = 4'000'000;
};

/// Reads the static triangle meshes of a glTF (.gltf with its buffers beside it) or GLB file.
/// Errors: unreadable or oversized file, not glTF, no triangle in the default scene, a bound of
/// `options` passed, a non-finite vertex, an extension it cannot decode (named).
Result<Level> loadLevel(const std::string& path, const LevelOptions& options = {});

/// Where and how a level goes into a world.
struct LevelPlacement {
  Transform worldFromLevel;  ///< [default identity]
  double friction = 0.8;     ///< [>= 0] [default 0.8, as the scenario ground]
  double restitution = 0.0;  ///< [0, 1] [default 0]
  /// [default layer kStatic, mask kAll]
  CollisionFilter filter{layers::kStatic, layers::kAll};
};

/// Adds each mesh of `level` to `world` as one static triangle-mesh body (createShape +
/// createBody), in mesh order. Returns the bodies; on an error nothing stays added.
Result<std::vector<BodyId>> addLevel(PhysicsWorld& world, const Level& level,
                                     const LevelPlacement& placement = {});

}  // namespace handoff
