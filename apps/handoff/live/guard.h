// The workbench only talks to its own page (docs/WORKBENCH.md, "Security"). `handoff live` is a
// server on the user's machine with their files behind it: any web page the user visits can send
// it requests (a text/plain POST needs no CORS preflight), and a DNS-rebinding page can read what
// it answers. Every request is therefore checked, before its body is read, for:
//  - the Host header: the address the server bound to (the loopback names and literal IPs, with
//    the port), so a rebound name ("evil.example" resolving to 127.0.0.1) is refused;
//  - the Origin header, when there is one: the server's own ("http://" + an accepted Host), so a
//    cross-origin POST from another page is refused (non-browser clients send none);
//  - the session's secret token (printed in the URL, as Jupyter does) on every API request: in
//    the X-Handoff-Token header, or the `token` query parameter (EventSource, links). The page's
//    own files (web/: public code) need no token, so the page can load and read it from its URL.
// Pure logic, no HTTP library: the server and the tests call check() with the request's parts.
// Thread-safety: immutable after construction; check() may be called from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace handoff::live {

/// A fresh secret: 32 hex digits (128 bits) from the system's random source.
std::string newSessionToken();

/// The parts of a request the guard looks at (absent headers as null).
struct GuardRequest {
  std::string_view method;              ///< "GET", "POST", ...
  std::string_view path;                ///< The path without the query ("/api/state").
  const std::string* host = nullptr;    ///< The Host header.
  const std::string* origin = nullptr;  ///< The Origin header.
  const std::string* token = nullptr;   ///< X-Handoff-Token, else the `token` query parameter.
};

/// Why a request is refused (empty: accepted).
struct GuardVerdict {
  bool ok = true;
  std::string reason;
};

class RequestGuard {
 public:
  /// `boundHost`: the --host the server listens on ("127.0.0.1", "::1", "0.0.0.0", a name);
  /// `port`: the port it listens on; `token`: the session's secret (not empty).
  RequestGuard(std::string boundHost, int port, std::string token);

  GuardVerdict check(const GuardRequest& request) const;

  /// The Host header values accepted ("127.0.0.1:8766", "localhost:8766", ...). A wildcard bind
  /// (0.0.0.0, ::) also accepts any literal IP address with the port (a name can be rebound, an
  /// address cannot).
  const std::vector<std::string>& hosts() const { return hosts_; }
  const std::string& token() const { return token_; }
  /// True for the paths that need the token: the API (/api/...).
  static bool needsToken(std::string_view path);

 private:
  bool hostAccepted(std::string_view host) const;
  std::vector<std::string> hosts_;
  std::string port_;
  bool wildcard_ = false;
  std::string token_;
};

}  // namespace handoff::live
