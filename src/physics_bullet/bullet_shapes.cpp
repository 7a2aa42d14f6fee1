// The world's shape cache (BulletWorld::acquireShape, releaseShape): bodies whose ShapeKeys are
// equal share one Bullet shape, counted by reference and freed with its last body. Each cached
// shape owns its ShapeMotion (its user pointer, read by bullet_collision.cpp).
//
// Decisions worth knowing:
// - A box keeps its outer size: Bullet rounds its corners by its margin, which is kBoxMargin or
//   half its thinnest half extent, whichever is smaller.
#include "physics_bullet/bullet_parts.h"

#include <algorithm>
#include <cassert>
#include <memory>
#include <utility>

namespace handoff::bullet_detail {
namespace {

// Tuning (measured by tests/physics_bullet; see the report).

/// Box collision margin: Bullet's default 0.04 m rounds corners; small boxes need less.
constexpr double kBoxMargin = 0.04;

}  // namespace

btCollisionShape* BulletWorld::acquireShape(const ShapeKey& key) {
  for (ShapeEntry& entry : shapes_) {
    if (entry.key == key) {
      ++entry.refs;
      return entry.shape.get();
    }
  }
  std::unique_ptr<btCollisionShape> shape;
  switch (key.kind) {
    case ShapeKey::Kind::Sphere:
      shape = std::make_unique<btSphereShape>(key.v[0]);
      break;
    case ShapeKey::Kind::Capsule:
      shape = std::make_unique<btCapsuleShape>(key.v[0], 2.0 * key.v[1]);
      break;
    case ShapeKey::Kind::Box: {
      const double minHalf = std::min({key.v[0], key.v[1], key.v[2]});
      // Bullet keeps the outer size and rounds the corners by the margin.
      auto box = std::make_unique<btBoxShape>(btVector3(key.v[0], key.v[1], key.v[2]));
      box->setMargin(std::min(kBoxMargin, 0.5 * minHalf));
      shape = std::move(box);
      break;
    }
    case ShapeKey::Kind::Plane:
      shape = std::make_unique<btStaticPlaneShape>(btVector3(key.v[0], key.v[1], key.v[2]), key.v[3]);
      break;
  }
  auto motion = std::make_unique<ShapeMotion>();
  motion->disc = shape->getAngularMotionDisc();
  motion->breakingFactor = gContactBreakingThreshold;
  motion->breaking = shape->getContactBreakingThreshold(gContactBreakingThreshold);
  shape->setUserPointer(motion.get());
  shapes_.push_back(ShapeEntry{key, std::move(shape), 1, std::move(motion)});
  return shapes_.back().shape.get();
}

void BulletWorld::releaseShape(btCollisionShape* shape) {
  for (std::size_t i = 0; i < shapes_.size(); ++i) {
    if (shapes_[i].shape.get() != shape) continue;
    if (--shapes_[i].refs == 0) {
      shapes_[i] = std::move(shapes_.back());
      shapes_.pop_back();
    }
    return;
  }
  assert(false && "shape not owned by this world");
}

}  // namespace handoff::bullet_detail
