// The workbench's server (apps/handoff/live/server.h) in process on the DeepMimic run, attacked as
// issue 27 did it, over plain sockets (every header under the test's control): requests without
// the session token, from another origin or under another Host are refused; deep JSON, chunked
// bodies, open streams and idle sockets do not take it down or starve the page.
#include "live/server.h"
#include "live/files.h"
#include "live/guard.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace handoff::live {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// A TCP connection to 127.0.0.1:port (closed when destroyed).
class Socket {
 public:
  explicit Socket(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket(Socket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  bool ok() const { return fd_ >= 0; }
  /// Sends all of `bytes`; false once the peer is gone.
  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  /// What arrives within `timeout`, up to `until` (a substring) or the peer closing.
  std::string receive(double timeout, std::string_view until = {}) {
    std::string out;
    const auto start = Clock::now();
    char buffer[65536];
    while (secondsSince(start) < timeout) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      out.append(buffer, static_cast<std::size_t>(n));
      if (!until.empty() && out.find(until) != std::string::npos) break;
    }
    return out;
  }

 private:
  int fd_ = -1;
};

struct Reply {
  int status = 0;
  std::string head, body;
};

Reply parseReply(const std::string& text) {
  Reply r;
  const std::size_t end = text.find("\r\n\r\n");
  r.head = text.substr(0, end);
  if (end != std::string::npos) r.body = text.substr(end + 4);
  if (text.rfind("HTTP/1.1 ", 0) == 0) r.status = std::atoi(text.c_str() + 9);
  return r;
}

/// Resident memory of this process (the server runs in it). [MiB]
double residentMiB() {
  std::ifstream in("/proc/self/statm");
  long pages = 0, resident = 0;
  in >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

class LiveServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Result<TempFolder> t = TempFolder::create("handoff-server-test-");
    ASSERT_TRUE(t) << t.error();
    temp_ = new TempFolder(std::move(t).value());
    ServerOptions o;
    o.port = 0;
    o.webDir = HANDOFF_WEB_DIR;
    o.dataDir = HANDOFF_DATA_DIR;
    o.outDir = temp_->path() / "out";
    const auto started = Clock::now();
    Result<std::unique_ptr<LiveServer>> s = LiveServer::start(o);
    ASSERT_TRUE(s) << s.error();
    server_ = std::move(s).value().release();
    std::printf("server up in %.2f s: %s\n", secondsSince(started), server_->url().c_str());
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    delete temp_;
    temp_ = nullptr;
  }

  static int port() { return server_->port(); }
  static std::string ownHost() { return "127.0.0.1:" + std::to_string(port()); }

  /// One request on a fresh connection (Connection: close). `headers` replace the defaults
  /// (Host: the server's, X-Handoff-Token: the session's); an empty value drops the header.
  static Reply request(const std::string& method, const std::string& target, const std::string& body = {},
                       std::map<std::string, std::string> headers = {}, double timeout = 30.0) {
    headers.try_emplace("Host", ownHost());
    headers.try_emplace("X-Handoff-Token", server_->token());
    std::string text = method + " " + target + " HTTP/1.1\r\nConnection: close\r\n";
    for (const auto& [name, value] : headers) {
      if (!value.empty()) text += name + ": " + value + "\r\n";
    }
    if (method == "POST") text += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    text += "\r\n" + body;
    Socket s(port());
    EXPECT_TRUE(s.ok());
    s.send(text);
    return parseReply(s.receive(timeout));
  }

  static inline LiveServer* server_ = nullptr;
  static inline TempFolder* temp_ = nullptr;
};

