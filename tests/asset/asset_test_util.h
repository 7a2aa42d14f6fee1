// Helpers shared by the asset tests: skeletons from the data folder, synthetic skeletons and
// independent geometric measurements of a built asset.
#pragma once

#include "handoff/asset.h"
#include "handoff/import.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace handoff::asset_test {

inline std::string dataPath(const std::string& relative) {
  return std::string(HANDOFF_DATA_DIR) + "/" + relative;
}

/// The skeleton of a data file (the test fails when the file does not import).
inline Skeleton loadSkeleton(const std::string& relative) {
  Result<ImportedAsset> imported = importFile(dataPath(relative));
  EXPECT_TRUE(imported.ok()) << relative << ": " << (imported.ok() ? "" : imported.error());
  return imported.ok() ? imported->skeleton : Skeleton{};
}

/// Adds a joint; returns its index.
inline int addJoint(Skeleton& s, const std::string& name, int parent, const Vec3& offset,
                    const Quat& rotation = Quat{1.0, 0.0, 0.0, 0.0}, const Vec3& endSite = Vec3{0.0}) {
  s.jointNames.push_back(name);
  s.parents.push_back(parent);
  s.restLocal.push_back(Transform{rotation, offset});
  s.endSiteOffset.push_back(endSite);
  return s.jointCount() - 1;
}

/// A 1.8 m humanoid in T-pose facing +Z (left = +X), metres, 20 joints with a clavicle, finger
/// and toe helpers:
///
///                 head (end site: crown)
///                  |
///                 neck
///   L hand-elbow-shoulder-clavicle-chest-clavicle-shoulder-elbow-hand R   (arms along -/+X)
///                  |
///                 spine
///                  |
///          L hip-hips-hip R
///            |         |
///          knee      knee
///            |         |
///          ankle-toe ankle-toe (toes point +Z)
inline Skeleton tPoseSkeleton() {
  Skeleton s;
  const int hips = addJoint(s, "Hips", kNoParent, {0.0, 1.0, 0.0});
  const int spine = addJoint(s, "Spine", hips, {0.0, 0.12, 0.0});
  const int chest = addJoint(s, "Chest", spine, {0.0, 0.2, 0.0});
  const int neck = addJoint(s, "Neck", chest, {0.0, 0.22, 0.0});
  addJoint(s, "Head", neck, {0.0, 0.1, 0.0}, Quat{1.0, 0.0, 0.0, 0.0}, {0.0, 0.2, 0.0});
  for (double side : {1.0, -1.0}) {
    const std::string p = side > 0 ? "Left" : "Right";
    const int clavicle = addJoint(s, p + "Shoulder", chest, {side * 0.04, 0.18, 0.0});
    const int upper = addJoint(s, p + "Arm", clavicle, {side * 0.15, 0.0, 0.0});
    const int lower = addJoint(s, p + "ForeArm", upper, {side * 0.29, 0.0, 0.0});
    const int hand = addJoint(s, p + "Hand", lower, {side * 0.26, 0.0, 0.0});
    addJoint(s, p + "HandMiddle1", hand, {side * 0.1, 0.0, 0.0}, Quat{1.0, 0.0, 0.0, 0.0},
             {side * 0.09, 0.0, 0.0});
  }
  for (double side : {1.0, -1.0}) {
    const std::string p = side > 0 ? "Left" : "Right";
    const int upper = addJoint(s, p + "UpLeg", hips, {side * 0.1, -0.06, 0.0});
    const int lower = addJoint(s, p + "Leg", upper, {0.0, -0.44, 0.0});
    const int foot = addJoint(s, p + "Foot", lower, {0.0, -0.42, 0.0});
    addJoint(s, p + "ToeBase", foot, {0.0, -0.06, 0.14}, Quat{1.0, 0.0, 0.0, 0.0}, {0.0, 0.0, 0.06});
  }
  return s;
}

/// Rotates joint `joint` of the rest pose by `modelRotation` about its own position, expressed in
/// model space (children follow).
inline void rotateRestJoint(Skeleton& s, int joint, const Quat& modelRotation) {
  std::vector<Transform> models(static_cast<size_t>(s.jointCount()));
  localToModel(s, s.restLocal, models);
  Transform& local = s.restLocal[static_cast<size_t>(joint)];
  const int parent = s.parents[static_cast<size_t>(joint)];
  const Quat parentRotation =
      parent == kNoParent ? Quat{1.0, 0.0, 0.0, 0.0} : models[static_cast<size_t>(parent)].rotation;
  // new model rotation = modelRotation * old model rotation; local = inverse(parent) * model.
  local.rotation = glm::normalize(glm::conjugate(parentRotation) * modelRotation *
                                  models[static_cast<size_t>(joint)].rotation);
}

