// Scenarios (the `scenario` module): a scripted run of one character — the character file and
// its ragdoll, the clip it plays, a static world, and timed events (ragdoll at t, impulses,
// teleports, powered and partial modes, get-up permission, walls, clip switches) up to an end
// time. docs/SCENARIOS.md describes the JSON format field by field.
//
// This header holds the data model and its JSON loader/saver. The runner that plays a scenario
// on the character controller lives in the same module.
//
// Errors: loading never throws; a rejected file comes back as an Error whose message names the
// file and the JSON path of the problem, e.g.
//   run.json:4:17: events[0].time: number overflow parsing '1e999'
//   run.json: events[2].time: expected a number, got string
//   run.json: events[1].body: no bone named 'LeftHnd' (did you mean 'LeftHand'?)
//
// Thread-safety: every function is a pure function of its arguments (file functions read the
// file system); a const Scenario may be shared between threads.
#pragma once

#include "handoff/asset.h"
#include "handoff/controller.h"
#include "handoff/drive.h"
#include "handoff/handoff.h"
#include "handoff/import.h"
#include "handoff/math.h"
#include "handoff/recovery.h"
#include "handoff/result.h"
#include "handoff/rig.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace handoff {

inline constexpr int kScenarioVersion = 1;

/// Limits the loader enforces so a scenario stays runnable.
inline constexpr double kScenarioMaxTime = 3600.0;       ///< Longest end time. [s]
inline constexpr double kScenarioWorldExtent = 10000.0;  ///< |coordinate| of any position. [m]
inline constexpr double kScenarioMaxImpulse = 100000.0;  ///< |component| of an impulse. [N s]

/// Bounds on what a scenario file can make the loader and the runner hold or do (memory and time
/// grow with each), refused with an error naming the field and the bound. Each is far above real
/// use: the shipped scenarios are a few KB, with under 20 events, 12 static boxes and a 20 s run.
/// The scenario text (file or string). A bound on the parsed document's memory too. [bytes]
inline constexpr std::size_t kScenarioMaxBytes = std::size_t{4} << 20;
inline constexpr std::size_t kScenarioMaxEvents = 10000;  ///< Entries of `events`.
/// Frames a run plays, round(endTime / settings.dt): what the run records (replays keep every
/// frame) and steps. An hour at the default 60 Hz.
inline constexpr std::size_t kScenarioMaxFrames = 216000;
/// Static boxes of the world: world.boxes, world.walls and every step of world.steps together.
inline constexpr std::size_t kScenarioMaxStaticBoxes = 10000;
inline constexpr std::size_t kScenarioMaxProps = 64;  ///< Entries of `props`.
/// Entries of any name list or name map: settings.animationOwnedBones, a partial event's
/// `bodies`, a limb_lag event's `slots`, `expectations`.
inline constexpr std::size_t kScenarioMaxNames = 1000;

/// Rotation about world +Y (right-handed) by `yaw`: local +X turns to (cos yaw, 0, -sin yaw).
Quat yawRotation(double yaw);

/// A clip: by name or index in the character file or in a separate file.
struct ScenarioClip {
  /// File holding the clip; empty: the character file. Resolved like character.file; a separate
  /// file must carry the same skeleton (same joint names in the same order).
  std::string file;
  /// Clip name (a BVH file's clip is named after the file stem); empty: use `index`.
  std::string name;
  int index = 0;                    ///< Clip index when `name` is empty. [>= 0] [default 0]
  double startTime = 0.0;           ///< Clip time at which playback starts. [s] [>= 0] [default 0]
  WrapMode wrap = WrapMode::Clamp;  ///< "clamp" or "loop". [default clamp]
  /// Playback rate: clip seconds per scenario second. 0 holds the pose at `startTime` (a
  /// character standing still in one frame of the clip). Played clips only (`clip` and `clip`
  /// events); get-up clips play at their own rate. [[0, 100]] [default 1]
  double speed = 1.0;
  bool operator==(const ScenarioClip&) const = default;
};

struct ScenarioCharacter {
  /// Skeleton/animation file (BVH, glTF/GLB, FBX, COLLADA): relative to the scenario file's
  /// folder, then to each data directory. Required.
  std::string file;
  double unitScale = 0.0;  ///< Metres per file unit; 0 = auto-detect. [>= 0] [default 0]
  /// Explicit humanoid map (JSON, see mapHumanoidFromJson); empty: automatic mapping.
  std::string map;
  bool operator==(const ScenarioCharacter&) const = default;
};

