// The precision of the Bullet build the adapter is compiled against (CMake option
// HANDOFF_BULLET_DOUBLE, root CMakeLists.txt): the headers' btScalar must agree with the libraries
// the configuration chose, or every Bullet call would pass floats where the library reads doubles.
#include "handoff/physics_bullet.h"

#include <LinearMath/btScalar.h>

#ifndef HANDOFF_BULLET_DOUBLE
#error "HANDOFF_BULLET_DOUBLE must be defined by src/physics_bullet/CMakeLists.txt"
#endif

static_assert(sizeof(btScalar) == (HANDOFF_BULLET_DOUBLE ? sizeof(double) : sizeof(float)),
              "Bullet's headers (BT_USE_DOUBLE_PRECISION) disagree with HANDOFF_BULLET_DOUBLE");

namespace handoff {

const char* bulletPrecision() { return HANDOFF_BULLET_DOUBLE ? "double" : "single"; }

}  // namespace handoff
