#include "handoff/rig.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace handoff {

int Skeleton::findJoint(std::string_view name) const {
  for (int i = 0; i < jointCount(); ++i) {
    if (jointNames[static_cast<size_t>(i)] == name) return i;
  }
  return -1;
}

std::vector<int> Skeleton::children(int joint) const {
  std::vector<int> result;
  for (int i = 0; i < jointCount(); ++i) {
    if (parents[static_cast<size_t>(i)] == joint) result.push_back(i);
  }
  return result;
}

Status Skeleton::validate() const {
  const size_t n = parents.size();
  if (n == 0) return Error{"skeleton has no joints"};
  if (jointNames.size() != n || restLocal.size() != n || endSiteOffset.size() != n) {
    return Error{"skeleton arrays disagree in size (names " + std::to_string(jointNames.size()) +
                 ", parents " + std::to_string(n) + ", rest " + std::to_string(restLocal.size()) +
                 ", end sites " + std::to_string(endSiteOffset.size()) + ")"};
  }
  std::unordered_set<std::string> seen;
  for (size_t i = 0; i < n; ++i) {
    const std::string& name = jointNames[i];
    if (name.empty()) return Error{"joint " + std::to_string(i) + " has an empty name"};
    if (!seen.insert(name).second) return Error{"joint name '" + name + "' appears twice"};
    if (parents[i] != kNoParent && (parents[i] < 0 || parents[i] >= static_cast<int>(i))) {
      return Error{"joint '" + name + "' has parent index " + std::to_string(parents[i]) +
                   ", which is not an earlier joint"};
    }
    if (!isFinite(restLocal[i]) || !isFinite(endSiteOffset[i])) {
      return Error{"joint '" + name + "' has a non-finite rest transform"};
    }
    if (std::abs(glm::length(restLocal[i].rotation) - 1.0) > 1e-6) {
      return Error{"joint '" + name + "' has a non-unit rest rotation"};
    }
  }
  return {};
}

void localToModel(const Skeleton& skeleton, std::span<const Transform> locals, std::span<Transform> models) {
  const int n = skeleton.jointCount();
  assert(static_cast<int>(locals.size()) >= n && static_cast<int>(models.size()) >= n &&
         "pose span too short");
  for (int i = 0; i < n; ++i) {
    const int parent = skeleton.parents[static_cast<size_t>(i)];
    models[static_cast<size_t>(i)] =
        parent == kNoParent ? locals[static_cast<size_t>(i)]
                            : models[static_cast<size_t>(parent)] * locals[static_cast<size_t>(i)];
  }
}

void modelToLocal(const Skeleton& skeleton, std::span<const Transform> models, std::span<Transform> locals) {
  const int n = skeleton.jointCount();
  assert(static_cast<int>(locals.size()) >= n && static_cast<int>(models.size()) >= n &&
         "pose span too short");
  for (int i = 0; i < n; ++i) {
    const int parent = skeleton.parents[static_cast<size_t>(i)];
    locals[static_cast<size_t>(i)] =
        parent == kNoParent ? models[static_cast<size_t>(i)]
                            : models[static_cast<size_t>(parent)].inverse() * models[static_cast<size_t>(i)];
  }
}

void blendPoses(std::span<const Transform> a, std::span<const Transform> b, double weight,
                std::span<Transform> out) {
  assert(a.size() == b.size() && out.size() >= a.size() && "pose sizes differ");
  for (size_t i = 0; i < a.size(); ++i) out[i] = blend(a[i], b[i], weight);
}

void blendPoses(std::span<const Transform> a, std::span<const Transform> b, std::span<const double> weights,
                std::span<Transform> out) {
  assert(a.size() == b.size() && weights.size() >= a.size() && out.size() >= a.size() && "pose sizes differ");
  for (size_t i = 0; i < a.size(); ++i) out[i] = blend(a[i], b[i], weights[i]);
}

double Clip::duration() const { return frameCount > 1 ? (frameCount - 1) / frameRate : 0.0; }

std::span<const Transform> Clip::frame(int frameIndex) const {
  assert(frameIndex >= 0 && frameIndex < frameCount && "frame out of range");
  return std::span<const Transform>(keys).subspan(
      static_cast<size_t>(frameIndex) * static_cast<size_t>(jointCount), static_cast<size_t>(jointCount));
}

Vec3 Clip::cycleRootMotion(int rootJoint) const {
  if (frameCount < 2) return Vec3{0.0};
  return frame(frameCount - 1)[static_cast<size_t>(rootJoint)].translation -
         frame(0)[static_cast<size_t>(rootJoint)].translation;
}

void Clip::sample(double time, WrapMode wrap, std::span<Transform> locals) const {
  assert(frameCount >= 1 && static_cast<int>(locals.size()) >= jointCount && "bad clip or pose span");
  const double length = duration();
  Vec3 rootOffset{0.0};
  double t = time;
  if (length <= 0.0) {
    t = 0.0;
  } else if (wrap == WrapMode::Loop) {
    const double cycles = std::floor(time / length);
    t = time - cycles * length;
    rootOffset = cycles * cycleRootMotion(0);
  } else {
    t = std::clamp(time, 0.0, length);
  }
  const double framePosition = t * frameRate;
  int f0 = static_cast<int>(std::floor(framePosition));
  f0 = std::clamp(f0, 0, frameCount - 1);
  const int f1 = std::min(f0 + 1, frameCount - 1);
  const double alpha = std::clamp(framePosition - f0, 0.0, 1.0);
  const std::span<const Transform> a = frame(f0);
  const std::span<const Transform> b = frame(f1);
  if (alpha == 0.0 || f0 == f1) {
    std::copy(a.begin(), a.end(), locals.begin());
  } else {
    blendPoses(a, b, alpha, locals);
  }
  // Root motion accumulates over loops; the root is joint 0 (topological order).
  if (jointCount > 0) locals[0].translation += rootOffset;
}

