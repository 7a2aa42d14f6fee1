// Retargeting a clip between humanoid rigs through their humanoid maps (issue 5: "slot rotations
// relative to each rig's bind pose, scaled root motion and pelvis height").
//
// For a slot mapped in both rigs, with source model rotations Q_s(t), source bind Q_s0 and the
// yaw M turning the source's model forward onto the target's:
//   D(t)    = Q_s(t) * inverse(Q_s0)          model-space delta from bind, source frame
//   D_t(t)  = M * D(t) * inverse(M)           the same delta in the target's model frame
//   Q_t(t)  = D_t(t) * Q_ref                  Q_ref = A * Q_t0: the target's bind rotation, its
//                                             bone direction turned onto the source's (A)
// and the target's local rotation follows from its parent's model rotation. Local translations
// stay the target's own (its bone lengths); the pelvis position is M * p_s * ratio.
#include "handoff/recovery.h"

#include "recovery/leg_stance.h"

#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace handoff {
namespace {

/// The slot whose joint ends a slot's bone (Count: none; the bone's tip is then a child joint or
/// the end site).
Slot nextSlot(Slot slot) {
  switch (slot) {
    case Slot::LowerSpine:
      return Slot::Chest;
    case Slot::Chest:
      return Slot::Head;
    case Slot::UpperArmL:
      return Slot::LowerArmL;
    case Slot::LowerArmL:
      return Slot::HandL;
    case Slot::UpperArmR:
      return Slot::LowerArmR;
    case Slot::LowerArmR:
      return Slot::HandR;
    case Slot::UpperLegL:
      return Slot::LowerLegL;
    case Slot::LowerLegL:
      return Slot::FootL;
    case Slot::UpperLegR:
      return Slot::LowerLegR;
    case Slot::LowerLegR:
      return Slot::FootR;
    default:
      return Slot::Count;
  }
}

/// Bind direction of a slot's bone in model space, if it has a length.
std::optional<Vec3> boneDirection(const Skeleton& skeleton, const HumanoidMap& map,
                                  std::span<const Transform> bind, Slot slot) {
  const int joint = map[slot];
  const Vec3 origin = bind[static_cast<size_t>(joint)].translation;
  Vec3 tip = origin;
  const Slot next = nextSlot(slot);
  if (next != Slot::Count && map[next] >= 0) {
    tip = bind[static_cast<size_t>(map[next])].translation;
  } else {
    int firstChild = -1;
    for (int j = joint + 1; j < skeleton.jointCount(); ++j) {
      if (skeleton.parents[static_cast<size_t>(j)] == joint) {
        firstChild = j;
        break;
      }
    }
    if (firstChild >= 0) {
      tip = bind[static_cast<size_t>(firstChild)].translation;
    } else {
      tip =
          bind[static_cast<size_t>(joint)].transformPoint(skeleton.endSiteOffset[static_cast<size_t>(joint)]);
    }
  }
  const Vec3 d = tip - origin;
  const double len = glm::length(d);
  if (!std::isfinite(len) || len < 1e-6) return std::nullopt;
  return d / len;
}

using recovery_detail::hipHeightAboveFeet;

bool slotValid(const Skeleton& skeleton, int joint) { return joint >= 0 && joint < skeleton.jointCount(); }

struct Mapper {
  const Skeleton& source;
  const Skeleton& target;
  const HumanoidMap& sourceMap;
  const HumanoidMap& targetMap;
  Quat targetFromSource;                     // M
  std::vector<Transform> sourceBind;         // model
  std::vector<int> slotOfTarget;             // per target joint: slot index or -1
  std::array<Quat, kSlotCount> reference{};  // Q_ref per slot (target model)
  std::array<Quat, kSlotCount> sourceBindInverse{};

