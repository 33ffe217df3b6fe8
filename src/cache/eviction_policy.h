// EvictionPolicy: the one small interface behind which every eviction algorithm
// lives (fifo, lru, sieve, s3fifo, slru, prefix-lru, learned, adaptive). The same
// objects run in the master and in `crescent sim`.
//
// A policy tracks a set of objects, each with an id and a size (in whatever unit
// the owner uses: blocks in the simulator, bytes in the master). It never decides
// *when* to evict; the owner compares UsedSize() with its capacity and calls
// Evict() until it has room. Every operation is O(1) amortised.
//
// Contract shared by all policies:
//  - Insert() admits an id that is not tracked; inserting a tracked id is a
//    programming error (checked in debug builds).
//  - Access() records a hit on a tracked id; on an untracked id it does nothing.
//  - Remove() stops tracking an id; on an untracked id it does nothing. A removed
//    id is never returned by Evict().
//  - Evict() picks a victim among tracked ids, stops tracking it and returns it,
//    or returns nullopt when nothing is tracked or every candidate was spared.
//    `spare`, if given, is asked about each candidate before it is evicted;
//    returning true keeps it, and the policy treats it as just accessed (a leased
//    object has just been read); returning false is final: that candidate is the
//    one Evict() evicts and returns (the master holds the victim's lock from
//    that answer to its removal). After Count() consecutive spares Evict() gives up
//    and returns nullopt, so a round over unevictable objects always terminates.
//  - Policies are not thread-safe; the owner serialises calls.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "crescent/status.h"

namespace crescent::cache {

using ObjectId = uint64_t;
inline constexpr ObjectId kNoParent = ~ObjectId{0};
// Insert()'s `history` when the caller has no key identity beyond the id.
inline constexpr uint64_t kSameAsId = ~uint64_t{0};

// Returns true to keep (spare) a candidate that Evict() is about to evict.
using SpareFn = std::function<bool(ObjectId)>;

// What the owner knows about an object when it admits it, beyond its id and
// size. Policies use what they need and ignore the rest.
struct InsertInfo {
  // The id of the page before it in a chain, or kNoParent (prefix-aware policies).
  ObjectId parent = kNoParent;
  // A stable identity of the object's *key* across evictions and re-inserts
  // (the master gives each incarnation a new id but passes the key's hash here;
  // the simulator's ids are already stable, so it passes kSameAsId). Policies
  // that remember evicted objects (s3fifo's ghost, learned's history) key that
  // memory by it.
  uint64_t history = kSameAsId;
  // It is the last page of the write that stored it (the simulator: the last
  // page of its request; the master: the last key of a batch put). Such a page
  // often ends in a partial block that no later request shares.
  bool ends_write = false;
};

struct PolicyOptions {
  // Total capacity in size units. Policies that partition the cache (s3fifo,
  // slru) size their queues from it; others ignore it.
  uint64_t capacity = 0;
  // s3fifo: fraction of capacity given to the small FIFO.
  double s3fifo_small_ratio = 0.10;
  // s3fifo: an object leaving the small FIFO moves to main when its frequency
  // is at least this (1 or 2).
  int s3fifo_move_threshold = 1;
  // slru: fraction of capacity the protected segment may hold.
  double slru_protected_ratio = 0.80;
  // learned: the page features its classes are made of (PageFeature bits,
  // page_class.h), and the seed of its eviction sampler.
  uint32_t learned_features = 0;  // 0: kDefaultPageFeatures
  uint64_t seed = 1;
};

// A copy of a policy's eviction order, for the master's snapshots: taken
// under the owner's lock at the cost of copying memory, and walked after the
// lock is released (docs/durability.md).
class EvictionOrder {
 public:
  virtual ~EvictionOrder() = default;
  // Makes room for the order of a policy tracking about `count` ids: the
  // memory is allocated and touched here, outside the owner's lock, so that
  // the copy under it faults in no page.
  virtual void Reserve(size_t count) = 0;
  // Calls fn(id) from the next victim on, as the policy stood when copied;
  // false, calling nothing, when the policy keeps no such sequence.
  virtual bool Visit(const std::function<void(ObjectId)>& fn) const = 0;
};

class EvictionPolicy {
 public:
  virtual ~EvictionPolicy() = default;

