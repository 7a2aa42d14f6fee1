// Get-up clip metadata (T_RB, a_B) on the real DeepMimic get-ups, and root placement
// (SPEC.md section 4): yaw from a_B with both fallbacks, translation from T_RB.
#include "recovery/recovery_test_util.h"
#include "support/test_math.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <limits>

namespace handoff {
namespace {

using test::degrees;
using test::vecNear;

const char* kFaceUp = "deepmimic/humanoid3d_getup_faceup.bvh";
const char* kFaceDown = "deepmimic/humanoid3d_getup_facedown.bvh";

Vec3 horizontalUnit(const Vec3& v) {
  const Vec3 h{v.x, 0.0, v.z};
  return glm::normalize(h);
}

struct Fixture {
  test::LoadedClip clip;
  GetUpClipInfo info;
};

Fixture load(const char* file) {
  Fixture f;
  f.clip = test::loadClip(file);
  Result<GetUpClipInfo> info = computeGetUpClipInfo(f.clip.clip, f.clip.skeleton, f.clip.map);
  EXPECT_TRUE(info.ok()) << (info.ok() ? "" : info.error());
  if (info.ok()) f.info = *info;
  return f;
}

TEST(GetUpClipInfo, FaceUpStartsSupineWithThePelvisOnTheGround) {
  const Fixture f = load(kFaceUp);
  ASSERT_EQ(f.info.pelvisJoint, f.clip.map[Slot::Pelvis]);
  EXPECT_EQ(f.info.startFacing, Facing::Supine);
  EXPECT_GT(f.info.startChestUpDot, 0.9) << "chest-forward points up at frame 0";
  // Frame 0 of the file: root y = 0.144638 (the floor is y = 0).
  EXPECT_NEAR(f.info.rootFromPelvis.translation.y, 0.15, 0.01);
  EXPECT_NEAR(f.info.rootFromPelvis.translation.y, f.clip.clip.frame(0)[0].translation.y, 1e-9);
  EXPECT_GT(f.info.endPelvisHeight, 0.8) << "ends standing";
  std::printf("[faceup] T_RB %s a_B %s travel %.3f m, end pelvis %.3f m, chest.up %.3f\n",
              test::str(f.info.rootFromPelvis.translation).c_str(),
              test::str(f.info.standingForwardInPelvis).c_str(), f.info.travel, f.info.endPelvisHeight,
              f.info.startChestUpDot);
}

TEST(GetUpClipInfo, FaceDownStartsProneWithThePelvisOnTheGround) {
  const Fixture f = load(kFaceDown);
  EXPECT_EQ(f.info.startFacing, Facing::Prone);
  EXPECT_LT(f.info.startChestUpDot, -0.8) << "chest-forward points down at frame 0";
  EXPECT_NEAR(f.info.rootFromPelvis.translation.y, 0.10, 0.01);
  EXPECT_GT(f.info.endPelvisHeight, 0.8);
  std::printf("[facedown] T_RB %s a_B %s travel %.3f m, end pelvis %.3f m, chest.up %.3f\n",
              test::str(f.info.rootFromPelvis.translation).c_str(),
              test::str(f.info.standingForwardInPelvis).c_str(), f.info.travel, f.info.endPelvisHeight,
              f.info.startChestUpDot);
}

// The root definition: the clip, re-expressed in R, starts with the pelvis at T_RB and ends
// standing on the root (pelvis above R's origin) facing R's forward.
TEST(GetUpClipInfo, ClipInRootStartsAtTRBAndEndsStandingOnTheRoot) {
  for (const char* file : {kFaceUp, kFaceDown}) {
    const Fixture f = load(file);
    const Skeleton& s = f.clip.skeleton;
    const int pelvis = f.info.pelvisJoint;
    std::vector<Transform> locals(static_cast<size_t>(s.jointCount()));
    sampleGetUpInRoot(f.clip.clip, s, f.info, 0.0, locals);
    const auto first = test::modelsOf(s, locals);
    EXPECT_TRUE(test::xfNear(first[static_cast<size_t>(pelvis)], f.info.rootFromPelvis, 1e-12, 1e-12))
        << file;

    sampleGetUpInRoot(f.clip.clip, s, f.info, f.clip.clip.duration(), locals);
    const auto last = test::modelsOf(s, locals);
    const Transform& standing = last[static_cast<size_t>(pelvis)];
    EXPECT_NEAR(standing.translation.x, 0.0, 1e-9) << file;
    EXPECT_NEAR(standing.translation.z, 0.0, 1e-9) << file;
    EXPECT_NEAR(standing.translation.y, f.info.endPelvisHeight, 1e-9) << file;
    // The standing pelvis's forward (the model forward it carries at bind) is R's forward.
    const auto bind = test::modelsOf(s, s.restLocal);
    const Vec3 forwardInPelvis =
        glm::conjugate(bind[static_cast<size_t>(pelvis)].rotation) * f.info.forwardInRoot;
    const Vec3 standingForward = horizontalUnit(standing.rotation * forwardInPelvis);
    EXPECT_TRUE(vecNear(standingForward, f.info.forwardInRoot, 1e-9)) << file;
  }
}

// a_B is the last frame's standing forward seen from the frame-0 pelvis: horizontal in clip
// space, toward the feet for the supine get-up (sit up, stand over the feet) and toward the head
// for the prone one (push up, stand where the head was).
TEST(GetUpClipInfo, StandingForwardIsDerivedFromTheClip) {
  for (const char* file : {kFaceUp, kFaceDown}) {
    const Fixture f = load(file);
    const Skeleton& s = f.clip.skeleton;
    EXPECT_NEAR(glm::length(f.info.standingForwardInPelvis), 1.0, 1e-12);
    const auto first = test::modelsOf(s, f.clip.clip.frame(0));
    const auto last = test::modelsOf(s, f.clip.clip.frame(f.clip.clip.frameCount - 1));
    const auto P = static_cast<size_t>(f.info.pelvisJoint);
    const Vec3 aInClip = first[P].rotation * f.info.standingForwardInPelvis;
    EXPECT_NEAR(aInClip.y, 0.0, 1e-12) << "a_B is horizontal at frame 0";
    // Hand-checked direction: toward the ankles (face-up) or the head (face-down).
    const int toward = (file == kFaceUp) ? f.clip.map[Slot::FootL] : f.clip.map[Slot::Head];
    const Vec3 direction =
        horizontalUnit(first[static_cast<size_t>(toward)].translation - first[P].translation);
    EXPECT_GT(glm::dot(aInClip, direction), 0.8) << file;
    // And it is the last frame's standing forward.
    const auto bind = test::modelsOf(s, s.restLocal);
    const Vec3 forwardInPelvis = glm::conjugate(bind[P].rotation) * f.info.forwardInRoot;
    EXPECT_TRUE(vecNear(aInClip, horizontalUnit(last[P].rotation * forwardInPelvis), 1e-9)) << file;
  }
}

TEST(GetUpClipInfo, ErrorsNameTheProblem) {
  const Fixture f = load(kFaceUp);
  HumanoidMap noPelvis = f.clip.map;
  noPelvis[Slot::Pelvis] = -1;
  Result<GetUpClipInfo> r = computeGetUpClipInfo(f.clip.clip, f.clip.skeleton, noPelvis);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("pelvis"), std::string::npos) << r.error();
  EXPECT_NE(r.error().find(f.clip.clip.name), std::string::npos) << r.error();
  // A clip that ends lying down (the first frame only) is no get-up.
  Clip lying = f.clip.clip;
  lying.frameCount = 1;
  lying.keys.resize(static_cast<size_t>(lying.jointCount));
  r = computeGetUpClipInfo(lying, f.clip.skeleton, f.clip.map);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("must end standing"), std::string::npos) << r.error();
  // Wrong skeleton.
  Clip wrong = f.clip.clip;
  wrong.jointCount = 3;
  EXPECT_FALSE(computeGetUpClipInfo(wrong, f.clip.skeleton, f.clip.map).ok());
}

