// Issue 27: the loaders read only what they may. A glTF file's external buffers and images are
// regular files inside its own folder (findings 2 and 3: /etc/passwd through '..', /dev/zero, a
// FIFO, a symbolic link out); the BVH joint tree, the glTF node tree and JSON nest to a bound
// instead of overflowing the stack (finding 5); absurd values are refused with the field named
// (finding 12: frame times, non-finite matrices and keys, zero quaternions).
#include "handoff/import.h"
#include "handoff/rig.h"
#include "support/files.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace handoff {
namespace loader_limits_test {
namespace {

namespace fs = std::filesystem;

void writeBytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64(const std::string& bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size(); i += 3) {
    std::uint32_t n = static_cast<std::uint8_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<std::uint8_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) n |= static_cast<std::uint8_t>(bytes[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[n & 63] : '=';
  }
  return out;
}

std::string unbase64(std::string_view text) {
  std::string out;
  std::uint32_t bits = 0;
  int count = 0;
  for (const char c : text) {
    const size_t at = kAlphabet.find(c);
    if (at == std::string_view::npos) break;
    bits = (bits << 6) | static_cast<std::uint32_t>(at);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out.push_back(static_cast<char>((bits >> count) & 0xFF));
    }
  }
  return out;
}

ImportOptions direct() {
  ImportOptions options;
  options.isolateParser = false;  // a crash or a hang would be this test's
  options.requireHumanScale = false;
  return options;
}

// ------------------------------------------------------------------------------------------------
// External buffer and image URIs (findings 2 and 3).

// The fuzz corpus's animated.gltf: three nodes, one 40-byte buffer as a data URI that its
// accessors read, with the buffer's URI replaced by `uri`.
class ExternalUri : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("handoff_loader_limits_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    folder_ = root_ / "a" / "b" / "model";
    fs::create_directories(folder_);
    const std::string corpus =
        test::readFile(std::string(HANDOFF_SOURCE_DIR) + "/tests/fuzz/corpus/import/animated.gltf");
    json_ = corpus.substr(1);  // the fuzzer's first byte picks the format
    const size_t start = json_.find("\"data:application/octet-stream;base64,");
    ASSERT_NE(start, std::string::npos);
    const size_t end = json_.find('"', start + 1);
    dataUri_ = json_.substr(start, end + 1 - start);
    // The 40 bytes the data URI holds, for a good external .bin.
    const Result<ImportedAsset> fromMemory = importFileData(json_, "animated.gltf", direct());
    ASSERT_TRUE(fromMemory.ok()) << fromMemory.error();
    joints_ = fromMemory->skeleton.jointCount();
  }
  void TearDown() override { fs::remove_all(root_); }

  /// Imports the model with its buffer's uri replaced; "ok" or the error.
  std::string importWith(const std::string& uri, const std::string& name = "model.gltf") {
    std::string json = json_;
    json.replace(json.find(dataUri_), dataUri_.size(), "\"" + uri + "\"");
    writeBytes(folder_ / name, json);
    const Result<ImportedAsset> imported = importFile((folder_ / name).string(), direct());
    if (imported.ok()) {
      EXPECT_EQ(imported->skeleton.jointCount(), joints_);
      return "ok";
    }
    return imported.error();
  }

  fs::path root_;
  fs::path folder_;
  std::string json_;
  std::string dataUri_;
  int joints_ = 0;
};

constexpr const char* kRefused = "which is not a regular file inside the glTF file's folder";

// External buffers are read in this process, before the worker: no more than the worker may
// hold (ImportOptions::parserMemoryLimit), checked against byteLength before reading.
TEST_F(ExternalUri, TheExternalBuffersAreBoundedByTheWorkersMemoryLimit) {
  const std::string decoded = unbase64(dataUri_.substr(dataUri_.find(',') + 1));
  writeBytes(folder_ / "animated.bin", decoded);
  std::string json = json_;
  json.replace(json.find(dataUri_), dataUri_.size(), "\"animated.bin\"");
  writeBytes(folder_ / "model.gltf", json);
  ImportOptions options = direct();
  options.parserMemoryLimit = 30.0 / (1024.0 * 1024.0);  // 30 bytes, under the 40-byte buffer
  const Result<ImportedAsset> refused = importFile((folder_ / "model.gltf").string(), options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().find("byteLength: is 40: the external buffers may hold 30 bytes in all"),
            std::string::npos)
      << refused.error();
  options.parserMemoryLimit = 40.0 / (1024.0 * 1024.0);  // exactly the buffer
  const Result<ImportedAsset> read = importFile((folder_ / "model.gltf").string(), options);
  EXPECT_TRUE(read.ok()) << read.error();
}

