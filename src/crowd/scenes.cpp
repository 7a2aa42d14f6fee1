// The crowd benchmark scenes: Jolt's PerformanceTest "Ragdoll" piles and the mass death.
// Shared by bench/crowd_bench.cpp, `handoff bench crowd` and the tests.
#include "handoff/crowd.h"

#include "handoff/handoff.h"
#include "handoff/import.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>

namespace handoff {

long peakResidentKb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

Result<CrowdCharacter> loadCrowdCharacter(const std::string& dataDir) {
  Result<ImportedAsset> run = importFile(dataDir + "/deepmimic/humanoid3d_run.bvh");
  if (!run) return Error{run.error()};
  Result<ImportedAsset> getup = importFile(dataDir + "/deepmimic/humanoid3d_getup_faceup.bvh");
  if (!getup) return Error{getup.error()};
  if (getup->skeleton.jointNames != run->skeleton.jointNames || getup->clips.empty() || run->clips.empty()) {
    return Error{
        "crowd character: humanoid3d_getup_faceup.bvh does not animate the skeleton of humanoid3d_run.bvh"};
  }
  Result<RagdollAsset> asset = buildRagdoll(run->skeleton, BuildOptions{});
  if (!asset) return Error{asset.error()};
  // The reference scene's body material (Jolt's PerformanceTest ragdolls): friction 1,
  // restitution 0.15, damping 0.05/s.
  for (BodyDef& b : asset->bodies) {
    b.friction = 1.0;
    b.restitution = 0.15;
    b.linearDamping = b.angularDamping = 0.05;
  }
  CrowdCharacter c;
  c.skeleton = run->skeleton;
  c.asset = std::make_shared<RagdollAsset>(std::move(asset).value());
  c.run = run->clips[0];
  std::vector<Transform> locals(static_cast<size_t>(c.skeleton.jointCount()));
  getup->clips[0].sample(0.0, WrapMode::Clamp, locals);
  c.deadModels.resize(locals.size());
  localToModel(c.skeleton, locals, c.deadModels);
  return c;
}

namespace {

using Clock = std::chrono::steady_clock;

double processCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

StaticScene flatFloor(double height) {
  StaticScene scene;
  scene.planes.push_back({Vec3{0.0, 1.0, 0.0}, height, 1.0});
  return scene;
}

}  // namespace

Result<PileBenchResult> runPileBenchmark(const CrowdCharacter& character, const PileBenchOptions& options) {
  const RagdollAsset& asset = *character.asset;
  const size_t nb = asset.bodies.size();
  CrowdSettings settings;
  settings.handoffSleeping = options.handoffSleeping;
  settings.freezing = options.freezing;
  if (options.jointIterationFactor > 0) settings.world.jointIterationFactor = options.jointIterationFactor;
  settings.createWorld = options.createWorld;
  Result<std::unique_ptr<Crowd>> made =
      Crowd::create(character.asset, character.skeleton, flatFloor(0.0), settings);
  if (!made) return Error{made.error()};
  Crowd& crowd = **made;
  const int side = std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(options.piles)))));
  crowd.reserve(options.piles, options.perPile, 0);

  // The dead pose, pelvis at the origin.
  std::vector<Transform> dead(nb), pose(nb);
  bodyPosesFromModels(asset, character.deadModels, Transform{}, dead);
  const int pelvis = std::max(0, asset.bodyForSlot(Slot::Pelvis));
  const Vec3 pelvisAt = dead[static_cast<size_t>(pelvis)].translation;
  const std::vector<Vec3> zero(nb, Vec3{0.0});
  for (int p = 0; p < options.piles; ++p) {
    const Vec3 centre{options.spacing * (p % side - 0.5 * (side - 1)), 0.0,
                      options.spacing * (p / side - 0.5 * (side - 1))};
    for (int i = 0; i < options.perPile; ++i) {
      const double yaw = 2.0 * std::numbers::pi * i / options.perPile;
      const Transform place =
          Transform{glm::angleAxis(yaw, Vec3{0.0, 1.0, 0.0}), centre + Vec3{0.0, 0.6 * (i + 1), 0.0}} *
          Transform::fromTranslation(-pelvisAt);
      for (size_t b = 0; b < nb; ++b) pose[b] = place * dead[b];
      Result<int> added = crowd.add(pose, zero, zero);
      if (!added) return Error{added.error()};
    }
  }

  PileBenchResult r;
  r.ragdolls = options.piles * options.perPile;
  r.bodies = r.ragdolls * static_cast<int>(nb);
  r.joints = r.ragdolls * static_cast<int>(asset.joints.size());
  r.threads = options.threads;
  r.steps = options.steps;
  ThreadPool pool(options.threads);
  long long bodySteps = 0;
  const double cpuStart = processCpuSeconds();
  for (int s = 0; s < options.steps; ++s) {
    const Clock::time_point start = Clock::now();
    crowd.step(options.dt, pool);
    const double ms = msSince(start);
    r.seconds += ms * 1e-3;
    r.worstStepMs = std::max(r.worstStepMs, ms);
    bodySteps += crowd.stats().bodySteps;
    if (r.allAsleepTime < 0.0 && crowd.stats().activeBodies == 0) r.allAsleepTime = (s + 1) * options.dt;
    if (crowd.stats().activeBodies > 0) {
      r.allAsleepTime = -1.0;
      r.maxSpeedBeforeSleep = crowd.stats().maxLinearSpeed;
      r.maxAngularSpeedBeforeSleep = crowd.stats().maxAngularSpeed;
    }
  }
  r.cpuMsPerStep = options.steps > 0 ? 1e3 * (processCpuSeconds() - cpuStart) / options.steps : 0.0;
  const CrowdStats& st = crowd.stats();
  r.msPerStep = options.steps > 0 ? 1e3 * r.seconds / options.steps : 0.0;
  r.stepsPerSecond = r.seconds > 0.0 ? options.steps / r.seconds : 0.0;
  // Per body-step over every body of the scene (the reference's figure: time / (bodies x steps)).
  r.nsPerBodyStep = r.bodies > 0 && options.steps > 0
                        ? 1e9 * r.seconds / (static_cast<double>(r.bodies) * options.steps)
                        : 0.0;
  (void)bodySteps;
  r.activeBodiesEnd = st.activeBodies;
  r.sleepingBodiesEnd = st.sleepingBodies;
  r.frozenBodiesEnd = st.frozenBodies;
  r.contactPointsEnd = st.contactPoints;
  r.maxSpeedEnd = st.maxLinearSpeed;
  r.maxAngularSpeedEnd = st.maxAngularSpeed;
  r.spacesEnd = st.spaces;
  r.peakRssKb = peakResidentKb();
  r.hash = crowd.stateHash();
  return r;
}

