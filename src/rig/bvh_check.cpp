#include "rig/bvh_check.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <system_error>
#include <unordered_map>
#include <utility>

namespace handoff::detail {
namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

struct Token {
  std::string_view text;  ///< Empty at the end of the text.
  int line = 0;
};

/// Whitespace-separated tokens with line numbers; '{' and '}' are always tokens of their own.
class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Token next() {
    skipSpace();
    Token token{{}, line_};
    if (pos_ >= text_.size()) return token;
    const size_t start = pos_;
    if (text_[pos_] == '{' || text_[pos_] == '}') {
      ++pos_;
    } else {
      while (pos_ < text_.size() && !isSpace(text_[pos_]) && text_[pos_] != '{' && text_[pos_] != '}') ++pos_;
    }
    token.text = text_.substr(start, pos_ - start);
    return token;
  }

  /// True when the current line has no further token.
  bool lineRestEmpty() const {
    for (size_t p = pos_; p < text_.size() && text_[p] != '\n'; ++p) {
      if (!isSpace(text_[p])) return false;
    }
    return true;
  }

  /// Skips to the start of the next line (after the current line's '\n').
  void skipToNextLine() {
    while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    if (pos_ < text_.size()) {
      ++pos_;
      ++line_;
    }
  }

  /// Returns the current line (without its '\n') and moves past it; nullopt at the end.
  std::optional<std::string_view> takeLine() {
    if (pos_ >= text_.size()) return std::nullopt;
    const size_t end = text_.find('\n', pos_);
    const size_t stop = end == std::string_view::npos ? text_.size() : end;
    std::string_view lineText = text_.substr(pos_, stop - pos_);
    pos_ = end == std::string_view::npos ? text_.size() : end + 1;
    ++line_;
    return lineText;
  }

  int line() const { return line_; }

 private:
  void skipSpace() {
    while (pos_ < text_.size() && isSpace(text_[pos_])) {
      if (text_[pos_] == '\n') ++line_;
      ++pos_;
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
};

/// A number as strtod reads it, but locale independent, fully consumed and finite.
bool parseNumber(std::string_view text, double& value) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::general);
  return ec == std::errc{} && ptr == end && std::isfinite(value);
}

bool parseCount(std::string_view text, int& value) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc{} && ptr == end && value >= 0;
}

std::optional<BvhChannel> channelFromName(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, BvhChannel>, 6> kNames{{
      {"Xposition", BvhChannel::PositionX},
      {"Yposition", BvhChannel::PositionY},
      {"Zposition", BvhChannel::PositionZ},
      {"Xrotation", BvhChannel::RotationX},
      {"Yrotation", BvhChannel::RotationY},
      {"Zrotation", BvhChannel::RotationZ},
  }};
  for (const auto& [text, channel] : kNames) {
    if (text == name) return channel;
  }
  return std::nullopt;
}

std::string_view channelName(BvhChannel channel) {
  switch (channel) {
    case BvhChannel::PositionX:
      return "Xposition";
    case BvhChannel::PositionY:
      return "Yposition";
    case BvhChannel::PositionZ:
      return "Zposition";
    case BvhChannel::RotationX:
      return "Xrotation";
    case BvhChannel::RotationY:
      return "Yrotation";
    case BvhChannel::RotationZ:
      return "Zrotation";
  }
  return "?";
}

std::string quoted(std::string_view text) {
  if (text.empty()) return "end of file";
  constexpr size_t kMax = 40;
  // Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict inside
  // `"'" + std::string(...)` (operator+(const char*, string&&) inlined).
  const bool cut = text.size() > kMax;
  std::string out = "'";
  out.append(cut ? text.substr(0, kMax) : text);
  out.append(cut ? "...'" : "'");
  return out;
}

