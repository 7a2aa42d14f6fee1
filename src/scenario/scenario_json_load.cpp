// Scenario JSON, reading: a strict loader (every problem named by file and position or JSON path).
// docs/SCENARIOS.md is the format's reference; the saver is scenario_json_write.cpp.
//
// Parsing goes through nlohmann's SAX interface with our own DOM builder, so that the JSON path
// is known at every syntax error, number overflow (1e999) and duplicate key; the DOM is then
// read field by field with the allowed keys of each object checked up front.
#include "scenario/scenario_json_read.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace handoff::scenario_json {

namespace {

constexpr std::size_t kMaxDepth = 64;

// ---------------------------------------------------------------------------------------------
// Parsing: a DOM builder over nlohmann's SAX events that knows the JSON path at every event.
// ---------------------------------------------------------------------------------------------

class DomBuilder final : public nlohmann::json_sax<json> {
 public:
  json root;
  std::string errorPath;     ///< JSON path of the failure.
  std::string errorMessage;  ///< What went wrong.
  bool hasPosition = false;  ///< errorPosition is meaningful (a syntax error or overflow).
  std::size_t errorPosition = 0;

  bool null() override { return add(json(nullptr)); }
  bool boolean(bool value) override { return add(json(value)); }
  bool number_integer(json::number_integer_t value) override { return add(json(value)); }
  bool number_unsigned(json::number_unsigned_t value) override { return add(json(value)); }
  bool number_float(json::number_float_t value, const json::string_t& /*text*/) override {
    if (!std::isfinite(value)) return fail("number is not finite");
    return add(json(value));
  }
  bool string(json::string_t& value) override { return add(json(std::move(value))); }
  bool binary(json::binary_t& /*value*/) override { return fail("binary values are not JSON"); }
  bool start_object(std::size_t /*elements*/) override { return open(json::object(), false); }
  bool key(json::string_t& key) override {
    Frame& frame = frames_.back();
    if (frame.container->contains(key)) return fail("duplicate key '" + key + "'");
    frame.key = std::move(key);
    frame.keyPending = true;
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t /*elements*/) override { return open(json::array(), true); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t position, const std::string& lastToken,
                   const nlohmann::json::exception& error) override {
    errorPath = path();
    errorMessage = cleanMessage(error.what());
    hasPosition = true;
    errorPosition = position;
    // A number overflow is reported at the number's last character: point at its first.
    constexpr int kNumberOverflow = 406;
    if (error.id == kNumberOverflow && !lastToken.empty() && position >= lastToken.size()) {
      errorPosition = position - lastToken.size() + 1;
    }
    return false;
  }

 private:
  struct Frame {
    json* container = nullptr;
    bool array = false;
    std::size_t count = 0;    // elements so far (arrays)
    std::size_t current = 0;  // index of the element being built (arrays)
    std::string key;          // key of the value being built (objects)
    bool keyPending = false;  // a key was read and its value is not complete yet
  };

  // nlohmann's messages start with "[json.exception.parse_error.101] parse error at line 1,
  // column 5: "; we give file:line:column ourselves.
  static std::string cleanMessage(std::string message) {
    if (!message.empty() && message.front() == '[') {
      const std::size_t end = message.find("] ");
      if (end != std::string::npos) message.erase(0, end + 2);
    }
    if (message.rfind("parse error", 0) == 0) {
      const std::size_t colon = message.find(": ");
      if (colon != std::string::npos) message.erase(0, colon + 2);
    }
    return message;
  }

  std::string path() const {
    std::string result;
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      const Frame& frame = frames_[i];
      const bool top = i + 1 == frames_.size();
      if (frame.array) {
        result = indexPath(result, top ? frame.count : frame.current);
      } else if (!top || frame.keyPending) {
        result = childPath(result, frame.key);
      }
    }
    return result;
  }

  bool fail(std::string message) {
    errorPath = path();
    errorMessage = std::move(message);
    return false;
  }

  json* insert(json&& value) {
    if (frames_.empty()) {
      root = std::move(value);
      return &root;
    }
    Frame& frame = frames_.back();
    if (frame.array) {
      frame.current = frame.count++;
      frame.container->push_back(std::move(value));
      return &frame.container->back();
    }
    json& slot = (*frame.container)[frame.key];
    slot = std::move(value);
    return &slot;
  }
  void valueDone() {
    if (!frames_.empty() && !frames_.back().array) frames_.back().keyPending = false;
  }
  bool add(json&& value) {
    insert(std::move(value));
    valueDone();
    return true;
  }
  bool open(json&& container, bool array) {
    if (frames_.size() >= kMaxDepth)
      return fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    json* inserted = insert(std::move(container));
    Frame frame;
    frame.container = inserted;
    frame.array = array;
    frames_.push_back(std::move(frame));
    return true;
  }
  bool close() {
    frames_.pop_back();
    valueDone();
    return true;
  }

