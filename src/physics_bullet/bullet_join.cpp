// A btDiscreteDynamicsWorld the game owns, joined by handoff (joinBulletWorld).
//
// Decisions worth knowing:
// - Nothing of the game's is replaced: its dispatcher, broadphase, solver, gravity and objects
//   stay. The adapter adds its bodies and joints to the game's world and removes them when it
//   goes. The island-ordered solve and the warm-started joint rows need the adapter's own world
//   and solver classes: a joined world has neither (settings() reports them off).
// - Bullet has one pre-tick and one post-tick callback per world and one user pointer for both.
//   The game's callbacks (read from btDynamicsWorld's protected members, as they were when the
//   world was joined) are chained: the game's pre-tick runs before the adapter's, its post-tick
//   after. The game's world user pointer is left as it is; the adapter finds itself from the
//   world in a process-wide registry (one adapter per world). Leaving restores the callbacks.
// - The solver's iterations are raised to what handoff's joints need
//   (BulletSettings::contactsIterateWithJoints ? WorldSettings::jointIterationFactor *
//   solverIterations : solverIterations) when
//   the game's are fewer, never lowered; the game's ERP stays (joint rows set their own).
// - Speculative contacts: the game's dispatcher is not the adapter's, so manifolds with one of
//   handoff's bodies are widened before every substep (not when Bullet creates them: a new pair
//   starts with Bullet's own threshold for its first substep).
// - Stepping: PhysicsWorld::step(dt, n) runs the game's stepSimulation(h, 0, h) n times (the
//   game's callbacks run every substep). A game that calls its own stepSimulation instead gets
//   each of its internal ticks treated as a step of one substep: drives, pins, motors, breaks
//   and projection run; a kinematic move (moveKinematic) completes within that one tick.
#include "handoff/physics_bullet.h"

#include "physics_bullet/bullet_parts.h"

#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace handoff {
namespace bullet_detail {
namespace {

/// btDynamicsWorld's tick callbacks are protected members without getters: read them through a
/// derived class's pointers to members (never instantiated).
struct TickCallbacks : btDynamicsWorld {
  static btInternalTickCallback pre(const btDynamicsWorld& world) {
    return world.*(&TickCallbacks::m_internalPreTickCallback);
  }
  static btInternalTickCallback post(const btDynamicsWorld& world) {
    return world.*(&TickCallbacks::m_internalTickCallback);
  }
};

struct Registry {
  std::mutex mutex;
  std::vector<std::pair<const btDynamicsWorld*, BulletWorld*>> joined;
};
Registry& registry() {
  static Registry r;
  return r;
}

BulletWorld* joinedAdapter(const btDynamicsWorld* world) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const auto& [w, adapter] : r.joined) {
    if (w == world) return adapter;
  }
  return nullptr;
}

}  // namespace

BulletWorld::BulletWorld(btDiscreteDynamicsWorld& gameWorld, const WorldSettings& settings,
                         const BulletSettings& bullet)
    : settings_(sanitiseWorldSettings(settings)), bullet_(bullet) {
  world_ = &gameWorld;
  dispatcher_ = gameWorld.getDispatcher();
  solver_ = nullptr;
  foreignObjects_ = true;
  settings_.gravity = fromBt(gameWorld.getGravity());
  settings_.islandOrderedSolve = false;
  bullet_.warmStartJoints = false;
  btContactSolverInfo& info = gameWorld.getSolverInfo();
  const int wanted = bullet_.contactsIterateWithJoints
                         ? settings_.jointIterationFactor * settings_.solverIterations
                         : settings_.solverIterations;
  info.m_numIterations = std::max(info.m_numIterations, wanted);
  settings_.jointErp = info.m_erp;
  queryCapsule_ = std::make_unique<ResizableCapsule>();
  queryObject_ = std::make_unique<btCollisionObject>();
  queryObject_->setCollisionShape(queryCapsule_.get());
  events_.reserve(4 * static_cast<std::size_t>(settings_.maxContactEvents));
  eventPeaks_.resize(events_.capacity());
  gamePreTick_ = TickCallbacks::pre(gameWorld);
  gamePostTick_ = TickCallbacks::post(gameWorld);
  void* const user = gameWorld.getWorldUserInfo();
  gameWorld.setInternalTickCallback(&BulletWorld::joinedPreTickCallback, user, true);
  gameWorld.setInternalTickCallback(&BulletWorld::joinedPostTickCallback, user, false);
}

void BulletWorld::leaveGameWorld() {
  void* const user = world_->getWorldUserInfo();
  world_->setInternalTickCallback(gamePreTick_, user, true);
  world_->setInternalTickCallback(gamePostTick_, user, false);
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::erase_if(r.joined, [this](const auto& entry) { return entry.second == this; });
}

void BulletWorld::joinedPreTickCallback(btDynamicsWorld* world, btScalar timeStep) {
  BulletWorld* self = joinedAdapter(world);
  if (self == nullptr) return;
  if (self->gamePreTick_ != nullptr) self->gamePreTick_(world, timeStep);
  if (!self->stepping_) {
    self->externalTick_ = true;
    self->startStep(1);
  }
  self->preTick(self->stepping_ ? self->substepLength_ : timeStep);
}

void BulletWorld::joinedPostTickCallback(btDynamicsWorld* world, btScalar timeStep) {
  BulletWorld* self = joinedAdapter(world);
  if (self == nullptr) return;
  self->postTick(self->stepping_ ? self->substepLength_ : timeStep);
  if (self->externalTick_) {
    self->externalTick_ = false;
    self->finishStep(1);
  }
  if (self->gamePostTick_ != nullptr) self->gamePostTick_(world, timeStep);
}

}  // namespace bullet_detail

Result<std::unique_ptr<PhysicsWorld>> joinBulletWorld(btDiscreteDynamicsWorld& world,
                                                      const WorldSettings& settings,
                                                      const BulletSettings& bullet) {
  using bullet_detail::BulletWorld;
  if (world.getWorldType() != BT_DISCRETE_DYNAMICS_WORLD)
    return Error{
        "joinBulletWorld: the world is not a btDiscreteDynamicsWorld (soft-body and multibody "
        "worlds are not supported)"};
  auto& r = bullet_detail::registry();
  std::unique_ptr<BulletWorld> adapter;
  {
    std::lock_guard lock(r.mutex);
    for (const auto& entry : r.joined) {
      if (entry.first == &world)
        return Error{
            "joinBulletWorld: this world is already joined by another handoff PhysicsWorld (one "
            "per world: create all characters in it)"};
    }
  }
  adapter = std::make_unique<BulletWorld>(world, settings, bullet);
  {
    std::lock_guard lock(r.mutex);
    r.joined.emplace_back(&world, adapter.get());
  }
  return std::unique_ptr<PhysicsWorld>(std::move(adapter));
}

Result<std::unique_ptr<PhysicsWorld>> joinBulletWorld(btDiscreteDynamicsWorld& world) {
  WorldSettings settings;
  settings.layerBits = kBulletDefaultGroups;
  return joinBulletWorld(world, settings);
}

}  // namespace handoff
