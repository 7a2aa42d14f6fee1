// The SPEC thresholds a run is checked against (docs/SCENARIOS.md lists them). Every check
// compares one measured figure with one threshold; a check that cannot run says why and does
// not pass.
#include "runner/runner_internal.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace handoff::runner_detail {
namespace {

// Limb lag: a displayed limb point at most 10 cm from its animated place (a walk swings a hand
// over 30-40 cm: more would read as another pose), and a median lag of at least 5 mm (less is
// not seen at a game's camera distance: the lag would be switched on for nothing).
constexpr double kLimbLagMost = 0.10;    // [m]
constexpr double kLimbLagLeast = 0.005;  // [m]

std::string fmt(const char* f, double a, double b = 0.0) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

ThresholdCheck atMost(std::string name, std::string description, std::string unit, double value,
                      double threshold) {
  ThresholdCheck c{std::move(name),
                   std::move(description),
                   std::move(unit),
                   "<=",
                   value,
                   threshold,
                   true,
                   std::isfinite(value) && value <= threshold,
                   ""};
  if (!std::isfinite(value)) c.note = "the figure is not a finite number: the run produced garbage";
  return c;
}

ThresholdCheck atLeast(std::string name, std::string description, std::string unit, double value,
                       double threshold) {
  ThresholdCheck c{std::move(name),
                   std::move(description),
                   std::move(unit),
                   ">=",
                   value,
                   threshold,
                   true,
                   std::isfinite(value) && value >= threshold,
                   ""};
  if (!std::isfinite(value)) c.note = "the figure is not a finite number: the run produced garbage";
  return c;
}

ThresholdCheck notRun(std::string name, std::string description, std::string note) {
  ThresholdCheck c;
  c.name = std::move(name);
  c.description = std::move(description);
  c.comparison = "<=";
  c.ran = false;
  c.pass = false;
  c.note = std::move(note);
  return c;
}

// Energy: a passive ragdoll may gain at most this share of the energy in play over the 2 s
// after its handoff (docs/SCENARIOS.md, `energy_no_gain_2s`). [%]
constexpr double kEnergyGainPercent = 5.0;

// The energy a handoff's 2 s move around: its kinetic energy at the commit, what the fall
// releases (M |g| times the largest drop of the centre of mass) and the work done on it. [J]
double energyInPlay(const HandoffMetrics& h) {
  return h.kineticAtHandoff + h.energyReleased + h.energyWorkMagnitude;
}

double expectation(const Scenario& s, const char* name, double fallback) {
  const auto it = s.expectations.find(name);
  return it == s.expectations.end() ? fallback : it->second;
}

}  // namespace

