// metrics.json and report.html. The page is drawn from the very JSON document metrics.json
// holds (and embeds it): every number cell carries the JSON pointer of its figure
// (data-path) and the digits it is shown with (data-digits), so a test can compare the two.
#include "handoff/runner.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace handoff {
namespace {

using nlohmann::json;

json vec(const Vec3& v) { return json::array({v.x, v.y, v.z}); }

json handoffJson(const HandoffMetrics& h) {
  json bodies = json::array();
  for (const BodyHandoffMetrics& b : h.bodies) {
    bodies.push_back({{"name", b.name},
                      {"positionJump", b.positionJump},
                      {"firstStepMove", b.firstStepMove},
                      {"allowedMove", b.allowedMove},
                      {"animatedVelocity", vec(b.animatedVelocity)},
                      {"animatedSpeed", glm::length(b.animatedVelocity)},
                      {"inheritedLinear", vec(b.inheritedLinear)},
                      {"inheritedSpeed", glm::length(b.inheritedLinear)},
                      {"inheritedAngular", vec(b.inheritedAngular)},
                      {"inheritedAngularSpeed", glm::length(b.inheritedAngular)},
                      {"postStepLinear", vec(b.postStepLinear)},
                      {"postStepSpeed", glm::length(b.postStepLinear)},
                      {"postStepAngular", vec(b.postStepAngular)},
                      {"postStepAngularSpeed", glm::length(b.postStepAngular)},
                      {"velocityChange", b.velocityChange},
                      {"velocityAllowed", b.velocityAllowed},
                      {"postSubstepLinear", vec(b.postSubstepLinear)},
                      {"substepVelocityChange", b.substepVelocityChange},
                      {"substepVelocityAllowed", b.substepVelocityAllowed},
                      {"rigidChange", vec(b.rigidChange)},
                      {"frameVelocityChange", b.frameVelocityChange},
                      {"frameVelocityAllowed", b.frameVelocityAllowed},
                      {"inContact", b.inContact},
                      {"clamps", b.clamps},
                      {"teleport", b.teleport},
                      {"snapped", b.snapped}});
  }
  return {{"kind", h.kind},
          {"time", h.time},
          {"mode", h.mode},
          {"committed", h.committed},
          {"failure", h.failure},
          {"teleportFlagged", h.teleportFlagged},
          {"teleportDetected", h.teleportDetected},
          {"rootJump", h.rootJump},
          {"sampleDt", h.sampleDt},
          {"depenetrationSpeed", h.depenetrationSpeed},
          {"maxPositionJump", h.maxPositionJump},
          {"maxFirstStepMove", h.maxFirstStepMove},
          {"worstPopExcess", h.worstPopExcess},
          {"maxVelocityChange", h.maxVelocityChange},
          {"worstVelocityExcess", h.worstVelocityExcess},
          {"bodiesInContact", h.bodiesInContact},
          {"substepTime", h.substepTime},
          {"maxSubstepVelocityChange", h.maxSubstepVelocityChange},
          {"worstSubstepVelocityExcess", h.worstSubstepVelocityExcess},
          {"worstFrameVelocityExcess", h.worstFrameVelocityExcess},
          {"followTime", h.followTime},
          {"worstSpeedExcess", h.worstSpeedExcess},
          {"comSpeed", h.comSpeed},
          {"spinRate", h.spinRate},
          {"worstSpeedSpinAllowance", h.worstSpeedSpinAllowance},
          {"worstSpeedAnimationAllowance", h.worstSpeedAnimationAllowance},
          {"worstSpeedPairAllowance", h.worstSpeedPairAllowance},
          {"worstSpeedBody", h.worstSpeedBody},
          {"worstSpeedTime", h.worstSpeedTime},
          {"maxJointSeparation", h.maxJointSeparation},
          {"firstStepRecorded", h.firstStepRecorded},
          {"firstStepImpulse", h.firstStepImpulse},
          {"hitAllowance", h.hitAllowance},
          {"animationPopExcess", h.animationPopExcess},
          {"animationVelocityExcess", h.animationVelocityExcess},
          {"energyMeasured", h.energyMeasured},
          {"energySamples", h.energySamples},
          {"energyTime", h.energyTime},
          {"kineticAtHandoff", h.kineticAtHandoff},
          {"energyReleased", h.energyReleased},
          {"energyWork", h.energyWork},
          {"energyWorkMagnitude", h.energyWorkMagnitude},
          {"worstEnergyGain", h.worstEnergyGain},
          {"worstEnergyGainTime", h.worstEnergyGainTime},
          {"bodies", bodies}};
}

json propsJson(const std::vector<PropMetrics>& props) {
  json out = json::array();
  for (const PropMetrics& p : props) {
    out.push_back(json{{"name", p.name},
                       {"heldFrames", p.heldFrames},
                       {"simulatedHeldFrames", p.simulatedHeldFrames},
                       {"maxGripDistance", p.maxGripDistance},
                       {"maxGripAngle", p.maxGripAngle},
                       {"maxAnimatedGripDistance", p.maxAnimatedGripDistance},
                       {"released", p.released},
                       {"releaseTime", p.releaseTime},
                       {"atDeath", p.atDeath},
                       {"releaseLinearError", p.releaseLinearError},
                       {"releaseAngularError", p.releaseAngularError},
                       {"releaseSpeed", p.releaseSpeed},
                       {"releaseAngularSpeed", p.releaseAngularSpeed},
                       {"releaseJump", p.releaseJump},
                       {"dropFrameExcess", p.dropFrameMeasured ? json(p.dropFrameExcess) : json(nullptr)},
                       {"dropFrameWorst", p.dropFrameWorst},
                       {"collidingPairs", p.collidingPairs}});
  }
  return out;
}

json hitReactionsJson(const std::vector<HitReactionMetrics>& hits) {
  json out = json::array();
  for (const HitReactionMetrics& h : hits) {
    out.push_back({{"time", h.time},
                   {"body", h.body},
                   {"impulse", h.impulse},
                   {"peakHitBodyDeviation", h.peakHitBodyDeviation},
                   {"peakDeviation", h.peakDeviation},
                   {"returned", h.returned},
                   {"returnTime", h.returned ? json(h.returnTime) : json(nullptr)},
                   {"rmsAtReturn", h.returned ? json(h.rmsAtReturn) : json(nullptr)},
                   {"maxAtReturn", h.returned ? json(h.maxAtReturn) : json(nullptr)},
                   {"knockedOut", h.knockedOut},
                   {"knockoutTime", h.knockedOut ? json(h.knockoutTime) : json(nullptr)}});
  }
  return out;
}

json limitJson(double v) { return std::isfinite(v) ? json(v) : json("inf"); }

json jointBreaksJson(const std::vector<JointBreakMetrics>& breaks) {
  json out = json::array();
  for (const JointBreakMetrics& b : breaks) {
    out.push_back({{"joint", b.name},
                   {"time", b.time},
                   {"force", b.force},
                   {"torque", b.torque},
                   {"breakForce", limitJson(b.breakForce)},
                   {"breakTorque", limitJson(b.breakTorque)},
                   {"byTorque", b.byTorque},
                   {"loadBefore", b.loadBefore},
                   {"worstFrameChange", b.worstFrameChange},
                   {"otherJointsMaxStretch", b.otherJointsMaxStretch},
                   {"framesNotRagdoll", b.framesNotRagdoll}});
  }
  return out;
}

json checkJson(const ThresholdCheck& c) {
  return {{"name", c.name},
          {"value", c.ran ? json(c.value) : json(nullptr)},
          {"threshold", c.threshold},
          {"comparison", c.comparison},
          {"unit", c.unit},
          {"pass", c.ran && c.pass},
          {"ran", c.ran},
          {"description", c.description},
          {"note", c.note}};
}

json scenarioJson(const ScenarioResult& r) {
  json checks = json::array();
  for (const ThresholdCheck& c : r.checks) checks.push_back(checkJson(c));
  json handoffs = json::array();
  for (const HandoffMetrics& h : r.handoffs) handoffs.push_back(handoffJson(h));
  json baselines = json::array();
  for (const BaselineResult& b : r.baselines) {
    baselines.push_back({{"mode", b.mode},
                         {"handoff", b.handoff ? handoffJson(*b.handoff) : json(nullptr)},
                         {"replay", b.replayFile}});
  }
  json comparisons = json::array();
  for (const DriveComparison& d : r.driveComparisons) {
    json dchecks = json::array();
    for (const ThresholdCheck& c : d.checks) dchecks.push_back(checkJson(c));
    comparisons.push_back({{"driveMode", d.driveMode},
                           {"ok", d.ok},
                           {"powered", d.powered ? handoffJson(*d.powered) : json(nullptr)},
                           {"poweredMaxPositionError", d.poweredMaxPositionError},
                           {"poweredMaxRmsJointError", d.poweredMaxRmsJointError},
                           {"poweredReturned", d.poweredReturned},
                           {"knockedOut", d.knockedOut},
                           {"hitReactions", hitReactionsJson(d.hitReactions)},
                           {"checks", dchecks}});
  }
  json recoveries = json::array();
  for (const RecoveryMetrics& m : r.recoveries) {
    recoveries.push_back({{"facing", m.facing},
                          {"settleTime", m.settleTime},
                          {"startTime", m.startTime},
                          {"finished", m.finished},
                          {"cancelled", m.cancelled},
                          {"worstPelvisJump", m.worstPelvisJump},
                          {"worstFootJump", m.worstFootJump},
                          {"getUpTail", m.getUpTail}});
  }
  json returns = json::array();
  for (const ReturnMetrics& m : r.returns) {
    returns.push_back({{"time", m.time},
                       {"from", m.from},
                       {"frames", m.frames},
                       {"worstBodySpeedExcess", m.worstBodySpeedExcess},
                       {"worstBody", m.worstBody},
                       {"worstBodySpeed", m.worstBodySpeed},
                       {"worstAttachmentJump", m.worstAttachmentJump},
                       {"worstAttachment", m.worstAttachment},
                       {"attachmentOwnStep", m.attachmentOwnStep},
                       {"worstPelvisJump", m.worstPelvisJump},
                       {"worstFootJump", m.worstFootJump},
                       {"footOwnStep", m.footOwnStep}});
  }
  json landings = json::array();
  for (const LandingMetrics& m : r.landings) {
    landings.push_back({{"time", m.time},
                        {"from", m.from},
                        {"airTime", m.airTime},
                        {"touchdownTime", m.touchdownTime},
                        {"fallHeight", m.fallHeight},
                        {"footOffset", m.footOffset},
                        {"pelvisHeight", m.pelvisHeight},
                        {"tilt", m.tilt},
                        {"angularSpeed", m.angularSpeed},
                        {"exitBlend", m.exitBlend}});
  }
  json knockbacks = json::array();
  for (const KnockbackMetrics& k : r.knockbacks) {
    knockbacks.push_back({{"time", k.time},
                          {"impulse", k.impulse},
                          {"velocityChange", k.velocityChange},
                          {"touchedDown", k.touchedDown},
                          {"flightDistance", k.flightDistance},
                          {"flightTime", k.flightTime},
                          {"recovery", k.recovery},
                          {"recovered", k.recovered}});
  }
  json limbLags = json::array();
  for (const LimbLagMetrics& m : r.limbLags) {
    limbLags.push_back({{"time", m.time},
                        {"frames", m.frames},
                        {"worstLag", m.worstLag},
                        {"worstPoint", m.worstPoint},
                        {"medianLag", m.medianLag},
                        {"worstSwitchOnJump", m.worstSwitchOnJump}});
  }
  json events = json::array();
  for (const CharacterEvent& e : r.events) {
    events.push_back({{"time", e.time}, {"kind", eventKindName(e.kind)}, {"detail", e.detail}});
  }
  const TimeSeries& s = r.series;
  json pelvis = json::array();
  for (const Vec3& p : s.pelvisPosition) pelvis.push_back(vec(p));
  json series = {{"time", s.time},
                 {"pelvisPosition", pelvis},
                 {"state", s.state},
                 {"pelvisHeight", s.pelvisHeight},
                 {"pelvisSpeed", s.pelvisSpeed},
                 {"maxJointStretch", s.maxJointStretch},
                 {"settleWindow", s.settleWindow},
                 {"blendWeight", s.blendWeight},
                 {"driveWeight", s.driveWeight},
                 {"contacts", s.contacts},
                 {"activeBodies", s.activeBodies},
                 {"sleepingBodies", s.sleepingBodies}};
  const int checksPassed = static_cast<int>(std::count_if(
      r.checks.begin(), r.checks.end(), [](const ThresholdCheck& c) { return c.ran && c.pass; }));
  return {{"name", r.name},
          {"description", r.description},
          {"source", r.source},
          {"character", r.character},
          {"clip", r.clip},
          {"jointCount", r.jointCount},
          {"bodyCount", r.bodyCount},
          {"pelvisBody", r.pelvisBody},
          {"ok", r.ok},
          {"error", r.error},
          {"notRun", r.notRun},
          {"passed", r.passed()},
          {"checksPassed", checksPassed},
          {"checksTotal", static_cast<int>(r.checks.size())},
          {"endTime", r.endTime},
          {"dt", r.dt},
          {"frames", r.frames},
          {"replay", r.replayFile},
          {"poweredMaxPositionError", r.poweredMaxPositionError},
          {"poweredMaxRmsJointError", r.poweredMaxRmsJointError},
          {"poweredReturned", r.poweredReturned},
          {"lookAt", r.lookAt ? json{{"frames", r.lookAt->frames},
                                     {"worstHeadError", r.lookAt->worstHeadError},
                                     {"worstAimError", r.lookAt->worstAimError}}
                              : json(nullptr)},
          {"limbLags", limbLags},
          {"props", propsJson(r.props)},
          {"driveMode", r.driveMode},
          {"driveComparisons", comparisons},
          {"checks", checks},
          {"handoffs", handoffs},
          {"baselines", baselines},
          {"recoveries", recoveries},
          {"hitReactions", hitReactionsJson(r.hitReactions)},
          {"jointBreaks", jointBreaksJson(r.jointBreaks)},
          {"returns", returns},
          {"landings", landings},
          {"knockbacks", knockbacks},
          {"events", events},
          {"series", series}};
}

json document(std::span<const ScenarioResult> results) {
  json scenarios = json::array();
  int passed = 0, checks = 0, checksPassed = 0;
  for (const ScenarioResult& r : results) {
    scenarios.push_back(scenarioJson(r));
    passed += r.passed() ? 1 : 0;
    checks += static_cast<int>(r.checks.size());
    checksPassed += scenarios.back()["checksPassed"].get<int>();
  }
  return {{"format", "handoff-metrics"},
          {"version", 1},
          {"summary",
           {{"scenarios", static_cast<int>(results.size())},
            {"scenariosPassed", passed},
            {"checks", checks},
            {"checksPassed", checksPassed},
            {"allPassed", passed == static_cast<int>(results.size())}}},
          {"scenarios", scenarios}};
}

// ---------------------------------------------------------------------------------------------
// HTML

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

/// A table cell showing the figure at `path` of the document (scaled by `scale` for display:
/// data-scale says so). Numbers keep `digits` decimals; booleans read "yes"/"no"; null "—".
std::string cell(const json& doc, const std::string& path, int digits = 3, double scale = 1.0) {
  const json& v = doc.at(json::json_pointer(path));
  std::string text;
  if (v.is_null()) {
    text = "—";
  } else if (v.is_boolean()) {
    text = v.get<bool>() ? "yes" : "no";
  } else if (v.is_number()) {
    text = fixed(v.get<double>() * scale, digits);
  } else if (v.is_array()) {
    text = "(";
    for (size_t i = 0; i < v.size(); ++i) text += (i ? ", " : "") + fixed(v[i].get<double>() * scale, digits);
    text += ")";
  } else {
    text = escape(v.get<std::string>());
  }
  std::ostringstream s;
  s << "<td data-path=\"" << path << "\" data-digits=\"" << digits << "\"";
  if (scale != 1.0) s << " data-scale=\"" << scale << "\"";
  s << ">" << text << "</td>";
  return s.str();
}

struct Series {
  const char* key;
  const char* label;
  const char* color;
  double scale = 1.0;
};

/// An inline SVG line plot of series of the scenario over time, with event markers.
std::string plot(const json& sc, const std::string& title, const std::string& unit,
                 std::initializer_list<Series> lines) {
  const json& s = sc["series"];
  const std::vector<double> time = s["time"].get<std::vector<double>>();
  if (time.size() < 2) return "";
  const double w = 460, h = 150, left = 48, right = 22, top = 20, bottom = 24;
  double lo = 1e300, hi = -1e300;
  for (const Series& l : lines) {
    for (const json& v : s[l.key]) {
      lo = std::min(lo, v.get<double>() * l.scale);
      hi = std::max(hi, v.get<double>() * l.scale);
    }
  }
  lo = std::min(lo, 0.0);
  if (hi - lo < 1e-9) hi = lo + 1.0;
  const double t0 = time.front(), t1 = time.back();
  const auto X = [&](double t) { return left + (t - t0) / (t1 - t0) * (w - left - right); };
  const auto Y = [&](double v) { return top + (1.0 - (v - lo) / (hi - lo)) * (h - top - bottom); };
  std::ostringstream o;
  o << "<svg class=\"plot\" width=\"" << w << "\" height=\"" << h << "\" viewBox=\"0 0 " << w << " " << h
    << "\" xmlns=\"http://www.w3.org/2000/svg\">";
  o << "<text x=\"" << left << "\" y=\"13\" class=\"pt\">" << escape(title) << " [" << escape(unit)
    << "]</text>";
  o << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << (w - left - right) << "\" height=\""
    << (h - top - bottom) << "\" class=\"frame\"/>";
  for (int i = 0; i <= 2; ++i) {
    const double v = lo + (hi - lo) * i / 2.0;
    o << "<text x=\"" << (left - 4) << "\" y=\"" << (Y(v) + 4) << "\" class=\"ax\" text-anchor=\"end\">"
      << fixed(v, std::abs(hi - lo) < 3 ? 2 : 0) << "</text>";
  }
  for (int i = 0; i <= 4; ++i) {
    const double t = t0 + (t1 - t0) * i / 4.0;
    o << "<text x=\"" << X(t) << "\" y=\"" << (h - 8) << "\" class=\"ax\" text-anchor=\"middle\">"
      << fixed(t, 1) << " s</text>";
  }
  for (const json& e : sc["handoffs"]) {
    const double t = e["time"].get<double>();
    o << "<line x1=\"" << X(t) << "\" x2=\"" << X(t) << "\" y1=\"" << top << "\" y2=\"" << (h - bottom)
      << "\" class=\"ev\"><title>handoff " << fixed(t, 3) << " s</title></line>";
  }
  for (const json& r : sc["recoveries"]) {
    const double t = r["startTime"].get<double>();
    o << "<line x1=\"" << X(t) << "\" x2=\"" << X(t) << "\" y1=\"" << top << "\" y2=\"" << (h - bottom)
      << "\" class=\"ev2\"><title>get-up " << fixed(t, 3) << " s</title></line>";
  }
  double legendX = left + 4;
  for (const Series& l : lines) {
    o << "<polyline fill=\"none\" stroke=\"" << l.color << "\" stroke-width=\"1.4\" points=\"";
    const json& values = s[l.key];
    for (size_t i = 0; i < time.size(); ++i) {
      o << fixed(X(time[i]), 1) << "," << fixed(Y(values[i].get<double>() * l.scale), 1) << " ";
    }
    o << "\" data-series=\"" << l.key << "\"/>";
    o << "<text x=\"" << legendX << "\" y=\"" << (top + 12) << "\" fill=\"" << l.color << "\" class=\"lg\">"
      << l.label << "</text>";
    legendX += 9.0 * static_cast<double>(std::string(l.label).size()) + 12;
  }
  o << "</svg>";
  return o.str();
}

const char* kStyle = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1500px}
h1{margin:0 0 4px}h2{margin:32px 0 4px;border-top:2px solid #ccc;padding-top:12px}
table{border-collapse:collapse;margin:8px 0;font-size:12.5px}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}th{background:#f3f3f3}
td:first-child,th:first-child{text-align:left}.l{text-align:left}
.pass{background:#d9f5d9}.fail{background:#f8d4d4}.nr{background:#fbeec4}
.badge{display:inline-block;padding:2px 8px;border-radius:4px;font-weight:bold;margin-left:8px}
.plots{display:flex;flex-wrap:wrap;gap:8px}.plot{background:#fcfcfc;border:1px solid #eee}
.frame{fill:none;stroke:#bbb}.ax{font-size:10px;fill:#666}.pt{font-size:12px;font-weight:bold}
.lg{font-size:11px}.ev{stroke:#d33;stroke-dasharray:3 3}.ev2{stroke:#38c;stroke-dasharray:3 3}
details{margin:6px 0}summary{cursor:pointer}.muted{color:#777}
)";

std::string statusBadge(bool pass, bool notRun) {
  if (pass) return "<span class=\"badge pass\">PASS</span>";
  if (notRun) return "<span class=\"badge nr\">NOT RUN / FAIL</span>";
  return "<span class=\"badge fail\">FAIL</span>";
}

void handoffTable(std::ostringstream& o, const json& doc, const std::string& base) {
  const json& h = doc.at(json::json_pointer(base));
  o << "<table><tr><th>handoff</th><th>time [s]</th><th>mode</th><th>committed</th><th>teleport flagged</th>"
       "<th>teleport detected</th><th>root jump [m]</th><th>sample dt [ms]</th><th>bodies touching after "
       "step 1</th></tr><tr>"
    << "<td>" << escape(base.substr(base.rfind('/') + 1)) << "</td>" << cell(doc, base + "/time")
    << cell(doc, base + "/mode") << cell(doc, base + "/committed") << cell(doc, base + "/teleportFlagged")
    << cell(doc, base + "/teleportDetected") << cell(doc, base + "/rootJump")
    << cell(doc, base + "/sampleDt", 3, 1e3) << cell(doc, base + "/bodiesInContact", 0) << "</tr></table>";
  o << "<table><tr><th>body</th><th>jump at commit [mm]</th><th>move in step 1 [mm]</th><th>allowed [mm]</th>"
       "<th>|v anim| [m/s]</th><th>|v inherited| [m/s]</th><th>v inherited [m/s]</th><th>|ω inherited| "
       "[rad/s]</th>"
       "<th>|v after step 1| [m/s]</th><th>v after step 1 [m/s]</th><th>|ω after step 1| [rad/s]</th>"
       "<th>|Δv| over the frame (vs anim) [m/s]</th><th>allowed [m/s]</th><th>|Δv| after the first physics "
       "step h (vs inherited) [m/s]</th><th>allowed (h) [m/s]</th><th>contact</th><th>clamps</th></tr>";
  for (size_t b = 0; b < h["bodies"].size(); ++b) {
    const std::string p = base + "/bodies/" + std::to_string(b);
    const json& body = h["bodies"][b];
    const bool popBad = body["firstStepMove"].get<double>() - body["allowedMove"].get<double>() > 0.002;
    const bool dvBad = !body["inContact"].get<bool>() && body["substepVelocityChange"].get<double>() >
                                                             body["substepVelocityAllowed"].get<double>();
    o << "<tr" << (popBad || dvBad ? " class=\"fail\"" : "") << ">" << cell(doc, p + "/name")
      << cell(doc, p + "/positionJump", 3, 1e3) << cell(doc, p + "/firstStepMove", 2, 1e3)
      << cell(doc, p + "/allowedMove", 2, 1e3) << cell(doc, p + "/animatedSpeed")
      << cell(doc, p + "/inheritedSpeed") << cell(doc, p + "/inheritedLinear", 2)
      << cell(doc, p + "/inheritedAngularSpeed", 2) << cell(doc, p + "/postStepSpeed")
      << cell(doc, p + "/postStepLinear", 2) << cell(doc, p + "/postStepAngularSpeed", 2)
      << cell(doc, p + "/velocityChange") << cell(doc, p + "/velocityAllowed")
      << cell(doc, p + "/substepVelocityChange") << cell(doc, p + "/substepVelocityAllowed")
      << cell(doc, p + "/inContact") << cell(doc, p + "/clamps") << "</tr>";
  }
  o << "</table>";
}

}  // namespace

std::string metricsJson(std::span<const ScenarioResult> results) { return document(results).dump(1) + "\n"; }

std::string reportHtml(std::span<const ScenarioResult> results) {
  const json doc = document(results);
  std::ostringstream o;
  o << "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>handoff validation "
       "report</title><style>"
    << kStyle << "</style></head><body>";
  o << "<h1>handoff validation report</h1><p class=\"muted\">Every figure below is read from the metrics "
       "document "
       "embedded at the end of this page (the same as metrics.json). Thresholds: docs/SCENARIOS.md.</p>";
  const json& sum = doc["summary"];
  o << "<table><tr><th>scenarios</th><th>passed</th><th>threshold checks</th><th>passed</th></tr><tr>"
    << cell(doc, "/summary/scenarios", 0) << cell(doc, "/summary/scenariosPassed", 0)
    << cell(doc, "/summary/checks", 0) << cell(doc, "/summary/checksPassed", 0) << "</tr></table>";
  (void)sum;
  o << "<table><tr><th>scenario</th><th>status</th><th>checks passed</th><th>of</th><th>handoffs</th><th>end "
       "[s]</th>"
       "<th>replay</th></tr>";
  for (size_t i = 0; i < doc["scenarios"].size(); ++i) {
    const std::string p = "/scenarios/" + std::to_string(i);
    const json& sc = doc["scenarios"][i];
    const bool pass = sc["passed"].get<bool>();
    o << "<tr class=\"" << (pass ? "pass" : "fail") << "\"><td><a href=\"#"
      << escape(sc["name"].get<std::string>()) << "\">" << escape(sc["name"].get<std::string>())
      << "</a></td>" << cell(doc, p + "/passed") << cell(doc, p + "/checksPassed", 0)
      << cell(doc, p + "/checksTotal", 0) << "<td>" << sc["handoffs"].size() << "</td>"
      << cell(doc, p + "/endTime", 2) << cell(doc, p + "/replay") << "</tr>";
  }
  o << "</table>";

  for (size_t i = 0; i < doc["scenarios"].size(); ++i) {
    const std::string p = "/scenarios/" + std::to_string(i);
    const json& sc = doc["scenarios"][i];
    const std::string name = sc["name"].get<std::string>();
    o << "<h2 id=\"" << escape(name) << "\">" << escape(name)
      << statusBadge(sc["passed"].get<bool>(), !sc["notRun"].empty()) << "</h2>";
    o << "<p>" << escape(sc["description"].get<std::string>()) << "</p><p class=\"muted\">"
      << escape(sc["source"].get<std::string>()) << " — character "
      << escape(sc["character"].get<std::string>()) << ", clip " << escape(sc["clip"].get<std::string>())
      << "</p>";
    if (!sc["error"].get<std::string>().empty()) {
      o << "<p class=\"fail\">error: " << escape(sc["error"].get<std::string>()) << "</p>";
    }
    for (const json& line : sc["notRun"])
      o << "<p class=\"nr\">" << escape(line.get<std::string>()) << "</p>";

    o << "<h3>Thresholds</h3><table><tr><th>check</th><th>value</th><th></th><th>threshold</th><th>unit</th>"
         "<th>pass</th><th class=\"l\">what</th></tr>";
    for (size_t c = 0; c < sc["checks"].size(); ++c) {
      const std::string cp = p + "/checks/" + std::to_string(c);
      const json& ch = sc["checks"][c];
      const char* cls = !ch["ran"].get<bool>() ? "nr" : ch["pass"].get<bool>() ? "pass" : "fail";
      std::string what = ch["description"].get<std::string>();
      if (!ch["note"].get<std::string>().empty()) what += " — " + ch["note"].get<std::string>();
      o << "<tr class=\"" << cls << "\">" << cell(doc, cp + "/name") << cell(doc, cp + "/value", 3) << "<td>"
        << escape(ch["comparison"].get<std::string>()) << "</td>" << cell(doc, cp + "/threshold", 3)
        << cell(doc, cp + "/unit") << cell(doc, cp + "/pass") << "<td class=\"l\">" << escape(what)
        << "</td></tr>";
    }
    o << "</table>";

    o << "<h3>Over time</h3><div class=\"plots\">"
      << plot(sc, "pelvis height", "m", {{"pelvisHeight", "height", "#1f77b4"}})
      << plot(sc, "pelvis speed", "m/s", {{"pelvisSpeed", "speed", "#ff7f0e"}})
      << plot(sc, "max joint stretch", "mm", {{"maxJointStretch", "stretch", "#d62728", 1e3}})
      << plot(sc, "settle window", "s", {{"settleWindow", "in window", "#2ca02c"}})
      << plot(sc, "blend and drive weights", "0..1",
              {{"blendWeight", "blend", "#9467bd"}, {"driveWeight", "drive", "#8c564b"}})
      << plot(sc, "contacts and active bodies", "count",
              {{"contacts", "contacts", "#17becf"},
               {"activeBodies", "active", "#bcbd22"},
               {"sleepingBodies", "sleeping", "#7f7f7f"}})
      << "</div><p class=\"muted\">Red dashes: handoffs; blue dashes: get-up starts.</p>";

    for (size_t h = 0; h < sc["handoffs"].size(); ++h) {
      o << "<h3>Handoff " << h << " — per body, before vs after the first physics step</h3>";
      handoffTable(o, doc, p + "/handoffs/" + std::to_string(h));
    }
    if (!sc["baselines"].empty() && !sc["handoffs"].empty()) {
      o << "<h3>Naive baselines on the same frames</h3><table><tr><th>mode</th><th>max jump at commit "
           "[mm]</th>"
           "<th>max move in step 1 [mm]</th><th>worst move beyond allowed [mm]</th><th>max |Δv| [m/s]</th>"
           "<th>worst |Δv| beyond allowed [m/s]</th></tr>";
      const auto row = [&](const std::string& hp) {
        o << "<tr>" << cell(doc, hp + "/mode") << cell(doc, hp + "/maxPositionJump", 2, 1e3)
          << cell(doc, hp + "/maxFirstStepMove", 2, 1e3) << cell(doc, hp + "/worstPopExcess", 2, 1e3)
          << cell(doc, hp + "/maxVelocityChange") << cell(doc, hp + "/worstVelocityExcess") << "</tr>";
      };
      row(p + "/handoffs/0");
      for (size_t b = 0; b < sc["baselines"].size(); ++b) {
        if (!sc["baselines"][b]["handoff"].is_null()) row(p + "/baselines/" + std::to_string(b) + "/handoff");
      }
      o << "</table>";
      for (size_t b = 0; b < sc["baselines"].size(); ++b) {
        if (sc["baselines"][b]["handoff"].is_null()) continue;
        o << "<details><summary>" << escape(sc["baselines"][b]["mode"].get<std::string>())
          << ": per body</summary>";
        handoffTable(o, doc, p + "/baselines/" + std::to_string(b) + "/handoff");
        o << "</details>";
      }
    }
    if (!sc["driveComparisons"].empty()) {
      // The run and the same frames with the other drive solver: a comparison, not SPEC rows.
      o << "<h3>Drive comparison on the same frames (not a threshold row)</h3><table><tr><th>drive</th>"
           "<th>worst move beyond allowed in step 1 [mm]</th><th>worst |Δv| beyond allowed [m/s]</th>"
           "<th>max RMS joint error [deg]</th><th>max body distance to the animation [m]</th>"
           "<th>knocked out</th><th>back to animation</th></tr>";
      const auto row = [&](const std::string& label, const std::string& hp, const std::string& rp) {
        o << "<tr><td>" << escape(label) << "</td>";
        if (doc.contains(json::json_pointer(hp))) {
          o << cell(doc, hp + "/worstPopExcess", 2, 1e3) << cell(doc, hp + "/worstVelocityExcess");
        } else {
          o << "<td></td><td></td>";
        }
        o << cell(doc, rp + "/poweredMaxRmsJointError", 1, 180.0 / kPi)
          << cell(doc, rp + "/poweredMaxPositionError")
          << (doc.contains(json::json_pointer(rp + "/knockedOut")) ? cell(doc, rp + "/knockedOut")
                                                                   : std::string("<td>see the checks</td>"))
          << cell(doc, rp + "/poweredReturned") << "</tr>";
      };
      size_t firstPowered = 0;
      while (firstPowered < sc["handoffs"].size() &&
             sc["handoffs"][firstPowered]["kind"].get<std::string>() != "powered")
        ++firstPowered;
      row(sc["driveMode"].get<std::string>() + " (this run)", p + "/handoffs/" + std::to_string(firstPowered),
          p);
      for (size_t d = 0; d < sc["driveComparisons"].size(); ++d) {
        const std::string dp = p + "/driveComparisons/" + std::to_string(d);
        row(sc["driveComparisons"][d]["driveMode"].get<std::string>(), dp + "/powered", dp);
      }
      o << "</table>";
    }
    if (!sc["hitReactions"].empty()) {
      // The hit reactions of this run and, on the same frames, of the other drive.
      o << "<h3>Hit reactions (an impulse while animated: powered, pelvis and feet pinned)</h3><table><tr>"
           "<th>drive</th><th>hit [s]</th><th>body</th><th>impulse [N s]</th>"
           "<th>hit body's peak distance to the animation [m]</th><th>any body's [m]</th>"
           "<th>back to animation</th><th>after [s]</th><th>RMS joint error then [deg]</th>"
           "<th>max joint error then [deg]</th><th>knocked out</th><th>after [s]</th></tr>";
      const auto rows = [&](const std::string& label, const std::string& base) {
        const json& hits = doc.at(json::json_pointer(base + "/hitReactions"));
        for (size_t h = 0; h < hits.size(); ++h) {
          const std::string hp = base + "/hitReactions/" + std::to_string(h);
          o << "<tr><td>" << escape(label) << "</td>" << cell(doc, hp + "/time") << cell(doc, hp + "/body")
            << cell(doc, hp + "/impulse", 0) << cell(doc, hp + "/peakHitBodyDeviation")
            << cell(doc, hp + "/peakDeviation") << cell(doc, hp + "/returned")
            << cell(doc, hp + "/returnTime") << cell(doc, hp + "/rmsAtReturn", 2, 180.0 / kPi)
            << cell(doc, hp + "/maxAtReturn", 2, 180.0 / kPi) << cell(doc, hp + "/knockedOut")
            << cell(doc, hp + "/knockoutTime") << "</tr>";
        }
      };
      rows(sc["driveMode"].get<std::string>() + " (this run)", p);
      for (size_t d = 0; d < sc["driveComparisons"].size(); ++d) {
        rows(sc["driveComparisons"][d]["driveMode"].get<std::string>(),
             p + "/driveComparisons/" + std::to_string(d));
      }
      o << "</table>";
    }
    if (!sc["recoveries"].empty()) {
      o << "<h3>Recoveries</h3><table><tr><th>#</th><th>facing</th><th>settled [s]</th><th>get-up start "
           "[s]</th>"
           "<th>finished</th><th>cancelled</th><th>pelvis jump beyond clip [mm/frame]</th>"
           "<th>foot jump beyond clip [mm/frame]</th><th>get-up completion tail [s]</th></tr>";
      for (size_t r = 0; r < sc["recoveries"].size(); ++r) {
        const std::string rp = p + "/recoveries/" + std::to_string(r);
        o << "<tr><td>" << r << "</td>" << cell(doc, rp + "/facing") << cell(doc, rp + "/settleTime")
          << cell(doc, rp + "/startTime") << cell(doc, rp + "/finished") << cell(doc, rp + "/cancelled")
          << cell(doc, rp + "/worstPelvisJump", 1, 1e3) << cell(doc, rp + "/worstFootJump", 1, 1e3)
          << cell(doc, rp + "/getUpTail", 2) << "</tr>";
      }
      o << "</table>";
    }
    o << "<details><summary>Character events (" << sc["events"].size()
      << ")</summary><table><tr><th>time [s]</th>"
         "<th>kind</th><th class=\"l\">detail</th></tr>";
    for (size_t e = 0; e < sc["events"].size(); ++e) {
      const std::string ep = p + "/events/" + std::to_string(e);
      o << "<tr>" << cell(doc, ep + "/time") << cell(doc, ep + "/kind") << cell(doc, ep + "/detail")
        << "</tr>";
    }
    o << "</table></details>";
  }
  // The document itself, for tools and tests; "</" may not appear inside a script element
  // ("<\/" reads back as the same JSON string).
  std::string embedded = doc.dump();
  for (size_t at = embedded.find("</"); at != std::string::npos; at = embedded.find("</", at + 3)) {
    embedded.replace(at, 2, "<\\/");
  }
  o << "<script type=\"application/json\" id=\"metrics\">" << embedded << "</script></body></html>\n";
  return o.str();
}

}  // namespace handoff