TEST_F(ExternalUri, AGoodBinBesideTheFileLoads) {
  const std::string decoded = unbase64(dataUri_.substr(dataUri_.find(',') + 1));
  ASSERT_EQ(decoded.size(), 40U);
  writeBytes(folder_ / "animated.bin", decoded);
  EXPECT_EQ(importWith("animated.bin"), "ok");
  fs::create_directories(folder_ / "buffers");
  writeBytes(folder_ / "buffers" / "animated data.bin", decoded);
  EXPECT_EQ(importWith("buffers/animated%20data.bin"), "ok");
  // A link inside the folder to a file inside it is a file inside it.
  fs::create_symlink(folder_ / "animated.bin", folder_ / "link.bin");
  EXPECT_EQ(importWith("link.bin"), "ok");
  // One byte short of byteLength: refused, without saying how long the file is.
  writeBytes(folder_ / "short.bin", decoded.substr(0, decoded.size() - 1));
  const std::string shortError = importWith("short.bin");
  EXPECT_NE(shortError.find("buffers[0].byteLength: is 40 but the file 'short.bin' is shorter"),
            std::string::npos)
      << shortError;
}

TEST_F(ExternalUri, EtcPasswdThroughDotDotIsRefusedWithoutItsSize) {
  ASSERT_TRUE(fs::exists("/etc/passwd"));
  const std::string error = importWith("../../../../../../../../../../etc/passwd");
  // Before: the first 40 bytes of /etc/passwd became the model's vertices and keys.
  EXPECT_NE(error.find("buffers[0].uri: names '../../../../../../../../../../etc/passwd', " +
                       std::string(kRefused)),
            std::string::npos)
      << error;
  EXPECT_EQ(error.find(std::to_string(fs::file_size("/etc/passwd"))), std::string::npos) << error;
  // A file that does not exist gets the same words: the error says nothing of what is outside.
  const std::string missing = importWith("../../../../../../../../../../etc/no_such_file_here");
  EXPECT_EQ(missing.substr(0, missing.find("names")), error.substr(0, error.find("names")));
  EXPECT_EQ(missing.substr(missing.find("', which")), error.substr(error.find("', which")));
  // '..' in any place, percent-encoded or not.
  EXPECT_NE(importWith("sub/../../b/model/x.bin").find(kRefused), std::string::npos);
  EXPECT_NE(importWith("%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd").find(kRefused),
            std::string::npos);
}

TEST_F(ExternalUri, AbsolutePathsAndSchemesAreRefused) {
  EXPECT_NE(importWith("/etc/passwd").find(kRefused), std::string::npos);
  EXPECT_NE(importWith("file:///etc/passwd").find(kRefused), std::string::npos);
  EXPECT_NE(importWith("..\\\\..\\\\etc\\\\passwd").find(kRefused), std::string::npos);
}

TEST_F(ExternalUri, DevZeroIsRefusedAtOnce) {
  // Before: read until killed, about 100 MB/s.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(importWith("/dev/zero").find(kRefused), std::string::npos);
  EXPECT_NE(importWith("../../../../../../../../../../dev/zero").find(kRefused), std::string::npos);
  // A link beside the file to a device is a link out of the folder.
  fs::create_symlink("/dev/zero", folder_ / "zero.bin");
  EXPECT_NE(importWith("zero.bin").find(kRefused), std::string::npos);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("three /dev/zero URIs refused in %.4f s\n", seconds);
  EXPECT_LT(seconds, 2.0);
}

TEST_F(ExternalUri, AFifoIsRefusedWithoutWaiting) {
  const fs::path fifo = folder_ / "pipe.bin";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto pending = std::async(std::launch::async, [&] { return importWith("pipe.bin"); });
  if (pending.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "the import waits on the FIFO (before: for ever, holding the workbench's lock)";
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // lets the reader go
    if (writer >= 0) ::close(writer);
  }
  EXPECT_NE(pending.get().find(kRefused), std::string::npos);
}

TEST_F(ExternalUri, ALinkOutOfTheFolderIsRefused) {
  fs::create_symlink("/etc/passwd", folder_ / "passwd.bin");
  EXPECT_NE(importWith("passwd.bin").find(kRefused), std::string::npos);
  // A link to a folder outside, then a file in it.
  fs::create_symlink("/etc", folder_ / "etc");
  EXPECT_NE(importWith("etc/passwd").find(kRefused), std::string::npos);
}

