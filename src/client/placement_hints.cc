#include "client/placement_hints.h"

namespace crescent::client {

bool PlacementHint::Matches(const rpc::RemoteReplica& r) const {
  return r.placement == placement && r.cap.segment == segment && r.cap.offset == offset &&
         r.cap.length == length && r.endpoint == endpoint;
}

void PlacementHints::Remember(const std::string& key, const rpc::RemoteReplica& r) {
  if (capacity_ == 0) return;
  std::lock_guard lock(mu_);
  const uint64_t seq = ++next_seq_;
  table_[key] = Entry{{r.endpoint, r.cap.segment, r.cap.offset, r.cap.length, r.placement}, seq};
  order_.emplace_back(key, seq);
  // A re-remembered key leaves a stale slot behind; the second bound keeps
  // those from piling up.
  while (table_.size() > capacity_ || order_.size() > 2 * capacity_) {
    auto& [old_key, old_seq] = order_.front();
    if (auto it = table_.find(old_key); it != table_.end() && it->second.seq == old_seq) {
      table_.erase(it);
    }
    order_.pop_front();
  }
}

std::optional<PlacementHint> PlacementHints::Lookup(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = table_.find(key);
  if (it == table_.end()) return std::nullopt;
  return it->second.hint;
}

void PlacementHints::Forget(const std::string& key) {
  std::lock_guard lock(mu_);
  table_.erase(key);  // its FIFO slot goes stale and is skipped
}

void PlacementHints::Clear() {
  std::lock_guard lock(mu_);
  table_.clear();
  order_.clear();
}

size_t PlacementHints::size() const {
  std::lock_guard lock(mu_);
  return table_.size();
}

}  // namespace crescent::client
