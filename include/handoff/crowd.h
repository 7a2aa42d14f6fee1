// Crowds (the `crowd` module): hundreds of dead ragdolls in independent simulation spaces stepped
// in parallel, handoff-side sleeping, freezing, physics LOD, pooled body creation for mass deaths,
// and the crowd benchmarks. docs/CROWDS.md describes the design; docs/BENCHMARKS.md the figures.
//
// Spaces: every cluster of interacting characters lives in its own PhysicsWorld (one Bullet
// world each, as Unreal's RigidBody node simulates a character in its own space). Clusters are
// recomputed before every step from the characters' bounds: clusters whose bounds meet are merged
// into one space, a space whose characters no longer meet is split. The static scene is one
// description shared by all spaces. Spaces are stepped in parallel on a ThreadPool; every
// decision that moves a character between spaces is taken on the calling thread in a fixed
// order, so results are bit-identical whatever the number of threads.
//
// Thread-safety: a Crowd is used by one thread at a time; Crowd::step uses the pool's threads
// internally. Assets and skeletons are immutable and shared.
#pragma once

#include "handoff/asset.h"
#include "handoff/math.h"
#include "handoff/physics.h"
#include "handoff/result.h"
#include "handoff/rig.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace handoff {

// ------------------------------------------------------------------------------------------------
// Thread pool
// ------------------------------------------------------------------------------------------------

/// A fixed set of worker threads running index ranges (std::thread, no dependency). The calling
/// thread takes part: a pool of N threads starts N - 1 workers. Thread-safety: parallelFor is
/// called by one thread at a time (the pool's owner); the task runs on every pool thread at once.
class ThreadPool {
 public:
  /// `threads` >= 1 (clamped). 1 runs everything on the caller.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  int threadCount() const { return static_cast<int>(workers_.size()) + 1; }
  /// Calls task(context, i) once for every i in [0, count), on the workers and the caller, and
  /// returns when all calls returned. Indices are taken in increasing order from a shared
  /// counter. Never allocates; task must not throw.
  void parallelFor(int count, void (*task)(void* context, int index), void* context);

 private:
  void workerLoop();
  void runIndices();
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wakeWorkers_;
  std::condition_variable jobDone_;
  std::uint64_t generation_ = 0;  // guarded by mutex_
  int busyWorkers_ = 0;           // guarded by mutex_
  bool quit_ = false;             // guarded by mutex_
  void (*task_)(void*, int) = nullptr;
  void* context_ = nullptr;
  int count_ = 0;
  std::atomic<int> next_{0};
};

// ------------------------------------------------------------------------------------------------
// Static scene shared by every space
// ------------------------------------------------------------------------------------------------

/// The static world geometry, described once and instantiated in every space in the same order
/// (so every space sees identical ground).
struct StaticScene {
  struct Plane {
    Vec3 normal{0.0, 1.0, 0.0};  ///< [unit] [default +Y]
    double offset = 0.0;         ///< Plane: dot(normal, p) = offset. [m] [default 0]
    double friction = 0.8;       ///< [>= 0] [default 0.8]
  };
  struct Box {
    Transform worldFromBox;
    Vec3 halfExtents{0.5};  ///< [m] [> 0] [default 0.5]
    double friction = 0.8;  ///< [>= 0] [default 0.8]
  };
  std::vector<Plane> planes;
  std::vector<Box> boxes;
  /// Adds every plane and box to `world`.
  void addTo(PhysicsWorld& world) const;
};

// ------------------------------------------------------------------------------------------------
// Physics LOD: a reduced ragdoll mapped back onto the full one
// ------------------------------------------------------------------------------------------------

/// A reduced ragdoll for distant characters: pelvis, chest, head and the upper limbs (upper arms,
/// upper legs) only. Every full body rides on one reduced body (its "carrier": itself when kept,
/// else its nearest kept ancestor), so the full skeleton is recovered from the reduced poses.
struct ReducedRagdoll {
  RagdollAsset asset;  ///< The reduced bodies and joints (masses of dropped bodies added to their carriers).
  std::vector<int> fullFromReduced;  ///< Full body index of each reduced body.
  std::vector<int> carrierOfFull;    ///< Reduced body index each full body rides on.
};

/// Builds the reduced ragdoll of a full asset (its skeleton is the one the asset was built for:
/// the rest pose places the new joints). Fails when the asset lacks pelvis, chest or head.
Result<ReducedRagdoll> buildReducedRagdoll(const RagdollAsset& full, const Skeleton& skeleton);