/// Joint nesting the parser follows (ROOT is level 1): a deeper chain is refused, not parsed
/// recursively into a stack overflow. Human rigs nest about 10 levels, a hand's fingers 15.
constexpr int kMaxBvhDepth = 256;
/// "Frame Time:" accepted: 10 kHz capture to one frame a minute. [s]
constexpr double kMinFrameTime = 1e-4;
constexpr double kMaxFrameTime = 60.0;

/// Thrown inside the parser only, turned into an Error by checkBvh (never crosses the API).
struct ParseFailure {
  int line;
  std::string reason;
};

class Parser {
 public:
  Parser(std::string_view text, BvhData& data) : lexer_(text), data_(data), textSize_(text.size()) {}

  void parse() {
    const Token header = lexer_.next();
    if (header.text.empty()) fail(header.line, "empty file, expected HIERARCHY");
    if (header.text != "HIERARCHY") fail(header.line, "expected HIERARCHY, found " + quoted(header.text));
    const Token root = lexer_.next();
    if (root.text != "ROOT") fail(root.line, "expected ROOT, found " + quoted(root.text));
    parseJoint(-1, root.line, "ROOT", 1);

    const Token motion = lexer_.next();
    if (motion.text == "}") fail(motion.line, "unbalanced braces: '}' closes no joint");
    if (motion.text == "ROOT") fail(motion.line, "a second ROOT: only one root hierarchy is supported");
    if (motion.text != "MOTION") fail(motion.line, "expected MOTION, found " + quoted(motion.text));
    data_.motionLine = motion.line;
    parseMotion();
  }

 private:
  [[noreturn]] static void fail(int line, std::string reason) { throw ParseFailure{line, std::move(reason)}; }

  double number(const char* what) {
    const Token token = lexer_.next();
    double value = 0.0;
    if (!parseNumber(token.text, value)) {
      fail(token.line, std::string("expected a number (") + what + "), found " + quoted(token.text));
    }
    return value;
  }

  Vec3 offset(const std::string& owner) {
    const std::string what = "OFFSET of " + owner;
    const double x = number(what.c_str());
    const double y = number(what.c_str());
    const double z = number(what.c_str());
    return Vec3{x, y, z};
  }

  void parseJoint(int parent, int keywordLine, const char* keyword, int depth) {
    if (depth > kMaxBvhDepth) {
      fail(keywordLine, "joints nested deeper than " + std::to_string(kMaxBvhDepth) + " levels");
    }
    const Token name = lexer_.next();
    if (name.text.empty() || name.text == "{" || name.text == "}") {
      fail(name.line, std::string("expected a joint name after ") + keyword + ", found " + quoted(name.text));
    }
    const Token open = lexer_.next();
    if (open.text != "{") {
      fail(open.line, "expected '{' after joint name '" + std::string(name.text) + "', found " +
                          quoted(open.text) + " (joint names cannot contain spaces)");
    }
    const std::string jointName(name.text);
    if (const auto it = lineOfName_.find(jointName); it != lineOfName_.end()) {
      fail(name.line,
           "joint name '" + jointName + "' is used twice (first on line " + std::to_string(it->second) + ")");
    }
    lineOfName_.emplace(jointName, name.line);

    const int index = static_cast<int>(data_.joints.size());
    {
      BvhJoint joint;
      joint.name = jointName;
      joint.parent = parent;
      joint.line = keywordLine;
      data_.joints.push_back(std::move(joint));
    }
    bool sawOffset = false;
    bool sawChannels = false;
    bool sawChildJoint = false;
    const std::string owner = "joint '" + jointName + "'";
    for (;;) {
      const Token token = lexer_.next();
      if (token.text == "OFFSET") {
        if (sawOffset) fail(token.line, "second OFFSET in " + owner);
        sawOffset = true;
        const Vec3 value = offset(owner);
        data_.joints[static_cast<size_t>(index)].offset = value;
      } else if (token.text == "CHANNELS") {
        if (sawChannels) fail(token.line, "second CHANNELS in " + owner);
        sawChannels = true;
        parseChannels(index, token.line);
      } else if (token.text == "JOINT") {
        sawChildJoint = true;
        parseJoint(index, token.line, "JOINT", depth + 1);
      } else if (token.text == "End") {
        const Token site = lexer_.next();
        if (site.text != "Site") fail(site.line, "expected 'End Site', found 'End' " + quoted(site.text));
        if (data_.joints[static_cast<size_t>(index)].hasEndSite) {
          fail(token.line, "second End Site in " + owner);
        }
        const Vec3 value = parseEndSite(jointName);
        data_.joints[static_cast<size_t>(index)].hasEndSite = true;
        data_.joints[static_cast<size_t>(index)].endSiteOffset = value;
      } else if (token.text == "}") {
        break;
      } else if (token.text.empty() || token.text == "MOTION") {
        fail(token.line, "unbalanced braces: " + quoted(token.text) + " inside " + owner +
                             " opened on line " + std::to_string(keywordLine) + " (missing '}')");
      } else if (token.text == "ROOT") {
        fail(token.line, "ROOT inside " + owner + ": only one root hierarchy is supported");
      } else {
        fail(token.line, "unknown keyword " + quoted(token.text) + " in " + owner);
      }
    }
    if (!sawOffset) fail(keywordLine, owner + " has no OFFSET");
    if (!sawChannels) fail(keywordLine, owner + " has no CHANNELS line");
    if (sawChildJoint && data_.joints[static_cast<size_t>(index)].hasEndSite) {
      data_.warnings.push_back(owner + " (line " + std::to_string(keywordLine) +
                               ") has both child joints and an End Site; the End Site is ignored");
      data_.joints[static_cast<size_t>(index)].hasEndSite = false;
      data_.joints[static_cast<size_t>(index)].endSiteOffset = Vec3{0.0};
    }
  }

