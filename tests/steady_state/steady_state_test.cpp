// Steady state (issue 28): after a character has been through each of its states once, a second
// cycle of every state (frames, a hit and its powered return, a death, the ragdoll, the get-up,
// the return to animation, a prop dropped and grabbed back, limb lag, a teleport) allocates
// nothing; and the soak (include/handoff/soak.h) for two game minutes keeps its histories bounded
// and its live allocations flat after minute 1. The counting global operator new of
// tests/support/counting_new.h in this binary (its own: it counts every allocation of the process).
#include "handoff/controller.h"
#include "handoff/import.h"
#include "handoff/physics_bullet.h"
#include "handoff/recovery.h"
#include "handoff/soak.h"
#include "support/counting_new.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace handoff {
namespace {

constexpr double kDt = 1.0 / 60.0;

long allocations() { return test_support::allocationCount(); }
long liveAllocations() { return test_support::liveAllocationCount(); }

/// The DeepMimic runner in its own world with both get-up clips and a sword in the right hand.
struct Scene {
  ImportedAsset run;
  std::shared_ptr<const RagdollAsset> asset;
  std::unique_ptr<PhysicsWorld> world;
  std::unique_ptr<Character> ch;
  std::vector<Transform> locals;
  Transform root;
  double time = 0.0;
  int prop = -1;
  LimbLagSettings limbLag;  // made once: its slot list is a vector
  CharacterSettings settings;
  bool withProp = true;
  int limbLagged = 0, hits = 0, deaths = 0, grabs = 0, preStepRefused = 0;

  ::testing::AssertionResult start() {
    Result<ImportedAsset> r = importFile(std::string(HANDOFF_DATA_DIR) + "/deepmimic/humanoid3d_run.bvh");
    if (!r) return ::testing::AssertionFailure() << r.error();
    run = std::move(r).value();
    Result<RagdollAsset> built = buildRagdoll(run.skeleton, BuildOptions{});
    if (!built) return ::testing::AssertionFailure() << built.error();
    asset = std::make_shared<const RagdollAsset>(std::move(built).value());
    Result<std::vector<GetUpClip>> getUps = soakGetUpClips(HANDOFF_DATA_DIR, run.skeleton, asset->map);
    if (!getUps) return ::testing::AssertionFailure() << getUps.error();
    world = createBulletWorld();
    world->addGroundPlane(Vec3{0.0, 1.0, 0.0}, 0.0);
    locals.resize(static_cast<size_t>(run.skeleton.jointCount()));
    run.clips[0].sample(0.0, WrapMode::Loop, locals);
    Result<std::unique_ptr<Character>> created =
        Character::create(*world, asset, run.skeleton, settings, root, locals);
    if (!created) return ::testing::AssertionFailure() << created.error();
    ch = std::move(created).value();
    ch->setGetUpClips((*getUps)[0], (*getUps)[1]);
    if (!withProp) return ::testing::AssertionSuccess();
    const PropDesc sword = soakSword(*asset);
    Result<int> added = ch->addProp(sword);
    if (!added) return ::testing::AssertionFailure() << added.error();
    prop = *added;
    return ::testing::AssertionSuccess();
  }

  void step(bool teleport = false) {
    time += kDt;
    run.clips[0].sample(time, WrapMode::Loop, locals);
    const AnimationInput input{time, root, locals, teleport};
    preStepRefused += ch->preStep(input, kDt) ? 0 : 1;
    world->step(kDt, 2);
    ch->postStep(kDt);
    (void)ch->takeRecoveryFinished();
  }
  /// Steps until `done` or `limit` seconds; false on the limit.
  template <class F>
  bool stepUntil(F&& done, double limit) {
    for (double t = 0.0; t < limit; t += kDt) {
      if (done()) return true;
      step();
    }
    return done();
  }
  bool animated() const { return ch->state() == CharacterState::Animated; }

