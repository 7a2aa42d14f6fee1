// Props in the hand (PropDesc): a body of its own joined to the hand's body by a fixed joint while
// held, kinematic on the hand's animated pose while the hand is animated, a free body with the
// hand's velocity at the grip once dropped.
#include "controller/character_impl.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace handoff {
namespace {

// A dropped prop's pair with its character comes on once the two are this far apart, or further
// than their speeds close in a frame (the rule of the ragdoll's own suspended pairs).
constexpr double kPropPairMargin = 0.005;          // [m]
constexpr double kPropPairLookAhead = 1.0 / 60.0;  // [s]

}  // namespace

Result<int> Character::Impl::addProp(const PropDesc& desc) {
  const std::string what = "prop '" + desc.name + "': ";
  if (desc.name.empty()) return Error{"prop: the name must not be empty"};
  for (const Prop& p : props_) {
    if (p.desc.name == desc.name) return Error{what + "a prop of this name is already added"};
  }
  const ShapeDesc& shape = desc.shape;
  const bool shapeOk =
      (shape.type == ShapeType::Sphere && shape.radius > 0.0 && std::isfinite(shape.radius)) ||
      (shape.type == ShapeType::Capsule && shape.radius > 0.0 && std::isfinite(shape.radius) &&
       shape.halfHeight >= 0.0 && std::isfinite(shape.halfHeight)) ||
      (shape.type == ShapeType::Box && isFinite(shape.halfExtents) && shape.halfExtents.x > 0.0 &&
       shape.halfExtents.y > 0.0 && shape.halfExtents.z > 0.0);
  if (!shapeOk)
    return Error{what + "the shape needs a type (sphere, capsule, box) and positive finite sizes"};
  if (!(desc.mass > 0.0) || !std::isfinite(desc.mass)) return Error{what + "mass must be > 0 and finite"};
  if (!isFinite(desc.inertia) || desc.inertia.x < 0.0 || desc.inertia.y < 0.0 || desc.inertia.z < 0.0)
    return Error{what + "inertia must be >= 0 and finite (0: from the shape)"};
  if (!isFinite(desc.handFromGrip) || !isFinite(desc.propFromGrip))
    return Error{what + "handFromGrip and propFromGrip must be finite"};
  if (!(desc.friction >= 0.0) || !std::isfinite(desc.friction) || !(desc.restitution >= 0.0) ||
      !(desc.restitution <= 1.0))
    return Error{what + "friction must be >= 0 and restitution in [0, 1]"};
  int joint = desc.handJoint;
  if (!desc.handBone.empty()) {
    joint = skeleton_.findJoint(desc.handBone);
    if (joint < 0) return Error{what + "no bone named '" + desc.handBone + "'"};
  } else if (joint < 0 || joint >= skeleton_.jointCount()) {
    return Error{what + "handJoint " + std::to_string(joint) + " is out of range (the skeleton has " +
                 std::to_string(skeleton_.jointCount()) + " joints)"};
  }
  int bodyJoint = joint;
  while (bodyJoint >= 0 && asset_->bodyForJoint(bodyJoint) < 0)
    bodyJoint = skeleton_.parents[static_cast<size_t>(bodyJoint)];
  if (bodyJoint < 0) {
    return Error{what + "bone '" + skeleton_.jointNames[static_cast<size_t>(joint)] +
                 "' has no body, nor has any bone above it"};
  }
  Prop p;
  p.desc = desc;
  p.handBody = asset_->bodyForJoint(bodyJoint);
  const BodyDef& hand = asset_->bodies[static_cast<size_t>(p.handBody)];
  // The bones between the body's and the hand's, as animated now, fixed from here on.
  const Transform bodyBoneFromHand =
      animModels_[static_cast<size_t>(bodyJoint)].inverse() * animModels_[static_cast<size_t>(joint)];
  p.handBodyFromGrip = hand.boneFromBody.inverse() * bodyBoneFromHand * desc.handFromGrip;

  (void)ragdoll_->setCapsuleOnly(false);  // the prop hangs on the hand body from now
  const BodyId handId = ragdoll_->body(p.handBody);
  const Transform worldFromHand = world_->transform(handId);
  BodyDesc body;
  body.shape = shape;
  body.mass = desc.mass;
  body.inertia = desc.inertia;
  body.worldFromBody = worldFromHand * p.handBodyFromGrip * desc.propFromGrip.inverse();
  body.motion = MotionType::Kinematic;
  // A prop is debris: it collides with the world, ragdolls and capsules; its own character is
  // switched off pair by pair (pairOff).
  body.filter = CollisionFilter{layers::kDebris, layers::kAll};
  body.friction = desc.friction;
  body.restitution = desc.restitution;
  Result<BodyId> created = world_->createBody(body);
  if (!created) return Error{what + created.error()};
  p.body = created.value();
  // Every pair with its own character starts off: held it ignores them; dropped, each pair comes
  // on once the two are apart.
  if (pairShapes_.empty()) {
    for (const BodyDef& b : asset_->bodies) pairShapes_.push_back(b.shape);
    ShapeDesc capsule;
    capsule.type = ShapeType::Capsule;
    capsule.radius = asset_->capsule.radius;
    capsule.halfHeight = asset_->capsule.halfHeight;
    pairShapes_.push_back(capsule);
  }
  p.pairOff.assign(static_cast<size_t>(ragdoll_->bodyCount()) + 1, 1);
  for (int b = 0; b <= ragdoll_->bodyCount(); ++b) ragdoll_->setCollisionWith(p.body, b, false);
  props_.push_back(std::move(p));
  const int index = static_cast<int>(props_.size()) - 1;
  attachProp(index);
  event(CharacterEventKind::Grab, "prop '%s' in the hand (body '%s')", desc.name.c_str(), hand.name.c_str());
  return index;
}

