// The completion of a restore: what is built after the engine starts serving
// (docs/durability.md).
//
// FinishRestore leaves in place everything an answer depends on: the objects
// with their replicas, the segments waiting for their nodes, their
// allocators. What is left only orders eviction or speeds answers up, and
// each part has a stand-in that keeps every answer right until it is built:
//
//  - The policies, filled in record order (the eviction order), then their
//    chain links: a fresh set, built without policy_mu_ and swapped in under
//    it. While policies_filling_ (policy_mu_) the engine's own set stays
//    empty: a PutEnd leaves its admission in late_admits_, admitted after
//    every restored object, in order, as if it came after them; an eviction
//    (for a put) and a snapshot wait for the swap on policies_filled_cv_; a
//    maintenance pass skips eviction, touch flushes and soft-pin expiry
//    (touches stay queued). A restored object is admitted only if it is
//    still live when its turn comes (its shard's lock). A remove frees the
//    entry under the shard lock and then forgets the id under policy_mu_,
//    which while filling also notes it in forgotten_while_filling_: an object
//    removed meanwhile is either skipped by the fill or forgotten at the swap.
//  - Each shard's key index, built from its keys sorted (ObjectShard::
//    BuildKeyIndex) under the shard's exclusive lock. A list or prefix remove
//    first builds those still missing itself (EnsureKeyIndexes), so it never
//    walks an index that lacks a key.
//  - The Bloom filter, through the online rebuild protocol (bloom_index.h):
//    writers keep it exact while shards are added. Until it is swapped in,
//    reads skip it (BloomSaysAbsent) and go to the index: no false negative.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "master/master_service.h"

namespace crescent::master {

void MasterService::AdmitLocked(const Admission& a) {
  if (a.soft_until > clock_.NowMs()) {
    soft_policy_->Insert(a.id, a.size, {.parent = a.info.parent, .history = a.info.history});
    soft_expiry_.push({a.soft_until, a.id});
  } else {
    PolicyOf(a.tier).Insert(a.id, a.size, a.info);
  }
}

void MasterService::AwaitPoliciesFilledLocked(std::unique_lock<std::mutex>& lock) {
  policies_filled_cv_.wait(lock, [this] { return !policies_filling_; });
}

void MasterService::CompleteRestore() {
  std::lock_guard once(restore_done_mu_);
  if (restore_completed_.load(std::memory_order_acquire)) return;
  const auto start = std::chrono::steady_clock::now();
  auto mark = [&](std::atomic<uint64_t>& done_us) {
    done_us.store(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                            std::chrono::steady_clock::now() - start)
                                            .count()),
                  std::memory_order_relaxed);
  };
  auto stopped = [this] { return restore_stop_.load(std::memory_order_relaxed); };
  // Three chains side by side, which share nothing but the shards' locks:
  // the allocators (a put into a restored segment waits for its one); the
  // policies (eviction waits for them); the key indexes, then the Bloom
  // filter. The first two are one thread's work each, the third spreads over
  // the cores. An engine being destroyed stops between steps (and between
  // chunks of the fill).
  std::thread allocators([&] {
    RebuildRestoredAllocators();
    mark(counters_.restore_allocators_done_us);
  });
  std::thread policies([&] {
    if (!stopped()) FillRestoredPolicies();
    mark(counters_.restore_policies_done_us);
  });
  if (!stopped()) EnsureKeyIndexes();
  mark(counters_.restore_key_indexes_done_us);
  if (!stopped()) BuildRestoredBloom();
  mark(counters_.restore_bloom_done_us);
  allocators.join();
  policies.join();
  mark(counters_.restore_completion_us);
  restore_completed_.store(true, std::memory_order_release);
  restore_done_cv_.notify_all();
}

void MasterService::AwaitRestoreCompleted() {
  std::unique_lock lock(restore_done_mu_);
  restore_done_cv_.wait(lock, [this] { return RestoreCompleted(); });
}

void MasterService::RebuildRestoredAllocators() {
  std::lock_guard lock(restore_regions_mu_);
  if (restore_regions_.empty()) return;
  // Each shard's list sorted by segment, then offset, shards in parallel;
  // then each segment's part of every list merged, in offset order, for its
  // allocator (OffsetAllocator::Rebuild sorts nothing it is given sorted).
  auto before = [](const RestoredRegion& a, const RestoredRegion& b) {
    return a.segment != b.segment ? a.segment < b.segment
                                  : a.region.allocation.offset < b.region.allocation.offset;
  };
  ForEachShardInParallel([&](ObjectShard& shard) {
    std::vector<RestoredRegion>& mine = restore_regions_[shard.index()];
    std::sort(mine.begin(), mine.end(), before);
  });
  std::vector<SegmentId> conflicting;
  for (SegmentId id : segments_.DeferredIds()) {
    // Each shard's run of this segment; a heap of their heads by offset.
    struct Run {
      const RestoredRegion* at;
      const RestoredRegion* end;
    };
    std::vector<Run> runs;
    size_t total = 0;
    for (const std::vector<RestoredRegion>& mine : restore_regions_) {
      auto [lo, hi] = std::equal_range(
          mine.begin(), mine.end(), RestoredRegion{id, {}},
          [](const RestoredRegion& a, const RestoredRegion& b) { return a.segment < b.segment; });
      if (lo == hi) continue;
      runs.push_back({&*lo, &*lo + (hi - lo)});
      total += static_cast<size_t>(hi - lo);
    }
    auto later = [](const Run& a, const Run& b) {
      return a.at->region.allocation.offset > b.at->region.allocation.offset;
    };
    std::make_heap(runs.begin(), runs.end(), later);
    std::vector<cache::OffsetAllocator::UsedRegion> used;
    used.reserve(total);
    while (!runs.empty()) {
      std::pop_heap(runs.begin(), runs.end(), later);
      Run& r = runs.back();
      used.push_back(r.at->region);
      if (++r.at == r.end) {
        runs.pop_back();
      } else {
        std::push_heap(runs.begin(), runs.end(), later);
      }
    }
    // A segment whose allocations conflict (two replicas in one range) was
    // not written by this engine: none of its replicas is trusted.
    const Status s = segments_.RebuildAllocator(id, std::move(used));
    if (s.code() == ErrorCode::kCorruptData) conflicting.push_back(id);
  }
  restore_regions_ = {};
  if (conflicting.empty()) return;
  // Logged, so that the next restore does not bring the segment back.
  for (SegmentId id : conflicting) segments_.DropUnrebuildable(id);
  LogUnmounts(conflicting);
  counters_.restore_dropped_conflict.fetch_add(DropSegmentReplicas(conflicting),
                                               std::memory_order_relaxed);
  std::lock_guard policy_lock(policy_mu_);
  SetPolicyCapacitiesLocked();
}

