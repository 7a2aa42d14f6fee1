// Drive computation per character per (sub)step, for a 15-body ragdoll-shaped tree: the pure
// law over spans (DriveJob), and the explicit applier with its engine reads and impulses
// (ExplicitDrive::onSubstep on a Bullet world, without the solver step).
#include "handoff/drive.h"
#include "handoff/physics_bullet.h"

#include <benchmark/benchmark.h>

#include <array>
#include <random>
#include <vector>

namespace handoff {
namespace {

constexpr int kBodies = 15;

// A humanoid-shaped tree of 15 bodies (pelvis, 2 spine, head, 2 x (upper arm, forearm, hand),
// 2 x (thigh, shin)) with a mix of joint kinds: hinges (elbows, knees), swing-twist (shoulders,
// hips, neck) and limited spines.
std::vector<DriveJoint> humanoidJoints() {
  //            3 head
  //            |
  //    6-5-4 - 2 - 7-8-9        arms: shoulder (ball), elbow (hinge), wrist
  //            |
  //            1
  //            |
  //            0 pelvis
  //          /   \.
  //        10     12            hips (ball), knees (hinge)
  //        |       |
  //        11     13  14 (a spare child of the pelvis: a tail/prop body)
  const std::array<std::array<int, 2>, kBodies - 1> pairs{{{0, 1},
                                                           {1, 2},
                                                           {2, 3},
                                                           {2, 4},
                                                           {4, 5},
                                                           {5, 6},
                                                           {2, 7},
                                                           {7, 8},
                                                           {8, 9},
                                                           {0, 10},
                                                           {10, 11},
                                                           {0, 12},
                                                           {12, 13},
                                                           {0, 14}}};
  const Vec3 ball{0.8, 1.0, 1.2}, hinge{0.0, 0.0, 2.4}, spine{0.3, 0.4, 0.5};
  std::vector<DriveJoint> joints;
  std::mt19937 rng(42);
  std::normal_distribution<double> n(0.0, 1.0);
  for (size_t i = 0; i < pairs.size(); ++i) {
    DriveJoint j;
    j.bodyA = pairs[i][0];
    j.bodyB = pairs[i][1];
    j.bodyAFromJoint = glm::normalize(Quat{n(rng), n(rng), n(rng), n(rng)});
    j.bodyBFromJoint = glm::normalize(Quat{n(rng), n(rng), n(rng), n(rng)});
    const bool isHinge = i == 4 || i == 7 || i == 10 || i == 12;
    const Vec3 range = isHinge ? hinge : (i <= 2 ? spine : ball);
    j.angularLower = isHinge ? Vec3{0.0} : -range;
    j.angularUpper = range;
    j.gains = DriveGains{300.0, 10.0, 150.0};
    joints.push_back(j);
  }
  return joints;
}

Quat randomRotation(std::mt19937& rng, double scale) {
  std::normal_distribution<double> n(0.0, scale);
  return fromRotationVector(Vec3{n(rng), n(rng), n(rng)});
}

void BM_DriveJob_15Bodies(benchmark::State& state) {
  const std::vector<DriveJoint> joints = humanoidJoints();
  std::mt19937 rng(1);
  std::vector<Quat> rotations(kBodies), targets(joints.size());
  std::vector<Vec3> omegas(kBodies), targetVelocities(joints.size()), torques(joints.size());
  std::normal_distribution<double> n(0.0, 1.0);
  for (auto& q : rotations) q = randomRotation(rng, 1.0);
  for (auto& w : omegas) w = Vec3{n(rng), n(rng), n(rng)};
  for (auto& q : targets) q = randomRotation(rng, 0.8);  // beyond some limits: clamping runs
  for (auto& w : targetVelocities) w = Vec3{n(rng), n(rng), n(rng)};
  const DriveJob job{joints, rotations, omegas, targets, targetVelocities, {}, torques, {}};
  for (auto _ : state) {
    benchmark::DoNotOptimize(job.run());
    benchmark::DoNotOptimize(torques.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());  // characters
  state.counters["joints"] = static_cast<double>(joints.size());
}
BENCHMARK(BM_DriveJob_15Bodies);

void BM_ExplicitDriveSubstep_15Bodies_Bullet(benchmark::State& state) {
  WorldSettings settings;
  settings.gravity = Vec3{0.0};
  auto world = createBulletWorld(settings);
  const std::vector<DriveJoint> joints = humanoidJoints();
  std::mt19937 rng(2);
  std::vector<BodyId> bodies;
  for (int i = 0; i < kBodies; ++i) {
    BodyDesc desc;
    desc.shape.type = ShapeType::Capsule;
    desc.shape.radius = 0.06;
    desc.shape.halfHeight = 0.1;
    desc.mass = 4.0;
    desc.worldFromBody = Transform{randomRotation(rng, 1.0), Vec3{0.0, 0.5 * i, 0.0}};
    desc.filter.mask = 0;  // no contacts: only the drive's cost matters here
    bodies.push_back(*world->createBody(desc));
  }
  ExplicitDrive drive(*world, bodies, joints);
  for (int i = 0; i < drive.jointCount(); ++i) drive.setTarget(i, randomRotation(rng, 0.8));
  for (auto _ : state) {
    drive.onSubstep(1.0 / 240.0);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ExplicitDriveSubstep_15Bodies_Bullet);

}  // namespace
}  // namespace handoff
