// The conformance suite of the engine interface (the `physics_conformance` module): checks that
// a PhysicsWorld implementation does what include/handoff/physics.h says, on scenes of a few
// bodies built through the interface alone. Every adapter handoff ships runs it, and a user's own
// adapter (Jolt, PhysX, a game engine's physics) runs it by linking handoff_physics_conformance
// and passing a factory of its worlds (docs/INTEGRATION.md, "Writing an adapter").
//
// Each check is named by the contract it tests ("kinematic.move_gives_velocity",
// "joint.angle_convention_sign", ...); its detail gives the measured figures against the expected
// ones with the tolerance. The tolerances hold for single-precision engines (float state) at
// 60 Hz with 2 substeps; each is justified where the check is defined
// (src/physics_conformance/). A check builds its own worlds with the factory and destroys them.
//
// Thread-safety: runAll and runCheck may run on several threads at once when the factory may
// (each check uses only the worlds it makes).
#pragma once

#include "handoff/physics.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace handoff::conformance {

/// Makes a new, empty world with the settings given (its own simulation space). The suite calls it
/// several times per check; the settings it passes differ from the defaults only in gravity,
/// sleepLinearSpeed, sleepTime and worldHalfExtent.
using WorldFactory = std::function<std::unique_ptr<PhysicsWorld>(const WorldSettings&)>;

/// The outcome of one check.
struct CheckResult {
  std::string contract;  ///< The contract's name, "<area>.<what>" (contractNames()).
  bool passed = false;
  /// The measured figures against the expected ones and their tolerance; for a failure, the first
  /// figure outside its tolerance.
  std::string detail;
};

/// The optional capabilities an adapter claims. A capability that is claimed is checked for what
/// it must do; one that is not claimed must be refused with an error (PhysicsWorld::createShape:
/// "An engine without a kind refuses it with an error").
struct Options {
  bool triangleMeshes = true;  ///< createShape(TriangleMeshDesc) [default true]
  bool convexHulls = true;     ///< createShape(ConvexHullDesc) [default true]
  bool heightfields = true;    ///< createShape(HeightfieldDesc) [default true]
  bool compounds = true;       ///< createShape(CompoundDesc) [default true]
  /// JointDesc::breakForce / breakTorque measured and acted on; not claimed: a finite limit must
  /// be refused by createJoint. [default true]
  bool breakableJoints = true;
  /// PhysicsWorld::closestPoints answered; not claimed: it must report no points. [default true]
  bool closestPoints = true;
};

/// The contracts the suite checks, in the order runAll runs them. Independent of the options.
std::vector<std::string> contractNames();

/// Runs one contract's check on worlds made by `make`. An unknown name, a factory that returns
/// null and a check that throws are failures whose detail says so.
CheckResult runCheck(const std::string& contract, const WorldFactory& make, const Options& options = {});

/// Runs every contract's check (contractNames() order).
std::vector<CheckResult> runAll(const WorldFactory& make, const Options& options = {});

}  // namespace handoff::conformance