  void parseChannels(int index, int line) {
    BvhJoint& joint = data_.joints[static_cast<size_t>(index)];
    const Token countToken = lexer_.next();
    int count = 0;
    if (countToken.line != line || !parseCount(countToken.text, count)) {
      fail(line, "expected a channel count after CHANNELS in joint '" + joint.name + "', found " +
                     quoted(countToken.line != line ? std::string_view{} : countToken.text));
    }
    if (count > 6) {
      fail(line, "CHANNELS " + std::to_string(count) + " in joint '" + joint.name +
                     ": at most 6 channels (3 positions, 3 rotations) are supported");
    }
    // The channel names must follow on the same line: a count that disagrees with the list is
    // reported as such instead of eating the next keyword as a channel name.
    std::vector<Token> names;
    while (!lexer_.lineRestEmpty()) names.push_back(lexer_.next());
    if (static_cast<int>(names.size()) != count) {
      fail(line, "CHANNELS declares " + std::to_string(count) + " channels for joint '" + joint.name +
                     "' but the line lists " + std::to_string(names.size()));
    }
    for (const Token& name : names) {
      const std::optional<BvhChannel> channel = channelFromName(name.text);
      if (!channel) {
        fail(line, "unknown channel name " + quoted(name.text) + " in joint '" + joint.name +
                       "' (expected Xposition, Yposition, Zposition, Xrotation, Yrotation or Zrotation)");
      }
      for (const BvhChannel seen : joint.channels) {
        if (seen == *channel) {
          fail(line, "channel " + quoted(name.text) + " listed twice in joint '" + joint.name + "'");
        }
      }
      joint.channels.push_back(*channel);
    }
    joint.firstValue = data_.valuesPerFrame;
    data_.valuesPerFrame += count;
  }

