// Breakable joints on a character (SPEC.md section 6): a ragdoll whose left elbow has a finite
// break force, pulled at the forearm by a known force ramp, breaks there with the force it was set
// to, splits cleanly (no other joint stretches, every bone under the break follows its detached
// body) and never gets up; the same character with the asset's infinite limits gets up.
#include "handoff/controller.h"
#include "handoff/physics_bullet.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "controller/getup_scene.h"
#include "drive/fake_world.h"
#include "support/clip_scene.h"

namespace handoff {
namespace {

/// Pulls a body sideways with f = rate * t (from the first substep it runs), at its centre, for
/// `duration` seconds or until `stopAfter` seconds past the moment its joint broke.
class BreakPull final : public SubstepListener {
 public:
  BreakPull(PhysicsWorld& world, BodyId body, JointId joint, double rate, double duration, double stopAfter)
      : world_(world), body_(body), joint_(joint), rate_(rate), duration_(duration), stopAfter_(stopAfter) {}
  void onSubstep(double h) override {
    if (world_.jointBreakState(joint_).broken) {
      sinceBreak_ += h;
      if (sinceBreak_ > stopAfter_) return;
    }
    if (time_ + h > duration_) return;
    time_ += h;
    world_.applyLinearImpulse(body_, Vec3{0.0, 0.0, rate_ * time_ * h}, world_.transform(body_).translation);
  }
  double forceAt(double t) const { return rate_ * t; }
  double time() const { return time_; }

