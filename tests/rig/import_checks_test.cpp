// Issue 20: malformed glTF, FBX and COLLADA files never crash, hang or exhaust the caller. The
// inputs with which Assimp 5.2 crashed (tests/fuzz/regressions/import/, found by handoff_fuzz_import)
// are stopped by the format checks before Assimp is reached; what no check catches is contained
// in the parser process (ImportOptions::isolateParser), shown here on reads that crash, hang and
// allocate without bound.
#include "handoff/import.h"
#include "rig/assimp_read.h"
#include "support/files.h"

#include <assimp/scene.h>
#include <gtest/gtest.h>
#include <assimp/Importer.hpp>

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace handoff {
namespace {

const std::string kRegressions = std::string(HANDOFF_SOURCE_DIR) + "/tests/fuzz/regressions/import/";

// Each regression input as the fuzz target reads it (first byte: the format), imported in this
// process: were the check missing, Assimp would crash the test (the crash, abort or allocation
// noted with each).
TEST(ImportChecks, EveryFuzzFindingIsStoppedBeforeAssimp) {
  struct Case {
    const char* file;
    const char* name;
    const char* message;  // what the check says
  };
  const std::vector<Case> cases{
      // Assimp: SIGSEGV (glTF2 importer, a channel without a target node in a scene without nodes).
      {"gltf_channel_without_target_node.glb", "f.glb", "animations[0].channels[0].target: is missing"},
      // Assimp: ai_assert abort, ColladaLoader.cpp(1743) pos < pData.mValues.size().
      {"dae_float_array_without_count.dae", "f.dae",
       "<float_array id='Armature_Cube-skin-bind_poses-array'> (line 93): has no count"},
      // Assimp: SIGSEGV reading the weights of the vertices past the count.
      {"dae_vertex_weights_count_below_vcount.dae", "f.dae", "count=\"4\" but its vcount lists 8"},
      // Assimp: leaks its zlib state (7160 + 32768 bytes) when an array does not inflate.
      {"fbx_zlib_array_that_does_not_inflate.fbx", "f.fbx",
       "FBX array at byte 21369: its zlib data does not inflate"},
      // Assimp: ai_assert abort, FBXConverter.cpp(1523) out_idx != nullptr (a skin cluster index
      // past the mesh's vertices).
      {"fbx_cluster_index_past_the_vertices.fbx", "f.fbx",
       "FBX skin cluster Indexes at byte 44781 holds 100000, past the 62 vertices"},
      // Assimp: allocates until std::bad_alloc (a word in an index list).
      {"dae_word_in_index_list.dae", "f.dae",
       "<p> in <geometry id='Cube-mesh'> (line 75): 'Objects' is not an index"},
  };
  ImportOptions direct;
  direct.isolateParser = false;
  for (const Case& c : cases) {
    const std::string bytes = test::readFile(kRegressions + c.file);
    ASSERT_GT(bytes.size(), 1U) << c.file;
    Result<ImportedAsset> imported = importFileData(std::string_view(bytes).substr(1), c.name, direct);
    ASSERT_FALSE(imported.ok()) << c.file;
    std::printf("%s: %s\n", c.file, imported.error().c_str());
    EXPECT_NE(imported.error().find(c.message), std::string::npos) << imported.error();
    EXPECT_EQ(imported.error().find("Assimp"), std::string::npos) << "reached Assimp: " << imported.error();
  }
}

// glTF allows a skin without inverse bind matrices; Assimp 5.2 crashes on it (SIGSEGV, found by the
// fuzzer). The rewrite gives it the inverses of its joints' node transforms, as three.js reads it.
TEST(ImportChecks, ASkinWithoutInverseBindMatricesTakesTheNodePose) {
  const std::string bytes = test::readFile(kRegressions + "gltf_skin_without_inverse_bind_matrices.glb");
  ImportOptions direct;
  direct.isolateParser = false;
  direct.requireHumanScale = false;
  Result<ImportedAsset> imported = importFileData(std::string_view(bytes).substr(1), "f.glb", direct);
  ASSERT_TRUE(imported.ok()) << imported.error();
  bool warned = false;
  for (const std::string& w : imported->warnings)
    warned = warned || w.find("skin 0 has no inverse bind") != std::string::npos;
  EXPECT_TRUE(warned);
  // The seed's node pose: Hips at 1 m, the thighs 0.1 m to the sides and 0.5 m below.
  const Skeleton& s = imported->skeleton;
  std::vector<Transform> models(static_cast<size_t>(s.jointCount()));
  localToModel(s, s.restLocal, models);
  ASSERT_EQ(s.jointCount(), 3);
  EXPECT_NEAR(models[static_cast<size_t>(s.findJoint("Hips"))].translation.y, 1.0, 1e-6);
  EXPECT_NEAR(models[static_cast<size_t>(s.findJoint("Thigh.L"))].translation.x, 0.1, 1e-6);
  EXPECT_NEAR(models[static_cast<size_t>(s.findJoint("Thigh.R"))].translation.y, 0.5, 1e-6);
}

TEST(ImportChecks, GltfIndicesBoundsAndTreeAreChecked) {
  const auto error = [](const std::string& json) {
    ImportOptions direct;
    direct.isolateParser = false;
    Result<ImportedAsset> imported = importFileData(json, "t.gltf", direct);
    return imported.ok() ? std::string("ok") : imported.error();
  };
  // 8 bytes of data: "AAAAAAAAAAA=" decodes to 8 zero bytes.
  const std::string buffers =
      R"("buffers": [{"byteLength": 8, "uri": "data:application/octet-stream;base64,AAAAAAAAAAA="}])";
  EXPECT_NE(error(R"({"asset": {"version": "2.0"}, )" + buffers +
                  R"(, "bufferViews": [{"buffer": 0, "byteOffset": 4, "byteLength": 8}]})")
                .find("bufferViews[0]: bytes 4-12 run past buffer 0's 8"),
            std::string::npos);
  EXPECT_NE(error(R"({"asset": {"version": "2.0"}, )" + buffers +
                  R"(, "bufferViews": [{"buffer": 0, "byteLength": 8}],
                   "accessors": [{"bufferView": 0, "componentType": 5126, "count": 1, "type": "VEC3"}]})")
                .find("accessors[0]: 1 elements end at byte 12, past buffer view 0's 8"),
            std::string::npos);
  EXPECT_NE(error(R"({"asset": {"version": "2.0"}, "nodes": [{"children": [1]}, {"children": [0]}]})")
                .find("is its own ancestor"),
            std::string::npos);
  EXPECT_NE(error(R"({"asset": {"version": "2.0"}, "nodes": [{"children": [1]}, {}, {"children": [1]}]})")
                .find("nodes[2].children[0]: node 1 already has the parent 0"),
            std::string::npos);
  EXPECT_NE(error(R"({"asset": {"version": "2.0"}, "nodes": [{"mesh": 3}]})")
                .find("nodes[0].mesh: is 3, not an index into meshes"),
            std::string::npos);
  EXPECT_NE(error(R"({"asset": {"version": "2.0"}, "buffers": [{"byteLength": 8, "uri": "other.bin"}]})")
                .find("names the external file 'other.bin', which an import from memory cannot read"),
            std::string::npos);
  // A joint index past the skin's joints (Assimp writes the weight out of bounds).
  const std::string skinned = R"({"asset": {"version": "2.0"}, "buffers": [{"byteLength": 16,
      "uri": "data:application/octet-stream;base64,AAAAAAAAAAAAAAAABQAAAA=="}],
      "bufferViews": [{"buffer": 0, "byteLength": 12}, {"buffer": 0, "byteOffset": 12, "byteLength": 4}],
      "accessors": [{"bufferView": 0, "componentType": 5126, "count": 1, "type": "VEC3"},
                    {"bufferView": 1, "componentType": 5121, "count": 1, "type": "VEC4"}],
      "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "JOINTS_0": 1}}]}],
      "nodes": [{"mesh": 0, "skin": 0}, {"name": "a"}], "skins": [{"joints": [1]}]})";
  EXPECT_NE(error(skinned).find("JOINTS_0: joint 5 is past the 1 joints"), std::string::npos)
      << error(skinned);
}