/// carrierFromBody[b] = inverse(worldFromCarrier) * worldFromBody for every full body b of a full
/// pose (identity for kept bodies): the offsets the dropped bodies keep while reduced.
void reducedCarrierOffsets(const ReducedRagdoll& reduced, std::span<const Transform> fullWorldFromBodies,
                           std::span<Transform> carrierFromBody);
/// Full body poses from reduced ones: worldFromBody = worldFromCarrier * carrierFromBody.
/// Never allocates.
void mapReducedToFull(const ReducedRagdoll& reduced, std::span<const Transform> reducedWorldFromBodies,
                      std::span<const Transform> carrierFromBody, std::span<Transform> fullWorldFromBodies);

// ------------------------------------------------------------------------------------------------
// Handoff-side sleeping: the rest rule, and group sleeping in a world you step yourself
// ------------------------------------------------------------------------------------------------

/// When a ragdoll counts as at rest for handoff-side sleeping (docs/CROWDS.md). Every `window`
/// it measures how far each of its bodies moved over the window: at rest after a window where
/// every body stayed within `distance` and `angle`, or after `creepTime` of consecutive windows
/// within `creepDistance` and `creepAngle` (lying in a heap, only creeping); a single window
/// beyond those between creeping ones (a limb twitching in a pile) does not start the creep time
/// over, two in a row do.
struct RestRule {
  double window = 0.5;          ///< [s] [> 0] [default 0.5]
  double distance = 0.05;       ///< [m] [>= 0] [default 0.05]
  double angle = 0.15;          ///< [rad] [>= 0] [default 0.15]
  double creepDistance = 0.12;  ///< Per window. [m] [>= 0] [default 0.12]
  double creepAngle = 0.3;      ///< Per window. [rad] [>= 0] [default 0.3]
  double creepTime = 3.0;       ///< [s] [>= 0] [default 3]
};

/// One ragdoll's progress through RestRule's windows. `start` holds the body poses at the
/// current window's start (the caller's storage, one per body). Never allocates. [step-safe]
struct RestWindow {
  double clock = 0.0;       ///< [s] into the current window
  double creepClock = 0.0;  ///< [s] of consecutive windows within the creep tolerances
  bool settled = false;     ///< The last full window found the ragdoll at rest.
  bool twitched = false;    ///< The last full window was beyond the creep tolerances.
  /// Adds `dt`; when the window is full, compares `pose` with `start`, decides `settled` and
  /// starts the next window at `pose`.
  void advance(std::span<const Transform> pose, std::span<Transform> start, double dt, const RestRule& rule);
  /// Starts again from `pose`, not settled (after a wake-up).
  void restart(std::span<const Transform> pose, std::span<Transform> start);
};

/// Group sleeping for ragdolls in one PhysicsWorld you step yourself (controller Characters,
/// your own ragdolls): what a Crowd does in each of its spaces. Bullet puts an island to sleep
/// only when every body in it has been below its thresholds for a while, which a pile of
/// ragdolls (motors against contacts, a limb always rattling somewhere) never is. Here each
/// registered ragdoll measures its RestRule windows; ragdolls whose bounds (grown by `margin`)
/// touch form a group, and a group is put to sleep together (PhysicsWorld::sleep on every body)
/// once each member is at rest or asleep. The engine wakes them as usual (a hit, an awake body
/// arriving); a woken ragdoll starts its windows again. A ragdoll with a body that is not
/// dynamic (animated, kinematic) or not enabled is left out: it is never put to sleep and does
/// not keep the ragdolls it touches awake (Bullet wakes what a moving kinematic body touches).
/// `margin` [m] [>= 0] [default 0.3]. Thread-safety: used by the thread that steps its world.
class SleepGroups {
 public:
  explicit SleepGroups(const RestRule& rule = {}, double margin = 0.3);
  /// Registers one ragdoll: its bodies and, per body, the radius of a sphere around the body's
  /// centre holding its shape (shapeBoundingRadius). Allocates: call at load time. Errors name
  /// the problem (empty, sizes differ, a radius not finite or negative).
  Result<int> add(std::span<const BodyId> bodies, std::span<const double> radii);
  /// After every PhysicsWorld::step(dt): advances the windows, finds the touching groups and puts
  /// the groups at rest to sleep. Never allocates once every ragdoll was added. [step-safe]
  void update(PhysicsWorld& world, double dt);
  int ragdollCount() const { return static_cast<int>(ragdolls_.size()); }
  /// Every body of the ragdoll asleep after the last update.
  bool asleep(int ragdoll) const { return ragdolls_[static_cast<size_t>(ragdoll)].asleep; }
  /// Ragdolls put to sleep by the last update (not the engine's own sleeping).
  int putToSleepLastUpdate() const { return putToSleep_; }

