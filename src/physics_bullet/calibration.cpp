// Plain Bullet calibration pile (handoff bench crowd): the issue-8 calibration scene written on
// Bullet's own API with none of the adapter's additions (no speculative contacts, motors,
// projection, island ordering), so a run measures the machine against the Bullet figure
// (about 5.7 microseconds per body-step on 1 thread) in the same process as handoff's crowd.
#include "handoff/physics_bullet.h"

#include <btBulletDynamicsCommon.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <numbers>
#include <vector>

namespace handoff {

Result<BulletCalibrationResult> runBulletCalibrationPile(const BulletCalibrationOptions& options) {
  if (options.piles < 1 || options.perPile < 1 || options.steps < 1)
    return Error{"bullet calibration: piles, per-pile and steps must be >= 1"};
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher(&config);
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver solver;
  btDiscreteDynamicsWorld world(&dispatcher, &broadphase, &solver, &config);
  world.setGravity(btVector3(0.0, -9.81, 0.0));
  world.getSolverInfo().m_numIterations = 10;

  btStaticPlaneShape floorShape(btVector3(0.0, 1.0, 0.0), 0.0);
  btRigidBody floor(btRigidBody::btRigidBodyConstructionInfo(0.0, nullptr, &floorShape));
  floor.setFriction(1.0);
  world.addRigidBody(&floor);

  // A 16-capsule humanoid lying on its back along +x (centre, radius, half length, mass): pelvis,
  // belly, chest, head, and per side upper arm, forearm, hand, thigh, shin, foot. Each body hangs
  // on its parent at the point between them.
  struct Part {
    double x, z, radius, halfLength, mass;
    int parent;
  };
  const Part parts[16] = {
      {0.0, 0.0, 0.12, 0.08, 10.0, -1},   {0.2, 0.0, 0.11, 0.07, 6.0, 0},
      {0.42, 0.0, 0.13, 0.08, 10.0, 1},   {0.65, 0.0, 0.1, 0.03, 4.0, 2},
      {0.45, 0.28, 0.05, 0.1, 2.0, 2},    {0.45, 0.55, 0.04, 0.1, 1.5, 4},
      {0.45, 0.75, 0.04, 0.03, 0.5, 5},   {0.45, -0.28, 0.05, 0.1, 2.0, 2},
      {0.45, -0.55, 0.04, 0.1, 1.5, 7},   {0.45, -0.75, 0.04, 0.03, 0.5, 8},
      {-0.3, 0.1, 0.07, 0.15, 7.0, 0},    {-0.75, 0.1, 0.05, 0.15, 4.0, 10},
      {-1.05, 0.1, 0.05, 0.04, 1.0, 11},  {-0.3, -0.1, 0.07, 0.15, 7.0, 0},
      {-0.75, -0.1, 0.05, 0.15, 4.0, 13}, {-1.05, -0.1, 0.05, 0.04, 1.0, 14},
  };
  std::vector<std::unique_ptr<btCapsuleShapeX>> shapes;
  for (const Part& p : parts)
    shapes.push_back(std::make_unique<btCapsuleShapeX>(p.radius, 2.0 * p.halfLength));
  std::vector<std::unique_ptr<btRigidBody>> bodies;
  std::vector<std::unique_ptr<btGeneric6DofSpring2Constraint>> joints;
  const int side = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(options.piles))));
  for (int pile = 0; pile < options.piles; ++pile) {
    const btVector3 centre(4.0 * (pile % side - 0.5 * (side - 1)), 0.0,
                           4.0 * (pile / side - 0.5 * (side - 1)));
    for (int i = 0; i < options.perPile; ++i) {
      const btTransform place(
          btQuaternion(btVector3(0.0, 1.0, 0.0), 2.0 * std::numbers::pi * i / options.perPile),
          centre + btVector3(0.0, 0.6 * (i + 1), 0.0));
      const size_t first = bodies.size();
      for (int k = 0; k < 16; ++k) {
        const Part& p = parts[k];
        btVector3 inertia;
        shapes[static_cast<size_t>(k)]->calculateLocalInertia(p.mass, inertia);
        btRigidBody::btRigidBodyConstructionInfo ci(p.mass, nullptr, shapes[static_cast<size_t>(k)].get(),
                                                    inertia);
        ci.m_startWorldTransform = place * btTransform(btQuaternion::getIdentity(), btVector3(p.x, 0.0, p.z));
        ci.m_friction = 1.0;
        ci.m_restitution = 0.15;
        ci.m_linearDamping = 0.05;
        ci.m_angularDamping = 0.05;
        bodies.push_back(std::make_unique<btRigidBody>(ci));
        world.addRigidBody(bodies.back().get());
        if (p.parent < 0) continue;
        btRigidBody& parent = *bodies[first + static_cast<size_t>(p.parent)];
        btRigidBody& child = *bodies.back();
        const Part& q = parts[p.parent];
        const btVector3 pivot(0.5 * (p.x + q.x), 0.0, 0.5 * (p.z + q.z));  // in the ragdoll's frame
        const btTransform inParent(btQuaternion::getIdentity(), pivot - btVector3(q.x, 0.0, q.z));
        const btTransform inChild(btQuaternion::getIdentity(), pivot - btVector3(p.x, 0.0, p.z));
        auto joint = std::make_unique<btGeneric6DofSpring2Constraint>(parent, child, inParent, inChild);
        joint->setAngularLowerLimit(btVector3(-0.5, -0.5, -0.5));
        joint->setAngularUpperLimit(btVector3(0.5, 0.5, 0.5));
        world.addConstraint(joint.get(), true);  // parent and child do not collide
        joints.push_back(std::move(joint));
      }
    }
  }

  BulletCalibrationResult r;
  r.bodies = static_cast<int>(bodies.size());
  r.steps = options.steps;
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  for (int s = 0; s < options.steps; ++s) world.stepSimulation(1.0 / 60.0, 0, 1.0 / 60.0);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  r.msPerStep = 1e3 * seconds / options.steps;
  r.nsPerBodyStep = 1e9 * seconds / (static_cast<double>(r.bodies) * options.steps);
  for (const auto& b : bodies) r.activeBodiesEnd += b->isActive() ? 1 : 0;
  for (const auto& j : joints) world.removeConstraint(j.get());
  for (const auto& b : bodies) world.removeRigidBody(b.get());
  world.removeRigidBody(&floor);
  return r;
}

}  // namespace handoff
