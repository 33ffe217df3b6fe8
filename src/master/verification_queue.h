// VerificationQueue: the checks of stored replicas waiting for their nodes
// (master_verify.cc runs them), and what may not be served meanwhile.
//
// Two sources queue checks. A persistent segment taken over from a restarted
// node: HoldSegment() before the segment becomes visible (none of its
// replicas is servable), then EnqueueTakeOver() with a check of every object
// on it, which holds each of those replicas on its own and lifts the
// segment's hold (ReleaseSegment() lifts it for a mount that is not
// verified); a take-over's replica stays unservable until Settle(). And
// readers' corruption reports (Report()): one per place (segment, offset)
// at a time, at most kMaxQueuedReports waiting, never holding their replica;
// a place leaves with Requeue()'s `decided`.
//
// TakeBatch() hands out reports first, then take-overs. A check that got no
// verdict goes back with Requeue(); one that is over is Settle()d (a
// take-over's) or decided (a report's).
//
// Thread-safe. Lock order: mu_ is a leaf lock, taken under a shard lock
// (Servable(), from reads), under the segment table's lock (HoldSegment(),
// from a mount), or under none; nothing is called while it is held.
// Servable() skips it when nothing is held (holds() == 0, the common case).
#pragma once

#include <absl/container/flat_hash_set.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "master/object_entry.h"
#include "master/types.h"

namespace crescent::master {

class VerificationQueue {
 public:
  struct Check {
    std::string key;
    ReplicaSlot replica;
    uint64_t size;
    uint64_t checksum;
    uint32_t tries = 0;     // checks sent that came back with no verdict
    bool reported = false;  // a reader's report, not a take-over's
  };
  // Readers' reports waiting for their nodes' checks, at most (one per
  // replica): a flood of them costs bounded memory.
  static constexpr size_t kMaxQueuedReports = 1024;
  using Place = std::pair<SegmentId, uint64_t>;  // a replica's segment and offset

  // Holds every replica on `segment` (not servable) until it is released.
  void HoldSegment(SegmentId segment);
  void ReleaseSegment(SegmentId segment);
  // Queues a take-over's checks of `segment`'s replicas, holding each of
  // them, then releases the segment's hold.
  void EnqueueTakeOver(SegmentId segment, std::vector<Check> checks);
  // Queues a reader's report (`c.reported`); true when it is queued now or
  // its place was queued already, false when kMaxQueuedReports wait.
  bool Report(Check c);
  // Up to `max` checks, reports first.
  std::vector<Check> TakeBatch(size_t max);
  // A take-over's check is over: its replica is no longer held.
  void Settle(const ReplicaSlot& r);
  // Reports' places whose checks are over, and checks to send again later.
  void Requeue(std::span<const Place> decided, std::vector<Check> again);
  // Whether `r` is held neither by its segment nor by its own check (its
  // segment being mounted is the caller's question).
  bool Servable(const ReplicaSlot& r) const { return holds_.load() == 0 || NotHeld(r); }
  // Replicas and segments held.
  uint64_t holds() const { return holds_.load(); }
  // Reports' places queued or in flight.
  size_t reports() const;

 private:
  static std::pair<uint64_t, uint64_t> Key(const ReplicaSlot& r) {
    return {uint64_t{r.segment} << 32 | r.alloc_generation, r.offset};
  }
  void ReleaseSegmentLocked(SegmentId segment);
  bool NotHeld(const ReplicaSlot& r) const;  // Servable's look under mu_

  mutable std::mutex mu_;
  std::deque<Check> take_overs_;                // guarded by mu_
  std::deque<Check> reports_;                   // guarded by mu_; checked before take_overs_
  absl::flat_hash_set<Place> reported_places_;  // guarded by mu_
  absl::flat_hash_set<std::pair<uint64_t, uint64_t>> held_;  // guarded by mu_; Key()s
  std::vector<SegmentId> held_segments_;                     // guarded by mu_
  // held_'s and held_segments_' sizes together: 0 lets Servable skip mu_.
  std::atomic<size_t> holds_{0};
};

}  // namespace crescent::master
