#include "client/placement_hints.h"

namespace crescent::client {

bool PlacementHint::Matches(const rpc::RemoteReplica& r) const {
  return r.placement == placement && r.cap.segment == segment && r.cap.offset == offset &&
         r.cap.length == length && r.endpoint == endpoint;
}

const rpc::RemoteReplica* Confirming(const PlacementHint& hint, uint64_t size,
                                     const std::vector<rpc::RemoteReplica>& replicas,
                                     int64_t now_unix_ms) {
  if (size != hint.length) return nullptr;
  for (const rpc::RemoteReplica& r : replicas) {
    if (hint.Matches(r) && r.cap.op == transfer::AccessOp::kRead &&
        r.cap.expiry_unix_ms > now_unix_ms) {
      return &r;
    }
  }
  return nullptr;
}

void PlacementHints::Remember(const std::string& key, const rpc::RemoteReplica& r, int64_t now_ms) {
  if (capacity_ == 0) return;
  std::lock_guard lock(mu_);
  const uint64_t seq = ++next_seq_;
  table_[key] =
      Entry{{r.endpoint, r.cap.segment, r.cap.offset, r.cap.length, r.placement}, now_ms, seq};
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

std::optional<PlacementHint> PlacementHints::Lookup(const std::string& key, int64_t now_ms) {
  std::lock_guard lock(mu_);
  auto it = table_.find(key);
  if (it == table_.end()) return std::nullopt;
  if (now_ms - it->second.taken_ms > max_age_ms_) {
    table_.erase(it);  // its FIFO slot goes stale and is skipped
    return std::nullopt;
  }
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
