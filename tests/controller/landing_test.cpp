// Landing and knock-back at the Character's interface (issue 19): bad LandingSettings are refused
// by Character::create naming the field; a knock-back is refused for a non-finite impulse with
// nothing changed, and otherwise changes every body's velocity by exactly impulse / total mass on
// top of the commit's inherited velocities. (The falls themselves are measured through the
// scenario runner: tests/runner/landing_runner_test.cpp.)
#include "handoff/controller.h"
#include "handoff/physics_bullet.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "support/bullet_precision.h"
#include "support/robust_scene.h"

namespace handoff {
namespace landing_test {

using test::DrivenCharacter;
using test::kRobustDt;
using test::loadCharacter;

struct LandingScene {
  std::unique_ptr<PhysicsWorld> world = createBulletWorld();
  std::optional<DrivenCharacter> d;
  std::string error;
  explicit LandingScene(const CharacterSettings& settings = {}) {
    world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
    const test::Character& c = loadCharacter("deepmimic/humanoid3d_run.bvh");
    if (!c.asset) return;
    d = DrivenCharacter::create(*world, c, Transform::identity(), &error, settings);
    for (int i = 0; d && i < 10; ++i) EXPECT_TRUE(d->frame(*world, 2));
  }
};

TEST(Landing, BadSettingsAreRefusedNamingTheField) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const struct {
    void (*set)(LandingSettings&);
    const char* field;
  } cases[] = {
      {[](LandingSettings& s) { s.minAirTime = -0.1; }, "landing.minAirTime"},
      {[](LandingSettings& s) { s.contactDistance = std::numeric_limits<double>::infinity(); },
       "landing.contactDistance"},
      {[](LandingSettings& s) { s.decisionTime = -1.0; }, "landing.decisionTime"},
      {[](LandingSettings& s) { s.maxFootOffset = 0.0; }, "landing.maxFootOffset"},
      {[](LandingSettings& s) { s.minPelvisHeight = 1.5; }, "landing.minPelvisHeight"},
      {[](LandingSettings& s) { s.maxTilt = 4.0; }, "landing.maxTilt"},
      {[](LandingSettings& s) { s.maxAngularSpeed = -2.0; }, "landing.maxAngularSpeed"},
  };
  for (const auto& c : cases) {
    CharacterSettings settings;
    c.set(settings.landing);
    EXPECT_FALSE(validateLandingSettings(settings.landing)) << c.field;
    LandingScene scene(settings);
    EXPECT_FALSE(scene.d.has_value()) << c.field;
    EXPECT_NE(scene.error.find(c.field), std::string::npos) << scene.error;
    std::printf("refused: %s\n", scene.error.c_str());
  }
  CharacterSettings nanTilt;
  nanTilt.landing.maxTilt = nan;
  EXPECT_FALSE(validateLandingSettings(nanTilt.landing));
  EXPECT_TRUE(validateLandingSettings(LandingSettings{}));
}

TEST(Knockback, RefusedForANonFiniteImpulseAndOtherwiseTheSameVelocityChangeForEveryBody) {
  LandingScene refused;
  ASSERT_TRUE(refused.d) << refused.error;
  Character& r = *refused.d->character;
  const Status bad = r.knockBack(Vec3{std::numeric_limits<double>::quiet_NaN(), 0.0, 0.0});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("not finite"), std::string::npos) << bad.error();
  EXPECT_EQ(r.state(), CharacterState::Animated);
  EXPECT_TRUE(r.handoffs().empty());

  // Two identical scenes: one cut to ragdoll, one knocked back. Deterministic, so the commits are
  // bit-identical and the difference of the velocities is the throw.
  LandingScene plain, thrown;
  ASSERT_TRUE(plain.d && thrown.d);
  ASSERT_TRUE(plain.d->character->goRagdoll().committed);
  const Vec3 impulse{-350.0, 190.0, 40.0};
  ASSERT_TRUE(thrown.d->character->knockBack(impulse));
  const Character& a = *plain.d->character;
  const Character& b = *thrown.d->character;
  EXPECT_EQ(b.state(), CharacterState::Ragdoll);
  ASSERT_EQ(b.handoffs().size(), 1u);
  EXPECT_TRUE(b.handoffs()[0].committed);
  double mass = 0.0;
  for (int i = 0; i < b.ragdoll().bodyCount(); ++i) mass += thrown.world->mass(b.ragdoll().body(i));
  const Vec3 expected = impulse / mass;
  double worst = 0.0, worstSpin = 0.0, speedScale = glm::length(expected), spinScale = 0.0;
  for (int i = 0; i < b.ragdoll().bodyCount(); ++i) {
    speedScale = std::max(speedScale, glm::length(thrown.world->linearVelocity(b.ragdoll().body(i))));
    speedScale = std::max(speedScale, glm::length(plain.world->linearVelocity(a.ragdoll().body(i))));
    spinScale = std::max(spinScale, glm::length(thrown.world->angularVelocity(b.ragdoll().body(i))));
    spinScale = std::max(spinScale, glm::length(plain.world->angularVelocity(a.ragdoll().body(i))));
    const Vec3 dv =
        thrown.world->linearVelocity(b.ragdoll().body(i)) - plain.world->linearVelocity(a.ragdoll().body(i));
    const Vec3 dw = thrown.world->angularVelocity(b.ragdoll().body(i)) -
                    plain.world->angularVelocity(a.ragdoll().body(i));
    worst = std::max(worst, glm::length(dv - expected));
    worstSpin = std::max(worstSpin, glm::length(dw));
  }
  std::printf(
      "[ figure ] knock-back of %.1f N s over %.2f kg: every body +%.4f m/s, worst deviation %.3g m/s, "
      "spin added %.3g rad/s\n",
      glm::length(impulse), mass, glm::length(expected), worst, worstSpin);
  // Single-precision Bullet: each world's velocities are float, the impulse added to them rounded:
  // a few roundings (4) of the largest body speed (spin) of either world.
  EXPECT_LT(worst, test::bulletTolerance(1e-9, speedScale, 4));
  EXPECT_LT(worstSpin, test::bulletTolerance(1e-9, spinScale, 4));
  const bool event = std::any_of(b.events().begin(), b.events().end(), [](const CharacterEvent& e) {
    return e.kind == CharacterEventKind::Knockback;
  });
  EXPECT_TRUE(event);
}

}  // namespace landing_test
}  // namespace handoff
