// Import of skeletons and clips through Assimp (BVH, glTF/GLB, FBX, COLLADA).
#pragma once

#include "handoff/result.h"
#include "handoff/rig.h"

#include <optional>
#include <string>
#include <vector>

namespace handoff {

struct ImportOptions {
  /// Metres per file unit. 0 = auto-detect from the rest hip height (a humanoid's hip stands
  /// 0.7-1.2 m high; centimetre and inch files are recognised). [> 0 or 0] [default 0]
  double unitScale = 0.0;
  /// Rate at which clips with irregular keys (glTF, FBX) are resampled. [Hz] [default 60]
  double resampleRate = 60.0;
};

/// A skinned triangle mesh bound to the skeleton (bind pose, metres, model space).
struct SkinnedMesh {
  std::string name;
  std::vector<Vec3> positions;
  std::vector<Vec3> normals;
  std::vector<std::uint32_t> indices;       ///< Triangles.
  std::vector<std::uint16_t> jointIndices;  ///< 4 per vertex, into the skeleton.
  std::vector<float> jointWeights;          ///< 4 per vertex, summing to 1.
  std::vector<Transform> inverseBind;       ///< Per skeleton joint: jointFromModel at bind time.
};

/// What one file brings: a skeleton in metres, its clips (possibly none) and meshes.
struct ImportedAsset {
  std::string sourcePath;
  Skeleton skeleton;
  std::vector<Clip> clips;
  std::vector<SkinnedMesh> meshes;
  double unitScale = 1.0;          ///< Metres per file unit that was applied.
  bool unitScaleDetected = false;  ///< True when unitScale was auto-detected.
  double hipHeight = 0.0;          ///< Rest pose hip height after scaling. [m]
  std::vector<std::string> warnings;
};

/// Loads a file. Errors name the file and the reason (missing file, no skeleton, malformed
/// BVH with the line number ...); never returns a half-filled skeleton.
Result<ImportedAsset> importFile(const std::string& path, const ImportOptions& options = {});

/// Same for BVH text held in memory (`sourceName` is used in messages).
Result<ImportedAsset> importBvhText(std::string_view text, const std::string& sourceName,
                                    const ImportOptions& options = {});

}  // namespace handoff
