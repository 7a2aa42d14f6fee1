// The server's worker threads: one per open connection up to a cap, so a few slow or idle
// connections (event streams, sockets that send nothing until the read timeout) do not hold up
// every other request the way a small fixed pool does (issue 27). Threads are started when every
// worker is busy and kept for later connections. Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace handoff::live {

class TaskPool {
 public:
  /// `initial` threads at once, up to `max` when every one is busy. [1 <= initial <= max]
  TaskPool(std::size_t initial, std::size_t max);
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  void enqueue(std::function<void()> task);
  /// Runs what is queued, then joins every thread. Idempotent.
  void shutdown();
  std::size_t threads() const;

 private:
  void work();
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;
  std::size_t max_;
  bool stopping_ = false;
};

}  // namespace handoff::live
