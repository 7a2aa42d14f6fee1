// Reading a whole file in a test: one definition for every test that needs a file's bytes.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

namespace handoff::test {

/// The file's bytes, read through its stream buffer in one call (not a character at a time:
/// the sanitizer build compiles the tests without optimization). Empty when the file cannot be
/// opened; the test's own assertions on the content then fail.
inline std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  if (in) bytes << in.rdbuf();
  return std::move(bytes).str();
}

}  // namespace handoff::test
