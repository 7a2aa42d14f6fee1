#include "live/server.h"

#include "live/files.h"
#include "live/guard.h"
#include "live/requests.h"
#include "live/task_pool.h"
#include "live/workbench.h"

#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

namespace handoff::live {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Named (not anonymous): LiveServer::Impl, declared in the header, holds a Server.
namespace serving {

using Clock = std::chrono::steady_clock;

/// What the stream carries: the latest frame, and versioned documents (state, log) plus notices
/// that every client must receive. Frames may be skipped by a slow client (it gets the latest);
/// documents are sent whenever the client's version is older.
class Hub {
 public:
  struct Cursor {
    std::uint64_t frame = 0;
    int state = 0;
    int log = 0;
    std::size_t notices = 0;
  };

  void publishFrame(std::uint64_t serial, const std::string& frame) {
    std::lock_guard lock(mutex_);
    if (serial == frameSerial_) return;
    frameSerial_ = serial;
    frame_ = frame;
    ++frameSeq_;
    changed_.notify_all();
  }
  void publishState(int version, std::string state) {
    std::lock_guard lock(mutex_);
    stateVersion_ = version;
    state_ = std::move(state);
    changed_.notify_all();
  }
  void publishLog(int version, std::string log) {
    std::lock_guard lock(mutex_);
    logVersion_ = version;
    log_ = std::move(log);
    changed_.notify_all();
  }
  void notice(const std::string& text, bool error) {
    std::lock_guard lock(mutex_);
    notices_.push_back(json{{"text", text}, {"error", error}}.dump());
    changed_.notify_all();
  }
  int stateVersion() {
    std::lock_guard lock(mutex_);
    return stateVersion_;
  }
  int logVersion() {
    std::lock_guard lock(mutex_);
    return logVersion_;
  }
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    changed_.notify_all();
  }
  /// Waits (up to `timeout`) for anything newer than the cursor; the SSE text of it, or a
  /// keep-alive comment. False once closed.
  bool next(Cursor& c, std::string& out, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, timeout, [&] {
      return closed_ || c.state != stateVersion_ || c.log != logVersion_ || c.notices != notices_.size() ||
             c.frame != frameSeq_;
    });
    if (closed_) return false;
    out.clear();
    if (c.state != stateVersion_) {
      c.state = stateVersion_;
      out += "event: state\ndata: " + state_ + "\n\n";
    }
    if (c.log != logVersion_) {
      c.log = logVersion_;
      out += "event: log\ndata: " + log_ + "\n\n";
    }
    for (; c.notices < notices_.size(); ++c.notices)
      out += "event: notice\ndata: " + notices_[c.notices] + "\n\n";
    if (c.frame != frameSeq_) {
      c.frame = frameSeq_;
      out += "event: frame\ndata: " + frame_ + "\n\n";
    }
    if (out.empty()) out = ": keep-alive\n\n";
    return true;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::uint64_t frameSerial_ = 0, frameSeq_ = 0;
  std::string frame_;
  int stateVersion_ = 0, logVersion_ = 0;
  std::string state_ = "{}", log_ = "{}";
  std::vector<std::string> notices_;
  bool closed_ = false;
};

// Debian's cpp-httplib is built with brotli and compresses responses whose type is text/*,
// exactly "application/javascript" or exactly "application/json" when the browser accepts br; at
// brotli's highest quality three.js (1.4 MB) takes 5 s. Over the loopback that buys nothing, so
// the types below are spelled so that they are not compressed (a charset parameter).
constexpr const char* kJsonType = "application/json; charset=utf-8";
const char* contentType(const fs::path& file) {
  const std::string ext = file.extension().string();
  if (ext == ".html") return "text/html; charset=utf-8";
  if (ext == ".js" || ext == ".mjs") return "application/javascript; charset=utf-8";
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".json") return kJsonType;
  if (ext == ".glb") return "model/gltf-binary";
  if (ext == ".png") return "image/png";
  if (ext == ".svg") return "image/svg+xml";
  return "application/octet-stream";
}