// ------------------------------------------------------------------------------------------

// 8 fall headings, both clips: the fallen pelvis lies as the clip's frame 0 turned by the
// heading (and, in a second pass, tilted by up to 20 degrees of seeded noise). The standing yaw
// matches the pelvis forward projected on the ground within 1 degree, the pelvis is aligned
// exactly, the root is yaw only, and (untilted) the clip played from that root ends facing the
// turned standing forward.
TEST(RootPlacement, EightFallHeadings) {
  std::mt19937 rng(20240605u);
  double worstProjection = 0.0;
  double worstStanding = 0.0;
  for (const char* file : {kFaceUp, kFaceDown}) {
    const Fixture f = load(file);
    const Skeleton& s = f.clip.skeleton;
    const auto P = static_cast<size_t>(f.info.pelvisJoint);
    const auto first = test::modelsOf(s, f.clip.clip.frame(0));
    const auto bind = test::modelsOf(s, s.restLocal);
    const Vec3 forwardInPelvis = glm::conjugate(bind[P].rotation) * f.info.forwardInRoot;
    const Transform clipFromRoot = f.info.rootFromClip.inverse();
    std::vector<Transform> locals(static_cast<size_t>(s.jointCount()));
    for (int k = 0; k < 8; ++k) {
      const double heading = (10.0 + 45.0 * k) * kPi / 180.0;
      for (bool tilted : {false, true}) {
        const Quat turn = glm::angleAxis(heading, kRecoveryUp);
        Transform worldFromClip{turn, Vec3{3.0, 0.0, -2.0}};
        Transform worldFromPelvis = worldFromClip * first[P];
        if (tilted)
          worldFromPelvis.rotation = test::randomRotation(rng, 20.0 * kPi / 180.0) * worldFromPelvis.rotation;

        const RootPlacement p = placeRoot(worldFromPelvis, f.info, Vec3{0.0, 0.0, 1.0}, Vec3{1.0, 0.0, 0.0});
        ASSERT_TRUE(p.valid);
        EXPECT_EQ(p.source, FacingSource::PelvisProjection);
        // Yaw only: Up stays Up.
        EXPECT_TRUE(vecNear(p.worldFromRoot.rotation * kRecoveryUp, kRecoveryUp, 1e-12));
        // Pelvis aligned: worldFromRoot * T_RB puts the clip's pelvis on the fallen one.
        EXPECT_TRUE(vecNear((p.worldFromRoot * f.info.rootFromPelvis).translation,
                            worldFromPelvis.translation, 1e-12));
        // Standing yaw vs the pelvis forward projected on the ground.
        const Vec3 projected = horizontalUnit(worldFromPelvis.rotation * f.info.standingForwardInPelvis);
        const Vec3 standing = horizontalUnit(p.worldFromRoot.rotation * f.info.forwardInRoot);
        const double projectionError =
            test::angleDifference(test::headingOf(standing), test::headingOf(projected));
        EXPECT_LT(degrees(projectionError), 1.0) << file << " heading " << degrees(heading);
        worstProjection = std::max(worstProjection, projectionError);
        EXPECT_TRUE(vecNear(p.worldForward, standing, 1e-12));
        if (tilted) continue;
        // Untilted: the root is the clip's own root turned by the heading...
        EXPECT_TRUE(test::xfNear(p.worldFromRoot, worldFromClip * clipFromRoot, 1e-9, 1e-9));
        // ...and the clip played from it ends facing the turned standing forward.
        sampleGetUpInRoot(f.clip.clip, s, f.info, f.clip.clip.duration(), locals);
        const Transform standingPelvis = p.worldFromRoot * test::modelsOf(s, locals)[P];
        const auto lastClip = test::modelsOf(s, f.clip.clip.frame(f.clip.clip.frameCount - 1));
        const Vec3 expected = horizontalUnit(turn * (lastClip[P].rotation * forwardInPelvis));
        const Vec3 actual = horizontalUnit(standingPelvis.rotation * forwardInPelvis);
        const double standingError =
            test::angleDifference(test::headingOf(actual), test::headingOf(expected));
        EXPECT_LT(degrees(standingError), 1.0) << file << " heading " << degrees(heading);
        worstStanding = std::max(worstStanding, standingError);
      }
    }
  }
  std::printf(
      "[placement] 8 headings x 2 clips: worst yaw error vs projected pelvis forward %.2e deg, "
      "standing end vs turned clip %.2e deg\n",
      degrees(worstProjection), degrees(worstStanding));
  RecordProperty("worst_yaw_error_deg", std::to_string(degrees(worstProjection)));
}