TEST(RequestGuard, AcceptsItsOwnPageAndRefusesEveryOtherCaller) {
  const RequestGuard g("127.0.0.1", 8766, "secret");
  const std::string own = "127.0.0.1:8766", local = "localhost:8766", v6 = "[::1]:8766",
                    evil = "evil.example:8766", noPort = "127.0.0.1", otherPort = "127.0.0.1:8767",
                    lan = "192.168.1.5:8766";
  const std::string token = "secret", wrong = "secreT", empty;
  const std::string ownOrigin = "http://127.0.0.1:8766", evilOrigin = "http://evil.example",
                    nullOrigin = "null";
  EXPECT_TRUE(g.check({"GET", "/api/state", &own, nullptr, &token}).ok);
  EXPECT_TRUE(g.check({"GET", "/api/state", &local, nullptr, &token}).ok);
  EXPECT_TRUE(g.check({"GET", "/api/state", &v6, nullptr, &token}).ok);
  EXPECT_TRUE(g.check({"POST", "/api/command", &own, &ownOrigin, &token}).ok);
  EXPECT_TRUE(g.check({"GET", "/live.js", &own, nullptr, nullptr}).ok);  // the page: public code
  const GuardRequest refused[] = {
      {"GET", "/api/state", nullptr, nullptr, &token},      // no Host
      {"GET", "/api/state", &evil, nullptr, &token},        // DNS rebinding
      {"GET", "/live.html", &evil, nullptr, nullptr},       // ... also for the page
      {"GET", "/api/state", &noPort, nullptr, &token},      // not the bound address
      {"GET", "/api/state", &otherPort, nullptr, &token},   //
      {"GET", "/api/state", &lan, nullptr, &token},         // not bound there
      {"POST", "/api/command", &own, &evilOrigin, &token},  // cross-origin
      {"POST", "/api/command", &own, &nullOrigin, &token},  // sandboxed frame, file://
      {"GET", "/api/state", &own, nullptr, nullptr},        // no token
      {"GET", "/api/state", &own, nullptr, &empty},         //
      {"GET", "/api/state", &own, nullptr, &wrong},         //
      {"OPTIONS", "/api/command", &own, nullptr, &token},   // no CORS
      {"PUT", "/api/command", &own, nullptr, &token},       //
  };
  for (const GuardRequest& r : refused) {
    const GuardVerdict v = g.check(r);
    EXPECT_FALSE(v.ok) << r.method << " " << r.path << " Host " << (r.host ? *r.host : "-");
    EXPECT_FALSE(v.reason.empty());
  }
  // Bound to every interface: any literal address with the port, never a name but localhost.
  const RequestGuard any("0.0.0.0", 8766, "secret");
  EXPECT_TRUE(any.check({"GET", "/api/state", &lan, nullptr, &token}).ok);
  EXPECT_FALSE(any.check({"GET", "/api/state", &evil, nullptr, &token}).ok);
  EXPECT_FALSE(any.check({"GET", "/api/state", &lan, nullptr, nullptr}).ok);
  EXPECT_EQ(newSessionToken().size(), 32u);
  EXPECT_NE(newSessionToken(), newSessionToken());
}

// Finding 1: any web page could drive the server (a text/plain POST needs no preflight) and,
// through DNS rebinding, read every GET.
TEST_F(LiveServerTest, RefusesCrossOriginForeignHostAndMissingToken) {
  const std::string ragdoll = R"({"type":"ragdoll"})";
  const Reply crossOrigin = request("POST", "/api/command", ragdoll,
                                    {{"Origin", "http://evil.example"}, {"Content-Type", "text/plain"}});
  EXPECT_EQ(crossOrigin.status, 403) << crossOrigin.head;
  EXPECT_NE(crossOrigin.body.find("Origin"), std::string::npos) << crossOrigin.body;
  for (const char* path : {"/api/tune", "/api/save", "/api/upload?name=x.bvh"}) {
    EXPECT_EQ(request("POST", path, "{}", {{"Origin", "http://evil.example"}}).status, 403) << path;
  }
  const Reply rebound =
      request("GET", "/api/files", {}, {{"Host", "evil.example:" + std::to_string(port())}});
  EXPECT_EQ(rebound.status, 403);
  EXPECT_EQ(rebound.body.find("dataDir"), std::string::npos);
  EXPECT_EQ(request("GET", "/api/state", {}, {{"X-Handoff-Token", ""}}).status, 403);
  EXPECT_EQ(request("GET", "/api/state", {}, {{"X-Handoff-Token", "0123"}}).status, 403);
  EXPECT_EQ(request("GET", "/api/stream", {}, {{"X-Handoff-Token", ""}}, 2.0).status, 403);
  // Nothing was triggered by the refused requests; the page's own requests go through.
  const Reply log = request("GET", "/api/log");
  EXPECT_EQ(log.status, 200);
  EXPECT_EQ(log.body.find("ragdoll"), std::string::npos) << log.body.substr(0, 300);
  EXPECT_EQ(request("GET", "/api/state?token=" + server_->token(), {}, {{"X-Handoff-Token", ""}}).status,
            200);
  EXPECT_EQ(request("POST", "/api/command", R"({"type":"play"})", {{"Origin", "http://" + ownHost()}}).status,
            200);
  EXPECT_EQ(request("GET", "/api/state", {}, {{"Host", "localhost:" + std::to_string(port())}}).status, 200);
  EXPECT_EQ(request("GET", "/live.html", {}, {{"X-Handoff-Token", ""}}).status, 200);
  EXPECT_NE(server_->url().find("?token=" + server_->token()), std::string::npos);
}

