// MasterConfig: every tunable of the metadata engine, with the defaults the
// store ships with. Durations are milliseconds on the injected Clock.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "crescent/status.h"

// Declared only: this header reaches the client's code (master types), which
// must not include the servers' headers (scripts/check_layers.py).
namespace crescent::cache {
class EvictionPolicy;
struct PolicyOptions;
}  // namespace crescent::cache

namespace crescent::master {

// The largest max_key_length: an entry stores its key's length in 16 bits
// (ObjectEntry::key_len). `--max-key-length` takes 1 to this.
inline constexpr uint32_t kMaxKeyLengthLimit = 65535;

// The most replicas a put gets. A client asks for at most this many (more are
// clamped: the count is best effort, as is placing them all on distinct
// segments); the master server refuses more.
inline constexpr uint32_t kMaxReplicas = 16;

struct MasterConfig {
  // Keys are non-empty byte strings of at most this many bytes (at most
  // kMaxKeyLengthLimit).
  uint32_t max_key_length = 1024;
  // Largest accepted object; 0 means "no limit beyond the largest segment".
  uint64_t max_object_size = 0;

  // Read lease granted by GetReplicaList (and by Exists when exists_grants_lease):
  // lease_ms plus one ms per lease_bytes_per_ms bytes of the object (0: none).
  // The read capability expires with it, so it must cover one transfer, and no
  // more: a leased object cannot be evicted or removed without force, so a
  // longer lease only pins what readers have already fetched (fencing, not
  // the lease, keeps a late read from meeting another object's bytes). The
  // floor is 32 MiB/s: a 4 MiB page gets 628 ms, 300 MiB about 10 s.
  int64_t lease_ms = 500;
  uint64_t lease_bytes_per_ms = 32 << 10;
  bool exists_grants_lease = false;
  // A put not ended or revoked within this time is discarded and its space freed.
  int64_t put_timeout_ms = 30'000;
  // Fencing: space that a capability may still reach (a write capability until
  // its put's deadline, a read capability until its lease ends) is not handed
  // to another object before that expiry plus this margin, the clock skew and
  // in-flight time allowed between the master and a store node.
  int64_t capability_grace_ms = 1'000;
  // A put that finds no room, and no victim whose space is free at once (every
  // one was read within its lease and the grace), waits up to this long for
  // held space to come due rather than answer NO_SPACE; it evicts one such
  // victim to have something to wait for. 0: it never waits (evicting reachable
  // victims into held space, then NO_SPACE once nothing is left).
  int64_t put_wait_for_held_ms = 0;
  // The longest a read capability lives when a client asks for one for its
  // location cache (BatchGetReplicaListRequest.cache_capability_ms; 0: never
  // longer than the lease). Its space is not held for it: a late read through
  // it may meet another object's bytes, which the reader's checksum refuses
  // (docs/capabilities.md, "Location cache").
  int64_t location_cache_capability_ms = 30'000;
  // A mount of a segment larger than this is refused (kInvalidArgument):
  // placement prefers free space, so a node that claims a huge segment would
  // draw most puts (docs/security.md, "Nodes").
  uint64_t max_segment_bytes = uint64_t{16} << 40;
  // A store node silent for this long is declared dead; its segments unmount.
  int64_t heartbeat_ttl_ms = 10'000;
  // A persistent (PMEM) segment whose node unmounts it or dies is detached, not
  // dropped: its objects stay, unreadable, for this long, and a node that
  // mounts the same segment (the same file) within it takes them back.
  int64_t pmem_grace_ms = 300'000;
  // The persistent tier (docs/persistent-tier.md). Its own watermark: an
  // eviction round drops the PMEM policy's victims from pmem_high_watermark ×
  // PMEM capacity on (DRAM's victims are demoted into it while it has room).
  double pmem_high_watermark = 0.95;
  // A PMEM object is promoted back to DRAM at its pmem_promote_hits-th read
  // within pmem_promote_window_ms (1: at every read; a window of 0: never).
  // DRAM's victims are demoted to make room for it. 1 by measurement: the
  // two tiers then act as one LRU cache (docs/persistent-tier.md).
  int pmem_promote_hits = 1;
  int64_t pmem_promote_window_ms = 10'000;
  // A promotion keeps the persistent copy (the durable one) beside the DRAM
  // copy; false moves the only copy (more capacity, but a kill of the node
  // then loses every promoted object; docs/persistent-tier.md).
  bool pmem_promote_keeps_copy = true;
  // How long one batch of tier moves may take (the copy capabilities' life).
  int64_t tier_copy_timeout_ms = 5'000;
  // A node a client could not reach (ReportUnreachable) is suspect: placement
  // skips its segments until a heartbeat arrives at least this long after the
  // report (a dead node sends none, and is dropped after the TTL), or it mounts
  // again. Reads still list its replicas; clients try them last.
  // On a token's report, the last node left unsuspected is marked only once
  // it has also been silent for twice this long (SegmentTable::MarkUnreachable).
  int64_t suspect_hold_ms = 1'000;

  // Background eviction starts at high_watermark × capacity and frees
  // evict_ratio × capacity bytes per round.
  double high_watermark = 0.95;
  double evict_ratio = 0.05;
  std::string eviction_policy = "lru";
  int s3fifo_move_threshold = 0;  // 0: the policy's own default
  // Makes the policies eviction_policy names (main and persistent tier; the
  // soft-pinned one is always the registry's lru). None: the registry
  // (cache::MakePolicy). Tests inject a policy that shows what the engine
  // told it, as they inject the clock.
  std::function<StatusOr<std::unique_ptr<cache::EvictionPolicy>>(std::string_view name,
                                                                 const cache::PolicyOptions&)>
      make_policy;
  // Soft-pinned objects may be evicted once every unpinned candidate is gone.
  bool allow_evict_soft_pinned = true;

  // Counting Bloom filter design load and false-positive target. The filter is
  // rebuilt (doubling) when the live key count outgrows the design load.
  uint64_t bloom_expected_keys = 1 << 20;
  double bloom_false_positive_rate = 0.01;

  // Index shards (power of two, at most 256). Each has its own reader/writer lock.
  uint32_t num_shards = 64;
  // Allocation granularity inside segments.
  uint64_t allocation_alignment = 64;
  // Capacity of the deferred-touch queue between readers and the policy.
  uint32_t touch_queue_capacity = 1 << 16;
  // A snapshot copies the eviction order in parts of this many items, the
  // policy lock released between parts (master_snapshot.cc); tests use tiny
  // parts to cut a copy many times.
  uint32_t snapshot_order_items_per_lock = 1 << 17;
};

}  // namespace crescent::master