TEST(ImportChecks, ColladaAndFbxStructureIsChecked) {
  ImportOptions direct;
  direct.isolateParser = false;
  const auto error = [&](const std::string& bytes, const char* name) {
    Result<ImportedAsset> imported = importFileData(bytes, name, direct);
    return imported.ok() ? std::string("ok") : imported.error();
  };
  EXPECT_NE(error("<COLLADA><library_geometries>", "x.dae").find("the COLLADA XML does not parse"),
            std::string::npos);
  EXPECT_NE(error("<collada/>", "x.dae").find("the root element is not COLLADA"), std::string::npos);
  EXPECT_NE(
      error("<COLLADA><node><matrix>1 0 0</matrix></node></COLLADA>", "x.dae").find("holds 3 values, not 16"),
      std::string::npos);
  std::string binary("Kaydara FBX Binary  \0\x1a\0", 23);
  const auto u32 = [&](std::uint32_t v) { binary.append(reinterpret_cast<const char*>(&v), 4); };
  u32(7400);
  const std::string header = binary;
  // An empty but well-formed record list passes the check; Assimp says what it lacks.
  EXPECT_NE(error(header + std::string(13, '\0'), "x.fbx").find("Assimp cannot read it"), std::string::npos);
  u32(1000000);  // a record that ends past the file
  u32(0);
  u32(0);
  binary.push_back('\0');
  EXPECT_NE(error(binary, "x.fbx").find("FBX record at byte 27 ends at byte 1000000"), std::string::npos)
      << error(binary, "x.fbx");
  std::string old = header;
  old.replace(23, 4, std::string("\x88\x13\0\0", 4));  // version 5000
  EXPECT_NE(error(old, "x.fbx").find("FBX version 5000"), std::string::npos);
  EXPECT_NE(error("; FBX 7.4.0 project file\nObjects: {\n Model: { *4000000000 {\n", "x.fbx")
                .find("longer than the rest of the file"),
            std::string::npos);
  EXPECT_NE(error("; FBX 7.4.0 project file\nObjects: {\n", "x.fbx").find("unclosed"), std::string::npos);
  // ASCII index arrays are read too: a polygon vertex past the geometry's vertices.
  const std::string ascii =
      "; FBX 7.4.0 project file\nObjects:  {\n Geometry: 1, \"Geometry::\", \"Mesh\" {\n"
      "  Vertices: *9 {\n   a: 0,0,0,1,0,0,0,1,0\n  }\n"
      "  PolygonVertexIndex: *3 {\n   a: 0,1,-4\n  }\n }\n}\n";
  EXPECT_NE(error(ascii, "x.fbx").find("PolygonVertexIndex at line 8 holds -4, not one of its 3 vertices"),
            std::string::npos)
      << error(ascii, "x.fbx");
  EXPECT_NE(error("; FBX 7.4.0 project file\nCreator: \"two\nlines\n", "x.fbx").find("unterminated string"),
            std::string::npos);
  // A string over two lines is ASCII FBX (Assimp's tokenizer reads it): past the check.
  EXPECT_NE(error("; FBX 7.4.0 project file\nCreator: \"two\nlines\"\n", "x.fbx").find("Assimp"),
            std::string::npos);
}