std::vector<ThresholdCheck> checksFor(const Scenario& s, const ScenarioResult& r,
                                      const RunCounters& counters) {
  std::vector<ThresholdCheck> checks;
  // Pop allowance beyond free motion: the scenario's max_pop_mm, else 2 mm (what
  // tests/handoff/handoff_clip_test.cpp allows).
  const double popMm = expectation(s, "max_pop_mm", 2.0);

  for (size_t i = 0; i < r.handoffs.size(); ++i) {
    const HandoffMetrics& h = r.handoffs[i];
    const std::string at = r.handoffs.size() > 1 ? "[" + std::to_string(i) + "]" : "";
    const std::string when = h.kind + fmt(" at %.3f s", h.time);
    const std::string cap = h.kind + ".";
    checks.push_back(atLeast(cap + "commit_atomic" + at,
                             when + ": committed, every body dynamic at once (1) or abandoned (0)", "count",
                             h.committed ? 1.0 : 0.0, 1.0));
    if (!h.committed) {
      checks.back().note = h.failure;
      continue;
    }
    checks.push_back(atMost(cap + "no_pop_at_commit" + at,
                            when + ": largest body move at the commit from the animated pose", "mm",
                            h.maxPositionJump * 1e3, HandoffSettings{}.poseTolerance * 1e3));
    if (!h.firstStepImpulse.empty()) {
      checks.back().note = "first-step continuity not applicable: an impulse hit in the first step (" +
                           h.firstStepImpulse + ")";
    } else if (!h.firstStepRecorded) {
      checks.push_back(notRun(cap + "no_pop_first_step" + at, when, "the scenario ended at the handoff"));
      continue;
    }
    if (h.firstStepImpulse.empty()) {
      checks.push_back(
          atMost(cap + "no_pop_first_step" + at,
                 when + ": worst body move in the first step beyond |v_anim| dt + |g| dt^2" +
                     fmt(" + %.3f m/s dt (the push out of static geometry)", h.depenetrationSpeed),
                 "mm", h.worstPopExcess * 1e3, popMm));
      if (h.kind == "powered")
        checks.back().note =
            fmt("the drives follow the animation: its own motion in that step, measured alike, %.2f mm",
                h.animationPopExcess * 1e3);
      // Measured after the first physics step, the engine's first substep h: what the joints
      // did to what the commit handed over. Over the whole frame the bodies' own rigid motion
      // (a limb turning at w changes its velocity by w^2 r dt) adds to it; that figure is in
      // the description and metrics.json (worstVelocityExcess).
      checks.push_back(
          atMost(cap + "velocity_continuity" + at,
                 when +
                     fmt(": worst |v_after_first_physics_step - (v_inherited + g h)| beyond 5 %% "
                         "|v_inherited| + |g| h (h = "
                         "%.4f s, %.0f bodies touching the world skipped)",
                         h.substepTime, h.bodiesInContact) +
                     fmt("; after the whole %.4f s frame, against the animation's velocity: %+.3f m/s",
                         s.settings.dt, h.worstVelocityExcess),
                 "m/s", h.worstSubstepVelocityExcess, 0.0));
      if (h.kind == "powered")
        checks.back().note = fmt(
            "the drives follow the animation: its own velocity change over the frame, measured as the frame "
            "figure, %.3f m/s",
            h.animationVelocityExcess);
      // The same after the whole first frame: every body's velocity within 5 % + |g| dt of the
      // inherited one turned by what exact rigid-body dynamics of the jointed ragdoll does over
      // the frame (a turning torso's limbs change velocity by |omega|^2 r dt: motion, not a pop).
      if (h.kind != "powered") {
        checks.push_back(atMost(
            cap + "velocity_continuity_frame" + at,
            when +
                fmt(": worst |v_after_first_frame - (v_inherited + g dt + dv_rigid)| beyond 5 %% "
                    "|v_inherited| + |g| dt (dt = %.4f s, dv_rigid: the jointed ragdoll's exact rigid-body "
                    "motion over the frame; bodies touching the world skipped)",
                    s.settings.dt),
            "m/s", h.worstFrameVelocityExcess, 0.0));
      }
    }
    checks.push_back(atMost(
        cap + "no_explosion_2s" + at,
        when + std::string(": worst body speed beyond max(|v_inherited|, |v_pair|, |v_com| + |omega_sys| r") +
            (h.kind == "powered" ? ", |v_animation(t)|" : "") +
            fmt(") + |g| t + 1 m/s (+ %.2f m/s of hits) over %.2f s", h.hitAllowance, h.followTime) +
            fmt(" (the bodies as one rigid body at the commit: |v_com| %.2f m/s, "
                "|omega_sys| %.2f rad/s; r from "
                "their centre of mass now)",
                h.comSpeed, h.spinRate),
        "m/s", h.worstSpeedExcess, 0.0));
    checks.back().note =
        "worst: " + h.worstSpeedBody +
        fmt(", %.3f s after the commit; the rigid motion's term added %.3f m/s there", h.worstSpeedTime,
            h.worstSpeedSpinAllowance) +
        fmt(", the body with its parent as one rigid body (|v_pair|) %.3f m/s", h.worstSpeedPairAllowance);
    if (h.kind == "powered")
      checks.back().note += fmt("; the animation's own speed added %.3f m/s there (the drives follow it)",
                                h.worstSpeedAnimationAllowance);
    if (h.energyMeasured) {
      // A passive ragdoll's joints, contacts, damping and friction only take energy out: growth of
      // its total mechanical energy beyond the work done on it is the solver's (an explosion).
      const double inPlay = energyInPlay(h);
      checks.push_back(atMost(
          cap + "energy_no_gain_2s" + at,
          when +
              fmt(": worst total mechanical energy (kinetic, rotation included, + m g h) beyond its value "
                  "at the commit plus the work of hits, drives and pins, per substep over %.2f s, in %% of ",
                  h.energyTime) +
              fmt("the energy in play (%.1f J: kinetic at the commit %.1f J", inPlay, h.kineticAtHandoff) +
              fmt(" + released by the fall %.1f J + |work| %.1f J)", h.energyReleased, h.energyWorkMagnitude),
          "%", inPlay > 0.0 ? 100.0 * h.worstEnergyGain / inPlay : 0.0, kEnergyGainPercent));
      checks.back().note = fmt("worst gain %.3f J", h.worstEnergyGain) +
                           fmt(" at %.3f s after the commit, %.0f substep boundaries read",
                               h.worstEnergyGainTime, h.energySamples);
    }
    checks.push_back(atMost(cap + "joint_anchor_drift" + at,
                            when + fmt(": largest joint anchor separation over %.2f s", h.followTime), "mm",
                            h.maxJointSeparation * 1e3, 10.0));
    if (h.teleportFlagged || h.teleportDetected) {
      double fastest = 0.0;
      for (const BodyHandoffMetrics& b : h.bodies)
        fastest = std::max(fastest, glm::length(b.inheritedLinear));
      checks.push_back(atMost(cap + "teleport_no_jump_velocity" + at,
                              when + fmt(": fastest inherited body speed after a %.2f m root jump (the jump "
                                         "would give %.0f m/s)",
                                         h.rootJump, h.sampleDt > 0 ? h.rootJump / h.sampleDt : 0.0),
                              "m/s", fastest, 15.0));
    }
  }

  // Recovery (SPEC section 4): the displayed pelvis and feet do not jump.
  for (size_t i = 0; i < r.recoveries.size(); ++i) {
    const RecoveryMetrics& m = r.recoveries[i];
    const std::string at = r.recoveries.size() > 1 ? "[" + std::to_string(i) + "]" : "";
    const std::string when = fmt("get-up from %.3f s", m.startTime) + " (" + m.facing + ")";
    checks.push_back(atMost("recovery.pelvis_jump_per_frame" + at,
                            when + ": displayed pelvis move per frame beyond the get-up clip's own", "mm",
                            m.worstPelvisJump * 1e3, 20.0));
    checks.push_back(atMost("recovery.foot_jump_per_frame" + at,
                            when + ": displayed ankle move per frame beyond the get-up clip's own", "mm",
                            m.worstFootJump * 1e3, 20.0));
  }

  // Powered mode: the hit did not knock the character out, and it went back to animation when
  // the scenario said so.
  const bool powered = std::any_of(r.handoffs.begin(), r.handoffs.end(),
                                   [](const HandoffMetrics& h) { return h.kind == "powered"; });
  const bool ragdollEvent = std::any_of(s.events.begin(), s.events.end(), [](const ScenarioEvent& e) {
    return e.type() == EventType::Ragdoll;
  });
  if (powered && !ragdollEvent) {
    const double knockouts =
        static_cast<double>(std::count_if(r.events.begin(), r.events.end(), [](const CharacterEvent& e) {
          return e.kind == CharacterEventKind::Knockout;
        }));
    checks.push_back(
        atMost("powered.no_knockout",
               "knock-outs into a full ragdoll (a body further than the knock-out distance from its "
               "animated pose)",
               "count", knockouts, 0.0));
  }
  const bool animateEvent = std::any_of(s.events.begin(), s.events.end(), [](const ScenarioEvent& e) {
    return e.type() == EventType::Animate;
  });
  if (animateEvent || !r.hitReactions.empty()) {
    checks.push_back(atLeast("powered.returned_to_animation",
                             std::string("back to animation (every body kinematic, capsule on) by the end ") +
                                 (animateEvent ? "after `animate`" : "by itself after the hit reaction"),
                             "count", r.poweredReturned ? 1.0 : 0.0, 1.0));
  }
  // Hit reactions (issue 6): a 150 N s chest hit on the standing character with pelvis and feet
  // pinned returns to the animation within 1.5 s with an RMS joint-angle error under 3 degrees.
  constexpr double kHitReturnTime = 1.5;  // [s]
  constexpr double kHitReturnRmsDeg = 3.0;
  constexpr double kDegPerRad = 180.0 / kPi;
  for (size_t i = 0; i < r.hitReactions.size(); ++i) {
    const HitReactionMetrics& hit = r.hitReactions[i];
    const std::string at = r.hitReactions.size() > 1 ? "[" + std::to_string(i) + "]" : "";
    char what[200];
    std::snprintf(what, sizeof what, "hit reaction to %.0f N s on %s at %.3f s", hit.impulse,
                  hit.body.c_str(), hit.time);
    const std::string reacted = fmt("the hit threw the body %.3f m from its animated pose (any body: %.3f m)",
                                    hit.peakHitBodyDeviation, hit.peakDeviation);
    if (!hit.returned) {
      const std::string why =
          hit.knockedOut ? fmt("knocked out into a full ragdoll %.3f s after the hit; ", hit.knockoutTime)
                         : std::string("still powered at the end; ");
      checks.push_back(notRun("powered.hit_return_time" + at, std::string(what), why + reacted));
      continue;
    }
    checks.push_back(atMost("powered.hit_return_time" + at,
                            std::string(what) + ": from the hit back to animation (issue 6: within 1.5 s)",
                            "s", hit.returnTime, kHitReturnTime));
    checks.back().note = reacted;
    checks.push_back(
        atMost("powered.hit_rms_error_at_return" + at,
               std::string(what) + ": RMS joint-angle error at the last powered frame (issue 6: under 3 deg)",
               "deg", hit.rmsAtReturn * kDegPerRad, kHitReturnRmsDeg));
    checks.back().note = fmt("largest joint error then %.2f deg", hit.maxAtReturn * kDegPerRad);
  }

  // Breakable joints (SPEC section 6): each broke at its limit (under it at the end of the frame
  // before, over it in the substep it broke), the split ragdoll kept its other joints together,
  // and the character stayed down.
  for (const JointBreakMetrics& b : r.jointBreaks) {
    const std::string at = "@" + b.name;
    const double limit = b.byTorque ? b.breakTorque : b.breakForce;
    const double load = b.byTorque ? b.torque : b.force;
    const char* unit = b.byTorque ? "N m" : "N";
    const std::string what = "joint '" + b.name + "' broke at " + fmt("%.3f s", b.time) +
                             (b.byTorque ? " by torque" : " by force");
    checks.push_back(
        atMost("break.held_below_limit" + at,
               what + ": the load it carried at the end of the frame before (its limit: the threshold)", unit,
               b.loadBefore, limit));
    checks.push_back(
        atLeast("break.at_limit" + at,
                what + ": the load it reported in the substep it broke (its limit: the threshold; "
                       "with the row above, the limit lies within the last frame's change of the load)",
                unit, load, limit));
    checks.back().note = fmt("reported %.1f N, %.2f N m", b.force, b.torque) +
                         fmt("; largest change of the load over a frame before: %.1f", b.worstFrameChange);
    checks.push_back(
        atMost("break.no_other_joint_stretch" + at,
               what + ": largest anchor separation of any joint still whole, from the break to the end", "mm",
               b.otherJointsMaxStretch * 1e3, 10.0));
    checks.push_back(
        atMost("break.stays_down" + at,
               what + ": frames after the break out of Ragdoll (a broken character never gets up)", "frames",
               b.framesNotRagdoll, 0.0));
  }

  // Returns to animation (issue 19): the kinematic bodies reach the resumed animation no faster
  // than its own motion + 1 m/s, the displayed attachments without a jump.
  for (size_t i = 0; i < r.returns.size(); ++i) {
    const ReturnMetrics& m = r.returns[i];
    const std::string at = r.returns.size() > 1 ? "[" + std::to_string(i) + "]" : "";
    const std::string cap = m.from == "getup" ? "recovery." : m.from == "landing" ? "landing." : "powered.";
    const std::string when = fmt("back to animation at %.3f s", m.time) + " (from " + m.from + ")";
    checks.push_back(
        atMost(cap + "return_body_speed" + at,
               when + fmt(": worst body speed per frame beyond the resumed animation's own, over "
                          "the blend back (%.0f frames)",
                          static_cast<double>(m.frames)),
               "m/s", m.worstBodySpeedExcess, 1.0));
    checks.back().note =
        (m.worstBody.empty() ? std::string("no body beyond its own motion") : "on " + m.worstBody) +
        fmt("; fastest body %.2f m/s", m.worstBodySpeed);
    checks.push_back(atMost(cap + "return_attachment_jump_per_frame" + at,
                            when + ": displayed attachment (bones without a body, the tips of the hands and "
                                   "head) move per frame beyond the resumed animation's own",
                            "mm", m.worstAttachmentJump * 1e3, 20.0));
    checks.back().note =
        (m.worstAttachment.empty() ? std::string("no attachment beyond its own motion")
                                   : "on " + m.worstAttachment) +
        fmt("; pelvis %.1f mm, feet %.1f mm", m.worstPelvisJump * 1e3, m.worstFootJump * 1e3);
  }

  // Falls that land on their feet (issue 19, SPEC section 6): the displayed pelvis and feet
  // continuous into the resumed animation (2 cm per frame beyond its own motion).
  for (size_t i = 0, n = 0; i < r.returns.size(); ++i) {
    const ReturnMetrics& m = r.returns[i];
    if (m.from != "landing") continue;
    const std::string at = r.landings.size() > 1 ? "[" + std::to_string(n) + "]" : "";
    const LandingMetrics* l = n < r.landings.size() ? &r.landings[n] : nullptr;
    ++n;
    const std::string when = fmt("landing at %.3f s", m.time);
    checks.push_back(atMost("landing.pelvis_jump_per_frame" + at,
                            when + ": displayed pelvis move per frame beyond the resumed animation's own",
                            "mm", m.worstPelvisJump * 1e3, 20.0));
    if (l) {
      checks.back().note = fmt("fell %.2f m, %.2f s in the air; ", l->fallHeight, l->airTime) +
                           fmt("tilt %.1f deg, pelvis at %.0f %% of standing; ", l->tilt * kDegPerRad,
                               100.0 * l->pelvisHeight) +
                           fmt("exit blend %.2f s", l->exitBlend);
    }
    checks.push_back(atMost("landing.foot_jump_per_frame" + at,
                            when + ": displayed ankle move per frame beyond the resumed animation's own",
                            "mm", m.worstFootJump * 1e3, 20.0));
    checks.back().note = fmt("the animation's own largest foot move %.1f mm per frame", m.footOwnStep * 1e3);
  }

  // Knock-backs (issue 19): thrown at least 2 m (the scenario's min_flight_m), then standing.
  for (size_t i = 0; i < r.knockbacks.size(); ++i) {
    const KnockbackMetrics& k = r.knockbacks[i];
    const std::string at = r.knockbacks.size() > 1 ? "[" + std::to_string(i) + "]" : "";
    const std::string what =
        fmt("knock-back of %.0f N s (%.2f m/s) ", k.impulse, k.velocityChange) + fmt("at %.3f s", k.time);
    if (!k.touchedDown) {
      checks.push_back(
          notRun("knockback.flight_distance" + at, what,
                 "no flight ended: it never left the ground, or it may not get up (no flight is then "
                 "tracked, LandingSettings)"));
    } else {
      checks.push_back(
          atLeast("knockback.flight_distance" + at,
                  what + ": pelvis horizontal displacement to the first touch-down after a flight", "m",
                  k.flightDistance, expectation(s, "min_flight_m", 2.0)));
      checks.back().note = fmt("%.2f s from the throw to the touch-down", k.flightTime);
    }
    checks.push_back(atLeast("knockback.recovered" + at,
                             what + ": animated again and standing at the end, after a landing or a get-up",
                             "count", k.recovered ? 1.0 : 0.0, 1.0));
    checks.back().note =
        k.recovery.empty() ? std::string("neither landed nor got up") : "through a " + k.recovery;
  }

  // Limb lag (issue 19): the hands trail the walk visibly but boundedly, and the switch on moves
  // nothing faster than the animation does (the switch off is a return, above).
  for (size_t i = 0; i < r.limbLags.size(); ++i) {
    const LimbLagMetrics& m = r.limbLags[i];
    const std::string at = r.limbLags.size() > 1 ? "[" + std::to_string(i) + "]" : "";
    const std::string when =
        fmt("limb lag at %.3f s", m.time) + fmt(" (%.0f frames)", static_cast<double>(m.frames));
    checks.push_back(atMost("limblag.lag_bounded" + at,
                            when + ": largest distance of a displayed point of the lagging limbs from its "
                                   "animated place",
                            "mm", m.worstLag * 1e3, kLimbLagMost * 1e3));
    checks.back().note = "on " + m.worstPoint + fmt("; median over the frames %.1f mm", m.medianLag * 1e3);
    checks.push_back(atLeast("limblag.lag_visible" + at,
                             when + ": median over the frames of the largest displayed distance from the "
                                    "animation (a lag one can see)",
                             "mm", m.medianLag * 1e3, kLimbLagLeast * 1e3));
    checks.push_back(atMost("limblag.switch_on_jump_per_frame" + at,
                            when +
                                ": over the drives' ramp and 0.1 s after, a displayed limb point's move per "
                                "frame beyond the animation's own",
                            "mm", m.worstSwitchOnJump * 1e3, 20.0));
  }

  // A look-at owning a bone (issue 19): shown as the gaze asked in every frame.
  if (r.lookAt) {
    checks.push_back(atMost("lookat.head_vs_gaze",
                            "look-at head error vs gaze target: the displayed bone's world rotation against "
                            "its displayed parent's times the local the look-at gave it, worst frame",
                            "deg", r.lookAt->worstHeadError * kDegPerRad, 0.1));
    checks.back().note =
        fmt("%.0f frames; aim vs the target itself (the gaze works from the last frame's "
            "parent) worst %.2f deg",
            static_cast<double>(r.lookAt->frames), r.lookAt->worstAimError * kDegPerRad);
  }

  // Props in the hand (issue 19): held at the grip, released with the hand's velocity, no pop.
  for (const PropMetrics& p : r.props) {
    const std::string cap = "prop." + p.name + ".";
    if (p.simulatedHeldFrames > 0) {
      checks.push_back(atMost(cap + "grip_distance",
                              "held with the hand simulated (powered, ragdoll): largest distance between the "
                              "prop's grip and the hand's, over every such frame",
                              "mm", p.maxGripDistance * 1e3, 10.0));
      checks.back().note = fmt("%.0f frames; angle %.3f deg", static_cast<double>(p.simulatedHeldFrames),
                               p.maxGripAngle * kDegPerRad) +
                           fmt("; animated frames %.3f mm", p.maxAnimatedGripDistance * 1e3);
    }
    if (!p.released) continue;
    const std::string when = fmt("released at %.3f s", p.releaseTime) + (p.atDeath ? " (death)" : "");
    checks.push_back(atMost(cap + "release_velocity",
                            when + ": |v_prop - (v_hand + w_hand x r)| at the grip point", "m/s",
                            p.releaseLinearError, 1e-6));
    checks.back().note = fmt("hand point at %.3f m/s, %.3f rad/s", p.releaseSpeed, p.releaseAngularSpeed);
    checks.push_back(atMost(cap + "release_angular_velocity", when + ": |w_prop - w_hand|", "rad/s",
                            p.releaseAngularError, 1e-6));
    checks.push_back(atMost(cap + "release_jump",
                            when +
                                ": the prop's velocity change at the release (held -> free) beyond 5 % |v| + "
                                "|g| dt",
                            "m/s", p.releaseJumpExcess, 0.0));
    checks.back().note = fmt("change %.4f m/s", p.releaseJump);
    if (p.dropFrameMeasured) {
      checks.push_back(atMost(cap + "drop_continuity",
                              when + ": the prop's and its hand's velocity change over the frame after the "
                                     "release beyond 5 % |v_at_release| + |g| dt, worst of the two",
                              "m/s", p.dropFrameExcess, 0.0));
      checks.back().note = "worst: " + p.dropFrameWorst;
    }
  }

  // Scenario expectations beyond the pop allowance.
  for (const auto& [name, value] : s.expectations) {
    if (name == "max_pop_mm") continue;
    if (name == "max_joint_stretch_mm") {
      double worst = 0.0;
      for (double x : r.series.maxJointStretch) worst = std::max(worst, x);
      checks.push_back(atMost("robustness.max_joint_stretch",
                              "largest joint anchor separation over the whole run", "mm", worst * 1e3,
                              value));
    } else if (name == "joint_breaks") {
      checks.push_back(atLeast("break.count", "joints that broke", "count",
                               static_cast<double>(r.jointBreaks.size()), value));
    } else if (name == "landed") {
      checks.push_back(atLeast("landing.landed",
                               "falls that landed on their feet (animated again, no get-up)", "count",
                               static_cast<double>(r.landings.size()), value));
      const double getUps =
          static_cast<double>(std::count_if(r.events.begin(), r.events.end(), [](const CharacterEvent& e) {
            return e.kind == CharacterEventKind::GetUp;
          }));
      const double lying =
          static_cast<double>(std::count_if(r.series.state.begin(), r.series.state.end(),
                                            [](const std::string& st) { return st == "recovering"; }));
      checks.push_back(
          atMost("landing.never_lying", "get-ups started (lying down) in the run", "count", getUps, 0.0));
      checks.back().note = fmt("%.0f frames recovering", lying);
    } else if (name == "min_flight_m") {
      continue;  // the knockback.flight_distance threshold
    } else if (name == "recovered") {
      const double finished = static_cast<double>(std::count_if(
          r.recoveries.begin(), r.recoveries.end(), [](const RecoveryMetrics& m) { return m.finished; }));
      checks.push_back(atLeast("recovery.recovered", "get-ups finished (standing, animated again)", "count",
                               finished, value));
    } else {
      checks.push_back(
          notRun("expectation." + name, "scenario expectation", "the runner does not know '" + name + "'"));
    }
  }

  // Every step: exactly one blocking representation; no body lost by the engine.
  checks.push_back(atMost("robustness.one_blocking_representation",
                          "frames with other than exactly one blocking representation (limbs or capsule)",
                          "frames", counters.blockingViolations, 0.0));
  checks.push_back(atMost("robustness.no_body_left_world",
                          "bodies the engine disabled (left the world or became non-finite)", "count",
                          counters.bodiesLeftWorld, 0.0));

  // A run that lost bodies out of the world measured garbage: none of its checks passes (a body of
  // 1e308 kg threw every body out while the pop check read -1e303 as a pass).
  if (counters.bodiesLeftWorld > 0) {
    for (ThresholdCheck& c : checks) {
      if (c.name == "robustness.no_body_left_world" || !c.pass) continue;
      c.pass = false;
      c.note = fmt("the run lost %.0f bodies out of the world: its figures are not trusted",
                   counters.bodiesLeftWorld) +
               (c.note.empty() ? "" : "; " + c.note);
    }
  }

  // Powered and partial ragdolls: events the Character could not run.
  for (const std::string& line : r.notRun) {
    const bool powered =
        line.rfind("powered", 0) == 0 || line.rfind("partial", 0) == 0 || line.rfind("animate", 0) == 0;
    checks.push_back(
        notRun(powered ? "powered.event_run" : "robustness.event_run", "a scenario event", line));
  }
  return checks;
}

}  // namespace handoff::runner_detail
