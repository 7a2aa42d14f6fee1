// glTF structure: indices, accessor bounds, the node tree, index and joint values (gltf_internal.h).
#include "rig/gltf_internal.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace handoff::detail::gltf {
namespace {

/// Levels of the node tree (a root is level 1): deeper trees are refused, as Assimp and the
/// importer walk them recursively. Human rigs nest about 10 levels, with fingers 15.
constexpr size_t kMaxNodeDepth = 256;
/// Squared length below which a rotation is a zero quaternion.
constexpr double kMinQuaternionNorm2 = 1e-12;

class Structure {
 public:
  Structure(const Json& doc, const Buffers& buffers, const std::vector<View>& views)
      : doc_(doc), buffers_(buffers), views_(views) {}

  void check() {
    for (const char* key : {"accessors", "animations", "buffers", "bufferViews", "cameras", "images",
                            "materials", "meshes", "nodes", "samplers", "scenes", "skins", "textures"}) {
      const Json& list = collection(key);
      for (size_t i = 0; i < list.size(); ++i) objectAt(list[i], item(key, i));
    }
    checkAccessors();
    checkNodes();
    checkScenes();
    checkSkins();
    checkMeshes();
    checkAnimations();
    checkMaterials();
  }

  const std::vector<Accessor>& accessors() const { return accessors_; }

  std::optional<std::string_view> viewBytes(size_t v) const { return gltf::viewBytes(buffers_, views_, v); }

 private:
  const Json& collection(const char* key) const {
    static const Json kEmpty = Json::array();
    const Json* list = find(doc_, key);
    if (list == nullptr) return kEmpty;
    if (!list->is_array()) invalid(key, "is not an array");
    return *list;
  }

  /// An index into `key`'s collection; nullopt when absent and not required.
  std::optional<size_t> ref(const Json& object, const char* member_, const char* key, const std::string& path,
                            bool required) const {
    if (!required && !object.contains(member_)) return std::nullopt;
    const std::uint64_t i = natural(object, member_, path, std::nullopt);
    if (i >= collection(key).size()) {
      invalid(member(path, member_), "is " + std::to_string(i) + ", not an index into " + key + " (" +
                                         std::to_string(collection(key).size()) + ")");
    }
    return static_cast<size_t>(i);
  }

  const Json& indexList(const Json& object, const char* member_, const std::string& path,
                        bool required) const {
    static const Json kEmpty = Json::array();
    const Json* list = find(object, member_);
    if (list == nullptr) {
      if (required) invalid(member(path, member_), "is missing");
      return kEmpty;
    }
    if (!list->is_array()) invalid(member(path, member_), "is not an array");
    return *list;
  }

  void checkAccessors() {
    const Json& list = collection("accessors");
    for (size_t a = 0; a < list.size(); ++a) {
      const std::string path = item("accessors", a);
      const Json& accessor = list[a];
      Accessor out;
      out.componentType = static_cast<long long>(natural(accessor, "componentType", path, std::nullopt));
      const size_t size = componentSize(out.componentType);
      if (size == 0)
        invalid(member(path, "componentType"),
                "is " + std::to_string(out.componentType) + ", not a glTF component type");
      out.type = text(accessor, "type", path, std::nullopt);
      out.components = componentCount(out.type);
      if (out.components == 0)
        invalid(member(path, "type"), "is '" + out.type + "', not a glTF accessor type");
      out.elementSize = out.components * size;
      out.count = natural(accessor, "count", path, std::nullopt, 1);
      if (const Json* normalized = find(accessor, "normalized")) {
        if (!normalized->is_boolean()) invalid(member(path, "normalized"), "is not a boolean");
        out.normalized = normalized->get<bool>();
      }
      numbers(accessor, "min", path, out.components);
      numbers(accessor, "max", path, out.components);
      out.view = ref(accessor, "bufferView", "bufferViews", path, false);
      out.offset = natural(accessor, "byteOffset", path, 0);
      if (out.view) {
        const View& view = views_[*out.view];
        out.stride = view.stride != 0 ? view.stride : out.elementSize;
        if (out.stride < out.elementSize) {
          invalid(path, "elements of " + std::to_string(out.elementSize) + " bytes in buffer view " +
                            std::to_string(*out.view) + " whose stride is " + std::to_string(out.stride));
        }
        const std::uint64_t end = out.offset + out.stride * (out.count - 1) + out.elementSize;
        if (end > view.length) {
          invalid(path, std::to_string(out.count) + " elements end at byte " + std::to_string(end) +
                            ", past buffer view " + std::to_string(*out.view) + "'s " +
                            std::to_string(view.length));
        }
      } else if (accessor.contains("byteOffset")) {
        invalid(member(path, "byteOffset"), "is given without a bufferView");
      }
      if (const Json* sparse = find(accessor, "sparse")) checkSparse(*sparse, member(path, "sparse"), out);
      accessors_.push_back(out);
    }
  }

