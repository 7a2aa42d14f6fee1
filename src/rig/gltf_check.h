// Check of glTF 2.0 / GLB bytes before Assimp reads them (private to the rig module).
//
// Assimp 5.2 trusts a GLB's chunk lengths and reads whatever a required extension it does not know
// leaves behind (EXT_meshopt_compression buffers come out as zeros or garbage). checkGltf()
// verifies the container and the JSON and says, naming the extension, what cannot be read; it also
// returns the humanoid bones a VRM file names, which Assimp drops with the extension.
#pragma once

#include "handoff/result.h"
#include "handoff/rig.h"

#include <string>
#include <string_view>
#include <vector>

namespace handoff::detail {

struct GltfInfo {
  std::vector<HumanoidBone> humanoidBones;  ///< VRM humanBones, joints by node name.
  std::vector<std::string> warnings;
};

/// Checks GLB (`binary`) or glTF JSON bytes. Errors: "<source>: <reason>" (bad magic, version or
/// chunk length, JSON parse error with its byte, a required extension that cannot be read).
Result<GltfInfo> checkGltf(std::string_view data, bool binary, const std::string& source);

}  // namespace handoff::detail
