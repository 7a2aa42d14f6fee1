// Seeded ensembles for chaotic end-to-end tests (falls, piles, spins). One trajectory of a
// chaotic scene moves with any change of solver order or rounding, so asserting on it ties a test
// to one configuration. An ensemble runs the same scene with small seeded variations (handoff
// time, yaw, a push, a millimetre of pose noise) and asserts rates and quantiles, printing the
// distribution of every figure it checks.
//
// Member i draws its variations from std::mt19937(memberSeed(seed, i)), so its result depends on
// (seed, i) only: the same on any thread, in any order, in the normal and the sanitizer builds.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace handoff::test {

/// Members of an ensemble: `normal` in the normal build, `sanitized` under AddressSanitizer
/// (which checks memory, not statistics: the sanitizer build asserts the per-member invariants
/// only). HANDOFF_ENSEMBLE_MEMBERS overrides both (a quick local look at a few members, or a
/// larger ensemble when a figure is in doubt); the statistics are then still asserted.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)  // clang
#define HANDOFF_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(HANDOFF_TEST_ASAN)  // gcc, clang
inline constexpr bool kSanitizerBuild = true;
#else
inline constexpr bool kSanitizerBuild = false;
#endif
inline int ensembleOverride() {
  const char* v = std::getenv("HANDOFF_ENSEMBLE_MEMBERS");
  return v ? std::atoi(v) : 0;
}
inline const bool kEnsembleStatistics = !kSanitizerBuild || ensembleOverride() > 0;
inline int ensembleSize(int normal, int sanitized = 4) {
  if (ensembleOverride() > 0) return ensembleOverride();
  return kSanitizerBuild ? std::min(normal, sanitized) : normal;
}

/// Skips the test (GTEST_SKIP) when the ensemble has no member in this build: the heaviest
/// scenes (a pile of 50, minutes per member under ASan) run in the normal build only.
#define HANDOFF_SKIP_EMPTY_ENSEMBLE(members)                                        \
  do {                                                                              \
    if ((members) <= 0) GTEST_SKIP() << "no member of this ensemble in this build"; \
  } while (false)

/// The seed of member `index` of the ensemble named by `seed`.
inline std::uint32_t memberSeed(std::uint32_t seed, int index) {
  return seed * 2654435761u + static_cast<std::uint32_t>(index) * 40503u + 1u;
}

/// Runs member(index, rng) for index 0..members-1 and returns the results in index order. Member 0
/// runs first on the calling thread (it fills whatever the test's loaders cache), the others on
/// up to two threads: each member has its own world, so results do not depend on the threads.
template <typename R, typename F>
std::vector<R> runEnsemble(int members, std::uint32_t seed, F&& member) {
  std::vector<R> out(static_cast<size_t>(std::max(members, 0)));
  if (members <= 0) return out;
  {
    std::mt19937 rng(memberSeed(seed, 0));
    out[0] = member(0, rng);
  }
  std::atomic<int> next{1};
  const auto work = [&] {
    for (int i = next++; i < members; i = next++) {
      std::mt19937 rng(memberSeed(seed, i));
      out[static_cast<size_t>(i)] = member(i, rng);
    }
  };
  const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 2u);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return out;
}

/// min / median / p95 / max of a sample (nearest-rank quantiles).
struct Quantiles {
  double min = 0.0, median = 0.0, p95 = 0.0, max = 0.0;
  int count = 0;
};

inline Quantiles quantiles(std::vector<double> values) {
  Quantiles q;
  q.count = static_cast<int>(values.size());
  if (values.empty()) return q;
  std::sort(values.begin(), values.end());
  const auto rank = [&](double p) {
    const auto k = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
    return values[std::clamp<size_t>(k, 1, values.size()) - 1];
  };
  q.min = values.front();
  q.median = rank(0.5);
  q.p95 = rank(0.95);
  q.max = values.back();
  return q;
}

/// Prints "label: min / median / p95 / max unit (n members)" with values multiplied by `scale`.
inline Quantiles printDistribution(const std::string& label, const std::vector<double>& values,
                                   const char* unit, double scale = 1.0) {
  const Quantiles q = quantiles(values);
  std::printf("  %-46s min %9.4g  median %9.4g  p95 %9.4g  max %9.4g %s (%d members)\n", label.c_str(),
              q.min * scale, q.median * scale, q.p95 * scale, q.max * scale, unit, q.count);
  return q;
}

/// Fraction of members for which `pass` holds, printed with the failing members' indices.
template <typename R, typename P>
double printRate(const std::string& label, const std::vector<R>& results, P&& pass) {
  int ok = 0;
  std::string failing;
  for (size_t i = 0; i < results.size(); ++i) {
    if (pass(results[i])) {
      ++ok;
    } else {
      failing += " " + std::to_string(i);
    }
  }
  const double rate = results.empty() ? 0.0 : static_cast<double>(ok) / static_cast<double>(results.size());
  std::printf("  %-46s %d of %zu (%.1f %%)%s%s\n", label.c_str(), ok, results.size(), 100.0 * rate,
              failing.empty() ? "" : ", failing members:", failing.c_str());
  return rate;
}

/// A uniform draw in [lo, hi).
inline double uniform(std::mt19937& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

}  // namespace handoff::test
