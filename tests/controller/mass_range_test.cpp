// Character::create refuses ragdolls whose body masses leave [kMinBodyMass, kMaxBodyMass]
// (validateMassRange, issue 28), naming the body's field and the range.
#include "handoff/controller.h"
#include "handoff/import.h"
#include "handoff/physics_bullet.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace handoff {
namespace {

TEST(MassRange, CreateRefusesBodiesOutsideTheSupportedRangeNamingTheField) {
  Result<ImportedAsset> run = importFile(std::string(HANDOFF_DATA_DIR) + "/deepmimic/humanoid3d_run.bvh");
  ASSERT_TRUE(run) << run.error();
  Result<RagdollAsset> built = buildRagdoll(run->skeleton, BuildOptions{});
  ASSERT_TRUE(built) << built.error();
  std::vector<Transform> locals(static_cast<size_t>(run->skeleton.jointCount()));
  run->clips[0].sample(0.0, WrapMode::Loop, locals);
  double lightest = 1e300, heaviest = 0.0;
  for (const BodyDef& b : built->bodies) {
    lightest = std::min(lightest, b.mass);
    heaviest = std::max(heaviest, b.mass);
  }
  struct Case {
    double scale;
    bool accepted;
  };
  // Grams (the lightest body at 2 g), the shipped 70 kg, a tonne-heavy body at 9 t: accepted;
  // the lightest body at 0.5 g or the heaviest at 20 t: refused.
  const Case cases[] = {{0.002 / lightest, true},
                        {1.0, true},
                        {9000.0 / heaviest, true},
                        {0.0005 / lightest, false},
                        {20000.0 / heaviest, false}};
  for (const Case& c : cases) {
    RagdollAsset scaled = *built;
    for (BodyDef& b : scaled.bodies) b.mass *= c.scale;
    std::unique_ptr<PhysicsWorld> world = createBulletWorld();
    Result<std::unique_ptr<Character>> created =
        Character::create(*world, std::make_shared<const RagdollAsset>(scaled), run->skeleton,
                          CharacterSettings{}, Transform{}, locals);
    EXPECT_EQ(static_cast<bool>(created), c.accepted) << "scale " << c.scale;
    if (!created) {
      std::printf("[ figure ] scale %g: %s\n", c.scale, created.error().c_str());
      EXPECT_NE(created.error().find("bodies["), std::string::npos) << created.error();
      EXPECT_NE(created.error().find("].mass"), std::string::npos) << created.error();
      EXPECT_NE(created.error().find("[0.001, 10000] kg"), std::string::npos) << created.error();
    }
  }
}

}  // namespace
}  // namespace handoff