 private:
  PhysicsWorld& world_;
  BodyId body_;
  JointId joint_;
  double rate_, duration_, stopAfter_, time_ = 0.0, sinceBreak_ = 0.0;
};

struct BreakFigures {
  bool broke = false;
  JointBreak first;
  double pullAtBreak = 0.0;        ///< The pull's force at the break time. [N]
  double forceBefore = 0.0;        ///< The elbow's force at the end of the step before the break. [N]
  double worstStepChange = 0.0;    ///< Largest change of the elbow's force over a step before it. [N]
  double worstOtherStretch = 0.0;  ///< Largest anchor separation of an unbroken joint after the break. [m]
  double brokenGap = 0.0;          ///< Anchor separation of the broken joint at the end. [m]
  double writeBackError = 0.0;     ///< Displayed bone vs its body's pose, worst over bodies. [m]
  bool everRecovered = false;      ///< Left Ragdoll after the handoff (gather, get-up).
  bool leftPoweredEarly = false;   ///< Powered run: left Powered before the break.
  int knockouts = 0;
  int breakEvents = 0, getUpEvents = 0;
  std::string story;
};

constexpr double kElbowBreakForce = 400.0;  // [N]
constexpr double kPullRate = 1000.0;        // [N/s]
constexpr double kPullDuration = 0.6;       // [s]

/// The DeepMimic runner handed off 0.5 s into its run, the left forearm pulled sideways from the
/// first ragdoll step; `breakForce` on the left elbow (infinite: the asset as built). 10 s.
BreakFigures runBreak(double breakForce, bool powered = false) {
  BreakFigures f;
  const test::Character& data = test::loadCharacter("deepmimic/humanoid3d_run.bvh");
  EXPECT_TRUE(data.asset);
  if (!data.asset) return f;
  auto asset = std::make_shared<RagdollAsset>(*data.asset);
  const int forearm = asset->bodyForJoint(asset->map[Slot::LowerArmL]);
  int elbow = -1;
  for (size_t j = 0; j < asset->joints.size(); ++j) {
    if (asset->joints[j].childBody == forearm) elbow = static_cast<int>(j);
  }
  EXPECT_GE(elbow, 0);
  if (elbow < 0) return f;
  asset->joints[static_cast<size_t>(elbow)].breakForce = breakForce;
  test::Character character{data.imported, asset};

  test::GetUpScene scene;
  EXPECT_TRUE(scene.start(character, 0, Transform{}));
  if (!scene.ch) return f;
  handoff::Character& ch = *scene.ch;
  for (int i = 0; i < 30; ++i) scene.step();
  if (powered) {
    EXPECT_TRUE(ch.goPowered(PoweredSettings{}));
    if (ch.state() != CharacterState::Powered) return f;
  } else if (!scene.goRagdoll()) {
    return f;
  }
  const double handoffTime = ch.time();
  BreakPull pull(*scene.world, ch.ragdoll().body(forearm), ch.ragdoll().joint(elbow), kPullRate,
                 kPullDuration, 0.05);
  EXPECT_TRUE(scene.world->addSubstepListener(&pull));
  const auto n = static_cast<size_t>(character.skeleton().jointCount());
  std::vector<Transform> models(n);
  double lastForce = 0.0;
  for (int i = 0; i < 600; ++i) {
    scene.step();
    const JointBreakState elbowState = scene.world->jointBreakState(ch.ragdoll().joint(elbow));
    if (!elbowState.broken && i > 0) {
      f.worstStepChange = std::max(f.worstStepChange, std::abs(elbowState.force - lastForce));
    }
    if (!elbowState.broken) lastForce = elbowState.force;
    if (!f.broke && !ch.jointBreaks().empty()) {
      f.broke = true;
      f.first = ch.jointBreaks().front();
      f.pullAtBreak = pull.forceAt(f.first.time - handoffTime);
      f.forceBefore = lastForce;
    }
    if (ch.state() != CharacterState::Ragdoll && (!powered || f.broke)) f.everRecovered = true;
    if (powered && !f.broke && ch.state() != CharacterState::Powered) f.leftPoweredEarly = true;
    if (f.broke) f.worstOtherStretch = std::max(f.worstOtherStretch, ch.ragdoll().maxJointSeparation());
  }
  scene.world->removeSubstepListener(&pull);
  f.brokenGap = scene.world->jointAnchorSeparation(ch.ragdoll().joint(elbow));
  // Write-back: every bone with a body is displayed where its body is, the detached ones too.
  if (ch.state() == CharacterState::Ragdoll && ch.blendWeight() == 1.0) {
    localToModel(character.skeleton(), ch.displayLocals(), models);
    for (size_t b = 0; b < asset->bodies.size(); ++b) {
      const BodyDef& def = asset->bodies[b];
      const Transform bone =
          scene.world->transform(ch.ragdoll().body(static_cast<int>(b))) * def.boneFromBody.inverse();
      const Transform shown = ch.displayRoot() * models[static_cast<size_t>(def.joint)];
      f.writeBackError = std::max(f.writeBackError, glm::length(bone.translation - shown.translation));
    }
  } else {
    f.writeBackError = 1.0;
  }
  for (const CharacterEvent& e : ch.events()) {
    f.breakEvents += e.kind == CharacterEventKind::Break ? 1 : 0;
    f.knockouts += e.kind == CharacterEventKind::Knockout ? 1 : 0;
    f.getUpEvents += e.kind == CharacterEventKind::GetUp || e.kind == CharacterEventKind::Gather ? 1 : 0;
    char line[48];
    std::snprintf(line, sizeof line, "%.2f s ", e.time);
    f.story += std::string(line) + eventKindName(e.kind) + ": " + e.detail + "\n";
  }
  return f;
}

// The elbow at 400 N under a 1000 N/s pull at the forearm (for at most 0.6 s; the falling arm's
// own dynamics adds to or takes from the pull, so the elbow's load is measured, not assumed): it
// holds at the end of the step before the break (at most 400 N), and the force it reports
// exceeds 400 N by less than the load changed over any one step before (it broke at the first
// crossing, within one step's change of its limit). No other joint stretches past 1 cm (the
// runner's robustness bound), the forearm comes away, every bone follows its body, and the
// character never gets up.
TEST(BreakableCharacter, PulledElbowBreaksAtItsForceSplitsCleanlyAndNeverGetsUp) {
  const BreakFigures f = runBreak(kElbowBreakForce);
  std::printf(
      "[ figure ] elbow break force %.0f N, pull %.0f N/s: broke at %.4f s after the handoff, reporting "
      "%.1f N, %.1f N m (the step before %.1f N; largest change over a step before %.1f N; pull then "
      "%.1f N); worst other joint stretch after it %.2f mm; broken gap at the end %.2f m; write-back "
      "error %.2g m; %d break events, %d get-up events, recovered %d\n%s",
      kElbowBreakForce, kPullRate, f.first.time - 0.5, f.first.force, f.first.torque, f.forceBefore,
      f.worstStepChange, f.pullAtBreak, 1e3 * f.worstOtherStretch, f.brokenGap, f.writeBackError,
      f.breakEvents, f.getUpEvents, f.everRecovered, f.story.c_str());
  ASSERT_TRUE(f.broke);
  EXPECT_GT(f.first.force, kElbowBreakForce);
  EXPECT_LE(f.forceBefore, kElbowBreakForce);
  EXPECT_LE(f.first.force - kElbowBreakForce, f.worstStepChange);
  EXPECT_EQ(f.breakEvents, 1);
  EXPECT_LT(f.worstOtherStretch, 0.01);
  EXPECT_GT(f.brokenGap, 0.1);  // the forearm came away
  EXPECT_LT(f.writeBackError, 1e-6);
  EXPECT_FALSE(f.everRecovered);
  EXPECT_EQ(f.getUpEvents, 0);
}

// The control: the same pull on the asset's infinite elbow never breaks it, and the character,
// once settled, gets up (so the test above would see a get-up if a broken character made one).
TEST(BreakableCharacter, InfiniteElbowNeverBreaksAndTheCharacterGetsUp) {
  const BreakFigures f = runBreak(std::numeric_limits<double>::infinity());
  std::printf(
      "[ figure ] infinite elbow, pull %.0f N/s for 10 s: broke %d, worst joint stretch n/a, "
      "recovered %d\n%s",
      kPullRate, f.broke, f.everRecovered, f.story.c_str());
  EXPECT_FALSE(f.broke);
  EXPECT_EQ(f.breakEvents, 0);
  EXPECT_TRUE(f.everRecovered);
}

// Powered (the drives tracking the run) when the elbow breaks: the character goes down as a full
// ragdoll in pieces in the step that broke it ("knockout"), the drives off, and stays down.
TEST(BreakableCharacter, PoweredCharacterWithABrokenElbowFallsAsAFullRagdollAndStaysDown) {
  const BreakFigures f = runBreak(kElbowBreakForce, true);
  std::printf(
      "[ figure ] powered, elbow 400 N: broke %d at %.1f N (the step before %.1f N, largest change "
      "over a step before %.1f N), %d knock-outs, left powered before the "
      "break %d, recovered after %d, worst other stretch %.2f mm\n%s",
      f.broke, f.first.force, f.forceBefore, f.worstStepChange, f.knockouts, f.leftPoweredEarly,
      f.everRecovered, 1e3 * f.worstOtherStretch, f.story.c_str());
  ASSERT_TRUE(f.broke);
  EXPECT_FALSE(f.leftPoweredEarly);
  EXPECT_GT(f.first.force, kElbowBreakForce);
  EXPECT_GE(f.knockouts, 1);
  EXPECT_FALSE(f.everRecovered);
  EXPECT_EQ(f.getUpEvents, 0);
  EXPECT_LT(f.worstOtherStretch, 0.01);
}

// Without an engine (a world that reports what a test sets): the character records a break the
// world reports once, with the world's figures and the substep's time, names the joint in a
// "break" event, and a powered character goes down as a full ragdoll in that postStep. Joints
// with infinite limits are never asked.
TEST(BreakableCharacter, RecordsWhatTheWorldReportsOnceAndAPoweredOneGoesDown) {
  const test::Character& data = test::loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(data.asset);
  auto asset = std::make_shared<RagdollAsset>(*data.asset);
  const int breakable = static_cast<int>(asset->joints.size()) / 2;
  asset->joints[static_cast<size_t>(breakable)].breakForce = 400.0;
  test::RecordingWorld world;
  std::vector<Transform> locals(static_cast<size_t>(data.skeleton().jointCount()));
  data.clip().sample(0.0, WrapMode::Clamp, locals);
  auto created =
      handoff::Character::create(world, asset, data.skeleton(), CharacterSettings{}, Transform{}, locals);
  ASSERT_TRUE(created) << created.error();
  handoff::Character& ch = **created;
  double time = 0.0;
  const auto frame = [&] {
    time += test::kFrame;
    ASSERT_TRUE(ch.preStep(AnimationInput{time, Transform{}, locals, false}, test::kFrame));
    ch.postStep(test::kFrame);
  };
  for (int i = 0; i < 3; ++i) frame();
  ASSERT_TRUE(ch.goPowered(PoweredSettings{}));
  frame();
  EXPECT_TRUE(ch.jointBreaks().empty());
  // A joint without limits reporting a break is not asked (only breakable joints are polled).
  const int other = breakable - 1;
  world.breaks[ch.ragdoll().joint(other).value] = JointBreakState{true, 900.0, 0.0, 0};
  world.breaks[ch.ragdoll().joint(breakable).value] = JointBreakState{true, 512.5, 3.25, 0};
  frame();
  ASSERT_EQ(ch.jointBreaks().size(), 1u);
  const JointBreak& b = ch.jointBreaks()[0];
  EXPECT_EQ(b.joint, breakable);
  EXPECT_EQ(b.force, 512.5);
  EXPECT_EQ(b.torque, 3.25);
  EXPECT_NEAR(b.time, time, 1e-12);  // one substep (the recording world's stats): its end
  EXPECT_TRUE(ch.ragdoll().jointBroken(breakable));
  EXPECT_FALSE(ch.ragdoll().jointBroken(other));
  EXPECT_EQ(ch.state(), CharacterState::Ragdoll);
  int breaks = 0, knockouts = 0;
  for (const CharacterEvent& e : ch.events()) {
    if (e.kind == CharacterEventKind::Break) {
      ++breaks;
      EXPECT_NE(std::string(e.detail).find(asset->joints[static_cast<size_t>(breakable)].name),
                std::string::npos)
          << e.detail;
    }
    knockouts += e.kind == CharacterEventKind::Knockout ? 1 : 0;
  }
  EXPECT_EQ(breaks, 1);
  EXPECT_EQ(knockouts, 1);
  frame();
  frame();
  EXPECT_EQ(ch.jointBreaks().size(), 1u);  // recorded once
  EXPECT_EQ(ch.state(), CharacterState::Ragdoll);
}

}  // namespace
}  // namespace handoff
