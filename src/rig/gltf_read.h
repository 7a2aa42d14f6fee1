// A glTF / GLB / VRM file through the check (gltf_check.h) and Assimp (assimp_read.h): the one
// path that the rig import (importFile, importFileData) and the level loader (loadLevel) share.
#pragma once

#include "handoff/result.h"
#include "rig/assimp_read.h"
#include "rig/gltf_check.h"

#include <string>
#include <string_view>

namespace Assimp {
class Importer;
}

namespace handoff::detail {

/// True when `bytes` start with the GLB magic "glTF" (else they are read as glTF JSON).
bool isBinaryGltf(std::string_view bytes);

/// Checks `data` (checkGltf) and reads it with Assimp (readAssimp, `flags` aiPostProcessSteps):
/// the rewritten GLB when the check made one, else `data` itself when `path` is empty or
/// `inMemory`, else the file `path`. External buffers are looked for beside `path` (none when
/// `path` is empty). `info` receives the check's findings and holds the rewritten GLB the read
/// may point at: it must outlive the returned scene's use. Errors name `source` and are valid UTF-8.
Result<ReadResult> readGltf(Assimp::Importer& importer, std::string_view data, const std::string& source,
                            const std::string& path, bool inMemory, const ParserLimits& limits,
                            unsigned flags, GltfInfo& info);

}  // namespace handoff::detail
