// The physics engines the CLI's commands run on (--engine): Bullet always, ODE when the ODE
// adapter is built (HANDOFF_HAS_ODE): "ode" with the adapter's defaults (the exact solver,
// dWorldStep, cubic in an island's rows) and "ode-quick" with ODE's iterative solver
// (OdeSettings::exactSolver = false), what a pile of many ragdolls in one island needs.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "handoff/physics.h"
#include "handoff/physics_bullet.h"
#if HANDOFF_HAS_ODE
#include "handoff/physics_ode.h"
#endif

namespace handoff::cli {

std::vector<std::string> engineNames() {
#if HANDOFF_HAS_ODE
  return {"bullet", "ode", "ode-quick"};
#else
  return {"bullet"};
#endif
}

WorldFactory worldFactory(const std::string& engine) {
#if HANDOFF_HAS_ODE
  if (engine == "ode") return [](const WorldSettings& ws) { return createOdeWorld(ws); };
  if (engine == "ode-quick") {
    return [](const WorldSettings& ws) {
      OdeSettings ode;
      ode.exactSolver = false;
      return createOdeWorld(ws, ode);
    };
  }
#endif
  (void)engine;
  return [](const WorldSettings& ws) { return createBulletWorld(ws); };
}

}  // namespace handoff::cli
