#include "live/files.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <system_error>

namespace handoff::live {

namespace fs = std::filesystem;

Result<fs::path> resolveInside(const fs::path& root, std::string_view relative) {
  const std::string shown(relative.substr(0, 200));
  if (relative.empty()) return Error{"no file named"};
  if (relative.find('\0') != std::string_view::npos) return Error{"'" + shown + "': NUL byte in the name"};
  if (relative.find('\\') != std::string_view::npos) return Error{"'" + shown + "': backslash in the name"};
  const fs::path path(relative);
  if (path.is_absolute() || relative.front() == '/') {
    return Error{"'" + shown + "': absolute paths are refused (name a file inside the data folder)"};
  }
  for (const fs::path& part : path) {
    if (part == ".." || part == ".") return Error{"'" + shown + "': '.' and '..' are refused"};
  }
  std::error_code ec;
  const fs::path base = fs::canonical(root, ec);
  if (ec) return Error{"the data folder '" + root.string() + "' is not there: " + ec.message()};
  const fs::path target = fs::canonical(base / path, ec);
  if (ec) return Error{"'" + shown + "': no such file in the data folder"};
  // Inside when root's components are a prefix of the target's.
  auto b = base.begin();
  auto t = target.begin();
  for (; b != base.end(); ++b, ++t) {
    if (t == target.end() || *b != *t) {
      return Error{"'" + shown + "': leads outside the data folder (a symlink out is refused)"};
    }
  }
  if (!fs::is_regular_file(target, ec)) return Error{"'" + shown + "': not a regular file"};
  return target;
}

namespace {
std::string lowerExtension(std::string_view name) {
  const std::size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return {};
  std::string ext(name.substr(dot + 1));
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext;
}
}  // namespace

bool isCharacterFile(std::string_view name) {
  const std::string ext = lowerExtension(name);
  return ext == "bvh" || ext == "glb" || ext == "gltf" || ext == "fbx" || ext == "dae";
}

std::vector<DataFile> listCharacterFiles(const fs::path& root, int maxDepth) {
  std::vector<DataFile> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() >= maxDepth) it.disable_recursion_pending();
    const fs::directory_entry& entry = *it;
    if (entry.is_symlink(ec) || !entry.is_regular_file(ec)) continue;
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.front() == '.' || !isCharacterFile(name)) continue;
    files.push_back({fs::relative(entry.path(), root, ec).generic_string(), entry.file_size(ec)});
  }
  std::sort(files.begin(), files.end(), [](const DataFile& a, const DataFile& b) { return a.path < b.path; });
  return files;
}

Result<std::string> safeFileName(std::string_view name) {
  const std::size_t slash = name.find_last_of("/\\");
  if (slash != std::string_view::npos) name = name.substr(slash + 1);
  std::string out;
  for (char c : name) {
    const bool plain = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
    out.push_back(plain ? c : '_');
  }
  constexpr std::size_t kMax = 96;
  if (out.size() > kMax) {
    // Cut the stem, keep the extension (at most 16 characters of it).
    const std::size_t dot = out.rfind('.');
    const std::size_t ext = dot != std::string::npos && out.size() - dot <= 16 ? out.size() - dot : 0;
    out = out.substr(0, kMax - ext) + out.substr(out.size() - ext);
  }
  if (out.empty() || std::all_of(out.begin(), out.end(), [](char c) { return c == '_' || c == '.'; })) {
    return Error{"unusable file name '" + std::string(name.substr(0, 100)) + "'"};
  }
  if (out.front() == '.') return Error{"file names starting with '.' are refused ('" + out + "')"};
  return out;
}

