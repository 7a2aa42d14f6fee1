// What a user gets (issue 16): a Character with default CharacterSettings, in a world with default
// WorldSettings, driven by its clip one 60 Hz frame at a time, cut to ragdoll with a plain
// goRagdoll() (no dense sample) at the frames of the demo's handoffs: mid-run, mid-jump,
// mid-spin, mid-punch and right after a teleport. The figures are read from the character's own
// record (Character::handoffs(): the first step and first substep are recorded by the postStep
// that follows the commit) through the measure the demo's rows use (measure.h), and every SPEC
// section 3 row the demo checks holds, after the first physics step (the engine's first substep)
// and after the whole first frame.
#include "handoff/controller.h"
#include "handoff/measure.h"
#include "handoff/physics_bullet.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "support/clip_scene.h"

namespace handoff {
namespace {

constexpr double kFrameDt = 1.0 / 60.0;
constexpr int kFrameSubsteps = 2;

struct Case {
  const char* file;
  double clipStart;  // clip time at scene time 0 [s]
  double handoff;    // scene time of goRagdoll() [s]
  bool teleport;     // the root jumps to (10, 0, 5), a quarter turn, on the handoff frame
  const char* what;
};

// The demo's scenarios (scenarios/*_handoff.json).
constexpr Case kCases[] = {
    {"deepmimic/humanoid3d_run.bvh", 0.0, 0.5, false, "mid-run"},
    {"deepmimic/humanoid3d_jump.bvh", 0.0, 0.95, false, "mid-jump"},
    {"deepmimic/humanoid3d_spin.bvh", 0.0, 1.8, false, "mid-spin"},
    {"cmu/Boxing_Toes.bvh", 3.0, 0.4, false, "mid-punch"},
    {"deepmimic/humanoid3d_run.bvh", 0.0, 0.5, true, "right after a teleport"},
};

TEST(DefaultCharacter, HandsOffMidMotionWithinEverySpecRowAfterTheStepAndTheFrame) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(std::string(c.file) + " " + c.what);
    const test::Character& data = test::loadCharacter(c.file);
    ASSERT_TRUE(data.asset);
    std::unique_ptr<PhysicsWorld> world = createBulletWorld();  // WorldSettings{}
    world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
    const WrapMode wrap = std::string(c.file).find("run") != std::string::npos ? WrapMode::Loop : WrapMode::Clamp;
    std::vector<Transform> locals(static_cast<size_t>(data.skeleton().jointCount()));
    data.clip().sample(c.clipStart, wrap, locals);
    Transform root = Transform::identity();
    Result<std::unique_ptr<Character>> created =
        Character::create(*world, data.asset, data.skeleton(), CharacterSettings{}, root, locals);
    ASSERT_TRUE(created) << created.error();
    Character& ch = **created;

    HandoffMeasure measure;
    FollowMeasure follow;
    HandoffMetrics m;
    const int handoffFrame = static_cast<int>(std::lround(c.handoff / kFrameDt));
    const int frames = handoffFrame + static_cast<int>(2.0 / kFrameDt);  // 2 s of ragdoll after it
    for (int k = 0; k < frames; ++k) {
      const double t1 = (k + 1) * kFrameDt;
      const bool teleport = c.teleport && k + 1 == handoffFrame;
      if (teleport) root = Transform{glm::angleAxis(kPi / 2.0, Vec3{0, 1, 0}), Vec3{10.0, 0.0, 5.0}};
      data.clip().sample(c.clipStart + t1, wrap, locals);
      ASSERT_TRUE(ch.preStep(AnimationInput{t1, root, locals, teleport}, kFrameDt));
      world->step(kFrameDt, kFrameSubsteps);
      ch.postStep(kFrameDt);
      measure.afterStep(*world, ch, kFrameDt, m);
      follow.observe(ch, t1, m);
      if (k + 1 == handoffFrame) {
        const HandoffRecord& record = ch.goRagdoll();
        ASSERT_TRUE(record.committed) << record.failure;
        m = measure.begin(ch, record, t1, "handoff");
        follow.begin(t1, 2.0);
        EXPECT_EQ(record.teleportFlagged, c.teleport);
      }
    }
    ASSERT_FALSE(ch.handoffs().empty());
    const HandoffRecord& record = ch.handoffs().back();
    // The user's own record carries the first step and the first substep, without a probe.
    for (const BodyHandoff& b : record.bodies) {
      EXPECT_TRUE(b.firstStepRecorded) << b.name;
      EXPECT_TRUE(b.firstSubstepRecorded) << b.name;
    }
    EXPECT_DOUBLE_EQ(record.firstSubstepTime, kFrameDt / kFrameSubsteps);
    EXPECT_EQ(world->substepListenerCount(), 0) << "the probe is gone after the first step";
    std::printf(
        "[default character, %s] pop at the commit %.3f mm; first step: pop excess %+.2f mm, velocity excess "
        "after the first substep %+.4f m/s, after the whole frame %+.4f m/s (against the animation alone "
        "%+.4f m/s), %d bodies touching the world; 2 s after: speed excess %+.3f m/s, joint stretch %.1f mm\n",
        c.what, m.maxPositionJump * 1e3, m.worstPopExcess * 1e3, m.worstSubstepVelocityExcess,
        m.worstFrameVelocityExcess, m.worstVelocityExcess, m.bodiesInContact, m.worstSpeedExcess,
        m.maxJointSeparation * 1e3);
    // The demo's rows (src/runner/checks.cpp) with the thresholds of its scenarios.
    EXPECT_LE(m.maxPositionJump, HandoffSettings{}.poseTolerance);  // handoff.no_pop_at_commit
    EXPECT_LE(m.worstPopExcess, 0.001);                            // handoff.no_pop_first_step (1 mm)
    EXPECT_LE(m.worstSubstepVelocityExcess, 0.0);                  // handoff.velocity_continuity
    EXPECT_LE(m.worstFrameVelocityExcess, 0.0);                    // handoff.velocity_continuity_frame
    EXPECT_LE(m.worstSpeedExcess, 0.0);                            // handoff.no_explosion_2s
    EXPECT_LE(m.maxJointSeparation, 0.05);                         // handoff.max_joint_stretch (50 mm)
  }
}

}  // namespace
}  // namespace handoff
