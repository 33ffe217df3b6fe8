// BloomIndex: the master's negative-lookup filter, with online rebuild.
//
// Readers call MayContain() lock-free on the current CountingBloomFilter. When
// the live key count outgrows the design load, the maintenance thread builds a
// larger filter beside it without blocking readers:
//
//   BeginRebuild(design)   publishes `next`; no shard is migrated yet
//   for each shard s:      under s's lock: AddToNext(hash) for every complete
//                          key, then MarkMigrated(s) before unlocking
//   FinishRebuild()        current = next; next = null
//
// Writers (Add/Remove) run under their shard's exclusive lock. They always update
// `current`, and update `next` too once their shard is migrated, so `next` holds
// exactly the live keys when it is swapped in. Writers load next_ before current_
// (both sequentially consistent), so a writer never misses the filter that is
// about to become current. Retired filters are kept until destruction: a reader
// may still hold one, and the total is bounded by the geometric growth.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "cache/counting_bloom_filter.h"

namespace crescent::master {

class BloomIndex {
 public:
  BloomIndex(uint64_t expected_keys, double false_positive_rate, uint32_t num_shards);

  bool MayContain(uint64_t hash) const {
    return current_.load(std::memory_order_acquire)->MayContainHash(hash);
  }
  void Add(uint32_t shard, uint64_t hash);
  void Remove(uint32_t shard, uint64_t hash);

  uint64_t design_keys() const { return design_keys_.load(std::memory_order_relaxed); }
  double EstimatedFalsePositiveRate() const;
  uint64_t MemoryBytes() const;

  // Rebuild protocol (maintenance thread only; see the header comment).
  void BeginRebuild(uint64_t design_keys);
  void AddToNext(std::span<const uint64_t> hashes) { next_.load()->AddHashes(hashes); }
  void MarkMigrated(uint32_t shard) { migrated_[shard].store(true); }
  void FinishRebuild();

 private:
  const double fpr_;
  const uint32_t num_shards_;
  std::atomic<cache::CountingBloomFilter*> current_;
  std::atomic<cache::CountingBloomFilter*> next_{nullptr};
  std::unique_ptr<std::atomic<bool>[]> migrated_;
  std::atomic<uint64_t> design_keys_;
  std::mutex owned_mu_;  // guards owned_
  std::vector<std::unique_ptr<cache::CountingBloomFilter>> owned_;
};

}  // namespace crescent::master
