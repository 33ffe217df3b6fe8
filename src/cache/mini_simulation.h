// MiniSimulation: one candidate policy run on a sample of the live cache's
// references, at a capacity scaled by the same rate (a miniature simulation:
// Waldspurger et al., "Cache Modeling and Optimization using Miniature
// Simulations", USENIX ATC'17).
//
// It is driven by Reference(): one reference of a sampled key, with the
// nearest sampled ancestor of its page as its parent (`anchor`). A key it holds
// is accessed; any other is inserted after evicting down to the capacity, as
// the simulator does. Keys here are the live cache's history keys, so a page
// evicted and written again is the same key.
//
// It counts prefix hits, the simulator's measure, as far as a sample can tell:
// a reference hits when its key is held and either it has no sampled ancestor
// or the sample's previous reference was its anchor and hit too. (A request
// reads its pages in chain order, so its sampled pages arrive one after the
// other: a miss breaks the chain for the sampled pages after it.)
//
// Its cache is a PolicyHandover, as the adaptive policy's live cache is, so a
// miniature can also rehearse a move: Switch() moves it to another policy
// exactly as the live cache would move, draining what it holds.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cache/eviction_policy.h"
#include "cache/policy_handover.h"

namespace crescent::cache {

class MiniSimulation {
 public:
  MiniSimulation(std::unique_ptr<EvictionPolicy> policy, uint64_t capacity);

  // Starts loading what Reference(key, ...) looks up first (a hint).
  void Prefetch(uint64_t key) const { cache_.live().PrefetchInsert(key); }
  void Reference(uint64_t key, uint64_t anchor, uint64_t size, bool ends_write);
  // A session hint on a sampled key: its cache marks it (EndSession), as the
  // live cache does. Not a reference: it counts for no window.
  void EndSession(uint64_t key) { cache_.EndSession(key); }
  void SetCapacity(uint64_t capacity);

  // Hits and references since the last TakeWindow(), which resets them.
  struct Window {
    uint64_t hits = 0;
    uint64_t refs = 0;
  };
  Window TakeWindow();

  // The policy it runs (during a rehearsed move, the one it moves to).
  const EvictionPolicy& policy() const { return cache_.live(); }
  // Moves it to `next` (empty) as PolicyHandover::Switch() moves the live
  // cache; no move may be in progress.
  void Switch(std::unique_ptr<EvictionPolicy> next) { cache_.Switch(std::move(next)); }

 private:
  void MakeRoom(uint64_t size);

  PolicyHandover cache_;
  uint64_t capacity_;
  Window window_;
  uint64_t last_key_ = kNoParent;
  bool last_hit_ = false;
};

}  // namespace crescent::cache
