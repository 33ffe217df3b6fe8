// PrefixLruPolicy: leaf-first LRU over chains of pages.
//
// Insert()'s `parent` links a page to the page before it in its request, so the
// tracked pages form a forest. A page with cached children is worth more than a
// leaf (every child needs it to be reachable as a prefix), so it is never evicted
// before them: eviction takes leaves only, in LRU order.
//
// Invariants:
//  - `children` of a page counts the tracked pages whose parent link points at
//    it. A link is a weak (slot, generation) handle: when a parent is removed
//    while it still has children, their links simply go stale, no scan needed.
//  - Every tracked page is either on the LRU list (newest first) or parked.
//    Parked pages are exactly the non-leaves that reached the oldest end during
//    Evict(): they are unlinked there and stay tracked and counted. A leaf is
//    never parked.
//  - When a parked page loses its last child (evicted or removed) it becomes a
//    leaf and re-enters at the OLDEST end. A request reads its prefix in order,
//    so a parent is used no later than its children; when its last child leaves
//    the cold end, the parent is (about) the coldest leaf anyway.
//  - Access() on a parked page leaves it parked: it is protected by its children
//    while they stay cached, and its recency only matters once they are gone, by
//    which time the argument above applies.
// Parking and unparking happen at most once per child eviction, so Evict() is
// O(1) amortised.
#pragma once

#include "cache/list_policy.h"

namespace crescent::cache {

// A prefix-lru node's chain links.
struct PrefixLinks {
  uint32_t parent = 0;  // slot of the parent page, or kNil
  uint32_t parent_generation = 0;
  uint32_t children = 0;
  uint32_t generation = 0;  // this node's slot generation (SlotTable keeps it)
};

class PrefixLruPolicy final : public ListPolicy<PrefixLinks> {
 public:
  explicit PrefixLruPolicy(const PolicyOptions& /*options*/ = {}) {}

  void Insert(ObjectId id, uint64_t size, const InsertInfo& info = {}) override;
  void Access(ObjectId id) override;
  void Remove(ObjectId id) override;
  std::optional<ObjectId> Evict(const SpareFn& spare = nullptr) override;
  std::string_view Name() const override { return "prefix-lru"; }
  ObjectId ParentOf(ObjectId id) const override;
  void Link(ObjectId child, ObjectId parent) override;

 private:
  // The live parent slot of `slot`, or kNil (none, or a stale link).
  List::Slot LiveParent(List::Slot slot) const;
  // Links `slot` to `parent_slot`: the parent counts one more child.
  void LinkTo(List::Slot slot, List::Slot parent_slot);
  // Erases `slot`, first dropping its link to its parent.
  ObjectId Forget(List::Slot slot);
};

}  // namespace crescent::cache