// Joins a prop at the grip (where it is now) to the hand and matches its motion to the hand's.
void Character::Impl::attachProp(int index) {
  Prop& p = props_[static_cast<size_t>(index)];
  const BodyId hand = ragdoll_->body(p.handBody);
  JointDesc fixed;
  fixed.bodyA = hand;
  fixed.bodyB = p.body;
  fixed.bodyAFromJoint = p.handBodyFromGrip;
  fixed.bodyBFromJoint = p.desc.propFromGrip;
  fixed.angularLower = Vec3{0.0};  // lower == upper: every axis locked (a fixed joint)
  fixed.angularUpper = Vec3{0.0};
  Result<JointId> joint = world_->createJoint(fixed);
  p.joint = joint ? joint.value() : JointId{};
  p.held = true;
  p.movedAt = -1.0;
  for (size_t b = 0; b < p.pairOff.size(); ++b) {
    if (p.pairOff[b]) continue;
    ragdoll_->setCollisionWith(p.body, static_cast<int>(b), false);
    p.pairOff[b] = 1;
  }
  if (world_->motionType(hand) == MotionType::Dynamic) {
    world_->setMotionType(p.body, MotionType::Dynamic);
    const Vec3 omega = world_->angularVelocity(hand);
    const Vec3 r = world_->transform(p.body).translation - world_->transform(hand).translation;
    world_->setLinearVelocity(p.body, world_->linearVelocity(hand) + glm::cross(omega, r));
    world_->setAngularVelocity(p.body, omega);
  } else {
    world_->setMotionType(p.body, MotionType::Kinematic);
    world_->setLinearVelocity(p.body, world_->linearVelocity(hand));
    world_->setAngularVelocity(p.body, world_->angularVelocity(hand));
  }
}

Status Character::Impl::dropProp(int index) {
  if (index < 0 || index >= propCount()) return Error{"no prop " + std::to_string(index)};
  if (!props_[static_cast<size_t>(index)].held)
    return Error{"prop '" + props_[static_cast<size_t>(index)].desc.name + "' is not held"};
  releaseProp(index, false);
  return {};
}

Status Character::Impl::grabProp(int index) {
  if (index < 0 || index >= propCount()) return Error{"no prop " + std::to_string(index)};
  Prop& p = props_[static_cast<size_t>(index)];
  if (p.held) return Error{"prop '" + p.desc.name + "' is already held"};
  (void)ragdoll_->setCapsuleOnly(false);  // the prop hangs on the hand body from now
  const Transform worldFromHand = world_->transform(ragdoll_->body(p.handBody));
  world_->setTransform(p.body, worldFromHand * p.handBodyFromGrip * p.desc.propFromGrip.inverse());
  attachProp(index);
  event(CharacterEventKind::Grab, "prop '%s' back in the hand (teleported to the grip)", p.desc.name.c_str());
  return {};
}

