// HeldSpace: replica space kept from reuse until a time, then handed back to
// be freed: what a forced remove or a replacement leaves while a write or read
// capability on it may still be live (docs/master.md, "Fenced space"), and the
// source of a tier move until readers are off it.
//
// Contract: Hold() records slots with the allocated bytes each takes;
// TakeDue(now) removes and returns every slot held until `now` or earlier;
// ForgetOn() drops the slots on unmounted segments (their space went with the
// segment's allocator) without returning them; bytes() is the allocated bytes
// held, which counts in a tier's used space but is not evicted for.
//
// Thread-safe. Lock order: mu_ is a leaf lock, taken under a shard lock (and
// under nothing else of the master's); nothing is called while it is held.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <queue>
#include <span>
#include <vector>

#include "master/object_entry.h"
#include "master/types.h"

namespace crescent::master {

class HeldSpace {
 public:
  // Holds `slots` until `until`; each takes `slot_bytes` in its allocator.
  void Hold(std::vector<ReplicaSlot> slots, uint64_t slot_bytes, TimeMs until);
  // Removes and returns the slots held until `now` or earlier.
  std::vector<ReplicaSlot> TakeDue(TimeMs now);
  // Forgets the slots on `segments` (not returned by any later TakeDue).
  void ForgetOn(std::span<const SegmentId> segments);
  // Allocated bytes held.
  uint64_t bytes() const;
  // When the earliest hold ends; nullopt when nothing is held.
  std::optional<TimeMs> NextDue() const;

 private:
  struct Held {
    TimeMs until;
    std::vector<ReplicaSlot> slots;
    uint64_t slot_bytes;  // allocated bytes per slot
    bool operator>(const Held& o) const { return until > o.until; }
  };
  mutable std::mutex mu_;
  std::priority_queue<Held, std::vector<Held>, std::greater<>> held_;  // guarded by mu_
  uint64_t bytes_ = 0;                                                 // guarded by mu_
};

}  // namespace crescent::master
