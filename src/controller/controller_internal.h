// Helpers shared by the Character's source files (not part of the public API).
#pragma once

#include "handoff/handoff.h"
#include "handoff/math.h"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace handoff::controller_detail {

/// printf-style text of up to three numbers, for event details.
inline std::string format(const char* fmt, double a, double b = 0.0, double c = 0.0) {
  char buffer[200];
  std::snprintf(buffer, sizeof buffer, fmt, a, b, c);
  return buffer;
}

/// `record` back to a default record (no bodies, no joints, no failure), its vectors' and
/// strings' storage kept.
inline void resetRecord(HandoffRecord& record) {
  std::vector<BodyHandoff> bodies = std::move(record.bodies);
  std::vector<JointHandoff> joints = std::move(record.joints);
  std::string failure = std::move(record.failure);
  record = HandoffRecord{};
  bodies.clear();
  joints.clear();
  failure.clear();
  record.bodies = std::move(bodies);
  record.joints = std::move(joints);
  record.failure = std::move(failure);
}

/// A motion planned to meet a bound that a check measures (a speed, a duration from a speed) is
/// planned this fraction below it: planned exactly at the bound, the measured figure lands on
/// either side of it by rounding (recovery.return_body_speed measured 1.0000000000000175 against
/// <= 1). [relative] [1e-3: far above double rounding, below anything one sees]
constexpr double kPlanMargin = 1e-3;

/// `bound` less the planning margin (kPlanMargin).
constexpr double plannedBelow(double bound) { return bound * (1.0 - kPlanMargin); }

/// `v` with its vertical (world Y) component removed.
inline Vec3 horizontal(const Vec3& v) { return Vec3{v.x, 0.0, v.z}; }

}  // namespace handoff::controller_detail