/// The subset of BuildOptions a scenario may override (used when no asset file is given).
struct ScenarioBuild {
  bool hands = true;             ///< [default true]
  bool feet = true;              ///< [default true]
  bool stabilize = true;         ///< [default true]
  double limbRadiusRatio = 0.0;  ///< 0 = the builder's ratios. [0, 1] [default 0]
  double headRadiusScale = 1.0;  ///< [(0, 10]] [default 1]
  double clearance = 0.005;      ///< [m] [0, 0.1] [default 0.005]
  /// Joint overrides as JSON text (BuildOptions::overridesJson); empty: none.
  std::string jointOverridesJson;
  bool operator==(const ScenarioBuild&) const = default;
};

struct ScenarioRagdoll {
  /// Ragdoll asset JSON file (loadRagdollFile), resolved like character.file; empty: build one
  /// from the skeleton with `totalMass` and `build`.
  std::string asset;
  double totalMass = 70.0;  ///< [kg] [(0, 10000]] [default 70]
  ScenarioBuild build;
  bool operator==(const ScenarioRagdoll&) const = default;
};

/// The character root at t = 0 (world from root: yaw about +Y, then translation).
struct ScenarioRoot {
  Vec3 position{0.0};  ///< [m] [default 0]
  double yaw = 0.0;    ///< [rad] [default 0]
  Transform worldFromRoot() const { return {yawRotation(yaw), position}; }
  bool operator==(const ScenarioRoot&) const = default;
};

/// A static box: `halfExtents` along its local axes, turned by `yaw` about +Y, at `center`.
struct ScenarioBox {
  Vec3 center{0.0};       ///< [m] [default 0]
  Vec3 halfExtents{0.5};  ///< [m] [> 0] [default 0.5]
  double yaw = 0.0;       ///< [rad] [default 0]
  double friction = 0.8;  ///< [0, 10] [default 0.8]
  Transform worldFromBox() const { return {yawRotation(yaw), center}; }
  bool operator==(const ScenarioBox&) const = default;
};

/// A wall shortcut: a box standing on the segment from -> to (its base), `height` tall.
struct ScenarioWall {
  Vec3 from{0.0};          ///< Base start point. [m] [default 0]
  Vec3 to{1.0, 0.0, 0.0};  ///< Base end point, at the same height as `from`. [m] [default (1, 0, 0)]
  double height = 2.5;     ///< [m] [> 0] [default 2.5]
  double thickness = 0.2;  ///< [m] [> 0] [default 0.2]
  double friction = 0.8;   ///< [0, 10] [default 0.8]
  bool operator==(const ScenarioWall&) const = default;
};

/// A solid flight of `count` steps rising along `direction` from `origin` (the bottom edge's
/// midpoint): step i (0-based) spans [i * run, (i + 1) * run] along `direction`, `width` across,
/// from origin.y up to origin.y + (i + 1) * rise.
struct ScenarioSteps {
  int count = 5;                  ///< [1, 500] [default 5]
  double rise = 0.18;             ///< Step height. [m] (0, 2] [default 0.18]
  double run = 0.3;               ///< Step depth. [m] (0, 10] [default 0.3]
  double width = 2.0;             ///< [m] (0, 100] [default 2]
  Vec3 origin{0.0};               ///< [m] [default 0]
  Vec3 direction{1.0, 0.0, 0.0};  ///< Horizontal (y = 0), non-zero; normalised on use. [default +X]
  double friction = 0.8;          ///< [0, 10] [default 0.8]
  bool operator==(const ScenarioSteps&) const = default;
};

struct ScenarioGround {
  bool enabled = true;    ///< An infinite plane with normal +Y. [default true]
  double height = 0.0;    ///< [m] [default 0]
  double friction = 0.8;  ///< [0, 10] [default 0.8]
  bool operator==(const ScenarioGround&) const = default;
};

