// Assimp's reading of a file in a child process (assimp_read.h).
#include "rig/assimp_read.h"

#include <assimp/BaseImporter.h>
#include <assimp/config.h>
#include <assimp/scene.h>
#include <assimp/Exporter.hpp>
#include <assimp/Importer.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <new>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define HANDOFF_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HANDOFF_ASAN 1
#endif
#endif
#ifdef HANDOFF_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace handoff::detail {

std::optional<int> SceneMeta::integer(const std::string& key) const {
  const auto it = numbers.find(key);
  if (it == numbers.end() || !(std::abs(it->second) <= INT_MAX) || std::floor(it->second) != it->second)
    return std::nullopt;
  return static_cast<int>(it->second);
}

std::optional<double> SceneMeta::real(const std::string& key) const {
  const auto it = numbers.find(key);
  if (it == numbers.end()) return std::nullopt;
  return it->second;
}

std::string SceneMeta::text(const std::string& key) const {
  const auto it = strings.find(key);
  return it == strings.end() ? std::string() : it->second;
}

namespace {
namespace isolate {

void configure(Assimp::Importer& importer) {
  // No visualisation mesh for bone-only formats (BVH), no "$AssimpFbx$" pivot helper nodes.
  importer.SetPropertyBool(AI_CONFIG_IMPORT_NO_SKELETON_MESHES, true);
  importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_PRESERVE_PIVOTS, false);
}

/// Unregisters (and deletes, as ~Importer would) every importer that does not read `extension`.
void keepOnly(Assimp::Importer& importer, const std::string& extension) {
  std::vector<Assimp::BaseImporter*> others;
  for (size_t i = 0; i < importer.GetImporterCount(); ++i) {
    const aiImporterDesc* desc = importer.GetImporterInfo(i);
    std::istringstream list(desc != nullptr && desc->mFileExtensions != nullptr ? desc->mFileExtensions : "");
    bool reads = false;
    for (std::string e; list >> e;) reads = reads || e == extension;
    if (!reads) others.push_back(importer.GetImporter(i));
  }
  for (Assimp::BaseImporter* other : others) {
    if (other != nullptr && importer.UnregisterLoader(other) == aiReturn_SUCCESS) delete other;
  }
}

SceneMeta metaOf(const aiScene& scene) {
  SceneMeta meta;
  const aiMetadata* m = scene.mMetaData;
  if (m == nullptr || m->mKeys == nullptr || m->mValues == nullptr) return meta;
  for (unsigned i = 0; i < m->mNumProperties; ++i) {
    const std::string key = m->mKeys[i].C_Str();
    const aiMetadataEntry& e = m->mValues[i];
    if (e.mData == nullptr) continue;
    switch (e.mType) {
      case AI_BOOL:
        meta.numbers[key] = *static_cast<const bool*>(e.mData) ? 1.0 : 0.0;
        break;
      case AI_INT32:
        meta.numbers[key] = *static_cast<const std::int32_t*>(e.mData);
        break;
      case AI_UINT64:
        meta.numbers[key] = static_cast<double>(*static_cast<const std::uint64_t*>(e.mData));
        break;
      case AI_FLOAT:
        meta.numbers[key] = *static_cast<const float*>(e.mData);
        break;
      case AI_DOUBLE:
        meta.numbers[key] = *static_cast<const double*>(e.mData);
        break;
      case AI_AISTRING:
        meta.strings[key] = static_cast<const aiString*>(e.mData)->C_Str();
        break;
      default:
        break;
    }
  }
  return meta;
}

Result<const aiScene*> readHere(Assimp::Importer& importer, const std::string& source,
                                const std::string& only,
                                const std::function<const aiScene*(Assimp::Importer&)>& read) {
  try {
    configure(importer);
    if (!only.empty()) keepOnly(importer, only);
    const aiScene* scene = read(importer);
    if (scene == nullptr || scene->mRootNode == nullptr) {
      const std::string reason = importer.GetErrorString();
      return Error{source + ": Assimp cannot read it: " + (reason.empty() ? "unknown error" : reason)};
    }
    return scene;
  } catch (const std::bad_alloc&) {
    return Error{source + ": out of memory while Assimp was reading it"};
  } catch (const std::exception& e) {
    return Error{source + ": Assimp failed: " + e.what()};
  } catch (...) {
    return Error{source + ": Assimp failed with an unknown exception"};
  }
}

// The child's message: u8 kind (0 scene, 1 error); error: u32 length, text; scene: u32 count of
// numbers {u32 key length, key, f64}, u32 count of strings {u32 key length, key, u32 length, text},
// u64 assbin length, assbin bytes.
void put(std::string& out, const void* data, size_t size) {
  out.append(static_cast<const char*>(data), size);
}
void putText(std::string& out, const std::string& text) {
  const auto n = static_cast<std::uint32_t>(text.size());
  put(out, &n, sizeof n);
  out += text;
}

struct Reader {
  std::string_view bytes;
  size_t at = 0;
  bool ok = true;
  template <class T>
  T get() {
    T value{};
    if (bytes.size() - at < sizeof value) {
      ok = false;
      return value;
    }
    std::memcpy(&value, bytes.data() + at, sizeof value);
    at += sizeof value;
    return value;
  }
  std::string_view take(std::uint64_t n) {
    if (bytes.size() - at < n) {
      ok = false;
      return {};
    }
    const std::string_view part = bytes.substr(at, static_cast<size_t>(n));
    at += static_cast<size_t>(n);
    return part;
  }
  std::string text() { return std::string(take(get<std::uint32_t>())); }
};

bool writeAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

[[noreturn]] void runChild(int fd, const std::string& source, const std::string& only,
                           const std::function<const aiScene*(Assimp::Importer&)>& read) {
  // A crash here must end this process only: the caller's crash handlers (and a fuzzer's, which
  // would record the input as its own crash) are not run.
  for (const int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP}) std::signal(sig, SIG_DFL);
#ifdef HANDOFF_ASAN
  __sanitizer_set_death_callback(nullptr);
#endif
  if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) {
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
  }
  std::string out;
  try {
    Assimp::Importer importer;
    Result<const aiScene*> scene = readHere(importer, source, only, read);
    if (!scene) {
      out.push_back(1);
      putText(out, scene.error());
    } else {
      Assimp::Exporter exporter;
      const aiExportDataBlob* blob = exporter.ExportToBlob(scene.value(), "assbin");
      if (blob == nullptr || blob->data == nullptr) {
        out.push_back(1);
        putText(out, source + ": Assimp cannot pass the scene on: " + exporter.GetErrorString());
      } else {
        const SceneMeta meta = metaOf(*scene.value());
        out.push_back(0);
        auto count = static_cast<std::uint32_t>(meta.numbers.size());
        put(out, &count, sizeof count);
        for (const auto& [key, value] : meta.numbers) {
          putText(out, key);
          put(out, &value, sizeof value);
        }
        count = static_cast<std::uint32_t>(meta.strings.size());
        put(out, &count, sizeof count);
        for (const auto& [key, value] : meta.strings) {
          putText(out, key);
          putText(out, value);
        }
        const std::uint64_t size = blob->size;
        put(out, &size, sizeof size);
        put(out, blob->data, blob->size);
      }
    }
  } catch (...) {
    out.clear();
    out.push_back(1);
    putText(out, source + ": Assimp failed with an exception");
  }
  const bool sent = writeAll(fd, out);
  ::_exit(sent ? 0 : 3);
}

