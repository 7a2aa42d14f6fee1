// KHR_draco_mesh_compression decoded with Draco into plain accessors before Assimp, which cannot
// read it (gltf_internal.h, decodeDraco).
//
// The decoder runs on the caller's bytes in this process, so what it is given is bounded first:
// the compressed bytes must be a buffer view's, the accessors' counts (what the decoded mesh must
// match, as the extension requires) bound the output before decoding, and the decoded total is
// bounded as for meshopt (kMaxDecodedBytes).
#include "rig/gltf_internal.h"

#include <draco/compression/decode.h>
#include <draco/mesh/mesh.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace handoff::detail::gltf {
namespace {

constexpr const char* kDraco = "KHR_draco_mesh_compression";

/// Compressed data decodes to at most this many times its size (Draco's best ratios on meshes
/// are some tens; the slack is for tiny meshes). [ratio]
constexpr std::uint64_t kMaxDracoRatio = 1024;

template <class T>
void putValues(const draco::PointAttribute& attribute, std::uint64_t points, size_t components,
               std::string& bytes, const std::string& path) {
  bytes.assign(static_cast<size_t>(points) * components * sizeof(T), '\0');
  std::vector<T> value(components);
  for (std::uint64_t p = 0; p < points; ++p) {
    const draco::AttributeValueIndex index =
        attribute.mapped_index(draco::PointIndex(static_cast<std::uint32_t>(p)));
    if (index.value() >= attribute.size() ||
        !attribute.ConvertValue<T>(index, static_cast<std::int8_t>(components), value.data())) {
      invalid(path, "Draco attribute value " + std::to_string(index.value()) + " of point " +
                        std::to_string(p) + " cannot be read as " + std::to_string(components) +
                        " components");
    }
    std::memcpy(bytes.data() + p * components * sizeof(T), value.data(), components * sizeof(T));
  }
}

}  // namespace