bool readFile(const fs::path& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return true;
}

/// A reply as JSON text (bytes that are not UTF-8, from names a request gave, replaced).
void sendReply(httplib::Response& res, const Reply& r) {
  res.status = r.status;
  res.set_content(r.body.dump(-1, ' ', false, json::error_handler_t::replace), kJsonType);
}
void sendError(httplib::Response& res, int status, const std::string& message) {
  sendReply(res, errorReply(status, message));
}
void sendJson(httplib::Response& res, const json& j) { sendReply(res, {200, j}); }

bool loopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

/// The page's own files: web/ without tests, dot files, or node_modules other than three.js.
bool servable(const std::string& relative) {
  if (relative.rfind("test/", 0) == 0) return false;
  if (relative.rfind("node_modules/", 0) == 0 && relative.rfind("node_modules/three/", 0) != 0) return false;
  const fs::path p(relative);
  for (const fs::path& part : p) {
    if (!part.empty() && part.string().front() == '.') return false;
  }
  return true;
}

/// What `handoff live` opens first (ServerOptions::start, startCharacter, else the DeepMimic run).
Scenario startScenario(const ServerOptions& options, const Workbench& wb) {
  if (options.start) return *options.start;
  return wb.scenarioForCharacter(options.startCharacter.empty() ? "deepmimic/humanoid3d_run.bvh"
                                                                : options.startCharacter);
}
std::string startOrigin(const ServerOptions& options) {
  return options.startOrigin.empty() ? "data: deepmimic/humanoid3d_run.bvh" : options.startOrigin;
}

class Server {
 public:
  Server(const ServerOptions& options, const fs::path& scratch)
      : options_(options),
        requests_([&] {
          RequestsOptions r;
          r.workbench.dataDir = options.dataDir;
          r.workbench.outDir = options.outDir;
          r.workbench.scratchDir = scratch;
          r.maxUploadBytes = options.maxUploadBytes;
          r.maxUploadTotalBytes = options.maxUploadTotalBytes;
          return r;
        }()),
        wb_(requests_.workbench()) {}

  Status open() {
    std::lock_guard lock(mutex_);
    Status st = wb_.open(startScenario(options_, wb_), startOrigin(options_));
    if (st) publishLocked();
    return st;
  }

  std::string describe() {
    std::lock_guard lock(mutex_);
    char text[256];
    std::snprintf(text, sizeof text, "%s (%zu bodies, started in %.0f ms)",
                  wb_.scenario().character.file.c_str(), wb_.asset().bodies.size(), wb_.lastStartMs());
    return text;
  }

