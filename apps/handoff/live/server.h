// `handoff live`: the workbench's HTTP server (cpp-httplib): the page and three.js from web/,
// commands and uploads as POST requests, the frames as server-sent events (docs/WORKBENCH.md,
// "Protocol"). One simulation thread steps the Workbench in real time.
#pragma once

#include "handoff/scenario.h"

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

namespace handoff::live {

struct ServerOptions {
  /// Interface to listen on; anything but a loopback address is announced with a warning.
  std::string host = "127.0.0.1";
  int port = 8766;  ///< 0 picks a free port.
  std::filesystem::path webDir;
  std::filesystem::path dataDir;
  std::filesystem::path outDir = "out/live";
  std::size_t maxUploadBytes = std::size_t{64} << 20;  ///< [bytes]
  /// What to open first: a scenario, else a character file (Workbench::scenarioForCharacter),
  /// else the data folder's DeepMimic run.
  std::optional<Scenario> start;
  std::string startCharacter;
  std::string startOrigin;
};

/// Serves until SIGINT or SIGTERM. Returns the exit code (1 when the start fails).
int runServer(const ServerOptions& options);

/// `handoff live --bench`: the workbench without a server, on `scenario` played for `seconds`
/// with a scripted trigger sequence; prints server time per frame. Returns the exit code.
int runBench(const ServerOptions& options, double seconds);

}  // namespace handoff::live
