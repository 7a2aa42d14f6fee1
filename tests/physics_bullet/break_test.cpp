// Breakable joints of the Bullet adapter (JointDesc::breakForce / breakTorque): a load ramped
// through the limit breaks the joint in the substep it crosses it, with the force or torque it
// carried; below the limit it holds; infinite limits are not measured.
#include "handoff/physics.h"
#include "handoff/physics_bullet.h"
#include "physics_bullet/scene.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <vector>

namespace handoff {
namespace {

using test::kDt;
using test::kG;

constexpr int kBreakSubsteps = 2;

/// A downward force on a body's centre of mass, f = min(rate t, cap) at the end of each substep,
/// applied as the substep's impulse f h before the solve (the way a steady load acts).
class DownwardRamp final : public SubstepListener {
 public:
  DownwardRamp(PhysicsWorld& world, BodyId body, double rate, double cap)
      : world_(world), body_(body), rate_(rate), cap_(cap) {}
  void onSubstep(double h) override {
    time_ += h;
    world_.applyLinearImpulse(body_, Vec3{0.0, -force() * h, 0.0}, world_.transform(body_).translation);
  }
  double force() const { return std::min(rate_ * time_, cap_); }
  double forceAt(double t) const { return std::min(rate_ * t, cap_); }
  double time() const { return time_; }