/// Level geometry from a glTF / GLB file (handoff/level.h: loadLevel, addLevel): its triangle
/// meshes as static triangle-mesh bodies, placed by worldFromLevel (rotation, then translation),
/// beside the ground plane, or instead of it with "ground": {"enabled": false}.
struct ScenarioLevel {
  /// The .gltf or .glb file: relative to the scenario file's folder, then to each data directory
  /// (resolveScenarioFile). Required.
  std::string file;
  Vec3 position{0.0};  ///< worldFromLevel's translation. [m] [default 0]
  Quat rotation{1.0, 0.0, 0.0,
                0.0};      ///< worldFromLevel's rotation, JSON [w, x, y, z], unit. [default identity]
  double friction = 0.8;   ///< [0, 10] [default 0.8, as the ground]
  double unitScale = 1.0;  ///< Metres per file unit (LevelOptions::unitScale). (0, 1000] [default 1]
  Transform worldFromLevel() const { return {rotation, position}; }
  bool operator==(const ScenarioLevel&) const = default;
};

struct ScenarioWorld {
  Vec3 gravity{0.0, -9.81, 0.0};  ///< [m/s^2] [default (0, -9.81, 0)]
  ScenarioGround ground;
  std::vector<ScenarioBox> boxes;
  std::vector<ScenarioWall> walls;
  std::vector<ScenarioSteps> steps;
  std::optional<ScenarioLevel> level;  ///< [default none]
  bool operator==(const ScenarioWorld&) const = default;
};

/// The box a wall stands for.
ScenarioBox wallBox(const ScenarioWall& wall);
/// The boxes of a flight of steps, bottom step first.
std::vector<ScenarioBox> stepBoxes(const ScenarioSteps& steps);
/// Every static box of the world at t = 0: boxes, then walls, then steps (not the ground, not
/// boxes placed by "wall" events).
std::vector<ScenarioBox> staticBoxes(const ScenarioWorld& world);

/// JSON names of DriveSolver (declared in handoff/drive.h).
const char* driveSolverName(DriveSolver solver);  ///< "explicit", "implicit"

/// JSON names of HandoffMode: "inherit", "naive_zero_velocity", "naive_bind_pose".
const char* scenarioHandoffModeName(HandoffMode mode);

/// Stepping and the character's handoff settings. The embedded library structs start at the
/// library's defaults (what a Character user gets); a scenario file names only what it changes.
struct ScenarioSettings {
  double dt = 1.0 / 60.0;  ///< Frame step. [s] (0, 0.1] [default 1/60]
  int substeps = 2;        ///< Physics substeps per frame. [1, 64] [default 2]
  /// The world's velocity iterations per substep (WorldSettings::solverIterations; joint rows
  /// get WorldSettings::jointIterationFactor times as many). [1, 1000] [default 10]
  int solverIterations = WorldSettings{}.solverIterations;
  /// CharacterSettings::handoff. JSON: the keys handoffMode, displayBlendTime, maxLinearSpeed,
  /// maxAngularSpeed, teleportDistance, stepTime, limitLookAhead, jointConsistency and
  /// staticContacts of "settings". [default HandoffSettings{}]
  HandoffSettings handoff;
  /// Solver of the `powered` and `partial` events' drives and of the hit reaction
  /// (PoweredSettings::solver). JSON "driveMode". [default PoweredSettings{}.solver: implicit]
  DriveSolver driveSolver = PoweredSettings{}.solver;
  /// CharacterSettings::animationOwnedBones: bones of the character left to the animation in
  /// every state (a look-at's head). JSON "animationOwnedBones": ["Head"]. Bone names of the
  /// skeleton, not its root, each once. [default none]
  std::vector<std::string> animationOwnedBones;
  /// CharacterSettings::dropPropsAtDeath: the held props drop when the character becomes a full
  /// ragdoll. JSON "dropPropsAtDeath". [default true]
  bool dropPropsAtDeath = CharacterSettings{}.dropPropsAtDeath;
  /// CharacterSettings::capsuleOnlyWhileAnimated: while animated only the capsule is in the
  /// simulation. JSON "capsuleOnlyWhileAnimated". [default false]
  bool capsuleOnlyWhileAnimated = CharacterSettings{}.capsuleOnlyWhileAnimated;
  bool operator==(const ScenarioSettings&) const = default;
};

