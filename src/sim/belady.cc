#include "sim/belady.h"

#include <cassert>

namespace crescent::sim {

BeladyPolicy::BeladyPolicy(const Trace& trace)
    : trace_(trace),
      next_ref_(trace.blocks.size()),
      next_use_(trace.distinct_blocks(), kNotCached),
      size_(trace.distinct_blocks(), 0) {
  const uint64_t n = trace.blocks.size();
  // One backward pass. A last reference gets n + its position: past every real
  // position, and distinct, so ties cannot make a stale heap entry look live.
  std::vector<uint64_t> later(trace.distinct_blocks(), kNotCached);
  for (uint64_t pos = n; pos-- > 0;) {
    BlockId b = trace.blocks[pos];
    next_ref_[pos] = later[b] == kNotCached ? n + pos : later[b];
    later[b] = pos;
  }
}

uint64_t BeladyPolicy::Advance(cache::ObjectId id) {
  assert(cursor_ < next_ref_.size() && trace_.blocks[cursor_] == id);
  if (cursor_ >= next_ref_.size()) return kNotCached - 1;  // driven past the trace
  return next_ref_[cursor_++];
}

void BeladyPolicy::Push(BlockId id, uint64_t next) {
  next_use_[id] = next;
  heap_.emplace(next, id);
  if (heap_.size() > 4 * count_ + 1024) CompactHeap();
}

void BeladyPolicy::CompactHeap() {
  std::vector<Entry> live;
  live.reserve(count_);
  while (!heap_.empty()) {
    auto [next, id] = heap_.top();
    heap_.pop();
    if (next_use_[id] == next) live.emplace_back(next, id);
  }
  heap_ = std::priority_queue<Entry>(std::less<Entry>(), std::move(live));
}

void BeladyPolicy::Insert(cache::ObjectId id, uint64_t size, const cache::InsertInfo& /*info*/) {
  assert(id < next_use_.size() && next_use_[id] == kNotCached);
  uint64_t next = Advance(id);
  if (id >= next_use_.size() || next_use_[id] != kNotCached) return;
  size_[id] = size;
  ++count_;
  used_ += size;
  Push(static_cast<BlockId>(id), next);
}

void BeladyPolicy::Access(cache::ObjectId id) {
  uint64_t next = Advance(id);
  if (!Contains(id)) return;
  Push(static_cast<BlockId>(id), next);
}

void BeladyPolicy::Remove(cache::ObjectId id) {
  if (!Contains(id)) return;
  next_use_[id] = kNotCached;  // its heap entries are now stale
  --count_;
  used_ -= size_[id];
}

std::optional<cache::ObjectId> BeladyPolicy::Evict(const cache::SpareFn& spare) {
  std::vector<Entry> spared;
  std::optional<cache::ObjectId> victim;
  while (!heap_.empty()) {
    auto [next, id] = heap_.top();
    heap_.pop();
    if (next_use_[id] != next) continue;  // stale
    if (spare && spared.size() < count_ && spare(id)) {
      spared.emplace_back(next, id);
      if (spared.size() == count_) break;  // everything was spared
      continue;
    }
    victim = id;
    Remove(id);
    break;
  }
  for (const Entry& e : spared) heap_.push(e);
  return victim;
}

}  // namespace crescent::sim
