#include "live/workbench.h"

#include "live/files.h"
#include "live/workbench_internal.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace handoff::live {

using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}
/// CPU time of the calling thread. [ms]
double threadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

/// Compact numbers for the frame stream (display only: the figures of record are metrics()).
void appendNumber(std::string& out, double v) {
  char text[32];
  const int n = std::snprintf(text, sizeof text, "%.5f", std::isfinite(v) ? v : 0.0);
  // Trim trailing zeros ("0.50000" -> "0.5", "1.00000" -> "1").
  int end = n;
  while (end > 1 && text[end - 1] == '0') --end;
  if (end > 1 && text[end - 1] == '.') --end;
  if (end == 2 && text[0] == '-' && text[1] == '0') {
    out += '0';
    return;
  }
  out.append(text, static_cast<size_t>(end));
}
void appendTransform(std::string& out, const Transform& t) {
  const double v[7] = {t.translation.x, t.translation.y, t.translation.z, t.rotation.x,
                       t.rotation.y,    t.rotation.z,    t.rotation.w};
  for (int i = 0; i < 7; ++i) {
    if (i) out += ',';
    appendNumber(out, v[i]);
  }
}

bool writeText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return static_cast<bool>(out);
}

/// The file reference as the saved scenario should carry it: relative to the data folder when it
/// is inside it (portable: `handoff run` finds it through its data folder), else absolute.
std::string portableReference(const Scenario& s, const std::string& file, const fs::path& dataDir) {
  if (file.empty()) return file;
  const std::string dirs[] = {dataDir.string()};
  Result<std::string> resolved = resolveScenarioFile(s, file, dirs);
  if (!resolved) return file;
  std::error_code ec;
  const fs::path path = fs::weakly_canonical(*resolved, ec);
  const fs::path data = fs::weakly_canonical(dataDir, ec);
  const fs::path relative = path.lexically_relative(data);
  if (!relative.empty() && *relative.begin() != "..") return relative.generic_string();
  return path.string();
}

void portableClip(const Scenario& s, ScenarioClip& clip, const fs::path& dataDir) {
  clip.file = portableReference(s, clip.file, dataDir);
}

}  // namespace

json checksJson(const ScenarioResult& result) {
  json checks = json::array();
  for (const ThresholdCheck& c : result.checks) {
    checks.push_back({{"name", c.name},
                      {"description", c.description},
                      {"unit", c.unit},
                      {"comparison", c.comparison},
                      {"value", c.ran ? json(c.value) : json(nullptr)},
                      {"threshold", c.threshold},
                      {"ran", c.ran},
                      {"pass", c.pass},
                      {"note", c.note}});
  }
  return checks;
}

TimeStats timeStats(const std::vector<double>& samples) {
  std::vector<double> v;
  for (double x : samples) {
    if (x >= 0.0) v.push_back(x);
  }
  TimeStats q;
  q.count = static_cast<int>(v.size());
  if (v.empty()) return q;
  std::sort(v.begin(), v.end());
  double sum = 0.0;
  for (double x : v) sum += x;
  const auto at = [&](double p) {
    return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
  };
  q.mean = sum / static_cast<double>(v.size());
  q.median = at(0.5);
  q.p95 = at(0.95);
  q.max = v.back();
  return q;
}

std::string resultJson(const ScenarioResult& result) {
  const json all = json::parse(metricsJson(std::span<const ScenarioResult>(&result, 1)));
  return all["scenarios"][0].dump();
}

Workbench::Workbench(WorkbenchOptions options) : options_(std::move(options)) {
  runOptions_.searchDirs = {options_.dataDir.string()};
  runner_ = std::make_unique<ScenarioRunner>(runOptions_);
  frameMs_.assign(600, -1.0);
  frameCpuMs_.assign(600, -1.0);
}

Workbench::~Workbench() = default;

const Scenario& Workbench::scenario() const { return session_->session->scenario(); }
const RagdollAsset& Workbench::asset() const { return session_->session->asset(); }
std::string Workbench::assetJson() const { return saveRagdollJson(asset()); }
int Workbench::frame() const { return session_ ? session_->session->frame() : 0; }
double Workbench::time() const { return session_ ? session_->session->time() : 0.0; }

void Workbench::setSpeed(double speed) {
  if (!std::isfinite(speed)) return;
  speed_ = std::clamp(speed, 0.05, 4.0);
  bumpState();
}

