// The soak benchmark: characters living for a long game session in one world, the process's
// resident memory and the characters' history sizes sampled every game minute. `handoff bench
// soak`, the steady-state tests (tests/steady_state/) and bench/results/soak.md.
//
// Thread-safety: runSoak builds and steps its own world on the calling thread; residentKb reads
// /proc and may be called from any thread.
#pragma once

#include "handoff/controller.h"
#include "handoff/crowd.h"
#include "handoff/recovery.h"
#include "handoff/result.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace handoff {

/// What the soak does to each of its characters (all times game time, each character's schedule
/// offset by a fraction of the hit interval so they do not act in the same frame): the run clip
/// in place; a hit (an impulse of 10 to 25 N s on a seeded random body: a hit reaction, the
/// powered return) every `hitInterval` unless recovering or lagging; a death (goRagdoll: the prop
/// drops, settle, get up) every `deathInterval`, once animated or powered; the prop grabbed back
/// once animated again; limb lag for 2 s every `limbLagInterval`, once animated; a teleport of the
/// root (1 m and back) every `teleportInterval`, once animated or powered. 60 Hz, 2 substeps.
struct SoakOptions {
  int characters = 8;              ///< [>= 1] [default 8]
  double minutes = 60.0;           ///< Game time. [min] [> 0] [default 60]
  double hitInterval = 1.5;        ///< [s] [> 0] [default 1.5]
  double deathInterval = 12.0;     ///< [s] [> 0] [default 12]
  double limbLagInterval = 20.0;   ///< [s] [> 0] [default 20]
  double teleportInterval = 30.0;  ///< [s] [> 0] [default 30]
  double spacing = 4.0;            ///< Characters on a line this far apart. [m] [> 0] [default 4]
  std::uint64_t seed = 1;          ///< Hit bodies and directions. [default 1]
  double sampleInterval = 60.0;    ///< Game time between samples. [s] [> 0] [default 60]
};

/// Per character, how many items it keeps in each history (Character::events() ... propReleases()).
struct SoakHistorySizes {
  std::size_t events = 0, handoffs = 0, recoveries = 0, flights = 0, landings = 0, breaks = 0,
              propReleases = 0;
};

/// One sample, taken every `sampleInterval` of game time.
struct SoakSample {
  double gameSeconds = 0.0;                 ///< [s]
  long residentKb = 0;                      ///< /proc/self/statm's resident pages. [KiB]
  double wallSeconds = 0.0;                 ///< Since the start. [s]
  std::vector<SoakHistorySizes> histories;  ///< Per character.
  /// Counted so far over all characters (what happened, kept or not): hits, deaths, get-ups
  /// finished (recoveries ended in animation), teleports, limb lags.
  long hits = 0, deaths = 0, recovered = 0, teleports = 0, limbLags = 0;
};

struct SoakResult {
  std::vector<SoakSample> samples;
  int faults = 0;  ///< Character::faultCount summed.
};

/// Runs the soak; `onSample` (optional) sees each sample as it is taken. Errors name the file or
/// the character that could not be created.
Result<SoakResult> runSoak(const std::string& dataDir, const SoakOptions& options,
                           const std::function<void(const SoakSample&)>& onSample = {});

/// The prop every soak character carries: a sword (capsule, 2 cm radius, 0.7 m between cap
/// centres) gripped in the right hand (the forearm's end when the map has no hand).
PropDesc soakSword(const RagdollAsset& asset);

/// The soak's two get-up clips (DeepMimic face up, face down from `dataDir`/deepmimic), prepared
/// for a character with `skeleton` and `map`. Errors name the file.
Result<std::vector<GetUpClip>> soakGetUpClips(const std::string& dataDir, const Skeleton& skeleton,
                                              const HumanoidMap& map);

/// The process's resident memory now (/proc/self/statm). [KiB] (0 when unreadable)
long residentKb();

}  // namespace handoff
