// The floor of BM_AnimatedSync: the same characters, clip and body poses as
// handoff::bench::Crowd, moved by Bullet alone (no handoff adapter) in a plain
// btDiscreteDynamicsWorld with the same broadphase (btDbvtBroadphase), the same shapes and the
// same ground plane. Each step every kinematic body gets its pose through its motion state
// (Bullet's own way to move a kinematic body: stepSimulation reads it and derives the velocity)
// and the world takes one step. Two pairings:
//  - BulletDefault: each kinematic body added with Bullet's default filter for kinematic bodies
//    (they pair with dynamic bodies only, never with static or other kinematic ones): what a
//    game pays that moves kinematic bodies in Bullet and nothing more.
//  - SamePairs: the asset's collision filters (ragdoll bodies with each other and the ground, the
//    capsule with the ground) and no pair across a joint, as the adapter makes them: the same
//    broadphase pairs and narrowphase work as the figure.
//  - CapsuleOnly: the capsule alone per character, with its asset filter (it pairs with the
//    ground): the floor of a capsule-only character (CharacterSettings::capsuleOnlyWhileAnimated,
//    Ragdoll::setCapsuleOnly), whose bodies are out of the simulation while animated.
// The first two move the same 16 bodies per character as the figure (15 ragdoll bodies + the
// capsule); every one samples the clip and computes the 15 body poses per character.
#pragma once

#include "handoff/asset.h"
#include "handoff/math.h"

#include <benchmark/benchmark.h>
#include <btBulletCollisionCommon.h>
#include <btBulletDynamicsCommon.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "support/clip_scene_bench.h"

namespace handoff::bench {

class SyncFloor {
 public:
  enum class Pairs { BulletDefault, SamePairs, CapsuleOnly };

  /// `crowd` already loaded (clip, skeleton, asset); `count` characters on its grid.
  SyncFloor(Crowd& crowd, int count, Pairs pairs) : crowd_(crowd), pairs_(pairs) {
    world_ = std::make_unique<btDiscreteDynamicsWorld>(&dispatcher_, &broadphase_, &solver_, &config_);
    world_->setGravity(btVector3(0, -9.81, 0));
    world_->setForceUpdateAllAabbs(false);  // as the adapter (bullet_world.cpp)
    plane_ = std::make_unique<btStaticPlaneShape>(btVector3(0, 1, 0), -0.05);
    addBody(*plane_, btTransform::getIdentity(), false, pairs, layers::kStatic, layers::kAll);
    const RagdollAsset& asset = *crowd.asset;
    for (const BodyDef& def : asset.bodies) shapes_.push_back(makeShape(def.shape));
    capsuleShape_ = std::make_unique<btCapsuleShape>(asset.capsule.radius, 2.0 * asset.capsule.halfHeight);
    crowd.time = 0.0;
    sample(0.0);
    poses_.resize(asset.bodies.size());
    for (int c = 0; c < count; ++c) {
      roots_.push_back(Transform::fromTranslation(Vec3{3.0 * (c % 16), 0.0, 3.0 * (c / 16)}));
      bodyPosesFromModels(asset, crowd.models, roots_.back(), poses_);
      const size_t first = bodies_.size();
      for (size_t b = 0; b < asset.bodies.size() && pairs != Pairs::CapsuleOnly; ++b) {
        const CollisionFilter& f = asset.bodies[b].filter;
        addBody(*shapes_[b], toBt(poses_[b]), true, pairs, f.layer, f.mask);
      }
      addBody(*capsuleShape_, toBt(capsulePose(roots_.back())), true, pairs, asset.collision.capsule.layer,
              asset.collision.capsule.mask);
      if (pairs == Pairs::SamePairs) {
        for (const JointDef& j : asset.joints) {
          btRigidBody& a = *bodies_[first + static_cast<size_t>(j.parentBody)];
          btRigidBody& b = *bodies_[first + static_cast<size_t>(j.childBody)];
          a.setIgnoreCollisionCheck(&b, true);
          b.setIgnoreCollisionCheck(&a, true);
        }
      }
    }
  }

