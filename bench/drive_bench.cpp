// Drive computation per character per (sub)step, for a 15-body ragdoll-shaped tree: the pure
// law over spans (DriveJob; also on a real character tracking a real clip), and the explicit applier with its
// engine reads and impulses (ExplicitDrive::onSubstep on a Bullet world, without the solver step).
#include "handoff/asset.h"
#include "handoff/drive.h"
#include "handoff/import.h"
#include "handoff/physics_bullet.h"

#include <benchmark/benchmark.h>

#include <array>
#include <random>
#include <span>
#include <string>
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

// The inputs of one 15-body character: random body rotations and velocities, and joint targets
// drawn wide (scale 0.8 rad: beyond some limits, so the nearest-admissible-target search runs) or
// made admissible first (each joint's nearest admissible rotation: no search left to do).
struct DriveInputs {
  std::vector<DriveJoint> joints = humanoidJoints();
  std::vector<Quat> rotations = std::vector<Quat>(kBodies);
  std::vector<Quat> targets = std::vector<Quat>(joints.size());
  std::vector<Vec3> omegas = std::vector<Vec3>(kBodies);
  std::vector<Vec3> targetVelocities = std::vector<Vec3>(joints.size());
  std::vector<Vec3> torques = std::vector<Vec3>(joints.size());

  explicit DriveInputs(bool admissible) {
    std::mt19937 rng(1);
    std::normal_distribution<double> n(0.0, 1.0);
    for (auto& q : rotations) q = randomRotation(rng, 1.0);
    for (auto& w : omegas) w = Vec3{n(rng), n(rng), n(rng)};
    for (auto& q : targets) q = randomRotation(rng, 0.8);  // beyond some limits: clamping runs
    for (auto& w : targetVelocities) w = Vec3{n(rng), n(rng), n(rng)};
    if (!admissible) return;
    for (size_t i = 0; i < joints.size(); ++i) {
      const DriveJoint& j = joints[i];
      const Quat qRel =
          jointRelativeRotation(rotations[static_cast<size_t>(j.bodyA)],
                                rotations[static_cast<size_t>(j.bodyB)], j.bodyAFromJoint, j.bodyBFromJoint);
      targets[i] = fromJointAngles(
          nearestAdmissibleAngles(targets[i], jointAngles(qRel), j.angularLower, j.angularUpper));
    }
  }
};