Scenario Workbench::scenarioForCharacter(const std::string& file) const {
  Scenario s;
  s.name = "live";
  s.description = "Recorded with handoff live.";
  s.character.file = file;
  s.clip.index = 0;
  s.clip.wrap = WrapMode::Loop;
  s.endTime = 10.0;
  s.character.file = portableReference(s, file, options_.dataDir);
  return s;
}

Status Workbench::open(Scenario s, std::string origin) {
  const auto started = Clock::now();
  // The events stay; the end is the session's (extended as it plays).
  s.events.erase(std::remove_if(s.events.begin(), s.events.end(),
                                [](const ScenarioEvent& e) { return e.type() == EventType::End; }),
                 s.events.end());
  // File references made independent of the scenario's own folder (a save lands elsewhere).
  s.character.file = portableReference(s, s.character.file, options_.dataDir);
  s.character.map = portableReference(s, s.character.map, options_.dataDir);
  s.ragdoll.asset = portableReference(s, s.ragdoll.asset, options_.dataDir);
  portableClip(s, s.clip, options_.dataDir);
  if (s.recovery.supine) portableClip(s, *s.recovery.supine, options_.dataDir);
  if (s.recovery.prone) portableClip(s, *s.recovery.prone, options_.dataDir);
  for (ScenarioEvent& e : s.events) {
    if (auto* c = std::get_if<ScenarioEvent::Clip>(&e.payload)) portableClip(s, c->clip, options_.dataDir);
  }
  s.baseDir.clear();

  const std::string dirs[] = {options_.dataDir.string()};
  Result<std::string> path = resolveScenarioFile(s, s.character.file, dirs);
  if (!path) return Error{"character.file: " + path.error()};
  ImportOptions io;
  io.unitScale = s.character.unitScale;
  Result<ImportedAsset> imported = importFile(*path, io);
  if (!imported) return Error{imported.error()};
  auto character = std::make_shared<const ImportedAsset>(std::move(imported).value());
  if (character->clips.empty()) return Error{*path + ": the file has no clips (the workbench plays one)"};
  // The map report (docs/RIGS.md): per slot how it was decided and how sure the mapper is, from
  // the scenario's map file, the file's own humanoid bones, then names and structure.
  MapInputs inputs;
  inputs.fileHumanoid = character->humanoidBones;
  if (!s.character.map.empty()) {
    Result<std::string> mapPath = resolveScenarioFile(s, s.character.map, dirs);
    if (!mapPath) return Error{"character.map: " + mapPath.error()};
    std::ifstream in(*mapPath, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) return Error{"character.map: cannot read '" + *mapPath + "'"};
    inputs.userJson = text.str();
    inputs.userSource = *mapPath;
  }
  Result<HumanoidMapReport> report = mapHumanoidReport(character->skeleton, inputs);
  if (!report) return Error{*path + ": " + report.error()};
  Scenario base = s;
  base.events.clear();
  const std::vector<ScenarioEvent> events = s.events;

  // Swap in only when the session starts.
  std::swap(character_, character);
  std::swap(base_, base);
  const Tuning oldTuning = tuning_;
  tuning_ = {};
  Scenario start = base_;
  start.events = events;
  if (Status st = startSession(start, tuning_, 0.0, true); !st) {
    std::swap(character_, character);
    std::swap(base_, base);
    tuning_ = oldTuning;
    return st;
  }
  mapReport_ = std::move(report).value();
  opened_ = base_;
  characterPath_ = *path;
  origin_ = std::move(origin);
  uploaded_ = false;
  lastStartMs_ = msSince(started);
  bumpState();
  return {};
}

void Workbench::markUploaded() {
  uploaded_ = true;
  bumpState();
}

