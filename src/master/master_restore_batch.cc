// Restore in batches: a snapshot's records applied with their shards spread
// over the cores (docs/durability.md).
//
// Records of different keys commute, except through the policy, whose order
// is the eviction order: so each shard's records are applied in record order
// by one thread, and the policy is filled afterwards, by one thread, in record
// order. A put's object is admitted when it is still the live entry at the end
// of the batch: one replaced or removed later in the batch never reached the
// policy, which is where the one-at-a-time path would have left it (admitted,
// then forgotten). Objects of earlier batches are forgotten at once, as there.
// Segment records touch no shard; they are applied first, in order (no object
// record reads the segment table). Chain parents wait for the end of the
// restore (master_restore_chains.cc), so they take no part in a batch's order.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "master/master_service.h"

namespace crescent::master {

void MasterService::ApplyRestoredBatch(std::span<const LogRecord> records) {
  BeginRestore();
  restore_records_ += records.size();
  // Each shard's object records, in record order, and their key hashes.
  std::vector<std::vector<uint32_t>> by_shard(shards_.size());
  std::vector<uint64_t> hashes(records.size());
  for (uint32_t i = 0; i < records.size(); ++i) {
    const LogRecord& r = records[i];
    if (r.type == LogRecordType::kSegmentMounted || r.type == LogRecordType::kSegmentUnmounted) {
      ApplySegmentRecord(r);
      continue;
    }
    const Located loc = Locate(r.key);
    hashes[i] = loc.hash;
    by_shard[loc.shard->index()].push_back(i);
  }
  std::vector<RestoredPut> admit(records.size());
  std::atomic<uint64_t> skipped{0};
  ForEachShardInParallel([&](ObjectShard& shard) {
    uint64_t not_applied = 0;
    for (uint32_t i : by_shard[shard.index()]) {
      if (!ApplyObjectRecord(records[i], {&shard, hashes[i]}, &admit[i])) ++not_applied;
    }
    skipped.fetch_add(not_applied, std::memory_order_relaxed);
  });
  restore_skipped_ += skipped.load(std::memory_order_relaxed);
  // Which admissions are still live after the whole batch (a later record
  // may have replaced or removed the object): each shard under its own lock,
  // shards in parallel. Then the policy lock alone, once for the whole batch
  // rather than once per object. (Holding every shard's lock with it would
  // also exceed the 64 locks ThreadSanitizer can track in one thread.)
  std::vector<uint8_t> live(admit.size(), 0);
  ForEachShardInParallel([&](ObjectShard& shard) {
    std::shared_lock lock(shard.mutex());
    for (uint32_t i : by_shard[shard.index()]) {
      if (admit[i].id != cache::kNoParent && shard.Resolve(admit[i].id) != nullptr) live[i] = 1;
    }
  });
  std::lock_guard lock(policy_mu_);
  // The policy's index is far larger than the caches at millions of objects:
  // its slots for the next few inserts are loaded while this one goes in.
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < admit.size(); ++i) {
    if (i + kAhead < admit.size() && live[i + kAhead] != 0) {
      policy_->PrefetchInsert(admit[i + kAhead].id);
    }
    if (live[i] != 0) AdmitRestoredLocked(admit[i]);
  }
}

}  // namespace crescent::master
