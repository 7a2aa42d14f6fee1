// examples/game: a small game that owns its physics world and uses handoff as a game would.
//
// The game has its own btDiscreteDynamicsWorld (game_world.h: broadphase, solver, collision
// groups), a level (a floor and a staircase) read from a glTF file (examples/game/stairs.glb,
// handoff::loadLevel) as its own btBvhTriangleMeshShape bodies, three crates of its own, and its own
// animation system (animation.h: clip sampling and root motion). It joins handoff to its world
// (joinBulletWorld) and plays four DeepMimic characters for 12 s of 60 Hz frames:
//
//   runner   runs along a lane and is shot: the game's ray names the bone it hit, the character
//            goes ragdoll and takes the bullet's impulse there; dead (no get-up), it drops its sword;
//   circler  runs in a circle and takes a blow to the chest: a powered hit reaction that returns
//            to the run; a distant NPC, capsule only while it runs (no bodies in the simulation
//            until the blow brings them back);
//   faller   stands on the landing at the top of the stairs, is killed by a grenade and tumbles down
//            them to their foot;
//   knocked  stands looking at the player (its head is the game's look-at), is knocked down by a
//            blast and gets up, then stands again where it got up.
//
// It prints the characters' events, the impacts a game would play sounds from (contact events:
// which character and bone hit what, with the impulse) and each character's frame cost, checks
// its own figures and exits non-zero naming every check that failed. Run it from the project root:
//
//   build/game/game          (after building examples/game against an installed handoff; README)
//
// docs/INTEGRATION.md's code comes from the regions marked "[snippet name]" below.
#include <handoff/controller.h>
#include <handoff/import.h>
#include <handoff/level.h>
#include <handoff/physics_bullet.h>
#include <handoff/recovery.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "animation.h"
#include "game_world.h"

namespace {

using handoff::Transform;
using handoff::Vec3;

constexpr double kFrame = 1.0 / 60.0;  // the game's frame [s]
constexpr int kSubsteps = 2;           // its fixed physics substep: 1/120 s
constexpr int kFrames = 720;           // 12 s
// The level (make_stairs.py): seven 0.2 m steps from z = 0 up to a 1.4 m landing, x in [-1.5, 1.5].
constexpr double kRise = 0.2;
constexpr double kLanding = 1.4;
constexpr double kStairsTop = 1.8;     // z where the landing starts [m]
const Vec3 kPlayer{-3.0, 1.6, -11.0};  // the player's eyes and gun [m]

/// What the game keeps per character.
struct Npc {
  std::string name;
  std::unique_ptr<handoff::Character> character;
  game::Locomotion locomotion;
  std::vector<Transform> locals, dense, displayedModels;
  double clock = 0.0;  // the animation time fed to preStep [s]
  std::uint64_t eventsSeen = 0;
  bool lookAtPlayer = false;
  bool capsuleOnly = false;  // CharacterSettings::capsuleOnlyWhileAnimated
  // Frame cost: the game's animation, preStep and postStep of this character. [us]
  double costFrame = 0.0;
  std::vector<double> costs;  // per frame
  // What the checks read.
  double lowestBodyPoint = 1e30;   // of a simulated body's shape, over the run [m]
  double lowestBodyCentre = 1e30;  // of a simulated body's centre, over the run [m]
  bool nonFinite = false;
  double poweredAt = -1.0, animatedAgainAt = -1.0, recoveredAt = -1.0;
  int getUps = 0;
};

/// The impact sounds a game plays from contact events: at least 4 N s, once per body within 0.3 s.
struct Impacts {
  struct Last {
    const handoff::Character* character;
    int body;
    double time;
  };
  std::vector<Last> last;
  int played = 0;

