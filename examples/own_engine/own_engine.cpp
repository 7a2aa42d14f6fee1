// handoff's core without any of its engine adapters: a game on its own physics (Unity, Unreal,
// Jolt, PhysX, a studio engine) drives the engine-free parts from its own loop. It links the core
// libraries only (no Bullet, no ODE: CTest example.own_engine_links_no_engine checks the binary)
// and docs/CORE_WITHOUT_ADAPTER.md's code is this file's marked regions.
//
// "Your engine" here is MyEngine below: a stand-in that integrates free rigid bodies (gravity, no
// joints, no contacts), just enough to show where each call of handoff goes; a real engine keeps
// the ragdoll's joints together. Run from the project root:
//
//   build/tests/handoff_example_own_engine        (target handoff_example_own_engine)
//
// It prints the figures CTest example.own_engine checks, and exits non-zero when one is wrong.
#include "handoff/asset.h"
#include "handoff/drive.h"
#include "handoff/handoff.h"
#include "handoff/import.h"
#include "handoff/math.h"
#include "handoff/physics.h"
#include "handoff/recovery.h"
#include "handoff/rig.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  std::printf("%s %s\n", ok ? "[ ok ]" : "[FAIL]", what);
  if (!ok) ++failures;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "own_engine: %s\n", message.c_str());
  return 1;
}

/// The stand-in for the game's own physics: free rigid bodies under gravity.
struct MyBody {
  handoff::Transform pose;
  handoff::Vec3 velocity{0.0}, omega{0.0};
  double mass = 1.0;
  handoff::Vec3 inertia{1.0};  // principal moments in body space
};
struct MyEngine {
  std::vector<MyBody> bodies;
  void applyTorque(int body, const handoff::Vec3& torqueWorld, double dt) {
    MyBody& b = bodies[static_cast<std::size_t>(body)];
    const handoff::Vec3 local = glm::conjugate(b.pose.rotation) * torqueWorld;
    b.omega += b.pose.rotation * (local / b.inertia) * dt;
  }
  void step(double dt) {
    for (MyBody& b : bodies) {
      b.velocity += handoff::Vec3{0.0, -9.81, 0.0} * dt;
      b.pose.translation += b.velocity * dt;
      const double angle = glm::length(b.omega) * dt;
      if (angle > 0.0)
        b.pose.rotation = glm::angleAxis(angle, b.omega / glm::length(b.omega)) * b.pose.rotation;
      b.pose.rotation = handoff::normalizeOrIdentity(b.pose.rotation);
    }
  }
};

double distance(const handoff::Transform& a, const handoff::Transform& b) {
  return glm::length(a.translation - b.translation) + handoff::angleBetween(a.rotation, b.rotation);
}

}  // namespace