  void checkSparse(const Json& sparse, const std::string& path, Accessor& accessor) {
    objectAt(sparse, path);
    accessor.sparse = true;
    const std::uint64_t count = natural(sparse, "count", path, std::nullopt, 1);
    if (count > accessor.count) invalid(member(path, "count"), "is more than the accessor's count");
    const std::string indicesPath = member(path, "indices");
    const std::string valuesPath = member(path, "values");
    if (!sparse.contains("indices")) invalid(indicesPath, "is missing");
    if (!sparse.contains("values")) invalid(valuesPath, "is missing");
    const Json& indices = objectAt(sparse["indices"], indicesPath);
    const Json& values = objectAt(sparse["values"], valuesPath);
    const size_t indexView = *ref(indices, "bufferView", "bufferViews", indicesPath, true);
    const auto indexType =
        static_cast<long long>(natural(indices, "componentType", indicesPath, std::nullopt));
    if (indexType != kUnsignedByte && indexType != kUnsignedShort && indexType != kUnsignedInt) {
      invalid(member(indicesPath, "componentType"), "is not an unsigned integer type");
    }
    const std::uint64_t indexOffset = natural(indices, "byteOffset", indicesPath, 0);
    if (indexOffset + count * componentSize(indexType) > views_[indexView].length) {
      invalid(indicesPath, "runs past buffer view " + std::to_string(indexView));
    }
    const size_t valueView = *ref(values, "bufferView", "bufferViews", valuesPath, true);
    const std::uint64_t valueOffset = natural(values, "byteOffset", valuesPath, 0);
    if (valueOffset + count * accessor.elementSize > views_[valueView].length) {
      invalid(valuesPath, "runs past buffer view " + std::to_string(valueView));
    }
    if (const std::optional<std::string_view> bytes = viewBytes(indexView)) {
      for (std::uint64_t i = 0; i < count; ++i) {
        const std::uint64_t index = component(*bytes, indexOffset + i * componentSize(indexType), indexType);
        if (index >= accessor.count) {
          invalid(indicesPath, "index " + std::to_string(index) + " is past the accessor's " +
                                   std::to_string(accessor.count) + " elements");
        }
      }
    }
  }

  static std::uint64_t component(std::string_view bytes, std::uint64_t at, long long type) {
    switch (type) {
      case kUnsignedByte:
        return static_cast<std::uint8_t>(bytes[static_cast<size_t>(at)]);
      case kUnsignedShort: {
        std::uint16_t v = 0;
        std::memcpy(&v, bytes.data() + at, sizeof v);
        return v;
      }
      default: {
        std::uint32_t v = 0;
        std::memcpy(&v, bytes.data() + at, sizeof v);
        return v;
      }
    }
  }

  /// The largest integer component of an (unsigned integer) accessor, its sparse values included;
  /// nullopt when its data is not at hand.
  std::optional<std::uint64_t> largest(size_t a) const {
    const Accessor& accessor = accessors_[a];
    if (!accessor.view || accessor.sparse)
      return accessor.view ? std::nullopt : std::optional<std::uint64_t>(0);
    const std::optional<std::string_view> bytes = viewBytes(*accessor.view);
    if (!bytes) return std::nullopt;
    const size_t size = componentSize(accessor.componentType);
    std::uint64_t most = 0;
    for (std::uint64_t e = 0; e < accessor.count; ++e) {
      for (size_t c = 0; c < accessor.components; ++c) {
        most = std::max(most, component(*bytes, accessor.offset + e * accessor.stride + c * size,
                                        accessor.componentType));
      }
    }
    return most;
  }

