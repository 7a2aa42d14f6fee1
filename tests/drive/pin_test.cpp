// Pinning (an external force, separate from the joint drives): the law by hand, bad values, and
// in the Bullet world a pin reaching its target with the impulse it applied accounted for.
#include "handoff/drive.h"
#include "handoff/physics_bullet.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "drive/fake_world.h"
#include "support/bullet_precision.h"
#include "support/test_math.h"

namespace handoff {
namespace {

using test::vecNear;

constexpr double kInf = std::numeric_limits<double>::infinity();
const Vec3 kZ{0, 0, 1};

TEST(Pin, LawByHand) {
  PinGains g;
  g.linearStiffness = 100.0;
  g.linearDamping = 20.0;
  g.angularStiffness = 50.0;
  g.angularDamping = 5.0;
  PinInput in;
  in.worldFromBody = Transform::fromTranslation(Vec3{1.0, 2.0, 3.0});
  in.linearVelocity = Vec3{0.0, 1.0, 0.0};
  in.angularVelocity = Vec3{0.0, 0.0, 1.0};
  in.target = Transform{glm::angleAxis(0.2, kZ), Vec3{1.1, 2.0, 3.0}};
  PinOutput out = computePin(g, in);
  ASSERT_TRUE(out.valid);
  // a = 100 (0.1, 0, 0) + 20 ((0, 0, 0) - (0, 1, 0)) = (10, -20, 0).
  EXPECT_TRUE(vecNear(out.positionError, Vec3{0.1, 0, 0}, 1e-12));
  EXPECT_TRUE(vecNear(out.linearAcceleration, Vec3{10, -20, 0}, 1e-10));
  // alpha = 50 (0, 0, 0.2) - 5 (0, 0, 1) = (0, 0, 5).
  EXPECT_TRUE(vecNear(out.rotationError, Vec3{0, 0, 0.2}, 1e-12));
  EXPECT_TRUE(vecNear(out.angularAcceleration, Vec3{0, 0, 5}, 1e-10));

  // Moving target: the damping compares with the target's velocity.
  in.targetLinearVelocity = Vec3{0.0, 1.0, 0.0};
  in.targetAngularVelocity = Vec3{0.0, 0.0, 1.0};
  out = computePin(g, in);
  EXPECT_TRUE(vecNear(out.linearAcceleration, Vec3{10, 0, 0}, 1e-10));
  EXPECT_TRUE(vecNear(out.angularAcceleration, Vec3{0, 0, 10}, 1e-10));

  // Clamp (direction kept) and weight: w = 0.5 halves K and the maxima, keeps D.
  g.maxLinearAcceleration = 4.0;
  in.targetLinearVelocity = Vec3{0.0};
  in.weight = 0.5;
  out = computePin(g, in);
  // a = 50 (0.1, 0, 0) + 20 (0, -1, 0) = (5, -20, 0), |a| = 20.6 > 2: scaled to 2.
  EXPECT_TRUE(out.saturatedLinear);
  EXPECT_TRUE(vecNear(out.linearAcceleration, Vec3{5, -20, 0} * (2.0 / std::sqrt(425.0)), 1e-12));
  const PinGains off = weightedPinGains(PinGains{1.0, 2.0, kInf, 3.0, 4.0, kInf}, 0.0);
  EXPECT_EQ(off.linearStiffness, 0.0);
  EXPECT_EQ(off.linearDamping, 2.0);
  EXPECT_EQ(off.maxLinearAcceleration, 0.0) << "not inf * 0 = NaN";
  EXPECT_EQ(off.maxAngularAcceleration, 0.0);
}

TEST(Pin, RejectsNonFiniteInputs) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  PinGains g;
  g.linearStiffness = 10.0;
  PinInput bad[5];
  bad[0].worldFromBody.translation.x = nan;
  bad[1].linearVelocity.y = kInf;
  bad[2].target.rotation.w = nan;
  bad[3].targetAngularVelocity.z = nan;
  bad[4].weight = nan;
  for (const PinInput& in : bad) {
    const PinOutput out = computePin(g, in);
    EXPECT_FALSE(out.valid);
    EXPECT_EQ(out.linearAcceleration, Vec3{0.0});
  }
  test::RecordingWorld world;
  const std::vector<BodyId> bodies{world.addBody(Transform::identity())};
  const std::vector<PinGains> gains{g};
  PinApplier pins(world, bodies, gains);
  EXPECT_FALSE(pins.setTarget(0, Transform{Quat{nan, 0, 0, 0}, Vec3{0.0}}));
  EXPECT_FALSE(pins.setTarget(0, Transform::identity(), Vec3{kInf, 0, 0}));
  EXPECT_FALSE(pins.setWeight(0, 2.0));
  EXPECT_FALSE(pins.setWeight(nan));
  pins.onSubstep(0.0);
  pins.onSubstep(nan);
  EXPECT_EQ(pins.externalLinearImpulse(), Vec3{0.0});
}

TEST(SubstepListenerList, RunsInOrderUpToCapacity) {
  struct Recorder final : SubstepListener {
    std::vector<int>* log;
    int id;
    Recorder(std::vector<int>* l, int i) : log(l), id(i) {}
    void onSubstep(double) override { log->push_back(id); }
  };
  std::vector<int> log;
  log.reserve(16);
  Recorder a(&log, 1), b(&log, 2);
  SubstepListenerList list;
  EXPECT_FALSE(list.add(nullptr));
  EXPECT_TRUE(list.add(&a));
  EXPECT_TRUE(list.add(&b));
  list.onSubstep(0.01);
  EXPECT_EQ(log, (std::vector<int>{1, 2}));
  for (int i = 2; i < SubstepListenerList::kCapacity; ++i) EXPECT_TRUE(list.add(&a));
  EXPECT_FALSE(list.add(&a)) << "full";
}

struct Momentum {
  Vec3 linear{0.0};
  Vec3 angular{0.0};          ///< about the world origin
  double linearScale = 0.0;   ///< sum |m v| [kg m/s]
  double angularScale = 0.0;  ///< sum |r x m v| + |I omega| [kg m^2/s]
};

/// Tolerance on a momentum change against the impulse the pins report (`doubleTolerance` on
/// double-precision Bullet). Single precision: every substep rounds each body's velocities (and
/// pose) to float, changing its momentum by up to kFloatEpsilon times its size: at most
/// kFloatEpsilon `peakScale` per substep, over the run's `substeps`.
double impulseTolerance(double doubleTolerance, double peakScale, int substeps) {
  return test::bulletTolerance(doubleTolerance, peakScale, substeps);
}

Momentum momentumAboutOrigin(const PhysicsWorld& world, const std::vector<BodyId>& bodies) {
  Momentum m;
  for (const BodyId b : bodies) {
    const Vec3 p = world.mass(b) * world.linearVelocity(b);
    const Vec3 orbit = glm::cross(world.transform(b).translation, p);
    const Vec3 spin = world.worldInertia(b) * world.angularVelocity(b);
    m.linear += p;
    m.angular += orbit + spin;
    m.linearScale += glm::length(p);
    m.angularScale += glm::length(orbit) + glm::length(spin);
  }
  return m;
}

std::unique_ptr<PhysicsWorld> floatingWorld() {
  WorldSettings settings;
  settings.gravity = Vec3{0.0};
  settings.sleepLinearSpeed = 0.0;
  return createBulletWorld(settings);
}

BodyId capsule(PhysicsWorld& world, const Vec3& at, double mass) {
  BodyDesc desc;
  desc.shape.type = ShapeType::Capsule;
  desc.shape.radius = 0.05;
  desc.shape.halfHeight = 0.12;
  desc.mass = mass;
  desc.inertia = Vec3{0.03};  // isotropic: the engine's spin integration is then exact
  desc.worldFromBody = Transform::fromTranslation(at);
  desc.linearDamping = 0.0;
  desc.angularDamping = 0.0;
  desc.enableContinuousCollision = false;
  return *world.createBody(desc);
}

// A floating body pinned to a pose 0.5 m and 1 rad away reaches it (critically damped, 10 rad/s),
// and its momentum changed by exactly the impulse the pins report as external.
TEST(PinBullet, ReachesTargetAndReportsItsExternalImpulse) {
  auto world = floatingWorld();
  const std::vector<BodyId> bodies{capsule(*world, Vec3{0.0, 1.0, 0.0}, 3.0)};
  PinGains g;
  g.linearStiffness = g.angularStiffness = 100.0;
  g.linearDamping = g.angularDamping = 20.0;
  const std::vector<PinGains> gains{g};
  PinApplier pins(*world, bodies, gains);
  world->addSubstepListener(&pins);
  const Transform target{glm::angleAxis(1.0, kZ), Vec3{0.5, 1.0, 0.2}};
  ASSERT_TRUE(pins.setTarget(0, target));
  const Momentum m0 = momentumAboutOrigin(*world, bodies);
  double peakLinear = m0.linearScale, peakAngular = m0.angularScale;
  for (int frame = 0; frame < 90; ++frame) {
    world->step(1.0 / 60.0, 4);
    const Momentum now = momentumAboutOrigin(*world, bodies);
    peakLinear = std::max(peakLinear, now.linearScale);
    peakAngular = std::max(peakAngular, now.angularScale);
  }
  const Transform pose = world->transform(bodies[0]);
  const Momentum m = momentumAboutOrigin(*world, bodies);
  std::printf(
      "[ pin ] after 1.5 s: position error %.3g m, angle error %.3g rad; external impulse applied %.3g N s "
      "(net %.3g; momentum change minus net: %.3g)\n",
      glm::length(pose.translation - target.translation), angleBetween(pose.rotation, target.rotation),
      pins.externalLinearImpulseApplied(), glm::length(pins.externalLinearImpulse()),
      glm::length(m.linear - m0.linear - pins.externalLinearImpulse()));
  // 3 kg moved 0.5 m and stopped: pushed, then braked; neither cancels in the applied sum.
  EXPECT_GT(pins.externalLinearImpulseApplied(), 3.0);
  EXPECT_LT(glm::length(pose.translation - target.translation), 1e-3);
  EXPECT_LT(angleBetween(pose.rotation, target.rotation), 1e-3);
  // The pins are the only external agent: momentum change = their reported impulse.
  EXPECT_TRUE(
      vecNear(m.linear - m0.linear, pins.externalLinearImpulse(), impulseTolerance(1e-9, peakLinear, 360)));
  EXPECT_TRUE(vecNear(m.angular - m0.angular, pins.externalAngularImpulse(),
                      impulseTolerance(1e-9, peakAngular, 360)));
  world->removeSubstepListener(&pins);
}

// A chain whose root is pinned and whose joint is driven (both through one listener list): the
// pin holds the root while the drive bends the child, and the linear momentum changes by the pin's
// impulse alone (the drive is internal).
TEST(PinBullet, PinnedRootWithDrivenChild) {
  auto world = floatingWorld();
  const std::vector<BodyId> bodies{capsule(*world, Vec3{0.0, 1.0, 0.0}, 4.0),
                                   capsule(*world, Vec3{0.0, 1.4, 0.0}, 2.0)};
  JointDesc joint;
  joint.bodyA = bodies[0];
  joint.bodyB = bodies[1];
  joint.bodyAFromJoint = Transform::fromTranslation(Vec3{0.0, 0.2, 0.0});
  joint.bodyBFromJoint = Transform::fromTranslation(Vec3{0.0, -0.2, 0.0});
  joint.angularLower = Vec3{0.0, 0.0, -2.0};
  joint.angularUpper = Vec3{0.0, 0.0, 2.0};
  const JointId engineJoint = *world->createJoint(joint);
  DriveJoint d;
  d.bodyA = 0;
  d.bodyB = 1;
  d.angularLower = joint.angularLower;
  d.angularUpper = joint.angularUpper;
  d.gains = DriveGains{60.0, 2.0, 80.0};
  const std::vector<DriveJoint> joints{d};
  ExplicitDrive drive(*world, bodies, joints);
  PinGains g;
  g.linearStiffness = g.angularStiffness = 400.0;
  g.linearDamping = g.angularDamping = 40.0;
  const std::vector<BodyId> pinned{bodies[0]};
  const std::vector<PinGains> gains{g};
  PinApplier pins(*world, pinned, gains);
  SubstepListenerList listeners;
  ASSERT_TRUE(listeners.add(&drive));
  ASSERT_TRUE(listeners.add(&pins));
  world->addSubstepListener(&listeners);
  ASSERT_TRUE(drive.setTarget(0, fromJointAngles(Vec3{0.0, 0.0, 1.0})));
  const Momentum m0 = momentumAboutOrigin(*world, bodies);
  double peakLinear = m0.linearScale;
  // 4 s: the drive's Kp 60, Kd 2 ring (damping ratio ~0.4) about the target before settling.
  for (int frame = 0; frame < 240; ++frame) {
    world->step(1.0 / 60.0, 4);
    peakLinear = std::max(peakLinear, momentumAboutOrigin(*world, bodies).linearScale);
  }
  const double rootDrift = glm::length(world->transform(bodies[0]).translation - Vec3{0.0, 1.0, 0.0});
  const double angle = jointAngles(world->jointRelativeRotation(engineJoint)).z;
  const Momentum m = momentumAboutOrigin(*world, bodies);
  std::printf(
      "[ pin ] pinned root, driven child after 4 s: root off its pin by %.3g m, joint %.4f rad (target 1)\n",
      rootDrift, angle);
  EXPECT_LT(rootDrift, 1e-3);
  EXPECT_NEAR(angle, 1.0, 1e-3);
  EXPECT_TRUE(
      vecNear(m.linear - m0.linear, pins.externalLinearImpulse(), impulseTolerance(1e-9, peakLinear, 960)));
  world->removeSubstepListener(&listeners);
}

// A body already moving with its target (3.8 m/s, 6 rad/s: a swing foot of a walk), the target set
// each frame at the pose of the frame's end (what a controller following an animation has): with
// that time ahead given, the pins do nothing to it; held at the frame's end without it, the first
// substep pulls it ahead by K v dt h (1600 * 3.8 / 60 / 120 = 0.84 m/s).
TEST(PinBullet, AMovingTargetSetForTheFrameEndDoesNotPullABodyOnIt) {
  constexpr double kDt = 1.0 / 60.0;
  const Vec3 v{3.8, 0.0, 0.0}, w{0.0, 0.0, 6.0};
  PinGains g;
  g.linearStiffness = g.angularStiffness = 1600.0;  // PoweredPin's defaults
  g.linearDamping = g.angularDamping = 80.0;
  const std::vector<PinGains> gains{g};
  double firstFrameChange[2] = {0.0, 0.0};
  for (const bool ahead : {true, false}) {
    auto world = floatingWorld();
    const std::vector<BodyId> bodies{capsule(*world, Vec3{0.0, 1.0, 0.0}, 1.1)};
    world->setLinearVelocity(bodies[0], v);
    world->setAngularVelocity(bodies[0], w);
    PinApplier pins(*world, bodies, gains);
    world->addSubstepListener(&pins);
    double worstSpeedChange = 0.0, worstAngularChange = 0.0;
    for (int frame = 0; frame < 30; ++frame) {
      const Transform now = world->transform(bodies[0]);
      const double angle = glm::length(w) * kDt;
      const Transform frameEnd{glm::normalize(glm::angleAxis(angle, kZ) * now.rotation),
                               now.translation + v * kDt};
      ASSERT_TRUE(pins.setTarget(0, frameEnd, v, w, ahead ? kDt : 0.0));
      world->step(kDt, 2);
      worstSpeedChange = std::max(worstSpeedChange, glm::length(world->linearVelocity(bodies[0]) - v));
      worstAngularChange = std::max(worstAngularChange, glm::length(world->angularVelocity(bodies[0]) - w));
      if (frame == 0) firstFrameChange[ahead ? 0 : 1] = worstSpeedChange;
    }
    std::printf(
        "[ pin ] target %s: worst velocity change %.3g m/s, angular %.3g rad/s over 30 frames; pins' "
        "impulse %.3g N s\n",
        ahead ? "a frame ahead, given" : "held at the frame's end", worstSpeedChange, worstAngularChange,
        pins.externalLinearImpulseApplied());
    if (ahead) {
      // Single-precision Bullet keeps the pose in float (measured 4e-7 m/s and 2e-6 rad/s).
      EXPECT_LT(worstSpeedChange, test::kBulletDouble ? 1e-6 : 1e-4);
      EXPECT_LT(worstAngularChange, test::kBulletDouble ? 1e-6 : 1e-4);
    }
    world->removeSubstepListener(&pins);
  }
  // Held at the frame's end: the first substep (h = dt / 2) adds K v dt h = 0.844 m/s, the second
  // takes (K (v h - 0.844 h) - D 0.844) h = -0.235 back: 0.610 m/s after the frame.
  const double h = kDt / 2.0, first = 1600.0 * 3.8 * kDt * h;
  EXPECT_NEAR(firstFrameChange[1], first + (1600.0 * (3.8 - first) * h - 80.0 * first) * h, 0.01);
  EXPECT_GT(firstFrameChange[1], 10.0 * firstFrameChange[0]);
  // Bad values are refused, the target unchanged.
  auto world = floatingWorld();
  const std::vector<BodyId> bodies{capsule(*world, Vec3{0.0, 1.0, 0.0}, 1.0)};
  PinApplier pins(*world, bodies, gains);
  EXPECT_FALSE(pins.setTarget(0, Transform{}, Vec3{0.0}, Vec3{0.0}, -0.1));
  EXPECT_FALSE(pins.setTarget(0, Transform{}, Vec3{0.0}, Vec3{0.0}, std::nan("")));
}

}  // namespace
}  // namespace handoff
