#include "live/task_pool.h"

#include <algorithm>

namespace handoff::live {

TaskPool::TaskPool(std::size_t initial, std::size_t max) : max_(std::max<std::size_t>(1, max)) {
  std::lock_guard lock(mutex_);
  for (std::size_t i = 0; i < std::clamp<std::size_t>(initial, 1, max_); ++i)
    threads_.emplace_back([this] { work(); });
}

TaskPool::~TaskPool() { shutdown(); }

void TaskPool::enqueue(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
    // Every worker busy (or about to take an earlier task): one more, up to the cap.
    if (idle_ < tasks_.size() && threads_.size() < max_ && !stopping_)
      threads_.emplace_back([this] { work(); });
  }
  ready_.notify_one();
}

void TaskPool::shutdown() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    threads.swap(threads_);
  }
  ready_.notify_all();
  for (std::thread& t : threads) t.join();
}

std::size_t TaskPool::threads() const {
  std::lock_guard lock(mutex_);
  return threads_.size();
}

void TaskPool::work() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      ++idle_;
      ready_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      --idle_;
      if (tasks_.empty()) return;  // stopping, nothing left
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace handoff::live
