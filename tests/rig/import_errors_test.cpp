// Bad input: every case returns an Error naming the file, the reason and (for BVH text) the line;
// nothing crashes and no half-filled asset comes back.
#include "handoff/import.h"
#include "support/files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace handoff {
namespace {

const std::string kData = HANDOFF_DATA_DIR;

// 12 values per frame: Hips 6, Chest 3, LeftLeg 3. Line numbers are in the right-hand comments.
const std::string kValid =
    "HIERARCHY\n"                                                                 // 1
    "ROOT Hips\n"                                                                 // 2
    "{\n"                                                                         // 3
    "  OFFSET 0 0 0\n"                                                            // 4
    "  CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation\n"  // 5
    "  JOINT Chest\n"                                                             // 6
    "  {\n"                                                                       // 7
    "    OFFSET 0 10 0\n"                                                         // 8
    "    CHANNELS 3 Zrotation Xrotation Yrotation\n"                              // 9
    "    End Site\n"                                                              // 10
    "    {\n"                                                                     // 11
    "      OFFSET 0 5 0\n"                                                        // 12
    "    }\n"                                                                     // 13
    "  }\n"                                                                       // 14
    "  JOINT LeftLeg\n"                                                           // 15
    "  {\n"                                                                       // 16
    "    OFFSET 2 0 0\n"                                                          // 17
    "    CHANNELS 3 Zrotation Yrotation Xrotation\n"                              // 18
    "    End Site\n"                                                              // 19
    "    {\n"                                                                     // 20
    "      OFFSET 0 -9 0\n"                                                       // 21
    "    }\n"                                                                     // 22
    "  }\n"                                                                       // 23
    "}\n"                                                                         // 24
    "MOTION\n"                                                                    // 25
    "Frames: 3\n"                                                                 // 26
    "Frame Time: 0.04\n"                                                          // 27
    "0 9 0 0 0 0 10 0 0 0 0 0\n"                                                  // 28
    "1 9 0 5 0 0 10 0 0 0 0 0\n"                                                  // 29
    "2 9 0 10 0 0 10 0 0 0 0 0\n";                                                // 30

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

/// Imports `text` as "bad.bvh" and checks the error names the file, the line and the reason.
void expectBvhError(const std::string& text, int line, const std::string& reason) {
  Result<ImportedAsset> result = importBvhText(text, "data/bad.bvh");
  ASSERT_FALSE(result) << "expected an error about: " << reason;
  const std::string& message = result.error();
  EXPECT_NE(message.find("data/bad.bvh:" + std::to_string(line) + ": "), std::string::npos) << message;
  EXPECT_NE(message.find(reason), std::string::npos) << message;
}

TEST(ImportErrors, ValidTextImports) {
  Result<ImportedAsset> result = importBvhText(kValid, "data/good.bvh");
  ASSERT_TRUE(result) << result.error();
  EXPECT_EQ(result->skeleton.jointCount(), 3);
  ASSERT_EQ(result->clips.size(), 1u);
  EXPECT_EQ(result->clips[0].frameCount, 3);
  EXPECT_EQ(result->clips[0].frameRate, 25.0);
  EXPECT_EQ(result->clips[0].name, "good");
  EXPECT_EQ(result->unitScale, 0.1);  // hip 9 units high: decimetres
}

TEST(ImportErrors, WrongChannelCount) {
  expectBvhError(replaced(kValid, "CHANNELS 3 Zrotation Xrotation Yrotation",
                          "CHANNELS 6 Zrotation Xrotation Yrotation"),
                 9, "CHANNELS declares 6 channels for joint 'Chest' but the line lists 3");
  expectBvhError(replaced(kValid, "CHANNELS 3 Zrotation Yrotation Xrotation",
                          "CHANNELS 2 Zrotation Yrotation Xrotation"),
                 18, "declares 2 channels for joint 'LeftLeg' but the line lists 3");
  expectBvhError(replaced(kValid, "CHANNELS 3 Zrotation Xrotation", "CHANNELS three Zrotation Xrotation"), 9,
                 "expected a channel count after CHANNELS");
  expectBvhError(replaced(kValid, "CHANNELS 6 Xposition", "CHANNELS 9 Xposition"), 5, "at most 6 channels");
}

TEST(ImportErrors, MissingFrames) {
  expectBvhError(replaced(kValid, "Frames: 3", "Frames: 5"), 30,
                 "'Frames:' on line 26 declares 5 frames, but only 3 frame lines follow");
  expectBvhError(replaced(kValid, "Frames: 3", "Frames: 2000000000"), 30,
                 "declares 2000000000 frames, but only 3 frame lines follow");
  expectBvhError(replaced(kValid, "Frames: 3", "Frames: 99999999999"), 26, "expected a frame count");
  // Cut in the middle of the last frame line.
  expectBvhError(kValid.substr(0, kValid.size() - 8), 30, "expected 12 channel values (frame 2), got 8");
  // Cut before the motion section.
  expectBvhError(kValid.substr(0, kValid.find("MOTION")), 25, "expected MOTION, found end of file");
}

TEST(ImportErrors, NotANumber) {
  expectBvhError(replaced(kValid, "1 9 0 5 0 0 10 0 0 0", "1 9 0 5 0 0 10 0 abc 0"), 29,
                 "frame 1, value 9 (joint 'Chest' Yrotation): 'abc' is not a finite number");
  expectBvhError(replaced(kValid, "1 9 0 5 0 0", "1 9 0 5.5.1 0 0"), 29, "'5.5.1' is not a finite number");
  expectBvhError(replaced(kValid, "2 9 0 10", "2 9 0 nan"), 30, "'nan' is not a finite number");
  expectBvhError(replaced(kValid, "2 9 0 10", "2 9 0 1e999"), 30, "'1e999' is not a finite number");
  expectBvhError(replaced(kValid, "OFFSET 0 10 0", "OFFSET 0 1O 0"), 8,
                 "expected a number (OFFSET of joint 'Chest'), found '1O'");
  expectBvhError(replaced(kValid, "OFFSET 0 -9 0", "OFFSET 0 -9"), 22,
                 "expected a number (OFFSET of the End Site of joint 'LeftLeg'), found '}'");
}

TEST(ImportErrors, WrongValueCountOnAFrameLine) {
  expectBvhError(replaced(kValid, "1 9 0 5 0 0 10 0 0 0 0 0\n", "1 9 0 5 0 0 10 0 0 0 0\n"), 29,
                 "expected 12 channel values (frame 1), got 11");
  expectBvhError(replaced(kValid, "1 9 0 5 0 0 10 0 0 0 0 0\n", "1 9 0 5 0 0 10 0 0 0 0 0 7\n"), 29,
                 "expected 12 channel values (frame 1), got 13");
}

TEST(ImportErrors, UnknownChannelName) {
  expectBvhError(replaced(kValid, "CHANNELS 3 Zrotation Xrotation Yrotation",
                          "CHANNELS 3 Zrotation Wrotation Yrotation"),
                 9, "unknown channel name 'Wrotation' in joint 'Chest'");
  expectBvhError(replaced(kValid, "CHANNELS 3 Zrotation Xrotation Yrotation",
                          "CHANNELS 3 Zrotation Xrotation Xrotation"),
                 9, "channel 'Xrotation' listed twice");
}

TEST(ImportErrors, UnbalancedBraces) {
  // The '}' closing Chest is missing: LeftLeg becomes its child and MOTION arrives inside Hips.
  expectBvhError(replaced(kValid, "    }\n  }\n  JOINT LeftLeg", "    }\n  JOINT LeftLeg"), 24,
                 "unbalanced braces: 'MOTION' inside joint 'Hips' opened on line 2");
  expectBvhError(replaced(kValid, "}\nMOTION", "}\n}\nMOTION"), 25, "unbalanced braces: '}' closes no joint");
  expectBvhError(replaced(kValid, "ROOT Hips\n{", "ROOT Hips\n"), 4, "expected '{' after joint name 'Hips'");
}

TEST(ImportErrors, OtherStructuralErrors) {
  expectBvhError("", 1, "empty file, expected HIERARCHY");
  expectBvhError(std::string("\x7f"
                             "ELF\x01\x02 binary",
                             14),
                 1, "expected HIERARCHY");
  expectBvhError(replaced(kValid, "JOINT LeftLeg", "JOINT Chest"), 15,
                 "joint name 'Chest' is used twice (first on line 6)");
  expectBvhError(replaced(kValid, "    OFFSET 2 0 0\n", ""), 15, "joint 'LeftLeg' has no OFFSET");
  expectBvhError(replaced(kValid, "    OFFSET 2 0 0\n", "    OFFSET 2 0 0\n    SCALE 1 1 1\n"), 18,
                 "unknown keyword 'SCALE' in joint 'LeftLeg'");
  expectBvhError(replaced(kValid, "Frame Time: 0.04", "Frame Time: 0"), 27, "expected a positive frame time");
  expectBvhError(replaced(kValid, "Frame Time: 0.04", "Frame Time: -0.04"), 27,
                 "expected a positive frame time");
  expectBvhError(replaced(kValid, "Frame Time: 0.04", "Frame Rate: 25"), 27, "expected 'Frame Time:'");
  expectBvhError(replaced(kValid, "Frames: 3", "Frames: 2.5"), 26, "expected a frame count");
  expectBvhError(replaced(kValid, "Frames: 3", "Frames: -3"), 26, "expected a frame count");
  expectBvhError(replaced(kValid, "}\nMOTION", "}\nROOT Other\n{\n}\nMOTION"), 25, "a second ROOT");
}

TEST(ImportErrors, FrameLinesBeyondTheDeclaredCountAreIgnoredWithAWarning) {
  Result<ImportedAsset> result = importBvhText(kValid + "3 9 0 10 0 0 10 0 0 0 0 0\n", "data/long.bvh");
  ASSERT_TRUE(result) << result.error();
  EXPECT_EQ(result->clips[0].frameCount, 3);
  ASSERT_FALSE(result->warnings.empty());
  EXPECT_NE(result->warnings[0].find("line 31: 1 frame line(s) beyond the 3"), std::string::npos)
      << result->warnings[0];
}

TEST(ImportErrors, ZeroFramesGivesASkeletonWithoutClips) {
  Result<ImportedAsset> result = importBvhText(
      kValid.substr(0, kValid.find("Frames: 3")) + "Frames: 0\nFrame Time: 0.04\n", "data/still.bvh");
  ASSERT_TRUE(result) << result.error();
  EXPECT_EQ(result->skeleton.jointCount(), 3);
  EXPECT_TRUE(result->clips.empty());
}

// ------------------------------------------------------------------------------------------------
// Files

class ImportFileErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    // Unique per test and process: ctest runs tests in parallel, other build trees too.
    directory_ = std::filesystem::path(::testing::TempDir()) /
                 ("handoff_import_errors_" + std::to_string(::getpid()) + "_" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(directory_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(directory_, ec);
  }
  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = (directory_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::filesystem::path directory_;
};

TEST_F(ImportFileErrors, MissingFile) {
  for (const std::string name : {"missing.bvh", "missing.glb", "missing.fbx"}) {
    const std::string path = kData + "/" + name;
    Result<ImportedAsset> result = importFile(path);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error(), path + ": file not found");
  }
  Result<ImportedAsset> directory = importFile(kData);
  ASSERT_FALSE(directory);
  EXPECT_NE(directory.error().find("is a directory"), std::string::npos) << directory.error();
}

TEST_F(ImportFileErrors, FileWithoutASkeleton) {
  const std::string path = write("box.obj",
                                 "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n"
                                 "f 1 2 3\nf 1 3 4\n");
  Result<ImportedAsset> result = importFile(path);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error(), path + ": no skeleton: the file has no skinned bones and no animated nodes");
}

