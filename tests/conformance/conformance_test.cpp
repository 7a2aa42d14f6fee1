// The conformance suite (handoff/physics_conformance.h) on the Bullet adapter, one test per
// contract, and on deliberately broken adapters (conformance/broken_world.h): each fault must fail
// the contracts it breaks, by name, and pass the rest.
#include "handoff/physics.h"
#include "handoff/physics_bullet.h"
#include "handoff/physics_conformance.h"

#include "conformance/broken_world.h"
#include "conformance/conformance_gtest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

namespace handoff {
namespace {

using conformance::CheckResult;
using conformance::WorldFactory;

// [snippet conformance-use]
const WorldFactory kBullet = [](const WorldSettings& settings) { return createBulletWorld(settings); };

HANDOFF_CONFORMANCE_TESTS(BulletConformance, kBullet, conformance::Options{});
// [/snippet]

WorldFactory broken(test::Fault fault) {
  return [fault](const WorldSettings& settings) -> std::unique_ptr<PhysicsWorld> {
    return std::make_unique<test::BrokenWorld>(createBulletWorld(settings), fault);
  };
}

/// The names of the failed checks, their details printed.
std::set<std::string> failedContracts(const std::vector<CheckResult>& results, const char* adapter) {
  std::set<std::string> failed;
  for (const CheckResult& r : results) {
    if (r.passed) continue;
    failed.insert(r.contract);
    std::printf("[ figure ] %s fails %s: %s\n", adapter, r.contract.c_str(), r.detail.c_str());
  }
  std::printf("[ figure ] %s: %zu of %zu contracts fail\n", adapter, failed.size(), results.size());
  return failed;
}

// The decorator itself is faithful: without a fault it passes everything (so the failures below
// are the faults', not the decorator's).
TEST(BrokenAdapter, ForwarderWithoutFaultPassesEveryContract) {
  const std::vector<CheckResult> results = conformance::runAll(broken(test::Fault::None));
  EXPECT_EQ(results.size(), conformance::contractNames().size());
  EXPECT_EQ(failedContracts(results, "forwarder"), std::set<std::string>{});
}

// A sign flipped in the joint angle convention: limits and motors act on the negated angles.
TEST(BrokenAdapter, FlippedAngleSignFailsTheConventionAndTheMotorTargets) {
  const std::set<std::string> failed =
      failedContracts(conformance::runAll(broken(test::Fault::FlippedAngleSign)), "flipped angle sign");
  EXPECT_EQ(failed, (std::set<std::string>{"joint.angle_convention_sign", "joint.motor_reaches_target",
                                           "joint.motor_target_rates"}));
}

// A kinematic move that teleports: the body arrives without the velocity that took it there.
TEST(BrokenAdapter, TeleportingMoveFailsTheKinematicVelocity) {
  const std::set<std::string> failed =
      failedContracts(conformance::runAll(broken(test::Fault::TeleportingMove)), "teleporting move");
  EXPECT_TRUE(failed.count("kinematic.move_gives_velocity") == 1);
  EXPECT_EQ(failed, (std::set<std::string>{"kinematic.move_gives_velocity", "kinematic.move_pushes"}));
}

// State shared between worlds: each world's results depend on the others' (and on the order the
// checks ran in), which only the determinism check can see.
TEST(BrokenAdapter, SharedStateFailsDeterminism) {
  const std::set<std::string> failed =
      failedContracts(conformance::runAll(broken(test::Fault::SharedState)), "shared state");
  EXPECT_EQ(failed, (std::set<std::string>{"determinism.same_calls_twice"}));
}

// A shape kind the adapter does not claim must be refused: Bullet accepts heightfields, so claiming
// not to have them fails that contract (the check reads Options).
TEST(Runner, UnclaimedShapeKindMustBeRefused) {
  conformance::Options options;
  options.heightfields = false;
  const CheckResult result = conformance::runCheck("shape.heightfield", kBullet, options);
  std::printf("[ figure ] %s\n", result.detail.c_str());
  EXPECT_FALSE(result.passed);
  EXPECT_NE(result.detail.find("accepted"), std::string::npos) << result.detail;
}

// The same for breakable joints: Bullet accepts a finite breakForce, so not claiming them fails.
TEST(Runner, UnclaimedBreakableJointsMustBeRefused) {
  conformance::Options options;
  options.breakableJoints = false;
  for (const char* contract : {"joint.break_force", "joint.break_torque"}) {
    const CheckResult result = conformance::runCheck(contract, kBullet, options);
    std::printf("[ figure ] %s\n", result.detail.c_str());
    EXPECT_FALSE(result.passed) << contract;
    EXPECT_NE(result.detail.find("accepted"), std::string::npos) << result.detail;
  }
}

// And for closestPoints: an engine without the query reports none; Bullet reports points.
TEST(Runner, UnclaimedClosestPointsMustReportNone) {
  conformance::Options options;
  options.closestPoints = false;
  const CheckResult result = conformance::runCheck("query.closest_points", kBullet, options);
  std::printf("[ figure ] %s\n", result.detail.c_str());
  EXPECT_FALSE(result.passed);
}

TEST(Runner, UnknownContractsAndNullWorldsFail) {
  const CheckResult unknown = conformance::runCheck("joint.no_such_thing", kBullet);
  EXPECT_FALSE(unknown.passed);
  EXPECT_NE(unknown.detail.find("no such contract"), std::string::npos);
  const CheckResult null = conformance::runCheck(
      "body.free_fall", [](const WorldSettings&) { return std::unique_ptr<PhysicsWorld>{}; });
  EXPECT_FALSE(null.passed);
  EXPECT_NE(null.detail.find("null"), std::string::npos) << null.detail;
  const std::vector<std::string> names = conformance::contractNames();
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size()) << "names are unique";
}

}  // namespace
}  // namespace handoff
