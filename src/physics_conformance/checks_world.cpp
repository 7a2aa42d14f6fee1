// Conformance checks of the world as a whole: collision filters and pair exclusions, enabling,
// sleeping and waking, substeps and their listeners, determinism (handoff/physics.h).
#include "handoff/physics.h"
#include "physics_conformance/conformance_internal.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace handoff::conformance::detail {
namespace {

BodyDesc withFilter(BodyDesc desc, std::uint32_t layer, std::uint32_t mask) {
  desc.filter = CollisionFilter{layer, mask};
  return desc;
}

// A body collides with another when each one's mask has the other's layer (CollisionFilter):
// a ball whose mask lacks kStatic falls through the ground; a debris ball falls through a platform
// whose mask lacks kDebris although its own mask has the platform's layer, where a ragdoll ball
// rests on it; a filter changed by setCollisionFilter acts and reads back.
void layersAndMasks(Probe& probe) {
  auto world = probe.world();
  world->addGroundPlane(Vec3{0.0, 1.0, 0.0}, 0.0);
  const BodyId resting = mustCreate(
      *world, withFilter(sphereBody(0.1, 1.0, Vec3{0.0, 0.5, 0.0}), layers::kRagdoll, layers::kAll),
      "resting ball");
  const BodyId through = mustCreate(*world,
                                    withFilter(sphereBody(0.1, 1.0, Vec3{1.0, 0.5, 0.0}), layers::kRagdoll,
                                               layers::kAll & ~layers::kStatic),
                                    "ball without kStatic in its mask");
  BodyDesc platform = boxBody(Vec3{0.3, 0.1, 1.0}, 5.0, Transform::fromTranslation(Vec3{2.0, 1.0, 0.0}));
  platform.motion = MotionType::Kinematic;
  platform.filter = CollisionFilter{layers::kCapsule, layers::kAll & ~layers::kDebris};
  mustCreate(*world, platform, "kinematic platform without kDebris in its mask");
  const BodyId debris = mustCreate(
      *world, withFilter(sphereBody(0.1, 1.0, Vec3{2.0, 1.5, -0.5}), layers::kDebris, layers::kAll),
      "debris ball");
  const BodyId ragdoll = mustCreate(
      *world, withFilter(sphereBody(0.1, 1.0, Vec3{2.0, 1.5, 0.5}), layers::kRagdoll, layers::kAll),
      "ragdoll ball");
  const BodyId changed = mustCreate(*world,
                                    withFilter(sphereBody(0.1, 1.0, Vec3{3.0, 0.5, 0.0}), layers::kRagdoll,
                                               layers::kAll & ~layers::kStatic),
                                    "ball whose filter is changed");
  const CollisionFilter newFilter{layers::kDebris, layers::kStatic | layers::kRagdoll};
  world->setCollisionFilter(changed, newFilter);
  probe.holds("collisionFilter() after setCollisionFilter", world->collisionFilter(changed) == newFilter,
              "layer " + std::to_string(world->collisionFilter(changed).layer) + " mask " +
                  std::to_string(world->collisionFilter(changed).mask) + " (set: layer 8, mask 3)");
  stepFor(*world, 90);
  probe.near("ball with kStatic in its mask: height after 1.5 s", world->transform(resting).translation.y,
             0.1, kRestTolerance, "m");
  probe.atMost("ball without kStatic in its mask: height (fell through the ground)",
               world->transform(through).translation.y, -1.0, "m");
  probe.near("debris ball over the platform whose mask lacks kDebris: height (on the ground)",
             world->transform(debris).translation.y, 0.1, kRestTolerance, "m");
  probe.near("ragdoll ball over the platform: height (on it, top at 1.1 m)",
             world->transform(ragdoll).translation.y, 1.2, kRestTolerance, "m");
  probe.near("ball whose mask was changed to include kStatic: height",
             world->transform(changed).translation.y, 0.1, kRestTolerance, "m");
}

// JointDesc::collideConnected: two overlapping spheres on a free ball joint touch nothing when it
// is false (no contact, no push: their velocities stay below 1 mm/s), and have contacts when true.
// The exclusion is the joint's: it holds again after a body leaves the simulation and comes back
// (setEnabled false, then true: a pooled or capsule-only ragdoll's bodies).
void collideConnected(Probe& probe) {
  for (bool collide : {false, true}) {
    auto world = probe.world(WorldSettings{.gravity = Vec3{0.0}});
    const BodyId a = mustCreate(*world, sphereBody(0.2, 1.0, Vec3{0.0, 1.0, 0.0}), "sphere A");
    const BodyId b = mustCreate(*world, sphereBody(0.2, 1.0, Vec3{0.3, 1.0, 0.0}), "sphere B, overlapping A");
    JointDesc j = jointAt(*world, a, b, Vec3{0.15, 1.0, 0.0});
    j.angularLower = Vec3{1.0};
    j.angularUpper = Vec3{-1.0};
    j.collideConnected = collide;
    mustCreate(*world, j, "ball joint");
    const auto expectContacts = [&](const std::string& when) {
      stepFor(*world, 10);
      const int contacts = world->contactCount(b);
      if (collide) {
        probe.atLeast("collideConnected true" + when + ": contacts of B", contacts, 1);
      } else {
        probe.atMost("collideConnected false" + when + ": contacts of B", contacts, 0);
        probe.atMost("  speed of B", glm::length(world->linearVelocity(b)), 1e-3, "m/s");
      }
    };
    expectContacts("");
    world->setEnabled(b, false);
    stepFor(*world, 1);
    world->setEnabled(b, true);
    expectContacts(", B disabled and enabled again");
  }
}

// setPairCollision(a, b, false) switches one pair off whatever the filters say, other pairs
// unaffected; switching it back on restores its contacts, switching it off drops them at once.
// Three overlapping spheres in a row (C - A - B), the pair A-B off from the start: B is never
// pushed, C is.
void pairCollision(Probe& probe) {
  auto world = probe.world(WorldSettings{.gravity = Vec3{0.0}});
  const BodyId a = mustCreate(*world, sphereBody(0.2, 1.0, Vec3{0.0, 1.0, 0.0}), "sphere A");
  const BodyId b = mustCreate(*world, sphereBody(0.2, 1.0, Vec3{0.35, 1.0, 0.0}), "sphere B");
  const BodyId c = mustCreate(*world, sphereBody(0.2, 1.0, Vec3{-0.35, 1.0, 0.0}), "sphere C");
  world->setPairCollision(a, b, false);
  stepFor(*world, 10);
  probe.atMost("pair A-B off: contacts of B", world->contactCount(b), 0);
  probe.atMost("  speed of B", glm::length(world->linearVelocity(b)), 1e-3, "m/s");
  probe.atLeast("  pair A-C (on): C's speed (pushed out of A)", glm::length(world->linearVelocity(c)), 1e-2,
                "m/s");
  world->setPairCollision(a, b, true);
  stepFor(*world, 1);
  probe.atLeast("pair A-B back on: contacts of B after a step", world->contactCount(b), 1);
  world->setPairCollision(a, b, false);
  probe.near("pair A-B off again: contacts of B at once (switching off drops them)", world->contactCount(b),
             0, 0.0);
}

// setEnabled(false) takes a body out of collision and queries, setEnabled(true) brings it back.
// A ball resting on a static box platform falls to the ground when the platform is disabled; a
// ray down through the platform hits the ground then, the platform again once it is enabled.
void enableDisable(Probe& probe) {
  auto world = probe.world();
  world->addGroundPlane(Vec3{0.0, 1.0, 0.0}, 0.0);
  const BodyId platform =
      world->addStaticBox(Transform::fromTranslation(Vec3{0.0, 1.0, 0.0}), Vec3{0.5, 0.1, 0.5});
  const BodyId ball = mustCreate(*world, sphereBody(0.1, 1.0, Vec3{0.0, 1.3, 0.0}), "ball");
  stepFor(*world, 30);
  probe.near("ball on the platform: height", world->transform(ball).translation.y, 1.2, kRestTolerance, "m");
  const int count = world->bodyCount();
  world->setEnabled(platform, false);
  probe.holds("isEnabled() after setEnabled(false)", !world->isEnabled(platform),
              world->isEnabled(platform) ? "true" : "false");
  stepFor(*world, 60);
  probe.near("platform disabled: ball's height after 1 s (on the ground)",
             world->transform(ball).translation.y, 0.1, kRestTolerance, "m");
  const CastHit down = world->castRay(Vec3{0.3, 3.0, 0.3}, Vec3{0.3, -1.0, 0.3}, layers::kAll);
  probe.holds("ray down through the disabled platform hits the ground, not the platform",
              down.hit() && !(down.body == platform),
              down.hit() ? "hit at y = " + fmt(down.point.y) : "no hit");
  probe.near("  bodyCount() (a disabled body stays alive)", world->bodyCount(), count, 0.0);
  world->setEnabled(platform, true);
  probe.holds("isEnabled() after setEnabled(true)", world->isEnabled(platform),
              world->isEnabled(platform) ? "true" : "false");
  const CastHit again = world->castRay(Vec3{0.3, 3.0, 0.3}, Vec3{0.3, -1.0, 0.3}, layers::kAll);
  probe.holds("ray down hits the enabled platform", again.hit() && again.body == platform,
              again.hit() ? "hit at y = " + fmt(again.point.y) : "no hit");
}

// A body at rest sleeps once WorldSettings::sleepTime has passed (a box placed exactly resting on
// the ground is under the threshold from the first substep: asleep between sleepTime - one step and
// sleepTime + 0.25 s, the time an engine may take to settle the contact), and the statistics count
// it. A falling body does not sleep, and sleepLinearSpeed = 0 means never.
void restingBodySleeps(Probe& probe) {
  for (double sleepTime : {0.5, 1.0}) {
    WorldSettings settings;
    settings.sleepTime = sleepTime;
    auto world = probe.world(settings);
    world->addGroundPlane(Vec3{0.0, 1.0, 0.0}, 0.0);
    const BodyId box = mustCreate(
        *world, boxBody(Vec3{0.2}, 1.0, Transform::fromTranslation(Vec3{0, 0.2, 0})), "box on the ground");
    const BodyId falling = mustCreate(*world, sphereBody(0.1, 1.0, Vec3{5.0, 100.0, 0.0}), "falling ball");
    double asleepAt = -1.0;
    bool fallingSlept = false;
    for (int i = 1; i <= 180 && asleepAt < 0.0; ++i) {
      world->step(kDt, kSubsteps);
      if (world->isSleeping(box)) asleepAt = i * kDt;
      fallingSlept = fallingSlept || world->isSleeping(falling);
    }
    const std::string name = "sleepTime " + fmt(sleepTime) + " s: box asleep after";
    probe.atLeast(name, asleepAt, sleepTime - kDt, "s");
    probe.atMost(name, asleepAt, sleepTime + 0.25, "s");
    probe.holds("  falling ball stayed awake", !fallingSlept, fallingSlept ? "it slept" : "awake");
    const StepStats& stats = world->lastStepStats();
    probe.holds("  StepStats sleeping / active / dynamic",
                stats.sleepingBodies == 1 && stats.activeBodies == 1 && stats.dynamicBodies == 2,
                std::to_string(stats.sleepingBodies) + " / " + std::to_string(stats.activeBodies) + " / " +
                    std::to_string(stats.dynamicBodies) + " (1 / 1 / 2 expected)");
  }
  WorldSettings never;
  never.sleepLinearSpeed = 0.0;
  auto world = probe.world(never);
  world->addGroundPlane(Vec3{0.0, 1.0, 0.0}, 0.0);
  const BodyId box = mustCreate(*world, boxBody(Vec3{0.2}, 1.0, Transform::fromTranslation(Vec3{0, 0.2, 0})),
                                "box on the ground");
  bool slept = false;
  for (int i = 0; i < 180; ++i) {
    world->step(kDt, kSubsteps);
    slept = slept || world->isSleeping(box);
  }
  probe.holds("sleepLinearSpeed 0: box never slept in 3 s", !slept, slept ? "it slept" : "awake");
}

// sleep(body) puts a body to sleep now with zero velocities; it stays put while asleep; wake()
// wakes it; a teleport (setTransform) wakes it (it falls); an awake body coming into contact wakes
// it (a ball dropped onto the sleeping box).
void sleepAndWake(Probe& probe) {
  auto world = probe.world();
  world->addGroundPlane(Vec3{0.0, 1.0, 0.0}, 0.0);
  const BodyId box = mustCreate(*world, boxBody(Vec3{0.2}, 1.0, Transform::fromTranslation(Vec3{0, 0.2, 0})),
                                "box on the ground");
  stepFor(*world, 5);
  world->setLinearVelocity(box, Vec3{0.3, 0.0, 0.0});
  world->sleep(box);
  probe.holds("isSleeping() right after sleep()", world->isSleeping(box),
              world->isSleeping(box) ? "asleep" : "awake");
  probe.nearVec("  its velocity", world->linearVelocity(box), Vec3{0.0}, 1e-9, "m/s");
  const Vec3 at = world->transform(box).translation;
  stepFor(*world, 30);
  probe.holds("  still asleep after 0.5 s", world->isSleeping(box),
              world->isSleeping(box) ? "asleep" : "awake");
  probe.nearVec("  its position", world->transform(box).translation, at, 1e-6, "m");
  world->wake(box);
  probe.holds("isSleeping() after wake()", !world->isSleeping(box),
              world->isSleeping(box) ? "asleep" : "awake");

  world->sleep(box);
  world->setTransform(box, Transform::fromTranslation(at + Vec3{0.0, 1.0, 0.0}));
  stepFor(*world, 1);
  probe.holds("asleep, then teleported 1 m up: awake after a step", !world->isSleeping(box),
              world->isSleeping(box) ? "asleep" : "awake");
  probe.atMost("  and falling: height after the step", world->transform(box).translation.y, at.y + 1.0 - 1e-4,
               "m");

  stepFor(*world, 60);
  world->sleep(box);
  const BodyId ball =
      mustCreate(*world, sphereBody(0.1, 1.0, at + Vec3{0.0, 1.0, 0.0}), "ball dropped on it");
  bool woke = false;
  for (int i = 0; i < 60; ++i) {
    world->step(kDt, kSubsteps);
    woke = woke || !world->isSleeping(box);
  }
  probe.holds("asleep, a ball dropped on it: woke within 1 s", woke, woke ? "woke" : "stayed asleep");
  probe.atLeast("  the ball rests on it, not in it: height", world->transform(ball).translation.y,
                at.y + 0.2 + 0.1 - kRestTolerance, "m");
}

/// Counts its calls and their lengths, and where in the order it ran.
class CountingListener : public SubstepListener {
 public:
  CountingListener(std::vector<int>& order, int id) : order_(order), id_(id) {}
  void onSubstep(double substepDt) override {
    ++calls;
    total += substepDt;
    if (order_.size() < order_.capacity()) order_.push_back(id_);
  }
  int calls = 0;
  double total = 0.0;

