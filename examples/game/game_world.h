// The example game's physics world, as a game has it before it meets handoff: its own
// btDiscreteDynamicsWorld (broadphase, solver, gravity), its own collision groups, its level as
// static btBvhTriangleMeshShape bodies and its own dynamic crates (btBoxShape rigid bodies).
//
// Thread-safety: one thread (the one that steps the world).
#pragma once

#include <btBulletDynamicsCommon.h>

#include <handoff/level.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace game {

/// The game's collision groups (Bullet group bits). handoff is told which of them its layers are
/// (handoff::LayerBits in main): the level is static to a ragdoll, the crates are debris it
/// pushes, and ragdolls and capsules get groups of their own.
enum Group : int {
  kGroupLevel = 1 << 0,
  kGroupCrate = 1 << 1,
  kGroupRagdoll = 1 << 4,
  kGroupCapsule = 1 << 5,
  kGroupAll = -1,
};

/// A thing the game made, named for its log (what a ragdoll hit).
struct Thing {
  std::string name;
  std::unique_ptr<btCollisionShape> shape;
  std::unique_ptr<btStridingMeshInterface> mesh;  // a level piece's triangles
  std::unique_ptr<btRigidBody> body;
  btVector3 start{0, 0, 0};
};

struct GameWorld {
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher{&config};
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver solver;
  btDiscreteDynamicsWorld world{&dispatcher, &broadphase, &solver, &config};
  std::vector<Thing> things;

  // The game's own substep work (its vehicles, its triggers): a Bullet internal tick callback,
  // here counting the substeps and their length. handoff chains it when it joins.
  int ticks = 0;
  double tickMin = 1e9, tickMax = 0.0;  // [s]

  GameWorld() {
    world.setGravity(btVector3(0, -9.81f, 0));
    world.setInternalTickCallback(&GameWorld::onTick, this, /*isPreTick=*/false);
  }
  static void onTick(btDynamicsWorld* w, btScalar timeStep) {
    GameWorld& game = *static_cast<GameWorld*>(w->getWorldUserInfo());
    ++game.ticks;
    game.tickMin = std::min(game.tickMin, double(timeStep));
    game.tickMax = std::max(game.tickMax, double(timeStep));
  }
  ~GameWorld() {
    for (Thing& t : things) world.removeRigidBody(t.body.get());
  }
  GameWorld(const GameWorld&) = delete;
  GameWorld& operator=(const GameWorld&) = delete;

  /// Each mesh of a level read by handoff::loadLevel as a static triangle-mesh body of the game's.
  void addLevel(const handoff::Level& level) {
    for (const handoff::LevelMesh& m : level.meshes) {
      auto triangles =
          std::make_unique<btTriangleMesh>(/*use32bitIndices=*/true, /*use4componentVertices=*/false);
      const auto at = [&](std::uint32_t i) {
        const handoff::Vec3& v = m.vertices[i];
        return btVector3(btScalar(v.x), btScalar(v.y), btScalar(v.z));
      };
      for (size_t i = 0; i + 2 < m.indices.size(); i += 3)
        triangles->addTriangle(at(m.indices[i]), at(m.indices[i + 1]), at(m.indices[i + 2]));
      Thing t;
      t.name = "level '" + m.name + "'";
      t.shape =
          std::make_unique<btBvhTriangleMeshShape>(triangles.get(), /*useQuantizedAabbCompression=*/true);
      t.mesh = std::move(triangles);
      btRigidBody::btRigidBodyConstructionInfo info(0, nullptr, t.shape.get());
      info.m_friction = 0.8f;
      t.body = std::make_unique<btRigidBody>(info);
      world.addRigidBody(t.body.get(), kGroupLevel, kGroupAll & ~kGroupLevel);
      things.push_back(std::move(t));
    }
  }

  /// A dynamic crate of `half` extents [m] and `mass` [kg] resting on the ground at `at`.
  btRigidBody* addCrate(const std::string& name, const btVector3& at, const btVector3& half, double mass) {
    Thing t;
    t.name = name;
    t.shape = std::make_unique<btBoxShape>(half);
    btVector3 inertia(0, 0, 0);
    t.shape->calculateLocalInertia(btScalar(mass), inertia);
    btRigidBody::btRigidBodyConstructionInfo info(btScalar(mass), nullptr, t.shape.get(), inertia);
    info.m_startWorldTransform.setOrigin(at);
    info.m_friction = 0.6f;
    t.body = std::make_unique<btRigidBody>(info);
    t.start = at;
    world.addRigidBody(t.body.get(), kGroupCrate, kGroupAll);
    things.push_back(std::move(t));
    return things.back().body.get();
  }

  /// The game's name for one of its objects; nullptr when it is not the game's.
  const Thing* find(const void* object) const {
    for (const Thing& t : things) {
      if (t.body.get() == object) return &t;
    }
    return nullptr;
  }
};

}  // namespace game
