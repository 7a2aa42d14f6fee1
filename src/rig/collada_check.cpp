// COLLADA checks before Assimp (collada_check.h).
#include "rig/collada_check.h"

#include <pugixml.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace handoff::detail {
namespace {
namespace collada {

/// The first problem found, thrown to checkCollada.
struct Invalid {
  std::string message;
};

constexpr int kMaxDepth = 256;  // element nesting Assimp's recursive reader is given
constexpr std::int64_t kMaxCount = std::int64_t{1} << 31;  // counts and indices

std::vector<std::string_view> tokens(const char* text) {
  std::vector<std::string_view> out;
  const std::string_view all(text);
  size_t at = 0;
  while (at < all.size()) {
    while (at < all.size() && std::strchr(" \t\r\n", all[at]) != nullptr) ++at;
    const size_t start = at;
    while (at < all.size() && std::strchr(" \t\r\n", all[at]) == nullptr) ++at;
    if (at > start) out.push_back(all.substr(start, at - start));
  }
  return out;
}

std::optional<std::int64_t> integer(std::string_view token) {
  std::int64_t value = 0;
  if (!token.empty() && token.front() == '+') token.remove_prefix(1);
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return value;
}

bool real(std::string_view token) {
  double value = 0.0;
  if (!token.empty() && token.front() == '+') token.remove_prefix(1);
  const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  return ec == std::errc() && end == token.data() + token.size();
}

class Checker {
 public:
  Checker(std::string_view data, const pugi::xml_document& doc) : data_(data), doc_(doc) {}

  void check() {
    const pugi::xml_node root = doc_.document_element();
    if (std::strcmp(root.name(), "COLLADA") != 0) fail(root, "the root element is not COLLADA");
    // Iterative walks: ids first (references may point forward), then every element.
    std::vector<std::pair<pugi::xml_node, int>> stack{{root, 0}};
    std::vector<pugi::xml_node> elements;
    while (!stack.empty()) {
      const auto [node, depth] = stack.back();
      stack.pop_back();
      if (depth > kMaxDepth) fail(node, "elements nested deeper than " + std::to_string(kMaxDepth));
      elements.push_back(node);
      if (const pugi::xml_attribute id = node.attribute("id")) ids_.emplace(id.value(), node);
      for (pugi::xml_node child = node.last_child(); child; child = child.previous_sibling()) {
        if (child.type() == pugi::node_element) stack.emplace_back(child, depth + 1);
      }
    }
    for (const pugi::xml_node& node : elements) checkArray(node);
    for (const pugi::xml_node& node : elements) checkElement(node);
  }

 private:
  /// "<p> in <geometry id='Cube-mesh'> (line 75): what": the element, its nearest ancestor with
  /// an id, and the line.
  [[noreturn]] void fail(const pugi::xml_node& node, const std::string& what) const {
    const auto describe = [](const pugi::xml_node& n) {
      std::string text = "<" + std::string(n.name());
      if (const pugi::xml_attribute id = n.attribute("id")) text += " id='" + std::string(id.value()) + "'";
      return text + ">";
    };
    std::string where = describe(node);
    if (!node.attribute("id")) {
      for (pugi::xml_node n = node.parent(); n && n.type() == pugi::node_element; n = n.parent()) {
        if (n.attribute("id")) {
          where += " in " + describe(n);
          break;
        }
      }
    }
    const auto offset = static_cast<size_t>(std::max<std::ptrdiff_t>(0, node.offset_debug()));
    const auto end = data_.begin() + static_cast<std::ptrdiff_t>(std::min(offset, data_.size()));
    const auto line = 1 + std::count(data_.begin(), end, '\n');
    throw Invalid{where + " (line " + std::to_string(line) + "): " + what};
  }

  std::int64_t count(const pugi::xml_node& node, const char* name, std::optional<std::int64_t> fallback,
                     std::int64_t minimum = 0) const {
    const pugi::xml_attribute attribute = node.attribute(name);
    if (!attribute) {
      if (!fallback) fail(node, std::string("has no ") + name);
      return *fallback;
    }
    const std::optional<std::int64_t> value = integer(attribute.value());
    if (!value || *value < minimum || *value > kMaxCount) {
      fail(node, std::string(name) + "=\"" + attribute.value() + "\" is not a count");
    }
    return *value;
  }

