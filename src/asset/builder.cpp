// The ragdoll builder: slots -> bodies (shapes, frames, masses) -> joints (frames, limits, drives).
#include "asset_internal.h"
#include "handoff/rig.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>

namespace handoff {
using namespace asset_detail;

namespace {

// ---------------------------------------------------------------------------------------------
// Mass fractions. Source: P. de Leva (1996), "Adjustments to Zatsiorsky-Seluyanov's segment
// inertia parameters", Journal of Biomechanics 29(9):1223-1230, Table 4, males, percent of total
// body mass. Head = head + neck; the trunk (43.46 %) is split into its upper (UPT, chest), middle
// (MPT, lower spine) and lower (LPT, pelvis) parts. The 16 fractions sum to 100.00 %.
// ---------------------------------------------------------------------------------------------
double massPercent(Slot slot) {
  switch (slot) {
    case Slot::Pelvis:
      return 11.17;
    case Slot::LowerSpine:
      return 16.33;
    case Slot::Chest:
      return 15.96;
    case Slot::Head:
      return 6.94;
    case Slot::UpperArmL:
    case Slot::UpperArmR:
      return 2.71;
    case Slot::LowerArmL:
    case Slot::LowerArmR:
      return 1.62;
    case Slot::HandL:
    case Slot::HandR:
      return 0.61;
    case Slot::UpperLegL:
    case Slot::UpperLegR:
      return 14.16;
    case Slot::LowerLegL:
    case Slot::LowerLegR:
      return 4.33;
    case Slot::FootL:
    case Slot::FootR:
      return 1.37;
    case Slot::Count:
      break;
  }
  return 0.0;
}

bool isRight(Slot s) {
  return s == Slot::UpperArmR || s == Slot::LowerArmR || s == Slot::HandR || s == Slot::UpperLegR ||
         s == Slot::LowerLegR || s == Slot::FootR;
}

std::string fmt(double v, int digits = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

Finding finding(Finding::Severity severity, std::string code, std::string subject, std::string message) {
  return Finding{severity, std::move(code), std::move(subject), std::move(message)};
}

// ---------------------------------------------------------------------------------------------
// Joint overrides (BuildOptions::overridesJson).
// ---------------------------------------------------------------------------------------------
struct PresetPatch {
  std::optional<Vec3> lower, upper;
  std::optional<double> stiffness, damping, maxTorque, breakForce, breakTorque;
};

struct Overrides {
  std::array<PresetPatch, kJointGroupCount> groups;
  std::vector<std::pair<std::string, PresetPatch>> bones;
};

Result<PresetPatch> parsePatch(const nlohmann::json& j, const std::string& path) {
  if (!j.is_object()) return Error{path + ": expected an object of preset fields"};
  PresetPatch p;
  for (const auto& [key, value] : j.items()) {
    const std::string at = path + "." + key;
    if (key == "lower" || key == "upper") {
      if (!value.is_array() || value.size() != 3 || !value[0].is_number() || !value[1].is_number() ||
          !value[2].is_number()) {
        return Error{at + ": expected [x, y, z] in radians"};
      }
      const Vec3 v{value[0].get<double>(), value[1].get<double>(), value[2].get<double>()};
      if (!isFinite(v) || std::abs(v.x) > kPi || std::abs(v.y) > kPi || std::abs(v.z) > kPi) {
        return Error{at + ": angles must be finite and within [-pi, pi]"};
      }
      (key == "lower" ? p.lower : p.upper) = v;
    } else if (key == "stiffness" || key == "damping" || key == "maxTorque" || key == "breakForce" ||
               key == "breakTorque") {
      double v = 0.0;
      if (value.is_string() && value.get<std::string>() == "inf" && key != "stiffness" && key != "damping") {
        v = std::numeric_limits<double>::infinity();
      } else if (value.is_number()) {
        v = value.get<double>();
      } else {
        return Error{at + ": expected a number"};
      }
      const bool positive = key != "stiffness" && key != "damping";
      if (std::isnan(v) || v < 0.0 || (positive && v <= 0.0) || (!positive && std::isinf(v))) {
        return Error{at + (positive ? ": must be > 0" : ": must be finite and >= 0")};
      }
      if (key == "stiffness") p.stiffness = v;
      if (key == "damping") p.damping = v;
      if (key == "maxTorque") p.maxTorque = v;
      if (key == "breakForce") p.breakForce = v;
      if (key == "breakTorque") p.breakTorque = v;
    } else {
      const std::vector<std::string> known{"lower",     "upper",      "stiffness",  "damping",
                                           "maxTorque", "breakForce", "breakTorque"};
      const std::string suggestion = didYouMean(key, known);
      return Error{at + ": unknown field '" + validUtf8(key) + "'" +
                   (suggestion.empty()
                        ? "; allowed: lower upper stiffness damping maxTorque breakForce breakTorque"
                        : suggestion)};
    }
  }
  return p;
}

Result<Overrides> parseOverrides(const std::string& text) {
  Overrides out;
  if (text.empty()) return out;
  if (const std::optional<size_t> at = jsonTooDeep(text)) {
    return Error{"overrides: arrays and objects nested deeper than " + std::to_string(kMaxJsonDepth) +
                 " levels at byte " + std::to_string(*at + 1)};
  }
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return Error{"overrides: JSON parse error at byte " + std::to_string(e.byte) + ": " + e.what()};
  }
  if (!doc.is_object()) return Error{"overrides: expected an object {\"groups\": {...}, \"<bone>\": {...}}"};
  for (const auto& [key, value] : doc.items()) {
    if (key == "groups") {
      if (!value.is_object()) return Error{"overrides.groups: expected an object of group names"};
      for (const auto& [group, fields] : value.items()) {
        const std::optional<JointGroup> g = jointGroupFromName(group);
        if (!g) return Error{"overrides.groups." + group + ": unknown joint group"};
        Result<PresetPatch> p = parsePatch(fields, "overrides.groups." + group);
        if (!p) return Error{p.error()};
        out.groups[static_cast<size_t>(*g)] = *p;
      }
      continue;
    }
    Result<PresetPatch> p = parsePatch(value, "overrides." + key);
    if (!p) return Error{p.error()};
    out.bones.emplace_back(key, *p);
  }
  return out;
}

void applyPatch(const PresetPatch& p, JointPreset& preset, double* breakForce, double* breakTorque) {
  if (p.lower) preset.angularLower = *p.lower;
  if (p.upper) preset.angularUpper = *p.upper;
  if (p.stiffness) preset.driveStiffness = *p.stiffness;
  if (p.damping) preset.driveDamping = *p.damping;
  if (p.maxTorque) preset.maxDriveTorque = *p.maxTorque;
  if (breakForce && p.breakForce) *breakForce = *p.breakForce;
  if (breakTorque && p.breakTorque) *breakTorque = *p.breakTorque;
}

// ---------------------------------------------------------------------------------------------
// The build.
// ---------------------------------------------------------------------------------------------
struct SlotBody {
  Slot slot = Slot::Count;
  int joint = -1;
  Vec3 boneStart{0.0}, boneEnd{0.0};  ///< The bone the body covers (model space).
  Vec3 boneDir{0.0, 1.0, 0.0};        ///< Unit, boneStart -> boneEnd (joint twist axis).
  Transform rootFromBody;             ///< T_RC.
  ShapeDesc shape;
  double initialRadius = 0.0;
  double mass = 0.0;
  int parent = -1;
};

class Builder {
 public:
  Builder(const Skeleton& s, const BuildOptions& o, std::vector<Finding>& findings,
          HumanoidMapReport* mapReport)
      : s_(s), o_(o), info_(s), findings_(findings), mapReport_(mapReport) {}
  Result<RagdollAsset> run();

