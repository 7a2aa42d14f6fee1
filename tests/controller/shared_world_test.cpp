// Several characters in one world (issue 18, SPEC.md section 8): eight DeepMimic runners in
// parallel lanes 4 m apart share one Bullet world; two take a 150 N s chest hit in the same frame
// (the hit reaction: powered, pelvis and feet pinned), one dies, one falls and gets up, one goes
// partial, three stay animated. Each does exactly what the same character does alone in
// a world of its own with the same script: same events at the same times, same displayed pelvis
// every frame, bit for bit. The lanes run side by side 4 m apart and never touch, so the scene
// is separable, and the island-ordered solve makes each island's results its own. (Lanes laid
// along the run instead let a runner reach a corpse ahead 6.5 s in: then they differ, rightly.)
#include "handoff/controller.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "controller/getup_scene.h"

namespace handoff {
namespace {

using test::kFrame;
using test::loadCharacter;

constexpr int kCharacters = 8;
constexpr int kFrames = 60 * 12;
constexpr double kLane = 4.0;  // [m] between the lanes, across the run
// Alone and shared, the displayed pelvis of each character agrees exactly in every frame.
constexpr double kPelvisTolerance = 0.0;  // [m]

struct LaneRunner {
  std::unique_ptr<Character> ch;
  Transform root;
  std::vector<Transform> locals, dense;
  std::vector<Vec3> pelvis;  ///< Displayed pelvis per frame.
};

// What character k does at a frame (its script, the same alone and shared).
void act(int k, int frame, LaneRunner& r, const test::Character& c, double time, double clipTime) {
  Character& ch = *r.ch;
  if ((k == 0 || k == 1) && frame == 30) {
    const int chest = c.asset->bodyForSlot(Slot::Chest);
    const Vec3 point = ch.ragdoll().world().transform(ch.ragdoll().body(chest)).translation;
    ASSERT_TRUE(ch.applyImpulse(chest, 150.0 * r.root.transformVector(-c.asset->modelForward), point));
  }
  if ((k == 2 && frame == 35) || (k == 3 && frame == 20)) {
    c.clip().sample(clipTime - kFrame / 8, WrapMode::Loop, r.dense);
    const AnimationInput denseInput{time - kFrame / 8, r.root, r.dense, false};
    ASSERT_TRUE(ch.goRagdoll(&denseInput).committed);
  }
  if (k == 4 && frame == 40) {
    std::vector<double> weights(c.asset->bodies.size(), 0.0);
    for (Slot slot :
         {Slot::Chest, Slot::Head, Slot::UpperArmL, Slot::LowerArmL, Slot::UpperArmR, Slot::LowerArmR}) {
      const int body = c.asset->bodyForSlot(slot);
      if (body >= 0) weights[static_cast<size_t>(body)] = 0.7;
    }
    ASSERT_TRUE(ch.goPartial(weights, 0.1));
  }
  if (k == 4 && frame == 100) {
    ASSERT_TRUE(ch.goAnimated(0.25));
  }
}

// Runs characters `members` of the script in one world (`world`, which must outlive the
// characters); `runners` gets their figures.
void run(const test::Character& c, const std::vector<int>& members, std::unique_ptr<PhysicsWorld>& world,
         std::vector<LaneRunner>& runners) {
  world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  const std::optional<GetUpClip> supine = test::loadGetUp(c, "deepmimic/humanoid3d_getup_faceup.bvh");
  const std::optional<GetUpClip> prone = test::loadGetUp(c, "deepmimic/humanoid3d_getup_facedown.bvh");
  ASSERT_TRUE(supine && prone);
  const auto n = static_cast<size_t>(c.skeleton().jointCount());
  for (const int k : members) {
    LaneRunner& r = runners[static_cast<size_t>(k)];
    r.root = Transform::fromTranslation(Vec3{0.0, 0.0, kLane * k});  // the run goes along +x
    r.locals.resize(n);
    r.dense.resize(n);
    c.clip().sample(0.0, WrapMode::Loop, r.locals);
    auto created = Character::create(*world, c.asset, c.skeleton(), CharacterSettings{}, r.root, r.locals);
    ASSERT_TRUE(created) << created.error();
    r.ch = std::move(created).value();
    r.ch->setGetUpClips(supine, prone);
    r.ch->setGetUpAllowed(k == 3);
  }
  std::vector<Transform> models(n);
  const int pelvis = c.asset->map[Slot::Pelvis];
  double time = 0.0;
  for (int frame = 0; frame < kFrames; ++frame) {
    time += kFrame;
    for (const int k : members) {
      LaneRunner& r = runners[static_cast<size_t>(k)];
      c.clip().sample(time, WrapMode::Loop, r.locals);
      ASSERT_TRUE(r.ch->preStep(AnimationInput{time, r.root, r.locals, false}, kFrame));
    }
    world->step(kFrame, 2);
    for (const int k : members) {
      LaneRunner& r = runners[static_cast<size_t>(k)];
      r.ch->postStep(kFrame);
      ASSERT_EQ(r.ch->blockingRepresentations(), 1) << "character " << k << " at frame " << frame;
      localToModel(c.skeleton(), r.ch->displayLocals(), models);
      r.pelvis.push_back(r.ch->displayRoot().transformPoint(models[static_cast<size_t>(pelvis)].translation));
      act(k, frame, r, c, time, time);
    }
  }
}

std::string story(const Character& ch) {
  std::string s;
  for (const CharacterEvent& e : ch.events()) {
    char line[64];
    std::snprintf(line, sizeof line, "%.4f ", e.time);
    s += std::string(line) + eventKindName(e.kind) + ": " + e.detail + "\n";
  }
  return s;
}

TEST(SharedWorld, EightCharactersEachDoWhatTheyDoAlone) {
  const test::Character& c = loadCharacter("deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(c.asset);
  std::unique_ptr<PhysicsWorld> sharedWorld;
  std::vector<std::unique_ptr<PhysicsWorld>> ownWorlds(kCharacters);
  std::vector<LaneRunner> shared(kCharacters), alone(kCharacters);  // destroyed before the worlds
  std::vector<int> everyone;
  for (int k = 0; k < kCharacters; ++k) everyone.push_back(k);
  run(c, everyone, sharedWorld, shared);
  for (int k = 0; k < kCharacters; ++k) run(c, {k}, ownWorlds[static_cast<size_t>(k)], alone);
  for (int k = 0; k < kCharacters; ++k) {
    const LaneRunner& s = shared[static_cast<size_t>(k)];
    const LaneRunner& a = alone[static_cast<size_t>(k)];
    ASSERT_TRUE(s.ch && a.ch);
    ASSERT_EQ(s.pelvis.size(), a.pelvis.size());
    double worst = 0.0;
    int first = -1;
    for (size_t f = 0; f < s.pelvis.size(); ++f) {
      const double d = glm::length(s.pelvis[f] - a.pelvis[f]);
      if (d > 0.0 && first < 0) {
        first = static_cast<int>(f);
        std::printf("first difference of %d at frame %d: %.3g m\n", k, first, d);
      }
      worst = std::max(worst, d);
    }
    std::printf("[ figure ] character %d: %s at the end, %zu events, pelvis shared vs alone within %.3g m\n",
                k, characterStateName(s.ch->state()), s.ch->events().size(), worst);
    EXPECT_EQ(story(*s.ch), story(*a.ch)) << "character " << k;
    EXPECT_LE(worst, kPelvisTolerance) << "character " << k;
    EXPECT_EQ(s.ch->state(), a.ch->state()) << "character " << k;
  }
  // The script did what it says: two hit reactions, a death, a get-up, a partial and back.
  const auto has = [&](int k, const std::string& kind) {
    for (const CharacterEvent& e : shared[static_cast<size_t>(k)].ch->events())
      if (std::string(eventKindName(e.kind)) == kind) return true;
    return false;
  };
  EXPECT_TRUE(has(0, "powered") && has(1, "powered")) << story(*shared[0].ch) << story(*shared[1].ch);
  EXPECT_EQ(shared[2].ch->state(), CharacterState::Ragdoll);
  EXPECT_TRUE(has(3, "recovered")) << story(*shared[3].ch);
  EXPECT_TRUE(has(4, "partial")) << story(*shared[4].ch);
  for (int k = 5; k < kCharacters; ++k)
    EXPECT_EQ(shared[static_cast<size_t>(k)].ch->state(), CharacterState::Animated);
}

}  // namespace
}  // namespace handoff
