#include "live/guard.h"

#include <arpa/inet.h>

#include <cstdio>
#include <random>

namespace handoff::live {

namespace {

/// Equal in a time that does not depend on where the strings differ.
bool sameSecret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

bool literalIp(std::string_view host) {
  unsigned char buffer[16];
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    const std::string inner(host.substr(1, host.size() - 2));
    return inet_pton(AF_INET6, inner.c_str(), buffer) == 1;
  }
  const std::string text(host);
  return inet_pton(AF_INET, text.c_str(), buffer) == 1;
}

/// What a log line may show of a header: printable ASCII, at most 80 characters.
std::string shown(const std::string& value) {
  std::string out;
  for (char c : value.substr(0, 80)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return value.size() > 80 ? out + "..." : out;
}

}  // namespace

std::string newSessionToken() {
  std::random_device random;  // /dev/urandom on Linux
  std::string token;
  for (int i = 0; i < 4; ++i) {
    char part[9];
    std::snprintf(part, sizeof part, "%08x", static_cast<unsigned>(random()));
    token += part;
  }
  return token;
}

RequestGuard::RequestGuard(std::string boundHost, int port, std::string token)
    : port_(std::to_string(port)), token_(std::move(token)) {
  std::vector<std::string> names;
  if (boundHost == "0.0.0.0" || boundHost == "::" || boundHost == "[::]") {
    wildcard_ = true;
  } else if (boundHost.find(':') != std::string::npos && boundHost.front() != '[') {
    names.push_back("[" + boundHost + "]");  // a literal IPv6 address, as a Host header writes it
  } else {
    names.push_back(boundHost);
  }
  // The loopback names: a page of this machine may call it any of these.
  for (const char* name : {"127.0.0.1", "localhost", "[::1]"}) names.push_back(name);
  for (const std::string& name : names) {
    hosts_.push_back(name + ":" + port_);
    if (port == 80) hosts_.push_back(name);
  }
}

bool RequestGuard::needsToken(std::string_view path) { return path.rfind("/api/", 0) == 0 || path == "/api"; }

bool RequestGuard::hostAccepted(std::string_view host) const {
  for (const std::string& h : hosts_) {
    if (host == h) return true;
  }
  if (!wildcard_) return false;
  // host:port with a literal IP.
  const std::size_t colon = host.rfind(':');
  if (colon == std::string_view::npos || host.substr(colon + 1) != port_) return false;
  return literalIp(host.substr(0, colon));
}

GuardVerdict RequestGuard::check(const GuardRequest& r) const {
  if (r.host == nullptr) return {false, "no Host header"};
  if (!hostAccepted(*r.host)) return {false, "Host '" + shown(*r.host) + "' is not this server"};
  if (r.origin != nullptr && *r.origin != "http://" + *r.host) {
    return {false, "Origin '" + shown(*r.origin) + "' is not this server's"};
  }
  // No method but the ones the server answers (no OPTIONS: CORS stays closed).
  if (r.method != "GET" && r.method != "HEAD" && r.method != "POST") {
    return {false, "method " + shown(std::string(r.method)) + " is not served"};
  }
  if (needsToken(r.path)) {
    if (r.token == nullptr || r.token->empty())
      return {false, "no token (open the URL handoff live printed)"};
    if (!sameSecret(*r.token, token_)) return {false, "wrong token (open the URL handoff live printed)"};
  }
  return {};
}

}  // namespace handoff::live