 private:
  struct Ragdoll {
    std::vector<BodyId> bodies;
    std::vector<double> radii;
    std::vector<Transform> pose, start;
    RestWindow rest;
    bool asleep = false;
    bool eligible = false;  // every body dynamic and enabled
    Vec3 lo{0.0}, hi{0.0};
  };
  int root(int i);
  RestRule rule_;
  double margin_;
  std::vector<Ragdoll> ragdolls_;
  std::vector<int> parent_;  // union-find scratch
  std::vector<std::uint8_t> groupAtRest_, groupAwake_;
  int putToSleep_ = 0;
};

// ------------------------------------------------------------------------------------------------
// The crowd
// ------------------------------------------------------------------------------------------------

struct CrowdSettings {
  /// Settings of every space: the library's, but for one iteration of the joint rows per
  /// velocity iteration (WorldSettings::jointIterationFactor 1): dead ragdolls need no stiffer
  /// joints, and it halves the joint solve of every awake space (docs/CROWDS.md).
  WorldSettings world = [] {
    WorldSettings w;
    w.jointIterationFactor = 1;
    return w;
  }();
  /// Substeps per step: one, the reference scene's (a crowd of dead ragdolls needs no stiff drive).
  /// [>= 1] [default 1]
  int substeps = 1;
  /// Character bounds (the box around its bodies' shapes) are grown by this before clusters are
  /// found: characters closer than this share a space. [m] [default 0.3]
  double clusterMargin = 0.3;

  /// Handoff-side sleeping. Every `sleepWindow` each character measures how far each of its
  /// bodies moved over the window. It is settled after a window where every body stayed within
  /// sleepDistance and sleepAngle, or after `creepTime` of consecutive windows within
  /// creepDistance and creepAngle (lying in a heap, only creeping). A group of characters whose
  /// bounds touch is put to sleep together once all are settled: Bullet's own per-body timer
  /// never catches a jittering pile (docs/TUNING.md has what a dead ragdoll creeps by).
  /// [default true]
  bool handoffSleeping = true;
  double sleepWindow = 0.5;     ///< [s] [> 0] [default 0.5]
  double sleepDistance = 0.05;  ///< [m] [>= 0] [default 0.05]
  double sleepAngle = 0.15;     ///< [rad] [>= 0] [default 0.15]
  double creepDistance = 0.12;  ///< Per window. [m] [>= 0] [default 0.12]
  double creepAngle = 0.3;      ///< Per window. [rad] [>= 0] [default 0.3]
  double creepTime = 3.0;       ///< [s] [>= 0] [default 3]

  /// Freezing: a character asleep for `freezeDelay` with no awake body within clusterMargin has
  /// its bodies removed from the simulation (pose kept) and is thawed when an awake character's
  /// bounds reach it. [default false]
  bool freezing = false;
  double freezeDelay = 0.5;  ///< [s] [>= 0] [default 0.5]

  /// Joint motors hold the pose a character is added with (the "dead" pose): the asset's drive
  /// gains times this weight (handoff::implicitMotorSettings). 0: limp. [0, 1] [default 1]
  double holdWeight = 1.0;

  /// Creates a space. [default empty: handoff::createBulletWorld]
  std::function<std::unique_ptr<PhysicsWorld>(const WorldSettings&)> createWorld;
};

enum class CrowdCharacterState : std::uint8_t {
  Active,    ///< Simulated, awake.
  Sleeping,  ///< Simulated, asleep (handoff-side or engine).
  Frozen,    ///< Bodies out of the simulation, pose kept.
};
const char* crowdCharacterStateName(CrowdCharacterState state);

/// Figures after the last step (SPEC.md section 7).
struct CrowdStats {
  int spaces = 0;  ///< Spaces holding at least one character.
  int characters = 0;
  int bodies = 0;           ///< Ragdoll bodies of all characters (reduced ones count their own).
  int simulatedBodies = 0;  ///< Bodies in a simulation (not frozen).
  int activeBodies = 0;     ///< Simulated and awake.
  int sleepingBodies = 0;   ///< Simulated and asleep.
  int frozenBodies = 0;     ///< Out of the simulation.
  int contactPoints = 0;
  double maxLinearSpeed = 0.0;   ///< Fastest awake body (sleeping bodies are at rest). [m/s]
  double maxAngularSpeed = 0.0;  ///< [rad/s]
  int bodySteps =
      0;           ///< Bodies of the spaces stepped (all-asleep spaces are not) x substeps of the last step.
  int merges = 0;  ///< Spaces merged into another during the last step.
  int splits = 0;  ///< Spaces split off during the last step.
  int migrations = 0;  ///< Characters moved between spaces during the last step.
  int frozenNow = 0;   ///< Characters frozen during the last step.
  int thawedNow = 0;   ///< Characters thawed during the last step.
  int poolMisses = 0;  ///< Bodies created from the heap since creation (pool exhausted).
};

