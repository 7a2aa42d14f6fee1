// libFuzzer target for the BVH text importer (importBvhText: the line-numbered pre-check, then
// Assimp, then the double-precision keys). Beyond "no crash, no sanitizer report, no leak":
//  - a rejection names the file, and a position: "fuzz.bvh:<line>: ..." for every error the
//    text check raises, and the file name for the few found after it (Assimp's own reading);
//  - an accepted file gives a valid skeleton, finite rest pose and finite, valid clip keys.
#include "fuzz_check.h"
#include "handoff/import.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {
constexpr const char* kTarget = "bvh_fuzz";
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 64 * 1024) return 0;  // the importer is linear; large inputs only slow the search
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const handoff::Result<handoff::ImportedAsset> imported = handoff::importBvhText(text, "fuzz.bvh");
  if (!imported) {
    handoff_fuzz::checkRejection(kTarget, imported.error(), "fuzz.bvh");
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
    for (const handoff::Transform& key : clip.keys) {
      if (!handoff::isFinite(key)) handoff_fuzz::failure(kTarget, "non-finite key accepted", clip.name);
    }
  }
  return 0;
}