  void routes(httplib::Server& http) {
    http.Get("/api/stream", [this](const httplib::Request&, httplib::Response& res) {
      // Each open stream holds a thread: a bounded number at once (a page needs one).
      if (streams_.fetch_add(1) >= options_.maxStreams) {
        streams_.fetch_sub(1);
        return sendError(res, 429,
                         "too many event streams open (" + std::to_string(options_.maxStreams) +
                             "): close another tab of the workbench");
      }
      res.set_header("Cache-Control", "no-store");
      auto cursor = std::make_shared<Hub::Cursor>();
      res.set_chunked_content_provider(
          "text/event-stream",
          [this, cursor](size_t, httplib::DataSink& sink) {
            std::string out;
            if (!hub_.next(*cursor, out, std::chrono::milliseconds(1000))) {
              sink.done();
              return true;
            }
            return sink.write(out.data(), out.size());
          },
          [this](bool) { streams_.fetch_sub(1); });
    });
    http.Get("/api/state", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(mutex_);
      sendJson(res, wb_.state());
    });
    http.Get("/api/log", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(mutex_);
      sendJson(res, wb_.log());
    });
    http.Get("/api/frame", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(mutex_);
      res.set_content(wb_.frameJson(), kJsonType);
    });
    http.Get("/api/metrics", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(mutex_);
      res.set_content(wb_.metrics(), kJsonType);
    });
    http.Get("/api/asset", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(mutex_);
      res.set_header("Content-Disposition", "attachment; filename=\"live.asset.json\"");
      res.set_content(wb_.assetJson(), kJsonType);
    });
    http.Get("/api/scenario", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(mutex_);
      res.set_content(saveScenarioJson(wb_.scenario()), kJsonType);
    });
    http.Get("/api/files", [this](const httplib::Request&, httplib::Response& res) {
      json files = json::array();
      for (const DataFile& f : listCharacterFiles(options_.dataDir)) {
        files.push_back({{"path", f.path}, {"size", f.size}});
      }
      sendJson(res, {{"dataDir", options_.dataDir.string()},
                     {"files", files},
                     {"maxUpload", options_.maxUploadBytes},
                     {"outDir", options_.outDir.string()}});
    });
    http.Get("/api/rig.glb", [this](const httplib::Request&, httplib::Response& res) {
      std::string bytes;
      {
        std::lock_guard lock(mutex_);
        if (!readFile(wb_.rigGlbPath(), bytes)) return sendError(res, 500, "the rig is not written");
      }
      res.set_header("Cache-Control", "no-store");
      res.set_content(bytes, "model/gltf-binary");
    });
    http.Get("/api/download", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string file = req.get_param_value("file");
      std::lock_guard lock(mutex_);
      // Only what this server wrote (save, export), by its file name.
      const std::optional<fs::path> it = requests_.written(file);
      std::string bytes;
      if (!it || !readFile(*it, bytes)) return sendError(res, 404, "not found");
      res.set_header("Content-Disposition", "attachment; filename=\"" + it->filename().string() + "\"");
      res.set_content(bytes, contentType(*it));
    });

    // The POST requests (requests.h), under the lock, then what changed goes out on the stream.
    http.Post(R"(/api/(command|tune|load|upload|save|export))",
              [this](const httplib::Request& req, httplib::Response& res) {
                std::lock_guard lock(mutex_);
                const Reply r = requests_.post(req.matches[1].str(), req.get_param_value("name"), req.body);
                publishLocked();
                sendReply(res, r);
              });

    // The page: web/ (live.html at /).
    http.Get(R"(/(.*))", [this](const httplib::Request& req, httplib::Response& res) {
      std::string relative = req.matches[1];
      if (relative.empty()) relative = "live.html";
      if (!servable(relative)) return sendError(res, 404, "not found");
      Result<fs::path> file = resolveInside(options_.webDir, relative);
      std::string bytes;
      if (!file || !readFile(*file, bytes)) return sendError(res, 404, "not found");
      res.set_header("Cache-Control", "no-store");
      res.set_content(bytes, contentType(*file));
    });

    http.set_error_handler([this](const httplib::Request&, httplib::Response& res) {
      if (!res.body.empty()) return;
      if (res.status == 413) {
        sendError(res, 413,
                  "upload refused: larger than the " + formatBytes(options_.maxUploadBytes) + " allowed");
      } else {
        sendError(res, res.status, "HTTP " + std::to_string(res.status));
      }
    });
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
      std::string what = "internal error";
      try {
        std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      sendError(res, 500, what);
    });
  }

  /// The simulation thread: steps in real time, publishes what changed.
  void simulate(const std::atomic<bool>& stop) {
    const auto period = std::chrono::microseconds(16667);
    auto last = Clock::now();
    auto next = last + period;
    while (!stop) {
      std::this_thread::sleep_until(next);
      next += period;
      const auto now = Clock::now();
      if (now > next + 4 * period) next = now + period;  // fell behind (a long tune): do not race
      const double elapsed = std::chrono::duration<double>(now - last).count();
      last = now;
      std::lock_guard lock(mutex_);
      wb_.advance(elapsed);
      publishLocked();
    }
    hub_.close();
  }

  void close() { hub_.close(); }

 private:
  void publishLocked() {
    if (hub_.stateVersion() != wb_.stateVersion()) hub_.publishState(wb_.stateVersion(), wb_.state().dump());
    if (hub_.logVersion() != wb_.logVersion()) hub_.publishLog(wb_.logVersion(), wb_.log().dump());
    for (const std::string& n : wb_.takeNotices()) hub_.notice(n, false);
    hub_.publishFrame(wb_.frameSerial(), wb_.frameJson());
  }

  const ServerOptions& options_;
  std::mutex mutex_;  // guards requests_ (and wb_, its workbench)
  Requests requests_;
  Workbench& wb_;
  Hub hub_;
  std::atomic<int> streams_{0};
};