/// Many dead ragdolls of one character in independent spaces. Thread-safety: see the top of this
/// header (one thread at a time; step() uses the pool's threads).
class Crowd {
 public:
  /// `skeleton` is the asset's. Builds the reduced (LOD) ragdoll too.
  static Result<std::unique_ptr<Crowd>> create(std::shared_ptr<const RagdollAsset> asset,
                                               const Skeleton& skeleton, StaticScene scene,
                                               CrowdSettings settings = {});
  ~Crowd();
  Crowd(const Crowd&) = delete;
  Crowd& operator=(const Crowd&) = delete;

  /// Pre-creates `spaces` empty spaces, each with `fullRagdolls` full and `reducedRagdolls`
  /// reduced ragdolls out of the simulation, so that later add() calls take bodies from these
  /// pools instead of the heap. Allocates: call at load time.
  void reserve(int spaces, int fullRagdolls, int reducedRagdolls);

  /// Hands a character to physics: full-asset body poses and velocities (asset body order). The
  /// joint motors hold the relative rotations of this pose (CrowdSettings::holdWeight).
  /// `reduced`: simulate the LOD ragdoll. Takes bodies from a pool when one is free (no heap
  /// allocation then). Returns the character's index (indices are never reused).
  Result<int> add(std::span<const Transform> worldFromBodies, std::span<const Vec3> linearVelocities,
                  std::span<const Vec3> angularVelocities, bool reduced = false);

  /// Finds clusters (merging and splitting spaces), steps every space on the pool, then
  /// updates sleeping and freezing.
  void step(double dt, ThreadPool& pool);

  int characterCount() const;
  CrowdCharacterState state(int character) const;
  bool reduced(int character) const;
  /// Bodies the character simulates (the reduced ragdoll's count when reduced).
  int simulatedBodyCount(int character) const;
  /// Index of the space holding the character (spaces are numbered in creation order).
  int spaceOf(int character) const;
  /// Full-asset body poses (reduced characters mapped back, frozen ones at their kept pose).
  /// `worldFromBodies` has asset().bodies.size() elements. Never allocates.
  void readBodyPoses(int character, std::span<Transform> worldFromBodies) const;
  /// Freezes a sleeping character now (CrowdSettings::freezing does it automatically). Returns
  /// false when the character is not asleep.
  bool freeze(int character);
  /// Brings a frozen character back into the simulation (asleep, at the pose it froze in).
  void thaw(int character);
  /// A hit: wakes (thawing if frozen) the character and applies an impulse to one full body (a
  /// reduced character applies it to the carrier). [N s]
  void applyImpulse(int character, int fullBody, const Vec3& impulse, const Vec3& worldPoint);

  const CrowdStats& stats() const;
  const RagdollAsset& asset() const;
  const ReducedRagdoll& reducedRagdoll() const;
  const CrowdSettings& settings() const;
  /// FNV-1a over every character's body poses and velocities (bit patterns), in character
  /// order: equal hashes mean bit-identical states.
  std::uint64_t stateHash() const;

