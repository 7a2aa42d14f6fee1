// handoff_replay_demo <folder>: writes small replays of real runs for the web viewer test
// (tests/replay/web_viewer_test.cmake) and for trying the viewer by hand:
//   run_handoff.glb          DeepMimic humanoid running, ragdoll at 1.0 s, falls over a box,
//                            settles, gets up with the DeepMimic get-up clips (the Character
//                            controller: recovering) and runs again for 0.5 s;
//   mesh2motion_handoff.glb  the skinned Mesh2Motion character jogging, powered at 0.8 s (the
//                            explicit joint drives track the jog), hit in the chest at 1.0 s,
//                            drives off (full ragdoll) at 1.4 s, falls to the ground.
// Between them: every authority colour, contacts, the capsule, a skinned mesh and seven events.
// Bodies are committed with velocity inheritance and simulated in Bullet. Prints one line per
// replay: file, frame count, handoff frame. Not the scenario runner: a fixture.
#include "handoff/controller.h"
#include "handoff/drive.h"
#include "handoff/handoff.h"
#include "handoff/physics_bullet.h"
#include "handoff/replay.h"

#include "replay/replay_fixture.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

namespace handoff {
namespace {

constexpr double kDt = 1.0 / 60.0;
constexpr int kSubsteps = 2;

/// The lowest point of a shape (where it touches a floor below it). [m]
Vec3 lowestShapePoint(const ShapeDesc& s, const Transform& x) {
  Vec3 p = x.translation;
  if (s.type == ShapeType::Capsule) {
    const Vec3 axis = x.transformVector(Vec3{0, s.halfHeight, 0});
    p += axis.y < 0 ? axis : -axis;
  }
  p.y = replay_test::lowestPoint(s, x);
  return p;
}

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
      frame.contacts.push_back(lowestShapePoint(asset.bodies[b].shape, poses[b]));
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

/// A get-up clip of the DeepMimic humanoid for a character on the same skeleton.
Result<GetUpClip> loadGetUp(const std::string& file, const Skeleton& skeleton, const HumanoidMap& map) {
  Result<ImportedAsset> imported = importFile(std::string(HANDOFF_DATA_DIR) + "/" + file);
  if (!imported) return Error{imported.error()};
  if (imported->clips.empty() || imported->skeleton.jointNames != skeleton.jointNames) {
    return Error{file + ": no clip on the character's skeleton"};
  }
  GetUpClip g;
  g.clip = imported->clips[0];
  Result<GetUpClipInfo> info = computeGetUpClipInfo(g.clip, skeleton, map);
  if (!info) return Error{file + ": " + info.error()};
  g.info = *info;
  return g;
}

struct DemoSpec {
  std::string file;      ///< Under data/.
  std::string clipHint;  ///< Preferred clip (name contains); empty: the first.
  std::string name;      ///< Replay name and file stem.
  double handoffTime = 1.0;
  double endTime = 3.0;
  bool obstacle = false;  ///< A low box ahead of the character at the handoff.
  /// Powered until this time (the joint drives track the clip after the commit), then a full
  /// ragdoll; <= handoffTime: a ragdoll from the commit on. [s]
  double poweredUntil = 0.0;
  double impulseTime = -1.0;  ///< When the chest is hit (< 0: never). [s]
  double impulse = 0.0;       ///< Backwards (against the running direction), at the chest. [N s]
  /// Through the Character controller with the DeepMimic get-up clips: after the fall it settles,
  /// gets up (recovering) and runs again; endTime is then the longest it may take.
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
  std::vector<Transform> locals(joints), models(joints), poses(bodies), displayLocals(joints),
      scratch(joints);
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

