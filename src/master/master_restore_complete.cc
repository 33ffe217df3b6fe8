// The completion of a restore: what is built after the engine starts serving
// (docs/durability.md).
//
// FinishRestore leaves in place everything an answer depends on: the objects
// with their replicas, the segments waiting for their nodes, their
// allocators. What is left only orders eviction or speeds answers up, and
// each part has a stand-in that keeps every answer right until it is built:
//
//  - The policies, filled in record order (the eviction order), then their
//    chain links: a fresh set, built without the policy set's lock and
//    swapped in under it (PolicySet::BeginFill, EndFill); then, under the
//    same hold, the marks of the logged session hints, before the touches
//    queued meanwhile are flushed. Meanwhile the
//    engine's own set stays empty: a PutEnd's admission is deferred, and
//    admitted after every restored object, in order, as if it came after
//    them; an eviction (for a put), a snapshot and a session hint wait for the swap; a
//    maintenance pass skips eviction, touch flushes and soft-pin expiry
//    (touches stay queued). A restored object is admitted only if it is
//    still live when its turn comes (its shard's lock). A remove frees the
//    entry under the shard lock and then forgets the id in the policy set,
//    which while filling also notes it: an object removed meanwhile is
//    either skipped by the fill or forgotten at the swap.
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

void MasterService::CompleteRestore() {
  std::lock_guard once(restore_.done_mu);
  if (restore_.completed.load(std::memory_order_acquire)) return;
  const auto start = std::chrono::steady_clock::now();
  auto mark = [&](std::atomic<uint64_t>& done_us) {
    done_us.store(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                            std::chrono::steady_clock::now() - start)
                                            .count()),
                  std::memory_order_relaxed);
  };
  auto stopped = [this] { return restore_.stop.load(std::memory_order_relaxed); };
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
  if (!stopped()) objects_.EnsureKeyIndexes();
  mark(counters_.restore_key_indexes_done_us);
  if (!stopped()) BuildRestoredBloom();
  mark(counters_.restore_bloom_done_us);
  allocators.join();
  policies.join();
  mark(counters_.restore_completion_us);
  restore_.completed.store(true, std::memory_order_release);
  restore_.done_cv.notify_all();
}

void MasterService::AwaitRestoreCompleted() {
  std::unique_lock lock(restore_.done_mu);
  restore_.done_cv.wait(lock, [this] { return RestoreCompleted(); });
}

void MasterService::RebuildRestoredAllocators() {
  std::lock_guard lock(restore_.regions_mu);
  if (restore_.regions.empty()) return;
  // Each shard's list sorted by segment, then offset, shards in parallel;
  // then each segment's part of every list merged, in offset order, for its
  // allocator (OffsetAllocator::Rebuild sorts nothing it is given sorted).
  auto before = [](const RestoreState::Region& a, const RestoreState::Region& b) {
    return a.segment != b.segment ? a.segment < b.segment
                                  : a.region.allocation.offset < b.region.allocation.offset;
  };
  objects_.ForEachShardInParallel([&](ObjectShard& shard) {
    std::vector<RestoreState::Region>& mine = restore_.regions[shard.index()];
    std::sort(mine.begin(), mine.end(), before);
  });
  std::vector<SegmentId> conflicting;
  for (SegmentId id : segments_.DeferredIds()) {
    // Each shard's run of this segment; a heap of their heads by offset.
    struct Run {
      const RestoreState::Region* at;
      const RestoreState::Region* end;
    };
    std::vector<Run> runs;
    size_t total = 0;
    for (const std::vector<RestoreState::Region>& mine : restore_.regions) {
      auto [lo, hi] =
          std::equal_range(mine.begin(), mine.end(), RestoreState::Region{id, {}},
                           [](const RestoreState::Region& a, const RestoreState::Region& b) {
                             return a.segment < b.segment;
                           });
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
  restore_.regions = {};
  if (conflicting.empty()) return;
  // Logged, so that the next restore does not bring the segment back.
  for (SegmentId id : conflicting) segments_.DropUnrebuildable(id);
  LogUnmounts(conflicting);
  counters_.restore_dropped_conflict.fetch_add(DropSegmentReplicas(conflicting),
                                               std::memory_order_relaxed);
  SetPolicyCapacities();
}

void MasterService::FillRestoredPolicies() {
  // A fresh set, filled without the policy set's lock (the engine's set stays empty
  // meanwhile: nothing is admitted to it and nothing evicts from it).
  Policies fresh = PolicySet::Make(config_).value();  // Create made these already
  fresh.main->Reserve(restore_.admit_count);
  std::vector<SoftPinExpiry> soft_expiry;
  // Tenants' objects, for their tenants' orders (tenant_orders.h) once the
  // fill is swapped in.
  std::vector<std::pair<std::string, PolicySet::Admission>> tenant_admits;
  // The policy's index is far larger than the caches at millions of objects:
  // its slots for the next few inserts are loaded while this one goes in.
  constexpr size_t kAhead = 8;
  for (std::vector<RestoredPut>& admits : restore_.admits) {
    if (restore_.stop.load(std::memory_order_relaxed)) break;
    for (size_t i = 0; i < admits.size(); ++i) {
      if (i + kAhead < admits.size()) fresh.main->PrefetchInsert(admits[i + kAhead].id);
      const RestoredPut& p = admits[i];
      ObjectShard& shard = objects_.ShardOf(p.id);
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
        if (IsTenantKey(e->key_view())) {
          tenant_admits.push_back(
              {std::string(TenantOfKey(e->key_view())),
               {.id = p.id, .size = p.bytes, .info = {.history = history}, .tenant = {}}});
        }
      }
      AdmitRestored(now, history, soft_until, fresh, &soft_expiry);
    }
    admits = {};  // each chunk's memory goes as soon as it is admitted
  }
  restore_.admits = {};
  restore_.admit_count = 0;
  if (!restore_.stop.load(std::memory_order_relaxed)) LinkRestoredChains(fresh);
  // Swapped in; then what came meanwhile is replayed on it (objects removed
  // after the walk above found them live, tier moves, PutEnds' admissions).
  PolicyLock order = policies_.Lock();
  order.EndFill(
      std::move(fresh), soft_expiry, segments_.capacity(Tier::kDram),
      segments_.capacity(Tier::kPmem),
      [&](ObjectId id) {
        ObjectShard& shard = objects_.ShardOf(id);
        std::shared_lock s(shard.mutex());
        const ObjectEntry* e = shard.Resolve(id);
        return e != nullptr && e->state == EntryState::kComplete;
      },
      clock_.NowMs());
  for (const auto& [tenant, a] : tenant_admits) {
    // Only those the swap still found live (a remove since forgot them).
    if (order.Of(Tier::kDram).Contains(a.id) || order.pmem().Contains(a.id) ||
        order.soft().Contains(a.id)) {
      order.tenants().Admit(tenant, a.id, a.size, a.info);
    }
  }
  ApplyRestoredEnds(order);
  FlushTouchesLocked(order);
}

void MasterService::BuildRestoredBloom() {
  if (objects_.BuildBloom()) counters_.bloom_rebuilds.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace crescent::master
