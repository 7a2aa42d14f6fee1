// A counting replacement of the global operator new and delete, for tests that assert what a
// piece of code allocates (tests/support/counting_new.cpp). It counts every allocation of the
// process, so it belongs to a test executable of its own: link counting_new.cpp into exactly one
// translation unit set per binary (tests/CMakeLists.txt adds it to the binaries that use it).
// Thread-safe (relaxed atomics); the counts only grow.
#pragma once

extern "C" {
/// Called on each allocation while tracing is on: `break handoffCountedAllocation` in gdb shows
/// who allocates.
void handoffCountedAllocation();
}

namespace handoff::test_support {

/// Calls of operator new / new[] (every form) since the process started.
long allocationCount();
/// Calls of operator delete / delete[] with a non-null pointer since the process started.
long deallocationCount();
/// allocationCount() - deallocationCount(): the allocations still alive.
inline long liveAllocationCount() { return allocationCount() - deallocationCount(); }
/// While on, each allocation calls handoffCountedAllocation().
void traceAllocations(bool on);

}  // namespace handoff::test_support