// By hand. In R (forward +Z) the clip's pelvis lies on its back 0.5 m behind the root, head
// toward -Z (pelvis +Y -> R -Z, pelvis +Z -> R +Y: Rx(-90 deg)), and a_B = pelvis -Y (toward
// the feet, R's forward):
//
//   head  <-- pelvis (z = -0.5) --> feet ... root (z = 0, stands facing +Z)
//
// In the world the pelvis lies the same way with its head toward +X, so the character stands
// up facing -X: R_WR turns +Z onto -X (-90 deg about Y), and p_WR = p_WB - R_WR * p_RB.
TEST(RootPlacement, ByHand) {
  GetUpClipInfo info;
  info.rootFromPelvis = Transform{glm::angleAxis(-kPi / 2, Vec3{1.0, 0.0, 0.0}), Vec3{0.0, 0.15, -0.5}};
  info.standingForwardInPelvis = Vec3{0.0, -1.0, 0.0};
  info.forwardInRoot = Vec3{0.0, 0.0, 1.0};
  // Columns: pelvis X -> world +Z, Y -> +X (head), Z -> +Y (face up).
  const glm::dmat3 columns{Vec3{0.0, 0.0, 1.0}, Vec3{1.0, 0.0, 0.0}, Vec3{0.0, 1.0, 0.0}};
  const Transform worldFromPelvis{glm::quat_cast(columns), Vec3{2.0, 0.12, 1.0}};
  const RootPlacement p = placeRoot(worldFromPelvis, info, Vec3{0.0}, Vec3{0.0});
  ASSERT_TRUE(p.valid);
  EXPECT_EQ(p.source, FacingSource::PelvisProjection);
  EXPECT_NEAR(p.projectionLength, 1.0, 1e-12);
  EXPECT_TRUE(vecNear(p.worldForward, Vec3{-1.0, 0.0, 0.0}, 1e-12));
  EXPECT_TRUE(test::rotNear(p.worldFromRoot.rotation, glm::angleAxis(-kPi / 2, kRecoveryUp), 1e-12));
  // p_WR = p_WB - R_WR * p_RB = (2, 0.12, 1) - Ry(-90) * (0, 0.15, -0.5) = (2, 0.12, 1) - (0.5, 0.15, 0)
  EXPECT_TRUE(vecNear(p.worldFromRoot.translation, Vec3{1.5, -0.03, 1.0}, 1e-12));
}

