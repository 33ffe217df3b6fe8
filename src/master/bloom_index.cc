#include "master/bloom_index.h"

namespace crescent::master {

BloomIndex::BloomIndex(uint64_t expected_keys, double false_positive_rate, uint32_t num_shards)
    : fpr_(false_positive_rate),
      num_shards_(num_shards),
      migrated_(new std::atomic<bool>[num_shards]),
      design_keys_(expected_keys) {
  owned_.push_back(
      std::make_unique<cache::CountingBloomFilter>(expected_keys, false_positive_rate));
  current_.store(owned_.back().get());
  for (uint32_t s = 0; s < num_shards; ++s) migrated_[s].store(false);
}

void BloomIndex::Add(uint32_t shard, uint64_t hash) {
  cache::CountingBloomFilter* next = next_.load();
  cache::CountingBloomFilter* cur = current_.load();
  cur->AddHash(hash);
  if (next != nullptr && next != cur && migrated_[shard].load()) next->AddHash(hash);
}

void BloomIndex::Remove(uint32_t shard, uint64_t hash) {
  cache::CountingBloomFilter* next = next_.load();
  cache::CountingBloomFilter* cur = current_.load();
  cur->RemoveHash(hash);
  if (next != nullptr && next != cur && migrated_[shard].load()) next->RemoveHash(hash);
}

double BloomIndex::EstimatedFalsePositiveRate() const {
  return current_.load(std::memory_order_acquire)->EstimatedFalsePositiveRate();
}

uint64_t BloomIndex::MemoryBytes() const {
  return current_.load(std::memory_order_acquire)->memory_bytes();
}

void BloomIndex::BeginRebuild(uint64_t design_keys) {
  for (uint32_t s = 0; s < num_shards_; ++s) migrated_[s].store(false);
  auto filter = std::make_unique<cache::CountingBloomFilter>(design_keys, fpr_);
  cache::CountingBloomFilter* raw = filter.get();
  {
    std::lock_guard lock(owned_mu_);
    owned_.push_back(std::move(filter));
  }
  design_keys_.store(design_keys, std::memory_order_relaxed);
  next_.store(raw);
}

void BloomIndex::FinishRebuild() {
  current_.store(next_.load());
  next_.store(nullptr);
}

}  // namespace crescent::master
