// Capsule only while animated (issue 29): the bodies of an animated character out of the
// simulation, the capsule alone standing for it (CharacterSettings::capsuleOnlyWhileAnimated,
// Ragdoll::setCapsuleOnly). What a game sees of it: casts hit the capsule, the body poses it reads
// are the animated ones, switching at run time brings the bodies back on the animation, a ragdoll
// with a dynamic body refuses it, and an abandoned commit leaves the bodies out (all or nothing).
// The handoffs' figures against kinematic bodies: tests/runner/capsule_only_test.cpp.
#include "handoff/controller.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "support/clip_scene.h"

namespace handoff {
namespace {

using test::loadCharacter;

constexpr double kDt = 1.0 / 60.0;
const char* const kRun = "deepmimic/humanoid3d_run.bvh";

struct Scene {
  const test::Character& c = loadCharacter(kRun);
  std::unique_ptr<PhysicsWorld> world = createBulletWorld();
  std::unique_ptr<Character> ch;
  std::vector<Transform> locals, models, animated;
  double time = 0.0;

  explicit Scene(bool capsuleOnly) {
    if (!c.asset) return;
    world->addGroundPlane(Vec3{0.0, 1.0, 0.0}, 0.0);
    locals.resize(static_cast<size_t>(c.skeleton().jointCount()));
    models.resize(locals.size());
    animated.resize(c.asset->bodies.size());
    c.clip().sample(0.0, WrapMode::Loop, locals);
    CharacterSettings settings;
    settings.capsuleOnlyWhileAnimated = capsuleOnly;
    auto created = Character::create(*world, c.asset, c.skeleton(), settings, Transform::identity(), locals);
    EXPECT_TRUE(created) << (created ? "" : created.error());
    if (created) ch = std::move(created).value();
  }
  /// One frame of the run in place; `animated` gets its body poses.
  void step() {
    time += kDt;
    c.clip().sample(time, WrapMode::Loop, locals);
    ASSERT_TRUE(ch->preStep(AnimationInput{time, Transform::identity(), locals, false}, kDt));
    localToModel(c.skeleton(), locals, models);
    bodyPosesFromModels(*c.asset, models, Transform::identity(), animated);
    world->step(kDt, 2);
    ch->postStep(kDt);
  }
  int enabledBodies() const {
    int count = 0;
    for (int b = 0; b < ch->ragdoll().bodyCount(); ++b)
      count += world->isEnabled(ch->ragdoll().body(b)) ? 1 : 0;
    return count;
  }
  /// What a ray straight down onto the chest body's animated position hits first, against the
  /// layers in `mask`.
  CharacterBodyInfo rayOntoChest(std::uint32_t mask) const {
    const Vec3 chest = animated[static_cast<size_t>(c.asset->bodyForSlot(Slot::Chest))].translation;
    const CastHit hit = world->castRay(chest + Vec3{0.0, 2.0, 0.0}, chest - Vec3{0.0, 0.5, 0.0}, mask);
    return hit.hit() ? characterBodyInfo(*world, hit.body) : CharacterBodyInfo{};
  }
};

TEST(CapsuleOnly, OnlyTheCapsuleIsInTheSimulationWhileAnimated) {
  for (bool capsuleOnly : {false, true}) {
    SCOPED_TRACE(capsuleOnly ? "capsule only" : "kinematic bodies");
    Scene s(capsuleOnly);
    ASSERT_TRUE(s.ch);
    for (int i = 0; i < 30; ++i) s.step();
    const int bodies = s.ch->ragdoll().bodyCount();
    EXPECT_EQ(s.ch->capsuleOnly(), capsuleOnly);
    EXPECT_EQ(s.enabledBodies(), capsuleOnly ? 0 : bodies);
    EXPECT_TRUE(s.world->isEnabled(s.ch->ragdoll().capsule()));
    // A cast for everything finds the capsule (it encloses the character) either way; a cast for
    // ragdoll bodies finds the chest, or nothing while capsule only.
    const CharacterBodyInfo any = s.rayOntoChest(layers::kAll);
    EXPECT_EQ(any.character, s.ch.get());
    EXPECT_TRUE(any.part.capsule);
    const CharacterBodyInfo limb = s.rayOntoChest(layers::kRagdoll);
    EXPECT_EQ(limb.character, capsuleOnly ? nullptr : s.ch.get());
    EXPECT_EQ(limb.part.body, capsuleOnly ? -1 : s.c.asset->bodyForSlot(Slot::Chest));
    // The poses a game reads are the animation's (the kinematic bodies' up to single precision).
    std::vector<Transform> read(static_cast<size_t>(bodies));
    s.ch->ragdoll().readBodyPoses(read);
    double worst = 0.0;
    for (size_t b = 0; b < read.size(); ++b)
      worst = std::max(worst, glm::length(read[b].translation - s.animated[b].translation));
    EXPECT_LT(worst, capsuleOnly ? 1e-12 : 1e-5);
  }
}

TEST(CapsuleOnly, SwitchedAtRunTimeTheBodiesComeBackOnTheAnimation) {
  Scene s(false);
  ASSERT_TRUE(s.ch);
  for (int i = 0; i < 10; ++i) s.step();
  const int bodies = s.ch->ragdoll().bodyCount();
  s.ch->setCapsuleOnlyWhileAnimated(true);
  EXPECT_FALSE(s.ch->capsuleOnly()) << "takes effect at the next animated preStep";
  s.step();
  EXPECT_TRUE(s.ch->capsuleOnly());
  EXPECT_EQ(s.enabledBodies(), 0);
  for (int i = 0; i < 20; ++i) s.step();
  s.ch->setCapsuleOnlyWhileAnimated(false);
  s.step();
  EXPECT_FALSE(s.ch->capsuleOnly());
  EXPECT_EQ(s.enabledBodies(), bodies);
  // Back in the simulation, kinematic, on the animation (moved there by this step's move).
  double worst = 0.0;
  for (int b = 0; b < bodies; ++b) {
    const BodyId id = s.ch->ragdoll().body(b);
    EXPECT_EQ(s.world->motionType(id), MotionType::Kinematic);
    worst = std::max(worst, glm::length(s.world->transform(id).translation -
                                        s.animated[static_cast<size_t>(b)].translation));
  }
  EXPECT_LT(worst, 1e-5);  // single precision of ~1 m
  // A hit now is the ordinary hit reaction: powered, the bodies dynamic.
  const int chest = s.c.asset->bodyForSlot(Slot::Chest);
  s.ch->setCapsuleOnlyWhileAnimated(true);
  s.step();
  ASSERT_TRUE(s.ch->capsuleOnly());
  ASSERT_TRUE(
      s.ch->applyImpulse(chest, Vec3{20.0, 0.0, 0.0}, s.animated[static_cast<size_t>(chest)].translation));
  EXPECT_EQ(s.ch->state(), CharacterState::Powered);
  EXPECT_FALSE(s.ch->capsuleOnly());
  EXPECT_EQ(s.enabledBodies(), bodies);
  EXPECT_EQ(s.world->motionType(s.ch->ragdoll().body(chest)), MotionType::Dynamic);
}

// Hostile input while capsule only: a frame with a NaN is refused (nothing moves), a 1 km jump of
// the root flagged as a teleport carries the character, and the ragdoll right after it starts at
// the new place with no velocity from the jump.
TEST(CapsuleOnly, ANaNFrameAndATeleportLeaveAHandoffFromTheNewPlace) {
  Scene s(true);
  ASSERT_TRUE(s.ch);
  for (int i = 0; i < 20; ++i) s.step();
  ASSERT_TRUE(s.ch->capsuleOnly());
  const size_t handoffsBefore = s.ch->handoffs().total();
  std::vector<Transform> bad = s.locals;
  bad[3].translation.x = std::numeric_limits<double>::quiet_NaN();
  s.time += kDt;
  EXPECT_FALSE(s.ch->preStep(AnimationInput{s.time, Transform::identity(), bad, false}, kDt));
  EXPECT_TRUE(s.ch->capsuleOnly());
  EXPECT_EQ(s.enabledBodies(), 0);
  const Transform far = Transform::fromTranslation(Vec3{1000.0, 0.0, -500.0});
  s.time += kDt;
  s.c.clip().sample(s.time, WrapMode::Loop, s.locals);
  ASSERT_TRUE(s.ch->preStep(AnimationInput{s.time, far, s.locals, true}, kDt));
  s.world->step(kDt, 2);
  s.ch->postStep(kDt);
  for (int i = 0; i < 3; ++i) {
    s.time += kDt;
    s.c.clip().sample(s.time, WrapMode::Loop, s.locals);
    ASSERT_TRUE(s.ch->preStep(AnimationInput{s.time, far, s.locals, false}, kDt));
    s.world->step(kDt, 2);
    s.ch->postStep(kDt);
  }
  EXPECT_TRUE(s.ch->capsuleOnly());
  const HandoffRecord& record = s.ch->goRagdoll();
  ASSERT_TRUE(record.committed) << record.failure;
  EXPECT_GT(s.ch->handoffs().total(), handoffsBefore);
  EXPECT_EQ(s.enabledBodies(), s.ch->ragdoll().bodyCount());
  // Where the animation puts the bodies on the new root.
  std::vector<Transform> expected(s.animated.size());
  localToModel(s.c.skeleton(), s.locals, s.models);
  bodyPosesFromModels(*s.c.asset, s.models, far, expected);
  double farthest = 0.0, fastest = 0.0;
  for (int b = 0; b < s.ch->ragdoll().bodyCount(); ++b) {
    const BodyId id = s.ch->ragdoll().body(b);
    farthest = std::max(farthest, glm::length(s.world->transform(id).translation -
                                              expected[static_cast<size_t>(b)].translation));
    fastest = std::max(fastest, glm::length(s.world->linearVelocity(id)));
  }
  EXPECT_LT(farthest, 1e-3) << "the bodies start on the animation at the new root (single precision at 1 km)";
  EXPECT_LT(fastest, 15.0) << "no velocity from the 1 km jump (the run's limbs move up to ~10 m/s)";
}

// A bare Ragdoll (the class a game without Character uses): refused while a body is dynamic; an
// abandoned commit leaves every body out of the simulation; a commit brings every body back, the
// ones it does not commit kinematic at the animated pose.
TEST(CapsuleOnly, TheRagdollRefusesWithADynamicBodyAndCommitsAllOrNothing) {
  const test::Character& c = loadCharacter(kRun);
  ASSERT_TRUE(c.asset);
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0.0, 1.0, 0.0}, 0.0);
  std::vector<Transform> locals(static_cast<size_t>(c.skeleton().jointCount())), models(locals.size());
  const auto pose = [&](double t) {
    c.clip().sample(t, WrapMode::Loop, locals);
    localToModel(c.skeleton(), locals, models);
  };
  pose(0.0);
  auto created = Ragdoll::create(*world, c.asset, c.skeleton(), Transform::identity(), models);
  ASSERT_TRUE(created) << created.error();
  Ragdoll& r = **created;
  const int n = r.bodyCount();
  const auto enabled = [&] {
    int count = 0;
    for (int b = 0; b < n; ++b) count += world->isEnabled(r.body(b)) ? 1 : 0;
    return count;
  };
  ASSERT_TRUE(r.setCapsuleOnly(true));
  EXPECT_EQ(enabled(), 0);
  for (int i = 1; i <= 5; ++i) {
    pose(i * kDt);
    ASSERT_TRUE(r.setAnimatedPose(i * kDt, Transform::identity(), models, false, kDt));
    world->step(kDt, 1);
  }
  EXPECT_EQ(enabled(), 0) << "setAnimatedPose moves the capsule only";
  // Abandoned: a mask of the wrong size. Nothing changed, the bodies still out.
  const std::vector<std::uint8_t> wrong(3, 1);
  const HandoffRecord abandoned = r.commitBodies(HandoffSettings{}, wrong, Authority::Drive);
  EXPECT_FALSE(abandoned.committed);
  EXPECT_TRUE(r.capsuleOnly());
  EXPECT_EQ(enabled(), 0);
  // The right arm alone: every body back, the arm dynamic, the rest kinematic on the animation.
  std::vector<std::uint8_t> arm(static_cast<size_t>(n), 0);
  for (Slot s : {Slot::UpperArmR, Slot::LowerArmR}) arm[static_cast<size_t>(c.asset->bodyForSlot(s))] = 1;
  const HandoffRecord partial = r.commitBodies(HandoffSettings{}, arm, Authority::Drive);
  ASSERT_TRUE(partial.committed) << partial.failure;
  EXPECT_FALSE(r.capsuleOnly());
  EXPECT_EQ(enabled(), n);
  for (int b = 0; b < n; ++b) {
    const bool dynamic = arm[static_cast<size_t>(b)] != 0;
    EXPECT_EQ(world->motionType(r.body(b)), dynamic ? MotionType::Dynamic : MotionType::Kinematic);
    EXPECT_LT(glm::length(world->transform(r.body(b)).translation - r.history().body(0, b).translation),
              1e-5);
  }
  // Refused while the arm is dynamic; accepted once every body is animated again.
  EXPECT_FALSE(r.setCapsuleOnly(true));
  EXPECT_EQ(enabled(), n);
  r.makeAnimated();
  EXPECT_TRUE(r.setCapsuleOnly(true));
  EXPECT_EQ(enabled(), 0);
}

}  // namespace
}  // namespace handoff