  void play(const std::vector<Npc>& npcs, double now, const handoff::CharacterBodyInfo& who,
            const game::Thing* thing, const handoff::CharacterBodyInfo& other,
            const handoff::ContactEvent& e) {
    if (e.impulse < 4.0 || other.character == who.character) return;  // no sound for a limb on its own body
    auto it = std::find_if(last.begin(), last.end(), [&](const Last& l) {
      return l.character == who.character && l.body == who.part.body;
    });
    if (it != last.end() && now - it->time < 0.3) return;
    if (it == last.end()) it = last.insert(last.end(), Last{who.character, who.part.body, now});
    it->time = now;
    ++played;
    const handoff::Skeleton& skeleton = who.character->skeleton();
    std::string what = thing != nullptr ? thing->name : "a handoff body (a prop)";
    if (other.character != nullptr) {
      what = nameOf(npcs, other.character) + "'s " +
             (other.part.body >= 0 ? skeleton.jointNames[static_cast<size_t>(other.part.bone)]
                                   : std::string("capsule"));
    }
    std::printf("%6.2f s  %-8s impact: %s hit %s, %.1f N s at (%.2f, %.2f, %.2f)\n", now,
                nameOf(npcs, who.character).c_str(),
                skeleton.jointNames[static_cast<size_t>(who.part.bone)].c_str(), what.c_str(), e.impulse,
                e.point.x, e.point.y, e.point.z);
  }
  static std::string nameOf(const std::vector<Npc>& npcs, const handoff::Character* c) {
    for (const Npc& n : npcs) {
      if (n.character.get() == c) return n.name;
    }
    return "?";
  }
};

/// Adds the time from construction to destruction to `us`. [us]
struct Stopwatch {
  double& us;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  explicit Stopwatch(double& to) : us(to) {}
  ~Stopwatch() {
    us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  }
};

std::vector<std::string> failures;
void check(bool ok, const std::string& what) {
  std::printf("  [%s] %s\n", ok ? "pass" : "FAIL", what.c_str());
  if (!ok) failures.push_back(what);
}
int fail(const std::string& why) {
  std::printf("game: %s\n", why.c_str());
  return 1;
}
std::string format(const char* f, double a, double b = 0.0, double c = 0.0) {
  char text[256];
  std::snprintf(text, sizeof text, f, a, b, c);
  return text;
}

Vec3 bodyCentre(const Npc& npc, handoff::Slot slot) {
  // Ragdoll::bodyPose, not the engine's pose of the body: a capsule-only character's bodies are
  // out of the simulation, where they were when they left it.
  const handoff::Ragdoll& ragdoll = npc.character->ragdoll();
  return ragdoll.bodyPose(ragdoll.asset().bodyForSlot(slot)).translation;
}

/// The knocked one's look-at: its head (an animation-owned bone) turned toward `target`.
void aimHead(Npc& npc, const handoff::RagdollAsset& asset, int head, const Vec3& target) {
  const handoff::Skeleton& skeleton = npc.character->skeleton();
  const int parent = skeleton.parents[static_cast<size_t>(head)];
  // [snippet lookat]
  handoff::localToModel(skeleton, npc.character->displayLocals(), npc.displayedModels);
  const Transform worldFromParent =
      npc.character->displayRoot() * npc.displayedModels[static_cast<size_t>(parent)];
  Transform& local = npc.locals[static_cast<size_t>(head)];
  local.rotation = handoff::lookAtLocalRotation(skeleton, head, asset.modelForward, worldFromParent,
                                                local.translation, target, local.rotation);
  // [/snippet]
}

/// A death: the character goes ragdoll for good and takes a bullet's `impulse` [N s] on `body` at `point`.
void kill(Npc& npc, int body, const Vec3& impulse, const Vec3& point) {
  // [snippet ragdoll]
  // The dense sample: the game's animation 1/8 frame before the last input, with its root then.
  const Transform denseRoot = npc.locomotion.sampleBefore(kFrame / 8, npc.dense);
  const handoff::AnimationInput dense{npc.clock - kFrame / 8, denseRoot, npc.dense, /*teleport=*/false};
  npc.character->setGetUpAllowed(false);  // dead: no get-up
  const handoff::HandoffRecord& record = npc.character->goRagdoll(&dense);
  if (!record.committed) std::printf("%s: no handoff: %s\n", npc.name.c_str(), record.failure.c_str());
  if (handoff::Status s = npc.character->applyImpulse(body, impulse, point); !s)
    std::printf("%s: %s\n", npc.name.c_str(), s.error().c_str());
  // [/snippet]
}

/// Prints each event of the character since the last frame and records what the checks read.
void drainEvents(Npc& npc, double now) {
  // [snippet events]
  const handoff::History<handoff::CharacterEvent>::Range fresh =
      npc.character->events().readSince(npc.eventsSeen);
  npc.eventsSeen = fresh.next;
  if (fresh.missed > 0)
    std::printf("%s: %llu events overwritten before being read\n", npc.name.c_str(),
                (unsigned long long)fresh.missed);
  for (const handoff::CharacterEvent& e : fresh)
    std::printf("%6.2f s  %-8s %s: %s\n", now, npc.name.c_str(), handoff::eventKindName(e.kind), e.detail);
  // [/snippet]
  for (const handoff::CharacterEvent& e : fresh) {
    if (e.kind == handoff::CharacterEventKind::Powered && npc.poweredAt < 0.0) npc.poweredAt = now;
    if (e.kind == handoff::CharacterEventKind::GetUp) ++npc.getUps;
  }
  // [snippet resume]
  if (npc.character->takeRecoveryFinished()) {
    // Standing again (a get-up or a landing): the game's locomotion resumes from where it stands.
    npc.locomotion.start(*npc.locomotion.clip, npc.character->displayRoot());
    if (npc.recoveredAt < 0.0) npc.recoveredAt = now;
  }
  // [/snippet]
}

/// How high `clip` must be lifted so that no body of `asset` goes below the ground in any of its
/// frames (the game's clips are keyed over their own ground, a few centimetres off). [m]
double liftOntoGround(const game::AnimClip& clip, const handoff::Skeleton& skeleton,
                      const handoff::RagdollAsset& asset) {
  std::vector<Transform> locals(static_cast<size_t>(clip.joints)), models(locals.size()),
      bodies(asset.bodies.size());
  double lowest = 1e30;
  for (int f = 0; f < clip.frames; ++f) {
    clip.sample(f / clip.rate, locals);
    handoff::localToModel(skeleton, locals, models);
    handoff::bodyPosesFromModels(asset, models, Transform::identity(), bodies);
    for (size_t b = 0; b < bodies.size(); ++b)
      lowest = std::min(lowest, handoff::shapeLowestPoint(asset.bodies[b].shape, bodies[b]).y);
  }
  return -lowest;
}

}  // namespace

