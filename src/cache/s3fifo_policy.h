// S3FifoPolicy: S3-FIFO (Yang et al., SOSP'23, "FIFO queues are all you need
// for cache eviction").
//
// Three FIFO queues of (slot, generation) handles over one SlotTable:
//  - S (small, s3fifo_small_ratio of the capacity) admits new objects, so
//    one-hit wonders leave quickly;
//  - M (main, the rest) holds objects that were hit while in S, or that come
//    back soon after leaving S; it is a CLOCK with a 2-bit frequency;
//  - G (ghost, ids only, as much size as M may hold) remembers what S evicted,
//    filed under the object's history key (InsertInfo::history), so that a key
//    re-inserted under a new id (as the master does) is still recognised.
// Every node of the table is on exactly one queue, named by `where`; a ghost
// is not tracked (Contains() is false). Only S and M count towards UsedSize().
// A hit raises a tracked object's frequency by one, capped at 3.
//
// Lazy deletion: Remove() erases the node and a ghost hit renews its
// generation, fixing the queue's live count and size at once but leaving the
// handle in the deque. A handle is live only while its node has the same
// generation and is on the same queue; dead handles are skipped when they reach
// a queue's tail, and a queue is compacted once dead handles outnumber live
// ones, so memory stays proportional to what is tracked. No step scans a queue
// or looks an id up to tell live from dead.
//
// Eviction (one victim per call):
//  - if S holds at least its share (or M is empty): pop S's tail; an object hit
//    at least s3fifo_move_threshold times moves to M's head with its frequency
//    reset (making room in M first if it would overflow M's share; that M victim
//    is the answer), otherwise it goes to G and is the victim;
//  - else pop M's tail; an object with frequency f > 0 goes back to M's head
//    with f - 1, otherwise it is the victim.
// A spared candidate counts as one more hit and is then placed by the same rules
// (an S candidate still below the threshold goes back to S's head). When every
// object left in the chosen queue has been spared, Evict() turns to the other,
// so it returns nullopt only once every tracked object was offered and spared.
#pragma once

#include <deque>

#include "cache/ended_set.h"
#include "cache/eviction_policy.h"
#include "cache/slot_table.h"

namespace crescent::cache {

class S3FifoPolicy final : public EvictionPolicy {
 public:
  explicit S3FifoPolicy(const PolicyOptions& options = {});

  void Insert(ObjectId id, uint64_t size, const InsertInfo& info = {}) override;
  void Access(ObjectId id) override;
  void Remove(ObjectId id) override;
  std::optional<ObjectId> Evict(const SpareFn& spare = nullptr) override;

  // Session hints: marked pages go first (EndedSet).
  void EndSession(ObjectId id) override {
    if (Contains(id)) ended_.Mark(id);
  }
  bool Contains(ObjectId id) const override;
  void PrefetchInsert(ObjectId id) const override { table_.PrefetchIndex(id); }
  size_t Count() const override { return small_.live + main_.live; }
  uint64_t UsedSize() const override { return small_.used + main_.used; }
  void SetCapacity(uint64_t capacity) override;
  std::string_view Name() const override { return "s3fifo"; }

  // For tests and the simulator's reports.
  uint64_t SmallSize() const { return small_.used; }
  uint64_t MainSize() const { return main_.used; }
  size_t GhostCount() const { return ghost_.live; }

 private:
  EndedSet ended_;
  enum class Where : uint8_t { kSmall, kMain, kGhost };
  struct Node {
    ObjectId id = 0;       // the table key: the live id, or a ghost's history key
    uint64_t history = 0;  // the key identity the ghost will be filed under
    uint64_t size = 0;
    uint32_t generation = 0;
    uint8_t freq = 0;  // 0..3
    Where where = Where::kSmall;

    ObjectId Id() const { return id; }
    void SetId(ObjectId value) { id = value; }
  };
  using Table = SlotTable<Node>;
  using Slot = Table::Slot;
  struct Handle {
    Slot slot;
    uint32_t generation;
  };
  // Newest handles are at the back, the tail (oldest) at the front.
  struct Queue {
    std::deque<Handle> handles;  // live and dead
    size_t live = 0;
    uint64_t used = 0;  // sum of the live nodes' sizes
  };
  // The state of one Evict() call. It gives up after `limit` spares in a row;
  // a step that is no spare (a frequency spent in M, a hit object moved out of
  // S) starts the row again. Such steps are bounded by the frequencies held
  // when the call began, as spares never raise them for nothing.
  struct Round {
    const SpareFn& spare;
    size_t limit;
    size_t consecutive = 0;
    // Set once every object in M was spared in a row: making room in M for a
    // promoted object is then skipped, so one call stays O(Count()).
    bool main_all_spared = false;
    bool Spares(ObjectId id);
    void Progress() { consecutive = 0; }
    bool Exhausted() const { return consecutive >= limit; }
  };

  Queue& QueueOf(Where where);
  bool IsLive(Handle handle, Where where) const;
  // Pops dead handles and then the live tail off the queue (which has a live
  // handle); returns that tail.
  Handle PopLiveTail(Queue& queue, Where where);
  void Push(Queue& queue, Slot slot);
  // Accounts for one live handle of `queue` going dead; compacts when due.
  void NoteDead(Queue& queue, Where where, uint64_t size);
  void TrimGhost();
  std::optional<ObjectId> EvictSmall(Round& round);
  std::optional<ObjectId> EvictMain(Round& round);

  double small_ratio_;
  uint8_t move_threshold_;
  uint64_t small_target_ = 0;
  uint64_t main_target_ = 0;  // also the ghost's size budget
  Table table_;               // tracked objects and ghosts
  Queue small_, main_, ghost_;
};

}  // namespace crescent::cache