Status Workbench::startSession(const Scenario& requested, const Tuning& tuning, double fastForwardTo,
                               bool keepPlaying) {
  Scenario s = requested;
  const double dt = s.settings.dt;
  // Long enough for the fast-forward and the triggers; extended while playing.
  double last = fastForwardTo;
  for (const ScenarioEvent& e : s.events) last = std::max(last, e.time);
  s.endTime = std::min(kScenarioMaxTime, std::max(s.endTime, last + 10.0));

  if (!tuning.groups.empty()) {
    if (!s.ragdoll.asset.empty()) {
      return Error{
          "group presets apply to a ragdoll built from the skeleton; this scenario loads the asset '" +
          s.ragdoll.asset + "': edit its joints one by one"};
    }
    json overrides = s.ragdoll.build.jointOverridesJson.empty()
                         ? json::object()
                         : json::parse(s.ragdoll.build.jointOverridesJson, nullptr, false);
    if (!overrides.is_object()) return Error{"ragdoll.build.joints: not a JSON object"};
    for (const auto& [group, fields] : tuning.groups.items()) overrides["groups"][group].update(fields);
    s.ragdoll.build.jointOverridesJson = overrides.dump();
  }

  auto next = std::make_unique<Session>();
  if (!tuning.joints.empty() || !tuning.bodies.empty()) {
    // The ragdoll the scenario gives (built with the group presets, or its asset file), then the
    // joint and body edits on it, saved as the asset the session loads.
    Result<std::unique_ptr<ScenarioSession>> probe =
        ScenarioSession::start(*runner_, s, s.settings.handoff.mode, nullptr);
    if (!probe) return Error{probe.error()};
    Result<RagdollAsset> tuned = applyEdits((*probe)->asset(), tuning);
    if (!tuned) return Error{tuned.error()};
    std::vector<Finding> found = validateRagdoll(*tuned, character_->skeleton);
    if (hasErrors(found)) {
      std::string message = "the edited ragdoll does not validate:";
      for (const Finding& f : found) {
        if (f.severity == Finding::Severity::Error) message += "\n  " + formatFinding(f);
      }
      return Error{message};
    }
    const fs::path file = options_.scratchDir / ("asset-" + std::to_string(++assetCount_) + ".json");
    if (!writeText(file, saveRagdollJson(*tuned))) return Error{"cannot write " + file.string()};
    s.ragdoll.asset = file.string();
    s.ragdoll.build = ScenarioBuild{};
    s.ragdoll.totalMass = ScenarioRagdoll{}.totalMass;
    next->assetFile = file.string();
  }

  Result<std::unique_ptr<ScenarioSession>> started =
      ScenarioSession::start(*runner_, s, s.settings.handoff.mode, &next->replay);
  if (!started) return Error{started.error()};
  next->session = std::move(started).value();
  ScenarioSession& session = *next->session;
  next->pelvisBody = std::max(0, session.asset().bodyForSlot(Slot::Pelvis));
  // Fast-forward, not streamed; bounded in wall time so that no setting wedges the session.
  const auto fastForwardStart = Clock::now();
  while (session.time() + 0.5 * dt < fastForwardTo && session.step()) {
    if (session.frame() % 64 == 0 && msSince(fastForwardStart) > options_.maxStartSeconds * 1e3) {
      return Error{"the re-simulation to " + std::to_string(fastForwardTo) + " s took longer than " +
                   std::to_string(static_cast<int>(options_.maxStartSeconds)) + " s (stopped at " +
                   std::to_string(session.time()) + " s): the settings are too costly for the workbench"};
    }
  }

  // The rig the page draws: this session's skeleton, bodies, joints and skin, one frame.
  Replay rig;
  rig.name = s.name;
  rig.frameRate = next->replay.frameRate;
  rig.skeleton = next->replay.skeleton;
  rig.bodies = next->replay.bodies;
  rig.joints = next->replay.joints;
  rig.capsule = next->replay.capsule;
  rig.groundHeight = next->replay.groundHeight;
  rig.staticMeshes = next->replay.staticMeshes;  // the level: static, drawn with the rig
  rig.mesh = next->replay.mesh;
  if (!next->replay.frames.empty()) rig.frames.push_back(next->replay.frames.back());
  const fs::path rigPath = options_.scratchDir / ("rig-" + std::to_string(sessionId_ + 1) + ".glb");
  if (Status w = writeReplayGlb(rig, rigPath.string()); !w) return Error{"rig: " + w.error()};

  std::error_code ec;
  if (!rigPath_.empty()) fs::remove(rigPath_, ec);
  rigPath_ = rigPath;
  session_ = std::move(next);
  ++sessionId_;
  tuning_ = tuning;
  findings_ = validateRagdoll(session.asset(), character_->skeleton);
  characterEventsSeen_ = 0;
  accumulator_ = 0.0;
  playing_ = keepPlaying;
  bumpState();
  bumpLog();
  encodeFrame(0.0, 0.0);
  return {};
}

double Workbench::lastTriggerTime() const {
  double last = -1.0;
  for (const ScenarioEvent& e : scenario().events) {
    if (e.time > 0.0) last = std::max(last, e.time);
  }
  return last;
}