 private:
  PhysicsWorld& world_;
  BodyId body_;
  double rate_, cap_, time_ = 0.0;
};

struct BreakRun {
  bool broken = false;
  double breakTime = 0.0;  // end of the substep it broke in [s]
  JointBreakState state;
  double worstTracking = 0.0;  // before the break: |measured - expected| / expected
};

/// Steps `seconds`, recording when `joint` breaks; `expected(t)` is the load the joint carries at
/// rest at time t (compared with what it reports before breaking).
template <typename Expected>
BreakRun runUntilBreak(PhysicsWorld& world, JointId joint, double seconds, Expected expected) {
  BreakRun run;
  const int steps = static_cast<int>(std::lround(seconds / kDt));
  for (int i = 0; i < steps; ++i) {
    world.step(kDt, kBreakSubsteps);
    const JointBreakState s = world.jointBreakState(joint);
    if (s.broken) {
      if (!run.broken) {
        EXPECT_GE(s.substep, 0);
        run.broken = true;
        run.breakTime = i * kDt + (s.substep + 1) * (kDt / kBreakSubsteps);
        run.state = s;
      }
      continue;
    }
    const double t = (i + 1) * kDt;
    if (t > 0.25) {  // after the load started from rest
      run.worstTracking = std::max(run.worstTracking, std::abs(s.force - expected(t)) / expected(t));
    }
    run.state = s;
  }
  return run;
}

/// A 2 kg sphere 0.3 m under a static pivot on a locked joint with a 200 N break force.
struct Hanging {
  std::unique_ptr<PhysicsWorld> world;
  BodyId bob;
  JointId joint;
  JointDesc desc;
};

constexpr double kBobMass = 2.0;

Hanging makeHanging() {
  Hanging h;
  h.world = createBulletWorld();
  const BodyId pivot = test::mustCreate(*h.world, [] {
    BodyDesc d = test::sphereDesc(0.05, 1.0, Vec3{0, 2, 0});
    d.motion = MotionType::Static;
    return d;
  }());
  h.bob = test::mustCreate(*h.world, test::sphereDesc(0.1, kBobMass, Vec3{0, 1.7, 0}));
  h.desc = test::jointAt(*h.world, pivot, h.bob, Vec3{0, 2, 0});
  h.desc.breakForce = 200.0;
  h.joint = test::mustCreate(*h.world, h.desc);
  return h;
}

// A 2 kg sphere hanging 0.3 m under a static pivot on a locked joint (all axes), pulled down by
// f = 300 N/s * t: the joint carries m g + f. With a break force of 200 N it must break in the
// substep where m g + f first exceeds 200 N, at t* = (200 - m g) / 300 = 0.601 s, reporting that
// substep's force: within one substep's ramp (300 N/s * h = 2.5 N) above 200 N.
TEST(BreakableJoint, HangingMassBreaksAtItsForceWithinOneSubstepOfTheRamp) {
  Hanging scene = makeHanging();
  PhysicsWorld* world = scene.world.get();
  const BodyId bob = scene.bob;
  const JointId joint = scene.joint;
  const double mass = kBobMass;
  const JointDesc& j = scene.desc;
  const double rate = 300.0;
  DownwardRamp ramp(*world, bob, rate, std::numeric_limits<double>::infinity());
  ASSERT_TRUE(world->addSubstepListener(&ramp));

  const BreakRun run =
      runUntilBreak(*world, joint, 1.0, [&](double t) { return mass * kG + ramp.forceAt(t); });
  const double expectedTime = (j.breakForce - mass * kG) / rate;
  const double h = kDt / kBreakSubsteps;
  std::printf(
      "[ figure ] hanging 2 kg, break force 200 N, ramp 300 N/s: broke at t = %.4f s (expected %.4f s), "
      "force %.2f N (load then %.2f N), torque %.3g N m; tracking before the break %.3g %%\n",
      run.breakTime, expectedTime, run.state.force, mass * kG + ramp.forceAt(run.breakTime), run.state.torque,
      100.0 * run.worstTracking);
  ASSERT_TRUE(run.broken);
  EXPECT_GE(run.breakTime, expectedTime);
  EXPECT_LE(run.breakTime, expectedTime + h + 1e-9);
  EXPECT_GT(run.state.force, j.breakForce);
  EXPECT_LT(run.state.force, j.breakForce + rate * h + 0.5);
  EXPECT_NEAR(run.state.force, mass * kG + ramp.forceAt(run.breakTime), 0.01 * j.breakForce);
  EXPECT_LT(run.state.torque, 0.05);   // straight under the pivot: no moment
  EXPECT_LT(run.worstTracking, 0.01);  // what it reports is the load it carries

  // Broken: the bob falls away, the pivot no longer holds it (at least free fall, plus the load).
  const double y0 = world->transform(bob).translation.y;
  for (int i = 0; i < 12; ++i) world->step(kDt, kBreakSubsteps);
  const double fall = y0 - world->transform(bob).translation.y;
  std::printf("[ figure ] after the break: the bob fell %.3f m in 0.2 s, anchors %.3f m apart\n", fall,
              world->jointAnchorSeparation(joint));
  EXPECT_GT(fall, 0.5 * kG * 0.2 * 0.2);
  EXPECT_GT(world->jointAnchorSeparation(joint), 0.15);
  EXPECT_EQ(world->jointBreakState(joint).substep, -1);  // broke in an earlier step
  EXPECT_TRUE(world->jointBreakState(joint).broken);
  world->removeSubstepListener(&ramp);
}

// The same joint loaded to 95 % of its break force and held there for 2 s: it holds, reporting
// the load (m g + f) it carries.
TEST(BreakableJoint, HangingMassBelowItsForceHolds) {
  Hanging scene = makeHanging();
  PhysicsWorld* world = scene.world.get();
  const BodyId bob = scene.bob;
  const JointId joint = scene.joint;
  const double mass = kBobMass;
  const JointDesc& j = scene.desc;
  const double cap = 0.95 * j.breakForce - mass * kG;
  DownwardRamp ramp(*world, bob, 300.0, cap);
  ASSERT_TRUE(world->addSubstepListener(&ramp));
  const BreakRun run =
      runUntilBreak(*world, joint, 2.5, [&](double t) { return mass * kG + ramp.forceAt(t); });
  std::printf(
      "[ figure ] held at 95 %% of 200 N for 2 s: broken %d, force %.2f N, worst tracking %.3g %%, "
      "anchors %.2g m apart\n",
      run.broken, run.state.force, 100.0 * run.worstTracking, world->jointAnchorSeparation(joint));
  EXPECT_FALSE(run.broken);
  EXPECT_NEAR(run.state.force, 0.95 * j.breakForce, 0.01 * j.breakForce);
  EXPECT_LT(run.worstTracking, 0.01);
  EXPECT_LT(world->jointAnchorSeparation(joint), 1e-3);
  world->removeSubstepListener(&ramp);
}

// A 1 kg horizontal capsule welded (all angular axes locked) to a static block at one end, its
// centre of mass L = 0.4 m out, pushed down at the centre by f = 20 N/s * t: the joint carries
// the force m g + f and the torque (m g + f) L. A torque limit of 15 N m breaks it at
// t* = (15 / L - m g) / 20 = 1.385 s while the force (37.5 N) stays far below its 1000 N limit;
// a force limit of 60 N with an infinite torque limit holds it at a torque of 19.9 N m.
struct Cantilever {
  std::unique_ptr<PhysicsWorld> world;
  BodyId beam;
  JointId joint;
};

constexpr double kArm = 0.4;
constexpr double kBeamMass = 1.0;

Cantilever makeCantilever(double breakForce, double breakTorque) {
  Cantilever c;
  c.world = createBulletWorld();
  const BodyId base = test::mustCreate(*c.world, [] {
    BodyDesc d = test::boxDesc(Vec3{0.1}, 1.0, Transform::fromTranslation(Vec3{-0.1, 1.0, 0.0}));
    d.motion = MotionType::Static;
    return d;
  }());
  // Capsule along X (its own +Y turned onto X), from x = 0 to x = 0.8.
  c.beam = test::mustCreate(
      *c.world, test::capsuleDesc(0.04, 0.36, kBeamMass,
                                  Transform{glm::angleAxis(0.5 * kPi, Vec3{0, 0, 1}), Vec3{kArm, 1.0, 0.0}}));
  JointDesc j = test::jointAt(*c.world, base, c.beam, Vec3{0.0, 1.0, 0.0});
  j.breakForce = breakForce;
  j.breakTorque = breakTorque;
  c.joint = test::mustCreate(*c.world, j);
  return c;
}

TEST(BreakableJoint, CantileverBreaksAtItsTorqueWithItsForceFarBelowItsLimit) {
  Cantilever c = makeCantilever(1000.0, 15.0);
  const double rate = 20.0;
  DownwardRamp ramp(*c.world, c.beam, rate, std::numeric_limits<double>::infinity());
  ASSERT_TRUE(c.world->addSubstepListener(&ramp));
  const BreakRun run =
      runUntilBreak(*c.world, c.joint, 2.0, [&](double t) { return kBeamMass * kG + ramp.forceAt(t); });
  const double expectedTime = (15.0 / kArm - kBeamMass * kG) / rate;
  const double h = kDt / kBreakSubsteps;
  const double loadAtBreak = kBeamMass * kG + ramp.forceAt(run.breakTime);
  std::printf(
      "[ figure ] cantilever, break torque 15 N m, ramp 20 N/s at 0.4 m: broke at t = %.4f s (expected "
      "%.4f s), torque %.3f N m (load then %.3f N m), force %.2f N (limit 1000 N)\n",
      run.breakTime, expectedTime, run.state.torque, loadAtBreak * kArm, run.state.force);
  ASSERT_TRUE(run.broken);
  EXPECT_GE(run.breakTime, expectedTime - 1e-9);
  EXPECT_LE(run.breakTime, expectedTime + h + 1e-9);
  EXPECT_GT(run.state.torque, 15.0);
  EXPECT_LT(run.state.torque, 15.0 + rate * kArm * h + 0.1);
  EXPECT_NEAR(run.state.torque, loadAtBreak * kArm, 0.02 * 15.0);
  EXPECT_NEAR(run.state.force, loadAtBreak, 0.02 * loadAtBreak);
  c.world->removeSubstepListener(&ramp);
}

TEST(BreakableJoint, ForceLimitIgnoresTheTorque) {
  Cantilever c = makeCantilever(60.0, std::numeric_limits<double>::infinity());
  const double cap = 40.0;  // force 49.8 N < 60 N; torque 19.9 N m (would break a 15 N m joint)
  DownwardRamp ramp(*c.world, c.beam, 20.0, cap);
  ASSERT_TRUE(c.world->addSubstepListener(&ramp));
  const BreakRun run =
      runUntilBreak(*c.world, c.joint, 3.0, [&](double t) { return kBeamMass * kG + ramp.forceAt(t); });
  std::printf(
      "[ figure ] cantilever, break force 60 N only, held at 49.8 N: broken %d, force %.2f N, torque "
      "%.3f N m (expected %.3f)\n",
      run.broken, run.state.force, run.state.torque, (kBeamMass * kG + cap) * kArm);
  EXPECT_FALSE(run.broken);
  EXPECT_NEAR(run.state.force, kBeamMass * kG + cap, 0.02 * (kBeamMass * kG + cap));
  EXPECT_NEAR(run.state.torque, (kBeamMass * kG + cap) * kArm, 0.02 * (kBeamMass * kG + cap) * kArm);
  c.world->removeSubstepListener(&ramp);
}

// Infinite limits (the default): a chain dropped 10 m onto the ground never breaks and is not
// measured (the state stays the default: no feedback is read).
TEST(BreakableJoint, InfiniteLimitsNeverBreakAndAreNotMeasured) {
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  const test::Chain chain =
      test::makeChain(*world, Vec3{0, 10, 0}, 8, 0.05, 0.1, 2.0, glm::angleAxis(0.5 * kPi, Vec3{0, 0, 1}));
  int broken = 0, measured = 0;
  for (int i = 0; i < 180; ++i) {
    world->step(kDt, kBreakSubsteps);
    for (const JointId j : chain.joints) {
      const JointBreakState s = world->jointBreakState(j);
      broken += s.broken ? 1 : 0;
      measured += s.force != 0.0 || s.torque != 0.0 || s.substep != -1 ? 1 : 0;
    }
  }
  const double separation = test::maxAnchorSeparation(*world, chain.joints);
  std::printf("[ figure ] 10 m chain drop, infinite limits: %d breaks, %d measurements, anchors %.3g m\n",
              broken, measured, separation);
  EXPECT_EQ(broken, 0);
  EXPECT_EQ(measured, 0);
  EXPECT_LT(separation, 0.01);
}

// Bad limits are refused, naming the field.
TEST(BreakableJoint, NonPositiveOrNanLimitsAreRefused) {
  auto world = createBulletWorld();
  const BodyId a = test::mustCreate(*world, test::sphereDesc(0.1, 1.0, Vec3{0, 1, 0}));
  const BodyId b = test::mustCreate(*world, test::sphereDesc(0.1, 1.0, Vec3{0, 0.7, 0}));
  for (const double bad : {0.0, -1.0, std::nan("")}) {
    JointDesc j = test::jointAt(*world, a, b, Vec3{0, 0.85, 0});
    j.breakForce = bad;
    Result<JointId> r = world->createJoint(j);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find("breakForce"), std::string::npos) << r.error();
    j.breakForce = std::numeric_limits<double>::infinity();
    j.breakTorque = bad;
    r = world->createJoint(j);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().find("breakTorque"), std::string::npos) << r.error();
  }
  EXPECT_EQ(world->jointCount(), 0);
}

