// Test support: a real character (imported skeleton and clip, built ragdoll) in a Bullet world,
// tracked kinematically along its clip up to a handoff time.
#pragma once

#include "handoff/asset.h"
#include "handoff/handoff.h"
#include "handoff/import.h"
#include "handoff/physics_bullet.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>

namespace handoff::test {

inline std::string dataPath(const std::string& relative) {
  return std::string(HANDOFF_DATA_DIR) + "/" + relative;
}

/// An imported file and the ragdoll built for it, cached per file for the whole test binary.
struct Character {
  ImportedAsset imported;
  std::shared_ptr<const RagdollAsset> asset;
  const Skeleton& skeleton() const { return imported.skeleton; }
  const Clip& clip(int i = 0) const { return imported.clips.at(static_cast<size_t>(i)); }
};

inline const Character& loadCharacter(const std::string& relative) {
  static std::map<std::string, std::unique_ptr<Character>> cache;
  auto it = cache.find(relative);
  if (it != cache.end()) return *it->second;
  auto c = std::make_unique<Character>();
  Result<ImportedAsset> imported = importFile(dataPath(relative));
  if (!imported) {
    ADD_FAILURE() << imported.error();
    return *cache.emplace(relative, std::move(c)).first->second;
  }
  c->imported = std::move(imported).value();
  BuildReport report;
  Result<RagdollAsset> asset = buildRagdoll(c->imported.skeleton, BuildOptions{}, &report);
  if (!asset) {
    ADD_FAILURE() << relative << ": " << asset.error();
  } else {
    c->asset = std::make_shared<RagdollAsset>(std::move(asset).value());
  }
  return *cache.emplace(relative, std::move(c)).first->second;
}

/// Lowest world point of every body's shape for a set of body poses. [m]
inline double lowestShapePoint(const RagdollAsset& asset, std::span<const Transform> worldFromBodies) {
  double lowest = 1e30;
  for (size_t b = 0; b < asset.bodies.size(); ++b) {
    const ShapeDesc& s = asset.bodies[b].shape;
    if (s.type != ShapeType::None) lowest = std::min(lowest, shapeLowestPoint(s, worldFromBodies[b]).y);
  }
  return lowest;
}

/// A character tracked kinematically along its clip in its own Bullet world.
struct ClipScene {
  static constexpr double kDt = 1.0 / 60.0;
  static constexpr int kSubsteps = 2;
  const Character* character = nullptr;
  std::unique_ptr<PhysicsWorld> world;
  std::unique_ptr<Ragdoll> ragdoll;
  std::vector<Transform> locals, models, bodies;
  Transform worldFromRoot;
  double time = 0.0;
  double groundHeight = 0.0;
  WorldSettings worldSettings;  ///< Used by start() to create the world.

  void pose(double t) {
    character->clip().sample(t, WrapMode::Clamp, locals);
    localToModel(character->skeleton(), locals, models);
  }

  /// Builds the world and tracks the clip for `leadFrames` steps ending at `handoffTime`. The
  /// floor is at 0, lowered just enough that no body starts inside it (a content issue of the
  /// clip, not of the handoff).
  ::testing::AssertionResult start(const Character& c, double handoffTime, int leadFrames = 10) {
    character = &c;
    const int n = c.skeleton().jointCount();
    locals.resize(static_cast<size_t>(n));
    models.resize(static_cast<size_t>(n));
    bodies.resize(c.asset->bodies.size());
    pose(handoffTime);
    bodyPosesFromModels(*c.asset, models, worldFromRoot, bodies);
    groundHeight = std::min(0.0, lowestShapePoint(*c.asset, bodies)) - 0.001;
    world = createBulletWorld(worldSettings);
    world->addGroundPlane(Vec3{0, 1, 0}, groundHeight);
    time = handoffTime - leadFrames * kDt;
    pose(time);
    Result<std::unique_ptr<Ragdoll>> r =
        Ragdoll::create(*world, c.asset, c.skeleton(), worldFromRoot, models);
    if (!r) return ::testing::AssertionFailure() << r.error();
    ragdoll = std::move(r).value();
    for (int k = 0; k <= leadFrames; ++k) {
      time = handoffTime - (leadFrames - k) * kDt;
      pose(time);
      Status s = ragdoll->setAnimatedPose(time, worldFromRoot, models, false, kDt);
      if (!s) return ::testing::AssertionFailure() << s.error();
      world->step(kDt, kSubsteps);
    }
    return ::testing::AssertionSuccess();
  }

  /// Adds a denser velocity sample `before` seconds ahead of the newest (the animation system
  /// sampling its clip just before the handoff; see Ragdoll::addDenseSample).
  ::testing::AssertionResult addDenseSample(double before) {
    std::vector<Transform> l(locals.size()), m(locals.size());
    character->clip().sample(time - before, WrapMode::Clamp, l);
    localToModel(character->skeleton(), l, m);
    Status s = ragdoll->addDenseSample(time - before, worldFromRoot, m);
    if (!s) return ::testing::AssertionFailure() << s.error();
    return ::testing::AssertionSuccess();
  }
};

}  // namespace handoff::test