  /// Target locals and models for one source model pose.
  void map(std::span<const Transform> sourceModels, double ratio, std::span<Transform> locals,
           std::span<Transform> models) const {
    const Quat mInverse = glm::conjugate(targetFromSource);
    for (int j = 0; j < target.jointCount(); ++j) {
      const auto J = static_cast<size_t>(j);
      const int parent = target.parents[J];
      const int slot = slotOfTarget[J];
      Transform local = target.restLocal[J];
      if (slot >= 0) {
        const auto S = static_cast<size_t>(slot);
        const int sourceJoint = sourceMap.joint[S];
        const Transform& sourceModel = sourceModels[static_cast<size_t>(sourceJoint)];
        const Quat delta = sourceModel.rotation * sourceBindInverse[S];
        const Quat modelRotation = normalizeOrIdentity(targetFromSource * delta * mInverse * reference[S]);
        if (static_cast<Slot>(slot) == Slot::Pelvis) {
          const Transform desired{modelRotation, targetFromSource * sourceModel.translation * ratio};
          local = parent == kNoParent ? desired : models[static_cast<size_t>(parent)].inverse() * desired;
        } else {
          local.rotation =
              parent == kNoParent
                  ? modelRotation
                  : normalizeOrIdentity(glm::conjugate(models[static_cast<size_t>(parent)].rotation) *
                                        modelRotation);
        }
      }
      locals[J] = local;
      models[J] = parent == kNoParent ? local : models[static_cast<size_t>(parent)] * local;
    }
  }
};

}  // namespace

