#include "rig/gltf_animations.h"

#include <set>
#include <string>

namespace handoff::detail {

std::optional<nlohmann::json> mergePerNodeAnimations(const nlohmann::json& doc) {
  using Json = nlohmann::json;
  const auto animations = doc.find("animations");
  if (animations == doc.end() || !animations->is_array() || animations->size() < 2) return std::nullopt;
  const Json& accessors = doc.contains("accessors") ? doc["accessors"] : Json::array();
  std::set<long long> driven;
  std::optional<Json> timeline;  // {count, min, max} of the first input
  for (const Json& animation : *animations) {
    if (!animation.is_object() || !animation.contains("channels") || !animation.contains("samplers"))
      return std::nullopt;
    std::set<long long> nodes;
    for (const Json& channel : animation["channels"]) {
      if (!channel.contains("target") || !channel["target"].contains("node")) return std::nullopt;
      nodes.insert(channel["target"]["node"].get<long long>());
    }
    const bool named = animation.contains("name") && animation["name"].is_string() &&
                       !animation["name"].get<std::string>().empty();
    if (named && nodes.size() != 1) return std::nullopt;
    for (const long long node : nodes) {
      if (!driven.insert(node).second) return std::nullopt;
    }
    for (const Json& sampler : animation["samplers"]) {
      const auto input = sampler["input"].get<size_t>();
      if (input >= accessors.size()) return std::nullopt;
      const Json& a = accessors[input];
      const Json key = {a.value("count", Json()), a.value("min", Json()), a.value("max", Json())};
      if (key[1].is_null() || key[2].is_null()) return std::nullopt;  // times unknown without min/max
      if (!timeline) timeline = key;
      if (*timeline != key) return std::nullopt;
    }
  }
  Json merged = {{"channels", Json::array()}, {"samplers", Json::array()}};
  if (const Json& first = (*animations)[0]; first.contains("name")) merged["name"] = first["name"];
  for (const Json& animation : *animations) {
    const size_t base = merged["samplers"].size();
    for (const Json& sampler : animation["samplers"]) merged["samplers"].push_back(sampler);
    for (Json channel : animation["channels"]) {
      channel["sampler"] = channel["sampler"].get<size_t>() + base;
      merged["channels"].push_back(std::move(channel));
    }
  }
  return Json::array({std::move(merged)});
}

}  // namespace handoff::detail
