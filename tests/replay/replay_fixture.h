// Test support for replays: a real character (imported file, ragdoll built by the asset module)
// recorded along a clip into a Replay. Used by the replay tests and by the demo replay writer
// that the web viewer test opens.
#pragma once

#include "handoff/asset.h"
#include "handoff/import.h"
#include "handoff/replay.h"

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace handoff::replay_test {

/// An imported character and its ragdoll.
struct Source {
  ImportedAsset imported;
  std::shared_ptr<const RagdollAsset> asset;
  const Skeleton& skeleton() const { return imported.skeleton; }
};

inline Result<Source> loadSource(const std::string& path) {
  Result<ImportedAsset> imported = importFile(path);
  if (!imported) return Error{imported.error()};
  Source source;
  source.imported = std::move(imported).value();
  BuildOptions options;
  options.skeletonName = path;
  Result<RagdollAsset> asset = buildRagdoll(source.imported.skeleton, options);
  if (!asset) return Error{path + ": " + asset.error()};
  source.asset = std::make_shared<RagdollAsset>(std::move(asset).value());
  return source;
}

/// An empty replay of a source: skeleton, bodies, joints, capsule, its meshes merged into one.
inline Replay emptyReplay(const Source& source, const std::string& name, double frameRate) {
  Replay replay;
  replay.name = name;
  replay.frameRate = frameRate;
  replay.skeleton = source.skeleton();
  describeRagdoll(*source.asset, replay);
  replay.mesh = mergeSkinnedMeshes(source.imported.meshes);
  return replay;
}

/// Lowest world point of a body's shape. [m]
inline double lowestPoint(const ShapeDesc& s, const Transform& x) { return shapeLowestPoint(s, x).y; }

/// The capsule standing on the ground under the root joint.
inline Transform capsuleUnderRoot(const Replay& replay, const Vec3& rootWorld) {
  return Transform::fromTranslation(Vec3{
      rootWorld.x, replay.groundHeight + replay.capsule.radius + replay.capsule.halfHeight, rootWorld.z});
}

/// An animated frame: every body at its bone, capsule enabled, figures from the pose.
inline ReplayFrame animatedFrame(const Replay& replay, double time, const Transform& worldFromRoot,
                                 std::span<const Transform> locals) {
  ReplayFrame frame;
  frame.time = time;
  frame.state = "animated";
  frame.worldFromRoot = worldFromRoot;
  frame.locals.assign(locals.begin(), locals.end());
  std::vector<Transform> models(locals.size());
  localToModel(replay.skeleton, locals, models);
  for (const ReplayBody& body : replay.bodies) {
    frame.worldFromBodies.push_back(worldFromRoot * models[static_cast<size_t>(body.joint)] *
                                    body.boneFromBody);
  }
  frame.authority.assign(replay.bodies.size(), 0);
  frame.capsuleEnabled = true;
  frame.worldFromCapsule = capsuleUnderRoot(replay, (worldFromRoot * models[0]).translation);
  if (!frame.worldFromBodies.empty()) frame.figures.pelvisHeight = frame.worldFromBodies[0].translation.y;
  return frame;
}

/// Records `frameCount` frames of a clip at its frame rate, from frame `first`, looping (root
/// motion accumulates) as an animated replay; the ground sits just under the lowest body of the
/// whole recording.
inline Replay recordClip(const Source& source, const Clip& clip, const std::string& name,
                         const Transform& worldFromRoot, int first, int frameCount) {
  Replay replay = emptyReplay(source, name, clip.frameRate);
  std::vector<Transform> locals(static_cast<size_t>(clip.jointCount));
  for (int f = first; f < first + frameCount; ++f) {
    clip.sample(clip.frameTime(f), WrapMode::Loop, locals);
    replay.frames.push_back(animatedFrame(replay, clip.frameTime(f), worldFromRoot, locals));
  }
  double lowest = 1e30;
  for (const ReplayFrame& frame : replay.frames) {
    for (size_t b = 0; b < replay.bodies.size(); ++b) {
      lowest = std::min(lowest, lowestPoint(replay.bodies[b].shape, frame.worldFromBodies[b]));
    }
  }
  replay.groundHeight = replay.bodies.empty() ? 0.0 : lowest;
  for (size_t f = 0; f < replay.frames.size(); ++f) {
    ReplayFrame& frame = replay.frames[f];
    frame.worldFromCapsule.translation.y =
        replay.groundHeight + replay.capsule.radius + replay.capsule.halfHeight;
    if (f > 0 && !frame.worldFromBodies.empty()) {
      const ReplayFrame& previous = replay.frames[f - 1];
      frame.figures.pelvisSpeed =
          glm::length(frame.worldFromBodies[0].translation - previous.worldFromBodies[0].translation) /
          (frame.time - previous.time);
    }
  }
  return replay;
}

}  // namespace handoff::replay_test