// --- the parser process --------------------------------------------------------------------------

// The stand-in worker misbehaves as the hint says (tests/rig/worker/misbehaving_worker.cpp).
detail::ParserLimits limits(double seconds, double mib) {
  return detail::ParserLimits{true, seconds, mib, HANDOFF_TEST_IMPORT_WORKER};
}
Result<detail::ReadResult> readWith(const std::string& source, const detail::ParserLimits& limits,
                                    const std::string& hint) {
  Assimp::Importer importer;
  static const std::string bytes = "not read";
  return detail::readAssimp(importer, source, limits, detail::ParseRequest{true, {}, bytes, hint, 0, {}});
}

TEST(ImportIsolation, ACrashInTheParserIsAnError) {
  for (const int sig : {SIGSEGV, SIGABRT}) {
    Result<detail::ReadResult> read = readWith("crash.fbx", limits(10, 1024), "crash:" + std::to_string(sig));
    ASSERT_FALSE(read.ok());
    std::printf("%s\n", read.error().c_str());
    EXPECT_NE(read.error().find("crash.fbx: Assimp crashed reading it (signal " + std::to_string(sig)),
              std::string::npos)
        << read.error();
  }
}

TEST(ImportIsolation, AHangIsStoppedAtTheTimeLimit) {
  const auto start = std::chrono::steady_clock::now();
  Result<detail::ReadResult> read = readWith("hang.dae", limits(0.3, 1024), "hang");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(read.ok());
  std::printf("%s (after %.2f s)\n", read.error().c_str(), seconds);
  EXPECT_NE(read.error().find("exceeded the time limit of 0.3 s"), std::string::npos) << read.error();
  EXPECT_LT(seconds, 5.0);
}

