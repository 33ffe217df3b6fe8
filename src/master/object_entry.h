// ObjectEntry: the compact per-object record of the master, and the deferred
// lease touch that lives in it.
//
// Layout (64 bytes). The entry keeps what every object needs inline: its heap
// block, size, first replica, generation, pins, state, the value's checksum and
// the two lease atomics. The heap block holds the key's bytes and,
// only for the objects that have them, the rarely used fields: a soft-pin
// deadline and replicas 1..n-1 (block layout below). The key's hash is not
// stored: it is recomputed from the key where it is needed (the shard's hash set
// on insert and rehash, the Bloom filter, the policy history key).
//
// Ownership and locking. Entries live in their shard's slab (stable addresses,
// slots reused through a free list). All non-atomic fields are written only under
// the shard's exclusive lock and read under at least its shared lock. The two
// atomics implement the deferred touch and may be written under the shared lock:
//
//   reader (shared lock):   touch = max(touch, now + 1)     (acq_rel CAS; 0 = none)
//                           the reader that moved it from 0 enqueues the object
//   decider (any lock):     if (t = touch.exchange(0)) != 0
//                               ExtendLease(t - 1 + lease)
//                           then reads lease_until
//
// Every remove or evict decision calls FlushTouch() before it reads the lease, so
// a read that completed before the decision is always seen. A reader always
// touches while it still holds the shard lock, and removal needs the exclusive
// lock, so no read can slip between a decision and the removal it leads to.
// (Folding only the touches since the last flush gives the same lease as folding
// the latest touch ever: earlier ones already extended the lease, a max.)
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/hash.h"
#include "master/key_block_arena.h"
#include "master/types.h"

namespace crescent::master {

// One replica's placement: the segment and the allocator handle within it.
struct ReplicaSlot {
  SegmentId segment = kNoSegment;
  uint32_t alloc_node = 0;        // OffsetAllocator handle ...
  uint32_t alloc_generation = 0;  // ... and its generation
  uint64_t offset = 0;

  bool operator==(const ReplicaSlot&) const = default;
};

enum class EntryState : uint8_t { kFree = 0, kPending = 1, kComplete = 2 };

// Sizes are held in 40 bits (ObjectEntry::size): objects are below 1 TiB.
inline constexpr uint64_t kMaxObjectSize = (uint64_t{1} << 40) - 1;

struct ObjectEntry {
  // Heap block: key_len key bytes; then, at the next multiple of 8 and only when
  // present, the soft-pin deadline (if soft_pinned) and replicas[1..n-1].
  // From new[], or from a restore's KeyBlockArena: the deleter tells which.
  std::unique_ptr<char[], BlockDelete> block;
  // replicas[0]'s offset, unpacked so that the entry has no padding.
  uint64_t offset = 0;
  // One word: the object's size (below kMaxObjectSize, which ValidateSize
  // enforces), the key's length (keys are at most 65535 bytes) and the replica count.
  uint64_t size : 40 = 0;
  uint64_t key_len : 16 = 0;
  uint64_t num_replicas : 8 = 0;
  // The rest of replicas[0].
  SegmentId segment = kNoSegment;
  uint32_t alloc_node = 0;
  uint32_t alloc_generation = 0;
  uint32_t generation : 24 = 0;  // bumped each time the slot is freed (ids keep 24 bits)
  uint32_t hard_pin : 1 = 0;
  uint32_t soft_pinned : 1 = 0;  // the block holds a soft-pin deadline
  EntryState state : 2 = EntryState::kFree;
  // XXH3-64 of the value, as its writer recorded it at PutEnd (0 while pending).
  // Returned with every replica list; readers verify the bytes against it.
  uint64_t checksum = 0;
  std::atomic<TimeMs> lease_until{0};
  std::atomic<TimeMs> touch{0};  // latest unflushed read time + 1; 0 when none

  std::string_view key_view() const { return {block.get(), key_len}; }
  // The key's full hash (shard choice, Bloom, policy history), recomputed.
  uint64_t Hash() const { return HashKey(key_view()); }

