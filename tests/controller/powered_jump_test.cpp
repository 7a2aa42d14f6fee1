// A powered or partial character whose animation jumps (issue 18's model test found both): a
// flagged teleport carries the dynamic bodies with the root; an unflagged jump of the pose farther
// than the knock-out distance (an abrupt clip switch) knocks the character out before anything
// moves toward it, and nothing is thrown.
#include "handoff/controller.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "controller/getup_scene.h"

namespace handoff {
namespace {

using test::kFrame;
using test::loadCharacter;

struct JumpRunner {
  std::unique_ptr<PhysicsWorld> world = createBulletWorld();
  std::unique_ptr<Character> ch;
  std::vector<Transform> locals;
  Transform root;
  double time = 0.0;
  double clipTime = 0.0;
  const test::Character* c = nullptr;

  explicit JumpRunner(const test::Character& character) : c(&character) {
    world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
    locals.resize(static_cast<size_t>(c->skeleton().jointCount()));
    c->clip().sample(0.0, WrapMode::Loop, locals);
    auto created = Character::create(*world, c->asset, c->skeleton(), CharacterSettings{}, root, locals);
    EXPECT_TRUE(created) << created.error();
    if (created) ch = std::move(created).value();
  }
  void step(bool teleport = false) {
    time += kFrame;
    clipTime += kFrame;
    c->clip().sample(clipTime, WrapMode::Loop, locals);
    ASSERT_TRUE(ch->preStep(AnimationInput{time, root, locals, teleport}, kFrame));
    world->step(kFrame, 2);
    ch->postStep(kFrame);
  }
  double fastestBody() const {
    double fastest = 0.0;
    for (int b = 0; b < ch->ragdoll().bodyCount(); ++b)
      fastest = std::max(fastest, glm::length(world->linearVelocity(ch->ragdoll().body(b))));
    return fastest;
  }
};

TEST(PoweredJump, AFlaggedTeleportCarriesTheLaggingLimbsWithTheRoot) {
  const test::Character& c = loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  JumpRunner r(c);
  ASSERT_TRUE(r.ch);
  for (int f = 0; f < 20; ++f) r.step();
  ASSERT_TRUE(r.ch->goLimbLag());
  for (int f = 0; f < 30; ++f) r.step();
  const int forearm = c.asset->bodyForSlot(Slot::LowerArmL);
  ASSERT_GE(forearm, 0);
  const Transform before = r.root.inverse() * r.world->transform(r.ch->ragdoll().body(forearm));
  r.root = Transform{glm::angleAxis(kPi / 2, Vec3{0, 1, 0}), Vec3{30.0, 0.0, -12.0}};
  r.step(/*teleport=*/true);
  const Transform after = r.root.inverse() * r.world->transform(r.ch->ragdoll().body(forearm));
  const double moved = glm::length(after.translation - before.translation);
  std::printf(
      "[ figure ] teleport 32 m and a quarter turn while the arms lag: the forearm moved %.3f m relative to "
      "the "
      "root; fastest body %.2f m/s; state %s\n",
      moved, r.fastestBody(), characterStateName(r.ch->state()));
  EXPECT_EQ(r.ch->state(), CharacterState::Powered);
  EXPECT_LE(moved, 0.1);             // one frame of the run's arm swing, not the jump
  EXPECT_LE(r.fastestBody(), 12.0);  // a running arm's speed, not 32 m in a frame
}

TEST(PoweredJump, AnUnflaggedJumpOfThePoseKnocksOutBeforeAnythingMoves) {
  const test::Character& c = loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  JumpRunner r(c);
  ASSERT_TRUE(r.ch);
  for (int f = 0; f < 20; ++f) r.step();
  std::vector<double> weights(c.asset->bodies.size(), 0.0);
  weights[static_cast<size_t>(c.asset->bodyForSlot(Slot::Chest))] = 1.0;
  weights[static_cast<size_t>(c.asset->bodyForSlot(Slot::Head))] = 1.0;
  ASSERT_TRUE(r.ch->goPartial(weights, 0.1));
  for (int f = 0; f < 10; ++f) r.step();
  const Vec3 pelvisBefore = r.world->transform(r.ch->ragdoll().body(0)).translation;
  r.clipTime += 20.0;  // the run's root motion: the pose jumps about 70 m ahead, unflagged
  r.step();
  const Vec3 pelvisAfter = r.world->transform(r.ch->ragdoll().body(0)).translation;
  double fastest = r.fastestBody();
  for (int f = 0; f < 120; ++f) {
    r.step();
    fastest = std::max(fastest, r.fastestBody());
  }
  std::printf(
      "[ figure ] an unflagged 70 m jump of a partial ragdoll's pose: %s, the pelvis moved %.3f m in that "
      "frame, fastest body over 2 s %.2f m/s, %d bodies left the world\n",
      characterStateName(r.ch->state()), glm::length(pelvisAfter - pelvisBefore), fastest,
      r.world->lastStepStats().bodiesLeftWorld);
  ASSERT_FALSE(r.ch->events().empty());
  bool knockedOut = false;
  for (const CharacterEvent& e : r.ch->events())
    knockedOut = knockedOut || e.kind == CharacterEventKind::Knockout;
  EXPECT_TRUE(knockedOut);
  EXPECT_EQ(r.ch->state(), CharacterState::Ragdoll);
  EXPECT_LE(glm::length(pelvisAfter - pelvisBefore), 0.2);  // it fell from where it was running
  EXPECT_LE(fastest, 15.0);                                 // running speed and a fall, no throw
  for (int b = 0; b < r.ch->ragdoll().bodyCount(); ++b)
    EXPECT_TRUE(r.world->isEnabled(r.ch->ragdoll().body(b)));
}

}  // namespace
}  // namespace handoff
