// Plausibility of a humanoid's slots: scale, proportions, sides, head and pelvis placement.
#include "asset_internal.h"

#include "handoff/import.h"

#include <cmath>
#include <cstdio>

namespace handoff::asset_detail {
namespace {

std::string figure(double v, const char* spec = "%.3g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

constexpr double kSoftHipMin = 0.5;  // [m] outside 0.5-1.4 m a hip height warns
constexpr double kSoftHipMax = 1.4;

}  // namespace

std::vector<Finding> plausibilityFindings(const SlotGeometry& g) {
  std::vector<Finding> out;
  const auto at = [&](Slot s) { return g.joint[static_cast<size_t>(s)]; };
  const auto len = [&](Slot s) { return g.length[static_cast<size_t>(s)]; };
  const auto add = [&](Finding::Severity severity, const char* code, std::string subject, std::string message) {
    out.push_back(Finding{severity, code, std::move(subject), std::move(message)});
  };
  if (!at(Slot::Pelvis)) return out;
  const double hip = at(Slot::Pelvis)->y - g.floorY;
  const std::string fix = hip > 0.0 ? figure(0.95 / hip, "%.4g") : std::string("?");
  const bool legs = at(Slot::LowerLegL) && at(Slot::LowerLegR);  // a hip height needs legs
  if (!legs) {
  } else if (!(hip >= kHumanHipMin && hip <= kHumanHipMax)) {
    add(Finding::Severity::Error, "implausible_scale", "pelvis",
        "the pelvis stands " + figure(hip) + " m above the feet, outside the " + figure(kHumanHipMin) + "-" +
            figure(kHumanHipMax) + " m of a human-scale character: re-import with the unit scale times " + fix +
            " (--unit-scale) for a 0.95 m hip");
  } else if (hip < kSoftHipMin || hip > kSoftHipMax) {
    add(Finding::Severity::Warning, "implausible_scale", "pelvis",
        "the pelvis stands " + figure(hip) + " m above the feet, outside the " + figure(kSoftHipMin) + "-" +
            figure(kSoftHipMax) + " m of most adults: check the unit scale (times " + fix + " gives a 0.95 m hip)");
  }
  // Limb ratios and left/right agreement.
  const auto ratio = [&](Slot a, Slot b, const char* what) {
    if (!(len(a) > 0.0) || !(len(b) > 0.0)) return;
    const double r = len(a) / len(b);
    if (r < 0.4 || r > 2.5) {
      add(Finding::Severity::Warning, "proportion", std::string(slotName(a)) + "/" + slotName(b),
          std::string(what) + " ratio " + figure(r) + " (" + figure(len(a)) + " m / " + figure(len(b)) +
              " m) is outside 0.4-2.5: a joint is probably on the wrong bone");
    }
  };
  ratio(Slot::UpperLegL, Slot::LowerLegL, "thigh/shank");
  ratio(Slot::UpperLegR, Slot::LowerLegR, "thigh/shank");
  ratio(Slot::UpperArmL, Slot::LowerArmL, "upper arm/forearm");
  ratio(Slot::UpperArmR, Slot::LowerArmR, "upper arm/forearm");
  for (const auto& [l, r] : {std::pair{Slot::UpperLegL, Slot::UpperLegR}, std::pair{Slot::LowerLegL, Slot::LowerLegR},
                            std::pair{Slot::UpperArmL, Slot::UpperArmR}, std::pair{Slot::LowerArmL, Slot::LowerArmR}}) {
    if (!(len(l) > 0.0) || !(len(r) > 0.0)) continue;
    const double d = std::abs(len(l) - len(r)) / std::max(len(l), len(r));
    if (d > 0.2) {
      add(Finding::Severity::Warning, "proportion", std::string(slotName(l)) + "/" + slotName(r),
          "left and right differ by " + figure(100.0 * d, "%.0f") + " % (" + figure(len(l)) + " m, " +
              figure(len(r)) + " m)");
    }
  }
  // Left/right against the facing the feet give.
  if (g.feetForward && at(Slot::UpperLegL) && at(Slot::UpperLegR)) {
    const Vec3 right = glm::cross(*g.feetForward, kUp);
    if (glm::dot(*at(Slot::UpperLegL) - *at(Slot::UpperLegR), right) > 0.0) {
      add(Finding::Severity::Warning, "side_swap", "upper_leg_l/upper_leg_r",
          "the left thigh stands on the right of a character facing the way its toes point: left and right are "
          "swapped");
    }
  }
  // The head on the neck's continuation.
  if (at(Slot::Head) && at(Slot::Chest)) {
    const Vec3 d = *at(Slot::Head) - *at(Slot::Chest);
    const double span = glm::length(*at(Slot::Head) - *at(Slot::Pelvis));
    const double lateral = std::hypot(d.x, d.z);
    if (d.y <= 0.0) {
      add(Finding::Severity::Warning, "head_offset", "head", "the head is not above the chest");
    } else if (span > 0.0 && lateral > 0.12 * span) {
      add(Finding::Severity::Warning, "head_offset", "head",
          "the head joint is " + figure(lateral) + " m off the vertical through the chest (" +
              figure(100.0 * lateral / span, "%.0f") + " % of its height above the pelvis): a face, hair or hat bone?");
    }
  }
  // The pelvis between the thighs.
  if (at(Slot::UpperLegL) && at(Slot::UpperLegR)) {
    const Vec3 l = *at(Slot::UpperLegL);
    const Vec3 r = *at(Slot::UpperLegR);
    const Vec3 across{l.x - r.x, 0.0, l.z - r.z};
    const double width = glm::length(across);
    const Vec3 mid = 0.5 * (l + r);
    const Vec3 p = *at(Slot::Pelvis);
    const double off = std::hypot(p.x - mid.x, p.z - mid.z);
    if (width > 0.0 && (off > 0.75 * width || p.y < std::min(l.y, r.y) - 0.3 * std::max(hip, 1e-9))) {
      add(Finding::Severity::Warning, "pelvis_offset", "pelvis",
          "the pelvis joint is " + figure(off) + " m from the middle of the thighs (" + figure(width) +
              " m apart): not between them");
    }
  }
  return out;
}

/// Adult radii per slot group [m]: head (circumference 52-62 cm), trunk (half the depth of the
/// chest to half the breadth of the hips), thigh (circumference 45-70 cm), calf (30-45 cm), upper
/// arm (25-40 cm), forearm (22-33 cm); docs/TUNING.md. A shape's radius warns outside half the
/// smallest to twice the largest.
struct HumanRadius {
  double min, max;
};
HumanRadius humanRadius(Slot slot) {
  switch (slot) {
    case Slot::Head:
      return {0.083, 0.099};
    case Slot::Pelvis:
    case Slot::LowerSpine:
    case Slot::Chest:
      return {0.10, 0.18};
    case Slot::UpperLegL:
    case Slot::UpperLegR:
      return {0.072, 0.111};
    case Slot::LowerLegL:
    case Slot::LowerLegR:
      return {0.048, 0.072};
    case Slot::UpperArmL:
    case Slot::UpperArmR:
      return {0.040, 0.064};
    case Slot::LowerArmL:
    case Slot::LowerArmR:
      return {0.035, 0.053};
    default:
      return {0.0, 0.0};  // hands and feet: boxes sized from the bones
  }
}

std::vector<Finding> bodySizeFindings(const std::array<double, kSlotCount>& radius,
                                      const std::array<std::string, kSlotCount>& bodyName) {
  std::vector<Finding> out;
  for (int i = 0; i < kSlotCount; ++i) {
    const auto slot = static_cast<Slot>(i);
    const HumanRadius human = humanRadius(slot);
    const double r = radius[static_cast<size_t>(i)];
    if (!(human.max > 0.0) || !(r > 0.0)) continue;
    const double low = 0.5 * human.min;
    const double high = 2.0 * human.max;
    if (r >= low && r <= high) continue;
    out.push_back(Finding{Finding::Severity::Warning, "body_size", bodyName[static_cast<size_t>(i)],
                          std::string(slotName(slot)) + " body '" + bodyName[static_cast<size_t>(i)] +
                              "' has a radius of " + figure(r) + " m, outside the " + figure(low) + "-" +
                              figure(high) + " m of a human's at this scale (adults " + figure(human.min) +
                              "-" + figure(human.max) + " m): check the unit scale or the shape"});
  }
  return out;
}

}  // namespace handoff::asset_detail
