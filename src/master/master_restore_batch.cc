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
  restore_.records += records.size();
  // Each shard's object records, in record order, and their key hashes.
  constexpr uint32_t kNoShard = ~uint32_t{0};
  RestoreState::BatchScratch& scratch = restore_.scratch;
  scratch.by_shard.resize(objects_.shard_count());
  scratch.admit.resize(objects_.shard_count());
  for (std::vector<uint32_t>& list : scratch.by_shard) list.clear();
  scratch.hashes.resize(records.size());
  scratch.shard_of.resize(records.size());
  for (uint32_t i = 0; i < records.size(); ++i) {
    const LogRecord& r = records[i];
    if (r.type == LogRecordType::kSegmentMounted || r.type == LogRecordType::kSegmentUnmounted) {
      ApplySegmentRecord(r);
      scratch.shard_of[i] = kNoShard;
      continue;
    }
    const Located loc = objects_.Locate(r.key);
    scratch.hashes[i] = loc.hash;
    scratch.shard_of[i] = loc.shard->index();
    scratch.by_shard[loc.shard->index()].push_back(i);
  }
  std::atomic<uint64_t> skipped{0};
  objects_.ForEachShardInParallel([&](ObjectShard& shard) {
    uint64_t not_applied = 0;
    RestoreTally tally;
    const std::vector<uint32_t>& mine = scratch.by_shard[shard.index()];
    std::vector<RestoredPut>& admit = scratch.admit[shard.index()];
    admit.assign(mine.size(), RestoredPut{});
    // The lock once for the shard's records (no other thread uses the shard
    // during a batch; a lock per record was a few percent of the restore).
    std::unique_lock lock(shard.mutex());
    // What the records a few places on will read is loaded while this one
    // goes in: a record's fields (decoded on another core, so a cache miss
    // each), then its key's bytes and the hash set's slots for it.
    constexpr size_t kAhead = 8;
    for (size_t j = 0; j < mine.size(); ++j) {
      if (j + 2 * kAhead < mine.size()) {
        const char* far = reinterpret_cast<const char*>(&records[mine[j + 2 * kAhead]]);
        for (size_t at = 0; at < sizeof(LogRecord); at += 64) __builtin_prefetch(far + at);
      }
      if (j + kAhead < mine.size()) {
        const uint32_t next = mine[j + kAhead];
        __builtin_prefetch(records[next].key.data());
        shard.PrefetchFind(records[next].key, scratch.hashes[next]);
      }
      const uint32_t i = mine[j];
      if (!ApplyObjectRecord(records[i], {&shard, scratch.hashes[i]}, &admit[j], &tally)) {
        ++not_applied;
      }
    }
    AddRestoredTally(tally);
    skipped.fetch_add(not_applied, std::memory_order_relaxed);
  });
  restore_.skipped += skipped.load(std::memory_order_relaxed);
  // The batch's puts join the admissions in record order: each shard's list
  // is in its records' order, so record i's is the next of its shard's.
  // Whether each is still live is asked when the policies are filled
  // (master_restore_complete.cc).
  std::vector<RestoredPut>& chunk = restore_.admits.emplace_back();
  chunk.reserve(records.size());
  scratch.merged.assign(objects_.shard_count(), 0);
  for (uint32_t i = 0; i < records.size(); ++i) {
    const uint32_t s = scratch.shard_of[i];
    if (s == kNoShard) continue;
    const RestoredPut& p = scratch.admit[s][scratch.merged[s]++];
    if (p.id != cache::kNoParent) chunk.push_back(p);
  }
  restore_.admit_count += chunk.size();
}

}  // namespace crescent::master