void Character::Impl::releaseProp(int index, bool atDeath) {
  Prop& p = props_[static_cast<size_t>(index)];
  const BodyId hand = ragdoll_->body(p.handBody);
  const Transform worldFromHand = world_->transform(hand);
  const Vec3 vHand = world_->linearVelocity(hand);
  const Vec3 omega = world_->angularVelocity(hand);
  PropRelease r;
  r.prop = index;
  r.time = time_;
  r.atDeath = atDeath;
  r.gripPoint = (worldFromHand * p.handBodyFromGrip).translation;
  r.handPointVelocity = vHand + glm::cross(omega, r.gripPoint - worldFromHand.translation);
  r.handAngularVelocity = omega;
  r.handVelocity = vHand;
  r.propVelocityBefore = world_->linearVelocity(p.body);
  if (p.joint.valid()) world_->destroyJoint(p.joint);
  p.joint = JointId{};
  p.held = false;
  world_->setMotionType(p.body, MotionType::Dynamic);
  // The prop moves on as a piece of the hand would: the hand's velocity field at its centre.
  const Transform worldFromProp = world_->transform(p.body);
  world_->setLinearVelocity(p.body,
                            vHand + glm::cross(omega, worldFromProp.translation - worldFromHand.translation));
  world_->setAngularVelocity(p.body, omega);
  world_->wake(p.body);
  r.propVelocityAfter = world_->linearVelocity(p.body);
  r.propAngularVelocity = world_->angularVelocity(p.body);
  r.propPointVelocity =
      r.propVelocityAfter + glm::cross(r.propAngularVelocity, r.gripPoint - worldFromProp.translation);
  r.gripSeparation = glm::length((worldFromProp * p.desc.propFromGrip).translation - r.gripPoint);
  propReleases_.push(r);
  event(CharacterEventKind::Drop, "prop '%s'%s at %.3f m/s (hand at the grip), %.3f rad/s",
        p.desc.name.c_str(), atDeath ? " at death" : "", glm::length(r.handPointVelocity),
        glm::length(omega));
  propsPostStep();  // pairs already apart collide from the next step
}

void Character::Impl::propsPreStep() {
  const PoseHistory& history = ragdoll_->history();
  for (Prop& p : props_) {
    if (!p.held) continue;
    const BodyId hand = ragdoll_->body(p.handBody);
    if (ragdoll_->authority(p.handBody) == Authority::Animation) {
      if (world_->motionType(p.body) != MotionType::Kinematic) {
        world_->setMotionType(p.body, MotionType::Kinematic);
        if (p.joint.valid()) world_->resetWarmStart(p.joint);
      }
      if (history.size() == 0 || history.time(0) == p.movedAt) continue;
      // The hand's kinematic target for this step, the prop at its grip.
      const Transform target =
          history.body(0, p.handBody) * p.handBodyFromGrip * p.desc.propFromGrip.inverse();
      const double dt = ragdoll_->animationStep();
      if (history.teleport(0) || history.size() < 2) {
        world_->setTransform(p.body, target);
      } else {
        world_->moveKinematic(p.body, target, dt);
      }
      p.movedAt = history.time(0);
    } else if (world_->motionType(p.body) != MotionType::Dynamic) {
      // The hand went dynamic (a commit): the prop joins it with the hand's velocity field.
      world_->setMotionType(p.body, MotionType::Dynamic);
      const Vec3 omega = world_->angularVelocity(hand);
      const Vec3 r = world_->transform(p.body).translation - world_->transform(hand).translation;
      world_->setLinearVelocity(p.body, world_->linearVelocity(hand) + glm::cross(omega, r));
      world_->setAngularVelocity(p.body, omega);
      if (p.joint.valid()) world_->resetWarmStart(p.joint);
      p.movedAt = -1.0;
    }
  }
}

void Character::Impl::propsPostStep() {
  const int n = ragdoll_->bodyCount();
  for (Prop& p : props_) {
    if (p.held) continue;
    const Transform worldFromProp = world_->transform(p.body);
    const double speed = glm::length(world_->linearVelocity(p.body));
    for (int b = 0; b <= n; ++b) {
      if (!p.pairOff[static_cast<size_t>(b)]) continue;
      const BodyId other = b < n ? ragdoll_->body(b) : ragdoll_->capsule();
      const double gap = shapeSurfaceDistance(p.desc.shape, worldFromProp,
                                              pairShapes_[static_cast<size_t>(b)], world_->transform(other));
      const double reach =
          kPropPairMargin + kPropPairLookAhead * (speed + glm::length(world_->linearVelocity(other)));
      if (gap < reach) continue;
      ragdoll_->setCollisionWith(p.body, b, true);
      p.pairOff[static_cast<size_t>(b)] = 0;
    }
  }
}

Transform Character::Impl::handGrip(int prop) const {
  const Prop& p = props_[static_cast<size_t>(prop)];
  return ragdoll_->bodyPose(p.handBody) * p.handBodyFromGrip;
}

Transform Character::Impl::propGrip(int prop) const {
  const Prop& p = props_[static_cast<size_t>(prop)];
  return world_->transform(p.body) * p.desc.propFromGrip;
}

int Character::Impl::propCollidingPairs(int prop) const {
  const Prop& p = props_[static_cast<size_t>(prop)];
  return static_cast<int>(std::count(p.pairOff.begin(), p.pairOff.end(), std::uint8_t{0}));
}

}  // namespace handoff