TEST_F(ExternalUri, ImageUrisStayInsideTheFolder) {
  std::string json = json_;
  json.insert(json.rfind('}'), R"(, "images": [{"uri": "../../../../../../etc/passwd"}])");
  writeBytes(folder_ / "image.gltf", json);
  const Result<ImportedAsset> imported = importFile((folder_ / "image.gltf").string(), direct());
  ASSERT_FALSE(imported.ok());
  EXPECT_NE(
      imported.error().find("images[0].uri: names '../../../../../../etc/passwd', " + std::string(kRefused)),
      std::string::npos)
      << imported.error();
}

// ------------------------------------------------------------------------------------------------
// Depth bounds (finding 5).

std::string bvhChain(int levels, const std::string& frameTime = "0.033333") {
  std::string text = "HIERARCHY\n";
  for (int i = 0; i < levels; ++i) {
    text += i == 0 ? "ROOT J0\n{\n" : "JOINT J" + std::to_string(i) + "\n{\n";
    text += "OFFSET 0 1 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n";
  }
  text += "End Site\n{\nOFFSET 0 1 0\n}\n";
  for (int i = 0; i < levels; ++i) text += "}\n";
  text += "MOTION\nFrames: 1\nFrame Time: " + frameTime + "\n";
  for (int i = 0; i < levels; ++i) text += "0 0 0 ";
  text += "\n";
  return text;
}

TEST(LoaderDepth, ATenThousandLevelBvhChainIsAnError) {
  // Before: SIGSEGV in the recursive joint parser (789 KB of text).
  const Result<ImportedAsset> deep = importBvhText(bvhChain(10000), "deep.bvh", direct());
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.error().find("deep.bvh:"), std::string::npos) << deep.error();
  EXPECT_NE(deep.error().find("joints nested deeper than 256 levels"), std::string::npos) << deep.error();
  // 256 levels are read.
  const Result<ImportedAsset> bound = importBvhText(bvhChain(256), "bound.bvh", direct());
  EXPECT_TRUE(bound.ok() || bound.error().find("deeper") == std::string::npos) << bound.error();
}

/// A glTF document of `levels` nodes, each the only child of the one before.
std::string gltfNodeChain(int levels) {
  std::string nodes;
  for (int i = 0; i < levels; ++i) {
    if (i > 0) nodes += ",";
    nodes += "{\"name\": \"n" + std::to_string(i) + "\"" +
             (i + 1 < levels ? ", \"children\": [" + std::to_string(i + 1) + "]" : std::string()) + "}";
  }
  return R"({"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [)" + nodes + "]}";
}

TEST(LoaderDepth, ADeepGltfNodeTreeIsAnError) {
  const Result<ImportedAsset> deep = importFileData(gltfNodeChain(5000), "deep.gltf", direct());
  ASSERT_FALSE(deep.ok());
  EXPECT_NE(deep.error().find("deep.gltf: nodes[256]: is nested deeper than 256 levels"), std::string::npos)
      << deep.error();
}

TEST(LoaderDepth, DeeplyNestedGltfJsonIsAnError) {
  for (const char* open : {"[", "{\"a\":"}) {
    std::string extras;
    const int levels = 100000;
    for (int i = 0; i < levels; ++i) extras += open;
    extras += "0";
    for (int i = 0; i < levels; ++i) extras += open[0] == '[' ? "]" : "}";
    const std::string json = R"({"asset": {"version": "2.0"}, "materials": [{"extras": )" + extras + "}]}";
    const Result<ImportedAsset> deep = importFileData(json, "deep.gltf", direct());
    ASSERT_FALSE(deep.ok());
    EXPECT_NE(deep.error().find("deep.gltf: the glTF JSON nests arrays and objects deeper than 64 levels"),
              std::string::npos)
        << deep.error();
  }
}

