#include "asset_internal.h"
#include "handoff/asset.h"

namespace handoff {

double shapeSurfaceDistance(const ShapeDesc& a, const Transform& spaceFromA, const ShapeDesc& b,
                            const Transform& spaceFromB) {
  return asset_detail::surfaceDistance({a, spaceFromA}, {b, spaceFromB});
}

Vec3 shapeLowestPoint(const ShapeDesc& s, const Transform& x) {
  Vec3 p = x.translation;
  switch (s.type) {
    case ShapeType::Sphere:
      p.y -= s.radius;
      break;
    case ShapeType::Capsule: {
      const Vec3 axis = x.transformVector(Vec3{0, s.halfHeight, 0});
      p += axis.y < 0 ? axis : -axis;
      p.y -= s.radius;
      break;
    }
    case ShapeType::Box: {
      double extent = 0;
      for (int i = 0; i < 3; ++i) {
        Vec3 e{0.0};
        e[i] = s.halfExtents[i];
        extent += std::abs(x.transformVector(e).y);
      }
      p.y -= extent;
      break;
    }
    case ShapeType::None:
      break;
  }
  return p;
}

}  // namespace handoff
