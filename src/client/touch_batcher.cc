#include "client/touch_batcher.h"

#include <chrono>

namespace crescent::client {

TouchBatcher::TouchBatcher(Send send, int64_t interval_ms)
    : send_(std::move(send)), interval_ms_(interval_ms < 1 ? 1 : interval_ms) {
  thread_ = std::thread([this] { Run(); });
}

TouchBatcher::~TouchBatcher() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  Flush();
}

void TouchBatcher::Add(const std::string& key) {
  bool full = false;
  {
    std::lock_guard lock(mu_);
    if (pending_.size() >= kMaxPendingKeys) {
      failed_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    pending_.insert(key);
    full = pending_.size() >= kBatchKeys;
  }
  if (full) wake_.notify_one();
}

std::vector<std::string> TouchBatcher::TakeLocked() {
  std::vector<std::string> keys;
  keys.reserve(pending_.size());
  for (auto it = pending_.begin(); it != pending_.end();) {
    keys.push_back(std::move(pending_.extract(it++).value()));
  }
  return keys;
}

void TouchBatcher::Flush() {
  std::vector<std::string> keys;
  {
    std::lock_guard lock(mu_);
    keys = TakeLocked();
  }
  SendNow(std::move(keys));
}

void TouchBatcher::SendNow(std::vector<std::string> keys) {
  if (keys.empty()) return;
  std::lock_guard lock(send_mu_);
  StatusOr<size_t> r = send_(keys);
  (r.ok() ? sent_ : failed_).fetch_add(keys.size(), std::memory_order_relaxed);
}

void TouchBatcher::Run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    wake_.wait_for(lock, std::chrono::milliseconds(interval_ms_),
                   [&] { return stopping_ || pending_.size() >= kBatchKeys; });
    if (stopping_) break;
    std::vector<std::string> keys = TakeLocked();
    lock.unlock();
    SendNow(std::move(keys));
    lock.lock();
  }
}

}  // namespace crescent::client