TEST(LiveServer, RefusesAnEmptyHost) {
  ServerOptions o;
  o.host = "";
  o.port = 0;
  o.dataDir = HANDOFF_DATA_DIR;
  Result<std::unique_ptr<LiveServer>> s = LiveServer::start(o);
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().find("--host"), std::string::npos) << s.error();
}

std::string nested(int depth, const char* open, const char* close, const char* inner) {
  std::string text;
  text.reserve(static_cast<std::size_t>(depth) * 6);
  for (int i = 0; i < depth; ++i) text += open;
  text += inner;
  for (int i = 0; i < depth; ++i) text += close;
  return text;
}

// Finding 4: 100,000 nested arrays in a tune field (or nested objects) killed the server.
TEST_F(LiveServerTest, DeepJsonIsRefusedAndTheServerKeepsServing) {
  const auto started = Clock::now();
  const Reply arrays =
      request("POST", "/api/tune", R"({"groups":{"knee":{"upper":)" + nested(100000, "[", "]", "1") + "}}}");
  EXPECT_EQ(arrays.status, 400) << arrays.body;
  EXPECT_NE(arrays.body.find("nested at most 32 levels"), std::string::npos) << arrays.body;
  const Reply objects = request("POST", "/api/command", nested(100000, R"({"a":)", "}", "1"));
  EXPECT_EQ(objects.status, 400) << objects.body;
  const Reply deepCommand =
      request("POST", "/api/command", R"({"type":"partial","bodies":)" + nested(40, "[", "]", "") + "}");
  EXPECT_EQ(deepCommand.status, 400) << deepCommand.body;
  std::printf("three deep bodies refused in %.2f s\n", secondsSince(started));
  EXPECT_EQ(request("GET", "/api/state").status, 200);
  // Nesting the page uses still goes through.
  EXPECT_EQ(request("POST", "/api/command", R"({"type":"play"})").status, 200);
}

// Finding 6: dt 1e-9 through tune never returned and wedged the session.
TEST_F(LiveServerTest, TuneRefusesATimeStepThatWouldWedgeTheSession) {
  const auto started = Clock::now();
  const Reply r = request("POST", "/api/tune", R"({"settings":{"dt":1e-9}})", {}, 10.0);
  const double seconds = secondsSince(started);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("settings.dt"), std::string::npos) << r.body;
  EXPECT_LT(seconds, 5.0);
  EXPECT_NE(request("GET", "/api/state").body.find("\"dt\":0.0166"), std::string::npos);
}

