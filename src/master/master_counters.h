// MasterCounters: the engine's monotonically increasing counters, read by the
// metrics endpoint and `crescent stat`. Every field is a relaxed atomic: they are
// statistics, ordered with nothing, and a reader may see them mid-update.
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cstdint>

namespace crescent::master {

struct OpCounter {
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> failures{0};
  std::atomic<uint64_t> items{0};  // keys handled (a batch counts each key)

  void Record(uint64_t n_items, uint64_t n_failures) {
    requests.fetch_add(1, std::memory_order_relaxed);
    items.fetch_add(n_items, std::memory_order_relaxed);
    if (n_failures) failures.fetch_add(n_failures, std::memory_order_relaxed);
  }
};

// Histogram of leading-prefix lengths: bucket 0 holds length 0, bucket b ≥ 1
// holds lengths in [2^(b-1), 2^b).
inline constexpr size_t kPrefixBuckets = 16;

struct MasterCounters {
  OpCounter mount, unmount, heartbeat;
  OpCounter put_start, put_end, put_revoke;
  OpCounter get_replica_list, exists, query_prefix;
  OpCounter longest_prefix;  // GetLongestPrefix; a failure is a miss or a bad key
  OpCounter remove;
  OpCounter end_session;  // EndSession: items are the keys named; a failure, a refused call
  OpCounter touch_keys;   // TouchKeys: items are the keys named; a failure, a key not stored
  // ReportCorruptReplica: a failure is a report that does not apply, or one
  // that could not be queued for its node's check.
  OpCounter report_corrupt;
  OpCounter report_unreachable;  // ReportUnreachable, per segment; a failure is a stale one

  std::atomic<uint64_t> exact_hits{0};  // GetReplicaList/Exists found a complete object
  std::atomic<uint64_t> exact_misses{0};
  std::atomic<uint64_t> prefix_hit_keys{0};   // keys inside a returned prefix
  std::atomic<uint64_t> prefix_miss_keys{0};  // keys after the first miss
  std::atomic<uint64_t> bloom_negatives{0};   // lookups the filter answered alone
  std::atomic<uint64_t> bloom_rebuilds{0};
  std::atomic<uint64_t> evictions{0};
  // Of those: by the watermark round, and for a put that found no space.
  std::atomic<uint64_t> evictions_watermark{0};
  std::atomic<uint64_t> evictions_for_put{0};
  std::atomic<uint64_t> evicted_bytes{0};
  std::atomic<uint64_t> eviction_rounds{0};
  // Tiers (docs/persistent-tier.md): objects moved DRAM → PMEM (demoted) and
  // PMEM → DRAM (promoted), their bytes, and moves that failed (a demotion
  // that fails drops its object, as an eviction would have; a failed
  // promotion leaves it where it was). Reads by the tier of the replicas
  // they were given (an object on both counts as DRAM).
  std::atomic<uint64_t> demotions{0};
  std::atomic<uint64_t> demoted_bytes{0};
  std::atomic<uint64_t> demotion_failures{0};
  std::atomic<uint64_t> promotions{0};
  std::atomic<uint64_t> promoted_bytes{0};
  std::atomic<uint64_t> promotion_failures{0};
  // DRAM copies of promoted objects dropped by DRAM's eviction (the object
  // stays, on its persistent copy).
  std::atomic<uint64_t> dram_copies_dropped{0};
  std::array<std::atomic<uint64_t>, 2> tier_reads{};  // [0] DRAM, [1] PMEM
  // Objects of persistent segments taken over from a restarted node, checked
  // against their checksums: matched, mismatched (the replica dropped), or
  // not checked (its segment went away, or kVerifyTries checks in a row got
  // no verdict); and checks sent again after one got no verdict.
  std::atomic<uint64_t> verified_ok{0};
  std::atomic<uint64_t> verified_corrupt{0};
  std::atomic<uint64_t> verify_skipped{0};
  std::atomic<uint64_t> verify_retries{0};
  std::atomic<uint64_t> expired_puts{0};
  std::atomic<uint64_t> dropped_objects{0};  // lost their last replica to an unmount
  // Replicas dropped because a reader's checksum did not match, and objects
  // removed because that was their last replica (ReportCorruptReplica).
  std::atomic<uint64_t> corrupt_replicas{0};
  std::atomic<uint64_t> corrupt_objects{0};
  // Readers' reports, by their node's verdict: the bytes there did not match
  // (the replica dropped), matched (the report disproved: the reader's buffer
  // changed or its memory is faulty; the replica kept), or no verdict came
  // (the node gone, or kVerifyTries checks unanswered; kept).
  std::atomic<uint64_t> reports_confirmed{0};
  std::atomic<uint64_t> reports_disproved{0};
  std::atomic<uint64_t> reports_unchecked{0};
  std::array<std::atomic<uint64_t>, kPrefixBuckets> prefix_length{};

  // Durability (docs/durability.md), set by the snapshotter: how many
  // snapshots were taken or failed, and figures of the last one (gauges).
  std::atomic<uint64_t> snapshots{0};
  std::atomic<uint64_t> snapshot_failures{0};
  std::atomic<uint64_t> last_snapshot_unix_ms{0};
  std::atomic<uint64_t> last_snapshot_bytes{0};
  std::atomic<uint64_t> last_snapshot_objects{0};
  std::atomic<uint64_t> last_snapshot_duration_us{0};
  std::atomic<uint64_t> last_snapshot_longest_lock_us{0};
  std::atomic<uint64_t> last_snapshot_log_position{0};

  // Restore (docs/durability.md). Figures of the start-up restore (gauges),
  // then what came of the restored segments (counters): taken over by their
  // node, and objects dropped by reason.
  std::atomic<uint64_t> restore_duration_us{0};
  // The restore's completion after it began serving (master_restore_complete.cc).
  std::atomic<uint64_t> restore_completion_us{0};
  // Its steps, each from the completion's start to the step's end (the
  // allocators and the policy fill run beside the key indexes and the Bloom
  // filter, so the two chains overlap).
  std::atomic<uint64_t> restore_allocators_done_us{0};
  std::atomic<uint64_t> restore_policies_done_us{0};
  std::atomic<uint64_t> restore_key_indexes_done_us{0};
  std::atomic<uint64_t> restore_bloom_done_us{0};
  std::atomic<uint64_t> restored_objects{0};
  std::atomic<uint64_t> restored_segments{0};
  std::atomic<uint64_t> restore_adopted_segments{0};
  // Persistent segments detached (their node unmounted them or died) to wait
  // for the same segment's next mount (docs/persistent-tier.md).
  std::atomic<uint64_t> pmem_detached_segments{0};
  // Objects dropped because their segments: were unmounted or unknown in the
  // records (at restore); came back as new memory (the node restarted); never
  // came back within the restore grace; held allocations that conflict.
  std::atomic<uint64_t> restore_dropped_unmounted{0};
  std::atomic<uint64_t> restore_dropped_new_memory{0};
  std::atomic<uint64_t> restore_dropped_expired{0};
  std::atomic<uint64_t> restore_dropped_conflict{0};

  void RecordPrefix(size_t length) {
    size_t b = length == 0 ? 0 : std::bit_width(length);
    if (b >= kPrefixBuckets) b = kPrefixBuckets - 1;
    prefix_length[b].fetch_add(1, std::memory_order_relaxed);
  }
};

}  // namespace crescent::master
