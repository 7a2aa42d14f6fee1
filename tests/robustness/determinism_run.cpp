// Runs the scripted sequence of the determinism tests (tests/support/robust_scene.h: handoff,
// impulse, fall onto a step, get-up) and prints one hash of all body states over all steps.
// determinism_test.cmake runs it in two processes and compares the lines.
#include <cstdint>
#include <cstdio>

#include "support/robust_scene.h"

int main() {
  const std::vector<std::uint64_t> hashes = handoff::test::scriptedRunHashes();
  if (hashes.empty()) {
    std::fprintf(stderr, "the scripted run failed\n");
    return 1;
  }
  std::uint64_t all = 1469598103934665603ull;
  for (std::uint64_t h : hashes) {
    all ^= h;
    all *= 1099511628211ull;
  }
  std::printf("steps %zu final %016llx all %016llx\n", hashes.size(),
              static_cast<unsigned long long>(hashes.back()), static_cast<unsigned long long>(all));
  return 0;
}
