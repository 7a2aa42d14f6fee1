// FBX checks before Assimp (fbx_check.h).
#include "rig/fbx_check.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace handoff::detail {
namespace {
namespace fbx {

constexpr std::string_view kBinaryMagic{"Kaydara FBX Binary  \0\x1a\0", 23};
constexpr int kMaxDepth = 32;  // FBX nests a handful of levels; Assimp's reader recurses
/// Elements an array may declare: its decoded bytes must fit in what zlib can expand its
/// compressed bytes to (at most 1032:1) and in 1 GiB.
constexpr std::uint64_t kMaxArrayBytes = std::uint64_t{1} << 30;
constexpr std::uint64_t kZlibMaxRatio = 1032;

/// Whether zlib data inflates to exactly `expected` bytes, streamed through a small buffer; the bytes
/// are kept in `out` when given. Assimp 5.2 leaks its zlib state when an array does not inflate
/// (found by handoff_fuzz_import).
bool inflatesTo(std::string_view compressed, std::uint64_t expected, std::string* out = nullptr) {
  z_stream z{};
  if (inflateInit(&z) != Z_OK) return false;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  z.avail_in = static_cast<uInt>(compressed.size());
  std::array<Bytef, 16384> chunk{};
  int rc = Z_OK;
  while (rc == Z_OK && z.total_out <= expected) {
    z.next_out = chunk.data();
    z.avail_out = static_cast<uInt>(chunk.size());
    rc = inflate(&z, Z_NO_FLUSH);
    if (out != nullptr && z.total_out <= expected) {
      out->append(reinterpret_cast<const char*>(chunk.data()), chunk.size() - z.avail_out);
    }
    if (rc == Z_BUF_ERROR && z.avail_in == 0) break;  // input ends before the stream does
  }
  const bool ok = rc == Z_STREAM_END && z.total_out == expected;
  inflateEnd(&z);
  return ok;
}

/// The arrays Assimp takes indices from, by the Geometry or Deformer (skin cluster) that holds
/// them: Vertices (3 per control point), PolygonVertexIndex, a cluster's Indexes and Weights.
struct IndexArrays {
  struct Entry {
    std::string name;
    std::string owner;  ///< "Geometry" or "Deformer"
    int ownerIndex = -1;
    std::vector<double> values;
    std::string where;  ///< " at byte N" or " at line N"
  };
  std::vector<Entry> entries;
};

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

bool isIndexArray(std::string_view name) {
  return name == "Vertices" || name == "PolygonVertexIndex" || name == "Indexes" || name == "Weights";
}

/// Cluster indices inside the vertices, polygon vertices inside their geometry's, one weight per
/// index: Assimp 5.2 asserts (aborts) on a cluster index past the vertices (found by
/// handoff_fuzz_import).
Status checkIndexArrays(const IndexArrays& arrays, const std::string& source) {
  std::vector<std::pair<int, size_t>> vertices;  // geometry -> control points
  size_t most = 0;
  for (const IndexArrays::Entry& e : arrays.entries) {
    if (e.owner != "Geometry" || e.name != "Vertices") continue;
    if (e.values.size() % 3 != 0) {
      return Error{source + ": FBX Geometry Vertices" + e.where + " holds " +
                   std::to_string(e.values.size()) + " values, not 3 per vertex"};
    }
    vertices.emplace_back(e.ownerIndex, e.values.size() / 3);
    most = std::max(most, e.values.size() / 3);
  }
  const auto whole = [](double v) { return std::isfinite(v) && std::floor(v) == v; };
  std::vector<std::pair<int, size_t>> weights;  // deformer -> Weights count
  for (const IndexArrays::Entry& e : arrays.entries) {
    if (e.owner == "Deformer" && e.name == "Weights") weights.emplace_back(e.ownerIndex, e.values.size());
  }
  for (const IndexArrays::Entry& e : arrays.entries) {
    if (e.owner == "Geometry" && e.name == "PolygonVertexIndex") {
      size_t count = 0;
      for (const auto& [g, n] : vertices) count = g == e.ownerIndex ? n : count;
      for (const double v : e.values) {
        const double index = v < 0.0 ? -v - 1.0 : v;  // a polygon's last index is stored as ~index
        if (!whole(v) || index >= static_cast<double>(count)) {
          return Error{source + ": FBX Geometry PolygonVertexIndex" + e.where + " holds " + number(v) +
                       ", not one of its " + std::to_string(count) + " vertices"};
        }
      }
    }
    if (e.owner == "Deformer" && e.name == "Indexes") {
      for (const double v : e.values) {
        if (!whole(v) || v < 0.0 || v >= static_cast<double>(most)) {
          return Error{source + ": FBX skin cluster Indexes" + e.where + " holds " + number(v) +
                       ", past the " + std::to_string(most) + " vertices of the file's largest Geometry"};
        }
      }
      for (const auto& [d, n] : weights) {
        if (d == e.ownerIndex && n != e.values.size()) {
          return Error{source + ": FBX skin cluster" + e.where + " has " + std::to_string(e.values.size()) +
                       " Indexes but " + std::to_string(n) + " Weights"};
        }
      }
    }
  }
  return {};
}

template <class T>
T read(std::string_view data, size_t at) {
  T v{};
  std::memcpy(&v, data.data() + at, sizeof v);  // FBX is little-endian, as every target here
  return v;
}

Status checkBinary(std::string_view data, const std::string& source) {
  if (data.size() < 27)
    return Error{source + ": truncated FBX header (" + std::to_string(data.size()) + " bytes)"};
  const auto version = read<std::uint32_t>(data, 23);
  if (version < 7100 || version > 7700) {
    return Error{source + ": FBX version " + std::to_string(version) +
                 ": the importer (Assimp 5.2) reads FBX 7.1 to 7.7 (FBX 2011 and later)"};
  }
  const bool wide = version >= 7500;  // 64-bit record offsets
  const size_t headerSize = wide ? 25 : 13;
  const auto at = [&](size_t offset) { return " at byte " + std::to_string(offset); };
  std::vector<std::uint64_t> ends{data.size()};                // end of each open record list's parent
  std::vector<std::pair<std::string, int>> parents{{"", -1}};  // each open list's record, its owner index
  int owners = 0;
  IndexArrays arrays;
  size_t pos = 27;
  bool topClosed = false;
  while (!ends.empty()) {
    const std::uint64_t limit = ends.back();
    if (pos + headerSize > limit) {
      if (ends.size() == 1 && pos + headerSize > data.size()) break;  // no null record at the very end
      return Error{source + ": FBX record header" + at(pos) + " runs past its parent"};
    }
    const std::uint64_t end = wide ? read<std::uint64_t>(data, pos) : read<std::uint32_t>(data, pos);
    const std::uint64_t properties =
        wide ? read<std::uint64_t>(data, pos + 8) : read<std::uint32_t>(data, pos + 4);
    const std::uint64_t listLength =
        wide ? read<std::uint64_t>(data, pos + 16) : read<std::uint32_t>(data, pos + 8);
    const auto nameLength = static_cast<unsigned char>(data[pos + headerSize - 1]);
    if (end == 0 && properties == 0 && listLength == 0 && nameLength == 0) {
      // Null record: the end of a nested list (or of the top level, followed by the footer).
      pos += headerSize;
      if (ends.size() == 1) {
        topClosed = true;
        break;
      }
      if (pos != ends.back())
        return Error{source + ": FBX record ending" + at(ends.back()) + " has bytes after its nested list"};
      ends.pop_back();
      parents.pop_back();
      continue;
    }
    const size_t bodyStart = pos + headerSize + nameLength;
    if (end > limit || end < bodyStart || listLength > end - bodyStart) {
      return Error{source + ": FBX record" + at(pos) + " ends at byte " + std::to_string(end) +
                   ", outside its parent (byte " + std::to_string(limit) + ") or inside its own header"};
    }
    const std::string name(data.substr(pos + headerSize, nameLength));
    const bool owner = name == "Geometry" || name == "Deformer";
    const int ownerIndex = owner ? owners++ : -1;
    const bool wanted =
        isIndexArray(name) && (parents.back().first == "Geometry" || parents.back().first == "Deformer");
    // Properties: a type code and its payload each; they fill the property list exactly.
    size_t p = bodyStart;
    const size_t listEnd = bodyStart + static_cast<size_t>(listLength);
    for (std::uint64_t k = 0; k < properties; ++k) {
      if (p >= listEnd)
        return Error{source + ": FBX record" + at(pos) + " declares more properties than its list holds"};
      const char type = data[p++];
      size_t size = 0;
      switch (type) {
        case 'C':
          size = 1;
          break;
        case 'Y':
          size = 2;
          break;
        case 'I':
        case 'F':
          size = 4;
          break;
        case 'D':
        case 'L':
          size = 8;
          break;
        case 'S':
        case 'R':
          if (listEnd - p < 4) return Error{source + ": FBX string property" + at(p) + " is truncated"};
          size = 4 + read<std::uint32_t>(data, p);
          break;
        case 'f':
        case 'i':
        case 'd':
        case 'l':
        case 'b': {
          if (listEnd - p < 12) return Error{source + ": FBX array property" + at(p) + " is truncated"};
          const std::uint64_t count = read<std::uint32_t>(data, p);
          const std::uint32_t encoding = read<std::uint32_t>(data, p + 4);
          const std::uint64_t stored = read<std::uint32_t>(data, p + 8);
          const std::uint64_t element = type == 'b' ? 1 : (type == 'f' || type == 'i') ? 4 : 8;
          const std::uint64_t bytes = count * element;
          if (encoding == 0 && stored != bytes) {
            return Error{source + ": FBX array" + at(p) + " of " + std::to_string(count) +
                         " elements stores " + std::to_string(stored) + " bytes"};
          }
          if (encoding == 1 && (bytes > stored * kZlibMaxRatio + 64 || bytes > kMaxArrayBytes)) {
            return Error{source + ": FBX array" + at(p) + " declares " + std::to_string(count) +
                         " elements, more than its " + std::to_string(stored) + " compressed bytes can hold"};
          }
          if (encoding > 1) {
            return Error{source + ": FBX array" + at(p) + " has the unknown encoding " +
                         std::to_string(encoding)};
          }
          size = 12 + static_cast<size_t>(stored);
          if (size > listEnd - p) break;  // reported below
          std::string decoded;
          if (encoding == 1 && !inflatesTo(data.substr(p + 12, static_cast<size_t>(stored)), bytes,
                                           wanted ? &decoded : nullptr)) {
            return Error{source + ": FBX array" + at(p) + ": its zlib data does not inflate to the " +
                         std::to_string(bytes) + " bytes of its " + std::to_string(count) + " elements"};
          }
          if (wanted) {
            if (encoding == 0) decoded = std::string(data.substr(p + 12, static_cast<size_t>(stored)));
            IndexArrays::Entry entry{name, parents.back().first, parents.back().second, {}, at(p)};
            entry.values.reserve(static_cast<size_t>(count));
            for (std::uint64_t e = 0; e < count; ++e) {
              const size_t o = static_cast<size_t>(e * element);
              switch (type) {
                case 'f':
                  entry.values.push_back(read<float>(decoded, o));
                  break;
                case 'd':
                  entry.values.push_back(read<double>(decoded, o));
                  break;
                case 'i':
                  entry.values.push_back(read<std::int32_t>(decoded, o));
                  break;
                case 'l':
                  entry.values.push_back(static_cast<double>(read<std::int64_t>(decoded, o)));
                  break;
                default:
                  entry.values.push_back(static_cast<unsigned char>(decoded[o]));
                  break;
              }
            }
            arrays.entries.push_back(std::move(entry));
          }
          break;
        }
        default:
          return Error{source + ": FBX property" + at(p - 1) + " has the unknown type code " +
                       std::to_string(static_cast<unsigned char>(type))};
      }
      if (size > listEnd - p)
        return Error{source + ": FBX property" + at(p - 1) + " runs past its record's property list"};
      p += size;
    }
    if (p != listEnd)
      return Error{source + ": FBX record" + at(pos) + " has a property list longer than its properties"};
    if (listEnd == end) {
      pos = listEnd;
      continue;
    }
    // Nested records until a null record that ends exactly at `end`.
    if (ends.size() > kMaxDepth)
      return Error{source + ": FBX records nested deeper than " + std::to_string(kMaxDepth) + at(pos)};
    ends.push_back(end);
    parents.emplace_back(name, owner ? ownerIndex : parents.back().second);
    pos = listEnd;
  }
  if (!topClosed && ends.size() > 1) return Error{source + ": the FBX file ends inside a record"};
  return checkIndexArrays(arrays, source);
}

Status checkAscii(std::string_view data, const std::string& source) {
  int depth = 0;
  size_t line = 1;
  for (size_t i = 0; i < data.size(); ++i) {
    const char c = data[i];
    const auto where = [&] { return " at line " + std::to_string(line); };
    switch (c) {
      case '\n':
        ++line;
        break;
      case '\0':
        return Error{source + ": a NUL byte in ASCII FBX" + where()};
      case ';':  // comment to the end of the line
        while (i + 1 < data.size() && data[i + 1] != '\n') ++i;
        break;
      case '"': {
        // Strings may span lines (Assimp's tokenizer allows it); one that never closes may not.
        const size_t close = data.find('"', i + 1);
        if (close == std::string_view::npos) {
          return Error{source + ": unterminated string in ASCII FBX" + where()};
        }
        line += static_cast<size_t>(std::count(data.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                               data.begin() + static_cast<std::ptrdiff_t>(close), '\n'));
        i = close;
        break;
      }
      case '{':
        if (++depth > kMaxDepth)
          return Error{source + ": ASCII FBX nested deeper than " + std::to_string(kMaxDepth) + where()};
        break;
      case '}':
        if (--depth < 0) return Error{source + ": unbalanced '}' in ASCII FBX" + where()};
        break;
      case '*': {
        // "*N {": an array of N values, each at least one digit and a comma.
        size_t j = i + 1;
        std::uint64_t n = 0;
        while (j < data.size() && data[j] >= '0' && data[j] <= '9' && n <= data.size())
          n = n * 10 + static_cast<std::uint64_t>(data[j++] - '0');
        if (j > i + 1 && n > (data.size() - j) / 2 + 1) {
          return Error{source + ": ASCII FBX array of " + std::to_string(n) + " values" + where() +
                       " is longer than the rest of the file"};
        }
        break;
      }
      default:
        break;
    }
  }
  if (depth != 0) return Error{source + ": ASCII FBX ends with " + std::to_string(depth) + " unclosed '{'"};
  // The index arrays: "Vertices: *24 {\n a: 1,1,1,...\n}" (or the values right after the name).
  IndexArrays arrays;
  std::vector<std::pair<std::string, int>> open{{"", -1}};  // records whose braces are open, owner index
  std::string record;                                       // the last "Name:" seen
  int owners = 0;
  IndexArrays::Entry* current = nullptr;
  line = 1;
  for (size_t i = 0; i < data.size(); ++i) {
    const char c = data[i];
    if (c == '\n') {
      ++line;
    } else if (c == ';') {
      while (i + 1 < data.size() && data[i + 1] != '\n') ++i;
    } else if (c == '"') {
      const size_t close = data.find('"', i + 1);
      line += static_cast<size_t>(std::count(data.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                             data.begin() + static_cast<std::ptrdiff_t>(close), '\n'));
      i = close;
    } else if (c == '{') {
      if (current != nullptr && current->values.empty())
        arrays.entries.pop_back();  // "Name: *N {": inner form
      current = nullptr;
      const bool owner = record == "Geometry" || record == "Deformer";
      open.emplace_back(record, owner ? owners++ : open.back().second);
    } else if (c == '}') {
      if (open.size() > 1) open.pop_back();
      current = nullptr;
    } else if (c == '*') {
      while (i + 1 < data.size() && std::isdigit(static_cast<unsigned char>(data[i + 1]))) ++i;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < data.size() &&
             (std::isalnum(static_cast<unsigned char>(data[j])) || data[j] == '_' || data[j] == '|'))
        ++j;
      size_t k = j;
      while (k < data.size() && (data[k] == ' ' || data[k] == '\t')) ++k;
      if (k < data.size() && data[k] == ':') {
        record = std::string(data.substr(i, j - i));
        current = nullptr;
        // Values of an index array: after its own name, or after "a:" inside its braces.
        const std::string& parent = open.back().first;
        const std::string& grand = open.size() > 1 ? open[open.size() - 2].first : std::string();
        const bool direct = isIndexArray(record) && (parent == "Geometry" || parent == "Deformer");
        const bool inner =
            record == "a" && isIndexArray(parent) && (grand == "Geometry" || grand == "Deformer");
        if (direct || inner) {
          arrays.entries.push_back({direct ? record : parent,
                                    direct ? parent : grand,
                                    direct ? open.back().second : open[open.size() - 2].second,
                                    {},
                                    " at line " + std::to_string(line)});
          current = &arrays.entries.back();
        }
        i = k;
      } else {
        i = j - 1;  // a word that is no record name (a value such as "Y" or "T")
        current = nullptr;
      }
    } else if (current != nullptr &&
               (std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.')) {
      size_t j = i;
      while (j < data.size() && std::strchr("0123456789+-.eE", data[j]) != nullptr) ++j;
      current->values.push_back(std::strtod(std::string(data.substr(i, j - i)).c_str(), nullptr));
      i = j - 1;
    }
  }
  return checkIndexArrays(arrays, source);
}

}  // namespace fbx
}  // namespace

Status checkFbx(std::string_view data, const std::string& source) {
  using namespace fbx;
  if (data.substr(0, 18) == kBinaryMagic.substr(0, 18)) {
    if (data.substr(0, kBinaryMagic.size()) != kBinaryMagic)
      return Error{source + ": malformed binary FBX header"};
    return checkBinary(data, source);
  }
  return checkAscii(data, source);
}

}  // namespace handoff::detail