  Vec3 parseEndSite(const std::string& jointName) {
    const std::string owner = "the End Site of joint '" + jointName + "'";
    const Token open = lexer_.next();
    if (open.text != "{") fail(open.line, "expected '{' after End Site, found " + quoted(open.text));
    const int openLine = open.line;
    bool sawOffset = false;
    Vec3 value{0.0};
    for (;;) {
      const Token token = lexer_.next();
      if (token.text == "OFFSET") {
        if (sawOffset) fail(token.line, "second OFFSET in " + owner);
        sawOffset = true;
        value = offset(owner);
      } else if (token.text == "}") {
        break;
      } else if (token.text.empty() || token.text == "MOTION") {
        fail(token.line, "unbalanced braces: " + quoted(token.text) + " inside " + owner +
                             " opened on line " + std::to_string(openLine) + " (missing '}')");
      } else {
        fail(token.line, "unknown keyword " + quoted(token.text) + " in " + owner + " (only OFFSET)");
      }
    }
    if (!sawOffset) fail(openLine, owner + " has no OFFSET");
    return value;
  }

  void parseMotion() {
    const Token frames = lexer_.next();
    if (frames.text != "Frames:")
      fail(frames.line, "expected 'Frames:' after MOTION, found " + quoted(frames.text));
    const Token countToken = lexer_.next();
    int count = 0;
    if (!parseCount(countToken.text, count)) {
      fail(countToken.line,
           "expected a frame count (a whole number >= 0) after 'Frames:', found " + quoted(countToken.text));
    }
    const int framesLine = frames.line;
    const Token frameWord = lexer_.next();
    const Token timeWord = lexer_.next();
    if (frameWord.text != "Frame" || timeWord.text != "Time:") {
      std::string found = quoted(frameWord.text);
      if (!frameWord.text.empty()) found.append(" ").append(quoted(timeWord.text));
      fail(frameWord.line, "expected 'Frame Time:', found " + found);
    }
    const Token timeToken = lexer_.next();
    double frameTime = 0.0;
    if (!parseNumber(timeToken.text, frameTime) || frameTime <= 0.0) {
      fail(timeToken.line,
           "expected a positive frame time in seconds after 'Frame Time:', found " + quoted(timeToken.text));
    }
    if (frameTime < kMinFrameTime || frameTime > kMaxFrameTime) {
      fail(timeToken.line, "Frame Time " + quoted(timeToken.text) + " is outside [0.0001, 60] s");
    }
    if (!lexer_.lineRestEmpty()) {
      fail(timeToken.line, "unexpected " + quoted(lexer_.next().text) + " after the frame time");
    }
    lexer_.skipToNextLine();
    data_.frameCount = count;
    data_.frameTime = frameTime;

    const size_t perFrame = static_cast<size_t>(data_.valuesPerFrame);
    // Every value takes at least two characters: a huge "Frames:" cannot reserve beyond the text.
    data_.values.reserve(std::min(static_cast<size_t>(count) * perFrame, textSize_ / 2 + 1));
    int frame = 0;
    int lastLine = lexer_.line();
    std::vector<std::string_view> fields;
    int extraLines = 0;
    int firstExtraLine = 0;
    for (;;) {
      const int line = lexer_.line();
      const std::optional<std::string_view> text = lexer_.takeLine();
      if (!text) break;
      fields.clear();
      size_t p = 0;
      while (p < text->size()) {
        while (p < text->size() && isSpace((*text)[p])) ++p;
        const size_t start = p;
        while (p < text->size() && !isSpace((*text)[p])) ++p;
        if (p > start) fields.push_back(text->substr(start, p - start));
      }
      if (fields.empty()) continue;  // blank lines (usually trailing) are allowed
      lastLine = line;
      if (frame >= count) {
        // Real files have this (Boxing_Toes.bvh has one line more than it declares); Assimp
        // ignores such lines too.
        ++extraLines;
        if (firstExtraLine == 0) firstExtraLine = line;
        continue;
      }
      if (fields.size() != perFrame) {
        fail(line, "expected " + std::to_string(perFrame) + " channel values (frame " +
                       std::to_string(frame) + "), got " + std::to_string(fields.size()));
      }
      for (size_t i = 0; i < fields.size(); ++i) {
        double value = 0.0;
        if (!parseNumber(fields[i], value)) {
          fail(line, "frame " + std::to_string(frame) + ", value " + std::to_string(i + 1) + " (" +
                         describeValue(static_cast<int>(i)) + "): " + quoted(fields[i]) +
                         " is not a finite number");
        }
        data_.values.push_back(value);
      }
      ++frame;
    }
    if (extraLines > 0) {
      data_.warnings.push_back("line " + std::to_string(firstExtraLine) + ": " + std::to_string(extraLines) +
                               " frame line(s) beyond the " + std::to_string(count) +
                               " that 'Frames:' (line " + std::to_string(framesLine) +
                               ") declares are ignored");
    }
    if (frame < count) {
      fail(lastLine, "'Frames:' on line " + std::to_string(framesLine) + " declares " +
                         std::to_string(count) + " frames, but only " + std::to_string(frame) +
                         " frame lines follow (truncated file?)");
    }
  }

