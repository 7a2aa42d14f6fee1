// Completing get-up clips that end below standing, and preparing a character's get-up clips
// (see handoff/recovery.h).
#include "handoff/recovery.h"

#include "recovery/leg_stance.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace handoff {
namespace {

using recovery_detail::hipHeightAboveFeet;
using recovery_detail::lowestLegPoint;

using recovery_detail::clipLabel;

constexpr std::array<Slot, 7> kRequiredSlots{Slot::Pelvis,    Slot::UpperLegL, Slot::UpperLegR,
                                             Slot::LowerLegL, Slot::LowerLegR, Slot::FootL,
                                             Slot::FootR};

/// Knee bend of one leg: the angle between thigh (hip -> knee) and shin (knee -> ankle). [rad]
double kneeBend(const HumanoidMap& map, std::span<const Transform> models, Slot hip, Slot knee, Slot ankle) {
  const auto at = [&](Slot s) { return models[static_cast<size_t>(map[s])].translation; };
  const Vec3 thigh = at(knee) - at(hip);
  const Vec3 shin = at(ankle) - at(knee);
  const double lengths = glm::length(thigh) * glm::length(shin);
  if (!(lengths > 1e-12)) return 0.0;
  return std::acos(std::clamp(glm::dot(thigh, shin) / lengths, -1.0, 1.0));
}

double worseKneeBend(const HumanoidMap& map, std::span<const Transform> models) {
  return std::max(kneeBend(map, models, Slot::UpperLegL, Slot::LowerLegL, Slot::FootL),
                  kneeBend(map, models, Slot::UpperLegR, Slot::LowerLegR, Slot::FootR));
}

/// A point the tail's speed bound tracks: a joint and an offset in its frame.
struct TrackedPoint {
  int joint;
  Vec3 offset;
};

/// The pelvis, and every joint and end site under either foot slot.
std::vector<TrackedPoint> trackedPoints(const Skeleton& skeleton, const HumanoidMap& map) {
  std::vector<TrackedPoint> points{{map[Slot::Pelvis], Vec3{0.0}}};
  const std::vector<char> inFoot = recovery_detail::jointsUnder(skeleton, map, Slot::FootL, Slot::FootR);
  for (int j = 0; j < skeleton.jointCount(); ++j) {
    if (!inFoot[static_cast<size_t>(j)]) continue;
    points.push_back({j, Vec3{0.0}});
    const Vec3 tip = skeleton.endSiteOffset[static_cast<size_t>(j)];
    if (glm::length(tip) > 0.0) points.push_back({j, tip});
  }
  return points;
}

/// Horizontal standing forward of the pelvis in a model pose (zero when vertical).
Vec3 pelvisForward(std::span<const Transform> models, int pelvis, const Vec3& forwardInPelvis) {
  Vec3 f = models[static_cast<size_t>(pelvis)].rotation * forwardInPelvis;
  f.y = 0.0;
  const double len = glm::length(f);
  return len > 1e-6 && std::isfinite(len) ? f / len : Vec3{0.0};
}

double uprightness(std::span<const Transform> models, int pelvis, const Vec3& upInPelvis) {
  return glm::dot(models[static_cast<size_t>(pelvis)].rotation * upInPelvis, Vec3{0.0, 1.0, 0.0});
}

/// The tail's frames 1..frames (weight 1 - (1 - k / frames)^2) from `last` to `target`, with
/// rotations kept in the hemisphere of the previous frame (Clip's key continuity).
void buildTail(std::span<const Transform> last, std::span<const Transform> target, int frames,
               std::vector<Transform>& tail) {
  const size_t n = last.size();
  tail.resize(n * static_cast<size_t>(frames));
  for (int k = 1; k <= frames; ++k) {
    const double s = static_cast<double>(k) / frames;
    const double w = 1.0 - (1.0 - s) * (1.0 - s);
    const std::span<Transform> out(tail.data() + n * static_cast<size_t>(k - 1), n);
    blendPoses(last, target, w, out);
    const std::span<const Transform> previous =
        k == 1 ? last : std::span<const Transform>(tail.data() + n * static_cast<size_t>(k - 2), n);
    for (size_t j = 0; j < n; ++j) {
      if (glm::dot(out[j].rotation, previous[j].rotation) < 0.0) out[j].rotation = -out[j].rotation;
    }
  }
}

/// Fastest tracked point move between consecutive frames (the last clip frame, then the tail),
/// over the frame time. [m/s]
double worstTailSpeed(const Skeleton& skeleton, std::span<const TrackedPoint> points,
                      std::span<const Transform> last, const std::vector<Transform>& tail, int frames,
                      double frameRate) {
  const size_t n = last.size();
  std::vector<Transform> models(n);
  std::vector<Vec3> before(points.size()), now(points.size());
  const auto track = [&](std::span<const Transform> locals, std::vector<Vec3>& out) {
    localToModel(skeleton, locals, models);
    for (size_t i = 0; i < points.size(); ++i) {
      out[i] = models[static_cast<size_t>(points[i].joint)].transformPoint(points[i].offset);
    }
  };
  track(last, before);
  double worst = 0.0;
  for (int k = 0; k < frames; ++k) {
    track(std::span<const Transform>(tail.data() + n * static_cast<size_t>(k), n), now);
    for (size_t i = 0; i < points.size(); ++i)
      worst = std::max(worst, glm::length(now[i] - before[i]) * frameRate);
    std::swap(before, now);
  }
  return worst;
}

}  // namespace