// Finding 7: a chunked body bypassed the 64 MiB bound and was buffered whole (1 GiB: 2.4 GB RSS).
TEST_F(LiveServerTest, ChunkedBodiesAreCutOffWithBoundedMemory) {
  const double before = residentMiB();
  Socket s(port());
  ASSERT_TRUE(s.ok());
  ASSERT_TRUE(s.send("POST /api/upload?name=big.bvh HTTP/1.1\r\nHost: " + ownHost() +
                     "\r\nX-Handoff-Token: " + server_->token() + "\r\nTransfer-Encoding: chunked\r\n\r\n"));
  const std::string chunk = "100000\r\n" + std::string(0x100000, 'A') + "\r\n";  // 1 MiB
  std::size_t sent = 0;
  for (int i = 0; i < 200 && s.send(chunk); ++i) sent += chunk.size();
  const Reply r = parseReply(s.receive(10.0));
  const double grown = residentMiB() - before;
  std::printf(
      "chunked upload: %.0f MiB of 200 accepted by the socket before it was cut off; HTTP %d; resident "
      "memory %+.1f MiB\n",
      static_cast<double>(sent) / (1024.0 * 1024.0), r.status, grown);
  EXPECT_EQ(r.status, 411) << r.head;
  EXPECT_LT(sent, std::size_t{200} << 20);
  EXPECT_LT(grown, 40.0);
  EXPECT_EQ(request("GET", "/api/state").status, 200);
}

// Finding 8: 100k unknown names in a partial took 25 s with the lock held (quadratic). Linear time
// is a ratio, measured side by side in one run so it holds on any machine, under the sanitizers
// and under load (an absolute 3 s bound failed once at 3.01 s under ASan with other builds
// running; idle it is 1.1 s there, 0.07 s in a release build): 10 times the names may take at
// most 25 times as long (linear: about 10; quadratic: about 100).
TEST_F(LiveServerTest, UnknownNamesAreAnsweredInLinearTime) {
  const auto timed = [](int count, Reply& reply) {
    std::string bodies;
    for (int i = 0; i < count; ++i)
      bodies += (i ? ",\"" : "\"") + std::string("nobody_") + std::to_string(100000 + i) + "\":1";
    const auto started = Clock::now();
    reply = request("POST", "/api/command", R"({"type":"partial","bodies":{)" + bodies + "}}");
    return secondsSince(started);
  };
  Reply small, large;
  // The smaller request twice, the faster kept: the first may pay for a cold connection.
  double smallSeconds = timed(10000, small);
  smallSeconds = std::min(smallSeconds, timed(10000, small));
  const double largeSeconds = timed(100000, large);
  std::printf("partial with 10,000 / 100,000 unknown names: HTTP %d / %d in %.3f / %.3f s (x%.1f)\n",
              small.status, large.status, smallSeconds, largeSeconds, largeSeconds / smallSeconds);
  EXPECT_EQ(small.status, 400);
  EXPECT_EQ(large.status, 400);
  EXPECT_NE(large.body.find("bodies.nobody_100000"), std::string::npos) << large.body.substr(0, 300);
  EXPECT_LT(largeSeconds, 25.0 * smallSeconds);
}

// Finding 9: 16 open streams or 200 idle sockets made every other request time out.
TEST_F(LiveServerTest, OpenStreamsAndIdleSocketsDoNotStarveThePage) {
  const auto t0 = Clock::now();
  std::vector<Socket> streams;
  int open = 0, tooMany = 0;
  for (int i = 0; i < 20; ++i) {
    streams.emplace_back(port());
    streams.back().send("GET /api/stream HTTP/1.1\r\nHost: " + ownHost() +
                        "\r\nX-Handoff-Token: " + server_->token() + "\r\n\r\n");
    const Reply r = parseReply(streams.back().receive(5.0, "\r\n\r\n"));
    open += r.status == 200;
    tooMany += r.status == 429;
  }
  EXPECT_EQ(open, 4);
  EXPECT_EQ(tooMany, 16);
  std::vector<Socket> idle;
  for (int i = 0; i < 200; ++i) idle.emplace_back(port());
  const double opened = secondsSince(t0);
  const auto started = Clock::now();
  const Reply state = request("GET", "/api/state");
  const double seconds = secondsSince(started);
  std::printf(
      "20 streams asked (4 open, 16 refused) and 200 idle sockets connected in %.2f s; /api/state in %.3f "
      "s\n",
      opened, seconds);
  EXPECT_LT(opened, 5.0);  // no connection refused for a second (the listen backlog)
  EXPECT_EQ(state.status, 200);
  EXPECT_LT(seconds, 1.0);
  const Reply page = request("GET", "/live.html");
  EXPECT_EQ(page.status, 200);
}

