// Import: what every import ends with (import_detail::finish): the unit scale, the up axis of a
// BVH whose offsets are a local-frame stick (orientBvh), hemisphere-continuous rotations, the hip
// height. Split from import.cpp by concept.
#include "handoff/import.h"
#include "rig/import_internal.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace handoff::import_detail {
namespace {

constexpr double kTargetHipHeight = 0.95;  // [m] a typical adult's rest hip height

// ------------------------------------------------------------------------------------------------
// Units, hemisphere continuity and final checks.

void scaleTranslations(ImportedAsset& asset, double scale) {
  for (Transform& t : asset.skeleton.restLocal) t.translation *= scale;
  for (Vec3& v : asset.skeleton.endSiteOffset) v *= scale;
  for (Clip& clip : asset.clips) {
    for (Transform& t : clip.keys) t.translation *= scale;
  }
  for (SkinnedMesh& mesh : asset.meshes) {
    for (Vec3& p : mesh.positions) p *= scale;
  }
}

void makeHemisphereContinuous(Clip& clip) {
  for (int f = 1; f < clip.frameCount; ++f) {
    for (int j = 0; j < clip.jointCount; ++j) {
      const size_t previous =
          static_cast<size_t>(f - 1) * static_cast<size_t>(clip.jointCount) + static_cast<size_t>(j);
      const size_t current = previous + static_cast<size_t>(clip.jointCount);
      clip.keys[current].rotation =
          alignHemisphere(clip.keys[current].rotation, clip.keys[previous].rotation);
    }
  }
}

/// The legs of a pose: the longest pair of sibling chains of near-equal length pointing the same
/// way whose far ends are the extreme points of the whole skeleton in that direction (the feet are
/// the lowest points of a standing character; hanging arms are not, the feet lie beyond them).
/// Branch joints deeper than 16 are not considered (legs branch near the root; it bounds the work).
struct LegPair {
  int branch = -1;  ///< The joint the two legs hang from.
  Vec3 down{0.0, -1.0, 0.0};
};

std::optional<LegPair> findLegPair(const Skeleton& skeleton, std::span<const Transform> models) {
  const int n = skeleton.jointCount();
  std::vector<int> depth(static_cast<size_t>(n), 0);
  std::vector<int> end(static_cast<size_t>(n), n);  // subtree of j = [j, end[j]) in depth-first order
  for (int j = 0; j < n; ++j) {
    const int p = skeleton.parents[static_cast<size_t>(j)];
    depth[static_cast<size_t>(j)] = p == kNoParent ? 0 : depth[static_cast<size_t>(p)] + 1;
  }
  {
    std::vector<int> open;
    for (int j = 0; j < n; ++j) {
      while (!open.empty() && depth[static_cast<size_t>(open.back())] >= depth[static_cast<size_t>(j)]) {
        end[static_cast<size_t>(open.back())] = j;
        open.pop_back();
      }
      const int p = skeleton.parents[static_cast<size_t>(j)];
      if (p != kNoParent && (open.empty() || open.back() != p)) return std::nullopt;  // not depth-first
      open.push_back(j);
    }
  }
  const auto point = [&](int j, bool tip) {
    const Transform& m = models[static_cast<size_t>(j)];
    return tip ? m.transformPoint(skeleton.endSiteOffset[static_cast<size_t>(j)]) : m.translation;
  };
  struct Reach {
    Vec3 v{0.0};
    double length = 0.0;
  };
  struct Candidate {
    double score;
    int branch;
    Vec3 down;
    Vec3 a, b;  // the two far points
  };
  std::vector<Candidate> candidates;
  std::vector<int> kids;
  for (int j = 0; j < n; ++j) {
    if (depth[static_cast<size_t>(j)] > 16) continue;
    kids.clear();
    for (int c = j + 1; c < end[static_cast<size_t>(j)]; c = end[static_cast<size_t>(c)]) kids.push_back(c);
    if (kids.size() < 2) continue;
    const Vec3 origin = models[static_cast<size_t>(j)].translation;
    std::vector<Reach> reach(kids.size());
    for (size_t k = 0; k < kids.size(); ++k) {
      for (int i = kids[k]; i < end[static_cast<size_t>(kids[k])]; ++i) {
        for (const bool tip : {false, true}) {
          const Vec3 v = point(i, tip) - origin;
          if (glm::length(v) > reach[k].length) reach[k] = Reach{v, glm::length(v)};
        }
      }
    }
    for (size_t a = 0; a < kids.size(); ++a) {
      for (size_t b = a + 1; b < kids.size(); ++b) {
        const double la = reach[a].length;
        const double lb = reach[b].length;
        if (!(std::min(la, lb) > 0.0) || std::min(la, lb) < 0.8 * std::max(la, lb)) continue;
        if (glm::dot(reach[a].v, reach[b].v) < 0.8 * la * lb) continue;
        const Vec3 down = glm::normalize(reach[a].v / la + reach[b].v / lb);
        candidates.push_back({std::min(la, lb), j, down, origin + reach[a].v, origin + reach[b].v});
      }
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& x, const Candidate& y) { return x.score > y.score; });
  for (const Candidate& c : candidates) {
    double extreme = -std::numeric_limits<double>::infinity();
    double lowest = std::numeric_limits<double>::infinity();
    for (int i = 0; i < n; ++i) {
      for (const bool tip : {false, true}) {
        const double along = glm::dot(point(i, tip), c.down);
        extreme = std::max(extreme, along);
        lowest = std::min(lowest, along);
      }
    }
    const double span = extreme - lowest;
    if (glm::dot(c.a, c.down) >= extreme - 0.1 * span && glm::dot(c.b, c.down) >= extreme - 0.1 * span) {
      return LegPair{c.branch, c.down};
    }
  }
  return std::nullopt;
}

/// True when every joint and tip lies within 2 % of the skeleton's reach of one line through the
/// root: the zero-rotation pose of a rig whose offsets lie along each bone's local X.
bool isStraightStick(const Skeleton& skeleton, std::span<const Transform> models) {
  if (skeleton.jointCount() < 5) return false;
  const Vec3 origin = models[0].translation;
  std::vector<Vec3> points;
  for (int j = 0; j < skeleton.jointCount(); ++j) {
    points.push_back(models[static_cast<size_t>(j)].translation);
    points.push_back(
        models[static_cast<size_t>(j)].transformPoint(skeleton.endSiteOffset[static_cast<size_t>(j)]));
  }
  Vec3 far = origin;
  for (const Vec3& p : points) {
    if (glm::length(p - origin) > glm::length(far - origin)) far = p;
  }
  const double reach = glm::length(far - origin);
  if (!(reach > 0.0)) return true;
  const Vec3 axis = (far - origin) / reach;
  for (const Vec3& p : points) {
    const Vec3 d = p - origin;
    if (glm::length(d - glm::dot(d, axis) * axis) > 0.02 * reach) return false;
  }
  return true;
}

/// The first frame of a clip standing up: its legs point along the file axis (within 30 degrees)
/// that the legs of most frames point along, the motion's own down. 0 when no frame has legs along
/// an axis. A local-frame BVH's rest pose (its zero pose is a stick) and up axis come from it, not
/// from a first frame lying down or mid-roll.
int firstUprightFrame(const Skeleton& skeleton, const Clip& clip) {
  std::vector<Transform> models(static_cast<size_t>(skeleton.jointCount()));
  std::array<int, 6> votes{};
  std::vector<int> axisOf(static_cast<size_t>(clip.frameCount), -1);
  for (int f = 0; f < clip.frameCount; ++f) {
    localToModel(skeleton, clip.frame(f), models);
    const std::optional<LegPair> legs = findLegPair(skeleton, models);
    if (!legs) continue;
    for (int a = 0; a < 6; ++a) {
      Vec3 axis{0.0};
      axis[a % 3] = a < 3 ? 1.0 : -1.0;
      if (glm::dot(legs->down, axis) >= std::cos(30.0 * kPi / 180.0)) {
        axisOf[static_cast<size_t>(f)] = a;
        ++votes[static_cast<size_t>(a)];
      }
    }
  }
  const auto best = std::max_element(votes.begin(), votes.end());
  if (*best == 0) return 0;
  const int axis = static_cast<int>(best - votes.begin());
  for (int f = 0; f < clip.frameCount; ++f) {
    if (axisOf[static_cast<size_t>(f)] == axis) return f;
  }
  return 0;
}

/// BVH declares no up axis and no bind pose. A straight-stick rest pose is replaced by the first
/// frame; then the up axis is the opposite of the legs' direction (snapped to the nearest file axis
/// within 30 degrees), and the root's rest and keys are turned so that it is +Y.
}  // namespace