Status Workbench::replayLastTrigger() {
  const double last = lastTriggerTime();
  const double from = last < 0.0 ? time() : std::max(0.0, last - options_.leadIn);
  Scenario s = base_;
  s.events = scenario().events;
  const auto started = Clock::now();
  if (Status st = startSession(s, tuning_, from, true); !st) return st;
  lastStartMs_ = msSince(started);
  return {};
}

int Workbench::advance(double wallSeconds, int maxFrames) {
  if (!playing_ || !session_ || !std::isfinite(wallSeconds) || wallSeconds <= 0.0) return 0;
  const double dt = scenario().settings.dt;
  accumulator_ = std::min(accumulator_ + wallSeconds * speed_, maxFrames * dt);
  int stepped = 0;
  while (accumulator_ >= dt && stepped < maxFrames) {
    if (!step()) break;
    accumulator_ -= dt;
    ++stepped;
  }
  return stepped;
}

bool Workbench::step() {
  if (!session_) return false;
  ScenarioSession& session = *session_->session;
  const double dt = session.scenario().settings.dt;
  if (session.time() + dt > options_.maxTime + 1e-9) {
    if (playing_)
      notices_.push_back("the session reached its longest time (" +
                         std::to_string(static_cast<int>(options_.maxTime)) +
                         " s): save it, or load again to start over");
    playing_ = false;
    bumpState();
    return false;
  }
  if (session.time() + dt > session.scenario().endTime - 1e-9) {
    if (Status st = session.setEndTime(std::min(options_.maxTime, session.scenario().endTime + 10.0)); !st) {
      notices_.push_back(st.error());
      playing_ = false;
      return false;
    }
  }
  const auto started = Clock::now();
  const double cpu = threadCpuMs();
  if (!session.step()) return false;
  encodeFrame(msSince(started), threadCpuMs() - cpu);
  return true;
}

TriggerContext Workbench::triggerContext(double time) const {
  TriggerContext ctx;
  ctx.time = time;
  const Character& ch = session_->session->character();
  ctx.worldFromRoot = ch.displayRoot();
  ctx.groundHeight = scenario().world.ground.height;
  const std::vector<ReplayFrame>& frames = session_->replay.frames;
  const size_t pelvis = static_cast<size_t>(session_->pelvisBody);
  Vec3 heading = ch.displayRoot().transformVector(asset().modelForward);
  if (!frames.empty()) {
    ctx.pelvis = frames.back().worldFromBodies[pelvis].translation;
    // Moving: along the pelvis's travel over the last 1/6 s; standing: the way it faces.
    const size_t back = std::min<size_t>(frames.size() - 1, 10);
    if (back > 0) {
      const ReplayFrame& earlier = frames[frames.size() - 1 - back];
      const Vec3 travel = ctx.pelvis - earlier.worldFromBodies[pelvis].translation;
      const double seconds = frames.back().time - earlier.time;
      if (seconds > 0.0 && glm::length(Vec3{travel.x, 0.0, travel.z}) / seconds > 0.3) heading = travel;
    }
  }
  heading.y = 0.0;
  ctx.heading = glm::length(heading) > 1e-9 ? glm::normalize(heading) : Vec3{1.0, 0.0, 0.0};
  return ctx;
}

Result<json> Workbench::command(const json& command) {
  if (!session_) return Error{"no session"};
  if (!command.is_object() || !command.contains("type") || !command["type"].is_string()) {
    return Error{"a command is {\"type\": ...}"};
  }
  const std::string type = command["type"].get<std::string>();
  if (type == "play" || type == "pause") {
    playing_ = type == "play";
    bumpState();
    return json{{"ok", true}, {"playing", playing_}};
  }
  if (type == "step") {
    playing_ = false;
    const bool stepped = step();
    bumpState();
    return json{{"ok", stepped}, {"frame", frame()}};
  }
  if (type == "speed") {
    if (!command.contains("speed") || !command["speed"].is_number()) return Error{"speed: expected a number"};
    setSpeed(command["speed"].get<double>());
    return json{{"ok", true}, {"speed", speed_}};
  }
  if (type == "replay") {
    if (Status st = replayLastTrigger(); !st) return Error{st.error()};
    return json{{"ok", true}, {"frame", frame()}};
  }
  // A trigger: an event at the next frame's end time (frame k + 1 plays from k dt to (k + 1) dt;
  // `teleport`, `clip` and `wall` apply before that step, the others right after it), exactly
  // where a file with this event would apply it.
  ScenarioSession& session = *session_->session;
  const double eventTime = (session.frame() + 1) * session.scenario().settings.dt;
  Result<ScenarioEvent> event = eventFromCommand(command, triggerContext(eventTime));
  if (!event) return Error{event.error()};
  if (const auto* partial = std::get_if<ScenarioEvent::Partial>(&event->payload)) {
    // The names checked here, one lookup each, before the scenario's validation (which suggests
    // a near name for every unknown one): the first unknown name answers.
    for (const auto& [name, weight] : partial->bodies) {
      if (character_->skeleton.findJoint(name) < 0 && !slotFromName(name)) {
        return Error{"partial: bodies." + name.substr(0, 100) +
                     ": no bone of the character or slot name such as 'chest' (" +
                     std::to_string(partial->bodies.size()) + " names given)"};
      }
    }
  }
  if (Status a = session.addEvent(*event); !a) return Error{a.error()};
  bumpLog();
  Scenario one = session.scenario();
  one.events = {*event};
  const json saved = json::parse(saveScenarioJson(one));
  return json{{"ok", true}, {"event", saved["events"][0]}, {"frame", session.frame() + 1}};
}

