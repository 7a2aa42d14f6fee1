// Test support for the get-up tests of the controller: a real character running its clip in a
// Bullet world with the DeepMimic get-up clips (retargeted through both humanoid maps when the
// character is another rig), stepped frame by frame at 60 Hz.
#pragma once

#include "handoff/controller.h"
#include "handoff/measure.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/clip_scene.h"
#include "support/getup_clips.h"
#include "support/stance.h"

namespace handoff::test {

inline constexpr double kFrame = 1.0 / 60.0;

/// A DeepMimic get-up clip on the character's own skeleton, prepared as the library's loaders do
/// (support/getup_clips.h: the face-up clip completed to standing; retargeted through both
/// humanoid maps when the character is another rig). `complete` = false: as shipped.
inline std::optional<GetUpClip> loadGetUp(const Character& c, const char* file, bool complete = true) {
  Result<std::vector<GetUpClip>> pair =
      deepMimicGetUps(HANDOFF_DATA_DIR, c.skeleton(), c.asset->map, complete);
  if (!pair) {
    ADD_FAILURE() << file << ": " << pair.error();
    return std::nullopt;
  }
  if (std::string(file) == kDeepMimicFaceUp) return (*pair)[0];
  if (std::string(file) == kDeepMimicFaceDown) return (*pair)[1];
  ADD_FAILURE() << file << " is not a DeepMimic get-up clip";
  return std::nullopt;
}

inline int clipIndex(const Character& c, const std::string& name) {
  for (size_t i = 0; i < c.imported.clips.size(); ++i) {
    if (c.imported.clips[i].name == name) return static_cast<int>(i);
  }
  ADD_FAILURE() << "no clip '" << name << "'";
  return -1;
}

/// The foot joint of a side (the FootX slot, else the first joint below the lower leg).
inline int footJoint(const Character& c, Slot foot, Slot lowerLeg) {
  if (c.asset->map[foot] >= 0) return c.asset->map[foot];
  const std::vector<int> below = c.skeleton().children(c.asset->map[lowerLeg]);
  return below.empty() ? c.asset->map[lowerLeg] : below.front();
}

/// A character running `clip` in its own world with flat ground at y = 0 and get-up clips.
struct GetUpScene {
  const Character* c = nullptr;
  std::unique_ptr<PhysicsWorld> world;
  std::unique_ptr<handoff::Character> ch;
  std::optional<GetUpClip> supine, prone;
  int clip = 0;
  double animTime = 0.0, clipTime = 0.0;
  Transform root;
  std::vector<Transform> locals, dense, models;
  /// The game's animation at a clip time (default: the character's clip `clip`, looping).
  std::function<void(double, std::span<Transform>)> animation;
  int pelvis = -1;
  std::array<int, 2> feet{-1, -1};

  ::testing::AssertionResult start(const Character& character, int runClip, const Transform& startRoot,
                                   const CharacterSettings& settings = {}) {
    c = &character;
    clip = runClip;
    root = startRoot;
    world = createBulletWorld();
    world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
    const auto n = static_cast<size_t>(c->skeleton().jointCount());
    locals.resize(n);
    dense.resize(n);
    models.resize(n);
    if (!animation) {
      animation = [this](double t, std::span<Transform> out) {
        c->clip(clip).sample(t, WrapMode::Loop, out);
      };
    }
    animation(0.0, locals);
    Result<std::unique_ptr<handoff::Character>> created =
        handoff::Character::create(*world, c->asset, c->skeleton(), settings, startRoot, locals);
    if (!created) return ::testing::AssertionFailure() << created.error();
    ch = std::move(created).value();
    supine = loadGetUp(*c, "deepmimic/humanoid3d_getup_faceup.bvh");
    prone = loadGetUp(*c, "deepmimic/humanoid3d_getup_facedown.bvh");
    if (!supine || !prone) return ::testing::AssertionFailure() << "get-up clips";
    ch->setGetUpClips(supine, prone);
    pelvis = c->asset->map[Slot::Pelvis];
    feet = {footJoint(*c, Slot::FootL, Slot::LowerLegL), footJoint(*c, Slot::FootR, Slot::LowerLegR)};
    return ::testing::AssertionSuccess();
  }