size_t decodeDraco(const Json& doc, const Buffers& buffers, const std::vector<View>& views, Json& out,
                   const std::function<size_t(std::string_view)>& append, std::uint64_t& decodedTotal) {
  const Json* meshes = find(doc, "meshes");
  if (meshes == nullptr) return 0;
  size_t decoded = 0;
  for (size_t m = 0; m < meshes->size(); ++m) {
    const Json& primitives = (*meshes)[m]["primitives"];
    for (size_t p = 0; p < primitives.size(); ++p) {
      const Json& primitive = primitives[p];
      const Json* ext = find(primitive, "extensions");
      if (ext == nullptr || !ext->is_object() || !ext->contains(kDraco)) continue;
      const std::string primitivePath = item(member(item("meshes", m), "primitives"), p);
      const std::string path = member(member(primitivePath, "extensions"), kDraco);
      const Json& draco = (*ext)[kDraco];
      const auto viewIndex = draco["bufferView"].get<size_t>();  // checked by checkStructure
      const std::optional<std::string_view> compressed = viewBytes(buffers, views, viewIndex);
      if (!compressed) invalid(member(path, "bufferView"), "is itself compressed (meshopt): not read");
      const std::uint64_t mode = natural(primitive, "mode", primitivePath, 4);
      if (mode != 4)
        invalid(member(primitivePath, "mode"), "is not TRIANGLES (4) on a Draco-compressed primitive");

      // The output the accessors announce, bounded before the decoder runs.
      const Json& attributes = primitive["attributes"];
      const Json& accessors = doc["accessors"];
      const std::uint64_t points =
          accessors[attributes["POSITION"].get<size_t>()]["count"].get<std::uint64_t>();
      std::uint64_t announced = 0;
      for (const auto& [name, index] : attributes.items()) {
        const Json& accessor = accessors[index.get<size_t>()];
        announced +=
            accessor["count"].get<std::uint64_t>() * componentCount(accessor["type"].get<std::string>()) * 4;
      }
      const bool hasIndices = primitive.contains("indices");
      const size_t indicesAccessor = hasIndices ? primitive["indices"].get<size_t>() : 0;
      if (hasIndices) announced += accessors[indicesAccessor]["count"].get<std::uint64_t>() * 4;
      decodedTotal += announced;
      if (announced > kMaxDracoRatio * compressed->size() + 65536 || decodedTotal > kMaxDecodedBytes) {
        invalid(path, "its accessors announce " + std::to_string(announced) + " decoded bytes from " +
                          std::to_string(compressed->size()) +
                          " compressed bytes: more than Draco data can hold");
      }

      draco::DecoderBuffer buffer;
      buffer.Init(compressed->data(), compressed->size());
      const draco::StatusOr<draco::EncodedGeometryType> type =
          draco::Decoder::GetEncodedGeometryType(&buffer);
      if (!type.ok() || type.value() != draco::TRIANGULAR_MESH)
        invalid(path, "the Draco data is not a triangle mesh");
      draco::Decoder decoder;
      draco::StatusOr<std::unique_ptr<draco::Mesh>> result = decoder.DecodeMeshFromBuffer(&buffer);
      if (!result.ok()) invalid(path, "Draco cannot decode it: " + result.status().error_msg_string());
      const std::unique_ptr<draco::Mesh> mesh = std::move(result).value();
      if (mesh->num_points() != points) {
        invalid(path, "decodes to " + std::to_string(mesh->num_points()) + " vertices, POSITION's count is " +
                          std::to_string(points));
      }

      Json& target = out["meshes"][m]["primitives"][p];
      const std::string dracoAttributes = member(path, "attributes");
      for (const auto& [name, id] : draco["attributes"].items()) {
        if (!attributes.contains(name))
          invalid(member(dracoAttributes, name), "names no attribute of the primitive");
        const auto a = attributes[name].get<size_t>();
        const std::string attributePath = member(dracoAttributes, name);
        const draco::PointAttribute* attribute = mesh->GetAttributeByUniqueId(id.get<std::uint32_t>());
        if (attribute == nullptr) invalid(attributePath, "is not an attribute id of the Draco data");
        const Json& accessor = accessors[a];
        const size_t components = componentCount(accessor["type"].get<std::string>());
        if (static_cast<size_t>(attribute->num_components()) != components) {
          invalid(attributePath, "has " + std::to_string(attribute->num_components()) +
                                     " components, accessor " + std::to_string(a) + " is " +
                                     accessor["type"].get<std::string>());
        }
        std::string bytes;
        auto componentType = accessor["componentType"].get<long long>();
        if (name.rfind("JOINTS_", 0) == 0 && componentType == kUnsignedByte) {
          putValues<std::uint8_t>(*attribute, points, components, bytes, attributePath);
        } else if (name.rfind("JOINTS_", 0) == 0) {
          putValues<std::uint16_t>(*attribute, points, components, bytes, attributePath);
          componentType = kUnsignedShort;
        } else {
          putValues<float>(*attribute, points, components, bytes, attributePath);
          if (componentType != kFloat) {
            // Quantized in the file: the values are now floats (min and max were in its units).
            out["accessors"][a].erase("min");
            out["accessors"][a].erase("max");
          }
          componentType = kFloat;
          out["accessors"][a].erase("normalized");
        }
        out["bufferViews"].push_back(
            {{"buffer", 0}, {"byteOffset", append(bytes)}, {"byteLength", bytes.size()}});
        Json& written = out["accessors"][a];
        written["bufferView"] = out["bufferViews"].size() - 1;
        written["byteOffset"] = 0;
        written["componentType"] = componentType;
        written["count"] = points;
      }
      std::string indices(static_cast<size_t>(mesh->num_faces()) * 3 * sizeof(std::uint32_t), '\0');
      for (draco::FaceIndex f(0); f < mesh->num_faces(); ++f) {
        const draco::Mesh::Face& face = mesh->face(f);
        for (size_t k = 0; k < 3; ++k) {
          const std::uint32_t v = face[k].value();
          std::memcpy(indices.data() + (static_cast<size_t>(f.value()) * 3 + k) * sizeof v, &v, sizeof v);
        }
      }
      if (indices.empty()) invalid(path, "the Draco data has no triangle");
      out["bufferViews"].push_back(
          {{"buffer", 0}, {"byteOffset", append(indices)}, {"byteLength", indices.size()}});
      const Json indexAccessor = {{"bufferView", out["bufferViews"].size() - 1},
                                  {"componentType", kUnsignedInt},
                                  {"count", static_cast<std::uint64_t>(mesh->num_faces()) * 3},
                                  {"type", "SCALAR"}};
      if (hasIndices) {
        out["accessors"][indicesAccessor] = indexAccessor;
      } else {
        out["accessors"].push_back(indexAccessor);
        target["indices"] = out["accessors"].size() - 1;
      }
      target["extensions"].erase(kDraco);
      if (target["extensions"].empty()) target.erase("extensions");
      ++decoded;
    }
  }
  return decoded;
}

}  // namespace handoff::detail::gltf
