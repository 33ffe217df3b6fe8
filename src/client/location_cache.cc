#include "client/location_cache.h"

#include <algorithm>
#include <limits>

namespace crescent::client {

LocationCache::Found LocationCache::Lookup(const std::string& key, int64_t until_unix_ms,
                                           rpc::RemoteRead* read) {
  std::lock_guard lock(mu_);
  auto it = index_.find(key);
  if (it == index_.end()) return Found::kAbsent;
  if (it->second->expiry_unix_ms <= until_unix_ms) {
    lru_.erase(it->second);
    index_.erase(it);
    return Found::kExpired;
  }
  lru_.splice(lru_.begin(), lru_, it->second);
  *read = it->second->read;
  return Found::kHit;
}

void LocationCache::Remember(const std::string& key, const rpc::RemoteRead& read) {
  if (read.replicas.empty()) return;
  int64_t expiry = std::numeric_limits<int64_t>::max();
  for (const rpc::RemoteReplica& r : read.replicas) expiry = std::min(expiry, r.cap.expiry_unix_ms);
  std::lock_guard lock(mu_);
  if (auto it = index_.find(key); it != index_.end()) {
    it->second->read = read;
    it->second->expiry_unix_ms = expiry;
    lru_.splice(lru_.begin(), lru_, it->second);
    return;
  }
  if (lru_.size() >= capacity_) {
    index_.erase(lru_.back().key);
    lru_.pop_back();
  }
  lru_.push_front(Entry{key, read, expiry});
  index_.emplace(lru_.front().key, lru_.begin());
}

void LocationCache::Forget(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = index_.find(key);
  if (it == index_.end()) return;
  lru_.erase(it->second);
  index_.erase(it);
}

void LocationCache::Clear() {
  std::list<Entry> dropped;  // freed after the lock is let go
  {
    std::lock_guard lock(mu_);
    index_.clear();
    dropped.swap(lru_);
  }
}

}  // namespace crescent::client
