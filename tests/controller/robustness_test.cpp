// Robustness (issue 9): bad values are refused where they enter the API, with a reason, and
// leave the character exactly as it was; a NaN inside the physics is contained within one step
// without touching other characters; runs are bit-identical; characters leave nothing behind.
#include "handoff/controller.h"
#include "handoff/physics_bullet.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "physics_bullet/bullet_internal.h"
#include "support/bullet_precision.h"
#include "support/robust_scene.h"

namespace handoff {
namespace {

using test::DrivenCharacter;
using test::kRobustDt;
using test::loadCharacter;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

bool sameBits(const Transform& a, const Transform& b) {
  return std::memcmp(&a.rotation, &b.rotation, sizeof a.rotation) == 0 &&
         std::memcmp(&a.translation, &b.translation, sizeof a.translation) == 0;
}
bool sameBits(const Vec3& a, const Vec3& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Everything a refused call could have changed.
struct Snapshot {
  CharacterState state{};
  std::vector<Transform> poses;
  std::vector<Vec3> linear, angular;
  std::vector<MotionType> motion;
  int historySize = 0;
  double historyTime = 0.0;
  size_t handoffs = 0;
  Transform displayRoot;
  std::vector<Transform> display;

  static Snapshot of(const Character& c) {
    Snapshot s = of(c.ragdoll());
    s.state = c.state();
    s.handoffs = c.handoffs().size();
    s.displayRoot = c.displayRoot();
    s.display.assign(c.displayLocals().begin(), c.displayLocals().end());
    return s;
  }
  static Snapshot of(const Ragdoll& r) {
    Snapshot s;
    for (int b = 0; b < r.bodyCount(); ++b) {
      s.poses.push_back(r.world().transform(r.body(b)));
      s.linear.push_back(r.world().linearVelocity(r.body(b)));
      s.angular.push_back(r.world().angularVelocity(r.body(b)));
      s.motion.push_back(r.world().motionType(r.body(b)));
    }
    s.historySize = r.history().size();
    s.historyTime = r.history().size() > 0 ? r.history().time(0) : -1.0;
    return s;
  }
  ::testing::AssertionResult equals(const Snapshot& o) const {
    if (state != o.state) return ::testing::AssertionFailure() << "state changed";
    for (size_t b = 0; b < poses.size(); ++b) {
      if (!sameBits(poses[b], o.poses[b]) || !sameBits(linear[b], o.linear[b]) ||
          !sameBits(angular[b], o.angular[b]) || motion[b] != o.motion[b]) {
        return ::testing::AssertionFailure() << "body " << b << " changed";
      }
    }
    if (historySize != o.historySize || historyTime != o.historyTime)
      return ::testing::AssertionFailure() << "pose history changed";
    if (handoffs != o.handoffs) return ::testing::AssertionFailure() << "a handoff was recorded";
    if (!sameBits(displayRoot, o.displayRoot)) return ::testing::AssertionFailure() << "display root changed";
    for (size_t j = 0; j < display.size(); ++j) {
      if (!sameBits(display[j], o.display[j])) return ::testing::AssertionFailure() << "display joint " << j;
    }
    return ::testing::AssertionSuccess();
  }
};

// A character animated for 10 frames on flat ground, and beside it (in a world of its own) a
// Ragdoll of the same asset fed the same poses: the Ragdoll-level refusals are checked on that
// one (a Character gives no mutable access to its ragdoll).
struct Scene {
  std::unique_ptr<PhysicsWorld> world = createBulletWorld();
  std::optional<DrivenCharacter> d;
  std::unique_ptr<PhysicsWorld> loneWorld = createBulletWorld();
  std::unique_ptr<Ragdoll> loneRagdoll;
  double loneTime = 0.0;  ///< Time of the lone ragdoll's newest pose. [s]
  explicit Scene(int frames = 10) {
    world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
    loneWorld->addGroundPlane(Vec3{0, 1, 0}, 0.0);
    const test::Character& c = loadCharacter("deepmimic/humanoid3d_run.bvh");
    if (!c.asset) return;
    d = DrivenCharacter::create(*world, c, Transform::identity());
    if (!d) return;
    std::vector<Transform> models(d->locals.size());
    localToModel(c.skeleton(), d->locals, models);
    Result<std::unique_ptr<Ragdoll>> lone =
        Ragdoll::create(*loneWorld, c.asset, c.skeleton(), Transform::identity(), models);
    EXPECT_TRUE(lone) << lone.error();
    if (!lone) return;
    loneRagdoll = std::move(lone).value();
    for (int i = 0; i < frames; ++i) {
      EXPECT_TRUE(d->preStep());
      localToModel(c.skeleton(), d->locals, models);
      loneTime += kRobustDt;
      EXPECT_TRUE(loneRagdoll->setAnimatedPose(loneTime, d->root, models, false, kRobustDt));
      world->step(kRobustDt, 2);
      loneWorld->step(kRobustDt, 2);
      d->character->postStep(kRobustDt);
    }
  }
  Character& ch() { return *d->character; }
  Ragdoll& lone() { return *loneRagdoll; }
};

void expectRefused(const Status& s, const std::string& fragment) {
  ASSERT_FALSE(s) << "accepted, expected a refusal containing '" << fragment << "'";
  EXPECT_NE(s.error().find(fragment), std::string::npos) << s.error();
  std::printf("refused: %s\n", s.error().c_str());
}

TEST(Refusal, NonFiniteAnimationPose) {
  Scene scene;
  ASSERT_TRUE(scene.d);
  Character& ch = scene.ch();
  const Snapshot before = Snapshot::of(ch);
  std::vector<Transform> locals = scene.d->locals;
  locals[3].rotation.x = kNaN;
  const AnimationInput nanPose{scene.d->animTime + kRobustDt, scene.d->root, locals, false};
  expectRefused(ch.preStep(nanPose, kRobustDt),
                "joint '" + ch.skeleton().jointNames[3] + "' of the animation pose is not finite");
  EXPECT_TRUE(before.equals(Snapshot::of(ch)));
  EXPECT_EQ(ch.events().back().kind, CharacterEventKind::Refused);

  Transform root = scene.d->root;
  root.translation.y = kInf;
  const AnimationInput infRoot{scene.d->animTime + kRobustDt, root, scene.d->locals, false};
  expectRefused(ch.preStep(infRoot, kRobustDt), "root transform is not finite");
  EXPECT_TRUE(before.equals(Snapshot::of(ch)));

  // The same at the Ragdoll level, in model space.
  std::vector<Transform> models(locals.size());
  localToModel(ch.skeleton(), scene.d->locals, models);
  const int pelvisJoint = ch.ragdoll().asset().bodies[0].joint;
  models[static_cast<size_t>(pelvisJoint)].translation.x = kNaN;
  const Snapshot loneBefore = Snapshot::of(scene.lone());
  expectRefused(
      scene.lone().setAnimatedPose(scene.loneTime + kRobustDt, scene.d->root, models, false, kRobustDt),
      "bone '" + ch.ragdoll().asset().bodies[0].name + "' pose is not finite");
  EXPECT_TRUE(loneBefore.equals(Snapshot::of(scene.lone())));
  EXPECT_TRUE(before.equals(Snapshot::of(ch)));
  // The character still runs from there.
  EXPECT_TRUE(scene.d->preStep());
}

TEST(Refusal, NonFiniteVelocitySample) {
  Scene scene;
  ASSERT_TRUE(scene.d);
  Character& ch = scene.ch();
  const Snapshot before = Snapshot::of(ch);
  std::vector<Transform> models(scene.d->locals.size());
  localToModel(ch.skeleton(), scene.d->locals, models);
  const int chest = ch.ragdoll().asset().bodies[2].joint;
  models[static_cast<size_t>(chest)].rotation.w = kInf;
  const double between = scene.lone().history().time(0) - kRobustDt / 8;
  const Snapshot loneBefore = Snapshot::of(scene.lone());
  expectRefused(scene.lone().addDenseSample(between, scene.d->root, models),
                "bone '" + ch.ragdoll().asset().bodies[2].name + "' pose is not finite");
  EXPECT_TRUE(loneBefore.equals(Snapshot::of(scene.lone())));
  EXPECT_TRUE(before.equals(Snapshot::of(ch)));
  // Through the controller: the dense sample is refused (event), the handoff goes on without it.
  std::vector<Transform> dense = scene.d->locals;
  dense[0].translation.z = kNaN;
  const AnimationInput denseInput{scene.d->animTime - kRobustDt / 8, scene.d->root, dense, false};
  const HandoffRecord& record = ch.goRagdoll(&denseInput);
  EXPECT_TRUE(record.committed) << record.failure;
  bool refusedDense = false;
  for (const CharacterEvent& e : ch.events())
    refusedDense |= e.kind == CharacterEventKind::Refused &&
                    std::string(e.detail).find("dense sample") != std::string::npos;
  EXPECT_TRUE(refusedDense);
  for (const BodyHandoff& b : record.bodies)
    EXPECT_TRUE(isFinite(b.linearVelocity) && isFinite(b.angularVelocity)) << b.name;
}

TEST(Refusal, ZeroNegativeAndNonFiniteTimeStep) {
  Scene scene;
  ASSERT_TRUE(scene.d);
  Character& ch = scene.ch();
  const Snapshot before = Snapshot::of(ch);
  const AnimationInput next{scene.d->animTime + kRobustDt, scene.d->root, scene.d->locals, false};
  for (double dt : {0.0, -kRobustDt, kNaN, kInf}) {
    expectRefused(ch.preStep(next, dt), "time step must be positive and finite");
    EXPECT_TRUE(before.equals(Snapshot::of(ch))) << "dt " << dt;
  }
  std::vector<Transform> models(scene.d->locals.size());
  localToModel(ch.skeleton(), scene.d->locals, models);
  const Snapshot loneBefore = Snapshot::of(scene.lone());
  expectRefused(scene.lone().setAnimatedPose(scene.loneTime + kRobustDt, scene.d->root, models, false, 0.0),
                "time step must be positive and finite");
  EXPECT_TRUE(loneBefore.equals(Snapshot::of(scene.lone())));
  EXPECT_TRUE(before.equals(Snapshot::of(ch)));
}

TEST(Refusal, DuplicateTimestamps) {
  Scene scene;
  ASSERT_TRUE(scene.d);
  Character& ch = scene.ch();
  const Snapshot before = Snapshot::of(ch);
  // The animation time of the last input again.
  const AnimationInput same{scene.d->animTime, scene.d->root, scene.d->locals, false};
  expectRefused(ch.preStep(same, kRobustDt), "does not advance");
  EXPECT_TRUE(before.equals(Snapshot::of(ch)));
  // A pose sample at the history's newest time.
  std::vector<Transform> models(scene.d->locals.size());
  localToModel(ch.skeleton(), scene.d->locals, models);
  const double newest = scene.lone().history().time(0);
  const Snapshot loneBefore = Snapshot::of(scene.lone());
  expectRefused(scene.lone().setAnimatedPose(newest, scene.d->root, models, false, kRobustDt),
                "does not advance");
  EXPECT_TRUE(loneBefore.equals(Snapshot::of(scene.lone())));
  // A dense velocity sample at the newest time (a zero-length difference).
  expectRefused(scene.lone().addDenseSample(newest, scene.d->root, models),
                "is not between the two newest samples");
  EXPECT_TRUE(loneBefore.equals(Snapshot::of(scene.lone())));
  EXPECT_TRUE(before.equals(Snapshot::of(ch)));
}

TEST(Refusal, CommitAtNonFinitePoseStaysAnimated) {
  Scene scene;
  ASSERT_TRUE(scene.d);
  Character& ch = scene.ch();
  const Snapshot before = Snapshot::of(ch);
  std::vector<Transform> models(scene.d->locals.size());
  localToModel(ch.skeleton(), scene.d->locals, models);
  const int thigh = ch.ragdoll().asset().bodyForSlot(Slot::UpperLegL);
  models[static_cast<size_t>(ch.ragdoll().asset().bodies[static_cast<size_t>(thigh)].joint)].rotation.y =
      kNaN;
  const Snapshot loneBefore = Snapshot::of(scene.lone());
  const HandoffRecord record =
      scene.lone().commitAt(HandoffSettings{}, scene.loneTime + kRobustDt, scene.d->root, models);
  EXPECT_FALSE(record.committed);
  EXPECT_NE(record.failure.find(ch.ragdoll().asset().bodies[static_cast<size_t>(thigh)].name),
            std::string::npos)
      << record.failure;
  std::printf("refused: %s\n", record.failure.c_str());
  EXPECT_TRUE(loneBefore.equals(Snapshot::of(scene.lone())));
  for (int b = 0; b < scene.lone().bodyCount(); ++b)
    EXPECT_EQ(scene.lone().authority(b), Authority::Animation);
  EXPECT_TRUE(before.equals(Snapshot::of(ch)));
}

TEST(Refusal, NonFiniteImpulse) {
  Scene scene;
  ASSERT_TRUE(scene.d);
  Character& ch = scene.ch();
  ASSERT_TRUE(scene.d->goRagdoll().committed);
  scene.world->step(kRobustDt, 2);
  ch.postStep(kRobustDt);
  const Snapshot before = Snapshot::of(ch);
  const Vec3 at = scene.world->transform(ch.ragdoll().body(1)).translation;
  expectRefused(ch.applyImpulse(1, Vec3{kNaN, 0, 0}, at), "impulse or point is not finite");
  expectRefused(ch.applyImpulse(1, Vec3{10, 0, 0}, Vec3{0, kInf, 0}), "impulse or point is not finite");
  expectRefused(ch.applyImpulse(ch.ragdoll().bodyCount(), Vec3{10, 0, 0}, at), "no body");
  EXPECT_TRUE(before.equals(Snapshot::of(ch)));
}

// Skeleton with a zero-length bone: the DeepMimic humanoid with its left elbow moved onto its
// shoulder.
TEST(Refusal, ZeroLengthBone) {
  const test::Character& c = loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  Skeleton skeleton = c.skeleton();
  const int elbow = c.asset->map[Slot::LowerArmL];
  skeleton.restLocal[static_cast<size_t>(elbow)].translation = Vec3{0.0};
  BuildReport report;
  const Result<RagdollAsset> built = buildRagdoll(skeleton, BuildOptions{}, &report);
  ASSERT_FALSE(built) << "a ragdoll was built around a zero-length upper arm";
  std::printf("refused: %s\n", built.error().c_str());
  const std::string& upperArm = skeleton.jointNames[static_cast<size_t>(c.asset->map[Slot::UpperArmL])];
  EXPECT_NE(built.error().find(upperArm), std::string::npos) << built.error();
}

TEST(Refusal, ZeroScale) {
  const test::Character& c = loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  BuildOptions options;
  options.headRadiusScale = 0.0;
  const Result<RagdollAsset> built = buildRagdoll(c.skeleton(), options);
  ASSERT_FALSE(built);
  std::printf("refused: %s\n", built.error().c_str());
  EXPECT_NE(built.error().find("headRadiusScale"), std::string::npos) << built.error();
  // A negative or non-finite unit scale (0 means auto-detect).
  for (double scale : {-1.0, kNaN}) {
    ImportOptions io;
    io.unitScale = scale;
    const Result<ImportedAsset> imported = importFile(test::dataPath("deepmimic/humanoid3d_run.bvh"), io);
    ASSERT_FALSE(imported);
    std::printf("refused: %s\n", imported.error().c_str());
    EXPECT_NE(imported.error().find("unitScale"), std::string::npos) << imported.error();
  }
  // A bone scaled to nothing: every offset zero collapses the skeleton.
  Skeleton collapsed = c.skeleton();
  for (Transform& t : collapsed.restLocal) t.translation = Vec3{0.0};
  const Result<RagdollAsset> none = buildRagdoll(collapsed, BuildOptions{});
  ASSERT_FALSE(none);
  std::printf("refused: %s\n", none.error().substr(0, 200).c_str());
}

TEST(Refusal, ZeroMass) {
  const test::Character& c = loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  BuildOptions options;
  options.totalMass = 0.0;
  const Result<RagdollAsset> built = buildRagdoll(c.skeleton(), options);
  ASSERT_FALSE(built);
  std::printf("refused: %s\n", built.error().c_str());
  EXPECT_NE(built.error().find("totalMass"), std::string::npos);

  // An asset with one massless body: the validator names it, the loader names the field, and
  // a Ragdoll is not created from it (nothing is left in the world).
  RagdollAsset asset = *c.asset;
  asset.bodies[3].mass = 0.0;
  const std::vector<Finding> findings = validateRagdoll(asset, c.skeleton());
  bool named = false;
  for (const Finding& f : findings) named |= f.code == "invalid_mass" && f.subject == asset.bodies[3].name;
  EXPECT_TRUE(named) << "no invalid_mass finding for " << asset.bodies[3].name;
  const Result<RagdollAsset> loaded = loadRagdollJson(saveRagdollJson(asset), "zero_mass.json");
  ASSERT_FALSE(loaded);
  std::printf("refused: %s\n", loaded.error().c_str());
  EXPECT_NE(loaded.error().find("bodies[3].mass"), std::string::npos) << loaded.error();

  std::unique_ptr<PhysicsWorld> world = createBulletWorld();
  std::vector<Transform> models(static_cast<size_t>(c.skeleton().jointCount()));
  localToModel(c.skeleton(), c.skeleton().restLocal, models);
  const auto created = Ragdoll::create(*world, std::make_shared<const RagdollAsset>(asset), c.skeleton(),
                                       Transform::identity(), models);
  ASSERT_FALSE(created);
  std::printf("refused: %s\n", created.error().c_str());
  EXPECT_NE(created.error().find(asset.bodies[3].name), std::string::npos) << created.error();
  EXPECT_EQ(world->bodyCount(), 0);
  EXPECT_EQ(world->jointCount(), 0);
}

// ---------------------------------------------------------------------------------------------
// NaN inside the physics.

// Two ragdolls 6 m apart in one world; a NaN is written into one body of the first at `faultStep`
// (< 0: never). Returns the second's body states per step (exact bits) and the first's figures.
struct FaultRun {
  std::vector<std::uint64_t> otherHashes;
  std::vector<Vec3> otherPositions;  // every body's centre, every step
  int faultEventStep = -1;
  bool restoredToLastValid = false;
  bool allFiniteAfter = true;
  int worldDisabled = 0;
};

FaultRun runWithFault(int faultStep) {
  FaultRun out;
  const test::Character& c = loadCharacter("deepmimic/humanoid3d_run.bvh");
  if (!c.asset) return out;
  WorldSettings settings;
  settings.islandOrderedSolve = true;  // the guarantee under test (docs/TUNING.md)
  std::unique_ptr<PhysicsWorld> world = createBulletWorld(settings);
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  std::optional<DrivenCharacter> a = DrivenCharacter::create(*world, c, Transform::identity());
  std::optional<DrivenCharacter> b =
      DrivenCharacter::create(*world, c, Transform::fromTranslation(Vec3{6, 0, 0}));
  if (!a || !b) return out;
  std::vector<Transform> before(static_cast<size_t>(a->character->ragdoll().bodyCount()));
  for (int step = 0; step < 120; ++step) {
    EXPECT_TRUE(a->preStep());
    EXPECT_TRUE(b->preStep());
    if (step == faultStep) {
      a->character->ragdoll().readBodyPoses(before);
      bullet_detail::injectNonFiniteVelocity(*world, a->character->ragdoll().body(4));
    }
    world->step(kRobustDt, 2);
    if (step == faultStep) out.worldDisabled = world->lastStepStats().bodiesLeftWorld;
    const size_t events = a->character->events().size();
    a->character->postStep(kRobustDt);
    b->character->postStep(kRobustDt);
    for (size_t e = events; e < a->character->events().size(); ++e) {
      if (a->character->events()[e].kind == CharacterEventKind::Fault) {
        out.faultEventStep = step;
        std::printf("step %d: fault event: %s\n", step, a->character->events()[e].detail);
      }
    }
    if (step == faultStep) {
      out.restoredToLastValid = true;
      for (int i = 0; i < a->character->ragdoll().bodyCount(); ++i) {
        const BodyId id = a->character->ragdoll().body(i);
        // Engine poses round-trip through Bullet's matrices: equal to 1e-12 m and rad, not bit for bit
        // (single-precision Bullet: the quaternion -> float matrix -> quaternion round trip and the
        // position are rounded, a few roundings of a unit quaternion and one of the position).
        const Transform now = world->transform(id);
        const Transform& was = before[static_cast<size_t>(i)];
        out.restoredToLastValid &=
            glm::length(now.translation - was.translation) <
                test::bulletTolerance(1e-12, glm::length(was.translation)) &&
            angleBetween(now.rotation, was.rotation) < test::bulletTolerance(1e-12, 1.0, 4) &&
            world->isEnabled(id) && glm::length(world->linearVelocity(id)) == 0.0 &&
            glm::length(world->angularVelocity(id)) == 0.0;
      }
    }
    for (int i = 0; i < a->character->ragdoll().bodyCount(); ++i) {
      const BodyId id = a->character->ragdoll().body(i);
      out.allFiniteAfter &= isFinite(world->transform(id)) && isFinite(world->linearVelocity(id));
    }
    if (step == 20) {
      EXPECT_TRUE(a->goRagdoll().committed);
      EXPECT_TRUE(b->goRagdoll().committed);
    }
    out.otherHashes.push_back(test::hashBodies(*world, b->character->ragdoll()));
    for (int i = 0; i < b->character->ragdoll().bodyCount(); ++i)
      out.otherPositions.push_back(world->transform(b->character->ragdoll().body(i)).translation);
  }
  return out;
}

TEST(PhysicsFault, NanInOneBodyIsContainedWithinOneStep) {
  const FaultRun clean = runWithFault(-1);
  const FaultRun faulty = runWithFault(50);  // 30 steps into the fall
  ASSERT_EQ(clean.otherHashes.size(), 120u);
  ASSERT_EQ(faulty.otherHashes.size(), 120u);
  std::printf("fault at step 50: bodies the world disabled %d, fault event at step %d, restored %d\n",
              faulty.worldDisabled, faulty.faultEventStep, faulty.restoredToLastValid);
  EXPECT_EQ(clean.faultEventStep, -1);
  EXPECT_GE(faulty.worldDisabled, 1);
  EXPECT_EQ(faulty.faultEventStep, 50);  // detected in the postStep of the step it happened in
  EXPECT_TRUE(faulty.restoredToLastValid);
  EXPECT_TRUE(faulty.allFiniteAfter);
  // The other character in the same world: bit for bit as without the fault, every step.
  int differing = 0, first = -1;
  for (size_t s = 0; s < clean.otherHashes.size(); ++s) {
    if (clean.otherHashes[s] != faulty.otherHashes[s] && first < 0) first = static_cast<int>(s);
    differing += clean.otherHashes[s] != faulty.otherHashes[s];
  }
  std::printf("other character: %d of %zu steps differ from the run without the fault (first: step %d)\n",
              differing, clean.otherHashes.size(), first);
  double deviation = 0.0;
  for (size_t i = 0; i < clean.otherPositions.size(); ++i)
    deviation = std::max(deviation, glm::length(clean.otherPositions[i] - faulty.otherPositions[i]));
  std::printf("other character: largest body position deviation %.3g m\n", deviation);
  EXPECT_EQ(differing, 0);
}

// ---------------------------------------------------------------------------------------------
// Determinism (in one process; tests/robustness/determinism_test.cmake runs two processes).

TEST(Determinism, ScriptedRunTwiceInOneProcessIsBitIdentical) {
  const std::vector<std::uint64_t> first = test::scriptedRunHashes();
  const std::vector<std::uint64_t> second = test::scriptedRunHashes();
  ASSERT_EQ(first.size(), 240u);
  ASSERT_EQ(second.size(), 240u);
  int differing = 0;
  for (size_t s = 0; s < first.size(); ++s) differing += first[s] != second[s];
  std::printf(
      "scripted run (handoff, impulse, fall, get-up), 240 steps: final hash %016llx vs %016llx, %d steps "
      "differ\n",
      static_cast<unsigned long long>(first.back()), static_cast<unsigned long long>(second.back()),
      differing);
  EXPECT_EQ(differing, 0);
}

// ---------------------------------------------------------------------------------------------
// Resource hygiene.

TEST(Hygiene, ThousandCharactersLeaveNothingBehind) {
  const test::Character& c = loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  std::unique_ptr<PhysicsWorld> world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  const BulletObjectCounts empty = bulletObjectCounts(*world);
  const int perCharacter = static_cast<int>(c.asset->bodies.size()) + 1;  // bodies and capsule
  std::vector<std::optional<DrivenCharacter>> alive(10);
  int peakBodies = 0, peakConstraints = 0;
  for (int i = 0; i < 1000; ++i) {
    auto& slot = alive[static_cast<size_t>(i % 10)];
    slot.reset();  // destroys the character created 10 iterations ago
    slot = DrivenCharacter::create(*world, c, Transform::fromTranslation(Vec3{2.0 * (i % 10), 0, 0}));
    ASSERT_TRUE(slot);
    // Half of them go ragdoll (joints active, contacts, suspended pairs) before they die.
    EXPECT_TRUE(slot->preStep());
    if (i % 2 == 0) {
      EXPECT_TRUE(slot->goRagdoll().committed);
    }
    world->step(kRobustDt, 1);
    slot->character->postStep(kRobustDt);
    const BulletObjectCounts now = bulletObjectCounts(*world);
    peakBodies = std::max(peakBodies, now.rigidBodies);
    peakConstraints = std::max(peakConstraints, now.constraints);
  }
  EXPECT_EQ(world->bodyCount(), 1 + 10 * perCharacter);
  for (auto& slot : alive) slot.reset();
  const BulletObjectCounts after = bulletObjectCounts(*world);
  std::printf(
      "1000 characters created and destroyed: peak %d rigid bodies, %d constraints; after: %d bodies, "
      "%d joints (adapter), %d collision objects, %d constraints, %d pairs, %d manifolds, %d shapes "
      "(empty world: %d objects, %d shapes)\n",
      peakBodies, peakConstraints, world->bodyCount(), world->jointCount(), after.collisionObjects,
      after.constraints, after.overlappingPairs, after.manifolds, after.shapes, empty.collisionObjects,
      empty.shapes);
  // The counts do see the characters: the ground and 10 characters' bodies (the capsules of the
  // ragdoll ones are disabled, i.e. out of the engine).
  EXPECT_GE(peakBodies, 1 + 10 * (perCharacter - 1));
  EXPECT_EQ(world->bodyCount(), 1);
  EXPECT_EQ(world->jointCount(), 0);
  EXPECT_EQ(after.collisionObjects, empty.collisionObjects);
  EXPECT_EQ(after.rigidBodies, empty.rigidBodies);
  EXPECT_EQ(after.constraints, 0);
  EXPECT_EQ(after.overlappingPairs, 0);
  EXPECT_EQ(after.manifolds, 0);
  EXPECT_EQ(after.shapes, empty.shapes);
  // Memory: LeakSanitizer checks the ASan build at exit (scripts/test.sh, detect_leaks=1).
}

}  // namespace
}  // namespace handoff
