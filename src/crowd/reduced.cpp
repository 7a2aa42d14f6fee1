// Physics LOD: the reduced ragdoll (pelvis, chest, head, upper arms, upper legs) and its mapping
// back onto the full one. Dropped bodies ride on their nearest kept ancestor ("carrier") with the
// offset they had when the character was reduced; their masses are added to the carrier so the
// character keeps its total mass.
#include "handoff/crowd.h"

#include <array>
#include <cassert>

namespace handoff {
namespace {

bool keptSlot(Slot slot) {
  switch (slot) {
    case Slot::Pelvis:
    case Slot::Chest:
    case Slot::Head:
    case Slot::UpperArmL:
    case Slot::UpperArmR:
    case Slot::UpperLegL:
    case Slot::UpperLegR:
      return true;
    default:
      return false;
  }
}

}  // namespace

Result<ReducedRagdoll> buildReducedRagdoll(const RagdollAsset& full, const Skeleton& skeleton) {
  for (Slot s : {Slot::Pelvis, Slot::Chest, Slot::Head}) {
    if (full.bodyForSlot(s) < 0) {
      return Error{std::string("reduced ragdoll: the asset has no body for slot ") + slotName(s)};
    }
  }
  const int n = static_cast<int>(full.bodies.size());
  for (const BodyDef& b : full.bodies) {
    if (b.joint < 0 || b.joint >= skeleton.jointCount()) {
      return Error{"reduced ragdoll: body " + b.name + " has no joint in the skeleton"};
    }
  }
  // Bind poses of the full bodies (root at the origin).
  std::vector<Transform> locals = restPose(skeleton);
  std::vector<Transform> models(locals.size());
  localToModel(skeleton, locals, models);
  std::vector<Transform> bind(static_cast<size_t>(n));
  bodyPosesFromModels(full, models, Transform{}, bind);

  ReducedRagdoll r;
  r.carrierOfFull.assign(static_cast<size_t>(n), -1);
  std::vector<int> reducedOfFull(static_cast<size_t>(n), -1);
  for (int b = 0; b < n; ++b) {
    const BodyDef& def = full.bodies[static_cast<size_t>(b)];
    if (!keptSlot(def.slot) && def.parentBody >= 0) continue;
    reducedOfFull[static_cast<size_t>(b)] = static_cast<int>(r.fullFromReduced.size());
    r.fullFromReduced.push_back(b);
  }
  // Carriers: parents come before children, so a dropped body's parent already has its carrier.
  for (int b = 0; b < n; ++b) {
    const int own = reducedOfFull[static_cast<size_t>(b)];
    const int parent = full.bodies[static_cast<size_t>(b)].parentBody;
    r.carrierOfFull[static_cast<size_t>(b)] = own >= 0 ? own : r.carrierOfFull[static_cast<size_t>(parent)];
  }

  r.asset = full;
  r.asset.skeletonName = full.skeletonName + " (reduced)";
  r.asset.bodies.clear();
  r.asset.joints.clear();
  for (Slot s = Slot::Pelvis; s != Slot::Count; s = static_cast<Slot>(static_cast<int>(s) + 1)) {
    if (!keptSlot(s)) r.asset.map[s] = -1;
  }
  for (int k = 0; k < static_cast<int>(r.fullFromReduced.size()); ++k) {
    const BodyDef& src = full.bodies[static_cast<size_t>(r.fullFromReduced[static_cast<size_t>(k)])];
    BodyDef def = src;
    def.parentBody = src.parentBody >= 0 ? r.carrierOfFull[static_cast<size_t>(src.parentBody)] : -1;
    double carried = 0.0;
    for (int b = 0; b < n; ++b) {
      if (r.carrierOfFull[static_cast<size_t>(b)] == k) carried += full.bodies[static_cast<size_t>(b)].mass;
    }
    // The carrier takes the dropped bodies' mass; its inertia scales with it (same shape).
    def.inertia = src.inertia * (carried / src.mass);
    def.mass = carried;
    r.asset.bodies.push_back(def);
  }
  // Joints: a kept body's joint to its kept parent is copied; when the parent was dropped (the
  // chest under a lower spine) the joint is re-anchored on the carrier at the bind pose, keeping
  // the child's joint frame, so the bind pose is the joint's zero as before.
  for (const JointDef& j : full.joints) {
    const int child = reducedOfFull[static_cast<size_t>(j.childBody)];
    if (child < 0) continue;
    JointDef def = j;
    def.childBody = child;
    def.parentBody = r.carrierOfFull[static_cast<size_t>(j.parentBody)];
    if (reducedOfFull[static_cast<size_t>(j.parentBody)] < 0) {
      const int carrierFull = r.fullFromReduced[static_cast<size_t>(def.parentBody)];
      def.bodyAFromJoint = bind[static_cast<size_t>(carrierFull)].inverse() *
                           bind[static_cast<size_t>(j.childBody)] * j.bodyBFromJoint;
    }
    r.asset.joints.push_back(def);
  }
  return r;
}

void reducedCarrierOffsets(const ReducedRagdoll& reduced, std::span<const Transform> fullWorldFromBodies,
                           std::span<Transform> carrierFromBody) {
  assert(fullWorldFromBodies.size() == reduced.carrierOfFull.size() &&
         carrierFromBody.size() == reduced.carrierOfFull.size());
  for (size_t b = 0; b < reduced.carrierOfFull.size(); ++b) {
    const int carrierFull = reduced.fullFromReduced[static_cast<size_t>(reduced.carrierOfFull[b])];
    carrierFromBody[b] =
        static_cast<size_t>(carrierFull) == b
            ? Transform{}
            : fullWorldFromBodies[static_cast<size_t>(carrierFull)].inverse() * fullWorldFromBodies[b];
  }
}

void mapReducedToFull(const ReducedRagdoll& reduced, std::span<const Transform> reducedWorldFromBodies,
                      std::span<const Transform> carrierFromBody, std::span<Transform> fullWorldFromBodies) {
  assert(reducedWorldFromBodies.size() == reduced.fullFromReduced.size() &&
         carrierFromBody.size() == reduced.carrierOfFull.size() &&
         fullWorldFromBodies.size() == reduced.carrierOfFull.size());
  for (size_t b = 0; b < reduced.carrierOfFull.size(); ++b) {
    const Transform& carrier = reducedWorldFromBodies[static_cast<size_t>(reduced.carrierOfFull[b])];
    fullWorldFromBodies[b] = carrier * carrierFromBody[b];
  }
}

}  // namespace handoff