/// Resident memory of a process. [bytes]
std::uint64_t residentBytes(pid_t pid) {
  std::ifstream statm("/proc/" + (pid == 0 ? std::string("self") : std::to_string(pid)) + "/statm");
  std::uint64_t size = 0;
  std::uint64_t resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::string format(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

Result<ReadResult> readIsolated(Assimp::Importer& importer, const std::string& source,
                                const ParserLimits& limits, const std::string& only,
                                const std::function<const aiScene*(Assimp::Importer&)>& read) {
  int fds[2];
  if (::pipe(fds) != 0)
    return Error{source + ": cannot start the parser process (pipe: " + std::strerror(errno) + ")"};
  const std::uint64_t baseline = residentBytes(0);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return Error{source + ": cannot start the parser process (fork: " + std::strerror(errno) + ")"};
  }
  if (pid == 0) {
    ::close(fds[0]);
    runChild(fds[1], source, only, read);
  }
  ::close(fds[1]);
  const auto start = std::chrono::steady_clock::now();
  const auto limitBytes = static_cast<std::uint64_t>(limits.memoryMiB * 1024.0 * 1024.0);
  std::string message;
  std::string killed;
  char chunk[65536];
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, 20);
    if (ready < 0 && errno != EINTR) break;
    if (ready > 0) {
      const ssize_t n = ::read(fds[0], chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // end of the message (or a broken pipe)
      message.append(chunk, static_cast<size_t>(n));
      continue;
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > limits.seconds) {
      killed = "exceeded the time limit of " + format(limits.seconds) + " s";
    } else if (const std::uint64_t rss = residentBytes(pid); rss > baseline + limitBytes) {
      killed = "exceeded the memory limit of " + format(limits.memoryMiB) + " MiB";
    }
    if (!killed.empty()) {
      ::kill(pid, SIGKILL);
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  pid_t waited = 0;
  do {
    waited = ::waitpid(pid, &status, 0);
  } while (waited < 0 && errno == EINTR);
  if (!killed.empty())
    return Error{source + ": Assimp " + killed + " reading it (the file is likely malformed)"};
  if (waited == pid && WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return Error{source + ": Assimp crashed reading it (signal " + std::to_string(sig) + ": " +
                 ::strsignal(sig) + "); the file is malformed in a way the importer's checks do not catch"};
  }
  Reader in{message};
  const auto kind = in.get<std::uint8_t>();
  if (!in.ok || (waited == pid && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))) {
    return Error{source + ": Assimp crashed reading it (the parser process ended with status " +
                 std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : status) +
                 "); the file is malformed in a way the importer's checks do not catch"};
  }
  if (kind == 1) {
    const std::string text = in.text();
    return Error{in.ok ? text : source + ": Assimp cannot read it"};
  }
  ReadResult result;
  for (std::uint32_t n = in.get<std::uint32_t>(); in.ok && n > 0; --n) {
    std::string key = in.text();
    result.meta.numbers[std::move(key)] = in.get<double>();
  }
  for (std::uint32_t n = in.get<std::uint32_t>(); in.ok && n > 0; --n) {
    std::string key = in.text();
    result.meta.strings[std::move(key)] = in.text();
  }
  const std::string_view blob = in.take(in.get<std::uint64_t>());
  if (!in.ok) return Error{source + ": the parser process sent an incomplete scene"};
  Result<const aiScene*> scene = readHere(importer, source, {}, [&](Assimp::Importer& local) {
    return local.ReadFileFromMemory(blob.data(), blob.size(), 0, "assbin");
  });
  if (!scene) return Error{scene.error()};
  result.scene = scene.value();
  return result;
}

}  // namespace isolate
}  // namespace

Result<ReadResult> readAssimp(Assimp::Importer& importer, const std::string& source,
                              const ParserLimits& limits, const std::string& only,
                              const std::function<const aiScene*(Assimp::Importer&)>& read) {
  using namespace isolate;
  if (limits.isolate) return readIsolated(importer, source, limits, only, read);
  Result<const aiScene*> scene = readHere(importer, source, only, read);
  if (!scene) return Error{scene.error()};
  return ReadResult{scene.value(), metaOf(*scene.value())};
}

}  // namespace handoff::detail
