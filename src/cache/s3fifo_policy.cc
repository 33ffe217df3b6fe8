#include "cache/s3fifo_policy.h"

#include <algorithm>
#include <cassert>

namespace crescent::cache {
namespace {

constexpr uint8_t kMaxFreq = 3;
// A queue is compacted when its dead handles outnumber the live ones by this.
constexpr size_t kCompactSlack = 64;

}  // namespace

S3FifoPolicy::S3FifoPolicy(const PolicyOptions& options)
    : small_ratio_(std::clamp(options.s3fifo_small_ratio, 0.0, 1.0)),
      move_threshold_(static_cast<uint8_t>(std::clamp(options.s3fifo_move_threshold, 1, 3))) {
  SetCapacity(options.capacity);
}

void S3FifoPolicy::SetCapacity(uint64_t capacity) {
  small_target_ =
      std::min(capacity, static_cast<uint64_t>(static_cast<double>(capacity) * small_ratio_));
  main_target_ = capacity - small_target_;
  TrimGhost();
}

bool S3FifoPolicy::Contains(ObjectId id) const {
  const Slot slot = table_.Find(id);
  return slot != Table::kNil && table_.at(slot).where != Where::kGhost;
}

void S3FifoPolicy::Insert(ObjectId id, uint64_t size, const InsertInfo& info) {
  const uint64_t history = info.history == kSameAsId ? id : info.history;
  if (history == id) {
    // The ghost, if any, is filed under the id itself: one lookup adds a new
    // id, and a ghost hit reuses the ghost's node in place.
    Slot slot = table_.Add(id);
    if (slot != Table::kNil) {
      table_.at(slot).size = size;
      table_.at(slot).history = history;
      Push(small_, slot);
      return;
    }
    slot = table_.Find(id);
    Node& node = table_.at(slot);
    assert(node.where == Where::kGhost && "Insert() of an id that is already tracked");
    if (node.where != Where::kGhost) return;
    // Ghost hit: it left S recently, so it skips S. The new generation kills
    // its ghost handle.
    const uint64_t ghost_size = node.size;
    ++node.generation;
    node.size = size;
    node.freq = 0;
    node.where = Where::kMain;
    Push(main_, slot);
    NoteDead(ghost_, Where::kGhost, ghost_size);
    return;
  }
  // A key re-inserted under a new id (the master): its ghost is filed under the
  // history key; erasing that node kills the ghost handle.
  bool ghost_hit = false;
  if (Slot ghost = table_.Find(history);
      ghost != Table::kNil && table_.at(ghost).where == Where::kGhost) {
    const uint64_t ghost_size = table_.at(ghost).size;
    table_.Erase(ghost);
    NoteDead(ghost_, Where::kGhost, ghost_size);
    ghost_hit = true;
  }
  const Slot slot = table_.Add(id);
  assert(slot != Table::kNil && "Insert() of an id that is already tracked");
  if (slot == Table::kNil) return;
  Node& node = table_.at(slot);
  node.size = size;
  node.history = history;
  if (ghost_hit) {
    node.where = Where::kMain;
    Push(main_, slot);
  } else {
    Push(small_, slot);
  }
}

void S3FifoPolicy::Access(ObjectId id) {
  ended_.Clear(id);
  const Slot slot = table_.Find(id);
  if (slot == Table::kNil) return;
  Node& node = table_.at(slot);
  if (node.where != Where::kGhost) node.freq = std::min<uint8_t>(node.freq + 1, kMaxFreq);
}

void S3FifoPolicy::Remove(ObjectId id) {
  ended_.Clear(id);
  const Slot slot = table_.Find(id);
  if (slot == Table::kNil) return;
  const Node& node = table_.at(slot);
  if (node.where == Where::kGhost) return;
  const Where where = node.where;
  const uint64_t size = node.size;
  table_.Erase(slot);
  NoteDead(QueueOf(where), where, size);
}

std::optional<ObjectId> S3FifoPolicy::Evict(const SpareFn& spare) {
  if (auto victim = ended_.Evict(*this, spare)) return victim;
  if (Count() == 0) return std::nullopt;
  Round round{spare, Count()};
  bool from_small = small_.live > 0 && (small_.used >= small_target_ || main_.live == 0);
  while (!round.Exhausted()) {
    if (small_.live == 0) from_small = false;
    if (main_.live == 0) from_small = true;
    auto victim = from_small ? EvictSmall(round) : EvictMain(round);
    if (victim) return victim;
    // S drained into M, or every object left in one queue was spared: try
    // the other, so that nullopt means every tracked object was spared.
    from_small = !from_small;
  }
  return std::nullopt;
}

std::optional<ObjectId> S3FifoPolicy::EvictSmall(Round& round) {
  size_t returned = 0;  // spared objects put back at S's head by this call
  // Once every live object of S is one put back, S has been gone through.
  while (small_.live > returned) {
    const Handle handle = PopLiveTail(small_, Where::kSmall);
    Node& node = table_.at(handle.slot);
    bool spared = false;
    if (node.freq < move_threshold_) {
      if (!round.Spares(node.id)) {
        --small_.live;
        small_.used -= node.size;
        const ObjectId victim = node.id;
        const uint64_t size = node.size;
        const uint64_t history = node.history;
        Slot ghost = handle.slot;
        if (history != victim) {
          // Refile the memory under the key identity. If that key is taken
          // (only by a colliding history key), the ghost is simply not kept.
          table_.Erase(handle.slot);
          ghost = table_.Add(history);
        }
        if (ghost != Table::kNil) {
          Node& g = table_.at(ghost);  // `node` may be stale after Add()
          g.where = Where::kGhost;
          g.freq = 0;
          g.size = size;
          g.history = history;
          ghost_.handles.push_back(Handle{ghost, g.generation});
          ++ghost_.live;
          ghost_.used += size;
        }
        TrimGhost();  // may forget this very key at once if G has no room
        return victim;
      }
      spared = true;
      node.freq = std::min<uint8_t>(node.freq + 1, kMaxFreq);
      if (node.freq < move_threshold_) {
        small_.handles.push_back(handle);  // still live: back to S's head
        ++returned;
        if (round.Exhausted()) return std::nullopt;
        continue;
      }
    } else {
      round.Progress();
    }
    // Promote to M, making room there first so that the promoted object is not
    // itself a candidate. Its hits earned the move and are spent on it. A
    // spared object moves without making room: another pass over M would spend
    // the spare budget before the rest of S is offered; M overshoots instead.
    --small_.live;
    small_.used -= node.size;
    std::optional<ObjectId> victim;
    if (!spared && !round.main_all_spared && main_.live > 0 &&
        main_.used + node.size > main_target_) {
      victim = EvictMain(round);  // erases another slot; `node` stays valid
    }
    node.where = Where::kMain;
    node.freq = 0;
    Push(main_, handle.slot);
    if (victim || round.Exhausted()) return victim;
  }
  return std::nullopt;
}

std::optional<ObjectId> S3FifoPolicy::EvictMain(Round& round) {
  size_t spared = 0;  // spared objects sent round since the last decrement
  // Once as many as M holds were spared in a row, M has been gone through.
  while (main_.live > spared) {
    const Handle handle = PopLiveTail(main_, Where::kMain);
    Node& node = table_.at(handle.slot);
    if (node.freq > 0) {
      --node.freq;
      main_.handles.push_back(handle);
      round.Progress();
      spared = 0;
      continue;
    }
    if (round.Spares(node.id)) {
      // One hit (freq 1), spent at once on going round: back to M's head at 0.
      main_.handles.push_back(handle);
      ++spared;
      if (round.Exhausted()) return std::nullopt;
      continue;
    }
    --main_.live;
    main_.used -= node.size;
    const ObjectId victim = node.id;
    table_.Erase(handle.slot);
    return victim;
  }
  if (spared > 0) round.main_all_spared = true;
  return std::nullopt;
}

bool S3FifoPolicy::Round::Spares(ObjectId id) {
  if (!spare || !spare(id)) return false;
  ++consecutive;
  return true;
}

S3FifoPolicy::Queue& S3FifoPolicy::QueueOf(Where where) {
  switch (where) {
    case Where::kSmall: return small_;
    case Where::kMain: return main_;
    case Where::kGhost: return ghost_;
  }
  return ghost_;
}

bool S3FifoPolicy::IsLive(Handle handle, Where where) const {
  const Node& node = table_.at(handle.slot);
  return node.generation == handle.generation && node.where == where;
}

S3FifoPolicy::Handle S3FifoPolicy::PopLiveTail(Queue& queue, Where where) {
  assert(queue.live > 0);
  while (!IsLive(queue.handles.front(), where)) queue.handles.pop_front();
  const Handle tail = queue.handles.front();
  queue.handles.pop_front();
  // The next tail is touched by the next eviction; a million objects do not
  // fit in cache, so start loading it now.
  if (!queue.handles.empty()) table_.Prefetch(queue.handles.front().slot);
  return tail;
}

void S3FifoPolicy::Push(Queue& queue, Slot slot) {
  const Node& node = table_.at(slot);
  queue.handles.push_back(Handle{slot, node.generation});
  ++queue.live;
  queue.used += node.size;
}

void S3FifoPolicy::NoteDead(Queue& queue, Where where, uint64_t size) {
  --queue.live;
  queue.used -= size;
  if (queue.handles.size() > 2 * queue.live + kCompactSlack) {
    std::erase_if(queue.handles, [&](Handle handle) { return !IsLive(handle, where); });
  }
}

void S3FifoPolicy::TrimGhost() {
  while (ghost_.live > 0 && ghost_.used > main_target_) {
    const Handle handle = PopLiveTail(ghost_, Where::kGhost);
    // Each call forgets about one cold ghost: also start on the index entry
    // of the next one, whose node PopLiveTail fetched last time.
    if (!ghost_.handles.empty()) table_.PrefetchIndex(table_.at(ghost_.handles.front().slot).id);
    --ghost_.live;
    ghost_.used -= table_.at(handle.slot).size;
    table_.Erase(handle.slot);
  }
}

}  // namespace crescent::cache
