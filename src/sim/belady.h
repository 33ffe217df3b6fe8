// BeladyPolicy: the offline optimal reference (Belady's MIN). On eviction it
// drops the cached block whose next reference lies farthest in the future.
//
// It sees the future through the Trace: at construction it computes, for every
// position of the flattened reference stream Trace::blocks, the position of the
// next reference to the same block. It then assumes it is driven by Simulate()
// over that same trace, which makes exactly one Insert() or Access() per
// reference, in stream order; a cursor advances on each such call. Driven any
// other way its choices are meaningless (checked in debug builds).
//
// MIN is optimal for plain per-block hits with forced insertion. The simulator
// counts prefix hits instead, for which MIN is a strong reference but not a
// proven bound.
//
// Victims come from a max-heap of (next use, block) with lazy deletion: an
// entry is live only while it matches the block's current next use. Blocks
// never used again get distinct "never" keys past the end of the stream, so no
// two live entries compare equal. O(log n) per operation.
#pragma once

#include <cstdint>
#include <optional>
#include <queue>
#include <string_view>
#include <utility>
#include <vector>

#include "cache/eviction_policy.h"
#include "sim/trace_reader.h"

namespace crescent::sim {

class BeladyPolicy final : public cache::EvictionPolicy {
 public:
  explicit BeladyPolicy(const Trace& trace);

  void Insert(cache::ObjectId id, uint64_t size, const cache::InsertInfo& info = {}) override;
  void Access(cache::ObjectId id) override;
  void Remove(cache::ObjectId id) override;
  std::optional<cache::ObjectId> Evict(const cache::SpareFn& spare = nullptr) override;

  bool Contains(cache::ObjectId id) const override {
    return id < next_use_.size() && next_use_[id] != kNotCached;
  }
  size_t Count() const override { return count_; }
  uint64_t UsedSize() const override { return used_; }
  void SetCapacity(uint64_t) override {}
  std::string_view Name() const override { return "belady"; }

 private:
  static constexpr uint64_t kNotCached = ~uint64_t{0};
  using Entry = std::pair<uint64_t, BlockId>;  // (next use, block)

  // Consumes one stream position for `id` and returns its next use.
  uint64_t Advance(cache::ObjectId id);
  void Push(BlockId id, uint64_t next);
  void CompactHeap();

  const Trace& trace_;
  std::vector<uint64_t> next_ref_;  // stream position -> next position of that block
  uint64_t cursor_ = 0;             // the stream position of the next Insert/Access

  std::vector<uint64_t> next_use_;  // block -> its next use, or kNotCached
  std::vector<uint64_t> size_;      // block -> its size while cached
  std::priority_queue<Entry> heap_;
  size_t count_ = 0;
  uint64_t used_ = 0;
};

}  // namespace crescent::sim
