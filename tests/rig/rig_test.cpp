#include "handoff/rig.h"

#include <gtest/gtest.h>

#include <random>

#include "support/test_math.h"

namespace handoff {
namespace {

using test::rotNear;
using test::vecNear;
using test::xfNear;

// A small chain with a branch:
//
//        2 (tip)
//        |
//        1 --- 3
//        |
//        0 (root)
Skeleton makeSkeleton() {
  Skeleton s;
  s.jointNames = {"root", "mid", "tip", "side"};
  s.parents = {kNoParent, 0, 1, 1};
  s.restLocal = {Transform::fromTranslation({0, 1, 0}),
                 {glm::angleAxis(kPi / 2, Vec3{0, 0, 1}), Vec3{0, 0.5, 0}},
                 Transform::fromTranslation({0.5, 0, 0}),
                 Transform::fromTranslation({0, 0.3, 0})};
  s.endSiteOffset = {Vec3{0}, Vec3{0}, Vec3{0.1, 0, 0}, Vec3{0}};
  return s;
}

TEST(Skeleton, ValidateAndFind) {
  const Skeleton s = makeSkeleton();
  EXPECT_TRUE(s.validate().ok()) << s.validate().error();
  EXPECT_EQ(s.findJoint("tip"), 2);
  EXPECT_EQ(s.findJoint("nope"), -1);
  EXPECT_EQ(s.children(1), (std::vector<int>{2, 3}));
  Skeleton bad = s;
  bad.parents[1] = 2;
  EXPECT_NE(bad.validate().error().find("mid"), std::string::npos);
  bad = s;
  bad.jointNames[3] = "tip";
  EXPECT_NE(bad.validate().error().find("appears twice"), std::string::npos);
  bad = s;
  bad.restLocal[2].translation.x = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(bad.validate().error().find("non-finite"), std::string::npos);
}

TEST(Pose, LocalToModelByHand) {
  const Skeleton s = makeSkeleton();
  std::vector<Transform> models(4);
  localToModel(s, s.restLocal, models);
  EXPECT_TRUE(vecNear(models[1].translation, Vec3{0, 1.5, 0}, 1e-12));
  // mid is rotated +90 deg about Z: its +X points to world +Y.
  EXPECT_TRUE(vecNear(models[2].translation, Vec3{0, 2.0, 0}, 1e-12));
  // side's local +Y maps to world -X.
  EXPECT_TRUE(vecNear(models[3].translation, Vec3{-0.3, 1.5, 0}, 1e-12));
  EXPECT_NEAR(restHipHeight(s), 0.0, 1e-12);  // no joint with 3 children: root, lowest point
}

TEST(Pose, RandomLocalModelLocalRoundTrip) {
  std::mt19937 rng(99);
  std::normal_distribution<double> n(0.0, 1.0);
  Skeleton s;
  const int count = 31;
  for (int i = 0; i < count; ++i) {
    // Appended: GCC 12 at -O3 reports a false -Wrestrict in "j" + std::to_string(i).
    s.jointNames.push_back(std::string("j").append(std::to_string(i)));
    s.parents.push_back(i == 0 ? kNoParent : static_cast<int>(rng() % static_cast<unsigned>(i)));
    s.restLocal.push_back({glm::normalize(Quat{n(rng), n(rng), n(rng), n(rng)}), Vec3{n(rng), n(rng), n(rng)} * 0.3});
    s.endSiteOffset.push_back(Vec3{0});
  }
  ASSERT_TRUE(s.validate().ok());
  std::vector<Transform> models(count), back(count);
  localToModel(s, s.restLocal, models);
  modelToLocal(s, models, back);
  for (int i = 0; i < count; ++i) {
    EXPECT_TRUE(xfNear(back[static_cast<size_t>(i)], s.restLocal[static_cast<size_t>(i)], 1e-6, 1e-6)) << i;
  }
}

Clip makeClip(const Skeleton& s) {
  // Three frames at 10 Hz; joint 1 turns about Y by 0, 1.0, 3.0 rad (the last step crosses a
  // quaternion sign flip when stored continuously), the root walks along +X.
  Clip c;
  c.name = "turn";
  c.jointCount = s.jointCount();
  c.frameCount = 3;
  c.frameRate = 10.0;
  const double angles[3] = {0.0, 1.0, 3.0};
  for (int f = 0; f < 3; ++f) {
    for (int j = 0; j < c.jointCount; ++j) {
      Transform t = s.restLocal[static_cast<size_t>(j)];
      if (j == 0) t.translation += Vec3{0.2 * f, 0, 0};
      if (j == 1) t.rotation = glm::angleAxis(angles[f], Vec3{0, 1, 0});
      c.keys.push_back(t);
    }
  }
  return c;
}

TEST(Clip, SamplingAtFrameTimesReproducesFrames) {
  const Skeleton s = makeSkeleton();
  const Clip c = makeClip(s);
  ASSERT_TRUE(c.validate(s).ok());
  EXPECT_DOUBLE_EQ(c.duration(), 0.2);
  std::vector<Transform> pose(4);
  for (int f = 0; f < 3; ++f) {
    c.sample(c.frameTime(f), WrapMode::Clamp, pose);
    for (int j = 0; j < 4; ++j) {
      EXPECT_TRUE(xfNear(pose[static_cast<size_t>(j)], c.frame(f)[static_cast<size_t>(j)], 1e-12, 1e-12));
    }
  }
}

TEST(Clip, HalfWayIsShortArcMidpointAcrossSignFlip) {
  const Skeleton s = makeSkeleton();
  Clip c = makeClip(s);
  // Store frame 2's rotation with the opposite sign: sampling must still take the short arc.
  c.keys[2 * 4 + 1].rotation = -c.keys[2 * 4 + 1].rotation;
  std::vector<Transform> pose(4);
  c.sample(0.15, WrapMode::Clamp, pose);
  EXPECT_TRUE(rotNear(pose[1].rotation, glm::angleAxis(2.0, Vec3{0, 1, 0}), 1e-12));
  EXPECT_TRUE(vecNear(pose[0].translation, Vec3{0.3, 1, 0}, 1e-12));
}

TEST(Clip, ClampAndLoopWithRootMotion) {
  const Skeleton s = makeSkeleton();
  const Clip c = makeClip(s);
  std::vector<Transform> pose(4);
  c.sample(5.0, WrapMode::Clamp, pose);
  EXPECT_TRUE(vecNear(pose[0].translation, Vec3{0.4, 1, 0}, 1e-12));
  c.sample(-1.0, WrapMode::Clamp, pose);
  EXPECT_TRUE(vecNear(pose[0].translation, Vec3{0.0, 1, 0}, 1e-12));
  // Loop: at 0.25 s = one cycle (0.2 s) + 0.05 s the root has advanced one cycle (0.4 m) + 0.1.
  c.sample(0.25, WrapMode::Loop, pose);
  EXPECT_TRUE(vecNear(pose[0].translation, Vec3{0.5, 1, 0}, 1e-12));
  EXPECT_TRUE(vecNear(c.cycleRootMotion(), Vec3{0.4, 0, 0}, 1e-12));
}

TEST(Blend, WeightsAndShortArc) {
  const std::vector<Transform> a{{glm::angleAxis(0.2, Vec3{1, 0, 0}), Vec3{0, 0, 0}}};
  const std::vector<Transform> b{{-glm::angleAxis(0.6, Vec3{1, 0, 0}), Vec3{1, 2, 3}}};
  std::vector<Transform> out(1);
  blendPoses(a, b, 0.0, out);
  EXPECT_TRUE(xfNear(out[0], a[0], 1e-12, 1e-12));
  blendPoses(a, b, 1.0, out);
  EXPECT_TRUE(xfNear(out[0], b[0], 1e-12, 1e-12));
  blendPoses(a, b, 0.25, out);
  EXPECT_TRUE(xfNear(out[0], {glm::angleAxis(0.3, Vec3{1, 0, 0}), Vec3{0.25, 0.5, 0.75}}, 1e-12, 1e-12));
  const std::vector<double> weights{0.5};
  blendPoses(a, b, weights, out);
  EXPECT_TRUE(rotNear(out[0].rotation, glm::angleAxis(0.4, Vec3{1, 0, 0}), 1e-12));
}

TEST(Clip, ValidateNamesTheProblem) {
  const Skeleton s = makeSkeleton();
  Clip c = makeClip(s);
  c.keys[5].translation.z = std::numeric_limits<double>::infinity();
  const Status st = c.validate(s);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().find("frame 1"), std::string::npos) << st.error();
  EXPECT_NE(st.error().find("'mid'"), std::string::npos) << st.error();
  c = makeClip(s);
  c.frameRate = 0;
  EXPECT_FALSE(c.validate(s).ok());
}

}  // namespace
}  // namespace handoff
