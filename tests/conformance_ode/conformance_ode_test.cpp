// The conformance suite (handoff/physics_conformance.h) on the ODE adapter
// (handoff/physics_ode.h), one test per contract, as tests/conformance/ runs it on Bullet. ODE has
// no convex hull shape: the adapter refuses hulls with an error, which is what the suite asks of
// an adapter that does not claim them (Options::convexHulls false).
#include "handoff/physics.h"
#include "handoff/physics_conformance.h"
#include "handoff/physics_ode.h"

#include "conformance/conformance_gtest.h"

#include <gtest/gtest.h>

namespace handoff {
namespace {

const conformance::WorldFactory kOde = [](const WorldSettings& settings) { return createOdeWorld(settings); };

conformance::Options odeOptions() {
  conformance::Options options;
  options.convexHulls = false;
  return options;
}

HANDOFF_CONFORMANCE_TESTS(OdeConformance, kOde, odeOptions());

}  // namespace
}  // namespace handoff
