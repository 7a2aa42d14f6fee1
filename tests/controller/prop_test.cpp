// Props in the hand (Character::addProp): every invalid description refused one by one with
// nothing created; a held prop's mass is part of the hand's dynamics (a blow to the held sword
// moves the falling ragdoll, momentum conserved through the fixed joint; dropped, it moves the
// sword alone); drop and grab are refused when they cannot run.
//
//        RightWrist (hand body) --fixed joint-- sword (capsule, grip 0.25 m below its centre)
//            |
//        RightElbow ... chest ... pelvis       (the ragdoll, falling freely: no ground)
#include "handoff/controller.h"
#include "handoff/physics_bullet.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <vector>

#include "support/bullet_precision.h"
#include "support/clip_scene.h"

namespace handoff {
namespace {

constexpr double kStep = 1.0 / 60.0;

struct PropScene {
  const test::Character* c = nullptr;
  std::unique_ptr<PhysicsWorld> world;
  std::unique_ptr<Character> ch;
  std::vector<Transform> locals;
  double t = 0.0;

  void start(const CharacterSettings& settings = {}) {
    c = &test::loadCharacter("cmu/Boxing_Toes.bvh");
    world = createBulletWorld();  // no ground: the ragdoll falls freely
    locals.resize(static_cast<size_t>(c->skeleton().jointCount()));
    c->clip().sample(0.0, WrapMode::Clamp, locals);
    Result<std::unique_ptr<Character>> created =
        Character::create(*world, c->asset, c->skeleton(), settings, Transform{}, locals);
    ASSERT_TRUE(created) << created.error();
    ch = std::move(created).value();
  }
  void step() {
    t += kStep;
    ASSERT_TRUE(ch->preStep(AnimationInput{t, Transform{}, locals, false}, kStep));
    world->step(kStep, 2);
    ch->postStep(kStep);
  }
  /// Linear momentum of the ragdoll and the props. [kg m/s]
  Vec3 momentum() const {
    Vec3 p{0.0};
    for (int b = 0; b < ch->ragdoll().bodyCount(); ++b) {
      const BodyId id = ch->ragdoll().body(b);
      p += world->mass(id) * world->linearVelocity(id);
    }
    for (int i = 0; i < ch->propCount(); ++i)
      p += world->mass(ch->propBody(i)) * world->linearVelocity(ch->propBody(i));
    return p;
  }
};

PropDesc sword() {
  PropDesc d;
  d.name = "sword";
  d.handBone = "RightWrist";
  d.shape.type = ShapeType::Capsule;
  d.shape.radius = 0.02;
  d.shape.halfHeight = 0.35;
  d.mass = 1.0;
  d.handFromGrip.translation = Vec3{-0.075, 0.0, 0.0};
  d.propFromGrip.translation = Vec3{0.0, -0.25, 0.0};
  return d;
}

TEST(CharacterProp, InvalidDescriptionsAreRefusedOneByOne) {
  PropScene s;
  s.start();
  ASSERT_TRUE(s.ch);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    const char* what;
    void (*change)(PropDesc&, double);
    const char* message;
  };
  const Case cases[] = {
      {"empty name", [](PropDesc& d, double) { d.name.clear(); }, "the name must not be empty"},
      {"no shape", [](PropDesc& d, double) { d.shape.type = ShapeType::None; }, "the shape needs a type"},
      {"zero radius", [](PropDesc& d, double) { d.shape.radius = 0.0; }, "positive finite sizes"},
      {"NaN half height", [](PropDesc& d, double n) { d.shape.halfHeight = n; }, "positive finite sizes"},
      {"zero mass", [](PropDesc& d, double) { d.mass = 0.0; }, "mass must be > 0"},
      {"NaN mass", [](PropDesc& d, double n) { d.mass = n; }, "mass must be > 0"},
      {"negative inertia", [](PropDesc& d, double) { d.inertia.y = -1.0; }, "inertia must be >= 0"},
      {"NaN grip", [](PropDesc& d, double n) { d.handFromGrip.translation.x = n; }, "must be finite"},
      {"NaN prop grip", [](PropDesc& d, double n) { d.propFromGrip.rotation.w = n; }, "must be finite"},
      {"restitution 2", [](PropDesc& d, double) { d.restitution = 2.0; }, "restitution in [0, 1]"},
      {"unknown bone", [](PropDesc& d, double) { d.handBone = "RightHnd"; }, "no bone named 'RightHnd'"},
      {"joint out of range",
       [](PropDesc& d, double) {
         d.handBone.clear();
         d.handJoint = 1000;
       },
       "handJoint 1000 is out of range"},
  };
  const int bodies = s.world->bodyCount();
  const int joints = s.world->jointCount();
  for (const Case& k : cases) {
    PropDesc d = sword();
    k.change(d, nan);
    Result<int> r = s.ch->addProp(d);
    ASSERT_FALSE(r) << k.what;
    EXPECT_THAT(r.error(), ::testing::HasSubstr(k.message)) << k.what;
    EXPECT_EQ(s.world->bodyCount(), bodies) << k.what;
    EXPECT_EQ(s.world->jointCount(), joints) << k.what;
  }
  EXPECT_EQ(s.ch->propCount(), 0);
  Result<int> ok = s.ch->addProp(sword());
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_EQ(s.world->bodyCount(), bodies + 1);
  EXPECT_EQ(s.world->jointCount(), joints + 1);
  Result<int> again = s.ch->addProp(sword());
  ASSERT_FALSE(again);
  EXPECT_THAT(again.error(), ::testing::HasSubstr("prop 'sword': a prop of this name is already added"));
  EXPECT_FALSE(s.ch->dropProp(5));
  EXPECT_FALSE(s.ch->grabProp(-1));
  EXPECT_THAT(s.ch->grabProp(*ok).error(), ::testing::HasSubstr("already held"));
  ASSERT_TRUE(s.ch->dropProp(*ok));
  EXPECT_EQ(s.world->jointCount(), joints);
  EXPECT_THAT(s.ch->dropProp(*ok).error(), ::testing::HasSubstr("is not held"));
  ASSERT_TRUE(s.ch->grabProp(*ok));
  EXPECT_TRUE(s.ch->propHeld(*ok));
  // Single-precision Bullet: both grips come from float poses (a few roundings of their size).
  EXPECT_LE(glm::length(s.ch->propGrip(*ok).translation - s.ch->handGrip(*ok).translation),
            test::bulletTolerance(1e-9, glm::length(s.ch->handGrip(*ok).translation), 4));
}

/// The falling ragdoll holding the sword, two steps after the death commit; `dropFirst` drops it
/// then; `blow` hits the sword across (+X); one step more. Returns the hand's and the sword's
/// velocity and the momentum gained beyond gravity's.
struct BlowFigures {
  Vec3 hand{0.0}, sword{0.0}, gained{0.0};
  double total = 0.0, momentumBefore = 0.0, grip = 0.0;
};
BlowFigures blowOnTheSword(bool dropFirst, double blow) {
  BlowFigures f;
  CharacterSettings settings;
  settings.dropPropsAtDeath = false;
  PropScene s;
  s.start(settings);
  if (!s.ch) return f;
  Result<int> prop = s.ch->addProp(sword());
  EXPECT_TRUE(prop) << prop.error();
  if (!prop) return f;
  s.step();
  EXPECT_TRUE(s.ch->goRagdoll().committed);
  s.step();  // the prop joins the falling hand with its velocity field
  EXPECT_EQ(s.world->motionType(s.ch->propBody(*prop)), MotionType::Dynamic);
  if (dropFirst) {
    EXPECT_TRUE(s.ch->dropProp(*prop));
  }
  for (int b = 0; b < s.ch->ragdoll().bodyCount(); ++b) f.total += s.world->mass(s.ch->ragdoll().body(b));
  f.total += s.world->mass(s.ch->propBody(*prop));
  const BodyId body = s.ch->propBody(*prop);
  const Vec3 before = s.momentum();
  f.momentumBefore = glm::length(before);
  s.world->applyLinearImpulse(body, Vec3{blow, 0.0, 0.0}, s.world->transform(body).translation);
  s.step();
  f.gained = s.momentum() - before - f.total * s.world->settings().gravity * kStep;
  f.hand = s.world->linearVelocity(s.ch->ragdoll().body(s.ch->propHandBody(*prop)));
  f.sword = s.world->linearVelocity(body);
  f.grip = glm::length(s.ch->propGrip(*prop).translation - s.ch->handGrip(*prop).translation);
  return f;
}

TEST(CharacterProp, TheHeldPropsMassIsPartOfTheHandsDynamics) {
  constexpr double kBlow = 10.0;  // [N s]
  const BlowFigures held = blowOnTheSword(false, kBlow), heldCalm = blowOnTheSword(false, 0.0);
  const BlowFigures free = blowOnTheSword(true, kBlow), freeCalm = blowOnTheSword(true, 0.0);
  const Vec3 heldHand = held.hand - heldCalm.hand, freeHand = free.hand - freeCalm.hand;
  const Vec3 heldSword = held.sword - heldCalm.sword, freeSword = free.sword - freeCalm.sword;
  std::printf(
      "[prop] %.2f kg in all; 10 N s across the sword, what it changes over the step: held: momentum "
      "+%.5f kg m/s, hand %.4f m/s, sword %.4f m/s, grip %.3f mm; dropped: hand %.2e m/s, sword "
      "%.4f m/s\n",
      held.total, held.gained.x - heldCalm.gained.x, heldHand.x, heldSword.x, held.grip * 1e3,
      glm::length(freeHand), freeSword.x);
  // Held, the blow moves the whole falling ragdoll through the fixed joint: the joints are internal,
  // so the momentum gained is the blow's, less the bodies' linear damping (0.05 /s over the step on
  // the momentum carried); the 2.85 kg hand goes with the 1 kg sword, which gets far less than the
  // 10 m/s it would take alone.
  const double damping = 0.05 * kStep * (held.momentumBefore + kBlow);
  EXPECT_NEAR(held.gained.x - heldCalm.gained.x, kBlow, damping);
  EXPECT_GT(heldHand.x, 1.0);
  EXPECT_LT(heldSword.x, 5.0);
  EXPECT_LE(held.grip, 0.01);
  // Dropped, the same blow moves the sword alone.
  EXPECT_LT(glm::length(freeHand), 1e-9);
  EXPECT_NEAR(freeSword.x, kBlow, 0.05 * kStep * kBlow + 1e-9);
}

}  // namespace
}  // namespace handoff