  /// Visits every element of a float accessor whose data is at hand (not sparse, not compressed):
  /// visit(element index, its components).
  template <class Visit>
  void eachFloatElement(size_t a, Visit&& visit) const {
    const Accessor& accessor = accessors_[a];
    if (accessor.componentType != kFloat || !accessor.view || accessor.sparse) return;
    const std::optional<std::string_view> bytes = viewBytes(*accessor.view);
    if (!bytes) return;
    std::array<float, 16> element{};
    for (std::uint64_t e = 0; e < accessor.count; ++e) {
      for (size_t c = 0; c < accessor.components && c < element.size(); ++c) {
        std::memcpy(&element[c], bytes->data() + accessor.offset + e * accessor.stride + c * sizeof(float),
                    sizeof(float));
      }
      visit(e, std::span<const float>(element.data(), std::min(accessor.components, element.size())));
    }
  }

  /// Refuses a float accessor holding NaN or infinity (inverse bind matrices, key times and values:
  /// Assimp would carry them into the skeleton and the clips).
  void finite(size_t a, const std::string& path) const {
    eachFloatElement(a, [&](std::uint64_t e, std::span<const float> values) {
      for (const float v : values) {
        if (!std::isfinite(v)) {
          invalid(path, "accessor " + std::to_string(a) + " element " + std::to_string(e) +
                            " holds a value that is not a finite number");
        }
      }
    });
  }

  /// Refuses a rotation key that is a zero quaternion (no rotation at all: normalising it divides
  /// by zero). CUBICSPLINE keys are (in-tangent, value, out-tangent): only values are rotations.
  void nonZeroQuaternions(size_t a, bool cubic, const std::string& path) const {
    eachFloatElement(a, [&](std::uint64_t e, std::span<const float> q) {
      if (cubic && e % 3 != 1) return;
      double norm2 = 0.0;
      for (const float v : q) norm2 += static_cast<double>(v) * static_cast<double>(v);
      if (!(norm2 > kMinQuaternionNorm2)) {
        invalid(member(path, "output"), "accessor " + std::to_string(a) + " key " +
                                            std::to_string(cubic ? e / 3 : e) + " is a zero quaternion");
      }
    });
  }

  void expect(size_t a, const std::string& path, std::initializer_list<const char*> types,
              std::initializer_list<int> componentTypes) const {
    const Accessor& accessor = accessors_[a];
    if (std::none_of(types.begin(), types.end(), [&](const char* t) { return accessor.type == t; })) {
      invalid(path, "accessor " + std::to_string(a) + " is " + accessor.type + ", not " + *types.begin());
    }
    if (std::none_of(componentTypes.begin(), componentTypes.end(),
                     [&](int t) { return accessor.componentType == t; })) {
      invalid(path, "accessor " + std::to_string(a) + " has component type " +
                        std::to_string(accessor.componentType) + ", which is not read there");
    }
  }

