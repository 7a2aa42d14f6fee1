// What exact rigid-body dynamics of the jointed ragdoll does to the committed velocities over one
// step, without any engine (handoff.h: rigidJointVelocityChange).
#include "handoff/handoff.h"

#include <glm/gtc/quaternion.hpp>

namespace handoff {

std::vector<Vec3> rigidJointVelocityChange(const RagdollAsset& asset, const HandoffRecord& record,
                                           double dt) {
  const size_t n = record.bodies.size();
  std::vector<Vec3> change(n, Vec3{0.0});
  if (!record.committed || n != asset.bodies.size() || !(dt > 0.0)) return change;
  std::vector<ConsistencyBody> bodies(n);
  std::vector<Transform> ahead(n);
  std::vector<Vec3> v(n), w(n), jl(n), ja(n), cl(n), ca(n);
  for (size_t b = 0; b < n; ++b) {
    const BodyHandoff& h = record.bodies[b];
    v[b] = h.linearVelocity;
    w[b] = h.angularVelocity;
    // The pose one step ahead at the committed velocities (x + v dt, exp(omega dt) q).
    ahead[b] = Transform{glm::normalize(fromRotationVector(w[b] * dt) * h.poseAfter.rotation),
                         h.poseAfter.translation + v[b] * dt};
    const BodyDef& def = asset.bodies[b];
    const glm::dmat3 r = glm::mat3_cast(ahead[b].rotation);
    const glm::dmat3 inverseInertia(Vec3{1.0 / def.inertia.x, 0, 0}, Vec3{0, 1.0 / def.inertia.y, 0},
                                    Vec3{0, 0, 1.0 / def.inertia.z});
    bodies[b] = ConsistencyBody{1.0 / def.mass, r * inverseInertia * glm::transpose(r), ahead[b].translation};
  }
  std::vector<ConsistencyJoint> joints;
  int rows = 0;
  for (const JointDef& def : asset.joints) {
    const auto a = static_cast<size_t>(def.parentBody), c = static_cast<size_t>(def.childBody);
    // The commit anchors the joint where the child's joint frame is, in both bodies.
    const Vec3 anchorInA = record.bodies[a].poseAfter.inverse().transformPoint(
        (record.bodies[c].poseAfter * def.bodyBFromJoint).translation);
    ConsistencyJoint j;
    j.parent = def.parentBody;
    j.child = def.childBody;
    j.anchor = 0.5 * (ahead[a].transformPoint(anchorInA) + (ahead[c] * def.bodyBFromJoint).translation);
    std::uint8_t locked = 0;
    for (int axis = 0; axis < 3; ++axis) {
      if (def.preset.angularLower[axis] == def.preset.angularUpper[axis]) locked |= std::uint8_t(1u << axis);
    }
    j.lockedCount = lockedAxisRows(ahead[a].rotation * def.bodyAFromJoint.rotation,
                                   ahead[c].rotation * def.bodyBFromJoint.rotation, locked, j.lockedAxes);
    rows += 3 + j.lockedCount;
    joints.push_back(j);
  }
  // The first-order joint impulse of the step: the change that keeps the joints' velocity
  // constraints at the poses one step ahead (the centripetal and Coriolis terms of a swinging
  // chain, |omega|^2 r dt), from the projector the commit uses.
  VelocityProjector projector(static_cast<int>(n), rows, 0);
  std::vector<Vec3> v1 = v, w1 = w;
  projector.project(bodies, joints, {}, dt, v1, w1, jl, ja, cl, ca);
  for (size_t b = 0; b < n; ++b) change[b] = v1[b] - v[b];
  return change;
}

}  // namespace handoff
