// TouchBatcher: reports the keys of reads the location cache served (which the
// master did not see) to the master in batches, from a thread of its own, so
// that they keep counting for eviction without a round trip on the get's path
// (ClientConfig::location_touch_interval_ms; master.proto, TouchKeys).
//
// A get only adds its key to a set under a mutex. The thread sends the set
// every interval, or at once when it holds kBatchKeys keys; a key read many
// times between two sends is sent once. At most kMaxPendingKeys wait: past
// that, keys are dropped (counted as failed), and the master misses only those
// accesses. A send that fails is not retried: a touch is advice.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "crescent/status.h"

namespace crescent::client {

class TouchBatcher {
 public:
  using Send = std::function<StatusOr<size_t>(std::span<const std::string>)>;
  static constexpr size_t kBatchKeys = 1024;
  static constexpr size_t kMaxPendingKeys = 65536;

  TouchBatcher(Send send, int64_t interval_ms);
  // Sends what is pending, then stops the thread.
  ~TouchBatcher();
  TouchBatcher(const TouchBatcher&) = delete;
  TouchBatcher& operator=(const TouchBatcher&) = delete;

  void Add(const std::string& key);
  // Sends what is pending now, on the calling thread.
  void Flush();
  uint64_t sent() const { return sent_.load(std::memory_order_relaxed); }
  uint64_t failed() const { return failed_.load(std::memory_order_relaxed); }

 private:
  void Run();
  // Sends `keys` and counts the outcome.
  void SendNow(std::vector<std::string> keys);
  std::vector<std::string> TakeLocked();

  Send send_;
  const int64_t interval_ms_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::unordered_set<std::string> pending_;
  bool stopping_ = false;
  std::mutex send_mu_;  // one send at a time (the thread's, or Flush's)
  std::atomic<uint64_t> sent_{0};
  std::atomic<uint64_t> failed_{0};
  std::thread thread_;  // last: starts after every member above is ready
};

}  // namespace crescent::client
