// Conformance checks of joints: frames, the angle convention of jointAngles(), limits, locked and
// free axes, implicit motors (JointDesc, JointMotorSettings and the joint calls in
// handoff/physics.h).
#include "handoff/physics.h"
#include "physics_conformance/conformance_internal.h"

#include <algorithm>
#include <cmath>

namespace handoff::conformance::detail {
namespace {

// An arbitrary joint orientation and a turned parent: an adapter that mixes up a frame (T_CA_J for
// T_CB_J, world for body space) or the order of qRel fails the checks below.
const Quat kWorldFromJoint = glm::angleAxis(0.7, glm::normalize(Vec3{1.0, -2.0, 0.5}));
const Quat kParentRotation = glm::angleAxis(-0.5, glm::normalize(Vec3{0.2, 1.0, 0.3}));
constexpr double kFreeLower = 1.0, kFreeUpper = -1.0;  // lower > upper: free

const char* axisName(int axis) { return axis == 0 ? "x" : axis == 1 ? "y" : "z"; }

/// A static parent box and a dynamic capsule child hanging from it (axis along world -Y), jointed
/// at (0, 2, 0) with J oriented kWorldFromJoint. The caller sets the limits in `joint` before
/// creating it with makeJoint.
struct Hinge {
  std::unique_ptr<PhysicsWorld> world;
  BodyId parent, child;
  JointDesc desc;
  JointId joint;
};

Hinge makeHinge(Probe& probe, const WorldSettings& settings) {
  Hinge h;
  h.world = probe.world(settings);
  BodyDesc parent = boxBody(Vec3{0.1}, 1.0, Transform{kParentRotation, Vec3{0.0, 2.1, 0.0}});
  parent.motion = MotionType::Static;
  h.parent = mustCreate(*h.world, parent, "static parent");
  h.child =
      mustCreate(*h.world, capsuleBody(0.05, 0.2, 2.0, Transform::fromTranslation(Vec3{0.0, 1.75, 0.0})),
                 "child capsule");
  h.desc = jointAt(*h.world, h.parent, h.child, Vec3{0.0, 2.0, 0.0}, kWorldFromJoint);
  return h;
}

void makeJoint(Hinge& h) { h.joint = mustCreate(*h.world, h.desc, "joint"); }

/// Spins the child about a world axis through the anchor (its linear velocity made consistent).
void spinChild(Hinge& h, const Vec3& omega) {
  const Vec3 r = h.world->transform(h.child).translation - Vec3{0.0, 2.0, 0.0};
  h.world->setAngularVelocity(h.child, omega);
  h.world->setLinearVelocity(h.child, glm::cross(omega, r));
}

Vec3 anglesNow(const Hinge& h) { return jointAngles(relativeRotationFromPoses(*h.world, h.desc)); }

// The anchors stay together (the linear DoFs are locked), and jointAnchorSeparation() reports the
// distance the poses give. A free ball joint under gravity, its child's centre (0.25 m out) started
// at 8 rad/s (2 m/s), and a pair of dynamic bodies tumbling without gravity. 2 mm: a velocity
// solver keeps the anchors' relative velocity zero, the substep's integration leaves the circle by
// omega^2 r h^2 / 2 (0.6 mm here) and position correction pulls it back; 2 mm is a joint visibly
// coming apart.
void anchorsCoincide(Probe& probe) {
  Hinge h = makeHinge(probe, WorldSettings{});
  h.desc.angularLower = Vec3{kFreeLower};
  h.desc.angularUpper = Vec3{kFreeUpper};
  makeJoint(h);
  spinChild(h, Vec3{0.0, 0.0, 8.0});
  double worstPose = 0.0, worstReport = 0.0;
  for (int i = 0; i < 120; ++i) {
    stepFor(*h.world, 1);
    const double d = anchorDistanceFromPoses(*h.world, h.desc);
    worstPose = std::max(worstPose, d);
    worstReport = std::max(worstReport, std::abs(h.world->jointAnchorSeparation(h.joint) - d));
  }
  probe.atMost("pendulum, 2 s: largest anchor distance from the poses", worstPose, 2e-3, "m");

  auto world = probe.world(WorldSettings{.gravity = Vec3{0.0}});
  const BodyId a = mustCreate(
      *world, boxBody(Vec3{0.1, 0.15, 0.08}, 3.0, Transform{kParentRotation, Vec3{0, 5, 0}}), "box A");
  const BodyId b = mustCreate(
      *world, capsuleBody(0.05, 0.15, 1.5, Transform::fromTranslation(Vec3{0, 4.6, 0})), "capsule B");
  JointDesc j = jointAt(*world, a, b, Vec3{0.0, 4.8, 0.0}, kWorldFromJoint);
  j.angularLower = Vec3{-0.6};
  j.angularUpper = Vec3{0.6};
  const JointId joint = mustCreate(*world, j, "joint");
  world->setAngularVelocity(a, Vec3{0.0, 2.0, 6.0});
  world->setAngularVelocity(b, Vec3{3.0, 0.0, -4.0});
  double worst = 0.0;
  for (int i = 0; i < 60; ++i) {
    stepFor(*world, 1);
    const double d = anchorDistanceFromPoses(*world, j);
    worst = std::max(worst, d);
    worstReport = std::max(worstReport, std::abs(world->jointAnchorSeparation(joint) - d));
  }
  probe.atMost("tumbling pair, 1 s: largest anchor distance from the poses", worst, 2e-3, "m");
  probe.atMost("largest difference of jointAnchorSeparation() from it, both scenes", worstReport, 1e-5, "m");
}

// jointRelativeRotation() is qRel = inverse(qA_J) * qB_J from the bodies' poses (the order and the
// frames as JointDesc says), compared with the same product of transform() and the frames, up to
// float rounding of the rotations (1e-5 rad).
void relativeRotationFromPosesCheck(Probe& probe) {
  auto world = probe.world(WorldSettings{.gravity = Vec3{0.0}});
  const BodyId a = mustCreate(
      *world, boxBody(Vec3{0.1, 0.15, 0.08}, 3.0, Transform{kParentRotation, Vec3{0, 5, 0}}), "box A");
  const BodyId b = mustCreate(
      *world, capsuleBody(0.05, 0.15, 1.5, Transform::fromTranslation(Vec3{0, 4.6, 0})), "capsule B");
  JointDesc j = jointAt(*world, a, b, Vec3{0.0, 4.8, 0.0}, kWorldFromJoint);
  // B's frame turned by a known rotation: at creation qRel is that rotation.
  const Quat known = fromJointAngles(Vec3{0.2, -0.3, 0.25});
  j.bodyBFromJoint.rotation = j.bodyBFromJoint.rotation * known;
  j.angularLower = Vec3{-0.8};
  j.angularUpper = Vec3{0.8};
  const JointId joint = mustCreate(*world, j, "joint");
  probe.atMost("at creation: angle between jointRelativeRotation() and fromJointAngles(0.2, -0.3, 0.25)",
               angleBetween(world->jointRelativeRotation(joint), known), 1e-5, "rad");
  world->setAngularVelocity(a, Vec3{0.0, 2.0, 6.0});
  world->setAngularVelocity(b, Vec3{3.0, 0.0, -4.0});
  double worst = 0.0;
  for (int i = 0; i < 60; ++i) {
    stepFor(*world, 1);
    worst = std::max(worst,
                     angleBetween(world->jointRelativeRotation(joint), relativeRotationFromPoses(*world, j)));
  }
  probe.atMost("tumbling pair, 1 s: largest angle between jointRelativeRotation() and the poses' qRel", worst,
               1e-5, "rad");
}

// The sign of the convention: a joint whose only open axis k has limits [0.2, 0.5] starts at
// qRel = identity, outside them; its limit turns B into the window, so jointAngles(qRel) of the
// poses reads +0.2 to +0.5 on k (an adapter that builds the engine's constraint with the bodies or
// the angles the other way round limits -0.5 to -0.2 and turns B the wrong way). No gravity.
// Tolerance 0.02 rad: a limit solved by position correction rests within its slop of the bound.
void angleConventionSign(Probe& probe) {
  for (int axis = 0; axis < 3; ++axis) {
    Hinge h = makeHinge(probe, WorldSettings{.gravity = Vec3{0.0}});
    h.desc.angularLower[axis] = 0.2;
    h.desc.angularUpper[axis] = 0.5;
    makeJoint(h);
    stepFor(*h.world, 60);
    const Vec3 a = anglesNow(h);
    const std::string name =
        std::string("limits [0.2, 0.5] on ") + axisName(axis) + " only: angle " + axisName(axis);
    probe.atLeast(name, a[axis], 0.2 - 0.02, "rad");
    probe.atMost(name, a[axis], 0.5 + 0.02, "rad");
    for (int other = 0; other < 3; ++other) {
      if (other == axis) continue;
      probe.atMost(std::string("  locked ") + axisName(other) + ", |angle|", std::abs(a[other]), 0.02, "rad");
    }
  }
}

// Limits hold: +-0.4 rad on every axis, B spun at 3 rad/s about a diagonal of J. The angles, read
// from the poses every step, reach the bounds (>= 0.35 somewhere) and stay within 0.4 + 0.03: the
// limit is a hard stop, its overshoot one substep of travel (3 rad/s / 120 Hz = 0.025 rad).
void limitsHold(Probe& probe) {
  Hinge h = makeHinge(probe, WorldSettings{.gravity = Vec3{0.0}});
  h.desc.angularLower = Vec3{-0.4};
  h.desc.angularUpper = Vec3{0.4};
  makeJoint(h);
  spinChild(h, kWorldFromJoint * (glm::normalize(Vec3{1.0, 1.0, -1.0}) * 3.0));
  Vec3 largest{0.0};
  for (int i = 0; i < 60; ++i) {
    stepFor(*h.world, 1);
    const Vec3 a = anglesNow(h);
    for (int k = 0; k < 3; ++k) largest[k] = std::max(largest[k], std::abs(a[k]));
  }
  probe.atLeast("largest |angle| on any axis (the limits were reached)",
                std::max({largest.x, largest.y, largest.z}), 0.35, "rad");
  for (int k = 0; k < 3; ++k)
    probe.atMost(std::string("largest |angle| ") + axisName(k), largest[k], 0.4 + 0.03, "rad");
}

// lower == upper locks an axis, lower > upper frees it: with only axis k free, B spun at 2 rad/s
// about J's axis k turns 1 rad about it in 0.5 s (no damping: only float rounding and the locked
// rows' solver error, 0.02 rad), the locked axes stay within 0.02 rad.
void lockedAndFreeAxes(Probe& probe) {
  for (int axis = 0; axis < 3; ++axis) {
    Hinge h = makeHinge(probe, WorldSettings{.gravity = Vec3{0.0}});
    h.desc.angularLower[axis] = kFreeLower;
    h.desc.angularUpper[axis] = kFreeUpper;
    makeJoint(h);
    Vec3 local{0.0};
    local[axis] = 2.0;
    spinChild(h, kWorldFromJoint * local);
    stepFor(*h.world, 30);
    const Vec3 a = anglesNow(h);
    probe.near(std::string(axisName(axis)) + " free, spun 2 rad/s for 0.5 s: angle " + axisName(axis),
               a[axis], 1.0, 0.02, "rad");
    for (int other = 0; other < 3; ++other) {
      if (other == axis) continue;
      probe.atMost(std::string("  locked ") + axisName(other) + ", |angle|", std::abs(a[other]), 0.02, "rad");
    }
  }
}

// The implicit motor drives qRel to its target: all axes limited to +-1, target jointAngles
// (0.3, -0.2, 0.4), Kp 2000 N m/rad, Kd 100 N m s/rad on a 2 kg capsule (time constant Kd / Kp =
// 0.05 s), no gravity: after 2 s each angle is within 0.01 rad of its target (no load, so no
// static error; 0.01 rad is the solver's residue).
void motorReachesTarget(Probe& probe) {
  Hinge h = makeHinge(probe, WorldSettings{.gravity = Vec3{0.0}});
  h.desc.angularLower = Vec3{-1.0};
  h.desc.angularUpper = Vec3{1.0};
  makeJoint(h);
  const Vec3 target{0.3, -0.2, 0.4};
  JointMotorSettings motor;
  motor.enabled = true;
  motor.target = fromJointAngles(target);
  motor.stiffness = Vec3{2000.0};
  motor.damping = Vec3{100.0};
  h.world->setJointMotor(h.joint, motor);
  stepFor(*h.world, 120);
  const Vec3 a = anglesNow(h);
  for (int k = 0; k < 3; ++k)
    probe.near(std::string("angle ") + axisName(k) + " after 2 s", a[k], target[k], 0.01, "rad");
}

// JointMotorSettings::targetRates: a target moving at r = 0.5 rad/s about J's Z (the only open
// axis), set every step at the step's start with targetRates r, is followed: over the second
// second the angle after each step is within 0.01 rad of r t at the step's end (the servo drives
// toward the target moving at its rate). Without the rates the same servo lags by about
// Kd r / Kp = 0.025 rad; the check also asks that the rates at least halve that lag (so they are
// used, not ignored). Kp 2000, Kd 100, no gravity.
double trackMovingTarget(Probe& probe, bool withRates) {
  Hinge h = makeHinge(probe, WorldSettings{.gravity = Vec3{0.0}});
  h.desc.angularLower = Vec3{0.0, 0.0, -2.5};
  h.desc.angularUpper = Vec3{0.0, 0.0, 2.5};
  makeJoint(h);
  const double rate = 0.5;
  double worst = 0.0;
  for (int i = 0; i < 120; ++i) {
    JointMotorSettings motor;
    motor.enabled = true;
    motor.target = fromJointAngles(Vec3{0.0, 0.0, rate * i * kDt});
    motor.stiffness = Vec3{2000.0};
    motor.damping = Vec3{100.0};
    if (withRates) motor.targetRates = Vec3{0.0, 0.0, rate};
    h.world->setJointMotor(h.joint, motor);
    h.world->step(kDt, kSubsteps);
    if (i >= 60) worst = std::max(worst, std::abs(anglesNow(h).z - rate * (i + 1) * kDt));
  }
  return worst;
}

void motorTargetRates(Probe& probe) {
  const double with = trackMovingTarget(probe, true);
  const double without = trackMovingTarget(probe, false);
  probe.atMost("target moving at 0.5 rad/s with its targetRates: largest |angle z - r t| in the 2nd second",
               with, 0.01, "rad");
  probe.atMost("  against the lag without the rates (" + fmt(without) + " rad), half of it", with,
               0.5 * without, "rad");
}

// maxTorque caps the motor per axis: a 2 kg arm 0.35 m out (gravity torque m g d = 6.87 N m at
// horizontal), its joint's Z axis horizontal, the motor holding it horizontal (Kp 1e4). With twice
// that torque it holds (static error 6.87 / Kp = 0.7 mrad, 0.01 rad allowed); with half it sags to
// where m g d cos(theta) = maxTorque, theta = pi / 3 (1.047 rad). 0.05 rad: at pi / 3 the gravity
// torque changes by 6 N m per rad, so 0.05 rad is 0.3 N m (9 %) of the cap.
void motorTorqueLimit(Probe& probe) {
  for (double factor : {2.0, 0.5}) {
    auto world = probe.world();
    BodyDesc parent = boxBody(Vec3{0.1}, 1.0, Transform::fromTranslation(Vec3{0.0, 2.0, 0.0}));
    parent.motion = MotionType::Static;
    const BodyId frame = mustCreate(*world, parent, "static frame");
    BodyDesc armDesc =
        capsuleBody(0.05, 0.25, 2.0, Transform{glm::angleAxis(0.5 * kPi, Vec3{0, 0, 1}), Vec3{0.35, 2, 0}});
    // A saturated motor is a constant torque, which damps nothing: the body's own damping settles
    // the swing about the equilibrium (velocity-proportional, so it does not move the equilibrium).
    armDesc.angularDamping = 3.0;
    armDesc.linearDamping = 3.0;
    const BodyId arm = mustCreate(*world, armDesc, "arm");
    JointDesc j = jointAt(*world, frame, arm, Vec3{0.0, 2.0, 0.0});
    j.angularLower = Vec3{0.0, 0.0, -1.5};
    j.angularUpper = Vec3{0.0, 0.0, 1.5};
    j.collideConnected = false;
    const JointId joint = mustCreate(*world, j, "hinge");
    JointMotorSettings motor;
    motor.enabled = true;
    motor.stiffness = Vec3{1e4};
    motor.damping = Vec3{200.0};
    const double gravityTorque = 2.0 * kGravity * 0.35;
    motor.maxTorque = factor * gravityTorque;
    world->setJointMotor(joint, motor);
    stepFor(*world, 300);
    const double z = std::abs(jointAngles(relativeRotationFromPoses(*world, j)).z);
    if (factor > 1.0)
      probe.near("maxTorque 2 m g d: |angle z| after 5 s", z, 0.0, 0.01, "rad");
    else
      probe.near("maxTorque m g d / 2: |angle z| after 5 s (sags to pi / 3)", z, kPi / 3.0, 0.05, "rad");
  }
}

// A motor with damping only is the interface's implicit damper tau = -Kd w' (w' the relative
// angular velocity at the end of the substep): it only takes energy, sum Kd |w_rel'|^2 h over the
// substeps, whatever gravity and the other joints do meanwhile (what CharacterSettings::
// ragdollJointDamping relies on). A chain of three capsules (4, 2, 1 kg, 0.4 m, free ball joints)
// hangs from a kinematic box, starts horizontal with its tip spun sideways at 6 rad/s and falls
// for 0.3 s (36 substeps of 1/120 s) under gravity, with dampers Kd = rate (I + m l^2) of each
// child (the core's rule) and without: the energy the damped run loses beyond the undamped one
// must be that sum within 10 % at rates 1 and 3 /s. 10 %: the sum is taken along the damped
// trajectory, the undamped run's own losses (the joints' position correction) along another;
// an exact implicit damper measures 0.96-0.97 of it on ODE. A damper row that also resists what
// gravity and the other joints do to the pair took 2.8-3.7 times the sum (issue 30).
double chainEnergy(const PhysicsWorld& world, const BodyId* bodies, const double* masses) {
  double e = 0.0;
  for (int i = 1; i < 4; ++i) {
    const Vec3 v = world.linearVelocity(bodies[i]);
    const Vec3 w = world.angularVelocity(bodies[i]);
    e += 0.5 * masses[i] * glm::dot(v, v) + 0.5 * glm::dot(w, world.worldInertia(bodies[i]) * w) +
         masses[i] * kGravity * world.transform(bodies[i]).translation.y;
  }
  return e;
}

void motorDamperEnergy(Probe& probe) {
  const double h = kDt / kSubsteps;
  const double masses[4] = {10.0, 4.0, 2.0, 1.0};
  const double length = 0.4;
  for (double rate : {1.0, 3.0}) {
    double lost[2] = {0.0, 0.0};
    double dissipated = 0.0;  // sum Kd |w_rel'|^2 h of the damped run
    for (int damped = 0; damped < 2; ++damped) {
      auto world = probe.world();
      BodyId bodies[4];
      for (int i = 0; i < 4; ++i) {
        const Transform pose{glm::angleAxis(0.5 * kPi, Vec3{0.0, 0.0, 1.0}), Vec3{i * length, 2.0, 0.0}};
        BodyDesc d = i == 0 ? boxBody(Vec3{0.05, length / 2.0, 0.05}, masses[0], pose)
                            : capsuleBody(0.05, length / 2.0 - 0.05, masses[i], pose);
        if (i == 0) d.motion = MotionType::Kinematic;
        d.filter = CollisionFilter{0, 0};
        bodies[i] = mustCreate(*world, d, i == 0 ? "kinematic box" : "chain capsule");
      }
      double kd[3];
      for (int i = 0; i < 3; ++i) {
        JointDesc j;
        j.bodyA = bodies[i];
        j.bodyB = bodies[i + 1];
        j.bodyAFromJoint = Transform::fromTranslation(Vec3{0.0, -length / 2.0, 0.0});
        j.bodyBFromJoint = Transform::fromTranslation(Vec3{0.0, length / 2.0, 0.0});
        j.angularLower = Vec3{kFreeLower};
        j.angularUpper = Vec3{kFreeUpper};
        const JointId joint = mustCreate(*world, j, "chain joint");
        const glm::dmat3 inertia = world->worldInertia(bodies[i + 1]);
        const double lever = length / 2.0;
        kd[i] =
            rate * (std::max({inertia[0][0], inertia[1][1], inertia[2][2]}) + masses[i + 1] * lever * lever);
        if (damped) {
          JointMotorSettings m;
          m.enabled = true;
          m.damping = Vec3{kd[i]};
          world->setJointMotor(joint, m);
        }
      }
      world->setAngularVelocity(bodies[3], Vec3{0.0, 6.0, 0.0});
      const double start = chainEnergy(*world, bodies, masses);
      for (int n = 0; n < 36; ++n) {
        world->step(h, 1);
        for (int i = 0; i < 3 && damped; ++i) {
          const Vec3 w = world->angularVelocity(bodies[i + 1]) - world->angularVelocity(bodies[i]);
          dissipated += kd[i] * glm::dot(w, w) * h;
        }
      }
      lost[damped] = start - chainEnergy(*world, bodies, masses);
    }
    const double taken = lost[1] - lost[0];
    probe.near("rate " + fmt(rate) + " /s: energy the dampers take / sum Kd |w_rel'|^2 h (" + fmt(taken) +
                   " J / " + fmt(dissipated) + " J)",
               taken / dissipated, 1.0, 0.1);
  }
}

// setJointLimits and setJointFrames act: a joint created locked, then opened to +-0.4 on every
// axis, turns under a spin (>= 0.35 somewhere, <= 0.43); then its frames replaced by B's turned
// 0.3 rad about J's Z, with all axes locked again, pulls B to the new qRel = identity (within
// 0.02 rad, as the limits above).
void setLimitsAndFrames(Probe& probe) {
  Hinge h = makeHinge(probe, WorldSettings{.gravity = Vec3{0.0}});
  makeJoint(h);
  h.world->setJointLimits(h.joint, Vec3{-0.4}, Vec3{0.4});
  spinChild(h, kWorldFromJoint * (glm::normalize(Vec3{1.0, -1.0, 1.0}) * 3.0));
  double largest = 0.0;
  Vec3 perAxis{0.0};
  for (int i = 0; i < 60; ++i) {
    stepFor(*h.world, 1);
    const Vec3 a = anglesNow(h);
    for (int k = 0; k < 3; ++k) perAxis[k] = std::max(perAxis[k], std::abs(a[k]));
    largest = std::max({largest, perAxis.x, perAxis.y, perAxis.z});
  }
  probe.atLeast("opened by setJointLimits(+-0.4): largest |angle|", largest, 0.35, "rad");
  probe.atMost("  and it stays within the limit", largest, 0.4 + 0.03, "rad");
  h.world->setJointLimits(h.joint, Vec3{0.0}, Vec3{0.0});
  JointDesc moved = h.desc;
  moved.bodyBFromJoint.rotation = h.desc.bodyBFromJoint.rotation * glm::angleAxis(0.3, Vec3{0.0, 0.0, 1.0});
  h.world->setJointFrames(h.joint, moved.bodyAFromJoint, moved.bodyBFromJoint);
  h.world->setAngularVelocity(h.child, Vec3{0.0});
  h.world->setLinearVelocity(h.child, Vec3{0.0});
  stepFor(*h.world, 60);
  probe.atMost("new frames, all axes locked: angle of the new qRel after 1 s",
               angleBetween(relativeRotationFromPoses(*h.world, moved), Quat{1.0, 0.0, 0.0, 0.0}), 0.02,
               "rad");
}

}  // namespace

std::vector<Check> jointChecks() {
  return {
      {"joint.anchors_coincide", anchorsCoincide},
      {"joint.relative_rotation_from_poses", relativeRotationFromPosesCheck},
      {"joint.angle_convention_sign", angleConventionSign},
      {"joint.limits_hold", limitsHold},
      {"joint.locked_and_free_axes", lockedAndFreeAxes},
      {"joint.motor_reaches_target", motorReachesTarget},
      {"joint.motor_target_rates", motorTargetRates},
      {"joint.motor_torque_limit", motorTorqueLimit},
      {"joint.motor_damper_energy", motorDamperEnergy},
      {"joint.set_limits_and_frames", setLimitsAndFrames},
  };
}

}  // namespace handoff::conformance::detail