  if (spec.recover) {
    // The Character controller end to end: animated -> ragdoll -> recovering -> animated.
    Result<GetUpClip> supine = loadGetUp("deepmimic/humanoid3d_getup_faceup.bvh", skeleton, asset.map);
    Result<GetUpClip> prone = loadGetUp("deepmimic/humanoid3d_getup_facedown.bvh", skeleton, asset.map);
    if (!supine || !prone) return Error{spec.name + ": " + (supine ? prone.error() : supine.error())};
    Transform root = worldFromRoot;
    clip->sample(0.0, WrapMode::Loop, locals);
    Result<std::unique_ptr<Character>> made =
        Character::create(*world, source.asset, skeleton, CharacterSettings{}, root, locals);
    if (!made) return Error{spec.name + ": " + made.error()};
    Character& ch = **made;
    ch.setGetUpClips(*supine, *prone);
    const int pelvisJoint = std::max(0, asset.map[Slot::Pelvis]);
    int handoffFrame = -1;
    double clipTime = 0.0, animTime = 0.0, runAgainUntil = -1.0;
    std::vector<Transform> dense(joints);
    for (int k = 1; animTime < spec.endTime && (runAgainUntil < 0.0 || animTime < runAgainUntil); ++k) {
      animTime += kDt;
      clipTime += kDt;
      clip->sample(clipTime, WrapMode::Loop, locals);
      if (Status s = ch.preStep(AnimationInput{animTime, root, locals, false}, kDt); !s) {
        return Error{spec.name + ": " + s.error()};
      }
      world->step(kDt, kSubsteps);
      ch.postStep(kDt);
      if (handoffFrame < 0 && animTime >= spec.handoffTime - 1e-9) {
        // Cut with a dense sample an eighth of a frame before the last input (as the game would).
        clip->sample(clipTime - kDt / 8, WrapMode::Loop, dense);
        const AnimationInput denseInput{animTime - kDt / 8, root, dense, false};
        const HandoffRecord& handoff = ch.goRagdoll(&denseInput);
        if (!handoff.committed) return Error{spec.name + ": handoff abandoned: " + handoff.failure};
        handoffFrame = static_cast<int>(replay.frames.size());
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
        frame.authority.push_back(
            ch.state() == CharacterState::Recovering
                ? kReplayAuthorityRecovering
                : static_cast<std::uint8_t>(ch.ragdoll().authority(static_cast<int>(b))));
      }
      recordEngine(*world, ch.ragdoll(), pelvis, replay, frame);
      frame.figures.settleWindow = ch.settle().timeInWindow();
      frame.figures.blendWeight = ch.blendWeight();
      replay.frames.push_back(std::move(frame));
    }
    for (const CharacterEvent& e : ch.events()) replay.events.push_back({e.time, e.kind, e.detail});
    if (runAgainUntil < 0.0)
      return Error{spec.name + ": no recovery within " + std::to_string(spec.endTime) + " s"};
    const std::string path = (std::filesystem::path(folder) / (spec.name + ".glb")).string();
    if (Status s = writeReplayGlb(replay, path); !s) return Error{s.error()};
    return path + " frames=" + std::to_string(replay.frames.size()) +
           " handoffFrame=" + std::to_string(handoffFrame) + " clip=" + clip->name +
           " events=" + std::to_string(replay.events.size());
  }

  pose(0.0);
  Result<std::unique_ptr<Ragdoll>> created =
      Ragdoll::create(*world, source.asset, skeleton, worldFromRoot, models);
  if (!created) return Error{spec.name + ": " + created.error()};
  Ragdoll& ragdoll = **created;

  // Powered phase: the explicit drive (SPEC.md section 5) on the ragdoll's bodies, tracking the
  // clip's joint rotations. The asset's gains exceed what the explicit drive can take on the
  // light bodies at this substep: the stability guard scales them (as tests/drive does).
  std::vector<BodyId> bodyIds;
  for (size_t b = 0; b < bodies; ++b) bodyIds.push_back(ragdoll.body(static_cast<int>(b)));
  const std::vector<DriveJoint> driveJoints = driveJointsFromAsset(asset);
  ExplicitDrive drive(*world, bodyIds, driveJoints);
  drive.setStabilityLimit(1.0);
  std::vector<Quat> targetBodies(bodies), previousTargets(driveJoints.size()), targets(driveJoints.size());
  std::vector<Vec3> targetVelocities(driveJoints.size());
  const auto jointTargetsAt = [&](double t, std::vector<Quat>& out) {
    pose(t);
    bodyPosesFromModels(asset, models, worldFromRoot, poses);
    for (size_t b = 0; b < bodies; ++b) targetBodies[b] = poses[b].rotation;
    return JointTargetsJob{driveJoints, targetBodies, out}.run();
  };
  double driveWeight = 0.0;

