// The ragdoll asset (SPEC.md section 2): humanoid map, builder, stabilizer, validator, JSON.
// docs/ASSET.md describes the slots, shapes, mass source, presets, file format and findings.
//
// Offline -> definition -> instance (as ozz and Jolt): RagdollAsset is the editable,
// serialisable description built from a skeleton; it is immutable at runtime and shared by every
// character that uses it.
//
// Thread-safety: every function here is a pure function of its arguments (no global state);
// a const RagdollAsset may be read from any number of threads.
#pragma once

#include "handoff/math.h"
#include "handoff/physics.h"
#include "handoff/result.h"
#include "handoff/rig.h"

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace handoff {

/// Humanoid slots (SPEC.md section 2). Lower spine, hands and feet are optional.
enum class Slot : std::uint8_t {
  Pelvis,
  LowerSpine,
  Chest,
  Head,
  UpperArmL,
  LowerArmL,
  HandL,
  UpperArmR,
  LowerArmR,
  HandR,
  UpperLegL,
  LowerLegL,
  FootL,
  UpperLegR,
  LowerLegR,
  FootR,
  Count
};
inline constexpr int kSlotCount = static_cast<int>(Slot::Count);
/// Stable lower-case name used in JSON: "pelvis", "lower_spine", "chest", "head", "upper_arm_l",
/// "lower_arm_l", "hand_l", ..., "upper_leg_r", "lower_leg_r", "foot_r".
const char* slotName(Slot slot);
std::optional<Slot> slotFromName(std::string_view name);
/// True for slots a humanoid must have (all but lower spine, hands and feet).
bool slotRequired(Slot slot);
/// The slot whose body is this slot's parent body when every slot is present (Pelvis: Count).
Slot parentSlot(Slot slot);

/// A builder, mapper, loader or validator finding.
struct Finding {
  enum class Severity : std::uint8_t { Info, Warning, Error };
  Severity severity = Severity::Warning;  ///< [default Warning]
  /// Stable identifier. Validator: "overlap", "adjacent_overlap", "anchor_mismatch", "mass_ratio",
  /// "extreme_mass", "invalid_mass", "limit_excludes_bind", "limit_range", "free_axis", "degenerate_shape",
  /// "degenerate_frame", "invalid_drive", "invalid_material", "bad_topology",
  /// "skeleton_mismatch", "collision_filter". Builder: "stabilize_mass", "stabilize_inertia",
  /// "stabilize_drive", "radius_reduced", "lower_spine_skipped", "limit_widened", "mass_moved",
  /// "estimated_tip", "override". Mapper: "map_structure", "map_side", "map_deform". Mapper and
  /// validator (plausibility): "implausible_scale", "proportion", "side_swap", "head_offset",
  /// "pelvis_offset". JSON: "unknown_field", "json".
  /// docs/ASSET.md lists when each is raised.
  std::string code;
  std::string subject;  ///< The body, joint, slot or JSON path concerned.
  std::string message;
};
const char* severityName(Finding::Severity severity);
/// "error overlap [thigh_l/thigh_r]: ..." — one line, for reports.
std::string formatFinding(const Finding& finding);

/// Skeleton joint index per slot (-1: not mapped).
struct HumanoidMap {
  std::array<int, kSlotCount> joint;
  HumanoidMap() { joint.fill(-1); }
  int operator[](Slot s) const { return joint[static_cast<size_t>(s)]; }
  int& operator[](Slot s) { return joint[static_cast<size_t>(s)]; }
};

/// How a slot's bone was decided.
enum class MapSource : std::uint8_t {
  None,          ///< Not mapped.
  Name,          ///< A rig family's bone name (Mixamo, UE, CC, Rigify, VRoid, DAZ, ...).
  Structure,     ///< Hierarchy and proportions (no name matched, or the slot is chosen by height).
  FileHumanoid,  ///< The file's own humanoid map (VRM humanBones).
  User,          ///< A map file (--map, BuildOptions::mapJson).
};
/// "none", "name", "structure", "file", "user".
const char* mapSourceName(MapSource source);

/// How one slot was decided, and how sure the mapper is. docs/RIGS.md gives the figures.
struct SlotDecision {
  MapSource source = MapSource::None;
  /// Base by source (user 1, file 0.95, name 0.9, structure 0.7, limb joints by proportion 0.6),
  /// halved by every plausibility finding about the slot. [0, 1]
  double confidence = 0.0;
};

/// A humanoid map with how each slot was decided and the plausibility findings about it.
struct HumanoidMapReport {
  HumanoidMap map;
  std::array<SlotDecision, kSlotCount> slots{};
  /// The lowest confidence of the required slots. [0, 1]
  double confidence = 0.0;
  /// Mapper notes (Info: how each chain was mapped) and findings on implausible results:
  /// "implausible_scale", "proportion", "side_swap", "head_offset", "pelvis_offset", "map_side".
  std::vector<Finding> findings;
};

/// What the mapper may use besides the skeleton.
struct MapInputs {
  std::vector<HumanoidBone> fileHumanoid;  ///< ImportedAsset::humanoidBones (VRM humanBones).
  std::optional<std::string> userJson;     ///< A map file's text (mapHumanoidFromJson's format).
  std::string userSource = "map";          ///< The map file's name in messages. [default "map"]
};

/// The map with its report: the user's slots first, then the file's humanoid bones (when they
/// cover every required slot), then names and structure (mapHumanoid) for the rest. Errors as
/// mapHumanoid's and mapHumanoidFromJson's.
Result<HumanoidMapReport> mapHumanoidReport(const Skeleton& skeleton, const MapInputs& inputs = {});

/// A map file: {"version": 1, "slots": {"pelvis": "Hips", ..., "hand_l": null}} with every slot
/// (null: unmapped). mapHumanoidFromJson reads it back to the same map.
std::string humanoidMapJson(const Skeleton& skeleton, const HumanoidMap& map);

/// Maps a skeleton to humanoid slots. Structure first (pelvis = where the legs and the spine
/// split, legs = the chains reaching the floor, arms = the two long chains branching off the
/// spine, head = top of the spine, left/right by side relative to the character's forward taken
/// from the feet); within each chain, bone names (CMU, Boxing, Mixamo, Unity, Unreal, Rigify,
/// DeepMimic, Biped) pick the joints, and proportions when no name matches. So a rig with
/// unusual names but a normal shape still maps. Errors list the missing slots and the candidate
/// bones considered. `notes` (optional) receives Info findings on how each chain was mapped.
Result<HumanoidMap> mapHumanoid(const Skeleton& skeleton, std::vector<Finding>* notes = nullptr);
/// Explicit map from JSON: {"version": 1, "slots": {"pelvis": "Hips", "lower_spine": null, ...}}
/// (humanoidMapJson), or the unversioned {"pelvis": "Hips", ...}; null unmaps an optional slot;
/// unlisted slots are filled automatically when the skeleton maps. Errors name the JSON path and
/// the unknown slot or bone ("map.json: slots.head: the skeleton has no bone 'Skull'") and slots
/// whose joints contradict the hierarchy (a joint neither below its parent slot's joint nor
/// touching that joint's subtree: a detached foot at the ankle is fine, a crossed arm is not).
Result<HumanoidMap> mapHumanoidFromJson(const Skeleton& skeleton, const std::string& json,
                                        const std::string& sourceName);

enum class JointGroup : std::uint8_t { Spine, Neck, Shoulder, Elbow, Wrist, Hip, Knee, Ankle, Count };
inline constexpr int kJointGroupCount = static_cast<int>(JointGroup::Count);
const char* jointGroupName(JointGroup group);
/// The joint group of the joint above a slot's body (pelvis and spine slots: Spine).
JointGroup jointGroupForSlot(Slot slot);
std::optional<JointGroup> jointGroupFromName(std::string_view name);

/// Limits and drive of one joint group (or one joint after overrides).
struct JointPreset {
  /// Angular limits in J about X (twist, along the child bone), Y and Z; see
  /// handoff::jointAngles. lower == upper locks the axis, lower > upper frees it. [rad]
  /// In a group preset they are anatomical, relative to the group's neutral pose and for the
  /// left side (docs/ASSET.md); in a JointDef they are final: relative to the bind pose, in J.
  /// [default 0: locked]
  Vec3 angularLower{0.0};
  Vec3 angularUpper{0.0};
  double driveStiffness = 0.0;  ///< Kp. [N m/rad] [>= 0] [default 0]
  double driveDamping = 0.0;    ///< Kd. [N m s/rad] [>= 0] [default 0]
  double maxDriveTorque = 0.0;  ///< Total torque clamp. [N m] [> 0] [default 0: set by the presets]
};

/// The shipped group presets for a 70 kg, 1.75 m character (docs/ASSET.md has the table).
JointPreset defaultJointPreset(JointGroup group);

struct BodyDef {
  std::string name;  ///< The bone's name.
  int joint = -1;    ///< Skeleton joint (the bone B the body rides on).
  Slot slot = Slot::Pelvis;
  int parentBody = -1;     ///< Index in RagdollAsset::bodies, -1 for the root body.
  Transform boneFromBody;  ///< T_BC: centre of mass and shape axes in the bone's space. [m]
  ShapeDesc shape;         ///< In body space C; capsule along C's +Y (the bone direction).
  double mass = 0.0;       ///< [kg] [> 0]
  Vec3 inertia{0.0};       ///< Principal moments in C, after stabilization. [kg m^2] [> 0]
  double friction = 0.8;   ///< [>= 0] [default 0.8]
  /// Rolling resistance (BodyDesc::rollingFriction): the lever of the contact patch of a limb
  /// on the floor. Without it a lying ragdoll's capsules rock and roll for a long time before
  /// the settle rule (and a get-up) can see it at rest. [m] [>= 0] [default 0.02]
  double rollingFriction = 0.02;
  double restitution = 0.0;      ///< [0, 1] [default 0]
  double linearDamping = 0.05;   ///< [1/s] [>= 0] [default 0.05]
  double angularDamping = 0.05;  ///< [1/s] [>= 0] [default 0.05]
  CollisionFilter filter{layers::kRagdoll, layers::kStatic | layers::kRagdoll | layers::kDebris};
};

struct JointDef {
  std::string name;  ///< The child bone's name.
  JointGroup group = JointGroup::Spine;
  int parentBody = -1;       ///< Body A.
  int childBody = -1;        ///< Body B.
  Transform bodyAFromJoint;  ///< T_CA_J
  Transform bodyBFromJoint;  ///< T_CB_J
  JointPreset preset;        ///< Limits (relative to bind, in J) and drive after per-bone overrides.
  /// Force / torque at which the joint breaks. [N] [N m] [> 0] [default infinite]
  double breakForce = std::numeric_limits<double>::infinity();
  double breakTorque = std::numeric_limits<double>::infinity();
  /// The two bodies collide with each other (JointDesc::collideConnected). Off in every built
  /// asset (SPEC.md section 2: adjacent bodies never collide); on, their shapes (which overlap
  /// at the joint) push each other apart: a switch to find the cause of an explosion
  /// (`handoff diagnose`). JSON "adjacentCollision". [default false]
  bool adjacentCollision = false;
};

/// A character capsule used while animated (and during recovery): axis +Y, standing on the root.
struct CapsuleDef {
  double radius = 0.3;      ///< [m] [> 0] [default 0.3]
  double halfHeight = 0.6;  ///< Half the inner segment. [m] [>= 0] [default 0.6]
  /// Capsule centre in root space R in the bind pose (over the feet, bottom on the floor under
  /// them). Informative: the runtime stands the capsule on the root. [m] [default (0, 0.9, 0)]
  Vec3 bindCenter{0.0, 0.9, 0.0};
};

/// The collision layer/mask table of SPEC.md section 2: what the static world, ragdoll bodies
/// and the character capsule are and what each collides with. A pair collides when each one's
/// mask has the other's layer. Adjacent ragdoll bodies are excluded by their joint.
struct CollisionTable {
  CollisionFilter world{layers::kStatic, layers::kAll};
  CollisionFilter ragdoll{layers::kRagdoll, layers::kStatic | layers::kRagdoll | layers::kDebris};
  CollisionFilter capsule{layers::kCapsule, layers::kStatic | layers::kCapsule | layers::kDebris};
};

struct RagdollAsset {
  static constexpr int kVersion = 1;
  int version = kVersion;
  std::string skeletonName;      ///< Informative: the file the asset was built from.
  double totalMass = 70.0;       ///< [kg] [> 0] [default 70]
  std::vector<BodyDef> bodies;   ///< Parents before children.
  std::vector<JointDef> joints;  ///< One per non-root body.
  CapsuleDef capsule;
  CollisionTable collision;
  HumanoidMap map;
  /// Chest-outward (forward) axis in the chest body's space C, calibrated from the bind pose:
  /// used to tell supine from prone (SPEC.md section 4). [unit] [default +Z]
  Vec3 chestForwardInBody{0.0, 0.0, 1.0};
  /// Character forward and up in model space (root space R) at bind. [unit] [default +Z, +Y]
  Vec3 modelForward{0.0, 0.0, 1.0};
  Vec3 modelUp{0.0, 1.0, 0.0};

  int findBody(std::string_view name) const;
  int bodyForJoint(int joint) const;  ///< -1 when the joint has no body.
  int bodyForSlot(Slot slot) const;   ///< -1 when the slot has no body.
};

/// Shape size ratios (docs/ASSET.md). Limb radii are fractions of the bone length, torso radii
/// fractions of the shoulder width (distance between the two upper-arm joints). Every ratio
/// [> 0] [dimensionless].
struct ShapeRatios {
  double upperArm = 0.16;       ///< Upper arm radius / bone length. [default 0.16]
  double lowerArm = 0.14;       ///< Forearm radius / bone length. [default 0.14]
  double upperLeg = 0.17;       ///< Thigh radius / bone length. [default 0.17]
  double lowerLeg = 0.12;       ///< Shank radius / bone length. [default 0.12]
  double pelvis = 0.30;         ///< Pelvis radius / shoulder width. [default 0.30]
  double spine = 0.30;          ///< Lower spine radius / shoulder width. [default 0.30]
  double chest = 0.30;          ///< Chest radius / shoulder width. [default 0.30]
  double head = 0.36;           ///< Head sphere radius / (neck base to crown distance). [default 0.36]
  double handWidth = 0.45;      ///< Hand box width / hand length (wrist to fingertip). [default 0.45]
  double handThickness = 0.16;  ///< Hand box thickness / hand length. [default 0.16]
  double footWidth = 0.38;      ///< Foot box width / foot length (heel to toe). [default 0.38]
  double heel = 0.28;           ///< Heel behind the ankle / horizontal ankle-to-toe distance. [default 0.28]
};

/// Jolt RagdollSettings::Stabilize parameters.
struct StabilizeOptions {
  double minMassRatio = 0.8;        ///< Child/parent mass ratio lower clamp. [> 0] [default 0.8]
  double maxMassRatio = 1.2;        ///< Child/parent mass ratio upper clamp. [>= minMassRatio] [default 1.2]
  double maxInertiaIncrease = 2.0;  ///< A parent's inertia grows at most by this factor. [>= 1] [default 2]
  /// Scale each joint's drive torque limit by the mass factor of its child's subtree (the
  /// presets are for anthropometric masses; the ratio clamp moves mass into hands and feet).
  /// [default true]
  bool scaleDriveTorque = true;
};

/// Builder options: every ratio overridable.
struct BuildOptions {
  double totalMass = 70.0;  ///< [kg] [> 0] [default 70]
  bool stabilize = true;    ///< Clamp mass ratios and raise inertias (Jolt-style). [default true]
  StabilizeOptions stabilizeOptions;
  bool hands = true;  ///< Bodies for hands when the skeleton has them. [default true]
  bool feet = true;   ///< Bodies for feet when the skeleton has them. [default true]
  /// Capsule radius / bone length for all limbs; 0 = `ratios`. [>= 0] [default 0]
  double limbRadiusRatio = 0.0;
  double headRadiusScale = 1.0;  ///< Head sphere radius multiplier. [> 0] [default 1]
  ShapeRatios ratios;
  /// Shrink radii so non-adjacent bodies keep this clearance in the bind pose. [m] [>= 0]
  /// [default 0.005]
  double clearance = 0.005;
  std::optional<std::string> mapJson;       ///< Explicit humanoid map (JSON text, mapHumanoidFromJson).
  std::string mapSource = "map";            ///< The map file's name in messages. [default "map"]
  std::vector<HumanoidBone> humanoidBones;  ///< The file's humanoid bones (ImportedAsset).
  /// Joint overrides (JSON text): {"groups": {"elbow": {fields}}, "<bone>": {fields}} with fields
  /// "lower", "upper" ([x, y, z] rad), "stiffness", "damping", "maxTorque", "breakForce",
  /// "breakTorque". Group entries replace anatomical preset values (before the bind-pose
  /// offsets); bone entries replace the final values of the joint whose child bone that is.
  std::string overridesJson;
  std::string skeletonName;  ///< Copied into RagdollAsset::skeletonName.
};

struct BuildReport {
  std::vector<Finding> findings;  ///< Mapper and builder notes, stabilization changes, validation.
  HumanoidMapReport map;          ///< How each slot was decided (when the skeleton mapped).
  bool hasErrors() const;
  int count(Finding::Severity severity) const;
};

/// Builds a ragdoll for a skeleton (whose rest pose is the bind pose, in metres, Y up). Fails when
/// the skeleton does not map, the options or overrides are invalid, or the result does not pass
/// validateRagdoll (the message lists the errors); `report` receives every finding either way.
Result<RagdollAsset> buildRagdoll(const Skeleton& skeleton, const BuildOptions& options,
                                  BuildReport* report = nullptr);

/// Jolt RagdollSettings::Stabilize: walking from the root, each child's mass ratio to its parent
/// is clamped to [minMassRatio, maxMassRatio], masses are rescaled so the total is unchanged
/// (inertias scale with them), then each parent's principal moments are raised toward the sum of
/// its descendants' largest moments (at most maxInertiaIncrease times its own). Returns an Info
/// finding per change.
std::vector<Finding> stabilize(RagdollAsset& asset, const StabilizeOptions& options = {});

struct ValidateOptions {
  /// Bind-pose penetrations up to this are ignored. [m] [>= 0] [default 0.001]
  double overlapTolerance = 0.001;
  /// Joint anchor mismatch allowed in the bind pose. [m] [>= 0] [default 0.001]
  double anchorTolerance = 0.001;
  /// Bind angles this far outside a limit are accepted. [rad] [>= 0] [default 1e-3]
  double limitTolerance = 1e-3;
  double maxChildParentRatio = 2.0;  ///< Child mass above this times its parent's warns. [> 0] [default 2]
  double minBodyMass = 0.1;          ///< Lighter bodies warn ("extreme_mass"). [kg] [default 0.1]
  double maxBodyMass = 100.0;        ///< Heavier bodies warn. [kg] [default 100]
};

/// Ranges outside which an asset is broken, not merely unusual (validateRagdollStructure refuses
/// it; ValidateOptions' narrower mass range only warns): a body of 1e308 kg or a gain of 1e308
/// throws every body out of the world at the first step.
inline constexpr int kMaxRagdollBodies = 256;      ///< Bodies per asset. [count]
inline constexpr double kBodyMassMin = 1e-3;       ///< [kg] (1 g)
inline constexpr double kBodyMassMax = 1e4;        ///< [kg]
inline constexpr double kBodyInertiaMax = 1e4;     ///< Each principal moment. [kg m^2]
inline constexpr double kDriveStiffnessMax = 1e6;  ///< JointPreset::driveStiffness. [N m/rad]
inline constexpr double kDriveDampingMax = 1e5;    ///< JointPreset::driveDamping. [N m s/rad]

/// Checks what an asset is made of, with or without its skeleton: 1 to kMaxRagdollBodies bodies,
/// parents listed first and only the first body a root (no cycle, no body its own parent, no
/// parent index out of range), one joint per non-root body between it and its parent, slots,
/// finite unit frames, shapes, masses in [kBodyMassMin, kBodyMassMax], inertias in (0,
/// kBodyInertiaMax], materials, drive gains in [0, kDriveStiffnessMax] and [0, kDriveDampingMax],
/// limits finite within [-pi, pi] (Y within [-pi/2, pi/2]); with `skeleton`, body and map joint
/// indices in it. Each finding names the body, joint or slot and the field. validateRagdoll runs
/// it first; `handoff validate`, `handoff run` and Character::create refuse an asset with errors.
/// Thread-safe.
std::vector<Finding> validateRagdollStructure(const RagdollAsset& asset, const Skeleton* skeleton = nullptr);

/// Checks an asset against its skeleton (SPEC.md section 2): implausible scale and proportions
/// (hip height, limb ratios, left/right, head and pelvis placement: docs/ASSET.md), overlapping non-adjacent
/// bodies, anchors that do not coincide in the bind pose, mass ratios, extreme masses, limits that exclude
/// the bind pose, degenerate shapes and frames, bad references. Each finding names the bodies or joint.
/// Errors block use; warnings do not.
std::vector<Finding> validateRagdoll(const RagdollAsset& asset, const Skeleton& skeleton,
                                     const ValidateOptions& options = {});
bool hasErrors(std::span<const Finding> findings);

/// Sets every body's joint index from its bone name (names are authoritative in files). Errors
/// name the bodies whose bones the skeleton lacks.
Status resolveJoints(RagdollAsset& asset, const Skeleton& skeleton);

/// JSON: versioned ("version"), top-level "bodies" and "joints" arrays plus "capsule",
/// "collision", "map", "calibration". Saving then loading is lossless (doubles round-trip).
/// Loading merges defaults for missing fields (a body without "inertia" gets the shape's), warns
/// about unknown fields and rejects wrong types or out-of-range values, naming the JSON path
/// (e.g. `bodies[3].mass`). `findings` (optional) receives warnings and errors.
std::string saveRagdollJson(const RagdollAsset& asset);
Result<RagdollAsset> loadRagdollJson(const std::string& text, const std::string& sourceName,
                                     std::vector<Finding>* findings = nullptr);
Result<RagdollAsset> loadRagdollFile(const std::string& path, std::vector<Finding>* findings = nullptr);
Status saveRagdollFile(const RagdollAsset& asset, const std::string& path);

/// World transforms of all bodies for a skeleton pose: worldFromBody = worldFromRoot *
/// rootFromBone * boneFromBody, for every body. `models` are rootFromJoint of the skeleton;
/// `worldFromBodies` has asset.bodies.size() elements. Never allocates.
void bodyPosesFromModels(const RagdollAsset& asset, std::span<const Transform> models,
                         const Transform& worldFromRoot, std::span<Transform> worldFromBodies);

/// The engine joint of an asset joint: its two frames, the preset's limits and the break force and
/// torque between `bodies[def.parentBody]` and `bodies[def.childBody]` (asset body order), the
/// adjacent bodies colliding only when def.adjacentCollision is on. What Ragdoll::create makes for
/// each joint.
JointDesc jointDescFor(const JointDef& def, std::span<const BodyId> bodies);

/// Lowest point of a shape placed by `worldFromShape` (world Y up): where it would touch a
/// floor below it. A sphere's bottom, a capsule's lower cap bottom, a box's lowest corner height
/// under its centre. The shape's origin for ShapeType::None. [m] Never allocates.
Vec3 shapeLowestPoint(const ShapeDesc& shape, const Transform& worldFromShape);

/// A lower bound of shapeSurfaceDistance, in closed form from the shapes' bounding capsules (a
/// box's runs along its longest axis, its radius the rest of the half diagonal): a small fraction
/// of the exact distance's cost, for rejecting pairs that are clearly apart. For sphere and
/// capsule pairs whose cores are apart it is the distance itself, up to rounding. [m]
double shapeDistanceLowerBound(const ShapeDesc& a, const Transform& spaceFromA, const ShapeDesc& b,
                               const Transform& spaceFromB);

/// The bounding capsule shapeDistanceLowerBound uses, placed in a space: every point of the
/// shape is within `radius` of the segment `p` `q`. Placing each body's once and comparing the
/// pairs with boundingCapsuleDistance gives shapeDistanceLowerBound's figures bit for bit.
struct PlacedBoundingCapsule {
  Vec3 p{0.0}, q{0.0};  ///< [m]
  double radius = 0.0;  ///< [m]
};
PlacedBoundingCapsule placeBoundingCapsule(const ShapeDesc& shape, const Transform& spaceFromShape);
/// A lower bound of the distance between the shapes the capsules hold. [m]
double boundingCapsuleDistance(const PlacedBoundingCapsule& a, const PlacedBoundingCapsule& b);

/// Distance between the surfaces of two shapes placed in one space; negative when they
/// overlap (minus the penetration depth). [m] Exact for sphere, capsule and box pairs (GJK while
/// apart, separating axes once the inner cores intersect). Never allocates.
double shapeSurfaceDistance(const ShapeDesc& a, const Transform& spaceFromA, const ShapeDesc& b,
                            const Transform& spaceFromB);

}  // namespace handoff
