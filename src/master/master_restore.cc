// Restore: rebuilding the engine from a snapshot's records and the log after
// it (docs/durability.md), before it serves anything.
//
// Records are applied as they come, each setting a key's or a segment's whole
// state, so a record the snapshot already reflects changes nothing. Segments
// are restored unmounted (SegmentTable::Restore): their replicas are kept but
// not readable until the node takes the segment over. Replicas of segments
// that are not restored at the end (the records unmounted them, or never
// mounted them) are dropped once, at FinishRestore: a put can end with a
// replica on a segment after that segment's unmount record (its end was
// logged before the unmount's sweep reached its shard), so a drop at the
// unmount record would miss it. Segment ids are never reused across this:
// the table remembers each slot's last id, and a mount after the restore
// takes the next one.
#include <absl/container/flat_hash_set.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "master/master_service.h"

namespace crescent::master {

void MasterService::ReserveForRestore(uint64_t objects) {
  // Keys spread over the shards by hash: a sixteenth more than the mean
  // leaves room for the spread (a few hundred keys at 10M).
  const uint64_t per_shard = objects / objects_.shard_count();
  for (const auto& shard : objects_.shards()) {
    std::unique_lock lock(shard->mutex());
    shard->Reserve(per_shard + per_shard / 16 + 16);
  }
}

void MasterService::BeginRestore() {
  if (restore_.active) return;
  restore_.active = true;
  restore_.completed.store(false, std::memory_order_release);
  // Restored keys reach the filter only at the completion; until then it
  // would answer no for them.
  objects_.SuspendBloom();
  restore_.chains.resize(objects_.shard_count());
  restore_.ended.resize(objects_.shard_count());
  // The key indexes are built once, sorted, at the completion; the entries'
  // blocks come from the arena until FinishRestore.
  for (const auto& shard : objects_.shards()) {
    std::unique_lock lock(shard->mutex());
    shard->DeferKeyIndex();
    shard->UseBlockArena(true);
  }
}

void MasterService::ApplySegmentRecord(const LogRecord& r) {
  if (r.type == LogRecordType::kSegmentMounted) {
    // A segment of the same name it replaces is no longer restored.
    segments_.Restore(r.segment, r.spec);
  } else {
    segments_.ForgetRestored(r.segment);
  }
}

void MasterService::AddRestoredTally(const RestoreTally& t) {
  objects_.AddRestored(t.live, t.hard_pinned);
}

bool MasterService::ApplyObjectRecord(const LogRecord& r, const Located& loc, RestoredPut* admit,
                                      RestoreTally* tally) {
  ObjectShard& shard = *loc.shard;
  // What a record replaces, removes or drops needs no word to the policies:
  // they are filled only at the completion, from the objects live then.
  {
    const uint32_t slot = shard.Find(r.key, loc.hash);
    switch (r.type) {
      case LogRecordType::kPutEnded: {
        if (!ValidateKey(r.key).ok() || r.replicas.empty() || r.replicas.size() > 255 ||
            r.size == 0 || r.size > kMaxObjectSize) {
          return false;
        }
        // Soft-pin ends are on the old process's steady clock, which runs on
        // across a restart of the process (not of the host): one already past
        // is dropped.
        // (The clock is read only for a pinned put: most have none.)
        const TimeMs soft_until =
            r.soft_pin_until != 0 && r.soft_pin_until > clock_.NowMs() ? r.soft_pin_until : 0;
        // A later put of the key replaces the earlier one.
        if (slot != kNoSlot) RemoveLocked(shard, slot);
        const uint32_t created = shard.Create(r.key, loc.hash, r.replicas, soft_until);
        ObjectEntry& e = shard.entry(created);
        e.size = r.size;
        e.hard_pin = r.hard_pin ? 1 : 0;
        e.checksum = r.checksum;
        shard.Publish(created);
        tenants_.Charge(r.key, r.size);
        tenants_.Completed(r.key);
        ++tally->live;
        if (r.hard_pin) ++tally->hard_pinned;
        if (!r.hard_pin) {
          // The tier of its replicas' segments (DRAM when any is there;
          // restored segments keep their specs): each tier's policy gets its
          // objects in record order.
          *admit = {.id = shard.IdOf(created),
                    .bytes = r.size * r.replicas.size(),
                    .tier = static_cast<uint8_t>(TierOfEntry(e))};
          if (!r.parent_key.empty()) {
            RestoreState::Chains& chains = restore_.chains[shard.index()];
            chains.child.push_back(admit->id);
            chains.keys += r.parent_key;
            chains.key_end.push_back(chains.keys.size());
          }
        }
        break;
      }
      case LogRecordType::kObjectRemoved:
        if (slot != kNoSlot) RemoveLocked(shard, slot);
        break;
      case LogRecordType::kReplicaDropped: {
        if (slot == kNoSlot) break;
        std::optional<ReplicaSlot> dropped;
        const std::vector<ReplicaSlot> keep =
            shard.entry(slot).ReplicasExcept(r.segment, r.offset, &dropped);
        if (!dropped) break;
        if (keep.empty()) {
          RemoveLocked(shard, slot);
        } else {
          shard.SetReplicas(slot, keep);
        }
        break;
      }
      case LogRecordType::kSessionEnded:
        if (slot != kNoSlot) NoteRestoredEnd(shard, slot);
        break;
      default: return false;
    }
  }
  return true;
}

void MasterService::AdmitRestored(const RestoredPut& p, uint64_t history, TimeMs soft_until,
                                  Policies& into, std::vector<SoftPinExpiry>* soft_expiry) {
  if (soft_until != 0) {
    into.soft->Insert(p.id, p.bytes, {.history = history});
    soft_expiry->push_back({soft_until, p.id});
  } else {
    cache::EvictionPolicy& policy =
        static_cast<Tier>(p.tier) == Tier::kPmem ? *into.pmem : *into.main;
    policy.Insert(p.id, p.bytes, {.history = history});
  }
}

void MasterService::ApplyRestored(const LogRecord& r) {
  BeginRestore();
  ++restore_.records;
  if (r.type == LogRecordType::kSegmentMounted || r.type == LogRecordType::kSegmentUnmounted) {
    ApplySegmentRecord(r);
    return;
  }
  RestoredPut admit;
  RestoreTally tally;
  const Located loc = objects_.Locate(r.key);
  bool applied;
  {
    std::unique_lock lock(loc.shard->mutex());
    applied = ApplyObjectRecord(r, loc, &admit, &tally);
  }
  AddRestoredTally(tally);
  if (!applied) {
    ++restore_.skipped;
    return;
  }
  if (admit.id == cache::kNoParent) return;
  if (restore_.admits.empty() || restore_.admits.back().size() >= 4096) {
    restore_.admits.emplace_back().reserve(4096);
  }
  restore_.admits.back().push_back(admit);
  ++restore_.admit_count;
}

MasterService::RestoreSummary MasterService::FinishRestore(int64_t grace_ms,
                                                           bool complete_in_background) {
  RestoreSummary out;
  out.records = restore_.records;
  restore_.scratch = {};
  for (const auto& shard : objects_.shards()) {
    std::unique_lock lock(shard->mutex());
    shard->UseBlockArena(false);
  }
  // One sweep, shards in parallel: drop replicas on segments that are not
  // restored (unmounted, or never named by a record), and gather each
  // restored segment's allocations, per shard; the completion rebuilds the
  // allocators from them (RebuildRestoredAllocators). From here on a Free on
  // a restored segment is kept for its rebuilt allocator.
  // (A second call, with the restore already ended, only sweeps.)
  const bool ending = restore_.active;
  absl::flat_hash_set<SegmentId> restored;
  for (SegmentId id : segments_.RestoredIds()) {
    restored.insert(id);
    if (ending) segments_.DeferAllocator(id);
  }
  std::vector<std::vector<RestoreState::Region>> shard_regions(objects_.shard_count());
  std::atomic<uint64_t> dropped{0};
  objects_.ForEachShardInParallel([&](ObjectShard& shard) {
    std::vector<RestoreState::Region>& mine = shard_regions[shard.index()];
    if (ending) {
      std::shared_lock lock(shard.mutex());
      mine.reserve(shard.size());  // one replica each, mostly: no regrowth
    }
    dropped.fetch_add(
        SweepShardReplicas(
            shard, [&](SegmentId s) { return restored.contains(s); },
            [&](const ObjectEntry& e) {
              if (!ending) return;
              for (size_t i = 0; i < e.num_replicas; ++i) {
                const ReplicaSlot k = e.replica(i);
                mine.push_back(
                    {k.segment,
                     {cache::Allocation{k.offset, k.alloc_node, k.alloc_generation}, e.size}});
              }
            }),
        std::memory_order_relaxed);
  });
  out.dropped_unmounted = dropped.load(std::memory_order_relaxed);
  if (ending) {
    std::lock_guard lock(restore_.regions_mu);
    restore_.regions = std::move(shard_regions);
  }
  segments_.FinishRestore(clock_.NowMs() + grace_ms);
  if (ending) {
    // What is left is built while the engine serves (master_restore_complete.cc).
    restore_.active = false;
    policies_.Lock().BeginFill();
    objects_.KeyIndexesDeferred();
  }
  out.objects = objects_.live();
  out.segments = segments_.restored_count();
  out.skipped = restore_.skipped;
  counters_.restored_objects.store(out.objects, std::memory_order_relaxed);
  counters_.restored_segments.store(out.segments, std::memory_order_relaxed);
  counters_.restore_dropped_unmounted.fetch_add(out.dropped_unmounted, std::memory_order_relaxed);
  if (ending && complete_in_background) {
    if (restore_.thread.joinable()) restore_.thread.join();  // an earlier restore's
    restore_.thread = std::thread([this] { CompleteRestore(); });
  }
  return out;
}

void MasterService::ExpireRestoredSegments() {
  std::vector<SegmentId> gone = segments_.ExpireRestored();
  if (gone.empty()) return;
  LogUnmounts(gone);
  const size_t dropped = DropSegmentReplicas(gone);
  counters_.restore_dropped_expired.fetch_add(dropped, std::memory_order_relaxed);
}

}  // namespace crescent::master
