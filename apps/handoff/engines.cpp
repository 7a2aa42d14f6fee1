// The physics engines the CLI's commands run on (--engine): Bullet always, ODE when the ODE
// adapter is built (HANDOFF_HAS_ODE).
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
  return {"bullet", "ode"};
#else
  return {"bullet"};
#endif
}

WorldFactory worldFactory(const std::string& engine) {
#if HANDOFF_HAS_ODE
  if (engine == "ode") return [](const WorldSettings& ws) { return createOdeWorld(ws); };
#endif
  (void)engine;
  return [](const WorldSettings& ws) { return createBulletWorld(ws); };
}

}  // namespace handoff::cli