  /// The element a "#id" reference names (nullopt for a reference into another file).
  std::optional<pugi::xml_node> resolve(const pugi::xml_node& node, const char* attribute) const {
    const std::string value = node.attribute(attribute).value();
    if (value.empty()) fail(node, std::string("has no ") + attribute);
    if (value.front() != '#') return std::nullopt;
    const auto it = ids_.find(value.substr(1));
    if (it == ids_.end()) fail(node, std::string(attribute) + "=\"" + value + "\" names no element");
    return it->second;
  }

  void checkArray(const pugi::xml_node& node) {
    const std::string name = node.name();
    if (name.size() < 6 || name.compare(name.size() - 6, 6, "_array") != 0) return;
    const std::vector<std::string_view> words = tokens(node.text().get());
    const std::int64_t declared = count(node, "count", std::nullopt);
    if (declared != static_cast<std::int64_t>(words.size())) {
      fail(node, "count=\"" + std::to_string(declared) + "\" but it holds " + std::to_string(words.size()) +
                     " values");
    }
    for (const std::string_view word : words) {
      const bool ok = name == "float_array" ? real(word)
                      : name == "int_array" ? integer(word).has_value()
                      : name == "bool_array"
                          ? (word == "true" || word == "false" || word == "0" || word == "1")
                          : true;
      if (!ok) fail(node, "'" + std::string(word.substr(0, 32)) + "' is not a value of a " + name);
    }
    arraySize_[node.internal_object()] = declared;
  }

  /// Elements of a <source>'s accessor (or of the POSITION source of a <vertices>).
  std::int64_t elements(const pugi::xml_node& from, const pugi::xml_node& target) const {
    if (std::strcmp(target.name(), "vertices") == 0) {
      for (const pugi::xml_node input : target.children("input")) {
        if (std::strcmp(input.attribute("semantic").value(), "POSITION") != 0) continue;
        const std::optional<pugi::xml_node> source = resolve(input, "source");
        if (source && std::strcmp(source->name(), "source") == 0) return elements(input, *source);
      }
      fail(target, "has no POSITION input naming a source");
    }
    if (std::strcmp(target.name(), "source") != 0)
      fail(from, "names a <" + std::string(target.name()) + ">, not a <source>");
    const pugi::xml_node accessor = target.child("technique_common").child("accessor");
    if (!accessor) fail(target, "has no technique_common/accessor");
    return count(accessor, "count", std::nullopt);
  }

  /// Elements of the source an <input> names; nullopt when it names another file.
  std::optional<std::int64_t> inputElements(const pugi::xml_node& input) const {
    const std::optional<pugi::xml_node> source = resolve(input, "source");
    if (!source) return std::nullopt;
    return elements(input, *source);
  }

  std::vector<std::int64_t> integers(const pugi::xml_node& node, std::int64_t minimum) const {
    std::vector<std::int64_t> out;
    for (const std::string_view word : tokens(node.text().get())) {
      const std::optional<std::int64_t> value = integer(word);
      if (!value || *value < minimum || *value > kMaxCount) {
        fail(node, "'" + std::string(word.substr(0, 32)) + "' is not an index");
      }
      out.push_back(*value);
    }
    return out;
  }

  void values(const pugi::xml_node& node, size_t expected) const {
    const std::vector<std::string_view> words = tokens(node.text().get());
    if (words.size() != expected) {
      fail(node, "holds " + std::to_string(words.size()) + " values, not " + std::to_string(expected));
    }
    for (const std::string_view word : words) {
      if (!real(word)) fail(node, "'" + std::string(word.substr(0, 32)) + "' is not a number");
    }
  }

  /// The inputs of a primitive or <vertex_weights>: offset per input, the stride, each input's
  /// element count (-1: unknown).
  struct Inputs {
    std::vector<std::int64_t> offset;
    std::vector<std::int64_t> elements;
    std::vector<std::string> semantic;
    std::int64_t stride = 0;
  };

