// Does ODE allocate inside its step once warmed up? A chain of six jointed capsules (limits
// +-0.5 rad) and a box dropped onto the ground plane, never sleeping, warmed up for 3 s, then 2 s
// of steps counted: ODE's own allocator (dAlloc/dRealloc/dFree through counting handlers,
// physics_ode/ode_internal.h) and every operator new of this process (the counting global operator
// new of tests/support/counting_new.h in this binary). Printed for docs/ARCHITECTURE.md.
#include "handoff/physics.h"
#include "handoff/physics_ode.h"
#include "physics_ode/ode_internal.h"
#include "physics_ode/ode_scene.h"
#include "support/counting_new.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>

namespace handoff {
namespace {

using ode_test::kDt;

struct Counts {
  long odeAllocations = 0, odeReallocations = 0, odeFrees = 0, news = 0, newsFirstHalf = 0;
  double odeBytesPerStep = 0.0;
};

Counts countSteadySteps(bool exactSolver) {
  ode_detail::countOdeAllocations(true);  // before the world: ODE frees with the handler it allocated with
  WorldSettings settings;
  settings.sleepLinearSpeed = 0.0;  // never sleep: every step solves the whole scene
  OdeSettings ode;
  ode.exactSolver = exactSolver;
  std::unique_ptr<PhysicsWorld> world = createOdeWorld(settings, ode);
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  const Quat lying = glm::angleAxis(0.5 * kPi, Vec3{0, 0, 1});  // capsule axis (+Y) along X
  BodyId previous;
  for (int i = 0; i < 6; ++i) {
    BodyDesc d;
    d.shape.type = ShapeType::Capsule;
    d.shape.radius = 0.05;
    d.shape.halfHeight = 0.15;
    d.mass = 2.0;
    d.worldFromBody = Transform{lying, Vec3{0.4 * i, 0.3, 0.0}};
    const BodyId body = ode_test::mustCreate(*world, d);
    if (previous.valid()) {
      const Transform worldFromJoint = Transform::fromTranslation(Vec3{0.4 * i - 0.2, 0.3, 0.0});
      JointDesc j;
      j.bodyA = previous;
      j.bodyB = body;
      j.bodyAFromJoint = world->transform(previous).inverse() * worldFromJoint;
      j.bodyBFromJoint = d.worldFromBody.inverse() * worldFromJoint;
      j.angularLower = Vec3{-0.5};
      j.angularUpper = Vec3{0.5};
      EXPECT_TRUE(world->createJoint(j).ok());
    }
    previous = body;
  }
  BodyDesc box;
  box.shape.type = ShapeType::Box;
  box.shape.halfExtents = Vec3{0.15};
  box.mass = 5.0;
  box.worldFromBody = Transform::fromTranslation(Vec3{0.8, 0.8, 0.0});
  ode_test::mustCreate(*world, box);
  const long created = ode_detail::odeAllocationCounts().allocations;
  for (int i = 0; i < 180; ++i) world->step(kDt, 2);  // warm-up: 3 s, the scene at rest in contact
  std::printf("[ figure ] %s: ODE dAlloc %ld creating the scene, %ld in the 180 warm-up steps\n",
              exactSolver ? "dWorldStep (exact)" : "dWorldQuickStep", created,
              ode_detail::odeAllocationCounts().allocations - created);

  const int steps = 120;
  ode_detail::countOdeAllocations(true);
  // Debugging: `break handoffCountedAllocation` in gdb shows who allocates while counting.
  test_support::traceAllocations(true);
  const long newsBefore = test_support::allocationCount();
  for (int i = 0; i < steps / 2; ++i) world->step(kDt, 2);
  const long firstHalf = test_support::allocationCount() - newsBefore;
  for (int i = steps / 2; i < steps; ++i) world->step(kDt, 2);
  const long news = test_support::allocationCount() - newsBefore;
  test_support::traceAllocations(false);
  const ode_detail::OdeAllocationCounts ode2 = ode_detail::odeAllocationCounts();
  Counts c;
  c.odeAllocations = ode2.allocations;
  c.odeReallocations = ode2.reallocations;
  c.odeFrees = ode2.frees;
  c.news = news;
  c.newsFirstHalf = firstHalf;
  c.odeBytesPerStep = static_cast<double>(ode2.bytes) / steps;
  std::printf(
      "[ figure ] %s, %d steady steps of 2 substeps (%d contact points at the end): ODE dAlloc %ld "
      "(%.0f bytes per step), dRealloc %ld, dFree %ld; operator new %ld (%.1f per substep; %ld in the first "
      "half)\n",
      exactSolver ? "dWorldStep (exact)" : "dWorldQuickStep", steps, world->lastStepStats().contactPoints,
      c.odeAllocations, c.odeBytesPerStep, c.odeReallocations, c.odeFrees, c.news,
      static_cast<double>(c.news) / (2 * steps), c.newsFirstHalf);
  world.reset();
  ode_detail::countOdeAllocations(false);
  return c;
}

// After warm-up ODE's own allocator is not called inside a step (its step arena and the contact
// joint group's blocks are kept and reused), and what the step allocates through operator new is
// a constant amount per step, not growth: the two halves of the counted steps allocate the same.
// Where it comes from is not visible in-process; under gdb (break handoffCountedAllocation)
// every one is ODE's dxHashSpace::collide (its AABB vector, per dSpaceCollide call), none the
// adapter's (docs/ARCHITECTURE.md).
TEST(OdeAllocation, SteadyStepsAllocateAFixedAmountInsideOde) {
  for (bool exact : {true, false}) {
    const Counts c = countSteadySteps(exact);
    EXPECT_EQ(c.odeAllocations, 0) << (exact ? "exact" : "quick-step");
    EXPECT_EQ(c.odeReallocations, 0) << (exact ? "exact" : "quick-step");
    EXPECT_EQ(c.news, 2 * c.newsFirstHalf) << (exact ? "exact" : "quick-step");
  }
}

}  // namespace
}  // namespace handoff
