// PendingPuts: the puts in flight (started, neither ended, revoked nor timed
// out), each with what its PutEnd needs (chain parent key, whether it ends
// its write), the attempt that started it and its deadline; and their
// deadline order, for the maintenance pass that discards expired ones.
//
// Contract: Start() records a put; End() takes its record away (whoever ends
// it: PutEnd, a revoke, a remove, the timeout); the deadline queue then drops
// every ended put at its front at once, so it holds little more than the puts
// in flight even when no maintenance pass runs. Deadlines are the start time
// plus a fixed timeout, so start order is deadline order.
//
// Thread-safe. Lock order: mu_ is a leaf lock, taken under a shard lock or
// under none; nothing is called while it is held. PutStart calls Start()
// under the put's shard lock, so that a PutEnd that finds the pending entry
// finds its record too; a remove calls End() under the shard lock, PutEnd
// after it has let go of it.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>

#include "master/object_id.h"
#include "master/types.h"

namespace crescent::master {

class PendingPuts {
 public:
  struct LivePut {
    std::string parent_key;  // "" for none
    uint64_t attempt = 0;    // 0: none
    TimeMs deadline = 0;     // when its write capabilities expire
    bool ends_write = false;
  };
  struct Due {
    ObjectId id;
    TimeMs deadline;
  };

  // Records put `id` (not recorded already), last in deadline order.
  void Start(ObjectId id, LivePut put);
  // Takes `id`'s record away; nullopt when it has none (ended already).
  std::optional<LivePut> End(ObjectId id);
  // `id`'s deadline when it is in flight and was started by `attempt`.
  std::optional<TimeMs> DeadlineIfAttempt(ObjectId id, uint64_t attempt) const;
  // `id`'s chain parent key ("" for none, or when it is not in flight).
  std::string ParentKey(ObjectId id) const;
  // The put in flight with the earliest deadline; nullopt when none is.
  std::optional<Due> Oldest();
  // Drops `id` from the deadline order when it is first there (the timeout
  // has dealt with it), whether or not it has ended.
  void PopOldest(ObjectId id);
  // Entries in the deadline order (ended ones not yet dropped included).
  size_t queued() const;

 private:
  // Pops ended puts off the front of queue_; mu_ must be held.
  void TrimLocked();

  mutable std::mutex mu_;
  std::deque<Due> queue_;                        // guarded by mu_; deadline order
  absl::flat_hash_map<ObjectId, LivePut> live_;  // guarded by mu_
};

}  // namespace crescent::master
