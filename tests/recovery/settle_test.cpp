// Settle detector (SPEC.md section 4): window, speed thresholds, external-force events.
#include "handoff/recovery.h"

#include <gtest/gtest.h>

#include <limits>

namespace handoff {
namespace {

constexpr double kDt = 1.0 / 60.0;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Just inside both thresholds (0.1 m/s, 0.2 rad/s).
const Vec3 kSlow{0.0999, 0.0, 0.0};
const Vec3 kSlowSpin{0.0, 0.0, 0.1999};

TEST(SettleDetector, DefaultsAreTheSpec) {
  const SettleSettings s;
  EXPECT_DOUBLE_EQ(s.window, 0.5);
  EXPECT_DOUBLE_EQ(s.maxLinearSpeed, 0.1);
  EXPECT_DOUBLE_EQ(s.maxAngularSpeed, 0.2);
  EXPECT_TRUE(SettleDetector::validate(s).ok());
}

TEST(SettleDetector, JustInsideTheThresholdsForTheWindowSettles) {
  SettleDetector d;
  for (int i = 1; i <= 29; ++i) {
    const SettleUpdate u = d.update(kDt, kSlow, kSlowSpin, false);
    ASSERT_TRUE(u.accepted);
    EXPECT_FALSE(u.settled) << "settled after only " << i << " steps";
    EXPECT_NEAR(u.timeInWindow, i * kDt, 1e-12);
  }
  const SettleUpdate u = d.update(kDt, kSlow, kSlowSpin, false);
  EXPECT_TRUE(u.settled) << "30 steps of 1/60 s fill the 0.5 s window";
  EXPECT_NEAR(u.timeInWindow, 0.5, 1e-12);
  EXPECT_TRUE(d.settled());
  // Stays settled while still.
  EXPECT_TRUE(d.update(kDt, kSlow, kSlowSpin, false).settled);
}

TEST(SettleDetector, OneSampleAboveResetsTheWindow) {
  struct Case {
    Vec3 v;
    Vec3 w;
    SettleReset reason;
  };
  const Case cases[] = {
      {Vec3{0.1001, 0.0, 0.0}, kSlowSpin, SettleReset::LinearSpeed},
      {Vec3{0.0, 0.1, 0.0}, kSlowSpin, SettleReset::LinearSpeed},  // exactly at the threshold: moving
      {kSlow, Vec3{0.2001, 0.0, 0.0}, SettleReset::AngularSpeed},
      {kSlow, Vec3{0.0, -0.2, 0.0}, SettleReset::AngularSpeed},
  };
  for (const Case& c : cases) {
    SettleDetector d;
    for (int i = 0; i < 29; ++i) d.update(kDt, kSlow, kSlowSpin, false);
    const SettleUpdate bad = d.update(kDt, c.v, c.w, false);
    EXPECT_TRUE(bad.accepted);
    EXPECT_FALSE(bad.settled);
    EXPECT_EQ(bad.timeInWindow, 0.0);
    EXPECT_EQ(bad.lastReset, c.reason) << settleResetName(bad.lastReset);
    // The full window is needed again.
    for (int i = 0; i < 29; ++i) EXPECT_FALSE(d.update(kDt, kSlow, kSlowSpin, false).settled);
    EXPECT_TRUE(d.update(kDt, kSlow, kSlowSpin, false).settled);
  }
  // A settled detector unsettles on one fast sample.
  SettleDetector d;
  for (int i = 0; i < 40; ++i) d.update(kDt, Vec3{0.0}, Vec3{0.0}, false);
  ASSERT_TRUE(d.settled());
  EXPECT_FALSE(d.update(kDt, Vec3{0.0, -0.5, 0.0}, Vec3{0.0}, false).settled);
}

TEST(SettleDetector, SustainedExternalForcePreventsSettling) {
  // A force event every step for 3 s on a still body.
  SettleDetector d;
  for (int i = 0; i < 180; ++i) {
    const SettleUpdate u = d.update(kDt, Vec3{0.0}, Vec3{0.0}, true);
    EXPECT_FALSE(u.settled);
    EXPECT_EQ(u.lastReset, SettleReset::ExternalForce);
  }
  // Events every 0.4 s (always one within the last window): never settles either.
  SettleDetector periodic;
  for (int i = 0; i < 300; ++i) {
    EXPECT_FALSE(periodic.update(kDt, Vec3{0.0}, Vec3{0.0}, i % 24 == 0).settled) << "step " << i;
  }
  // Once the force stops, a full quiet window settles.
  for (int i = 0; i < 29; ++i) EXPECT_FALSE(d.update(kDt, Vec3{0.0}, Vec3{0.0}, false).settled);
  EXPECT_TRUE(d.update(kDt, Vec3{0.0}, Vec3{0.0}, false).settled);
}

TEST(SettleDetector, VariableStepsAccumulateTime) {
  SettleDetector d;
  EXPECT_FALSE(d.update(0.2, Vec3{0.0}, Vec3{0.0}, false).settled);
  EXPECT_FALSE(d.update(0.2, Vec3{0.0}, Vec3{0.0}, false).settled);
  EXPECT_TRUE(d.update(0.1, Vec3{0.0}, Vec3{0.0}, false).settled);
}

// Validity: each invalid input on its own is rejected and leaves the state unchanged.
TEST(SettleDetector, RejectsInvalidInputWithoutChangingState) {
  SettleDetector d;
  for (int i = 0; i < 10; ++i) d.update(kDt, kSlow, kSlowSpin, false);
  const double before = d.timeInWindow();
  struct Case {
    const char* name;
    double dt;
    Vec3 v;
    Vec3 w;
  };
  const Case cases[] = {
      {"dt zero", 0.0, kSlow, kSlowSpin},
      {"dt negative", -kDt, kSlow, kSlowSpin},
      {"dt NaN", kNaN, kSlow, kSlowSpin},
      {"dt infinite", kInf, kSlow, kSlowSpin},
      {"velocity NaN", kDt, Vec3{kNaN, 0.0, 0.0}, kSlowSpin},
      {"velocity infinite", kDt, Vec3{0.0, kInf, 0.0}, kSlowSpin},
      {"angular velocity NaN", kDt, kSlow, Vec3{0.0, 0.0, kNaN}},
      {"angular velocity infinite", kDt, kSlow, Vec3{-kInf, 0.0, 0.0}},
  };
  for (const Case& c : cases) {
    // A force flag with bad data must not reset the window either.
    const SettleUpdate u = d.update(c.dt, c.v, c.w, true);
    EXPECT_FALSE(u.accepted) << c.name;
    EXPECT_EQ(u.timeInWindow, before) << c.name;
    EXPECT_EQ(d.timeInWindow(), before) << c.name;
    EXPECT_EQ(d.lastReset(), SettleReset::None) << c.name;
  }
  EXPECT_TRUE(d.update(kDt, kSlow, kSlowSpin, false).accepted);
}

TEST(SettleDetector, InvalidSettingsAreReportedAndRejectEveryUpdate) {
  const SettleSettings bad[] = {{0.0, 0.1, 0.2}, {0.5, -0.1, 0.2}, {0.5, 0.1, kNaN}, {kInf, 0.1, 0.2}};
  for (const SettleSettings& s : bad) {
    EXPECT_FALSE(SettleDetector::validate(s).ok());
    SettleDetector d(s);
    EXPECT_FALSE(d.update(kDt, Vec3{0.0}, Vec3{0.0}, false).accepted);
  }
}

TEST(SettleDetector, ResetEmptiesTheWindow) {
  SettleDetector d;
  for (int i = 0; i < 40; ++i) d.update(kDt, Vec3{0.0}, Vec3{0.0}, false);
  ASSERT_TRUE(d.settled());
  d.reset();
  EXPECT_FALSE(d.settled());
  EXPECT_EQ(d.timeInWindow(), 0.0);
}

}  // namespace
}  // namespace handoff