Status Clip::validate(const Skeleton& skeleton) const {
  if (jointCount != skeleton.jointCount()) {
    return Error{"clip '" + name + "' has " + std::to_string(jointCount) + " joints, the skeleton " +
                 std::to_string(skeleton.jointCount())};
  }
  if (frameCount < 1) return Error{"clip '" + name + "' has no frames"};
  if (!(frameRate > 0.0) || !std::isfinite(frameRate))
    return Error{"clip '" + name + "' has a frame rate that is not positive"};
  if (keys.size() != static_cast<size_t>(frameCount) * static_cast<size_t>(jointCount)) {
    return Error{"clip '" + name + "' has " + std::to_string(keys.size()) +
                 " keys, expected frames x joints = " +
                 std::to_string(static_cast<size_t>(frameCount) * static_cast<size_t>(jointCount))};
  }
  for (size_t k = 0; k < keys.size(); ++k) {
    if (!isFinite(keys[k])) {
      const size_t joint = k % static_cast<size_t>(jointCount);
      return Error{"clip '" + name + "' frame " + std::to_string(k / static_cast<size_t>(jointCount)) +
                   " joint '" + skeleton.jointNames[joint] + "' is not finite"};
    }
  }
  return {};
}

std::vector<Transform> restPose(const Skeleton& skeleton) { return skeleton.restLocal; }

namespace {
int pelvisJoint(const Skeleton& skeleton) {
  for (int i = 0; i < skeleton.jointCount(); ++i) {
    if (skeleton.children(i).size() >= 3) return i;
  }
  return 0;
}
}  // namespace

double restHipHeight(const Skeleton& skeleton) {
  const int n = skeleton.jointCount();
  if (n == 0) return 0.0;
  std::vector<Transform> models(static_cast<size_t>(n));
  localToModel(skeleton, skeleton.restLocal, models);
  double lowest = std::numeric_limits<double>::infinity();
  for (int i = 0; i < n; ++i) {
    const Transform& m = models[static_cast<size_t>(i)];
    lowest = std::min(lowest, m.translation.y);
    lowest = std::min(lowest, m.transformPoint(skeleton.endSiteOffset[static_cast<size_t>(i)]).y);
  }
  return models[static_cast<size_t>(pelvisJoint(skeleton))].translation.y - lowest;
}

namespace {

/// Optimal string alignment distance (insertions, deletions, substitutions and transpositions of
/// neighbours each cost 1), case-insensitive.
std::size_t editDistance(std::string_view a, std::string_view b) {
  const auto lower = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
  const std::size_t columns = b.size() + 1;
  std::vector<std::size_t> d((a.size() + 1) * columns);
  const auto at = [&](std::size_t i, std::size_t j) -> std::size_t& { return d[i * columns + j]; };
  for (std::size_t i = 0; i <= a.size(); ++i) at(i, 0) = i;
  for (std::size_t j = 0; j <= b.size(); ++j) at(0, j) = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      at(i, j) = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1])) {
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
      }
    }
  }
  return at(a.size(), b.size());
}

}  // namespace

std::string didYouMean(std::string_view word, std::span<const std::string> candidates) {
  if (word.size() > 200) return "";  // not a typo; keep the cost bounded
  const std::size_t limit = std::max<std::size_t>(1, std::min<std::size_t>(3, word.size() / 3));
  const std::string* best = nullptr;
  std::size_t bestDistance = limit + 1;
  for (const std::string& candidate : candidates) {
    if (candidate.size() > word.size() + limit || word.size() > candidate.size() + limit) continue;
    const std::size_t distance = editDistance(word, candidate);
    if (distance < bestDistance) {
      bestDistance = distance;
      best = &candidate;
    }
  }
  return best ? " (did you mean '" + *best + "'?)" : "";
}

std::optional<std::size_t> jsonTooDeep(std::string_view text, std::size_t maxDepth) {
  std::size_t depth = 0;
  bool inString = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\') {
        ++i;  // the escaped character, whatever it is
      } else if (c == '"') {
        inString = false;
      }
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

std::string validUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = byte(i);
    std::size_t length = 0;
    if (c < 0x80) {
      length = 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
    }
    bool valid = length > 0 && i + length <= text.size();
    for (std::size_t k = 1; valid && k < length; ++k) valid = (byte(i + k) & 0xC0) == 0x80;
    if (valid && length == 3) {
      const unsigned char c1 = byte(i + 1);
      valid = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 > 0x9F);  // overlong, surrogates
    }
    if (valid && length == 4) {
      const unsigned char c1 = byte(i + 1);
      valid = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 > 0x8F);  // overlong, > U+10FFFF
    }
    if (valid) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      static constexpr char kHex[] = "0123456789ABCDEF";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
      ++i;
    }
  }
  return out;
}

}  // namespace handoff
