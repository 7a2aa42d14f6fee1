// Issue 20: meshopt-compressed glTF (EXT_meshopt_compression), which Assimp 5.2 cannot read, is
// decoded with meshoptimizer before Assimp. The compressed files are made here from a shipped GLB
// with meshoptimizer's encoders, the way gltfpack -c / -cc writes them (compressed streams in the
// BIN chunk, the buffer views pointing at a fallback buffer without data); the import must give
// the uncompressed file's skeleton, clips, meshes and humanoid map.
#include "asset_test_util.h"
#include "glb_test_util.h"
#include "support/files.h"

#include <meshoptimizer.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>

namespace handoff {
namespace {
using namespace asset_test;
using Json = nlohmann::json;

std::uint32_t u32(const std::string& data, size_t at) {
  std::uint32_t v = 0;
  std::memcpy(&v, data.data() + at, sizeof v);
  return v;
}

enum class Filters { None, Lossy };

/// The GLB with every buffer view meshopt-compressed: index views as TRIANGLES, vertex and
/// animation data as ATTRIBUTES. With Filters::Lossy, animation rotations use the QUATERNION filter
/// (16-bit components), animation translations and scales the EXPONENTIAL filter, and normals
/// the OCTAHEDRAL filter (8-bit, KHR_mesh_quantization), as gltfpack -cc does.
std::string compress(const std::string& file, Filters filters) {
  const Json source = Json::parse(file.substr(20, u32(file, 12)));
  const std::string bin = file.substr(28 + u32(file, 12), u32(file, 20 + u32(file, 12)));
  Json doc = source;
  std::map<size_t, std::string> role;  // accessor -> "indices", "rotation", "vector", "normal"
  std::map<size_t, size_t> vertexCount;
  for (const Json& mesh : doc["meshes"]) {
    for (const Json& primitive : mesh["primitives"]) {
      const auto vertices =
          doc["accessors"][primitive["attributes"]["POSITION"].get<size_t>()]["count"].get<size_t>();
      if (primitive.contains("indices") && primitive.value("mode", 4) == 4) {
        role[primitive["indices"].get<size_t>()] = "indices";
        vertexCount[primitive["indices"].get<size_t>()] = vertices;
      }
      if (primitive["attributes"].contains("NORMAL"))
        role[primitive["attributes"]["NORMAL"].get<size_t>()] = "normal";
    }
  }
  for (const Json& animation : doc["animations"]) {
    for (const Json& channel : animation["channels"]) {
      const auto output = animation["samplers"][channel["sampler"].get<size_t>()]["output"].get<size_t>();
      role[output] = channel["target"]["path"] == "rotation" ? "rotation" : "vector";
    }
  }
  std::string out;      // the new BIN: compressed streams and raw views
  size_t fallback = 0;  // size of the fallback buffer the compressed views point at
  const auto append = [&](const void* data, size_t size) {
    out.resize((out.size() + 3) / 4 * 4, '\0');
    const size_t at = out.size();
    out.append(static_cast<const char*>(data), size);
    return at;
  };
  bool quantized = false;
  // The view's compressed stream goes to the BIN chunk; the view itself points at `decoded` bytes
  // of the fallback buffer, which holds no data.
  const auto compressed = [&](Json& view, Json& accessor, Json ext, const std::vector<unsigned char>& encoded,
                              size_t decoded) {
    ext["buffer"] = 0;
    ext["byteOffset"] = append(encoded.data(), encoded.size());
    ext["byteLength"] = encoded.size();
    view["buffer"] = 1;
    view["byteOffset"] = fallback;
    view["byteLength"] = decoded;
    accessor["byteOffset"] = 0;
    fallback += (decoded + 3) / 4 * 4;
    view["extensions"] = {{"EXT_meshopt_compression", ext}};
  };
  for (size_t a = 0; a < doc["accessors"].size(); ++a) {
    Json& accessor = doc["accessors"][a];
    const auto v = accessor["bufferView"].get<size_t>();
    Json& view = doc["bufferViews"][v];
    const auto count = accessor["count"].get<size_t>();
    const auto type = accessor["type"].get<std::string>();
    const int componentType = accessor["componentType"].get<int>();
    const size_t components = type == "SCALAR" ? 1
                              : type == "VEC2" ? 2
                              : type == "VEC3" ? 3
                              : type == "VEC4" ? 4
                                               : 16;
    const size_t size = componentType == 5126 || componentType == 5125 ? 4 : componentType == 5121 ? 1 : 2;
    const char* data =
        bin.data() + view.value("byteOffset", size_t{0}) + accessor.value("byteOffset", size_t{0});
    std::vector<unsigned char> encoded;
    Json ext;
    std::vector<char> decoded(data, data + count * components * size);  // what the decoder must produce
    size_t stride = components * size;
    std::string mode = "ATTRIBUTES";
    std::string filter = "NONE";
    const std::string r = role.count(a) ? role[a] : "";
    if (r == "indices" && size >= 2) {
      std::vector<unsigned> indices(count);
      for (size_t i = 0; i < count; ++i) {
        if (size == 2) {
          std::uint16_t x = 0;
          std::memcpy(&x, data + 2 * i, 2);
          indices[i] = x;
        } else {
          std::memcpy(&indices[i], data + 4 * i, 4);
        }
      }
      encoded.resize(meshopt_encodeIndexBufferBound(count, vertexCount[a]));
      encoded.resize(meshopt_encodeIndexBuffer(encoded.data(), encoded.size(), indices.data(), count));
      mode = "TRIANGLES";
    } else {
      size_t elements = count;
      if (filters == Filters::Lossy && r == "rotation" && componentType == 5126) {
        decoded.assign(count * 8, 0);
        meshopt_encodeFilterQuat(decoded.data(), count, 8, 16, reinterpret_cast<const float*>(data));
        accessor["componentType"] = 5122;
        accessor["normalized"] = true;
        stride = 8;
        filter = "QUATERNION";
      } else if (filters == Filters::Lossy && r == "vector" && componentType == 5126) {
        // One exponent per float (stride 4), so no component loses bits to its neighbours'.
        elements = count * components;
        meshopt_encodeFilterExp(decoded.data(), elements, 4, 24, reinterpret_cast<const float*>(data));
        stride = 4;
        filter = "EXPONENTIAL";
      } else if (filters == Filters::Lossy && r == "normal" && componentType == 5126) {
        std::vector<float> normals(count * 4, 1.0F);
        for (size_t i = 0; i < count; ++i) std::memcpy(&normals[4 * i], data + 12 * i, 12);
        decoded.assign(count * 4, 0);
        meshopt_encodeFilterOct(decoded.data(), count, 4, 8, normals.data());
        accessor["componentType"] = 5120;
        accessor["normalized"] = true;
        view["byteStride"] = 4;
        stride = 4;
        filter = "OCTAHEDRAL";
        quantized = true;
      }
      if (stride % 4 != 0) {  // u8 indices, u16 VEC3 ...: kept uncompressed
        view["buffer"] = 0;
        view["byteOffset"] = append(data, decoded.size());
        view["byteLength"] = decoded.size();
        continue;
      }
      encoded.resize(meshopt_encodeVertexBufferBound(elements, stride));
      encoded.resize(
          meshopt_encodeVertexBuffer(encoded.data(), encoded.size(), decoded.data(), elements, stride));
      accessor.erase("min");
      accessor.erase("max");
      if (filter != "NONE") ext["filter"] = filter;
      ext["mode"] = mode;
      ext["count"] = elements;
      ext["byteStride"] = stride;
      compressed(view, accessor, ext, encoded, elements * stride);
      continue;
    }
    ext = {{"count", count}, {"byteStride", size}, {"mode", mode}};
    compressed(view, accessor, ext, encoded, count * size);
  }
  // Images and other views no accessor reads (textures): kept as they were.
  std::vector<bool> read(doc["bufferViews"].size(), false);
  for (const Json& accessor : doc["accessors"]) read[accessor["bufferView"].get<size_t>()] = true;
  for (size_t v = 0; v < read.size(); ++v) {
    if (read[v]) continue;
    Json& view = doc["bufferViews"][v];
    view["byteOffset"] =
        append(bin.data() + view.value("byteOffset", size_t{0}), view["byteLength"].get<size_t>());
    view["buffer"] = 0;
  }
  out.resize((out.size() + 3) / 4 * 4, '\0');
  doc["buffers"] = Json::array(
      {Json{{"byteLength", out.size()}},
       Json{{"byteLength", fallback}, {"extensions", {{"EXT_meshopt_compression", {{"fallback", true}}}}}}});
  doc["extensionsUsed"] = Json::array({"EXT_meshopt_compression"});
  doc["extensionsRequired"] = Json::array({"EXT_meshopt_compression"});
  if (quantized) {
    doc["extensionsUsed"].push_back("KHR_mesh_quantization");
    doc["extensionsRequired"].push_back("KHR_mesh_quantization");
  }
  return glb(doc, out);
}

/// Triangles each turned to its smallest rotation: meshopt's index codec keeps the triangle order
/// and winding but may rotate a triangle's vertices.
std::vector<std::uint32_t> triangles(std::vector<std::uint32_t> indices) {
  for (size_t t = 0; t + 2 < indices.size(); t += 3) {
    const std::array<std::uint32_t, 3> triangle{indices[t], indices[t + 1], indices[t + 2]};
    std::array<std::uint32_t, 3> best = triangle;
    for (size_t r = 1; r < 3; ++r)
      best = std::min(best, {triangle[r], triangle[(r + 1) % 3], triangle[(r + 2) % 3]});
    std::copy(best.begin(), best.end(), indices.begin() + static_cast<std::ptrdiff_t>(t));
  }
  return indices;
}

struct Difference {
  double rotation = 0.0;     ///< Largest key rotation difference. [rad]
  double translation = 0.0;  ///< Largest key translation difference. [m]
  double position = 0.0;     ///< Largest mesh vertex difference. [m]
  double normal = 0.0;       ///< Largest mesh normal difference. [rad]
};

Difference compare(const ImportedAsset& a, const ImportedAsset& b) {
  Difference d;
  EXPECT_EQ(a.skeleton.jointNames, b.skeleton.jointNames);
  EXPECT_EQ(a.skeleton.parents, b.skeleton.parents);
  for (int j = 0; j < std::min(a.skeleton.jointCount(), b.skeleton.jointCount()); ++j) {
    const Transform& x = a.skeleton.restLocal[static_cast<size_t>(j)];
    const Transform& y = b.skeleton.restLocal[static_cast<size_t>(j)];
    EXPECT_EQ(x.translation, y.translation) << a.skeleton.jointNames[static_cast<size_t>(j)];
    EXPECT_EQ(x.rotation, y.rotation) << a.skeleton.jointNames[static_cast<size_t>(j)];
  }
  EXPECT_EQ(a.hipHeight, b.hipHeight);
  EXPECT_EQ(a.clips.size(), b.clips.size());
  for (size_t c = 0; c < std::min(a.clips.size(), b.clips.size()); ++c) {
    EXPECT_EQ(a.clips[c].name, b.clips[c].name);
    EXPECT_EQ(a.clips[c].frameCount, b.clips[c].frameCount) << a.clips[c].name;
    EXPECT_EQ(a.clips[c].frameRate, b.clips[c].frameRate) << a.clips[c].name;
    if (a.clips[c].keys.size() != b.clips[c].keys.size()) continue;
    for (size_t k = 0; k < a.clips[c].keys.size(); ++k) {
      d.rotation =
          std::max(d.rotation, angleBetween(a.clips[c].keys[k].rotation, b.clips[c].keys[k].rotation));
      d.translation = std::max(d.translation,
                               glm::length(a.clips[c].keys[k].translation - b.clips[c].keys[k].translation));
    }
  }
  EXPECT_EQ(a.meshes.size(), b.meshes.size());
  for (size_t m = 0; m < std::min(a.meshes.size(), b.meshes.size()); ++m) {
    EXPECT_EQ(triangles(a.meshes[m].indices), triangles(b.meshes[m].indices));
    EXPECT_EQ(a.meshes[m].jointIndices, b.meshes[m].jointIndices);
    if (a.meshes[m].positions.size() != b.meshes[m].positions.size()) {
      ADD_FAILURE() << "mesh " << m << " vertex count";
      continue;
    }
    for (size_t v = 0; v < a.meshes[m].positions.size(); ++v) {
      d.position = std::max(d.position, glm::length(a.meshes[m].positions[v] - b.meshes[m].positions[v]));
      const double cosine = std::clamp(glm::dot(a.meshes[m].normals[v], b.meshes[m].normals[v]), -1.0, 1.0);
      d.normal = std::max(d.normal, std::acos(cosine));
    }
  }
  return d;
}

void expectSameMap(const ImportedAsset& a, const ImportedAsset& b) {
  Result<HumanoidMap> x = mapHumanoid(a.skeleton);
  Result<HumanoidMap> y = mapHumanoid(b.skeleton);
  ASSERT_TRUE(x.ok()) << x.error();
  ASSERT_TRUE(y.ok()) << y.error();
  EXPECT_EQ(x->joint, y->joint);
}

const char* kRobot = "robot-expressive/RobotExpressive.glb";

TEST(GltfMeshopt, LosslessCompressionImportsExactlyAsTheUncompressedFile) {
  const std::string original = test::readFile(dataPath(kRobot));
  const std::string packed = compress(original, Filters::None);
  std::printf("RobotExpressive.glb: %zu bytes, meshopt-compressed %zu bytes\n", original.size(),
              packed.size());
  ASSERT_LT(packed.size(), original.size());
  Result<ImportedAsset> plain = importFileData(original, "robot.glb");
  Result<ImportedAsset> decoded = importFileData(packed, "robot_meshopt.glb");
  ASSERT_TRUE(plain.ok()) << plain.error();
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  EXPECT_TRUE(std::any_of(decoded->warnings.begin(), decoded->warnings.end(), [](const std::string& w) {
    return w.find("meshopt-compressed") != std::string::npos;
  }));
  const Difference d = compare(*plain, *decoded);
  std::printf(
      "lossless: %d joints, %zu clips, max key rotation %.3g rad, translation %.3g m, vertex %.3g m, "
      "normal %.3g rad\n",
      decoded->skeleton.jointCount(), decoded->clips.size(), d.rotation, d.translation, d.position, d.normal);
  EXPECT_EQ(d.rotation, 0.0);
  EXPECT_EQ(d.translation, 0.0);
  EXPECT_EQ(d.position, 0.0);
  // The file's normals come through bit for bit; those Assimp generates for meshes without any
  // (aiProcess_GenSmoothNormals) sum their faces in the rotated vertex order: float round-off.
  EXPECT_LT(d.normal, 1e-6);
  expectSameMap(*plain, *decoded);
}

TEST(GltfMeshopt, FilteredAndQuantizedDataIsDecodedWithinItsPrecision) {
  const std::string original = test::readFile(dataPath(kRobot));
  const std::string packed = compress(original, Filters::Lossy);
  Result<ImportedAsset> plain = importFileData(original, "robot.glb");
  Result<ImportedAsset> decoded = importFileData(packed, "robot_meshopt_cc.glb");
  ASSERT_TRUE(plain.ok()) << plain.error();
  ASSERT_TRUE(decoded.ok()) << decoded.error();
  const Difference d = compare(*plain, *decoded);
  std::printf(
      "filtered: max key rotation %.3g rad (16-bit quaternion filter), translation %.3g m (exponential), "
      "normal %.3g rad (8-bit octahedral)\n",
      d.rotation, d.translation, d.normal);
  // 16-bit components give about 1e-4 rad; the 24-bit exponential filter float precision (the
  // robot's keys are up to a few metres: 1e-6 m); 8-bit octahedral normals about 1 degree.
  EXPECT_LT(d.rotation, 1e-3);
  EXPECT_GT(d.rotation, 0.0);  // the filter was applied, not skipped
  EXPECT_LT(d.translation, 1e-5);
  EXPECT_LT(d.normal, 0.035);
  EXPECT_GT(d.normal, 0.0);
  EXPECT_EQ(d.position, 0.0);
  expectSameMap(*plain, *decoded);
}

/// The compressed GLB's JSON, edited by `edit`, with the same BIN.
std::string edited(const std::string& file, const std::function<void(Json&)>& edit) {
  Json doc = Json::parse(file.substr(20, u32(file, 12)));
  edit(doc);
  return glb(doc, file.substr(28 + u32(file, 12), u32(file, 20 + u32(file, 12))));
}

size_t firstCompressed(const Json& doc, const std::string& mode) {
  for (size_t v = 0; v < doc["bufferViews"].size(); ++v) {
    const Json& view = doc["bufferViews"][v];
    if (view.contains("extensions") && view["extensions"]["EXT_meshopt_compression"]["mode"] == mode)
      return v;
  }
  return 0;
}

TEST(GltfMeshopt, ModesFiltersAndCodecVersionsItCannotDecodeAreNamed) {
  const std::string packed = compress(test::readFile(dataPath(kRobot)), Filters::None);
  const auto error = [](const std::string& file) {
    Result<ImportedAsset> imported = importFileData(file, "packed.glb");
    EXPECT_FALSE(imported.ok());
    return imported.ok() ? std::string() : imported.error();
  };
  const std::string filter = error(edited(packed, [](Json& doc) {
    doc["bufferViews"][firstCompressed(doc, "ATTRIBUTES")]["extensions"]["EXT_meshopt_compression"]
       ["filter"] = "COLOR";
  }));
  EXPECT_NE(filter.find("filter: is 'COLOR'"), std::string::npos) << filter;
  EXPECT_NE(filter.find("EXT_meshopt_compression"), std::string::npos) << filter;
  const std::string mode = error(edited(packed, [](Json& doc) {
    doc["bufferViews"][firstCompressed(doc, "TRIANGLES")]["extensions"]["EXT_meshopt_compression"]["mode"] =
        "STRIPS";
  }));
  EXPECT_NE(mode.find("mode: is 'STRIPS'"), std::string::npos) << mode;
  // A vertex stream of codec version 1 (meshoptimizer 0.23's, KHR_meshopt_compression): header 0xa1.
  Json doc = Json::parse(packed.substr(20, u32(packed, 12)));
  const Json& ext =
      doc["bufferViews"][firstCompressed(doc, "ATTRIBUTES")]["extensions"]["EXT_meshopt_compression"];
  std::string newer = packed;
  newer[28 + u32(packed, 12) + ext["byteOffset"].get<size_t>()] = static_cast<char>(0xa1);
  const std::string version = error(newer);
  EXPECT_NE(version.find("codec version"), std::string::npos) << version;
  const std::string malformed = error(edited(packed, [](Json& doc) {
    doc["bufferViews"][firstCompressed(doc, "ATTRIBUTES")]["extensions"]["EXT_meshopt_compression"]
       ["byteLength"] = 8;
  }));
  EXPECT_NE(malformed.find("malformed"), std::string::npos) << malformed;
  std::printf("%s\n%s\n%s\n%s\n", filter.c_str(), mode.c_str(), version.c_str(), malformed.c_str());
}

}  // namespace
}  // namespace handoff