  void checkNodes() {
    const Json& nodes = collection("nodes");
    parent_.assign(nodes.size(), -1);
    for (size_t n = 0; n < nodes.size(); ++n) {
      const std::string path = item("nodes", n);
      const Json& node = nodes[n];
      const Json& children = indexList(node, "children", path, false);
      for (size_t c = 0; c < children.size(); ++c) {
        const std::string childPath = item(member(path, "children"), c);
        if (!children[c].is_number_unsigned() || children[c].get<std::uint64_t>() >= nodes.size()) {
          invalid(childPath, "is not a node index");
        }
        const auto child = children[c].get<size_t>();
        if (child == n) invalid(childPath, "is the node itself");
        if (parent_[child] >= 0) {
          invalid(childPath, "node " + std::to_string(child) + " already has the parent " +
                                 std::to_string(parent_[child]));
        }
        parent_[child] = static_cast<long long>(n);
      }
      ref(node, "mesh", "meshes", path, false);
      ref(node, "skin", "skins", path, false);
      ref(node, "camera", "cameras", path, false);
      numbers(node, "matrix", path, 16);
      numbers(node, "translation", path, 3);
      numbers(node, "rotation", path, 4);
      if (const Json* rotation = find(node, "rotation")) {
        double norm2 = 0.0;
        for (const Json& q : *rotation) norm2 += q.get<double>() * q.get<double>();
        if (!(norm2 > kMinQuaternionNorm2)) invalid(member(path, "rotation"), "is a zero quaternion");
      }
      numbers(node, "scale", path, 3);
      numbers(node, "weights", path, 0);
      if (const Json* ext = find(node, "extensions"); ext != nullptr && ext->is_object()) {
        if (const Json* light = find(*ext, "KHR_lights_punctual"); light != nullptr) {
          const std::string lightPath = member(member(path, "extensions"), "KHR_lights_punctual");
          const std::uint64_t index = natural(objectAt(*light, lightPath), "light", lightPath, std::nullopt);
          if (index >= lightCount())
            invalid(member(lightPath, "light"), "is not an index into KHR_lights_punctual.lights");
        }
      }
    }
    // One parent each: the nodes form a forest unless a parent chain returns to where it started.
    std::vector<char> state(nodes.size(), 0);    // 0 unseen, 1 on the current chain, 2 known to reach a root
    std::vector<size_t> depth(nodes.size(), 0);  // a root is at level 1
    for (size_t n = 0; n < nodes.size(); ++n) {
      std::vector<size_t> chain;
      long long at = static_cast<long long>(n);
      while (at >= 0 && state[static_cast<size_t>(at)] == 0) {
        state[static_cast<size_t>(at)] = 1;
        chain.push_back(static_cast<size_t>(at));
        at = parent_[static_cast<size_t>(at)];
      }
      if (at >= 0 && state[static_cast<size_t>(at)] == 1) {
        invalid(item("nodes", static_cast<size_t>(at)), "is its own ancestor (the children form a cycle)");
      }
      size_t level = at >= 0 ? depth[static_cast<size_t>(at)] : 0;
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        state[*it] = 2;
        depth[*it] = ++level;
        if (level > kMaxNodeDepth) {
          invalid(item("nodes", *it), "is nested deeper than " + std::to_string(kMaxNodeDepth) + " levels");
        }
      }
    }
  }

  size_t lightCount() const {
    const Json* ext = find(doc_, "extensions");
    if (ext == nullptr || !ext->is_object()) return 0;
    const Json* lights = find(*ext, "KHR_lights_punctual");
    if (lights == nullptr || !lights->is_object() || !lights->contains("lights") ||
        !(*lights)["lights"].is_array())
      return 0;
    return (*lights)["lights"].size();
  }

  void checkScenes() {
    const Json& scenes = collection("scenes");
    ref(doc_, "scene", "scenes", "", false);
    for (size_t s = 0; s < scenes.size(); ++s) {
      const std::string path = item("scenes", s);
      const Json& roots = indexList(scenes[s], "nodes", path, false);
      for (size_t r = 0; r < roots.size(); ++r) {
        const std::string rootPath = item(member(path, "nodes"), r);
        if (!roots[r].is_number_unsigned() || roots[r].get<std::uint64_t>() >= parent_.size()) {
          invalid(rootPath, "is not a node index");
        }
        if (parent_[roots[r].get<size_t>()] >= 0) invalid(rootPath, "is a child node, not a root");
      }
    }
  }

