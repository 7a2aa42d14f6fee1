// Supine/prone classifier with the hold band (SPEC.md section 4; the ALS-Refactored PR #404
// flicker: a body near the threshold must never flip between the two get-up clips).
#include "handoff/recovery.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

namespace handoff {
namespace {

TEST(FacingClassifier, ThresholdsAndHoldBand) {
  FacingClassifier c;
  // Starting on the side: no candidate, wait.
  FacingUpdate u = c.update(0.0);
  EXPECT_EQ(u.candidate, Facing::Undecided);
  EXPECT_TRUE(u.inHoldBand);
  EXPECT_FALSE(u.ready());
  EXPECT_EQ(c.update(0.2).candidate, Facing::Undecided) << "0.2 is not above 0.2";
  u = c.update(0.21);
  EXPECT_EQ(u.candidate, Facing::Supine);
  EXPECT_TRUE(u.ready());
  // Rolling onto the side keeps the choice but waits.
  u = c.update(-0.19);
  EXPECT_EQ(u.candidate, Facing::Supine);
  EXPECT_TRUE(u.inHoldBand);
  EXPECT_FALSE(u.ready());
  EXPECT_EQ(c.update(-0.2).candidate, Facing::Supine) << "-0.2 is not below -0.2";
  u = c.update(-0.21);
  EXPECT_EQ(u.candidate, Facing::Prone);
  EXPECT_TRUE(u.ready());
  EXPECT_EQ(c.update(0.15).candidate, Facing::Prone);
}

TEST(FacingClassifier, FromChestRotation) {
  // The asset's chest-outward axis is +Z of the chest body.
  const Vec3 chestForward{0.0, 0.0, 1.0};
  FacingClassifier c;
  // Lying on the back: body +Z turned to world +Y (rotation -90 deg about X).
  const Quat onBack = glm::angleAxis(-kPi / 2, Vec3{1.0, 0.0, 0.0});
  EXPECT_NEAR(glm::dot(chestOutwardInWorld(onBack, chestForward), kRecoveryUp), 1.0, 1e-12);
  EXPECT_EQ(c.update(onBack, chestForward).candidate, Facing::Supine);
  const Quat onFront = glm::angleAxis(kPi / 2, Vec3{1.0, 0.0, 0.0});
  EXPECT_EQ(c.update(onFront, chestForward).candidate, Facing::Prone);
  // On the side (outward axis horizontal): keeps prone, waits.
  const Quat onSide = glm::angleAxis(kPi / 2, Vec3{0.0, 1.0, 0.0});
  const FacingUpdate u = c.update(onSide, chestForward);
  EXPECT_EQ(u.candidate, Facing::Prone);
  EXPECT_TRUE(u.inHoldBand);
}

TEST(FacingClassifier, RejectsNonFiniteInputWithoutChangingState) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  FacingClassifier c;
  ASSERT_EQ(c.update(0.9).candidate, Facing::Supine);
  for (double bad : {nan, inf, -inf}) {
    const FacingUpdate u = c.update(bad);
    EXPECT_FALSE(u.accepted);
    EXPECT_FALSE(u.ready());
    EXPECT_EQ(u.candidate, Facing::Supine);
    EXPECT_EQ(u.chestUpDot, 0.9);
  }
  EXPECT_FALSE(c.update(Quat{nan, 0.0, 0.0, 0.0}, Vec3{0.0, 0.0, 1.0}).accepted);
  EXPECT_FALSE(c.update(Quat{1.0, 0.0, 0.0, 0.0}, Vec3{0.0}).accepted) << "zero chest axis";
  EXPECT_EQ(c.candidate(), Facing::Supine);
}

TEST(FacingClassifier, InvalidSettings) {
  EXPECT_TRUE(FacingClassifier::validate({}).ok());
  EXPECT_FALSE(FacingClassifier::validate({0.2, 0.2}).ok()) << "no hold band";
  EXPECT_FALSE(FacingClassifier::validate({-0.2, 0.2}).ok()) << "inverted band";
  EXPECT_FALSE(FacingClassifier::validate({1.5, -0.2}).ok());
  EXPECT_FALSE(FacingClassifier::validate({std::numeric_limits<double>::quiet_NaN(), -0.2}).ok());
  FacingClassifier c({-0.2, 0.2});
  EXPECT_FALSE(c.update(0.9).accepted);
}

/// 200 steps of seeded Gaussian noise around `mean`: the choice only ever changes on a step whose
/// dot crosses the opposite threshold. Returns the number of changes between decided clips.
int runNoise(double mean, double sigma, unsigned seed, int* naiveFlips) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(mean, sigma);
  FacingClassifier c;
  Facing previous = Facing::Undecided;
  bool naivePrevious = false;
  int flips = 0;
  *naiveFlips = 0;
  for (int step = 0; step < 200; ++step) {
    const double dot = std::clamp(noise(rng), -1.0, 1.0);
    const FacingUpdate u = c.update(dot);
    EXPECT_TRUE(u.accepted);
    if (previous != Facing::Undecided) {
      EXPECT_NE(u.candidate, Facing::Undecided) << "a choice once made is never dropped";
    }
    if (previous != Facing::Undecided && u.candidate != previous) {
      ++flips;
      if (u.candidate == Facing::Supine) {
        EXPECT_GT(dot, 0.2) << "flip to supine at step " << step << " without crossing +0.2";
      } else {
        EXPECT_LT(dot, -0.2) << "flip to prone at step " << step << " without crossing -0.2";
      }
    }
    // A classifier without a hold band (sign of the dot) for comparison.
    const bool naive = dot > 0.0;
    if (step > 0 && naive != naivePrevious) ++*naiveFlips;
    naivePrevious = naive;
    previous = u.candidate;
  }
  return flips;
}

TEST(FacingClassifier, NoiseAroundAThresholdNeverFlips) {
  int naive = 0;
  // Around +0.2 and -0.2: the opposite threshold is 8 sigma away; not a single flip.
  EXPECT_EQ(runNoise(0.2, 0.05, 1234u, &naive), 0);
  EXPECT_EQ(runNoise(-0.2, 0.05, 5678u, &naive), 0);
  // On the side (around 0) with noise reaching both thresholds now and then: changes only on
  // real crossings (checked inside), far fewer than a sign test would make.
  const int flips = runNoise(0.0, 0.12, 42u, &naive);
  EXPECT_LT(flips, naive / 4) << "hold band " << flips << " vs sign test " << naive;
  RecordProperty("side_noise_flips", flips);
  RecordProperty("side_noise_naive_flips", naive);
}

}  // namespace
}  // namespace handoff
