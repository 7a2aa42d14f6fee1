// The largest stable drive stiffness of each solver at 60 Hz on the default character (issue 6;
// the table is in docs/TUNING.md): the DeepMimic humanoid built by the asset builder, floating in
// zero gravity without contacts, posed on the run clip's frame at 0.5 s and kicked (every body
// spun at up to 2 rad/s about each axis), every joint driven to hold that pose (a static target),
// with the asset's presets times a factor s (Kp, Kd and the torque limit together, so the limit
// cannot hide a ringing drive).
//
// Stable means, physically: the state stays finite and the drives take the kick's energy out and
// bring the ragdoll back to rest on the target, as a damped spring must: over the last second of
// 4 s, every joint within 0.5 degree of its target and the kinetic energy under 1e-3 of the
// kick's. An explicit spring-damper past its stability bound does neither: it rings at the
// torque limit or diverges.
#include "handoff/drive.h"
#include "handoff/import.h"
#include "handoff/physics_bullet.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace handoff {
namespace {

constexpr double kDeg = kPi / 180.0;
constexpr double kFrameDt = 1.0 / 60.0;

struct Humanoid {
  ImportedAsset imported;
  RagdollAsset asset;
  std::vector<Transform> goal;  // body poses at 0.5 s
};

const Humanoid& humanoid() {
  static const Humanoid h = [] {
    Humanoid out;
    auto imported = importFile(std::string(HANDOFF_DATA_DIR) + "/deepmimic/humanoid3d_run.bvh");
    EXPECT_TRUE(imported.ok()) << (imported.ok() ? "" : imported.error());
    if (!imported.ok()) return out;
    out.imported = std::move(imported).value();
    auto built = buildRagdoll(out.imported.skeleton, BuildOptions{});
    EXPECT_TRUE(built.ok()) << (built.ok() ? "" : built.error());
    if (!built.ok()) return out;
    out.asset = std::move(built).value();
    const Skeleton& skeleton = out.imported.skeleton;
    std::vector<Transform> locals(static_cast<size_t>(skeleton.jointCount())), models(locals.size());
    out.imported.clips.at(0).sample(0.5, WrapMode::Loop, locals);
    localToModel(skeleton, locals, models);
    out.goal.resize(out.asset.bodies.size());
    bodyPosesFromModels(out.asset, models, Transform::identity(), out.goal);
    return out;
  }();
  return h;
}

enum class Mode { Explicit, ExplicitGuarded, ExplicitEndOfSubstep, Implicit };
const char* modeName(Mode m) {
  switch (m) {
    case Mode::Explicit:
      return "explicit";
    case Mode::ExplicitGuarded:
      return "explicit+guard";
    case Mode::ExplicitEndOfSubstep:
      return "explicit+eos";
    case Mode::Implicit:
      break;
  }
  return "implicit";
}

struct Settle {
  bool finite = true;
  double lateError = 0.0;   ///< Max joint error over the last second. [rad]
  double lateEnergy = 0.0;  ///< Max kinetic energy over the last second. [J]
  double peakEnergy = 0.0;  ///< [J]
  double kickEnergy = 0.0;  ///< [J]
  bool stable() const { return finite && lateError < 0.5 * kDeg && lateEnergy < 1e-3 * kickEnergy; }
};

Settle settle(Mode mode, double scale, int substeps) {
  Settle s;
  const Humanoid& h = humanoid();
  const size_t n = h.asset.bodies.size();
  if (n == 0) return s;
  WorldSettings ws;
  ws.gravity = Vec3{0.0};
  ws.sleepLinearSpeed = 0.0;
  auto world = createBulletWorld(ws);
  std::vector<BodyId> bodies;
  for (size_t i = 0; i < n; ++i) {
    const BodyDef& def = h.asset.bodies[i];
    BodyDesc desc;
    desc.shape = def.shape;
    desc.mass = def.mass;
    desc.inertia = def.inertia;
    desc.worldFromBody = h.goal[i];
    desc.filter = def.filter;
    auto body = world->createBody(desc);
    EXPECT_TRUE(body.ok());
    if (!body.ok()) return s;
    bodies.push_back(*body);
  }
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> spin(-2.0, 2.0);
  // The kick without net momentum (a rigid spin would stay: nothing internal can stop it): minus
  // the rigid motion Omega = I_sys^-1 L about the centre of mass.
  double totalMass = 0.0;
  Vec3 centre{0.0};
  for (const BodyId b : bodies) {
    totalMass += world->mass(b);
    centre += world->mass(b) * world->transform(b).translation;
  }
  centre /= totalMass;
  std::vector<Vec3> spins(n);
  Vec3 angular{0.0};
  glm::dmat3 inertia(0.0);
  for (size_t i = 0; i < n; ++i) {
    spins[i] = Vec3{spin(rng), spin(rng), spin(rng)};
    const Vec3 r = world->transform(bodies[i]).translation - centre;
    angular += world->worldInertia(bodies[i]) * spins[i];
    inertia += world->worldInertia(bodies[i]) +
               world->mass(bodies[i]) * (glm::dot(r, r) * glm::dmat3(1.0) - glm::outerProduct(r, r));
  }
  const Vec3 omega = glm::inverse(inertia) * angular;
  for (size_t i = 0; i < n; ++i) {
    const Vec3 r = world->transform(bodies[i]).translation - centre;
    const Vec3 w = spins[i] - omega, v = -glm::cross(omega, r);
    world->setAngularVelocity(bodies[i], w);
    world->setLinearVelocity(bodies[i], v);
    s.kickEnergy +=
        0.5 * glm::dot(w, world->worldInertia(bodies[i]) * w) + 0.5 * world->mass(bodies[i]) * glm::dot(v, v);
  }
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = a + 1; b < n; ++b) world->setPairCollision(bodies[a], bodies[b], false);
  }
  std::vector<JointId> engineJoints;
  for (const JointDef& def : h.asset.joints) {
    auto joint = world->createJoint(jointDescFor(def, bodies));
    EXPECT_TRUE(joint.ok());
    if (!joint.ok()) return s;
    engineJoints.push_back(*joint);
  }
  std::vector<DriveJoint> joints = driveJointsFromAsset(h.asset);
  for (DriveJoint& j : joints) {
    j.gains.stiffness *= scale;
    j.gains.damping *= scale;
    j.gains.maxTorque *= scale;
  }
  std::vector<Quat> goalBodies(n), targets(joints.size());
  for (size_t i = 0; i < n; ++i) goalBodies[i] = h.goal[i].rotation;
  EXPECT_TRUE((JointTargetsJob{joints, goalBodies, targets}.run()));

  ExplicitDrive drive(*world, bodies, joints);
  if (mode == Mode::Implicit) {
    applyImplicitDrive(*world, engineJoints, joints, targets, {});
  } else {
    EXPECT_TRUE(drive.setTargets(targets, {}));
    EXPECT_TRUE(drive.setStabilityLimit(mode == Mode::ExplicitGuarded ? 1.0 : 0.0));
    drive.setEndOfSubstepLaw(mode == Mode::ExplicitEndOfSubstep);
    world->addSubstepListener(&drive);
  }
  const int frames = 240;
  for (int frame = 0; frame < frames && s.finite; ++frame) {
    world->step(kFrameDt, substeps);
    double energy = 0.0, error = 0.0;
    for (const BodyId b : bodies) {
      const Vec3 v = world->linearVelocity(b), w = world->angularVelocity(b);
      energy += 0.5 * world->mass(b) * glm::dot(v, v) + 0.5 * glm::dot(w, world->worldInertia(b) * w);
    }
    for (size_t j = 0; j < joints.size(); ++j) {
      JointDriveInput in;
      in.worldFromBodyA = world->transform(bodies[static_cast<size_t>(joints[j].bodyA)]).rotation;
      in.worldFromBodyB = world->transform(bodies[static_cast<size_t>(joints[j].bodyB)]).rotation;
      in.target = targets[j];
      const JointDriveOutput out = computeJointDrive(joints[j], in);
      if (!out.valid) s.finite = false;
      error = std::max(error, glm::length(out.error));
    }
    if (!std::isfinite(energy)) s.finite = false;
    s.peakEnergy = std::max(s.peakEnergy, energy);
    if (frame >= frames - 60) {
      s.lateError = std::max(s.lateError, error);
      s.lateEnergy = std::max(s.lateEnergy, energy);
    }
  }
  world->removeSubstepListener(&drive);
  return s;
}

