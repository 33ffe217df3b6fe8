// What the list-based eviction policies (fifo, lru, sieve, prefix-lru) share:
// IndexedList, a SlotTable whose nodes also form one intrusive doubly-linked
// list, newest to oldest, so every operation is O(1); and ListPolicy, their
// common base, which answers the tracking queries from that list.
//
// Invariants:
//  - Count()/UsedSize() cover every node in the table, linked or not. A node
//    may be tracked but detached from the list (prefix-lru parks non-leaves
//    that way); a fresh node starts detached.
//  - Slot 0 is the sentinel of the circular list, so kNil never names an object
//    and an empty list has Newest() == Oldest() == kNil.
//  - Slot generations come from SlotTable: (slot, generation) is a weak handle.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "cache/ended_set.h"
#include "cache/eviction_policy.h"
#include "cache/slot_table.h"

namespace crescent::cache {

template <typename Extra>
class IndexedList {
 public:
  using Slot = uint32_t;
  static constexpr Slot kNil = 0;

  // 20 bytes plus Extra, 4-byte aligned: the id in two halves, the size in 32
  // bits (a size that does not fit is kept in big_sizes_), the two links. A
  // generation is kept only when Extra has one (SlotTable).
  struct Node {
    uint32_t id_low = 0;
    uint32_t id_high = 0;
    uint32_t size = 0;       // kBigSize: the size is big_sizes_[slot]
    Slot newer = kDetached;  // towards the newest end; kNil at the newest node
    Slot older = kDetached;  // towards the oldest end; kNil at the oldest node
    [[no_unique_address]] Extra extra{};

    ObjectId Id() const { return (uint64_t{id_high} << 32) | id_low; }
    void SetId(ObjectId id) {
      id_low = static_cast<uint32_t>(id);
      id_high = static_cast<uint32_t>(id >> 32);
    }
  };

  IndexedList() {
    auto& sentinel = table_.at(kNil);
    sentinel.newer = sentinel.older = kNil;
  }

  // Slot of a tracked id, or kNil.
  Slot Find(ObjectId id) const { return table_.Find(id); }
  bool Contains(ObjectId id) const { return table_.Contains(id); }
  size_t Count() const { return table_.size(); }
  uint64_t UsedSize() const { return used_; }

  // Tracks a new id with a detached node and a default Extra. Returns kNil,
  // changing nothing, if `id` is already tracked (a caller bug; asserts).
  Slot Add(ObjectId id, uint64_t size) {
    const Slot slot = table_.Add(id);
    assert(slot != kNil && "Insert() of an id that is already tracked");
    if (slot != kNil) {
      if (size < kBigSize) {
        table_.at(slot).size = static_cast<uint32_t>(size);
      } else {
        table_.at(slot).size = kBigSize;
        big_sizes_[slot] = size;
      }
      used_ += size;
    }
    return slot;
  }

  void Reserve(size_t count) { table_.Reserve(count); }
  void PrefetchIndex(ObjectId id) const { table_.PrefetchIndex(id); }

  // Stops tracking the node (unlinking it if linked) and returns its id.
  ObjectId Erase(Slot slot) {
    if (IsLinked(slot)) Unlink(slot);
    const Node& node = table_.at(slot);
    const ObjectId id = node.Id();
    if (node.size != kBigSize) {
      used_ -= node.size;
    } else {
      auto big = big_sizes_.find(slot);
      used_ -= big->second;
      big_sizes_.erase(big);
    }
    table_.Erase(slot);
    return id;
  }

  Node& at(Slot slot) { return table_.at(slot); }
  const Node& at(Slot slot) const { return table_.at(slot); }
  std::span<const Node> raw_nodes() const { return table_.raw_nodes(); }

  bool IsLinked(Slot slot) const { return !IsDetached(at(slot)); }
  // Off the list: parked (prefix-lru), or a free slot of the node array.
  static bool IsDetached(const Node& node) { return node.older == kDetached; }
  Slot Newest() const { return at(kNil).older; }
  Slot Oldest() const { return at(kNil).newer; }
  Slot Newer(Slot slot) const { return at(slot).newer; }
  Slot Older(Slot slot) const { return at(slot).older; }

  void PushNewest(Slot slot) { LinkBetween(slot, Newest(), kNil); }
  void PushOldest(Slot slot) { LinkBetween(slot, kNil, Oldest()); }
  void MoveToNewest(Slot slot) {
    if (Newest() == slot) return;
    Unlink(slot);
    PushNewest(slot);
  }
  void Unlink(Slot slot) {
    assert(IsLinked(slot));
    Node& node = at(slot);
    at(node.older).newer = node.newer;
    at(node.newer).older = node.older;
    node.newer = node.older = kDetached;
  }

 private:
  static constexpr Slot kDetached = ~Slot{0};
  static constexpr uint32_t kBigSize = ~uint32_t{0};

  // Links `slot` so that `older` is just older than it and `newer` just newer.
  void LinkBetween(Slot slot, Slot older, Slot newer) {
    assert(!IsLinked(slot));
    Node& node = at(slot);
    node.older = older;
    node.newer = newer;
    at(older).newer = slot;
    at(newer).older = slot;
  }