void orientBvh(ImportedAsset& asset) {
  Skeleton& skeleton = asset.skeleton;
  const size_t n = static_cast<size_t>(skeleton.jointCount());
  std::vector<Transform> models(n);
  localToModel(skeleton, skeleton.restLocal, models);
  if (!asset.clips.empty() && asset.clips.front().frameCount > 0 && isStraightStick(skeleton, models)) {
    const int frame = firstUprightFrame(skeleton, asset.clips.front());
    const std::span<const Transform> upright = asset.clips.front().frame(frame);
    skeleton.restLocal.assign(upright.begin(), upright.end());
    localToModel(skeleton, skeleton.restLocal, models);
    asset.warnings.push_back(
        "the zero-rotation pose is a straight stick (offsets along each bone's local axis): the rest pose "
        "is taken from the motion's first upright frame (" +
        std::to_string(frame) + ")");
  }
  const std::optional<LegPair> legs = findLegPair(skeleton, models);
  if (!legs) return;
  Vec3 up = -legs->down;
  int axis = 0;
  for (int a = 1; a < 3; ++a) {
    if (std::abs(up[a]) > std::abs(up[axis])) axis = a;
  }
  if (std::abs(up[axis]) >= std::cos(30.0 * kPi / 180.0)) {
    Vec3 snapped{0.0};
    snapped[axis] = up[axis] > 0.0 ? 1.0 : -1.0;
    up = snapped;
  }
  if (up.y > 1.0 - 1e-12) return;
  const Vec3 yUp{0.0, 1.0, 0.0};
  const Quat turn = up.y < -1.0 + 1e-12 ? Quat{0.0, 0.0, 0.0, 1.0} : rotationBetween(up, yUp);
  const Transform upFromFile = Transform::fromRotation(turn);
  for (size_t j = 0; j < n; ++j) {
    if (skeleton.parents[j] != kNoParent) continue;
    skeleton.restLocal[j] = upFromFile * skeleton.restLocal[j];
    for (Clip& clip : asset.clips) {
      for (int f = 0; f < clip.frameCount; ++f) {
        Transform& key = clip.keys[static_cast<size_t>(f) * n + j];
        key = upFromFile * key;
      }
    }
  }
  const auto axisName = [](const Vec3& v) {
    for (int a = 0; a < 3; ++a) {
      if (std::abs(std::abs(v[a]) - 1.0) < 1e-12) return std::string(v[a] > 0 ? "+" : "-") + "XYZ"[a];
    }
    return "(" + format(v.x, 3) + ", " + format(v.y, 3) + ", " + format(v.z, 3) + ")";
  };
  asset.warnings.push_back("up axis " + axisName(up) + " inferred from the legs; converted to +Y");
}

