// PolicyHandover: the live cache of the adaptive policy, and how it moves from
// one policy to another without flushing.
//
// It holds the live policy and, during a move, the previous one (draining).
// Switch(next) makes `next` (empty) the live policy and the old live one the
// draining one; nothing is evicted or dropped. From then on:
//  - new objects go to the live policy;
//  - a hit on an object still in the draining policy moves it to the live one
//    (Readmit), as the newest and just used, so what the workload still reads
//    is ranked by the new policy;
//  - Evict() takes victims from the draining policy first, in its own order,
//    and only then from the live one: whatever was not read since the move is
//    older than anything that was, by any policy's measure of recency.
// When the draining policy is empty the move is complete (Draining() is
// false); that takes about one turnover of the cache.
//
// Invariants: every tracked object is in exactly one of the two policies;
// Count() and UsedSize() are the sums. Chain links between an object in one and
// its parent in the other are not seen by either during a move. Not
// thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "cache/eviction_policy.h"

namespace crescent::cache {

class PolicyHandover {
 public:
  explicit PolicyHandover(std::unique_ptr<EvictionPolicy> live) : live_(std::move(live)) {}

  void Insert(ObjectId id, uint64_t size, const InsertInfo& info) { live_->Insert(id, size, info); }
  // A hit on an object of the live policy (or on an untracked id: ignored).
  void Access(ObjectId id) { live_->Access(id); }
  // True when `id` is still in the draining policy: the owner then calls
  // Readmit() with its size and insert facts instead of Access().
  bool NeedsReadmit(ObjectId id) const { return draining_ && draining_->Contains(id); }
  void Readmit(ObjectId id, uint64_t size, const InsertInfo& info);
  void Remove(ObjectId id);
  std::optional<ObjectId> Evict(const SpareFn& spare);

  bool Contains(ObjectId id) const {
    return live_->Contains(id) || (draining_ && draining_->Contains(id));
  }
  size_t Count() const { return live_->Count() + (draining_ ? draining_->Count() : 0); }
  uint64_t UsedSize() const { return live_->UsedSize() + (draining_ ? draining_->UsedSize() : 0); }
  void SetCapacity(uint64_t capacity);
  // The draining policy's order, then the live one's (what Evict() takes
  // without spares), when both keep one; otherwise false, calling nothing.
  bool VisitInEvictionOrder(const std::function<void(ObjectId)>& fn) const;

  // Starts the move to `next`, which must be empty; no move may be in progress.
  void Switch(std::unique_ptr<EvictionPolicy> next);
  bool Draining() const { return draining_ != nullptr; }
  const EvictionPolicy& live() const { return *live_; }
  const EvictionPolicy* draining() const { return draining_.get(); }

 private:
  void DropDrainedPolicy();

  std::unique_ptr<EvictionPolicy> live_;
  std::unique_ptr<EvictionPolicy> draining_;
};

}  // namespace crescent::cache