/// Get-up clips and timing. Without clips the runner uses its defaults (or none: the character
/// stays a ragdoll).
struct ScenarioRecovery {
  std::optional<ScenarioClip> supine;  ///< Get-up starting on the back.
  std::optional<ScenarioClip> prone;   ///< Get-up starting face down.
  /// The clip the game plays once the character lands on its feet (CharacterSettings::landing),
  /// from its startTime, at its speed, on the root the character stands on; none: the clip
  /// playing before the fall starts again from its startTime there. A played clip (`speed`
  /// applies). [default none]
  std::optional<ScenarioClip> landing;
  /// CharacterSettings::transition. JSON "transitionTime" (duration), "maxPointSpeed",
  /// "maxTransitionTime" (maxDuration). [default TransitionSettings{}]
  TransitionSettings transition;
  /// CharacterSettings::settle. JSON "settleWindow" (window), "settleLinearSpeed",
  /// "settleAngularSpeed". [default SettleSettings{}]
  SettleSettings settle;
  /// CharacterSettings::gather. JSON "gatherTime" (duration; 0: no gather, the get-up's display
  /// transition blends the limbs from where they lie). [default GatherSettings{}]
  GatherSettings gather;
  /// Complete a get-up clip that ends below standing (handoff::completeGetUpClip); the runner does
  /// when this and RunOptions::completeGetUps are both on. [default true]
  bool completeGetUps = true;
  bool operator==(const ScenarioRecovery&) const = default;
};

/// Body regions for partial ragdolls. JSON: "full_body", "upper_body" (lower spine, chest, head,
/// arms, hands), "lower_body" (pelvis, legs, feet), "spine" (pelvis, lower spine, chest), "head",
/// "arms", "legs", "left_arm", "right_arm", "left_leg", "right_leg".
enum class BodyRegion : std::uint8_t {
  FullBody,
  UpperBody,
  LowerBody,
  Spine,
  Head,
  Arms,
  Legs,
  LeftArm,
  RightArm,
  LeftLeg,
  RightLeg,
  Count
};
const char* bodyRegionName(BodyRegion region);
std::optional<BodyRegion> bodyRegionFromName(std::string_view name);
bool regionContains(BodyRegion region, Slot slot);

enum class EventType : std::uint8_t {
  Ragdoll,       ///< "ragdoll": full ragdoll handoff.
  Impulse,       ///< "impulse": an impulse on one body.
  Teleport,      ///< "teleport": the root jumps (flagged: no velocity from the jump).
  Powered,       ///< "powered": powered ragdoll, drives track the animation.
  Partial,       ///< "partial": per-body physics weights (a hit reaction).
  Animate,       ///< "animate": back to animation.
  GetUpAllowed,  ///< "getup_allowed": allow or forbid get-up recovery.
  Wall,          ///< "wall": a static box appears.
  Clip,          ///< "clip": switch the animation clip.
  LimbLag,       ///< "limb_lag": light physics lag on the limb ends (Character::goLimbLag).
  Grab,          ///< "grab": a dropped prop back into the hand (Character::grabProp).
  Drop,          ///< "drop": a held prop out of the hand (Character::dropProp).
  End,           ///< "end": the scenario ends (must be last).
};
const char* eventTypeName(EventType type);
std::optional<EventType> eventTypeFromName(std::string_view name);

enum class ImpulseSpace : std::uint8_t {
  World,  ///< "world"
  Root,   ///< "root": the character root frame at the time of the event.
};
enum class PointSpace : std::uint8_t {
  Body,   ///< "body": the body's space C (origin at its centre of mass).
  World,  ///< "world"
};

