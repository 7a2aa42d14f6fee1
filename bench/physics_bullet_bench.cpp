// Step cost of the Bullet adapter: a pile of 10 capsule chains (16 bodies each, 160 bodies,
// 150 joints with limits) falling onto the ground and onto each other, stepped at 60 Hz.
// The scene is rebuilt (untimed) every 3 simulated seconds so the measurement covers falling,
// impacts and piling rather than a pile asleep. Reports ns per body-step.
#include "handoff/physics.h"
#include "handoff/physics_bullet.h"

#include <benchmark/benchmark.h>

#include <memory>

namespace {

using namespace handoff;

constexpr int kChains = 10;
constexpr int kLinks = 16;
constexpr double kDt = 1.0 / 60.0;
constexpr int kStepsPerScene = 180;

std::unique_ptr<PhysicsWorld> buildPile() {
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  const double radius = 0.06;
  const double halfHeight = 0.12;
  const double link = 2.0 * (halfHeight + radius);
  for (int c = 0; c < kChains; ++c) {
    // Horizontal chains, crossing each other, stacked 0.5 m apart.
    const Quat orientation =
        glm::angleAxis(0.5 * kPi, Vec3{0, 0, 1}) * glm::angleAxis(0.7 * c, Vec3{1, 0, 0});
    const Vec3 along = orientation * Vec3{0, -1, 0};
    const Vec3 start = Vec3{0.1 * c, 1.0 + 0.5 * c, 0.05 * c} - along * (0.5 * link * kLinks);
    BodyId previous;
    for (int i = 0; i < kLinks; ++i) {
      BodyDesc d;
      d.shape.type = ShapeType::Capsule;
      d.shape.radius = radius;
      d.shape.halfHeight = halfHeight;
      d.mass = 2.0;
      d.worldFromBody = Transform{orientation, start + along * (link * (i + 0.5))};
      const BodyId body = *world->createBody(d);
      if (i > 0) {
        const Transform worldFromJoint{orientation * glm::angleAxis(0.5 * kPi, Vec3{0, 0, 1}),
                                       start + along * (link * i)};
        JointDesc j;
        j.bodyA = previous;
        j.bodyB = body;
        j.bodyAFromJoint = world->transform(previous).inverse() * worldFromJoint;
        j.bodyBFromJoint = world->transform(body).inverse() * worldFromJoint;
        j.angularLower = Vec3{-0.3, -0.8, -1.2};
        j.angularUpper = Vec3{0.3, 0.8, 1.2};
        (void)*world->createJoint(j);
      }
      previous = body;
    }
  }
  return world;
}

void BM_PileOfChains(benchmark::State& state) {
  const int substeps = static_cast<int>(state.range(0));
  std::unique_ptr<PhysicsWorld> world = buildPile();
  int step = 0;
  long contacts = 0;
  long active = 0;
  for (auto _ : state) {
    if (step == kStepsPerScene) {
      state.PauseTiming();
      world = buildPile();
      step = 0;
      state.ResumeTiming();
    }
    world->step(kDt, substeps);
    ++step;
    contacts += world->lastStepStats().contactPoints;
    active += world->lastStepStats().activeBodies;
  }
  const double bodySteps = static_cast<double>(state.iterations()) * kChains * kLinks;
  state.counters["ns_per_body_step"] =
      benchmark::Counter(bodySteps * 1e-9, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["contacts"] = static_cast<double>(contacts) / static_cast<double>(state.iterations());
  state.counters["active"] = static_cast<double>(active) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_PileOfChains)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMicrosecond);

}  // namespace
