// Conformance checks of what a world reports: bodies and joints alive and their userData,
// breakable joints (JointDesc::breakForce / breakTorque, jointBreakState) and contact events
// (setContactReport, contactEvents) (handoff/physics.h).
#include "handoff/physics.h"
#include "physics_conformance/conformance_internal.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace handoff::conformance::detail {
namespace {

// bodyCount() and jointCount() follow creation and destruction; userData() returns
// BodyDesc::userData (0 for an invalid handle); a destroyed body's handle is not reused.
void lifecycle(Probe& probe) {
  auto world = probe.world();
  const int start = world->bodyCount();
  world->addGroundPlane(Vec3{0.0, 1.0, 0.0}, 0.0);
  BodyDesc a = sphereBody(0.1, 1.0, Vec3{0.0, 1.0, 0.0});
  a.userData = 0x1234567890abcdefull;
  BodyDesc b = sphereBody(0.1, 1.0, Vec3{0.3, 1.0, 0.0});
  b.userData = 7;
  const BodyId ia = mustCreate(*world, a, "A");
  const BodyId ib = mustCreate(*world, b, "B");
  const JointId joint = mustCreate(*world, jointAt(*world, ia, ib, Vec3{0.15, 1.0, 0.0}), "joint");
  probe.near("bodyCount() after a plane and two bodies", world->bodyCount(), start + 3, 0.0);
  probe.near("jointCount()", world->jointCount(), 1, 0.0);
  probe.holds("userData() of A and B", world->userData(ia) == a.userData && world->userData(ib) == 7,
              std::to_string(world->userData(ia)) + ", " + std::to_string(world->userData(ib)));
  probe.holds("userData() of an invalid handle", world->userData(BodyId{}) == 0,
              std::to_string(world->userData(BodyId{})) + " (0 expected)");
  stepFor(*world, 5);
  world->destroyJoint(joint);
  probe.near("jointCount() after destroyJoint", world->jointCount(), 0, 0.0);
  world->destroyBody(ib);
  probe.near("bodyCount() after destroyBody", world->bodyCount(), start + 2, 0.0);
  const BodyId ic = mustCreate(*world, sphereBody(0.1, 1.0, Vec3{0.6, 1.0, 0.0}), "C, after B was destroyed");
  probe.holds("the new body's handle differs from the destroyed one's", !(ic == ib),
              std::to_string(ic.value) + " vs " + std::to_string(ib.value));
  stepFor(*world, 5);
  probe.near("bodyCount() at the end", world->bodyCount(), start + 3, 0.0);
}

/// A 2 kg sphere hanging on a locked joint under (or beside) a static pivot at (0, 2, 0).
struct Hanging {
  std::unique_ptr<PhysicsWorld> world;
  BodyId pivot, bob;
  JointId joint;
  bool refused = false;
  std::string error;
};

/// The scene both breaking checks use: a static `pivot`, a dynamic `bob` and a joint between them
/// at `anchor` (world) with the two limits; a refused joint is recorded, not thrown.
Hanging hang(Probe& probe, BodyDesc pivot, const BodyDesc& bob, const char* bobName, const Vec3& anchor,
             double breakForce, double breakTorque) {
  Hanging h;
  h.world = probe.world();
  pivot.motion = MotionType::Static;
  h.pivot = mustCreate(*h.world, pivot, "pivot");
  h.bob = mustCreate(*h.world, bob, bobName);
  JointDesc j = jointAt(*h.world, h.pivot, h.bob, anchor);
  j.breakForce = breakForce;
  j.breakTorque = breakTorque;
  Result<JointId> id = h.world->createJoint(j);
  if (!id.ok()) {
    h.refused = true;
    h.error = id.error();
  } else {
    h.joint = *id;
  }
  return h;
}

Hanging makeHanging(Probe& probe, const Vec3& offset, double breakForce, double breakTorque) {
  return hang(probe, sphereBody(0.05, 1.0, Vec3{0.0, 2.0, 0.0}),
              sphereBody(0.05, 2.0, Vec3{0.0, 2.0, 0.0} + offset), "bob", Vec3{0.0, 2.0, 0.0}, breakForce,
              breakTorque);
}

/// Steps up to `steps`, returning the first step (from 0) the joint reported broken in, or -1.
int stepUntilBroken(Hanging& h, int steps, JointBreakState* state) {
  for (int i = 0; i < steps; ++i) {
    h.world->step(kDt, kSubsteps);
    *state = h.world->jointBreakState(h.joint);
    if (state->broken) return i;
  }
  return -1;
}

// JointDesc::breakForce: a 2 kg sphere hanging 0.3 m under its pivot loads the anchor with its
// weight, m g = 19.62 N. With a 40 N limit the joint holds for 1 s and reports that force (5 %:
// the bob's small swing adds its centripetal part); with 10 N it breaks in the first step (the
// weight is on it from the first substep), reporting a substep in [0, substeps) and a force above
// the limit, and then the bob falls freely. An adapter that does not claim breakable joints must
// refuse a finite limit.
void breakForce(Probe& probe) {
  if (!probe.options().breakableJoints) {
    Hanging h = makeHanging(probe, Vec3{0.0, -0.3, 0.0}, 10.0, std::numeric_limits<double>::infinity());
    probe.holds("breakable joints not claimed (Options): a finite breakForce is refused", h.refused,
                h.refused ? "refused: " + h.error : "accepted");
    return;
  }
  const double weight = 2.0 * kGravity;
  {
    Hanging h = makeHanging(probe, Vec3{0.0, -0.3, 0.0}, 40.0, std::numeric_limits<double>::infinity());
    if (h.refused) throw Abort("createJoint with breakForce 40 N was refused: " + h.error);
    JointBreakState state;
    const int at = stepUntilBroken(h, 60, &state);
    probe.holds("breakForce 40 N, load m g = 19.6 N: unbroken after 1 s", at < 0,
                at < 0 ? "unbroken" : "broke in step " + std::to_string(at));
    probe.near("  force it reports", state.force, weight, 0.05 * weight, "N");
    probe.near("  substep of the last step it broke in (none)", state.substep, -1, 0.0);
  }
  Hanging h = makeHanging(probe, Vec3{0.0, -0.3, 0.0}, 10.0, std::numeric_limits<double>::infinity());
  if (h.refused) throw Abort("createJoint with breakForce 10 N was refused: " + h.error);
  JointBreakState state;
  const int at = stepUntilBroken(h, 10, &state);
  probe.near("breakForce 10 N: step it broke in", at, 0, 0.0);
  probe.holds("  substep it reports", state.substep >= 0 && state.substep < kSubsteps,
              std::to_string(state.substep) + " (0 to " + std::to_string(kSubsteps - 1) + " expected)");
  probe.atLeast("  force it reports", state.force, 10.0, "N");
  const double y = h.world->transform(h.bob).translation.y;
  stepFor(*h.world, 30);
  const double drop = y - h.world->transform(h.bob).translation.y;
  // Free fall for 0.5 s from the speed it had: at least g t^2 / 2 = 1.23 m less the first-order term.
  probe.atLeast("  the bob then falls: drop in 0.5 s", drop, 0.5 * kGravity * 0.25 - kGravity * 0.5 * kDt,
                "m");
  const bool broken = h.world->jointBreakState(h.joint).broken;
  probe.holds("  still broken", broken, broken ? "broken" : "unbroken");
}

// JointDesc::breakTorque: a 1 kg horizontal capsule welded (all axes locked) at one end to a
// static block, its centre 0.4 m out, loads the joint with the torque m g L = 3.92 N m about the
// anchor. An 8 N m limit holds it (with an infinite force limit) and it reports that torque (5 %:
// the beam's settling under the locked rows); a 2 N m limit breaks it in the first step.
Hanging makeBeam(Probe& probe, double breakTorque) {
  return hang(
      probe, boxBody(Vec3{0.1}, 1.0, Transform::fromTranslation(Vec3{-0.1, 1.0, 0.0})),
      capsuleBody(0.04, 0.36, 1.0, Transform{glm::angleAxis(0.5 * kPi, Vec3{0, 0, 1}), Vec3{0.4, 1, 0}}),
      "beam", Vec3{0.0, 1.0, 0.0}, std::numeric_limits<double>::infinity(), breakTorque);
}

void breakTorque(Probe& probe) {
  if (!probe.options().breakableJoints) {
    Hanging h = makeBeam(probe, 2.0);
    probe.holds("breakable joints not claimed (Options): a finite breakTorque is refused", h.refused,
                h.refused ? "refused: " + h.error : "accepted");
    return;
  }
  const double torque = 1.0 * kGravity * 0.4;
  {
    Hanging h = makeBeam(probe, 8.0);
    if (h.refused) throw Abort("createJoint with breakTorque 8 N m was refused: " + h.error);
    JointBreakState state;
    const int at = stepUntilBroken(h, 60, &state);
    probe.holds("breakTorque 8 N m, load m g L = 3.92 N m: unbroken after 1 s", at < 0,
                at < 0 ? "unbroken" : "broke in step " + std::to_string(at));
    probe.near("  torque it reports", state.torque, torque, 0.05 * torque, "N m");
  }
  Hanging h = makeBeam(probe, 2.0);
  if (h.refused) throw Abort("createJoint with breakTorque 2 N m was refused: " + h.error);
  JointBreakState state;
  const int at = stepUntilBroken(h, 10, &state);
  probe.near("breakTorque 2 N m: step it broke in", at, 0, 0.0);
  probe.atLeast("  torque it reports", state.torque, 2.0, "N m");
}

// setContactReport / contactEvents: a 1 kg ball dropped 0.5 m onto the ground.
// Reported at 1 N s: no event while it falls; at the landing, events of at least 1 N s naming the
// ball and the ground, the normal from the ground toward the ball (+y), the point at the ground
// (within 1 cm: midway between the surfaces); resting (m g dt = 0.16 N s a step) stays under the
// threshold: no more events; a negative threshold stops them (a second landing reports nothing).
// Reported at 0: every step's normal impulses over 1 s add up to what the momentum balance says
// the ground gave, m g T + m v_T (v_T its final vertical velocity), within 1 % (the ball rests).
// That world never sleeps: a sleeping body is not solved, so no engine reports its contact
// impulses (ODE puts the ball to sleep 0.5 s after it lands, then reports nothing: 8.58 N s).
void contactEventsCheck(Probe& probe) {
  auto world = probe.world();
  const BodyId ground = world->addGroundPlane(Vec3{0.0, 1.0, 0.0}, 0.0);
  const BodyId ball = mustCreate(*world, sphereBody(0.1, 1.0, Vec3{0.0, 0.6, 0.0}), "ball");
  world->setContactReport(ball, 1.0);
  double smallest = std::numeric_limits<double>::infinity(), worstNormal = 0.0, worstPoint = 0.0;
  int events = 0, eventsInFlight = 0, eventsResting = 0, misnamed = 0;
  for (int i = 0; i < 60; ++i) {
    world->step(kDt, kSubsteps);
    const double t = (i + 1) * kDt;
    for (const ContactEvent& e : world->contactEvents()) {
      ++events;
      if (t < 0.25) ++eventsInFlight;  // the fall takes 0.319 s
      if (t > 0.6) ++eventsResting;
      if (!(e.body == ball) || !(e.other == ground)) ++misnamed;
      smallest = std::min(smallest, e.impulse);
      worstNormal = std::max(worstNormal, glm::length(e.normal - Vec3{0.0, 1.0, 0.0}));
      worstPoint = std::max(worstPoint, std::abs(e.point.y));
    }
  }
  probe.atLeast("threshold 1 N s: events at the landing", events, 1);
  probe.atLeast("  smallest event impulse", smallest, 1.0, "N s");
  probe.near("  events while falling (first 0.25 s)", eventsInFlight, 0, 0.0);
  probe.near("  events while resting (after 0.6 s)", eventsResting, 0, 0.0);
  probe.near("  events not naming the ball and the ground", misnamed, 0, 0.0);
  probe.atMost("  largest normal's distance from +y", worstNormal, 1e-3);
  probe.atMost("  largest |height| of the event point", worstPoint, 0.01, "m");
  world->setContactReport(ball, -1.0);
  world->applyLinearImpulse(ball, Vec3{0.0, 5.0, 0.0}, world->transform(ball).translation);
  int afterStop = 0;
  for (int i = 0; i < 90; ++i) {
    world->step(kDt, kSubsteps);
    afterStop += static_cast<int>(world->contactEvents().size());
  }
  probe.near("events after setContactReport(ball, -1) and a second landing", afterStop, 0, 0.0);

  WorldSettings awake;
  awake.sleepLinearSpeed = 0.0;
  auto all = probe.world(awake);
  all->addGroundPlane(Vec3{0.0, 1.0, 0.0}, 0.0);
  const BodyId dropped = mustCreate(*all, sphereBody(0.1, 1.0, Vec3{0.0, 0.6, 0.0}), "ball");
  all->setContactReport(dropped, 0.0);
  double sum = 0.0;
  const int steps = 60;
  for (int i = 0; i < steps; ++i) {
    all->step(kDt, kSubsteps);
    for (const ContactEvent& e : all->contactEvents()) sum += e.impulse;
  }
  const double expected = kGravity * steps * kDt + all->linearVelocity(dropped).y;
  probe.near("threshold 0: sum of the impulses over 1 s, m g T + m v_T", sum, expected, 0.01 * expected,
             "N s");
}

}  // namespace

std::vector<Check> eventChecks() {
  return {
      {"body.lifecycle", lifecycle},
      {"joint.break_force", breakForce},
      {"joint.break_torque", breakTorque},
      {"contact.events", contactEventsCheck},
  };
}

}  // namespace handoff::conformance::detail