  std::string describeValue(int valueIndex) const {
    for (const BvhJoint& joint : data_.joints) {
      const int local = valueIndex - joint.firstValue;
      if (local >= 0 && local < static_cast<int>(joint.channels.size())) {
        return "joint '" + joint.name + "' " +
               std::string(channelName(joint.channels[static_cast<size_t>(local)]));
      }
    }
    return "?";
  }

  Lexer lexer_;
  BvhData& data_;
  size_t textSize_ = 0;
  std::unordered_map<std::string, int> lineOfName_;
};

}  // namespace

Result<BvhData> checkBvh(std::string_view text, const std::string& sourceName) {
  BvhData data;
  try {
    Parser parser(text, data);
    parser.parse();
  } catch (const ParseFailure& failure) {
    return Error{sourceName + ":" + std::to_string(failure.line) + ": " + failure.reason};
  }
  return data;
}

Transform bvhLocal(const BvhData& data, int joint, int frame) {
  const BvhJoint& j = data.joints[static_cast<size_t>(joint)];
  const double* values = data.values.data() +
                         static_cast<size_t>(frame) * static_cast<size_t>(data.valuesPerFrame) +
                         static_cast<size_t>(j.firstValue);
  Transform local = Transform::fromTranslation(j.offset);
  char order[3] = {'X', 'Y', 'Z'};
  Vec3 angles{0.0};
  int rotationCount = 0;
  Quat product{1.0, 0.0, 0.0, 0.0};
  constexpr double kDegrees = kPi / 180.0;
  for (size_t c = 0; c < j.channels.size(); ++c) {
    const double value = values[c];
    char axis = 0;
    switch (j.channels[c]) {
      case BvhChannel::PositionX:
        local.translation.x = value;
        break;
      case BvhChannel::PositionY:
        local.translation.y = value;
        break;
      case BvhChannel::PositionZ:
        local.translation.z = value;
        break;
      case BvhChannel::RotationX:
        axis = 'X';
        break;
      case BvhChannel::RotationY:
        axis = 'Y';
        break;
      case BvhChannel::RotationZ:
        axis = 'Z';
        break;
    }
    if (axis == 0) continue;
    const double angle = value * kDegrees;
    if (rotationCount < 3) {
      order[rotationCount] = axis;
      angles[rotationCount] = angle;
    }
    const Vec3 axisVector{axis == 'X' ? 1.0 : 0.0, axis == 'Y' ? 1.0 : 0.0, axis == 'Z' ? 1.0 : 0.0};
    product = product * glm::angleAxis(angle, axisVector);
    ++rotationCount;
  }
  // Three rotation channels (the usual case) go through the shared helper; fewer compose the same
  // way (intrinsic, listed order) by hand.
  local.rotation = rotationCount == 3 ? fromEulerIntrinsic(order, angles) : product;
  local.rotation = normalizeOrIdentity(local.rotation);
  return local;
}

}  // namespace handoff::detail