 private:
  struct Impl;
  explicit Crowd(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ------------------------------------------------------------------------------------------------
// The default crowd character and the benchmarks (bench/crowd_bench.cpp, `handoff bench crowd`)
// ------------------------------------------------------------------------------------------------

/// The default character (DeepMimic humanoid, data/deepmimic) with its ragdoll and a "dead" pose
/// (lying on the back: the first frame of the face-up get-up clip, root at the origin).
struct CrowdCharacter {
  Skeleton skeleton;
  std::shared_ptr<const RagdollAsset> asset;
  std::vector<Transform> deadModels;  ///< rootFromJoint of the dead pose.
  Clip run;                           ///< The run clip (animated characters of the mass death).
};
Result<CrowdCharacter> loadCrowdCharacter(const std::string& dataDir);

/// Jolt's PerformanceTest "Ragdoll" scene with handoff's ragdolls: `piles` piles (centres on a
/// square grid `spacing` apart) of `perPile` ragdolls, ragdoll i of a pile starting 0.6 (i + 1) m
/// above the floor and turned 2 pi i / perPile about the vertical, in the dead pose held by joint
/// motors; friction 1, restitution 0.15, damping 0.05, 10 iterations, 1/60 s steps.
struct PileBenchOptions {
  int piles = 16;               ///< [>= 1] [default 16]
  int perPile = 10;             ///< [>= 1] [default 10]
  double spacing = 4.0;         ///< [m] [> 0] [default 4]
  int steps = 500;              ///< [>= 1] [default 500]
  int threads = 1;              ///< [>= 1] [default 1]
  double dt = 1.0 / 60.0;       ///< [s] [> 0] [default 1/60]
  bool handoffSleeping = true;  ///< CrowdSettings::handoffSleeping. [default true]
  bool freezing = false;        ///< CrowdSettings::freezing. [default false]
  /// WorldSettings::jointIterationFactor of every space; 0 keeps CrowdSettings::world's.
  /// [>= 0] [default 0]
  int jointIterationFactor = 0;
  /// Creates each space (CrowdSettings::createWorld). [default empty: handoff::createBulletWorld]
  std::function<std::unique_ptr<PhysicsWorld>(const WorldSettings&)> createWorld;
};
struct PileBenchResult {
  int ragdolls = 0, bodies = 0, joints = 0, threads = 0, steps = 0;
  double seconds = 0.0;  ///< Wall clock of the measured steps. [s]
  /// Wall clock: steps per second [1/s], per step [ms], per body-step [ns].
  double stepsPerSecond = 0.0, msPerStep = 0.0, nsPerBodyStep = 0.0;
  double worstStepMs = 0.0;  ///< The slowest step, wall clock. [ms]
  /// Process CPU time per step (all threads): on a shared, loaded machine the wall-clock figures
  /// include waiting for a core; this one does not (at 1 thread it is the work itself). [ms]
  double cpuMsPerStep = 0.0;
  int activeBodiesEnd = 0, sleepingBodiesEnd = 0, frozenBodiesEnd = 0, contactPointsEnd = 0;
  int spacesEnd = 0;
  double allAsleepTime = -1.0;  ///< Simulated time when no body was active any more (-1: never). [s]
  /// Fastest body after the last step that still had an awake body (how still the scene was when
  /// it went to sleep), and after the last step. [m/s], [rad/s]
  double maxSpeedBeforeSleep = 0.0, maxAngularSpeedBeforeSleep = 0.0;
  double maxSpeedEnd = 0.0, maxAngularSpeedEnd = 0.0;
  long peakRssKb = 0;  ///< getrusage ru_maxrss of the process. [KiB]
  std::uint64_t hash = 0;
};
Result<PileBenchResult> runPileBenchmark(const CrowdCharacter& character, const PileBenchOptions& options);

/// Mass death: `characters` animated characters (running in place on a grid `spacing` apart)
/// handed off to physics spread evenly over `deathWindow` seconds, then simulated until
/// `duration`. Frame time = the frame's commits plus the crowd step.
struct MassDeathOptions {
  int characters = 200;      ///< [>= 1] [default 200]
  double spacing = 2.0;      ///< [m] [> 0] [default 2]
  double deathWindow = 1.0;  ///< [s] [>= 0] [default 1]
  double duration = 4.0;     ///< [s] [> 0] [default 4]
  int threads = 2;           ///< [>= 1] [default 2]
  bool freezing = true;      ///< CrowdSettings::freezing. [default true]
  bool lod = true;           ///< Reduce distant characters (lodDistance). [default true]
  /// Characters farther than this from the viewer (grid corner) are reduced. [m] [default 12]
  double lodDistance = 12.0;
  bool pool = true;  ///< Reserve pools before the first frame. [default true]
};
struct MassDeathResult {
  int characters = 0, reducedCharacters = 0, frames = 0, threads = 0;
  double worstFrameMs = 0.0, p95FrameMs = 0.0, meanFrameMs = 0.0;  ///< Wall clock. [ms]
  double meanCommitUs = 0.0, worstCommitUs = 0.0;                  ///< One commit. [us]
  int framesOver16ms = 0;
  int activeBodiesEnd = 0, sleepingBodiesEnd = 0, frozenBodiesEnd = 0;
  int spacesEnd = 0, poolMisses = 0;
  std::uint64_t hash = 0;
};
Result<MassDeathResult> runMassDeathBenchmark(const CrowdCharacter& character,
                                              const MassDeathOptions& options);

/// Peak resident memory of the process (getrusage ru_maxrss). [KiB]
long peakResidentKb();

}  // namespace handoff
