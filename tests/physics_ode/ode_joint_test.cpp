// Joints of the ODE adapter: the angle convention and sign of limits, the servo's stiffness, the
// damper's dissipation, breaking, and refusals.
#include "handoff/physics.h"
#include "handoff/physics_ode.h"
#include "physics_ode/ode_scene.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace handoff {
namespace {

using ode_test::kDt;

// A static anchor block A at the origin and a 1 kg sphere B held 0.5 m along +Z from the joint
// (joint frame = world axes at the origin): gravity turns B about the joint's +X by a positive
// angle (Rx(t) takes +Z toward -Y).
struct Lever {
  std::unique_ptr<PhysicsWorld> world;
  BodyId a, b;
  JointId joint;
  Lever(const Vec3& lower, const Vec3& upper, const OdeSettings& ode = {}) : world(createOdeWorld({}, ode)) {
    BodyDesc da;
    da.shape.type = ShapeType::Box;
    da.shape.halfExtents = Vec3{0.05};
    da.motion = MotionType::Static;
    a = *world->createBody(da);
    BodyDesc db;
    db.shape.type = ShapeType::Sphere;
    db.shape.radius = 0.05;
    db.mass = 1.0;
    db.inertia = Vec3{1e-3};
    db.angularDamping = 0.0;
    db.linearDamping = 0.0;
    db.worldFromBody = Transform::fromTranslation(Vec3{0.0, 0.0, 0.5});
    b = *world->createBody(db);
    JointDesc j;
    j.bodyA = a;
    j.bodyB = b;
    j.bodyAFromJoint = Transform{};
    j.bodyBFromJoint = Transform::fromTranslation(Vec3{0.0, 0.0, -0.5});
    j.angularLower = lower;
    j.angularUpper = upper;
    Result<JointId> id = world->createJoint(j);
    EXPECT_TRUE(id.ok()) << (id.ok() ? "" : id.error());
    joint = id.ok() ? *id : JointId{};
  }
  Vec3 angles() const { return jointAngles(world->jointRelativeRotation(joint)); }
};

// Turning B by +t about the joint's X reads +t, and the limit stops it at its upper value: a
// sign flipped anywhere (rows, angles, body order) lets it fall past 0.4 rad or stops it at -0.4.
TEST(OdeJoint, LimitStopsAtTheUpperAngleWithTheInterfaceSign) {
  Lever lever(Vec3{-1.0, 0.0, 0.0}, Vec3{0.4, 0.0, 0.0});
  for (int i = 0; i < 240; ++i) lever.world->step(kDt, 2);
  const Vec3 a = lever.angles();
  std::printf("[ figure ] angles at rest (%.4f %.4f %.4f) rad, anchor gap %.2e m\n", a.x, a.y, a.z,
              lever.world->jointAnchorSeparation(lever.joint));
  EXPECT_NEAR(a.x, 0.4, 0.01);
  EXPECT_NEAR(a.y, 0.0, 0.005);
  EXPECT_NEAR(a.z, 0.0, 0.005);
  EXPECT_LT(lever.world->jointAnchorSeparation(lever.joint), 1e-3);
  // The body sits where Rx(0.4) puts it: below the joint's XZ plane.
  const Vec3 p = lever.world->transform(lever.b).translation;
  EXPECT_NEAR(p.y, -0.5 * std::sin(0.4), 0.005);
  EXPECT_NEAR(p.z, 0.5 * std::cos(0.4), 0.005);
}

// The same lever with the limit [-1, -0.2]: B is first pushed up to -0.2 (the lower stop acts
// from the start, at angle 0 > upper) and rests there.
TEST(OdeJoint, LimitOnTheNegativeSide) {
  Lever lever(Vec3{-1.0, 0.0, 0.0}, Vec3{-0.2, 0.0, 0.0});
  for (int i = 0; i < 240; ++i) lever.world->step(kDt, 2);
  EXPECT_NEAR(lever.angles().x, -0.2, 0.01);
}

// The Y axis: the lever's joint frame turned so that gravity turns B about the joint's Y; the
// limit on Y stops it at +0.3 (a pure rotation of B by +t about Y reads +t).
TEST(OdeJoint, YLimitSign) {
  WorldSettings ws;
  ws.gravity = Vec3{0.0, 0.0, -9.81};  // Ry(t) takes +X toward -Z: gravity turns B by +t about Y
  auto world = createOdeWorld(ws);
  BodyDesc da;
  da.shape.type = ShapeType::Box;
  da.shape.halfExtents = Vec3{0.05};
  da.motion = MotionType::Static;
  const BodyId a = *world->createBody(da);
  BodyDesc db;
  db.shape.type = ShapeType::Sphere;
  db.shape.radius = 0.05;
  db.inertia = Vec3{1e-3};
  db.worldFromBody = Transform::fromTranslation(Vec3{0.5, 0.0, 0.0});
  const BodyId b = *world->createBody(db);
  JointDesc j;
  j.bodyA = a;
  j.bodyB = b;
  j.bodyBFromJoint = Transform::fromTranslation(Vec3{-0.5, 0.0, 0.0});
  j.angularLower = Vec3{0.0, -1.0, 0.0};
  j.angularUpper = Vec3{0.0, 0.3, 0.0};
  const JointId joint = *world->createJoint(j);
  for (int i = 0; i < 240; ++i) world->step(kDt, 2);
  const Vec3 angles = jointAngles(world->jointRelativeRotation(joint));
  std::printf("[ figure ] Y lever at rest: angles (%.4f %.4f %.4f)\n", angles.x, angles.y, angles.z);
  EXPECT_NEAR(angles.y, 0.3, 0.01);
  EXPECT_NEAR(angles.x, 0.0, 0.005);
  EXPECT_NEAR(angles.z, 0.0, 0.005);
}

// The servo as an implicit spring: the lever with X free held by a motor of stiffness Kp toward
// angle 0 settles where the spring's torque balances gravity's, Kp t = m g l cos t.
TEST(OdeJoint, MotorStiffnessBalancesGravity) {
  for (double kp : {20.0, 50.0, 200.0}) {
    Lever lever(Vec3{1.0, 0.0, 0.0}, Vec3{-1.0, 0.0, 0.0});  // X free, Y and Z locked
    JointMotorSettings m;
    m.enabled = true;
    m.stiffness = Vec3{kp, 0.0, 0.0};
    m.damping = Vec3{2.0, 0.0, 0.0};
    lever.world->setJointMotor(lever.joint, m);
    for (int i = 0; i < 600; ++i) lever.world->step(kDt, 2);
    const double t = lever.angles().x;
    const double residual = kp * t - 1.0 * 9.81 * 0.5 * std::cos(t);
    std::printf("[ figure ] Kp %.0f: angle %.5f rad, Kp t - m g l cos t = %.4f N m\n", kp, t, residual);
    EXPECT_GT(t, 0.0);
    EXPECT_NEAR(residual, 0.0, 0.01 * 9.81 * 0.5);
  }
}

// A joint breaks in the substep its force passes breakForce: the lever's weight (about 9.8 N
// plus the swing's centripetal load) breaks a 5 N joint and not a 100 N one.
TEST(OdeJoint, BreaksAboveItsForce) {
  for (double limit : {5.0, 100.0}) {
    auto world = createOdeWorld();
    BodyDesc da;
    da.shape.type = ShapeType::Box;
    da.shape.halfExtents = Vec3{0.05};
    da.motion = MotionType::Static;
    const BodyId a = *world->createBody(da);
    BodyDesc db;
    db.shape.type = ShapeType::Sphere;
    db.shape.radius = 0.05;
    db.worldFromBody = Transform::fromTranslation(Vec3{0.0, -0.5, 0.0});
    const BodyId b = *world->createBody(db);
    JointDesc j;
    j.bodyA = a;
    j.bodyB = b;
    j.bodyBFromJoint = Transform::fromTranslation(Vec3{0.0, 0.5, 0.0});
    j.angularLower = Vec3{1.0};
    j.angularUpper = Vec3{-1.0};
    j.breakForce = limit;
    const JointId joint = *world->createJoint(j);
    for (int i = 0; i < 30; ++i) world->step(kDt, 2);
    const JointBreakState s = world->jointBreakState(joint);
    std::printf("[ figure ] breakForce %.0f N: broken %d, force %.3f N\n", limit, s.broken ? 1 : 0, s.force);
    EXPECT_EQ(s.broken, limit < 9.0);
    if (!s.broken) {
      EXPECT_NEAR(s.force, 9.81, 0.05);
    }
    // A broken joint holds nothing: the sphere falls.
    if (s.broken) {
      EXPECT_LT(world->transform(b).translation.y, -1.0);
    }
  }
}

// A violent tangential hit (20 N s on the 1 kg lever end: 40 rad/s about the anchor) opens the anchor further
// than the rows close in one substep; the projection (OdeSettings::anchorProjection, 5 mm) brings it back to
// 5 mm after every substep. Without it the gap after the hit is printed and must exceed 5 mm (the test sees
// the projection acting).
TEST(OdeJoint, AnchorProjectionClosesAViolentGap) {
  double gaps[2] = {0.0, 0.0};
  for (int on = 0; on < 2; ++on) {
    OdeSettings ode;
    ode.anchorProjection = on ? 0.005 : 0.0;
    Lever lever(Vec3{1.0}, Vec3{-1.0}, ode);  // a free ball joint
    lever.world->applyLinearImpulse(lever.b, Vec3{0.0, -20.0, 0.0},
                                    lever.world->transform(lever.b).translation);
    for (int i = 0; i < 3; ++i) {
      lever.world->step(kDt, 1);
      gaps[on] = std::max(gaps[on], lever.world->jointAnchorSeparation(lever.joint));
    }
  }
  std::printf("[ figure ] largest anchor gap after the hit: %.2f mm without projection, %.4f mm with\n",
              1e3 * gaps[0], 1e3 * gaps[1]);
  EXPECT_GT(gaps[0], 0.005);
  EXPECT_LE(gaps[1], 0.005 + 1e-9);
}

// The passive damper of a full ragdoll (a motor with damping Kd only) is the interface's implicit
// damper tau = -Kd w' on each joint: what it takes out of a swinging chain is sum Kd |w_rel|^2 h
// over the substeps, whatever the other forces. A chain of three capsules (4, 2, 1 kg, 0.4 m)
// hangs from a kinematic block, starts horizontal with its tip swung sideways and falls for 0.3 s
// under gravity, with dampers Kd = rate (I + m l^2) (the core's CharacterSettings::
// ragdollJointDamping rule) and without: the extra energy lost with them must be that sum
// (measured 0.96 of it at rate 1 and 3: the sum uses the end-of-substep rates of a different
// trajectory). docs/SCENARIOS.md: a damper taking several times its sum is what run_handoff's
// no_explosion_2s margin on another engine rests on.
TEST(OdeJoint, DamperTakesWhatItsDampingSays) {
  const double h = kDt / 2.0;
  for (double rate : {1.0, 3.0}) {
    double lost[2] = {0.0, 0.0};
    double dissipated = 0.0;  // sum Kd |w_rel|^2 h of the damped run
    for (int damped = 0; damped < 2; ++damped) {
      auto world = createOdeWorld();
      const double masses[4] = {10.0, 4.0, 2.0, 1.0};
      const double length = 0.4;
      BodyId bodies[4];
      for (int i = 0; i < 4; ++i) {
        BodyDesc d;
        d.shape.type = ShapeType::Capsule;
        d.shape.radius = 0.05;
        d.shape.halfHeight = length / 2.0 - 0.05;
        d.motion = i == 0 ? MotionType::Kinematic : MotionType::Dynamic;
        d.mass = masses[i];
        d.worldFromBody =
            Transform{glm::angleAxis(0.5 * kPi, Vec3{0.0, 0.0, 1.0}), Vec3{i * length, 2.0, 0.0}};
        d.filter = CollisionFilter{0, 0};
        bodies[i] = ode_test::mustCreate(*world, d);
      }
      JointId joints[3];
      double kd[3];
      for (int i = 0; i < 3; ++i) {
        JointDesc j;
        j.bodyA = bodies[i];
        j.bodyB = bodies[i + 1];
        j.bodyAFromJoint = Transform::fromTranslation(Vec3{0.0, -length / 2.0, 0.0});
        j.bodyBFromJoint = Transform::fromTranslation(Vec3{0.0, length / 2.0, 0.0});
        j.angularLower = Vec3{1.0};
        j.angularUpper = Vec3{-1.0};  // free: only the damper acts
        joints[i] = *world->createJoint(j);
        const glm::dmat3 inertia = world->worldInertia(bodies[i + 1]);
        const double lever = length / 2.0;
        kd[i] =
            rate * (std::max({inertia[0][0], inertia[1][1], inertia[2][2]}) + masses[i + 1] * lever * lever);
        if (damped) {
          JointMotorSettings m;
          m.enabled = true;
          m.damping = Vec3{kd[i]};
          world->setJointMotor(joints[i], m);
        }
      }
      world->setAngularVelocity(bodies[3], Vec3{0.0, 6.0, 0.0});
      const auto energy = [&] {
        double e = 0.0;
        for (int i = 1; i < 4; ++i) {
          const Vec3 v = world->linearVelocity(bodies[i]);
          const Vec3 w = world->angularVelocity(bodies[i]);
          e += 0.5 * masses[i] * glm::dot(v, v) + 0.5 * glm::dot(w, world->worldInertia(bodies[i]) * w) +
               masses[i] * ode_test::kG * world->transform(bodies[i]).translation.y;
        }
        return e;
      };
      const double start = energy();
      for (int n = 0; n < 36; ++n) {
        world->step(h, 1);
        for (int i = 0; i < 3 && damped; ++i) {
          const Vec3 w = world->angularVelocity(bodies[i + 1]) - world->angularVelocity(bodies[i]);
          dissipated += kd[i] * glm::dot(w, w) * h;
        }
      }
      lost[damped] = start - energy();
    }
    const double taken = lost[1] - lost[0];
    std::printf("[ figure ] rate %.0f /s: the dampers take %.3f J; sum Kd |w_rel|^2 h %.3f J (ratio %.3f)\n",
                rate, taken, dissipated, taken / dissipated);
    EXPECT_NEAR(taken / dissipated, 1.0, 0.1);
  }
}

TEST(OdeJoint, RefusesBadInput) {
  Lever lever(Vec3{0.0}, Vec3{0.0});
  JointDesc j;
  j.bodyA = lever.a;
  j.bodyB = lever.b;
  j.angularLower = Vec3{0.0, -2.0, 0.0};
  j.angularUpper = Vec3{0.0, 2.0, 0.0};
  Result<JointId> r = lever.world->createJoint(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("about y"), std::string::npos) << r.error();
  j.angularLower = Vec3{0.0};
  j.angularUpper = Vec3{0.0};
  j.bodyA = lever.b;
  j.bodyB = lever.a;  // a static child
  r = lever.world->createJoint(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("static"), std::string::npos) << r.error();
  j.bodyA = lever.a;
  j.bodyB = lever.b;
  j.bodyBFromJoint.rotation = Quat{0.0, 0.0, 0.0, 0.0};
  r = lever.world->createJoint(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("bodyBFromJoint.rotation must be a unit quaternion"), std::string::npos)
      << r.error();
  EXPECT_EQ(lever.world->jointCount(), 1);
  ConvexHullDesc hull;
  const Result<ShapeId> s = lever.world->createShape(hull);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("not supported"), std::string::npos);
}

}  // namespace
}  // namespace handoff
