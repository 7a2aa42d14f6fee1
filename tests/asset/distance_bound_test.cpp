// shapeDistanceLowerBound (the commit's quick test of which bodies may touch) against the exact
// shapeSurfaceDistance: never above it, equal to it for sphere and capsule pairs apart, and
// shapeBoundingRadius holds every shape.
#include "handoff/asset.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace handoff {
namespace {

ShapeDesc randomShape(std::mt19937& rng) {
  std::uniform_real_distribution<double> size(0.02, 0.4);
  ShapeDesc s;
  switch (rng() % 3) {
    case 0:
      s.type = ShapeType::Sphere;
      s.radius = size(rng);
      break;
    case 1:
      s.type = ShapeType::Capsule;
      s.radius = size(rng);
      s.halfHeight = size(rng);
      break;
    default:
      s.type = ShapeType::Box;
      s.halfExtents = Vec3{size(rng), size(rng), size(rng)};
      break;
  }
  return s;
}

Transform randomPlacement(std::mt19937& rng, double spread) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Quat q = glm::normalize(Quat{u(rng), u(rng), u(rng), u(rng)});
  return Transform{q, spread * Vec3{u(rng), u(rng), u(rng)}};
}

TEST(ShapeDistanceLowerBound, NeverAboveTheExactDistanceAndExactForRoundShapes) {
  std::mt19937 rng(20240516);  // kSeed: a fixed ensemble of 20,000 random pairs
  std::vector<double> slack;   // exact - bound, for pairs with a box
  double worstRound = 0.0;     // |exact - bound| for sphere/capsule pairs apart
  int above = 0, roundPairs = 0;
  for (int i = 0; i < 20000; ++i) {
    const ShapeDesc a = randomShape(rng), b = randomShape(rng);
    const Transform xa = randomPlacement(rng, 1.0), xb = randomPlacement(rng, 1.0);
    const double exact = shapeSurfaceDistance(a, xa, b, xb);
    const double bound = shapeDistanceLowerBound(a, xa, b, xb);
    if (bound > exact + 1e-12) ++above;
    const bool round = a.type != ShapeType::Box && b.type != ShapeType::Box;
    if (round && exact > 1e-6) {
      worstRound = std::max(worstRound, std::abs(exact - bound));
      ++roundPairs;
    } else if (!round && exact > 0.0) {
      slack.push_back(exact - bound);
    }
  }
  std::sort(slack.begin(), slack.end());
  std::printf(
      "bound above the exact distance: %d of 20000; round pairs apart: %d, worst |exact - bound| %.3g m; "
      "pairs with a box: slack median %.4f p95 %.4f max %.4f m\n",
      above, roundPairs, worstRound, slack[slack.size() / 2], slack[slack.size() * 95 / 100], slack.back());
  EXPECT_EQ(above, 0);
  EXPECT_GT(roundPairs, 1000);
  EXPECT_LT(worstRound, 1e-9);
}

TEST(ShapeDistanceLowerBound, HandComputedPairs) {
  const ShapeDesc capsule{ShapeType::Capsule, 0.1, 0.3, Vec3{0.0}};
  const ShapeDesc box{ShapeType::Box, 0.0, 0.0, Vec3{0.1, 0.5, 0.2}};
  // Parallel capsules 1 m apart: 1 - 0.2.
  EXPECT_NEAR(
      shapeDistanceLowerBound(capsule, Transform::identity(), capsule, Transform::fromTranslation({1, 0, 0})),
      0.8, 1e-12);
  // Capsules end to end along Y, segments 0.4 apart: 0.4 - 0.2.
  EXPECT_NEAR(
      shapeDistanceLowerBound(capsule, Transform::identity(), capsule, Transform::fromTranslation({0, 1, 0})),
      0.2, 1e-12);
  // The box's capsule runs along its longest axis (Y, +-0.5) with radius hypot(0.1, 0.2): a point
  // 2 m away along X is 2 - hypot(0.1, 0.2) from it (the exact distance is 2 - 0.1).
  const ShapeDesc point{ShapeType::Sphere, 0.0, 0.0, Vec3{0.0}};
  EXPECT_NEAR(
      shapeDistanceLowerBound(box, Transform::identity(), point, Transform::fromTranslation({2, 0, 0})),
      2.0 - std::hypot(0.1, 0.2), 1e-12);
  EXPECT_NEAR(shapeSurfaceDistance(box, Transform::identity(), point, Transform::fromTranslation({2, 0, 0})),
              1.9, 1e-9);
}

TEST(ShapeBoundingRadius, HoldsEveryShape) {
  EXPECT_DOUBLE_EQ(shapeBoundingRadius(ShapeDesc{ShapeType::Sphere, 0.2, 0.0, Vec3{0.0}}), 0.2);
  EXPECT_DOUBLE_EQ(shapeBoundingRadius(ShapeDesc{ShapeType::Capsule, 0.1, 0.3, Vec3{0.0}}), 0.4);
  EXPECT_DOUBLE_EQ(shapeBoundingRadius(ShapeDesc{ShapeType::Box, 0.0, 0.0, Vec3{0.3, 0.4, 1.2}}), 1.3);
  EXPECT_DOUBLE_EQ(shapeBoundingRadius(ShapeDesc{}), 0.0);
}

}  // namespace
}  // namespace handoff
