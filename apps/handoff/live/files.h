// The workbench's file rules (docs/WORKBENCH.md, "Safety"): a file named by a request resolves
// inside one folder only (the data folder), uploads are bounded in size and land in a fresh
// private temporary folder, saves go to one output folder under names the server sanitises.
#pragma once

#include "handoff/result.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace handoff::live {

/// `relative` inside `root`. Refused, with the reason: empty, absolute, a NUL byte or a
/// backslash, a "." or ".." component, a file that does not exist, or one whose canonical path
/// (every symlink followed) is not inside root's canonical path (a symlink pointing out).
Result<std::filesystem::path> resolveInside(const std::filesystem::path& root, std::string_view relative);

/// True for the extensions the importer reads (bvh, glb, gltf, fbx, dae; any case).
bool isCharacterFile(std::string_view name);

/// A character file of the data folder, for the page's picker.
struct DataFile {
  std::string path;         ///< Relative to the folder, '/' separated.
  std::uintmax_t size = 0;  ///< [bytes]
};
/// The character files under `root` (regular files only: symlinks are skipped, so nothing
/// listed resolves outside), sorted by path, at most `maxDepth` folders deep.
std::vector<DataFile> listCharacterFiles(const std::filesystem::path& root, int maxDepth = 4);

/// `name` as a plain file name: the part after the last '/' or '\', every character other than
/// letters, digits, '.', '-' and '_' replaced by '_', at most 96 characters; refused when
/// nothing usable is left or it starts with '.'.
Result<std::string> safeFileName(std::string_view name);

/// A fresh private folder (mkdtemp, mode 0700) under the system temporary folder, removed with
/// its content when the object is destroyed.
class TempFolder {
 public:
  static Result<TempFolder> create(const std::string& prefix);
  TempFolder(TempFolder&& other) noexcept;
  TempFolder& operator=(TempFolder&&) = delete;
  TempFolder(const TempFolder&) = delete;
  ~TempFolder();
  const std::filesystem::path& path() const { return path_; }

 private:
  explicit TempFolder(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

/// Where uploads go: `folder`/uploads/<n>-<safe name>, n counting up (nothing is overwritten),
/// each at most `maxBytes`. Not thread-safe (the server serialises calls).
class UploadStore {
 public:
  /// Default bound on one upload. [bytes] [64 MiB]
  static constexpr std::size_t kDefaultMaxBytes = std::size_t{64} << 20;
  UploadStore(std::filesystem::path folder, std::size_t maxBytes = kDefaultMaxBytes);
  /// Writes one upload; refused (nothing written) when larger than maxBytes, empty, or named
  /// unusably. Returns the written file.
  Result<std::filesystem::path> store(std::string_view name, std::string_view bytes);
  std::size_t maxBytes() const { return maxBytes_; }
  const std::filesystem::path& folder() const { return folder_; }

 private:
  std::filesystem::path folder_;
  std::size_t maxBytes_;
  int count_ = 0;
};

/// "12.3 MiB"-style size for messages.
std::string formatBytes(std::uintmax_t bytes);

}  // namespace handoff::live