int main() {
  // --- Once: the asset (handoff's asset builder, engine-free) ---
  // [snippet asset]
  handoff::Result<handoff::ImportedAsset> imported = handoff::importFile("data/deepmimic/humanoid3d_run.bvh");
  if (!imported || imported->clips.empty()) return fail(imported ? "no clip" : imported.error());
  const handoff::Skeleton& skeleton = imported->skeleton;
  const handoff::Clip& run = imported->clips.front();
  handoff::Result<handoff::RagdollAsset> built = handoff::buildRagdoll(skeleton, {});
  if (!built) return fail(built.error());
  const handoff::RagdollAsset& asset = *built;
  const int bodyCount = static_cast<int>(asset.bodies.size());
  const int jointCount = skeleton.jointCount();
  // Give your engine one body per asset body (BodyDef: shape, mass, boneFromBody) and one joint
  // per JointDef (frames, limits in handoff::jointAngles' convention).
  MyEngine engine;
  for (const handoff::BodyDef& def : asset.bodies) {
    MyBody body;
    body.mass = def.mass;
    body.inertia = handoff::shapePrincipalInertia(def.shape, def.mass);
    engine.bodies.push_back(body);
  }
  // [/snippet]
  std::printf("asset: %d bodies, %zu joints, %.1f kg\n", bodyCount, asset.joints.size(), [&] {
    double m = 0.0;
    for (const handoff::BodyDef& b : asset.bodies) m += b.mass;
    return m;
  }());

  // Buffers, allocated once: nothing below allocates per frame.
  std::vector<handoff::Transform> locals(static_cast<std::size_t>(jointCount));
  std::vector<handoff::Transform> models(locals.size());
  std::vector<handoff::Transform> worldFromBodies(static_cast<std::size_t>(bodyCount));
  handoff::PoseHistory history(bodyCount);
  const handoff::Transform worldFromRoot{};  // the character's root (the clip carries the motion)
  const double dt = 1.0 / 60.0;

  // --- Every animated frame: body poses from the bones, into the pose history ---
  const double handoffTime = 0.5;
  for (double t = 0.0; t <= handoffTime + 1e-9; t += dt) {
    // [snippet animated]
    run.sample(t, handoff::WrapMode::Loop, locals);  // your animation system's pose
    handoff::localToModel(skeleton, locals, models);
    handoff::bodyPosesFromModels(asset, models, worldFromRoot, worldFromBodies);
    // Move your kinematic bodies to worldFromBodies here; then remember the pose:
    if (handoff::Status pushed = history.push(t, worldFromRoot, worldFromBodies, /*teleport=*/false); !pushed)
      return fail(pushed.error());
    // [/snippet]
  }

  // --- The handoff: inherited velocities onto your engine's bodies ---
  // [snippet inherit]
  std::vector<handoff::Vec3> rawLinear(worldFromBodies.size()), rawAngular(worldFromBodies.size());
  std::vector<handoff::Vec3> linear(worldFromBodies.size()), angular(worldFromBodies.size());
  std::vector<std::uint8_t> clamps(worldFromBodies.size());
  const handoff::HandoffSettings handoffSettings;
  handoff::inheritVelocities(history, handoffSettings, rawLinear, rawAngular, linear, angular, clamps);
  for (int b = 0; b < bodyCount; ++b) {
    MyBody& body = engine.bodies[static_cast<std::size_t>(b)];
    body.pose = history.body(0, b);  // the newest animated pose
    body.velocity = linear[static_cast<std::size_t>(b)];
    body.omega = angular[static_cast<std::size_t>(b)];
    // Switch your body from kinematic to dynamic here, keeping pose and these velocities.
  }
  // [/snippet]

  // Check: the inherited velocity of each body is the clip's own finite difference over the last
  // frame (the same two samples, computed here from the clip independently).
  {
    std::vector<handoff::Transform> before(worldFromBodies.size());
    const double tNew = history.time(0), tOld = history.time(1);
    run.sample(tOld, handoff::WrapMode::Loop, locals);
    handoff::localToModel(skeleton, locals, models);
    handoff::bodyPosesFromModels(asset, models, worldFromRoot, before);
    run.sample(tNew, handoff::WrapMode::Loop, locals);
    handoff::localToModel(skeleton, locals, models);
    handoff::bodyPosesFromModels(asset, models, worldFromRoot, worldFromBodies);
    double worst = 0.0, pelvisSpeed = 0.0;
    for (int b = 0; b < bodyCount; ++b) {
      const auto i = static_cast<std::size_t>(b);
      const handoff::Vec3 fd = (worldFromBodies[i].translation - before[i].translation) / (tNew - tOld);
      worst = std::max(worst, glm::length(fd - linear[i]));
      if (b == 0) pelvisSpeed = glm::length(linear[i]);
    }
    std::printf("inherited linear velocity vs the clip's finite difference: max |error| %.3g m/s\n", worst);
    std::printf("pelvis speed at the handoff: %.2f m/s (the run)\n", pelvisSpeed);
    check(worst < 1e-9, "inherited velocities are the clip's finite differences (1e-9 m/s: rounding)");
    check(pelvisSpeed > 2.0 && pelvisSpeed < 6.0, "pelvis speed within a run's 2-6 m/s");
  }

  // --- Every physics step: drive torques toward the animation, applied by your engine ---
  // [snippet drive]
  const std::vector<handoff::DriveJoint> driveJoints = handoff::driveJointsFromAsset(asset);
  std::vector<handoff::Quat> bodyTargets(worldFromBodies.size()), jointTargets(driveJoints.size());
  std::vector<handoff::Quat> bodyRotations(worldFromBodies.size());
  std::vector<handoff::Vec3> omegas(worldFromBodies.size()), torques(driveJoints.size());
  // [/snippet]
  double maxTorque = 0.0;
  bool torquesFinite = true;
  for (int step = 0; step < 6; ++step) {
    const double t = history.time(0) + (step + 1) * dt;
    run.sample(t, handoff::WrapMode::Loop, locals);
    handoff::localToModel(skeleton, locals, models);
    handoff::bodyPosesFromModels(asset, models, worldFromRoot, worldFromBodies);
    // [snippet drive-step]
    for (std::size_t b = 0; b < engine.bodies.size(); ++b) {
      bodyTargets[b] = worldFromBodies[b].rotation;  // the animation's body rotations
      bodyRotations[b] = engine.bodies[b].pose.rotation;
      omegas[b] = engine.bodies[b].omega;
    }
    const handoff::JointTargetsJob targets{driveJoints, bodyTargets, jointTargets};
    const handoff::DriveJob drive{driveJoints, bodyRotations, omegas, jointTargets, {}, {}, torques, {}};
    if (!targets.run() || !drive.run()) return fail("drive: inputs of the wrong size");
    for (std::size_t j = 0; j < driveJoints.size(); ++j) {  // tau on B, -tau on A
      engine.applyTorque(driveJoints[j].bodyB, torques[j], dt);
      engine.applyTorque(driveJoints[j].bodyA, -torques[j], dt);
    }
    engine.step(dt);
    // [/snippet]
    for (const handoff::Vec3& tau : torques) {
      torquesFinite = torquesFinite && handoff::isFinite(tau);
      maxTorque = std::max(maxTorque, glm::length(tau));
    }
  }
  std::printf("drive torques over 6 steps: largest |tau| %.1f N m\n", maxTorque);
  check(torquesFinite && maxTorque > 0.0, "drive torques finite and non-zero");

  // --- Every rendered frame after the handoff: write-back to the bones ---
  // [snippet writeback]
  for (std::size_t b = 0; b < engine.bodies.size(); ++b) worldFromBodies[b] = engine.bodies[b].pose;
  std::vector<handoff::Transform> displayLocals(locals.size()), scratch(locals.size());
  const std::vector<std::uint8_t> physicsMask(locals.size(), 1);  // every bone physical
  handoff::writeBackPose(skeleton, asset, worldFromBodies, worldFromRoot, locals, physicsMask, scratch,
                         displayLocals);
  // [/snippet]
  {
    std::vector<handoff::Transform> displayModels(locals.size());
    handoff::localToModel(skeleton, displayLocals, displayModels);
    double worst = 0.0;
    for (int b = 0; b < bodyCount; ++b) {
      const handoff::BodyDef& def = asset.bodies[static_cast<std::size_t>(b)];
      const handoff::Transform fromBone =
          worldFromRoot * displayModels[static_cast<std::size_t>(def.joint)] * def.boneFromBody;
      worst = std::max(worst, distance(fromBone, worldFromBodies[static_cast<std::size_t>(b)]));
    }
    std::printf("write-back: bones reproduce the bodies within %.3g (m + rad)\n", worst);
    check(worst < 1e-9, "write-back puts every body's bone where the body is");
  }

  // --- Recovery: where the get-up starts, and the pose it blends from ---
  handoff::Result<handoff::ImportedAsset> getUpFile =
      handoff::importFile("data/deepmimic/humanoid3d_getup_faceup.bvh");
  if (!getUpFile || getUpFile->clips.empty()) return fail(getUpFile ? "no get-up clip" : getUpFile.error());
  // [snippet recovery]
  handoff::Result<handoff::GetUpClipInfo> getUp =
      handoff::computeGetUpClipInfo(getUpFile->clips.front(), skeleton, asset.map);
  if (!getUp) return fail(getUp.error());
  std::vector<handoff::Transform> displayModels(locals.size()), worldFromBones(locals.size());
  handoff::localToModel(skeleton, displayLocals, displayModels);
  for (std::size_t j = 0; j < locals.size(); ++j) worldFromBones[j] = worldFromRoot * displayModels[j];
  const handoff::RootPlacement placed = handoff::placeRoot(
      worldFromBones[static_cast<std::size_t>(getUp->pelvisJoint)], *getUp,
      /*preFallForward=*/handoff::Vec3{0, 0, 1}, /*levelDefaultForward=*/handoff::Vec3{0, 0, 1});
  std::vector<handoff::Transform> captured(locals.size());
  if (!placed.valid || !handoff::capturePose(skeleton, worldFromBones, placed.worldFromRoot, captured))
    return fail("recovery: the pose is not finite");
  // Move your character's root to placed.worldFromRoot and blend from `captured` into the clip.
  // [/snippet]
  {
    std::vector<handoff::Transform> again(locals.size());
    handoff::localToModel(skeleton, captured, again);
    double worst = 0.0;
    for (std::size_t j = 0; j < locals.size(); ++j)
      worst = std::max(worst, distance(placed.worldFromRoot * again[j], worldFromBones[j]));
    const handoff::Vec3 up = placed.worldFromRoot.rotation * handoff::Vec3{0, 1, 0};
    std::printf(
        "recovery root at (%.2f, %.2f, %.2f), up tilt %.2g rad; captured pose reproduces the bones "
        "within %.3g (m + rad)\n",
        placed.worldFromRoot.translation.x, placed.worldFromRoot.translation.y,
        placed.worldFromRoot.translation.z, std::acos(std::clamp(up.y, -1.0, 1.0)), worst);
    check(std::acos(std::clamp(up.y, -1.0, 1.0)) < 1e-9, "the placed root is upright (yaw only)");
    check(worst < 1e-9, "the captured pose under the new root reproduces the bones");
  }

  if (failures != 0) {
    std::printf("own_engine: %d checks failed\n", failures);
    return 1;
  }
  std::printf("own_engine: all checks passed\n");
  return 0;
}