int main() {
  // --- The game's world, before handoff ---
  game::GameWorld game;
  // [snippet level]
  handoff::Result<handoff::Level> level = handoff::loadLevel("examples/game/stairs.glb");
  if (!level) return fail(level.error());
  game.addLevel(*level);  // the game's own static btBvhTriangleMeshShape bodies
  // [/snippet]
  game.addCrate("crate on the lane", btVector3(-1.4f, 0.3f, -5.0f), btVector3(0.3f, 0.3f, 0.3f), 10.0);
  game.addCrate("crate by the stairs", btVector3(2.6f, 0.3f, -1.0f), btVector3(0.3f, 0.3f, 0.3f), 10.0);
  game.addCrate("crate in the corner", btVector3(8.0f, 0.3f, 8.0f), btVector3(0.3f, 0.3f, 0.3f), 10.0);

  // --- handoff joins it ---
  // [snippet join]
  handoff::WorldSettings settings;
  settings.layerBits = {game::kGroupLevel, game::kGroupRagdoll, game::kGroupCapsule, game::kGroupCrate};
  handoff::Result<std::unique_ptr<handoff::PhysicsWorld>> joined =
      handoff::joinBulletWorld(game.world, settings);
  if (!joined) return fail(joined.error());
  handoff::PhysicsWorld& physics = **joined;  // create the characters in it; step the game through it
  // [/snippet]

  // --- The character: one rig, one ragdoll asset, shared by the four ---
  // [snippet character]
  handoff::Result<handoff::ImportedAsset> imported = handoff::importFile("data/deepmimic/humanoid3d_run.bvh");
  if (!imported) return fail(imported.error());
  const handoff::Skeleton& skeleton = imported->skeleton;
  handoff::Result<handoff::RagdollAsset> built = handoff::buildRagdoll(skeleton, {});
  if (!built) return fail(built.error());
  auto asset = std::make_shared<const handoff::RagdollAsset>(std::move(built).value());
  // [/snippet]

  // The get-up clips (face up, face down) for the knocked-down one, prepared on the same rig.
  // [snippet getups]
  std::vector<handoff::Clip> getUpSources;
  for (const char* file :
       {"data/deepmimic/humanoid3d_getup_faceup.bvh", "data/deepmimic/humanoid3d_getup_facedown.bvh"}) {
    handoff::Result<handoff::ImportedAsset> clip = handoff::importFile(file);
    if (!clip || clip->clips.empty()) return fail(clip ? std::string(file) + ": no clip" : clip.error());
    getUpSources.push_back(clip->clips.front());
  }
  handoff::Result<std::vector<handoff::GetUpClip>> getUps =
      handoff::prepareGetUpClips(getUpSources, skeleton, asset->map, skeleton, asset->map);
  if (!getUps) return fail(getUps.error());
  // [/snippet]

  // The game's own clips: the run, and a standing idle (the face-down get-up's last frame).
  game::AnimClip run = game::AnimClip::fromKeys(imported->clips.front(), /*loop=*/true);
  game::AnimClip idle = game::AnimClip::still(getUpSources[1], getUpSources[1].frameCount - 1);
  run.lift = liftOntoGround(run, skeleton, *asset);
  idle.lift = liftOntoGround(idle, skeleton, *asset);
  const double runSpeed = glm::length(run.cycleMotion) / run.duration();
  std::printf(
      "level: %zu meshes, %zu triangles; ragdoll: %zu bodies, %.1f kg; run %.2f m/s (lifted %.3f m onto the "
      "ground, idle %.3f m)\n",
      level->meshes.size(), level->triangleCount(), asset->bodies.size(), asset->totalMass, runSpeed,
      run.lift, idle.lift);

  std::vector<Npc> npcs(4);
  Npc& runner = npcs[0];
  Npc& circler = npcs[1];
  Npc& faller = npcs[2];
  Npc& knocked = npcs[3];
  runner.name = "runner";
  runner.locomotion.start(run, {game::yawRotation(0.0), Vec3{-7.0, 0.0, -5.0}});
  circler.name = "circler";
  const double circleRadius = 3.0;  // around (6, 0, -7)
  circler.locomotion.start(run, {game::yawRotation(0.0), Vec3{6.0, 0.0, -4.0}});
  circler.locomotion.turnRate = runSpeed / circleRadius;  // counter-clockwise seen from above
  circler.capsuleOnly = true;
  faller.name = "faller";
  // Stands on the landing, 0.3 m from the top edge of the stairs.
  faller.locomotion.start(idle,
                          {game::yawRotation(0.5 * handoff::kPi), Vec3{0.0, kLanding, kStairsTop + 0.3}});
  knocked.name = "knocked";
  knocked.locomotion.start(idle, {game::yawRotation(-0.5 * handoff::kPi), Vec3{-5.0, 0.0, 3.0}});
  knocked.lookAtPlayer = true;

  const int neck = asset->map[handoff::Slot::Head];  // DeepMimic's head bone is "neck"
  for (Npc& npc : npcs) {
    npc.costs.reserve(kFrames);
    const size_t joints = static_cast<size_t>(skeleton.jointCount());
    npc.locals.resize(joints);
    npc.dense.resize(joints);
    npc.displayedModels.resize(joints);
    npc.locomotion.clip->sample(0.0, npc.locals);
    handoff::CharacterSettings characterSettings;
    if (npc.lookAtPlayer)
      characterSettings.animationOwnedBones = {skeleton.jointNames[static_cast<size_t>(neck)]};
    // [snippet capsule]
    // A distant NPC: while it plays its animation only its capsule is in the world; a hit or a
    // death brings its bodies back at the animated pose in the handoff itself.
    characterSettings.capsuleOnlyWhileAnimated = npc.capsuleOnly;
    // [/snippet]
    // [snippet create]
    handoff::Result<std::unique_ptr<handoff::Character>> created = handoff::Character::create(
        physics, asset, skeleton, characterSettings, npc.locomotion.root(), npc.locals);
    if (!created) return fail(npc.name + ": " + created.error());
    npc.character = std::move(created).value();
    npc.character->setGetUpClips((*getUps)[0], (*getUps)[1]);
    // Impacts: contact events for every body of the character (ContactEvent, after each step).
    for (int b = 0; b < npc.character->ragdoll().bodyCount(); ++b)
      physics.setContactReport(npc.character->ragdoll().body(b), /*minImpulse=*/0.2);
    // [/snippet]
  }

  // The runner carries a sword in its right hand (DeepMimic's forearm bone ends at the wrist).
  // [snippet prop]
  handoff::PropDesc sword;
  sword.name = "sword";
  sword.handBone = "right_elbow";                  // it, or the nearest bone above it, has a body
  sword.shape.type = handoff::ShapeType::Capsule;  // in the prop's body space, along its +Y
  sword.shape.radius = 0.02;
  sword.shape.halfHeight = 0.35;
  sword.mass = 1.0;
  sword.handFromGrip.translation =
      skeleton.endSiteOffset[static_cast<size_t>(skeleton.findJoint("right_elbow"))];
  sword.propFromGrip.translation = {0, -0.25, 0};                // the grip in the sword's space
  handoff::Result<int> prop = runner.character->addProp(sword);  // in the hand now, at the grip
  if (!prop) return fail(prop.error());
  // [/snippet]

  // --- The game loop ---
  std::vector<double> stepCost(kFrames, 0.0);
  double shotAt = -1.0, blowAt = -1.0, killAt = -1.0, blastAt = -1.0;
  std::string shotBone;
  std::vector<bool> crateTouched(game.things.size(), false);
  int fallerStairImpacts = 0;  // the faller's bodies hitting the steps, at least 4 N s
  Impacts impacts;
  for (int frame = 0; frame < kFrames; ++frame) {
    const double now = (frame + 1) * kFrame;  // the time this frame ends on
    for (Npc& npc : npcs) npc.costFrame = 0.0;

    // [snippet frame]
    for (Npc& npc : npcs) {
      Stopwatch cost(npc.costFrame);
      npc.locomotion.advance(kFrame, npc.locals);  // the game's own sampling and root motion
      npc.clock += kFrame;                         // on in every state: the time must advance
      if (npc.lookAtPlayer) aimHead(npc, *asset, neck, kPlayer);
      const handoff::AnimationInput input{npc.clock, npc.locomotion.root(), npc.locals, /*teleport=*/false};
      if (handoff::Status s = npc.character->preStep(input, kFrame); !s)
        std::printf("%s: %s\n", npc.name.c_str(), s.error().c_str());
    }
    {
      Stopwatch cost(stepCost[static_cast<size_t>(frame)]);
      physics.step(kFrame, kSubsteps);  // the game's stepSimulation: 2 fixed substeps of 1/120 s
    }
    for (Npc& npc : npcs) {
      Stopwatch cost(npc.costFrame);
      npc.character->postStep(kFrame);
    }
    // render(npc.character->displayRoot(), npc.character->displayLocals()) for each character
    // [/snippet]

    for (Npc& npc : npcs) drainEvents(npc, now);

    // Impacts (contact events): which character's bone hit what, and how hard.
    // [snippet contacts]
    for (const handoff::ContactEvent& e : physics.contactEvents()) {
      const handoff::CharacterBodyInfo who = handoff::characterBodyInfo(physics, e.body);
      if (who.character == nullptr || who.part.body < 0) continue;  // not a character's limb
      const game::Thing* thing = game.find(e.otherEngineObject);    // one of the game's own objects?
      // Or another character's body:
      const handoff::CharacterBodyInfo other = handoff::characterBodyInfo(physics, e.other);
      impacts.play(npcs, now, who, thing, other, e);
    }
    // [/snippet]
    for (const handoff::ContactEvent& e : physics.contactEvents()) {
      const game::Thing* thing = game.find(e.otherEngineObject);
      if (thing != nullptr) crateTouched[static_cast<size_t>(thing - game.things.data())] = true;
      if (thing != nullptr && thing->name == "level 'Stairs'" && e.impulse >= 4.0 &&
          handoff::characterBodyInfo(physics, e.body).character == faller.character.get())
        ++fallerStairImpacts;
    }

    // The game's script.
    if (shotAt < 0.0 && now >= 1.2) {
      shotAt = now;
      // [snippet shot]
      // The player shoots at the runner's chest: the ray names the character and the bone it hit.
      const Vec3 aim = glm::normalize(bodyCentre(runner, handoff::Slot::Chest) - kPlayer);
      const std::uint32_t shootable =
          handoff::layers::kRagdoll | handoff::layers::kStatic | handoff::layers::kDebris;
      const handoff::CastHit hit = physics.castRay(kPlayer, kPlayer + 30.0 * aim, shootable);
      const handoff::CharacterBodyInfo who = handoff::characterBodyInfo(physics, hit.body);
      if (who.character == runner.character.get() && who.part.body >= 0) {
        shotBone = skeleton.jointNames[static_cast<size_t>(who.part.bone)];
        std::printf("%6.2f s  shot: the ray hits the runner's bone '%s' (body '%s', slot %s)\n", now,
                    shotBone.c_str(), asset->bodies[static_cast<size_t>(who.part.body)].name.c_str(),
                    handoff::slotName(who.part.slot));
        kill(runner, who.part.body, 30.0 * aim, hit.point);  // the bullet's impulse [N s] where it hit
      }
      // [/snippet]
    }
    if (killAt < 0.0 && now >= 1.5) {
      killAt = now;
      // A grenade behind the faller kills it and throws it down the stairs at 2 m/s (every body the
      // same velocity change). Its tumble is chaotic: thrown at 1.5-3 m/s from 0.2-0.5 m behind
      // the edge (24 runs), it came to rest at the foot with its pelvis 0.11-0.55 m high, after
      // 15-54 impacts on the steps.
      faller.character->setGetUpAllowed(false);
      if (handoff::Status s = faller.character->knockBack(Vec3{0.0, 0.0, -2.0 * asset->totalMass}); !s)
        std::printf("faller: %s\n", s.error().c_str());
    }
    if (blastAt < 0.0 && now >= 1.0) {
      blastAt = now;
      // A blast beside the knocked one throws it (every body the same velocity change).
      if (handoff::Status s = knocked.character->knockBack(Vec3{-200.0, 30.0, 0.0}); !s)
        std::printf("knocked: %s\n", s.error().c_str());
    }
    if (blowAt < 0.0 && now >= 2.0) {
      blowAt = now;
      // [snippet hit]
      // A blow to the chest while animated: a powered hit reaction, back to the animation once settled.
      const int chest = asset->bodyForSlot(handoff::Slot::Chest);
      const Vec3 at = bodyCentre(circler, handoff::Slot::Chest);
      const Vec3 blow = 35.0 * glm::normalize(Vec3{at.x - kPlayer.x, 0.0, at.z - kPlayer.z});  // [N s]
      if (handoff::Status s = circler.character->applyImpulse(chest, blow, at); !s)
        std::printf("circler: %s\n", s.error().c_str());
      // [/snippet]
    }

    // Per-frame figures the checks read.
    for (Npc& npc : npcs) {
      npc.costs.push_back(npc.costFrame);
      if (npc.poweredAt >= 0.0 && npc.animatedAgainAt < 0.0 &&
          npc.character->state() == handoff::CharacterState::Animated)
        npc.animatedAgainAt = now;
      npc.nonFinite |= !handoff::isFinite(npc.character->displayRoot());
      for (const Transform& l : npc.character->displayLocals()) npc.nonFinite |= !handoff::isFinite(l);
      const handoff::Ragdoll& r = npc.character->ragdoll();
      for (int b = 0; b < r.bodyCount(); ++b) {
        const Transform pose = physics.transform(r.body(b));
        npc.nonFinite |= !handoff::isFinite(pose);
        if (physics.motionType(r.body(b)) != handoff::MotionType::Dynamic) continue;  // the animation's pose
        npc.lowestBodyCentre = std::min(npc.lowestBodyCentre, pose.translation.y);
        npc.lowestBodyPoint =
            std::min(npc.lowestBodyPoint,
                     handoff::shapeLowestPoint(asset->bodies[static_cast<size_t>(b)].shape, pose).y);
      }
    }
  }

  // --- Figures and checks ---
  std::printf("\nframe cost per character (its animation, preStep, postStep; steady_clock, %d frames):\n",
              kFrames);
  // The maximum includes whatever preempted the program; the 99th percentile mostly does not.
  const auto print = [](const char* name, std::vector<double> us) {
    double sum = 0.0;
    for (double c : us) sum += c;
    std::sort(us.begin(), us.end());
    std::printf("  %-8s mean %6.1f us, 99th percentile %6.1f us, max %7.1f us\n", name,
                sum / double(us.size()), us[us.size() * 99 / 100], us.back());
  };
  for (const Npc& npc : npcs) print(npc.name.c_str(), npc.costs);
  std::printf("and the world step (the game's world: 4 characters, 3 crates, the level):\n");
  print("step", stepCost);
  std::printf("impact sounds played: %d\n", impacts.played);

  std::printf("\nchecks:\n");
  const Vec3 runnerPelvis = bodyCentre(runner, handoff::Slot::Pelvis);
  const Vec3 fallerPelvis = bodyCentre(faller, handoff::Slot::Pelvis);
  const Vec3 knockedPelvis = bodyCentre(knocked, handoff::Slot::Pelvis);
  check(!shotBone.empty(), "the shot's ray named a bone of the runner ('" + shotBone + "')");
  check(runner.character->state() == handoff::CharacterState::Ragdoll && runnerPelvis.y < 0.3,
        format("the shot runner is a ragdoll lying on the floor (pelvis %.3f m high, under 0.3 m)",
               runnerPelvis.y));
  check(runner.character->propCount() == 1 && !runner.character->propHeld(0),
        "the shot runner dropped its sword");
  check(
      circler.poweredAt >= 0.0 && circler.animatedAgainAt >= 0.0 && circler.animatedAgainAt - blowAt <= 2.0 &&
          circler.character->state() == handoff::CharacterState::Animated,
      format("the circler's hit reaction was back on the run %.2f s after the blow (within 2 s) and runs on",
             circler.animatedAgainAt - blowAt));
  check(fallerPelvis.y <= kLanding - 4 * kRise && fallerStairImpacts >= 5,
        format("the faller fell down the stairs: %.0f impacts on the steps (at least 5), its pelvis at rest "
               "%.2f m high, %.1f steps below the landing (at least 4)",
               fallerStairImpacts, fallerPelvis.y, (kLanding - fallerPelvis.y) / kRise));
  check(knocked.getUps >= 1 && knocked.recoveredAt >= 0.0 && knocked.recoveredAt - blastAt <= 10.0 &&
            knocked.character->state() == handoff::CharacterState::Animated && knockedPelvis.y > 0.7,
        format("the knocked one got up %.2f s after the blast (within 10 s) and stands (pelvis %.2f m)",
               knocked.recoveredAt - blastAt, knockedPelvis.y));
  for (const Npc& npc : npcs) {
    check(!npc.nonFinite, npc.name + ": every body and displayed bone finite in every frame");
    // Below the floor: at the end, no body more than 3 cm into the level (Bullet's contact slop at
    // rest; a body that went through keeps falling). On the way, an impact may press a shape into
    // the floor for a substep by its speed times 1/120 s: at most 10 cm (12 m/s).
    double restLowest = 1e30;
    const handoff::Ragdoll& r = npc.character->ragdoll();
    for (int b = 0; b < r.bodyCount(); ++b) {
      const Transform pose = physics.transform(r.body(b));
      restLowest = std::min(restLowest,
                            handoff::shapeLowestPoint(asset->bodies[static_cast<size_t>(b)].shape, pose).y);
    }
    check(
        restLowest > -0.03 && npc.lowestBodyPoint > -0.10,
        npc.name + format(": no body below the floor (at the end %.3f m, within 3 cm; deepest momentary dip "
                          "%.3f m, within 10 cm; lowest simulated body centre %.3f m)",
                          restLowest, npc.lowestBodyPoint, npc.lowestBodyCentre));
  }
  check(game.ticks == kFrames * kSubsteps && std::abs(game.tickMax - kFrame / kSubsteps) < 1e-6 &&
            std::abs(game.tickMin - kFrame / kSubsteps) < 1e-6,
        format("the game's own tick callback ran every substep: %.0f ticks of %.5f-%.5f s", game.ticks,
               game.tickMin, game.tickMax));
  bool anyPushed = false;
  for (size_t i = 0; i < game.things.size(); ++i) {
    const game::Thing& thing = game.things[i];
    if (thing.body->getInvMass() == 0) continue;
    const double moved = (thing.body->getCenterOfMassPosition() - thing.start).length();
    anyPushed |= moved > 0.05 && crateTouched[i];
    check(moved < 0.01 || crateTouched[i], thing.name + format(": moved %.3f m, ", moved) +
                                               (crateTouched[i] ? "touched by a character" : "untouched"));
  }
  check(anyPushed, "a character pushed a crate (moved over 5 cm)");

  if (!failures.empty()) {
    std::printf("\ngame: %zu checks failed:\n", failures.size());
    for (const std::string& f : failures) std::printf("  %s\n", f.c_str());
    return 1;
  }
  std::printf("\ngame ok\n");
  return 0;
}
