// Import of skeletons and clips through Assimp (BVH, glTF/GLB, FBX, COLLADA).
//
// What comes back, whatever the format:
// - Model space (R) is Y up and in metres. FBX's UpAxis/UpAxisSign metadata is converted to +Y;
//   Assimp already turns COLLADA's up_axis (and <unit>) into a root node transform, which is baked
//   like any node above the skeleton (below). glTF is Y up. BVH declares no up axis: it is
//   inferred from the legs (the longest pair of parallel sibling chains points down), so Z-up
//   files (MakeHuman, Blender exports) come in standing.
// - The bind pose: where a skin's inverse bind matrices disagree with the node transforms (a file
//   saved in an animated pose), the skin is the bind pose: bindGlobal = meshNode * inverse(IBM).
// - A BVH whose zero-rotation pose is a straight stick (offsets along each bone's local X, the
//   pose only in the motion: Bandai-Namco, LAFAN1, Rokoko style) takes its rest pose and up axis
//   from the motion's first upright frame (legs along the axis most frames' legs point along).
// - The skeleton: the skin joints of all skinned meshes, merged by node (RobotExpressive's two
//   skins give one 43-joint skeleton), plus animated nodes inside that subtree; without skins,
//   the animated nodes (a BVH's joints). The ancestors needed to connect them into one tree are
//   added; the root joint is their lowest common ancestor. Joints are in depth-first file order
//   (parents[i] < i). A node name shared with a mesh node resolves to the node without meshes.
// - Transforms of the nodes above the root joint (an armature's scale 100 and -90 degree turn
//   about X, COLLADA's up-axis rotation, an animated FBX armature) are baked into the root's rest
//   transform and every key of the root. Scale is baked into translations (Transform carries
//   none): joint positions stay exact; a non-uniform scale leaves a warning and the rotation is
//   orthonormalised.
// - End sites: a joint without child joints takes its first leaf child node without meshes as
//   its tip (BVH "End Site", which Assimp names "EndSite_<joint>"; Blender's "<bone>_end").
//   End sites are not joints.
// - Clips: one per aiAnimation, on a uniform grid; joints without a channel keep their rest
//   local transform; rotations are hemisphere-continuous along each joint's track.
//
// Thread-safety: the import functions may run concurrently on different files (see
// importFileData); the returned data is plain and owned by the caller.
#pragma once

#include "handoff/result.h"
#include "handoff/rig.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace handoff {

struct ImportOptions {
  /// Metres per file unit. 0 = auto-detect from the rest hip height (a humanoid's hip stands
  /// 0.7-1.2 m high; centimetre and inch files are recognised). [> 0 or 0] [default 0]
  ///
  /// Auto: the unit the format declares when it declares one (glTF: metres; FBX:
  /// UnitScaleFactor centimetres per unit, or, when that puts the hip out of human range and the
  /// power-of-ten scale of the armature above the skeleton taken as the conversion puts it inside,
  /// UnitScaleFactor / that scale; COLLADA: <unit>, applied by Assimp), else (BVH) the
  /// one of metres, centimetres, inches, decimetres and millimetres that puts the rest hip height
  /// nearest 0.95 m; when the rest pose has no height (all offsets in one plane) the first
  /// frame's pose is measured. A value > 0 is applied as given, whatever the format declares.
  double unitScale = 0.0;
  /// Rate at which clips with irregular keys (glTF, FBX) are resampled. [Hz] [default 60]
  /// frameCount = ceil(duration * rate) + 1 and frameRate = (frameCount - 1) / duration, so the
  /// last frame falls exactly on the duration. BVH keeps its own frames and rate (1 / Frame Time,
  /// snapped to the nearest whole rate when within 1e-4 of it: ".0083333" is 120 Hz).
  double resampleRate = 60.0;
  /// Refuse a declared or auto-detected unit that puts the rest hip outside kHumanHipRange (a
  /// character out of human scale, e.g. a 5 m glTF): the error names the measured hip and the
  /// unitScale that gives a 0.95 m hip. Skeletons without a measurable hip (no legs) and an
  /// explicit unitScale are never refused. [default true]
  bool requireHumanScale = true;
  /// Read glTF, FBX, COLLADA and BVH files with Assimp in a process of its own, the program
  /// handoff-import-worker (started with posix_spawn, never a fork: safe in a program with many
  /// threads): a crash, a hang or a runaway allocation of Assimp 5.2 on a malformed file that the
  /// format checks do not catch is then an error naming the file, not the end of the calling
  /// program. The worker sends the scene back in Assimp's binary format. false reads in the
  /// calling process. [default true]
  bool isolateParser = true;
  /// The worker program (isolateParser). Empty: $HANDOFF_IMPORT_WORKER, else the build tree's, else
  /// handoff-import-worker next to the running program or in ../libexec/handoff from it, else the
  /// installed one (<prefix>/libexec/handoff). A worker found nowhere is an error naming the
  /// places looked at. [default empty]
  std::string parserWorker;
  /// Wall time the isolated parser may take before it is stopped. [s] [> 0] [default 300]
  double parserTimeLimit = 300.0;
  /// Resident memory the isolated parser's process may use before it is stopped.
  /// [MiB] [> 0] [default 4096]
  double parserMemoryLimit = 4096.0;
};

