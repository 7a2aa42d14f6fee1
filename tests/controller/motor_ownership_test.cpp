// Joint motors have one owner at a time (MotorOwner, Ragdoll::acquireMotors): the passive
// dampers, the gather's servos and the powered drive ask the Ragdoll for them, and a writer that
// does not hold a motor writes nothing to the engine.
#include "handoff/controller.h"
#include "handoff/physics_bullet.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "controller/getup_scene.h"
#include "drive/fake_world.h"
#include "support/clip_scene.h"

namespace handoff {
namespace {

const test::Character& runner() { return test::loadCharacter("deepmimic/humanoid3d_run.bvh"); }

JointMotorSettings damper(double damping) {
  JointMotorSettings motor;
  motor.enabled = true;
  motor.damping = Vec3{damping};
  return motor;
}

TEST(MotorOwnership, ASecondWriterIsRefusedAndWritesNothing) {
  const test::Character& data = runner();
  ASSERT_TRUE(data.asset);
  test::RecordingWorld world;
  std::vector<Transform> models(static_cast<size_t>(data.skeleton().jointCount()));
  localToModel(data.skeleton(), data.skeleton().restLocal, models);
  Result<std::unique_ptr<Ragdoll>> created =
      Ragdoll::create(world, data.asset, data.skeleton(), Transform{}, models);
  ASSERT_TRUE(created) << created.error();
  Ragdoll& ragdoll = **created;
  const int joints = static_cast<int>(data.asset->joints.size());
  ASSERT_GT(joints, 1);
  const auto engineMotor = [&](int j) { return world.motors.at(ragdoll.joint(j).value); };

  for (int j = 0; j < joints; ++j) EXPECT_EQ(ragdoll.motorOwner(j), MotorOwner::None);
  // A writer without the motors is refused and the engine keeps what it had (nothing).
  EXPECT_FALSE(ragdoll.setJointMotor(0, MotorOwner::Damper, damper(2.0)));
  EXPECT_FALSE(engineMotor(0).enabled);
  EXPECT_EQ(ragdoll.refusedMotorRequests(), 1);

  ASSERT_TRUE(ragdoll.acquireMotors(MotorOwner::Damper));
  EXPECT_TRUE(ragdoll.acquireMotors(MotorOwner::Damper));  // held already
  for (int j = 0; j < joints; ++j) ASSERT_TRUE(ragdoll.setJointMotor(j, MotorOwner::Damper, damper(2.0)));
  EXPECT_TRUE(engineMotor(1).enabled);
  EXPECT_DOUBLE_EQ(engineMotor(1).damping.x, 2.0);

  // The gather asks while the dampers hold them: refused, the dampers stay in the engine.
  EXPECT_FALSE(ragdoll.acquireMotors(MotorOwner::Gather));
  EXPECT_FALSE(ragdoll.setJointMotor(1, MotorOwner::Gather, damper(50.0)));
  EXPECT_DOUBLE_EQ(engineMotor(1).damping.x, 2.0);
  ragdoll.releaseMotors(MotorOwner::Gather);  // not its motors: nothing happens
  EXPECT_EQ(ragdoll.motorOwner(1), MotorOwner::Damper);
  EXPECT_TRUE(engineMotor(1).enabled);
  EXPECT_EQ(ragdoll.refusedMotorRequests(), 3);

  // Released, the motors go off in the engine and the next owner gets them.
  ragdoll.releaseMotors(MotorOwner::Damper);
  for (int j = 0; j < joints; ++j) {
    EXPECT_EQ(ragdoll.motorOwner(j), MotorOwner::None);
    EXPECT_FALSE(ragdoll.motorEnabled(j));
    EXPECT_FALSE(engineMotor(j).enabled) << "joint " << j;
  }
  ASSERT_TRUE(ragdoll.acquireMotors(MotorOwner::Gather));
  EXPECT_TRUE(ragdoll.setJointMotor(1, MotorOwner::Gather, damper(50.0)));
  EXPECT_DOUBLE_EQ(engineMotor(1).damping.x, 50.0);
  EXPECT_EQ(ragdoll.refusedMotorRequests(), 3);
}

/// Which owners each state gave the motors, over a whole run of the state machine.
struct OwnerLog {
  std::map<std::string, int> seen;  // "state/owner" -> steps
  void look(const Character& ch) {
    const Ragdoll& r = ch.ragdoll();
    for (int j = 0; j < static_cast<int>(r.asset().joints.size()); ++j) {
      const std::string key = std::string(characterStateName(ch.state())) + "/" +
                              motorOwnerName(r.motorOwner(j)) + (r.motorEnabled(j) ? "+on" : "");
      ++seen[key];
    }
  }
  int count(const char* key) const {
    const auto it = seen.find(key);
    return it == seen.end() ? 0 : it->second;
  }
};

TEST(MotorOwnership, EachModeTakesTheMotorsAndGivesThemBack) {
  const test::Character& data = runner();
  ASSERT_TRUE(data.asset);
  test::GetUpScene scene;
  ASSERT_TRUE(scene.start(data, 0, Transform{}));
  Character& ch = *scene.ch;
  OwnerLog log;
  for (int i = 0; i < 20; ++i) {
    scene.step();
    log.look(ch);
  }
  // Powered (the implicit drive) takes every motor and gives them back on its return.
  PoweredSettings powered;
  powered.pinPelvisAndFeet = true;  // a full powered ragdoll on a running clip stands on its pins
  ASSERT_TRUE(ch.goPowered(powered));
  for (int i = 0; i < 20; ++i) {
    scene.step();
    log.look(ch);
  }
  ASSERT_EQ(ch.state(), CharacterState::Powered);
  const Status back = ch.goAnimated();
  ASSERT_TRUE(back) << back.error();
  for (int i = 0; i < 240 && ch.state() != CharacterState::Animated; ++i) {
    scene.step();
    log.look(ch);
  }
  ASSERT_EQ(ch.state(), CharacterState::Animated);
  for (int i = 0; i < 10; ++i) {
    scene.step();
    log.look(ch);
  }
  // A fall: the dampers after the first step, the gather's servos, none while getting up.
  ASSERT_TRUE(scene.goRagdoll());
  for (int i = 0; i < 60 * 15 && !(ch.state() == CharacterState::Animated && !ch.recoveries().empty()); ++i) {
    scene.step();
    log.look(ch);
    ASSERT_EQ(ch.ragdoll().refusedMotorRequests(), 0) << "step " << i;
  }
  for (const auto& [key, steps] : log.seen) std::printf("  %-24s %6d joint-steps\n", key.c_str(), steps);
  const int joints = static_cast<int>(data.asset->joints.size());
  int animatedOwned = 0;
  for (const auto& [key, steps] : log.seen)
    if (key.rfind("animated/", 0) == 0 && key != "animated/none") animatedOwned += steps;
  EXPECT_EQ(animatedOwned, 0) << "no motor is held or on while animated";
  EXPECT_GE(log.count("animated/none"), 30 * joints);
  EXPECT_GE(log.count("powered/drive+on"), 10 * joints) << "the drive held the motors while powered";
  EXPECT_GE(log.count("ragdoll/damper+on"), 30 * joints) << "the dampers held them in the ragdoll";
  EXPECT_GE(log.count("ragdoll/gather+on"), 10 * joints) << "the gather's servos held them";
  EXPECT_GE(log.count("recovering/none"), 10 * joints) << "nothing holds a motor during the get-up";
  EXPECT_EQ(log.count("recovering/damper+on") + log.count("recovering/gather+on") +
                log.count("recovering/drive+on"),
            0);
  EXPECT_EQ(ch.ragdoll().refusedMotorRequests(), 0);
  EXPECT_FALSE(ch.recoveries().empty());
}

}  // namespace
}  // namespace handoff
