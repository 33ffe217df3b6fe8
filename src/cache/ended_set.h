// EndedSet: the session hints a policy holds (EvictionPolicy::EndSession), the
// one piece every policy shares to honour them.
//
// A marked id is a preferred victim: the policy's Evict() asks Evict() here
// first, which takes marked ids oldest mark first, and only falls back to the
// policy's own order when none is left (or every one was spared). A mark is
// advice: it removes nothing by itself, it is cleared when the id is accessed
// or leaves the policy. A spared marked id keeps its mark and its place in the
// policy's own order, and leaves the queue of marks for a queue of spared
// marks. Each Evict() asks one spared mark first, the front one: free, it
// goes; still spared, it moves to the back of that queue (so one held long
// holds no other spared mark back). Then the marks not yet spared; each
// Evict() gives up the marks after kMaxSpared spares, counting that first
// one, and turns to the policy's order. A spare
// says a lease or a pin holds the page, not that a request that has not ended
// read it: the master flushes every deferred read (an Access, which clears the
// mark) before it asks, so a lease that holds a marked page comes from reads
// before the hint, usually by the very request whose session ended, and its
// pages would otherwise lose their marks to their own reads. Those leases end
// in about the order of the marks (each began before its mark, and lasts
// about as long), so the oldest spared mark is the first to come free; and a
// spared mark waits out of the queue of marks, so the marks after it (a later
// hint's pages, unleased) are not held back behind it: were it put back in
// that queue, every Evict() would meet the leased marks first, give up after
// kMaxSpared of them and evict an unhinted page instead, until all of them
// had come free.
//
// Marks go oldest first, so a caller hinting a request's pages should mark
// them leaf first (the simulator does): the leading pages, which other
// conversations may share (a system prompt) and read again soon, are then
// the last of them to go, and that read usually clears their marks first.
// Chain-aware policies go further and pass Evict() a `ready` test: a marked
// page with cached children waits until it is a leaf.
//
// Cost: nothing per object that was never marked; each marked id holds a map
// entry and a queue entry (about 40 bytes) until it is cleared or taken.
// Mark, Clear and Evict are O(1) amortised: the queue keeps stale entries of
// cleared or re-marked ids and is compacted when they outnumber the live ones.
// Clear() on an empty set is one branch, so a cache given no hints pays only
// that on each access. The marks are not part of a policy's eviction order
// (VisitInEvictionOrder): a snapshot restores the order without them.
// Not thread-safe.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

#include "cache/eviction_policy.h"

namespace crescent::cache {

class EndedSet {
 public:
  bool empty() const { return marks_.empty(); }
  size_t size() const { return marks_.size(); }
  bool Marked(ObjectId id) const { return !marks_.empty() && marks_.contains(id); }

  // Marks `id` (again: its mark becomes the newest). The caller checks that
  // its policy tracks `id`.
  void Mark(ObjectId id);
  // Forgets the mark of `id`, if any: it was accessed, or left the policy.
  void Clear(ObjectId id) {
    if (!marks_.empty()) ClearMarked(id);
  }
  // Takes a marked id that `spare` does not keep out of `policy`
  // (policy.Remove()) and returns it: the oldest spared mark if it is free
  // now, else the oldest mark not spared yet. A spared one stays marked, among
  // the spared marks. Returns nullopt once every mark queued on entry is
  // spent, or after kMaxSpared spares: the caller then evicts in the policy's
  // own order.
  //
  // `ready` (chain-aware policies: learned, prefix-lru) says whether a marked
  // id may go now; one that may not (a page whose children are cached: they
  // need it, and another conversation may be using them) stays marked but
  // waits, out of the queue, until the policy calls Ready() for it.
  template <typename ReadyFn>
  std::optional<ObjectId> Evict(EvictionPolicy& policy, const SpareFn& spare,
                                const ReadyFn& ready) {
    if (marks_.empty()) return std::nullopt;
    return EvictMarked(policy, spare, ready);
  }
  std::optional<ObjectId> Evict(EvictionPolicy& policy, const SpareFn& spare) {
    return Evict(policy, spare, [](ObjectId) { return true; });
  }
  // A waiting marked id may go now (its last child left): it is queued again,
  // as the newest mark. Ids not marked are ignored.
  void Ready(ObjectId id) {
    if (!marks_.empty()) Requeue(id);
  }

 private:
  // Spares one Evict() call meets among the marks before it turns to the
  // policy's order: a bound on its cost when many marked pages are leased.
  static constexpr int kMaxSpared = 8;

  template <typename ReadyFn>
  std::optional<ObjectId> EvictMarked(EvictionPolicy& policy, const SpareFn& spare,
                                      const ReadyFn& ready) {
    int spared = 0;
    // The oldest spared mark first, once: still spared, it goes to the back
    // of the spared marks, and the marks not yet spared are asked.
    while (!spared_.empty()) {
      const auto [id, sequence] = spared_.front();
      spared_.pop_front();
      auto it = marks_.find(id);
      if (it == marks_.end() || it->second != sequence) continue;  // stale
      if (std::optional<ObjectId> taken = Take(policy, spare, ready, it, &spared)) return taken;
      if (spared > 0) break;  // not one that waits for its children: kept
    }
    for (size_t left = order_.size(); left > 0 && !order_.empty(); --left) {
      const auto [id, sequence] = order_.front();
      order_.pop_front();
      auto it = marks_.find(id);
      if (it == marks_.end() || it->second != sequence) continue;  // stale
      if (std::optional<ObjectId> taken = Take(policy, spare, ready, it, &spared)) return taken;
      if (spared >= kMaxSpared) return std::nullopt;
    }
    return std::nullopt;
  }
  // Evicts the marked id at `it` unless it waits (`ready`) or `spare` keeps
  // it; a kept one goes to the back of the spared marks, counted in *spared.
  template <typename ReadyFn>
  std::optional<ObjectId> Take(EvictionPolicy& policy, const SpareFn& spare, const ReadyFn& ready,
                               absl::flat_hash_map<ObjectId, uint64_t>::iterator it, int* spared) {
    const ObjectId id = it->first;
    if (!ready(id)) {
      it->second = kWaiting;
      return std::nullopt;
    }
    if (spare && spare(id)) {
      spared_.emplace_back(id, it->second);
      ++*spared;
      return std::nullopt;
    }
    marks_.erase(it);
    policy.Remove(id);
    return id;
  }
  void Requeue(ObjectId id);
  // The sequence of a marked id that waits out of the queue (Ready()).
  static constexpr uint64_t kWaiting = 0;
  void ClearMarked(ObjectId id);
  void Compact();
  size_t Queued() const { return order_.size() + spared_.size(); }

  absl::flat_hash_map<ObjectId, uint64_t> marks_;    // id -> the sequence of its mark
  std::deque<std::pair<ObjectId, uint64_t>> order_;  // marks, oldest first; some stale
  // Marks a spare kept, in the order they were (last) kept; some stale.
  std::deque<std::pair<ObjectId, uint64_t>> spared_;
  uint64_t sequence_ = kWaiting;                     // the last mark's; marks start at 1
};

}  // namespace crescent::cache
