// `handoff live`: the workbench's HTTP server (cpp-httplib): the page and three.js from web/,
// commands and uploads as POST requests, the frames as server-sent events (docs/WORKBENCH.md,
// "Protocol"). One simulation thread steps the Workbench in real time.
#pragma once

#include "handoff/scenario.h"

#include "handoff/result.h"

#include <cstddef>
#include <filesystem>
#include <memory>
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
  /// Uploads kept at once (the one in use; a refused or replaced one is removed). [bytes] [0: 4 x
  /// maxUploadBytes]
  std::size_t maxUploadTotalBytes = 0;
  /// What to open first: a scenario, else a character file (Workbench::scenarioForCharacter),
  /// else the data folder's DeepMimic run.
  std::optional<Scenario> start;
  std::string startCharacter;
  std::string startOrigin;
  /// The session's secret (docs/WORKBENCH.md, "Security"); empty: a fresh random one.
  std::string token;
  /// Event streams open at once; one more is answered 429. [>= 1] [default 4]
  int maxStreams = 4;
};

/// A running workbench server: bound, its session open, serving on its own threads until stop()
/// or destruction. For runServer and the tests (tests/live/server_test.cpp).
class LiveServer {
 public:
  /// Binds options.host:options.port (0: a free port), opens the start scenario, starts serving.
  static Result<std::unique_ptr<LiveServer>> start(const ServerOptions& options);
  ~LiveServer();
  LiveServer(const LiveServer&) = delete;
  LiveServer& operator=(const LiveServer&) = delete;

  int port() const;
  const std::string& token() const;
  /// http://HOST:PORT/?token=... (what `handoff live` prints).
  std::string url() const;
  /// The character, its bodies, the start time.
  std::string describe() const;
  /// The scratch folder (uploads, tuned assets, the rig).
  const std::filesystem::path& scratch() const;
  /// Stops serving and joins every thread. Idempotent.
  void stop();

  struct Impl;

 private:
  explicit LiveServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Serves until SIGINT or SIGTERM. Returns the exit code (1 when the start fails).
int runServer(const ServerOptions& options);

/// `handoff live --bench`: the workbench without a server, on `scenario` played for `seconds`
/// with a scripted trigger sequence; prints server time per frame. Returns the exit code.
int runBench(const ServerOptions& options, double seconds);

}  // namespace handoff::live
