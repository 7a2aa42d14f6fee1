// Recorded runs ("replays"): what happened to a character, frame by frame, for the report, the
// glTF export and the web viewer. Plain data; the scenario runner fills it.
//
// Thread-safety: plain data and functions of their arguments; a const Replay may be read (and
// written to a file) from any thread.
#pragma once

#include "handoff/asset.h"
#include "handoff/import.h"
#include "handoff/math.h"
#include "handoff/result.h"
#include "handoff/rig.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace handoff {

struct ReplayBody {
  std::string name;
  int joint = -1;          ///< Skeleton joint the body rides on.
  ShapeDesc shape;         ///< In body space (capsule along +Y).
  Transform boneFromBody;  ///< T_BC
};

struct ReplayJoint {
  std::string name;
  int parentBody = -1;
  int childBody = -1;
  Transform bodyAFromJoint;
  Transform bodyBFromJoint;
  Vec3 angularLower{0.0};  ///< [rad], see handoff::jointAngles
  Vec3 angularUpper{0.0};
};

/// Figures of one frame, plotted in the report and shown by the viewer.
struct ReplayFigures {
  double pelvisHeight = 0.0;     ///< [m]
  double pelvisSpeed = 0.0;      ///< [m/s]
  double maxJointStretch = 0.0;  ///< Largest joint anchor separation. [m]
  double settleWindow = 0.0;     ///< Time spent inside the settle thresholds. [s]
  double blendWeight = 0.0;      ///< Display blend weight (0 animation, 1 physics). [0, 1]
  double driveWeight = 0.0;      ///< Powered-ragdoll drive weight. [0, 1]
  int contactPoints = 0;
  int activeBodies = 0;
};

/// ReplayFrame::authority of a body being recovered (get-up, blend back to animation).
inline constexpr std::uint8_t kReplayAuthorityRecovering = 3;

struct ReplayFrame {
  double time = 0.0;                       ///< [s]
  std::string state;                       ///< "animated", "ragdoll", "powered", "recovering".
  Transform worldFromRoot;                 ///< The displayed skeleton's root.
  std::vector<Transform> locals;           ///< Displayed skeleton pose, parentFromJoint per joint.
  std::vector<Transform> worldFromBodies;  ///< Engine body poses (T_WC).
  /// Per body: handoff::Authority values (0 animation, 1 physics, 2 drive), or
  /// kReplayAuthorityRecovering. Empty: all animation.
  std::vector<std::uint8_t> authority;
  bool capsuleEnabled = false;
  Transform worldFromCapsule;
  std::vector<Vec3> contacts;  ///< World contact points of the character's bodies.
  ReplayFigures figures;
};

struct ReplayEvent {
  double time = 0.0;   ///< [s]
  std::string kind;    ///< "ragdoll", "impulse", "teleport", "powered", "getup", "cancel", ...
  std::string detail;  ///< Human-readable.
};

/// Static world pieces for display.
struct ReplayStaticBox {
  Transform worldFromBox;
  Vec3 halfExtents{0.0};  ///< [m]
};

/// A static triangle mesh for display (level geometry: a scenario's world.level).
struct ReplayStaticMesh {
  std::string name;
  Transform worldFromMesh;
  std::vector<Vec3> vertices;          ///< [m] mesh space, finite
  std::vector<std::uint32_t> indices;  ///< 3 per triangle, each < vertices.size()
};

struct Replay {
  std::string name;
  double frameRate = 60.0;  ///< [Hz] [> 0] [default 60]
  Skeleton skeleton;
  std::vector<ReplayBody> bodies;
  std::vector<ReplayJoint> joints;
  CapsuleDef capsule;
  double groundHeight = 0.0;  ///< [m]
  std::vector<ReplayStaticBox> boxes;
  std::vector<ReplayStaticMesh> staticMeshes;  ///< [default none]
  std::vector<ReplayFrame> frames;
  std::vector<ReplayEvent> events;
  std::optional<SkinnedMesh> mesh;  ///< The character's skin, when it has one.
};

/// Fills bodies, joints and capsule of a replay from a ragdoll asset.
void describeRagdoll(const RagdollAsset& asset, Replay& replay);

/// The skinned meshes of one character (ImportedAsset::meshes: one per material, e.g. the
/// Mesh2Motion mannequin's three) as the single mesh Replay::mesh holds: vertices and triangles
/// concatenated, the first mesh's name and inverse binds (the importer gives every mesh of a file
/// the same). Empty when `meshes` is empty or the meshes disagree on the joint count.
std::optional<SkinnedMesh> mergeSkinnedMeshes(const std::vector<SkinnedMesh>& meshes);

/// Writes a binary glTF: the skeleton as a node hierarchy animated over the frames (one
/// translation and one rotation channel per joint, keyed at every frame time; the root joints'
/// channels hold worldFromRoot * local), each body shape as a mesh on its own animated node
/// "body:<name>", the capsule ("capsule", scale 0 while disabled), the skin when present, a
/// ground quad, the static boxes and the static meshes ("level:<i>", flat shaded), and everything the viewer
/// needs (state, authority, joints, events, figures, contacts) in the scene's `extras.handoff`.
/// docs/VIEWER.md describes the layout. Opens in Blender and three.js. Errors name the frame, body or joint
/// that is inconsistent (pose sizes, non-finite values, frame times that do not increase) or the file.
Status writeReplayGlb(const Replay& replay, const std::string& path);

}  // namespace handoff
