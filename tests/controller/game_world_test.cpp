// A game's own Bullet world (issue 26): the game makes its btDiscreteDynamicsWorld, its ground
// and its crates with Bullet's API (default collision groups) and its own tick callback, and
// joins handoff to it (joinBulletWorld). A DeepMimic runner going ragdoll pushes the game's crate
// and lands on the game's platform (both dynamic bodies of the game's); the contacts come back as events
// naming the game's objects; a ray names the character, slot, joint and bone it hit; the game's callback runs
// every substep and is given back when handoff leaves.
#include "handoff/controller.h"
#include "handoff/physics_bullet.h"

#include <btBulletDynamicsCommon.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include "support/robust_scene.h"

namespace handoff {
namespace {

using test::kRobustDt;

/// What a game has before it meets handoff: its own world, ground and bodies.
struct GameWorld {
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher{&config};
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver solver;
  btDiscreteDynamicsWorld world{&dispatcher, &broadphase, &solver, &config};
  std::vector<std::unique_ptr<btCollisionShape>> shapes;
  std::vector<std::unique_ptr<btRigidBody>> bodies;
  int ticks = 0;

  GameWorld() {
    world.setGravity(btVector3(0, -9.81, 0));
    world.setInternalTickCallback(&GameWorld::onTick, this, true);
    add(std::make_unique<btStaticPlaneShape>(btVector3(0, 1, 0), 0), 0.0, btVector3(0, 0, 0));
  }
  ~GameWorld() {
    for (auto& b : bodies) world.removeRigidBody(b.get());
  }
  static void onTick(btDynamicsWorld* w, btScalar) {
    ++static_cast<GameWorld*>(w->getWorldUserInfo())->ticks;
  }
  /// A body as a game adds it: addRigidBody(body), Bullet's default groups.
  btRigidBody* add(std::unique_ptr<btCollisionShape> shape, double mass, const btVector3& at) {
    btVector3 inertia(0, 0, 0);
    if (mass > 0.0) shape->calculateLocalInertia(btScalar(mass), inertia);
    btRigidBody::btRigidBodyConstructionInfo ci(btScalar(mass), nullptr, shape.get(), inertia);
    ci.m_startWorldTransform.setOrigin(at);
    ci.m_friction = 0.8;
    bodies.push_back(std::make_unique<btRigidBody>(ci));
    shapes.push_back(std::move(shape));
    world.addRigidBody(bodies.back().get());
    return bodies.back().get();
  }
};

Vec3 position(const btRigidBody& b) {
  const btVector3& p = b.getCenterOfMassPosition();
  return Vec3{p.x(), p.y(), p.z()};
}

TEST(GameWorld, RagdollPushesTheGamesCrateAndLandsOnItsPlatform) {
  const test::Character& c = test::loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  GameWorld game;
  const int gameObjects = game.world.getNumCollisionObjects();
  Result<std::unique_ptr<PhysicsWorld>> joined = joinBulletWorld(game.world);
  ASSERT_TRUE(joined.ok()) << joined.error();
  PhysicsWorld& world = **joined;
  EXPECT_FALSE(joinBulletWorld(game.world).ok());  // one handoff world per Bullet world
  {
    std::optional<test::DrivenCharacter> d = test::DrivenCharacter::create(world, c, Transform::identity());
    ASSERT_TRUE(d);
    Character& ch = *d->character;
    const int frames = 30;
    for (int i = 0; i < frames; ++i) ASSERT_TRUE(d->frame(world, 2));
    EXPECT_EQ(game.ticks, 2 * frames);  // the game's callback runs every substep
    EXPECT_EQ(game.world.getWorldUserInfo(), &game);

    // The game puts a crate and a low platform in the runner's way, in its own world: both are
    // the game's dynamic bodies (an 8 kg crate, a 150 kg pallet).
    const Ragdoll& r = ch.ragdoll();
    const int pelvisBody = c.asset->bodyForSlot(Slot::Pelvis);
    const Vec3 pelvis = world.transform(r.body(pelvisBody)).translation;
    const Transform& root = ch.displayRoot();
    Vec3 ahead = root.transformVector(c.asset->modelForward);
    ahead.y = 0.0;
    ahead = glm::normalize(ahead);
    const Vec3 crateAt = pelvis + 0.8 * ahead;
    btRigidBody* crate = game.add(std::make_unique<btBoxShape>(btVector3(0.2, 0.2, 0.2)), 8.0,
                                  btVector3(crateAt.x, 0.2, crateAt.z));
    const Vec3 platformAt = pelvis + 1.6 * ahead;
    btRigidBody* platform = game.add(std::make_unique<btBoxShape>(btVector3(0.8, 0.15, 0.8)), 150.0,
                                     btVector3(platformAt.x, 0.15, platformAt.z));
    const Vec3 crateStart = position(*crate);
    // A ray at the chest names the character, its slot, joint and bone; one at the crate names
    // the game's object and no body of handoff's.
    const int chest = c.asset->bodyForSlot(Slot::Chest);
    const Vec3 chestAt = world.transform(r.body(chest)).translation;
    const CastHit shot = world.castRay(chestAt + 2.0 * ahead, chestAt - 2.0 * ahead, layers::kRagdoll);
    ASSERT_TRUE(shot.hit());
    const CharacterBodyInfo who = characterBodyInfo(world, shot.body);
    EXPECT_EQ(who.character, &ch);
    ASSERT_GE(who.part.body, 0);
    std::printf("[ figure ] shot hit body '%s' (slot %s, joint %d, bone %d)\n",
                c.asset->bodies[static_cast<size_t>(who.part.body)].name.c_str(), slotName(who.part.slot),
                who.part.joint, who.part.bone);
    EXPECT_EQ(who.part.bone, c.asset->bodies[static_cast<size_t>(who.part.body)].joint);
    EXPECT_EQ(who.part.slot, c.asset->bodies[static_cast<size_t>(who.part.body)].slot);
    EXPECT_TRUE(who.part.slot == Slot::Chest || who.part.slot == Slot::LowerSpine ||
                who.part.slot == Slot::Head || who.part.slot == Slot::UpperArmL ||
                who.part.slot == Slot::UpperArmR);
    EXPECT_GE(who.part.joint, 0);
    EXPECT_EQ(c.asset->joints[static_cast<size_t>(who.part.joint)].childBody, who.part.body);
    const CastHit atCrate =
        world.castRay(Vec3{crateAt.x, 2.0, crateAt.z}, Vec3{crateAt.x, -1.0, crateAt.z}, layers::kDebris);
    ASSERT_TRUE(atCrate.hit());
    EXPECT_FALSE(atCrate.body.valid());
    EXPECT_EQ(atCrate.engineObject, crate);
    EXPECT_EQ(characterBodyInfo(world, atCrate.body).character, nullptr);

    for (int b = 0; b < r.bodyCount(); ++b) world.setContactReport(r.body(b), 0.5);
    ASSERT_TRUE(d->goRagdoll().committed);
    double crateImpulse = 0.0, platformImpulse = 0.0, worstStretch = 0.0;
    for (int i = 0; i < 150; ++i) {
      ASSERT_TRUE(d->frame(world, 2));
      for (const ContactEvent& e : world.contactEvents()) {
        EXPECT_TRUE(characterBodyInfo(world, e.body).character == &ch);
        if (e.otherEngineObject == crate) crateImpulse += e.impulse;
        if (e.otherEngineObject == platform) platformImpulse += e.impulse;
      }
      worstStretch = std::max(worstStretch, r.maxJointSeparation());
    }
    const Vec3 moved = position(*crate) - crateStart;
    const double lowest = [&] {
      double y = 1e9;
      for (int b = 0; b < r.bodyCount(); ++b) y = std::min(y, world.transform(r.body(b)).translation.y);
      return y;
    }();
    double onPlatform = 0.0;  // bodies above the platform's top, within its footprint
    const Vec3 platformEnd = position(*platform);
    for (int b = 0; b < r.bodyCount(); ++b) {
      const Vec3 p = world.transform(r.body(b)).translation;
      onPlatform += std::abs(p.x - platformEnd.x) < 0.8 && std::abs(p.z - platformEnd.z) < 0.8 && p.y > 0.3;
    }
    std::printf(
        "[ figure ] crate pushed %.3f m (impulse %.1f N s), platform impulse %.1f N s (moved %.3f m), %g of "
        "%d bodies on the platform, lowest body centre %.3f m, worst joint stretch %.4f m\n",
        glm::length(Vec3{moved.x, 0.0, moved.z}), crateImpulse, platformImpulse,
        glm::length(platformEnd - Vec3{platformAt.x, 0.15, platformAt.z}), onPlatform, r.bodyCount(), lowest,
        worstStretch);
    // The game's crate took the runner's legs and moved; the game's platform caught the ragdoll.
    EXPECT_GT(crateImpulse, 5.0);
    EXPECT_GT(glm::length(Vec3{moved.x, 0.0, moved.z}), 0.05);
    EXPECT_GT(platformImpulse, 20.0);
    EXPECT_GE(onPlatform, 1.0);
    EXPECT_LT(worstStretch, 0.02);  // SPEC section 3's anchor drift bound holds in the game's world
    EXPECT_TRUE(std::isfinite(lowest));
    EXPECT_GT(lowest, 0.0);
    EXPECT_EQ(game.ticks, 2 * (frames + 150));
  }
  // Leaving: handoff's objects are gone and the game's tick callback is its own again.
  joined = Error{"left"};
  EXPECT_EQ(game.world.getNumCollisionObjects(), gameObjects + 2);  // + the crate and the platform
  const int before = game.ticks;
  game.world.stepSimulation(1.0 / 60.0, 0);
  EXPECT_EQ(game.ticks, before + 1);
  EXPECT_EQ(game.world.getWorldUserInfo(), &game);
}

/// The game calls its own stepSimulation (its fixed substep, its max substeps) instead of
/// PhysicsWorld::step: every internal tick is a step of one substep for handoff (docs/
/// INTEGRATION.md). The animated bodies follow the clip as closely as through step(), and a
/// ragdoll falls and settles on the game's ground with its joints held.
TEST(GameWorld, TheGamesOwnStepSimulationTicksDriveTheCharacter) {
  const test::Character& c = test::loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  GameWorld own, reference;
  Result<std::unique_ptr<PhysicsWorld>> joined = joinBulletWorld(own.world);
  Result<std::unique_ptr<PhysicsWorld>> joinedReference = joinBulletWorld(reference.world);
  ASSERT_TRUE(joined.ok() && joinedReference.ok());
  PhysicsWorld& world = **joined;
  PhysicsWorld& referenceWorld = **joinedReference;
  std::optional<test::DrivenCharacter> d = test::DrivenCharacter::create(world, c, Transform::identity());
  std::optional<test::DrivenCharacter> r =
      test::DrivenCharacter::create(referenceWorld, c, Transform::identity());
  ASSERT_TRUE(d && r);
  const Ragdoll& ragdoll = d->character->ragdoll();
  const Ragdoll& referenceRagdoll = r->character->ragdoll();
  // The game's frame: its animation, then its own stepSimulation with two 1/120 s ticks.
  const auto gameFrame = [&] {
    if (!d->preStep()) return false;
    own.world.stepSimulation(btScalar(kRobustDt), 4, btScalar(kRobustDt / 2));
    d->character->postStep(kRobustDt);
    return true;
  };
  double worstTracking = 0.0;  // between the two stepping routes, animated
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(gameFrame());
    ASSERT_TRUE(r->frame(referenceWorld, 2));
    for (int b = 0; b < ragdoll.bodyCount(); ++b) {
      worstTracking = std::max(worstTracking,
                               glm::length(world.transform(ragdoll.body(b)).translation -
                                           referenceWorld.transform(referenceRagdoll.body(b)).translation));
    }
  }
  const int ticksBefore = own.ticks;
  EXPECT_GE(ticksBefore, 58);  // Bullet's own clock: 2 ticks a frame, give or take its remainder
  EXPECT_LE(ticksBefore, 62);
  ASSERT_TRUE(d->goRagdoll().committed);
  double worstStretch = 0.0, lowest = 1e9;
  for (int i = 0; i < 180; ++i) {
    ASSERT_TRUE(gameFrame());
    worstStretch = std::max(worstStretch, ragdoll.maxJointSeparation());
    for (int b = 0; b < ragdoll.bodyCount(); ++b)
      lowest = std::min(lowest, world.transform(ragdoll.body(b)).translation.y);
  }
  const int pelvis = c.asset->bodyForSlot(Slot::Pelvis);
  const double pelvisHeight = world.transform(ragdoll.body(pelvis)).translation.y;
  const double pelvisSpeed = glm::length(world.linearVelocity(ragdoll.body(pelvis)));
  std::printf(
      "[ figure ] own stepSimulation: %d ticks in 30 frames, animated bodies within %.2e m of step()'s, "
      "after 3 s ragdoll: pelvis %.3f m high at %.3f m/s, lowest body centre %.3f m, worst stretch %.4f m\n",
      ticksBefore, worstTracking, pelvisHeight, pelvisSpeed, lowest, worstStretch);
  // Kinematic bodies reach each frame's pose whichever route steps them (float round-off of the
  // pose; a tick that missed the move would leave a body a frame behind: 5+ cm at a run).
  EXPECT_LT(worstTracking, 1e-3);
  EXPECT_LT(worstStretch, 0.02);  // SPEC section 3's anchor drift bound
  EXPECT_GT(lowest, 0.0);         // no body centre through the game's ground
  EXPECT_LT(pelvisHeight, 0.35);  // lying down
  EXPECT_LT(pelvisSpeed, 0.2);    // and settling
}

}  // namespace
}  // namespace handoff
