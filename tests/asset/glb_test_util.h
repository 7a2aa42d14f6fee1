// A GLB container around a glTF JSON document and its BIN chunk, for tests that make glTF files.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace handoff::asset_test {

inline void putU32(std::string& out, size_t v) {
  const auto x = static_cast<std::uint32_t>(v);
  out.append(reinterpret_cast<const char*>(&x), sizeof x);
}

/// GLB 2.0 bytes: the JSON chunk (padded with spaces) and the BIN chunk (padded with zeros).
inline std::string glb(const nlohmann::json& doc, std::string bin) {
  std::string json = doc.dump();
  json.resize((json.size() + 3) / 4 * 4, ' ');
  bin.resize((bin.size() + 3) / 4 * 4, '\0');
  std::string out;
  putU32(out, 0x46546C67);
  putU32(out, 2);
  putU32(out, 12 + 8 + json.size() + 8 + bin.size());
  putU32(out, json.size());
  putU32(out, 0x4E4F534A);
  out += json;
  putU32(out, bin.size());
  putU32(out, 0x004E4942);
  out += bin;
  return out;
}

}  // namespace handoff::asset_test
