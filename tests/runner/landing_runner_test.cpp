// Falls that land on the feet and knock-backs (issue 19, SPEC.md section 6) through the scenario
// runner: scenarios/ledge_landing.json (the DeepMimic jog off a 1 m ledge, powered without pins,
// lands into the standing end of the jump clip) and scenarios/knockback.json (a 400 N s throw).
// The falls are chaotic: each is run as a seeded ensemble of headings and speeds, and the rates
// and quantiles of what the report rows measure are asserted. A fall that tips over on the way
// down takes the get-up path instead.
#include "handoff/runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "support/checks.h"

namespace handoff {
namespace landing_test {

const ThresholdCheck* findCheck(const ScenarioResult& r, const std::string& name) {
  return test::findThresholdCheck(r, name);
}

Scenario loadShipped(const char* name) {
  Result<Scenario> s = loadScenarioFile(std::string(HANDOFF_SOURCE_DIR) + "/scenarios/" + name + ".json");
  EXPECT_TRUE(s.ok()) << s.error();
  return s ? *s : Scenario{};
}

ScenarioResult runScenario(const Scenario& s) { return test::runScenarioAlone(s); }

int countEvents(const ScenarioResult& r, const char* kind) {
  return static_cast<int>(std::count_if(r.events.begin(), r.events.end(), [&](const CharacterEvent& e) {
    return std::string(eventKindName(e.kind)) == kind;
  }));
}

struct Quantiles {
  double min = 0.0, median = 0.0, p95 = 0.0, max = 0.0;
};
Quantiles quantiles(std::vector<double> v) {
  Quantiles q;
  if (v.empty()) return q;
  std::sort(v.begin(), v.end());
  const auto at = [&](double f) {
    return v[static_cast<size_t>(std::lround(f * static_cast<double>(v.size() - 1)))];
  };
  q.min = v.front();
  q.median = at(0.5);
  q.p95 = at(0.95);
  q.max = v.back();
  return q;
}
void printQuantiles(const char* what, const char* unit, const std::vector<double>& v) {
  const Quantiles q = quantiles(v);
  std::printf("[ figure ] %-44s n %2zu  min %7.2f  median %7.2f  p95 %7.2f  max %7.2f %s\n", what, v.size(),
              q.min, q.median, q.p95, q.max, unit);
}

/// The shipped ledge scenario turned by `yaw` about the world origin (the box, the root), the jog
/// at `speed` times the run's own, powered as the pelvis passes the edge.
Scenario ledgeVariant(double yaw, double speed) {
  Scenario s = loadShipped("ledge_landing");
  const Quat turn = yawRotation(yaw);
  s.root.yaw = yaw;
  s.root.position = turn * s.root.position;
  for (ScenarioBox& b : s.world.boxes) {
    b.center = turn * b.center;
    b.yaw += yaw;
  }
  s.clip.speed = speed;
  // The run covers 3.6 m/s at speed 1; its pelvis starts 5 cm ahead of the root; the edge is
  // 1 m ahead of the root.
  for (ScenarioEvent& e : s.events) {
    if (e.type() == EventType::Powered) e.time = std::round((0.95 / (3.6 * speed)) * 60.0) / 60.0;
  }
  return s;
}

constexpr unsigned kLedgeSeed = 1901;      // std::mt19937 seed of the ledge ensemble
constexpr unsigned kKnockbackSeed = 1902;  // and of the knock-back ensemble

TEST(LedgeLanding, ShippedScenarioLandsOnItsFeetContinuouslyAndNeverLiesDown) {
  const ScenarioResult r = runScenario(loadShipped("ledge_landing"));
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.landings.size(), 1u);
  const LandingMetrics& l = r.landings[0];
  const auto ret = std::find_if(r.returns.begin(), r.returns.end(),
                                [](const ReturnMetrics& m) { return m.from == "landing"; });
  ASSERT_NE(ret, r.returns.end());
  std::printf(
      "[ figure ] ledge_landing: landed at %.3f s from %s, %.2f s in the air, pelvis down %.2f m, tilt %.1f "
      "deg, "
      "pelvis at %.0f %% of standing, feet %.2f m off, %.2f rad/s; exit blend %.2f s; per frame beyond the "
      "animation: pelvis %.1f mm, feet %.1f mm, attachments %.1f mm, bodies %.2f m/s\n",
      l.time, l.from.c_str(), l.airTime, l.fallHeight, l.tilt * 180.0 / kPi, 100.0 * l.pelvisHeight,
      l.footOffset, l.angularSpeed, l.exitBlend, ret->worstPelvisJump * 1e3, ret->worstFootJump * 1e3,
      ret->worstAttachmentJump * 1e3, ret->worstBodySpeedExcess);
  EXPECT_EQ(l.from, "powered");
  EXPECT_LE(ret->worstPelvisJump, 0.02);
  EXPECT_LE(ret->worstFootJump, 0.02);
  EXPECT_LE(ret->worstBodySpeedExcess, 1.0);
  EXPECT_EQ(countEvents(r, "getup"), 0);
  EXPECT_EQ(countEvents(r, "knockout"), 0);
  EXPECT_EQ(std::count(r.series.state.begin(), r.series.state.end(), "recovering"), 0);
  EXPECT_EQ(std::count(r.series.state.begin(), r.series.state.end(), "ragdoll"), 0);
  EXPECT_EQ(r.series.state.back(), "animated");
  // Came down to the ground below the ledge, standing: the pelvis over 0.6 m up at the end.
  EXPECT_LT(r.series.pelvisPosition.back().y, 1.2);
  EXPECT_GT(r.series.pelvisPosition.back().y, 0.6);
  for (const char* name : {"landing.pelvis_jump_per_frame", "landing.foot_jump_per_frame", "landing.landed",
                           "landing.never_lying", "landing.return_body_speed"}) {
    const ThresholdCheck* c = findCheck(r, name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_TRUE(c->pass) << name << ": " << c->value << " vs " << c->threshold;
  }
  EXPECT_EQ(findCheck(r, "landing.foot_jump_per_frame")->value, ret->worstFootJump * 1e3);
  EXPECT_TRUE(r.passed());
}

TEST(LedgeLanding, SeededEnsembleOfHeadingsAndSpeedsLandsWithinTheContinuityBound) {
  std::mt19937 rng(kLedgeSeed);
  std::uniform_real_distribution<double> heading(-kPi, kPi), speed(0.4, 0.55);
  constexpr int kRuns = 10;
  int landed = 0, lying = 0;
  std::vector<double> pelvisJump, footJump, tilt, spin, bodyExcess;
  for (int i = 0; i < kRuns; ++i) {
    const double yaw = heading(rng), v = speed(rng);
    const ScenarioResult r = runScenario(ledgeVariant(yaw, v));
    ASSERT_TRUE(r.ok) << r.error;
    const auto ret = std::find_if(r.returns.begin(), r.returns.end(),
                                  [](const ReturnMetrics& m) { return m.from == "landing"; });
    const bool didLand = !r.landings.empty() && ret != r.returns.end();
    std::printf("[ run    ] heading %+6.1f deg, %.2f m/s: %s", yaw * 180.0 / kPi, 3.6 * v,
                didLand ? "landed" : "fell");
    if (didLand) {
      ++landed;
      pelvisJump.push_back(ret->worstPelvisJump * 1e3);
      footJump.push_back(ret->worstFootJump * 1e3);
      bodyExcess.push_back(ret->worstBodySpeedExcess);
      tilt.push_back(r.landings[0].tilt * 180.0 / kPi);
      spin.push_back(r.landings[0].angularSpeed);
      // A landing never lies down first.
      if (countEvents(r, "getup") > 0) ++lying;
      std::printf(", tilt %.1f deg, pelvis %.1f mm, feet %.1f mm per frame\n", tilt.back(), pelvisJump.back(),
                  footJump.back());
    } else {
      std::printf(" (%d touch-downs rejected, %d get-ups)\n", countEvents(r, "touchdown"),
                  countEvents(r, "getup"));
    }
  }
  const double rate = static_cast<double>(landed) / kRuns;
  std::printf("[ figure ] ledge ensemble (seed %u): %d of %d landed on their feet (%.0f %%)\n", kLedgeSeed,
              landed, kRuns, 100.0 * rate);
  printQuantiles("landed: pelvis jump per frame beyond the anim", "mm", pelvisJump);
  printQuantiles("landed: foot jump per frame beyond the anim", "mm", footJump);
  printQuantiles("landed: body speed beyond the anim", "m/s", bodyExcess);
  printQuantiles("landed: tilt at the landing", "deg", tilt);
  printQuantiles("landed: pelvis angular speed before touch-down", "rad/s", spin);
  // Measured 8 of 10 at this seed (docs/TUNING.md): a jog off a 1 m ledge mostly comes down on its feet.
  EXPECT_GE(rate, 0.7);
  EXPECT_EQ(lying, 0);
  // The continuity bound of issue 19 on every landing: 2 cm per frame beyond the animation.
  EXPECT_LE(quantiles(pelvisJump).max, 20.0);
  EXPECT_LE(quantiles(footJump).max, 20.0);
  EXPECT_LE(quantiles(bodyExcess).max, 1.0);
}

TEST(LedgeLanding, AFallTippedOverOnTheWayDownTakesTheGetUpPath) {
  // The same jog off the ledge, shoved forward at the chest mid-fall: it comes down head first,
  // the touch-down fails the checks, the distance to the animation knocks it out, it settles and
  // gets up. With the landing switched off in the scenario it can never land: the control that
  // the shove, not chance, decides it.
  Scenario s = loadShipped("ledge_landing");
  ScenarioEvent shove;
  shove.time = 0.6;
  shove.label = "shove forward mid-fall";
  ScenarioEvent::Impulse p;
  p.body = "chest";
  p.impulse = Vec3{90.0, 0.0, 0.0};
  p.impulseSpace = ImpulseSpace::Root;
  shove.payload = p;
  s.events.push_back(shove);
  s.endTime = 9.0;
  const ScenarioResult r = runScenario(s);
  ASSERT_TRUE(r.ok) << r.error;
  double getUpAt = -1.0;
  for (const CharacterEvent& e : r.events) {
    if (e.kind == CharacterEventKind::GetUp && getUpAt < 0.0) getUpAt = e.time;
    if (e.kind == CharacterEventKind::Touchdown) std::printf("[ figure ] tipped fall: %s\n", e.detail);
  }
  std::printf(
      "[ figure ] tipped fall: %zu landings, %d rejected touch-downs, knock-out %d, get-up at %.2f s\n",
      r.landings.size(), countEvents(r, "touchdown"), countEvents(r, "knockout"), getUpAt);
  EXPECT_TRUE(r.landings.empty());
  EXPECT_GE(countEvents(r, "touchdown"), 1);
  EXPECT_EQ(countEvents(r, "knockout"), 1);
  EXPECT_GT(getUpAt, 0.0);
  const ThresholdCheck* landedRow = findCheck(r, "landing.landed");
  ASSERT_NE(landedRow, nullptr);
  EXPECT_FALSE(landedRow->pass);
  const ThresholdCheck* lyingRow = findCheck(r, "landing.never_lying");
  ASSERT_NE(lyingRow, nullptr);
  EXPECT_FALSE(lyingRow->pass);
}

TEST(Knockback, ShippedScenarioFliesOverTwoMetresAndStandsAgain) {
  const ScenarioResult r = runScenario(loadShipped("knockback"));
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.knockbacks.size(), 1u);
  const KnockbackMetrics& k = r.knockbacks[0];
  std::printf("[ figure ] knockback: %.0f N s (%.2f m/s), flew %.2f m in %.2f s, recovered through a %s\n",
              k.impulse, k.velocityChange, k.flightDistance, k.flightTime, k.recovery.c_str());
  EXPECT_TRUE(k.touchedDown);
  EXPECT_GE(k.flightDistance, 2.0);
  EXPECT_TRUE(k.recovered);
  EXPECT_EQ(r.series.state.back(), "animated");
  EXPECT_EQ(countEvents(r, "knockback"), 1);
  const ThresholdCheck* flight = findCheck(r, "knockback.flight_distance");
  ASSERT_NE(flight, nullptr);
  EXPECT_EQ(flight->value, k.flightDistance);
  EXPECT_TRUE(flight->pass);
  ASSERT_NE(findCheck(r, "knockback.recovered"), nullptr);
  EXPECT_TRUE(findCheck(r, "knockback.recovered")->pass);
  EXPECT_TRUE(r.passed());
}

TEST(Knockback, AThrowWithoutSpinLandsOnItsFeetUnlessGettingUpIsForbidden) {
  // Without the chest blow the throw carries no spin (every body the same velocity change): it
  // flies upright and lands on its feet. A character not allowed to get up (a death) does not
  // land either: the same throw stays a ragdoll.
  Scenario s = loadShipped("knockback");
  s.events.pop_back();  // the chest blow
  s.endTime = 3.0;
  s.expectations.erase("recovered");
  const ScenarioResult allowed = runScenario(s);
  for (ScenarioEvent& e : s.events) {
    if (auto* g = std::get_if<ScenarioEvent::GetUpAllowed>(&e.payload)) g->allowed = false;
  }
  const ScenarioResult dead = runScenario(s);
  ASSERT_TRUE(allowed.ok && dead.ok) << allowed.error << dead.error;
  ASSERT_EQ(allowed.knockbacks.size(), 1u);
  ASSERT_EQ(dead.knockbacks.size(), 1u);
  std::printf("[ figure ] spinless knock-back: flew %.2f m, %s; get-up forbidden: %zu landings, ends %s\n",
              allowed.knockbacks[0].flightDistance, allowed.knockbacks[0].recovery.c_str(),
              dead.landings.size(), dead.series.state.back().c_str());
  ASSERT_EQ(allowed.landings.size(), 1u);
  EXPECT_EQ(allowed.landings[0].from, "ragdoll");
  EXPECT_EQ(allowed.knockbacks[0].recovery, "landing");
  EXPECT_TRUE(allowed.knockbacks[0].recovered);
  EXPECT_TRUE(dead.landings.empty());
  EXPECT_EQ(dead.series.state.back(), "ragdoll");
  EXPECT_EQ(countEvents(dead, "landed"), 0);
  // Its flight is not tracked (a character that may not get up is not queried): the row says so.
  EXPECT_FALSE(dead.knockbacks[0].touchedDown);
  const ThresholdCheck* flight = findCheck(dead, "knockback.flight_distance");
  ASSERT_NE(flight, nullptr);
  EXPECT_FALSE(flight->ran);
  EXPECT_FALSE(dead.knockbacks[0].recovered);
}

TEST(Knockback, SeededEnsembleFliesAndRecovers) {
  std::mt19937 rng(kKnockbackSeed);
  std::uniform_real_distribution<double> heading(-kPi, kPi), size(330.0, 420.0), blow(0.0, 80.0);
  constexpr int kRuns = 8;
  int recovered = 0, landed = 0, flewFar = 0;
  std::vector<double> distance;
  for (int i = 0; i < kRuns; ++i) {
    Scenario s = loadShipped("knockback");
    const double yaw = heading(rng), j = size(rng), chest = blow(rng);
    s.root.yaw = yaw;
    for (ScenarioEvent& e : s.events) {
      auto* p = std::get_if<ScenarioEvent::Impulse>(&e.payload);
      if (!p) continue;
      if (p->knockback) p->impulse = Vec3{-0.88 * j, 0.48 * j, 0.0};
      if (!p->knockback) p->impulse = Vec3{-chest, 0.0, 0.0};
    }
    const ScenarioResult r = runScenario(s);
    ASSERT_TRUE(r.ok) << r.error;
    ASSERT_EQ(r.knockbacks.size(), 1u);
    const KnockbackMetrics& k = r.knockbacks[0];
    std::printf("[ run    ] heading %+6.1f deg, %.0f N s, chest %.0f N s: flew %.2f m, %s\n",
                yaw * 180.0 / kPi, j, chest, k.flightDistance,
                k.recovered ? ("recovered through a " + k.recovery).c_str() : "down");
    distance.push_back(k.flightDistance);
    recovered += k.recovered ? 1 : 0;
    landed += k.recovery == "landing" ? 1 : 0;
    flewFar += k.flightDistance >= 2.0 ? 1 : 0;
  }
  std::printf(
      "[ figure ] knock-back ensemble (seed %u): %d of %d flew >= 2 m, %d recovered (%d landed on their "
      "feet, the others got up)\n",
      kKnockbackSeed, flewFar, kRuns, recovered, landed);
  printQuantiles("knock-back flight distance", "m", distance);
  EXPECT_EQ(flewFar, kRuns);
  EXPECT_EQ(recovered, kRuns);
  EXPECT_GE(quantiles(distance).min, 2.0);
}

}  // namespace landing_test
}  // namespace handoff
