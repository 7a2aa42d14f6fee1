// ThreadPool: N - 1 workers plus the caller share an index counter. One job at a time; a job is
// published under the mutex with a new generation, workers run indices until the counter passes
// the count and the caller waits until every worker has left the job.
#include "handoff/crowd.h"

#include <algorithm>

namespace handoff {

ThreadPool::ThreadPool(int threads) {
  const int workers = std::max(1, threads) - 1;
  workers_.reserve(static_cast<size_t>(workers));
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    quit_ = true;
  }
  wakeWorkers_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::runIndices() {
  for (int i = next_.fetch_add(1, std::memory_order_relaxed); i < count_;
       i = next_.fetch_add(1, std::memory_order_relaxed)) {
    task_(context_, i);
  }
}

void ThreadPool::workerLoop() {
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wakeWorkers_.wait(lock, [&] { return quit_ || generation_ != seen; });
      if (quit_) return;
      seen = generation_;
    }
    runIndices();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --busyWorkers_;
      if (busyWorkers_ == 0) jobDone_.notify_one();
    }
  }
}

void ThreadPool::parallelFor(int count, void (*task)(void* context, int index), void* context) {
  if (count <= 0) return;
  if (workers_.empty() || count == 1) {
    for (int i = 0; i < count; ++i) task(context, i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = task;
    context_ = context;
    count_ = count;
    next_.store(0, std::memory_order_relaxed);
    busyWorkers_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  wakeWorkers_.notify_all();
  runIndices();
  std::unique_lock<std::mutex> lock(mutex_);
  jobDone_.wait(lock, [&] { return busyWorkers_ == 0; });
}

}  // namespace handoff
