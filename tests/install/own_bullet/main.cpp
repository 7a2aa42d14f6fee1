// A game's own Bullet world beside handoff's, in one process: the game creates and steps a
// btDiscreteDynamicsWorld (a box dropped on a ground plane) on the Bullet it links itself, and a
// handoff world (createBulletWorld) drops a sphere in between. Both come to rest where they must.
// Linking the game's single-precision Bullet beside a handoff built on the -float64 libraries (the
// same symbol names, different layouts) crashed before the first frame (issue 26).
#include <btBulletDynamicsCommon.h>

#include <handoff/physics.h>
#include <handoff/physics_bullet.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

int main() {
  // The precision handoff was built with (package config and run time) is the one this program
  // compiles Bullet's headers with.
  const char* headers = sizeof(btScalar) == sizeof(double) ? "double" : "single";
  std::printf("handoff on %s-precision Bullet (package config: %s), this program's headers: %s\n",
              handoff::bulletPrecision(), HANDOFF_EXPECTED_PRECISION, headers);
  if (std::strcmp(handoff::bulletPrecision(), HANDOFF_EXPECTED_PRECISION) != 0 ||
      std::strcmp(headers, HANDOFF_EXPECTED_PRECISION) != 0) {
    std::printf("precision mismatch\n");
    return 1;
  }

  // The game's world.
  btDefaultCollisionConfiguration configuration;
  btCollisionDispatcher dispatcher(&configuration);
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver solver;
  btDiscreteDynamicsWorld world(&dispatcher, &broadphase, &solver, &configuration);
  world.setGravity(btVector3(0, -9.81, 0));
  btStaticPlaneShape groundShape(btVector3(0, 1, 0), 0);
  btRigidBody ground(btRigidBody::btRigidBodyConstructionInfo(0, nullptr, &groundShape));
  world.addRigidBody(&ground);
  btBoxShape boxShape(btVector3(0.5, 0.5, 0.5));
  btVector3 boxInertia(0, 0, 0);
  boxShape.calculateLocalInertia(2, boxInertia);
  btDefaultMotionState boxMotion(btTransform(btQuaternion::getIdentity(), btVector3(0, 3, 0)));
  btRigidBody box(btRigidBody::btRigidBodyConstructionInfo(2, &boxMotion, &boxShape, boxInertia));
  world.addRigidBody(&box);

  // handoff's world.
  std::unique_ptr<handoff::PhysicsWorld> ours = handoff::createBulletWorld();
  ours->addGroundPlane(handoff::Vec3{0, 1, 0}, 0.0);
  handoff::BodyDesc sphere;
  sphere.shape.type = handoff::ShapeType::Sphere;
  sphere.shape.radius = 0.25;
  sphere.mass = 1.0;
  sphere.worldFromBody.translation = handoff::Vec3{0, 2, 0};
  handoff::Result<handoff::BodyId> ball = ours->createBody(sphere);
  if (!ball) {
    std::printf("createBody: %s\n", ball.error().c_str());
    return 1;
  }

  for (int frame = 0; frame < 180; ++frame) {
    world.stepSimulation(1.0 / 60.0, 4, 1.0 / 240.0);
    ours->step(1.0 / 60.0, 4);
  }
  const double boxY = box.getCenterOfMassPosition().y();
  const double ballY = ours->transform(*ball).translation.y;
  std::printf(
      "after 3 s: the game's box at y = %.4f m (rests at 0.5), handoff's sphere at y = %.4f m (0.25)\n", boxY,
      ballY);
  world.removeRigidBody(&box);
  world.removeRigidBody(&ground);
  if (!(std::abs(boxY - 0.5) < 0.02) || !(std::abs(ballY - 0.25) < 0.02)) return 1;
  std::printf("own bullet ok\n");
  return 0;
}
