// SievePolicy: SIEVE (Zhang et al., NSDI'24).
//
// Invariants: every tracked object sits on one FIFO list, newest first, and
// never moves on it; a hit only sets the object's visited bit. The hand points at
// the next object to examine (kNil means "start again at the oldest end"). It
// moves from the oldest end towards the newest: a visited object loses its bit
// and is passed over; the first unvisited one is the victim, and the hand stays
// at the object just newer than it. Objects newer than the hand have not been
// examined in this sweep, so the hand sorts "survived a sweep" from "new".
//
// A spared candidate counts as accessed after the hand looked at it: its bit is
// set and the hand moves past it, so it also survives the next sweep.
#pragma once

#include <vector>

#include "cache/list_policy.h"

namespace crescent::cache {

// Each node's one bit of state, the visited bit, lives in a bitmap indexed by
// slot rather than in the node, which keeps the node at 20 bytes.
class SievePolicy final : public ListPolicy<NoExtra> {
 public:
  explicit SievePolicy(const PolicyOptions& /*options*/ = {}) {}

  void Insert(ObjectId id, uint64_t size, const InsertInfo& info = {}) override;
  void Access(ObjectId id) override;
  void Remove(ObjectId id) override;
  std::optional<ObjectId> Evict(const SpareFn& spare = nullptr) override;
  std::string_view Name() const override { return "sieve"; }

 private:
  // The slot after `slot` in the hand's direction, wrapping to the oldest end.
  List::Slot Advance(List::Slot slot) const {
    auto next = list_.Newer(slot);
    return next != List::kNil ? next : list_.Oldest();
  }

  List::Slot hand_ = List::kNil;
  std::vector<bool> visited_;  // by slot; meaningful for tracked slots only
};

}  // namespace crescent::cache