/// httplib's task queue on a TaskPool: a thread per connection up to a cap.
class PoolQueue : public httplib::TaskQueue {
 public:
  PoolQueue(std::size_t initial, std::size_t max) : pool_(initial, max) {}
  void enqueue(std::function<void()> fn) override { pool_.enqueue(std::move(fn)); }
  void shutdown() override { pool_.shutdown(); }

 private:
  TaskPool pool_;
};

/// The request's token: the X-Handoff-Token header, else the `token` query parameter.
std::string requestToken(const httplib::Request& req) {
  if (req.has_header("X-Handoff-Token")) return req.get_header_value("X-Handoff-Token");
  return req.get_param_value("token");
}

}  // namespace serving
using namespace serving;

/// The server's bounds on connections (issue 27): a thread per connection up to kMaxThreads, so
/// 200 idle sockets or a few open streams leave threads for the page; a socket that sends nothing
/// is closed after kReadTimeout, an idle keep-alive connection after kKeepAlive.
constexpr std::size_t kInitialThreads = 8, kMaxThreads = 256;
constexpr std::chrono::seconds kReadTimeout{3}, kKeepAlive{2};

struct LiveServer::Impl {
  Impl(const ServerOptions& o, TempFolder folder)
      : options(o), scratch(std::move(folder)), server(options, scratch.path()) {}
  ServerOptions options;
  TempFolder scratch;
  Server server;
  httplib::Server http;
  std::optional<RequestGuard> guard;
  int port = 0;
  std::atomic<bool> stop{false};
  std::thread sim, listener;
  bool stopped = false;

  /// The guard, and chunked bodies refused before they are read (cpp-httplib buffers a chunked
  /// body whole, without the payload bound).
  httplib::Server::HandlerResponse check(const httplib::Request& req, httplib::Response& res) {
    const auto header = [&](const char* name) -> std::optional<std::string> {
      if (req.get_header_value_count(name) == 0) return std::nullopt;
      return req.get_header_value(name);
    };
    const std::optional<std::string> host = header("Host"), origin = header("Origin");
    const std::string token = requestToken(req);
    GuardVerdict verdict = req.get_header_value_count("Host") > 1
                               ? GuardVerdict{false, "more than one Host header"}
                               : guard->check({req.method, req.path, host ? &*host : nullptr,
                                               origin ? &*origin : nullptr, &token});
    int status = 403;
    if (verdict.ok && req.has_header("Transfer-Encoding")) {
      verdict = {false, "chunked request bodies are refused: send a Content-Length"};
      status = 411;
    }
    if (verdict.ok) return httplib::Server::HandlerResponse::Unhandled;
    std::cerr << "handoff live: refused " << req.method << " " << req.path.substr(0, 100) << " from "
              << req.remote_addr << ": " << verdict.reason << "\n";
    res.set_header("Connection", "close");
    sendError(res, status, "refused: " + verdict.reason);
    return httplib::Server::HandlerResponse::Handled;
  }
};

LiveServer::LiveServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LiveServer::~LiveServer() { stop(); }