Result<MassDeathResult> runMassDeathBenchmark(const CrowdCharacter& character,
                                              const MassDeathOptions& options) {
  const RagdollAsset& asset = *character.asset;
  const size_t nb = asset.bodies.size();
  constexpr double kDt = 1.0 / 60.0;
  const Clip& clip = character.run;
  const int jointCount = character.skeleton.jointCount();
  std::vector<Transform> locals(static_cast<size_t>(jointCount)), models(locals.size());
  std::vector<Transform> poses(nb);

  // Floor just under the lowest body of the clip (the run's feet), so no body starts inside it.
  double floor = 1e30;
  for (int f = 0; f < clip.frameCount; f += 4) {
    clip.sample(clip.frameTime(f), WrapMode::Clamp, locals);
    localToModel(character.skeleton, locals, models);
    bodyPosesFromModels(asset, models, Transform{}, poses);
    for (size_t b = 0; b < nb; ++b) {
      const ShapeDesc& s = asset.bodies[b].shape;
      const double reach = s.type == ShapeType::Capsule ? s.radius + s.halfHeight
                           : s.type == ShapeType::Box   ? glm::length(s.halfExtents)
                                                        : s.radius;
      floor = std::min(floor, poses[b].translation.y - reach);
    }
  }
  CrowdSettings settings;
  settings.freezing = options.freezing;
  settings.holdWeight = 0.3;  // a dying body: weak motors toward the pose it died in
  Result<std::unique_ptr<Crowd>> made =
      Crowd::create(character.asset, character.skeleton, flatFloor(floor - 0.002), settings);
  if (!made) return Error{made.error()};
  Crowd& crowd = **made;
  const int n = options.characters;
  const int side = std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n)))));
  std::vector<Vec3> grid(static_cast<size_t>(n));
  std::vector<bool> reduce(static_cast<size_t>(n), false);
  int reducedCount = 0;
  for (int i = 0; i < n; ++i) {
    grid[static_cast<size_t>(i)] = Vec3{options.spacing * (i % side), 0.0, options.spacing * (i / side)};
    reduce[static_cast<size_t>(i)] =
        options.lod && glm::length(grid[static_cast<size_t>(i)]) > options.lodDistance;
    reducedCount += reduce[static_cast<size_t>(i)] ? 1 : 0;
  }
  if (options.pool) {
    // One space per character at most (each may fall alone), with room for what falls together.
    crowd.reserve(n, options.lod ? 1 : 2, options.lod ? 1 : 0);
  }

  PoseHistory history(static_cast<int>(nb));
  std::vector<Vec3> rawLinear(nb), rawAngular(nb), linear(nb), angular(nb);
  std::vector<std::uint8_t> clamps(nb);
  const HandoffSettings handoff;
  ThreadPool pool(options.threads);
  MassDeathResult r;
  r.characters = n;
  r.reducedCharacters = reducedCount;
  r.threads = options.threads;
  const int frames = static_cast<int>(std::lround(options.duration / kDt));
  std::vector<double> frameMs;
  frameMs.reserve(static_cast<size_t>(frames));
  double commitUsTotal = 0.0;
  int next = 0;
  for (int f = 0; f < frames; ++f) {
    const double time = (f + 1) * kDt;
    const Clock::time_point frameStart = Clock::now();
    // Deaths spread evenly over the window: everyone whose turn has come dies this frame.
    const int due = std::min(n, static_cast<int>(std::floor(n * std::min(1.0, time / options.deathWindow))));
    double animMs = 0.0;
    for (; next < due; ++next) {
      const Clock::time_point animStart = Clock::now();
      // The animation system's last two samples (each character in its own phase, running in place).
      const double phase = std::fmod(0.37 * next, std::max(clip.duration(), kDt));
      history.clear();
      Transform worldFromRoot;
      for (int k = 1; k >= 0; --k) {
        clip.sample(phase + time - k * kDt, WrapMode::Loop, locals);
        localToModel(character.skeleton, locals, models);
        if (k == 1) {
          const Vec3 hips = models[0].translation;
          worldFromRoot =
              Transform::fromTranslation(grid[static_cast<size_t>(next)] - Vec3{hips.x, 0.0, hips.z});
        }
        bodyPosesFromModels(asset, models, worldFromRoot, poses);
        (void)history.push(time - k * kDt, worldFromRoot, poses, false);
      }
      animMs += msSince(animStart);
      const Clock::time_point commitStart = Clock::now();
      inheritVelocities(history, handoff, rawLinear, rawAngular, linear, angular, clamps);
      Result<int> added = crowd.add(poses, linear, angular, reduce[static_cast<size_t>(next)]);
      const double us = 1e3 * msSince(commitStart);
      if (!added) return Error{added.error()};
      commitUsTotal += us;
      r.worstCommitUs = std::max(r.worstCommitUs, us);
    }
    if (crowd.characterCount() > 0) crowd.step(kDt, pool);
    // The animation sampling above stands for the game's own animation update, not physics.
    frameMs.push_back(msSince(frameStart) - animMs);
  }
  r.frames = frames;
  r.meanCommitUs = n > 0 ? commitUsTotal / n : 0.0;
  std::vector<double> sorted = frameMs;
  std::sort(sorted.begin(), sorted.end());
  r.worstFrameMs = sorted.empty() ? 0.0 : sorted.back();
  r.p95FrameMs = sorted.empty() ? 0.0 : sorted[static_cast<size_t>(std::floor(0.95 * (sorted.size() - 1)))];
  for (double ms : frameMs) {
    r.meanFrameMs += ms / static_cast<double>(frameMs.size());
    r.framesOver16ms += ms > 16.6 ? 1 : 0;
  }
  const CrowdStats& st = crowd.stats();
  r.activeBodiesEnd = st.activeBodies;
  r.sleepingBodiesEnd = st.sleepingBodies;
  r.frozenBodiesEnd = st.frozenBodies;
  r.spacesEnd = st.spaces;
  r.poolMisses = st.poolMisses;
  r.hash = crowd.stateHash();
  return r;
}

}  // namespace handoff
