// DurableFrees: space that a logged object left (removed, evicted, moved to
// the other tier, a bad replica dropped), kept from reuse until the log record
// that says so is durable (docs/durability.md, "Space waits for its record").
//
// Why: a restore maps each object onto the place its last durable record
// names. Were the space reused before the record that freed it reached the
// disk, a crash would restore the object (a demoted one, still alive on the
// persistent tier, or an evicted one) over another put's bytes.
//
// Entries carry the log's end position when they were added (every record
// that freed them was appended before); TakeDurable() hands back those the
// synced position has passed. Thread-safe: mu_ is a leaf lock, taken under
// shard locks.
#pragma once

#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "master/object_entry.h"

namespace crescent::master {

class DurableFrees {
 public:
  // `slot_bytes`: what each slot takes in its allocator (counted in bytes()).
  void Add(uint64_t position, std::span<const ReplicaSlot> slots, uint64_t slot_bytes);
  // Removes and returns the slots whose position is at most `synced`.
  std::vector<ReplicaSlot> TakeDurable(uint64_t synced);
  // The highest position an entry waits for (0: none waits).
  uint64_t newest() const;
  // Allocated bytes waiting.
  uint64_t bytes() const;

 private:
  struct Entry {
    uint64_t position;
    ReplicaSlot slot;
    uint64_t bytes;
  };
  mutable std::mutex mu_;
  std::vector<Entry> entries_;  // guarded by mu_; nearly in position order
  uint64_t bytes_ = 0;          // guarded by mu_
};

}  // namespace crescent::master