  // Admits `id` (not tracked yet) of `size` units.
  virtual void Insert(ObjectId id, uint64_t size, const InsertInfo& info = {}) = 0;
  virtual void Access(ObjectId id) = 0;
  virtual void Remove(ObjectId id) = 0;
  virtual std::optional<ObjectId> Evict(const SpareFn& spare = nullptr) = 0;
  // The engine's hint that the conversation tracked `id` belongs to has ended
  // (a session hint): advice that the page is a preferred victim until it is
  // accessed again. Never removes anything by itself; ids not tracked are
  // ignored. The default ignores the hint.
  virtual void EndSession(ObjectId /*id*/) {}

  virtual bool Contains(ObjectId id) const = 0;
  virtual size_t Count() const = 0;
  virtual uint64_t UsedSize() const = 0;
  // Makes room for about `count` tracked ids ahead of their inserts (a
  // restore knows how many come); only a hint, the default does nothing.
  virtual void Reserve(size_t /*count*/) {}
  // Starts loading what Insert(id) will touch, for a caller that knows its
  // next inserts (a restore admits thousands in a row); only a hint.
  virtual void PrefetchInsert(ObjectId /*id*/) const {}
  // Capacity changes when segments mount or unmount.
  virtual void SetCapacity(uint64_t capacity) = 0;
  virtual std::string_view Name() const = 0;
  // Calls fn(id) for tracked ids, from the next victim on, and returns true;
  // returns false, calling nothing, when the policy keeps no such sequence.
  // Ids the policy set aside (prefix-lru's parked pages) may be left out.
  // The master's snapshots use it to restore the order (docs/durability.md).
  virtual bool VisitInEvictionOrder(const std::function<void(ObjectId)>& /*fn*/) const {
    return false;
  }
  // The tracked parent `id` is linked to (InsertInfo::parent, or Link()), or
  // kNoParent: none, the link went stale, or the policy keeps no chains. A
  // snapshot stores it as the parent's key (docs/durability.md).
  virtual ObjectId ParentOf(ObjectId /*id*/) const { return kNoParent; }
  // Links tracked `child`, which has no live parent link, to tracked `parent`
  // as Insert() with that parent would have; otherwise does nothing. For a
  // restore, whose objects come in eviction order and so may come before
  // their parents. The caller keeps the links acyclic. Policies that keep no
  // chains ignore it.
  virtual void Link(ObjectId /*child*/, ObjectId /*parent*/) {}
  // An empty order of the kind CopyEvictionOrder() fills; no lock needed.
  virtual std::unique_ptr<EvictionOrder> NewEvictionOrder() const;
  // Copies the order into `into` (made by this policy's NewEvictionOrder()),
  // under the owner's lock. The default copies the ids VisitInEvictionOrder()
  // gives, one at a time; list policies copy their node array at once.
  virtual void CopyEvictionOrder(EvictionOrder& into) const;
  // The same copy in parts, for a caller that holds the owner's lock for each
  // call and releases it between calls, so that no hold copies the whole
  // order: each call moves at most about `max_items` items and the last
  // returns true. A copy assembled from parts taken at different moments is
  // no one moment's order: its Visit() gives the ids tracked when their part
  // was taken, oldest first where the parts' links agree, and may give an id
  // twice if it was erased and tracked again between two parts (the caller
  // keeps its first place). The default copies everything in the first call.
  virtual bool CopyEvictionOrderPart(EvictionOrder& into, size_t /*max_items*/) const {
    CopyEvictionOrder(into);
    return true;
  }
};

// The registry: one line per policy. Names: "fifo", "lru", "sieve", "s3fifo",
// "slru", "prefix-lru", "learned", "adaptive". Unknown names give kInvalidArgument.
StatusOr<std::unique_ptr<EvictionPolicy>> MakePolicy(std::string_view name,
                                                     const PolicyOptions& options = {});
const std::vector<std::string>& PolicyNames();

}  // namespace crescent::cache
