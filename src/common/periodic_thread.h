// PeriodicThread: runs a function on a thread of its own, again `interval`
// after each run ends, until Stop() (or destruction). Start while running
// does nothing; Stop waits for a run in progress to end; Start after Stop
// starts it again.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace crescent {

class PeriodicThread {
 public:
  PeriodicThread() = default;
  ~PeriodicThread() { Stop(); }
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  void Start(std::chrono::milliseconds interval, std::function<void()> fn) {
    std::lock_guard lock(mu_);
    if (thread_.joinable()) return;
    stop_ = false;
    thread_ = std::thread([this, interval, fn = std::move(fn)] {
      std::unique_lock lock(mu_);
      while (!stop_) {
        lock.unlock();
        fn();
        lock.lock();
        cv_.wait_for(lock, interval, [this] { return stop_; });
      }
    });
  }

  void Stop() {
    std::thread done;
    {
      std::lock_guard lock(mu_);
      stop_ = true;
      done = std::move(thread_);
    }
    cv_.notify_all();
    if (done.joinable()) done.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace crescent
