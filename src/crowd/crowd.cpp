// The crowd: characters in independent spaces (one PhysicsWorld each), clustering, migration,
// handoff-side sleeping, freezing and pooled ragdoll instances. docs/CROWDS.md has the design.
#include "handoff/crowd.h"

#include "handoff/drive.h"
#include "handoff/handoff.h"
#include "handoff/physics_bullet.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstring>
#include <numeric>

namespace handoff {

void StaticScene::addTo(PhysicsWorld& world) const {
  for (const Plane& p : planes) world.addGroundPlane(p.normal, p.offset, p.friction);
  for (const Box& b : boxes) world.addStaticBox(b.worldFromBox, b.halfExtents, b.friction);
}

const char* crowdCharacterStateName(CrowdCharacterState state) {
  switch (state) {
    case CrowdCharacterState::Active:
      return "active";
    case CrowdCharacterState::Sleeping:
      return "sleeping";
    case CrowdCharacterState::Frozen:
      return "frozen";
  }
  return "?";
}

namespace {

/// One ragdoll's bodies and joints in one space (asset order).
struct Instance {
  std::array<BodyId, kSlotCount> bodies{};
  std::array<JointId, kSlotCount> joints{};
  int bodyCount = 0;
  int jointCount = 0;
};

struct Space {
  std::unique_ptr<PhysicsWorld> world;
  std::vector<Instance> freeFull, freeReduced;  // pooled, out of the simulation
  int members = 0;                              // characters holding an instance here
  bool claimed = false;                         // scratch of the clustering pass
};

struct Character {
  bool reduced = false;
  CrowdCharacterState state = CrowdCharacterState::Active;
  int space = -1;  // -1 while frozen
  Instance instance;
  std::array<Quat, kSlotCount> hold{};                  // motor target per simulated joint
  std::array<Transform, kSlotCount> carrierFromBody{};  // full bodies, when reduced
  std::array<Transform, kSlotCount> kept{};             // simulated bodies' poses while frozen
  std::array<Transform, kSlotCount> windowStart{};      // poses at the current window's start
  RestWindow rest;
  double asleepTime = 0.0;  // [s] asleep
  Vec3 lo{0.0}, hi{0.0};    // bounds of the bodies' shapes
};

void hashBytes(std::uint64_t& h, const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
}

void hashVec(std::uint64_t& h, const Vec3& v) {
  const double d[3] = {v.x, v.y, v.z};
  hashBytes(h, d, sizeof d);
}

void hashTransform(std::uint64_t& h, const Transform& t) {
  const double d[7] = {t.rotation.w,    t.rotation.x,    t.rotation.y,   t.rotation.z,
                       t.translation.x, t.translation.y, t.translation.z};
  hashBytes(h, d, sizeof d);
}

}  // namespace

struct Crowd::Impl {
  std::shared_ptr<const RagdollAsset> asset;
  ReducedRagdoll reduced;
  StaticScene scene;
  CrowdSettings settings;
  RestRule restRule;
  std::vector<DriveJoint> fullDrive, reducedDrive;
  std::vector<double> fullRadius, reducedRadius;
  std::vector<std::unique_ptr<Space>> spaces;
  std::vector<Character> characters;
  CrowdStats stats;
  int reservedSpaces = 0;

  // Clustering scratch (grows, never shrinks: no allocation once the crowd reached its size).
  std::vector<int> parent, order, clusterOf, clusterStart, clusterMembers, clusterTarget;
  std::vector<int> spaceMemberStart, spaceMembers, stepList;
  std::vector<int> votes;
  std::vector<std::uint8_t> clusterActive;
  int clusterCount = 0;
  // Migration scratch: state captured before instances are released.
  struct Moving {
    int character = -1;
    int target = -1;
    bool wasSleeping = false;
    std::array<Transform, kSlotCount> pose{};
    std::array<Vec3, kSlotCount> linear{}, angular{};
  };
  std::vector<Moving> moving;
  double stepDt = 0.0;

  const RagdollAsset& simAsset(const Character& c) const { return c.reduced ? reduced.asset : *asset; }
  const std::vector<DriveJoint>& simDrive(const Character& c) const {
    return c.reduced ? reducedDrive : fullDrive;
  }
  const std::vector<double>& simRadius(const Character& c) const {
    return c.reduced ? reducedRadius : fullRadius;
  }

  int newSpace() {
    auto s = std::make_unique<Space>();
    s->world =
        settings.createWorld ? settings.createWorld(settings.world) : createBulletWorld(settings.world);
    scene.addTo(*s->world);
    s->freeFull.reserve(16);
    s->freeReduced.reserve(16);
    spaces.push_back(std::move(s));
    return static_cast<int>(spaces.size()) - 1;
  }