Result<json> Workbench::tune(const json& request) {
  if (!session_) return Error{"no session"};
  if (!request.is_object()) return Error{"tune: expected a JSON object"};
  for (const auto& [key, value] : request.items()) {
    if (key != "groups" && key != "joints" && key != "bodies" && key != "settings" && key != "recovery" &&
        key != "reset" && key != "resetSettings") {
      return Error{"tune: unknown field '" + key + "'"};
    }
  }
  try {
    const bool reset = request.value("reset", false);
    Tuning t = reset ? Tuning{} : tuning_;
    Scenario b = base_;
    if (reset || request.value("resetSettings", false)) {
      b.settings = opened_.settings;
      b.recovery = opened_.recovery;
    }
    if (const auto groups = request.find("groups"); groups != request.end()) {
      if (!groups->is_object()) return Error{"groups: expected an object"};
      for (const auto& [name, fields] : groups->items()) {
        if (!jointGroupFromName(name)) return Error{"groups." + name + ": no such joint group"};
        if (fields.is_null()) {
          t.groups.erase(name);
          continue;
        }
        if (!fields.is_object()) return Error{"groups." + name + ": expected an object"};
        for (const auto& [key, value] : fields.items()) {
          if (key != "lower" && key != "upper" && key != "stiffness" && key != "damping" &&
              key != "maxTorque") {
            return Error{"groups." + name + "." + key + ": not a tunable field"};
          }
          if (value.is_null()) {
            if (t.groups.contains(name)) t.groups[name].erase(key);
          } else {
            t.groups[name][key] = value;
          }
        }
        if (t.groups.contains(name) && t.groups[name].empty()) t.groups.erase(name);
      }
    }
    if (const auto joints = request.find("joints"); joints != request.end()) {
      if (!joints->is_object()) return Error{"joints: expected an object"};
      for (const auto& [name, fields] : joints->items()) {
        if (fields.is_null()) {
          t.joints.erase(name);
          continue;
        }
        if (!fields.is_object()) return Error{"joints." + name + ": expected an object of fields or null"};
        JointEdit& e = t.joints[name];
        for (const auto& [key, value] : fields.items()) {
          const std::string path = "joints." + name + "." + key;
          if (key == "lower" || key == "upper") {
            std::optional<Vec3>& field = key == "lower" ? e.lower : e.upper;
            if (value.is_null()) {
              field.reset();
            } else {
              if (!value.is_array() || value.size() != 3 ||
                  !std::all_of(value.begin(), value.end(), [](const json& v) { return v.is_number(); })) {
                return Error{path + ": expected [x, y, z] rad"};
              }
              field = Vec3{value[0].get<double>(), value[1].get<double>(), value[2].get<double>()};
            }
          } else if (key == "stiffness" || key == "damping" || key == "maxTorque") {
            std::optional<double>& field = key == "stiffness" ? e.stiffness
                                           : key == "damping" ? e.damping
                                                              : e.maxTorque;
            if (value.is_null()) {
              field.reset();
            } else {
              if (!value.is_number()) return Error{path + ": expected a number"};
              field = value.get<double>();
            }
          } else {
            return Error{path + ": not a tunable field"};
          }
        }
        if (!e.lower && !e.upper && !e.stiffness && !e.damping && !e.maxTorque) t.joints.erase(name);
      }
    }
    if (const auto bodies = request.find("bodies"); bodies != request.end()) {
      if (!bodies->is_object()) return Error{"bodies: expected an object"};
      for (const auto& [name, fields] : bodies->items()) {
        if (fields.is_null()) {
          t.bodies.erase(name);
          continue;
        }
        if (!fields.is_object()) return Error{"bodies." + name + ": expected an object of fields or null"};
        BodyEdit& e = t.bodies[name];
        for (const auto& [key, value] : fields.items()) {
          const std::string path = "bodies." + name + "." + key;
          if (key != "mass" && key != "radius") return Error{path + ": not a tunable field"};
          std::optional<double>& field = key == "mass" ? e.mass : e.radius;
          if (value.is_null()) {
            field.reset();
          } else {
            if (!value.is_number()) return Error{path + ": expected a number"};
            field = value.get<double>();
          }
        }
        if (!e.mass && !e.radius) t.bodies.erase(name);
      }
    }
    if (request.contains("settings") || request.contains("recovery")) {
      // Through the scenario loader: its ranges and messages.
      json j = json::parse(saveScenarioJson(b));
      for (const char* section : {"settings", "recovery"}) {
        if (!request.contains(section)) continue;
        if (!request[section].is_object()) return Error{std::string(section) + ": expected an object"};
        j[section].merge_patch(request[section]);
      }
      Result<Scenario> loaded = loadScenarioJson(j.dump(), "tuning");
      if (!loaded) return Error{loaded.error()};
      // The loader takes any dt in (0, 0.1]; the workbench re-simulates and plays in real time, so
      // a step far smaller would wedge the session (1e-9 s: 1e9 steps a second of play).
      if (loaded->settings.dt < kMinDt) {
        return Error{"settings.dt: " + std::to_string(loaded->settings.dt) + " s is below the workbench's " +
                     std::to_string(kMinDt) + " s (range [0.001, 0.1])"};
      }
      loaded->sourceName = b.sourceName;
      loaded->baseDir = b.baseDir;
      b = std::move(loaded).value();
    }
    const double last = lastTriggerTime();
    const double from = last < 0.0 ? time() : std::max(0.0, last - options_.leadIn);
    Scenario s = b;
    s.events = scenario().events;
    const auto started = Clock::now();
    if (Status st = startSession(s, t, from, true); !st) return Error{st.error()};
    lastStartMs_ = msSince(started);
    base_ = std::move(b);
    json findings = json::array();
    for (const Finding& f : findings_) findings.push_back(findingJson(f));
    return json{{"ok", true}, {"from", time()}, {"ms", lastStartMs_}, {"findings", findings}};
  } catch (const json::exception& e) {
    return Error{std::string("tune: ") + e.what()};
  }
}

