// Shared by the conformance checks (src/physics_conformance/*.cpp): the probe that records
// measured figures against expected ones, scene builders, and the check tables of each file.
#pragma once

#include "handoff/physics.h"
#include "handoff/physics_conformance.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace handoff::conformance::detail {

/// Every check steps at 60 Hz with 2 substeps (handoff's product setting).
inline constexpr double kDt = 1.0 / 60.0;
inline constexpr int kSubsteps = 2;
inline constexpr double kGravity = 9.81;

/// Relative tolerance of a figure an engine computes exactly up to its own rounding: a
/// single-precision engine holds poses and velocities as float (relative rounding 6e-8) and takes a
/// few dozen roundings in a substep's integration and an impulse's application; 1e-5 covers 100
/// substeps of them with room, and is still 1,000 times smaller than any wrong sign, factor or
/// frame this suite looks for.
inline constexpr double kFloatRelative = 1e-5;

/// A body resting on something sits where its shape touches it; an engine may let it sink by its
/// penetration slop (Jolt's default is 2 cm) or hover by a contact margin: 3 cm.
inline constexpr double kRestTolerance = 0.03;

/// A check that cannot go on (a body the scene needs was refused): runCheck reports it as the
/// check's failure with this message.
class Abort : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Records a check's figures: each comparison appends "what: measured vs expected (tolerance)" to
/// the detail; the first one outside its tolerance fails the check and leads the detail.
class Probe {
 public:
  Probe(const WorldFactory& make, const Options& options) : make_(make), options_(options) {}

  /// A new world from the factory (settings as given); Abort when the factory returns null.
  std::unique_ptr<PhysicsWorld> world(const WorldSettings& settings = {}) const;
  const Options& options() const { return options_; }

  /// |measured - expected| <= tolerance.
  bool near(std::string_view what, double measured, double expected, double tolerance,
            std::string_view unit = "");
  /// |measured - expected| (vector length) <= tolerance.
  bool nearVec(std::string_view what, const Vec3& measured, const Vec3& expected, double tolerance,
               std::string_view unit = "");
  /// measured <= limit.
  bool atMost(std::string_view what, double measured, double limit, std::string_view unit = "");
  /// measured >= limit.
  bool atLeast(std::string_view what, double measured, double limit, std::string_view unit = "");
  /// A fact that is true or false; `figure` says what was seen.
  bool holds(std::string_view what, bool ok, std::string_view figure);

  bool passed() const { return failure_.empty(); }
  /// The first failure (if any), then every figure in order.
  std::string detail() const;

 private:
  void record(bool ok, std::string text);

  const WorldFactory& make_;
  const Options& options_;
  std::string failure_;
  std::vector<std::string> figures_;
};

/// "%.6g" of a number, "(x, y, z)" of a vector.
std::string fmt(double value);
std::string fmt(const Vec3& value);

/// Body descriptions with no damping (so figures compare with closed forms) at a pose.
BodyDesc sphereBody(double radius, double mass, const Vec3& position);
BodyDesc boxBody(const Vec3& halfExtents, double mass, const Transform& pose);
BodyDesc capsuleBody(double radius, double halfHeight, double mass, const Transform& pose);
/// createBody, or Abort naming `what` and the adapter's error.
BodyId mustCreate(PhysicsWorld& world, const BodyDesc& desc, std::string_view what);
JointId mustCreate(PhysicsWorld& world, const JointDesc& desc, std::string_view what);
/// A joint whose frame J sits at `worldAnchor` with orientation `worldFromJoint`, written in both
/// bodies at their current poses (anchors coincide, qRel = identity). Limits locked (defaults).
JointDesc jointAt(const PhysicsWorld& world, BodyId a, BodyId b, const Vec3& worldAnchor,
                  const Quat& worldFromJoint = Quat{1.0, 0.0, 0.0, 0.0});
/// qRel = inverse(qA_J) * qB_J of `desc`'s frames at the bodies' current poses, from transform()
/// alone (not jointRelativeRotation).
Quat relativeRotationFromPoses(const PhysicsWorld& world, const JointDesc& desc);
/// World distance between `desc`'s two anchors at the bodies' current poses. [m]
double anchorDistanceFromPoses(const PhysicsWorld& world, const JointDesc& desc);
/// Steps `steps` times at kDt, kSubsteps.
void stepFor(PhysicsWorld& world, int steps);

/// A check: its contract's name and the function measuring it.
struct Check {
  const char* contract;
  void (*run)(Probe& probe);
};
/// The checks of each source file, in the order they run.
std::vector<Check> bodyChecks();   // body, kinematic, motion, impulse (checks_bodies.cpp)
std::vector<Check> jointChecks();  // joint (checks_joints.cpp)
std::vector<Check> worldChecks();  // filter, sleep, step, determinism (checks_world.cpp)
std::vector<Check> queryChecks();  // query, shape, input (checks_queries.cpp)
std::vector<Check> eventChecks();  // lifecycle, breakable joints, contact events (checks_events.cpp)

}  // namespace handoff::conformance::detail
