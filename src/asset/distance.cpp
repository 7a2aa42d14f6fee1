#include "asset_internal.h"
#include "handoff/asset.h"

namespace handoff {

double shapeSurfaceDistance(const ShapeDesc& a, const Transform& spaceFromA, const ShapeDesc& b,
                            const Transform& spaceFromB) {
  return asset_detail::surfaceDistance({a, spaceFromA}, {b, spaceFromB});
}

}  // namespace handoff
