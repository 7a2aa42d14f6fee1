// Plumbing every engine adapter needs and no engine provides, shared by the Bullet and ODE
// adapters (src/physics_bullet, src/physics_ode) so that they hold one piece of code where their
// logic is the same: the generational handle table, error-message values, settings clamping and
// the engine-free validation of a body and a joint description. Engine-free (it includes no
// engine); internal to handoff's libraries (not installed).
#pragma once

#include "handoff/math.h"
#include "handoff/physics.h"
#include "handoff/result.h"

#include <cassert>
#include <cstdint>
#include <string>

namespace handoff::adapter {

// --- Handles -------------------------------------------------------------------------------------
// A BodyId, JointId or ShapeId value is (generation << kIndexBits) | slot: 20 bits of slot (about a
// million objects per world) and 12 bits of generation, bumped when a slot is freed, so a stale
// handle is recognised until its slot was reused 4096 times. kIndexMask is never a valid slot.

inline constexpr std::uint32_t kIndexBits = 20;
inline constexpr std::uint32_t kIndexMask = (1u << kIndexBits) - 1u;
inline constexpr std::uint32_t kGenerationMask = (1u << (32u - kIndexBits)) - 1u;

constexpr std::uint32_t handleSlot(std::uint32_t handle) { return handle & kIndexMask; }
constexpr std::uint32_t handleGeneration(std::uint32_t handle) { return handle >> kIndexBits; }
constexpr std::uint32_t makeHandle(std::uint32_t slot, std::uint32_t generation) {
  return (generation << kIndexBits) | slot;
}
/// The generation a slot gets when its object is destroyed (wraps after 4095).
constexpr std::uint32_t nextGeneration(std::uint32_t generation) {
  return (generation + 1u) & kGenerationMask;
}

/// The slot `handle` names in `slots` (a std::vector or std::deque of slots with a `generation`)
/// when it holds a live object (`alive(slot)`) of the handle's generation; null otherwise (an
/// invalid, out-of-range or stale handle).
template <class Slots, class Alive>
const typename Slots::value_type* liveSlot(const Slots& slots, std::uint32_t handle, Alive alive) {
  if (handle == BodyId{}.value) return nullptr;
  const std::uint32_t slot = handleSlot(handle);
  if (slot >= slots.size()) return nullptr;
  const auto& s = slots[slot];
  if (!alive(s) || s.generation != handleGeneration(handle)) return nullptr;
  return &s;
}

// Invalid handles in an adapter's [step-safe] calls (its slotOf(id) lookups): assert in debug
// builds, ignored in release builds (the caller returns `__VA_ARGS__`).
#define HANDOFF_BODY_OR_RETURN(var, id, ...)          \
  auto* var = slotOf(id);                             \
  assert(var != nullptr && "invalid or dead BodyId"); \
  if (var == nullptr) return __VA_ARGS__
#define HANDOFF_JOINT_OR_RETURN(var, id, ...)          \
  auto* var = slotOf(id);                              \
  assert(var != nullptr && "invalid or dead JointId"); \
  if (var == nullptr) return __VA_ARGS__

// --- Messages and settings -----------------------------------------------------------------------

/// A value for an error message ("0.25", "(1, 2, 3)").
std::string fmt(double v);
std::string fmt(const Vec3& v);

/// WorldSettings as an adapter uses them: iteration counts at least 1, jointErp in [0, 1],
/// maxContactEvents in [0, 2^20], non-finite or out-of-range values replaced by their defaults.
WorldSettings sanitiseWorldSettings(WorldSettings settings);

// --- Validation (what createBody / createJoint refuse whatever the engine) -----------------------

/// The checks of a BodyDesc that need no engine: the primitive's sizes (or a created shape with
/// type None), mass (dynamic and kinematic bodies), inertia, pose, friction, rolling friction,
/// restitution, damping. Errors start "createBody: " and name the field and the value. Whether
/// shape.created is a live shape of the world is the adapter's to check.
Status validateBodyDesc(const BodyDesc& desc);

/// The checks of a JointDesc that need no engine, after the adapter found both bodies: the two
/// bodies differ, the frames are finite with non-zero rotations, breakForce and breakTorque > 0,
/// limits finite and, per limited axis (lower <= upper), X and Z within [-pi, pi] and Y within
/// [-pi/2, pi/2] (jointAngles' range). Errors start "createJoint: " and name the field.
Status validateJointDesc(const JointDesc& desc);

}  // namespace handoff::adapter
