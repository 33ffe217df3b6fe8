// ObjectStore: every object's entry, in shards chosen by the key's hash, with
// what answers questions about keys without walking them: the Bloom filter
// (definite misses), each shard's key index (lists and prefix scans), and
// the counts of complete, hard-pinned and pending objects.
//
// Contract:
//  - Its locks are the shards' (ObjectShard::mutex) and rebuild_mu_, which
//    admits one Bloom rebuild at a time and is taken before any shard lock.
//    It never takes a lock of another component.
//  - The filter holds every complete key (the caller adds a key when its
//    put completes and removes it with the object), except while suspended
//    by a restore: BloomSaysAbsent answers false then, and BuildBloom makes
//    it whole again from the shards.
//  - A shard's key index may be deferred (a restore builds them once,
//    sorted); EnsureKeyIndexes builds those still missing, and every walk of
//    an index first calls it.
//  - The counts are statistics (relaxed atomics), kept by the caller that
//    completes or drops an entry, under that entry's shard lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "master/bloom_index.h"
#include "master/master_config.h"
#include "master/object_shard.h"
#include "master/types.h"

namespace crescent::master {

class ObjectStore {
 public:
  explicit ObjectStore(const MasterConfig& config);

  // A key's shard and its hash (computed once per request).
  struct Located {
    ObjectShard* shard;
    uint64_t hash;
  };
  Located Locate(std::string_view key) const;
  ObjectShard& ShardOf(ObjectId id) const { return *shards_[IdShard(id)]; }
  std::span<const std::unique_ptr<ObjectShard>> shards() const { return shards_; }
  size_t shard_count() const { return shards_.size(); }
  // Calls fn for every shard, spread over the cores (one thread per core, the
  // caller's among them); returns when all are done. fn takes its own locks.
  void ForEachShardInParallel(const std::function<void(ObjectShard&)>& fn) const;

  // ---- Counts ----
  uint64_t live() const { return live_.load(std::memory_order_relaxed); }
  uint64_t hard_pinned() const { return hard_pinned_.load(std::memory_order_relaxed); }
  uint64_t pending() const { return pending_.load(std::memory_order_relaxed); }
  void PendingAdded() { pending_.fetch_add(1, std::memory_order_relaxed); }
  void PendingGone() { pending_.fetch_sub(1, std::memory_order_relaxed); }
  // A pending put became a complete object.
  void Completed(bool hard_pin);
  // A complete object went.
  void CompleteGone(bool hard_pin);
  // Objects a restore created (a remove during the restore subtracts at
  // once: the unsigned sums come right once every tally is added).
  void AddRestored(uint64_t live, uint64_t hard_pinned);

  // ---- The Bloom filter ----
  // Whether `hash`'s key is certainly absent; never while suspended.
  bool BloomSaysAbsent(uint64_t hash) const {
    return bloom_ready_.load(std::memory_order_acquire) && !bloom_.MayContain(hash);
  }
  void BloomAdd(uint32_t shard, uint64_t hash) { bloom_.Add(shard, hash); }
  void BloomRemove(uint32_t shard, uint64_t hash) { bloom_.Remove(shard, hash); }
  const BloomIndex& bloom() const { return bloom_; }
  // Rebuilds the filter larger once the complete objects outgrow it (twice
  // the count); true when it did. Not while suspended, nor while another
  // rebuild runs.
  bool MaybeRebuildBloom();
  // A restore: the filter answers nothing until BuildBloom.
  void SuspendBloom() { bloom_ready_.store(false, std::memory_order_release); }
  // Builds the suspended filter from every shard, in parallel, for the
  // objects there are; true when it built one (false: it was not suspended).
  bool BuildBloom();

  // ---- Key indexes ----
  // Some shard may have no key index now (a restore defers them).
  void KeyIndexesDeferred() { key_indexes_pending_.store(true, std::memory_order_release); }
  // Builds the key index of every shard still without one (each under its
  // exclusive lock); a no-op once all are built.
  void EnsureKeyIndexes() const;

  // The shards' and the filter's memory (a scrape: takes each shard's lock).
  uint64_t MemoryBytes() const;

 private:
  // Adds one shard's complete keys to the rebuild's next filter, then counts
  // it migrated. Under the shard's lock (either kind).
  void AddShardToNextBloomLocked(const ObjectShard& shard);
  // rebuild_mu_ held.
  void RebuildBloomLocked(uint64_t design_keys);

  std::vector<std::unique_ptr<ObjectShard>> shards_;
  const uint32_t shard_mask_;
  BloomIndex bloom_;
  // One rebuild at a time: maintenance may run on several threads, and
  // BloomIndex's rebuild protocol has a single builder.
  std::mutex rebuild_mu_;
  // Stored with release after a built filter is swapped in, loaded with acquire.
  std::atomic<bool> bloom_ready_{true};
  mutable std::atomic<bool> key_indexes_pending_{false};
  std::atomic<uint64_t> live_{0};         // complete objects
  std::atomic<uint64_t> hard_pinned_{0};  // of which hard-pinned
  std::atomic<uint64_t> pending_{0};      // puts in flight
};

}  // namespace crescent::master