  /// A ragdoll's bodies and joints, created out of the simulation (handoff::createRagdollBodies:
  /// the asset's shapes, masses and materials, as Ragdoll::create makes them). Pooled bodies wait
  /// far below the scene. An error leaves the instance empty (no bodies).
  Result<Instance> createInstance(Space& space, bool isReduced) {
    const RagdollAsset& a = isReduced ? reduced.asset : *asset;
    Instance inst;
    inst.bodyCount = static_cast<int>(a.bodies.size());
    inst.jointCount = static_cast<int>(a.joints.size());
    std::array<Transform, kSlotCount> parked;
    parked.fill(Transform::fromTranslation(Vec3{0.0, -1000.0, 0.0}));
    const size_t nb = static_cast<size_t>(inst.bodyCount), nj = static_cast<size_t>(inst.jointCount);
    Status created = createRagdollBodies(*space.world, a, MotionType::Dynamic,
                                         std::span<const Transform>(parked.data(), nb),
                                         std::span<BodyId>(inst.bodies.data(), nb),
                                         std::span<JointId>(inst.joints.data(), nj), /*enabled=*/false);
    if (!created) return Error{"crowd: " + created.error()};
    return inst;
  }

  /// An instance from the space's pool (or the heap, counted as a pool miss), out of the simulation.
  Instance acquire(int spaceIndex, bool isReduced) {
    Space& s = *spaces[static_cast<size_t>(spaceIndex)];
    std::vector<Instance>& pool = isReduced ? s.freeReduced : s.freeFull;
    ++s.members;
    if (!pool.empty()) {
      Instance inst = pool.back();
      pool.pop_back();
      return inst;
    }
    stats.poolMisses += static_cast<int>((isReduced ? reduced.asset : *asset).bodies.size());
    return created(createInstance(s, isReduced));
  }

  /// Crowd::create made both ragdolls of this (immutable) asset once: creating them cannot fail.
  static Instance created(Result<Instance> inst) {
    assert(inst.ok() && "Crowd::create checked that the asset's ragdolls can be created");
    return inst.ok() ? *inst : Instance{};
  }

  void release(int spaceIndex, const Instance& inst, bool isReduced) {
    Space& s = *spaces[static_cast<size_t>(spaceIndex)];
    for (int j = 0; j < inst.jointCount; ++j) s.world->setJointMotor(inst.joints[static_cast<size_t>(j)], {});
    for (int b = 0; b < inst.bodyCount; ++b) s.world->setEnabled(inst.bodies[static_cast<size_t>(b)], false);
    (isReduced ? s.freeReduced : s.freeFull).push_back(inst);
    --s.members;
  }

  /// Puts a character's instance into the simulation at the given poses and velocities.
  void place(Character& c, std::span<const Transform> pose, std::span<const Vec3> linear,
             std::span<const Vec3> angular) {
    PhysicsWorld& w = *spaces[static_cast<size_t>(c.space)]->world;
    const std::vector<DriveJoint>& drive = simDrive(c);
    for (int b = 0; b < c.instance.bodyCount; ++b) {
      const BodyId id = c.instance.bodies[static_cast<size_t>(b)];
      w.setTransform(id, pose[static_cast<size_t>(b)]);
      w.setLinearVelocity(id, linear.empty() ? Vec3{0.0} : linear[static_cast<size_t>(b)]);
      w.setAngularVelocity(id, angular.empty() ? Vec3{0.0} : angular[static_cast<size_t>(b)]);
    }
    for (int b = 0; b < c.instance.bodyCount; ++b)
      w.setEnabled(c.instance.bodies[static_cast<size_t>(b)], true);
    for (int j = 0; j < c.instance.jointCount; ++j) {
      const JointId id = c.instance.joints[static_cast<size_t>(j)];
      w.resetWarmStart(id);
      w.setJointMotor(id, settings.holdWeight > 0.0
                              ? implicitMotorSettings(drive[static_cast<size_t>(j)],
                                                      c.hold[static_cast<size_t>(j)], settings.holdWeight)
                              : JointMotorSettings{});
    }
  }

  void sleepCharacter(Character& c) {
    PhysicsWorld& w = *spaces[static_cast<size_t>(c.space)]->world;
    for (int b = 0; b < c.instance.bodyCount; ++b) w.sleep(c.instance.bodies[static_cast<size_t>(b)]);
    c.state = CrowdCharacterState::Sleeping;
    c.asleepTime = 0.0;
  }

  void updateBounds(Character& c, std::span<const Transform> pose) {
    const std::vector<double>& radius = simRadius(c);
    c.lo = Vec3{1e300};
    c.hi = Vec3{-1e300};
    for (int b = 0; b < c.instance.bodyCount; ++b) {
      const Vec3& p = pose[static_cast<size_t>(b)].translation;
      const Vec3 r{radius[static_cast<size_t>(b)]};
      c.lo = glm::min(c.lo, p - r);
      c.hi = glm::max(c.hi, p + r);
    }
  }

