// A PhysicsWorld decorator for the conformance suite's own tests: it forwards every call to the
// world it wraps, except for one deliberate fault, so a test can show that runAll names the
// contract the fault breaks (and only that one).
#pragma once

#include "handoff/physics.h"

#include <memory>
#include <utility>

namespace handoff::test {

enum class Fault {
  None,  ///< A faithful forwarder: must pass every contract.
  /// The joint angle convention's sign flipped, as an adapter that builds its engine's constraint
  /// with the bodies the other way round would have it: limits act on the negated angles (the
  /// window [lower, upper] becomes [-upper, -lower]) and motors drive toward the inverse target.
  /// jointRelativeRotation still reads the poses (correctly).
  FlippedAngleSign,
  /// moveKinematic teleports (setTransform): the body arrives but without the velocity that took it
  /// there.
  TeleportingMove,
  /// State shared by the worlds of the process (as an engine's global scratch or cache that several
  /// live worlds disturb): while another world of this kind is alive, step() takes one substep
  /// more than asked. A world's results then depend on the others.
  SharedState,
};

class BrokenWorld : public PhysicsWorld, private SubstepListener {
 public:
  BrokenWorld(std::unique_ptr<PhysicsWorld> inner, Fault fault) : inner_(std::move(inner)), fault_(fault) {
    // The inner world runs this decorator's listeners (the substep listener list is not virtual).
    inner_->addSubstepListener(this);
    ++liveWorlds();
  }
  ~BrokenWorld() override {
    inner_->removeSubstepListener(this);
    --liveWorlds();
  }

  Result<BodyId> createBody(const BodyDesc& desc) override { return inner_->createBody(desc); }
  void destroyBody(BodyId body) override { inner_->destroyBody(body); }
  Result<JointId> createJoint(const JointDesc& desc) override {
    if (fault_ != Fault::FlippedAngleSign) return inner_->createJoint(desc);
    JointDesc flipped = desc;
    flipLimits(flipped.angularLower, flipped.angularUpper);
    return inner_->createJoint(flipped);
  }
  void destroyJoint(JointId joint) override { inner_->destroyJoint(joint); }
  BodyId addGroundPlane(const Vec3& normal, double offset, double friction) override {
    return inner_->addGroundPlane(normal, offset, friction);
  }
  BodyId addStaticBox(const Transform& worldFromBox, const Vec3& halfExtents, double friction) override {
    return inner_->addStaticBox(worldFromBox, halfExtents, friction);
  }
  Result<ShapeId> createShape(const TriangleMeshDesc& desc) override { return inner_->createShape(desc); }
  Result<ShapeId> createShape(const ConvexHullDesc& desc) override { return inner_->createShape(desc); }
  Result<ShapeId> createShape(const HeightfieldDesc& desc) override { return inner_->createShape(desc); }
  Result<ShapeId> createShape(const CompoundDesc& desc) override { return inner_->createShape(desc); }
  void destroyShape(ShapeId shape) override { inner_->destroyShape(shape); }
  int bodyCount() const override { return inner_->bodyCount(); }
  int jointCount() const override { return inner_->jointCount(); }

