#include "live/requests.h"

#include "live/request_json.h"

#include <algorithm>
#include <string>
#include <vector>

namespace handoff::live {

using json = nlohmann::json;
namespace fs = std::filesystem;

Reply errorReply(int status, const std::string& message) {
  return {status, json{{"ok", false}, {"error", message}}};
}

namespace {

Reply fromResult(const Result<json>& r) { return r ? Reply{200, *r} : errorReply(400, r.error()); }

/// 409 when a save or export would replace files (the request did not say overwrite).
std::optional<Reply> conflict(const std::vector<std::string>& existing) {
  if (existing.empty()) return std::nullopt;
  std::string names;
  for (const std::string& f : existing) names += (names.empty() ? "" : ", ") + f;
  return errorReply(409,
                    "not saved: " + names + " already in the output folder (save with overwrite to replace)");
}

}  // namespace

Requests::Requests(const RequestsOptions& options)
    : dataDir_(options.workbench.dataDir),
      uploads_(options.workbench.scratchDir, options.maxUploadBytes, options.maxUploadTotalBytes),
      wb_(options.workbench) {}

Reply Requests::post(std::string_view route, std::string_view name, std::string_view body) {
  if (route == "command") return withJson(body, &Requests::command);
  if (route == "tune") return withJson(body, &Requests::tune);
  if (route == "load") return withJson(body, &Requests::load);
  if (route == "save") return withJson(body, &Requests::save);
  if (route == "export") return withJson(body, &Requests::exportReplay);
  if (route == "upload") return upload(name, body);
  return errorReply(404, "not found");
}

std::optional<fs::path> Requests::written(std::string_view fileName) const {
  const auto it = std::find_if(written_.begin(), written_.end(),
                               [&](const fs::path& p) { return p.filename().string() == fileName; });
  if (it == written_.end()) return std::nullopt;
  return *it;
}

Reply Requests::withJson(std::string_view text, Reply (Requests::*handler)(const json&)) {
  const Result<json> body = parseRequestJson(text);
  if (!body) return errorReply(400, body.error());
  try {
    return (this->*handler)(*body);
  } catch (const json::exception& e) {
    return errorReply(400, std::string("bad request: ") + e.what());
  }
}

Reply Requests::command(const json& body) { return fromResult(wb_.command(body)); }

Reply Requests::tune(const json& body) { return fromResult(wb_.tune(body)); }

Reply Requests::load(const json& body) {
  if (!body.contains("file") || !body["file"].is_string()) return errorReply(400, "load: {\"file\": ...}");
  const std::string name = body["file"].get<std::string>();
  Result<fs::path> path = resolveInside(dataDir_, name);
  if (!path) return errorReply(400, "load: " + path.error());
  if (!isCharacterFile(path->string())) {
    return errorReply(
        400, "load: '" + name.substr(0, 200) + "' is not a character file (bvh, glb, gltf, fbx, dae)");
  }
  Status st = wb_.open(wb_.scenarioForCharacter(path->string()), "data: " + name);
  if (!st) return errorReply(400, st.error());
  uploads_.retainOnly({});
  return {200, {{"ok", true}, {"sessionId", wb_.sessionId()}}};
}

Reply Requests::upload(std::string_view nameView, std::string_view bytes) {
  const std::string name(nameView);
  if (!isCharacterFile(name)) {
    return errorReply(400, "upload refused: '" + name.substr(0, 100) +
                               "' is not a character file (bvh, glb, gltf, fbx, dae)");
  }
  Result<fs::path> stored = uploads_.store(name, bytes);
  if (!stored) return errorReply(400, stored.error());
  Status st = wb_.open(wb_.scenarioForCharacter(stored->string()), "upload: " + name);
  if (!st) {
    uploads_.remove(*stored);
    // The message names the file as the user knows it, not its place in the scratch folder.
    std::string message = st.error();
    const std::string where = stored->string();
    for (std::size_t at = message.find(where); at != std::string::npos;
         at = message.find(where, at + name.size())) {
      message.replace(at, where.size(), name);
    }
    return errorReply(400, message);
  }
  wb_.markUploaded();
  uploads_.retainOnly(*stored);  // the upload it replaces is not needed any more
  return {200, {{"ok", true}, {"sessionId", wb_.sessionId()}}};
}

Reply Requests::save(const json& body) {
  const std::string name = body.value("name", std::string("live_session"));
  const bool overwrite = body.value("overwrite", false);
  if (!overwrite) {
    if (std::optional<Reply> c = conflict(wb_.existingOutputs(name, false))) return *c;
  }
  Result<json> r = wb_.save(name, overwrite);
  if (!r) return errorReply(400, r.error());
  json out = *r;
  for (const char* key : {"scenario", "asset", "character"}) {
    if (!out.contains(key)) continue;
    const fs::path file(out[key].get<std::string>());
    written_.insert(file);
    out[std::string(key) + "Url"] = "api/download?file=" + file.filename().string();
  }
  out["ok"] = true;
  return {200, out};
}

Reply Requests::exportReplay(const json& body) {
  const std::string name = body.value("name", std::string("live_session"));
  const bool overwrite = body.value("overwrite", false);
  if (!overwrite) {
    if (std::optional<Reply> c = conflict(wb_.existingOutputs(name, true))) return *c;
  }
  Result<std::string> r = wb_.exportReplay(name, overwrite);
  if (!r) return errorReply(400, r.error());
  written_.insert(fs::path(*r));
  return {200,
          {{"ok", true}, {"glb", *r}, {"glbUrl", "api/download?file=" + fs::path(*r).filename().string()}}};
}

}  // namespace handoff::live