  SlotTable<Node> table_;
  absl::flat_hash_map<Slot, uint64_t> big_sizes_;  // sizes of 2^32 - 1 and more
  uint64_t used_ = 0;
};

// Placeholder Extra for lists whose nodes carry nothing more.
struct NoExtra {};

// A policy whose tracked objects are exactly its IndexedList's nodes. By
// default an insert goes to the newest end and a remove just unlinks.
template <typename Extra>
class ListPolicy : public EvictionPolicy {
 public:
  void Insert(ObjectId id, uint64_t size, const InsertInfo& /*info*/ = {}) override {
    if (auto slot = list_.Add(id, size); slot != List::kNil) list_.PushNewest(slot);
  }
  void Remove(ObjectId id) override {
    ended_.Clear(id);
    if (auto slot = list_.Find(id); slot != List::kNil) list_.Erase(slot);
  }
  // Session hints: marks held in an EndedSet, which Evict() consults first.
  void EndSession(ObjectId id) override {
    if (list_.Contains(id)) ended_.Mark(id);
  }
  void Reserve(size_t count) override { list_.Reserve(count); }
  void PrefetchInsert(ObjectId id) const override { list_.PrefetchIndex(id); }
  bool Contains(ObjectId id) const override { return list_.Contains(id); }
  size_t Count() const override { return list_.Count(); }
  uint64_t UsedSize() const override { return list_.UsedSize(); }
  // The owner evicts against the capacity; a list keeps nothing sized by it.
  void SetCapacity(uint64_t /*capacity*/) override {}
  // Oldest first: the order fifo, lru and prefix-lru evict in (sieve's hand
  // may skip ahead of it). Prefix-lru's parked pages come before the list: a
  // restore inserts them at the oldest end, where its first Evict() parks them
  // again (they have children), leaving the order as it was.
  bool VisitInEvictionOrder(const std::function<void(ObjectId)>& fn) const override {
    VisitNodes(list_.raw_nodes(), fn, /*from_parts=*/false);
    return true;
  }
  // The order as a copy of the whole node array (one memcpy under the owner's
  // lock, about 20 bytes a node), walked from the oldest end afterwards.
  std::unique_ptr<EvictionOrder> NewEvictionOrder() const override {
    return std::make_unique<NodeOrder>();
  }
  void CopyEvictionOrder(EvictionOrder& into) const override {
    const auto nodes = list_.raw_nodes();
    static_cast<NodeOrder&>(into).nodes.assign(nodes.begin(), nodes.end());
  }
  // The node array's next `max_items` slots (it only grows, so the slots
  // copied so far are a prefix of it); done once the copy reaches its end.
  bool CopyEvictionOrderPart(EvictionOrder& into, size_t max_items) const override {
    const auto nodes = list_.raw_nodes();
    auto& order = static_cast<NodeOrder&>(into);
    ++order.parts;
    auto& copy = order.nodes;
    const size_t from = std::min(copy.size(), nodes.size());
    const size_t to = std::min(nodes.size(), from + std::max<size_t>(1, max_items));
    copy.insert(copy.end(), nodes.begin() + from, nodes.begin() + to);
    return to == nodes.size();
  }

 protected:
  using List = IndexedList<Extra>;
  List list_;
  EndedSet ended_;

 private:
  struct NodeOrder final : EvictionOrder {
    std::vector<typename List::Node> nodes;
    int parts = 0;  // CopyEvictionOrderPart calls that filled it
    void Reserve(size_t count) override {
      nodes.resize(count + count / 8 + 1024);  // written, so its pages are touched
      nodes.clear();
    }
    bool Visit(const std::function<void(ObjectId)>& fn) const override {
      VisitNodes(nodes, fn, /*from_parts=*/parts > 1);
      return true;
    }
  };

  // The order of a node array (the list's, or a copy of it). A parked page is
  // a detached node with children: a free slot has none (prefix-lru clears
  // them when it erases a page).
  //
  // A copy taken in more than one part (CopyEvictionOrderPart) may hold
  // links that no longer agree: a node moved or freed between two parts. So
  // its walk stops at a link out of the array, to a detached node or to a
  // node it has seen, and then gives the linked nodes it did not reach, by
  // slot; each slot is given at most once (an id erased and tracked again
  // between two parts can hold two slots of the copy). The list itself and a
  // copy of one moment are walked as they are, with no such checks.
  static void VisitNodes(std::span<const typename List::Node> nodes,
                         const std::function<void(ObjectId)>& fn, bool from_parts) {
    if (nodes.empty()) return;
    std::vector<bool> seen(from_parts ? nodes.size() : 0, false);
    if constexpr (requires(const Extra& e) { e.children; }) {
      for (size_t slot = 1; slot < nodes.size(); ++slot) {
        if (List::IsDetached(nodes[slot]) && nodes[slot].extra.children > 0) {
          if (from_parts) seen[slot] = true;
          fn(nodes[slot].Id());
        }
      }
    }
    if (!from_parts) {
      for (auto slot = nodes[List::kNil].newer; slot != List::kNil; slot = nodes[slot].newer) {
        fn(nodes[slot].Id());
      }
      return;
    }
    for (auto slot = nodes[List::kNil].newer;
         slot != List::kNil && slot < nodes.size() && !seen[slot] && !List::IsDetached(nodes[slot]);
         slot = nodes[slot].newer) {
      seen[slot] = true;
      fn(nodes[slot].Id());
    }
    for (size_t slot = 1; slot < nodes.size(); ++slot) {
      if (!seen[slot] && !List::IsDetached(nodes[slot])) fn(nodes[slot].Id());
    }
  }
};

}  // namespace crescent::cache