namespace {
/// A name for files in the output folder: letters, digits, '-' and '_' (others dropped), at most 64.
Result<std::string> outputName(const std::string& requested, const char* what) {
  std::string name;
  for (char c : requested.substr(0, 64)) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') name += c;
  }
  if (name.empty()) return Error{std::string(what) + ": a name of letters, digits, '-' and '_' is needed"};
  return name;
}
}  // namespace

Result<Scenario> Workbench::scenarioSoFar() {
  ScenarioSession& session = *session_->session;
  // An event added for the next frame is played first, so the scenario ends after it.
  double last = 0.0;
  for (const ScenarioEvent& e : session.scenario().events) last = std::max(last, e.time);
  while (session.time() + 1e-9 < last && step()) {
  }
  if (session.frame() == 0) return Error{"play at least one frame first"};
  Scenario s = session.scenario();
  s.endTime = session.time();
  return s;
}

std::vector<std::string> Workbench::existingOutputs(const std::string& requested, bool replay) const {
  std::vector<std::string> found;
  Result<std::string> name = outputName(requested, "save");
  if (!name) return found;
  std::vector<std::string> files;
  if (replay) {
    files = {*name + ".glb"};
  } else {
    files = {*name + ".json", *name + ".asset.json"};
    if (uploaded_) files.push_back(*name + ".character" + fs::path(characterPath_).extension().string());
  }
  for (const std::string& f : files) {
    std::error_code ec;
    if (fs::exists(fs::symlink_status(options_.outDir / f, ec))) found.push_back(f);
  }
  return found;
}

