// SlotTable<Node>: the id -> node storage shared by the eviction policies.
//
// Nodes live in one array and are named by their index (a Slot), so policies
// link them with 4-byte indices instead of pointers or repeated id lookups.
// The hash index (SlotIndex) stores each slot with its id's 32-bit hash, so a
// probe reads a node only to confirm a match.
//
// Neither part pauses to grow: the node array is a NodeArray, which past 1 MiB
// grows inside a reserved range of address space without copying, and the
// index grows incrementally, moving a few entries of its old table into the
// new one per Add and Erase (slot_index.h). Before both, an add that crossed
// the index's growth point (about 10.07M ids) rehashed all of it under the
// master's policy lock for over a second; growing an lru policy to 12M now
// has no insert slower than the VM's own noise (about 20-30 ms on the CPU
// clock, the same with the table reserved up front). The price is in the
// probes: a linear probe mispredicts more branches than absl's group probes,
// about 15 ns per insert+evict pair in cache (docs/durability.md, "Figures":
// `policy_growth_perf`, `policy_bench`).
//
// Invariants:
//  - Every id in the table has exactly one node, and the index holds exactly
//    the slots of those nodes. Slot 0 (kNil) is never handed out; list users
//    keep a sentinel there.
//  - A node's `generation` (if it keeps one) changes each time its slot is erased, and a reused
//    slot keeps counting, so a (slot, generation) pair is a weak handle: it
//    matches only the node it was taken from. (It is 32 bits: a handle would
//    alias only after 2^32 reuses of one slot while it is still held.)
//  - Freed slots are reused last-in first-out, so the array never exceeds the
//    peak node count plus one.
// Node must be trivially copyable, with `ObjectId Id() const` and
// `void SetId(ObjectId)` (a node may keep its id in two 4-byte halves so that
// it needs no 8-byte alignment).
// A generation is optional: a node with a `uint32_t generation` field, or an
// `extra.generation` field, gets one; a node without it pays nothing. Add()
// value-initialises every other field.
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "cache/eviction_policy.h"
#include "cache/node_array.h"
#include "cache/slot_index.h"

namespace crescent::cache {

template <typename Node>
class SlotTable {
 public:
  using Slot = uint32_t;
  static constexpr Slot kNil = 0;

  SlotTable() { nodes_.emplace_back(); }
  SlotTable(const SlotTable&) = delete;
  SlotTable& operator=(const SlotTable&) = delete;

  // Slot of `id`, or kNil.
  Slot Find(ObjectId id) const { return index_.Find(id, IdOf{&nodes_}); }
  bool Contains(ObjectId id) const { return Find(id) != kNil; }
  size_t size() const { return index_.size(); }

  // Adds a node for `id` and returns its slot, or returns kNil and changes
  // nothing if `id` is already present.
  Slot Add(ObjectId id) {
    return index_.Add(id, IdOf{&nodes_}, [&] { return Allocate(id); });
  }

  // Makes room for `count` ids in all: no node array growth and no index
  // rehash until then (a restore knows how many objects come).
  void Reserve(size_t count) {
    nodes_.reserve(count + 1);
    index_.Reserve(count);
  }

  // Removes the node; handles to it go stale.
  void Erase(Slot slot) {
    index_.Erase(nodes_[slot].Id(), slot);
    if (uint32_t* generation = GenerationOf(nodes_[slot])) ++*generation;
    free_.push_back(slot);
  }

  // Start loading a node, or the index entry of an id, needed soon.
  void Prefetch(Slot slot) const { __builtin_prefetch(&nodes_[slot]); }
  void PrefetchIndex(ObjectId id) const { index_.Prefetch(id); }

  Node& at(Slot slot) { return nodes_[slot]; }
  const Node& at(Slot slot) const { return nodes_[slot]; }
  // Every node slot, free ones included (their fields are stale): what a
  // copy of a list policy's order takes at once (list_policy.h).
  std::span<const Node> raw_nodes() const { return nodes_.span(); }

  // Calls fn(slot, node) for every node, in no particular order. fn must not
  // add or erase nodes.
  template <typename Fn>
  void ForEach(Fn&& fn) {
    index_.ForEach([&](Slot slot) { fn(slot, nodes_[slot]); });
  }

 private:
  struct IdOf {
    const NodeArray<Node>* nodes;
    ObjectId operator()(Slot slot) const { return (*nodes)[slot].Id(); }
  };

  Slot Allocate(ObjectId id) {
    Slot slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else {
      slot = static_cast<Slot>(nodes_.size());
      nodes_.emplace_back();
    }
    Node& node = nodes_[slot];
    const uint32_t* old = GenerationOf(node);
    const uint32_t generation = old != nullptr ? *old : 0;
    node = Node{};
    node.SetId(id);
    if (uint32_t* fresh = GenerationOf(node)) *fresh = generation;
    return slot;
  }

  // The node's generation field, or nullptr for a node that keeps none.
  template <typename N>
  static auto* GenerationOf(N& node) {
    using Ptr = std::conditional_t<std::is_const_v<N>, const uint32_t*, uint32_t*>;
    if constexpr (requires { node.generation; }) {
      return static_cast<Ptr>(&node.generation);
    } else if constexpr (requires { node.extra.generation; }) {
      return static_cast<Ptr>(&node.extra.generation);
    } else {
      return static_cast<Ptr>(nullptr);
    }
  }

  NodeArray<Node> nodes_;  // nodes_[kNil] is reserved
  SlotIndex index_;
  std::vector<Slot> free_;
};

}  // namespace crescent::cache