  void checkSkins() {
    const Json& skins = collection("skins");
    for (size_t s = 0; s < skins.size(); ++s) {
      const std::string path = item("skins", s);
      const Json& joints = indexList(skins[s], "joints", path, true);
      if (joints.empty()) invalid(member(path, "joints"), "is empty");
      for (size_t j = 0; j < joints.size(); ++j) {
        if (!joints[j].is_number_unsigned() || joints[j].get<std::uint64_t>() >= parent_.size()) {
          invalid(item(member(path, "joints"), j), "is not a node index");
        }
      }
      ref(skins[s], "skeleton", "nodes", path, false);
      if (const std::optional<size_t> ibm = ref(skins[s], "inverseBindMatrices", "accessors", path, false)) {
        expect(*ibm, member(path, "inverseBindMatrices"), {"MAT4"}, {kFloat});
        finite(*ibm, member(path, "inverseBindMatrices"));
        if (accessors_[*ibm].count < joints.size()) {
          invalid(member(path, "inverseBindMatrices"), "has " + std::to_string(accessors_[*ibm].count) +
                                                           " matrices for " + std::to_string(joints.size()) +
                                                           " joints");
        }
      }
    }
  }

  void checkMeshes() {
    const Json& meshes = collection("meshes");
    // The fewest joints of the skins a mesh is drawn with: its JOINTS values must index them all.
    std::vector<std::uint64_t> jointLimit(meshes.size(), kMaxCount);
    const Json& nodes = collection("nodes");
    for (const Json& node : nodes) {
      if (node.contains("mesh") && node.contains("skin")) {
        const auto mesh = node["mesh"].get<size_t>();
        jointLimit[mesh] = std::min<std::uint64_t>(
            jointLimit[mesh], collection("skins")[node["skin"].get<size_t>()]["joints"].size());
      }
    }
    for (size_t m = 0; m < meshes.size(); ++m) {
      const std::string path = item("meshes", m);
      const Json& primitives = indexList(meshes[m], "primitives", path, true);
      if (primitives.empty()) invalid(member(path, "primitives"), "is empty");
      numbers(meshes[m], "weights", path, 0);
      for (size_t p = 0; p < primitives.size(); ++p) {
        const std::string primitivePath = item(member(path, "primitives"), p);
        const Json& primitive = objectAt(primitives[p], primitivePath);
        const std::string attributesPath = member(primitivePath, "attributes");
        if (!primitive.contains("attributes")) invalid(attributesPath, "is missing");
        const Json& attributes = objectAt(primitive["attributes"], attributesPath);
        if (!attributes.contains("POSITION")) invalid(attributesPath, "has no POSITION");
        const size_t position = *ref(attributes, "POSITION", "accessors", attributesPath, true);
        expect(position, member(attributesPath, "POSITION"), {"VEC3"},
               {kFloat, kByte, kUnsignedByte, kShort, kUnsignedShort});
        const std::uint64_t vertices = accessors_[position].count;
        for (const auto& [name, value] : attributes.items()) {
          const std::string attributePath = member(attributesPath, name);
          const size_t a = *ref(attributes, name.c_str(), "accessors", attributesPath, true);
          if (accessors_[a].count != vertices) {
            invalid(attributePath, "has " + std::to_string(accessors_[a].count) + " elements for " +
                                       std::to_string(vertices) + " vertices");
          }
          if (name == "NORMAL") expect(a, attributePath, {"VEC3"}, {kFloat, kByte, kShort});
          if (name == "TANGENT") expect(a, attributePath, {"VEC4"}, {kFloat, kByte, kShort});
          if (name.rfind("JOINTS_", 0) == 0) {
            expect(a, attributePath, {"VEC4"}, {kUnsignedByte, kUnsignedShort});
            if (const std::optional<std::uint64_t> most = largest(a); most && *most >= jointLimit[m]) {
              invalid(attributePath, "joint " + std::to_string(*most) + " is past the " +
                                         std::to_string(jointLimit[m]) +
                                         " joints of the skin the mesh is drawn with");
            }
          }
          if (name.rfind("WEIGHTS_", 0) == 0)
            expect(a, attributePath, {"VEC4"}, {kFloat, kUnsignedByte, kUnsignedShort});
        }
        if (const std::optional<size_t> indices =
                ref(primitive, "indices", "accessors", primitivePath, false)) {
          expect(*indices, member(primitivePath, "indices"), {"SCALAR"},
                 {kUnsignedByte, kUnsignedShort, kUnsignedInt});
          if (const std::optional<std::uint64_t> most = largest(*indices); most && *most >= vertices) {
            invalid(member(primitivePath, "indices"), "index " + std::to_string(*most) + " is past the " +
                                                          std::to_string(vertices) + " vertices");
          }
        }
        if (natural(primitive, "mode", primitivePath, 4) > 6)
          invalid(member(primitivePath, "mode"), "is not 0-6");
        ref(primitive, "material", "materials", primitivePath, false);
        const Json& targets = indexList(primitive, "targets", primitivePath, false);
        for (size_t t = 0; t < targets.size(); ++t) {
          const std::string targetPath = item(member(primitivePath, "targets"), t);
          const Json& target = objectAt(targets[t], targetPath);
          for (const auto& [name, value] : target.items()) {
            const size_t a = *ref(target, name.c_str(), "accessors", targetPath, true);
            if (accessors_[a].count != vertices)
              invalid(member(targetPath, name), "does not have one element per vertex");
          }
        }
        if (const Json* ext = find(primitive, "extensions"); ext != nullptr && ext->is_object()) {
          if (const Json* draco = find(*ext, "KHR_draco_mesh_compression")) {
            const std::string dracoPath =
                member(member(primitivePath, "extensions"), "KHR_draco_mesh_compression");
            ref(objectAt(*draco, dracoPath), "bufferView", "bufferViews", dracoPath, true);
            const std::string dracoAttributes = member(dracoPath, "attributes");
            if (!draco->contains("attributes")) invalid(dracoAttributes, "is missing");
            for (const auto& [name, id] : objectAt((*draco)["attributes"], dracoAttributes).items()) {
              if (!id.is_number_unsigned()) invalid(member(dracoAttributes, name), "is not an attribute id");
            }
          }
        }
      }
    }
  }