  /// Preprocesses one frame of the run clip (the game's animation keeps running) and steps.
  /// `afterWorldStep` runs between the physics step and postStep.
  template <class F>
  void step(F&& afterWorldStep) {
    animTime += kFrame;
    clipTime += kFrame;
    animation(clipTime, locals);
    const AnimationInput input{animTime, root, locals, false};
    EXPECT_TRUE(ch->preStep(input, kFrame));
    world->step(kFrame, 2);
    afterWorldStep();
    ch->postStep(kFrame);
  }
  void step() {
    step([] {});
  }

  /// Cuts to ragdoll with a dense sample an eighth of a frame before the last input.
  bool goRagdoll() {
    animation(clipTime - kFrame / 8, dense);
    const AnimationInput denseInput{animTime - kFrame / 8, root, dense, false};
    const HandoffRecord& record = ch->goRagdoll(&denseInput);
    EXPECT_TRUE(record.committed) << record.failure;
    return record.committed;
  }

  /// World transforms of every displayed bone.
  std::vector<Transform> displayedWorld() {
    localToModel(c->skeleton(), ch->displayLocals(), models);
    std::vector<Transform> out(models.size());
    for (size_t j = 0; j < out.size(); ++j) out[j] = ch->displayRoot() * models[j];
    return out;
  }

  /// Lowest displayed point (joints and end sites) of the subtree under `top`. [m]
  double lowestDisplayedUnder(int top) { return lowestUnder(c->skeleton(), displayedWorld(), top); }

