// The conformance suite (handoff/physics_conformance.h) as GoogleTests, one per contract, for any
// adapter: the Bullet adapter's tests (tests/conformance) and the ODE adapter's
// (tests/conformance_ode) both instantiate it with their factory and options; a user's adapter
// can copy this header as it is.
#pragma once

#include "handoff/physics.h"
#include "handoff/physics_conformance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace handoff::conformance {

// [snippet conformance]
/// Runs one contract on worlds from `factory` and fails the current test with its detail.
inline void expectPasses(const std::string& contract, const WorldFactory& factory, const Options& options) {
  const CheckResult result = runCheck(contract, factory, options);
  std::printf("[ figure ] %s: %s\n", result.contract.c_str(), result.detail.c_str());
  EXPECT_EQ(result.contract, contract);
  EXPECT_TRUE(result.passed) << result.detail;
}

/// A contract's name as a GoogleTest name ("joint.limits" -> "joint_limits").
inline std::string testName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
}

}  // namespace handoff::conformance

/// Defines the GoogleTests Contracts/Suite.Passes/<contract>, one per contract of the suite, on
/// worlds from `factory` (a conformance::WorldFactory) with `options` (conformance::Options).
#define HANDOFF_CONFORMANCE_TESTS(Suite, factory, options)                                                 \
  class Suite : public ::testing::TestWithParam<std::string> {};                                           \
  TEST_P(Suite, Passes) { ::handoff::conformance::expectPasses(GetParam(), (factory), (options)); }        \
  INSTANTIATE_TEST_SUITE_P(Contracts, Suite, ::testing::ValuesIn(::handoff::conformance::contractNames()), \
                           ::handoff::conformance::testName)
// [/snippet]
