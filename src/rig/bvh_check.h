// Line-numbered check and double-precision parse of BVH text (private to the rig module).
//
// Assimp's BVH reader (5.2) ignores the line structure of the motion section: a frame line with
// an extra value silently shifts every later value by one channel, a short line or a missing
// frame is reported only as "unexpected end of file", "nan" and "1e999" pass as numbers, and a
// CHANNELS count larger than its list surfaces as 'Invalid channel specifier "End"'. It also
// composes the Euler rotations in single precision (about 6e-7 rad off on real files). So before
// any BVH text is handed to Assimp it goes through checkBvh(), which verifies the structure and
// every number and reports the first problem as "<source>:<line>: <reason>"; the parsed values
// then give the clip keys in double precision (see import.cpp).
#pragma once

#include "handoff/math.h"
#include "handoff/result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace handoff::detail {

enum class BvhChannel : std::uint8_t { PositionX, PositionY, PositionZ, RotationX, RotationY, RotationZ };

/// One ROOT or JOINT of the hierarchy (End Sites are not joints: they are stored with their joint).
struct BvhJoint {
  std::string name;
  int parent = -1;                   ///< Index into BvhData::joints, -1 for the root.
  int line = 0;                      ///< Line of its ROOT/JOINT keyword (1-based).
  Vec3 offset{0.0};                  ///< OFFSET, in the parent's space. [file units]
  std::vector<BvhChannel> channels;  ///< In the order the CHANNELS line lists them.
  int firstValue = 0;                ///< Index of its first channel value within a frame line.
  bool hasEndSite = false;
  Vec3 endSiteOffset{0.0};  ///< OFFSET of its End Site, in the joint's space. [file units]
};

/// A checked BVH file.
struct BvhData {
  std::vector<BvhJoint> joints;  ///< File order: parents before children (parents[i] < i).
  int valuesPerFrame = 0;        ///< Sum of all joints' channel counts.
  int frameCount = 0;            ///< As declared by "Frames:" (and verified against the lines).
  double frameTime = 0.0;        ///< As declared by "Frame Time:". [s] [0.0001, 60]
  int motionLine = 0;            ///< Line of the MOTION keyword.
  /// Channel values as written (positions in file units, rotations in degrees), frame-major:
  /// values[frame * valuesPerFrame + joint.firstValue + channel].
  std::vector<double> values;
  std::vector<std::string> warnings;
};

/// Checks and parses BVH text. `sourceName` prefixes every message ("data/x.bvh:42: ...").
/// Verifies: HIERARCHY / ROOT / JOINT / End Site / OFFSET / CHANNELS / MOTION / Frames /
/// Frame Time structure and balanced braces, channel names and counts (CHANNELS n must list n
/// known names on its line, no repeats), every number (full consumption, finite), a positive
/// frame time in [0.0001, 60] s, joints nested at most 256 levels, exactly `Frames:` non-empty frame lines
/// each holding valuesPerFrame numbers.
Result<BvhData> checkBvh(std::string_view text, const std::string& sourceName);

/// Local transform (parentFromJoint) of a joint at a frame, from the checked text in double
/// precision: position channels replace the matching OFFSET component, rotation channels compose
/// intrinsically in the listed order ("Zrotation Yrotation Xrotation" => Rz * Ry * Rx).
/// [file units]
Transform bvhLocal(const BvhData& data, int joint, int frame);

}  // namespace handoff::detail
