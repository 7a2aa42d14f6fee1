// The counting global operator new and delete of tests/support/counting_new.h. Every form is
// replaced, the nothrow and the aligned ones too (std::stable_sort's temporary buffer uses the
// nothrow form): a sanitizer runtime defines its own, which would pair its allocation with the
// free below, and no allocation bypasses the count.
#include "support/counting_new.h"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {
std::atomic<long> gAllocations{0};
std::atomic<long> gDeallocations{0};
std::atomic<bool> gTraceAllocations{false};

void* countedAllocate(std::size_t size) {
  gAllocations.fetch_add(1, std::memory_order_relaxed);
  if (gTraceAllocations.load(std::memory_order_relaxed)) handoffCountedAllocation();
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}

void* countedAllocateAligned(std::size_t size, std::align_val_t align) {
  gAllocations.fetch_add(1, std::memory_order_relaxed);
  if (gTraceAllocations.load(std::memory_order_relaxed)) handoffCountedAllocation();
  const auto a = static_cast<std::size_t>(align);
  if (void* p = std::aligned_alloc(a, ((size == 0 ? 1 : size) + a - 1) / a * a)) return p;
  throw std::bad_alloc();
}

void* countedAllocateNoThrow(std::size_t size) noexcept {
  try {
    return countedAllocate(size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

void countedRelease(void* p) noexcept {
  if (p) gDeallocations.fetch_add(1, std::memory_order_relaxed);
  std::free(p);
}
}  // namespace

extern "C" __attribute__((noinline)) void handoffCountedAllocation() { asm volatile(""); }

namespace handoff::test_support {
long allocationCount() { return gAllocations.load(std::memory_order_relaxed); }
long deallocationCount() { return gDeallocations.load(std::memory_order_relaxed); }
void traceAllocations(bool on) { gTraceAllocations.store(on, std::memory_order_relaxed); }
}  // namespace handoff::test_support

void* operator new(std::size_t size) { return countedAllocate(size); }
void* operator new[](std::size_t size) { return countedAllocate(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return countedAllocateNoThrow(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return countedAllocateNoThrow(size);
}
void* operator new(std::size_t size, std::align_val_t align) { return countedAllocateAligned(size, align); }
void* operator new[](std::size_t size, std::align_val_t align) { return countedAllocateAligned(size, align); }
void operator delete(void* p) noexcept { countedRelease(p); }
void operator delete[](void* p) noexcept { countedRelease(p); }
void operator delete(void* p, std::size_t) noexcept { countedRelease(p); }
void operator delete[](void* p, std::size_t) noexcept { countedRelease(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { countedRelease(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { countedRelease(p); }
void operator delete(void* p, std::align_val_t) noexcept { countedRelease(p); }
void operator delete[](void* p, std::align_val_t) noexcept { countedRelease(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { countedRelease(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { countedRelease(p); }