inline double degrees(double radians) { return radians * 180.0 / kPi; }

inline double angleBetweenDirections(const Vec3& a, const Vec3& b) {
  return std::atan2(glm::length(glm::cross(a, b)), glm::dot(a, b));
}

/// Figures measured on a built asset in its bind pose, independently of the builder's rules.
struct Measures {
  int bodies = 0;
  double worstAxisDegrees = 0.0;  ///< Capsule axis vs the direction between the joints its ends sit on.
  double worstEndMetres = 0.0;    ///< Capsule segment end to the nearest joint (or end site).
  double worstAnchorMetres = 0.0;
  double worstLimitExcess = 0.0;  ///< Bind angle outside a limit. [rad]
  double massSum = 0.0;
  std::string worstAxisBody, worstEndBody;
};

/// For every capsule: its first segment end must sit on the body's own joint, its second end on
/// a joint or end site of the skeleton; the axis is compared with the direction between those
/// skeleton points.
inline Measures measure(const RagdollAsset& asset, const Skeleton& skeleton) {
  Measures m;
  m.bodies = static_cast<int>(asset.bodies.size());
  std::vector<Transform> models(static_cast<size_t>(skeleton.jointCount()));
  localToModel(skeleton, skeleton.restLocal, models);
  std::vector<Vec3> points;  // joints and end sites
  for (int j = 0; j < skeleton.jointCount(); ++j) {
    points.push_back(models[static_cast<size_t>(j)].translation);
    if (glm::length(skeleton.endSiteOffset[static_cast<size_t>(j)]) > 0.0) {
      points.push_back(
          models[static_cast<size_t>(j)].transformPoint(skeleton.endSiteOffset[static_cast<size_t>(j)]));
    }
  }
  std::vector<Transform> bodies(asset.bodies.size());
  bodyPosesFromModels(asset, models, Transform::identity(), bodies);
  for (size_t i = 0; i < asset.bodies.size(); ++i) {
    const BodyDef& b = asset.bodies[i];
    m.massSum += b.mass;
    if (b.shape.type != ShapeType::Capsule) continue;
    const Vec3 axis = bodies[i].transformVector(Vec3{0.0, 1.0, 0.0});
    const Vec3 start = bodies[i].translation - b.shape.halfHeight * axis;
    const Vec3 end = bodies[i].translation + b.shape.halfHeight * axis;
    const Vec3 joint = models[static_cast<size_t>(b.joint)].translation;
    double nearest = 1e9;
    Vec3 onSkeleton = end;
    for (const Vec3& p : points) {
      if (glm::length(p - end) < nearest && glm::length(p - joint) > 1e-6) {
        nearest = glm::length(p - end);
        onSkeleton = p;
      }
    }
    const double endError = std::max(glm::length(start - joint), nearest);
    if (endError > m.worstEndMetres) {
      m.worstEndMetres = endError;
      m.worstEndBody = b.name;
    }
    const double axisError = degrees(angleBetweenDirections(axis, onSkeleton - joint));
    if (axisError > m.worstAxisDegrees) {
      m.worstAxisDegrees = axisError;
      m.worstAxisBody = b.name;
    }
  }
  for (const JointDef& j : asset.joints) {
    const Transform a = bodies[static_cast<size_t>(j.parentBody)] * j.bodyAFromJoint;
    const Transform c = bodies[static_cast<size_t>(j.childBody)] * j.bodyBFromJoint;
    m.worstAnchorMetres = std::max(m.worstAnchorMetres, glm::length(a.translation - c.translation));
    const Vec3 angles = jointAngles(glm::conjugate(a.rotation) * c.rotation);
    for (int k = 0; k < 3; ++k) {
      const double lo = j.preset.angularLower[k];
      const double hi = j.preset.angularUpper[k];
      if (lo > hi) continue;
      m.worstLimitExcess = std::max({m.worstLimitExcess, lo - angles[k], angles[k] - hi});
    }
  }
  return m;
}

/// The name of the joint `map` puts in `slot`, "-" when the slot is empty.
inline std::string mapped(const Skeleton& s, const HumanoidMap& map, Slot slot) {
  const int j = map[slot];
  return j >= 0 ? s.jointNames[static_cast<size_t>(j)] : "-";
}

}  // namespace handoff::asset_test
