// Helpers shared by the Character's source files (not part of the public API).
#pragma once

#include "handoff/math.h"

#include <cstdio>
#include <string>

namespace handoff::controller_detail {

/// printf-style text of up to three numbers, for event details.
inline std::string format(const char* fmt, double a, double b = 0.0, double c = 0.0) {
  char buffer[200];
  std::snprintf(buffer, sizeof buffer, fmt, a, b, c);
  return buffer;
}

/// `v` with its vertical (world Y) component removed.
inline Vec3 horizontal(const Vec3& v) { return Vec3{v.x, 0.0, v.z}; }

}  // namespace handoff::controller_detail
