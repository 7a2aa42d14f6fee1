// Assimp's reading of a file, contained (private to the rig module).
//
// Assimp 5.2 crashes, hangs or allocates without bound on some malformed COLLADA, FBX and glTF
// files (found by tests/fuzz/import_fuzz.cpp; the pre-checks in gltf_check.h, collada_check.h and
// fbx_check.h stop the known ones before Assimp). What no pre-check catches is contained: the read
// runs in its own process, the program handoff-import-worker (src/rig/worker), started with
// posix_spawn. It gets the request on its standard input, reads with Assimp and sends the scene
// back on its standard output serialised in Assimp's own binary format (assbin) with the scene
// metadata (which assbin drops); a crash, a time-out or a runaway allocation in it is an error
// naming the file, not the end of the caller. A new program image, not a fork: a fork copies the
// calling thread alone, and a lock another thread of the caller held (an allocator's, a logger's)
// stays held for ever in the child.
#pragma once

#include "handoff/result.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>

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
  bool isolate = true;      ///< Read in the worker process.
  double seconds = 120.0;   ///< Wall time of the worker. [s] [> 0]
  double memoryMiB = 4096;  ///< Resident memory of the worker. [MiB] [> 0]
  std::string worker;       ///< The worker program; empty finds it (findImportWorker).
};

/// What Assimp is asked to read: a file by its path, or bytes in memory with a format hint.
struct ParseRequest {
  bool fromMemory = false;
  std::string path;        ///< The file (not fromMemory).
  std::string_view bytes;  ///< The file's contents (fromMemory); must outlive the read.
  std::string hint;        ///< Assimp's extension hint for bytes ("glb", "bvh").
  unsigned flags = 0;      ///< aiPostProcessSteps.
  /// When not empty, only the Assimp importers that read files with this extension are kept:
  /// Assimp 5.2 otherwise tries every importer on a file the expected one does not recognise,
  /// past the format's checks.
  std::string only;
};

/// A scene owned by the importer passed to readAssimp, with its metadata.
struct ReadResult {
  const aiScene* scene = nullptr;
  SceneMeta meta;
};

/// Reads `request` with Assimp (in the worker process when limits.isolate) and returns the scene
/// held by `importer`. Errors: "<source>: Assimp cannot read it: <Assimp's message>",
/// "<source>: Assimp crashed reading it (signal 11: ...)", "... exceeded the time limit",
/// "... exceeded the memory limit", "<source>: cannot find handoff-import-worker ...".
Result<ReadResult> readAssimp(Assimp::Importer& importer, const std::string& source,
                              const ParserLimits& limits, const ParseRequest& request);

/// The worker program's path: `explicitPath` when not empty, else $HANDOFF_IMPORT_WORKER, else the
/// first that exists of the build tree's worker, <directory of the running program>/
/// handoff-import-worker, <that directory>/../libexec/handoff/handoff-import-worker and the
/// installed one (<prefix>/libexec/handoff). The error names every place it looked.
Result<std::string> findImportWorker(const std::string& explicitPath);

/// A request as the worker receives it (owning its bytes).
struct ReceivedRequest {
  ParseRequest request;
  std::string source;  ///< The caller's name of the file, for the messages.
  std::string bytes;
};

/// Reads a request from `fd` (the worker's standard input). Errors name what is malformed.
Result<ReceivedRequest> receiveParseRequest(int fd);

/// The worker's work: reads a request from `in`, reads it with Assimp in this process and writes
/// the reply (the scene, or an error naming the file) to `out`. Returns the worker's exit status
/// (0 when a reply was sent).
int runImportWorker(int in, int out);

}  // namespace handoff::detail