Result<TempFolder> TempFolder::create(const std::string& prefix) {
  std::error_code ec;
  const fs::path base = fs::temp_directory_path(ec);
  if (ec) return Error{"no temporary folder: " + ec.message()};
  std::string pattern = (base / (prefix + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) return Error{"cannot create a folder in " + base.string()};
  TempFolder folder{fs::path(pattern)};
  std::ofstream(folder.path_ / kOwnerFile) << ::getpid() << "\n";
  return folder;
}

int TempFolder::removeStale(const std::string& prefix) {
  std::error_code ec;
  const fs::path base = fs::temp_directory_path(ec);
  if (ec || prefix.empty()) return 0;
  int removed = 0;
  for (fs::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path dir = it->path();
    if (dir.filename().string().rfind(prefix, 0) != 0) continue;
    struct stat info {};
    if (::lstat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) || info.st_uid != ::getuid()) continue;
    std::ifstream owner(dir / kOwnerFile);
    long pid = 0;
    if (!(owner >> pid) || pid <= 0) continue;  // no lock file: not ours to judge
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive
    std::error_code rm;
    fs::remove_all(dir, rm);
    if (!rm) ++removed;
  }
  return removed;
}

TempFolder::TempFolder(TempFolder&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }

TempFolder::~TempFolder() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

UploadStore::UploadStore(fs::path folder, std::size_t maxBytes, std::size_t maxTotalBytes)
    : folder_(std::move(folder)),
      maxBytes_(maxBytes),
      maxTotalBytes_(maxTotalBytes ? maxTotalBytes : 4 * maxBytes) {}

std::uintmax_t UploadStore::storedBytes() const {
  std::uintmax_t total = 0;
  for (const auto& [file, size] : kept_) total += size;
  return total;
}

void UploadStore::remove(const fs::path& file) {
  std::error_code ec;
  for (auto it = kept_.begin(); it != kept_.end(); ++it) {
    if (it->first == file) {
      fs::remove(file, ec);
      kept_.erase(it);
      return;
    }
  }
}

void UploadStore::retainOnly(const fs::path& keep) {
  std::error_code ec;
  std::erase_if(kept_, [&](const auto& entry) {
    if (entry.first == keep) return false;
    fs::remove(entry.first, ec);
    return true;
  });
}

Result<fs::path> UploadStore::store(std::string_view name, std::string_view bytes) {
  Result<std::string> safe = safeFileName(name);
  if (!safe) return Error{"upload refused: " + safe.error()};
  if (bytes.size() > maxBytes_) {
    return Error{"upload refused: '" + *safe + "' is " + formatBytes(bytes.size()) + ", more than the " +
                 formatBytes(maxBytes_) + " allowed"};
  }
  if (bytes.empty()) return Error{"upload refused: '" + *safe + "' is empty"};
  if (storedBytes() + bytes.size() > maxTotalBytes_) {
    return Error{"upload refused: '" + *safe + "' (" + formatBytes(bytes.size()) +
                 ") would take the uploads kept past " + formatBytes(maxTotalBytes_)};
  }
  std::error_code ec;
  const fs::path dir = folder_ / "uploads";
  fs::create_directories(dir, ec);
  if (ec) return Error{"upload refused: cannot create " + dir.string() + ": " + ec.message()};
  const fs::path file = dir / (std::to_string(++count_) + "-" + *safe);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) {
    fs::remove(file, ec);
    return Error{"upload refused: cannot write " + file.string()};
  }
  kept_.emplace_back(file, bytes.size());
  return file;
}

Status writeOutputFile(const fs::path& path, std::string_view bytes, bool overwrite) {
  const int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL);
  const int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) {
    const int e = errno;
    if (e == EEXIST) return Error{"'" + path.string() + "' exists (save again with overwrite to replace it)"};
    if (e == ELOOP) return Error{"'" + path.string() + "' is a symlink: refused"};
    return Error{"cannot write '" + path.string() + "': " + std::strerror(e)};
  }
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n <= 0) {
      ::close(fd);
      return Error{"cannot write '" + path.string() + "'"};
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  if (::close(fd) != 0) return Error{"cannot write '" + path.string() + "'"};
  return {};
}

std::string formatBytes(std::uintmax_t bytes) {
  char text[48];
  if (bytes < 1024) {
    std::snprintf(text, sizeof text, "%ju bytes", bytes);
  } else if (bytes < (std::uintmax_t{1} << 20)) {
    std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  } else {
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  }
  return text;
}

}  // namespace handoff::live