Result<std::unique_ptr<LiveServer>> LiveServer::start(const ServerOptions& options) {
  if (options.host.empty())
    return Error{"--host is empty: name an interface (127.0.0.1 is this machine only)"};
  // Scratch folders left by a workbench that crashed (their owner process is gone).
  if (const int stale = TempFolder::removeStale("handoff-live-"); stale > 0) {
    std::cerr << "handoff live: removed " << stale << " scratch folder(s) left by a crash\n";
  }
  Result<TempFolder> scratch = TempFolder::create("handoff-live-");
  if (!scratch) return Error{scratch.error()};
  auto impl = std::make_unique<Impl>(options, std::move(scratch).value());
  if (impl->options.token.empty()) impl->options.token = newSessionToken();
  if (Status st = impl->server.open(); !st) return Error{st.error()};
  httplib::Server& http = impl->http;
  http.new_task_queue = [] { return new PoolQueue(kInitialThreads, kMaxThreads); };
  http.set_payload_max_length(options.maxUploadBytes);
  http.set_read_timeout(kReadTimeout);
  http.set_keep_alive_timeout(kKeepAlive.count());
  // Debian's cpp-httplib listens with a backlog of 5: a burst of connections overflows it and
  // each refused SYN costs the client a second. The listening socket is kept to widen it below.
  // (These options replace httplib's own: SO_REUSEADDR kept, SO_REUSEPORT not wanted: it would let
  // another process bind the same port.)
  auto listening = std::make_shared<int>(-1);
  http.set_socket_options([listening](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    *listening = sock;
  });
  impl->server.routes(http);
  Impl* self = impl.get();
  http.set_pre_routing_handler(
      [self](const httplib::Request& req, httplib::Response& res) { return self->check(req, res); });
  int port = options.port;
  if (port == 0) {
    port = http.bind_to_any_port(options.host);
    if (port < 0) return Error{"cannot listen on " + options.host};
  } else if (!http.bind_to_port(options.host, port)) {
    return Error{"cannot listen on " + options.host + ":" + std::to_string(port) + " (in use? try --port 0)"};
  }
  if (*listening >= 0) ::listen(*listening, SOMAXCONN);
  impl->port = port;
  impl->guard.emplace(options.host, port, impl->options.token);
  impl->sim = std::thread([self] { self->server.simulate(self->stop); });
  impl->listener = std::thread([self] { self->http.listen_after_bind(); });
  return std::unique_ptr<LiveServer>(new LiveServer(std::move(impl)));
}

int LiveServer::port() const { return impl_->port; }
const std::string& LiveServer::token() const { return impl_->options.token; }
const fs::path& LiveServer::scratch() const { return impl_->scratch.path(); }
std::string LiveServer::describe() const { return impl_->server.describe(); }

std::string LiveServer::url() const {
  const std::string& h = impl_->options.host;
  const std::string host = h.find(':') != std::string::npos ? "[" + h + "]" : h;
  return "http://" + host + ":" + std::to_string(impl_->port) + "/?token=" + impl_->options.token;
}

void LiveServer::stop() {
  if (!impl_ || impl_->stopped) return;
  impl_->stopped = true;
  impl_->stop = true;
  impl_->server.close();
  impl_->http.stop();
  if (impl_->listener.joinable()) impl_->listener.join();
  if (impl_->sim.joinable()) impl_->sim.join();
}

int runServer(const ServerOptions& options) {
  // SIGINT and SIGTERM are taken by one thread (sigwait), blocked everywhere else.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  const auto started = Clock::now();
  if (!fs::exists(options.webDir / "live.html")) {
    std::cerr << "error: the workbench page is not here: " << (options.webDir / "live.html").string() << "\n";
    return 1;
  }
  if (!fs::exists(options.webDir / "node_modules" / "three")) {
    std::cerr << "error: three.js is missing: run `npm ci` in " << options.webDir.string() << "\n";
    return 1;
  }
  Result<std::unique_ptr<LiveServer>> server = LiveServer::start(options);
  if (!server) {
    std::cerr << "error: " << server.error() << "\n";
    return 1;
  }
  if (!loopback(options.host)) {
    std::cerr << "warning: listening on " << options.host
              << ": anyone who can reach this address and has the URL's token can drive the workbench and "
                 "upload files\n";
  }
  std::printf("handoff live: %s  %s, ready in %.0f ms\n", (*server)->url().c_str(),
              (*server)->describe().c_str(),
              std::chrono::duration<double, std::milli>(Clock::now() - started).count());
  std::printf("  open that URL (its token is this session's key); saves and exports go to %s; Ctrl-C stops\n",
              options.outDir.string().c_str());
  std::fflush(stdout);

  int received = 0;
  sigwait(&signals, &received);
  (*server)->stop();
  return 0;
}

