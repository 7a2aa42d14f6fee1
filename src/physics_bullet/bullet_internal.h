// Test hooks of the Bullet adapter that need no Bullet header (src/physics_bullet is the only
// code that includes Bullet).
#pragma once

#include "handoff/math.h"
#include "handoff/physics.h"

namespace handoff::bullet_detail {

/// Test-only fault injection: writes NaN into a body's linear velocity inside the Bullet world,
/// bypassing every check of the PhysicsWorld setters (which refuse non-finite values). What a
/// solver blow-up does; issue 9 tests that it is contained. No-op for other engines' worlds.
void injectNonFiniteVelocity(PhysicsWorld& world, BodyId body);

/// Builds a btGeneric6DofSpring2Constraint (RO_XYZ) between two bodies posed at worldFromA and
/// worldFromB with joint frames aFromJoint and bFromJoint, calls calculateTransforms() and
/// returns getAngle(0..2). `asBuiltByWorld` = true builds it exactly as BulletWorld::createJoint
/// does (Bullet's body A is our body B); false uses Bullet's natural order (A, B).
Vec3 spring2Angles(const Transform& worldFromA, const Transform& aFromJoint, const Transform& worldFromB,
                   const Transform& bFromJoint, bool asBuiltByWorld);

}  // namespace handoff::bullet_detail
