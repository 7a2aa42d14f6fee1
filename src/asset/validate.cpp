// The validator of SPEC.md section 2: every problem is a finding naming its body or joint.
#include "asset_internal.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace handoff {
using namespace asset_detail;

namespace {

std::string fmt(double v, const char* spec = "%.4g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

bool unitRotation(const Transform& t) {
  return isFinite(t) && std::abs(glm::length(t.rotation) - 1.0) < 1e-6;
}

struct Sink {
  std::vector<Finding>& out;
  void error(std::string code, std::string subject, std::string message) {
    out.push_back({Finding::Severity::Error, std::move(code), std::move(subject), std::move(message)});
  }
  void warning(std::string code, std::string subject, std::string message) {
    out.push_back({Finding::Severity::Warning, std::move(code), std::move(subject), std::move(message)});
  }
};

bool checkShape(const BodyDef& b, Sink& sink) {
  const ShapeDesc& s = b.shape;
  const auto ok = [](double v) { return std::isfinite(v) && v > 0.0 && v < 10.0; };
  std::string problem;
  switch (s.type) {
    case ShapeType::None:
      problem = "has no shape";
      break;
    case ShapeType::Sphere:
      if (!ok(s.radius)) problem = "sphere radius " + fmt(s.radius) + " m is not in (0, 10)";
      break;
    case ShapeType::Capsule:
      if (!ok(s.radius)) problem = "capsule radius " + fmt(s.radius) + " m is not in (0, 10)";
      if (!std::isfinite(s.halfHeight) || s.halfHeight < 0.0 || s.halfHeight >= 10.0) {
        problem = "capsule half height " + fmt(s.halfHeight) + " m is not in [0, 10)";
      }
      break;
    case ShapeType::Box:
      if (!ok(s.halfExtents.x) || !ok(s.halfExtents.y) || !ok(s.halfExtents.z)) {
        problem = "box half extents (" + fmt(s.halfExtents.x) + ", " + fmt(s.halfExtents.y) + ", " +
                  fmt(s.halfExtents.z) + ") m are not all in (0, 10)";
      }
      break;
  }
  if (!problem.empty()) sink.error("degenerate_shape", b.name, "body '" + b.name + "' " + problem);
  return problem.empty();
}

/// Limits of axis `a` (0 X, 1 Y, 2 Z) in the range SPEC.md section 2 allows: finite, within
/// [-pi, pi], Y within [-pi/2, pi/2] unless the axis is free (lower > upper).
bool limitInRange(double lo, double hi, int a) {
  const double bound = a == 1 ? 0.5 * kPi : kPi;
  return std::isfinite(lo) && std::isfinite(hi) && std::abs(lo) <= kPi + 1e-9 && std::abs(hi) <= kPi + 1e-9 &&
         (lo > hi || (std::abs(lo) <= bound + 1e-9 && std::abs(hi) <= bound + 1e-9));
}

}  // namespace

std::vector<Finding> validateRagdollStructure(const RagdollAsset& asset, const Skeleton* skeleton) {
  std::vector<Finding> findings;
  Sink sink{findings};
  const int n = static_cast<int>(asset.bodies.size());
  if (n == 0) {
    sink.error("bad_topology", "", "the asset has no bodies");
    return findings;
  }
  if (n > kMaxRagdollBodies) {
    sink.error(
        "bad_topology", "",
        "the asset has " + std::to_string(n) + " bodies, more than " + std::to_string(kMaxRagdollBodies));
    return findings;
  }
  // --- Bodies: references, topology, frames, shapes, mass, materials ---
  for (int i = 0; i < n; ++i) {
    const BodyDef& b = asset.bodies[static_cast<size_t>(i)];
    if (skeleton == nullptr) {
      // Names are authoritative in files: the index is set by resolveJoints.
    } else if (b.joint < 0 || b.joint >= skeleton->jointCount()) {
      sink.error("skeleton_mismatch", b.name,
                 "body '" + b.name + "' refers to joint " + std::to_string(b.joint) +
                     ", not in the skeleton (" + std::to_string(skeleton->jointCount()) +
                     " joints); resolveJoints() sets indices from names");
    } else if (skeleton->jointNames[static_cast<size_t>(b.joint)] != b.name) {
      sink.error("skeleton_mismatch", b.name,
                 "body '" + b.name + "' refers to joint " + std::to_string(b.joint) + ", which is named '" +
                     skeleton->jointNames[static_cast<size_t>(b.joint)] + "'");
    }
    // Parents first and only the first body a root: no cycle, no body its own parent, no index
    // out of range.
    if (b.parentBody >= i || (i > 0 && b.parentBody < 0) || (i == 0 && b.parentBody != -1)) {
      sink.error("bad_topology", b.name,
                 "body '" + b.name + "' has parent body " + std::to_string(b.parentBody) +
                     ": bodies must list parents first and only the first body is the root");
    }
    if (static_cast<int>(b.slot) >= kSlotCount) {
      sink.error("bad_reference", b.name,
                 "body '" + b.name + "' slot " + std::to_string(static_cast<int>(b.slot)) + " is not a slot");
    }
    if (!unitRotation(b.boneFromBody)) {
      sink.error("degenerate_frame", b.name,
                 "body '" + b.name + "': boneFromBody is not a finite rigid transform");
    }
    checkShape(b, sink);
    const bool massOk = std::isfinite(b.mass) && b.mass > 0.0;
    const Vec3& I = b.inertia;
    const bool inertiaOk = isFinite(I) && I.x > 0.0 && I.y > 0.0 && I.z > 0.0;
    if (!massOk || b.mass < kBodyMassMin || b.mass > kBodyMassMax) {
      sink.error("invalid_mass", b.name,
                 "body '" + b.name + "' mass " + fmt(b.mass) + " kg is not in [" + fmt(kBodyMassMin) + ", " +
                     fmt(kBodyMassMax) + "] kg");
    }
    if (!inertiaOk || I.x > kBodyInertiaMax || I.y > kBodyInertiaMax || I.z > kBodyInertiaMax) {
      sink.error("invalid_mass", b.name,
                 "body '" + b.name + "' inertia (" + fmt(I.x) + ", " + fmt(I.y) + ", " + fmt(I.z) +
                     ") kg m^2 is not in (0, " + fmt(kBodyInertiaMax) + "]");
    } else if (I.x + I.y < I.z * (1.0 - 1e-9) || I.y + I.z < I.x * (1.0 - 1e-9) ||
               I.z + I.x < I.y * (1.0 - 1e-9)) {
      sink.warning("invalid_mass", b.name,
                   "body '" + b.name + "' inertia violates the triangle inequality: no rigid body has it");
    }
    if (!std::isfinite(b.friction) || b.friction < 0.0 || !std::isfinite(b.rollingFriction) ||
        b.rollingFriction < 0.0 || !std::isfinite(b.restitution) || b.restitution < 0.0 ||
        b.restitution > 1.0 || !std::isfinite(b.linearDamping) || b.linearDamping < 0.0 ||
        !std::isfinite(b.angularDamping) || b.angularDamping < 0.0) {
      sink.error("invalid_material", b.name,
                 "body '" + b.name + "' friction, restitution or damping out of range");
    }
  }
  // --- Joints: one per non-root body, between it and its parent; drives and limits in range ---
  std::vector<int> jointsOfChild(static_cast<size_t>(n), 0);
  for (const JointDef& j : asset.joints) {
    if (j.parentBody < 0 || j.parentBody >= n || j.childBody < 0 || j.childBody >= n ||
        asset.bodies[static_cast<size_t>(j.childBody)].parentBody != j.parentBody) {
      sink.error("bad_topology", j.name,
                 "joint '" + j.name + "' connects bodies " + std::to_string(j.parentBody) + " and " +
                     std::to_string(j.childBody) + ", which are not a parent and its child");
      continue;
    }
    ++jointsOfChild[static_cast<size_t>(j.childBody)];
    if (!unitRotation(j.bodyAFromJoint) || !unitRotation(j.bodyBFromJoint)) {
      sink.error("degenerate_frame", j.name,
                 "joint '" + j.name + "': a joint frame is not a finite rigid transform");
    }
    const JointPreset& p = j.preset;
    if (!std::isfinite(p.driveStiffness) || p.driveStiffness < 0.0 || p.driveStiffness > kDriveStiffnessMax) {
      sink.error("invalid_drive", j.name,
                 "joint '" + j.name + "' stiffness " + fmt(p.driveStiffness) + " N m/rad is not in [0, " +
                     fmt(kDriveStiffnessMax) + "]");
    }
    if (!std::isfinite(p.driveDamping) || p.driveDamping < 0.0 || p.driveDamping > kDriveDampingMax) {
      sink.error("invalid_drive", j.name,
                 "joint '" + j.name + "' damping " + fmt(p.driveDamping) + " N m s/rad is not in [0, " +
                     fmt(kDriveDampingMax) + "]");
    }
    if (std::isnan(p.maxDriveTorque) || p.maxDriveTorque <= 0.0 || std::isnan(j.breakForce) ||
        j.breakForce <= 0.0 || std::isnan(j.breakTorque) || j.breakTorque <= 0.0) {
      sink.error("invalid_drive", j.name, "joint '" + j.name + "': max torque and break limits must be > 0");
    }
    for (int a = 0; a < 3; ++a) {
      const double lo = p.angularLower[a];
      const double hi = p.angularUpper[a];
      if (!limitInRange(lo, hi, a)) {
        sink.error("limit_range", j.name,
                   "joint '" + j.name + "' axis " + "XYZ"[a] + " limits [" + fmt(lo) + ", " + fmt(hi) +
                       "] rad: must be finite, within [-pi, pi] (Y within [-pi/2, pi/2])");
      } else if (lo > hi) {
        sink.warning("free_axis", j.name,
                     "joint '" + j.name + "' axis " + std::string(1, "XYZ"[a]) +
                         " is free (lower > upper): a ragdoll joint is rarely unlimited");
      }
    }
  }
  for (int i = 1; i < n; ++i) {
    if (jointsOfChild[static_cast<size_t>(i)] != 1 && asset.bodies[static_cast<size_t>(i)].parentBody >= 0) {
      sink.error("bad_topology", asset.bodies[static_cast<size_t>(i)].name,
                 "body '" + asset.bodies[static_cast<size_t>(i)].name + "' has " +
                     std::to_string(jointsOfChild[static_cast<size_t>(i)]) +
                     " joints to its parent (needs 1)");
    }
  }
  // --- The humanoid map: skeleton joints ---
  if (skeleton != nullptr) {
    for (int s = 0; s < kSlotCount; ++s) {
      const int joint = asset.map.joint[static_cast<size_t>(s)];
      if (joint < -1 || joint >= skeleton->jointCount()) {
        sink.error("bad_reference", slotName(static_cast<Slot>(s)),
                   std::string("map slot '") + slotName(static_cast<Slot>(s)) + "' refers to joint " +
                       std::to_string(joint) + ", not in the skeleton (" +
                       std::to_string(skeleton->jointCount()) + " joints)");
      }
    }
  }
  return findings;
}

std::vector<Finding> validateRagdoll(const RagdollAsset& asset, const Skeleton& skeleton,
                                     const ValidateOptions& o) {
  std::vector<Finding> findings = validateRagdollStructure(asset, &skeleton);
  Sink sink{findings};
  const int n = static_cast<int>(asset.bodies.size());
  if (n == 0 || n > kMaxRagdollBodies) return findings;
  // What the structure check found wrong is left out of the bind-pose checks below.
  bool posable = true;  // every body has a valid joint: bind poses can be computed
  std::vector<bool> shapeOk(static_cast<size_t>(n), true);
  for (int i = 0; i < n; ++i) {
    const BodyDef& b = asset.bodies[static_cast<size_t>(i)];
    if (b.joint < 0 || b.joint >= skeleton.jointCount() || !unitRotation(b.boneFromBody)) posable = false;
    std::vector<Finding> ignored;
    Sink quiet{ignored};
    shapeOk[static_cast<size_t>(i)] = checkShape(b, quiet);
    const bool massOk = std::isfinite(b.mass) && b.mass > 0.0;
    if (massOk && (b.mass < o.minBodyMass || b.mass > o.maxBodyMass)) {
      sink.warning("extreme_mass", b.name,
                   "body '" + b.name + "' mass " + fmt(b.mass) + " kg is outside [" + fmt(o.minBodyMass) +
                       ", " + fmt(o.maxBodyMass) + "] kg");
    }
    if (massOk && b.parentBody >= 0 && b.parentBody < i) {
      const BodyDef& p = asset.bodies[static_cast<size_t>(b.parentBody)];
      if (p.mass > 0.0 && b.mass > o.maxChildParentRatio * p.mass) {
        sink.warning("mass_ratio", b.name + "/" + p.name,
                     "child '" + b.name + "' (" + fmt(b.mass) + " kg) is " + fmt(b.mass / p.mass, "%.2f") +
                         " times its parent '" + p.name + "' (" + fmt(p.mass) +
                         " kg): the solver will fight");
      }
    }
    const bool filterOk = b.filter.layer != 0 && (b.filter.mask & layers::kStatic) != 0 &&
                          (b.filter.mask & asset.collision.capsule.layer) == 0;
    if (!filterOk) {
      sink.warning("collision_filter", b.name,
                   "body '" + b.name + "' has layer " + std::to_string(b.filter.layer) + " mask " +
                       std::to_string(b.filter.mask) +
                       ": it should have a layer, collide with the static world and " +
                       "not with the character capsule");
    }
  }
  // --- Joints in the bind pose: anchors, limits that exclude it ---
  std::vector<Transform> worldFromBody(static_cast<size_t>(n));
  if (posable) {
    std::vector<Transform> models(static_cast<size_t>(skeleton.jointCount()));
    localToModel(skeleton, skeleton.restLocal, models);
    bodyPosesFromModels(asset, models, Transform::identity(), worldFromBody);
  }
  for (const JointDef& j : asset.joints) {
    if (j.parentBody < 0 || j.parentBody >= n || j.childBody < 0 || j.childBody >= n ||
        asset.bodies[static_cast<size_t>(j.childBody)].parentBody != j.parentBody ||
        !unitRotation(j.bodyAFromJoint) || !unitRotation(j.bodyBFromJoint))
      continue;
    const JointPreset& p = j.preset;
    bool rangeOk = true;
    for (int a = 0; a < 3; ++a) rangeOk = rangeOk && limitInRange(p.angularLower[a], p.angularUpper[a], a);
    if (!posable || !shapeOk[static_cast<size_t>(j.parentBody)] || !shapeOk[static_cast<size_t>(j.childBody)])
      continue;
    const Transform worldFromJointA = worldFromBody[static_cast<size_t>(j.parentBody)] * j.bodyAFromJoint;
    const Transform worldFromJointB = worldFromBody[static_cast<size_t>(j.childBody)] * j.bodyBFromJoint;
    const double separation = glm::length(worldFromJointA.translation - worldFromJointB.translation);
    if (separation > o.anchorTolerance) {
      sink.error("anchor_mismatch", j.name,
                 "joint '" + j.name + "' anchors are " + fmt(separation * 1000.0, "%.2f") +
                     " mm apart in the bind pose (tolerance " + fmt(o.anchorTolerance * 1000.0, "%.2f") +
                     " mm)");
    }
    if (!rangeOk) continue;
    const Vec3 angles = jointAngles(glm::conjugate(worldFromJointA.rotation) * worldFromJointB.rotation);
    for (int a = 0; a < 3; ++a) {
      const double lo = p.angularLower[a];
      const double hi = p.angularUpper[a];
      if (lo > hi) continue;  // free
      const double v = angles[a];
      if (v < lo - o.limitTolerance || v > hi + o.limitTolerance) {
        sink.error("limit_excludes_bind", j.name,
                   "joint '" + j.name + "' bind angle about " + std::string(1, "XYZ"[a]) + " is " +
                       fmt(v, "%.4f") + " rad, outside its " + (lo == hi ? "lock " : "limits [") +
                       fmt(lo, "%.4f") + (lo == hi ? "" : ", " + fmt(hi, "%.4f") + "]") +
                       ": the ragdoll would jump at the handoff");
      }
    }
  }
  // --- Plausibility: scale, proportions, sides, head and pelvis (bodies on the bind pose) ---
  if (posable) {
    std::vector<Transform> models(static_cast<size_t>(skeleton.jointCount()));
    localToModel(skeleton, skeleton.restLocal, models);
    SlotGeometry g;
    g.floorY = std::numeric_limits<double>::infinity();  // the skeleton's lowest joint or tip
    for (int j = 0; j < skeleton.jointCount(); ++j) {
      const Transform& m = models[static_cast<size_t>(j)];
      g.floorY = std::min(
          {g.floorY, m.translation.y, m.transformPoint(skeleton.endSiteOffset[static_cast<size_t>(j)]).y});
    }
    Vec3 feet{0.0};
    for (int i = 0; i < n; ++i) {
      const BodyDef& b = asset.bodies[static_cast<size_t>(i)];
      if (!shapeOk[static_cast<size_t>(i)]) continue;
      const size_t slot = static_cast<size_t>(b.slot);
      if (slot >= static_cast<size_t>(kSlotCount)) continue;
      g.joint[slot] = models[static_cast<size_t>(b.joint)].translation;
      if (b.shape.type == ShapeType::Capsule) g.length[slot] = 2.0 * b.shape.halfHeight;
      if (b.slot == Slot::FootL || b.slot == Slot::FootR) {
        Vec3 v = worldFromBody[static_cast<size_t>(i)].translation -
                 models[static_cast<size_t>(b.joint)].translation;
        v.y = 0.0;
        if (glm::length(v) > 1e-6) feet += glm::normalize(v);
      }
    }
    if (glm::length(feet) > 1e-6) g.feetForward = glm::normalize(feet);
    if (std::isfinite(g.floorY)) {
      const std::vector<Finding> checks = plausibilityFindings(g);
      findings.insert(findings.end(), checks.begin(), checks.end());
    }
    std::array<double, kSlotCount> radius{};
    std::array<std::string, kSlotCount> bodyName{};
    for (int i = 0; i < n; ++i) {
      const BodyDef& b = asset.bodies[static_cast<size_t>(i)];
      const auto slot = static_cast<size_t>(b.slot);
      if (!shapeOk[static_cast<size_t>(i)] || slot >= static_cast<size_t>(kSlotCount)) continue;
      if (b.shape.type == ShapeType::Sphere || b.shape.type == ShapeType::Capsule) {
        radius[slot] = b.shape.radius;
        bodyName[slot] = b.name;
      }
    }
    const std::vector<Finding> sizes = bodySizeFindings(radius, bodyName);
    findings.insert(findings.end(), sizes.begin(), sizes.end());
  }
  // --- Overlaps between non-adjacent bodies in the bind pose ---
  if (posable) {
    const auto adjacent = [&](int a, int b) {
      return asset.bodies[static_cast<size_t>(a)].parentBody == b ||
             asset.bodies[static_cast<size_t>(b)].parentBody == a;
    };
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) {
        if (adjacent(a, b) || !shapeOk[static_cast<size_t>(a)] || !shapeOk[static_cast<size_t>(b)]) continue;
        const double d = surfaceDistance(
            {asset.bodies[static_cast<size_t>(a)].shape, worldFromBody[static_cast<size_t>(a)]},
            {asset.bodies[static_cast<size_t>(b)].shape, worldFromBody[static_cast<size_t>(b)]});
        if (-d > o.overlapTolerance) {
          const std::string& na = asset.bodies[static_cast<size_t>(a)].name;
          const std::string& nb = asset.bodies[static_cast<size_t>(b)].name;
          sink.error("overlap", na + "/" + nb,
                     "non-adjacent bodies '" + na + "' and '" + nb + "' overlap by " +
                         fmt(-d * 1000.0, "%.1f") +
                         " mm in the bind pose: they would be pushed apart at the handoff");
        }
      }
    }
    // Adjacent bodies overlap at their joint by design; a joint that lets them collide
    // (adjacentCollision) has them pushed apart at the handoff.
    for (const JointDef& j : asset.joints) {
      const int a = j.parentBody, b = j.childBody;
      if (!j.adjacentCollision || a < 0 || b < 0 || a >= n || b >= n || !shapeOk[static_cast<size_t>(a)] ||
          !shapeOk[static_cast<size_t>(b)])
        continue;
      const double d = surfaceDistance(
          {asset.bodies[static_cast<size_t>(a)].shape, worldFromBody[static_cast<size_t>(a)]},
          {asset.bodies[static_cast<size_t>(b)].shape, worldFromBody[static_cast<size_t>(b)]});
      if (-d > o.overlapTolerance) {
        sink.warning("adjacent_overlap", j.name,
                     "joint '" + j.name + "' lets its bodies '" + asset.bodies[static_cast<size_t>(a)].name +
                         "' and '" + asset.bodies[static_cast<size_t>(b)].name +
                         "' collide (adjacentCollision) " + "and they overlap by " +
                         fmt(-d * 1000.0, "%.1f") +
                         " mm in the bind pose: they would be pushed apart at the handoff");
      }
    }
  }
  return findings;
}

}  // namespace handoff