struct ScenarioEvent {
  struct Ragdoll {
    bool operator==(const Ragdoll&) const = default;
  };
  struct Impulse {
    /// A bone of the character (the body on that bone, or on its nearest ancestor with one) or a
    /// humanoid slot name ("chest", "head", "upper_arm_l", ... see slotName).
    std::string body;
    Vec3 impulse{0.0};                                ///< [N s]
    ImpulseSpace impulseSpace = ImpulseSpace::World;  ///< [default world]
    std::optional<Vec3> point;                        ///< Application point [m]; none: the centre of mass.
    PointSpace pointSpace = PointSpace::Body;         ///< [default body]
    /// A knock-back (Character::knockBack): the character becomes a full ragdoll and the impulse
    /// is spread over every body by its mass (the same velocity change for all: thrown, no
    /// spin). With it, `body`, `point` and `pointSpace` are not allowed. [default false]
    bool knockback = false;
    bool operator==(const Impulse&) const = default;
  };
  struct Teleport {
    Vec3 position{0.0};  ///< New root position. [m] [default 0]
    double yaw = 0.0;    ///< New root yaw. [rad] [default 0]
    bool operator==(const Teleport&) const = default;
  };
  struct Powered {
    double weight = 1.0;    ///< Drive weight reached after the ramp. [0, 1] [default 1]
    double rampTime = 0.2;  ///< [s] [0, 10] [default 0.2]
    /// Pins on the pelvis and feet (PoweredSettings::pinPelvisAndFeet, the hit reaction's):
    /// they hold those bodies to the animated pose in the world. False: only the joint drives,
    /// so the powered character can fall (off a ledge) and land (LandingSettings). [default true]
    bool pinned = true;
    bool operator==(const Powered&) const = default;
  };
  struct Partial {
    /// Weight per bone or slot name (0 animation .. 1 physics). A body takes its own entry if
    /// any, else the largest weight of the regions containing its slot, else 0.
    std::map<std::string, double> bodies;
    std::map<BodyRegion, double> regions;
    double rampTime = 0.1;  ///< [s] [0, 10] [default 0.1]
    bool operator==(const Partial&) const = default;
  };
  struct Animate {
    double blendTime = 0.25;  ///< Physics -> animation blend. [s] [0, 10] [default 0.25]
    bool operator==(const Animate&) const = default;
  };
  struct GetUpAllowed {
    bool allowed = true;  ///< [default true]
    bool operator==(const GetUpAllowed&) const = default;
  };
  struct Wall {
    ScenarioBox box;
    bool operator==(const Wall&) const = default;
  };
  struct Clip {
    ScenarioClip clip;
    bool operator==(const Clip&) const = default;
  };
  /// Limb lag on (LimbLagSettings); "animate" ends it.
  struct LimbLag {
    std::vector<Slot> slots;  ///< Slot names; empty: LimbLagSettings' (the forearms and hands).
    double weight = 1.0;      ///< [0, 1] (> 0) [default 1]
    double rampTime = 0.2;    ///< [s] [0, 10] [default 0.2]
    bool operator==(const LimbLag&) const = default;
  };
  struct Grab {
    std::string prop;  ///< A prop of Scenario::props, by name. Required.
    bool operator==(const Grab&) const = default;
  };
  struct Drop {
    std::string prop;  ///< A prop of Scenario::props, by name. Required.
    bool operator==(const Drop&) const = default;
  };
  struct End {
    bool operator==(const End&) const = default;
  };
  /// Alternatives in EventType order.
  using Payload = std::variant<Ragdoll, Impulse, Teleport, Powered, Partial, Animate, GetUpAllowed, Wall,
                               Clip, LimbLag, Grab, Drop, End>;

  double time = 0.0;  ///< Scenario time. [s] [0, endTime], non-decreasing along the list.
  std::string label;  ///< Optional text for reports and timeline markers.
  Payload payload;

  EventType type() const { return static_cast<EventType>(payload.index()); }
  bool operator==(const ScenarioEvent&) const = default;
};

/// A look-at driving one bone (JSON "lookAt"): every frame, before the character's step, the
/// runner sets the bone's local rotation in the animation input so that its bind-pose forward
/// aims at `target` from the bone's parent as displayed at the last frame
/// (lookAtLocalRotation), as a game's gaze system does. With the bone in
/// settings.animationOwnedBones the character shows it as asked in every state.
struct ScenarioLookAt {
  std::string bone;  ///< A bone of the skeleton (not its root). Required.
  Vec3 target{0.0};  ///< The gaze target, a fixed world point. [m]
  bool operator==(const ScenarioLookAt&) const = default;
};

