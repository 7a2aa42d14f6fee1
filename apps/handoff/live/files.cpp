#include "live/files.h"

#include <stdlib.h>

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
    if (out.size() >= 96) break;
    const bool plain = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
    out.push_back(plain ? c : '_');
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
  return TempFolder(fs::path(pattern));
}

TempFolder::TempFolder(TempFolder&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }

TempFolder::~TempFolder() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

UploadStore::UploadStore(fs::path folder, std::size_t maxBytes)
    : folder_(std::move(folder)), maxBytes_(maxBytes) {}

Result<fs::path> UploadStore::store(std::string_view name, std::string_view bytes) {
  Result<std::string> safe = safeFileName(name);
  if (!safe) return Error{"upload refused: " + safe.error()};
  if (bytes.size() > maxBytes_) {
    return Error{"upload refused: '" + *safe + "' is " + formatBytes(bytes.size()) + ", more than the " +
                 formatBytes(maxBytes_) + " allowed"};
  }
  if (bytes.empty()) return Error{"upload refused: '" + *safe + "' is empty"};
  std::error_code ec;
  const fs::path dir = folder_ / "uploads";
  fs::create_directories(dir, ec);
  if (ec) return Error{"upload refused: cannot create " + dir.string() + ": " + ec.message()};
  const fs::path file = dir / (std::to_string(++count_) + "-" + *safe);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) return Error{"upload refused: cannot write " + file.string()};
  return file;
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