  std::vector<Frame> frames_;
};

/// 1-based line and column of the character at 1-based `position` (nlohmann's byte count).
std::pair<std::size_t, std::size_t> lineColumn(const std::string& text, std::size_t position) {
  const std::size_t offset = std::min(position > 0 ? position - 1 : 0, text.size());
  std::size_t line = 1;
  std::size_t lineStart = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      lineStart = i + 1;
    }
  }
  return {line, offset - lineStart + 1};
}

std::string stemOf(const std::string& sourceName) {
  return std::filesystem::path(sourceName).stem().string();
}

Scenario readScenario(const Reader& r, const json& root, const std::string& sourceName) {
  if (!root.is_object()) r.fail("", "expected a JSON object at the top level, got " + describe(root));
  r.checkKeys(root, "",
              {"version", "name", "description", "character", "ragdoll", "clip", "root", "world", "settings",
               "recovery", "lookAt", "props", "events", "endTime", "expectations"});
  Scenario s;
  s.sourceName = sourceName;
  s.baseDir = std::filesystem::path(sourceName).parent_path().string();
  s.version = r.integer(root, "", "version", kScenarioVersion, 1, 1000000);
  if (s.version > kScenarioVersion) {
    r.fail("version", std::to_string(s.version) + " is newer than this build reads (" +
                          std::to_string(kScenarioVersion) + ")");
  }
  s.name = r.string(root, "", "name", stemOf(sourceName));
  s.description = r.string(root, "", "description", "");

  const json* character = Reader::find(root, "character");
  if (!character) r.fail("character", "missing (required: at least character.file)");
  s.character = readCharacter(r, *character, "character");
  if (const json* v = Reader::find(root, "ragdoll")) s.ragdoll = readRagdoll(r, *v, "ragdoll");
  if (const json* v = Reader::find(root, "clip")) s.clip = readClip(r, *v, "clip", true);
  if (const json* v = Reader::find(root, "root")) s.root = readRoot(r, *v, "root");
  if (const json* v = Reader::find(root, "world")) s.world = readWorld(r, *v, "world");
  if (const json* v = Reader::find(root, "settings")) s.settings = readSettings(r, *v, "settings");
  if (const json* v = Reader::find(root, "recovery")) s.recovery = readRecovery(r, *v, "recovery");
  if (const json* v = Reader::find(root, "lookAt")) s.lookAt = readLookAt(r, *v, "lookAt");
  if (const json* props = Reader::find(root, "props")) {
    r.expectArray(*props, "props");
    r.checkCount(*props, "props", kScenarioMaxProps, "kScenarioMaxProps");
    for (std::size_t i = 0; i < props->size(); ++i) {
      const std::string at = indexPath("props", i);
      ScenarioProp prop = readProp(r, (*props)[i], at);
      for (std::size_t k = 0; k < s.props.size(); ++k) {
        if (s.props[k].name == prop.name) {
          r.fail(childPath(at, "name"),
                 "'" + prop.name + "' is already the name of " + indexPath("props", k));
        }
      }
      s.props.push_back(std::move(prop));
    }
  }

  std::optional<std::size_t> endEvent;
  if (const json* events = Reader::find(root, "events")) {
    r.expectArray(*events, "events");
    r.checkCount(*events, "events", kScenarioMaxEvents, "kScenarioMaxEvents");
    for (std::size_t i = 0; i < events->size(); ++i) {
      const std::string path = indexPath("events", i);
      ScenarioEvent event = readEvent(r, (*events)[i], path);
      if (endEvent) {
        r.fail(path, "comes after the 'end' event (" + indexPath("events", *endEvent) +
                         "); 'end' must be the last event");
      }
      if (!s.events.empty() && event.time < s.events.back().time) {
        r.fail(childPath(path, "time"), scenario_detail::formatNumber(event.time) + " s is before " +
                                            indexPath("events", i - 1) + ".time (" +
                                            scenario_detail::formatNumber(s.events.back().time) +
                                            " s): events must be in time order");
      }
      if (event.type() == EventType::End) endEvent = i;
      const std::string* prop = nullptr;
      if (const auto* g = std::get_if<ScenarioEvent::Grab>(&event.payload)) prop = &g->prop;
      if (const auto* d = std::get_if<ScenarioEvent::Drop>(&event.payload)) prop = &d->prop;
      if (prop && std::none_of(s.props.begin(), s.props.end(),
                               [&](const ScenarioProp& p) { return p.name == *prop; })) {
        std::vector<std::string> names;
        for (const ScenarioProp& p : s.props) names.push_back(p.name);
        r.fail(childPath(path, "prop"), "no prop named '" + *prop + "' in props" + didYouMean(*prop, names));
      }
      s.events.push_back(std::move(event));
    }
  }

  if (const json* endTime = Reader::find(root, "endTime")) {
    s.endTime = r.toNumber(*endTime, "endTime", Range{0.0, kScenarioMaxTime, true, false});
    if (endEvent && s.events[*endEvent].time != s.endTime) {
      r.fail("endTime", scenario_detail::formatNumber(s.endTime) + " s differs from the 'end' event (" +
                            indexPath("events", *endEvent) +
                            ".time = " + scenario_detail::formatNumber(s.events[*endEvent].time) + " s)");
    }
  } else if (endEvent) {
    s.endTime = s.events[*endEvent].time;
    if (s.endTime <= 0.0)
      r.fail(indexPath("events", *endEvent) + ".time", "the 'end' event must be after t = 0");
  } else {
    r.fail("endTime", "missing (required unless the events finish with an 'end' event)");
  }
  // What the run will play (the session's own count) and record.
  const double frames = std::round(s.endTime / s.settings.dt);
  if (frames > static_cast<double>(kScenarioMaxFrames)) {
    r.fail("endTime", scenario_detail::formatNumber(s.endTime) + " s at settings.dt " +
                          scenario_detail::formatNumber(s.settings.dt) + " s is " +
                          scenario_detail::formatNumber(frames) + " frames; at most " +
                          std::to_string(kScenarioMaxFrames) + " (kScenarioMaxFrames)");
  }
  if (!s.events.empty() && s.events.back().time > s.endTime) {
    r.fail("endTime", scenario_detail::formatNumber(s.endTime) + " s is before the last event (" +
                          indexPath("events", s.events.size() - 1) +
                          ".time = " + scenario_detail::formatNumber(s.events.back().time) + " s)");
  }

  if (const json* expectations = Reader::find(root, "expectations")) {
    r.expectObject(*expectations, "expectations");
    r.checkCount(*expectations, "expectations", kScenarioMaxNames, "kScenarioMaxNames");
    for (auto it = expectations->begin(); it != expectations->end(); ++it) {
      if (it.key().empty()) r.fail("expectations", "empty name");
      s.expectations[it.key()] = r.toNumber(it.value(), childPath("expectations", it.key()), kAny);
    }
  }
  return s;
}