  /// One cycle of every state; false (with a failure) when a state is not reached.
  bool cycle() {
    for (int i = 0; i < 30; ++i) step();  // frames
    step(/*teleport=*/true);              // a teleport (root 1 m away and back)
    root.translation.x = root.translation.x > 0.5 ? 0.0 : 1.0;
    // A hit: the hit reaction (powered) and its return to animation.
    const int chest = asset->bodyForSlot(Slot::Chest);
    const Vec3 at = world->transform(ch->ragdoll().body(chest)).translation;
    hits += ch->applyImpulse(chest, Vec3{15.0, 0.0, 0.0}, at) ? 1 : 0;
    // A knock-out's get-up under single-precision Bullet settles later than under double (the
    // ragdoll's rest takes longer to reach the settle rule's speeds): room for it, the figure this
    // test asserts being the allocations, not the time. 120 s: in the sanitizer build's third
    // cycle (7/s dampers) the ragdoll came to rest bridged on its limbs, its trunk off the floor,
    // and rocked and crawled (about 1 cm/s, pelvis 0.1-1.2 rad/s) for about 75 s before it
    // settled and got up; that slow rest is an open defect (docs/TUNING.md, "A ragdoll that
    // rocks on its limbs"), not this test's figure.
    if (!stepUntil([&] { return animated(); }, 120.0)) {
      ADD_FAILURE() << "no return to animation: state " << characterStateName(ch->state())
                    << ", preStep refused " << preStepRefused;
      return false;
    }
    // Limb lag for a second (a lag that knocks the character out gets up on its own). No
    // EXPECT while counting: a failure's message allocates.
    limbLagged += ch->goLimbLag(limbLag) ? 1 : 0;
    for (int i = 0; i < 60; ++i) step();
    if (ch->state() == CharacterState::Powered) (void)ch->goAnimated();
    if (!stepUntil([&] { return animated(); }, 25.0)) {
      ADD_FAILURE() << "limb lag did not return";
      return false;
    }
    // A death: the prop drops, the ragdoll settles, gets up and returns to animation.
    deaths += ch->goRagdoll().committed ? 1 : 0;
    if (!stepUntil([&] { return ch->state() == CharacterState::Recovering; }, 20.0)) {
      ADD_FAILURE() << "no get-up";
      return false;
    }
    if (!stepUntil([&] { return animated(); }, 20.0)) {
      ADD_FAILURE() << "the get-up did not finish";
      return false;
    }
    grabs += !ch->propHeld(prop) && ch->grabProp(prop) ? 1 : 0;
    for (int i = 0; i < 30; ++i) step();
    return true;
  }
};

void* volatile gEscaped = nullptr;

// The counter the tests below read counts every form of operator new and delete: without it
// "allocates nothing" would hold of any code.
TEST(SteadyState, TheCountingOperatorNewCountsEveryForm) {
  const long news = allocations();
  const long live = liveAllocations();
  auto* one = new int(1);
  auto* many = new int[4];
  auto* quiet = new (std::nothrow) int(2);
  auto* quietMany = new (std::nothrow) int[4];
  // Escaped, so no compiler elides a new / delete pair (allowed since C++14; clang does).
  for (void* p : {static_cast<void*>(one), static_cast<void*>(many), static_cast<void*>(quiet),
                  static_cast<void*>(quietMany)}) {
    gEscaped = p;
  }
  EXPECT_EQ(allocations() - news, 4);
  EXPECT_EQ(liveAllocations() - live, 4);
  delete one;
  delete[] many;
  operator delete(quiet, std::nothrow);
  operator delete[](quietMany, std::nothrow);
  EXPECT_EQ(liveAllocations(), live);
  {
    std::vector<double> v(100);  // the library's sized delete
    gEscaped = v.data();
  }
  EXPECT_EQ(allocations() - news, 5);
  EXPECT_EQ(liveAllocations(), live);
  // The over-aligned forms (a type aligned beyond new's default).
  struct alignas(64) Wide {
    char bytes[64];
  };
  auto* wide = new Wide;
  auto* wides = new Wide[2];
  gEscaped = wide;
  gEscaped = wides;
  EXPECT_EQ(allocations() - news, 7);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(wide) % 64, 0u);
  delete wide;
  delete[] wides;
  EXPECT_EQ(liveAllocations(), live);
}

TEST(SteadyState, ASecondCycleOfEveryStateAllocatesNothing) {
  Scene s;
  ASSERT_TRUE(s.start());
  ASSERT_TRUE(s.cycle());  // every state once: rings written, scratch sized
  ASSERT_TRUE(s.cycle());
  // Debugging: HANDOFF_TRACE_ALLOCATIONS=1 and `break handoffCountedAllocation` in gdb.
  test_support::traceAllocations(std::getenv("HANDOFF_TRACE_ALLOCATIONS") != nullptr);
  const long before = allocations();
  const std::uint64_t eventsBefore = s.ch->events().total();
  const std::uint64_t handoffsBefore = s.ch->handoffs().total();
  ASSERT_TRUE(s.cycle());
  const long counted = allocations() - before;
  test_support::traceAllocations(false);
  std::printf("[ figure ] second cycle: %llu events, %llu commits, %ld allocations (operator new)\n",
              static_cast<unsigned long long>(s.ch->events().total() - eventsBefore),
              static_cast<unsigned long long>(s.ch->handoffs().total() - handoffsBefore), counted);
  EXPECT_GT(s.ch->events().total() - eventsBefore, 5u);
  EXPECT_GE(s.ch->handoffs().total() - handoffsBefore, 3u);  // hit, limb lag, death
  EXPECT_EQ(counted, 0);
  // Every state was visited in each of the three cycles.
  EXPECT_EQ(s.hits, 3);
  EXPECT_EQ(s.limbLagged, 3);
  EXPECT_EQ(s.deaths, 3);
  EXPECT_EQ(s.grabs, 3);
  EXPECT_EQ(s.preStepRefused, 0);
}