// The two bodies of a broken joint keep ignoring each other: without gravity, a child capsule
// whose end overlaps its parent's by 5 cm is knocked sideways through a 1 N limit; the pieces
// drift apart slowly while still overlapping, with no contact between them. The control, the same
// joint with collideConnected, has contacts (so the count can see them).
int contactsAfterBreak(bool collideConnected, bool* brokeOut) {
  auto world = createBulletWorld(WorldSettings{.gravity = Vec3{0.0}});
  const BodyId parent = test::mustCreate(*world, test::capsuleDesc(0.05, 0.2, 2.0, Transform{}));
  const BodyId child = test::mustCreate(
      *world, test::capsuleDesc(0.05, 0.1, 1.0, Transform::fromTranslation(Vec3{0, -0.35, 0})));
  JointDesc j = test::jointAt(*world, parent, child, Vec3{0, -0.25, 0});
  j.breakForce = 1.0;
  j.collideConnected = collideConnected;
  const JointId joint = test::mustCreate(*world, j);
  world->applyLinearImpulse(child, Vec3{0.05, 0, 0}, world->transform(child).translation);
  int contacts = 0;
  for (int i = 0; i < 30; ++i) {
    world->step(kDt, kBreakSubsteps);
    contacts += world->contactCount(child);
  }
  *brokeOut = world->jointBreakState(joint).broken;
  return contacts;
}

TEST(BreakableJoint, BrokenPairKeepsIgnoringEachOther) {
  bool broke = false, controlBroke = false;
  const int contacts = contactsAfterBreak(false, &broke);
  const int control = contactsAfterBreak(true, &controlBroke);
  std::printf(
      "[ figure ] broken joint, pieces overlapping: %d contact points in 0.5 s (collideConnected: %d)\n",
      contacts, control);
  EXPECT_TRUE(broke);
  EXPECT_EQ(contacts, 0);
  EXPECT_GT(control, 0);
}

}  // namespace
}  // namespace handoff
