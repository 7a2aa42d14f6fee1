// handoff_replay_demo <folder>: writes two small replays of real handoffs for the web viewer
// test (tests/replay/web_viewer_test.cmake) and for trying the viewer by hand:
//   run_handoff.glb          DeepMimic humanoid running, ragdoll at 1.0 s, falls over a box;
//   mesh2motion_handoff.glb  the skinned Mesh2Motion character, ragdoll mid-clip.
// Each character is tracked kinematically along its clip in a Bullet world, committed with
// Ragdoll::commitAt (velocity inheritance), then simulated and written back. Prints one line per
// replay: file, frame count, handoff frame. Not the scenario runner: a fixture.
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

struct DemoSpec {
  std::string file;      ///< Under data/.
  std::string clipHint;  ///< Preferred clip (name contains); empty: the first.
  std::string name;      ///< Replay name and file stem.
  double handoffTime = 1.0;
  double endTime = 3.0;
  bool obstacle = false;  ///< A low box ahead of the character at the handoff.
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

  std::unique_ptr<PhysicsWorld> world = createBulletWorld();
  world->addGroundPlane(Vec3{0, 1, 0}, replay.groundHeight);
  if (spec.obstacle) {
    // A knee-high box 0.6 m ahead of the pelvis at the handoff, across the running direction.
    pose(spec.handoffTime - kDt);
    const Vec3 before = models[0].translation;
    pose(spec.handoffTime);
    Vec3 ahead = models[0].translation - before;
    ahead.y = 0.0;
    ahead = glm::length(ahead) > 1e-6 ? glm::normalize(ahead) : Vec3{0, 0, 1};
    const double yaw = std::atan2(ahead.x, ahead.z);
    ReplayStaticBox box;
    box.halfExtents = Vec3{0.8, 0.2, 0.15};
    box.worldFromBox = Transform{glm::angleAxis(yaw, Vec3{0, 1, 0}),
                                 worldFromRoot.transformPoint(models[0].translation) + 0.6 * ahead};
    box.worldFromBox.translation.y = replay.groundHeight + box.halfExtents.y;
    world->addStaticBox(box.worldFromBox, box.halfExtents);
    replay.boxes.push_back(box);
  }

  pose(0.0);
  Result<std::unique_ptr<Ragdoll>> created =
      Ragdoll::create(*world, source.asset, skeleton, worldFromRoot, models);
  if (!created) return Error{spec.name + ": " + created.error()};
  Ragdoll& ragdoll = **created;

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
    for (size_t b = 0; b < bodies; ++b)
      frame.authority.push_back(static_cast<std::uint8_t>(ragdoll.authority(static_cast<int>(b))));
    frame.capsuleEnabled = world->isEnabled(ragdoll.capsule());
    frame.worldFromCapsule = world->transform(ragdoll.capsule());
    for (size_t b = 0; b < bodies; ++b) {
      if (world->contactCount(ragdoll.body(static_cast<int>(b))) > 0) {
        // The engine interface reports contact counts, not points: the body's lowest point.
        frame.contacts.push_back(lowestShapePoint(asset.bodies[b].shape, poses[b]));
      }
    }
    const StepStats& stats = world->lastStepStats();
    ReplayFigures& f = frame.figures;
    f.pelvisHeight = poses[static_cast<size_t>(pelvis)].translation.y;
    if (!replay.frames.empty()) {
      const ReplayFrame& previous = replay.frames.back();
      f.pelvisSpeed = glm::length(poses[static_cast<size_t>(pelvis)].translation -
                                  previous.worldFromBodies[static_cast<size_t>(pelvis)].translation) /
                      (t - previous.time);
      f.settleWindow =
          physics && f.pelvisSpeed < 0.1 ? previous.figures.settleWindow + (t - previous.time) : 0.0;
    }
    f.maxJointStretch = ragdoll.maxJointSeparation();
    f.blendWeight =
        physics ? displayBlendWeight(t - spec.handoffTime, HandoffSettings{}.displayBlendTime) : 0.0;
    f.contactPoints = stats.contactPoints;
    f.activeBodies = stats.activeBodies;
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
  // The handoff.
  pose(spec.handoffTime);
  HandoffRecord handoff = ragdoll.commitAt(HandoffSettings{}, spec.handoffTime, worldFromRoot, models);
  if (!handoff.committed) return Error{spec.name + ": handoff abandoned: " + handoff.failure};
  const int handoffFrame = static_cast<int>(replay.frames.size());
  record(spec.handoffTime, "ragdoll", true);
  replay.events.push_back({spec.handoffTime, "ragdoll", "handoff mid-" + clip->name});
  // Ragdoll.
  const int physicsFrames = static_cast<int>(std::lround((spec.endTime - spec.handoffTime) / kDt));
  for (int k = 1; k <= physicsFrames; ++k) {
    world->step(kDt, kSubsteps);
    if (k == 1) ragdoll.recordFirstStep(handoff);
    record(spec.handoffTime + k * kDt, "ragdoll", true);
  }

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
      {"deepmimic/humanoid3d_run.bvh", "", "run_handoff", 1.0, 3.0, true},
      {"mesh2motion/human-base-animations.glb", "Jog", "mesh2motion_handoff", 1.0, 3.0, false},
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
