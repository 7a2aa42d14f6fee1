// Handoff-side sleeping shared by the crowd and plain worlds: the rest rule's windows and group
// sleeping of touching ragdolls (docs/CROWDS.md).
#include "handoff/crowd.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace handoff {

void RestWindow::advance(std::span<const Transform> pose, std::span<Transform> start, double dt,
                         const RestRule& rule) {
  clock += dt;
  if (clock < rule.window) return;
  double distance = 0.0, angle = 0.0;
  for (size_t b = 0; b < pose.size(); ++b) {
    distance = std::max(distance, glm::length(pose[b].translation - start[b].translation));
    angle = std::max(angle, angleBetween(pose[b].rotation, start[b].rotation));
  }
  const bool creeping = distance <= rule.creepDistance && angle <= rule.creepAngle;
  // One window beyond the creep bounds between creeping ones (a limb twitching in a pile) does not
  // start the creep time over; two in a row do.
  if (creeping) {
    creepClock += clock;
  } else if (twitched) {
    creepClock = 0.0;
  }
  twitched = !creeping;
  settled = (distance <= rule.distance && angle <= rule.angle) || (creeping && creepClock >= rule.creepTime);
  clock = 0.0;
  std::copy(pose.begin(), pose.end(), start.begin());
}

void RestWindow::restart(std::span<const Transform> pose, std::span<Transform> start) {
  clock = creepClock = 0.0;
  settled = twitched = false;
  std::copy(pose.begin(), pose.end(), start.begin());
}

SleepGroups::SleepGroups(const RestRule& rule, double margin) : rule_(rule), margin_(margin) {}

Result<int> SleepGroups::add(std::span<const BodyId> bodies, std::span<const double> radii) {
  if (bodies.empty()) return Error{"SleepGroups::add: a ragdoll needs at least one body"};
  if (radii.size() != bodies.size()) {
    return Error{"SleepGroups::add: " + std::to_string(bodies.size()) + " bodies but " +
                 std::to_string(radii.size()) + " radii"};
  }
  for (size_t b = 0; b < radii.size(); ++b) {
    if (!std::isfinite(radii[b]) || radii[b] < 0.0) {
      return Error{"SleepGroups::add: body " + std::to_string(b) + " has radius " + std::to_string(radii[b]) +
                   " (must be finite and >= 0)"};
    }
  }
  Ragdoll r;
  r.bodies.assign(bodies.begin(), bodies.end());
  r.radii.assign(radii.begin(), radii.end());
  r.pose.resize(bodies.size());
  r.start.resize(bodies.size());
  ragdolls_.push_back(std::move(r));
  parent_.resize(ragdolls_.size());
  groupAtRest_.resize(ragdolls_.size());
  groupAwake_.resize(ragdolls_.size());
  return static_cast<int>(ragdolls_.size()) - 1;
}

int SleepGroups::root(int i) {
  while (parent_[static_cast<size_t>(i)] != i) {
    parent_[static_cast<size_t>(i)] = parent_[static_cast<size_t>(parent_[static_cast<size_t>(i)])];
    i = parent_[static_cast<size_t>(i)];
  }
  return i;
}

void SleepGroups::update(PhysicsWorld& world, double dt) {
  putToSleep_ = 0;
  const int n = static_cast<int>(ragdolls_.size());
  for (Ragdoll& r : ragdolls_) {
    bool allSleeping = true;
    r.eligible = true;
    r.lo = Vec3{1e300};
    r.hi = Vec3{-1e300};
    for (size_t b = 0; b < r.bodies.size(); ++b) {
      const BodyId id = r.bodies[b];
      r.pose[b] = world.transform(id);
      const Vec3 radius{r.radii[b] + margin_};
      r.lo = glm::min(r.lo, r.pose[b].translation - radius);
      r.hi = glm::max(r.hi, r.pose[b].translation + radius);
      r.eligible = r.eligible && world.motionType(id) == MotionType::Dynamic && world.isEnabled(id);
      allSleeping = allSleeping && world.isSleeping(id);
    }
    if (!r.eligible) {
      r.asleep = false;
      r.rest.restart(r.pose, r.start);
      continue;
    }
    if (allSleeping) {
      r.asleep = true;
      continue;
    }
    if (r.asleep) {  // woken by the engine (a hit, an awake body arriving)
      r.asleep = false;
      r.rest.restart(r.pose, r.start);
      continue;
    }
    r.rest.advance(r.pose, r.start, dt, rule_);
  }
  // Touching groups (bounds grown by the margin overlap), in ragdoll order: deterministic.
  for (int i = 0; i < n; ++i) parent_[static_cast<size_t>(i)] = i;
  // Ragdolls not fully dynamic (animated, kinematic) join no group: Bullet wakes what a moving
  // kinematic body touches itself.
  for (int i = 0; i < n; ++i) {
    const Ragdoll& a = ragdolls_[static_cast<size_t>(i)];
    if (!a.eligible) continue;
    for (int j = i + 1; j < n; ++j) {
      const Ragdoll& b = ragdolls_[static_cast<size_t>(j)];
      if (b.eligible && glm::all(glm::lessThanEqual(a.lo, b.hi)) &&
          glm::all(glm::lessThanEqual(b.lo, a.hi))) {
        const int ra = root(i), rb = root(j);
        if (ra != rb) parent_[static_cast<size_t>(std::max(ra, rb))] = std::min(ra, rb);
      }
    }
  }
  std::fill(groupAtRest_.begin(), groupAtRest_.end(), std::uint8_t{1});
  std::fill(groupAwake_.begin(), groupAwake_.end(), std::uint8_t{0});
  for (int i = 0; i < n; ++i) {
    const Ragdoll& r = ragdolls_[static_cast<size_t>(i)];
    const size_t g = static_cast<size_t>(root(i));
    if (!r.eligible || !(r.asleep || r.rest.settled)) groupAtRest_[g] = 0;
    if (!r.asleep) groupAwake_[g] = 1;
  }
  for (int i = 0; i < n; ++i) {
    Ragdoll& r = ragdolls_[static_cast<size_t>(i)];
    const size_t g = static_cast<size_t>(root(i));
    if (!groupAtRest_[g] || !groupAwake_[g] || r.asleep) continue;
    for (BodyId id : r.bodies) world.sleep(id);
    r.asleep = true;
    ++putToSleep_;
  }
}

}  // namespace handoff