  Inputs inputs(const pugi::xml_node& node) const {
    Inputs out;
    for (const pugi::xml_node input : node.children("input")) {
      out.offset.push_back(count(input, "offset", std::nullopt));
      out.elements.push_back(inputElements(input).value_or(-1));
      out.semantic.emplace_back(input.attribute("semantic").value());
      out.stride = std::max(out.stride, out.offset.back() + 1);
    }
    if (out.offset.empty()) fail(node, "has no input");
    return out;
  }

  void checkIndices(const pugi::xml_node& node, const std::vector<std::int64_t>& indices, const Inputs& in,
                    std::int64_t minimum) const {
    if (in.stride == 0 || indices.size() % static_cast<size_t>(in.stride) != 0) {
      fail(node,
           std::to_string(indices.size()) + " indices for inputs " + std::to_string(in.stride) + " wide");
    }
    for (size_t i = 0; i < in.offset.size(); ++i) {
      if (in.elements[i] < 0) continue;
      for (size_t at = static_cast<size_t>(in.offset[i]); at < indices.size();
           at += static_cast<size_t>(in.stride)) {
        if (indices[at] >= in.elements[i] || indices[at] < minimum) {
          fail(node, "index " + std::to_string(indices[at]) + " of input " + in.semantic[i] +
                         " is outside its " + std::to_string(in.elements[i]) + " elements");
        }
      }
    }
  }

  void checkPrimitive(const pugi::xml_node& node, const std::string& name) const {
    const std::int64_t primitives = count(node, "count", std::nullopt);
    const Inputs in = inputs(node);
    std::vector<std::int64_t> all;
    size_t lists = 0;
    for (const pugi::xml_node p : node.children("p")) {
      const std::vector<std::int64_t> indices = integers(p, 0);
      if (name != "triangles" && name != "lines" && name != "polylist") checkIndices(p, indices, in, 0);
      all.insert(all.end(), indices.begin(), indices.end());
      ++lists;
    }
    for (const pugi::xml_node ph : node.children("ph")) {
      for (const pugi::xml_node p : ph.children()) {
        if (p.type() == pugi::node_element) checkIndices(p, integers(p, 0), in, 0);
      }
      ++lists;
    }
    std::int64_t expected = 0;
    if (name == "triangles" || name == "lines") {
      expected = primitives * (name == "triangles" ? 3 : 2) * in.stride;
    } else if (name == "polylist") {
      const pugi::xml_node vcount = node.child("vcount");
      const std::vector<std::int64_t> corners = vcount ? integers(vcount, 1) : std::vector<std::int64_t>();
      if (static_cast<std::int64_t>(corners.size()) != primitives) {
        fail(node, "count=\"" + std::to_string(primitives) + "\" but its vcount lists " +
                       std::to_string(corners.size()));
      }
      for (const std::int64_t c : corners) expected += c * in.stride;
    } else {
      if (static_cast<std::int64_t>(lists) != primitives) {
        fail(node, "count=\"" + std::to_string(primitives) + "\" but it has " + std::to_string(lists) +
                       " index lists");
      }
      return;
    }
    if (static_cast<std::int64_t>(all.size()) != expected) {
      fail(node, "holds " + std::to_string(all.size()) + " indices where its count and inputs give " +
                     std::to_string(expected));
    }
    checkIndices(node, all, in, 0);
  }

