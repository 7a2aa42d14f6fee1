// The soak benchmark (include/handoff/soak.h): characters living a long game session in one world.
#include "handoff/soak.h"

#include "handoff/controller.h"
#include "handoff/import.h"
#include "handoff/physics_bullet.h"
#include "handoff/recovery.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>

namespace handoff {

long residentKb() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  long size = 0, resident = 0;
  const int read = std::fscanf(f, "%ld %ld", &size, &resident);
  std::fclose(f);
  if (read != 2) return 0;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

namespace {

constexpr double kDt = 1.0 / 60.0;

struct SoakCharacter {
  std::unique_ptr<Character> ch;
  Transform root;
  double phase = 0.0;  ///< Schedule offset. [s]
  int prop = -1;
  double limbLagUntil = -1.0;
  bool teleported = false;
  /// Due and waiting for a state that takes it (a death and a teleport: animated or powered; a
  /// limb lag: animated).
  bool deathPending = false, limbLagPending = false, teleportPending = false;
};

SoakHistorySizes historySizes(const Character& c) {
  SoakHistorySizes s;
  s.events = c.events().size();
  s.handoffs = c.handoffs().size();
  s.recoveries = c.recoveries().size();
  s.flights = c.flights().size();
  s.landings = c.landings().size();
  s.breaks = c.jointBreaks().size();
  s.propReleases = c.propReleases().size();
  return s;
}

/// True once per `interval` at schedule time `t` (frame-accurate).
bool due(double t, double interval) {
  if (t < 0.0) return false;
  return std::floor(t / interval) != std::floor((t - kDt) / interval) && t >= interval;
}

}  // namespace

PropDesc soakSword(const RagdollAsset& asset) {
  PropDesc prop;
  prop.name = "sword";
  prop.handJoint = asset.map[Slot::HandR] >= 0 ? asset.map[Slot::HandR] : asset.map[Slot::LowerArmR];
  prop.shape.type = ShapeType::Capsule;
  prop.shape.radius = 0.02;
  prop.shape.halfHeight = 0.35;
  prop.handFromGrip.translation = Vec3{-0.075, 0.0, 0.0};
  prop.propFromGrip.translation = Vec3{0.0, -0.25, 0.0};
  return prop;
}

Result<std::vector<GetUpClip>> soakGetUpClips(const std::string& dataDir, const Skeleton& skeleton,
                                              const HumanoidMap& map) {
  Result<ImportedAsset> up = importFile(dataDir + "/deepmimic/humanoid3d_getup_faceup.bvh");
  if (!up) return Error{up.error()};
  Result<ImportedAsset> down = importFile(dataDir + "/deepmimic/humanoid3d_getup_facedown.bvh");
  if (!down) return Error{down.error()};
  if (up->clips.empty() || down->clips.empty() || up->skeleton.jointNames != skeleton.jointNames ||
      down->skeleton.jointNames != skeleton.jointNames) {
    return Error{dataDir + "/deepmimic: the get-up files do not animate the run clip's skeleton"};
  }
  const std::vector<Clip> clips{up->clips.front(), down->clips.front()};
  return prepareGetUpClips(clips, skeleton, map, skeleton, map);
}

Result<SoakResult> runSoak(const std::string& dataDir, const SoakOptions& options,
                           const std::function<void(const SoakSample&)>& onSample) {
  if (options.characters < 1 || !(options.minutes > 0.0) || !(options.hitInterval > 0.0) ||
      !(options.deathInterval > 0.0) || !(options.limbLagInterval > 0.0) ||
      !(options.teleportInterval > 0.0) || !(options.spacing > 0.0) || !(options.sampleInterval > 0.0)) {
    return Error{"soak: characters must be >= 1 and every interval, minutes and spacing > 0"};
  }
  Result<CrowdCharacter> loaded = loadCrowdCharacter(dataDir);
  if (!loaded) return Error{loaded.error()};
  const CrowdCharacter& crowd = *loaded;
  Result<RagdollAsset> built = buildRagdoll(crowd.skeleton, BuildOptions{});
  if (!built) return Error{built.error()};
  auto asset = std::make_shared<const RagdollAsset>(std::move(built).value());
  Result<std::vector<GetUpClip>> getUps = soakGetUpClips(dataDir, crowd.skeleton, asset->map);
  if (!getUps) return Error{getUps.error()};

  std::unique_ptr<PhysicsWorld> world = createBulletWorld();
  world->addGroundPlane(Vec3{0.0, 1.0, 0.0}, 0.0);
  const auto joints = static_cast<size_t>(crowd.skeleton.jointCount());
  std::vector<Transform> locals(joints);
  crowd.run.sample(0.0, WrapMode::Loop, locals);

  const PropDesc prop = soakSword(*asset);

  std::vector<SoakCharacter> characters(static_cast<size_t>(options.characters));
  for (size_t i = 0; i < characters.size(); ++i) {
    SoakCharacter& c = characters[i];
    c.root.translation = Vec3{options.spacing * static_cast<double>(i), 0.0, 0.0};
    c.phase = options.hitInterval * static_cast<double>(i) / static_cast<double>(characters.size());
    Result<std::unique_ptr<Character>> created =
        Character::create(*world, asset, crowd.skeleton, CharacterSettings{}, c.root, locals);
    if (!created) return Error{"soak character " + std::to_string(i) + ": " + created.error()};
    c.ch = std::move(created).value();
    c.ch->setGetUpClips((*getUps)[0], (*getUps)[1]);
    Result<int> added = c.ch->addProp(prop);
    if (!added) return Error{"soak character " + std::to_string(i) + ": " + added.error()};
    c.prop = *added;
  }

  std::mt19937_64 random(options.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const int bodies = static_cast<int>(asset->bodies.size());
  const LimbLagSettings limbLag;
  SoakResult result;
  result.samples.reserve(static_cast<size_t>(options.minutes * 60.0 / options.sampleInterval) + 2);
  SoakSample counts;
  const auto start = std::chrono::steady_clock::now();
  const long steps = std::lround(options.minutes * 60.0 / kDt);
  const long sampleEvery = std::max(1L, std::lround(options.sampleInterval / kDt));
  double time = 0.0;
  for (long step = 1; step <= steps; ++step) {
    time += kDt;
    const double clipTime = time;
    crowd.run.sample(clipTime, WrapMode::Loop, locals);
    for (SoakCharacter& c : characters) {
      Character& ch = *c.ch;
      const double t = time - c.phase;
      bool teleport = false;
      c.teleportPending |= due(t, options.teleportInterval);
      if (c.teleportPending &&
          (ch.state() == CharacterState::Animated || ch.state() == CharacterState::Powered)) {
        c.teleportPending = false;
        c.teleported = !c.teleported;
        c.root.translation.z += c.teleported ? 1.0 : -1.0;
        teleport = true;
        ++counts.teleports;
      }
      const AnimationInput input{time, c.root, locals, teleport};
      (void)ch.preStep(input, kDt);
    }
    world->step(kDt, 2);
    for (SoakCharacter& c : characters) {
      Character& ch = *c.ch;
      ch.postStep(kDt);
      const double t = time - c.phase;
      if (ch.takeRecoveryFinished()) ++counts.recovered;
      if (c.limbLagUntil > 0.0 && t >= c.limbLagUntil) {
        if (ch.state() == CharacterState::Powered) (void)ch.goAnimated();
        c.limbLagUntil = -1.0;
      }
      if (ch.state() == CharacterState::Animated && !ch.propHeld(c.prop)) (void)ch.grabProp(c.prop);
      c.deathPending |= due(t, options.deathInterval);
      c.limbLagPending |= due(t, options.limbLagInterval);
      if (c.deathPending) {
        if (ch.state() == CharacterState::Animated || ch.state() == CharacterState::Powered) {
          c.deathPending = false;
          c.limbLagUntil = -1.0;
          if (ch.goRagdoll().committed) ++counts.deaths;
        }
      } else if (c.limbLagPending && ch.state() == CharacterState::Animated) {
        c.limbLagPending = false;
        if (ch.goLimbLag(limbLag)) {
          c.limbLagUntil = t + 2.0;
          ++counts.limbLags;
        }
      } else if (due(t, options.hitInterval) && ch.state() != CharacterState::Recovering &&
                 c.limbLagUntil < 0.0) {
        const int body = std::min(bodies - 1, static_cast<int>(unit(random) * bodies));
        const double angle = 2.0 * 3.141592653589793 * unit(random);
        const double size = 10.0 + 15.0 * unit(random);
        const Vec3 impulse{size * std::cos(angle), 0.0, size * std::sin(angle)};
        const Vec3 at = ch.ragdoll().bodyPose(body).translation;
        if (ch.applyImpulse(body, impulse, at)) ++counts.hits;
      }
    }
    if (step % sampleEvery == 0 || step == steps) {
      SoakSample s = counts;
      s.gameSeconds = time;
      s.residentKb = residentKb();
      s.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      for (const SoakCharacter& c : characters) s.histories.push_back(historySizes(*c.ch));
      if (onSample) onSample(s);
      result.samples.push_back(std::move(s));
    }
  }
  for (const SoakCharacter& c : characters) result.faults += c.ch->faultCount();
  return result;
}

}  // namespace handoff