  void setMotionType(BodyId body, MotionType motion) override { inner_->setMotionType(body, motion); }
  MotionType motionType(BodyId body) const override { return inner_->motionType(body); }
  void moveKinematic(BodyId body, const Transform& worldFromBody, double dt) override {
    if (fault_ == Fault::TeleportingMove)
      inner_->setTransform(body, worldFromBody);
    else
      inner_->moveKinematic(body, worldFromBody, dt);
  }
  void setTransform(BodyId body, const Transform& worldFromBody) override {
    inner_->setTransform(body, worldFromBody);
  }
  Transform transform(BodyId body) const override { return inner_->transform(body); }
  void setLinearVelocity(BodyId body, const Vec3& velocity) override {
    inner_->setLinearVelocity(body, velocity);
  }
  void setAngularVelocity(BodyId body, const Vec3& omega) override {
    inner_->setAngularVelocity(body, omega);
  }
  Vec3 linearVelocity(BodyId body) const override { return inner_->linearVelocity(body); }
  Vec3 angularVelocity(BodyId body) const override { return inner_->angularVelocity(body); }
  double mass(BodyId body) const override { return inner_->mass(body); }
  glm::dmat3 worldInertia(BodyId body) const override { return inner_->worldInertia(body); }
  void applyLinearImpulse(BodyId body, const Vec3& impulse, const Vec3& worldPoint) override {
    inner_->applyLinearImpulse(body, impulse, worldPoint);
  }
  void applyAngularImpulse(BodyId body, const Vec3& angularImpulse) override {
    inner_->applyAngularImpulse(body, angularImpulse);
  }
  void setCollisionFilter(BodyId body, const CollisionFilter& filter) override {
    inner_->setCollisionFilter(body, filter);
  }
  CollisionFilter collisionFilter(BodyId body) const override { return inner_->collisionFilter(body); }
  void setEnabled(BodyId body, bool enabled) override { inner_->setEnabled(body, enabled); }
  bool isEnabled(BodyId body) const override { return inner_->isEnabled(body); }
  bool isSleeping(BodyId body) const override { return inner_->isSleeping(body); }
  std::uint64_t userData(BodyId body) const override { return inner_->userData(body); }
  void wake(BodyId body) override { inner_->wake(body); }
  void sleep(BodyId body) override { inner_->sleep(body); }
  void resetWarmStart(JointId joint) override { inner_->resetWarmStart(joint); }
  void resetWarmStarts(std::span<const JointId> joints) override { inner_->resetWarmStarts(joints); }
  void setJointMotor(JointId joint, const JointMotorSettings& motor) override {
    if (fault_ != Fault::FlippedAngleSign) return inner_->setJointMotor(joint, motor);
    JointMotorSettings flipped = motor;
    flipped.target = glm::conjugate(motor.target);
    flipped.targetRates = -motor.targetRates;
    inner_->setJointMotor(joint, flipped);
  }
  void setJointFrames(JointId joint, const Transform& bodyAFromJoint,
                      const Transform& bodyBFromJoint) override {
    inner_->setJointFrames(joint, bodyAFromJoint, bodyBFromJoint);
  }
  void setJointLimits(JointId joint, const Vec3& angularLower, const Vec3& angularUpper) override {
    Vec3 lower = angularLower, upper = angularUpper;
    if (fault_ == Fault::FlippedAngleSign) flipLimits(lower, upper);
    inner_->setJointLimits(joint, lower, upper);
  }
  void setPairCollision(BodyId a, BodyId b, bool enabled) override {
    inner_->setPairCollision(a, b, enabled);
  }
  Quat jointRelativeRotation(JointId joint) const override { return inner_->jointRelativeRotation(joint); }
  double jointAnchorSeparation(JointId joint) const override { return inner_->jointAnchorSeparation(joint); }
  JointBreakState jointBreakState(JointId joint) const override { return inner_->jointBreakState(joint); }

  void step(double dt, int substeps) override {
    inner_->step(dt, fault_ == Fault::SharedState && liveWorlds() > 1 ? substeps + 1 : substeps);
  }
  const StepStats& lastStepStats() const override { return inner_->lastStepStats(); }
  const WorldSettings& settings() const override { return inner_->settings(); }

  bool capsuleOverlaps(const Transform& worldFromCapsule, double radius, double halfHeight,
                       std::uint32_t mask) const override {
    return inner_->capsuleOverlaps(worldFromCapsule, radius, halfHeight, mask);
  }
  CastHit castRay(const Vec3& from, const Vec3& to, std::uint32_t mask) const override {
    return inner_->castRay(from, to, mask);
  }
  CastHit castCapsule(const Transform& from, const Vec3& to, double radius, double halfHeight,
                      std::uint32_t mask) const override {
    return inner_->castCapsule(from, to, radius, halfHeight, mask);
  }
  void setContactReport(BodyId body, double minImpulse) override {
    inner_->setContactReport(body, minImpulse);
  }
  std::span<const ContactEvent> contactEvents() const override { return inner_->contactEvents(); }
  int contactCount(BodyId body) const override { return inner_->contactCount(body); }
  int closestPoints(BodyId body, const Transform& worldFromBody, double maxDistance, std::uint32_t mask,
                    std::span<SurfacePoint> out) const override {
    return inner_->closestPoints(body, worldFromBody, maxDistance, mask, out);
  }
  bool limitDepenetration(BodyId body, double maxSpeed, double maxTime) override {
    return inner_->limitDepenetration(body, maxSpeed, maxTime);
  }
  bool depenetrationLimited(BodyId body) const override { return inner_->depenetrationLimited(body); }

 private:
  void onSubstep(double substepDt) override { runSubstepListeners(substepDt); }

  /// [lower, upper] -> [-upper, -lower] on limited axes (lower <= upper); free axes stay free.
  static void flipLimits(Vec3& lower, Vec3& upper) {
    for (int k = 0; k < 3; ++k) {
      if (lower[k] > upper[k]) continue;
      const double l = lower[k];
      lower[k] = -upper[k];
      upper[k] = -l;
    }
  }

  /// BrokenWorlds alive in the process (the tests run on one thread).
  static int& liveWorlds() {
    static int count = 0;
    return count;
  }

  std::unique_ptr<PhysicsWorld> inner_;
  Fault fault_;
};

}  // namespace handoff::test