  void checkElement(const pugi::xml_node& node) {
    const std::string name = node.name();
    if (name == "accessor") {
      const std::int64_t elements = count(node, "count", std::nullopt);
      const std::int64_t stride = count(node, "stride", 1, 1);
      const std::int64_t offset = count(node, "offset", 0);
      std::int64_t params = 0;
      for (const pugi::xml_node param : node.children("param")) params += param ? 1 : 0;
      if (params > stride)
        fail(node, std::to_string(params) + " params for stride " + std::to_string(stride));
      const std::optional<pugi::xml_node> array = resolve(node, "source");
      if (!array) return;
      const auto size = arraySize_.find(array->internal_object());
      if (size == arraySize_.end())
        fail(node, "source names a <" + std::string(array->name()) + ">, not an array");
      if (elements > 0 &&
          offset + (elements - 1) * stride + std::max<std::int64_t>(params, 1) > size->second) {
        fail(node, std::to_string(elements) + " elements of stride " + std::to_string(stride) +
                       " run past the " + std::to_string(size->second) + " values of its array");
      }
    } else if (name == "triangles" || name == "lines" || name == "polylist" || name == "polygons" ||
               name == "linestrips" || name == "trifans" || name == "tristrips") {
      checkPrimitive(node, name);
    } else if (name == "vertices") {
      elements(node, node);
    } else if (name == "vertex_weights") {
      const std::int64_t vertices = count(node, "count", std::nullopt);
      const Inputs in = inputs(node);
      const std::vector<std::int64_t> influences =
          node.child("vcount") ? integers(node.child("vcount"), 0) : std::vector<std::int64_t>();
      if (static_cast<std::int64_t>(influences.size()) != vertices) {
        fail(node, "count=\"" + std::to_string(vertices) + "\" but its vcount lists " +
                       std::to_string(influences.size()));
      }
      std::int64_t expected = 0;
      for (const std::int64_t n : influences) expected += n * in.stride;
      const std::vector<std::int64_t> v =
          node.child("v") ? integers(node.child("v"), -1) : std::vector<std::int64_t>();
      if (static_cast<std::int64_t>(v.size()) != expected) {
        fail(node, "its v holds " + std::to_string(v.size()) + " indices where vcount and the inputs give " +
                       std::to_string(expected));
      }
      checkIndices(node, v, in, -1);
      // One entry per vertex of the skinned mesh.
      const pugi::xml_node skin = node.parent();
      if (const std::optional<pugi::xml_node> geometry = resolve(skin, "source");
          geometry && std::strcmp(geometry->name(), "geometry") == 0) {
        const pugi::xml_node mesh = geometry->child("mesh");
        if (const pugi::xml_node vertexList = mesh.child("vertices")) {
          const std::int64_t positions = elements(mesh, vertexList);
          if (positions != vertices) {
            fail(node, "count=\"" + std::to_string(vertices) + "\" but the skinned mesh has " +
                           std::to_string(positions) + " vertices");
          }
        }
      }
    } else if (name == "joints" || name == "sampler") {
      // Every input has as many elements as the first (joints and bind matrices; keys and values).
      std::optional<std::int64_t> first;
      for (const pugi::xml_node input : node.children("input")) {
        const std::optional<std::int64_t> n = inputElements(input);
        if (!n) continue;
        if (!first) first = n;
        if (*n != *first) {
          fail(input, "names a source of " + std::to_string(*n) + " elements where the first input's has " +
                          std::to_string(*first));
        }
      }
    } else if (name == "channel") {
      if (const std::optional<pugi::xml_node> sampler = resolve(node, "source");
          sampler && std::strcmp(sampler->name(), "sampler") != 0) {
        fail(node, "source names a <" + std::string(sampler->name()) + ">, not a <sampler>");
      }
      if (!node.attribute("target")) fail(node, "has no target");
    } else if (name == "skin") {
      resolve(node, "source");
      if (const pugi::xml_node matrix = node.child("bind_shape_matrix")) values(matrix, 16);
    } else if (name == "matrix") {
      values(node, 16);
    } else if (name == "translate" || name == "scale") {
      values(node, 3);
    } else if (name == "rotate") {
      values(node, 4);
    } else if (name == "lookat") {
      values(node, 9);
    } else if (name == "skew") {
      values(node, 7);
    } else if (name == "input") {
      if (node.attribute("source")) resolve(node, "source");
    } else if (name == "instance_geometry" || name == "instance_controller" || name == "instance_node" ||
               name == "instance_visual_scene") {
      resolve(node, "url");
    }
  }

  std::string_view data_;
  const pugi::xml_document& doc_;
  std::unordered_map<std::string, pugi::xml_node> ids_;
  std::unordered_map<const void*, std::int64_t> arraySize_;
};

}  // namespace collada
}  // namespace

Status checkCollada(std::string_view data, const std::string& source) {
  using namespace collada;
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_buffer(data.data(), data.size(), pugi::parse_default);
  if (!parsed) {
    return Error{source + ": the COLLADA XML does not parse: " + parsed.description() + " at byte " +
                 std::to_string(parsed.offset)};
  }
  try {
    Checker(data, doc).check();
  } catch (const Invalid& problem) {
    return Error{source + ": " + problem.message};
  }
  return {};
}

}  // namespace handoff::detail