Result<json> Workbench::save(const std::string& requested, bool overwrite) {
  if (!session_) return Error{"no session"};
  Result<std::string> name = outputName(requested, "save");
  if (!name) return Error{name.error()};
  Result<Scenario> sofar = scenarioSoFar();
  if (!sofar) return Error{"save: " + sofar.error()};
  std::error_code ec;
  fs::create_directories(options_.outDir, ec);
  if (ec) return Error{"save: cannot create " + options_.outDir.string() + ": " + ec.message()};
  ScenarioSession& session = *session_->session;
  Scenario s = std::move(sofar).value();
  s.name = *name;
  s.ragdoll.asset = *name + ".asset.json";
  s.ragdoll.build = ScenarioBuild{};
  s.ragdoll.totalMass = ScenarioRagdoll{}.totalMass;
  for (const std::string& f : existingOutputs(*name, false)) {
    std::error_code link;
    if (!overwrite) return Error{"save: '" + f + "' exists (save again with overwrite to replace it)"};
    if (fs::is_symlink(options_.outDir / f, link)) return Error{"save: '" + f + "' is a symlink: refused"};
  }
  json written = json::object();
  if (uploaded_) {
    // The upload goes next to the scenario (the temporary folder does not outlive the server).
    const fs::path from(characterPath_);
    const std::string copy = *name + ".character" + from.extension().string();
    std::ifstream in(from, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    if (!in) return Error{"save: cannot read the uploaded character"};
    if (Status w = writeOutputFile(options_.outDir / copy, bytes.str(), overwrite); !w)
      return Error{"save: " + w.error()};
    s.character.file = copy;
    written["character"] = (options_.outDir / copy).string();
  }
  const fs::path assetPath = options_.outDir / (*name + ".asset.json");
  const fs::path scenarioPath = options_.outDir / (*name + ".json");
  if (Status w = writeOutputFile(assetPath, saveRagdollJson(session.asset()), overwrite); !w)
    return Error{"save: " + w.error()};
  if (Status w = writeOutputFile(scenarioPath, saveScenarioJson(s), overwrite); !w)
    return Error{"save: " + w.error()};
  written["scenario"] = scenarioPath.string();
  written["asset"] = assetPath.string();
  written["frames"] = session.frame();
  written["endTime"] = s.endTime;
  written["events"] = s.events.size();
  written["run"] = "handoff run " + scenarioPath.string();
  return written;
}

Result<std::string> Workbench::exportReplay(const std::string& requested, bool overwrite) {
  if (!session_) return Error{"no session"};
  Result<std::string> name = outputName(requested, "export");
  if (!name) return Error{name.error()};
  Result<Scenario> sofar = scenarioSoFar();
  if (!sofar) return Error{"export: " + sofar.error()};
  // The session so far played again to its end and finished: the replay with its events and the
  // boxes placed (the same frames: the session is deterministic).
  Replay replay;
  Result<std::unique_ptr<ScenarioSession>> again =
      ScenarioSession::start(*runner_, *sofar, sofar->settings.handoff.mode, &replay);
  if (!again) return Error{"export: " + again.error()};
  while ((*again)->step()) {
  }
  (*again)->finish();
  replay.name = *name;
  std::error_code ec;
  fs::create_directories(options_.outDir, ec);
  // Written in the scratch folder, then copied out as save() writes (no symlink followed).
  const fs::path draft = options_.scratchDir / "export.glb";
  if (Status w = writeReplayGlb(replay, draft.string()); !w) return Error{"export: " + w.error()};
  std::ifstream in(draft, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  in.close();
  fs::remove(draft, ec);
  const fs::path path = options_.outDir / (*name + ".glb");
  if (Status w = writeOutputFile(path, bytes.str(), overwrite); !w) return Error{"export: " + w.error()};
  return path.string();
}

std::string Workbench::metrics() const {
  if (!session_) return "{}";
  return resultJson(session_->session->snapshot());
}

void Workbench::encodeFrame(double stepMs, double stepCpuMs) {
  const auto started = Clock::now();
  const double cpu = threadCpuMs();
  const ScenarioSession& session = *session_->session;
  const std::vector<ReplayFrame>& frames = session_->replay.frames;
  if (frames.empty()) return;
  const ReplayFrame& f = frames.back();
  const RagdollAsset& a = session.asset();
  std::string& out = frameText_;
  out.clear();
  out.reserve(4096);
  out += "{\"f\":" + std::to_string(session.frame()) + ",\"t\":";
  appendNumber(out, f.time);
  out += ",\"sid\":" + std::to_string(sessionId_) + ",\"state\":\"" + f.state + "\",\"root\":[";
  appendTransform(out, f.worldFromRoot);
  out += "],\"locals\":[";
  for (size_t i = 0; i < f.locals.size(); ++i) {
    if (i) out += ',';
    appendTransform(out, f.locals[i]);
  }
  out += "],\"bodies\":[";
  for (size_t i = 0; i < f.worldFromBodies.size(); ++i) {
    if (i) out += ',';
    appendTransform(out, f.worldFromBodies[i]);
  }
  out += "],\"auth\":[";
  for (size_t i = 0; i < f.authority.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(f.authority[i]);
  }
  out += "],\"capsule\":{\"on\":";
  out += f.capsuleEnabled ? "true" : "false";
  out += ",\"pose\":[";
  appendTransform(out, f.worldFromCapsule);
  out += "]},\"contacts\":[";
  for (size_t i = 0; i < f.contacts.size(); ++i) {
    if (i) out += ',';
    for (int k = 0; k < 3; ++k) {
      if (k) out += ',';
      appendNumber(out, f.contacts[i][k]);
    }
  }
  // Joint angles (handoff::jointAngles of qRel from the two body frames): where each joint is
  // inside its limits.
  out += "],\"angles\":[";
  for (size_t j = 0; j < a.joints.size(); ++j) {
    const JointDef& def = a.joints[j];
    const Quat qA =
        f.worldFromBodies[static_cast<size_t>(def.parentBody)].rotation * def.bodyAFromJoint.rotation;
    const Quat qB =
        f.worldFromBodies[static_cast<size_t>(def.childBody)].rotation * def.bodyBFromJoint.rotation;
    const Vec3 angles = jointAngles(glm::conjugate(qA) * qB);
    for (int k = 0; k < 3; ++k) {
      if (j || k) out += ',';
      appendNumber(out, angles[k]);
    }
  }
  const ReplayFigures& g = f.figures;
  out += "],\"figures\":{\"pelvisHeight\":";
  appendNumber(out, g.pelvisHeight);
  out += ",\"pelvisSpeed\":";
  appendNumber(out, g.pelvisSpeed);
  out += ",\"maxJointStretch\":";
  appendNumber(out, g.maxJointStretch);
  out += ",\"settleWindow\":";
  appendNumber(out, g.settleWindow);
  out += ",\"blendWeight\":";
  appendNumber(out, g.blendWeight);
  out += ",\"driveWeight\":";
  appendNumber(out, g.driveWeight);
  out += ",\"contactPoints\":" + std::to_string(g.contactPoints);
  out += ",\"activeBodies\":" + std::to_string(g.activeBodies);
  out += "},\"playing\":";
  out += playing_ ? "true" : "false";
  out += ",\"speed\":";
  appendNumber(out, speed_);

  if (session.frame() % std::max(1, options_.checksEvery) == 0) {
    checksText_ = checksJson(session.snapshot()).dump();
    timingText_ = timingJson().dump();
  }
  out += ",\"checks\":" + checksText_;
  out += ",\"timing\":" + timingText_;
  if (session.character().events().total() != characterEventsSeen_) {
    characterEventsSeen_ = session.character().events().total();
    bumpLog();
  }
  const double ms = stepMs + msSince(started);
  const double cpuMs = stepCpuMs + threadCpuMs() - cpu;
  out += ",\"ms\":";
  appendNumber(out, ms);
  out += ",\"cpuMs\":";
  appendNumber(out, cpuMs);
  out += "}";
  lastMs_ = ms;
  lastCpuMs_ = cpuMs;
  frameMs_[frameMsNext_ % frameMs_.size()] = ms;
  frameCpuMs_[frameMsNext_++ % frameCpuMs_.size()] = cpuMs;
  ++frameSerial_;
}

Workbench::Timing Workbench::timing() const { return {timeStats(frameMs_), timeStats(frameCpuMs_)}; }

json Workbench::timingJson() const {
  const Timing t = timing();
  return {{"meanMs", t.wall.mean},   {"p95Ms", t.wall.p95},    {"maxMs", t.wall.max},
          {"cpuMeanMs", t.cpu.mean}, {"cpuP95Ms", t.cpu.p95},  {"cpuMaxMs", t.cpu.max},
          {"frames", t.wall.count},  {"startMs", lastStartMs_}};
}

std::vector<std::string> Workbench::takeNotices() {
  std::vector<std::string> out;
  out.swap(notices_);
  return out;
}

}  // namespace handoff::live
