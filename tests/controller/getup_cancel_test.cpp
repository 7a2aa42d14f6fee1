// The cancel path of the get-up (SPEC.md section 4, issue 5): a hit during the display
// transition returns to physics in one step, every body rebuilt from the displayed skeleton,
// with velocities continuous with the displayed motion, and no collider popping in the first
// physics step (the handoff's no-pop bound: |v| dt + |g| dt^2 + 2 mm). Exactly one blocking
// representation at every step.
#include "controller/getup_scene.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace handoff {
namespace {

constexpr double kG = 9.81;

struct CancelFigures {
  double worstPoseError = 0.0;        // bodies vs the displayed skeleton at the cancel [m]
  double worstAngleError = 0.0;       // [rad]
  double worstLinearMismatch = 0.0;   // inherited vs displayed finite difference [m/s]
  double worstAngularMismatch = 0.0;  // [rad/s]
  double worstPopExcess = -1.0;       // first-step move beyond |v| dt + |g| dt^2 + 2 mm [m]
  double maxFirstStepMove = 0.0;      // [m]
  double maxDisplayedSpeed = 0.0;     // fastest displayed body at the cancel [m/s]
  // The same with the hit's share: (|v inherited| + |J| / m_body) dt + |g| dt^2 + 2 mm [m]
  double worstPopExcessWithHit = -1.0;
  // Deepest body below the floor (y = 0) in the displayed pose at the cancel, and which: the
  // floor pushes it out in the first step, which is the contact's move, not the rebuild's. [m]
  double deepestInFloor = 0.0;
  std::string deepestBody;
};

// Steps `frames` frames into the transition, then hits the chest with `impulse`. Returns the
// figures; the character is a ragdoll again afterwards.
CancelFigures hitAfter(test::GetUpScene& scene, int frames, const Vec3& impulse) {
  CancelFigures f;
  handoff::Character& ch = *scene.ch;
  const RagdollAsset& asset = *scene.c->asset;
  const size_t bodies = asset.bodies.size();
  std::vector<Transform> previous = scene.displayedWorld(), shown;
  for (int k = 0; k < frames && ch.state() == CharacterState::Recovering; ++k) {
    previous = scene.displayedWorld();
    scene.step();
    EXPECT_EQ(ch.blockingRepresentations(), 1);
  }
  EXPECT_EQ(ch.state(), CharacterState::Recovering) << "the transition ended before the hit";
  shown = scene.displayedWorld();
  const size_t handoffsBefore = ch.handoffs().size();

  const int chest = asset.bodyForJoint(asset.map[Slot::Chest]);
  const Vec3 point = scene.world->transform(ch.ragdoll().body(chest)).translation;
  EXPECT_TRUE(ch.applyImpulse(chest, impulse, point));
  // Back to physics at once, in this call: dynamic limbs are the one blocking representation.
  EXPECT_EQ(ch.state(), CharacterState::Ragdoll);
  EXPECT_EQ(ch.blockingRepresentations(), 1);
  EXPECT_FALSE(scene.world->isEnabled(ch.ragdoll().capsule()));
  EXPECT_TRUE(ch.recoveries().back().cancelled);
  EXPECT_EQ(ch.handoffs().size(), handoffsBefore + 1);
  const HandoffRecord record = ch.handoffs().back();  // a copy: stepping may add records
  EXPECT_TRUE(record.committed) << record.failure;

  std::vector<Vec3> position(bodies), velocity(bodies);
  std::vector<Transform> position0(bodies);
  for (size_t b = 0; b < bodies; ++b) {
    const BodyDef& def = asset.bodies[b];
    const BodyId id = ch.ragdoll().body(static_cast<int>(b));
    EXPECT_EQ(scene.world->motionType(id), MotionType::Dynamic) << def.name;
    // Rebuilt from the displayed skeleton: T_WC = T_WB * T_BC of the bones shown this frame.
    const Transform displayedBody = shown[static_cast<size_t>(def.joint)] * def.boneFromBody;
    const Transform previousBody = previous[static_cast<size_t>(def.joint)] * def.boneFromBody;
    const Transform engine = scene.world->transform(id);
    f.worstPoseError =
        std::max(f.worstPoseError, glm::length(engine.translation - displayedBody.translation));
    f.worstAngleError = std::max(f.worstAngleError, angleBetween(engine.rotation, displayedBody.rotation));
    // Continuous with the displayed motion: the inherited velocity is the displayed body's
    // motion over the last frame (SPEC.md section 3's finite differences, no clamp).
    const Vec3 shownLinear = (displayedBody.translation - previousBody.translation) / test::kFrame;
    const Vec3 shownAngular =
        angularVelocity(previousBody.rotation, displayedBody.rotation, test::kFrame).omega;
    const BodyHandoff& h = record.bodies[b];
    // No teleport, speed or history clamp: the finite difference inherited is the displayed
    // motion. The commit's consistency steps (joints, floor) then change it by recorded amounts.
    EXPECT_EQ(h.clamps & (kClampTeleport | kClampLinearLimit | kClampAngularLimit | kClampNoHistory), 0)
        << def.name << ": " << clampReasonText(h.clamps);
    EXPECT_LT(glm::length(h.linearVelocity - (h.finiteDifferenceLinearVelocity + h.jointLinearCorrection +
                                              h.contactLinearCorrection)),
              1e-9)
        << def.name;
    f.worstLinearMismatch =
        std::max(f.worstLinearMismatch, glm::length(h.finiteDifferenceLinearVelocity - shownLinear));
    f.worstAngularMismatch =
        std::max(f.worstAngularMismatch, glm::length(h.finiteDifferenceAngularVelocity - shownAngular));
    f.maxDisplayedSpeed = std::max(f.maxDisplayedSpeed, glm::length(shownLinear));
    position[b] = engine.translation;
    position0[b] = engine;
    velocity[b] = scene.world->linearVelocity(id);  // inherited, plus the hit on the chest
  }
  // The first physics step: no collider moves more than its velocity and gravity allow + 2 mm.
  scene.step();
  EXPECT_EQ(ch.blockingRepresentations(), 1);
  for (size_t b = 0; b < bodies; ++b) {
    const double moved =
        glm::length(scene.world->transform(ch.ragdoll().body(static_cast<int>(b))).translation - position[b]);
    const double dt = test::kFrame;
    // A body the displayed pose put into the floor is pushed out by at most its depth on top.
    const double depth = std::max(0.0, -shapeLowestPoint(asset.bodies[b].shape, position0[b]).y);
    if (depth > f.deepestInFloor) {
      f.deepestInFloor = depth;
      f.deepestBody = asset.bodies[b].name;
    }
    const double allowed = glm::length(velocity[b]) * dt + kG * dt * dt + 0.002 + depth;
    f.worstPopExcess = std::max(f.worstPopExcess, moved - allowed);
    // No body can gain more speed from the hit J than |J| / m_body (the joints pass on at most
    // the impulse itself): a pop of the rebuild shows above that.
    const BodyId id = ch.ragdoll().body(static_cast<int>(b));
    const double hitShare = glm::length(impulse) / scene.world->mass(id);
    f.worstPopExcessWithHit = std::max(
        f.worstPopExcessWithHit, moved - ((glm::length(record.bodies[b].linearVelocity) + hitShare) * dt +
                                          kG * dt * dt + 0.002 + depth));
    f.maxFirstStepMove = std::max(f.maxFirstStepMove, moved);
  }
  return f;
}

void print(const CancelFigures& f, const char* label) {
  std::printf(
      "[cancel %s] bodies vs displayed skeleton %.2e m / %.2e rad; inherited vs displayed velocity %.2e m/s, "
      "%.2e rad/s (fastest displayed body %.3f m/s); first step: largest move %.1f mm, worst beyond "
      "|v|dt+|g|dt^2+2mm+depth in the floor %+.2f mm (with the hit's |J|/m share %+.2f mm); deepest body in "
      "the floor as displayed: %s %.1f mm\n",
      label, f.worstPoseError, f.worstAngleError, f.worstLinearMismatch, f.worstAngularMismatch,
      f.maxDisplayedSpeed, f.maxFirstStepMove * 1e3, f.worstPopExcess * 1e3, f.worstPopExcessWithHit * 1e3,
      f.deepestBody.empty() ? "none" : f.deepestBody.c_str(), f.deepestInFloor * 1e3);
}

void expectRebuiltFromTheDisplay(const CancelFigures& f) {
  // The commit snaps nothing: bodies stand exactly where the displayed skeleton puts them
  // (rounding of T_WB * T_BC only).
  EXPECT_LT(f.worstPoseError, 1e-6);
  EXPECT_LT(f.worstAngleError, 1e-6);
  // The same two samples the display showed, so the same velocities to rounding.
  EXPECT_LT(f.worstLinearMismatch, 1e-6);
  EXPECT_LT(f.worstAngularMismatch, 1e-5);
}

/// Runs the DeepMimic character into its first get-up transition and cancels it `frames` frames
/// in with `impulse` on the chest; then, after it settled again, in the middle of the second.
std::vector<CancelFigures> cancelTwice(const Vec3& impulse) {
  std::vector<CancelFigures> out;
  const test::Character& c = test::loadCharacter("deepmimic/humanoid3d_run.bvh");
  if (!c.asset) return out;
  test::GetUpScene scene;
  EXPECT_TRUE(scene.start(c, 0, Transform::identity()));
  if (!scene.ch) return out;
  handoff::Character& ch = *scene.ch;
  for (int step = 0; step < 30; ++step) scene.step();
  if (!scene.goRagdoll()) return out;
  for (int attempt = 0; attempt < 2; ++attempt) {
    int guard = 0;
    while (ch.state() != CharacterState::Recovering && guard++ < 60 * 15) {
      scene.step();
      EXPECT_EQ(ch.blockingRepresentations(), 1);
    }
    EXPECT_EQ(ch.state(), CharacterState::Recovering) << "no get-up within 15 s";
    if (ch.state() != CharacterState::Recovering) return out;
    const TransitionPlan& plan = ch.recoveries().back().transition;
    const int frames = attempt == 0 ? 2 : static_cast<int>(plan.duration / 2.0 / test::kFrame);
    out.push_back(hitAfter(scene, frames, impulse));
  }
  // The cancels are recorded as events with their reason.
  int cancels = 0;
  for (const CharacterEvent& e : ch.events()) cancels += e.kind == CharacterEventKind::Cancel;
  EXPECT_EQ(cancels, 2);
  return out;
}

// A touch (a zero impulse: the game's "pushed" signal) 2 frames into the first transition and in
// the middle of the second: the rebuild itself is pop-free. No collider moves more than
// |v| dt + |g| dt^2 + 2 mm in the first physics step, v being the inherited velocity, plus its
// depth below the floor when the displayed get-up pose put it there (the floor's push-out: the
// transition's blend does not keep limbs above the ground; the figure is printed).
TEST(GetUpCancel, CancelReturnsToPhysicsWithoutAPop) {
  const std::vector<CancelFigures> figures = cancelTwice(Vec3{0.0});
  ASSERT_EQ(figures.size(), 2u);
  for (size_t i = 0; i < figures.size(); ++i) {
    print(figures[i], i == 0 ? "touch, 2 frames in" : "touch, mid-transition");
    expectRebuiltFromTheDisplay(figures[i]);
    EXPECT_LE(figures[i].worstPopExcess, 0.0);
  }
}

// A 40 N s hit on the chest at the same instants: back to physics in the same call, every body
// rebuilt from the displayed skeleton with the displayed velocities. In the first step the hit
// itself moves the bodies joined to the chest beyond |v| dt (the joints pass the impulse on
// within the step), so each body's bound adds the most the hit can give it, |J| / m_body.
TEST(GetUpCancel, HitReturnsToPhysicsAtOnceWithContinuousVelocities) {
  const std::vector<CancelFigures> figures = cancelTwice(Vec3{40.0, 0.0, 0.0});
  ASSERT_EQ(figures.size(), 2u);
  for (size_t i = 0; i < figures.size(); ++i) {
    print(figures[i], i == 0 ? "40 N s hit, 2 frames in" : "40 N s hit, mid-transition");
    expectRebuiltFromTheDisplay(figures[i]);
    EXPECT_LE(figures[i].worstPopExcessWithHit, 0.0);
  }
}

}  // namespace
}  // namespace handoff