  ~SyncFloor() {
    for (auto& body : bodies_) world_->removeRigidBody(body.get());
  }
  SyncFloor(const SyncFloor&) = delete;
  SyncFloor& operator=(const SyncFloor&) = delete;

  /// One step: the clip sampled once (as Crowd::track), each character's body poses into the
  /// motion states, one Bullet step.
  void step() {
    crowd_.time += Crowd::kDt;
    sample(crowd_.time);
    const RagdollAsset& asset = *crowd_.asset;
    size_t next = 1;  // after the plane
    for (const Transform& root : roots_) {
      bodyPosesFromModels(asset, crowd_.models, root, poses_);
      benchmark::DoNotOptimize(poses_.data());
      if (pairs_ != Pairs::CapsuleOnly) {
        for (const Transform& pose : poses_) states_[next++]->setWorldTransform(toBt(pose));
      }
      states_[next++]->setWorldTransform(toBt(capsulePose(root)));
    }
    world_->stepSimulation(static_cast<btScalar>(Crowd::kDt), 0, static_cast<btScalar>(Crowd::kDt));
  }

  int pairCount() const { return broadphase_.getOverlappingPairCache()->getNumOverlappingPairs(); }

 private:
  static btTransform toBt(const Transform& t) {
    return btTransform(btQuaternion(t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w),
                       btVector3(t.translation.x, t.translation.y, t.translation.z));
  }
  static std::unique_ptr<btCollisionShape> makeShape(const ShapeDesc& s) {
    switch (s.type) {
      case ShapeType::Sphere:
        return std::make_unique<btSphereShape>(s.radius);
      case ShapeType::Box:
        return std::make_unique<btBoxShape>(btVector3(s.halfExtents.x, s.halfExtents.y, s.halfExtents.z));
      case ShapeType::Capsule:
      default:
        return std::make_unique<btCapsuleShape>(s.radius, 2.0 * s.halfHeight);
    }
  }
  Transform capsulePose(const Transform& root) const {
    const RagdollAsset& asset = *crowd_.asset;
    const Transform& pelvis = crowd_.models[static_cast<size_t>(asset.bodies[0].joint)];
    const Vec3 p = root.transformPoint(pelvis.translation);
    return Transform{root.rotation,
                     Vec3{p.x, root.translation.y + asset.capsule.radius + asset.capsule.halfHeight, p.z}};
  }
  void sample(double time) {
    crowd_.imported.clips[0].sample(time, WrapMode::Loop, crowd_.locals);
    localToModel(crowd_.imported.skeleton, crowd_.locals, crowd_.models);
  }
  void addBody(btCollisionShape& shape, const btTransform& pose, bool kinematic, Pairs pairs,
               std::uint32_t layer, std::uint32_t mask) {
    states_.push_back(std::make_unique<btDefaultMotionState>(pose));
    btRigidBody::btRigidBodyConstructionInfo ci(0.0, states_.back().get(), &shape);
    bodies_.push_back(std::make_unique<btRigidBody>(ci));
    btRigidBody& body = *bodies_.back();
    if (kinematic) {
      body.setCollisionFlags(body.getCollisionFlags() | btCollisionObject::CF_KINEMATIC_OBJECT);
      body.setActivationState(DISABLE_DEACTIVATION);
    }
    if (pairs == Pairs::BulletDefault) {
      world_->addRigidBody(&body);  // Bullet's default groups: kinematic pairs with dynamic only
    } else {
      world_->addRigidBody(&body, static_cast<int>(layer), static_cast<int>(mask));
    }
  }

  Crowd& crowd_;
  Pairs pairs_;
  btDefaultCollisionConfiguration config_;
  btCollisionDispatcher dispatcher_{&config_};
  btDbvtBroadphase broadphase_;
  btSequentialImpulseConstraintSolver solver_;
  std::unique_ptr<btDiscreteDynamicsWorld> world_;
  std::unique_ptr<btCollisionShape> plane_, capsuleShape_;
  std::vector<std::unique_ptr<btCollisionShape>> shapes_;
  std::vector<std::unique_ptr<btDefaultMotionState>> states_;
  std::vector<std::unique_ptr<btRigidBody>> bodies_;
  std::vector<Transform> roots_, poses_;
};

}  // namespace handoff::bench
