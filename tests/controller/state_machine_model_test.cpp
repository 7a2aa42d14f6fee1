// A model-based test of the Character state machine (issue 18): seeded random sequences of what a
// game does to several characters sharing one world (ragdoll, powered, partial, limb lag, hits,
// teleports, clip switches, get-up allowed or not, impulses during a get-up, back to animation,
// destroy and recreate), at least 1,000 events, checked after every step against invariants:
// exactly one blocking representation per character, nothing non-finite, no body left the world,
// no substep listener left by a character that is gone, and only the state machine's allowed
// transitions. Run under ASan/LSan by the test script's sanitizer build too.
#include "handoff/controller.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "controller/getup_scene.h"

namespace handoff {
namespace {

using test::kFrame;
using test::loadCharacter;

constexpr std::uint32_t kSeed = 18;
constexpr int kMembers = 4;
constexpr int kModelFrames = 60 * 70;
// Events per frame, per character: a calm one whose get-ups run to the end, busier ones whose
// calls land in every state (about 1,400 events in all).
constexpr std::array<double, 4> kEventRate{0.003, 0.03, 0.1, 0.2};

enum class Action {
  Ragdoll,
  Powered,
  Partial,
  LimbLag,
  Hit,
  KnockBack,
  Teleport,
  SwitchClip,
  AllowGetUp,
  Animate,
  Recreate,
  Count
};
const char* actionName(Action a) {
  static const char* const names[] = {"ragdoll",       "powered",   "partial",  "limb_lag",
                                      "hit",           "knockback", "teleport", "clip",
                                      "getup_allowed", "animate",   "recreate"};
  return names[static_cast<int>(a)];
}

// The transitions the public state machine allows (controller.h): from animation into physics
// (ragdoll, powered or partial), powered back to animation or into a full ragdoll, a ragdoll into
// its get-up or, landing on its feet (LandingSettings), straight into animation, a get-up to
// animation or (cancelled) back to ragdoll.
const std::set<std::pair<CharacterState, CharacterState>> kAllowed = {
    {CharacterState::Animated, CharacterState::Ragdoll},
    {CharacterState::Animated, CharacterState::Powered},
    {CharacterState::Powered, CharacterState::Animated},
    {CharacterState::Powered, CharacterState::Ragdoll},
    {CharacterState::Ragdoll, CharacterState::Recovering},
    {CharacterState::Ragdoll, CharacterState::Animated},
    {CharacterState::Recovering, CharacterState::Animated},
    {CharacterState::Recovering, CharacterState::Ragdoll}};

struct Member {
  std::unique_ptr<Character> ch;
  Transform root;
  const Clip* clip = nullptr;
  double clipTime = 0.0;
  std::vector<Transform> locals, dense;
  bool teleportNext = false;
};

bool finitePose(std::span<const Transform> pose) {
  for (const Transform& t : pose)
    if (!isFinite(t)) return false;
  return true;
}

TEST(StateMachineModel, RandomGameEventsKeepEveryInvariant) {
  const test::Character& c = loadCharacter("deepmimic/humanoid3d_run.bvh");
  const test::Character& jump = loadCharacter("deepmimic/humanoid3d_jump.bvh");
  ASSERT_TRUE(c.asset);
  ASSERT_EQ(jump.skeleton().jointCount(), c.skeleton().jointCount());
  const std::array<const Clip*, 2> clips{&c.clip(), &jump.clip()};
  const std::optional<GetUpClip> supine = test::loadGetUp(c, "deepmimic/humanoid3d_getup_faceup.bvh");
  const std::optional<GetUpClip> prone = test::loadGetUp(c, "deepmimic/humanoid3d_getup_facedown.bvh");
  ASSERT_TRUE(supine && prone);
  auto world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, 0.0);
  const auto n = static_cast<size_t>(c.skeleton().jointCount());
  std::mt19937 rng(kSeed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<Member> members(kMembers);
  double time = 0.0;
  const auto create = [&](int k) {
    Member& m = members[static_cast<size_t>(k)];
    m.ch.reset();
    m.root = Transform::fromTranslation(Vec3{0.0, 0.0, 4.0 * k});
    m.clip = clips[0];
    m.clipTime = 0.0;
    m.locals.resize(n);
    m.dense.resize(n);
    m.clip->sample(0.0, WrapMode::Loop, m.locals);
    auto created = Character::create(*world, c.asset, c.skeleton(), CharacterSettings{}, m.root, m.locals);
    ASSERT_TRUE(created) << created.error();
    m.ch = std::move(created).value();
    m.ch->setGetUpClips(supine, prone);
  };
  for (int k = 0; k < kMembers; ++k) create(k);

  std::map<std::string, int> tried, refused;
  std::map<std::pair<CharacterState, CharacterState>, int> transitions;
  std::vector<CharacterState> last(kMembers, CharacterState::Animated);
  // A state change since the last look, from a step or from a call, must be an allowed one.
  const auto look = [&](int k, int frame, const char* when) {
    const CharacterState now = members[static_cast<size_t>(k)].ch->state();
    CharacterState& was = last[static_cast<size_t>(k)];
    if (now == was) return;
    ++transitions[{was, now}];
    EXPECT_TRUE(kAllowed.count({was, now}))
        << "character " << k << " frame " << frame << " (" << when << "): " << characterStateName(was)
        << " -> " << characterStateName(now);
    was = now;
  };
  int events = 0;
  std::string journal;  // the calls so far, for a failure's message
  for (int frame = 0; frame < kModelFrames; ++frame) {
    time += kFrame;
    for (int k = 0; k < kMembers; ++k) {
      Member& m = members[static_cast<size_t>(k)];
      m.clipTime += kFrame;
      m.clip->sample(m.clipTime, WrapMode::Loop, m.locals);
      ASSERT_TRUE(m.ch->preStep(AnimationInput{time, m.root, m.locals, m.teleportNext}, kFrame))
          << "character " << k << " frame " << frame;
      m.teleportNext = false;
      look(k, frame, "preStep");
    }
    world->step(kFrame, 2);
    if (world->lastStepStats().bodiesLeftWorld != 0) {
      for (int k = 0; k < kMembers; ++k) {
        int off = 0;
        for (int b = 0; b < members[k].ch->ragdoll().bodyCount(); ++b)
          off += !world->isEnabled(members[k].ch->ragdoll().body(b));
        std::printf("character %d %s: %d bodies disabled, root %.2f %.2f %.2f\n", k,
                    characterStateName(members[k].ch->state()), off, members[k].root.translation.x,
                    members[k].root.translation.y, members[k].root.translation.z);
        for (const CharacterEvent& e : members[k].ch->events())
          if (off) std::printf("   %.3f %s: %s\n", e.time, eventKindName(e.kind), e.detail);
      }
    }
    ASSERT_EQ(world->lastStepStats().bodiesLeftWorld, 0) << "frame " << frame << "\n" << journal;
    for (int k = 0; k < kMembers; ++k) {
      Member& m = members[static_cast<size_t>(k)];
      Character& ch = *m.ch;
      ch.postStep(kFrame);
      look(k, frame, "postStep");
      const CharacterState after = ch.state();
      ASSERT_EQ(ch.blockingRepresentations(), 1)
          << "character " << k << " frame " << frame << " (" << characterStateName(after) << ")";
      ASSERT_TRUE(finitePose(ch.displayLocals()) && isFinite(ch.displayRoot()))
          << "character " << k << " frame " << frame;
      for (int b = 0; b < ch.ragdoll().bodyCount(); ++b) {
        const BodyId body = ch.ragdoll().body(b);
        ASSERT_TRUE(isFinite(world->transform(body)) && isFinite(world->linearVelocity(body)))
            << "character " << k << " body " << b << " frame " << frame;
      }
      // Every joint motor has at most one writer, and the one the state allows: the dampers or
      // the gather's servos in Ragdoll, the implicit drive while Powered, none otherwise. A motor
      // is on only while someone owns it, and no writer was ever refused.
      ASSERT_EQ(ch.ragdoll().refusedMotorRequests(), 0) << "character " << k << " frame " << frame;
      for (int j = 0; j < static_cast<int>(ch.ragdoll().asset().joints.size()); ++j) {
        const MotorOwner owner = ch.ragdoll().motorOwner(j);
        const bool allowed = owner == MotorOwner::None ||
                             (after == CharacterState::Ragdoll &&
                              (owner == MotorOwner::Damper || owner == MotorOwner::Gather)) ||
                             (after == CharacterState::Powered && owner == MotorOwner::Drive);
        ASSERT_TRUE(allowed) << "character " << k << " frame " << frame << " joint " << j << ": "
                             << motorOwnerName(owner) << " while " << characterStateName(after);
        ASSERT_TRUE(owner != MotorOwner::None || !ch.ragdoll().motorEnabled(j))
            << "character " << k << " frame " << frame << " joint " << j << ": a motor on with no owner";
      }
    }
    // At most one listener per character, none from a character that is gone.
    ASSERT_LE(world->substepListenerCount(), kMembers) << "frame " << frame;

    // The game's events of this frame (between steps, as a game calls them).
    for (int k = 0; k < kMembers; ++k) {
      if (unit(rng) >= kEventRate[static_cast<size_t>(k)]) continue;
      Member& m = members[static_cast<size_t>(k)];
      const auto action = static_cast<Action>(
          std::uniform_int_distribution<int>(0, static_cast<int>(Action::Count) - 1)(rng));
      const CharacterState was = m.ch->state();
      Status st;
      switch (action) {
        case Action::Ragdoll: {
          m.clip->sample(m.clipTime - kFrame / 8, WrapMode::Loop, m.dense);
          const AnimationInput dense{time - kFrame / 8, m.root, m.dense, false};
          const HandoffRecord& record = m.ch->goRagdoll(&dense);
          if (!record.committed && was != CharacterState::Ragdoll) st = Error{record.failure};
          break;
        }
        case Action::Powered: {
          PoweredSettings p;
          p.pinPelvisAndFeet = unit(rng) < 0.5;
          st = m.ch->goPowered(p);
          break;
        }
        case Action::Partial: {
          std::vector<double> weights(c.asset->bodies.size());
          for (double& w : weights) w = unit(rng) < 0.4 ? unit(rng) : 0.0;
          st = m.ch->goPartial(weights, 0.1);
          break;
        }
        case Action::LimbLag:
          st = m.ch->goLimbLag();
          break;
        case Action::Hit: {
          const int body = std::uniform_int_distribution<int>(0, m.ch->ragdoll().bodyCount() - 1)(rng);
          const Vec3 point = world->transform(m.ch->ragdoll().body(body)).translation;
          const Vec3 impulse{unit(rng) - 0.5, 0.5 * unit(rng), unit(rng) - 0.5};
          st = m.ch->applyImpulse(body, 300.0 * impulse, point);
          break;
        }
        case Action::KnockBack: {
          // A throw mostly up, no spin: it flies and lands, on its feet or lying (LandingSettings).
          const Vec3 impulse{unit(rng) - 0.5, 1.0 + unit(rng), unit(rng) - 0.5};
          st = m.ch->knockBack(150.0 * impulse);
          break;
        }
        case Action::Teleport:
          m.root = Transform{glm::angleAxis(2.0 * kPi * unit(rng), Vec3{0, 1, 0}),
                             Vec3{10.0 * (unit(rng) - 0.5), 0.0, 4.0 * k + 2.0 * (unit(rng) - 0.5)}};
          m.teleportNext = true;
          break;
        case Action::SwitchClip:
          m.clip = clips[static_cast<size_t>(std::uniform_int_distribution<int>(0, 1)(rng))];
          m.clipTime = unit(rng) * m.clip->duration();
          break;
        case Action::AllowGetUp:
          m.ch->setGetUpAllowed(unit(rng) < 0.7);
          break;
        case Action::Animate:
          st = m.ch->goAnimated(0.25);
          break;
        case Action::Recreate:
          create(k);
          last[static_cast<size_t>(k)] = CharacterState::Animated;
          ASSERT_LE(world->substepListenerCount(), kMembers);
          break;
        case Action::Count:
          break;
      }
      ++events;
      ++tried[actionName(action)];
      journal += "frame " + std::to_string(frame) + " character " + std::to_string(k) + " (" +
                 characterStateName(was) + "): " + actionName(action) +
                 (st ? "" : " refused: " + st.error()) + "\n";
      if (action != Action::Recreate) look(k, frame, actionName(action));
      // A refused call changes nothing.
      if (!st) {
        ++refused[actionName(action)];
        EXPECT_EQ(m.ch->state(), was)
            << actionName(action) << " refused (" << st.error() << ") changed the state";
      }
    }
  }
  std::printf("[ figure ] %d events over %d characters in %d frames (seed %u):", events, kMembers,
              kModelFrames, kSeed);
  for (const auto& [name, count] : tried)
    std::printf(" %s %d (%d refused)", name.c_str(), count, refused[name]);
  std::printf("\n[ figure ] transitions:");
  for (const auto& [t, count] : transitions)
    std::printf(" %s->%s %d", characterStateName(t.first), characterStateName(t.second), count);
  std::printf("\n");
  EXPECT_GE(events, 1000);
  // Every state was reached and left.
  for (const auto& t : kAllowed)
    EXPECT_GT(transitions[t], 0) << characterStateName(t.first) << " -> " << characterStateName(t.second);
  members.clear();
  EXPECT_EQ(world->substepListenerCount(), 0) << "a destroyed character left its listener";
}

}  // namespace
}  // namespace handoff