TEST(LoaderDepth, JsonTooDeepSkipsStringsAndEscapes) {
  EXPECT_EQ(jsonTooDeep("[[[]]]", 3), std::nullopt);
  EXPECT_EQ(jsonTooDeep("[[[[]]]]", 3), std::optional<size_t>(3));
  EXPECT_EQ(jsonTooDeep(R"(["[[[[\"[[[[", {"k": "{{{{"}])", 2), std::nullopt);
  EXPECT_EQ(jsonTooDeep(R"(["\\", [[[]]]])", 3), std::optional<size_t>(9));
  EXPECT_EQ(jsonTooDeep("]]]]][[", 1), std::optional<size_t>(6));  // stray closers do not buy depth
}

// ------------------------------------------------------------------------------------------------
// Absurd values (finding 12).

TEST(LoaderValues, BvhFrameTimeOutsideItsRangeIsRefused) {
  for (const char* time : {"1e-300", "1e300", "0.00001", "61"}) {
    const Result<ImportedAsset> bad = importBvhText(bvhChain(3, time), "t.bvh", direct());
    ASSERT_FALSE(bad.ok()) << time;
    EXPECT_NE(bad.error().find(std::string("Frame Time '") + time + "' is outside [0.0001, 60] s"),
              std::string::npos)
        << bad.error();
  }
  for (const char* time : {"0.0001", "0.033333", "60"}) {
    const Result<ImportedAsset> good = importBvhText(bvhChain(3, time), "t.bvh", direct());
    EXPECT_TRUE(good.ok() || good.error().find("Frame Time") == std::string::npos) << good.error();
  }
}

/// Two joints with a skin, inverse bind matrices and one rotation channel of two keys (LINEAR),
/// from the given values.
std::string skinnedGltf(const std::array<float, 32>& ibm, std::array<float, 2> times,
                        std::array<float, 8> keys, const std::string& rootRotation = "[0, 0, 0, 1]") {
  std::string bin(reinterpret_cast<const char*>(ibm.data()), sizeof ibm);
  bin.append(reinterpret_cast<const char*>(times.data()), sizeof times);
  bin.append(reinterpret_cast<const char*>(keys.data()), sizeof keys);
  return R"({"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [0]}],
    "nodes": [{"name": "Hips", "children": [1], "rotation": )" +
         rootRotation + R"(}, {"name": "Spine", "translation": [0, 0.2, 0]}],
    "skins": [{"joints": [0, 1], "inverseBindMatrices": 0}],
    "buffers": [{"byteLength": 168, "uri": "data:application/octet-stream;base64,)" +
         base64(bin) + R"("}],
    "bufferViews": [{"buffer": 0, "byteLength": 128}, {"buffer": 0, "byteOffset": 128, "byteLength": 8},
                    {"buffer": 0, "byteOffset": 136, "byteLength": 32}],
    "accessors": [{"bufferView": 0, "componentType": 5126, "count": 2, "type": "MAT4"},
                  {"bufferView": 1, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0], "max": [1]},
                  {"bufferView": 2, "componentType": 5126, "count": 2, "type": "VEC4"}],
    "animations": [{"samplers": [{"input": 1, "output": 2}],
                    "channels": [{"sampler": 0, "target": {"node": 1, "path": "rotation"}}]}]})";
}

TEST(LoaderValues, NonFiniteMatricesAndKeysAndZeroQuaternionsAreRefused) {
  std::array<float, 32> ibm{};
  for (int m = 0; m < 2; ++m) {
    for (int d = 0; d < 4; ++d) ibm[static_cast<size_t>(16 * m + 5 * d)] = 1.0f;
  }
  const std::array<float, 2> times{0.0f, 1.0f};
  const std::array<float, 8> keys{0, 0, 0, 1, 0, 0.7071f, 0, 0.7071f};
  const auto error = [](const std::string& json) {
    const Result<ImportedAsset> imported = importFileData(json, "t.gltf", direct());
    return imported.ok() ? std::string("ok") : imported.error();
  };
  EXPECT_EQ(error(skinnedGltf(ibm, times, keys)), "ok");

  constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::array<float, 32> badIbm = ibm;
  badIbm[21] = kNan;
  EXPECT_NE(
      error(skinnedGltf(badIbm, times, keys))
          .find(
              "skins[0].inverseBindMatrices: accessor 0 element 1 holds a value that is not a finite number"),
      std::string::npos)
      << error(skinnedGltf(badIbm, times, keys));
  EXPECT_NE(
      error(skinnedGltf(ibm, {0.0f, kInf}, keys))
          .find("animations[0].samplers[0].input: accessor 1 element 1 holds a value that is not a finite "
                "number"),
      std::string::npos);
  std::array<float, 8> infiniteKey = keys;
  infiniteKey[0] = -kInf;
  EXPECT_NE(
      error(skinnedGltf(ibm, times, infiniteKey))
          .find("animations[0].samplers[0].output: accessor 2 element 0 holds a value that is not a finite "
                "number"),
      std::string::npos);
  std::array<float, 8> zeroKey = keys;
  zeroKey[4] = zeroKey[5] = zeroKey[6] = zeroKey[7] = 0.0f;
  EXPECT_NE(error(skinnedGltf(ibm, times, zeroKey))
                .find("animations[0].samplers[0].output: accessor 2 key 1 is a zero quaternion"),
            std::string::npos)
      << error(skinnedGltf(ibm, times, zeroKey));
  EXPECT_NE(
      error(skinnedGltf(ibm, times, keys, "[0, 0, 0, 0]")).find("nodes[0].rotation: is a zero quaternion"),
      std::string::npos);
}

}  // namespace
}  // namespace loader_limits_test
}  // namespace handoff
