// The island-ordered world (WorldSettings::islandOrderedSolve): see its comment below. Header-only:
// BulletWorld makes one (bullet_world.cpp) and forgets a removed body's predictive contacts in it
// (bullet_bodies.cpp).
#pragma once
#include "physics_bullet/bullet_parts.h"

#include <BulletCollision/CollisionDispatch/btSimulationIslandManager.h>
#include <btBulletCollisionCommon.h>
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace handoff::bullet_detail {

// btDiscreteDynamicsWorld solving every simulation island on its own, with its manifolds and
// constraints in a canonical order (by the adapter's slot indices, which a body keeps for its
// life). Bullet sorts them by island only (an unstable quicksort over the whole world) and
// batches islands, so whatever happened to one character (a contact more, bodies removed and
// added back) reordered another's rows and changed its results in the last bits, which chaotic
// ragdoll motion grows to centimetres. With this order a character's results depend on its own
// island only (issue 9: a fault in one character leaves the others bit for bit unchanged).
class IslandOrderedWorld final : public btDiscreteDynamicsWorld {
 public:
  IslandOrderedWorld(btDispatcher* dispatcher, btBroadphaseInterface* broadphase, btConstraintSolver* solver,
                     btCollisionConfiguration* config, bool ordered)
      : btDiscreteDynamicsWorld(dispatcher, broadphase, solver, config), ordered_(ordered) {}

  /// Releases the CCD's predictive manifolds that hold `body`. Bullet makes them at every
  /// internal step and releases them only at the next one (after the pre-tick callback), and
  /// removeRigidBody leaves them: a body destroyed between steps stayed referenced by one, read
  /// by the next pre-tick's manifold refresh after it was freed.
  void forgetPredictiveContacts(const btCollisionObject* body) {
    for (int i = m_predictiveManifolds.size() - 1; i >= 0; --i) {
      btPersistentManifold* m = m_predictiveManifolds[i];
      if (m->getBody0() != body && m->getBody1() != body) continue;
      m_dispatcher1->releaseManifold(m);
      m_predictiveManifolds.swap(i, m_predictiveManifolds.size() - 1);
      m_predictiveManifolds.pop_back();
    }
  }

  void solveConstraints(btContactSolverInfo& info) override {
    if (!ordered_) {  // WorldSettings::islandOrderedSolve off: Bullet's own batching and order
      btDiscreteDynamicsWorld::solveConstraints(info);
      return;
    }
    sorted_.clear();
    for (int i = 0; i < m_constraints.size(); ++i) {
      if (m_constraints[i]->isEnabled()) sorted_.push_back(m_constraints[i]);  // broken joints are not
    }
    std::sort(sorted_.begin(), sorted_.end(), [](const btTypedConstraint* a, const btTypedConstraint* b) {
      const int ia = islandOf(*a), ib = islandOf(*b);
      return ia != ib ? ia < ib : a->getUserConstraintId() < b->getUserConstraintId();
    });
    Callback callback(*this, info);
    m_constraintSolver->prepareSolve(getCollisionWorld()->getNumCollisionObjects(),
                                     getCollisionWorld()->getDispatcher()->getNumManifolds());
    m_islandManager->buildAndProcessIslands(getCollisionWorld()->getDispatcher(), getCollisionWorld(),
                                            &callback);
    m_constraintSolver->allSolved(info, m_debugDrawer);
  }

 private:
  static int islandOf(const btTypedConstraint& c) {
    const int a = c.getRigidBodyA().getIslandTag();
    return a >= 0 ? a : c.getRigidBodyB().getIslandTag();
  }
  // Orders constraints by island alone, for finding one island's run in the sorted list.
  struct IslandLess {
    bool operator()(const btTypedConstraint* c, int island) const { return islandOf(*c) < island; }
    bool operator()(int island, const btTypedConstraint* c) const { return island < islandOf(*c); }
  };
  // Sorts `items` by `key(item)` (an int64, read once per item) through `scratch`, whose capacity
  // is kept: no allocation once it has grown to the largest island.
  template <class T, class Key>
  static void sortByKey(T** items, int count, std::vector<std::pair<std::int64_t, T*>>& scratch, Key key) {
    scratch.clear();
    for (int i = 0; i < count; ++i) scratch.emplace_back(key(items[i]), items[i]);
    std::sort(scratch.begin(), scratch.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (int i = 0; i < count; ++i) items[i] = scratch[static_cast<std::size_t>(i)].second;
  }

  struct Callback final : btSimulationIslandManager::IslandCallback {
    Callback(IslandOrderedWorld& world, btContactSolverInfo& info) : world_(world), info_(info) {}
    void processIsland(btCollisionObject** bodies, int numBodies, btPersistentManifold** manifolds,
                       int numManifolds, int islandId) override {
      std::vector<btTypedConstraint*>& all = world_.sorted_;
      btTypedConstraint** first = all.empty() ? nullptr : all.data();
      int count = static_cast<int>(all.size());
      if (islandId >= 0) {  // this island's constraints: one contiguous run after the sort
        const auto [begin, end] = std::equal_range(all.begin(), all.end(), islandId, IslandLess{});
        first = begin == end ? nullptr : &*begin;
        count = static_cast<int>(end - begin);
        // Each element's key is read once, then the (key, element) pairs are sorted by key: the
        // comparisons and so the permutation are the ones sorting the elements by reading their
        // keys at every comparison gave (the same order, ties included), without the two to four
        // pointer chases per comparison that were a tenth of a 650-body pile's step.
        sortByKey(bodies, numBodies, world_.bodyKeys_,
                  [](const btCollisionObject* b) { return static_cast<std::int64_t>(b->getUserIndex()); });
        sortByKey(manifolds, numManifolds, world_.manifoldKeys_, [](const btPersistentManifold* m) {
          const std::int64_t i0 = m->getBody0()->getUserIndex(), i1 = m->getBody1()->getUserIndex();
          return std::min(i0, i1) * (std::int64_t{1} << 32) + std::max(i0, i1);
        });
      }
      world_.m_constraintSolver->solveGroup(bodies, numBodies, manifolds, numManifolds, first, count, info_,
                                            world_.m_debugDrawer, world_.getDispatcher());
    }
    IslandOrderedWorld& world_;
    btContactSolverInfo& info_;
  };

  bool ordered_;
  std::vector<btTypedConstraint*> sorted_;
  std::vector<std::pair<std::int64_t, btCollisionObject*>> bodyKeys_;
  std::vector<std::pair<std::int64_t, btPersistentManifold*>> manifoldKeys_;
};

}  // namespace handoff::bullet_detail