Result<Clip> retargetClip(const Clip& source, const Skeleton& sourceSkeleton, const HumanoidMap& sourceMap,
                          const Skeleton& targetSkeleton, const HumanoidMap& targetMap,
                          const RetargetOptions& options, RetargetReport* report) {
  const std::string label = "retargeting clip '" + source.name + "'";
  if (Status s = sourceSkeleton.validate(); !s.ok()) return Error{label + ": source skeleton: " + s.error()};
  if (Status s = targetSkeleton.validate(); !s.ok()) return Error{label + ": target skeleton: " + s.error()};
  if (Status s = source.validate(sourceSkeleton); !s.ok()) return Error{label + ": " + s.error()};
  const std::array<std::pair<Slot, const char*>, 3> required{
      {{Slot::Pelvis, "pelvis"}, {Slot::UpperLegL, "upper_leg_l"}, {Slot::UpperLegR, "upper_leg_r"}}};
  for (const auto& [slot, name] : required) {
    if (!slotValid(sourceSkeleton, sourceMap[slot]))
      return Error{label + ": slot " + name + " unmapped in the source"};
    if (!slotValid(targetSkeleton, targetMap[slot]))
      return Error{label + ": slot " + name + " unmapped in the target"};
  }
  if (!std::isfinite(options.hipHeightRatio) || options.hipHeightRatio < 0.0) {
    return Error{label + ": hipHeightRatio must be positive, or 0 for automatic"};
  }

  const auto forwardOf = [&](const Vec3& given, const Skeleton& skeleton, const HumanoidMap& map,
                             const char* which) -> Result<Vec3> {
    if (glm::length(given) > 0.0) {
      const Vec3 h{given.x, 0.0, given.z};
      if (!isFinite(h) || glm::length(h) < 1e-6)
        return Error{label + ": the " + std::string(which) + " forward is vertical"};
      return glm::normalize(h);
    }
    Result<Vec3> f = modelForwardFromMap(skeleton, map);
    if (!f.ok()) return Error{label + ": " + which + ": " + f.error()};
    return f;
  };
  Result<Vec3> sourceForward = forwardOf(options.sourceModelForward, sourceSkeleton, sourceMap, "source");
  if (!sourceForward.ok()) return Error{sourceForward.error()};
  Result<Vec3> targetForward = forwardOf(options.targetModelForward, targetSkeleton, targetMap, "target");
  if (!targetForward.ok()) return Error{targetForward.error()};

  Mapper mapper{sourceSkeleton,
                targetSkeleton,
                sourceMap,
                targetMap,
                yawBetween(*sourceForward, *targetForward),
                {},
                {},
                {},
                {}};
  const auto sourceCount = static_cast<size_t>(sourceSkeleton.jointCount());
  const auto targetCount = static_cast<size_t>(targetSkeleton.jointCount());
  mapper.sourceBind.resize(sourceCount);
  localToModel(sourceSkeleton, sourceSkeleton.restLocal, mapper.sourceBind);
  std::vector<Transform> targetBind(targetCount);
  localToModel(targetSkeleton, targetSkeleton.restLocal, targetBind);

  mapper.slotOfTarget.assign(targetCount, -1);
  int mapped = 0;
  for (int s = 0; s < kSlotCount; ++s) {
    const auto slot = static_cast<Slot>(s);
    const int sj = sourceMap[slot];
    const int tj = targetMap[slot];
    if (!slotValid(sourceSkeleton, sj) || !slotValid(targetSkeleton, tj)) continue;
    ++mapped;
    mapper.slotOfTarget[static_cast<size_t>(tj)] = s;
    mapper.sourceBindInverse[static_cast<size_t>(s)] =
        glm::conjugate(mapper.sourceBind[static_cast<size_t>(sj)].rotation);
    // Feet stand flat at bind in every rig, while their "bone" (ankle to toe, ball or end site)
    // is not comparable between rigs (DeepMimic's end site is the sole's toe corner, CMU's child
    // the ball of the foot): feet keep the plain bind-relative delta, so flat stays flat.
    Quat align{1.0, 0.0, 0.0, 0.0};
    if (options.alignBindDirections && slot != Slot::Pelvis && slot != Slot::FootL && slot != Slot::FootR) {
      const std::optional<Vec3> sd = boneDirection(sourceSkeleton, sourceMap, mapper.sourceBind, slot);
      const std::optional<Vec3> td = boneDirection(targetSkeleton, targetMap, targetBind, slot);
      if (sd && td) align = rotationBetween(*td, mapper.targetFromSource * *sd);
    }
    mapper.reference[static_cast<size_t>(s)] =
        normalizeOrIdentity(align * targetBind[static_cast<size_t>(tj)].rotation);
  }

  // Hip heights of both reference poses (the target's: its bind with aligned bone directions).
  std::vector<Transform> locals(targetCount);
  std::vector<Transform> models(targetCount);
  mapper.map(mapper.sourceBind, 1.0, locals, models);
  const double sourceHip = hipHeightAboveFeet(sourceSkeleton, sourceMap, mapper.sourceBind);
  const double targetHip = hipHeightAboveFeet(targetSkeleton, targetMap, models);
  if (!(sourceHip > 1e-6) || !(targetHip > 1e-6)) {
    return Error{label + ": a rig's pelvis is not above its feet in the reference pose (hip heights " +
                 std::to_string(sourceHip) + " and " + std::to_string(targetHip) + " m)"};
  }
  const double ratio = options.hipHeightRatio > 0.0 ? options.hipHeightRatio : targetHip / sourceHip;

  Clip out;
  out.name = source.name + " (retargeted)";
  out.jointCount = targetSkeleton.jointCount();
  out.frameCount = source.frameCount;
  out.frameRate = source.frameRate;
  out.keys.resize(static_cast<size_t>(out.frameCount) * targetCount);
  std::vector<Transform> sourceModels(sourceCount);
  for (int f = 0; f < source.frameCount; ++f) {
    localToModel(sourceSkeleton, source.frame(f), sourceModels);
    const std::span<Transform> keys(out.keys.data() + static_cast<size_t>(f) * targetCount, targetCount);
    mapper.map(sourceModels, ratio, keys, models);
    if (f > 0) {
      const Transform* previous = out.keys.data() + static_cast<size_t>(f - 1) * targetCount;
      for (size_t j = 0; j < targetCount; ++j)
        keys[j].rotation = alignHemisphere(keys[j].rotation, previous[j].rotation);
    }
  }

  if (report != nullptr) {
    report->hipHeightRatio = ratio;
    report->sourceHipHeight = sourceHip;
    report->targetHipHeight = targetHip;
    report->targetFromSourceModel = mapper.targetFromSource;
    report->mappedSlots = mapped;
  }
  return out;
}

}  // namespace handoff
