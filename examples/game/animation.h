// The example game's own animation system: its clips (keys copied out of whatever the game
// imports), its own sampling (lerp of translations, nlerp of rotations between two keys) and its
// own root motion (the root joint's horizontal travel moves the character's root; the root joint
// keeps only its height). handoff never samples the game's clips: the game hands it a pose every
// frame (AnimationInput).
//
// Thread-safety: plain values; a Locomotion is used by one thread.
#pragma once

#include <handoff/math.h>
#include <handoff/rig.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

namespace game {

using handoff::Quat;
using handoff::Transform;
using handoff::Vec3;

/// A clip in the game's own format: `frames` poses of `joints` local transforms (parentFromJoint),
/// frame-major, at `rate` Hz, joint 0 the root joint (the pelvis).
struct AnimClip {
  int joints = 0;
  int frames = 0;
  double rate = 30.0;  ///< [Hz]
  bool loop = true;
  std::vector<Transform> keys;
  Vec3 cycleMotion{0.0};  ///< The root joint's horizontal travel over one cycle. [m]
  double lift = 0.0;      ///< Added to the root joint's height: puts the clip's feet on the ground. [m]

  double duration() const { return (frames - 1) / rate; }

  /// A clip from an imported one (handoff::Clip is what the importer gives; the game keeps its own).
  static AnimClip fromKeys(const handoff::Clip& clip, bool loop) {
    AnimClip c;
    c.joints = clip.jointCount;
    c.frames = clip.frameCount;
    c.rate = clip.frameRate;
    c.loop = loop;
    c.keys = clip.keys;
    const Vec3 travel = c.key(c.frames - 1, 0).translation - c.key(0, 0).translation;
    c.cycleMotion = loop ? Vec3{travel.x, 0.0, travel.z} : Vec3{0.0};
    return c;
  }
  /// One frame held: an idle pose.
  static AnimClip still(const handoff::Clip& clip, int frame) {
    AnimClip c;
    c.joints = clip.jointCount;
    c.frames = 1;
    c.loop = false;
    const std::span<const Transform> pose = clip.frame(frame);
    c.keys.assign(pose.begin(), pose.end());
    return c;
  }
  const Transform& key(int frame, int joint) const {
    return keys[static_cast<size_t>(frame * joints + joint)];
  }

  /// The pose at `time` (root joint over the character's root: its horizontal position removed) and the root
  /// joint's horizontal travel since time 0, cycles included. [s] [m]
  Vec3 sample(double time, std::span<Transform> locals) const {
    double cycles = 0.0, t = std::max(time, 0.0);
    if (frames > 1 && loop) {
      cycles = std::floor(t / duration());
      t -= cycles * duration();
    }
    const double f = std::min(t * rate, static_cast<double>(frames - 1));
    const int a = static_cast<int>(f);
    const int b = std::min(a + 1, frames - 1);
    const double w = f - a;
    for (int j = 0; j < joints; ++j) {
      const Transform& ka = key(a, j);
      const Transform& kb = key(b, j);
      Quat qb = kb.rotation;
      if (glm::dot(ka.rotation, qb) < 0.0) qb = -qb;
      locals[static_cast<size_t>(j)] = {glm::normalize((1.0 - w) * ka.rotation + w * qb),
                                        (1.0 - w) * ka.translation + w * kb.translation};
    }
    // Root motion: the root joint's horizontal travel goes to the character's root; the root
    // joint keeps its height, over the character's root.
    Transform& root = locals[0];
    const Vec3 travel = root.translation - key(0, 0).translation;
    root.translation.x = 0.0;
    root.translation.y += lift;
    root.translation.z = 0.0;
    return cycles * cycleMotion + Vec3{travel.x, 0.0, travel.z};
  }
};

/// Turn about world up by `yaw` (the clip's +X forward turns to (cos yaw, 0, -sin yaw)). [rad]
inline Quat yawRotation(double yaw) { return glm::angleAxis(yaw, Vec3{0.0, 1.0, 0.0}); }

/// Yaw of a root (the inverse of yawRotation on its +X axis). [rad]
inline double yawOf(const Transform& root) {
  const Vec3 f = root.transformVector(Vec3{1.0, 0.0, 0.0});
  return std::atan2(-f.z, f.x);
}

/// A character's locomotion: a clip played from `time`, its root motion moving the character's
/// root on the ground at `position` turned by `yaw` (turning at `turnRate` while it plays).
struct Locomotion {
  const AnimClip* clip = nullptr;
  Vec3 position{0.0};     ///< The character root, on the ground. [m]
  double yaw = 0.0;       ///< [rad]
  double turnRate = 0.0;  ///< [rad/s]
  double time = 0.0;      ///< Clip time. [s]
  Vec3 travel{0.0};       ///< The clip's root travel at `time`. [m]

  Transform root() const { return {yawRotation(yaw), position}; }

  /// Starts `c` on `at` (a root on the ground, as Character::displayRoot() after a get-up). The
  /// game's clips run along the root's +X: the DeepMimic rig's forward (RagdollAsset::modelForward),
  /// which is the way handoff's roots face.
  void start(const AnimClip& c, const Transform& at) {
    clip = &c;
    position = at.translation;
    yaw = yawOf(at);
    time = 0.0;
    travel = Vec3{0.0};
  }
  /// Advances by `dt` and writes the pose for the new time. [s]
  void advance(double dt, std::span<Transform> locals) {
    time += dt;
    const Vec3 next = clip->sample(time, locals);
    yaw += turnRate * dt;
    position += yawRotation(yaw) * (next - travel);
    travel = next;
  }
  /// The pose `before` seconds before the current time, with the root where it was then (for
  /// goRagdoll's dense sample). [s] (> 0)
  Transform sampleBefore(double before, std::span<Transform> locals) const {
    const Vec3 then = clip->sample(time - before, locals);
    const double yawThen = yaw - turnRate * before;
    return {yawRotation(yawThen), position - yawRotation(yaw) * (travel - then)};
  }
};

}  // namespace game
