// Assimp's reading of a file in the worker process (assimp_read.h).
#include "rig/assimp_read.h"

#include <assimp/BaseImporter.h>
#include <assimp/config.h>
#include <assimp/scene.h>
#include <assimp/Exporter.hpp>
#include <assimp/Importer.hpp>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/mman.h>
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
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

extern char** environ;  // NOLINT: POSIX, for posix_spawn

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
                                const ParseRequest& request) {
  try {
    configure(importer);
    if (!request.only.empty()) keepOnly(importer, request.only);
    const aiScene* scene = request.fromMemory
                               ? importer.ReadFileFromMemory(request.bytes.data(), request.bytes.size(),
                                                             request.flags, request.hint.c_str())
                               : importer.ReadFile(request.path, request.flags);
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

// The request (the worker's standard input): u32 kRequestMagic, u8 fromMemory, u32 flags, source,
// path, hint, only (each u32 length, text), u64 length, bytes.
// The reply (its standard output): u32 kReplyMagic, u8 kind (0 scene, 1 error); error: u32 length,
// text; scene: u32 count of numbers {u32 key length, key, f64}, u32 count of strings {u32 key
// length, key, u32 length, text}, u64 assbin length, assbin bytes.
constexpr std::uint32_t kRequestMagic = 0x31514f48;  // "HOQ1"
constexpr std::uint32_t kReplyMagic = 0x31524f48;    // "HOR1"

void put(std::string& out, const void* data, size_t size) {
  out.append(static_cast<const char*>(data), size);
}
template <class T>
void putValue(std::string& out, T value) {
  put(out, &value, sizeof value);
}
void putText(std::string& out, std::string_view text) {
  putValue(out, static_cast<std::uint32_t>(text.size()));
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

bool writeAll(int fd, std::string_view data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

/// Reads `fd` to its end; false on a read error.
bool readAll(int fd, std::string& out) {
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    out.append(chunk, static_cast<size_t>(n));
  }
}

std::string errorReply(const std::string& text) {
  std::string out;
  putValue(out, kReplyMagic);
  out.push_back(1);
  putText(out, text);
  return out;
}

/// Resident memory of a process. [bytes]
std::uint64_t residentBytes(pid_t pid) {
  std::ifstream statm("/proc/" + std::to_string(pid) + "/statm");
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

std::string systemError(const char* call) { return std::string(call) + ": " + std::strerror(errno); }

/// Closes a file descriptor at the end of a scope.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

/// Starts `worker` with `request` on its standard input and its standard output on a pipe.
Result<pid_t> spawnWorker(const std::string& worker, const std::string& source, const ParseRequest& request,
                          int& replyFd) {
  std::string header;
  putValue(header, kRequestMagic);
  header.push_back(request.fromMemory ? 1 : 0);
  putValue(header, static_cast<std::uint32_t>(request.flags));
  putText(header, source);
  putText(header, request.path);
  putText(header, request.hint);
  putText(header, request.only);
  putValue(header, static_cast<std::uint64_t>(request.fromMemory ? request.bytes.size() : 0));
  Fd input{::memfd_create("handoff-import-request", MFD_CLOEXEC)};
  if (input.fd < 0) return Error{systemError("memfd_create")};
  if (!writeAll(input.fd, header) || (request.fromMemory && !writeAll(input.fd, request.bytes)))
    return Error{systemError("write")};
  if (::lseek(input.fd, 0, SEEK_SET) != 0) return Error{systemError("lseek")};
  int pipeFds[2];
  if (::pipe2(pipeFds, O_CLOEXEC) != 0) return Error{systemError("pipe2")};
  Fd reply{pipeFds[0]};
  Fd replyWrite{pipeFds[1]};

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  if (::posix_spawn_file_actions_init(&actions) != 0) return Error{"posix_spawn_file_actions_init failed"};
  if (::posix_spawnattr_init(&attributes) != 0) {
    ::posix_spawn_file_actions_destroy(&actions);
    return Error{"posix_spawnattr_init failed"};
  }
  // Standard input is the request, standard output the reply pipe, standard error /dev/null (what
  // Assimp prints is not the caller's); every other descriptor is closed (O_CLOEXEC or closefrom).
  ::posix_spawn_file_actions_adddup2(&actions, input.fd, STDIN_FILENO);
  ::posix_spawn_file_actions_adddup2(&actions, replyWrite.fd, STDOUT_FILENO);
  ::posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  ::posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
#endif
  // The worker starts with default signal handling and nothing blocked, whatever the caller set
  // (a fuzzer's or a game's crash handler is not the worker's).
  sigset_t all;
  sigset_t none;
  sigfillset(&all);
  sigemptyset(&none);
  ::posix_spawnattr_setsigdefault(&attributes, &all);
  ::posix_spawnattr_setsigmask(&attributes, &none);
  ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  std::string program = worker;
  char* argv[] = {program.data(), nullptr};
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, program.c_str(), &actions, &attributes, argv, environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attributes);
  if (spawned != 0) return Error{std::string("posix_spawn of ") + worker + ": " + std::strerror(spawned)};
  replyFd = reply.fd;
  reply.fd = -1;
  return pid;
}

Result<ReadResult> readIsolated(Assimp::Importer& importer, const std::string& source,
                                const ParserLimits& limits, const ParseRequest& request) {
  Result<std::string> worker = findImportWorker(limits.worker);
  if (!worker) return Error{source + ": " + worker.error()};
  int replyFd = -1;
  Result<pid_t> spawned = spawnWorker(worker.value(), source, request, replyFd);
  if (!spawned) return Error{source + ": cannot start the parser process (" + spawned.error() + ")"};
  const pid_t pid = spawned.value();
  Fd reply{replyFd};
  const auto start = std::chrono::steady_clock::now();
  const auto limitBytes = static_cast<std::uint64_t>(limits.memoryMiB * 1024.0 * 1024.0);
  std::string message;
  std::string killed;
  char chunk[65536];
  for (;;) {
    pollfd p{reply.fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, 20);
    if (ready < 0 && errno != EINTR) break;
    if (ready > 0) {
      const ssize_t n = ::read(reply.fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // end of the message (or a broken pipe)
      message.append(chunk, static_cast<size_t>(n));
      continue;
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed > limits.seconds) {
      killed = "exceeded the time limit of " + format(limits.seconds) + " s";
    } else if (residentBytes(pid) > limitBytes) {
      killed = "exceeded the memory limit of " + format(limits.memoryMiB) + " MiB";
    }
    if (!killed.empty()) {
      ::kill(pid, SIGKILL);
      break;
    }
  }
  reply.close();
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
  const bool exitedCleanly = waited == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  Reader in{message};
  const auto magic = in.get<std::uint32_t>();
  if (message.empty() && exitedCleanly)
    return Error{source + ": the parser process " + worker.value() + " ended without a reply"};
  if (in.ok && magic != kReplyMagic)
    return Error{
        source + ": " + worker.value() +
        " is not the import worker of this handoff build (its reply begins "
        "with another tag); set ImportOptions::parserWorker or HANDOFF_IMPORT_WORKER to the right one"};
  const auto kind = in.get<std::uint8_t>();
  if (!in.ok || !exitedCleanly) {
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
  ParseRequest back;
  back.fromMemory = true;
  back.bytes = blob;
  back.hint = "assbin";
  Result<const aiScene*> scene = readHere(importer, source, back);
  if (!scene) return Error{scene.error()};
  result.scene = scene.value();
  return result;
}

bool executable(const std::filesystem::path& path) {
  std::error_code error;
  return std::filesystem::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0;
}

/// The places findImportWorker looks when it is given no path, in its order.
std::vector<std::filesystem::path> workerCandidates() {
  std::vector<std::filesystem::path> places;
#ifdef HANDOFF_IMPORT_WORKER_BUILD
  places.emplace_back(HANDOFF_IMPORT_WORKER_BUILD);
#endif
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    places.push_back(self.parent_path() / "handoff-import-worker");
    places.push_back(
        (self.parent_path() / ".." / "libexec" / "handoff" / "handoff-import-worker").lexically_normal());
  }
#ifdef HANDOFF_IMPORT_WORKER_INSTALL
  places.emplace_back(HANDOFF_IMPORT_WORKER_INSTALL);
#endif
  return places;
}

}  // namespace isolate
}  // namespace

Result<std::string> findImportWorker(const std::string& explicitPath) {
  using namespace isolate;
  if (!explicitPath.empty()) {
    if (executable(explicitPath)) return explicitPath;
    return Error{"ImportOptions::parserWorker '" + explicitPath + "' is not an executable file"};
  }
  if (const char* fromEnvironment = std::getenv("HANDOFF_IMPORT_WORKER");
      fromEnvironment != nullptr && *fromEnvironment != '\0') {
    if (executable(fromEnvironment)) return std::string(fromEnvironment);
    return Error{std::string("HANDOFF_IMPORT_WORKER '") + fromEnvironment + "' is not an executable file"};
  }
  std::string looked;
  for (const std::filesystem::path& place : workerCandidates()) {
    if (executable(place)) return place.string();
    looked += (looked.empty() ? "" : ", ") + place.string();
  }
  return Error{
      "cannot find handoff-import-worker, the program that reads files with Assimp in a process of its own "
      "(looked at: " +
      looked +
      "); set ImportOptions::parserWorker or HANDOFF_IMPORT_WORKER to it, or ImportOptions::isolateParser = "
      "false to read in this process"};
}

Result<ReceivedRequest> receiveParseRequest(int fd) {
  std::string all;
  if (!isolate::readAll(fd, all)) return Error{"cannot read the request: " + isolate::systemError("read")};
  isolate::Reader in{all};
  if (in.get<std::uint32_t>() != isolate::kRequestMagic || !in.ok)
    return Error{
        "the request does not begin with the import worker's tag (a different handoff build sent it?)"};
  ReceivedRequest received;
  ParseRequest& request = received.request;
  request.fromMemory = in.get<std::uint8_t>() != 0;
  request.flags = in.get<std::uint32_t>();
  received.source = in.text();
  request.path = in.text();
  request.hint = in.text();
  request.only = in.text();
  received.bytes = std::string(in.take(in.get<std::uint64_t>()));
  if (!in.ok || in.at != all.size()) return Error{"the request is truncated or has trailing bytes"};
  request.bytes = received.bytes;
  return received;
}

namespace {
int serveParseRequest(const ParseRequest& request, const std::string& source, int fd) {
  using namespace isolate;
  std::string out;
  try {
    Assimp::Importer importer;
    Result<const aiScene*> scene = readHere(importer, source, request);
    if (!scene) {
      out = errorReply(scene.error());
    } else {
      Assimp::Exporter exporter;
      const aiExportDataBlob* blob = exporter.ExportToBlob(scene.value(), "assbin");
      if (blob == nullptr || blob->data == nullptr) {
        out = errorReply(source + ": Assimp cannot pass the scene on: " + exporter.GetErrorString());
      } else {
        const SceneMeta meta = metaOf(*scene.value());
        putValue(out, kReplyMagic);
        out.push_back(0);
        putValue(out, static_cast<std::uint32_t>(meta.numbers.size()));
        for (const auto& [key, value] : meta.numbers) {
          putText(out, key);
          putValue(out, value);
        }
        putValue(out, static_cast<std::uint32_t>(meta.strings.size()));
        for (const auto& [key, value] : meta.strings) {
          putText(out, key);
          putText(out, value);
        }
        putValue(out, static_cast<std::uint64_t>(blob->size));
        put(out, blob->data, blob->size);
      }
    }
  } catch (...) {
    out = errorReply(source + ": Assimp failed with an exception");
  }
  return isolate::writeAll(fd, out) ? 0 : 3;
}
}  // namespace

int runImportWorker(int in, int out) {
  Result<ReceivedRequest> received = receiveParseRequest(in);
  if (!received)
    return isolate::writeAll(out, isolate::errorReply("handoff-import-worker: " + received.error())) ? 0 : 3;
  return serveParseRequest(received->request, received->source, out);
}

Result<ReadResult> readAssimp(Assimp::Importer& importer, const std::string& source,
                              const ParserLimits& limits, const ParseRequest& request) {
  using namespace isolate;
  if (limits.isolate) return readIsolated(importer, source, limits, request);
  Result<const aiScene*> scene = readHere(importer, source, request);
  if (!scene) return Error{scene.error()};
  return ReadResult{scene.value(), metaOf(*scene.value())};
}

}  // namespace handoff::detail