 private:
  std::vector<int>& order_;
  int id_;
};

/// Cancels gravity on one body with an impulse each substep.
class AntiGravity : public SubstepListener {
 public:
  AntiGravity(PhysicsWorld& world, BodyId body) : world_(world), body_(body) {}
  void onSubstep(double substepDt) override {
    world_.applyLinearImpulse(body_, Vec3{0.0, world_.mass(body_) * kGravity * substepDt, 0.0},
                              world_.transform(body_).translation);
  }

 private:
  PhysicsWorld& world_;
  BodyId body_;
};

// step(dt, n) takes n substeps: every listener runs before each (n calls of dt / n), those added
// with first = true before the others, and an impulse a listener applies acts in that substep (one
// that cancels gravity holds a ball still: its speed stays below 1e-4 m/s, float roundings of
// g h over 180 substeps).
void substepsAndListeners(Probe& probe) {
  auto world = probe.world();
  const BodyId ball = mustCreate(*world, sphereBody(0.1, 1.0, Vec3{0.0, 1.0, 0.0}), "ball");
  std::vector<int> order;
  order.reserve(6);
  CountingListener later(order, 2), first(order, 1);
  AntiGravity hold(*world, ball);
  world->addSubstepListener(&later);
  world->addSubstepListener(&hold);
  world->addSubstepListener(&first, true);
  world->step(kDt, 3);
  probe.near("step(dt, 3): listener calls", later.calls, 3, 0.0);
  probe.near("  sum of their substep lengths", later.total, kDt, 1e-12, "s");
  probe.holds(
      "  order of listeners (first = true runs first)", order.size() >= 2 && order[0] == 1 && order[1] == 2,
      order.size() >= 2 ? std::to_string(order[0]) + ", " + std::to_string(order[1]) + " (1, 2 expected)"
                        : "fewer than 2 calls");
  world->removeSubstepListener(&first);
  world->removeSubstepListener(&later);
  stepFor(*world, 60);
  probe.near("removed listener: calls", first.calls, 3, 0.0);
  probe.near("lastStepStats().substeps", world->lastStepStats().substeps, kSubsteps, 0.0);
  probe.atMost("ball held by a listener cancelling gravity: speed after 1 s",
               glm::length(world->linearVelocity(ball)), 1e-4, "m/s");
}

// The same calls on two worlds from the factory give bit-identical results (SPEC.md section 8): a
// scene with contacts, joints with limits and a motor, a kinematic move, impulses, a filter change
// and a teleport, 2 s. And a third time with another world, a different scene made and stepped
// between its steps: worlds share no state (what one world does cannot change another's results),
// which handoff relies on to step several worlds (a crowd's clusters) side by side.
/// A pile of boxes falling on the ground, stepped once per call (the other world of the third run).
class OtherWorld {
 public:
  explicit OtherWorld(Probe& probe) : world_(probe.world(WorldSettings{.sleepTime = 0.2})) {
    world_->addGroundPlane(Vec3{0.0, 1.0, 0.0}, 0.0);
    for (int i = 0; i < 6; ++i)
      boxes_.push_back(mustCreate(*world_,
                                  boxBody(Vec3{0.1 + 0.02 * i}, 1.0 + i,
                                          Transform::fromTranslation(Vec3{0.05 * i, 0.3 + 0.4 * i, 0.0})),
                                  "other world's box"));
  }
  void step(int i) {
    if (i % 20 == 5)
      world_->applyLinearImpulse(boxes_[static_cast<size_t>(i) % boxes_.size()], Vec3{1.0, 2.0, 0.0},
                                 Vec3{0.0, 0.5, 0.0});
    if (i == 50) {
      world_->destroyBody(boxes_.back());
      boxes_.pop_back();
    }
    world_->step(kDt, 3);
  }

