// Limb lag (issue 19, SPEC.md section 6: "light physics lag on limb ends while walking"): the
// Mesh2Motion character walks; its forearms and hands go physical under the drives
// (Character::goLimbLag) while every other body and the root stay the animation's; the hands
// trail the walk by a visible, bounded distance; switching it on and off moves nothing faster
// than the animation does.
#include "handoff/controller.h"
#include "handoff/measure.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "controller/getup_scene.h"
#include "support/clip_scene.h"

namespace handoff {
namespace {

using test::kFrame;
using test::loadCharacter;

TEST(LimbLag, TheForearmsAndHandsTrailTheWalkWhileTheRestIsTheAnimation) {
  const test::Character& c = loadCharacter("mesh2motion/human-base-animations.glb");
  ASSERT_TRUE(c.asset);
  const int walk = test::clipIndex(c, "Walk_Loop");
  ASSERT_GE(walk, 0);
  const Clip& clip = c.clip(walk);
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  const auto n = static_cast<size_t>(c.skeleton().jointCount());
  std::vector<Transform> locals(n), before(n), models(n), shown(n);
  const Transform root = Transform::identity();
  clip.sample(0.0, WrapMode::Loop, locals);
  auto created = Character::create(*world, c.asset, c.skeleton(), CharacterSettings{}, root, locals);
  ASSERT_TRUE(created) << created.error();
  Character& ch = **created;
  const int pelvis = c.asset->map[Slot::Pelvis];
  ASSERT_GE(pelvis, 0);

  LimbLagMeasure lagMeasure;
  LimbLagMetrics lag;
  ReturnMeasure returnMeasure(ch);
  std::vector<ReturnMetrics> returns;
  double time = 0.0;
  double worstPelvisOff = 0.0;
  for (int frame = 0; frame < 60 * 4; ++frame) {
    time += kFrame;
    clip.sample(time, WrapMode::Loop, locals);
    clip.sample(time - kFrame, WrapMode::Loop, before);
    ASSERT_TRUE(ch.preStep(AnimationInput{time, root, locals, false}, kFrame));
    world->step(kFrame, 2);
    ch.postStep(kFrame);
    lagMeasure.observe(ch, root, locals, before, time, lag);
    returnMeasure.observe(ch, root, locals, before, time, returns);
    if (ch.state() == CharacterState::Powered) {
      // The pelvis (kinematic on the walk) is shown exactly where the walk puts it.
      localToModel(c.skeleton(), locals, models);
      localToModel(c.skeleton(), ch.displayLocals(), shown);
      const Vec3 animated = root.transformPoint(models[static_cast<size_t>(pelvis)].translation);
      const Vec3 displayed = ch.displayRoot().transformPoint(shown[static_cast<size_t>(pelvis)].translation);
      worstPelvisOff = std::max(worstPelvisOff, glm::length(displayed - animated));
    }
    if (frame == 30) {
      const LimbLagSettings settings;
      ASSERT_TRUE(ch.goLimbLag(settings));
      lagMeasure.begin(ch, settings.rampTime, time, lag);
      // Exactly the bodies of the four slots are handed to physics.
      for (int b = 0; b < ch.ragdoll().bodyCount(); ++b) {
        bool lagging = false;
        for (const Slot slot : settings.slots) lagging = lagging || c.asset->bodyForSlot(slot) == b;
        EXPECT_EQ(ch.ragdoll().authority(b) != Authority::Animation, lagging)
            << c.asset->bodies[static_cast<size_t>(b)].name;
      }
    }
    if (frame == 180) {
      ASSERT_TRUE(ch.goAnimated(0.25));
    }
  }
  std::printf(
      "[ figure ] walk limb lag: %d frames, hands' lag median %.1f mm, worst %.1f mm (%s); switch-on jump "
      "%.2f mm "
      "per frame beyond the walk; pelvis off the walk %.2g m\n",
      lag.frames, lag.medianLag * 1e3, lag.worstLag * 1e3, lag.worstPoint.c_str(),
      lag.worstSwitchOnJump * 1e3, worstPelvisOff);
  EXPECT_GT(lag.frames, 100);
  EXPECT_LE(worstPelvisOff, 1e-9);
  EXPECT_GE(lag.medianLag, 0.005);  // visible
  EXPECT_LE(lag.worstLag, 0.10);    // bounded
  EXPECT_LE(lag.worstSwitchOnJump, 0.02);
  // Off: a return to animation like any powered one.
  ASSERT_EQ(returns.size(), 1u);
  const ReturnMetrics& back = returns[0];
  std::printf(
      "[ figure ] walk limb lag off: body speed beyond the walk %.3f m/s (%s), attachment jump %.2f mm\n",
      back.worstBodySpeedExcess, back.worstBody.c_str(), back.worstAttachmentJump * 1e3);
  EXPECT_EQ(back.from, "powered");
  EXPECT_LE(back.worstBodySpeedExcess, 1.0);
  EXPECT_LE(back.worstAttachmentJump, 0.02);
  EXPECT_LE(back.worstPelvisJump, 1e-6);
  EXPECT_EQ(ch.state(), CharacterState::Animated);
}

TEST(LimbLag, IsRefusedWithoutABodyOrWithAWeightOutOfRange) {
  const test::Character& c = loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  auto world = createBulletWorld();
  const auto n = static_cast<size_t>(c.skeleton().jointCount());
  std::vector<Transform> locals(n);
  c.clip().sample(0.0, WrapMode::Loop, locals);
  auto created =
      Character::create(*world, c.asset, c.skeleton(), CharacterSettings{}, Transform::identity(), locals);
  ASSERT_TRUE(created) << created.error();
  Character& ch = **created;
  LimbLagSettings none;
  none.slots.clear();
  Status refused = ch.goLimbLag(none);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("none of the slots"), std::string::npos) << refused.error();
  LimbLagSettings heavy;
  heavy.weight = 0.0;
  refused = ch.goLimbLag(heavy);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().find("weight must be in (0, 1]"), std::string::npos) << refused.error();
  EXPECT_EQ(ch.state(), CharacterState::Animated);
  // The DeepMimic rig has no hand bones: its forearms alone lag.
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  double time = 0.0;
  for (int frame = 0; frame < 10; ++frame) {
    time += kFrame;
    c.clip().sample(time, WrapMode::Loop, locals);
    ASSERT_TRUE(ch.preStep(AnimationInput{time, Transform::identity(), locals, false}, kFrame));
    world->step(kFrame, 2);
    ch.postStep(kFrame);
  }
  const Status on = ch.goLimbLag();
  ASSERT_TRUE(on) << on.error();
  int lagging = 0;
  for (int b = 0; b < ch.ragdoll().bodyCount(); ++b)
    lagging += ch.ragdoll().authority(b) != Authority::Animation;
  EXPECT_EQ(lagging, (c.asset->bodyForSlot(Slot::LowerArmL) >= 0) +
                         (c.asset->bodyForSlot(Slot::LowerArmR) >= 0) +
                         (c.asset->bodyForSlot(Slot::HandL) >= 0) + (c.asset->bodyForSlot(Slot::HandR) >= 0));
  EXPECT_EQ(ch.state(), CharacterState::Powered);
}

}  // namespace
}  // namespace handoff
