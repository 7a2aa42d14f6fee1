// Conformance checks of single bodies: mass properties, gravity, kinematic moves, motion type
// switches, impulses and momentum (PhysicsWorld's "Per-step state" in handoff/physics.h).
#include "handoff/physics.h"
#include "physics_conformance/conformance_internal.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace handoff::conformance::detail {
namespace {

/// Largest entry of |a - b| and of |b|.
double matrixOff(const glm::dmat3& a, const glm::dmat3& b, double* scale) {
  double off = 0.0;
  *scale = 0.0;
  for (int c = 0; c < 3; ++c) {
    for (int r = 0; r < 3; ++r) {
      off = std::max(off, std::abs(a[c][r] - b[c][r]));
      *scale = std::max(*scale, std::abs(b[c][r]));
    }
  }
  return off;
}

const char* motionName(MotionType motion) {
  return motion == MotionType::Static ? "Static" : motion == MotionType::Kinematic ? "Kinematic" : "Dynamic";
}

glm::dmat3 expectedWorldInertia(const Quat& rotation, const Vec3& principal) {
  const glm::dmat3 r = glm::mat3_cast(rotation);
  glm::dmat3 d(0.0);
  d[0][0] = principal.x;
  d[1][1] = principal.y;
  d[2][2] = principal.z;
  return r * d * glm::transpose(r);
}

// mass() is BodyDesc::mass, also while kinematic; worldInertia() is R I_C R^T with I_C from the
// shape (shapePrincipalInertia, inertia = 0) or as given. Exact up to float rounding.
void massAndInertia(Probe& probe) {
  auto world = probe.world(WorldSettings{.gravity = Vec3{0.0}});
  const Quat q = glm::angleAxis(0.7, glm::normalize(Vec3{1.0, 2.0, 3.0}));
  const BodyDesc capsule = capsuleBody(0.1, 0.2, 3.0, Transform{q, Vec3{0.0, 1.0, 0.0}});
  const BodyId c = mustCreate(*world, capsule, "capsule");
  BodyDesc box = boxBody(Vec3{0.2, 0.1, 0.3}, 2.0, Transform{q, Vec3{2.0, 1.0, 0.0}});
  box.inertia = Vec3{0.05, 0.07, 0.02};
  box.motion = MotionType::Kinematic;
  const BodyId b = mustCreate(*world, box, "kinematic box with its own inertia");
  probe.near("capsule mass", world->mass(c), 3.0, 3.0 * kFloatRelative, "kg");
  probe.near("kinematic box mass", world->mass(b), 2.0, 2.0 * kFloatRelative, "kg");
  double scale = 0.0;
  const double offC = matrixOff(world->worldInertia(c),
                                expectedWorldInertia(q, shapePrincipalInertia(capsule.shape, 3.0)), &scale);
  probe.atMost("capsule world inertia, largest entry off R I_C R^T", offC, scale * kFloatRelative, "kg m^2");
  const double offB = matrixOff(world->worldInertia(b), expectedWorldInertia(q, box.inertia), &scale);
  probe.atMost("box world inertia (BodyDesc::inertia given), largest entry off", offB, scale * kFloatRelative,
               "kg m^2");
}

// Free fall from rest: v = -g t; the drop is g t^2 / 2 up to the integrator's first-order term
// (semi-implicit Euler drops g t h / 2 more, explicit Euler as much less; h the substep), so the
// drop's tolerance is g t h.
void freeFall(Probe& probe) {
  auto world = probe.world();
  const BodyId ball = mustCreate(*world, sphereBody(0.1, 1.0, Vec3{0.0, 10.0, 0.0}), "ball");
  const int steps = 30;
  stepFor(*world, steps);
  const double t = steps * kDt;
  const double h = kDt / kSubsteps;
  probe.near("speed after 0.5 s", world->linearVelocity(ball).y, -kGravity * t, kGravity * t * kFloatRelative,
             "m/s");
  probe.near("drop after 0.5 s", 10.0 - world->transform(ball).translation.y, 0.5 * kGravity * t * t,
             kGravity * t * h, "m");
  probe.nearVec("horizontal drift",
                Vec3{world->transform(ball).translation.x, 0.0, world->transform(ball).translation.z},
                Vec3{0.0}, 1e-9, "m");
}

// moveKinematic(body, target, dt): after the step the body is at the target and reports the
// velocity that took it there, (target - start) / dt and the short arc's angular velocity
// (SPEC.md section 3). Tolerances: a float pose is rounded by 6e-8 relative (1e-7 m at 1 m, 1e-7
// rad), which divided by dt = 1/60 s is below 1e-5 m/s or rad/s; 1e-4 keeps a factor 10. Then the
// handoff's own use: switched to dynamic, the body keeps that velocity and moves on with it.
void kinematicMoveGivesVelocity(Probe& probe) {
  auto world = probe.world(WorldSettings{.gravity = Vec3{0.0}});
  BodyDesc d = capsuleBody(0.1, 0.2, 1.0, Transform::fromTranslation(Vec3{0.0, 1.0, 0.0}));
  d.motion = MotionType::Kinematic;
  const BodyId body = mustCreate(*world, d, "kinematic capsule");
  Transform pose = world->transform(body);
  double worstPosition = 0.0, worstAngle = 0.0, worstLinear = 0.0, worstAngular = 0.0;
  Vec3 v{0.0}, w{0.0};
  for (int i = 0; i < 10; ++i) {
    const Transform target{glm::angleAxis(0.05, glm::normalize(Vec3{1.0, 2.0, 0.5})) * pose.rotation,
                           pose.translation + Vec3{0.03, 0.01 * std::sin(i * 0.3), -0.02}};
    world->moveKinematic(body, target, kDt);
    world->step(kDt, kSubsteps);
    const Transform now = world->transform(body);
    v = (target.translation - pose.translation) / kDt;
    w = angularVelocity(pose.rotation, target.rotation, kDt).omega;
    worstPosition = std::max(worstPosition, glm::length(now.translation - target.translation));
    worstAngle = std::max(worstAngle, angleBetween(now.rotation, target.rotation));
    worstLinear = std::max(worstLinear, glm::length(world->linearVelocity(body) - v));
    worstAngular = std::max(worstAngular, glm::length(world->angularVelocity(body) - w));
    pose = now;
  }
  probe.atMost("10 moves: largest distance from the target after the step", worstPosition, 1e-5, "m");
  probe.atMost("largest angle from the target", worstAngle, 1e-5, "rad");
  probe.atMost("largest error of the reported velocity, (target - start) / dt = " + fmt(v) + " m/s",
               worstLinear, 1e-4, "m/s");
  probe.atMost("largest error of the reported angular velocity, short arc / dt = " + fmt(w) + " rad/s",
               worstAngular, 1e-4, "rad/s");
  world->setMotionType(body, MotionType::Dynamic);
  probe.nearVec("velocity kept when switched to dynamic", world->linearVelocity(body), v, 1e-4, "m/s");
  const Vec3 before = world->transform(body).translation;
  world->step(kDt, kSubsteps);
  probe.nearVec("next step's displacement as dynamic", world->transform(body).translation - before, v * kDt,
                1e-4 * kDt + 1e-6, "m");
}

// "The engine derives its velocity and pushes what it touches (no teleport)": a kinematic pusher
// moving at 2 m/s into a box resting on the ground. A box pushed by a moving face (restitution 0)
// moves with the face; 0.8 of its speed allows for the contact's slop and the ground's friction,
// 2.5 times would be a teleport's depenetration kick. The pusher itself is never pushed back.
void kinematicMovePushes(Probe& probe) {
  auto world = probe.world();
  world->addGroundPlane(Vec3{0.0, 1.0, 0.0}, 0.0);
  BodyDesc pusherDesc = boxBody(Vec3{0.1, 0.3, 0.5}, 5.0, Transform::fromTranslation(Vec3{-0.5, 0.35, 0.0}));
  pusherDesc.motion = MotionType::Kinematic;
  const BodyId pusher = mustCreate(*world, pusherDesc, "kinematic pusher");
  const BodyId box = mustCreate(
      *world, boxBody(Vec3{0.2}, 1.0, Transform::fromTranslation(Vec3{0.0, 0.2, 0.0})), "pushed box");
  stepFor(*world, 30);
  const double speed = 2.0;
  double maxBoxSpeed = 0.0;
  for (int i = 0; i < 30; ++i) {
    const Transform p = world->transform(pusher);
    world->moveKinematic(pusher, Transform{p.rotation, p.translation + Vec3{speed * kDt, 0.0, 0.0}}, kDt);
    world->step(kDt, kSubsteps);
    maxBoxSpeed = std::max(maxBoxSpeed, world->linearVelocity(box).x);
  }
  probe.atLeast("pushed box's top speed (pusher 2 m/s)", maxBoxSpeed, 0.8 * speed, "m/s");
  probe.atMost("pushed box's top speed", maxBoxSpeed, 2.5 * speed, "m/s");
  probe.atLeast("box's x after 0.5 s of pushing (pusher's face reaches 0.5 m)",
                world->transform(box).translation.x, 0.5, "m");
  probe.near("pusher's x (30 moves of 3.33 cm)", world->transform(pusher).translation.x,
             -0.5 + 30 * speed * kDt, 1e-4, "m");
}

// A kinematic body without a move holds still under gravity with zero velocity, and impulses on it
// do nothing (zero inverse mass; PhysicsWorld::applyLinearImpulse: "no effect on static or
// kinematic ones"). Exact: nothing should touch its state.
void kinematicHolds(Probe& probe) {
  auto world = probe.world();
  BodyDesc d =
      boxBody(Vec3{0.2, 0.1, 0.3}, 2.0, Transform{glm::angleAxis(0.3, Vec3{0.0, 0.0, 1.0}), Vec3{0, 5, 0}});
  d.motion = MotionType::Kinematic;
  const BodyId body = mustCreate(*world, d, "kinematic box");
  const Transform start = world->transform(body);
  world->applyLinearImpulse(body, Vec3{10.0, 0.0, 0.0}, start.translation + Vec3{0.0, 0.1, 0.0});
  world->applyAngularImpulse(body, Vec3{0.0, 10.0, 0.0});
  stepFor(*world, 60);
  probe.nearVec("position after 1 s (gravity on, impulses applied)", world->transform(body).translation,
                start.translation, 1e-6, "m");
  probe.atMost("rotation change", angleBetween(world->transform(body).rotation, start.rotation), 1e-6, "rad");
  probe.nearVec("velocity", world->linearVelocity(body), Vec3{0.0}, 1e-9, "m/s");
  probe.nearVec("angular velocity", world->angularVelocity(body), Vec3{0.0}, 1e-9, "rad/s");
  probe.holds("motionType()", world->motionType(body) == MotionType::Kinematic,
              std::string(motionName(world->motionType(body))) + " (Kinematic expected)");
  const StepStats& stats = world->lastStepStats();
  probe.holds("StepStats kinematic / dynamic bodies", stats.kinematicBodies == 1 && stats.dynamicBodies == 0,
              std::to_string(stats.kinematicBodies) + " / " + std::to_string(stats.dynamicBodies) +
                  " (1 / 0 expected)");
}

// setMotionType keeps pose and velocities both ways (dynamic -> kinematic -> dynamic), and mass and
// inertia come back. Pose and velocities are the body's own stored state: only float rounding of
// what was set. After switching back, one step without gravity moves it by v dt.
void motionSwitchKeepsState(Probe& probe) {
  auto world = probe.world(WorldSettings{.gravity = Vec3{0.0}});
  const Transform pose{glm::angleAxis(0.4, glm::normalize(Vec3{0.3, 1.0, -0.2})), Vec3{0.5, 2.0, -0.3}};
  const BodyId body = mustCreate(*world, boxBody(Vec3{0.2, 0.1, 0.3}, 2.0, pose), "box");
  world->setLinearVelocity(body, Vec3{1.0, -0.5, 0.3});
  world->setAngularVelocity(body, Vec3{0.4, 1.0, -0.2});
  const Vec3 v = world->linearVelocity(body);
  const Vec3 w = world->angularVelocity(body);
  const Transform before = world->transform(body);
  const glm::dmat3 inertia = world->worldInertia(body);
  world->setMotionType(body, MotionType::Kinematic);
  probe.holds("motionType() after the switch", world->motionType(body) == MotionType::Kinematic,
              std::string(motionName(world->motionType(body))) + " (Kinematic expected)");
  probe.nearVec("position after switching to kinematic", world->transform(body).translation,
                before.translation, 1e-6, "m");
  probe.atMost("rotation change", angleBetween(world->transform(body).rotation, before.rotation), 1e-6,
               "rad");
  probe.nearVec("velocity after switching to kinematic", world->linearVelocity(body), v,
                kFloatRelative * glm::length(v), "m/s");
  probe.nearVec("angular velocity after switching to kinematic", world->angularVelocity(body), w,
                kFloatRelative * glm::length(w), "rad/s");
  world->setMotionType(body, MotionType::Dynamic);
  probe.nearVec("velocity after switching back to dynamic", world->linearVelocity(body), v,
                kFloatRelative * glm::length(v), "m/s");
  probe.nearVec("angular velocity after switching back", world->angularVelocity(body), w,
                kFloatRelative * glm::length(w), "rad/s");
  double scale = 0.0;
  probe.atMost("world inertia after the round trip, largest entry off",
               matrixOff(world->worldInertia(body), inertia, &scale), scale * kFloatRelative, "kg m^2");
  const Vec3 start = world->transform(body).translation;
  world->step(kDt, kSubsteps);
  probe.nearVec("next step's displacement", world->transform(body).translation - start, v * kDt, 1e-6, "m");
}

// An impulse J at a point p changes v by J / m and w by I^-1 ((p - x) x J); an angular impulse L
// changes w by I^-1 L. Read after one step without gravity or damping: a sphere (isotropic
// inertia, so no precession) and a capsule turned about one of its principal axes (set in world
// space through the body's rotation). Static bodies ignore impulses. Float rounding only.
void impulseResponse(Probe& probe) {
  auto world = probe.world(WorldSettings{.gravity = Vec3{0.0}});
  const BodyDesc sphere = sphereBody(0.2, 2.0, Vec3{0.0, 1.0, 0.0});
  const BodyId ball = mustCreate(*world, sphere, "sphere");
  const Vec3 j{0.3, 1.2, -0.5};
  const Vec3 arm{0.1, 0.05, -0.15};
  world->applyLinearImpulse(ball, j, sphere.worldFromBody.translation + arm);
  const Quat q = glm::angleAxis(0.9, glm::normalize(Vec3{-1.0, 2.0, 0.5}));
  const BodyDesc capsule = capsuleBody(0.1, 0.3, 1.5, Transform{q, Vec3{2.0, 1.0, 0.0}});
  const BodyId cap = mustCreate(*world, capsule, "capsule");
  const Vec3 principal = shapePrincipalInertia(capsule.shape, 1.5);
  const Vec3 l = q * Vec3{0.0, 0.0, 0.02};  // about the capsule's own Z (transverse)
  world->applyAngularImpulse(cap, l);
  const BodyId wall = world->addStaticBox(Transform::fromTranslation(Vec3{-3.0, 1.0, 0.0}), Vec3{0.5});
  world->applyLinearImpulse(wall, Vec3{100.0, 0.0, 0.0}, Vec3{-3.0, 1.5, 0.0});
  world->step(kDt, kSubsteps);
  const Vec3 dv = j / 2.0;
  const double iSphere = shapePrincipalInertia(sphere.shape, 2.0).x;
  const Vec3 dw = glm::cross(arm, j) / iSphere;
  probe.nearVec("sphere velocity, J / m", world->linearVelocity(ball), dv, kFloatRelative * glm::length(dv),
                "m/s");
  probe.nearVec("sphere angular velocity, I^-1 (r x J)", world->angularVelocity(ball), dw,
                kFloatRelative * glm::length(dw), "rad/s");
  const Vec3 dwCap = l / principal.z;
  probe.nearVec("capsule angular velocity, I^-1 L about its Z axis", world->angularVelocity(cap), dwCap,
                kFloatRelative * glm::length(dwCap), "rad/s");
  probe.nearVec("capsule velocity (an angular impulse moves nothing)", world->linearVelocity(cap), Vec3{0.0},
                1e-9, "m/s");
  probe.nearVec("static box after an impulse", world->transform(wall).translation, Vec3{-3.0, 1.0, 0.0}, 1e-9,
                "m");
}

// Impulses between bodies are equal and opposite: contacts and joints conserve the total linear
// momentum, and (applied at one point) the angular momentum. A ball hits a heavier ball off-centre,
// and a jointed pair is struck off-centre, both without gravity and damping. Linear momentum is
// conserved to float rounding (1e-5 relative). Angular momentum has a tolerance of 1 %: an engine's
// integration of a free tumbling body (gyroscopic term) and its position correction of a joint
// (the anchors a few 0.1 mm apart, so equal impulses have different lever arms) change it slightly.
Vec3 angularMomentum(const PhysicsWorld& world, BodyId body) {
  const Transform t = world.transform(body);
  return glm::cross(t.translation, world.mass(body) * world.linearVelocity(body)) +
         world.worldInertia(body) * world.angularVelocity(body);
}

void momentumConserved(Probe& probe) {
  {
    auto world = probe.world(WorldSettings{.gravity = Vec3{0.0}});
    const BodyId a = mustCreate(*world, sphereBody(0.2, 1.0, Vec3{0.0, 1.0, 0.0}), "moving ball");
    const BodyId b = mustCreate(*world, sphereBody(0.3, 3.0, Vec3{1.0, 1.15, 0.05}), "ball at rest");
    world->setLinearVelocity(a, Vec3{2.0, 0.0, 0.0});
    const Vec3 p0 = world->mass(a) * world->linearVelocity(a);
    const Vec3 l0 = angularMomentum(*world, a) + angularMomentum(*world, b);
    stepFor(*world, 60);
    const Vec3 p1 = world->mass(a) * world->linearVelocity(a) + world->mass(b) * world->linearVelocity(b);
    const Vec3 l1 = angularMomentum(*world, a) + angularMomentum(*world, b);
    probe.atLeast("struck ball's speed (they did collide)", glm::length(world->linearVelocity(b)), 0.3,
                  "m/s");
    probe.nearVec("collision: total momentum", p1, p0, kFloatRelative * glm::length(p0), "N s");
    probe.nearVec("collision: total angular momentum about the origin", l1, l0, 0.01 * glm::length(l0),
                  "N m s");
  }
  {
    auto world = probe.world(WorldSettings{.gravity = Vec3{0.0}});
    const BodyId a = mustCreate(
        *world, capsuleBody(0.06, 0.2, 3.0, Transform::fromTranslation(Vec3{0, 10, 0})), "upper capsule");
    const BodyId b = mustCreate(
        *world, capsuleBody(0.05, 0.15, 1.5, Transform::fromTranslation(Vec3{0.0, 10.0 - 0.46, 0.0})),
        "lower capsule");
    JointDesc j = jointAt(*world, a, b, Vec3{0.0, 10.0 - 0.26, 0.0});
    j.angularLower = Vec3{1.0};
    j.angularUpper = Vec3{-1.0};  // free: a ball joint
    mustCreate(*world, j, "ball joint");
    const Vec3 impulse{0.0, 0.5, 2.0};
    world->applyLinearImpulse(a, impulse, Vec3{0.05, 10.1, 0.0});
    world->step(kDt, kSubsteps);
    const auto total = [&] {
      return world->mass(a) * world->linearVelocity(a) + world->mass(b) * world->linearVelocity(b);
    };
    const Vec3 l0 = angularMomentum(*world, a) + angularMomentum(*world, b);
    stepFor(*world, 60);
    probe.nearVec("jointed pair: total momentum after the strike and 1 s", total(), impulse,
                  kFloatRelative * glm::length(impulse), "N s");
    probe.nearVec("jointed pair: total angular momentum over 1 s",
                  angularMomentum(*world, a) + angularMomentum(*world, b), l0, 0.01 * glm::length(l0),
                  "N m s");
  }
}

// setTransform teleports: the body is at the new pose at once and gets no velocity from the jump
// (a ball at rest stays at rest, and stays where it was put through a step without gravity).
void teleport(Probe& probe) {
  auto world = probe.world(WorldSettings{.gravity = Vec3{0.0}});
  const BodyId ball = mustCreate(*world, sphereBody(0.1, 1.0, Vec3{0.0, 1.0, 0.0}), "ball at rest");
  stepFor(*world, 2);
  const Transform target{glm::angleAxis(0.8, glm::normalize(Vec3{1.0, 1.0, 0.0})), Vec3{3.0, 2.0, 1.0}};
  world->setTransform(ball, target);
  probe.nearVec("position right after setTransform", world->transform(ball).translation, target.translation,
                1e-6, "m");
  probe.atMost("  rotation", angleBetween(world->transform(ball).rotation, target.rotation), 1e-6, "rad");
  probe.nearVec("  velocity (no derived velocity)", world->linearVelocity(ball), Vec3{0.0}, 1e-9, "m/s");
  probe.nearVec("  angular velocity", world->angularVelocity(ball), Vec3{0.0}, 1e-9, "rad/s");
  stepFor(*world, 1);
  probe.nearVec("position after a step", world->transform(ball).translation, target.translation, 1e-6, "m");
}

// WorldSettings::worldHalfExtent: a body that leaves it is disabled after that step and counted in
// StepStats::bodiesLeftWorld for that step only; a body inside stays. A 50 m world, a ball at
// z = 45 m at 600 m/s (10 m a step).
void leavesWorld(Probe& probe) {
  WorldSettings settings;
  settings.gravity = Vec3{0.0};
  settings.worldHalfExtent = 50.0;
  auto world = probe.world(settings);
  const BodyId fast = mustCreate(*world, sphereBody(0.1, 1.0, Vec3{0.0, 1.0, 45.0}), "fast ball");
  const BodyId still = mustCreate(*world, sphereBody(0.1, 1.0, Vec3{0.0, 1.0, 0.0}), "ball at rest");
  world->setLinearVelocity(fast, Vec3{0.0, 0.0, 600.0});
  stepFor(*world, 1);
  probe.near("StepStats::bodiesLeftWorld of the step it left", world->lastStepStats().bodiesLeftWorld, 1,
             0.0);
  probe.holds("the ball that left is disabled", !world->isEnabled(fast),
              world->isEnabled(fast) ? "enabled" : "disabled");
  probe.holds("the ball inside stays enabled", world->isEnabled(still),
              world->isEnabled(still) ? "enabled" : "disabled");
  stepFor(*world, 1);
  probe.near("bodiesLeftWorld of the next step", world->lastStepStats().bodiesLeftWorld, 0, 0.0);
}

// limitDepenetration: optional (false: not offered, and depenetrationLimited stays false). Offered,
// a box started 3 cm inside the ground is pushed out by position alone: it rises at most maxSpeed
// (0.3 m/s: 5 mm a step, 1 mm allowed for the contact's slop), is given no velocity beyond that
// (0.3 m/s), reaches its resting height, and the limit lifts by maxTime (0.5 s).
void limitDepenetrationCheck(Probe& probe) {
  auto world = probe.world();
  world->addGroundPlane(Vec3{0.0, 1.0, 0.0}, 0.0);
  const BodyId box =
      mustCreate(*world, boxBody(Vec3{0.2}, 1.0, Transform::fromTranslation(Vec3{0.0, 0.17, 0.0})),
                 "box 3 cm in the ground");
  const double maxSpeed = 0.3;
  const bool offered = world->limitDepenetration(box, maxSpeed, 0.5);
  if (!offered) {
    const bool limited = world->depenetrationLimited(box);
    probe.holds("limitDepenetration not offered (returned false): depenetrationLimited() false", !limited,
                limited ? "true" : "false");
    return;
  }
  const bool limited = world->depenetrationLimited(box);
  probe.holds("limitDepenetration offered (returned true): depenetrationLimited() right after", limited,
              limited ? "true" : "false");
  double worstRise = 0.0, worstSpeed = 0.0;
  double y = world->transform(box).translation.y;
  for (int i = 0; i < 60; ++i) {
    world->step(kDt, kSubsteps);
    const double now = world->transform(box).translation.y;
    worstRise = std::max(worstRise, now - y);
    worstSpeed = std::max(worstSpeed, world->linearVelocity(box).y);
    y = now;
  }
  probe.atMost("largest rise in a step", worstRise, maxSpeed * kDt + 1e-3, "m");
  probe.atMost("largest upward velocity", worstSpeed, maxSpeed, "m/s");
  probe.near("height after 1 s", y, 0.2, kRestTolerance, "m");
  const bool still = world->depenetrationLimited(box);
  probe.holds("limit lifted after 1 s (maxTime 0.5 s)", !still, still ? "still limited" : "lifted");
}

}  // namespace

std::vector<Check> bodyChecks() {
  return {
      {"body.mass_and_inertia", massAndInertia},
      {"body.free_fall", freeFall},
      {"kinematic.move_gives_velocity", kinematicMoveGivesVelocity},
      {"kinematic.move_pushes", kinematicMovePushes},
      {"kinematic.holds_without_move", kinematicHolds},
      {"motion.switch_keeps_pose_and_velocity", motionSwitchKeepsState},
      {"impulse.response", impulseResponse},
      {"impulse.momentum_conserved", momentumConserved},
      {"body.teleport", teleport},
      {"body.leaves_world", leavesWorld},
      {"body.limit_depenetration", limitDepenetrationCheck},
  };
}

}  // namespace handoff::conformance::detail