std::string tooLarge(const std::string& sourceName, std::uintmax_t bytes) {
  return sourceName + ": " + std::to_string(bytes) + " bytes; a scenario may be at most " +
         std::to_string(kScenarioMaxBytes) + " bytes (kScenarioMaxBytes)";
}

Result<Scenario> loadScenarioJsonUnchecked(const std::string& text, const std::string& sourceName) {
  try {
    if (text.size() > kScenarioMaxBytes) return Error{tooLarge(sourceName, text.size())};
    if (std::all_of(text.begin(), text.end(),
                    [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; })) {
      return Error{sourceName + ": empty file (expected a JSON object)"};
    }
    DomBuilder builder;
    const bool parsed = json::sax_parse(text, &builder, json::input_format_t::json, true, false);
    if (!parsed) {
      std::string message = sourceName;
      if (builder.hasPosition) {
        const auto [line, column] = lineColumn(text, builder.errorPosition);
        message += ":" + std::to_string(line) + ":" + std::to_string(column);
      }
      message += ": ";
      if (!builder.errorPath.empty()) message += builder.errorPath + ": ";
      message += builder.errorMessage.empty() ? "malformed JSON" : builder.errorMessage;
      return Error{message};
    }
    const Reader reader(sourceName);
    return readScenario(reader, builder.root, sourceName);
  } catch (const LoadError& error) {
    return Error{error.message};
  } catch (const std::exception& error) {
    return Error{sourceName + ": " + error.what()};
  } catch (...) {
    return Error{sourceName + ": unknown error while reading the scenario"};
  }
}

}  // namespace

}  // namespace handoff::scenario_json

namespace handoff {

Result<Scenario> loadScenarioJson(const std::string& text, const std::string& sourceName) {
  Result<Scenario> result = scenario_json::loadScenarioJsonUnchecked(text, sourceName);
  if (!result) return Error{scenario_detail::validUtf8(result.error())};
  return result;
}

Result<Scenario> loadScenarioFile(const std::string& path) {
  // Refused by its size before reading; a file that is not regular (a FIFO, a device) is read
  // only up to the bound.
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kScenarioMaxBytes) return Error{scenario_json::tooLarge(path, size)};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{path + ": cannot open the scenario file"};
  std::string text(kScenarioMaxBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return Error{path + ": cannot read the scenario file"};
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kScenarioMaxBytes) return Error{scenario_json::tooLarge(path, text.size())};
  return loadScenarioJson(text, path);
}

}  // namespace handoff
