// Private helpers of the asset module: shape distances, name tokens, skeleton queries.
#pragma once

#include "handoff/asset.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace handoff::asset_detail {

inline constexpr Vec3 kUp{0.0, 1.0, 0.0};

/// A shape placed in some common space (model or world).
struct PlacedShape {
  ShapeDesc shape;
  Transform spaceFromBody;
};

/// Distance between the surfaces of two convex shapes; negative values are penetration depths.
/// [m] Exact for sphere, capsule and box pairs: GJK on the inner cores (capsule segment, sphere
/// centre, box) minus the radii while the cores are apart, the separating-axis depth of the
/// cores plus the radii once they intersect.
double surfaceDistance(const PlacedShape& a, const PlacedShape& b);

/// Penetration depth of two intersecting cores (0 when they only touch or are apart). [m]
double corePenetration(const PlacedShape& a, const PlacedShape& b);

/// Distance between the inner cores (segment, point or box) of two shapes. [m]
double coreDistance(const PlacedShape& a, const PlacedShape& b);

/// Rounding radius of a shape (its core is inflated by it): capsule and sphere radius, 0 for a box.
double roundingRadius(const ShapeDesc& shape);

/// A bone name split into lower-case tokens with side markers and rig prefixes removed:
/// "mixamorig:LeftForeArm" -> core "forearm", side 'L'; "DEF-upper_arm.R.001" -> "upperarm", 'R'.
struct NameKey {
  std::string core;
  char side = 0;  ///< 'L', 'R' or 0.
};
NameKey nameKey(std::string_view name);

/// Unit vector of v with its component along `axis` (unit) removed; `fallback` when degenerate.
Vec3 perpendicularTo(const Vec3& v, const Vec3& axis, const Vec3& fallback);
/// Rotation whose columns are the given orthonormal axes.
Quat rotationFromAxes(const Vec3& x, const Vec3& y, const Vec3& z);
/// Unit direction from a to b, or `fallback` when they (nearly) coincide.
Vec3 directionOr(const Vec3& a, const Vec3& b, const Vec3& fallback);

/// Skeleton queries on the rest (bind) pose.
struct SkeletonInfo {
  const Skeleton* skeleton = nullptr;
  std::vector<Transform> models;           ///< Rest pose rootFromJoint.
  std::vector<std::vector<int>> children;  ///< Per joint.
  std::vector<std::optional<Vec3>> tip;    ///< End-site tip in model space, when known.
  double floorY = 0.0;                     ///< Lowest point (joints and tips).
  double topY = 0.0;                       ///< Highest point.

  explicit SkeletonInfo(const Skeleton& s);
  Vec3 pos(int joint) const { return models[static_cast<size_t>(joint)].translation; }
  bool isAncestor(int ancestor, int joint) const;  ///< True also when ancestor == joint.
  int lca(int a, int b) const;
  /// Every point of a subtree: joint positions and tips.
  std::vector<Vec3> subtreePoints(int joint) const;
  /// Point of the subtree of `joint` farthest from `from`, with the joint that owns it.
  struct FarPoint {
    Vec3 point{0.0};
    int joint = -1;
    double distance = 0.0;
  };
  FarPoint farthestInSubtree(int joint, const Vec3& from) const;
  /// Joints from `ancestor` down to `descendant`, both included.
  std::vector<int> path(int ancestor, int descendant) const;
};

}  // namespace handoff::asset_detail
