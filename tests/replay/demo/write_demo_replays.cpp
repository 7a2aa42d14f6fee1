// handoff_replay_demo <folder>: writes small replays of real runs for the web viewer test
// (tests/replay/web_viewer_test.cmake) and for trying the viewer by hand:
//   run_handoff.glb          DeepMimic humanoid running, ragdoll at 1.0 s, falls over a box,
//                            settles, gets up with the DeepMimic get-up clips (the Character
//                            controller: recovering) and runs again for 0.5 s;
//   mesh2motion_handoff.glb  the skinned Mesh2Motion character jogging, powered at 0.8 s
//                            (Character::goPowered: the joint drives track the jog), hit in the
//                            chest at 1.0 s, knocked out (full ragdoll) at 1.4 s, falls.
// Between them: every authority colour, contacts, the capsule, a skinned mesh and seven events.
// Each is the Character controller in a Bullet world, stepped as a game does. Prints one line per
// replay: file, frame count, handoff frame. Not the scenario runner: a fixture.
#include "handoff/controller.h"
#include "handoff/handoff.h"
#include "handoff/physics_bullet.h"
#include "handoff/replay.h"

#include "replay/replay_fixture.h"
#include "support/getup_clips.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

namespace handoff {
namespace {

constexpr double kDt = 1.0 / 60.0;
constexpr int kSubsteps = 2;

/// What every physics frame records from the engine: capsule, contacts (the engine interface
/// reports contact counts, not points: one point per body in contact, its lowest point) and the
/// figures the engine gives. frame.time and frame.worldFromBodies must be set.
void recordEngine(const PhysicsWorld& world, const Ragdoll& ragdoll, int pelvis, const Replay& replay,
                  ReplayFrame& frame) {
  const RagdollAsset& asset = ragdoll.asset();
  const std::vector<Transform>& poses = frame.worldFromBodies;
  frame.capsuleEnabled = world.isEnabled(ragdoll.capsule());
  frame.worldFromCapsule = world.transform(ragdoll.capsule());
  for (size_t b = 0; b < poses.size(); ++b) {
    if (world.contactCount(ragdoll.body(static_cast<int>(b))) > 0) {
      frame.contacts.push_back(shapeLowestPoint(asset.bodies[b].shape, poses[b]));
    }
  }
  const StepStats& stats = world.lastStepStats();
  ReplayFigures& f = frame.figures;
  const auto p = static_cast<size_t>(pelvis);
  f.pelvisHeight = poses[p].translation.y;
  if (!replay.frames.empty()) {
    const ReplayFrame& previous = replay.frames.back();
    f.pelvisSpeed = glm::length(poses[p].translation - previous.worldFromBodies[p].translation) /
                    (frame.time - previous.time);
  }
  f.maxJointStretch = ragdoll.maxJointSeparation();
  f.contactPoints = stats.contactPoints;
  f.activeBodies = stats.activeBodies;
}

struct DemoSpec {
  std::string file;      ///< Under data/.
  std::string clipHint;  ///< Preferred clip (name contains); empty: the first.
  std::string name;      ///< Replay name and file stem.
  double handoffTime = 1.0;
  double endTime = 3.0;
  bool obstacle = false;  ///< A low box ahead of the character at the handoff.
  /// Powered (Character::goPowered: the joint drives track the clip) from handoffTime until this
  /// time, then a full ragdoll (goRagdoll); <= handoffTime: a ragdoll from the handoff on. [s]
  double poweredUntil = 0.0;
  double impulseTime = -1.0;  ///< When the chest is hit (< 0: never). [s]
  double impulse = 0.0;       ///< Backwards (against the running direction), at the chest. [N s]
  /// With the DeepMimic get-up clips: after the fall it settles, gets up (recovering) and runs
  /// again; endTime is then the longest it may take. Else no get-up: it stays a ragdoll.
  bool recover = false;
};

Result<std::string> writeDemo(const DemoSpec& spec, const std::string& folder) {
  Result<replay_test::Source> loaded =
      replay_test::loadSource(std::string(HANDOFF_DATA_DIR) + "/" + spec.file);
  if (!loaded) return Error{loaded.error()};
  const replay_test::Source& source = *loaded;
  const Skeleton& skeleton = source.skeleton();
  if (source.imported.clips.empty()) return Error{spec.file + ": no clip"};
  const Clip* clip = &source.imported.clips[0];
  for (const Clip& c : source.imported.clips) {
    if (!spec.clipHint.empty() && c.name.find(spec.clipHint) != std::string::npos) {
      clip = &c;
      break;
    }
  }
  const RagdollAsset& asset = *source.asset;
  const size_t joints = static_cast<size_t>(skeleton.jointCount());
  const size_t bodies = asset.bodies.size();
  const int pelvis = std::max(0, asset.bodyForSlot(Slot::Pelvis));
  const Transform worldFromRoot;

  Replay replay = replay_test::emptyReplay(source, spec.name, 1.0 / kDt);
  std::vector<Transform> locals(joints), models(joints), poses(bodies);
  const auto pose = [&](double t) {
    clip->sample(t, WrapMode::Loop, locals);
    localToModel(skeleton, locals, models);
  };

  // Floor just under the lowest body of the animated part (content, not handoff, decides it).
  const int animatedFrames = static_cast<int>(std::lround(spec.handoffTime / kDt));
  double lowest = 1e30;
  for (int k = 0; k <= animatedFrames; ++k) {
    pose(k * kDt);
    bodyPosesFromModels(asset, models, worldFromRoot, poses);
    for (size_t b = 0; b < bodies; ++b) {
      lowest = std::min(lowest, replay_test::lowestPoint(asset.bodies[b].shape, poses[b]));
    }
  }
  replay.groundHeight = std::min(0.0, lowest) - 0.001;

  // The running direction at the handoff (horizontal).
  pose(spec.handoffTime - kDt);
  const Vec3 before = models[0].translation;
  pose(spec.handoffTime);
  Vec3 ahead = models[0].translation - before;
  ahead.y = 0.0;
  ahead = glm::length(ahead) > 1e-6 ? glm::normalize(ahead) : Vec3{0, 0, 1};

  std::unique_ptr<PhysicsWorld> world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, replay.groundHeight);
  if (spec.obstacle) {
    // A knee-high box 0.6 m ahead of the pelvis at the handoff, across the running direction.
    const double yaw = std::atan2(ahead.x, ahead.z);
    ReplayStaticBox box;
    box.halfExtents = Vec3{0.8, 0.2, 0.15};
    box.worldFromBox = Transform{glm::angleAxis(yaw, Vec3{0, 1, 0}),
                                 worldFromRoot.transformPoint(models[0].translation) + 0.6 * ahead};
    box.worldFromBox.translation.y = replay.groundHeight + box.halfExtents.y;
    world->addStaticBox(box.worldFromBox, box.halfExtents);
    replay.boxes.push_back(box);
  }

