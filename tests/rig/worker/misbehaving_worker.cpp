// A stand-in for handoff-import-worker that misbehaves as Assimp does on a malformed file, chosen
// by the request's hint: "crash:<signal>", "hang", "greedy" (allocates without bound), "silent"
// (ends without a reply), "alien" (replies with another protocol). The isolation tests
// (import_checks_test.cpp) point ImportOptions::parserWorker / ParserLimits::worker at it.
#include "rig/assimp_read.h"

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

int main() {
  handoff::Result<handoff::detail::ReceivedRequest> received =
      handoff::detail::receiveParseRequest(STDIN_FILENO);
  if (!received) return 9;
  const std::string& hint = received->request.hint;
  if (hint.rfind("crash:", 0) == 0) {
    const int sig = std::atoi(hint.c_str() + 6);
    std::signal(sig, SIG_DFL);  // a sanitizer's handler would turn the signal into an exit status
    std::raise(sig);
  } else if (hint == "hang") {
    std::this_thread::sleep_for(std::chrono::seconds(60));
  } else if (hint == "greedy") {
    std::vector<std::vector<char>> blocks;
    for (int i = 0; i < 1024; ++i) {
      blocks.emplace_back(1 << 20, static_cast<char>(i));
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    std::_Exit(blocks.size() > 0 ? 7 : 8);  // not reached in time
  } else if (hint == "silent") {
    std::_Exit(0);
  } else if (hint == "alien") {
    const char reply[] = "HTTP/1.1 200 OK\r\n";
    const ssize_t written = ::write(STDOUT_FILENO, reply, sizeof reply - 1);
    std::_Exit(written > 0 ? 0 : 1);
  }
  return 5;
}
