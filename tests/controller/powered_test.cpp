// Powered and partial ragdolls through the Character (SPEC.md sections 5 and 6): tracking a
// boxing clip with the pelvis pinned, hit reactions that return to animation or knock the
// character out, partial ragdolls keeping one authority per body, the drive weight ramp as the
// engine receives it.
#include "handoff/controller.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "drive/fake_world.h"
#include "support/clip_scene.h"
#include "support/test_math.h"

namespace handoff {
namespace {

using test::loadCharacter;

constexpr double kDt = 1.0 / 60.0;
constexpr double kDeg = kPi / 180.0;
const char* const kBoxing = "cmu/Boxing_Toes.bvh";

// --- The ramp, on the values the engine receives ---

// The implicit solver hands each joint's servo Kp * w, Kd and maxTorque * w, w ramping 0 -> 0.8
// over 0.5 s: checked on a world that records what it is handed.
TEST(Powered, RampScalesStiffnessAndTorqueNotDampingInTheEngine) {
  const test::Character& c = loadCharacter(kBoxing);
  ASSERT_TRUE(c.asset);
  test::RecordingWorld world;
  std::vector<Transform> locals(static_cast<size_t>(c.skeleton().jointCount()));
  c.clip().sample(0.0, WrapMode::Clamp, locals);
  auto created =
      Character::create(world, c.asset, c.skeleton(), CharacterSettings{}, Transform::identity(), locals);
  ASSERT_TRUE(created) << created.error();
  Character& ch = **created;
  double time = 0.0;
  for (int i = 0; i < 3; ++i) {
    time += kDt;
    ASSERT_TRUE(ch.preStep(AnimationInput{time, Transform::identity(), locals, false}, kDt));
    ch.postStep(kDt);
  }
  PoweredSettings s;
  s.solver = DriveSolver::Implicit;
  s.weight = 0.8;
  s.rampTime = 0.5;
  ASSERT_TRUE(ch.goPowered(s));
  int checked = 0;
  for (int i = 1; i <= 45; ++i) {
    time += kDt;
    ASSERT_TRUE(ch.preStep(AnimationInput{time, Transform::identity(), locals, false}, kDt));
    const double w = 0.8 * std::min(1.0, i * kDt / 0.5);
    for (size_t j = 0; j < c.asset->joints.size(); ++j) {
      const DriveJoint joint = driveJointFromDef(c.asset->joints[j]);
      const JointMotorSettings& m =
          world.motors[static_cast<size_t>(ch.ragdoll().joint(static_cast<int>(j)).value)];
      ASSERT_TRUE(m.enabled);
      for (int axis = 0; axis < 3; ++axis) {
        if (joint.angularLower[axis] == joint.angularUpper[axis]) continue;  // locked: no servo
        EXPECT_NEAR(m.stiffness[axis], joint.gains.stiffness * w, 1e-9 * joint.gains.stiffness);
        EXPECT_EQ(m.damping[axis], joint.gains.damping);
        ++checked;
      }
      EXPECT_NEAR(m.maxTorque, joint.gains.maxTorque * w, 1e-9 * joint.gains.maxTorque);
    }
    EXPECT_NEAR(ch.driveWeight(), w, 1e-12);
    ch.postStep(kDt);
  }
  std::printf("[ powered ] ramp 0 -> 0.8 over 0.5 s: %d servo axes checked per step, 45 steps\n",
              checked / 45);
  EXPECT_GT(checked, 0);
}

TEST(Powered, RefusesBadSettingsAndWrongStates) {
  const test::Character& c = loadCharacter(kBoxing);
  ASSERT_TRUE(c.asset);
  test::RecordingWorld world;
  std::vector<Transform> locals(static_cast<size_t>(c.skeleton().jointCount()));
  c.clip().sample(0.0, WrapMode::Clamp, locals);
  auto created =
      Character::create(world, c.asset, c.skeleton(), CharacterSettings{}, Transform::identity(), locals);
  ASSERT_TRUE(created) << created.error();
  Character& ch = **created;
  ASSERT_TRUE(ch.preStep(AnimationInput{kDt, Transform::identity(), locals, false}, kDt));
  PoweredSettings bad;
  bad.weight = 1.5;
  EXPECT_FALSE(ch.goPowered(bad));
  bad = {};
  bad.bodyWeights.assign(3, 1.0);
  EXPECT_FALSE(ch.goPowered(bad));
  bad = {};
  bad.pins.push_back(PoweredPin{99});
  EXPECT_FALSE(ch.goPowered(bad));
  bad = {};
  bad.bodyWeights.assign(c.asset->bodies.size(), 0.0);
  EXPECT_FALSE(ch.goPowered(bad));  // no body physical
  EXPECT_EQ(ch.state(), CharacterState::Animated);
  EXPECT_FALSE(ch.setBodyWeights(std::vector<double>(c.asset->bodies.size(), 1.0)));  // not powered
  EXPECT_TRUE(ch.goAnimated());  // already animated: nothing to do
}

}  // namespace
}  // namespace handoff
