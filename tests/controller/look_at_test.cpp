// Bones that stay with another system (SPEC.md section 3's per-bone write-back mask): a look-at
// owns the head (CharacterSettings::animationOwnedBones). Each frame the test, as a game's gaze
// system would, sets the head's local rotation toward a moving gaze target from the head's
// parent as displayed at the last frame; the character runs, falls into a ragdoll, settles, gets
// up, runs again and takes a hit (a powered hit reaction). On every frame the displayed head's
// world rotation must be what the gaze asked: the parent's displayed world rotation times the
// local it was given. Every other bone is displayed exactly as without the mask.
//
//        neck (head, owned: animated local)
//         |
//       chest --- shoulders ...     (written back from their bodies)
//         |
//        root (pelvis)
#include "handoff/controller.h"
#include "handoff/measure.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "controller/getup_scene.h"
#include "support/clip_scene.h"

namespace handoff {
namespace {

using test::kFrame;
using test::loadCharacter;

constexpr double kLookDeg = kPi / 180.0;

struct LookAtRun {
  /// Per state (CharacterState order): the displayed head against what the gaze asked and
  /// against the target (LookAtMeasure, the runner's measure).
  std::array<LookAtMetrics, 4> gaze{};
  std::vector<std::vector<Transform>> displayed;  ///< Display locals per frame.
  /// Bones with a body other than the head: largest displayed distance and angle from
  /// worldFromBody * inverse(boneFromBody) on frames the display shows physics at weight 1. [m] [rad]
  double followDistance = 0.0, followAngle = 0.0;
  int followFrames = 0;
  bool recovered = false;
  int poweredFrames = 0;
  int hitFrame = -1;      ///< The frame the hit came in (after its step).
  bool returned = false;  ///< Back to animation after the hit (the powered -> animation blend ran).
  std::string story;
};

// The gaze target: a point circling the start 3 m away at head height, once every 6 s.
Vec3 gazeTarget(double t) {
  const double a = 2.0 * kPi * t / 6.0;
  return Vec3{3.0 * std::sin(a), 1.5, 3.0 * std::cos(a)};
}

LookAtRun runLookAt(const test::Character& c, bool owned) {
  LookAtRun r;
  const Skeleton& skeleton = c.skeleton();
  const int head = c.asset->map[Slot::Head];
  EXPECT_GE(head, 0);
  if (head < 0) return r;
  const int parent = skeleton.parents[static_cast<size_t>(head)];
  CharacterSettings settings;
  if (owned) settings.animationOwnedBones = {skeleton.jointNames[static_cast<size_t>(head)]};
  test::GetUpScene scene;
  Quat asked{1.0, 0.0, 0.0, 0.0};  // the head's local rotation the gaze set this frame
  std::vector<Transform> shown;    // displayed world bones of the last frame
  // The game's animation: the run clip, the head turned by the gaze from the displayed parent.
  bool standing = false;  // after the get-up the game holds the run clip's first frame
  scene.animation = [&](double t, std::span<Transform> out) {
    c.clip(0).sample(standing ? 0.0 : t, WrapMode::Loop, out);
    Transform& local = out[static_cast<size_t>(head)];
    if (!shown.empty()) {
      local.rotation =
          lookAtLocalRotation(skeleton, head, c.asset->modelForward, shown[static_cast<size_t>(parent)],
                              local.translation, gazeTarget(scene.animTime), local.rotation);
    }
    asked = local.rotation;
  };
  EXPECT_TRUE(scene.start(c, 0, Transform::identity(), settings));
  if (!scene.ch) return r;
  handoff::Character& ch = *scene.ch;
  if (owned) {
    EXPECT_EQ(ch.animationOwnedJoints().size(), 1u);
    EXPECT_EQ(ch.animationOwnedJoints()[0], head);
  }
  shown = scene.displayedWorld();
  LookAtMeasure gaze(ch, head);
  const int chest = c.asset->bodyForSlot(Slot::Chest);
  bool ragdolled = false, hit = false;
  double recoveredAt = -1.0, returnedAt = -1.0;
  for (int frame = 0; frame < 60 * 16; ++frame) {
    scene.step();
    shown = scene.displayedWorld();
    const CharacterState state = ch.state();
    if (state == CharacterState::Powered) ++r.poweredFrames;
    r.displayed.emplace_back(ch.displayLocals().begin(), ch.displayLocals().end());
    gaze.observe(ch, asked, gazeTarget(scene.animTime), r.gaze[static_cast<size_t>(state)]);
    // The other bones follow their bodies where the display shows physics at full weight.
    const bool physicsShown =
        (state == CharacterState::Ragdoll && ch.blendWeight() >= 1.0) ||
        (state == CharacterState::Powered &&
         std::all_of(ch.bodyWeights().begin(), ch.bodyWeights().end(), [](double w) { return w >= 1.0; }));
    if (physicsShown) {
      ++r.followFrames;
      for (int b = 0; b < ch.ragdoll().bodyCount(); ++b) {
        const BodyDef& def = c.asset->bodies[static_cast<size_t>(b)];
        if (def.joint == head) continue;
        const Transform bone = scene.world->transform(ch.ragdoll().body(b)) * def.boneFromBody.inverse();
        const Transform& s = shown[static_cast<size_t>(def.joint)];
        r.followDistance = std::max(r.followDistance, glm::length(bone.translation - s.translation));
        r.followAngle = std::max(r.followAngle, angleBetween(bone.rotation, s.rotation));
      }
    }
    if (!ragdolled && scene.animTime >= 0.5) {
      ragdolled = true;
      if (!scene.goRagdoll()) break;
    }
    if (ch.takeRecoveryFinished()) {
      r.recovered = true;
      recoveredAt = scene.animTime;
      scene.root =
          rootToStartClip(c.clip(0), skeleton, scene.pelvis, c.asset->modelForward, ch.displayRoot());
      scene.clipTime = 0.0;
      standing = true;
    }
    if (r.recovered && !hit && ch.state() == CharacterState::Animated &&
        scene.animTime >= recoveredAt + 1.0) {
      // A hit in the back of the chest: the powered hit reaction.
      hit = true;
      r.hitFrame = frame;
      const Vec3 point = scene.world->transform(ch.ragdoll().body(chest)).translation;
      EXPECT_TRUE(ch.applyImpulse(chest, -80.0 * scene.root.transformVector(c.asset->modelForward), point));
    }
    if (hit && ch.state() == CharacterState::Animated && !r.returned) {
      r.returned = true;
      returnedAt = scene.animTime;
    }
    if (r.returned && scene.animTime >= returnedAt + 0.5) break;  // the return blend is over
  }
  for (const CharacterEvent& e : ch.events()) {
    char line[64];
    std::snprintf(line, sizeof line, "%.2f s ", e.time);
    r.story += std::string(line) + eventKindName(e.kind) + ": " + e.detail + "\n";
  }
  return r;
}

// The look-at's head is displayed as the gaze asked in every state (within 0.1 deg; the figure
// is rounding), every other bone exactly as without the mask, the bones with bodies on their
// bodies. Without the mask the ragdoll and the get-up override the gaze by tens of degrees.
TEST(LookAt, OwnedHeadFollowsTheGazeThroughRagdollGetUpAndHit) {
  const test::Character& c = loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  const LookAtRun with = runLookAt(c, true);
  const LookAtRun without = runLookAt(c, false);
  ASSERT_FALSE(with.displayed.empty());
  EXPECT_TRUE(with.recovered) << with.story;
  EXPECT_GT(with.poweredFrames, 10) << "the hit reaction ran powered\n" << with.story;
  EXPECT_TRUE(with.returned) << "the hit reaction returned to animation\n" << with.story;
  const int head = c.asset->map[Slot::Head];
  for (CharacterState state : {CharacterState::Animated, CharacterState::Ragdoll, CharacterState::Recovering,
                               CharacterState::Powered}) {
    const LookAtMetrics& m = with.gaze[static_cast<size_t>(state)];
    const LookAtMetrics& w = without.gaze[static_cast<size_t>(state)];
    std::printf(
        "[ look-at ] %-10s %4d frames: head vs gaze asked %.2e deg (without the mask %.2f deg), "
        "aim vs target %.2f deg (one frame of the parent's motion)\n",
        characterStateName(state), m.frames, m.worstHeadError / kLookDeg, w.worstHeadError / kLookDeg,
        m.worstAimError / kLookDeg);
    EXPECT_GT(m.frames, 0) << characterStateName(state);
    EXPECT_LE(m.worstHeadError, 0.1 * kLookDeg) << characterStateName(state);
  }
  // The mask matters: without it the physics head (and the get-up clip's) is shown instead.
  for (CharacterState state : {CharacterState::Animated, CharacterState::Ragdoll, CharacterState::Recovering,
                               CharacterState::Powered}) {
    EXPECT_GT(without.gaze[static_cast<size_t>(state)].worstHeadError, 5.0 * kLookDeg)
        << characterStateName(state);
  }

  // Other bones: on their bodies at full physics weight, and displayed as without the mask.
  std::printf("[ look-at ] other bones on their bodies over %d physics frames: %.2e m, %.2e deg\n",
              with.followFrames, with.followDistance, with.followAngle / kLookDeg);
  EXPECT_GT(with.followFrames, 60);
  EXPECT_LE(with.followDistance, 1e-6);
  EXPECT_LE(with.followAngle, 1e-4 * kLookDeg);
  const Skeleton& skeleton = c.skeleton();
  std::vector<bool> underHead(static_cast<size_t>(skeleton.jointCount()), false);
  for (int j = 0; j < skeleton.jointCount(); ++j) {
    for (int a = j; a != kNoParent; a = skeleton.parents[static_cast<size_t>(a)]) {
      if (a == head) underHead[static_cast<size_t>(j)] = true;
    }
  }
  // Up to the hit the other bones are shown exactly as without the mask. From the hit on the
  // head's body differs (after the get-up it eased onto the head as shown, the look-at's or the
  // clip's) and takes part in the powered physics: there the check above holds.
  ASSERT_GE(with.hitFrame, 0);
  EXPECT_EQ(with.hitFrame, without.hitFrame) << "the runs took the same course";
  const size_t frames =
      std::min({with.displayed.size(), without.displayed.size(), static_cast<size_t>(with.hitFrame) + 1});
  double otherDifference = 0.0;
  for (size_t f = 0; f < frames; ++f) {
    for (size_t j = 0; j < underHead.size(); ++j) {
      if (underHead[j]) continue;
      const Transform& a = with.displayed[f][j];
      const Transform& b = without.displayed[f][j];
      otherDifference = std::max({otherDifference, glm::length(a.translation - b.translation),
                                  angleBetween(a.rotation, b.rotation)});
    }
  }
  std::printf(
      "[ look-at ] bones outside the head's subtree, with vs without the mask over %zu frames (to the hit): "
      "%.2e\n",
      frames, otherDifference);
  EXPECT_EQ(otherDifference, 0.0);
}

// Bones are named by name or index; an unknown one, an index out of range and the root are
// refused with the bone named.
TEST(LookAt, OwnedBonesAreValidated) {
  const test::Character& c = loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  auto world = createBulletWorld();
  std::vector<Transform> locals(static_cast<size_t>(c.skeleton().jointCount()));
  c.clip().sample(0.0, WrapMode::Loop, locals);
  const auto create = [&](const CharacterSettings& s) {
    return Character::create(*world, c.asset, c.skeleton(), s, Transform::identity(), locals);
  };
  CharacterSettings s;
  s.animationOwnedBones = {"nek"};
  auto bad = create(s);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("no bone named 'nek'"), std::string::npos) << bad.error();
  s.animationOwnedBones = {"root"};
  bad = create(s);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("'root' is the skeleton's root"), std::string::npos) << bad.error();
  s.animationOwnedBones.clear();
  s.animationOwnedJoints = {c.skeleton().jointCount()};
  bad = create(s);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("joint " + std::to_string(c.skeleton().jointCount()) + " is out of range"),
            std::string::npos)
      << bad.error();
  s.animationOwnedJoints = {-1};
  EXPECT_FALSE(create(s));
  // By name and by index, the same joint once.
  const int head = c.asset->map[Slot::Head];
  s.animationOwnedBones = {c.skeleton().jointNames[static_cast<size_t>(head)]};
  s.animationOwnedJoints = {head};
  auto good = create(s);
  ASSERT_TRUE(good) << good.error();
  ASSERT_EQ((*good)->animationOwnedJoints().size(), 1u);
  EXPECT_EQ((*good)->animationOwnedJoints()[0], head);
}