// A capsule-only animated character (CharacterSettings::capsuleOnlyWhileAnimated, issue 29: the
// crowd of distant NPCs) allocates nothing per step either: its history and its capsule's move.
// Its hit reaction brings the bodies back; Bullet allocates a broadphase proxy per body then
// (printed, the documented cost), and again nothing once the character is back to its capsule.
TEST(SteadyState, ACapsuleOnlyAnimatedStepAllocatesNothing) {
  Scene s;
  s.settings.capsuleOnlyWhileAnimated = true;
  s.withProp = false;
  ASSERT_TRUE(s.start());
  for (int i = 0; i < 60; ++i) s.step();
  ASSERT_TRUE(s.ch->capsuleOnly());
  long before = allocations();
  for (int i = 0; i < 120; ++i) s.step();
  const long animated = allocations() - before;
  const bool stayed = s.ch->capsuleOnly();
  // A hit: the bodies come back for the hit reaction, which returns to animation.
  const int chest = s.asset->bodyForSlot(Slot::Chest);
  Transform poses[64];
  s.ch->ragdoll().readBodyPoses(
      std::span<Transform>(poses, static_cast<size_t>(s.ch->ragdoll().bodyCount())));
  before = allocations();
  const bool hit = static_cast<bool>(
      s.ch->applyImpulse(chest, Vec3{15.0, 0.0, 0.0}, poses[static_cast<size_t>(chest)].translation));
  s.step();
  const long atTheHit = allocations() - before;
  const bool back = s.stepUntil([&] { return s.animated() && s.ch->capsuleOnly(); }, 10.0);
  for (int i = 0; i < 10; ++i) s.step();
  before = allocations();
  for (int i = 0; i < 120; ++i) s.step();
  const long afterwards = allocations() - before;
  std::printf(
      "[ figure ] capsule only: 120 animated steps %ld allocations; the hit's commit and step %ld "
      "(the engine taking the bodies back); 120 steps after the return %ld\n",
      animated, atTheHit, afterwards);
  EXPECT_TRUE(stayed);
  EXPECT_EQ(animated, 0);
  EXPECT_TRUE(hit);
  EXPECT_TRUE(back) << "the hit reaction returned and the character is capsule only again";
  EXPECT_EQ(afterwards, 0);
}

TEST(Soak, TwoMinutes) {
  SoakOptions o;
  o.minutes = 2.0;
  std::vector<long> live;
  live.reserve(4);  // no allocation of the test's own between the samples
  std::vector<SoakHistorySizes> largest;
  Result<SoakResult> r = runSoak(HANDOFF_DATA_DIR, o, [&](const SoakSample& sample) {
    live.push_back(liveAllocations());
    std::printf(
        "[ figure ] minute %.0f: RSS %ld KiB, %ld live allocations; per character events/handoffs/"
        "recoveries/flights/landings/releases:",
        sample.gameSeconds / 60.0, sample.residentKb, live.back());
    for (const SoakHistorySizes& h : sample.histories) {
      std::printf(" %zu/%zu/%zu/%zu/%zu/%zu", h.events, h.handoffs, h.recoveries, h.flights, h.landings,
                  h.propReleases);
      const HistorySettings d;
      EXPECT_LE(h.events, d.events);
      EXPECT_LE(h.handoffs, d.handoffs);
      EXPECT_LE(h.recoveries, d.recoveries);
      EXPECT_LE(h.flights, d.flights);
      EXPECT_LE(h.landings, d.landings);
      EXPECT_LE(h.propReleases, d.propReleases);
    }
    std::printf("\n");
  });
  ASSERT_TRUE(r) << r.error();
  ASSERT_EQ(live.size(), 2u);
  const SoakSample& last = r->samples.back();
  std::printf(
      "[ figure ] %ld hits, %ld deaths, %ld finished get-ups or landings, %ld teleports, %ld limb lags\n",
      last.hits, last.deaths, last.recovered, last.teleports, last.limbLags);
  EXPECT_GT(last.deaths, 8);
  EXPECT_GT(last.hits, 80);
  EXPECT_GT(last.recovered, 8);
  EXPECT_EQ(r->faults, 0);
  // The handoff rings are full by minute 2 (16 each): no record kept beyond them.
  for (const SoakHistorySizes& h : last.histories) EXPECT_EQ(h.handoffs, HistorySettings{}.handoffs);
  // After minute 1 nothing accumulates: the only new live allocation is the soak's own stored
  // sample (its per-character vector).
  EXPECT_LE(live[1] - live[0], 1) << "live allocations grew from " << live[0] << " to " << live[1];
}

}  // namespace
}  // namespace handoff
