#include "master/object_store.h"

#include <algorithm>
#include <array>
#include <shared_mutex>
#include <thread>

#include "common/hash.h"

namespace crescent::master {

ObjectStore::ObjectStore(const MasterConfig& config)
    : shard_mask_(config.num_shards - 1),
      bloom_(config.bloom_expected_keys, config.bloom_false_positive_rate, config.num_shards) {
  shards_.reserve(config.num_shards);
  for (uint32_t i = 0; i < config.num_shards; ++i)
    shards_.push_back(std::make_unique<ObjectShard>(i));
}

ObjectStore::Located ObjectStore::Locate(std::string_view key) const {
  const uint64_t h = HashKey(key);
  // The low bits pick the Bloom probes; shard by the high bits.
  return {shards_[(h >> 56) & shard_mask_].get(), h};
}

void ObjectStore::ForEachShardInParallel(const std::function<void(ObjectShard&)>& fn) const {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < shards_.size();) {
      fn(*shards_[i]);
    }
  };
  const size_t threads =
      std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), shards_.size());
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (std::thread& h : helpers) h.join();
}

void ObjectStore::Completed(bool hard_pin) {
  live_.fetch_add(1, std::memory_order_relaxed);
  if (hard_pin) hard_pinned_.fetch_add(1, std::memory_order_relaxed);
  pending_.fetch_sub(1, std::memory_order_relaxed);
}

void ObjectStore::CompleteGone(bool hard_pin) {
  live_.fetch_sub(1, std::memory_order_relaxed);
  if (hard_pin) hard_pinned_.fetch_sub(1, std::memory_order_relaxed);
}

void ObjectStore::AddRestored(uint64_t live, uint64_t hard_pinned) {
  live_.fetch_add(live, std::memory_order_relaxed);
  hard_pinned_.fetch_add(hard_pinned, std::memory_order_relaxed);
}

bool ObjectStore::MaybeRebuildBloom() {
  // A restore's completion builds the filter for the restored count itself.
  if (!bloom_ready_.load(std::memory_order_acquire)) return false;
  uint64_t n = live();
  if (n <= bloom_.design_keys()) return false;
  // Another pass already rebuilding leaves this one nothing to do.
  std::unique_lock rebuild(rebuild_mu_, std::try_to_lock);
  if (!rebuild.owns_lock()) return false;
  n = live();
  if (n <= bloom_.design_keys()) return false;  // rebuilt since the first look
  RebuildBloomLocked(std::max<uint64_t>(2 * n, 2 * bloom_.design_keys()));
  return true;
}

void ObjectStore::AddShardToNextBloomLocked(const ObjectShard& shard) {
  // In runs, so that the filter loads the counters of the next keys while it
  // updates these (CountingBloomFilter::AddHashes).
  constexpr size_t kRun = 256;
  std::array<uint64_t, kRun> run;
  size_t n = 0;
  shard.VisitAll([&](uint32_t slot) {
    const ObjectEntry& e = shard.entry(slot);
    if (e.state != EntryState::kComplete) return;
    run[n++] = e.Hash();
    if (n == kRun) {
      bloom_.AddToNext(run);
      n = 0;
    }
  });
  bloom_.AddToNext(std::span<const uint64_t>(run.data(), n));
  bloom_.MarkMigrated(shard.index());
}

void ObjectStore::RebuildBloomLocked(uint64_t design_keys) {
  bloom_.BeginRebuild(design_keys);
  for (const auto& shard : shards_) {
    // Shared lock: readers continue; this shard's writers wait for the scan.
    std::shared_lock lock(shard->mutex());
    AddShardToNextBloomLocked(*shard);
  }
  bloom_.FinishRebuild();
}

bool ObjectStore::BuildBloom() {
  if (bloom_ready_.load(std::memory_order_acquire)) return false;
  {
    std::lock_guard rebuild(rebuild_mu_);
    bloom_.BeginRebuild(std::max<uint64_t>(2 * live(), bloom_.design_keys()));
    // Shared locks: readers go on; a shard's writers wait for its scan.
    ForEachShardInParallel([&](ObjectShard& shard) {
      std::shared_lock lock(shard.mutex());
      AddShardToNextBloomLocked(shard);
    });
    bloom_.FinishRebuild();
  }
  bloom_ready_.store(true, std::memory_order_release);
  return true;
}

void ObjectStore::EnsureKeyIndexes() const {
  if (!key_indexes_pending_.load(std::memory_order_acquire)) return;
  ForEachShardInParallel([](ObjectShard& shard) {
    std::unique_lock lock(shard.mutex());
    if (shard.key_index_deferred()) shard.BuildKeyIndex();
  });
  key_indexes_pending_.store(false, std::memory_order_release);
}

uint64_t ObjectStore::MemoryBytes() const {
  uint64_t bytes = bloom_.MemoryBytes();
  for (const auto& shard : shards_) {
    std::shared_lock lock(shard->mutex());
    bytes += shard->MemoryBytes();
  }
  return bytes;
}

}  // namespace crescent::master