// The gaze helper: a head under an identity parent turned toward a target to its left looks
// there, its up kept up; a target straight above returns the fallback.
TEST(LookAt, LookAtLocalRotationAimsTheBindForward) {
  Skeleton skeleton;
  skeleton.jointNames = {"root", "head"};
  skeleton.parents = {kNoParent, 0};
  skeleton.restLocal = {Transform::identity(),
                        Transform{fromRotationVector(Vec3{0.0, 0.3, 0.0}), Vec3{0, 1, 0}}};
  const Vec3 forward{0.0, 0.0, 1.0};
  const Transform parent{fromRotationVector(Vec3{0.0, 0.0, 0.2}), Vec3{0.0, 1.0, 0.0}};
  const Vec3 at{0.0, 1.0, 0.0};
  const Vec3 target{5.0, 2.0, 0.0};  // +X from the head (at (0, 2, 0))
  const Quat fallback{1.0, 0.0, 0.0, 0.0};
  const Quat local = lookAtLocalRotation(skeleton, 1, forward, parent, at, target, fallback);
  const Quat world = parent.rotation * local;
  const Quat bindModel = skeleton.restLocal[1].rotation;
  const Vec3 aim = world * (glm::conjugate(bindModel) * forward);
  const Vec3 up = world * (glm::conjugate(bindModel) * Vec3{0.0, 1.0, 0.0});
  const Vec3 to = glm::normalize(target - parent.transformPoint(at));
  EXPECT_NEAR(glm::length(aim - to), 0.0, 1e-9);
  // Up stays in the vertical plane through the aim, on the upper side, at right angles to it.
  EXPECT_NEAR(glm::dot(up, glm::normalize(glm::cross(to, Vec3{0.0, 1.0, 0.0}))), 0.0, 1e-9);
  EXPECT_NEAR(glm::dot(up, to), 0.0, 1e-9);
  EXPECT_GT(up.y, 0.9);
  const Quat above = lookAtLocalRotation(skeleton, 1, forward, parent, at,
                                         parent.transformPoint(at) + Vec3{0.0, 5.0, 0.0}, fallback);
  EXPECT_EQ(above, fallback);
}

}  // namespace
}  // namespace handoff