void MasterService::FillRestoredPolicies() {
  // A fresh set, filled without policy_mu_ (the engine's set stays empty
  // meanwhile: nothing is admitted to it and nothing evicts from it).
  Policies fresh = MakePolicies(config_).value();  // Create made these already
  fresh.main->Reserve(restore_admit_count_);
  std::vector<SoftPinExpiry> soft_expiry;
  // The policy's index is far larger than the caches at millions of objects:
  // its slots for the next few inserts are loaded while this one goes in.
  constexpr size_t kAhead = 8;
  for (std::vector<RestoredPut>& admits : restore_admits_) {
    if (restore_stop_.load(std::memory_order_relaxed)) break;
    for (size_t i = 0; i < admits.size(); ++i) {
      if (i + kAhead < admits.size()) fresh.main->PrefetchInsert(admits[i + kAhead].id);
      const RestoredPut& p = admits[i];
      ObjectShard& shard = ShardOf(p.id);
      // Still live: then its entry holds the key (whose hash the policy's
      // history takes) and the soft-pin end the restore gave it.
      uint64_t history;
      TimeMs soft_until;
      RestoredPut now = p;
      {
        std::shared_lock s(shard.mutex());
        const ObjectEntry* e = shard.Resolve(p.id);
        if (e == nullptr) continue;
        history = e->Hash();
        soft_until = e->soft_pin_until();
        // Its tier now: a promoted object whose DRAM segment came back as new
        // memory is on its persistent copy alone.
        now.tier = static_cast<uint8_t>(TierOfEntry(*e));
      }
      AdmitRestored(now, history, soft_until, fresh, &soft_expiry);
    }
    admits = {};  // each chunk's memory goes as soon as it is admitted
  }
  restore_admits_ = {};
  restore_admit_count_ = 0;
  if (!restore_stop_.load(std::memory_order_relaxed)) LinkRestoredChains(fresh);
  {
    std::lock_guard lock(policy_mu_);
    policy_ = std::move(fresh.main);
    soft_policy_ = std::move(fresh.soft);
    pmem_policy_ = std::move(fresh.pmem);
    for (const SoftPinExpiry& e : soft_expiry) soft_expiry_.push(e);
    SetPolicyCapacitiesLocked();
    // Objects removed after their liveness was checked above.
    for (ObjectId id : forgotten_while_filling_) {
      policy_->Remove(id);
      soft_policy_->Remove(id);
      pmem_policy_->Remove(id);
    }
    forgotten_while_filling_ = {};
    JoinPmemPolicyLocked(moved_while_filling_);
    moved_while_filling_ = {};
    for (const Admission& a : late_admits_) {
      ObjectShard& shard = ShardOf(a.id);
      std::shared_lock s(shard.mutex());
      const ObjectEntry* e = shard.Resolve(a.id);
      if (e == nullptr || e->state != EntryState::kComplete) continue;
      s.unlock();
      AdmitLocked(a);
    }
    late_admits_ = {};
    policies_filling_ = false;
    FlushTouchesLocked();
  }
  policies_filled_cv_.notify_all();
}

void MasterService::EnsureKeyIndexes() const {
  if (!key_indexes_pending_.load(std::memory_order_acquire)) return;
  ForEachShardInParallel([](ObjectShard& shard) {
    std::unique_lock lock(shard.mutex());
    if (shard.key_index_deferred()) shard.BuildKeyIndex();
  });
  key_indexes_pending_.store(false, std::memory_order_release);
}

void MasterService::BuildRestoredBloom() {
  if (bloom_ready_.load(std::memory_order_acquire)) return;
  {
    std::lock_guard rebuild(rebuild_mu_);
    bloom_.BeginRebuild(std::max<uint64_t>(2 * live_objects_.load(std::memory_order_relaxed),
                                           bloom_.design_keys()));
    // Shared locks: readers go on; a shard's writers wait for its scan.
    ForEachShardInParallel([&](ObjectShard& shard) {
      std::shared_lock lock(shard.mutex());
      AddShardToNextBloomLocked(shard);
    });
    bloom_.FinishRebuild();
  }
  counters_.bloom_rebuilds.fetch_add(1, std::memory_order_relaxed);
  bloom_ready_.store(true, std::memory_order_release);
}

}  // namespace crescent::master
