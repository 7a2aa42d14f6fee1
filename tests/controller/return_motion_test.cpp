// Continuity back to animation, bodies included (issue 19, SPEC.md section 7): leaving a get-up
// and leaving powered mode, the kinematic bodies reach the resumed animation along the display's
// blend back, never faster than the animation's own motion + 1 m/s in a frame, and the displayed
// attachment points (bones without a body, the tips of the hands and head) do not jump. Measured
// with the runner's ReturnMeasure on three rigs falling from their locomotion, getting up and
// running again, and on the hit reaction's return.
#include "handoff/controller.h"
#include "handoff/measure.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "controller/getup_scene.h"
#include "support/clip_scene.h"

namespace handoff {
namespace {

using test::kFrame;
using test::loadCharacter;

// Per return to animation: at most 1 m/s beyond the resumed animation's own body speed, and an
// attachment's displayed move at most 2 cm per frame beyond its own (the get-up's bound).
constexpr double kBodySpeedExcess = 1.0;  // [m/s]
constexpr double kAttachmentJump = 0.02;  // [m]

void printReturn(const char* what, const ReturnMetrics& m) {
  std::printf(
      "[ return ] %s: back from %s at %.2f s, %d frames: body speed beyond its own %.3f m/s (%s, fastest "
      "%.2f m/s), attachment jump %.1f mm (%s; own fastest %.1f mm), pelvis %.1f mm, feet %.1f mm (own "
      "fastest %.1f mm)\n",
      what, m.from.c_str(), m.time, m.frames, m.worstBodySpeedExcess, m.worstBody.c_str(), m.worstBodySpeed,
      m.worstAttachmentJump * 1e3, m.worstAttachment.c_str(), m.attachmentOwnStep * 1e3,
      m.worstPelvisJump * 1e3, m.worstFootJump * 1e3, m.footOwnStep * 1e3);
}

struct ReturnRun {
  std::vector<ReturnMetrics> returns;
  int bonesWithoutBody = 0;  ///< Attachment points on bones without a body.
};

// Runs `clip`, falls at `handoffTime`, gets up, runs again from where it stands for 1.5 s.
ReturnRun fallGetUpAndRun(const test::Character& c, int clip, double handoffTime,
                          const CharacterSettings& settings = {}) {
  ReturnRun run;
  std::vector<ReturnMetrics>& returns = run.returns;
  test::GetUpScene scene;
  EXPECT_TRUE(scene.start(c, clip, Transform::identity(), settings));
  if (!scene.ch) return run;
  Character& ch = *scene.ch;
  ReturnMeasure measure(ch);
  for (const ReturnMeasure::Point& p : measure.attachments())
    run.bonesWithoutBody += p.offset == Vec3{0.0} ? 1 : 0;
  const auto n = static_cast<size_t>(c.skeleton().jointCount());
  std::vector<Transform> now(n), before(n);
  bool fell = false;
  double resumedAt = -1.0;
  for (int frame = 0; frame < 60 * 20; ++frame) {
    scene.step();
    // The animation the character resumes: the clip at this frame and the one before, one root.
    c.clip(clip).sample(scene.clipTime, WrapMode::Loop, now);
    c.clip(clip).sample(std::max(0.0, scene.clipTime - kFrame), WrapMode::Loop, before);
    measure.observe(ch, scene.root, now, before, scene.animTime, returns);
    if (!fell && scene.animTime >= handoffTime) {
      fell = true;
      if (!scene.goRagdoll()) break;
    }
    if (ch.takeRecoveryFinished()) {
      scene.root =
          rootToStartClip(c.clip(clip), c.skeleton(), scene.pelvis, c.asset->modelForward, ch.displayRoot());
      scene.clipTime = 0.0;
      resumedAt = scene.animTime;
    }
    if (resumedAt >= 0.0 && scene.animTime > resumedAt + 1.5) break;
  }
  EXPECT_GE(resumedAt, 0.0) << "got up and ran again";
  return run;
}

void expectContinuous(const char* what, const std::vector<ReturnMetrics>& returns, const char* from) {
  ASSERT_EQ(returns.size(), 1u) << what;
  const ReturnMetrics& m = returns[0];
  printReturn(what, m);
  EXPECT_EQ(m.from, from);
  EXPECT_GT(m.frames, 10) << "the blend back ran";
  EXPECT_LE(m.worstBodySpeedExcess, kBodySpeedExcess) << what << ": " << m.worstBody;
  // The display's blend back is the get-up's exit blend (the bodies above follow it only as fast
  // as allowed): the pelvis within 2 cm per frame of the animation's own move, the feet and the
  // attachments below the animation's own fastest move of them in a frame (fading the clip's
  // last frame on a running animation turns the fade's offsets with the limbs; a cut moved a
  // foot 45-72 cm in one frame, docs/INTEGRATION.md).
  EXPECT_LE(m.worstPelvisJump, kAttachmentJump) << what;
  EXPECT_LE(m.worstFootJump, std::max(kAttachmentJump, m.footOwnStep)) << what;
  EXPECT_LE(m.worstAttachmentJump, std::max(kAttachmentJump, m.attachmentOwnStep))
      << what << ": " << m.worstAttachment;
}

TEST(ReturnToAnimation, DeepMimicRunBodiesFollowTheBlendOutOfTheGetUp) {
  const test::Character& c = loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  expectContinuous("deepmimic run", fallGetUpAndRun(c, 0, 0.5).returns, "getup");
}

TEST(ReturnToAnimation, CmuJumpBodiesFollowTheBlendOutOfTheGetUp) {
  const test::Character& c = loadCharacter("cmu/01_01.bvh");
  ASSERT_TRUE(c.asset);
  // Handed off mid-jump, this ragdoll comes down on its feet 0.18 s later and, with the default
  // LandingSettings, lands into the run without lying down (a return "from landing": pelvis
  // 1.2 mm, feet 11.0 mm per frame beyond the run, bodies 0.98 m/s). This test is about the
  // get-up's way back: the landing is off here (tests/runner/landing_runner_test.cpp measures it).
  CharacterSettings getUpOnly;
  getUpOnly.landing.enabled = false;
  expectContinuous("cmu 01_01", fallGetUpAndRun(c, 0, 3.75, getUpOnly).returns, "getup");
}

TEST(ReturnToAnimation, Mesh2MotionJogBodiesAndFingersFollowTheBlendOutOfTheGetUp) {
  const test::Character& c = loadCharacter("mesh2motion/human-base-animations.glb");
  ASSERT_TRUE(c.asset);
  const int jog = test::clipIndex(c, "Jog_Fwd_Loop");
  ASSERT_GE(jog, 0);
  const ReturnRun run = fallGetUpAndRun(c, jog, 0.4);
  // Its fingers and toes have no body: attachment points as a weapon socket would be.
  EXPECT_GE(run.bonesWithoutBody, 20);
  expectContinuous("mesh2motion jog", run.returns, "getup");
}

// The hit reaction's return: the bodies, dynamic a frame before, go kinematic on the blend from
// their physics pose instead of onto the animation in one step.
// The Boxing_Toes guard pose, held, hit at the chest with 150 N s; run for `seconds`.
std::vector<ReturnMetrics> boxingHitReaction(const CharacterSettings& settings, double seconds) {
  std::vector<ReturnMetrics> returns;
  const test::Character& c = loadCharacter("cmu/Boxing_Toes.bvh");
  EXPECT_TRUE(c.asset);
  if (!c.asset) return returns;
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  const auto n = static_cast<size_t>(c.skeleton().jointCount());
  std::vector<Transform> locals(n);
  c.clip().sample(0.0, WrapMode::Clamp, locals);  // the guard pose, held
  // Standing on the ground as scenarios/powered_hit_reaction.json stands it.
  const Transform root = Transform::fromTranslation(Vec3{0.0, -0.005454, 0.0});
  auto created = Character::create(*world, c.asset, c.skeleton(), settings, root, locals);
  EXPECT_TRUE(created) << (created ? "" : created.error());
  if (!created) return returns;
  Character& ch = **created;
  ReturnMeasure measure(ch);
  double time = 0.0;
  const int chest = c.asset->bodyForSlot(Slot::Chest);
  for (int frame = 0; frame < static_cast<int>(60 * seconds); ++frame) {
    time += kFrame;
    EXPECT_TRUE(ch.preStep(AnimationInput{time, root, locals, false}, kFrame));
    world->step(kFrame, 2);
    ch.postStep(kFrame);
    measure.observe(ch, root, locals, locals, time, returns);
    if (frame == 30) {
      const Vec3 point = world->transform(ch.ragdoll().body(chest)).translation;
      EXPECT_TRUE(ch.applyImpulse(chest, 150.0 * root.transformVector(-c.asset->modelForward), point));
    }
  }
  return returns;
}

TEST(ReturnToAnimation, HitReactionBodiesFollowTheBlendBack) {
  expectContinuous("boxing hit reaction", boxingHitReaction(CharacterSettings{}, 4.0), "powered");
}

// Planned with a margin below the bound it is checked against (issue 31): bodies easing onto the
// animation at exactly returnBodySpeed measured 1.0000000000000175 against <= 1 (rounding).
// Here the bound is slow enough (5 cm/s) that the bodies run at it for the whole approach: the
// measured figure stays below the bound by the planning margin (1e-3), not on it.
TEST(ReturnToAnimation, TheBodiesApproachIsPlannedBelowItsBound) {
  CharacterSettings settings;
  settings.returnBodySpeed = 0.05;  // [m/s]
  const std::vector<ReturnMetrics> returns = boxingHitReaction(settings, 6.0);
  ASSERT_EQ(returns.size(), 1u);
  const ReturnMetrics& m = returns[0];
  printReturn("boxing hit reaction at 0.05 m/s", m);
  EXPECT_GT(m.worstBodySpeedExcess, 0.05 * 0.99) << "the approach ran at its bound";
  EXPECT_LE(m.worstBodySpeedExcess, 0.05 * (1.0 - 0.5e-3)) << m.worstBody;
}

// A runner whose forearms and hands went physical (a partial ragdoll) returns to the running
// animation: the blend back fades the physics pose's offsets from the animation, so the pelvis
// and feet, kinematic on the animation all along, keep its motion exactly, and nothing stalls.
// Blending from the frozen last pose instead stalled the pelvis for a frame and then moved it
// 52 mm per frame beyond the run's own motion (feet 77 mm, the hand tips 88 mm), and the bodies,
// eased from one frame behind the animation, ran at its own speed + 1 m/s for four frames.
TEST(ReturnToAnimation, APartialRagdollOfARunnersArmsReturnsWithTheRunsMotion) {
  const test::Character& c = loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  const auto n = static_cast<size_t>(c.skeleton().jointCount());
  std::vector<Transform> locals(n), before(n);
  const Transform root = Transform::identity();
  c.clip().sample(0.0, WrapMode::Loop, locals);
  auto created = Character::create(*world, c.asset, c.skeleton(), CharacterSettings{}, root, locals);
  ASSERT_TRUE(created) << created.error();
  Character& ch = **created;
  std::vector<double> weights(c.asset->bodies.size(), 0.0);
  for (Slot slot : {Slot::LowerArmL, Slot::HandL, Slot::LowerArmR, Slot::HandR}) {
    const int body = c.asset->bodyForSlot(slot);
    if (body >= 0) weights[static_cast<size_t>(body)] = 1.0;
  }
  ASSERT_GE(std::count(weights.begin(), weights.end(), 1.0), 2);
  ReturnMeasure measure(ch);
  std::vector<ReturnMetrics> returns;
  double time = 0.0;
  for (int frame = 0; frame < 60 * 3; ++frame) {
    time += kFrame;
    c.clip().sample(time, WrapMode::Loop, locals);
    c.clip().sample(time - kFrame, WrapMode::Loop, before);
    ASSERT_TRUE(ch.preStep(AnimationInput{time, root, locals, false}, kFrame));
    world->step(kFrame, 2);
    ch.postStep(kFrame);
    measure.observe(ch, root, locals, before, time, returns);
    if (frame == 30) {
      ASSERT_TRUE(ch.goPartial(weights, 0.2));
    }
    if (frame == 120) {
      ASSERT_TRUE(ch.goAnimated(0.25));
    }
  }
  ASSERT_EQ(returns.size(), 1u);
  const ReturnMetrics& m = returns[0];
  printReturn("run, arms partial", m);
  EXPECT_EQ(m.from, "powered");
  EXPECT_GT(m.frames, 10) << "the blend back ran";
  EXPECT_LE(m.worstBodySpeedExcess, 0.1) << m.worstBody;  // only the arms' fade, nothing held back
  EXPECT_LE(m.worstPelvisJump, 1e-6);                     // kinematic on the animation throughout
  EXPECT_LE(m.worstFootJump, 1e-6);
  EXPECT_LE(m.worstAttachmentJump, kAttachmentJump) << m.worstAttachment;
}

}  // namespace
}  // namespace handoff