  void readPose(const Character& c, std::span<Transform> pose) const {
    if (c.state == CrowdCharacterState::Frozen) {
      std::copy_n(c.kept.begin(), c.instance.bodyCount, pose.begin());
      return;
    }
    const PhysicsWorld& w = *spaces[static_cast<size_t>(c.space)]->world;
    for (int b = 0; b < c.instance.bodyCount; ++b)
      pose[static_cast<size_t>(b)] = w.transform(c.instance.bodies[static_cast<size_t>(b)]);
  }

  /// After a space stepped: bounds, settle window and engine sleep state of one character.
  void afterStep(Character& c, double dt) {
    std::array<Transform, kSlotCount> pose;
    readPose(c, pose);
    updateBounds(c, pose);
    const PhysicsWorld& w = *spaces[static_cast<size_t>(c.space)]->world;
    bool allSleeping = true;
    for (int b = 0; b < c.instance.bodyCount && allSleeping; ++b) {
      allSleeping = w.isSleeping(c.instance.bodies[static_cast<size_t>(b)]);
    }
    if (allSleeping) {
      if (c.state != CrowdCharacterState::Sleeping) c.asleepTime = 0.0;
      c.state = CrowdCharacterState::Sleeping;
      c.asleepTime += dt;
      return;
    }
    if (c.state == CrowdCharacterState::Sleeping) {  // woken by the engine (a hit)
      c.state = CrowdCharacterState::Active;
      restartWindow(c, pose);
      return;
    }
    const std::span<const Transform> simulated(pose.data(), static_cast<size_t>(c.instance.bodyCount));
    c.rest.advance(simulated, std::span<Transform>(c.windowStart.data(), simulated.size()), dt, restRule);
  }

  static void restartWindow(Character& c, std::span<const Transform> pose) {
    c.rest.restart(pose, std::span<Transform>(c.windowStart.data(), pose.size()));
  }

  bool settled(const Character& c) const { return c.state != CrowdCharacterState::Active || c.rest.settled; }

  void freezeCharacter(Character& c) {
    readPose(c, c.kept);
    release(c.space, c.instance, c.reduced);
    c.space = -1;
    c.state = CrowdCharacterState::Frozen;
    ++stats.frozenNow;
  }

  /// Back into the simulation in `spaceIndex`, asleep, exactly at the kept pose.
  void thawInto(Character& c, int spaceIndex) {
    c.space = spaceIndex;
    c.instance = acquire(spaceIndex, c.reduced);
    place(c, std::span<const Transform>(c.kept.data(), static_cast<size_t>(c.instance.bodyCount)), {}, {});
    sleepCharacter(c);
    restartWindow(c, std::span<const Transform>(c.kept.data(), static_cast<size_t>(c.instance.bodyCount)));
    ++stats.thawedNow;
  }

  int freeSpace() {
    for (size_t s = 0; s < spaces.size(); ++s) {
      if (spaces[s]->members == 0 && !spaces[s]->claimed) return static_cast<int>(s);
    }
    return newSpace();
  }

