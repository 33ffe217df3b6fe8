// SlotTable<Node>: the id -> node storage shared by the eviction policies.
//
// Nodes live in one array and are named by their index (a Slot), so policies
// link them with 4-byte indices instead of pointers or repeated id lookups.
// The hash index stores only slots; hashing a slot reads its node's id, which
// keeps the index at 4 bytes per entry (the whole of it tends to stay cached
// at a million objects) and makes Add() a single probe.
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
// Node must have `ObjectId Id() const` and `void SetId(ObjectId)` (a node may
// keep its id in two 4-byte halves so that it needs no 8-byte alignment).
// A generation is optional: a node with a `uint32_t generation` field, or an
// `extra.generation` field, gets one; a node without it pays nothing. Add()
// value-initialises every other field.
#pragma once

#include <absl/container/flat_hash_set.h>
#include <absl/hash/hash.h>

#include <cstdint>
#include <type_traits>
#include <vector>

#include "cache/eviction_policy.h"

namespace crescent::cache {

template <typename Node>
class SlotTable {
 public:
  using Slot = uint32_t;
  static constexpr Slot kNil = 0;

  SlotTable() : nodes_(1), index_(0, Hash{&nodes_}, Equal{&nodes_}) {}
  // The index's functors point at nodes_.
  SlotTable(const SlotTable&) = delete;
  SlotTable& operator=(const SlotTable&) = delete;

  // Slot of `id`, or kNil.
  Slot Find(ObjectId id) const {
    auto it = index_.find(IdKey{id});
    return it == index_.end() ? kNil : *it;
  }
  bool Contains(ObjectId id) const { return index_.contains(IdKey{id}); }
  size_t size() const { return index_.size(); }

  // Adds a node for `id` and returns its slot, or returns kNil and changes
  // nothing if `id` is already present.
  Slot Add(ObjectId id) {
    // Keep the index at most 60% full. A cache churns at a constant size (one
    // erase, one add); at higher loads the index's probe groups fill up, erases
    // leave tombstones, and it rehashes in place every few thousand adds.
    if (5 * index_.size() >= 3 * index_.capacity()) index_.reserve(2 * index_.size() + 16);
    Slot added = kNil;
    index_.lazy_emplace(IdKey{id}, [&](const auto& construct) {
      added = Allocate(id);
      construct(added);
    });
    return added;
  }

  // Makes room for `count` ids in all: no node array growth and no index
  // rehash until then (a restore knows how many objects come).
  void Reserve(size_t count) {
    nodes_.reserve(count + 1);
    // Add() keeps the index at most 60% full; twice the count stays below.
    if (5 * count >= 3 * index_.capacity()) index_.reserve(2 * count + 16);
  }

  // Removes the node; handles to it go stale.
  void Erase(Slot slot) {
    index_.erase(slot);
    if (uint32_t* generation = GenerationOf(nodes_[slot])) ++*generation;
    free_.push_back(slot);
  }

  // Start loading a node, or the index entry of an id, needed soon.
  void Prefetch(Slot slot) const { __builtin_prefetch(&nodes_[slot]); }
  void PrefetchIndex(ObjectId id) const { index_.prefetch(IdKey{id}); }

  Node& at(Slot slot) { return nodes_[slot]; }
  const Node& at(Slot slot) const { return nodes_[slot]; }
  // Every node slot, free ones included (their fields are stale): what a
  // copy of a list policy's order takes at once (list_policy.h).
  const std::vector<Node>& raw_nodes() const { return nodes_; }

  // Calls fn(slot, node) for every node, in no particular order. fn must not
  // add or erase nodes.
  template <typename Fn>
  void ForEach(Fn&& fn) {
    for (Slot slot : index_) fn(slot, nodes_[slot]);
  }

 private:
  struct IdKey {
    ObjectId id;
  };
  // Transparent hash and equality: the index holds slots, lookups pass ids.
  struct Hash {
    using is_transparent = void;
    const std::vector<Node>* nodes;
    size_t operator()(IdKey key) const { return absl::Hash<ObjectId>{}(key.id); }
    size_t operator()(Slot slot) const { return (*this)(IdKey{(*nodes)[slot].Id()}); }
  };
  struct Equal {
    using is_transparent = void;
    const std::vector<Node>* nodes;
    ObjectId IdOf(Slot slot) const { return (*nodes)[slot].Id(); }
    ObjectId IdOf(IdKey key) const { return key.id; }
    template <typename A, typename B>
    bool operator()(A a, B b) const {
      return IdOf(a) == IdOf(b);
    }
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

  std::vector<Node> nodes_;  // nodes_[kNil] is reserved
  absl::flat_hash_set<Slot, Hash, Equal> index_;
  std::vector<Slot> free_;
};

}  // namespace crescent::cache