/// Rest hip heights a human-scale character may have: outside it an auto-detected or declared unit
/// is refused (ImportOptions::requireHumanScale). [m] [0.3, 1.6] (docs/TUNING.md: where the
/// range comes from and what the shipped rigs measure).
inline constexpr double kHumanHipMin = 0.3;
inline constexpr double kHumanHipMax = 1.6;

/// A skinned triangle mesh bound to the skeleton (bind pose, metres, model space).
/// The bind pose is the skeleton's rest pose: vertices are skinned into it once at import, so
/// skinning with a pose is sum_i weight_i * (model_i * inverseBind_i) * position. A rigid mesh
/// parented to a joint (most of RobotExpressive) comes as a mesh with one influence of weight 1.
struct SkinnedMesh {
  std::string name;
  std::vector<Vec3> positions;              ///< [m]
  std::vector<Vec3> normals;                ///< Unit length.
  std::vector<std::uint32_t> indices;       ///< Triangles.
  std::vector<std::uint16_t> jointIndices;  ///< 4 per vertex, into the skeleton.
  std::vector<float> jointWeights;          ///< 4 per vertex, summing to 1 (the 4 largest kept).
  std::vector<Transform> inverseBind;       ///< Per skeleton joint: jointFromModel at bind time.
};

/// What one file brings: a skeleton in metres, its clips (possibly none) and meshes.
struct ImportedAsset {
  std::string sourcePath;
  Skeleton skeleton;
  /// glTF/FBX/COLLADA: named after the animation; BVH: one clip named after the file's stem.
  std::vector<Clip> clips;
  std::vector<SkinnedMesh> meshes;
  double unitScale = 1.0;          ///< Metres per file unit that was applied.
  bool unitScaleDetected = false;  ///< True when unitScale was auto-detected.
  /// Rest pose hip height after scaling: restHipHeight(); when its pelvis (the first joint with
  /// three children) stands in the lowest tenth of the skeleton's height (a floor-level control
  /// root, as RobotExpressive's "Bone"), the first joint with three children above a quarter of
  /// the height is measured instead. [m]
  double hipHeight = 0.0;
  /// Humanoid bones the file names itself (VRM 0.x `VRM.humanoid.humanBones`, VRM 1.0
  /// `VRMC_vrm.humanoid.humanBones`), empty when it names none. Joints are skeleton joint names.
  std::vector<HumanoidBone> humanoidBones;
  std::vector<std::string> warnings;
};

/// Loads a file. Errors name the file and the reason (missing file, no skeleton, malformed
/// BVH with the line number ...); never returns a half-filled skeleton.
/// BVH text (".bvh", or any file starting with HIERARCHY) is checked line by line before Assimp
/// reads it, and its keys are computed from the text in double precision.
Result<ImportedAsset> importFile(const std::string& path, const ImportOptions& options = {});

/// Same for a file's bytes held in memory (`sourceName`'s extension picks the format: .bvh, .glb,
/// .gltf with embedded buffers, .vrm, .fbx, .dae; used in messages).
///
/// Before Assimp reads a file it is checked (docs/RIGS.md): glTF/GLB's container, JSON, indices,
/// accessor and buffer view bounds, index and joint values and the node tree; FBX's header,
/// version and binary node records (or ASCII tokens); COLLADA's XML and the counts and numbers of
/// its arrays and index lists. A problem is an error naming the JSON path, byte offset or XML
/// element. EXT_meshopt_compression buffer views and quantized data (KHR_mesh_quantization, meshopt
/// filters) are decoded with meshoptimizer first, since Assimp 5.2 reads neither; a meshopt mode,
/// filter or codec version meshoptimizer 0.18 cannot decode is an error naming it.
/// Thread-safety: the import functions may run concurrently on different files; with
/// isolateParser each read starts a worker process.
Result<ImportedAsset> importFileData(std::string_view data, const std::string& sourceName,
                                     const ImportOptions& options = {});

/// Same for BVH text held in memory (`sourceName` is used in messages).
Result<ImportedAsset> importBvhText(std::string_view text, const std::string& sourceName,
                                    const ImportOptions& options = {});

}  // namespace handoff