TEST(ImportIsolation, ARunawayAllocationIsStoppedAtTheMemoryLimit) {
  Result<detail::ReadResult> read = readWith("greedy.glb", limits(60, 64), "greedy");
  ASSERT_FALSE(read.ok());
  std::printf("%s\n", read.error().c_str());
  EXPECT_NE(read.error().find("exceeded the memory limit of 64 MiB"), std::string::npos) << read.error();
}

TEST(ImportIsolation, AWorkerThatDoesNotAnswerAsOneIsNamed) {
  Result<detail::ReadResult> silent = readWith("a.fbx", limits(10, 1024), "silent");
  ASSERT_FALSE(silent.ok());
  std::printf("%s\n", silent.error().c_str());
  EXPECT_NE(silent.error().find("a.fbx: the parser process " + std::string(HANDOFF_TEST_IMPORT_WORKER) +
                                " ended without a reply"),
            std::string::npos)
      << silent.error();
  Result<detail::ReadResult> alien = readWith("a.fbx", limits(10, 1024), "alien");
  ASSERT_FALSE(alien.ok());
  std::printf("%s\n", alien.error().c_str());
  EXPECT_NE(alien.error().find("is not the import worker of this handoff build"), std::string::npos)
      << alien.error();
}

TEST(ImportIsolation, AMissingWorkerIsAnErrorNamingWhereItWasLookedFor) {
  ImportOptions options;
  options.parserWorker = "/nonexistent/handoff-import-worker";
  Result<ImportedAsset> read = importFile(std::string(HANDOFF_DATA_DIR) + "/assimp/huesitos.fbx", options);
  ASSERT_FALSE(read.ok());
  std::printf("%s\n", read.error().c_str());
  EXPECT_NE(
      read.error().find("huesitos.fbx: ImportOptions::parserWorker '/nonexistent/handoff-import-worker' is "
                        "not an executable file"),
      std::string::npos)
      << read.error();
  // Found without a path: the build tree's worker, which this test program was built beside.
  Result<std::string> found = detail::findImportWorker("");
  ASSERT_TRUE(found.ok()) << found.error();
  EXPECT_NE(found->find("handoff-import-worker"), std::string::npos) << found.value();
}

std::atomic<int> forks{0};