  ReplicaSlot replica(size_t i) const {
    if (i == 0) return {segment, alloc_node, alloc_generation, offset};
    ReplicaSlot r;
    std::memcpy(&r, block.get() + ReplicasAt(key_len, soft_pinned) + (i - 1) * sizeof(ReplicaSlot),
                sizeof(ReplicaSlot));
    return r;
  }
  std::vector<ReplicaSlot> Replicas() const {
    std::vector<ReplicaSlot> out;
    out.reserve(num_replicas);
    for (size_t i = 0; i < num_replicas; ++i) out.push_back(replica(i));
    return out;
  }
  // The replicas but the one at (segment, offset), which goes to *dropped
  // (nullopt when there is none): a replica's place names it.
  std::vector<ReplicaSlot> ReplicasExcept(SegmentId seg, uint64_t off,
                                          std::optional<ReplicaSlot>* dropped) const {
    std::vector<ReplicaSlot> keep;
    dropped->reset();
    for (size_t i = 0; i < num_replicas; ++i) {
      const ReplicaSlot r = replica(i);
      if (!*dropped && r.segment == seg && r.offset == off) {
        *dropped = r;
      } else {
        keep.push_back(r);
      }
    }
    return keep;
  }
  // 0 when not soft-pinned.
  TimeMs soft_pin_until() const {
    if (!soft_pinned) return 0;
    TimeMs t;
    std::memcpy(&t, block.get() + ExtrasAt(key_len), sizeof(t));
    return t;
  }

  // (Re)builds the block and the inline replica: `key` (which may point into the
  // current block), a soft-pin deadline (0: none) and 1..255 replicas. The
  // block comes from `arena` when given (and it has one), else from new[].
  void Assign(std::string_view key, TimeMs soft_pin_until, std::span<const ReplicaSlot> replicas,
              KeyBlockArena::Cursor* arena = nullptr) {
    const bool soft = soft_pin_until != 0;
    const size_t more = replicas.size() - 1;
    const size_t bytes = BlockBytes(key.size(), soft, replicas.size());
    char* raw = arena != nullptr ? arena->Allocate(bytes) : nullptr;
    std::unique_ptr<char[], BlockDelete> fresh(raw != nullptr ? raw : new char[bytes]);
    std::memcpy(fresh.get(), key.data(), key.size());
    if (soft) std::memcpy(fresh.get() + ExtrasAt(key.size()), &soft_pin_until, sizeof(TimeMs));
    if (more != 0) {
      std::memcpy(fresh.get() + ReplicasAt(key.size(), soft), replicas.data() + 1,
                  more * sizeof(ReplicaSlot));
    }
    block = std::move(fresh);
    key_len = static_cast<uint16_t>(key.size());
    soft_pinned = soft ? 1 : 0;
    num_replicas = static_cast<uint8_t>(replicas.size());
    const ReplicaSlot& r = replicas[0];
    segment = r.segment;
    alloc_node = r.alloc_node;
    alloc_generation = r.alloc_generation;
    offset = r.offset;
  }
  // Bytes of the heap block (0 when there is none).
  size_t block_bytes() const { return block ? BlockBytes(key_len, soft_pinned, num_replicas) : 0; }

  // Reader side. Returns true when this read moved the touch from "none", i.e.
  // the caller should enqueue the object so the policy sees the access.
  bool Touch(TimeMs now) {
    // A max, not a store: two readers under the shared lock may touch out of
    // clock order, and the later lease already granted must not be shortened.
    const TimeMs mark = now + 1;
    TimeMs cur = touch.load(std::memory_order_relaxed);
    while (cur < mark && !touch.compare_exchange_weak(cur, mark, std::memory_order_acq_rel,
                                                      std::memory_order_relaxed)) {
    }
    return cur == 0;
  }

  // Decider side: folds a pending touch into the lease.
  void FlushTouch(int64_t lease_ms) {
    if (TimeMs t = touch.exchange(0, std::memory_order_acq_rel); t != 0) {
      ExtendLease(t - 1 + lease_ms);
    }
  }

  void ExtendLease(TimeMs until) {
    TimeMs cur = lease_until.load(std::memory_order_relaxed);
    while (cur < until &&
           !lease_until.compare_exchange_weak(cur, until, std::memory_order_relaxed)) {
    }
  }

  bool Leased(TimeMs now) const { return lease_until.load(std::memory_order_relaxed) > now; }

 private:
  static size_t ExtrasAt(size_t key_len) { return (key_len + 7) & ~size_t{7}; }
  static size_t ReplicasAt(size_t key_len, bool soft) {
    return ExtrasAt(key_len) + (soft ? sizeof(TimeMs) : 0);
  }
  static size_t BlockBytes(size_t key_len, bool soft, size_t replicas) {
    if (!soft && replicas <= 1) return key_len;
    return ReplicasAt(key_len, soft) + (replicas - 1) * sizeof(ReplicaSlot);
  }
};
static_assert(sizeof(ObjectEntry) == 64);

}  // namespace crescent::master