 private:
  Status checkOptions() const;
  Vec3 pos(Slot slot) const { return info_.pos(map_[slot]); }
  bool has(Slot slot) const { return map_[slot] >= 0; }
  Vec3 forwardFromSkeleton() const;
  Vec3 endOfBone(int joint, const Vec3& fallbackDir, double fallbackLength, const char* what);
  Vec3 neckBase(bool forHead) const;
  void addBodies();
  void addCapsule(Slot slot, const Vec3& start, const Vec3& end, double radius);
  void resolveOverlaps();
  void assignMasses();
  void addJoints(RagdollAsset& asset, const Overrides& overrides);
  double radiusRatio(double perSlot) const { return o_.limbRadiusRatio > 0.0 ? o_.limbRadiusRatio : perSlot; }

  const Skeleton& s_;
  const BuildOptions& o_;
  SkeletonInfo info_;
  std::vector<Finding>& findings_;
  HumanoidMapReport* mapReport_ = nullptr;
  HumanoidMap map_;
  Vec3 forward_{0.0, 0.0, 1.0};
  double height_ = 0.0;
  double hipHeight_ = 0.0;
  double shoulderWidth_ = 0.0;
  bool lowerSpine_ = false;  ///< The lower spine gets a body.
  std::vector<SlotBody> bodies_;
};

Status Builder::checkOptions() const {
  const auto bad = [](double v) { return !std::isfinite(v) || v <= 0.0; };
  if (bad(o_.totalMass)) return Error{"options.totalMass must be finite and > 0"};
  if (bad(o_.headRadiusScale)) return Error{"options.headRadiusScale must be finite and > 0"};
  if (!std::isfinite(o_.limbRadiusRatio) || o_.limbRadiusRatio < 0.0 || o_.limbRadiusRatio >= 0.5) {
    return Error{"options.limbRadiusRatio must be in [0, 0.5)"};
  }
  if (!std::isfinite(o_.clearance) || o_.clearance < 0.0) return Error{"options.clearance must be >= 0"};
  const ShapeRatios& r = o_.ratios;
  for (double v : {r.upperArm, r.lowerArm, r.upperLeg, r.lowerLeg, r.pelvis, r.spine, r.chest, r.head,
                   r.handWidth, r.handThickness, r.footWidth}) {
    if (bad(v)) return Error{"options.ratios: every ratio must be finite and > 0"};
  }
  if (!std::isfinite(r.heel) || r.heel < 0.0) return Error{"options.ratios.heel must be >= 0"};
  const StabilizeOptions& st = o_.stabilizeOptions;
  if (bad(st.minMassRatio) || bad(st.maxMassRatio) || st.minMassRatio > st.maxMassRatio ||
      !std::isfinite(st.maxInertiaIncrease) || st.maxInertiaIncrease < 1.0) {
    return Error{
        "options.stabilizeOptions: need 0 < minMassRatio <= maxMassRatio and maxInertiaIncrease >= 1"};
  }
  return {};
}

Vec3 Builder::forwardFromSkeleton() const {
  // Hips: forward = (left hip - right hip) x up, horizontal. Feet refine it when they agree.
  const Vec3 lr = pos(Slot::UpperLegL) - pos(Slot::UpperLegR);
  Vec3 hips = glm::cross(lr, kUp);
  hips.y = 0.0;
  const bool hipsOk = glm::length(hips) > 1e-6;
  if (hipsOk) hips = glm::normalize(hips);
  Vec3 feet{0.0};
  for (Slot f : {Slot::FootL, Slot::FootR}) {
    if (!has(f)) continue;
    const auto far = info_.farthestInSubtree(map_[f], pos(f));
    Vec3 v = far.point - pos(f);
    v.y = 0.0;
    if (glm::length(v) > 1e-6) feet += glm::normalize(v);
  }
  if (glm::length(feet) > 1e-6) {
    feet = glm::normalize(feet);
    if (!hipsOk || glm::dot(feet, hips) > 0.7) return feet;
  }
  return hipsOk ? hips : Vec3{0.0, 0.0, 1.0};
}

Vec3 Builder::endOfBone(int joint, const Vec3& fallbackDir, double fallbackLength, const char* what) {
  if (info_.tip[static_cast<size_t>(joint)]) return *info_.tip[static_cast<size_t>(joint)];
  const std::vector<int>& kids = info_.children[static_cast<size_t>(joint)];
  if (!kids.empty()) {
    // The farthest child (e.g. the palms of a hand-less forearm all start at the wrist).
    Vec3 best = info_.pos(kids[0]);
    for (int c : kids) {
      if (glm::length(info_.pos(c) - info_.pos(joint)) > glm::length(best - info_.pos(joint)))
        best = info_.pos(c);
    }
    if (glm::length(best - info_.pos(joint)) > 1e-4) return best;
  }
  findings_.push_back(finding(Finding::Severity::Info, "estimated_tip",
                              s_.jointNames[static_cast<size_t>(joint)],
                              std::string("no end site or child: the ") + what + " length is estimated as " +
                                  fmt(fallbackLength) + " m"));
  return info_.pos(joint) + fallbackDir * fallbackLength;
}

Vec3 Builder::neckBase(bool forHead) const {
  // Path chest -> head. For the head radius: the chest's child on it (CMU's Neck, even where it
  // coincides with Spine1). For the chest capsule: the first joint clear of the chest joint.
  const std::vector<int> path = info_.path(map_[Slot::Chest], map_[Slot::Head]);
  if (path.size() < 2) return pos(Slot::Head);
  if (forHead) return info_.pos(path[1]);
  for (size_t i = 1; i < path.size(); ++i) {
    if (glm::length(info_.pos(path[i]) - pos(Slot::Chest)) >= 0.015 * height_) return info_.pos(path[i]);
  }
  return pos(Slot::Head);
}

void Builder::addCapsule(Slot slot, const Vec3& start, const Vec3& end, double radius) {
  SlotBody b;
  b.slot = slot;
  b.joint = map_[slot];
  b.boneStart = start;
  b.boneEnd = end;
  const double length = glm::length(end - start);
  b.boneDir = length > 1e-4 ? (end - start) / length : kUp;
  const Vec3 y = b.boneDir;
  const Vec3 z = perpendicularTo(forward_, y, kUp);
  const Vec3 x = glm::cross(y, z);
  b.rootFromBody = Transform{rotationFromAxes(x, y, z), 0.5 * (start + end)};
  b.shape.type = ShapeType::Capsule;
  b.shape.radius = radius;
  b.shape.halfHeight = 0.5 * length;
  b.initialRadius = radius;
  if (length <= 1e-4) {
    findings_.push_back(finding(Finding::Severity::Warning, "estimated_tip", slotName(slot),
                                "bone of zero length: the capsule degenerates to a sphere"));
  }
  bodies_.push_back(b);
}

void Builder::addBodies() {
  const ShapeRatios& r = o_.ratios;
  const double thigh = 0.5 * (glm::length(pos(Slot::LowerLegL) - pos(Slot::UpperLegL)) +
                              glm::length(pos(Slot::LowerLegR) - pos(Slot::UpperLegR)));
  // Torso.
  // A lower spine shorter than most of the pelvis and chest radii would force both capsules thin
  // (they are not adjacent and must not touch): it rides on the pelvis instead.
  lowerSpine_ = has(Slot::LowerSpine);
  if (lowerSpine_) {
    const double length = glm::length(pos(Slot::Chest) - pos(Slot::LowerSpine));
    const double radii = (r.pelvis + r.chest) * shoulderWidth_;
    if (length < 0.8 * radii) {
      lowerSpine_ = false;
      findings_.push_back(finding(Finding::Severity::Info, "lower_spine_skipped",
                                  s_.jointNames[static_cast<size_t>(map_[Slot::LowerSpine])],
                                  "lower spine " + fmt(length) +
                                      " m long, shorter than 0.8 x the pelvis and chest radii (" +
                                      fmt(radii) + " m): no body, it rides on the pelvis"));
    }
  }
  const Vec3 pelvisEnd = lowerSpine_ ? pos(Slot::LowerSpine) : pos(Slot::Chest);
  addCapsule(Slot::Pelvis, pos(Slot::Pelvis), pelvisEnd, r.pelvis * shoulderWidth_);
  if (lowerSpine_)
    addCapsule(Slot::LowerSpine, pos(Slot::LowerSpine), pos(Slot::Chest), r.spine * shoulderWidth_);
  addCapsule(Slot::Chest, pos(Slot::Chest), neckBase(false), r.chest * shoulderWidth_);
  // Head: a sphere touching the crown, radius from the neck-base-to-crown distance.
  {
    const int head = map_[Slot::Head];
    const Vec3 base = neckBase(true);
    Vec3 crown;
    if (info_.tip[static_cast<size_t>(head)]) {
      crown = *info_.tip[static_cast<size_t>(head)];
    } else if (!info_.children[static_cast<size_t>(head)].empty()) {
      crown = info_.farthestInSubtree(head, pos(Slot::Head)).point;
      if (crown.y < pos(Slot::Head).y) {
        // Long hair or a veil hanging from the head: the crown is the highest point above it.
        for (const Vec3& p : info_.subtreePoints(head)) {
          if (p.y > crown.y || crown.y < pos(Slot::Head).y) crown = p;
        }
      }
    } else {
      crown = endOfBone(head, directionOr(base, pos(Slot::Head), kUp), 0.2 * hipHeight_, "head");
    }
    if (glm::length(crown - pos(Slot::Head)) < 1e-4) {
      crown = endOfBone(head, directionOr(base, pos(Slot::Head), kUp), 0.2 * hipHeight_, "head");
    }
    SlotBody b;
    b.slot = Slot::Head;
    b.joint = head;
    b.boneStart = pos(Slot::Head);
    b.boneEnd = crown;
    b.boneDir = directionOr(pos(Slot::Head), crown, kUp);
    const Vec3 up = directionOr(base, crown, b.boneDir);
    const double radius = o_.headRadiusScale * r.head * glm::length(crown - base);
    const Vec3 z = perpendicularTo(forward_, up, kUp);
    b.rootFromBody = Transform{rotationFromAxes(glm::cross(up, z), up, z), crown - radius * up};
    b.shape.type = ShapeType::Sphere;
    b.shape.radius = radius;
    b.initialRadius = radius;
    bodies_.push_back(b);
  }
  // Arms.
  for (bool left : {true, false}) {
    const Slot upper = left ? Slot::UpperArmL : Slot::UpperArmR;
    const Slot lower = left ? Slot::LowerArmL : Slot::LowerArmR;
    const Slot hand = left ? Slot::HandL : Slot::HandR;
    const Vec3 shoulder = pos(upper);
    const Vec3 elbow = pos(lower);
    const double upperLen = glm::length(elbow - shoulder);
    addCapsule(upper, shoulder, elbow, radiusRatio(r.upperArm) * upperLen);
    const Vec3 upperDir = directionOr(shoulder, elbow, -kUp);
    const Vec3 wrist = has(hand) ? pos(hand) : endOfBone(map_[lower], upperDir, 0.8 * upperLen, "forearm");
    const double foreLen = glm::length(wrist - elbow);
    addCapsule(lower, elbow, wrist, radiusRatio(r.lowerArm) * foreLen);
    if (has(hand) && o_.hands) {
      const Vec3 foreDir = directionOr(elbow, wrist, upperDir);
      const auto far = info_.farthestInSubtree(map_[hand], wrist);
      const Vec3 tip =
          far.distance > 1e-4 ? far.point : endOfBone(map_[hand], foreDir, 0.74 * foreLen, "hand");
      SlotBody b;
      b.slot = hand;
      b.joint = map_[hand];
      b.boneStart = wrist;
      b.boneEnd = tip;
      b.boneDir = directionOr(wrist, tip, foreDir);
      const double length = glm::length(tip - wrist);
      const Vec3 y = b.boneDir;
      const Vec3 z = perpendicularTo(forward_, y, kUp);  // the palm's width
      b.rootFromBody = Transform{rotationFromAxes(glm::cross(y, z), y, z), 0.5 * (wrist + tip)};
      b.shape.type = ShapeType::Box;
      b.shape.halfExtents = Vec3{0.5 * r.handThickness * length, 0.5 * length, 0.5 * r.handWidth * length};
      bodies_.push_back(b);
    }
  }
  // Legs.
  for (bool left : {true, false}) {
    const Slot upper = left ? Slot::UpperLegL : Slot::UpperLegR;
    const Slot lower = left ? Slot::LowerLegL : Slot::LowerLegR;
    const Slot foot = left ? Slot::FootL : Slot::FootR;
    const Vec3 hip = pos(upper);
    const Vec3 knee = pos(lower);
    addCapsule(upper, hip, knee, radiusRatio(r.upperLeg) * glm::length(knee - hip));
    const Vec3 thighDir = directionOr(hip, knee, -kUp);
    const Vec3 ankle = has(foot) ? pos(foot) : endOfBone(map_[lower], thighDir, thigh, "shank");
    const double shankLen = glm::length(ankle - knee);
    addCapsule(lower, knee, ankle, radiusRatio(r.lowerLeg) * shankLen);
    if (has(foot) && o_.feet) {
      // A box with a flat sole: from the heel (behind the ankle) to the toe tip, from the lowest
      // point of the foot up to the ankle. Aligned with the floor, not the ankle-toe bone, so it
      // stands flat in the bind pose.
      const auto far = info_.farthestInSubtree(map_[foot], ankle);
      const Vec3 toe =
          far.distance > 1e-4 ? far.point : endOfBone(map_[foot], forward_, 0.3 * shankLen, "foot");
      double sole = toe.y;
      for (const Vec3& p : info_.subtreePoints(map_[foot])) sole = std::min(sole, p.y);
      Vec3 f = toe - ankle;
      f.y = 0.0;
      f = glm::length(f) > 1e-4 ? glm::normalize(f) : forward_;
      const double reach = std::max(glm::dot(toe - ankle, f), 1e-3);
      const double length = (1.0 + r.heel) * reach;
      const double heightBox = std::max(ankle.y - sole, 0.2 * length);
      const Vec3 centre{ankle.x + f.x * 0.5 * (1.0 - r.heel) * reach, sole + 0.5 * heightBox,
                        ankle.z + f.z * 0.5 * (1.0 - r.heel) * reach};
      SlotBody b;
      b.slot = foot;
      b.joint = map_[foot];
      b.boneStart = ankle;
      b.boneEnd = toe;
      b.boneDir = directionOr(ankle, toe, f);
      b.rootFromBody = Transform{rotationFromAxes(glm::cross(kUp, f), kUp, f), centre};
      b.shape.type = ShapeType::Box;
      b.shape.halfExtents = Vec3{0.5 * r.footWidth * length, 0.5 * heightBox, 0.5 * length};
      bodies_.push_back(b);
    }
  }
  // Parent bodies: the body of the nearest parent slot that has one. The ragdoll's tree follows
  // the slots, not the skeleton: a foot parented to the root, a Rigify DEF- thigh under a control
  // bone still hang from the shank and the pelvis (the mapper checks they touch them).
  std::sort(bodies_.begin(), bodies_.end(),
            [](const SlotBody& a, const SlotBody& b) { return a.slot < b.slot; });
  for (SlotBody& b : bodies_) {
    b.parent = -1;
    for (Slot up = parentSlot(b.slot); up != Slot::Count && b.parent < 0; up = parentSlot(up)) {
      for (size_t k = 0; k < bodies_.size(); ++k) {
        if (bodies_[k].slot == up) b.parent = static_cast<int>(k);
      }
    }
  }
}

void Builder::resolveOverlaps() {
  // Non-adjacent bodies must not touch in the bind pose: shrink the radii of both (a box keeps
  // its size) until they keep `clearance`, never below 40 % of the initial radius. Capsule
  // segments stay on the joints.
  const size_t n = bodies_.size();
  const auto adjacent = [&](size_t a, size_t b) {
    return bodies_[a].parent == static_cast<int>(b) || bodies_[b].parent == static_cast<int>(a);
  };
  for (int pass = 0; pass < 64; ++pass) {
    std::vector<double> scale(n, 1.0);
    bool any = false;
    for (size_t a = 0; a < n; ++a) {
      for (size_t b = a + 1; b < n; ++b) {
        if (adjacent(a, b)) continue;
        const double ra = roundingRadius(bodies_[a].shape);
        const double rb = roundingRadius(bodies_[b].shape);
        if (ra + rb <= 0.0) continue;
        const double core = coreDistance({bodies_[a].shape, bodies_[a].rootFromBody},
                                         {bodies_[b].shape, bodies_[b].rootFromBody});
        const double allowed = core - o_.clearance;
        if (ra + rb <= allowed + 1e-12) continue;
        const double factor = std::max(allowed, 0.0) / (ra + rb);
        scale[a] = std::min(scale[a], factor);
        scale[b] = std::min(scale[b], factor);
      }
    }
    for (size_t i = 0; i < n; ++i) {
      if (scale[i] >= 1.0 || roundingRadius(bodies_[i].shape) <= 0.0) continue;
      const double floor = 0.4 * bodies_[i].initialRadius;
      const double next = std::max(bodies_[i].shape.radius * scale[i], floor);
      if (next < bodies_[i].shape.radius - 1e-12) {
        bodies_[i].shape.radius = next;
        any = true;
      }
    }
    if (!any) break;
  }
  for (const SlotBody& b : bodies_) {
    if (roundingRadius(b.shape) < b.initialRadius * 0.99) {
      findings_.push_back(finding(Finding::Severity::Info, "radius_reduced",
                                  s_.jointNames[static_cast<size_t>(b.joint)],
                                  std::string(slotName(b.slot)) + " radius " + fmt(b.initialRadius) + " -> " +
                                      fmt(b.shape.radius) + " m to clear non-adjacent bodies"));
    }
  }
}

void Builder::assignMasses() {
  // de Leva fractions; a slot without a body hands its share to the body that carries its
  // segment: hands to forearms, feet to shanks, a missing lower spine half to the pelvis and
  // half to the chest (the middle trunk lies between them).
  std::array<double, kSlotCount> percent{};
  for (int i = 0; i < kSlotCount; ++i) percent[static_cast<size_t>(i)] = massPercent(static_cast<Slot>(i));
  const auto present = [&](Slot s) {
    return std::any_of(bodies_.begin(), bodies_.end(), [&](const SlotBody& b) { return b.slot == s; });
  };
  const auto move = [&](Slot from, Slot to, double share) {
    const double amount = percent[static_cast<size_t>(from)] * share;
    percent[static_cast<size_t>(to)] += amount;
    findings_.push_back(finding(Finding::Severity::Info, "mass_moved", slotName(from),
                                std::string(slotName(from)) + " has no body: " + fmt(amount, 2) +
                                    " % of the mass goes to " + slotName(to)));
  };
  if (!present(Slot::LowerSpine)) {
    move(Slot::LowerSpine, Slot::Pelvis, 0.5);
    move(Slot::LowerSpine, Slot::Chest, 0.5);
  }
  for (auto [from, to] : {std::pair{Slot::HandL, Slot::LowerArmL}, std::pair{Slot::HandR, Slot::LowerArmR},
                          std::pair{Slot::FootL, Slot::LowerLegL}, std::pair{Slot::FootR, Slot::LowerLegR}}) {
    if (!present(from)) move(from, to, 1.0);
  }
  double sum = 0.0;
  for (const SlotBody& b : bodies_) sum += percent[static_cast<size_t>(b.slot)];
  for (SlotBody& b : bodies_) b.mass = o_.totalMass * percent[static_cast<size_t>(b.slot)] / sum;
}

// Neutral pose angles (jointAngles convention, zero twist) that turn the bind bone direction
// (J's X) into `neutral`: the offsets between anatomical limits and limits relative to bind.
// The child's X after Rx(0) Ry(b) Rz(c) is (cos b cos c, sin c, -sin b cos c): b is taken in
// [-pi/2, pi/2] (the middle Euler angle's range) and c in (-pi, pi].
Vec3 neutralAngles(const Vec3& neutralInJoint, bool hinge) {
  const Vec3 n = glm::normalize(neutralInJoint);
  if (hinge) return Vec3{0.0, 0.0, std::atan2(n.y, n.x)};
  const double horizontal = std::hypot(n.x, n.z);
  if (horizontal < 1e-9) return Vec3{0.0, 0.0, std::atan2(n.y, 0.0)};
  const double b = std::abs(n.x) > 1e-12 ? std::atan(-n.z / n.x) : (n.z > 0.0 ? -0.5 * kPi : 0.5 * kPi);
  const double rho = n.x >= 0.0 ? horizontal : -horizontal;
  return Vec3{0.0, b, std::atan2(n.y, rho)};
}

void Builder::addJoints(RagdollAsset& asset, const Overrides& overrides) {
  const double massScale = o_.totalMass / 70.0;
  const double lengthScale = height_ / 1.75;
  for (size_t i = 0; i < bodies_.size(); ++i) {
    const SlotBody& child = bodies_[i];
    if (child.parent < 0) continue;
    const SlotBody& parent = bodies_[static_cast<size_t>(child.parent)];
    const JointGroup group = jointGroupForSlot(child.slot);
    const Vec3 x = child.boneDir;
    const double side = isRight(child.slot) ? -1.0 : 1.0;
    Vec3 z;
    bool hinge = false;
    switch (group) {
      case JointGroup::Shoulder:  // Z: abduction (raising the arm sideways is positive)
        z = side * perpendicularTo(forward_, x, kUp);
        break;
      case JointGroup::Elbow:
      case JointGroup::Knee: {  // Z: the hinge, perpendicular to the limb plane, + = flexion
        hinge = true;
        const Vec3 flexTowards = group == JointGroup::Elbow ? forward_ : -forward_;
        const Vec3 byDefault = perpendicularTo(glm::cross(x, flexTowards), x, kUp);
        const Vec3 bent = glm::cross(parent.boneDir, x);
        if (glm::length(bent) > std::sin(3.0 * kPi / 180.0)) {
          z = glm::normalize(bent);
          if (glm::dot(z, byDefault) < 0.0) z = -z;
        } else {
          z = byDefault;
        }
        break;
      }
      case JointGroup::Wrist:  // Z: across the palm
        z = side * perpendicularTo(forward_, x, kUp);
        break;
      case JointGroup::Ankle:  // Z: + = dorsiflexion
        z = perpendicularTo(glm::cross(x, kUp), x, forward_);
        break;
      default:  // spine, neck, hip: Z: + = flexion (bending forward)
        z = perpendicularTo(glm::cross(x, forward_), x, kUp);
        break;
    }
    z = perpendicularTo(z, x, kUp);
    const Vec3 y = glm::cross(z, x);
    const Transform rootFromJoint{rotationFromAxes(x, y, z), pos(child.slot)};

    JointDef def;
    def.name = s_.jointNames[static_cast<size_t>(child.joint)];
    def.group = group;
    def.parentBody = child.parent;
    def.childBody = static_cast<int>(i);
    def.bodyAFromJoint = parent.rootFromBody.inverse() * rootFromJoint;
    def.bodyBFromJoint = child.rootFromBody.inverse() * rootFromJoint;

    // Limits: anatomical preset (left side) + group overrides, mirrored for the right side,
    // shifted from the neutral pose to the bind pose, made to contain the bind pose.
    JointPreset preset = defaultJointPreset(group);
    applyPatch(overrides.groups[static_cast<size_t>(group)], preset, &def.breakForce, &def.breakTorque);
    preset.driveStiffness *= massScale * lengthScale * lengthScale;
    preset.driveDamping *= massScale * lengthScale * lengthScale;
    preset.maxDriveTorque *= massScale * lengthScale;
    if (group == JointGroup::Spine && !lowerSpine_) {
      preset.angularLower *= 2.0;  // one joint takes the range of two
      preset.angularUpper *= 2.0;
    }
    if (isRight(child.slot)) {
      const Vec3 lo = preset.angularLower;
      const Vec3 hi = preset.angularUpper;
      preset.angularLower = Vec3{0.0 - hi.x, 0.0 - hi.y, lo.z};  // 0.0 - x: no negative zeros
      preset.angularUpper = Vec3{0.0 - lo.x, 0.0 - lo.y, hi.z};
    }
    Vec3 offset{0.0};
    const glm::dmat3 jointFromRoot = glm::transpose(glm::dmat3(x, y, z));
    if (group == JointGroup::Shoulder || group == JointGroup::Hip) {
      offset = neutralAngles(jointFromRoot * -kUp, false);  // neutral: limb hanging down
    } else if (hinge) {
      offset = neutralAngles(jointFromRoot * parent.boneDir, true);  // neutral: straight limb
    }
    for (int a = 0; a < 3; ++a) {
      double& lo = preset.angularLower[a];
      double& hi = preset.angularUpper[a];
      if (lo >= hi) continue;  // locked or free: the bind pose (angle 0) is the lock value
      lo += offset[a];
      hi += offset[a];
      if (hinge && a == 2 && lo > 0.0) {
        // The bind pose is (slightly) hyperextended: it becomes the straight limit.
        if (lo > 0.05) {
          findings_.push_back(finding(
              Finding::Severity::Info, "limit_widened", def.name,
              "bind pose bent " + fmt(lo) + " rad past straight; the hinge opens from the bind pose"));
        }
        lo = 0.0;
      }
      const double limitY = 1.4;  // keep the middle Euler angle away from its pi/2 singularity
      const double bound = a == 1 ? limitY : kPi;
      lo = std::clamp(lo, -bound, bound);
      hi = std::clamp(hi, -bound, bound);
      if (lo > 0.0 || hi < 0.0) {
        const double oldLo = lo;
        const double oldHi = hi;
        lo = std::min(lo, -0.05);
        hi = std::max(hi, 0.05);
        findings_.push_back(finding(Finding::Severity::Info, "limit_widened", def.name,
                                    std::string("axis ") + "XYZ"[a] + " range [" + fmt(oldLo) + ", " +
                                        fmt(oldHi) + "] rad excluded the bind pose; widened to [" + fmt(lo) +
                                        ", " + fmt(hi) + "]"));
      }
    }
    def.preset = preset;
    for (const auto& [bone, patch] : overrides.bones) {
      if (bone != def.name) continue;
      applyPatch(patch, def.preset, &def.breakForce, &def.breakTorque);
      findings_.push_back(
          finding(Finding::Severity::Info, "override", def.name, "per-bone override applied"));
    }
    asset.joints.push_back(def);
  }
  for (const auto& [bone, patch] : overrides.bones) {
    // Captured by an init-capture: clang 14 cannot capture a structured binding.
    const bool used = std::any_of(asset.joints.begin(), asset.joints.end(),
                                  [&name = bone](const JointDef& j) { return j.name == name; });
    if (!used) {
      findings_.push_back(finding(Finding::Severity::Warning, "override", bone,
                                  "override for a bone that is not the child bone of any joint; ignored"));
    }
  }
}

Result<RagdollAsset> Builder::run() {
  if (Status st = checkOptions(); !st) return Error{st.error()};
  if (Status st = s_.validate(); !st) return Error{"skeleton: " + st.error()};
  Result<Overrides> overrides = parseOverrides(o_.overridesJson);
  if (!overrides) return Error{overrides.error()};
  MapInputs inputs;
  inputs.userJson = o_.mapJson;
  inputs.userSource = o_.mapSource;
  inputs.fileHumanoid = o_.humanoidBones;
  Result<HumanoidMapReport> map = mapHumanoidReport(s_, inputs);
  if (!map) return Error{map.error()};
  map_ = map->map;
  if (mapReport_) *mapReport_ = *map;
  // The plausibility findings come again, on the bodies, from validateRagdoll below.
  for (const Finding& f : map->findings) {
    if (f.code.rfind("map_", 0) == 0) findings_.push_back(f);
  }

  height_ = info_.topY - info_.floorY;
  hipHeight_ = pos(Slot::Pelvis).y - info_.floorY;
  shoulderWidth_ = glm::length(pos(Slot::UpperArmL) - pos(Slot::UpperArmR));
  forward_ = forwardFromSkeleton();
  if (!(height_ > 0.0) || !(shoulderWidth_ > 0.0)) {
    return Error{"skeleton has no height or zero shoulder width in its rest pose"};
  }

  addBodies();
  for (size_t i = 0; i < bodies_.size(); ++i) {
    if (bodies_[i].parent >= static_cast<int>(i)) {
      return Error{"explicit map puts " + std::string(slotName(bodies_[i].slot)) + " above its parent body"};
    }
    if (i > 0 && bodies_[i].parent < 0) {
      return Error{std::string(slotName(bodies_[i].slot)) + " '" +
                   s_.jointNames[static_cast<size_t>(bodies_[i].joint)] + "' is not below the pelvis"};
    }
  }
  resolveOverlaps();
  assignMasses();

  RagdollAsset asset;
  asset.skeletonName = o_.skeletonName;
  asset.totalMass = o_.totalMass;
  asset.map = map_;
  asset.modelForward = forward_;
  asset.modelUp = kUp;
  for (const SlotBody& b : bodies_) {
    BodyDef def;
    def.name = s_.jointNames[static_cast<size_t>(b.joint)];
    def.joint = b.joint;
    def.slot = b.slot;
    def.parentBody = b.parent;
    def.boneFromBody = info_.models[static_cast<size_t>(b.joint)].inverse() * b.rootFromBody;
    def.shape = b.shape;
    def.mass = b.mass;
    def.inertia = shapePrincipalInertia(b.shape, b.mass);
    def.filter = asset.collision.ragdoll;
    asset.bodies.push_back(def);
  }
  addJoints(asset, *overrides);

  const int chest = asset.bodyForSlot(Slot::Chest);
  asset.chestForwardInBody =
      glm::normalize(glm::conjugate(bodies_[static_cast<size_t>(chest)].rootFromBody.rotation) * forward_);
  asset.capsule.radius = std::clamp(0.5 * shoulderWidth_, 0.15 * height_, 0.25 * height_);
  asset.capsule.halfHeight = std::max(0.0, 0.5 * height_ - asset.capsule.radius);
  asset.capsule.bindCenter = Vec3{pos(Slot::Pelvis).x, info_.floorY + 0.5 * height_, pos(Slot::Pelvis).z};

  if (o_.stabilize) {
    std::vector<Finding> changes = stabilize(asset, o_.stabilizeOptions);
    findings_.insert(findings_.end(), changes.begin(), changes.end());
    // A per-bone torque limit is the user's literal value (as its other fields): not rescaled.
    for (JointDef& def : asset.joints) {
      for (const auto& [bone, patch] : overrides->bones) {
        if (bone == def.name && patch.maxTorque) def.preset.maxDriveTorque = *patch.maxTorque;
      }
    }
  }
  std::vector<Finding> problems = validateRagdoll(asset, s_);
  findings_.insert(findings_.end(), problems.begin(), problems.end());
  if (hasErrors(problems)) {
    std::string message = "the built ragdoll fails validation:";
    for (const Finding& f : problems) {
      if (f.severity == Finding::Severity::Error) message += "\n  " + formatFinding(f);
    }
    return Error{message};
  }
  return asset;
}

}  // namespace

JointPreset defaultJointPreset(JointGroup group) {
  // Anatomical ranges relative to the neutral pose, left side, X twist / Y / Z in J (docs/ASSET.md):
  // spine, neck, hip: Z + = flexion; shoulder: Z + = abduction, Y + = extension; elbow, knee:
  // hinge on Z, + = flexion; wrist: twist locked; ankle: Z + = dorsiflexion. Ranges are narrower
  // than full human range of motion where a ragdoll looks better stiff (Unity's wizard and
  // Jolt's benchmark human are tighter still). Drive gains for 70 kg / 1.75 m after DeepMimic's
  // humanoid PD gains (kp, kd = kp / 10), scaled for the heavier body; torque limits similar.
  JointPreset p;
  const auto set = [&p](Vec3 lo, Vec3 hi, double kp, double kd, double maxTorque) {
    p.angularLower = lo;
    p.angularUpper = hi;
    p.driveStiffness = kp;
    p.driveDamping = kd;
    p.maxDriveTorque = maxTorque;
  };
  switch (group) {
    case JointGroup::Spine:
      set({-0.35, -0.30, -0.30}, {0.35, 0.30, 0.50}, 1200.0, 120.0, 400.0);
      break;
    case JointGroup::Neck:
      set({-0.80, -0.50, -0.60}, {0.80, 0.50, 0.70}, 200.0, 20.0, 60.0);
      break;
    case JointGroup::Shoulder:
      set({-0.90, -1.40, -0.50}, {0.90, 0.80, 2.80}, 600.0, 60.0, 150.0);
      break;
    case JointGroup::Elbow:
      set({0.0, 0.0, 0.0}, {0.0, 0.0, 2.60}, 400.0, 40.0, 100.0);
      break;
    case JointGroup::Wrist:
      set({0.0, -0.35, -1.00}, {0.0, 0.35, 1.00}, 100.0, 10.0, 40.0);
      break;
    case JointGroup::Hip:
      set({-0.60, -0.35, -0.35}, {0.60, 0.80, 2.00}, 1000.0, 100.0, 350.0);
      break;
    case JointGroup::Knee:
      set({0.0, 0.0, 0.0}, {0.0, 0.0, 2.60}, 800.0, 80.0, 300.0);
      break;
    case JointGroup::Ankle:
      set({-0.35, -0.30, -0.87}, {0.35, 0.30, 0.35}, 400.0, 40.0, 120.0);
      break;
    case JointGroup::Count:
      break;
  }
  return p;
}

Result<RagdollAsset> buildRagdoll(const Skeleton& skeleton, const BuildOptions& options,
                                  BuildReport* report) {
  std::vector<Finding> findings;
  Result<RagdollAsset> result = Builder(skeleton, options, findings, report ? &report->map : nullptr).run();
  if (report) report->findings.insert(report->findings.end(), findings.begin(), findings.end());
  return result;
}

}  // namespace handoff
