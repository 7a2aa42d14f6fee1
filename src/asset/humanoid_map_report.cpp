// Humanoid map report: the user's map, the file's humanoid bones (VRM humanBones), then names and
// structure (humanoid_map.cpp's mapper, on Rigify's deform bones when they are a tree of their own),
// with plausibility findings; the map's JSON form.
#include "asset_internal.h"
#include "handoff/rig.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <sstream>

namespace handoff {
using namespace asset_detail;

namespace {

// --- Deform bones under control bones (Rigify) -------------------------------------------------

/// Rigify's DEF- bones are not one tree: the thighs and arms hang under ORG-/MCH- control bones.
/// When a skeleton has 8 or more DEF- bones in more than one tree, the mapper works on the deform
/// bones alone, each detached DEF- tree attached to the deform bone nearest its root (the
/// ragdoll's tree need not be the skeleton's, as Jolt's SkeletonMapper allows). The trunk is the DEF-
/// tree rooted highest in the hierarchy.
struct DeformView {
  Skeleton skeleton;
  std::vector<int> original;  ///< Original joint of each view joint.
  int detached = 0;           ///< DEF- trees attached by distance.
};

bool isDeform(const std::string& name) { return name.rfind("DEF-", 0) == 0 || name.rfind("DEF_", 0) == 0; }

std::optional<DeformView> deformView(const Skeleton& s) {
  const int n = s.jointCount();
  std::vector<int> deformParent(static_cast<size_t>(n), kNoParent);
  int count = 0;
  int roots = 0;
  for (int j = 0; j < n; ++j) {
    if (!isDeform(s.jointNames[static_cast<size_t>(j)])) continue;
    ++count;
    int p = s.parents[static_cast<size_t>(j)];
    while (p != kNoParent && !isDeform(s.jointNames[static_cast<size_t>(p)]))
      p = s.parents[static_cast<size_t>(p)];
    deformParent[static_cast<size_t>(j)] = p;
    if (p == kNoParent) ++roots;
  }
  if (count < 8 || roots < 2 || count == n) return std::nullopt;
  SkeletonInfo info(s);
  // Tree sizes: the largest DEF- tree is the trunk.
  std::vector<int> rootOf(static_cast<size_t>(n), -1);
  std::vector<int> size(static_cast<size_t>(n), 0);
  for (int j = 0; j < n; ++j) {
    if (!isDeform(s.jointNames[static_cast<size_t>(j)])) continue;
    const int p = deformParent[static_cast<size_t>(j)];
    rootOf[static_cast<size_t>(j)] = p == kNoParent ? j : rootOf[static_cast<size_t>(p)];
    ++size[static_cast<size_t>(rootOf[static_cast<size_t>(j)])];
  }
  // The trunk: the DEF- tree whose root is highest in the hierarchy (Rigify's DEF-spine under the
  // root), the larger one on a tie.
  std::vector<int> depth(static_cast<size_t>(n), 0);
  for (int j = 0; j < n; ++j) {
    const int p = s.parents[static_cast<size_t>(j)];
    depth[static_cast<size_t>(j)] = p == kNoParent ? 0 : depth[static_cast<size_t>(p)] + 1;
  }
  int trunk = -1;
  for (int j = 0; j < n; ++j) {
    if (rootOf[static_cast<size_t>(j)] != j) continue;
    if (trunk < 0 || depth[static_cast<size_t>(j)] < depth[static_cast<size_t>(trunk)] ||
        (depth[static_cast<size_t>(j)] == depth[static_cast<size_t>(trunk)] &&
         size[static_cast<size_t>(j)] > size[static_cast<size_t>(trunk)]))
      trunk = j;
  }
  std::vector<char> attached(static_cast<size_t>(n), 0);
  for (int j = 0; j < n; ++j) attached[static_cast<size_t>(j)] = rootOf[static_cast<size_t>(j)] == trunk;
  const auto segmentDistance = [](const Vec3& p, const Vec3& a, const Vec3& b) {
    const Vec3 ab = b - a;
    const double l2 = glm::dot(ab, ab);
    const double t = l2 > 0.0 ? std::clamp(glm::dot(p - a, ab) / l2, 0.0, 1.0) : 0.0;
    return glm::length(p - (a + t * ab));
  };
  DeformView view;
  for (;;) {
    int bestRoot = -1;
    int bestParent = -1;
    double best = std::numeric_limits<double>::infinity();
    for (int r = 0; r < n; ++r) {
      if (rootOf[static_cast<size_t>(r)] != r || attached[static_cast<size_t>(r)]) continue;
      for (int j = 0; j < n; ++j) {
        if (!attached[static_cast<size_t>(j)] || !isDeform(s.jointNames[static_cast<size_t>(j)])) continue;
        double d = glm::length(info.pos(r) - info.pos(j));
        if (info.tip[static_cast<size_t>(j)])
          d = std::min(d, segmentDistance(info.pos(r), info.pos(j), *info.tip[static_cast<size_t>(j)]));
        for (int c = j + 1; c < n; ++c) {
          if (deformParent[static_cast<size_t>(c)] == j && attached[static_cast<size_t>(c)])
            d = std::min(d, segmentDistance(info.pos(r), info.pos(j), info.pos(c)));
        }
        if (d < best - 1e-12) {
          best = d;
          bestRoot = r;
          bestParent = j;
        }
      }
    }
    if (bestRoot < 0) break;
    deformParent[static_cast<size_t>(bestRoot)] = bestParent;
    for (int j = 0; j < n; ++j) {
      if (rootOf[static_cast<size_t>(j)] == bestRoot) attached[static_cast<size_t>(j)] = 1;
    }
    ++view.detached;
  }
  // Depth-first order from the trunk (parents before children).
  std::vector<std::vector<int>> kids(static_cast<size_t>(n));
  for (int j = 0; j < n; ++j) {
    if (isDeform(s.jointNames[static_cast<size_t>(j)]) && j != trunk &&
        deformParent[static_cast<size_t>(j)] != kNoParent)
      kids[static_cast<size_t>(deformParent[static_cast<size_t>(j)])].push_back(j);
  }
  std::vector<int> newIndex(static_cast<size_t>(n), -1);
  std::vector<int> stack{trunk};
  while (!stack.empty()) {
    const int j = stack.back();
    stack.pop_back();
    newIndex[static_cast<size_t>(j)] = static_cast<int>(view.original.size());
    view.original.push_back(j);
    for (auto it = kids[static_cast<size_t>(j)].rbegin(); it != kids[static_cast<size_t>(j)].rend(); ++it)
      stack.push_back(*it);
  }
  const size_t m = view.original.size();
  Skeleton& v = view.skeleton;
  std::vector<Transform> models(m);
  for (size_t i = 0; i < m; ++i) {
    const int j = view.original[i];
    v.jointNames.push_back(s.jointNames[static_cast<size_t>(j)]);
    const int p = j == trunk ? kNoParent : deformParent[static_cast<size_t>(j)];
    v.parents.push_back(p == kNoParent ? kNoParent : newIndex[static_cast<size_t>(p)]);
    v.endSiteOffset.push_back(s.endSiteOffset[static_cast<size_t>(j)]);
    models[i] = info.models[static_cast<size_t>(j)];
  }
  v.restLocal.resize(m);
  modelToLocal(v, models, v.restLocal);
  return view;
}

struct AutoMap {
  HumanoidMap map;
  std::array<SlotDecision, kSlotCount> decisions{};
  std::shared_ptr<const DeformView> view;  ///< The deform bones mapped, when they were.
};

Result<AutoMap> autoMap(const Skeleton& skeleton, std::vector<Finding>* notes) {
  if (std::optional<DeformView> view = deformView(skeleton)) {
    std::vector<Finding> viewNotes;
    std::array<SlotDecision, kSlotCount> decisions{};
    Result<HumanoidMap> map = mapStructure(view->skeleton, &viewNotes, &decisions);
    if (map) {
      AutoMap result;
      for (int i = 0; i < kSlotCount; ++i) {
        const int j = map->joint[static_cast<size_t>(i)];
        result.map.joint[static_cast<size_t>(i)] = j >= 0 ? view->original[static_cast<size_t>(j)] : -1;
      }
      result.decisions = decisions;
      result.view = std::make_shared<const DeformView>(std::move(*view));
      if (notes) {
        notes->push_back(Finding{Finding::Severity::Info, "map_deform", "DEF-",
                                 "mapped on the " + std::to_string(result.view->skeleton.jointCount()) +
                                     " DEF- deform bones of " + std::to_string(skeleton.jointCount()) +
                                     " joints; " + std::to_string(result.view->detached) +
                                     " DEF- trees under control bones attached to the nearest deform bone"});
        notes->insert(notes->end(), viewNotes.begin(), viewNotes.end());
      }
      return result;
    }
  }
  std::array<SlotDecision, kSlotCount> decisions{};
  Result<HumanoidMap> map = mapStructure(skeleton, notes, &decisions);
  if (!map) return Error{map.error()};
  return AutoMap{*map, decisions, nullptr};
}

/// VRM humanBones roles of the slots (VRM 0.x and 1.0 share these names).
const char* vrmRole(Slot slot) {
  switch (slot) {
    case Slot::Pelvis:
      return "hips";
    case Slot::LowerSpine:
      return "spine";
    case Slot::Chest:
      return "chest";
    case Slot::Head:
      return "head";
    case Slot::UpperArmL:
      return "leftUpperArm";
    case Slot::LowerArmL:
      return "leftLowerArm";
    case Slot::HandL:
      return "leftHand";
    case Slot::UpperArmR:
      return "rightUpperArm";
    case Slot::LowerArmR:
      return "rightLowerArm";
    case Slot::HandR:
      return "rightHand";
    case Slot::UpperLegL:
      return "leftUpperLeg";
    case Slot::LowerLegL:
      return "leftLowerLeg";
    case Slot::FootL:
      return "leftFoot";
    case Slot::UpperLegR:
      return "rightUpperLeg";
    case Slot::LowerLegR:
      return "rightLowerLeg";
    case Slot::FootR:
      return "rightFoot";
    case Slot::Count:
      break;
  }
  return "";
}

/// A slot's joint is consistent with its parent slot's when it lies below it in the hierarchy, or
/// touches its subtree (within 8 % of the character's height): a foot parented to the root but
/// standing at the ankle, a Rigify DEF- thigh under a control bone beside DEF-spine.
bool attachedTo(const SkeletonInfo& info, int parent, int joint) {
  if (parent == joint) return false;
  if (info.isAncestor(parent, joint)) return true;
  // A sibling of the parent (legs hanging off a root beside the hips: Root > Hips, UpperLeg.L):
  // both hang off the same joint.
  if (const int up = info.skeleton->parents[static_cast<size_t>(joint)];
      up != kNoParent && info.skeleton->parents[static_cast<size_t>(parent)] == up)
    return true;
  const double height = info.topY - info.floorY;
  double nearest = std::numeric_limits<double>::infinity();
  for (const Vec3& p : info.subtreePoints(parent))
    nearest = std::min(nearest, glm::length(p - info.pos(joint)));
  return nearest <= 0.08 * height;
}

SlotGeometry slotGeometry(const Skeleton& s, const SkeletonInfo& info, const HumanoidMap& map) {
  SlotGeometry g;
  g.floorY = info.floorY;
  for (int i = 0; i < kSlotCount; ++i) {
    if (map.joint[static_cast<size_t>(i)] >= 0)
      g.joint[static_cast<size_t>(i)] = info.pos(map.joint[static_cast<size_t>(i)]);
  }
  const auto boneEnd = [&](int joint) -> std::optional<Vec3> {
    // As the builder sizes a limb without its end slot: the tip, else the farthest child.
    if (info.tip[static_cast<size_t>(joint)]) return *info.tip[static_cast<size_t>(joint)];
    std::optional<Vec3> best;
    for (int c : info.children[static_cast<size_t>(joint)]) {
      if (!best || glm::length(info.pos(c) - info.pos(joint)) > glm::length(*best - info.pos(joint)))
        best = info.pos(c);
    }
    return best;
  };
  const auto limb = [&](Slot upper, Slot lower, Slot end) {
    if (map[upper] >= 0 && map[lower] >= 0)
      g.length[static_cast<size_t>(upper)] = glm::length(info.pos(map[lower]) - info.pos(map[upper]));
    if (map[lower] >= 0) {
      std::optional<Vec3> e = map[end] >= 0 ? std::optional<Vec3>(info.pos(map[end])) : boneEnd(map[lower]);
      if (e) g.length[static_cast<size_t>(lower)] = glm::length(*e - info.pos(map[lower]));
    }
  };
  limb(Slot::UpperLegL, Slot::LowerLegL, Slot::FootL);
  limb(Slot::UpperLegR, Slot::LowerLegR, Slot::FootR);
  limb(Slot::UpperArmL, Slot::LowerArmL, Slot::HandL);
  limb(Slot::UpperArmR, Slot::LowerArmR, Slot::HandR);
  Vec3 sum{0.0};
  for (Slot f : {Slot::FootL, Slot::FootR}) {
    if (map[f] < 0) continue;
    const auto far = info.farthestInSubtree(map[f], info.pos(map[f]));
    Vec3 v = far.point - info.pos(map[f]);
    v.y = 0.0;
    if (glm::length(v) > 1e-6) sum += glm::normalize(v);
  }
  if (glm::length(sum) > 1e-6) g.feetForward = glm::normalize(sum);
  (void)s;
  return g;
}

}  // namespace

const char* mapSourceName(MapSource source) {
  switch (source) {
    case MapSource::None:
      return "none";
    case MapSource::Name:
      return "name";
    case MapSource::Structure:
      return "structure";
    case MapSource::FileHumanoid:
      return "file";
    case MapSource::User:
      return "user";
  }
  return "none";
}

Result<HumanoidMap> mapHumanoid(const Skeleton& skeleton, std::vector<Finding>* notes) {
  Result<AutoMap> map = autoMap(skeleton, notes);
  if (!map) return Error{map.error()};
  return map->map;
}

Result<HumanoidMapReport> mapHumanoidReport(const Skeleton& skeleton, const MapInputs& inputs) {
  if (Status st = skeleton.validate(); !st) return Error{"skeleton: " + st.error()};
  // The user's map file: parsed first, so its errors come before any mapping failure.
  std::array<std::optional<int>, kSlotCount> explicitJoint;  // nullopt: not listed; -1: unmapped
  std::string errors;
  const auto fail = [&](const std::string& e) { errors += (errors.empty() ? "" : "; ") + e; };
  const std::string& source = inputs.userSource;
  if (inputs.userJson) {
    // Depth-bounded before nlohmann's recursive parse (a 100,000-deep [[[...]]] overflows the
    // stack), as every other JSON loader (issue 27).
    if (const std::optional<std::size_t> at = jsonTooDeep(*inputs.userJson)) {
      return Error{source + ": arrays and objects nested deeper than " + std::to_string(kMaxJsonDepth) +
                   " levels at byte " + std::to_string(*at + 1)};
    }
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(*inputs.userJson);
    } catch (const nlohmann::json::parse_error& e) {
      return Error{source + ": JSON parse error at byte " + std::to_string(e.byte) + ": " + e.what()};
    }
    if (!doc.is_object()) return Error{source + ": a humanoid map is a JSON object {\"slot\": \"bone\"}"};
    std::string prefix;
    const nlohmann::json* slots = &doc;
    if (doc.contains("version")) {
      if (!doc["version"].is_number_integer() || doc["version"].get<int>() != 1)
        return Error{source + ": version: expected 1 (the map format of this version)"};
      for (const auto& [key, value] : doc.items()) {
        if (key != "version" && key != "slots") {
          const std::vector<std::string> known{"version", "slots"};
          const std::string suggestion = didYouMean(key, known);
          fail(validUtf8(key) + ": unknown field '" + validUtf8(key) + "'" +
               (suggestion.empty() ? "; allowed: version slots" : suggestion));
        }
      }
      if (!errors.empty()) return Error{source + ": " + errors};
      if (!doc.contains("slots") || !doc["slots"].is_object())
        return Error{source + ": slots: expected an object {\"slot\": \"bone\"}"};
      slots = &doc["slots"];
      prefix = "slots.";
    }
    for (const auto& [key, value] : slots->items()) {
      const std::string path = prefix + key;
      const std::optional<Slot> slot = slotFromName(key);
      if (!slot) {
        std::vector<std::string> names;
        for (int i = 0; i < kSlotCount; ++i) names.emplace_back(slotName(static_cast<Slot>(i)));
        fail(validUtf8(path) + ": unknown slot '" + validUtf8(key) + "'" + didYouMean(key, names));
        continue;
      }
      if (value.is_null()) {
        if (slotRequired(*slot)) {
          fail(path + ": slot '" + key + "' is required and cannot be null");
        } else {
          explicitJoint[static_cast<size_t>(*slot)] = -1;
        }
        continue;
      }
      if (!value.is_string()) {
        fail(path + ": slot '" + key + "': expected a bone name (string) or null");
        continue;
      }
      const int j = skeleton.findJoint(value.get<std::string>());
      if (j < 0) {
        fail(path + ": slot '" + key + "': the skeleton has no bone '" + value.get<std::string>() + "'");
        continue;
      }
      explicitJoint[static_cast<size_t>(*slot)] = j;
    }
    if (!errors.empty()) return Error{source + ": " + errors};
  }
  HumanoidMapReport report;
  Result<AutoMap> automatic = autoMap(skeleton, &report.findings);
  if (automatic) {
    report.map = automatic->map;
    report.slots = automatic->decisions;
  }
  // The file's own humanoid map, when it covers every required slot.
  if (!inputs.fileHumanoid.empty()) {
    std::array<int, kSlotCount> fileJoint;
    fileJoint.fill(-1);
    for (const HumanoidBone& bone : inputs.fileHumanoid) {
      for (int i = 0; i < kSlotCount; ++i) {
        if (bone.role == vrmRole(static_cast<Slot>(i)))
          fileJoint[static_cast<size_t>(i)] = skeleton.findJoint(bone.joint);
      }
    }
    bool complete = true;
    for (int i = 0; i < kSlotCount; ++i)
      complete = complete && (!slotRequired(static_cast<Slot>(i)) || fileJoint[static_cast<size_t>(i)] >= 0);
    if (complete) {
      for (int i = 0; i < kSlotCount; ++i) {
        report.map.joint[static_cast<size_t>(i)] = fileJoint[static_cast<size_t>(i)];
        report.slots[static_cast<size_t>(i)] = fileJoint[static_cast<size_t>(i)] >= 0
                                                   ? SlotDecision{MapSource::FileHumanoid, 0.95}
                                                   : SlotDecision{};
      }
      report.findings.push_back(Finding{Finding::Severity::Info, "map_structure", "file",
                                        "slots taken from the file's humanoid bones (VRM humanBones)"});
    } else {
      report.findings.push_back(
          Finding{Finding::Severity::Warning, "map_structure", "file",
                  "the file's humanoid bones miss a required slot; mapped by names and structure"});
    }
  }
  for (int i = 0; i < kSlotCount; ++i) {
    if (!explicitJoint[static_cast<size_t>(i)]) continue;
    report.map.joint[static_cast<size_t>(i)] = *explicitJoint[static_cast<size_t>(i)];
    report.slots[static_cast<size_t>(i)] =
        *explicitJoint[static_cast<size_t>(i)] >= 0 ? SlotDecision{MapSource::User, 1.0} : SlotDecision{};
  }
  // Hierarchy: each mapped slot's joint must hang from (or touch) the nearest mapped ancestor
  // slot's joint. Automatic entries that contradict explicit ones are dropped (optional) or reported.
  SkeletonInfo info(skeleton);
  HumanoidMap& map = report.map;
  // Deform bones mapped as one tree are checked in that tree.
  std::optional<SkeletonInfo> viewInfo;
  std::vector<int> inView(static_cast<size_t>(skeleton.jointCount()), -1);
  if (automatic && automatic->view) {
    viewInfo.emplace(automatic->view->skeleton);
    for (size_t v = 0; v < automatic->view->original.size(); ++v)
      inView[static_cast<size_t>(automatic->view->original[v])] = static_cast<int>(v);
  }
  // A hand or foot parented elsewhere where its limb has no tip: it stands where the limb ends,
  // 0.5-1.6 of the limb's upper bone past its middle joint, within 45 degrees of the upper bone.
  const auto atLimbEnd = [&](Slot slot, int joint) {
    const bool hand = slot == Slot::HandL || slot == Slot::HandR;
    const bool left = slot == Slot::HandL || slot == Slot::FootL;
    if (!hand && slot != Slot::FootL && slot != Slot::FootR) return false;
    const int upper =
        map[hand ? (left ? Slot::UpperArmL : Slot::UpperArmR) : (left ? Slot::UpperLegL : Slot::UpperLegR)];
    const int lower =
        map[hand ? (left ? Slot::LowerArmL : Slot::LowerArmR) : (left ? Slot::LowerLegL : Slot::LowerLegR)];
    if (upper < 0 || lower < 0 || info.tip[static_cast<size_t>(lower)] ||
        !info.children[static_cast<size_t>(lower)].empty())
      return false;
    const Vec3 bone = info.pos(lower) - info.pos(upper);
    const Vec3 d = info.pos(joint) - info.pos(lower);
    const double length = glm::length(bone);
    return length > 0.0 && glm::length(d) >= 0.5 * length && glm::length(d) <= 1.6 * length &&
           glm::dot(d, bone) >= std::cos(kPi / 4.0) * glm::length(d) * length;
  };
  const auto consistent = [&](int parent, int joint) {
    if (attachedTo(info, parent, joint)) return true;
    const int vp = inView[static_cast<size_t>(parent)];
    const int vj = inView[static_cast<size_t>(joint)];
    return viewInfo && vp >= 0 && vj >= 0 && attachedTo(*viewInfo, vp, vj);
  };
  for (int i = 0; i < kSlotCount; ++i) {
    const auto slot = static_cast<Slot>(i);
    if (map[slot] < 0) continue;
    Slot up = parentSlot(slot);
    while (up != Slot::Count && map[up] < 0) up = parentSlot(up);
    if (up == Slot::Count) continue;
    if (!consistent(map[up], map[slot]) && !atLimbEnd(slot, map[slot])) {
      const bool slotExplicit = explicitJoint[static_cast<size_t>(i)].has_value();
      if (!slotExplicit && !slotRequired(slot)) {
        map[slot] = -1;
        report.slots[static_cast<size_t>(i)] = SlotDecision{};
        continue;
      }
      fail(std::string(slotName(slot)) + " '" + skeleton.jointNames[static_cast<size_t>(map[slot])] +
           "' is not below " + slotName(up) + " '" + skeleton.jointNames[static_cast<size_t>(map[up])] + "'");
    }
  }
  std::string missing;
  for (int i = 0; i < kSlotCount; ++i) {
    const auto slot = static_cast<Slot>(i);
    if (slotRequired(slot) && map[slot] < 0)
      missing += (missing.empty() ? "" : ", ") + std::string(slotName(slot));
  }
  if (!missing.empty()) {
    if (!inputs.userJson && inputs.fileHumanoid.empty() && !automatic) return Error{automatic.error()};
    fail("missing slots " + missing +
         (automatic ? "" : " (automatic mapping failed: " + automatic.error() + ")"));
  }
  if (!errors.empty()) return Error{(inputs.userJson ? source + ": " : std::string()) + errors};
  // Plausibility: each finding halves the confidence of the slots it names.
  std::vector<Finding> checks = plausibilityFindings(slotGeometry(skeleton, info, map));
  for (const Finding& f : checks) {
    for (int i = 0; i < kSlotCount; ++i) {
      const std::string name = slotName(static_cast<Slot>(i));
      const std::string& subject = f.subject;
      const size_t at = subject.find(name);
      const bool names =
          at != std::string::npos && (at + name.size() == subject.size() || subject[at + name.size()] == '/');
      if (names) report.slots[static_cast<size_t>(i)].confidence *= 0.5;
    }
  }
  report.findings.insert(report.findings.end(), checks.begin(), checks.end());
  report.confidence = 1.0;
  for (int i = 0; i < kSlotCount; ++i) {
    if (slotRequired(static_cast<Slot>(i)))
      report.confidence = std::min(report.confidence, report.slots[static_cast<size_t>(i)].confidence);
  }
  return report;
}

Result<HumanoidMap> mapHumanoidFromJson(const Skeleton& skeleton, const std::string& json,
                                        const std::string& sourceName) {
  MapInputs inputs;
  inputs.userJson = json;
  inputs.userSource = sourceName;
  Result<HumanoidMapReport> report = mapHumanoidReport(skeleton, inputs);
  if (!report) return Error{report.error()};
  return report->map;
}

std::string humanoidMapJson(const Skeleton& skeleton, const HumanoidMap& map) {
  nlohmann::ordered_json slots = nlohmann::ordered_json::object();
  for (int i = 0; i < kSlotCount; ++i) {
    const int j = map.joint[static_cast<size_t>(i)];
    slots[slotName(static_cast<Slot>(i))] =
        j >= 0 && j < skeleton.jointCount()
            ? nlohmann::ordered_json(skeleton.jointNames[static_cast<size_t>(j)])
            : nlohmann::ordered_json(nullptr);
  }
  nlohmann::ordered_json doc;
  doc["version"] = 1;
  doc["slots"] = slots;
  return doc.dump(2) + "\n";
}

}  // namespace handoff