Status validateGetUpCompletionSettings(const GetUpCompletionSettings& s) {
  const auto positive = [](double v) { return std::isfinite(v) && v > 0.0; };
  const auto nonNegative = [](double v) { return std::isfinite(v) && v >= 0.0; };
  if (!nonNegative(s.heightTolerance)) return Error{"heightTolerance must be finite and >= 0"};
  if (!nonNegative(s.kneeTolerance)) return Error{"kneeTolerance must be finite and >= 0"};
  if (!positive(s.minDuration)) return Error{"minDuration must be finite and > 0"};
  if (!std::isfinite(s.maxDuration) || s.maxDuration < s.minDuration) {
    return Error{"maxDuration must be finite and >= minDuration"};
  }
  if (!positive(s.maxPointSpeed)) return Error{"maxPointSpeed must be finite and > 0"};
  if (!positive(s.minRiseSpeed)) return Error{"minRiseSpeed must be finite and > 0"};
  return {};
}

Result<Clip> completeGetUpClip(const Clip& clip, const Skeleton& skeleton, const HumanoidMap& map,
                               std::span<const Transform> standingLocals,
                               const GetUpCompletionSettings& settings, GetUpCompletion* report) {
  if (Status s = clip.validate(skeleton); !s.ok()) return Error{clipLabel(clip) + ": " + s.error()};
  if (clip.frameCount < 1) return Error{clipLabel(clip) + ": no frames"};
  if (Status s = validateGetUpCompletionSettings(settings); !s.ok()) {
    return Error{clipLabel(clip) + ": completion settings: " + s.error()};
  }
  const int n = skeleton.jointCount();
  for (Slot slot : kRequiredSlots) {
    const int j = map[slot];
    if (j < 0 || j >= n) {
      return Error{clipLabel(clip) + ": the " + std::string(slotName(slot)) +
                   " slot is not mapped (completion measures the pelvis and both legs)"};
    }
  }
  if (standingLocals.size() != static_cast<size_t>(n)) {
    return Error{clipLabel(clip) + ": the standing reference has " + std::to_string(standingLocals.size()) +
                 " joints, the skeleton " + std::to_string(n)};
  }
  for (int j = 0; j < n; ++j) {
    const Transform& t = standingLocals[static_cast<size_t>(j)];
    if (!isFinite(t) || std::abs(glm::length(t.rotation) - 1.0) > 1e-3) {
      return Error{clipLabel(clip) + ": the standing reference's joint '" +
                   skeleton.jointNames[static_cast<size_t>(j)] + "' is not finite or not a unit rotation"};
    }
  }
  Result<Vec3> modelForward = modelForwardFromMap(skeleton, map);
  if (!modelForward) return Error{clipLabel(clip) + ": " + modelForward.error()};

  const auto N = static_cast<size_t>(n);
  const int pelvis = map[Slot::Pelvis];
  const auto P = static_cast<size_t>(pelvis);
  std::vector<Transform> bind(N), lastModels(N), standing(N), before(N);
  localToModel(skeleton, skeleton.restLocal, bind);
  const int lastFrame = clip.frameCount - 1;
  const std::span<const Transform> last = clip.frame(lastFrame);
  localToModel(skeleton, last, lastModels);
  localToModel(skeleton, standingLocals, standing);
  const Vec3 forwardInPelvis = glm::conjugate(bind[P].rotation) * *modelForward;
  const Vec3 upInPelvis = glm::conjugate(bind[P].rotation) * Vec3{0.0, 1.0, 0.0};
  const double upright = std::cos(kPi / 4);
  if (!(uprightness(standing, pelvis, upInPelvis) >= upright)) {
    return Error{clipLabel(clip) + ": the standing reference's pelvis is more than 45 degrees from upright"};
  }
  if (!(uprightness(lastModels, pelvis, upInPelvis) >= upright)) {
    return Error{clipLabel(clip) +
                 ": the pelvis is more than 45 degrees from upright at the last frame (frame " +
                 std::to_string(lastFrame) + "); a get-up clip must end on its feet to be completed"};
  }
  const Vec3 standingForward = pelvisForward(standing, pelvis, forwardInPelvis);
  const Vec3 lastForward = pelvisForward(lastModels, pelvis, forwardInPelvis);
  if (glm::length(standingForward) == 0.0 || glm::length(lastForward) == 0.0) {
    return Error{clipLabel(clip) +
                 ": the pelvis forward is vertical in the standing reference or at the last frame"};
  }

  GetUpCompletion r;
  r.endHipHeight = hipHeightAboveFeet(skeleton, map, lastModels);
  r.referenceHipHeight = hipHeightAboveFeet(skeleton, map, standing);
  r.shortfall = r.referenceHipHeight - r.endHipHeight;
  r.endKneeBend = worseKneeBend(map, lastModels);
  r.referenceKneeBend = worseKneeBend(map, standing);
  const int back = std::min(lastFrame, std::max(1, static_cast<int>(std::lround(0.1 * clip.frameRate))));
  if (back > 0) {
    localToModel(skeleton, clip.frame(lastFrame - back), before);
    r.endRiseSpeed = (lastModels[P].translation.y - before[P].translation.y) * clip.frameRate / back;
  }
  const bool endsShort =
      r.shortfall > settings.heightTolerance || r.endKneeBend - r.referenceKneeBend > settings.kneeTolerance;
  if (!settings.enabled || !endsShort) {
    if (report != nullptr) *report = r;
    return clip;
  }

  // The reference placed under the last frame: its top-level joints premultiplied by a yaw about
  // Up and a translation, so its pelvis faces the last frame's forward, stands over the last
  // frame's pelvis and its lowest leg point is at the last frame's height.
  Transform place;
  place.rotation = yawBetween(standingForward, lastForward);
  const Vec3 turnedPelvis = place.rotation * standing[P].translation;
  place.translation =
      Vec3{lastModels[P].translation.x - turnedPelvis.x,
           lowestLegPoint(skeleton, map, lastModels) - lowestLegPoint(skeleton, map, standing),
           lastModels[P].translation.z - turnedPelvis.z};
  std::vector<Transform> target(standingLocals.begin(), standingLocals.end());
  for (int j = 0; j < n; ++j) {
    if (skeleton.parents[static_cast<size_t>(j)] == kNoParent)
      target[static_cast<size_t>(j)] = place * target[static_cast<size_t>(j)];
  }

  // Duration: the pelvis rises no faster than the clip did (the ease starts at twice its mean
  // speed), every tracked point within maxPointSpeed (first guess from the straight distance,
  // then measured on the built frames).
  const std::vector<TrackedPoint> points = trackedPoints(skeleton, map);
  std::vector<Transform> targetModels(N);
  localToModel(skeleton, target, targetModels);
  double farthest = 0.0;
  for (const TrackedPoint& p : points) {
    const auto J = static_cast<size_t>(p.joint);
    farthest = std::max(farthest, glm::length(targetModels[J].transformPoint(p.offset) -
                                              lastModels[J].transformPoint(p.offset)));
  }
  const double riseSpeed = std::max(r.endRiseSpeed, settings.minRiseSpeed);
  double duration = std::max({settings.minDuration, 2.0 * std::abs(r.shortfall) / riseSpeed,
                              2.0 * farthest / settings.maxPointSpeed});
  duration = std::min(duration, settings.maxDuration);
  std::vector<Transform> tail;
  int frames = 0;
  for (int round = 0; round < 12; ++round) {
    frames = std::max(1, static_cast<int>(std::ceil(duration * clip.frameRate - 1e-9)));
    buildTail(last, target, frames, tail);
    r.worstTailSpeed = worstTailSpeed(skeleton, points, last, tail, frames, clip.frameRate);
    r.boundMet = r.worstTailSpeed <= settings.maxPointSpeed;
    if (r.boundMet || duration >= settings.maxDuration) break;
    duration = std::min(settings.maxDuration,
                        duration * std::max(1.05, 1.02 * r.worstTailSpeed / settings.maxPointSpeed));
  }
  r.tailAdded = true;
  r.tailFrames = frames;
  r.tailDuration = frames / clip.frameRate;

  Clip out = clip;
  out.keys.insert(out.keys.end(), tail.begin(), tail.end());
  out.frameCount += frames;
  if (report != nullptr) *report = r;
  return out;
}

