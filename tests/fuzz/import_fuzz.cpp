// libFuzzer target for the glTF/GLB, FBX and COLLADA import path (importFileData: the GLB/JSON
// pre-check, then Assimp, then the skeleton, bind pose, units and clips). The first byte picks the
// format (.glb, .gltf, .fbx, .dae), the rest is the file. Beyond "no crash, no sanitizer report, no
// leak": a rejection names the file and is valid UTF-8; an accepted file gives a valid skeleton
// with a finite rest pose and valid, finite clips.
//
// Assimp runs contained (ImportOptions::isolateParser) with 5 s and 1 GiB: a crash inside it is a
// rejection. HANDOFF_FUZZ_IMPORT_DIRECT=1 reads in the fuzzer's process instead, to hunt for what
// the format checks (src/rig/*_check.cpp) let through to Assimp.
#include "fuzz_check.h"
#include "handoff/import.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {
constexpr const char* kTarget = "import_fuzz";
constexpr std::array<const char*, 4> kNames{"fuzz.glb", "fuzz.gltf", "fuzz.fbx", "fuzz.dae"};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > 256 * 1024) return 0;
  const std::string name = kNames[data[0] % kNames.size()];
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  handoff::ImportOptions options;
  options.requireHumanScale = false;  // reach the rest of the pipeline with any skeleton
  static const bool direct = std::getenv("HANDOFF_FUZZ_IMPORT_DIRECT") != nullptr;
  options.isolateParser = !direct;
  options.parserTimeLimit = 5.0;
  options.parserMemoryLimit = 1024.0;
  const handoff::Result<handoff::ImportedAsset> imported = handoff::importFileData(bytes, name, options);
  if (!imported) {
    handoff_fuzz::checkRejection(kTarget, imported.error(), name);
    return 0;
  }
  const handoff::Skeleton& skeleton = imported->skeleton;
  if (handoff::Status s = skeleton.validate(); !s)
    handoff_fuzz::failure(kTarget, "invalid skeleton accepted", s.error());
  for (const handoff::Transform& local : skeleton.restLocal) {
    if (!handoff::isFinite(local)) handoff_fuzz::failure(kTarget, "non-finite rest pose accepted", "");
  }
  for (const handoff::Clip& clip : imported->clips) {
    if (handoff::Status s = clip.validate(skeleton); !s)
      handoff_fuzz::failure(kTarget, "invalid clip accepted", s.error());
  }
  return 0;
}
