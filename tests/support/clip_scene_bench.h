// Benchmark support: N copies of one character animated side by side in one Bullet world.
#pragma once

#include "handoff/asset.h"
#include "handoff/handoff.h"
#include "handoff/import.h"
#include "handoff/physics_bullet.h"

#include <memory>
#include <string>
#include <vector>

namespace handoff::bench {

struct Crowd {
  static constexpr double kDt = 1.0 / 60.0;
  ImportedAsset imported;
  std::shared_ptr<const RagdollAsset> asset;
  std::unique_ptr<PhysicsWorld> world;
  std::vector<std::unique_ptr<Ragdoll>> ragdolls;
  std::vector<Transform> roots;
  std::vector<Transform> locals, models;
  double time = 0.0;

  bool load(const std::string& relative) {
    Result<ImportedAsset> r = importFile(std::string(HANDOFF_DATA_DIR) + "/" + relative);
    if (!r) return false;
    imported = std::move(r).value();
    Result<RagdollAsset> a = buildRagdoll(imported.skeleton, BuildOptions{});
    if (!a) return false;
    asset = std::make_shared<RagdollAsset>(std::move(a).value());
    locals.resize(static_cast<size_t>(imported.skeleton.jointCount()));
    models.resize(locals.size());
    return true;
  }

  void reset(int count) {
    ragdolls.clear();
    world = createBulletWorld();
    world->addGroundPlane(Vec3{0, 1, 0}, -0.05);
    roots.clear();
    time = 0.0;
    imported.clips[0].sample(time, WrapMode::Loop, locals);
    localToModel(imported.skeleton, locals, models);
    for (int i = 0; i < count; ++i) {
      roots.push_back(Transform::fromTranslation(Vec3{3.0 * (i % 16), 0.0, 3.0 * (i / 16)}));
      auto r = Ragdoll::create(*world, asset, imported.skeleton, roots.back(), models);
      if (r) ragdolls.push_back(std::move(r).value());
    }
  }

  void track(int steps) {
    for (int s = 0; s < steps; ++s) {
      time += kDt;
      imported.clips[0].sample(time, WrapMode::Loop, locals);
      localToModel(imported.skeleton, locals, models);
      for (size_t i = 0; i < ragdolls.size(); ++i) {
        (void)ragdolls[i]->setAnimatedPose(time, roots[i], models, false, kDt);
      }
      world->step(kDt, 1);
    }
  }
};

}  // namespace handoff::bench