  void checkAnimations() {
    const Json& animations = collection("animations");
    for (size_t a = 0; a < animations.size(); ++a) {
      const std::string path = item("animations", a);
      const Json& samplers = indexList(animations[a], "samplers", path, true);
      const Json& channels = indexList(animations[a], "channels", path, true);
      struct Keys {
        std::uint64_t input = 0;
        std::uint64_t outputs = 0;
        size_t output = 0;
        bool cubic = false;
      };
      std::vector<Keys> keys;
      for (size_t s = 0; s < samplers.size(); ++s) {
        const std::string samplerPath = item(member(path, "samplers"), s);
        const Json& sampler = objectAt(samplers[s], samplerPath);
        const size_t input = *ref(sampler, "input", "accessors", samplerPath, true);
        expect(input, member(samplerPath, "input"), {"SCALAR"}, {kFloat});
        finite(input, member(samplerPath, "input"));
        const size_t output = *ref(sampler, "output", "accessors", samplerPath, true);
        finite(output, member(samplerPath, "output"));
        const std::string interpolation = text(sampler, "interpolation", samplerPath, std::string("LINEAR"));
        if (interpolation != "LINEAR" && interpolation != "STEP" && interpolation != "CUBICSPLINE") {
          invalid(member(samplerPath, "interpolation"),
                  "is '" + interpolation + "', not LINEAR, STEP or CUBICSPLINE");
        }
        keys.push_back(
            {accessors_[input].count, accessors_[output].count, output, interpolation == "CUBICSPLINE"});
      }
      for (size_t c = 0; c < channels.size(); ++c) {
        const std::string channelPath = item(member(path, "channels"), c);
        const Json& channel = objectAt(channels[c], channelPath);
        const std::uint64_t s = natural(channel, "sampler", channelPath, std::nullopt);
        if (s >= keys.size())
          invalid(member(channelPath, "sampler"), "is not an index into the animation's samplers");
        const std::string targetPath = member(channelPath, "target");
        if (!channel.contains("target")) invalid(targetPath, "is missing");
        const Json& target = objectAt(channel["target"], targetPath);
        // The specification lets a channel without a node be ignored; Assimp 5.2 crashes on it.
        if (!target.contains("node"))
          invalid(member(targetPath, "node"), "is missing (Assimp 5.2 cannot read such a channel)");
        ref(target, "node", "nodes", targetPath, true);
        const std::string property = text(target, "path", targetPath, std::nullopt);
        const Keys& k = keys[static_cast<size_t>(s)];
        const std::uint64_t perKey = k.cubic ? 3 : 1;
        if (property == "translation" || property == "scale") {
          expect(k.output, member(targetPath, "path"), {"VEC3"},
                 {kFloat, kByte, kUnsignedByte, kShort, kUnsignedShort});
        } else if (property == "rotation") {
          expect(k.output, member(targetPath, "path"), {"VEC4"},
                 {kFloat, kByte, kUnsignedByte, kShort, kUnsignedShort});
          nonZeroQuaternions(k.output, k.cubic, item(member(path, "samplers"), static_cast<size_t>(s)));
        } else if (property == "weights") {
          expect(k.output, member(targetPath, "path"), {"SCALAR"},
                 {kFloat, kByte, kUnsignedByte, kShort, kUnsignedShort});
          if (k.outputs % (k.input * perKey) != 0)
            invalid(channelPath, "the morph weights are not a whole number per key");
          continue;
        } else {
          invalid(member(targetPath, "path"),
                  "is '" + property + "', not translation, rotation, scale or weights");
        }
        if (k.outputs != k.input * perKey) {
          invalid(channelPath, "sampler " + std::to_string(s) + " has " + std::to_string(k.outputs) +
                                   " values for " + std::to_string(k.input) + " key times");
        }
      }
    }
  }