  int find(int x) {
    while (parent[static_cast<size_t>(x)] != x) {
      parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
      x = parent[static_cast<size_t>(x)];
    }
    return x;
  }
  void unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a == b) return;
    if (a < b) {
      parent[static_cast<size_t>(b)] = a;
    } else {
      parent[static_cast<size_t>(a)] = b;
    }
  }

  /// Clusters from bounds (sweep and prune on x), then spaces: each cluster takes the space most
  /// of its simulated members are in (ties: the lowest index) unless an earlier cluster took it;
  /// members elsewhere migrate; frozen members of a cluster with an awake member thaw into it.
  void cluster() {
    const int n = static_cast<int>(characters.size());
    parent.resize(static_cast<size_t>(n));
    order.resize(static_cast<size_t>(n));
    clusterOf.resize(static_cast<size_t>(n));
    std::iota(parent.begin(), parent.end(), 0);
    std::iota(order.begin(), order.end(), 0);
    const double half = 0.5 * settings.clusterMargin;
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      const double xa = characters[static_cast<size_t>(a)].lo.x, xb = characters[static_cast<size_t>(b)].lo.x;
      return xa < xb || (xa == xb && a < b);
    });
    for (int i = 0; i < n; ++i) {
      const Character& a = characters[static_cast<size_t>(order[static_cast<size_t>(i)])];
      for (int j = i + 1; j < n; ++j) {
        const Character& b = characters[static_cast<size_t>(order[static_cast<size_t>(j)])];
        if (b.lo.x - half > a.hi.x + half) break;
        if (b.lo.y - half <= a.hi.y + half && a.lo.y - half <= b.hi.y + half &&
            b.lo.z - half <= a.hi.z + half && a.lo.z - half <= b.hi.z + half) {
          unite(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
        }
      }
    }
    // Cluster ids in order of their lowest member; members listed in index order (CSR).
    clusterCount = 0;
    for (int c = 0; c < n; ++c) {
      const int r = find(c);
      clusterOf[static_cast<size_t>(c)] = r == c ? clusterCount++ : clusterOf[static_cast<size_t>(r)];
    }
    clusterStart.assign(static_cast<size_t>(clusterCount) + 1, 0);
    for (int c = 0; c < n; ++c) ++clusterStart[static_cast<size_t>(clusterOf[static_cast<size_t>(c)]) + 1];
    for (int k = 0; k < clusterCount; ++k)
      clusterStart[static_cast<size_t>(k) + 1] += clusterStart[static_cast<size_t>(k)];
    clusterMembers.resize(static_cast<size_t>(n));
    {
      order.assign(clusterStart.begin(), clusterStart.end() - 1);  // fill cursors
      for (int c = 0; c < n; ++c) {
        clusterMembers[static_cast<size_t>(order[static_cast<size_t>(clusterOf[static_cast<size_t>(c)])]++)] =
            c;
      }
    }
    clusterTarget.assign(static_cast<size_t>(clusterCount), -1);
    clusterActive.assign(static_cast<size_t>(clusterCount), 0);
    for (auto& s : spaces) s->claimed = false;
    votes.assign(spaces.size(), 0);
    // Pass 1: targets by votes.
    std::vector<int>& pending = stepList;  // clusters needing a fresh space (scratch)
    pending.clear();
    for (int k = 0; k < clusterCount; ++k) {
      bool anySimulated = false;
      for (int m = clusterStart[static_cast<size_t>(k)]; m < clusterStart[static_cast<size_t>(k) + 1]; ++m) {
        const Character& c = characters[static_cast<size_t>(clusterMembers[static_cast<size_t>(m)])];
        if (c.state == CrowdCharacterState::Active) clusterActive[static_cast<size_t>(k)] = 1;
        if (c.space >= 0) {
          ++votes[static_cast<size_t>(c.space)];
          anySimulated = true;
        }
      }
      if (!anySimulated) continue;  // all frozen: no space
      int best = -1;
      for (int m = clusterStart[static_cast<size_t>(k)]; m < clusterStart[static_cast<size_t>(k) + 1]; ++m) {
        const int s = characters[static_cast<size_t>(clusterMembers[static_cast<size_t>(m)])].space;
        if (s < 0 || spaces[static_cast<size_t>(s)]->claimed) continue;
        if (best < 0 || votes[static_cast<size_t>(s)] > votes[static_cast<size_t>(best)] ||
            (votes[static_cast<size_t>(s)] == votes[static_cast<size_t>(best)] && s < best)) {
          best = s;
        }
      }
      for (int m = clusterStart[static_cast<size_t>(k)]; m < clusterStart[static_cast<size_t>(k) + 1]; ++m) {
        const int s = characters[static_cast<size_t>(clusterMembers[static_cast<size_t>(m)])].space;
        if (s >= 0) votes[static_cast<size_t>(s)] = 0;
      }
      if (best >= 0) {
        spaces[static_cast<size_t>(best)]->claimed = true;
        clusterTarget[static_cast<size_t>(k)] = best;
      } else {
        pending.push_back(k);
      }
    }
    // Pass 2: capture and release every migrant, so emptied spaces and pools serve pass 3.
    moving.clear();
    for (int k = 0; k < clusterCount; ++k) {
      for (int m = clusterStart[static_cast<size_t>(k)]; m < clusterStart[static_cast<size_t>(k) + 1]; ++m) {
        const int ci = clusterMembers[static_cast<size_t>(m)];
        Character& c = characters[static_cast<size_t>(ci)];
        if (c.space < 0 || c.space == clusterTarget[static_cast<size_t>(k)]) continue;
        Moving mv;
        mv.character = ci;
        mv.wasSleeping = c.state == CrowdCharacterState::Sleeping;
        const PhysicsWorld& w = *spaces[static_cast<size_t>(c.space)]->world;
        for (int b = 0; b < c.instance.bodyCount; ++b) {
          const BodyId id = c.instance.bodies[static_cast<size_t>(b)];
          mv.pose[static_cast<size_t>(b)] = w.transform(id);
          mv.linear[static_cast<size_t>(b)] = w.linearVelocity(id);
          mv.angular[static_cast<size_t>(b)] = w.angularVelocity(id);
        }
        release(c.space, c.instance, c.reduced);
        c.space = -1;
        moving.push_back(mv);
      }
    }
    // Pass 3: fresh spaces for clusters that found none (split off), lowest free index first.
    for (int k : pending) {
      const int s = freeSpace();
      spaces[static_cast<size_t>(s)]->claimed = true;
      clusterTarget[static_cast<size_t>(k)] = s;
      ++stats.splits;
    }
    // Pass 4: migrants into their cluster's space, in character order.
    for (Moving& mv : moving) {
      Character& c = characters[static_cast<size_t>(mv.character)];
      c.space = clusterTarget[static_cast<size_t>(clusterOf[static_cast<size_t>(mv.character)])];
      c.instance = acquire(c.space, c.reduced);
      const size_t nb = static_cast<size_t>(c.instance.bodyCount);
      place(c, std::span<const Transform>(mv.pose.data(), nb), std::span<const Vec3>(mv.linear.data(), nb),
            std::span<const Vec3>(mv.angular.data(), nb));
      if (mv.wasSleeping) sleepCharacter(c);
      ++stats.migrations;
    }
    // Thaw frozen members of clusters with an awake member.
    for (int k = 0; k < clusterCount; ++k) {
      if (!clusterActive[static_cast<size_t>(k)]) continue;
      for (int m = clusterStart[static_cast<size_t>(k)]; m < clusterStart[static_cast<size_t>(k) + 1]; ++m) {
        Character& c = characters[static_cast<size_t>(clusterMembers[static_cast<size_t>(m)])];
        if (c.state == CrowdCharacterState::Frozen) thawInto(c, clusterTarget[static_cast<size_t>(k)]);
      }
    }
  }

  /// Spaces to step and their members (CSR, character order). Spaces whose characters are all
  /// frozen hold no member; spaces whose members are all asleep are not stepped either (nothing
  /// in them can move or wake: Bullet wakes a sleeping body only through an awake one in the same
  /// world, and the API calls that wake one make its character active), their members only count
  /// their sleeping time (`dt`).
  void buildStepLists(double dt) {
    const int n = static_cast<int>(characters.size());
    spaceMemberStart.assign(spaces.size() + 1, 0);
    for (int c = 0; c < n; ++c) {
      const int s = characters[static_cast<size_t>(c)].space;
      if (s >= 0) ++spaceMemberStart[static_cast<size_t>(s) + 1];
    }
    for (size_t s = 0; s < spaces.size(); ++s) spaceMemberStart[s + 1] += spaceMemberStart[s];
    spaceMembers.resize(static_cast<size_t>(spaceMemberStart.back()));
    order.assign(spaceMemberStart.begin(), spaceMemberStart.end() - 1);
    for (int c = 0; c < n; ++c) {
      const int s = characters[static_cast<size_t>(c)].space;
      if (s >= 0) spaceMembers[static_cast<size_t>(order[static_cast<size_t>(s)]++)] = c;
    }
    stepList.clear();
    for (size_t s = 0; s < spaces.size(); ++s) {
      bool awake = false;
      for (int m = spaceMemberStart[s]; m < spaceMemberStart[s + 1] && !awake; ++m) {
        awake = characters[static_cast<size_t>(spaceMembers[static_cast<size_t>(m)])].state ==
                CrowdCharacterState::Active;
      }
      if (awake) {
        stepList.push_back(static_cast<int>(s));
        continue;
      }
      for (int m = spaceMemberStart[s]; m < spaceMemberStart[s + 1]; ++m)
        characters[static_cast<size_t>(spaceMembers[static_cast<size_t>(m)])].asleepTime += dt;
    }
    // Biggest spaces first: better balance across threads (the result does not depend on it).
    std::stable_sort(stepList.begin(), stepList.end(), [&](int a, int b) {
      return spaceMemberStart[static_cast<size_t>(a) + 1] - spaceMemberStart[static_cast<size_t>(a)] >
             spaceMemberStart[static_cast<size_t>(b) + 1] - spaceMemberStart[static_cast<size_t>(b)];
    });
  }

  static void stepSpaceTask(void* context, int index) {
    Impl& self = *static_cast<Impl*>(context);
    const int s = self.stepList[static_cast<size_t>(index)];
    self.spaces[static_cast<size_t>(s)]->world->step(self.stepDt, self.settings.substeps);
    for (int m = self.spaceMemberStart[static_cast<size_t>(s)];
         m < self.spaceMemberStart[static_cast<size_t>(s) + 1]; ++m) {
      self.afterStep(self.characters[static_cast<size_t>(self.spaceMembers[static_cast<size_t>(m)])],
                     self.stepDt);
    }
  }

  /// Handoff-side sleeping and freezing per cluster (the clusters found before the step).
  void sleepAndFreeze() {
    for (int k = 0; k < clusterCount; ++k) {
      const int begin = clusterStart[static_cast<size_t>(k)], end = clusterStart[static_cast<size_t>(k) + 1];
      bool allSettled = true, anyActive = false;
      for (int m = begin; m < end; ++m) {
        const Character& c = characters[static_cast<size_t>(clusterMembers[static_cast<size_t>(m)])];
        allSettled = allSettled && settled(c);
        anyActive = anyActive || c.state == CrowdCharacterState::Active;
      }
      if (settings.handoffSleeping && allSettled && anyActive) {
        for (int m = begin; m < end; ++m) {
          Character& c = characters[static_cast<size_t>(clusterMembers[static_cast<size_t>(m)])];
          if (c.state == CrowdCharacterState::Active) sleepCharacter(c);
        }
        anyActive = false;
      }
      if (!settings.freezing || anyActive) continue;
      for (int m = begin; m < end; ++m) {
        Character& c = characters[static_cast<size_t>(clusterMembers[static_cast<size_t>(m)])];
        if (c.state == CrowdCharacterState::Sleeping && c.asleepTime >= settings.freezeDelay)
          freezeCharacter(c);
      }
    }
  }

  void collectStats() {
    CrowdStats& s = stats;
    s.spaces = 0;
    for (const auto& sp : spaces) s.spaces += sp->members > 0 ? 1 : 0;
    s.characters = static_cast<int>(characters.size());
    s.bodies = s.simulatedBodies = s.activeBodies = s.sleepingBodies = s.frozenBodies = 0;
    s.maxLinearSpeed = s.maxAngularSpeed = 0.0;
    for (const Character& c : characters) {
      const int nb =
          c.reduced ? static_cast<int>(reduced.asset.bodies.size()) : static_cast<int>(asset->bodies.size());
      s.bodies += nb;
      if (c.state == CrowdCharacterState::Frozen) {
        s.frozenBodies += nb;
        continue;
      }
      s.simulatedBodies += nb;
      const PhysicsWorld& w = *spaces[static_cast<size_t>(c.space)]->world;
      for (int b = 0; b < c.instance.bodyCount; ++b) {
        const BodyId id = c.instance.bodies[static_cast<size_t>(b)];
        if (w.isSleeping(id)) {
          ++s.sleepingBodies;
        } else {
          ++s.activeBodies;
          s.maxLinearSpeed = std::max(s.maxLinearSpeed, glm::length(w.linearVelocity(id)));
          s.maxAngularSpeed = std::max(s.maxAngularSpeed, glm::length(w.angularVelocity(id)));
        }
      }
    }
    s.contactPoints = 0;  // sleeping spaces: their contacts as of their last step
    for (const auto& sp : spaces) {
      if (sp->members > 0) s.contactPoints += sp->world->lastStepStats().contactPoints;
    }
    s.bodySteps = 0;  // bodies of the spaces stepped
    for (int sp : stepList) {
      for (int m = spaceMemberStart[static_cast<size_t>(sp)];
           m < spaceMemberStart[static_cast<size_t>(sp) + 1]; ++m)
        s.bodySteps +=
            characters[static_cast<size_t>(spaceMembers[static_cast<size_t>(m)])].instance.bodyCount;
    }
    s.bodySteps *= settings.substeps;
  }
};

