// The conformance suite's runner and the probe shared by its checks.
#include "handoff/physics_conformance.h"
#include "physics_conformance/conformance_internal.h"

#include <cmath>
#include <cstdio>
#include <exception>
#include <utility>

namespace handoff::conformance {
namespace detail {

std::string fmt(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string fmt(const Vec3& value) {
  return "(" + fmt(value.x) + ", " + fmt(value.y) + ", " + fmt(value.z) + ")";
}

std::unique_ptr<PhysicsWorld> Probe::world(const WorldSettings& settings) const {
  std::unique_ptr<PhysicsWorld> made = make_(settings);
  if (made == nullptr) throw Abort("the world factory returned null");
  return made;
}

namespace {
std::string withUnit(const std::string& number, std::string_view unit) {
  return unit.empty() ? number : number + " " + std::string(unit);
}
}  // namespace

bool Probe::near(std::string_view what, double measured, double expected, double tolerance,
                 std::string_view unit) {
  const bool ok = std::abs(measured - expected) <= tolerance;  // false for NaN
  record(ok, std::string(what) + ": " + withUnit(fmt(measured), unit) + " vs " +
                 withUnit(fmt(expected), unit) + " (tolerance " + fmt(tolerance) + ")");
  return ok;
}

bool Probe::nearVec(std::string_view what, const Vec3& measured, const Vec3& expected, double tolerance,
                    std::string_view unit) {
  const double off = glm::length(measured - expected);
  const bool ok = off <= tolerance;
  record(ok, std::string(what) + ": " + withUnit(fmt(measured), unit) + " vs " +
                 withUnit(fmt(expected), unit) + " (off by " + fmt(off) + ", tolerance " + fmt(tolerance) +
                 ")");
  return ok;
}

bool Probe::atMost(std::string_view what, double measured, double limit, std::string_view unit) {
  const bool ok = measured <= limit;
  record(ok, std::string(what) + ": " + withUnit(fmt(measured), unit) + ", at most " +
                 withUnit(fmt(limit), unit));
  return ok;
}

bool Probe::atLeast(std::string_view what, double measured, double limit, std::string_view unit) {
  const bool ok = measured >= limit;
  record(ok, std::string(what) + ": " + withUnit(fmt(measured), unit) + ", at least " +
                 withUnit(fmt(limit), unit));
  return ok;
}

bool Probe::holds(std::string_view what, bool ok, std::string_view figure) {
  record(ok, std::string(what) + ": " + std::string(figure));
  return ok;
}

void Probe::record(bool ok, std::string text) {
  if (!ok && failure_.empty()) failure_ = text;
  figures_.push_back(std::move(text));
}

std::string Probe::detail() const {
  std::string out;
  if (!failure_.empty()) out = "FAILED " + failure_ + ". Figures: ";
  for (std::size_t i = 0; i < figures_.size(); ++i) out += (i == 0 ? "" : "; ") + figures_[i];
  return out;
}

BodyDesc sphereBody(double radius, double mass, const Vec3& position) {
  BodyDesc d;
  d.shape.type = ShapeType::Sphere;
  d.shape.radius = radius;
  d.mass = mass;
  d.worldFromBody = Transform::fromTranslation(position);
  d.linearDamping = 0.0;
  d.angularDamping = 0.0;
  return d;
}

BodyDesc boxBody(const Vec3& halfExtents, double mass, const Transform& pose) {
  BodyDesc d;
  d.shape.type = ShapeType::Box;
  d.shape.halfExtents = halfExtents;
  d.mass = mass;
  d.worldFromBody = pose;
  d.linearDamping = 0.0;
  d.angularDamping = 0.0;
  return d;
}

BodyDesc capsuleBody(double radius, double halfHeight, double mass, const Transform& pose) {
  BodyDesc d;
  d.shape.type = ShapeType::Capsule;
  d.shape.radius = radius;
  d.shape.halfHeight = halfHeight;
  d.mass = mass;
  d.worldFromBody = pose;
  d.linearDamping = 0.0;
  d.angularDamping = 0.0;
  return d;
}

BodyId mustCreate(PhysicsWorld& world, const BodyDesc& desc, std::string_view what) {
  Result<BodyId> id = world.createBody(desc);
  if (!id.ok()) throw Abort("createBody(" + std::string(what) + ") was refused: " + id.error());
  if (!id->valid()) throw Abort("createBody(" + std::string(what) + ") returned an invalid handle");
  return *id;
}

JointId mustCreate(PhysicsWorld& world, const JointDesc& desc, std::string_view what) {
  Result<JointId> id = world.createJoint(desc);
  if (!id.ok()) throw Abort("createJoint(" + std::string(what) + ") was refused: " + id.error());
  if (!id->valid()) throw Abort("createJoint(" + std::string(what) + ") returned an invalid handle");
  return *id;
}

JointDesc jointAt(const PhysicsWorld& world, BodyId a, BodyId b, const Vec3& worldAnchor,
                  const Quat& worldFromJoint) {
  JointDesc j;
  j.bodyA = a;
  j.bodyB = b;
  const Transform wj{worldFromJoint, worldAnchor};
  j.bodyAFromJoint = world.transform(a).inverse() * wj;
  j.bodyBFromJoint = world.transform(b).inverse() * wj;
  return j;
}

Quat relativeRotationFromPoses(const PhysicsWorld& world, const JointDesc& desc) {
  const Quat wa = world.transform(desc.bodyA).rotation * desc.bodyAFromJoint.rotation;
  const Quat wb = world.transform(desc.bodyB).rotation * desc.bodyBFromJoint.rotation;
  return glm::normalize(glm::conjugate(wa) * wb);
}

double anchorDistanceFromPoses(const PhysicsWorld& world, const JointDesc& desc) {
  const Vec3 pa = world.transform(desc.bodyA).transformPoint(desc.bodyAFromJoint.translation);
  const Vec3 pb = world.transform(desc.bodyB).transformPoint(desc.bodyBFromJoint.translation);
  return glm::length(pa - pb);
}

void stepFor(PhysicsWorld& world, int steps) {
  for (int i = 0; i < steps; ++i) world.step(kDt, kSubsteps);
}

namespace {
std::vector<Check> allChecks() {
  std::vector<Check> all;
  for (auto table : {bodyChecks, jointChecks, worldChecks, queryChecks, eventChecks}) {
    const std::vector<Check> part = table();
    all.insert(all.end(), part.begin(), part.end());
  }
  return all;
}
}  // namespace

}  // namespace detail

std::vector<std::string> contractNames() {
  std::vector<std::string> names;
  for (const detail::Check& check : detail::allChecks()) names.emplace_back(check.contract);
  return names;
}

CheckResult runCheck(const std::string& contract, const WorldFactory& make, const Options& options) {
  CheckResult result;
  result.contract = contract;
  for (const detail::Check& check : detail::allChecks()) {
    if (contract != check.contract) continue;
    if (!make) {
      result.detail = "no world factory";
      return result;
    }
    detail::Probe probe(make, options);
    try {
      check.run(probe);
      result.passed = probe.passed();
      result.detail = probe.detail();
    } catch (const detail::Abort& abort) {
      result.detail =
          std::string("FAILED the scene could not be built: ") + abort.what() + ". " + probe.detail();
    } catch (const std::exception& e) {
      result.detail = std::string("FAILED the adapter threw: ") + e.what() + ". " + probe.detail();
    } catch (...) {
      result.detail = "FAILED the adapter threw a non-standard exception. " + probe.detail();
    }
    return result;
  }
  result.detail = "no such contract (contractNames() lists them)";
  return result;
}

std::vector<CheckResult> runAll(const WorldFactory& make, const Options& options) {
  std::vector<CheckResult> results;
  for (const std::string& name : contractNames()) results.push_back(runCheck(name, make, options));
  return results;
}

}  // namespace handoff::conformance