  void checkTextureRefs(const Json& value, const std::string& path) {
    if (value.is_object()) {
      for (const auto& [key, child] : value.items()) {
        const std::string childPath = member(path, key);
        if (key.size() > 7 && key.compare(key.size() - 7, 7, "Texture") == 0 && child.is_object()) {
          ref(child, "index", "textures", childPath, true);
          natural(child, "texCoord", childPath, 0);
        }
        checkTextureRefs(child, childPath);
      }
    } else if (value.is_array()) {
      for (size_t i = 0; i < value.size(); ++i) checkTextureRefs(value[i], item(path, i));
    }
  }

  void checkMaterials() {
    const Json& materials = collection("materials");
    for (size_t m = 0; m < materials.size(); ++m) checkTextureRefs(materials[m], item("materials", m));
    const Json& textures = collection("textures");
    for (size_t t = 0; t < textures.size(); ++t) {
      const std::string path = item("textures", t);
      ref(textures[t], "source", "images", path, false);
      ref(textures[t], "sampler", "samplers", path, false);
      if (const Json* ext = find(textures[t], "extensions"); ext != nullptr && ext->is_object()) {
        for (const auto& [name, value] : ext->items()) {
          if (value.is_object())
            ref(value, "source", "images", member(member(path, "extensions"), name), false);
        }
      }
    }
    const Json& images = collection("images");
    for (size_t i = 0; i < images.size(); ++i) {
      const std::string path = item("images", i);
      if (ref(images[i], "bufferView", "bufferViews", path, false)) {
        text(images[i], "mimeType", path, std::nullopt);
      } else {
        text(images[i], "uri", path, std::nullopt);
      }
    }
    const Json& cameras = collection("cameras");
    for (size_t c = 0; c < cameras.size(); ++c) {
      const std::string path = item("cameras", c);
      const std::string type = text(cameras[c], "type", path, std::nullopt);
      if (type != "perspective" && type != "orthographic")
        invalid(member(path, "type"), "is not perspective or orthographic");
      if (!cameras[c].contains(type)) invalid(member(path, type), "is missing");
      objectAt(cameras[c][type], member(path, type));
    }
  }

  const Json& doc_;
  const Buffers& buffers_;
  const std::vector<View>& views_;
  std::vector<Accessor> accessors_;
  std::vector<long long> parent_;
};

}  // namespace

std::vector<Accessor> checkStructure(const Json& doc, const Buffers& buffers,
                                     const std::vector<View>& views) {
  Structure structure(doc, buffers, views);
  structure.check();
  return structure.accessors();
}

}  // namespace handoff::detail::gltf
