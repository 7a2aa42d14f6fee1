// Retargeting get-up clips through the humanoid maps (issue 5): the DeepMimic get-ups onto the
// CMU 01_01 character.
#include "recovery/recovery_test_util.h"
#include "support/stance.h"
#include "support/test_math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

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
// within 3 cm, and the pelvis at the rig's own standing hip height within 3 cm, for EVERY clip.
// "Own standing hip height" is measured in the rig's own data, not by the retargeter: the pelvis
// above the lowest foot point in an upright standing frame (CMU: 01_01 frame 0, before the jumps,
// 0.971 m; Mesh2Motion: its T-Pose clip, 0.901 m). The retargeter's ratio comes from each rig's
// bind with the leg bones aligned (straight legs): CMU 0.970 m, Mesh2Motion 0.903 m, DeepMimic
// 0.881 m, so the reference is the same standing height however it is measured (within 2 mm). A
// wrong ratio (e.g. the raw rest hip heights', 1.043 for CMU, whose bind legs splay 20 degrees)
// fails.
//
// humanoid3d_getup_faceup.bvh itself stops mid-rise (knees bent 24 and 38 degrees, the pelvis
// 1.8 cm below the face-down clip's standing end and still rising): retargeted as shipped it ended
// 4.5 cm (CMU) / 4.0 cm (Mesh2Motion) below standing. The clips are therefore completed on their
// own rig first, as every loader of the library does (prepareGetUpClips, completeGetUpClip against
// the pair's standing reference, the face-down clip's last frame), then retargeted. Each clip is
// also checked against where its source end stance maps (source pelvis above its feet over the
// source's straight-legged height, times the rig's standing height): the retarget adds no error of
// its own.
void checkRetargetedGetUps(const TargetRig& rig) {
  const double standingHip =
      hipAboveFeet(rig.skeleton, rig.map, test::modelsOf(rig.skeleton, rig.standing.frame(0)));
  ASSERT_GT(standingHip, 0.8) << rig.name << " stands in its standing frame";
  const test::LoadedClip up = test::loadClip("deepmimic/humanoid3d_getup_faceup.bvh");
  const test::LoadedClip down = test::loadClip("deepmimic/humanoid3d_getup_facedown.bvh");
  const std::vector<Clip> pair{up.clip, down.clip};
  Result<int> reference = standingReferenceClip(pair, up.skeleton, up.map);
  ASSERT_TRUE(reference.ok()) << reference.error();
  const Clip& standingClip = pair[static_cast<size_t>(*reference)];
  const auto standingFrame = standingClip.frame(standingClip.frameCount - 1);
  for (const test::LoadedClip* dm : {&up, &down}) {
    const std::string file = dm->clip.name;
    GetUpCompletion completion;
    Result<Clip> completed =
        completeGetUpClip(dm->clip, dm->skeleton, dm->map, standingFrame, {}, &completion);
    ASSERT_TRUE(completed.ok()) << completed.error();
    RetargetReport report;
    Result<Clip> out = retargetClip(*completed, dm->skeleton, dm->map, rig.skeleton, rig.map, {}, &report);
    ASSERT_TRUE(out.ok()) << out.error();
    ASSERT_TRUE(out->validate(rig.skeleton).ok()) << out->validate(rig.skeleton).error();
    EXPECT_EQ(out->frameCount, completed->frameCount);
    EXPECT_GE(report.mappedSlots, 13);

    // The source's end stance (as shipped and completed): its pelvis above its feet over its
    // straight-legged height, with the knees and the pelvis's rise speed over the last frames that
    // differ (the last DeepMimic frame repeats the one before).
    const int last = dm->clip.frameCount - 1;
    const auto sourceEnd = test::modelsOf(dm->skeleton, dm->clip.frame(last));
    const auto sourceBefore = test::modelsOf(dm->skeleton, dm->clip.frame(last - 4));
    const auto completedEnd = test::modelsOf(dm->skeleton, completed->frame(completed->frameCount - 1));
    const double sourceEndHip = hipAboveFeet(dm->skeleton, dm->map, sourceEnd);
    const double completedStance = hipAboveFeet(dm->skeleton, dm->map, completedEnd) / report.sourceHipHeight;
    const double riseSpeed = (sourceEnd[static_cast<size_t>(dm->map[Slot::Pelvis])].translation.y -
                              sourceBefore[static_cast<size_t>(dm->map[Slot::Pelvis])].translation.y) /
                             (3.0 / dm->clip.frameRate);
    const double kneeL = kneeBend(dm->map, sourceEnd, Slot::UpperLegL, Slot::LowerLegL, Slot::FootL);
    const double kneeR = kneeBend(dm->map, sourceEnd, Slot::UpperLegR, Slot::LowerLegR, Slot::FootR);

    const auto lastTarget = test::modelsOf(rig.skeleton, out->frame(out->frameCount - 1));
    const double pelvis = lastTarget[static_cast<size_t>(rig.map[Slot::Pelvis])].translation.y;
    const double footL = lowestUnder(rig.skeleton, lastTarget, rig.map[Slot::FootL]);
    const double footR = lowestUnder(rig.skeleton, lastTarget, rig.map[Slot::FootR]);
    // The same clip retargeted as shipped, for the figures (before / after).
    Result<Clip> shipped = retargetClip(dm->clip, dm->skeleton, dm->map, rig.skeleton, rig.map);
    ASSERT_TRUE(shipped.ok()) << shipped.error();
    const auto shippedLast = test::modelsOf(rig.skeleton, shipped->frame(shipped->frameCount - 1));
    const double shippedPelvis = shippedLast[static_cast<size_t>(rig.map[Slot::Pelvis])].translation.y;

    EXPECT_NEAR(footL, 0.0, 0.03) << rig.name << " " << file;
    EXPECT_NEAR(footR, 0.0, 0.03) << rig.name << " " << file;
    EXPECT_NEAR(pelvis, standingHip, 0.03) << rig.name << " " << file;
    EXPECT_NEAR(pelvis, standingHip * completedStance, 0.03) << rig.name << " " << file;
    std::printf(
        "[retarget %s <- %s] ratio %.4f (hip %.3f -> %.3f m); source end: %.1f cm below its straight-legged "
        "height, knees %.0f/%.0f deg, pelvis rising %.3f m/s; completion: %s (shortfall %.1f cm, tail %.3f "
        "s); "
        "end pelvis %.3f m vs own standing %.3f m (%+.1f cm; as shipped %.3f m, %+.1f cm; vs mapped stance "
        "%+.1f cm), feet lowest L %+.1f cm R %+.1f cm\n",
        rig.name.c_str(), file.c_str(), report.hipHeightRatio, report.sourceHipHeight, report.targetHipHeight,
        (report.sourceHipHeight - sourceEndHip) * 100.0, test::degrees(kneeL), test::degrees(kneeR),
        riseSpeed, completion.tailAdded ? "tail added" : "no tail", completion.shortfall * 100.0,
        completion.tailDuration, pelvis, standingHip, (pelvis - standingHip) * 100.0, shippedPelvis,
        (shippedPelvis - standingHip) * 100.0, (pelvis - standingHip * completedStance) * 100.0,
        footL * 100.0, footR * 100.0);

    // The retargeted clip is a valid get-up for the rig: same facing, scaled start height.
    Result<GetUpClipInfo> source = computeGetUpClipInfo(dm->clip, dm->skeleton, dm->map);
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
