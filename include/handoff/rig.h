// Skeletons, poses and clips (the `rig` module). Modelled on ozz-animation's runtime: an
// immutable Skeleton with parents in topological order, poses as plain arrays owned by the
// caller, sampling and conversion as functions over spans that never allocate.
//
// Spaces: a joint's *local* transform is parentFromJoint; a *model* transform is
// rootFromJoint (R, the character root space of SPEC.md); world = worldFromRoot * model.
// Units are metres after import (the importer applies the unit scale).
//
// Thread-safety: the functions are pure (never allocating where stated); a const Skeleton or Clip
// may be read from any number of threads.
#pragma once

#include "handoff/math.h"
#include "handoff/result.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace handoff {

inline constexpr int kNoParent = -1;

/// An immutable joint hierarchy. Joints are in topological order: parents[i] < i.
struct Skeleton {
  std::vector<std::string> jointNames;
  std::vector<int> parents;          ///< kNoParent for a root.
  std::vector<Transform> restLocal;  ///< Bind/rest pose, parentFromJoint. [m]
  /// Offset of each joint's end site (BVH "End Site", or a leaf's tip) in the joint's own
  /// space, zero when the joint has children or no tip is known. [m] Used to size the last
  /// bone of a chain (the head above the neck, a foot, a hand).
  std::vector<Vec3> endSiteOffset;

  int jointCount() const { return static_cast<int>(parents.size()); }
  /// Index of the joint named `name`, or -1.
  int findJoint(std::string_view name) const;
  /// Children of joint `joint`, in index order.
  std::vector<int> children(int joint) const;
  /// Structural checks: sizes agree, parents[i] < i, finite unit rotations, unique names.
  Status validate() const;
};

/// local -> model: models[i] = models[parent] * locals[i] (roots: models[i] = locals[i]).
/// Spans must have skeleton.jointCount() elements; never allocates.
void localToModel(const Skeleton& skeleton, std::span<const Transform> locals, std::span<Transform> models);

/// model -> local: locals[i] = inverse(models[parent]) * models[i].
void modelToLocal(const Skeleton& skeleton, std::span<const Transform> models, std::span<Transform> locals);

/// Per-joint blend of two local poses: lerp translations, short-arc slerp rotations.
/// weight 0 gives `a`, 1 gives `b`. `out` may alias `a` or `b`.
void blendPoses(std::span<const Transform> a, std::span<const Transform> b, double weight,
                std::span<Transform> out);

/// Same, with one weight per joint.
void blendPoses(std::span<const Transform> a, std::span<const Transform> b, std::span<const double> weights,
                std::span<Transform> out);

enum class WrapMode : std::uint8_t {
  Clamp,  ///< Times outside [0, duration] hold the first or last frame.
  Loop,   ///< Times wrap; the root joint's translation accumulates one cycle's root motion per loop.
};

/// An animation clip: uniformly sampled local transforms for every joint of one skeleton.
struct Clip {
  std::string name;
  int jointCount = 0;
  int frameCount = 0;
  double frameRate = 0.0;  ///< Frames per second. [Hz] (> 0)
  /// Local transforms, frame-major: keys[frame * jointCount + joint] (parentFromJoint). [m]
  /// Rotations are hemisphere-continuous along each joint's track.
  std::vector<Transform> keys;

  /// (frameCount - 1) / frameRate. [s]
  double duration() const;
  /// Time of frame `frame`. [s]
  double frameTime(int frame) const { return frame / frameRate; }
  std::span<const Transform> frame(int frame) const;

  /// Samples every joint at time `time` into `locals` (jointCount elements): lerp of
  /// translations, short-arc slerp of rotations between the two neighbouring frames. Never
  /// allocates. Precondition: frameCount >= 1.
  void sample(double time, WrapMode wrap, std::span<Transform> locals) const;

  /// Root motion of one cycle: root joint translation at the last frame minus the first. [m]
  Vec3 cycleRootMotion(int rootJoint = 0) const;

  /// Structural checks against a skeleton: sizes, finite keys, positive frame rate.
  Status validate(const Skeleton& skeleton) const;
};

/// A humanoid bone a file names itself (VRM's `humanoid.humanBones`): the file's role name
/// ("hips", "leftUpperLeg", "head", ...) and the joint that plays it.
struct HumanoidBone {
  std::string role;
  std::string joint;
};

/// Pose helpers.
std::vector<Transform> restPose(const Skeleton& skeleton);

/// Model-space height of the highest of the hip joints' parent above the lowest end point of
/// the rest pose; used to sanity check and auto-detect units. [skeleton units]
double restHipHeight(const Skeleton& skeleton);

/// `text` with every byte that is not part of a valid UTF-8 sequence written as "\xNN": error
/// messages quote file content (a Latin-1 BVH, a fuzzed file), and reports embed them in JSON.
std::string validUtf8(std::string_view text);

/// Nesting of arrays and objects every JSON the loaders read may reach (ragdoll assets, joint
/// overrides, glTF): deeper text is refused before it is parsed, so that no parse, copy or walk of
/// it recurses without bound. The files written here nest at most 8 levels. [levels] [64]
inline constexpr std::size_t kMaxJsonDepth = 64;

/// Byte offset of the first '[' or '{' in `text` that opens a level deeper than `maxDepth`;
/// nullopt when none does. One pass over the bytes (strings and their escapes skipped), no
/// allocation, whatever `text` holds (not necessarily valid JSON): safe before any parse.
/// Thread-safe.
std::optional<std::size_t> jsonTooDeep(std::string_view text, std::size_t maxDepth = kMaxJsonDepth);

/// " (did you mean 'x'?)" for the candidate closest to `word` (case-insensitive edit distance
/// within about a third of the word's length), or "" when none is close: the suggestion every
/// loader appends to an unknown field, slot, bone or clip name.
std::string didYouMean(std::string_view word, std::span<const std::string> candidates);

}  // namespace handoff
