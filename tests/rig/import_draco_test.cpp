// A character whose primitives are all KHR_draco_mesh_compression (tests/data/rig/README.md):
// the glTF check decodes them with Draco before Assimp, so the skin, its weights and the
// triangles come through. Figures are the file's own: 43 skin joints, 18 animations, mesh
// Cube.021 of 5696 vertices and 6258 triangles skinned with JOINTS_0/WEIGHTS_0.
#include "handoff/import.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace handoff {
namespace {

TEST(ImportDraco, SkinnedCharacterDecodesPositionsJointsAndWeights) {
  const std::string path =
      std::string(HANDOFF_SOURCE_DIR) + "/tests/data/rig/quaternius_astronaut_finn_draco.glb";
  Result<ImportedAsset> asset = importFile(path);
  ASSERT_TRUE(asset.ok()) << asset.error();
  EXPECT_EQ(asset->skeleton.jointCount(), 43);
  EXPECT_EQ(asset->clips.size(), 18u);
  EXPECT_TRUE(std::any_of(asset->warnings.begin(), asset->warnings.end(), [](const std::string& w) {
    return w.find("decoded 2 Draco-compressed primitives") != std::string::npos;
  }));
  const SkinnedMesh* skinned = nullptr;
  for (const SkinnedMesh& mesh : asset->meshes) {
    std::printf("mesh %s: %zu vertices, %zu triangles\n", mesh.name.c_str(), mesh.positions.size(),
                mesh.indices.size() / 3);
    if (mesh.positions.size() == 5696) skinned = &mesh;
  }
  ASSERT_NE(skinned, nullptr);
  EXPECT_EQ(skinned->indices.size(), 6258u * 3u);
  ASSERT_EQ(skinned->jointWeights.size(), 4 * skinned->positions.size());
  ASSERT_EQ(skinned->jointIndices.size(), 4 * skinned->positions.size());
  double lowest = 1.0, highest = 0.0;
  for (size_t v = 0; v < skinned->positions.size(); ++v) {
    ASSERT_TRUE(std::isfinite(skinned->positions[v].x) && std::isfinite(skinned->positions[v].y) &&
                std::isfinite(skinned->positions[v].z));
    double sum = 0.0;
    for (size_t k = 0; k < 4; ++k) {
      sum += skinned->jointWeights[4 * v + k];
      EXPECT_LT(skinned->jointIndices[4 * v + k], 43);
    }
    lowest = std::min(lowest, sum);
    highest = std::max(highest, sum);
  }
  // Weights decoded from Draco's quantized floats sum to 1 within its precision.
  EXPECT_NEAR(lowest, 1.0, 1e-3);
  EXPECT_NEAR(highest, 1.0, 1e-3);
  // Not all weight on one joint: the skin's weights really came through.
  size_t blended = 0;
  for (size_t v = 0; v < skinned->positions.size(); ++v)
    blended += skinned->jointWeights[4 * v] < 0.999f ? 1 : 0;
  EXPECT_GT(blended, skinned->positions.size() / 10);
}

}  // namespace
}  // namespace handoff