// The figure: DriveJob (the law with its nearest-admissible-target search) on wide targets.
void BM_DriveJob_15Bodies(benchmark::State& state) {
  DriveInputs d(false);
  const DriveJob job{d.joints, d.rotations, d.omegas, d.targets, d.targetVelocities, {}, d.torques, {}};
  for (auto _ : state) {
    benchmark::DoNotOptimize(job.run());
    benchmark::DoNotOptimize(d.torques.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());  // characters
  state.counters["joints"] = static_cast<double>(d.joints.size());
}

// Floor 1: the same DriveJob on targets already admissible: every check of the law, no search.
void BM_DriveJob_15Bodies_AdmissibleTargets(benchmark::State& state) {
  DriveInputs d(true);
  const DriveJob job{d.joints, d.rotations, d.omegas, d.targets, d.targetVelocities, {}, d.torques, {}};
  for (auto _ : state) {
    benchmark::DoNotOptimize(job.run());
    benchmark::DoNotOptimize(d.torques.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}

// Floor 2: the PD law's arithmetic alone on the admissible targets: relative rotation, error
// rotation vector, relative angular velocity, torque with its clamp, torque to world. No limit
// or gimbal-lock handling, no input checks.
void BM_DriveLawFloor_15Bodies(benchmark::State& state) {
  DriveInputs d(true);
  for (auto _ : state) {
    for (size_t i = 0; i < d.joints.size(); ++i) {
      const DriveJoint& j = d.joints[i];
      const auto a = static_cast<size_t>(j.bodyA);
      const auto b = static_cast<size_t>(j.bodyB);
      const Quat worldFromJointA = d.rotations[a] * j.bodyAFromJoint;
      const Quat qRel = glm::conjugate(worldFromJointA) * (d.rotations[b] * j.bodyBFromJoint);
      const Vec3 error = toRotationVector(shortArc(d.targets[i] * glm::conjugate(qRel)));
      const Vec3 relative = glm::conjugate(worldFromJointA) * (d.omegas[b] - d.omegas[a]);
      d.torques[i] = worldFromJointA * driveTorque(error, relative, d.targetVelocities[i], j.gains);
    }
    benchmark::DoNotOptimize(d.torques.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}

// The figure and its floors registered alternately (docs/BENCHMARKS.md runs them interleaved).
// A real character tracking a real clip: CMU Boxing_Toes (the tracking test's clip) on the
// ragdoll the builder makes for it, every 60 Hz frame of the clip in turn. The bodies are where
// the animation was 2 frames (33 ms) earlier, a tracking lag of a few degrees, as powered bodies
// follow; the targets are the frame's animated joint rotations with their finite-difference rates,
// as Character gives them. Counters: joints, and the share of joint-frames whose target lies past a
// limited axis (where the admissible-target search runs).
struct ClipDrive {
  std::vector<DriveJoint> joints;
  int bodies = 0;
  int frames = 0;
  // Per frame, contiguous: body rotations and angular velocities, joint targets and rates.
  std::vector<Quat> rotations, targets;
  std::vector<Vec3> omegas, targetVelocities;
  double pastLimit = 0.0;

  bool load(const char* relative) {
    Result<ImportedAsset> imported = importFile(std::string(HANDOFF_DATA_DIR) + "/" + relative);
    if (!imported || imported->clips.empty()) return false;
    Result<RagdollAsset> asset = buildRagdoll(imported->skeleton, BuildOptions{});
    if (!asset) return false;
    joints = driveJointsFromAsset(*asset);
    bodies = static_cast<int>(asset->bodies.size());
    const Clip& clip = imported->clips.front();
    const double dt = 1.0 / 60.0;
    std::vector<Transform> locals(static_cast<size_t>(imported->skeleton.jointCount())),
        models(locals.size());
    std::vector<std::vector<Transform>> poses;
    for (double t = 0.0; t <= clip.duration(); t += dt) {
      clip.sample(t, WrapMode::Clamp, locals);
      localToModel(imported->skeleton, locals, models);
      poses.emplace_back(asset->bodies.size());
      bodyPosesFromModels(*asset, models, Transform::identity(), poses.back());
    }
    int past = 0;
    for (size_t f = 3; f < poses.size(); ++f) {
      const std::vector<Transform>& now = poses[f];
      const std::vector<Transform>& lagged = poses[f - 2];
      const std::vector<Transform>& before = poses[f - 3];
      for (size_t b = 0; b < now.size(); ++b) {
        rotations.push_back(lagged[b].rotation);
        omegas.push_back(angularVelocity(before[b].rotation, lagged[b].rotation, dt).omega);
      }
      for (const DriveJoint& j : joints) {
        const auto a = static_cast<size_t>(j.bodyA), c = static_cast<size_t>(j.bodyB);
        const Quat target =
            jointRelativeRotation(now[a].rotation, now[c].rotation, j.bodyAFromJoint, j.bodyBFromJoint);
        const Quat previous = jointRelativeRotation(poses[f - 1][a].rotation, poses[f - 1][c].rotation,
                                                    j.bodyAFromJoint, j.bodyBFromJoint);
        targets.push_back(target);
        targetVelocities.push_back(angularVelocity(previous, target, dt).omega);
        glm::bvec3 clamped{false};
        (void)nearestAdmissibleAngles(target, Vec3{0.0}, j.angularLower, j.angularUpper, &clamped);
        bool limitedPast = false;
        for (int i = 0; i < 3; ++i)
          limitedPast = limitedPast || (clamped[i] && j.angularLower[i] < j.angularUpper[i]);
        past += limitedPast ? 1 : 0;
      }
      ++frames;
    }
    pastLimit = frames > 0 ? static_cast<double>(past) / (frames * static_cast<double>(joints.size())) : 0.0;
    return frames > 0;
  }
};

void BM_DriveJob_BoxingToes(benchmark::State& state) {
  static ClipDrive d;
  static const bool loaded = d.load("cmu/Boxing_Toes.bvh");
  if (!loaded) {
    state.SkipWithError("cannot load cmu/Boxing_Toes.bvh");
    return;
  }
  std::vector<Vec3> torques(d.joints.size());
  const size_t nb = static_cast<size_t>(d.bodies), nj = d.joints.size();
  int frame = 0;
  for (auto _ : state) {
    const size_t f = static_cast<size_t>(frame);
    const DriveJob job{d.joints,
                       std::span<const Quat>(d.rotations).subspan(f * nb, nb),
                       std::span<const Vec3>(d.omegas).subspan(f * nb, nb),
                       std::span<const Quat>(d.targets).subspan(f * nj, nj),
                       std::span<const Vec3>(d.targetVelocities).subspan(f * nj, nj),
                       {},
                       torques,
                       {}};
    benchmark::DoNotOptimize(job.run());
    benchmark::DoNotOptimize(torques.data());
    benchmark::ClobberMemory();
    frame = frame + 1 < d.frames ? frame + 1 : 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["joints"] = static_cast<double>(nj);
  state.counters["frames"] = d.frames;
  state.counters["past_limit"] = d.pastLimit;
}

BENCHMARK(BM_DriveJob_15Bodies);
BENCHMARK(BM_DriveJob_BoxingToes);
BENCHMARK(BM_DriveJob_15Bodies_AdmissibleTargets);
BENCHMARK(BM_DriveLawFloor_15Bodies);

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
  // Arg 0: the targets of the frame's earlier substeps (the drive's memo of each joint's
  // admissible target holds: the later substeps of a frame, the world not moving here); arg 1:
  // new targets every substep, alternating between two sets (the first substep of a frame).
  std::array<std::vector<Quat>, 2> sets;
  for (auto& set : sets) {
    for (int i = 0; i < drive.jointCount(); ++i) set.push_back(randomRotation(rng, 0.8));
  }
  (void)drive.setTargets(sets[0], {});
  size_t next = 1;
  for (auto _ : state) {
    if (state.range(0) != 0) {
      (void)drive.setTargets(sets[next], {});
      next ^= 1u;
    }
    drive.onSubstep(1.0 / 240.0);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ExplicitDriveSubstep_15Bodies_Bullet)->Arg(1)->Arg(0);

}  // namespace
}  // namespace handoff
