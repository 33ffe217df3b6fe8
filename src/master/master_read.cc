// Read paths: replica lists (with read leases), existence probes and prefix
// queries. None of them takes a shard's exclusive lock or the policy mutex; the
// lease touch is deferred (object_entry.h) and queued for the policy.
#include <shared_mutex>

#include "master/master_service.h"

namespace crescent::master {

void MasterService::Touch(ObjectShard& shard, uint32_t slot, TimeMs now) {
  ObjectEntry& e = shard.entry(slot);
  if (e.Touch(now) && !policies_.NoteTouch(shard.IdOf(slot))) {
    // The queue is full: fold the touch into the lease here (a decider's step,
    // safe under the shared lock), so the lease holds and the flag is clear. A
    // flag left set would make every later read of the object skip the queue
    // (only a read that sets the flag queues it), hiding a hot object from the
    // policy until an eviction found its lease over. The policy misses only
    // this one access.
    e.FlushTouch(LeaseMs(e.size));
  }
}

StatusOr<ReadResult> MasterService::ReadLocked(ObjectShard& shard, uint32_t slot, TimeMs now) {
  const ObjectEntry& e = shard.entry(slot);
  ReadResult r;
  r.size = e.size;
  r.checksum = e.checksum;
  r.replicas = Describe(e);
  if (r.replicas.empty()) {
    return Status(ErrorCode::kObjectNotFound,
                  "no live replica of '" + std::string(e.key_view()) + "'");
  }
  Touch(shard, slot, now);
  r.lease_expiry = now + LeaseMs(e.size);
  counters_.tier_reads[segments_.TierOf(r.replicas[0].segment) == Tier::kPmem ? 1 : 0].fetch_add(
      1, std::memory_order_relaxed);
  return r;
}

StatusOr<ReadResult> MasterService::GetReplicaList(std::string_view key) {
  if (Status s = ValidateKey(key); !s.ok()) {
    counters_.get_replica_list.Record(1, 1);
    return s;
  }
  Located loc = objects_.Locate(key);
  auto miss = [&](ErrorCode code, const char* what) -> Status {
    counters_.exact_misses.fetch_add(1, std::memory_order_relaxed);
    counters_.get_replica_list.Record(1, 1);
    tenants_.Read(key, /*hit=*/false);
    return Status(code, "key '" + std::string(key) + "' " + what);
  };
  if (objects_.BloomSaysAbsent(loc.hash)) {
    counters_.bloom_negatives.fetch_add(1, std::memory_order_relaxed);
    return miss(ErrorCode::kObjectNotFound, "not found");
  }
  std::shared_lock lock(loc.shard->mutex());
  uint32_t slot = loc.shard->Find(key, loc.hash);
  if (slot == kNoSlot) return miss(ErrorCode::kObjectNotFound, "not found");
  if (loc.shard->entry(slot).state != EntryState::kComplete) {
    return miss(ErrorCode::kObjectNotReady, "is still being written");
  }
  auto r = ReadLocked(*loc.shard, slot, clock_.NowMs());
  if (!r.ok()) return miss(r.status().code(), "has no live replica");
  counters_.exact_hits.fetch_add(1, std::memory_order_relaxed);
  counters_.get_replica_list.Record(1, 0);
  tenants_.Read(key, /*hit=*/true);
  return r;
}

std::vector<StatusOr<ReadResult>> MasterService::BatchGetReplicaList(
    std::span<const std::string> keys, bool prefix_mode, std::string_view prefix) {
  std::vector<StatusOr<ReadResult>> out;
  out.reserve(keys.size());
  size_t readable = 0;
  PrefixedKeys internal(prefix);
  for (const std::string& k : keys) {
    out.push_back(GetReplicaList(internal(k)));
    if (!out.back().ok() && prefix_mode) break;
    ++readable;
  }
  if (prefix_mode) counters_.RecordPrefix(readable);
  return out;
}

StatusOr<size_t> MasterService::TouchKeys(std::span<const std::string> keys,
                                          std::string_view prefix) {
  PrefixedKeys internal(prefix);
  for (const std::string& k : keys) {
    if (Status s = ValidateKey(internal(k)); !s.ok()) {
      counters_.touch_keys.Record(keys.size(), keys.size());
      return s;
    }
  }
  const TimeMs now = clock_.NowMs();
  size_t touched = 0;
  for (const std::string& k : keys) {
    const std::string_view key = internal(k);
    Located loc = objects_.Locate(key);
    if (objects_.BloomSaysAbsent(loc.hash)) continue;
    std::shared_lock lock(loc.shard->mutex());
    const uint32_t slot = loc.shard->Find(key, loc.hash);
    if (slot == kNoSlot || loc.shard->entry(slot).state != EntryState::kComplete) continue;
    Touch(*loc.shard, slot, now);
    ++touched;
  }
  counters_.touch_keys.Record(keys.size(), keys.size() - touched);
  return touched;
}

StatusOr<bool> MasterService::Exists(std::string_view key) {
  if (Status s = ValidateKey(key); !s.ok()) {
    counters_.exists.Record(1, 1);
    return s;
  }
  counters_.exists.Record(1, 0);
  Located loc = objects_.Locate(key);
  if (objects_.BloomSaysAbsent(loc.hash)) {
    counters_.bloom_negatives.fetch_add(1, std::memory_order_relaxed);
    counters_.exact_misses.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  std::shared_lock lock(loc.shard->mutex());
  uint32_t slot = loc.shard->Find(key, loc.hash);
  bool present = slot != kNoSlot && loc.shard->entry(slot).state == EntryState::kComplete &&
                 HasLiveReplica(loc.shard->entry(slot));
  if (present && config_.exists_grants_lease) Touch(*loc.shard, slot, clock_.NowMs());
  (present ? counters_.exact_hits : counters_.exact_misses).fetch_add(1, std::memory_order_relaxed);
  return present;
}

bool MasterService::HasLiveReplica(const ObjectEntry& e) const {
  for (size_t i = 0; i < e.num_replicas; ++i) {
    if (Servable(e.replica(i))) return true;
  }
  return false;
}

BatchExistsResult MasterService::BatchExists(std::span<const std::string> keys,
                                             std::string_view prefix) {
  BatchExistsResult r;
  r.present.reserve(keys.size());
  bool leading = true;
  PrefixedKeys internal(prefix);
  for (size_t i = 0; i < keys.size(); ++i) {
    StatusOr<bool> e = Exists(internal(keys[i]));
    if (!e.ok() && r.statuses.empty()) r.statuses.resize(keys.size());
    if (!e.ok()) r.statuses[i] = e.status();
    const bool p = e.ok() && *e;
    r.present.push_back(p);
    if (leading && p) {
      ++r.leading;
    } else {
      leading = false;
    }
  }
  return r;
}

StatusOr<size_t> MasterService::BatchQueryPrefix(std::span<const std::string> keys,
                                                 std::string_view prefix) {
  PrefixedKeys internal(prefix);
  if (!keys.empty()) {
    if (Status s = ValidateKey(internal(keys[0])); !s.ok()) {
      counters_.query_prefix.Record(keys.size(), 1);
      return s;
    }
  }
  size_t n = 0;
  for (; n < keys.size(); ++n) {
    const std::string_view key = internal(keys[n]);
    if (!ValidateKey(key).ok()) break;  // cannot be stored: the prefix ends here
    Located loc = objects_.Locate(key);
    if (objects_.BloomSaysAbsent(loc.hash)) {
      counters_.bloom_negatives.fetch_add(1, std::memory_order_relaxed);
      break;
    }
    std::shared_lock lock(loc.shard->mutex());
    uint32_t slot = loc.shard->Find(key, loc.hash);
    if (slot == kNoSlot) break;
    const ObjectEntry& e = loc.shard->entry(slot);
    if (e.state != EntryState::kComplete || !HasLiveReplica(e)) break;
  }
  counters_.query_prefix.Record(keys.size(), 0);
  counters_.prefix_hit_keys.fetch_add(n, std::memory_order_relaxed);
  counters_.prefix_miss_keys.fetch_add(keys.size() - n, std::memory_order_relaxed);
  counters_.RecordPrefix(n);
  return n;
}

}  // namespace crescent::master