int runBench(const ServerOptions& options, double seconds) {
  Result<TempFolder> scratch = TempFolder::create("handoff-live-bench-");
  if (!scratch) {
    std::cerr << "error: " << scratch.error() << "\n";
    return 1;
  }
  WorkbenchOptions w;
  w.dataDir = options.dataDir;
  w.outDir = options.outDir;
  w.scratchDir = scratch->path();
  Workbench wb(w);
  const auto started = Clock::now();
  const Scenario s = startScenario(options, wb);
  if (Status st = wb.open(s, startOrigin(options)); !st) {
    std::cerr << "error: " << st.error() << "\n";
    return 1;
  }
  const double openMs = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  // The script: run 1 s, ragdoll, a chest hit in the fall, then let it settle and get up.
  const std::vector<std::pair<double, json>> script = {
      {1.0, json{{"type", "ragdoll"}}},
      {1.1, json{{"type", "impulse"}, {"body", "chest"}, {"impulse", {0.0, 0.0, 80.0}}}},
  };
  size_t next = 0;
  std::vector<double> wall, cpu;
  std::size_t bytes = 0;
  const int frames = static_cast<int>(std::lround(seconds / s.settings.dt));
  for (int k = 0; k < frames; ++k) {
    while (next < script.size() && wb.time() + 1e-9 >= script[next].first) {
      if (Result<json> r = wb.command(script[next].second); !r) {
        std::cerr << "error: " << r.error() << "\n";
        return 1;
      }
      ++next;
    }
    if (!wb.step()) break;
    wall.push_back(wb.lastFrameMs());
    cpu.push_back(wb.lastFrameCpuMs());
    bytes += wb.frameJson().size();
  }
  const auto tuneStart = Clock::now();
  Result<json> tuned = wb.tune(json{{"groups", {{"knee", {{"upper", {0.0, 0.0, 1.2}}}}}}});
  const double tuneMs = std::chrono::duration<double, std::milli>(Clock::now() - tuneStart).count();
  if (!tuned) {
    std::cerr << "error: " << tuned.error() << "\n";
    return 1;
  }
  const auto summary = [](const char* what, const std::vector<double>& v) {
    std::vector<int> order(v.size());
    for (size_t i = 0; i < v.size(); ++i) order[i] = static_cast<int>(i);
    std::sort(order.begin(), order.end(),
              [&](int a, int b) { return v[static_cast<size_t>(a)] > v[static_cast<size_t>(b)]; });
    const TimeStats t = timeStats(v);
    std::printf("  %s [ms]: mean %.3f  median %.3f  p95 %.3f  max %.3f  (slowest frames:", what, t.mean,
                t.median, t.p95, t.max);
    for (size_t i = 0; i < std::min<size_t>(3, order.size()); ++i) std::printf(" %d", order[i] + 1);
    std::printf(")\n");
  };
  std::printf("handoff live --bench: %s, %zu frames at %.0f Hz (ragdoll at 1.0 s, chest hit at 1.1 s)\n",
              wb.scenario().character.file.c_str(), wall.size(), 1.0 / s.settings.dt);
  std::printf("  open (import, build, session start, rig): %.1f ms\n", openMs);
  std::printf("  server time per frame (step + frame encoding):\n");
  summary("thread CPU", cpu);
  summary("wall clock", wall);
  std::printf(
      "  frame size: %.1f KiB on average (%.0f KiB/s at 60 Hz)\n",
      wall.empty() ? 0.0 : static_cast<double>(bytes) / static_cast<double>(wall.size()) / 1024.0,
      wall.empty() ? 0.0 : static_cast<double>(bytes) / static_cast<double>(wall.size()) * 60.0 / 1024.0);
  std::printf("  tune (knee limit) and re-simulate to %.2f s: %.1f ms\n", tuned->value("from", 0.0), tuneMs);
  return 0;
}

}  // namespace handoff::live