TEST(DriveStiffness, LargestStableStiffnessPerSolverAt60Hz) {
  ASSERT_GT(humanoid().asset.bodies.size(), 10u);
  const double scales[] = {0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0};
  struct Row {
    Mode mode;
    int substeps;
  };
  const Row rows[] = {{Mode::Explicit, 2},
                      {Mode::Explicit, 8},
                      {Mode::ExplicitGuarded, 2},
                      {Mode::ExplicitGuarded, 8},
                      {Mode::Implicit, 1},
                      {Mode::Implicit, 2},
                      {Mode::ExplicitEndOfSubstep, 1},
                      {Mode::ExplicitEndOfSubstep, 2}};
  std::printf(
      "[ stiffness ] DeepMimic humanoid, presets x s (Kp, Kd, torque limit), 60 Hz; per s: late error deg "
      "/ late kinetic energy over the kick's (* = stable)\n");
  double largest[std::size(rows)] = {0.0};
  for (size_t r = 0; r < std::size(rows); ++r) {
    std::printf("[ stiffness ] %-14s x%d:", modeName(rows[r].mode), rows[r].substeps);
    for (double scale : scales) {
      const Settle s = settle(rows[r].mode, scale, rows[r].substeps);
      std::printf(" %g:%s%.2g/%.2g", scale, s.stable() ? "*" : "", s.lateError / kDeg,
                  s.lateEnergy / s.kickEnergy);
      if (s.stable()) largest[r] = scale;  // scales ascend: the largest stable one
    }
    std::printf("  -> largest stable s %g\n", largest[r]);
  }
  // The explicit law rings at the presets at 60 Hz x 2, and already at 3 % of them.
  EXPECT_LT(largest[0], 0.03);
  // More substeps move the explicit bound up (h^2 Kp / I and h Kd / I shrink), not to the presets.
  EXPECT_GE(largest[1], 0.03);
  EXPECT_LT(largest[1], 1.0);
  // The guard keeps every factor stable (by scaling down the gains it applies); so does the
  // end-of-substep law, without scaling them.
  EXPECT_EQ(largest[2], 100.0);
  EXPECT_EQ(largest[3], 100.0);
  EXPECT_EQ(largest[6], 100.0);
  EXPECT_EQ(largest[7], 100.0);
  // The implicit servo takes 100x the presets at one substep.
  EXPECT_EQ(largest[4], 100.0);
  EXPECT_EQ(largest[5], 100.0);
}

}  // namespace
}  // namespace handoff