TEST(RootPlacement, DegenerateProjectionUsesThePreFallForwardAndSaysSo) {
  const Fixture f = load(kFaceUp);
  // A pelvis whose a_B points straight up: the projection is degenerate.
  const Quat upright = rotationBetween(f.info.standingForwardInPelvis, kRecoveryUp);
  const Transform worldFromPelvis{upright, Vec3{1.0, 0.2, 1.0}};
  const Vec3 preFall = glm::normalize(Vec3{1.0, 0.3, -1.0});  // recorded while running downhill
  RootPlacement p = placeRoot(worldFromPelvis, f.info, preFall, Vec3{0.0, 0.0, 1.0});
  ASSERT_TRUE(p.valid);
  EXPECT_EQ(p.source, FacingSource::PreFallForward) << facingSourceName(p.source);
  EXPECT_LT(p.projectionLength, 1e-3);
  EXPECT_TRUE(vecNear(p.worldForward, glm::normalize(Vec3{1.0, 0.0, -1.0}), 1e-12));
  EXPECT_TRUE(vecNear(p.worldFromRoot.rotation * f.info.forwardInRoot, p.worldForward, 1e-12));
  EXPECT_TRUE(
      vecNear((p.worldFromRoot * f.info.rootFromPelvis).translation, worldFromPelvis.translation, 1e-12));

  // Pre-fall forward invalid too (zero, vertical, NaN): the level default.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const Vec3& bad : {Vec3{0.0}, Vec3{0.0, 1.0, 0.0}, Vec3{nan, 0.0, 1.0}}) {
    p = placeRoot(worldFromPelvis, f.info, bad, Vec3{0.0, 0.0, -2.0});
    EXPECT_EQ(p.source, FacingSource::LevelDefault) << facingSourceName(p.source);
    EXPECT_TRUE(vecNear(p.worldForward, Vec3{0.0, 0.0, -1.0}, 1e-12));
  }
  // And the level default invalid as well: world axes, reported.
  p = placeRoot(worldFromPelvis, f.info, Vec3{0.0}, Vec3{0.0, -1.0, 0.0});
  ASSERT_TRUE(p.valid);
  EXPECT_EQ(p.source, FacingSource::WorldAxes);
  EXPECT_TRUE(test::rotNear(p.worldFromRoot.rotation, Quat{1.0, 0.0, 0.0, 0.0}, 1e-12));
}

TEST(RootPlacement, RejectsNonFinitePelvis) {
  const Fixture f = load(kFaceUp);
  Transform bad;
  bad.translation.x = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(placeRoot(bad, f.info, Vec3{0.0, 0.0, 1.0}, Vec3{0.0, 0.0, 1.0}).valid);
  bad = Transform{};
  bad.rotation.w = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(placeRoot(bad, f.info, Vec3{0.0, 0.0, 1.0}, Vec3{0.0, 0.0, 1.0}).valid);
}

TEST(RootPlacement, YawBetweenHandlesOppositeVectors) {
  const Quat q = yawBetween(Vec3{0.0, 0.0, 1.0}, Vec3{0.0, 0.0, -1.0});
  EXPECT_TRUE(vecNear(q * Vec3{0.0, 0.0, 1.0}, Vec3{0.0, 0.0, -1.0}, 1e-12));
  EXPECT_TRUE(vecNear(q * kRecoveryUp, kRecoveryUp, 1e-12)) << "a half turn about Up, not a flip";
}

}  // namespace
}  // namespace handoff