  // The Character controller end to end, stepped as a game does (preStep, world step, postStep).
  clip->sample(0.0, WrapMode::Loop, locals);
  Transform root = worldFromRoot;
  Result<std::unique_ptr<Character>> made =
      Character::create(*world, source.asset, skeleton, CharacterSettings{}, root, locals);
  if (!made) return Error{spec.name + ": " + made.error()};
  Character& ch = **made;
  if (spec.recover) {
    // The DeepMimic pair as the library's loaders prepare it (the face-up clip completed to standing).
    Result<std::vector<GetUpClip>> getUps = test::deepMimicGetUps(HANDOFF_DATA_DIR, skeleton, asset.map);
    if (!getUps) return Error{spec.name + ": " + getUps.error()};
    ch.setGetUpClips((*getUps)[0], (*getUps)[1]);
  } else {
    ch.setGetUpAllowed(false);
  }
  const bool powered = spec.poweredUntil > spec.handoffTime;
  const int pelvisJoint = std::max(0, asset.map[Slot::Pelvis]);
  const int chest = std::max(0, asset.bodyForSlot(Slot::Chest));
  int handoffFrame = -1;
  bool hit = false, unpowered = false;
  double clipTime = 0.0, animTime = 0.0, runAgainUntil = -1.0;
  std::vector<Transform> dense(joints);
  const auto fail = [&](const std::string& what) {
    return Error{spec.name + " at " + std::to_string(animTime) + " s: " + what};
  };
  while (animTime < spec.endTime - 1e-9 && (runAgainUntil < 0.0 || animTime < runAgainUntil)) {
    // Scenario events due at the start of this step.
    if (!hit && spec.impulseTime >= 0.0 && animTime >= spec.impulseTime - 1e-9) {
      hit = true;
      const Vec3 at = world->transform(ch.ragdoll().body(chest)).translation;
      if (Status s = ch.applyImpulse(chest, -spec.impulse * ahead, at); !s) return fail(s.error());
    }
    animTime += kDt;
    clipTime += kDt;
    clip->sample(clipTime, WrapMode::Loop, locals);
    if (Status s = ch.preStep(AnimationInput{animTime, root, locals, false}, kDt); !s) return fail(s.error());
    world->step(kDt, kSubsteps);
    ch.postStep(kDt);
    if (handoffFrame < 0 && animTime >= spec.handoffTime - 1e-9) {
      handoffFrame = static_cast<int>(replay.frames.size());
      if (powered) {
        PoweredSettings settings;
        settings.pinPelvisAndFeet = true;  // a hit reaction on its feet, until knocked out
        if (Status s = ch.goPowered(settings); !s) return fail("powered: " + s.error());
      } else {
        // Cut with a dense sample an eighth of a frame before the last input (as a game would).
        clip->sample(clipTime - kDt / 8, WrapMode::Loop, dense);
        const AnimationInput denseInput{animTime - kDt / 8, root, dense, false};
        const HandoffRecord& handoff = ch.goRagdoll(&denseInput);
        if (!handoff.committed) return fail("handoff abandoned: " + handoff.failure);
      }
    }
    if (powered && !unpowered && animTime >= spec.poweredUntil - 1e-9 &&
        ch.state() == CharacterState::Powered) {
      unpowered = true;  // drives off (unless the controller knocked it out already)
      const HandoffRecord& knockout = ch.goRagdoll();
      if (!knockout.committed) return fail("knockout: " + knockout.failure);
    }
    if (ch.takeRecoveryFinished()) {
      // Run again from where the character stands, for half a second.
      root = rootToStartClip(*clip, skeleton, pelvisJoint, asset.modelForward, ch.displayRoot());
      clipTime = 0.0;
      runAgainUntil = animTime + 0.5;
    }
    ReplayFrame frame;
    frame.time = ch.time();
    frame.state = characterStateName(ch.state());
    frame.worldFromRoot = ch.displayRoot();
    frame.locals.assign(ch.displayLocals().begin(), ch.displayLocals().end());
    ch.ragdoll().readBodyPoses(poses);
    frame.worldFromBodies = poses;
    for (size_t b = 0; b < bodies; ++b) {
      frame.authority.push_back(ch.state() == CharacterState::Recovering
                                    ? kReplayAuthorityRecovering
                                    : static_cast<std::uint8_t>(ch.ragdoll().authority(static_cast<int>(b))));
    }
    recordEngine(*world, ch.ragdoll(), pelvis, replay, frame);
    frame.figures.settleWindow = ch.settle().timeInWindow();
    frame.figures.blendWeight = ch.blendWeight();
    frame.figures.driveWeight = ch.state() == CharacterState::Powered ? ch.driveWeight() : 0.0;
    replay.frames.push_back(std::move(frame));
  }
  for (const CharacterEvent& e : ch.events())
    replay.events.push_back({e.time, eventKindName(e.kind), e.detail});
  if (spec.recover && runAgainUntil < 0.0) return fail("no recovery");

