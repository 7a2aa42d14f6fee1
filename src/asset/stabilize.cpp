// Mass and inertia stabilization after Jolt's RagdollSettings::Stabilize (itself after Oliver
// Strunk's "Stop my Constraints from Blowing Up!"): limit parent/child mass ratios and make
// parents at least as hard to rotate as their children.
#include "handoff/asset.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace handoff {
namespace {
std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}
/// Per body, its mass plus its descendants' (bodies are parent-first).
std::vector<double> subtreeMasses(const RagdollAsset& asset) {
  std::vector<double> subtree(asset.bodies.size(), 0.0);
  for (size_t i = asset.bodies.size(); i-- > 0;) {
    subtree[i] += asset.bodies[i].mass;
    const int p = asset.bodies[i].parentBody;
    if (p >= 0) subtree[static_cast<size_t>(p)] += subtree[i];
  }
  return subtree;
}
}  // namespace

std::vector<Finding> stabilize(RagdollAsset& asset, const StabilizeOptions& options) {
  std::vector<Finding> findings;
  const size_t n = asset.bodies.size();
  if (n < 2) return findings;
  for (size_t i = 0; i < n; ++i) {
    const int p = asset.bodies[i].parentBody;
    if (p >= static_cast<int>(i) || !(asset.bodies[i].mass > 0.0)) {
      findings.push_back({Finding::Severity::Warning, "stabilize_mass", asset.bodies[i].name,
                          "bodies not in parent-first order or without mass: not stabilized"});
      return findings;
    }
  }
  // 1. Mass ratios: ratio[child] = ratio[parent] * clamp(m_child / m_parent, min, max), then
  // masses proportional to the ratios with the total unchanged. Bodies are parent-first, so one
  // pass visits parents before children (Jolt walks each chain breadth-first; same result).
  std::vector<double> ratio(n, 1.0);
  double ratioSum = 0.0;
  double total = 0.0;
  for (size_t i = 0; i < n; ++i) {
    const int p = asset.bodies[i].parentBody;
    if (p >= 0) {
      const double r = asset.bodies[i].mass / asset.bodies[static_cast<size_t>(p)].mass;
      ratio[i] = ratio[static_cast<size_t>(p)] * std::clamp(r, options.minMassRatio, options.maxMassRatio);
    }
    ratioSum += ratio[i];
    total += asset.bodies[i].mass;
  }
  const std::vector<double> subtreeBefore = subtreeMasses(asset);
  const double massPerRatio = total / ratioSum;
  double assigned = 0.0;
  for (size_t i = 0; i < n; ++i) {
    BodyDef& b = asset.bodies[i];
    // The last body takes the rounding remainder so the total stays exact.
    const double next = i + 1 < n ? ratio[i] * massPerRatio : total - assigned;
    assigned += next;
    if (std::abs(next - b.mass) > 1e-12 * total) {
      findings.push_back({Finding::Severity::Info, "stabilize_mass", b.name,
                          std::string(slotName(b.slot)) + " mass " + fmt(b.mass) + " -> " + fmt(next) +
                              " kg (child/parent ratio clamped to [" + fmt(options.minMassRatio) + ", " +
                              fmt(options.maxMassRatio) + "], total kept)"});
    }
    b.inertia *= next / b.mass;
    b.mass = next;
  }
  // Drive torque limits follow the mass moved into each joint's subtree: the presets are for
  // anthropometric masses, and a limit that accelerated a 0.4 kg hand now has a 2.9 kg one to
  // move (Boxing_Toes' wrist: 6.7 times the mass, the limit that tracked the clip's fastest turn
  // no longer does). Gains are kept: the drives get no stiffer.
  if (options.scaleDriveTorque) {
    const std::vector<double> subtreeAfter = subtreeMasses(asset);
    for (JointDef& j : asset.joints) {
      if (j.childBody < 0 || j.childBody >= static_cast<int>(n)) continue;
      const size_t c = static_cast<size_t>(j.childBody);
      const double factor = subtreeAfter[c] / subtreeBefore[c];
      if (!(std::abs(factor - 1.0) > 1e-9) || !std::isfinite(j.preset.maxDriveTorque)) continue;
      findings.push_back({Finding::Severity::Info, "stabilize_drive", j.name,
                          "drive torque limit " + fmt(j.preset.maxDriveTorque) + " -> " +
                              fmt(j.preset.maxDriveTorque * factor) + " N m (its subtree's mass x" +
                              fmt(factor) + ")"});
      j.preset.maxDriveTorque *= factor;
    }
  }
  // 2. Inertia: a parent's principal moments are raised to min(maxIncrease * its largest moment,
  // sum over its descendants of their largest moments).
  std::vector<double> childSum(n, 0.0);
  for (size_t i = n; i-- > 1;) {
    const int p = asset.bodies[i].parentBody;
    if (p < 0) continue;
    const Vec3& in = asset.bodies[i].inertia;
    childSum[static_cast<size_t>(p)] += std::max({in.x, in.y, in.z}) + childSum[i];
  }
  for (size_t i = 0; i < n; ++i) {
    if (childSum[i] <= 0.0) continue;
    BodyDef& b = asset.bodies[i];
    const double largest = std::max({b.inertia.x, b.inertia.y, b.inertia.z});
    const double minimum = std::min(options.maxInertiaIncrease * largest, childSum[i]);
    const Vec3 raised = glm::max(b.inertia, Vec3{minimum});
    if (raised != b.inertia) {
      findings.push_back({Finding::Severity::Info, "stabilize_inertia", b.name,
                          std::string(slotName(b.slot)) + " inertia (" + fmt(b.inertia.x) + ", " +
                              fmt(b.inertia.y) + ", " + fmt(b.inertia.z) + ") -> (" + fmt(raised.x) + ", " +
                              fmt(raised.y) + ", " + fmt(raised.z) + ") kg m^2, toward its children's sum " +
                              fmt(childSum[i])});
      b.inertia = raised;
    }
  }
  return findings;
}

}  // namespace handoff
