// Check of glTF 2.0 / GLB bytes before Assimp reads them (private to the rig module).
//
// Assimp 5.2 trusts a glTF file: a GLB's chunk lengths, an accessor that runs past its buffer
// view, a joint index past its skin, a node that is its own ancestor or an animation channel
// without a target node make it read out of bounds or crash (found by tests/fuzz/import_fuzz.cpp).
// checkGltf() verifies the container, the JSON, every index, every accessor's and buffer view's
// bounds and the index and joint values, naming the JSON path of the first problem. It decodes
// what Assimp 5.2 cannot read, EXT_meshopt_compression buffer views (meshoptimizer),
// KHR_draco_mesh_compression primitives (Draco) and the quantized attributes and keys of
// KHR_mesh_quantization and the meshopt filters, into a
// rewritten GLB; and it returns the humanoid bones a VRM file names, which Assimp drops.
#pragma once

#include "handoff/result.h"
#include "handoff/rig.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace handoff::detail {

struct GltfInfo {
  std::vector<HumanoidBone> humanoidBones;  ///< VRM humanBones, joints by node name.
  std::vector<std::string> warnings;
  /// Per glTF node (file order): the name of its mesh, empty for a node without a mesh or a mesh
  /// without a name. Assimp names a node without a name "nodes[<index>]" and its scene as read
  /// through the import worker carries no mesh names: a level names such a node by its mesh.
  std::vector<std::string> nodeMeshNames;
  /// A self-contained GLB for Assimp instead of the file (one buffer; meshopt buffer views and Draco
  /// primitives decoded;
  /// quantized vertex attributes and animation keys as floats; the two extensions removed; inverse
  /// bind matrices written out for skins without, from the joints' node pose; accessors without a
  /// buffer view as zeros; per-node animations on one timeline merged into one). Empty when the
  /// file is read as it is.
  std::string rewritten;
};

/// External buffers a file may read in all, and the bound of the meshopt data it may decode, when
/// the caller gives no lower one. [bytes]
inline constexpr std::uint64_t kMaxExternalBytes = std::uint64_t{1} << 30;

/// Checks GLB (`binary`) or glTF JSON bytes. `baseDir` is the directory that external buffer URIs
/// are relative to; empty for bytes held in memory, where an external buffer is an error.
/// `maxExternalBytes` bounds what the external buffers may hold in all (readGltf: the import
/// worker's memory limit, at most kMaxExternalBytes), checked against their byteLength before
/// any is read.
/// Errors: "<source>: <reason>" (bad magic, version or chunk length, JSON parse error, "<JSON
/// path>: <what is wrong>", a meshopt mode, filter or codec version that cannot be decoded).
Result<GltfInfo> checkGltf(std::string_view data, bool binary, const std::string& source,
                           const std::string& baseDir = {},
                           std::uint64_t maxExternalBytes = kMaxExternalBytes);

}  // namespace handoff::detail