// Finding 10: refused uploads were kept for ever (six: 387 MB); replaced ones too.
TEST_F(LiveServerTest, RefusedAndReplacedUploadsAreDeleted) {
  const fs::path uploads = server_->scratch() / "uploads";
  const auto count = [&] {
    std::error_code ec;
    int n = 0;
    for (fs::directory_iterator it(uploads, ec), end; !ec && it != end; it.increment(ec)) ++n;
    return n;
  };
  const Reply broken = request("POST", "/api/upload?name=broken.bvh", "HIERARCHY\nROOT x\n{\n");
  EXPECT_EQ(broken.status, 400);
  EXPECT_EQ(count(), 0);
  std::ifstream in(fs::path(HANDOFF_DATA_DIR) / "deepmimic" / "humanoid3d_run.bvh", std::ios::binary);
  const std::string bvh((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(bvh.empty());
  EXPECT_EQ(request("POST", "/api/upload?name=first.bvh", bvh).status, 200);
  EXPECT_EQ(request("POST", "/api/upload?name=second.bvh", bvh).status, 200);
  EXPECT_EQ(count(), 1);  // the first, replaced, is gone
  // Finding 14: a long name lost its extension (the importer then guessed the format).
  const std::string longName = std::string(100, 'n') + ".bvh";
  const Reply longUpload = request("POST", "/api/upload?name=" + longName, bvh);
  EXPECT_EQ(longUpload.status, 200) << longUpload.body;
  for (const auto& e : fs::directory_iterator(uploads)) EXPECT_EQ(e.path().extension(), ".bvh") << e.path();
  EXPECT_EQ(request("POST", "/api/load", R"({"file":"deepmimic/humanoid3d_run.bvh"})").status, 200);
  EXPECT_EQ(count(), 0);
}

// Finding 15: saves followed symlinks (a victim file overwritten) and replaced files silently.
TEST_F(LiveServerTest, SavesRefuseSymlinksAndAskBeforeReplacing) {
  const fs::path out = temp_->path() / "out";
  fs::create_directories(out);
  EXPECT_EQ(request("POST", "/api/command", R"({"type":"step"})").status, 200);
  const Reply first = request("POST", "/api/save", R"({"name":"twice"})");
  ASSERT_EQ(first.status, 200) << first.body;
  const Reply again = request("POST", "/api/save", R"({"name":"twice"})");
  EXPECT_EQ(again.status, 409) << again.body;
  EXPECT_NE(again.body.find("twice.json"), std::string::npos) << again.body;
  EXPECT_EQ(request("POST", "/api/save", R"({"name":"twice","overwrite":true})").status, 200);

  const fs::path victim = temp_->path() / "victim.txt";
  std::ofstream(victim) << "precious\n";
  fs::create_symlink(victim, out / "linked.json");
  for (const char* body : {R"({"name":"linked"})", R"({"name":"linked","overwrite":true})"}) {
    const Reply r = request("POST", "/api/save", body);
    EXPECT_TRUE(r.status == 409 || r.status == 400) << r.status << " " << r.body;
    std::ifstream v(victim);
    std::string text;
    std::getline(v, text);
    EXPECT_EQ(text, "precious");
  }
  EXPECT_FALSE(fs::exists(out / "linked.asset.json"));
  fs::create_symlink(victim, out / "linked2.glb");
  EXPECT_EQ(request("POST", "/api/export", R"({"name":"linked2","overwrite":true})").status, 400);
  EXPECT_EQ(fs::file_size(victim), 9u);
}

// Finding 16: "joints.left_knee.: not a tunable field" for a joint given a number.
TEST_F(LiveServerTest, TuneMessagesNameWhatIsWrong) {
  const Reply r = request("POST", "/api/tune", R"({"joints":{"left_knee":1}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("joints.left_knee: expected an object"), std::string::npos) << r.body;
  const Reply b = request("POST", "/api/tune", R"({"bodies":{"chest":[1]}})");
  EXPECT_NE(b.body.find("bodies.chest: expected an object"), std::string::npos) << b.body;
}

}  // namespace
}  // namespace handoff::live
