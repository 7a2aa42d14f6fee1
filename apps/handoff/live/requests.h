// The workbench's POST requests without HTTP (docs/WORKBENCH.md, "Protocol"): /api/command,
// /api/tune, /api/load, /api/upload, /api/save, /api/export as a route name, the upload's name and
// the body, answered with a status and a JSON body. The server (server.cpp) routes them here after
// its guard; the fuzz target (tests/fuzz/workbench_fuzz.cpp) calls the same code. Every JSON body
// is read by parseRequestJson (nesting bounded). Not thread-safe: the server holds its mutex.
#pragma once

#include "live/files.h"
#include "live/workbench.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <set>
#include <string_view>

namespace handoff::live {

struct RequestsOptions {
  WorkbenchOptions workbench;                                  ///< Its scratchDir holds the uploads too.
  std::size_t maxUploadBytes = UploadStore::kDefaultMaxBytes;  ///< [bytes]
  std::size_t maxUploadTotalBytes = 0;                         ///< [bytes] [0: 4 x maxUploadBytes]
};

/// An answer: the HTTP status and the JSON body ({"ok": false, "error": ...} on errors).
struct Reply {
  int status = 200;
  nlohmann::json body;
};

/// {"ok": false, "error": message} with `status`.
Reply errorReply(int status, const std::string& message);

class Requests {
 public:
  explicit Requests(const RequestsOptions& options);
  Workbench& workbench() { return wb_; }
  /// A POST to /api/<route>; `name` is the upload's ?name=. Statuses: 200, 400 (refused, with the
  /// reason), 404 (no such route), 409 (a save or export would replace files).
  Reply post(std::string_view route, std::string_view name, std::string_view body);
  /// A file this server wrote (save, export), by its file name; nothing else is downloadable.
  std::optional<std::filesystem::path> written(std::string_view fileName) const;

 private:
  Reply withJson(std::string_view body, Reply (Requests::*handler)(const nlohmann::json&));
  Reply command(const nlohmann::json& body);
  Reply tune(const nlohmann::json& body);
  Reply load(const nlohmann::json& body);
  Reply save(const nlohmann::json& body);
  Reply exportReplay(const nlohmann::json& body);
  Reply upload(std::string_view name, std::string_view bytes);

  std::filesystem::path dataDir_;
  UploadStore uploads_;
  Workbench wb_;
  std::set<std::filesystem::path> written_;
};

}  // namespace handoff::live
