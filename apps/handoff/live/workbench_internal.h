// Helpers shared by the Workbench's source files (workbench.cpp, workbench_state.cpp).
#pragma once

#include "live/workbench.h"

#include "handoff/asset.h"
#include "handoff/math.h"
#include "handoff/replay.h"
#include "handoff/runner.h"

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace handoff::live {

struct Workbench::Session {
  Replay replay;  // before `session`: it records into it
  std::unique_ptr<ScenarioSession> session;
  std::string assetFile;  ///< The tuned asset it loads, empty when the runner built the ragdoll.
  int pelvisBody = 0;
};

inline nlohmann::json vec(const Vec3& v) { return nlohmann::json::array({v.x, v.y, v.z}); }

inline nlohmann::json findingJson(const Finding& f) {
  return {{"severity", severityName(f.severity)},
          {"code", f.code},
          {"subject", f.subject},
          {"message", f.message}};
}

}  // namespace handoff::live
