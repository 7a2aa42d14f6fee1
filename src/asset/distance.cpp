#include "asset_internal.h"
#include "handoff/asset.h"

#include <algorithm>
#include <cmath>

namespace handoff {

double shapeSurfaceDistance(const ShapeDesc& a, const Transform& spaceFromA, const ShapeDesc& b,
                            const Transform& spaceFromB) {
  return asset_detail::surfaceDistance({a, spaceFromA}, {b, spaceFromB});
}

namespace {

// A capsule holding the shape: the segment spaceFromBody * (+-halfAxis) inflated by radius.
struct BoundingCapsule {
  Vec3 halfAxis{0.0};  // body space
  double radius = 0.0;
};

BoundingCapsule boundingCapsule(const ShapeDesc& s) {
  switch (s.type) {
    case ShapeType::Sphere:
      return {Vec3{0.0}, s.radius};
    case ShapeType::Capsule:
      return {Vec3{0.0, s.halfHeight, 0.0}, s.radius};
    case ShapeType::Box: {
      // Along the longest axis, the other two half extents as the radius: every point of the box
      // is within that radius of the segment.
      const Vec3& h = s.halfExtents;
      const int axis = h.x >= h.y && h.x >= h.z ? 0 : (h.y >= h.z ? 1 : 2);
      BoundingCapsule c;
      c.halfAxis[axis] = h[axis];
      c.radius = std::hypot(h[(axis + 1) % 3], h[(axis + 2) % 3]);
      return c;
    }
    case ShapeType::None:
      break;
  }
  return {};
}

// Distance between the segments p1 q1 and p2 q2 (Ericson, Real-Time Collision Detection, 5.1.9).
double segmentDistance(const Vec3& p1, const Vec3& q1, const Vec3& p2, const Vec3& q2) {
  const Vec3 d1 = q1 - p1, d2 = q2 - p2, r = p1 - p2;
  const double a = glm::dot(d1, d1), e = glm::dot(d2, d2), f = glm::dot(d2, r);
  constexpr double kPoint = 1e-24;  // a squared length below this is a point [m^2]
  double s = 0.0, t = 0.0;
  if (a <= kPoint && e <= kPoint) return glm::length(r);
  if (a <= kPoint) {
    t = std::clamp(f / e, 0.0, 1.0);
  } else {
    const double c = glm::dot(d1, r);
    if (e <= kPoint) {
      s = std::clamp(-c / a, 0.0, 1.0);
    } else {
      const double b = glm::dot(d1, d2);
      const double denominator = a * e - b * b;
      s = denominator > 0.0 ? std::clamp((b * f - c * e) / denominator, 0.0, 1.0) : 0.0;
      t = (b * s + f) / e;
      if (t < 0.0) {
        t = 0.0;
        s = std::clamp(-c / a, 0.0, 1.0);
      } else if (t > 1.0) {
        t = 1.0;
        s = std::clamp((b - c) / a, 0.0, 1.0);
      }
    }
  }
  return glm::length((p1 + s * d1) - (p2 + t * d2));
}

}  // namespace

PlacedBoundingCapsule placeBoundingCapsule(const ShapeDesc& shape, const Transform& spaceFromShape) {
  const BoundingCapsule c = boundingCapsule(shape);
  const Vec3 axis = spaceFromShape.transformVector(c.halfAxis);
  const Vec3& centre = spaceFromShape.translation;
  return {centre - axis, centre + axis, c.radius};
}

double boundingCapsuleDistance(const PlacedBoundingCapsule& a, const PlacedBoundingCapsule& b) {
  return segmentDistance(a.p, a.q, b.p, b.q) - a.radius - b.radius;
}

double shapeDistanceLowerBound(const ShapeDesc& a, const Transform& spaceFromA, const ShapeDesc& b,
                               const Transform& spaceFromB) {
  return boundingCapsuleDistance(placeBoundingCapsule(a, spaceFromA), placeBoundingCapsule(b, spaceFromB));
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