TEST_F(ImportFileErrors, TruncatedBvhFile) {
  const std::string text = test::readFile(kData + "/deepmimic/humanoid3d_run.bvh");
  // Keep the header and a frame and a half.
  const size_t motion = text.find("Frame Time:");
  const size_t firstFrameEnd = text.find('\n', text.find('\n', motion) + 1);
  const std::string path = write("run_truncated.bvh", text.substr(0, firstFrameEnd + 40));
  Result<ImportedAsset> result = importFile(path);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().find(path + ":91: expected 42 channel values (frame 1), got "), std::string::npos)
      << result.error();
}

TEST_F(ImportFileErrors, TruncatedAndGarbageBinaryFiles) {
  const std::string glb = test::readFile(kData + "/robot-expressive/RobotExpressive.glb");
  for (const size_t size : {size_t{12}, size_t{1000}, glb.size() / 2}) {
    const std::string path = write("robot_" + std::to_string(size) + ".glb", glb.substr(0, size));
    Result<ImportedAsset> result = importFile(path);
    ASSERT_FALSE(result) << size;
    EXPECT_EQ(result.error().rfind(path + ": ", 0), 0u) << result.error();
  }
  const std::string fbx = test::readFile(kData + "/assimp/huesitos.fbx");
  const std::string path = write("huesitos_cut.fbx", fbx.substr(0, fbx.size() / 3));
  Result<ImportedAsset> result = importFile(path);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().rfind(path + ": ", 0), 0u) << result.error();

  const std::string garbage = write("noise.fbx", std::string(4096, '\xAB'));
  Result<ImportedAsset> noise = importFile(garbage);
  ASSERT_FALSE(noise);
  EXPECT_EQ(noise.error().rfind(garbage + ": ", 0), 0u) << noise.error();
}

TEST_F(ImportFileErrors, BvhWithoutExtensionIsRecognisedAndChecked) {
  const std::string path = write("motion_without_extension", replaced(kValid, "Frames: 3", "Frames: 4"));
  Result<ImportedAsset> result = importFile(path);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().find(path + ":30: 'Frames:' on line 26 declares 4 frames"), std::string::npos)
      << result.error();
}

TEST(ImportErrors, BadOptions) {
  ImportOptions options;
  options.unitScale = -1.0;
  Result<ImportedAsset> negative = importBvhText(kValid, "data/good.bvh", options);
  ASSERT_FALSE(negative);
  EXPECT_NE(negative.error().find("data/good.bvh: ImportOptions::unitScale"), std::string::npos)
      << negative.error();
  options = {};
  options.resampleRate = 0.0;
  Result<ImportedAsset> zero = importFile(kData + "/mesh2motion/human-base-animations.glb", options);
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.error().find("ImportOptions::resampleRate must be positive"), std::string::npos)
      << zero.error();
}

}  // namespace
}  // namespace handoff