namespace {

/// Hip height of a pose (file units): restHipHeight(), whose pelvis is the first joint with
/// >= 3 children. When that pelvis stands in the lowest tenth of the pose's height it is a
/// ground-level control root (RobotExpressive's "Bone" is the parent of the body and of the
/// feet IK targets, at the floor), and the first joint with >= 3 children standing above a
/// quarter of the height is taken as the pelvis instead (the robot's "Body", parent of the legs).
double poseHipHeight(const Skeleton& skeleton, std::span<const Transform> locals) {
  std::vector<Transform> models(static_cast<size_t>(skeleton.jointCount()));
  localToModel(skeleton, locals, models);
  double lowest = std::numeric_limits<double>::infinity();
  double highest = -std::numeric_limits<double>::infinity();
  for (int j = 0; j < skeleton.jointCount(); ++j) {
    const Transform& model = models[static_cast<size_t>(j)];
    const double tip = model.transformPoint(skeleton.endSiteOffset[static_cast<size_t>(j)]).y;
    lowest = std::min({lowest, model.translation.y, tip});
    highest = std::max({highest, model.translation.y, tip});
  }
  // The joint the legs hang from, when the legs point down (thighs beside the spine, twist and
  // helper bones at the knees do not fool it).
  if (const std::optional<LegPair> legs = findLegPair(skeleton, models); legs && legs->down.y < -0.9) {
    return models[static_cast<size_t>(legs->branch)].translation.y - lowest;
  }
  Skeleton posed = skeleton;
  posed.restLocal.assign(locals.begin(), locals.end());
  const double height = restHipHeight(posed);
  const double extent = highest - lowest;
  if (!(extent > 0.0) || height >= 0.1 * extent) return height;
  for (int j = 0; j < skeleton.jointCount(); ++j) {
    const double above = models[static_cast<size_t>(j)].translation.y - lowest;
    if (skeleton.children(j).size() >= 3 && above >= 0.25 * extent) return above;
  }
  return height;
}

/// Hip height in file units: the rest pose's, or the first frame's when the rest pose is
/// degenerate (no height, e.g. a BVH whose offsets are all zero or a skeleton lying flat).
double rawHipHeight(const ImportedAsset& asset, bool& fromFirstFrame) {
  const Skeleton& skeleton = asset.skeleton;
  double extent = 0.0;
  for (int j = 0; j < skeleton.jointCount(); ++j) {
    extent += glm::length(skeleton.restLocal[static_cast<size_t>(j)].translation) +
              glm::length(skeleton.endSiteOffset[static_cast<size_t>(j)]);
  }
  fromFirstFrame = false;
  double height = poseHipHeight(skeleton, skeleton.restLocal);
  if (!(height > 1e-3 * extent) && !asset.clips.empty() && asset.clips.front().frameCount > 0) {
    const double posedHeight = poseHipHeight(skeleton, asset.clips.front().frame(0));
    if (posedHeight > height) {
      height = posedHeight;
      fromFirstFrame = true;
    }
  }
  return height;
}

}  // namespace