Result<int> standingReferenceClip(std::span<const Clip> clips, const Skeleton& skeleton,
                                  const HumanoidMap& map) {
  if (clips.empty()) return Error{"no get-up clips to take a standing reference from"};
  for (Slot slot : {Slot::Pelvis, Slot::UpperLegL, Slot::UpperLegR}) {
    if (map[slot] < 0 || map[slot] >= skeleton.jointCount()) {
      return Error{"standing reference: the " + std::string(slotName(slot)) + " slot is not mapped"};
    }
  }
  int best = -1;
  double tallest = -std::numeric_limits<double>::infinity();
  std::vector<Transform> models(static_cast<size_t>(skeleton.jointCount()));
  for (size_t i = 0; i < clips.size(); ++i) {
    if (Status s = clips[i].validate(skeleton); !s.ok()) return Error{clipLabel(clips[i]) + ": " + s.error()};
    localToModel(skeleton, clips[i].frame(clips[i].frameCount - 1), models);
    const double hip = hipHeightAboveFeet(skeleton, map, models);
    if (hip > tallest) {
      tallest = hip;
      best = static_cast<int>(i);
    }
  }
  return best;
}

Result<std::vector<GetUpClip>> prepareGetUpClips(std::span<const Clip> sourceClips,
                                                 const Skeleton& sourceSkeleton, const HumanoidMap& sourceMap,
                                                 const Skeleton& targetSkeleton, const HumanoidMap& targetMap,
                                                 const GetUpPrepareOptions& options) {
  std::vector<Transform> standing = options.standingLocals;
  if (standing.empty()) {
    Result<int> reference = standingReferenceClip(sourceClips, sourceSkeleton, sourceMap);
    if (!reference) return Error{reference.error()};
    const Clip& c = sourceClips[static_cast<size_t>(*reference)];
    const std::span<const Transform> f = c.frame(c.frameCount - 1);
    standing.assign(f.begin(), f.end());
  }
  const bool sameRig = sourceSkeleton.jointNames == targetSkeleton.jointNames &&
                       sourceSkeleton.parents == targetSkeleton.parents;
  std::vector<GetUpClip> out;
  out.reserve(sourceClips.size());
  for (const Clip& source : sourceClips) {
    GetUpCompletion completion;
    Result<Clip> completed =
        completeGetUpClip(source, sourceSkeleton, sourceMap, standing, options.completion, &completion);
    if (!completed) return Error{completed.error()};
    GetUpClip g;
    if (sameRig) {
      g.clip = std::move(completed).value();
    } else {
      Result<Clip> retargeted =
          retargetClip(*completed, sourceSkeleton, sourceMap, targetSkeleton, targetMap, options.retarget);
      if (!retargeted) return Error{clipLabel(source) + ": " + retargeted.error()};
      g.clip = std::move(retargeted).value();
    }
    Result<GetUpClipInfo> info = computeGetUpClipInfo(g.clip, targetSkeleton, targetMap, options.info);
    if (!info) return Error{info.error()};
    g.info = *info;
    g.info.completion = completion;
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace handoff