  const GetUpClip& chosen() const {
    return ch->recoveries().back().facing == Facing::Supine ? *supine : *prone;
  }
};

/// Figures of one run -> fall -> get-up -> run.
struct RunFigures {
  double settleTime = -1.0;  ///< From the handoff to the settle. [s]
  Facing facing = Facing::Undecided;
  FacingSource facingSource = FacingSource::PelvisProjection;
  TransitionPlan transition;
  double gatherTime = 0.0;       ///< Servos pulling the limbs toward the clip's first frame. [s]
  double weightZeroError = 1.0;  ///< Displayed vs fallen bones at the recovery's first frame. [m]
  /// Per frame of the recovery, the displayed pelvis and feet against the get-up clip at the time
  /// the character plays it (RecoveryJumpMeasure): beyond the clip's own motion, and raw.
  JumpFigures recovery;
  double finalPelvisHeight = 0.0;    ///< Displayed, when the recovery finished. [m]
  double clipEndPelvisHeight = 0.0;  ///< The chosen clip's own last-frame pelvis above its floor. [m]
  double getUpTail = 0.0;            ///< The chosen clip's completion tail (0: none). [s]
  std::array<double, 2> finalFootHeight{1.0, 1.0};  ///< Lowest point under each foot. [m]
  /// Per frame of the resumed run (its first second), against the run clip's own motion.
  JumpFigures resume;
  double exitBlend = 0.0;  ///< RecoveryRecord::exitBlend. [s]
  int blockingViolations = 0;
  bool recovered = false;
  bool landed = false;  ///< Landed on its feet (LandingSettings) instead of getting up.
  bool ranAgain = false;
  std::string story;  ///< The character's events, "t kind: detail" per line (for a failing member).
};

/// Runs `runClip`, hands off at `handoffTime`, lets the ragdoll fall, settle and get up, then
/// runs again for a second from where the character stands.
inline RunFigures runFallAndGetUp(const Character& c, int runClip, double handoffTime,
                                  const Transform& startRoot, const CharacterSettings& settings = {}) {
  RunFigures f;
  GetUpScene scene;
  EXPECT_TRUE(scene.start(c, runClip, startRoot, settings));
  if (!scene.ch) return f;
  handoff::Character& ch = *scene.ch;
  const Skeleton& skeleton = c.skeleton();
  const auto n = static_cast<size_t>(skeleton.jointCount());
  std::vector<Transform> fallen(c.asset->bodies.size());
  std::vector<Transform> clipA(n), clipB(n);
  // The runner's measures (measure.h): the recovery against the get-up clip at the time the
  // character plays it; the resumed run against the run clip's own motion over each frame.
  RecoveryJumpMeasure recoveryJumps(ch);
  DisplayJumpMeasure resumeJumps(ch);
  bool running = true;
  for (int step = 0; step < 60 * 20 && !f.ranAgain; ++step) {
    const CharacterState before = ch.state();
    scene.step([&] {
      for (int b = 0; b < ch.ragdoll().bodyCount(); ++b)
        fallen[static_cast<size_t>(b)] = scene.world->transform(ch.ragdoll().body(b));
    });
    if (ch.blockingRepresentations() != 1) {
      ++f.blockingViolations;
      ADD_FAILURE() << "step " << step << " state " << characterStateName(ch.state()) << ": "
                    << ch.blockingRepresentations() << " blocking representations";
    }
    if (running && scene.animTime >= handoffTime) {
      running = false;
      if (!scene.goRagdoll()) return f;
    }
    const std::vector<Transform> shown = scene.displayedWorld();
    if (before == CharacterState::Ragdoll && ch.state() == CharacterState::Recovering) {
      // Weight 0: every bone with a body is displayed where its fallen body puts it.
      f.weightZeroError = 0.0;
      for (size_t b = 0; b < c.asset->bodies.size(); ++b) {
        const BodyDef& def = c.asset->bodies[b];
        const Transform fallenBone = fallen[b] * def.boneFromBody.inverse();
        f.weightZeroError =
            std::max(f.weightZeroError,
                     glm::length(fallenBone.translation - shown[static_cast<size_t>(def.joint)].translation));
      }
      f.transition = ch.recoveries().back().transition;
      f.gatherTime = ch.recoveries().back().gatherTime;
    }
    recoveryJumps.observe(ch, f.recovery);
    if (f.recovered && ch.state() == CharacterState::Animated) {
      // Running again: the run clip's own motion of each joint over this frame.
      c.clip(runClip).sample(scene.clipTime, WrapMode::Loop, clipA);
      c.clip(runClip).sample(std::max(0.0, scene.clipTime - kFrame), WrapMode::Loop, clipB);
      resumeJumps.observe(ch, clipA, clipB, f.resume);
    } else {
      resumeJumps.observe(ch);
    }
    const bool finished = ch.takeRecoveryFinished();
    if (finished && ch.recoveries().empty()) {
      f.landed = true;  // on its feet without a get-up (LandingSettings): no get-up to measure
      break;
    }
    if (finished) {
      f.recovered = true;
      f.clipEndPelvisHeight = scene.chosen().info.endPelvisHeight;
      f.getUpTail = scene.chosen().info.completion.tailDuration;
      f.finalPelvisHeight = shown[static_cast<size_t>(scene.pelvis)].translation.y;
      f.finalFootHeight = {scene.lowestDisplayedUnder(scene.feet[0]),
                           scene.lowestDisplayedUnder(scene.feet[1])};
      // Resume running from where the character stands.
      scene.root =
          rootToStartClip(c.clip(runClip), skeleton, scene.pelvis, c.asset->modelForward, ch.displayRoot());
      scene.clipTime = 0.0;
    } else if (f.recovered && ch.state() == CharacterState::Animated) {
      // A second of running again: the game resumes its run clip at frame 0 and the controller
      // fades the get-up's last frame out on top of it (CharacterSettings::recoveryExitBlend).
      if (scene.clipTime > 1.0) f.ranAgain = true;
    }
  }
  for (const CharacterEvent& e : ch.events()) {
    char line[64];
    std::snprintf(line, sizeof line, "%.2f s ", e.time);
    f.story += std::string(line) + eventKindName(e.kind) + ": " + e.detail + "\n";
  }
  {
    char line[160];
    std::snprintf(line, sizeof line, "end state %s, settled %d, facing %s%s\n",
                  characterStateName(ch.state()), ch.settle().settled() ? 1 : 0,
                  facingName(ch.facing().candidate()),
                  ch.facing().inHoldBand() ? " (on its side: waiting)" : "");
    f.story += line;
  }
  if (!ch.recoveries().empty()) {
    f.settleTime = ch.recoveries()[0].settleTime - ch.handoffs().front().time;
    f.facing = ch.recoveries()[0].facing;
    f.facingSource = ch.recoveries()[0].facingSource;
    f.exitBlend = ch.recoveries()[0].exitBlend;
  }
  return f;
}

}  // namespace handoff::test
