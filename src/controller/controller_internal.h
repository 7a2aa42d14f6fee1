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

/// `v` with its vertical (world Y) component removed.
inline Vec3 horizontal(const Vec3& v) { return Vec3{v.x, 0.0, v.z}; }

}  // namespace handoff::controller_detail