  const auto record = [&](double t, const char* state, bool physics) {
    ReplayFrame frame;
    frame.time = t;
    frame.state = state;
    frame.worldFromRoot = worldFromRoot;
    ragdoll.readBodyPoses(poses);
    frame.worldFromBodies = poses;
    if (physics) {
      writeBackPose(skeleton, asset, poses, worldFromRoot, locals, {}, scratch, displayLocals);
      frame.locals = displayLocals;
    } else {
      frame.locals = locals;
    }
    for (size_t b = 0; b < bodies; ++b) {
      Authority a = ragdoll.authority(static_cast<int>(b));
      // The drive acts on every joint: each dynamic body is driven while the weight is on.
      if (a == Authority::Physics && driveWeight > 0.0) a = Authority::Drive;
      frame.authority.push_back(static_cast<std::uint8_t>(a));
    }
    recordEngine(*world, ragdoll, pelvis, replay, frame);
    ReplayFigures& f = frame.figures;
    if (!replay.frames.empty()) {
      const ReplayFrame& previous = replay.frames.back();
      f.settleWindow =
          physics && f.pelvisSpeed < 0.1 ? previous.figures.settleWindow + (t - previous.time) : 0.0;
    }
    f.blendWeight =
        physics ? displayBlendWeight(t - spec.handoffTime, HandoffSettings{}.displayBlendTime) : 0.0;
    f.driveWeight = driveWeight;
    replay.frames.push_back(std::move(frame));
  };

  // Animated: tracked kinematically along the clip.
  for (int k = 0; k < animatedFrames; ++k) {
    const double t = k * kDt;
    pose(t);
    if (Status s = ragdoll.setAnimatedPose(t, worldFromRoot, models, false, kDt); !s) {
      return Error{spec.name + ": " + s.error()};
    }
    world->step(kDt, kSubsteps);  // the kinematic bodies reach the pose at t
    record(t, "animated", false);
  }
  // The handoff: to a powered ragdoll or straight to a ragdoll.
  const bool powered = spec.poweredUntil > spec.handoffTime;
  pose(spec.handoffTime);
  HandoffRecord handoff = ragdoll.commitAt(HandoffSettings{}, spec.handoffTime, worldFromRoot, models);
  if (!handoff.committed) return Error{spec.name + ": handoff abandoned: " + handoff.failure};
  const int handoffFrame = static_cast<int>(replay.frames.size());
  if (powered) {
    driveWeight = 1.0;
    drive.setWeight(1.0);
    world->setSubstepListener(&drive);
    replay.events.push_back(
        {spec.handoffTime, "powered", "powered mid-" + clip->name + ": drives track the clip"});
  } else {
    replay.events.push_back({spec.handoffTime, "ragdoll", "handoff mid-" + clip->name});
  }
  record(spec.handoffTime, powered ? "powered" : "ragdoll", true);

  const int physicsFrames = static_cast<int>(std::lround((spec.endTime - spec.handoffTime) / kDt));
  const int chest = std::max(0, asset.bodyForSlot(Slot::Chest));
  bool hit = false;
  for (int k = 1; k <= physicsFrames; ++k) {
    const double t = spec.handoffTime + k * kDt;  // the frame's end
    if (powered && driveWeight > 0.0 && t > spec.poweredUntil + 1e-9) {
      driveWeight = 0.0;
      world->setSubstepListener(nullptr);
      // Marked at the first frame the drives no longer act on (the end of this step).
      replay.events.push_back({t, "ragdoll", "drives off: full ragdoll"});
    }
    if (driveWeight > 0.0) {
      if (!jointTargetsAt(t - kDt, previousTargets) || !jointTargetsAt(t, targets) ||
          !JointTargetVelocitiesJob{previousTargets, targets, kDt, targetVelocities}.run() ||
          !drive.setTargets(targets, targetVelocities)) {
        return Error{spec.name + ": drive targets at t=" + std::to_string(t)};
      }
    }
    if (!hit && spec.impulseTime >= 0.0 && t - kDt >= spec.impulseTime - 1e-9) {
      hit = true;
      const BodyId body = ragdoll.body(chest);
      const Vec3 at = world->transform(body).translation;
      world->applyLinearImpulse(body, -spec.impulse * ahead, at);
      char detail[96];
      std::snprintf(detail, sizeof detail, "%.0f N s backwards at the chest (%s)", spec.impulse,
                    asset.bodies[static_cast<size_t>(chest)].name.c_str());
      replay.events.push_back({t - kDt, "impulse", detail});
    }
    world->step(kDt, kSubsteps);
    if (k == 1) ragdoll.recordFirstStep(handoff);
    ragdoll.updateLimits();
    record(t, driveWeight > 0.0 ? "powered" : "ragdoll", true);
  }
  world->setSubstepListener(nullptr);

  const std::string path = (std::filesystem::path(folder) / (spec.name + ".glb")).string();
  if (Status s = writeReplayGlb(replay, path); !s) return Error{s.error()};
  return path + " frames=" + std::to_string(replay.frames.size()) +
         " handoffFrame=" + std::to_string(handoffFrame) + " clip=" + clip->name;
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