  const std::string path = (std::filesystem::path(folder) / (spec.name + ".glb")).string();
  if (Status s = writeReplayGlb(replay, path); !s) return Error{s.error()};
  return path + " frames=" + std::to_string(replay.frames.size()) +
         " handoffFrame=" + std::to_string(handoffFrame) + " clip=" + clip->name +
         " events=" + std::to_string(replay.events.size());
}

}  // namespace
}  // namespace handoff

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <folder>\n", argv[0]);
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(argv[1], ec);
  if (ec) {
    std::fprintf(stderr, "cannot create '%s': %s\n", argv[1], ec.message().c_str());
    return 1;
  }
  const handoff::DemoSpec specs[] = {
      {"deepmimic/humanoid3d_run.bvh", "", "run_handoff", 1.0, 10.0, true, 0.0, -1.0, 0.0, true},
      {"mesh2motion/human-base-animations.glb", "Jog", "mesh2motion_handoff", 0.8, 3.0, false, 1.4, 1.0,
       40.0},
  };
  int failures = 0;
  for (const handoff::DemoSpec& spec : specs) {
    handoff::Result<std::string> written = handoff::writeDemo(spec, argv[1]);
    if (written) {
      std::printf("%s\n", written->c_str());
    } else {
      std::fprintf(stderr, "%s\n", written.error().c_str());
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