/// A prop in the character's hand from t = 0 (JSON "props"; PropDesc): a rigid body joined to
/// the hand while held, dropped by a `drop` event or at death (settings.dropPropsAtDeath), put
/// back by `grab`.
struct ScenarioProp {
  std::string name;  ///< Unique among the props; events name it. Required.
  std::string bone;  ///< The hand bone of the skeleton (it or a bone above it has a body). Required.
  ShapeDesc
      shape;  ///< JSON {"type": "capsule", "radius", "halfHeight"} / sphere / box "halfExtents". Required.
  double mass = 1.0;       ///< [kg] (0, 1000] [default 1]
  Transform handFromGrip;  ///< JSON {"rotation": [w, x, y, z], "translation": [x, y, z]}. [default identity]
  Transform propFromGrip;  ///< The same. [default identity]
  double friction = 0.8;   ///< [0, 10] [default 0.8]
  double restitution = 0.0;  ///< [0, 1] [default 0]
  friend bool operator==(const ScenarioProp& a, const ScenarioProp& b) {
    const auto same = [](const Transform& x, const Transform& y) {
      return x.rotation == y.rotation && x.translation == y.translation;
    };
    return a.name == b.name && a.bone == b.bone && a.shape.type == b.shape.type &&
           a.shape.radius == b.shape.radius && a.shape.halfHeight == b.shape.halfHeight &&
           a.shape.halfExtents == b.shape.halfExtents && a.mass == b.mass &&
           same(a.handFromGrip, b.handFromGrip) && same(a.propFromGrip, b.propFromGrip) &&
           a.friction == b.friction && a.restitution == b.restitution;
  }
};

/// The library's description of a scenario prop (its bone by name).
PropDesc propDesc(const ScenarioProp& prop);

struct Scenario {
  int version = kScenarioVersion;
  std::string name;  ///< [default: the file stem]
  std::string description;
  ScenarioCharacter character;
  ScenarioRagdoll ragdoll;
  ScenarioClip clip;  ///< Clip playing from t = 0. [default: index 0 of the character file]
  ScenarioRoot root;
  ScenarioWorld world;
  ScenarioSettings settings;
  ScenarioRecovery recovery;
  std::optional<ScenarioLookAt> lookAt;  ///< [default none]
  std::vector<ScenarioProp> props;       ///< [default none]
  std::vector<ScenarioEvent> events;     ///< Time order; equal times run in file order.
  double endTime = 0.0;                  ///< [s] (0, kScenarioMaxTime], >= the last event's time.
  /// Thresholds checked against the run's metrics, name -> value (e.g. "max_pop_mm": 1).
  std::map<std::string, double> expectations;

  /// Where the scenario came from (not saved): the name used in messages and the folder that
  /// relative file names start from ("" = the current directory).
  std::string sourceName;
  std::string baseDir;

  bool operator==(const Scenario&) const = default;
};

/// Parses a scenario. `sourceName` names the text in messages and gives the base folder for
/// relative file names. Unknown fields, wrong types, out-of-range or non-finite numbers,
/// duplicate keys, events out of order, an end before the last event ... are rejected with the
/// file, position or JSON path. Never throws.
Result<Scenario> loadScenarioJson(const std::string& text, const std::string& sourceName);
Result<Scenario> loadScenarioFile(const std::string& path);

/// Canonical JSON (every field written, defaults included); loading it gives back an equal
/// Scenario (doubles round-trip exactly).
std::string saveScenarioJson(const Scenario& scenario);

/// Finds a file the scenario names: absolute as is, else relative to scenario.baseDir, then to
/// each of `searchDirs` in order. The error lists the places looked at.
Result<std::string> resolveScenarioFile(const Scenario& scenario, const std::string& file,
                                        std::span<const std::string> searchDirs = {});

/// Checks a scenario against its imported character: clips that refer to the character file
/// (by name or index, start time within a clamped clip), impulse and partial body names (bones
/// of the skeleton or slot names), props[].bone (bones with a body on them or above),
/// settings.animationOwnedBones and lookAt.bone (bones of the
/// skeleton other than its root). Clips in separate files are not checked here (see
/// validateScenarioFiles). Messages name the JSON path, e.g.
/// `events[1].body: no bone named 'LeftHnd' (did you mean 'LeftHand'?)`.
Status validateScenarioAgainst(const Scenario& scenario, const ImportedAsset& character);

/// Resolves and imports every file the scenario names (character, separate clip files, and
/// checks that the ragdoll asset and map files exist), then validates as
/// validateScenarioAgainst and checks that separate clip files carry the character's skeleton.
Status validateScenarioFiles(const Scenario& scenario, std::span<const std::string> searchDirs = {});

}  // namespace handoff
