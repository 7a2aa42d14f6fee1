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
/// letters, digits, '.', '-' and '_' replaced by '_', at most 96 characters (a longer name is cut
/// in its stem: its extension, which picks the importer, is kept); refused when nothing usable is
/// left or it starts with '.'.
Result<std::string> safeFileName(std::string_view name);

/// A fresh private folder (mkdtemp, mode 0700) under the system temporary folder, removed with
/// its content when the object is destroyed. It holds a lock file (kOwnerFile: the creating
/// process's id), so that a folder left by a crash is removed by removeStale on the next start.
class TempFolder {
 public:
  static constexpr const char* kOwnerFile = ".owner-pid";
  static Result<TempFolder> create(const std::string& prefix);
  /// Removes the folders `prefix`* of the system temporary folder that this user owns and whose
  /// owner process is gone (a crash, SIGKILL). Returns how many were removed.
  static int removeStale(const std::string& prefix);
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
/// each at most `maxBytes`, all those kept at most `maxTotalBytes` together. The server keeps
/// only the upload in use: a refused one is removed, a replaced one too. Not thread-safe (the
/// server serialises calls).
class UploadStore {
 public:
  /// Default bound on one upload. [bytes] [64 MiB]
  static constexpr std::size_t kDefaultMaxBytes = std::size_t{64} << 20;
  /// `maxTotalBytes` 0: 4 x maxBytes.
  UploadStore(std::filesystem::path folder, std::size_t maxBytes = kDefaultMaxBytes,
              std::size_t maxTotalBytes = 0);
  /// Writes one upload; refused (nothing written) when larger than maxBytes, when the uploads
  /// kept would then exceed maxTotalBytes, empty, or named unusably. Returns the written file.
  Result<std::filesystem::path> store(std::string_view name, std::string_view bytes);
  /// Removes one stored upload (a refused one).
  void remove(const std::filesystem::path& file);
  /// Removes every stored upload but `keep` (empty: all of them).
  void retainOnly(const std::filesystem::path& keep);
  /// Bytes of the uploads kept.
  std::uintmax_t storedBytes() const;
  std::size_t maxBytes() const { return maxBytes_; }
  std::size_t maxTotalBytes() const { return maxTotalBytes_; }
  const std::filesystem::path& folder() const { return folder_; }

 private:
  std::filesystem::path folder_;
  std::size_t maxBytes_, maxTotalBytes_;
  int count_ = 0;
  std::vector<std::pair<std::filesystem::path, std::uintmax_t>> kept_;
};

/// Writes `bytes` to `path` without following a symlink there (O_NOFOLLOW: a link planted in the
/// output folder cannot redirect a save onto another file) and, unless `overwrite`, without
/// replacing an existing file (O_EXCL). Errors name the file.
Status writeOutputFile(const std::filesystem::path& path, std::string_view bytes, bool overwrite);

/// "12.3 MiB"-style size for messages.
std::string formatBytes(std::uintmax_t bytes);

}  // namespace handoff::live
