// Retargeting get-up clips through the humanoid maps (issue 5): the DeepMimic get-ups onto the
// CMU 01_01 character.
#include "recovery/recovery_test_util.h"
#include "support/stance.h"
#include "support/test_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace handoff {
namespace {

using test::hipAboveFeet;
using test::lowestUnder;
using test::rotNear;
using test::vecNear;

/// A target rig with its own upright standing frame (for its standing hip height).
struct TargetRig {
  std::string name;
  Skeleton skeleton;
  HumanoidMap map;
  Clip standing;  ///< A clip whose first frame stands upright, legs straight.
};

TargetRig loadRig(const std::string& name, const std::string& file, double unitScale,
                  const std::string& standingClip) {
  TargetRig rig;
  rig.name = name;
  ImportOptions options;
  options.unitScale = unitScale;
  Result<ImportedAsset> asset = importFile(test::dataPath(file), options);
  EXPECT_TRUE(asset.ok()) << (asset.ok() ? "" : asset.error());
  if (!asset.ok()) return rig;
  rig.skeleton = asset->skeleton;
  for (const Clip& c : asset->clips) {
    if (standingClip.empty() || c.name == standingClip) {
      rig.standing = c;
      break;
    }
  }
  EXPECT_GT(rig.standing.frameCount, 0) << file << " has no clip '" << standingClip << "'";
  Result<HumanoidMap> map = mapHumanoid(rig.skeleton);
  EXPECT_TRUE(map.ok()) << (map.ok() ? "" : map.error());
  if (map.ok()) rig.map = *map;
  return rig;
}

/// Knee bend of a leg: the angle between thigh (hip -> knee) and shin (knee -> ankle). [rad]
double kneeBend(const HumanoidMap& map, std::span<const Transform> models, Slot hip, Slot knee, Slot ankle) {
  const auto at = [&](Slot s) { return models[static_cast<size_t>(map[s])].translation; };
  const Vec3 thigh = glm::normalize(at(knee) - at(hip));
  const Vec3 shin = glm::normalize(at(ankle) - at(knee));
  return std::acos(std::clamp(glm::dot(thigh, shin), -1.0, 1.0));
}

// The DeepMimic get-ups on other rigs end where the rig stands: both feet on the ground (y = 0)
// within 3 cm, and the pelvis at the rig's own standing hip height within 3 cm. "Own standing hip
// height" is measured in the rig's own data, not by the retargeter: the pelvis above the lowest
// foot point in an upright standing frame (CMU: 01_01 frame 0, before the jumps, 0.971 m;
// Mesh2Motion: its T-Pose clip, 0.901 m). The retargeter's ratio comes from each rig's bind with
// the leg bones aligned (straight legs): CMU 0.970 m, Mesh2Motion 0.903 m, DeepMimic 0.881 m, so
// the reference is the same standing height however it is measured (within 2 mm). A wrong ratio
// (e.g. the raw rest hip heights', 1.043 for CMU, whose bind legs splay 20 degrees) fails.
//
// The absolute 3 cm check applies to a source clip that itself ends standing by the same
// criterion on its own rig (the identity retarget): humanoid3d_getup_facedown.bvh ends with knees
// bent <= 4 degrees and its pelvis 2.6 cm below the DeepMimic standing height (0.855 vs 0.881 m).
// humanoid3d_getup_faceup.bvh does not: its last frame is a mid-rise, knees bent 24 and 38
// degrees, the right leg stepped out 13 degrees, the pelvis 4.4 cm below the DeepMimic standing
// height and still rising at 0.13 m/s (2.3 mm per frame over its last frames; the clip simply
// stops). On the DeepMimic rig itself that frame misses the criterion by 4.4 cm, so no faithful
// retarget can put it within 3 cm of another rig's standing height: the retarget of that frame
// lands where the source stance maps (standing height x the source's end stance: 0.951 x 0.971 =
// 0.923 m on CMU, measured 0.926 m; 0.951 x 0.901 = 0.857 m on Mesh2Motion, measured 0.862 m), so
// the 4.5 cm (CMU) / 4.0 cm (Mesh2Motion) shortfall is the source's own 4.4 cm carried to the rig,
// not a retargeting error (the ratio is right: the face-down clip lands 1.0 / 0.8 cm from each
// rig's standing height). Every clip is checked against its mapped stance (the retarget adds no
// error of its own), and the test fails if the face-down clip stops ending standing.
void checkRetargetedGetUps(const TargetRig& rig) {
  const double standingHip =
      hipAboveFeet(rig.skeleton, rig.map, test::modelsOf(rig.skeleton, rig.standing.frame(0)));
  ASSERT_GT(standingHip, 0.8) << rig.name << " stands in its standing frame";
  for (const char* file :
       {"deepmimic/humanoid3d_getup_faceup.bvh", "deepmimic/humanoid3d_getup_facedown.bvh"}) {
    const test::LoadedClip dm = test::loadClip(file);
    RetargetReport report;
    Result<Clip> out = retargetClip(dm.clip, dm.skeleton, dm.map, rig.skeleton, rig.map, {}, &report);
    ASSERT_TRUE(out.ok()) << out.error();
    ASSERT_TRUE(out->validate(rig.skeleton).ok()) << out->validate(rig.skeleton).error();
    EXPECT_EQ(out->frameCount, dm.clip.frameCount);
    EXPECT_GE(report.mappedSlots, 13);

    // The source's own end stance: its pelvis above its feet over its straight-legged height,
    // with the knees and the pelvis's rise speed over the last frames that differ (the last
    // DeepMimic frame repeats the one before).
    const int last = dm.clip.frameCount - 1;
    const auto sourceEnd = test::modelsOf(dm.skeleton, dm.clip.frame(last));
    const auto sourceBefore = test::modelsOf(dm.skeleton, dm.clip.frame(last - 4));
    const double sourceEndHip = hipAboveFeet(dm.skeleton, dm.map, sourceEnd);
    const double sourceStance = sourceEndHip / report.sourceHipHeight;
    const double sourceShortfall = report.sourceHipHeight - sourceEndHip;
    const double riseSpeed = (sourceEnd[static_cast<size_t>(dm.map[Slot::Pelvis])].translation.y -
                              sourceBefore[static_cast<size_t>(dm.map[Slot::Pelvis])].translation.y) /
                             (3.0 / dm.clip.frameRate);
    const double kneeL = kneeBend(dm.map, sourceEnd, Slot::UpperLegL, Slot::LowerLegL, Slot::FootL);
    const double kneeR = kneeBend(dm.map, sourceEnd, Slot::UpperLegR, Slot::LowerLegR, Slot::FootR);
    const bool sourceStands = sourceShortfall <= 0.03;

    const auto lastTarget = test::modelsOf(rig.skeleton, out->frame(out->frameCount - 1));
    const double pelvis = lastTarget[static_cast<size_t>(rig.map[Slot::Pelvis])].translation.y;
    const double footL = lowestUnder(rig.skeleton, lastTarget, rig.map[Slot::FootL]);
    const double footR = lowestUnder(rig.skeleton, lastTarget, rig.map[Slot::FootR]);
    EXPECT_NEAR(footL, 0.0, 0.03) << rig.name << " " << file;
    EXPECT_NEAR(footR, 0.0, 0.03) << rig.name << " " << file;
    EXPECT_NEAR(pelvis, standingHip * sourceStance, 0.03) << rig.name << " " << file;
    if (std::string(file).find("facedown") != std::string::npos) {
      EXPECT_TRUE(sourceStands) << "the face-down clip ends standing on its own rig (shortfall "
                                << sourceShortfall * 100.0 << " cm)";
    }
    if (sourceStands) {
      EXPECT_NEAR(pelvis, standingHip, 0.03) << rig.name << " " << file;
    }
    std::printf(
        "[retarget %s <- %s] ratio %.4f (hip %.3f -> %.3f m); source end: stance %.3f (%.1f cm below its own "
        "standing), knees %.0f/%.0f deg, pelvis rising %.3f m/s -> %s; end pelvis %.3f m vs own standing "
        "%.3f m "
        "(%+.1f cm; vs mapped stance %+.1f cm), feet lowest L %+.1f cm R %+.1f cm\n",
        rig.name.c_str(), file, report.hipHeightRatio, report.sourceHipHeight, report.targetHipHeight,
        sourceStance, sourceShortfall * 100.0, test::degrees(kneeL), test::degrees(kneeR), riseSpeed,
        sourceStands ? "stands (absolute check)" : "mid-rise (mapped-stance check)", pelvis, standingHip,
        (pelvis - standingHip) * 100.0, (pelvis - standingHip * sourceStance) * 100.0, footL * 100.0,
        footR * 100.0);

    // The retargeted clip is a valid get-up for the rig: same facing, scaled start height.
    Result<GetUpClipInfo> source = computeGetUpClipInfo(dm.clip, dm.skeleton, dm.map);
    Result<GetUpClipInfo> target = computeGetUpClipInfo(*out, rig.skeleton, rig.map);
    ASSERT_TRUE(source.ok() && target.ok()) << (target.ok() ? "" : target.error());
    EXPECT_EQ(target->startFacing, source->startFacing) << file;
    EXPECT_NEAR(target->rootFromPelvis.translation.y,
                source->rootFromPelvis.translation.y * report.hipHeightRatio, 1e-9);
  }
}

// CMU cgspeed BVH units are 1/0.45 inch = 0.0564 m (the conversion's README), given
// explicitly rather than trusting unit detection.
TEST(Retarget, DeepMimicGetUpsOntoTheCmuRig) {
  checkRetargetedGetUps(loadRig("cmu", "cmu/01_01.bvh", 0.0254 / 0.45, ""));
}

TEST(Retarget, DeepMimicGetUpsOntoTheMesh2MotionRig) {
  checkRetargetedGetUps(loadRig("mesh2motion", "mesh2motion/human-base-animations.glb", 0.0, "T-Pose"));
}

// A rig retargeted onto itself gives its own clip back.
TEST(Retarget, OntoItselfIsTheIdentity) {
  const test::LoadedClip dm = test::loadClip("deepmimic/humanoid3d_getup_facedown.bvh");
  RetargetReport report;
  Result<Clip> out = retargetClip(dm.clip, dm.skeleton, dm.map, dm.skeleton, dm.map, {}, &report);
  ASSERT_TRUE(out.ok()) << out.error();
  EXPECT_NEAR(report.hipHeightRatio, 1.0, 1e-12);
  const auto n = static_cast<size_t>(dm.skeleton.jointCount());
  for (int f = 0; f < dm.clip.frameCount; f += 7) {
    const auto a = dm.clip.frame(f);
    const auto b = out->frame(f);
    for (size_t j = 0; j < n; ++j) {
      EXPECT_TRUE(test::xfNear(a[j], b[j], 1e-9, 1e-9)) << "frame " << f << " " << dm.skeleton.jointNames[j];
    }
  }
}

// By hand: a source leg facing +X, a target leg facing +Z with a splayed bind (the leg 30 degrees
// outward, like CMU's) and bones twice as long.
//
//   source (forward +X)         target (forward +Z)
//      0 pelvis                     0 pelvis
//     / \                          / \         (the legs splay 30 deg outward at bind)
//    1   3 hips (+-Z)             1   3 hips (+-X)
//    |   |                       /     \         .
//    2   4 feet                 2       4
//
// A source frame kicking the left leg forward by 90 degrees must kick the target's left leg
// forward (+Z), horizontal (the bind splay removed), at twice the height ratio... of 2.
TEST(Retarget, ByHand) {
  Skeleton src;
  src.jointNames = {"pelvis", "hip_l", "foot_l", "hip_r", "foot_r"};
  src.parents = {kNoParent, 0, 1, 0, 3};
  src.restLocal = {Transform::fromTranslation({0, 1.0, 0}), Transform::fromTranslation({0, 0, -0.1}),
                   Transform::fromTranslation({0, -1.0, 0}), Transform::fromTranslation({0, 0, 0.1}),
                   Transform::fromTranslation({0, -1.0, 0})};
  src.endSiteOffset.assign(5, Vec3{0});
  HumanoidMap srcMap;
  srcMap[Slot::Pelvis] = 0;
  srcMap[Slot::UpperLegL] = 1;
  srcMap[Slot::UpperLegR] = 3;
  Skeleton dst;
  dst.jointNames = src.jointNames;
  dst.parents = src.parents;
  const double s30 = std::sin(kPi / 6);
  const double c30 = std::cos(kPi / 6);
  dst.restLocal = {Transform::fromTranslation({0, 2.0 * c30, 0}), Transform::fromTranslation({0.2, 0, 0}),
                   Transform::fromTranslation({2.0 * s30, -2.0 * c30, 0}),
                   Transform::fromTranslation({-0.2, 0, 0}),
                   Transform::fromTranslation({-2.0 * s30, -2.0 * c30, 0})};
  dst.endSiteOffset.assign(5, Vec3{0});
  HumanoidMap dstMap = srcMap;
  ASSERT_TRUE(vecNear(*modelForwardFromMap(src, srcMap), Vec3{1, 0, 0}, 1e-12));
  ASSERT_TRUE(vecNear(*modelForwardFromMap(dst, dstMap), Vec3{0, 0, 1}, 1e-12));

  Clip clip;
  clip.name = "kick";
  clip.jointCount = 5;
  clip.frameCount = 1;
  clip.frameRate = 30.0;
  clip.keys = src.restLocal;
  // Left hip: the leg (-Y) turned to +X (forward): +90 degrees about Z.
  clip.keys[1].rotation = glm::angleAxis(kPi / 2, Vec3{0, 0, 1});
  clip.keys[0].translation = Vec3{0.5, 1.0, 0.0};  // root motion 0.5 m forward
  RetargetReport report;
  Result<Clip> out = retargetClip(clip, src, srcMap, dst, dstMap, {}, &report);
  ASSERT_TRUE(out.ok()) << out.error();
  EXPECT_NEAR(report.sourceHipHeight, 1.0, 1e-12);
  EXPECT_NEAR(report.targetHipHeight, 2.0, 1e-12) << "straightened legs: 2 m";
  EXPECT_NEAR(report.hipHeightRatio, 2.0, 1e-12);
  const auto m = test::modelsOf(dst, out->frame(0));
  // Pelvis: 0.5 m forward (+X -> +Z) and 1 m high, scaled by 2.
  EXPECT_TRUE(vecNear(m[0].translation, Vec3{0.0, 2.0, 1.0}, 1e-12));
  // Left leg kicked forward, horizontal: foot 2 m ahead of the hip.
  EXPECT_TRUE(vecNear(m[2].translation - m[1].translation, Vec3{0.0, 0.0, 2.0}, 1e-12));
  // Right leg: straight down (the splay removed).
  EXPECT_TRUE(vecNear(m[4].translation - m[3].translation, Vec3{0.0, -2.0, 0.0}, 1e-12));
  // Without alignment the right leg keeps the target's splayed bind.
  RetargetOptions raw;
  raw.alignBindDirections = false;
  out = retargetClip(clip, src, srcMap, dst, dstMap, raw, &report);
  ASSERT_TRUE(out.ok());
  const auto r = test::modelsOf(dst, out->frame(0));
  EXPECT_TRUE(vecNear(r[4].translation - r[3].translation, Vec3{-2.0 * s30, -2.0 * c30, 0.0}, 1e-12));
}

TEST(Retarget, ErrorsNameTheUnmappedSlot) {
  const test::LoadedClip dm = test::loadClip("deepmimic/humanoid3d_getup_faceup.bvh");
  HumanoidMap broken = dm.map;
  broken[Slot::UpperLegR] = -1;
  Result<Clip> out = retargetClip(dm.clip, dm.skeleton, dm.map, dm.skeleton, broken);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().find("upper_leg_r"), std::string::npos) << out.error();
  EXPECT_NE(out.error().find("target"), std::string::npos) << out.error();
  RetargetOptions bad;
  bad.hipHeightRatio = -1.0;
  EXPECT_FALSE(retargetClip(dm.clip, dm.skeleton, dm.map, dm.skeleton, dm.map, bad).ok());
}

}  // namespace
}  // namespace handoff
