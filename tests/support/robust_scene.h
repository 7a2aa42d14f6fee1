// Scripted character runs for the robustness tests (issue 9): a Character driven by a real clip
// in a Bullet world, and an exact hash of body states for determinism checks.
#pragma once

#include "handoff/controller.h"
#include "handoff/import.h"
#include "handoff/physics_bullet.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/clip_scene.h"
#include "support/getup_clips.h"

namespace handoff::test {

constexpr double kRobustDt = 1.0 / 60.0;

/// A Character that plays `clip` (looping) on a fixed root, one preStep per frame.
struct DrivenCharacter {
  const test::Character* data = nullptr;
  std::unique_ptr<handoff::Character> character;
  Transform root;
  Transform inputRoot, previousInputRoot;  // the roots of the last two preSteps
  double animTime = 0.0;
  std::vector<Transform> locals;

  static std::optional<DrivenCharacter> create(PhysicsWorld& world, const test::Character& c,
                                               const Transform& root, std::string* error = nullptr,
                                               const CharacterSettings& settings = {}) {
    DrivenCharacter d;
    d.data = &c;
    d.root = root;
    d.inputRoot = d.previousInputRoot = root;
    d.locals.resize(static_cast<size_t>(c.skeleton().jointCount()));
    c.clip().sample(0.0, WrapMode::Loop, d.locals);
    Result<std::unique_ptr<handoff::Character>> created =
        handoff::Character::create(world, c.asset, c.skeleton(), settings, root, d.locals);
    if (!created) {
      if (error) *error = created.error();
      return std::nullopt;
    }
    d.character = std::move(created).value();
    return d;
  }
  /// The next frame of the clip, as the game would feed it.
  Status preStep(double dt = kRobustDt) {
    animTime += dt;
    data->clip().sample(animTime, WrapMode::Loop, locals);
    previousInputRoot = inputRoot;
    inputRoot = root;
    return character->preStep(AnimationInput{animTime, root, locals, false}, dt);
  }
  /// One whole frame of a world holding only this character: preStep, the step, postStep.
  Status frame(PhysicsWorld& world, int substeps, double dt = kRobustDt) {
    if (Status s = preStep(dt); !s) return s;
    world.step(dt, substeps);
    character->postStep(dt);
    return {};
  }
  /// Go ragdoll with a dense sample an eighth of a frame before the last input. Its root is where
  /// the moving root was then (between the last two inputs' roots), so the sample carries the
  /// root's own motion (a root moving at 40 m/s gives 40 m/s, not 0 over the last eighth).
  const HandoffRecord& goRagdoll() {
    std::vector<Transform> dense(locals.size());
    data->clip().sample(animTime - kRobustDt / 8, WrapMode::Loop, dense);
    Transform denseRoot = inputRoot;
    if (previousInputRoot.translation != inputRoot.translation ||
        previousInputRoot.rotation != inputRoot.rotation) {  // a still root stays bit for bit
      denseRoot.translation = glm::mix(previousInputRoot.translation, inputRoot.translation, 7.0 / 8.0);
      denseRoot.rotation = glm::slerp(previousInputRoot.rotation, inputRoot.rotation, 7.0 / 8.0);
    }
    const AnimationInput denseInput{animTime - kRobustDt / 8, denseRoot, dense, false};
    return character->goRagdoll(&denseInput);
  }
};

/// FNV-1a over the exact bits of every body's pose and velocities.
inline std::uint64_t hashBodies(const PhysicsWorld& world, const Ragdoll& ragdoll,
                                std::uint64_t hash = 1469598103934665603ull) {
  const auto mix = [&](double v) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof bits);
    for (int i = 0; i < 8; ++i) {
      hash ^= (bits >> (8 * i)) & 0xffu;
      hash *= 1099511628211ull;
    }
  };
  const auto body = [&](BodyId id) {
    const Transform t = world.transform(id);
    const Vec3 v = world.linearVelocity(id), w = world.angularVelocity(id);
    for (double x : {t.rotation.w, t.rotation.x, t.rotation.y, t.rotation.z, t.translation.x, t.translation.y,
                     t.translation.z, v.x, v.y, v.z, w.x, w.y, w.z}) {
      mix(x);
    }
  };
  for (int b = 0; b < ragdoll.bodyCount(); ++b) body(ragdoll.body(b));
  body(ragdoll.capsule());
  return hash;
}

/// A DeepMimic get-up clip for the DeepMimic humanoid (same skeleton: no retargeting), prepared
/// as the library's loaders do (support/getup_clips.h).
inline std::optional<GetUpClip> deepMimicGetUp(const test::Character& c, const char* file) {
  Result<std::vector<GetUpClip>> pair = deepMimicGetUps(HANDOFF_DATA_DIR, c.skeleton(), c.asset->map);
  if (!pair) return std::nullopt;
  return std::string(file) == kDeepMimicFaceUp ? (*pair)[0] : (*pair)[1];
}

/// The scripted sequence of the determinism tests: run 0.5 s, handoff, a 60 N s shove on the
/// chest, a fall onto a step, settle and the get-up (clips set), 4 s in all. Returns one hash
/// of all body states per step.
inline std::vector<std::uint64_t> scriptedRunHashes(int steps = 240) {
  std::vector<std::uint64_t> hashes;
  const test::Character& c = loadCharacter("deepmimic/humanoid3d_run.bvh");
  if (!c.asset) return hashes;
  std::unique_ptr<PhysicsWorld> world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  world->addStaticBox(Transform::fromTranslation(Vec3{0.0, 0.1, 2.0}), Vec3{2.0, 0.1, 0.5});
  std::optional<DrivenCharacter> d = DrivenCharacter::create(*world, c, Transform::identity());
  if (!d) return hashes;
  d->character->setGetUpClips(deepMimicGetUp(c, "deepmimic/humanoid3d_getup_faceup.bvh"),
                              deepMimicGetUp(c, "deepmimic/humanoid3d_getup_facedown.bvh"));
  for (int step = 0; step < steps; ++step) {
    if (!d->preStep()) return {};
    world->step(kRobustDt, 2);
    d->character->postStep(kRobustDt);
    if (step == 30 && !d->goRagdoll().committed) return {};
    if (step == 40) {
      const BodyId chest = d->character->ragdoll().body(2);
      if (!d->character->applyImpulse(2, Vec3{60.0, 0.0, 0.0}, world->transform(chest).translation))
        return {};
    }
    hashes.push_back(hashBodies(*world, d->character->ragdoll()));
  }
  return hashes;
}

}  // namespace handoff::test
