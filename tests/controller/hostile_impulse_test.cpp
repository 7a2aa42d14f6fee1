// Hostile impulses (CharacterSettings::maxSpeedChangePerStep): an automatic weapon or a jackhammer
// on one body of a ragdoll, applyImpulse twice a frame (once per substep) for two seconds, from
// 1 to 500 N s; and the ragdoll scaled from grams to tonnes (validateMassRange's accepted ends).
// Seeded ensembles (body, direction), the distributions printed.
#include "handoff/controller.h"
#include "handoff/import.h"
#include "handoff/physics_bullet.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace handoff {
namespace {

struct HammerRun {
  double maxStretch = 0.0;  ///< Ragdoll::maxJointSeparation over the run. [m]
  double lowest = 1e9;      ///< Lowest body centre. [m]
  double farthest = 0.0;    ///< Farthest body centre from the start, horizontal. [m]
  int faults = 0, clamps = 0;
};

HammerRun hammer(const ImportedAsset& run, std::shared_ptr<const RagdollAsset> asset, double impulse,
                 unsigned seed, double maxSpeedChange) {
  std::unique_ptr<PhysicsWorld> world = createBulletWorld();
  world->addGroundPlane(Vec3{0.0, 1.0, 0.0}, 0.0);
  std::vector<Transform> locals(static_cast<size_t>(run.skeleton.jointCount()));
  run.clips[0].sample(0.0, WrapMode::Loop, locals);
  CharacterSettings settings;
  settings.maxSpeedChangePerStep = maxSpeedChange;
  Result<std::unique_ptr<Character>> created =
      Character::create(*world, asset, run.skeleton, settings, Transform{}, locals);
  EXPECT_TRUE(created) << created.error();
  HammerRun r;
  if (!created) return r;
  Character& ch = **created;
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const int body = static_cast<int>(random() % static_cast<unsigned>(asset->bodies.size()));
  const double dt = 1.0 / 60.0;
  double t = 0.0;
  for (int frame = 0; frame < 150; ++frame) {
    t += dt;
    run.clips[0].sample(t, WrapMode::Loop, locals);
    EXPECT_TRUE(ch.preStep(AnimationInput{t, Transform{}, locals, false}, dt));
    if (frame == 5) (void)ch.goRagdoll();
    if (frame >= 6 && frame < 126) {  // two seconds, one impulse per substep
      for (int k = 0; k < 2; ++k) {
        Vec3 d{unit(random), unit(random), unit(random)};
        d = glm::length(d) > 1e-3 ? glm::normalize(d) : Vec3{1.0, 0.0, 0.0};
        const Vec3 at = world->transform(ch.ragdoll().body(body)).translation;
        EXPECT_TRUE(ch.applyImpulse(body, impulse * d, at));
      }
    }
    world->step(dt, 2);
    ch.postStep(dt);
    r.maxStretch = std::max(r.maxStretch, ch.ragdoll().maxJointSeparation());
    for (int b = 0; b < ch.ragdoll().bodyCount(); ++b) {
      const Vec3 p = world->transform(ch.ragdoll().body(b)).translation;
      r.lowest = std::min(r.lowest, p.y);
      r.farthest = std::max(r.farthest, std::hypot(p.x, p.z));
    }
  }
  r.faults = ch.faultCount();
  r.clamps = ch.impulseClampCount();
  return r;
}

TEST(HostileImpulse, ImpulsesEverySubstepStretchNoJointBeyond5cm) {
  Result<ImportedAsset> run = importFile(std::string(HANDOFF_DATA_DIR) + "/deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(run) << run.error();
  Result<RagdollAsset> built = buildRagdoll(run->skeleton, BuildOptions{});
  ASSERT_TRUE(built) << built.error();
  const auto asset = std::make_shared<const RagdollAsset>(std::move(built).value());
  const double bound = CharacterSettings{}.maxSpeedChangePerStep;
  for (double impulse : {1.0, 10.0, 50.0, 150.0, 500.0}) {
    std::vector<double> stretch;
    double lowest = 1e9, farthest = 0.0;
    int faults = 0, clamps = 0;
    for (unsigned seed = 1; seed <= 6; ++seed) {
      const HammerRun r = hammer(*run, asset, impulse, seed, bound);
      stretch.push_back(r.maxStretch);
      lowest = std::min(lowest, r.lowest);
      farthest = std::max(farthest, r.farthest);
      faults += r.faults;
      clamps += r.clamps;
    }
    std::sort(stretch.begin(), stretch.end());
    std::printf(
        "[ figure ] %5.0f N s x 2 per frame, 2 s: max joint stretch per run min %.4f median %.4f max %.4f m; "
        "lowest body %.3f m, farthest %.2f m, %d faults, %d clamps\n",
        impulse, stretch.front(), stretch[stretch.size() / 2], stretch.back(), lowest, farthest, faults,
        clamps);
    EXPECT_LE(stretch.back(), 0.05) << impulse << " N s";
    EXPECT_EQ(faults, 0) << impulse << " N s";
    EXPECT_GT(lowest, -0.5) << impulse << " N s";
  }
}

}  // namespace
}  // namespace handoff

namespace handoff {
namespace {

// Total masses from grams to tonnes (the accepted ends of [kMinBodyMass, kMaxBodyMass]): the same
// ragdoll scaled, dropped and hammered with impulses scaled alike (the same speed changes).
TEST(HostileImpulse, GramsToTonnesSimulateWithinTheSameBounds) {
  Result<ImportedAsset> run = importFile(std::string(HANDOFF_DATA_DIR) + "/deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(run) << run.error();
  Result<RagdollAsset> built = buildRagdoll(run->skeleton, BuildOptions{});
  ASSERT_TRUE(built) << built.error();
  double lightest = 1e300, heaviest = 0.0, total = 0.0;
  for (const BodyDef& b : built->bodies) {
    lightest = std::min(lightest, b.mass);
    heaviest = std::max(heaviest, b.mass);
    total += b.mass;
  }
  for (double scale : {2.0 * kMinBodyMass / lightest, 1.0, 0.9 * kMaxBodyMass / heaviest}) {
    RagdollAsset scaled = *built;
    for (BodyDef& b : scaled.bodies) {
      b.mass *= scale;
      b.inertia *= scale;
    }
    const auto asset = std::make_shared<const RagdollAsset>(std::move(scaled));
    std::vector<double> stretch;
    int faults = 0;
    double lowest = 1e9;
    for (unsigned seed = 1; seed <= 4; ++seed) {
      const HammerRun r = hammer(*run, asset, 100.0 * scale, seed, CharacterSettings{}.maxSpeedChangePerStep);
      stretch.push_back(r.maxStretch);
      faults += r.faults;
      lowest = std::min(lowest, r.lowest);
    }
    std::sort(stretch.begin(), stretch.end());
    std::printf(
        "[ figure ] total %.4g kg, %.4g N s x 2 per frame: max joint stretch per run min %.4f median %.4f "
        "max %.4f m; lowest body %.3f m, %d faults\n",
        total * scale, 100.0 * scale, stretch.front(), stretch[stretch.size() / 2], stretch.back(), lowest,
        faults);
    EXPECT_LE(stretch.back(), 0.05) << total * scale << " kg";
    EXPECT_EQ(faults, 0) << total * scale << " kg";
    EXPECT_GT(lowest, -0.5) << total * scale << " kg";
  }
}

}  // namespace
}  // namespace handoff
