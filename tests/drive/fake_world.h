// A PhysicsWorld that only stores body states and records what a drive hands to the engine
// (angular impulses, joint motors): the drive's output checked without an engine.
#pragma once

#include "handoff/physics.h"

#include <vector>

namespace handoff::test {

class RecordingWorld final : public PhysicsWorld {
 public:
  struct Body {
    Transform worldFromBody;
    Vec3 linearVelocity{0.0};
    Vec3 angularVelocity{0.0};
    Vec3 angularImpulse{0.0};  ///< Sum of applied angular impulses.
    int impulseCalls = 0;
    bool sleeping = false;
  };
  std::vector<Body> bodies;
  std::vector<JointMotorSettings> motors;  ///< Per joint id, the last settings handed over.
  /// Per joint id, what jointBreakState reports: the fake measures no force, a test sets a break.
  std::vector<JointBreakState> breaks;

  BodyId addBody(const Transform& worldFromBody, const Vec3& omega = Vec3{0.0}) {
    bodies.push_back(Body{worldFromBody, Vec3{0.0}, omega});
    return BodyId{static_cast<std::uint32_t>(bodies.size() - 1)};
  }

  Result<BodyId> createBody(const BodyDesc& desc) override { return addBody(desc.worldFromBody); }
  void destroyBody(BodyId) override {}
  Result<JointId> createJoint(const JointDesc&) override {
    motors.emplace_back();
    breaks.emplace_back();
    return JointId{static_cast<std::uint32_t>(motors.size() - 1)};
  }
  void destroyJoint(JointId) override {}
  BodyId addGroundPlane(const Vec3&, double, double) override { return {}; }
  BodyId addStaticBox(const Transform&, const Vec3&, double) override { return {}; }
  int bodyCount() const override { return static_cast<int>(bodies.size()); }
  int jointCount() const override { return static_cast<int>(motors.size()); }
  void setMotionType(BodyId, MotionType) override {}
  MotionType motionType(BodyId) const override { return MotionType::Dynamic; }
  void moveKinematic(BodyId, const Transform&, double) override {}
  void setTransform(BodyId b, const Transform& t) override { at(b).worldFromBody = t; }
  Transform transform(BodyId b) const override { return at(b).worldFromBody; }
  void setLinearVelocity(BodyId b, const Vec3& v) override { at(b).linearVelocity = v; }
  void setAngularVelocity(BodyId b, const Vec3& w) override { at(b).angularVelocity = w; }
  Vec3 linearVelocity(BodyId b) const override { return at(b).linearVelocity; }
  Vec3 angularVelocity(BodyId b) const override { return at(b).angularVelocity; }
  double mass(BodyId) const override { return 1.0; }
  glm::dmat3 worldInertia(BodyId) const override { return glm::dmat3(1.0); }
  void applyLinearImpulse(BodyId, const Vec3&, const Vec3&) override {}
  void applyAngularImpulse(BodyId b, const Vec3& impulse) override {
    at(b).angularImpulse += impulse;
    ++at(b).impulseCalls;
  }
  void setCollisionFilter(BodyId, const CollisionFilter&) override {}
  CollisionFilter collisionFilter(BodyId) const override { return {}; }
  void setEnabled(BodyId, bool) override {}
  bool isEnabled(BodyId) const override { return true; }
  bool isSleeping(BodyId b) const override { return at(b).sleeping; }
  void wake(BodyId b) override { at(b).sleeping = false; }
  void sleep(BodyId b) override { at(b).sleeping = true; }
  void resetWarmStart(JointId) override {}
  void setJointMotor(JointId j, const JointMotorSettings& motor) override { motors.at(j.value) = motor; }
  void setJointFrames(JointId, const Transform&, const Transform&) override {}
  void setJointLimits(JointId, const Vec3&, const Vec3&) override {}
  void setPairCollision(BodyId, BodyId, bool) override {}
  Quat jointRelativeRotation(JointId) const override { return Quat{1.0, 0.0, 0.0, 0.0}; }
  double jointAnchorSeparation(JointId) const override { return 0.0; }
  JointBreakState jointBreakState(JointId j) const override { return breaks.at(j.value); }
  void step(double, int) override {}
  const StepStats& lastStepStats() const override { return stats_; }
  const WorldSettings& settings() const override { return settings_; }
  bool capsuleOverlaps(const Transform&, double, double, std::uint32_t) const override { return false; }
  CastHit castCapsule(const Transform&, const Vec3&, double, double, std::uint32_t) const override {
    return CastHit{};
  }
  CastHit castRay(const Vec3&, const Vec3&, std::uint32_t) const override { return CastHit{}; }
  Result<ShapeId> createShape(const TriangleMeshDesc&) override { return Error{"RecordingWorld: no shapes"}; }
  Result<ShapeId> createShape(const ConvexHullDesc&) override { return Error{"RecordingWorld: no shapes"}; }
  Result<ShapeId> createShape(const HeightfieldDesc&) override { return Error{"RecordingWorld: no shapes"}; }
  Result<ShapeId> createShape(const CompoundDesc&) override { return Error{"RecordingWorld: no shapes"}; }
  void destroyShape(ShapeId) override {}
  std::uint64_t userData(BodyId) const override { return 0; }
  void setContactReport(BodyId, double) override {}
  std::span<const ContactEvent> contactEvents() const override { return {}; }
  int contactCount(BodyId) const override { return 0; }

 private:
  Body& at(BodyId b) { return bodies.at(b.value); }
  const Body& at(BodyId b) const { return bodies.at(b.value); }
  StepStats stats_;
  WorldSettings settings_;
};

}  // namespace handoff::test