Crowd::Crowd(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Crowd::~Crowd() = default;

Result<std::unique_ptr<Crowd>> Crowd::create(std::shared_ptr<const RagdollAsset> asset,
                                             const Skeleton& skeleton, StaticScene scene,
                                             CrowdSettings settings) {
  if (!asset) return Error{"crowd: no asset"};
  if (asset->bodies.empty() || static_cast<int>(asset->bodies.size()) > kSlotCount) {
    return Error{"crowd: the asset has " + std::to_string(asset->bodies.size()) + " bodies (1 to " +
                 std::to_string(kSlotCount) + " supported)"};
  }
  Result<ReducedRagdoll> reduced = buildReducedRagdoll(*asset, skeleton);
  if (!reduced) return Error{reduced.error()};
  auto impl = std::make_unique<Impl>();
  impl->asset = std::move(asset);
  impl->reduced = std::move(reduced).value();
  impl->scene = std::move(scene);
  settings.substeps = std::max(1, settings.substeps);
  impl->settings = std::move(settings);
  const CrowdSettings& cs = impl->settings;
  impl->restRule = RestRule{cs.sleepWindow,   cs.sleepDistance, cs.sleepAngle,
                            cs.creepDistance, cs.creepAngle,    cs.creepTime};
  impl->fullDrive = driveJointsFromAsset(*impl->asset);
  impl->reducedDrive = driveJointsFromAsset(impl->reduced.asset);
  for (const BodyDef& b : impl->asset->bodies) impl->fullRadius.push_back(shapeBoundingRadius(b.shape));
  for (const BodyDef& b : impl->reduced.asset.bodies)
    impl->reducedRadius.push_back(shapeBoundingRadius(b.shape));
  {
    // Both ragdolls once in a scratch space, so that pooled creation (in reserve, add and the
    // step's thaws) cannot fail later: an asset the engine refuses is refused here, by name.
    Space scratch;
    scratch.world = cs.createWorld ? cs.createWorld(cs.world) : createBulletWorld(cs.world);
    if (!scratch.world) return Error{"crowd: createWorld returned no world"};
    for (const bool isReduced : {false, true}) {
      Result<Instance> inst = impl->createInstance(scratch, isReduced);
      if (!inst) return Error{std::string(isReduced ? "crowd (reduced ragdoll): " : "") + inst.error()};
    }
  }
  return std::unique_ptr<Crowd>(new Crowd(std::move(impl)));
}

void Crowd::reserve(int spaces, int fullRagdolls, int reducedRagdolls) {
  Impl& m = *impl_;
  while (static_cast<int>(m.spaces.size()) < spaces) m.newSpace();
  for (auto& s : m.spaces) {
    s->freeFull.reserve(static_cast<size_t>(fullRagdolls + reducedRagdolls + 16));
    s->freeReduced.reserve(static_cast<size_t>(fullRagdolls + reducedRagdolls + 16));
    while (static_cast<int>(s->freeFull.size()) < fullRagdolls)
      s->freeFull.push_back(Impl::created(m.createInstance(*s, false)));
    while (static_cast<int>(s->freeReduced.size()) < reducedRagdolls) {
      s->freeReduced.push_back(Impl::created(m.createInstance(*s, true)));
    }
  }
  const size_t capacity = m.spaces.size() * static_cast<size_t>(fullRagdolls + reducedRagdolls);
  m.characters.reserve(capacity);
  m.moving.reserve(capacity);
  for (auto* v : {&m.parent, &m.order, &m.clusterOf, &m.clusterStart, &m.clusterMembers, &m.clusterTarget,
                  &m.spaceMembers, &m.stepList, &m.votes}) {
    v->reserve(capacity + 1);
  }
  m.spaceMemberStart.reserve(m.spaces.size() + 1);
  m.clusterActive.reserve(capacity + 1);
}

Result<int> Crowd::add(std::span<const Transform> worldFromBodies, std::span<const Vec3> linearVelocities,
                       std::span<const Vec3> angularVelocities, bool reduced) {
  Impl& m = *impl_;
  const size_t n = m.asset->bodies.size();
  if (worldFromBodies.size() != n || linearVelocities.size() != n || angularVelocities.size() != n) {
    return Error{"crowd add: expected " + std::to_string(n) + " body poses and velocities"};
  }
  for (size_t b = 0; b < n; ++b) {
    if (!isFinite(worldFromBodies[b]) || !isFinite(linearVelocities[b]) || !isFinite(angularVelocities[b])) {
      return Error{"crowd add: body " + m.asset->bodies[b].name + " has a non-finite pose or velocity"};
    }
  }
  Character c;
  c.reduced = reduced;
  std::array<Transform, kSlotCount> pose{};
  std::array<Vec3, kSlotCount> linear{}, angular{};
  if (reduced) {
    reducedCarrierOffsets(m.reduced, worldFromBodies, std::span<Transform>(c.carrierFromBody.data(), n));
    for (size_t k = 0; k < m.reduced.fullFromReduced.size(); ++k) {
      const size_t f = static_cast<size_t>(m.reduced.fullFromReduced[k]);
      pose[k] = worldFromBodies[f];
      linear[k] = linearVelocities[f];
      angular[k] = angularVelocities[f];
    }
  } else {
    std::copy(worldFromBodies.begin(), worldFromBodies.end(), pose.begin());
    std::copy(linearVelocities.begin(), linearVelocities.end(), linear.begin());
    std::copy(angularVelocities.begin(), angularVelocities.end(), angular.begin());
  }
  const RagdollAsset& a = m.simAsset(c);
  for (size_t j = 0; j < a.joints.size(); ++j) {
    const JointDef& def = a.joints[j];
    c.hold[j] = jointRelativeRotation(pose[static_cast<size_t>(def.parentBody)].rotation,
                                      pose[static_cast<size_t>(def.childBody)].rotation,
                                      def.bodyAFromJoint.rotation, def.bodyBFromJoint.rotation);
  }
  // A space already holding a character whose bounds meet the new one's, else a free one.
  c.instance.bodyCount = static_cast<int>(a.bodies.size());
  m.updateBounds(c, pose);
  int target = -1;
  const double half = 0.5 * m.settings.clusterMargin;
  for (const Character& o : m.characters) {
    if (o.space < 0) continue;
    if (glm::all(glm::lessThanEqual(c.lo - half, o.hi + half)) &&
        glm::all(glm::lessThanEqual(o.lo - half, c.hi + half))) {
      target = o.space;
      break;
    }
  }
  if (target < 0) {
    for (auto& s : m.spaces) s->claimed = false;
    target = m.freeSpace();
  }
  c.space = target;
  c.instance = m.acquire(target, reduced);
  const size_t nb = static_cast<size_t>(c.instance.bodyCount);
  c.windowStart = pose;
  m.characters.push_back(c);
  Character& placed = m.characters.back();
  m.place(placed, std::span<const Transform>(pose.data(), nb), std::span<const Vec3>(linear.data(), nb),
          std::span<const Vec3>(angular.data(), nb));
  return static_cast<int>(m.characters.size()) - 1;
}

void Crowd::step(double dt, ThreadPool& pool) {
  Impl& m = *impl_;
  m.stats.merges = m.stats.splits = m.stats.migrations = m.stats.frozenNow = m.stats.thawedNow = 0;
  int occupiedBefore = 0;
  for (const auto& s : m.spaces) occupiedBefore += s->members > 0 ? 1 : 0;
  m.cluster();
  int occupiedAfter = 0;
  for (const auto& s : m.spaces) occupiedAfter += s->members > 0 ? 1 : 0;
  m.stats.merges = std::max(0, occupiedBefore + m.stats.splits - occupiedAfter);
  m.buildStepLists(dt);
  m.stepDt = dt;
  pool.parallelFor(static_cast<int>(m.stepList.size()), &Impl::stepSpaceTask, &m);
  m.sleepAndFreeze();
  m.collectStats();
}

int Crowd::characterCount() const { return static_cast<int>(impl_->characters.size()); }
CrowdCharacterState Crowd::state(int character) const {
  return impl_->characters[static_cast<size_t>(character)].state;
}
bool Crowd::reduced(int character) const { return impl_->characters[static_cast<size_t>(character)].reduced; }
int Crowd::simulatedBodyCount(int character) const {
  return impl_->characters[static_cast<size_t>(character)].instance.bodyCount;
}
int Crowd::spaceOf(int character) const { return impl_->characters[static_cast<size_t>(character)].space; }

void Crowd::readBodyPoses(int character, std::span<Transform> worldFromBodies) const {
  const Impl& m = *impl_;
  const Character& c = m.characters[static_cast<size_t>(character)];
  assert(worldFromBodies.size() == m.asset->bodies.size());
  if (!c.reduced) {
    m.readPose(c, worldFromBodies);
    return;
  }
  std::array<Transform, kSlotCount> pose;
  m.readPose(c, pose);
  mapReducedToFull(m.reduced, std::span<const Transform>(pose.data(), m.reduced.fullFromReduced.size()),
                   std::span<const Transform>(c.carrierFromBody.data(), worldFromBodies.size()),
                   worldFromBodies);
}

bool Crowd::freeze(int character) {
  Impl& m = *impl_;
  Character& c = m.characters[static_cast<size_t>(character)];
  if (c.state != CrowdCharacterState::Sleeping) return false;
  m.freezeCharacter(c);
  return true;
}

void Crowd::thaw(int character) {
  Impl& m = *impl_;
  Character& c = m.characters[static_cast<size_t>(character)];
  if (c.state != CrowdCharacterState::Frozen) return;
  for (auto& s : m.spaces) s->claimed = false;
  m.thawInto(c, m.freeSpace());
}

void Crowd::applyImpulse(int character, int fullBody, const Vec3& impulse, const Vec3& worldPoint) {
  Impl& m = *impl_;
  Character& c = m.characters[static_cast<size_t>(character)];
  thaw(character);
  const int simBody = c.reduced ? m.reduced.carrierOfFull[static_cast<size_t>(fullBody)] : fullBody;
  PhysicsWorld& w = *m.spaces[static_cast<size_t>(c.space)]->world;
  for (int b = 0; b < c.instance.bodyCount; ++b) w.wake(c.instance.bodies[static_cast<size_t>(b)]);
  w.applyLinearImpulse(c.instance.bodies[static_cast<size_t>(simBody)], impulse, worldPoint);
  c.state = CrowdCharacterState::Active;
  std::array<Transform, kSlotCount> pose;
  m.readPose(c, pose);
  Impl::restartWindow(c, std::span<const Transform>(pose.data(), static_cast<size_t>(c.instance.bodyCount)));
}

const CrowdStats& Crowd::stats() const { return impl_->stats; }
const RagdollAsset& Crowd::asset() const { return *impl_->asset; }
const ReducedRagdoll& Crowd::reducedRagdoll() const { return impl_->reduced; }
const CrowdSettings& Crowd::settings() const { return impl_->settings; }

std::uint64_t Crowd::stateHash() const {
  const Impl& m = *impl_;
  std::uint64_t h = 14695981039346656037ull;
  for (const Character& c : m.characters) {
    const std::uint8_t st = static_cast<std::uint8_t>(c.state);
    hashBytes(h, &st, 1);
    if (c.state == CrowdCharacterState::Frozen) {
      for (int b = 0; b < c.instance.bodyCount; ++b) hashTransform(h, c.kept[static_cast<size_t>(b)]);
      continue;
    }
    const PhysicsWorld& w = *m.spaces[static_cast<size_t>(c.space)]->world;
    for (int b = 0; b < c.instance.bodyCount; ++b) {
      const BodyId id = c.instance.bodies[static_cast<size_t>(b)];
      hashTransform(h, w.transform(id));
      hashVec(h, w.linearVelocity(id));
      hashVec(h, w.angularVelocity(id));
    }
  }
  return h;
}

}  // namespace handoff
