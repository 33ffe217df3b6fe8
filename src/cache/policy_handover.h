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
//  - Evict() takes victims from both, each policy in its own order, in
//    proportion to the share of the cache each holds (a credit counts the
//    draining policy's share of every call). So the new policy ranks what it
//    admits from the start (s3fifo demotes a new one-off at once), and the old
//    one gives up its least valuable objects first; taking every victim from
//    the old policy first would keep every new object, even one-offs, for a
//    whole turnover.
// When the draining policy is empty the move is complete (Draining() is
// false): its share falls by about a factor e per turnover, faster as the
// workload re-reads its objects.
//
// Invariants: every tracked object is in exactly one of the two policies;
// Count() and UsedSize() are the sums. Chain links between an object in one and
// its parent in the other are not seen by either during a move. Not
// thread-safe.
#pragma once

#include <functional>
#include <memory>

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
  // A session hint, to whichever policy holds `id`.
  void EndSession(ObjectId id) {
    live_->EndSession(id);
    if (draining_) draining_->EndSession(id);
  }
  // A link within either policy (EvictionPolicy::Link); none across the two.
  void Link(ObjectId child, ObjectId parent) {
    live_->Link(child, parent);
    if (draining_) draining_->Link(child, parent);
  }
  std::optional<ObjectId> Evict(const SpareFn& spare);

  bool Contains(ObjectId id) const {
    return live_->Contains(id) || (draining_ && draining_->Contains(id));
  }
  size_t Count() const { return live_->Count() + (draining_ ? draining_->Count() : 0); }
  uint64_t UsedSize() const { return live_->UsedSize() + (draining_ ? draining_->UsedSize() : 0); }
  void SetCapacity(uint64_t capacity);
  // The live policy's order when no move is in progress (during one the two
  // policies' victims interleave, so there is no single sequence: false).
  bool VisitInEvictionOrder(const std::function<void(ObjectId)>& fn) const {
    return !draining_ && live_->VisitInEvictionOrder(fn);
  }

  // Starts the move to `next`, which must be empty; no move may be in progress.
  void Switch(std::unique_ptr<EvictionPolicy> next);
  bool Draining() const { return draining_ != nullptr; }
  const EvictionPolicy& live() const { return *live_; }
  const EvictionPolicy* draining() const { return draining_.get(); }

 private:
  void DropDrainedPolicy();

  std::unique_ptr<EvictionPolicy> live_;
  std::unique_ptr<EvictionPolicy> draining_;
  double credit_ = 0;  // victims owed by the draining policy
};

}  // namespace crescent::cache
