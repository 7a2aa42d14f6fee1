// Assimp's reading of a file, contained (private to the rig module).
//
// Assimp 5.2 crashes, hangs or allocates without bound on some malformed COLLADA, FBX and glTF
// files (found by tests/fuzz/import_fuzz.cpp; the pre-checks in gltf_check.h, collada_check.h and
// fbx_check.h stop the known ones before Assimp). What no pre-check catches is contained: the
// read runs in a child process (POSIX fork) that sends the scene back serialised with Assimp's
// own binary format (assbin) and the scene metadata (which assbin drops); a crash, a time-out or
// a runaway allocation in the child is an error naming the file, not the end of the caller.
#pragma once

#include "handoff/result.h"

#include <functional>
#include <map>
#include <optional>
#include <string>

struct aiScene;
namespace Assimp {
class Importer;
}

namespace handoff::detail {

/// The scene metadata the importer reads (FBX UpAxis, UnitScaleFactor, SourceAsset_Format, ...).
struct SceneMeta {
  std::map<std::string, double> numbers;  ///< int32, uint64, float, double and bool entries.
  std::map<std::string, std::string> strings;

  std::optional<int> integer(const std::string& key) const;
  std::optional<double> real(const std::string& key) const;
  std::string text(const std::string& key) const;
};

struct ParserLimits {
  bool isolate = true;      ///< Read in a child process.
  double seconds = 120.0;   ///< Wall time of the child. [s] [> 0]
  double memoryMiB = 4096;  ///< Resident memory the child may add to the caller's. [MiB] [> 0]
};

/// A scene owned by the importer passed to readAssimp, with its metadata.
struct ReadResult {
  const aiScene* scene = nullptr;
  SceneMeta meta;
};

/// Runs `read` (an Assimp ReadFile* call on the importer it is given, which is configured for the
/// importer's needs and, when `only` is not empty, holds only the Assimp importers that read files
/// with that extension: Assimp 5.2 otherwise tries every importer on a file the expected one does
/// not recognise, past the format's checks) and returns the scene held by `importer`. Errors: "<source>:
/// Assimp cannot read it: <Assimp's message>", "<source>: Assimp crashed reading it (signal 11: ...)",
/// "... exceeded the time limit", "... exceeded the memory limit".
Result<ReadResult> readAssimp(Assimp::Importer& importer, const std::string& source,
                              const ParserLimits& limits, const std::string& only,
                              const std::function<const aiScene*(Assimp::Importer&)>& read);

}  // namespace handoff::detail