// A fork of a process with other threads running may deadlock in the child (a lock another thread
// held stays held): the reads of a game's loading threads must never fork.
TEST(ImportIsolation, ReadsOnManyThreadsStartAWorkerAndNeverFork) {
  static const bool registered = [] {
    return ::pthread_atfork(nullptr, nullptr, [] { forks.fetch_add(1); }) == 0;
  }();
  ASSERT_TRUE(registered);
  const std::string bvh = std::string(HANDOFF_DATA_DIR) + "/deepmimic/humanoid3d_getup_facedown.bvh";
  ImportOptions direct;
  direct.isolateParser = false;
  Result<ImportedAsset> here = importFile(bvh, direct);
  ASSERT_TRUE(here.ok()) << here.error();
  std::vector<Result<ImportedAsset>> contained(4, Error{"not read"});
  std::vector<std::thread> threads;
  for (size_t t = 0; t < contained.size(); ++t)
    threads.emplace_back([&, t] { contained[t] = importFile(bvh); });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(forks.load(), 0) << "an isolated read forked the process";
  for (const Result<ImportedAsset>& read : contained) {
    ASSERT_TRUE(read.ok()) << read.error();
    EXPECT_EQ(read->skeleton.jointNames, here->skeleton.jointNames);
    ASSERT_EQ(read->clips.size(), here->clips.size());
    for (size_t c = 0; c < here->clips.size(); ++c) {
      ASSERT_EQ(read->clips[c].keys.size(), here->clips[c].keys.size());
      for (size_t k = 0; k < here->clips[c].keys.size(); ++k)
        EXPECT_EQ(read->clips[c].keys[k].rotation, here->clips[c].keys[k].rotation);
    }
  }
}

TEST(ImportIsolation, TheSceneAndItsMetadataComeBackAsAssimpReadThem) {
  const std::string fbx = std::string(HANDOFF_DATA_DIR) + "/assimp/huesitos.fbx";
  ImportOptions direct;
  direct.isolateParser = false;
  Result<ImportedAsset> here = importFile(fbx, direct);
  Result<ImportedAsset> contained = importFile(fbx);
  ASSERT_TRUE(here.ok()) << here.error();
  ASSERT_TRUE(contained.ok()) << contained.error();
  EXPECT_EQ(here->unitScale, contained->unitScale);  // from FBX UnitScaleFactor, scene metadata
  EXPECT_EQ(here->warnings, contained->warnings);    // the up-axis conversion, also metadata
  EXPECT_EQ(here->skeleton.jointNames, contained->skeleton.jointNames);
  ASSERT_EQ(here->skeleton.jointCount(), contained->skeleton.jointCount());
  for (int j = 0; j < here->skeleton.jointCount(); ++j) {
    EXPECT_EQ(here->skeleton.restLocal[static_cast<size_t>(j)].translation,
              contained->skeleton.restLocal[static_cast<size_t>(j)].translation);
    EXPECT_EQ(here->skeleton.restLocal[static_cast<size_t>(j)].rotation,
              contained->skeleton.restLocal[static_cast<size_t>(j)].rotation);
  }
  ASSERT_EQ(here->clips.size(), contained->clips.size());
  for (size_t c = 0; c < here->clips.size(); ++c) {
    ASSERT_EQ(here->clips[c].keys.size(), contained->clips[c].keys.size());
    for (size_t k = 0; k < here->clips[c].keys.size(); ++k) {
      EXPECT_EQ(here->clips[c].keys[k].rotation, contained->clips[c].keys[k].rotation);
      EXPECT_EQ(here->clips[c].keys[k].translation, contained->clips[c].keys[k].translation);
    }
  }
  ASSERT_EQ(here->meshes.size(), contained->meshes.size());
  for (size_t m = 0; m < here->meshes.size(); ++m)
    EXPECT_EQ(here->meshes[m].positions, contained->meshes[m].positions);
}

}  // namespace
}  // namespace handoff
