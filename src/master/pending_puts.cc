#include "master/pending_puts.h"

#include <utility>

namespace crescent::master {

void PendingPuts::Start(ObjectId id, LivePut put) {
  std::lock_guard lock(mu_);
  queue_.push_back({id, put.deadline});
  live_.emplace(id, std::move(put));
}

std::optional<PendingPuts::LivePut> PendingPuts::End(ObjectId id) {
  std::optional<LivePut> out;
  std::lock_guard lock(mu_);
  if (auto it = live_.find(id); it != live_.end()) {
    out = std::move(it->second);
    live_.erase(it);
  }
  TrimLocked();
  return out;
}

std::optional<TimeMs> PendingPuts::DeadlineIfAttempt(ObjectId id, uint64_t attempt) const {
  std::lock_guard lock(mu_);
  auto it = live_.find(id);
  if (it == live_.end() || it->second.attempt != attempt) return std::nullopt;
  return it->second.deadline;
}

std::string PendingPuts::ParentKey(ObjectId id) const {
  std::lock_guard lock(mu_);
  auto it = live_.find(id);
  return it == live_.end() ? std::string() : it->second.parent_key;
}

std::optional<PendingPuts::Due> PendingPuts::Oldest() {
  std::lock_guard lock(mu_);
  TrimLocked();
  if (queue_.empty()) return std::nullopt;
  return queue_.front();
}

void PendingPuts::PopOldest(ObjectId id) {
  std::lock_guard lock(mu_);
  if (!queue_.empty() && queue_.front().id == id) queue_.pop_front();
}

size_t PendingPuts::queued() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void PendingPuts::TrimLocked() {
  while (!queue_.empty() && !live_.contains(queue_.front().id)) queue_.pop_front();
}

}  // namespace crescent::master
