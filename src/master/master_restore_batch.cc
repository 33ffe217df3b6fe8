// Restore in batches: a snapshot's records applied with their shards spread
// over the cores (docs/durability.md).
//
// Records of different keys commute, except through the policy, whose order
// is the eviction order: so each shard's records are applied in record order
// by one thread, and each put's admission is kept in record order for the
// policy fill at the restore's completion, which admits those still live then
// (master_restore_complete.cc): one replaced or removed later never reaches
// the policy, which is where the one-at-a-time path leaves it too.
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
  RestoreBatchScratch& scratch = restore_scratch_;
  scratch.by_shard.resize(shards_.size());
  for (std::vector<uint32_t>& list : scratch.by_shard) list.clear();
  scratch.hashes.resize(records.size());
  scratch.admit.assign(records.size(), RestoredPut{});
  std::vector<std::vector<uint32_t>>& by_shard = scratch.by_shard;
  std::vector<uint64_t>& hashes = scratch.hashes;
  std::vector<RestoredPut>& admit = scratch.admit;
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
  std::atomic<uint64_t> skipped{0};
  ForEachShardInParallel([&](ObjectShard& shard) {
    uint64_t not_applied = 0;
    const std::vector<uint32_t>& mine = by_shard[shard.index()];
    // The hash set's slots of the next few keys are loaded while this one goes
    // in (no other thread uses the shard during a batch).
    constexpr size_t kAhead = 8;
    for (size_t j = 0; j < mine.size(); ++j) {
      if (j + kAhead < mine.size()) {
        const uint32_t next = mine[j + kAhead];
        shard.PrefetchFind(records[next].key, hashes[next]);
      }
      const uint32_t i = mine[j];
      if (!ApplyObjectRecord(records[i], {&shard, hashes[i]}, &admit[i])) ++not_applied;
    }
    skipped.fetch_add(not_applied, std::memory_order_relaxed);
  });
  restore_skipped_ += skipped.load(std::memory_order_relaxed);
  // The batch's puts join the admissions in record order; whether each is
  // still live is asked when the policies are filled (master_restore_complete.cc).
  std::vector<RestoredPut>& chunk = restore_admits_.emplace_back();
  chunk.reserve(admit.size());
  for (const RestoredPut& p : admit) {
    if (p.id != cache::kNoParent) chunk.push_back(p);
  }
  restore_admit_count_ += chunk.size();
}

}  // namespace crescent::master
