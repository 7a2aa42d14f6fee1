// RestRule / RestWindow: when a ragdoll counts as at rest for handoff-side sleeping.
#include "handoff/crowd.h"

#include <gtest/gtest.h>

#include <vector>

namespace handoff {
namespace {

std::vector<Transform> at(double x) { return {Transform::fromTranslation(Vec3{x, 0.1, 0.0})}; }

// One body that moves `step` metres per window; returns the windows until it is at rest (cap 40).
struct Walker {
  RestRule rule;
  RestWindow w;
  std::vector<Transform> start = at(0.0);
  double x = 0.0;
  Walker() { w.restart(start, start); }
  void window(double step) {
    x += step;
    w.advance(at(x), start, rule.window, rule);  // one full window, the body at x at its end
  }
  int untilSettled(double step) {
    int n = 0;
    while (!w.settled && n < 40) {
      window(step);
      ++n;
    }
    return n;
  }
};

}  // namespace

// Creeping 10 cm per window (within the 12 cm creep bound, beyond the 5 cm rest bound) is at rest
// after creepTime of such windows, not before.
TEST(RestRule, CreepingIsAtRestAfterTheCreepTime) {
  Walker a;
  EXPECT_EQ(a.untilSettled(0.1), 6);  // 3 s of 0.5 s windows
  Walker still;
  EXPECT_EQ(still.untilSettled(0.0), 1);
}

// A ragdoll creeping in a pile whose limb twitches for one window (16 cm) is at rest again in the
// next creeping window; two twitching windows in a row start the creep time over.
TEST(RestRule, OneTwitchDoesNotStartTheCreepTimeOverTwoInARowDo) {
  Walker a;
  ASSERT_EQ(a.untilSettled(0.1), 6);
  a.window(0.16);
  EXPECT_FALSE(a.w.settled) << "the twitching window itself is not at rest";
  a.window(0.1);
  EXPECT_TRUE(a.w.settled) << "creeping again right after one twitch";
  a.window(0.16);
  a.window(0.16);
  EXPECT_FALSE(a.w.settled);
  EXPECT_EQ(a.untilSettled(0.1), 6) << "after two twitches in a row the creep time starts over";
}

}  // namespace handoff
