// The conformance suite (handoff/physics_conformance.h) on the ODE adapter
// (handoff/physics_ode.h), one test per contract, as tests/conformance/ runs it on Bullet. ODE has
// no convex hull shape: the adapter refuses hulls with an error, which is what the suite asks of
// an adapter that does not claim them (Options::convexHulls false).
#include "handoff/physics.h"
#include "handoff/physics_conformance.h"
#include "handoff/physics_ode.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace handoff {
namespace {

const conformance::WorldFactory kOde = [](const WorldSettings& settings) { return createOdeWorld(settings); };

conformance::Options odeOptions() {
  conformance::Options options;
  options.convexHulls = false;
  return options;
}

class OdeConformance : public ::testing::TestWithParam<std::string> {};

TEST_P(OdeConformance, Passes) {
  const conformance::CheckResult result = conformance::runCheck(GetParam(), kOde, odeOptions());
  std::printf("[ figure ] %s: %s\n", result.contract.c_str(), result.detail.c_str());
  EXPECT_EQ(result.contract, GetParam());
  EXPECT_TRUE(result.passed) << result.detail;
}

std::string testName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  std::replace(name.begin(), name.end(), '.', '_');
  return name;
}

INSTANTIATE_TEST_SUITE_P(Contracts, OdeConformance, ::testing::ValuesIn(conformance::contractNames()),
                         testName);

}  // namespace
}  // namespace handoff
