// ObjectEntry: the compact per-object record of the master, and the deferred
// lease touch that lives in it.
//
// Ownership and locking. Entries live in their shard's slab (stable addresses,
// slots reused through a free list). All non-atomic fields are written only under
// the shard's exclusive lock and read under at least its shared lock. The three
// atomics implement the deferred touch and may be written under the shared lock:
//
//   reader (shared lock):   touch_ms = max(touch_ms, now)  (relaxed CAS)
//                           touched.exchange(1, acq_rel)      -- release publishes touch_ms
//   decider (any lock):     if touched.exchange(0, acq_rel)   -- acquire sees touch_ms
//                               ExtendLease(touch_ms + lease)
//                           then reads lease_until
//
// Every remove or evict decision calls FlushTouch() before it reads the lease, so
// a read that completed before the decision is always seen. A reader always
// touches while it still holds the shard lock, and removal needs the exclusive
// lock, so no read can slip between a decision and the removal it leads to.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

#include "common/clock.h"
#include "master/types.h"

namespace crescent::master {

// One replica's placement: the segment and the allocator handle within it.
struct ReplicaSlot {
  SegmentId segment = kNoSegment;
  uint32_t alloc_node = 0;        // OffsetAllocator handle ...
  uint32_t alloc_generation = 0;  // ... and its generation
  uint64_t offset = 0;
};

enum class EntryState : uint8_t { kFree = 0, kPending = 1, kComplete = 2 };

struct ObjectEntry {
  // Key bytes, owned; length in key_len.
  std::unique_ptr<char[]> key;
  uint64_t hash = 0;  // HashKey(key), cached for rehash, bloom and shard choice
  uint64_t size = 0;
  ReplicaSlot first;                    // replicas[0]
  std::unique_ptr<ReplicaSlot[]> more;  // replicas[1..num_replicas-1]
  TimeMs soft_pin_until = 0;            // 0: not soft-pinned
  uint32_t generation = 0;              // bumped each time the slot is freed
  uint16_t key_len = 0;
  uint8_t num_replicas = 0;
  EntryState state = EntryState::kFree;
  bool hard_pin = false;

  std::atomic<TimeMs> lease_until{0};
  std::atomic<TimeMs> touch_ms{0};
  std::atomic<uint8_t> touched{0};

  std::string_view key_view() const { return {key.get(), key_len}; }
  const ReplicaSlot& replica(size_t i) const { return i == 0 ? first : more[i - 1]; }

  // Reader side. Returns true when this read flipped the flag, i.e. the caller
  // should enqueue the object so the policy sees the access.
  bool Touch(TimeMs now) {
    // A max, not a store: two readers under the shared lock may touch out of
    // clock order, and the later lease already granted must not be shortened.
    TimeMs cur = touch_ms.load(std::memory_order_relaxed);
    while (cur < now && !touch_ms.compare_exchange_weak(cur, now, std::memory_order_relaxed)) {
    }
    return touched.exchange(1, std::memory_order_acq_rel) == 0;
  }

  // Decider side: folds a pending touch into the lease.
  void FlushTouch(int64_t lease_ms) {
    if (touched.exchange(0, std::memory_order_acq_rel) != 0) {
      ExtendLease(touch_ms.load(std::memory_order_relaxed) + lease_ms);
    }
  }

  void ExtendLease(TimeMs until) {
    TimeMs cur = lease_until.load(std::memory_order_relaxed);
    while (cur < until &&
           !lease_until.compare_exchange_weak(cur, until, std::memory_order_relaxed)) {
    }
  }

  bool Leased(TimeMs now) const { return lease_until.load(std::memory_order_relaxed) > now; }
};

}  // namespace crescent::master
