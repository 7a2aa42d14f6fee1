// glTF animations that are one clip split per node (private to the rig module).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>

namespace handoff::detail {

/// The document's animations as one: when there are two or more, no node is driven by two of them,
/// every sampler of every animation runs on the same key times (the same input accessor, or inputs
/// with equal count, min and max), and each animation is unnamed or drives a single node (a
/// three.js or exporter's per-node split: 19 unnamed animations each driving one bone). Returns
/// the merged "animations" array (one animation, the channels and samplers of all in file order,
/// sampler indices renumbered, the first animation's name), or nullopt when they are separate
/// clips. `doc` has passed the glTF checks (indices valid).
std::optional<nlohmann::json> mergePerNodeAnimations(const nlohmann::json& doc);

}  // namespace handoff::detail