Status finish(Built& built, const std::string& source, const ImportOptions& options) {
  ImportedAsset& asset = built.asset;
  asset.sourcePath = source;
  for (Clip& clip : asset.clips) makeHemisphereContinuous(clip);

  bool fromFirstFrame = false;
  const double hip = rawHipHeight(asset, fromFirstFrame);
  if (options.unitScale > 0.0) {
    asset.unitScale = options.unitScale;
    asset.unitScaleDetected = false;
  } else if (built.declaredUnitScale) {
    asset.unitScale = *built.declaredUnitScale;
    asset.unitScaleDetected = true;
    // An FBX whose armature carries the unit conversion (a scale of 100 or 0.01 on the node above
    // the bones) while UnitScaleFactor declares it again: the hip lands a hundred times too high
    // or low. When the declared unit puts the hip out of human range and the armature's
    // power-of-ten scale, taken as the conversion, puts it inside, the file means the latter.
    const double k = std::round(std::log10(built.ancestorScale));
    const double declaredHip = hip * asset.unitScale;
    const double undone = declaredHip / built.ancestorScale;
    if (built.fbx && k != 0.0 && std::abs(std::log10(built.ancestorScale) - k) < 1e-4 &&
        (declaredHip < kHumanHipMin || declaredHip > kHumanHipMax) && undone >= kHumanHipMin &&
        undone <= kHumanHipMax) {
      asset.unitScale /= built.ancestorScale;
      asset.warnings.push_back("the armature node '" + built.scaledAncestor + "' scales the skeleton by " +
                               format(built.ancestorScale) + " on top of UnitScaleFactor (" +
                               format(*built.declaredUnitScale) + " m per unit), which would stand the hip " +
                               format(declaredHip, 4) +
                               " m high: the armature's scale is taken as the unit " + "conversion (hip " +
                               format(undone, 4) + " m)");
    }
  } else if (hip > 0.0 && std::isfinite(hip)) {
    // The candidate that puts the hip nearest a typical adult's. 0.0254 / 0.45 is the ASF unit
    // of the CMU motion-capture database (1/0.45 inch), which its BVH conversions keep.
    static constexpr std::array<double, 6> kCandidates{1.0, 0.01, 0.0254, 0.1, 0.001, 0.0254 / 0.45};
    double best = kCandidates[0];
    for (const double candidate : kCandidates) {
      if (std::abs(hip * candidate - kTargetHipHeight) < std::abs(hip * best - kTargetHipHeight))
        best = candidate;
    }
    asset.unitScale = best;
    asset.unitScaleDetected = true;
    if (fromFirstFrame) {
      asset.warnings.push_back(
          "the rest pose is degenerate (no hip height); units detected from the first frame");
    }
  } else {
    asset.unitScale = 1.0;
    asset.unitScaleDetected = true;
    asset.warnings.push_back("cannot detect units (the skeleton has no hip height); metres assumed");
  }
  asset.hipHeight = hip * asset.unitScale;
  if (asset.unitScale != 1.0) scaleTranslations(asset, asset.unitScale);
  const bool measured = hip > 0.0 && std::isfinite(hip);
  if (measured && (asset.hipHeight < kHumanHipMin || asset.hipHeight > kHumanHipMax)) {
    const std::string fix = format(asset.unitScale * kTargetHipHeight / asset.hipHeight, 4);
    if (options.unitScale <= 0.0 && options.requireHumanScale) {
      const std::string unit = built.declaredUnitScale
                                   ? "the unit the file declares (" + format(asset.unitScale) + " m per unit)"
                                   : "the best-fitting unit (" + format(asset.unitScale) + " m per unit)";
      return Error{source + ": the rest hip stands " + format(asset.hipHeight, 4) + " m high with " + unit +
                   ", outside the " + format(kHumanHipMin) + "-" + format(kHumanHipMax) +
                   " m of a human-scale character. If it is human-sized, import it with --unit-scale " + fix +
                   " (ImportOptions::unitScale; gives a " + format(kTargetHipHeight) + " m hip)"};
    }
    asset.warnings.push_back("rest hip height " + format(asset.hipHeight) + " m is outside " +
                             format(kHumanHipMin) + "-" + format(kHumanHipMax) +
                             " m: check the units (--unit-scale " + fix + " gives a " +
                             format(kTargetHipHeight) + " m hip)");
  }

  // Inverse bind: jointFromModel of the rest pose, the pose the meshes were built in.
  if (!asset.meshes.empty()) {
    std::vector<Transform> models(static_cast<size_t>(asset.skeleton.jointCount()));
    localToModel(asset.skeleton, asset.skeleton.restLocal, models);
    std::vector<Transform> inverseBind(models.size());
    std::transform(models.begin(), models.end(), inverseBind.begin(),
                   [](const Transform& t) { return t.inverse(); });
    for (SkinnedMesh& mesh : asset.meshes) mesh.inverseBind = inverseBind;
  }

  if (Status status = asset.skeleton.validate(); !status) {
    return Error{source + ": invalid skeleton: " + status.error()};
  }
  for (const Clip& clip : asset.clips) {
    if (Status status = clip.validate(asset.skeleton); !status) {
      return Error{source + ": invalid clip: " + status.error()};
    }
  }
  return {};
}

}  // namespace handoff::import_detail
