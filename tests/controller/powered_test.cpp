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

// The servo's target rates are the rate of the target it tracks, the admissible one: where the
// animation leaves a limit and comes back, the rate of the animation's own target overstates
// how fast the admissible one moves. Boxing_Toes' right wrist through its capture glitch
// (3.70-3.77 s): its Z target goes -48 -> -61 -> -70 -> -52 -> -16 deg against a -57.3 deg
// limit; at 3.75 s the animation comes back 17 deg inside in one step while the admissible target
// moves 5 deg. Checked on the rates handed to the engine against the change of the admissible
// target angles handed to it.
TEST(Powered, TargetRatesAreTheRateOfTheAdmissibleTarget) {
  const test::Character& c = loadCharacter(kBoxing);
  ASSERT_TRUE(c.asset);
  test::RecordingWorld world;
  const Clip& clip = c.clip();
  std::vector<Transform> locals(static_cast<size_t>(c.skeleton().jointCount()));
  double time = 3.6;
  clip.sample(time, WrapMode::Clamp, locals);
  auto created =
      Character::create(world, c.asset, c.skeleton(), CharacterSettings{}, Transform::identity(), locals);
  ASSERT_TRUE(created) << created.error();
  Character& ch = **created;
  const auto frame = [&]() {
    time += kDt;
    clip.sample(time, WrapMode::Clamp, locals);
    ASSERT_TRUE(ch.preStep(AnimationInput{time, Transform::identity(), locals, false}, kDt));
  };
  for (int i = 0; i < 3; ++i) {
    frame();
    ch.postStep(kDt);
  }
  PoweredSettings s;
  s.rampTime = 0.0;
  ASSERT_TRUE(ch.goPowered(s));
  int wrist = -1;
  for (size_t j = 0; j < c.asset->joints.size(); ++j) {
    if (c.asset->joints[j].name == "RightWrist") wrist = static_cast<int>(j);
  }
  ASSERT_GE(wrist, 0);
  const JointMotorSettings& motor = world.motors[static_cast<size_t>(ch.ragdoll().joint(wrist).value)];
  const DriveJoint joint = driveJointFromDef(c.asset->joints[static_cast<size_t>(wrist)]);
  std::vector<Transform> models(locals.size()), anim(c.asset->bodies.size());
  const auto animationZ = [&]() {  // the animation's own target angle about Z
    localToModel(c.skeleton(), locals, models);
    bodyPosesFromModels(*c.asset, models, Transform::identity(), anim);
    return jointAngles(jointRelativeRotation(anim[static_cast<size_t>(joint.bodyA)].rotation,
                                             anim[static_cast<size_t>(joint.bodyB)].rotation,
                                             joint.bodyAFromJoint, joint.bodyBFromJoint))
        .z;
  };
  const double lower = joint.angularLower.z;
  double previous = jointAngles(motor.target).z;
  double worst = 0.0, atReturn = 0.0, rawAtReturn = 0.0;
  int clampedSteps = 0;
  while (time < 3.85) {
    const double rawBefore = animationZ();
    frame();
    ch.postStep(kDt);
    const double z = jointAngles(motor.target).z;
    if (z == lower) ++clampedSteps;
    // Only where the target is inside the limit: on it, the servo takes no rate about Z.
    if (z > lower) {
      const double admissibleRate = (z - previous) / kDt;
      worst = std::max(worst, std::abs(motor.targetRates.z - admissibleRate));
      if (previous == lower && atReturn == 0.0) {
        atReturn = motor.targetRates.z;
        rawAtReturn = (animationZ() - rawBefore) / kDt;
        std::printf(
            "[ powered ] right wrist back inside its Z limit at %.3f s: rate asked %.0f deg/s, "
            "admissible %.0f deg/s, the animation's %.0f deg/s\n",
            time, atReturn / kDeg, admissibleRate / kDeg, rawAtReturn / kDeg);
      }
    }
    previous = z;
  }
  std::printf(
      "[ powered ] right wrist 3.6-3.85 s: %d steps on the Z limit, largest |rate - admissible rate| "
      "%.1f deg/s\n",
      clampedSteps, worst / kDeg);
  EXPECT_GE(clampedSteps, 2);
  EXPECT_NE(atReturn, 0.0);
  // The Z rate is the admissible target's: the rate at the step's end against the mean change
  // over the step (the Euler coupling with Y, X taken at the current twist) differ by up to
  // 19 deg/s, 1 % of the glitch's 2000 deg/s; the animation's rate at the return is 700 deg/s
  // more than the admissible one.
  EXPECT_LT(worst, 40.0 * kDeg);
  EXPECT_GT(std::abs(rawAtReturn - atReturn), 300.0 * kDeg);
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
