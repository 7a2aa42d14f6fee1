// Velocity inheritance, pose history, write-back and display blend, without an engine.
#include "handoff/handoff.h"

#include <gtest/gtest.h>

#include "support/test_math.h"

namespace handoff {
namespace {

using test::rotNear;
using test::vecNear;
using test::xfNear;

struct Buffers {
  explicit Buffers(int n)
      : rawLinear(static_cast<size_t>(n)),
        rawAngular(static_cast<size_t>(n)),
        linear(static_cast<size_t>(n)),
        angular(static_cast<size_t>(n)),
        clamps(static_cast<size_t>(n)) {}
  std::vector<Vec3> rawLinear, rawAngular, linear, angular;
  std::vector<std::uint8_t> clamps;
  InheritedVelocities run(const PoseHistory& h, const HandoffSettings& s) {
    return inheritVelocities(h, s, rawLinear, rawAngular, linear, angular, clamps);
  }
};

TEST(PoseHistory, RefusesBadSamplesAndKeepsState) {
  PoseHistory h(1);
  const Transform pose = Transform::fromTranslation({1, 2, 3});
  ASSERT_TRUE(h.push(0.0, Transform::identity(), {&pose, 1}, false).ok());
  // Duplicate timestamp and going back in time are refused.
  EXPECT_FALSE(h.push(0.0, Transform::identity(), {&pose, 1}, false).ok());
  EXPECT_FALSE(h.push(-0.1, Transform::identity(), {&pose, 1}, false).ok());
  Transform nan = pose;
  nan.translation.x = std::numeric_limits<double>::quiet_NaN();
  const Status s = h.push(0.1, Transform::identity(), {&nan, 1}, false);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("not finite"), std::string::npos);
  EXPECT_EQ(h.size(), 1);
  EXPECT_TRUE(vecNear(h.body(0, 0).translation, pose.translation, 0));
  // Capacity three: the oldest drops out.
  for (int i = 1; i <= 4; ++i) {
    const Transform p = Transform::fromTranslation({double(i), 0, 0});
    ASSERT_TRUE(h.push(0.1 * i, Transform::identity(), {&p, 1}, false).ok());
  }
  EXPECT_EQ(h.size(), 3);
  EXPECT_DOUBLE_EQ(h.body(0, 0).translation.x, 4.0);
  EXPECT_DOUBLE_EQ(h.body(2, 0).translation.x, 2.0);
}

TEST(InheritVelocities, LinearIsTheFiniteDifferenceAndAngularIsExact) {
  const double dt = 1.0 / 60.0;
  const Vec3 axis = glm::normalize(Vec3{0.3, 1.0, -0.6});  // tilted
  const double rate = 5.0;                                 // rad/s
  PoseHistory h(2);
  for (int k = 0; k < 3; ++k) {
    const double t = k * dt;
    const Transform poses[2] = {
        {glm::angleAxis(rate * t, axis), Vec3{2.0 * t, 0.5 - 4.9 * t * t, 0.0}},
        {glm::angleAxis(rate * t, axis) * glm::angleAxis(0.4, Vec3{1, 0, 0}), Vec3{0.0, 1.0, -3.0 * t}}};
    ASSERT_TRUE(h.push(t, Transform::identity(), poses, false).ok());
  }
  Buffers out(2);
  const InheritedVelocities info = out.run(h, {});
  EXPECT_DOUBLE_EQ(info.sampleDt, dt);
  const Vec3 expected0 = (h.body(0, 0).translation - h.body(1, 0).translation) / dt;
  EXPECT_TRUE(vecNear(out.linear[0], expected0, 1e-12));
  EXPECT_TRUE(vecNear(out.linear[1], Vec3{0, 0, -3.0}, 1e-9));
  EXPECT_TRUE(vecNear(out.angular[0], rate * axis, 1e-9));
  EXPECT_TRUE(vecNear(out.angular[1], rate * axis, 1e-9));  // world-space delta
  EXPECT_EQ(out.clamps[0], kClampNone);
}

TEST(InheritVelocities, TeleportInheritsNoVelocityFromTheJump) {
  const double dt = 0.1;
  PoseHistory h(1);
  // Moving at +1 m/s along X, then teleported 10 m and turned 90 degrees about Y.
  const Transform p0 = Transform::fromTranslation({0, 0, 0});
  const Transform p1 = Transform::fromTranslation({0.1, 0, 0});
  const Transform jumpRoot{glm::angleAxis(kPi / 2, Vec3{0, 1, 0}), Vec3{0, 0, 10}};
  const Transform p2 = jumpRoot * Transform::fromTranslation({0.2, 0, 0});
  ASSERT_TRUE(h.push(0.0, Transform::identity(), {&p0, 1}, false).ok());
  ASSERT_TRUE(h.push(dt, Transform::identity(), {&p1, 1}, false).ok());
  ASSERT_TRUE(h.push(2 * dt, jumpRoot, {&p2, 1}, /*teleport=*/true).ok());
  Buffers out(1);
  const InheritedVelocities info = out.run(h, {});
  EXPECT_TRUE(info.teleportFlagged);
  EXPECT_TRUE(out.clamps[0] & kClampTeleport);
  EXPECT_GT(glm::length(out.rawLinear[0]), 0.0);
  // The pre-teleport 1 m/s along X, carried through the root's turn: along -Z.
  EXPECT_TRUE(vecNear(out.linear[0], Vec3{0, 0, -1}, 1e-12));
  EXPECT_EQ(clampReasonText(out.clamps[0]), "teleport");

  // Not flagged, but the root jumped 10 m in 0.1 s: detected.
  PoseHistory d(1);
  ASSERT_TRUE(d.push(0.0, Transform::identity(), {&p0, 1}, false).ok());
  ASSERT_TRUE(d.push(dt, Transform::identity(), {&p1, 1}, false).ok());
  ASSERT_TRUE(d.push(2 * dt, jumpRoot, {&p2, 1}, false).ok());
  const InheritedVelocities detected = out.run(d, {});
  EXPECT_FALSE(detected.teleportFlagged);
  EXPECT_TRUE(detected.teleportDetected);
  EXPECT_NEAR(detected.rootJump, 10.0, 1e-12);
  EXPECT_TRUE(vecNear(out.linear[0], Vec3{0, 0, -1}, 1e-12));

  // A teleport with no earlier pair inherits nothing at all.
  PoseHistory short_(1);
  ASSERT_TRUE(short_.push(0.0, Transform::identity(), {&p1, 1}, false).ok());
  ASSERT_TRUE(short_.push(dt, jumpRoot, {&p2, 1}, true).ok());
  out.run(short_, {});
  EXPECT_EQ(out.linear[0], Vec3{0.0});
  EXPECT_TRUE(out.clamps[0] & kClampTeleport);
}

TEST(InheritVelocities, ClampsAreRecordedWithReasons) {
  PoseHistory h(1);
  const Transform a = Transform::identity();
  const Transform b{glm::angleAxis(1.0, Vec3{0, 0, 1}), Vec3{0.9, 0, 0}};
  ASSERT_TRUE(h.push(0.0, Transform::identity(), {&a, 1}, false).ok());
  ASSERT_TRUE(h.push(0.01, Transform::identity(), {&b, 1}, false).ok());
  HandoffSettings s;
  s.maxLinearSpeed = 30.0;   // raw is 90 m/s
  s.maxAngularSpeed = 40.0;  // raw is 100 rad/s
  Buffers out(1);
  out.run(h, s);
  EXPECT_NEAR(glm::length(out.rawLinear[0]), 90.0, 1e-9);
  EXPECT_NEAR(glm::length(out.linear[0]), 30.0, 1e-9);
  EXPECT_NEAR(glm::length(out.angular[0]), 40.0, 1e-9);
  EXPECT_TRUE(vecNear(glm::normalize(out.angular[0]), Vec3{0, 0, 1}, 1e-12));
  EXPECT_EQ(out.clamps[0], kClampLinearLimit | kClampAngularLimit);
  EXPECT_EQ(clampReasonText(out.clamps[0]), "linear limit, angular limit");

  PoseHistory one(1);
  ASSERT_TRUE(one.push(0.0, Transform::identity(), {&a, 1}, false).ok());
  out.run(one, s);
  EXPECT_EQ(out.linear[0], Vec3{0.0});
  EXPECT_EQ(out.clamps[0], kClampNoHistory);
}

// A three-joint chain with bodies on joints 0 and 1; joint 2 (a "finger") has none.
//
//   0 pelvis ---- 1 arm ---- 2 finger
struct Chain {
  Skeleton skeleton;
  RagdollAsset asset;
  Chain() {
    skeleton.jointNames = {"pelvis", "arm", "finger"};
    skeleton.parents = {kNoParent, 0, 1};
    skeleton.restLocal = {Transform::fromTranslation({0, 1, 0}), Transform::fromTranslation({0.3, 0, 0}),
                          Transform::fromTranslation({0.3, 0, 0})};
    skeleton.endSiteOffset = {Vec3{0}, Vec3{0}, Vec3{0.05, 0, 0}};
    for (int j = 0; j < 2; ++j) {
      BodyDef body;
      body.name = skeleton.jointNames[static_cast<size_t>(j)];
      body.joint = j;
      body.parentBody = j - 1;
      body.boneFromBody = {glm::angleAxis(-kPi / 2, Vec3{0, 0, 1}), Vec3{0.15, 0, 0}};
      body.mass = 1.0;
      asset.bodies.push_back(body);
    }
  }
};

TEST(WriteBack, ReproducesTheAnimatedPoseAndRidesAlong) {
  Chain c;
  std::vector<Transform> locals = c.skeleton.restLocal;
  locals[1].rotation = glm::angleAxis(0.7, Vec3{0, 0, 1});
  locals[2].rotation = glm::angleAxis(-0.3, Vec3{0, 1, 0});
  const Transform worldFromRoot{glm::angleAxis(0.4, Vec3{0, 1, 0}), Vec3{5, 0, 2}};
  std::vector<Transform> models(3);
  localToModel(c.skeleton, locals, models);
  std::vector<Transform> bodies(2);
  bodyPosesFromModels(c.asset, models, worldFromRoot, bodies);
  std::vector<Transform> scratch(3), out(3);
  writeBackPose(c.skeleton, c.asset, bodies, worldFromRoot, locals, {}, scratch, out);
  for (int j = 0; j < 3; ++j) EXPECT_TRUE(xfNear(out[size_t(j)], locals[size_t(j)], 1e-9, 1e-9)) << j;

  // Physics moved the arm body: the finger (no body) follows it with its animated local.
  bodies[1] = Transform{glm::angleAxis(0.5, Vec3{1, 0, 0}), Vec3{0, 0.1, 0}} * bodies[1];
  writeBackPose(c.skeleton, c.asset, bodies, worldFromRoot, locals, {}, scratch, out);
  EXPECT_TRUE(xfNear(out[2], locals[2], 1e-12, 1e-12));
  const Transform armWorld = worldFromRoot * scratch[1];
  EXPECT_TRUE(xfNear(armWorld * c.asset.bodies[1].boneFromBody, bodies[1], 1e-9, 1e-9));

  // Masked bone keeps its animated local rotation even though it has a body.
  const std::vector<std::uint8_t> mask{1, 0, 1};
  writeBackPose(c.skeleton, c.asset, bodies, worldFromRoot, locals, mask, scratch, out);
  EXPECT_TRUE(xfNear(out[1], locals[1], 1e-12, 1e-12));
}

TEST(DisplayBlend, WeightRamps) {
  EXPECT_DOUBLE_EQ(displayBlendWeight(0.0, 0.15), 0.0);
  EXPECT_DOUBLE_EQ(displayBlendWeight(0.075, 0.15), 0.5);
  EXPECT_DOUBLE_EQ(displayBlendWeight(1.0, 0.15), 1.0);
  EXPECT_DOUBLE_EQ(displayBlendWeight(0.0, 0.0), 1.0);
  // The blend itself: 0 shows animation, 1 physics, the short arc in between.
  const std::vector<Transform> anim{{glm::angleAxis(0.1, Vec3{0, 1, 0}), Vec3{0, 0, 0}}};
  const std::vector<Transform> phys{{-glm::angleAxis(0.5, Vec3{0, 1, 0}), Vec3{1, 0, 0}}};
  std::vector<Transform> shown(1);
  blendPoses(anim, phys, displayBlendWeight(0.0, 0.15), shown);
  EXPECT_TRUE(xfNear(shown[0], anim[0], 0, 1e-12));
  blendPoses(anim, phys, displayBlendWeight(0.15, 0.15), shown);
  EXPECT_TRUE(xfNear(shown[0], phys[0], 0, 1e-12));
  blendPoses(anim, phys, displayBlendWeight(0.075, 0.15), shown);
  EXPECT_TRUE(rotNear(shown[0].rotation, glm::angleAxis(0.3, Vec3{0, 1, 0}), 1e-12));
}

}  // namespace
}  // namespace handoff
