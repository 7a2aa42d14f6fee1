// shapeLowestPoint: where each shape kind touches a floor below it, checked against hand
// computations for tilted placements (a sign or axis error moves the point by centimetres).
#include "handoff/asset.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace handoff {
namespace {

TEST(ShapeLowestPoint, SphereCapsuleAndBoxTilted) {
  const Vec3 centre{0.3, 1.0, -0.2};
  ShapeDesc sphere;
  sphere.type = ShapeType::Sphere;
  sphere.radius = 0.1;
  const Vec3 s = shapeLowestPoint(sphere, Transform::fromTranslation(centre));
  EXPECT_NEAR(s.y, 0.9, 1e-12);
  EXPECT_NEAR(s.x, 0.3, 1e-12);

  // Capsule along its local Y (half height 0.2, radius 0.05), tilted 30 degrees about Z: its
  // lower segment end sits at centre - 0.2 * (-sin30, cos30, 0), the bottom one radius below.
  ShapeDesc capsule;
  capsule.type = ShapeType::Capsule;
  capsule.radius = 0.05;
  capsule.halfHeight = 0.2;
  const double a = std::numbers::pi / 6.0;
  Transform tilted = Transform::fromTranslation(centre);
  tilted.rotation = Quat{std::cos(a / 2), 0.0, 0.0, std::sin(a / 2)};
  const Vec3 c = shapeLowestPoint(capsule, tilted);
  EXPECT_NEAR(c.y, 1.0 - 0.2 * std::cos(a) - 0.05, 1e-12);
  EXPECT_NEAR(c.x, 0.3 + 0.2 * std::sin(a), 1e-12);

  // Box with half extents (0.1, 0.2, 0.3) tilted 30 degrees about Z: lowest corner depth is
  // 0.1 sin30 + 0.2 cos30 (Z extent stays horizontal).
  ShapeDesc box;
  box.type = ShapeType::Box;
  box.halfExtents = Vec3{0.1, 0.2, 0.3};
  const Vec3 b = shapeLowestPoint(box, tilted);
  EXPECT_NEAR(b.y, 1.0 - (0.1 * std::sin(a) + 0.2 * std::cos(a)), 1e-12);
}

}  // namespace
}  // namespace handoff
