// Shared checks of the libFuzzer targets (issue 9): what every rejection message must carry.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

namespace handoff_fuzz {

[[noreturn]] inline void failure(const char* target, const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s: %s\n%s\n", target, what, detail.c_str());
  std::abort();
}

/// A rejection must start with the file name and be valid UTF-8 (it ends up in JSON reports).
inline void checkRejection(const char* target, const std::string& message, const std::string& file) {
  if (message.rfind(file, 0) != 0) failure(target, "message does not name the file", message);
  try {
    (void)nlohmann::json(message).dump();  // throws on invalid UTF-8
  } catch (const std::exception& error) {
    failure(target, "message is not valid UTF-8", error.what());
  }
}

}  // namespace handoff_fuzz
