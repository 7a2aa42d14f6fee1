// The Bullet 3 implementation of handoff::PhysicsWorld. This header does not include Bullet;
// only src/physics_bullet/ does.
#pragma once

#include "handoff/physics.h"

#include <memory>

namespace handoff {

/// Creates an independent Bullet world (btDiscreteDynamicsWorld, sequential impulse solver,
/// btGeneric6DofSpring2Constraint joints). Bullet is built double-precision here.
std::unique_ptr<PhysicsWorld> createBulletWorld(const WorldSettings& settings = {});

}  // namespace handoff