 private:
  std::unique_ptr<PhysicsWorld> world_;
  std::vector<BodyId> boxes_;
};

std::vector<double> deterministicScene(Probe& probe, OtherWorld* other) {
  auto world = probe.world();
  world->addGroundPlane(Vec3{0.0, 1.0, 0.0}, 0.0);
  world->addStaticBox(Transform::fromTranslation(Vec3{0.3, 0.2, 0.0}), Vec3{0.3, 0.2, 0.3});
  std::vector<BodyId> bodies;
  std::vector<JointId> joints;
  for (int c = 0; c < 3; ++c) {
    BodyId previous;
    for (int k = 0; k < 4; ++k) {
      const Vec3 at{0.1 * c, 1.5 + c - 0.3 * k, 0.05 * c};
      const BodyId body = mustCreate(
          *world,
          capsuleBody(0.05, 0.1, 1.0 + c, Transform{glm::angleAxis(0.3 * c + 0.1 * k, Vec3{1, 0, 0}), at}),
          "chain capsule");
      if (previous.valid()) {
        JointDesc j = jointAt(*world, previous, body, at + Vec3{0.0, 0.15, 0.0});
        j.angularLower = Vec3{-0.3, -0.5, -0.8};
        j.angularUpper = Vec3{0.3, 0.5, 0.8};
        joints.push_back(mustCreate(*world, j, "chain joint"));
      }
      bodies.push_back(body);
      previous = body;
    }
  }
  BodyDesc pusherDesc = boxBody(Vec3{0.1, 0.3, 0.5}, 5.0, Transform::fromTranslation(Vec3{-1.0, 0.35, 0.0}));
  pusherDesc.motion = MotionType::Kinematic;
  const BodyId pusher = mustCreate(*world, pusherDesc, "pusher");
  JointMotorSettings motor;
  motor.enabled = true;
  motor.target = fromJointAngles(Vec3{0.1, 0.2, 0.3});
  motor.stiffness = Vec3{500.0};
  motor.damping = Vec3{20.0};
  world->setJointMotor(joints[1], motor);
  world->applyLinearImpulse(bodies[0], Vec3{0.5, 0.0, 0.2}, world->transform(bodies[0]).translation);
  for (int i = 0; i < 120; ++i) {
    const Transform p = world->transform(pusher);
    world->moveKinematic(pusher, Transform{p.rotation, p.translation + Vec3{0.01, 0.0, 0.0}}, kDt);
    if (i == 40) world->setCollisionFilter(bodies[5], CollisionFilter{layers::kRagdoll, layers::kStatic});
    if (i == 60) world->setTransform(bodies[11], Transform::fromTranslation(Vec3{0.5, 1.0, 0.5}));
    if (i == 80) world->applyAngularImpulse(bodies[7], Vec3{0.0, 0.1, 0.05});
    world->step(kDt, kSubsteps);
    if (other != nullptr) other->step(i);
  }
  std::vector<double> raw;
  for (BodyId b : bodies) {
    const Transform t = world->transform(b);
    const Vec3 v = world->linearVelocity(b);
    const Vec3 w = world->angularVelocity(b);
    for (double x : {t.translation.x, t.translation.y, t.translation.z, t.rotation.w, t.rotation.x,
                     t.rotation.y, t.rotation.z, v.x, v.y, v.z, w.x, w.y, w.z})
      raw.push_back(x);
  }
  return raw;
}

/// How many of `b`'s numbers differ from `a`'s in any bit, and the largest difference.
void compareBits(Probe& probe, std::string_view what, const std::vector<double>& a,
                 const std::vector<double>& b) {
  int differing = 0;
  double largest = 0.0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (std::memcmp(&a[i], &b[i], sizeof(double)) != 0) {
      ++differing;
      largest = std::max(largest, std::abs(a[i] - b[i]));
    }
  }
  probe.holds(what, differing == 0 && a.size() == b.size(),
              std::to_string(differing) + " of " + std::to_string(a.size()) + " numbers differ (largest by " +
                  fmt(largest) + ")");
}

void sameCallsTwice(Probe& probe) {
  const std::vector<double> a = deterministicScene(probe, nullptr);
  const std::vector<double> b = deterministicScene(probe, nullptr);
  compareBits(probe, "12 bodies' poses and velocities after 2 s, two worlds, bit for bit", a, b);
  OtherWorld other(probe);
  const std::vector<double> c = deterministicScene(probe, &other);
  compareBits(probe, "the same with another world stepped between its steps", a, c);
}

}  // namespace

std::vector<Check> worldChecks() {
  return {
      {"filter.layers_and_masks", layersAndMasks},
      {"filter.collide_connected", collideConnected},
      {"filter.pair_collision", pairCollision},
      {"body.enable_disable", enableDisable},
      {"sleep.resting_body_sleeps", restingBodySleeps},
      {"sleep.sleep_and_wake", sleepAndWake},
      {"step.substeps_and_listeners", substepsAndListeners},
      {"determinism.same_calls_twice", sameCallsTwice},
  };
}

}  // namespace handoff::conformance::detail
