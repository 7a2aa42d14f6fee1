// The shipped DeepMimic get-up pair prepared for a character as the library's loaders do
// (handoff::prepareGetUpClips): the face-up clip, which stops mid-rise, completed against the
// face-down clip's standing last frame on the DeepMimic rig, then both retargeted through the
// humanoid maps when the character is another rig.
#pragma once

#include "handoff/import.h"
#include "handoff/recovery.h"

#include <string>
#include <vector>

namespace handoff::test {

inline constexpr const char* kDeepMimicFaceUp = "deepmimic/humanoid3d_getup_faceup.bvh";
inline constexpr const char* kDeepMimicFaceDown = "deepmimic/humanoid3d_getup_facedown.bvh";

/// {face-up, face-down} on `skeleton` (with `map`). `complete` = false plays them as shipped.
inline Result<std::vector<GetUpClip>> deepMimicGetUps(const std::string& dataDir, const Skeleton& skeleton,
                                                      const HumanoidMap& map, bool complete = true) {
  Result<ImportedAsset> up = importFile(dataDir + "/" + kDeepMimicFaceUp);
  if (!up) return Error{up.error()};
  Result<ImportedAsset> down = importFile(dataDir + "/" + kDeepMimicFaceDown);
  if (!down) return Error{down.error()};
  if (up->clips.empty() || down->clips.empty() || up->skeleton.jointNames != down->skeleton.jointNames) {
    return Error{"the DeepMimic get-up files do not hold one clip each of one skeleton"};
  }
  Result<HumanoidMap> sourceMap = mapHumanoid(up->skeleton);
  if (!sourceMap) return Error{std::string(kDeepMimicFaceUp) + ": " + sourceMap.error()};
  const bool sameRig =
      up->skeleton.jointNames == skeleton.jointNames && up->skeleton.parents == skeleton.parents;
  GetUpPrepareOptions options;
  options.completion.enabled = complete;
  const std::vector<Clip> clips{up->clips.front(), down->clips.front()};
  // On the character's own rig its own map is the source map, as the runner does.
  return prepareGetUpClips(clips, up->skeleton, sameRig ? map : *sourceMap, skeleton, map, options);
}

}  // namespace handoff::test
