// Get-up clip metadata, root placement, pose capture and the display transition
// (SPEC.md section 4). The root definition and a_B are explained in handoff/recovery.h.
#include "handoff/recovery.h"

#include "recovery/leg_stance.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <string>
#include <vector>

namespace handoff {
namespace {

Vec3 horizontal(const Vec3& v) { return v - kRecoveryUp * glm::dot(v, kRecoveryUp); }

/// Horizontal part of `v`, normalised; false when not finite or shorter than minLength.
bool horizontalUnit(const Vec3& v, double minLength, Vec3* out, double* length = nullptr) {
  if (!isFinite(v)) return false;
  const Vec3 h = horizontal(v);
  const double len = glm::length(h);
  if (length != nullptr) *length = len;
  if (!std::isfinite(len) || len < minLength) return false;
  *out = h / len;
  return true;
}

using recovery_detail::clipLabel;

}  // namespace

Quat yawBetween(const Vec3& fromForward, const Vec3& toForward) {
  const Vec3 a = horizontal(fromForward);
  const Vec3 b = horizontal(toForward);
  const double angle = std::atan2(glm::dot(glm::cross(a, b), kRecoveryUp), glm::dot(a, b));
  if (!std::isfinite(angle)) return Quat{1.0, 0.0, 0.0, 0.0};
  return glm::angleAxis(angle, kRecoveryUp);
}

Result<Vec3> modelForwardFromMap(const Skeleton& skeleton, const HumanoidMap& map) {
  const int left = map[Slot::UpperLegL];
  const int right = map[Slot::UpperLegR];
  if (left < 0 || right < 0 || left >= skeleton.jointCount() || right >= skeleton.jointCount()) {
    return Error{"cannot derive the character's forward: upper_leg_l and upper_leg_r must be mapped"};
  }
  std::vector<Transform> models(static_cast<size_t>(skeleton.jointCount()));
  localToModel(skeleton, skeleton.restLocal, models);
  const Vec3 rightAxis =
      models[static_cast<size_t>(right)].translation - models[static_cast<size_t>(left)].translation;
  Vec3 forward;
  if (!horizontalUnit(glm::cross(kRecoveryUp, rightAxis), 1e-6, &forward)) {
    return Error{"cannot derive the character's forward: hip joints '" +
                 skeleton.jointNames[static_cast<size_t>(left)] + "' and '" +
                 skeleton.jointNames[static_cast<size_t>(right)] +
                 "' do not lie side by side in the bind pose"};
  }
  return forward;
}

Result<GetUpClipInfo> computeGetUpClipInfo(const Clip& clip, const Skeleton& skeleton, const HumanoidMap& map,
                                           const GetUpClipOptions& options) {
  if (Status s = clip.validate(skeleton); !s.ok()) return Error{clipLabel(clip) + ": " + s.error()};
  const int n = skeleton.jointCount();
  const int pelvis = map[Slot::Pelvis];
  const int chest = map[Slot::Chest];
  if (pelvis < 0 || pelvis >= n) return Error{clipLabel(clip) + ": the pelvis slot is not mapped"};
  if (chest < 0 || chest >= n) return Error{clipLabel(clip) + ": the chest slot is not mapped"};
  if (!std::isfinite(options.groundHeight)) return Error{clipLabel(clip) + ": groundHeight is not finite"};

  Vec3 modelForward;
  if (glm::length(options.modelForward) > 0.0) {
    if (!horizontalUnit(options.modelForward, 1e-6, &modelForward)) {
      return Error{clipLabel(clip) + ": modelForward is not finite or is vertical"};
    }
  } else {
    Result<Vec3> f = modelForwardFromMap(skeleton, map);
    if (!f.ok()) return Error{clipLabel(clip) + ": " + f.error()};
    modelForward = *f;
  }

  std::vector<Transform> bind(static_cast<size_t>(n));
  std::vector<Transform> first(static_cast<size_t>(n));
  std::vector<Transform> last(static_cast<size_t>(n));
  localToModel(skeleton, skeleton.restLocal, bind);
  localToModel(skeleton, clip.frame(0), first);
  localToModel(skeleton, clip.frame(clip.frameCount - 1), last);
  const auto P = static_cast<size_t>(pelvis);
  const auto C = static_cast<size_t>(chest);

  // The character's forward carried by the pelvis (and chest) frames.
  const Vec3 forwardInPelvis = glm::conjugate(bind[P].rotation) * modelForward;
  const Vec3 forwardInChest = glm::conjugate(bind[C].rotation) * modelForward;

  // The clip must end standing: the pelvis's bind up axis within 45 degrees of Up.
  const Vec3 upInPelvis = glm::conjugate(bind[P].rotation) * kRecoveryUp;
  const double endUpright = glm::dot(last[P].rotation * upInPelvis, kRecoveryUp);
  if (!(endUpright >= std::cos(kPi / 4))) {
    return Error{clipLabel(clip) + ": the pelvis is tilted " +
                 std::to_string(std::acos(std::clamp(endUpright, -1.0, 1.0)) * 180.0 / kPi) +
                 " degrees from upright at the last frame (frame " + std::to_string(clip.frameCount - 1) +
                 "); a get-up clip must end standing"};
  }

  // Standing forward at the last frame, clip space.
  Vec3 standingForward;
  if (!horizontalUnit(last[P].rotation * forwardInPelvis, 1e-3, &standingForward)) {
    return Error{clipLabel(clip) + ": the pelvis forward is vertical at the last frame (frame " +
                 std::to_string(clip.frameCount - 1) + "); a get-up clip must end standing"};
  }

  // Root R: ground projection of the last-frame pelvis, model forward turned onto the standing
  // forward (yaw only).
  Transform clipFromRoot;
  clipFromRoot.rotation = yawBetween(modelForward, standingForward);
  clipFromRoot.translation = Vec3{last[P].translation.x, options.groundHeight, last[P].translation.z};

  GetUpClipInfo info;
  info.pelvisJoint = pelvis;
  info.rootFromClip = clipFromRoot.inverse();
  info.rootFromPelvis = info.rootFromClip * first[P];
  info.standingForwardInPelvis = glm::normalize(glm::conjugate(first[P].rotation) * standingForward);
  info.forwardInRoot = modelForward;
  info.startChestUpDot = glm::dot(glm::normalize(first[C].rotation * forwardInChest), kRecoveryUp);
  FacingClassifier classifier;
  info.startFacing = classifier.update(info.startChestUpDot).candidate;
  info.endPelvisHeight = last[P].translation.y - options.groundHeight;
  info.travel = glm::length(horizontal(info.rootFromPelvis.translation));
  return info;
}

void sampleGetUpInRoot(const Clip& clip, const Skeleton& skeleton, const GetUpClipInfo& info, double clipTime,
                       std::span<Transform> locals) {
  assert(clip.jointCount == skeleton.jointCount() && "clip and skeleton differ");
  clip.sample(clipTime, WrapMode::Clamp, locals);
  for (int j = 0; j < skeleton.jointCount(); ++j) {
    if (skeleton.parents[static_cast<size_t>(j)] == kNoParent) {
      locals[static_cast<size_t>(j)] = info.rootFromClip * locals[static_cast<size_t>(j)];
    }
  }
}

// ------------------------------------------------------------------------------------------

const char* facingSourceName(FacingSource source) {
  switch (source) {
    case FacingSource::PelvisProjection:
      return "pelvis_projection";
    case FacingSource::PreFallForward:
      return "pre_fall_forward";
    case FacingSource::LevelDefault:
      return "level_default";
    case FacingSource::WorldAxes:
      return "world_axes";
  }
  return "unknown";
}

RootPlacement placeRoot(const Transform& worldFromPelvis, const GetUpClipInfo& info,
                        const Vec3& preFallForward, const Vec3& levelDefaultForward,
                        const RootPlacementSettings& settings) {
  RootPlacement placement;
  if (!isFinite(worldFromPelvis) || !isFinite(info.rootFromPelvis) ||
      !isFinite(info.standingForwardInPelvis) || !std::isfinite(settings.minProjectionLength)) {
    return placement;
  }
  const double minLength = std::max(settings.minProjectionLength, 1e-12);
  Vec3 forward;
  double length = 0.0;
  if (horizontalUnit(worldFromPelvis.rotation * info.standingForwardInPelvis, minLength, &forward, &length)) {
    placement.source = FacingSource::PelvisProjection;
  } else if (horizontalUnit(preFallForward, minLength, &forward)) {
    placement.source = FacingSource::PreFallForward;
  } else if (horizontalUnit(levelDefaultForward, minLength, &forward)) {
    placement.source = FacingSource::LevelDefault;
  } else {
    placement.source = FacingSource::WorldAxes;
    forward = Vec3{0.0};
  }
  placement.projectionLength = length;

  Quat worldFromRootRotation{1.0, 0.0, 0.0, 0.0};
  if (placement.source != FacingSource::WorldAxes) {
    worldFromRootRotation = yawBetween(info.forwardInRoot, forward);
  }
  placement.worldFromRoot.rotation = worldFromRootRotation;
  placement.worldFromRoot.translation =
      worldFromPelvis.translation - worldFromRootRotation * info.rootFromPelvis.translation;
  Vec3 standing;
  placement.worldForward = horizontalUnit(worldFromRootRotation * info.forwardInRoot, 1e-12, &standing)
                               ? standing
                               : Vec3{0.0, 0.0, 1.0};
  placement.valid = true;
  return placement;
}

// ------------------------------------------------------------------------------------------

bool capturePose(const Skeleton& skeleton, std::span<const Transform> worldFromBones,
                 const Transform& worldFromRoot, std::span<Transform> locals) {
  const int n = skeleton.jointCount();
  assert(static_cast<int>(worldFromBones.size()) >= n && static_cast<int>(locals.size()) >= n &&
         "pose span too short");
  if (!isFinite(worldFromRoot)) return false;
  for (int j = 0; j < n; ++j) {
    if (!isFinite(worldFromBones[static_cast<size_t>(j)])) return false;
  }
  const Transform rootFromWorld = worldFromRoot.inverse();
  for (int j = 0; j < n; ++j) {
    const int parent = skeleton.parents[static_cast<size_t>(j)];
    const Transform parentFromWorld =
        parent == kNoParent ? rootFromWorld : worldFromBones[static_cast<size_t>(parent)].inverse();
    locals[static_cast<size_t>(j)] = parentFromWorld * worldFromBones[static_cast<size_t>(j)];
  }
  return true;
}

double transitionWeight(double time, const TransitionSettings& settings) {
  return transitionWeight(time, TransitionPlan::fixed(settings));
}

double transitionWeight(double time, const TransitionPlan& plan) {
  if (std::isnan(time)) return 0.0;  // Rejected: keep showing the captured pose.
  if (!(plan.duration > 0.0) || !std::isfinite(plan.duration)) return time > 0.0 ? 1.0 : 0.0;
  return std::clamp(time / plan.duration, 0.0, 1.0);
}

double transitionClipTime(double time, const TransitionPlan& plan) {
  if (std::isnan(time)) return 0.0;
  const double hold = std::isfinite(plan.hold) ? std::max(plan.hold, 0.0) : 0.0;
  return std::max(time - hold, 0.0);
}

TransitionPlan TransitionPlan::fixed(const TransitionSettings& settings) {
  TransitionPlan plan;
  plan.duration = settings.duration;
  return plan;
}

void transitionPose(std::span<const Transform> captured, const Clip& clip, const Skeleton& skeleton,
                    const GetUpClipInfo& info, double time, const TransitionSettings& settings,
                    std::span<Transform> out) {
  transitionPose(captured, clip, skeleton, info, time, TransitionPlan::fixed(settings), out);
}

void transitionPose(std::span<const Transform> captured, const Clip& clip, const Skeleton& skeleton,
                    const GetUpClipInfo& info, double time, const TransitionPlan& plan,
                    std::span<Transform> out) {
  const auto n = static_cast<size_t>(skeleton.jointCount());
  assert(captured.size() >= n && out.size() >= n && "pose span too short");
  sampleGetUpInRoot(clip, skeleton, info, transitionClipTime(time, plan), out);
  blendPoses(captured.first(n), std::span<const Transform>(out.first(n)), transitionWeight(time, plan),
             out.first(n));
}

void TransitionScratch::resize(int jointCount) {
  const auto n = static_cast<size_t>(std::max(jointCount, 0));
  pose.resize(n);
  models.resize(n);
  clipPose.resize(n);
  clipModels.resize(n);
}

namespace {

/// Worst per-frame excess speed of the tracked joints over the frames of `plan` (see
/// planTransition), and the joint it belongs to.
double worstExcessSpeed(std::span<const Transform> captured, const Clip& clip, const Skeleton& skeleton,
                        const GetUpClipInfo& info, std::span<const int> tracked, double dt,
                        const TransitionPlan& plan, TransitionScratch& scratch, int* worstJoint) {
  std::array<Vec3, kMaxTrackedJoints> shown{}, clipShown{};
  const size_t count = std::min(tracked.size(), shown.size());
  // Frame 0: the captured pose and the clip's first frame.
  localToModel(skeleton, captured, scratch.models);
  sampleGetUpInRoot(clip, skeleton, info, 0.0, scratch.clipPose);
  localToModel(skeleton, scratch.clipPose, scratch.clipModels);
  for (size_t i = 0; i < count; ++i) {
    shown[i] = scratch.models[static_cast<size_t>(tracked[i])].translation;
    clipShown[i] = scratch.clipModels[static_cast<size_t>(tracked[i])].translation;
  }
  double worst = 0.0;
  // After the weight reaches 1 the display is the clip itself: nothing in excess.
  const int frames = static_cast<int>(std::ceil(plan.duration / dt - 1e-9));
  for (int k = 1; k <= frames; ++k) {
    const double t = k * dt;
    transitionPose(captured, clip, skeleton, info, t, plan, scratch.pose);
    localToModel(skeleton, scratch.pose, scratch.models);
    sampleGetUpInRoot(clip, skeleton, info, transitionClipTime(t, plan), scratch.clipPose);
    localToModel(skeleton, scratch.clipPose, scratch.clipModels);
    for (size_t i = 0; i < count; ++i) {
      const auto j = static_cast<size_t>(tracked[i]);
      const Vec3 p = scratch.models[j].translation;
      const Vec3 c = scratch.clipModels[j].translation;
      const double excess = (glm::length(p - shown[i]) - glm::length(c - clipShown[i])) / dt;
      if (excess > worst) {
        worst = excess;
        *worstJoint = tracked[i];
      }
      shown[i] = p;
      clipShown[i] = c;
    }
  }
  return worst;
}

}  // namespace

TransitionPlan planTransition(std::span<const Transform> captured, const Clip& clip, const Skeleton& skeleton,
                              const GetUpClipInfo& info, std::span<const int> trackedJoints, double dt,
                              const TransitionSettings& settings, TransitionScratch& scratch) {
  TransitionPlan plan = TransitionPlan::fixed(settings);
  const auto n = static_cast<size_t>(skeleton.jointCount());
  const bool valid = std::isfinite(dt) && dt > 0.0 && std::isfinite(settings.duration) &&
                     settings.duration > 0.0 && std::isfinite(settings.maxPointSpeed) &&
                     settings.maxPointSpeed > 0.0 && std::isfinite(settings.maxDuration) &&
                     captured.size() >= n && scratch.pose.size() >= n && scratch.models.size() >= n &&
                     scratch.clipPose.size() >= n && scratch.clipModels.size() >= n &&
                     !trackedJoints.empty() &&
                     std::all_of(trackedJoints.begin(), trackedJoints.end(),
                                 [&](int j) { return j >= 0 && static_cast<size_t>(j) < n; });
  if (!valid) return plan;
  const double maxDuration = std::max(settings.maxDuration, settings.duration);
  // The excess falls about as 1 / duration (the blend's distance is fixed), so each retry scales
  // the duration by the measured excess over the bound, with a margin; a few rounds suffice.
  for (int round = 0; round < 12; ++round) {
    plan.hold = plan.duration - settings.duration;
    plan.worstPointSpeed =
        worstExcessSpeed(captured, clip, skeleton, info, trackedJoints, dt, plan, scratch, &plan.worstJoint);
    plan.boundMet = plan.worstPointSpeed <= settings.maxPointSpeed;
    if (plan.boundMet || plan.duration >= maxDuration) break;
    const double scale = std::max(1.1, 1.05 * plan.worstPointSpeed / settings.maxPointSpeed);
    plan.duration = std::min(maxDuration, plan.duration * scale);
  }
  return plan;
}

}  // namespace handoff
