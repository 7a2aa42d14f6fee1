// Private helpers of the asset module: shape distances, name tokens, skeleton queries.
#pragma once

#include "handoff/asset.h"

#include <array>
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
  char side = 0;                    ///< 'L', 'R' or 0.
  std::vector<std::string> tokens;  ///< The tokens `core` joins, in order.
  /// A control, twist, helper or secondary bone: MHX's "__" prefix, Rigify's MCH-/ORG-/tweak_,
  /// twist / share / roll / IK / pole / target / end bones, VRoid's J_Sec_ and J_Adj_ chains.
  bool helper = false;
};
NameKey nameKey(std::string_view name);
/// True when the name's last tokens spell `name` ("CC_Base_L_Thigh" is "thigh"; its
/// "ThighTwist01" is not; "J_Bip_C_Head" and Unity's "RobotHead" are "head", "forehead" is not).
/// "arm", "leg" and "hip" must be the whole name ("LowerArm" is not an "arm").
bool nameIs(const NameKey& key, std::string_view name);

/// The mapper of humanoid_map.cpp on a skeleton as it is (structure finds the chains, names or
/// proportions pick the joints): the map, its notes and how each slot was decided.
Result<HumanoidMap> mapStructure(const Skeleton& skeleton, std::vector<Finding>* notes,
                                 std::array<SlotDecision, kSlotCount>* decisions);

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

namespace handoff::asset_detail {

/// Where the slots stand (rest pose, model space Y up), for the plausibility checks shared by the
/// mapper's report and the validator.
struct SlotGeometry {
  std::array<std::optional<Vec3>, kSlotCount> joint;  ///< Position of each mapped slot's joint.
  std::array<double, kSlotCount> length{};            ///< Bone length of the limb slots (0: unknown).
  double floorY = 0.0;                                ///< Lowest point of the character.
  std::optional<Vec3> feetForward;                    ///< Horizontal heel-to-toe direction, when feet exist.
};

/// Findings on an implausible humanoid (docs/ASSET.md): "implausible_scale" (with both legs: error outside
/// the kHumanHipMin-kHumanHipMax hip heights, warning outside 0.5-1.4 m), "proportion" (thigh/shank and upper
/// arm/forearm outside 0.4-2.5, left and right differing by more than 20 %), "side_swap" (the left thigh on
/// the right of the character's facing), "head_offset" (the head more than 12 % of its height above the
/// pelvis off the vertical through the chest, or below the chest), "pelvis_offset" (the pelvis not between
/// the thighs).
std::vector<Finding> plausibilityFindings(const SlotGeometry& geometry);

/// Findings "body_size" (warning) on a body whose sphere or capsule radius is out of the range of
/// human bodies at the asset's scale, in metres: half the smallest to twice the largest adult
/// figure of its slot (docs/TUNING.md, "plausibility"). `radius` per slot, 0 where unknown.
std::vector<Finding> bodySizeFindings(const std::array<double, kSlotCount>& radius,
                                      const std::array<std::string, kSlotCount>& bodyName);

}  // namespace handoff::asset_detail
