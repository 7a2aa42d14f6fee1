// Test hooks of the ODE adapter without ODE types (the tests include this, never ODE itself).
#pragma once

#include <cstddef>

namespace handoff::ode_detail {

/// Calls of ODE's allocator (dAlloc, dRealloc, dFree: ODE's own objects, its step's working
/// memory arena, contact joint groups, collision scratch) since counting was switched on.
struct OdeAllocationCounts {
  long allocations = 0;    ///< dAlloc calls
  long reallocations = 0;  ///< dRealloc calls
  long frees = 0;          ///< dFree calls
  std::size_t bytes = 0;   ///< bytes asked for by dAlloc and dRealloc (new sizes)
};

/// On: installs counting handlers as ODE's allocation handlers (dSetAllocHandler and friends;
/// they forward to malloc, realloc and free, as ODE's defaults do) and resets the counts. Off:
/// ODE's default handlers again. Process-wide; for tests (tests/physics_ode/ode_allocation_test).
void countOdeAllocations(bool on);
OdeAllocationCounts odeAllocationCounts();

}  // namespace handoff::ode_detail
