// Removal: by key, batch, key prefix (through each shard's KeyIndex) and all;
// listing by prefix; and dropping the replicas of unmounted segments. A leased
// object is skipped unless the caller forces it; the lease is read only after
// the deferred touch has been flushed into it.
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <shared_mutex>

#include "master/master_service.h"

namespace crescent::master {

ObjectId MasterService::RemoveLocked(ObjectShard& shard, uint32_t slot) {
  ObjectEntry& e = shard.entry(slot);
  ObjectId id = shard.IdOf(slot);
  // Fencing: until when a capability may still reach this object's space (a
  // read capability expires with the lease, a write capability at the put's
  // deadline). The space waits that long plus the grace, which covers the
  // store node's clock running behind the master's; only then may another
  // object have it.
  TimeMs reachable_until = 0;
  tenants_.Release(e.key_view(), e.size, e.state == EntryState::kComplete);
  if (e.state == EntryState::kComplete) {
    if (!restore_.active) objects_.BloomRemove(shard.index(), e.Hash());
    objects_.CompleteGone(e.hard_pin);
    e.FlushTouch(LeaseMs(e.size));
    reachable_until = e.lease_until.load(std::memory_order_relaxed);
  } else {
    objects_.PendingGone();
    if (std::optional<PendingPuts::LivePut> put = pending_.End(id)) {
      reachable_until = put->deadline;
    }
  }
  TimeMs held_until = 0;
  if (reachable_until != 0 && reachable_until + config_.capability_grace_ms > clock_.NowMs()) {
    held_until = reachable_until + config_.capability_grace_ms;
  }
  if (held_until != 0) {
    Hold(e, held_until);
  } else if (e.state == EntryState::kComplete) {
    FreeLogged(e.Replicas(), e.size);
  } else {
    FreeNow(e.Replicas());  // a pending put is never logged
  }
  shard.Free(slot);
  return id;
}

void MasterService::Hold(const ObjectEntry& e, TimeMs until) {
  // Counted as the allocator counts it (sizes rounded up to the alignment), so
  // used_bytes stays the live replicas' space plus held_bytes. A replica on a
  // dropped segment has no space left to hold (a waiting one still has).
  HoldSlots(e.Replicas(), e.size, until);
}

void MasterService::HoldSlots(std::vector<ReplicaSlot> slots, uint64_t size, TimeMs until) {
  std::erase_if(slots, [&](const ReplicaSlot& r) { return !segments_.HasSpace(r.segment); });
  if (slots.empty()) return;
  held_.Hold(std::move(slots), AllocatedBytes(size), until);
}

void MasterService::ForgetHeldOn(std::span<const SegmentId> segments) { held_.ForgetOn(segments); }

void MasterService::ReleaseHeld(TimeMs now) {
  const std::vector<ReplicaSlot> due = held_.TakeDue(now);
  // A slot of a segment unmounted meanwhile is ignored by Free: its space went
  // with that segment's allocator. Held space may have been freed by a record
  // not yet durable (held slots of several sizes: counted as 0 bytes while
  // they wait, which is at most the sync interval).
  FreeLogged(due, 0);
}

void MasterService::ForgetInPolicy(std::span<const ObjectId> ids) {
  if (ids.empty()) return;
  policies_.Lock().Forget(ids);
}

Status MasterService::RemoveOne(std::string_view key, bool force, ObjectId* removed,
                                uint64_t* logged) {
  if (Status s = ValidateKey(key); !s.ok()) return s;
  Located loc = objects_.Locate(key);
  std::unique_lock lock(loc.shard->mutex());
  uint32_t slot = loc.shard->Find(key, loc.hash);
  if (slot == kNoSlot) {
    return Status(ErrorCode::kObjectNotFound, "key '" + std::string(key) + "' not found");
  }
  ObjectEntry& e = loc.shard->entry(slot);
  if (e.state != EntryState::kComplete) {
    return Status(ErrorCode::kObjectNotReady, "key '" + std::string(key) + "' is being written");
  }
  e.FlushTouch(LeaseMs(e.size));
  if (!force && e.Leased(clock_.NowMs())) {
    return Status(ErrorCode::kObjectLeased, "key '" + std::string(key) + "' has a read lease");
  }
  *logged = LogChange(RemovalRecord(e, RemovalReason::kRemoved));
  *removed = RemoveLocked(*loc.shard, slot);
  return Status::Ok();
}

Status MasterService::Remove(std::string_view key, bool force) {
  ObjectId id;
  uint64_t logged = 0;
  Status s = RemoveOne(key, force, &id, &logged);
  counters_.remove.Record(1, s.ok() ? 0 : 1);
  if (s.ok()) ForgetInPolicy({&id, 1});
  if (s.ok()) return AwaitLogged(logged);
  return s;
}

std::vector<Status> MasterService::BatchRemove(std::span<const std::string> keys, bool force) {
  std::vector<Status> out;
  out.reserve(keys.size());
  std::vector<ObjectId> removed;
  size_t failures = 0;
  uint64_t logged = 0;
  for (const std::string& k : keys) {
    ObjectId id;
    uint64_t at = 0;
    out.push_back(RemoveOne(k, force, &id, &at));
    logged = std::max(logged, at);
    if (out.back().ok()) {
      removed.push_back(id);
    } else {
      ++failures;
    }
  }
  counters_.remove.Record(keys.size(), failures);
  ForgetInPolicy(removed);
  if (Status s = AwaitLogged(logged); !s.ok()) {
    for (Status& r : out) {
      if (r.ok()) r = s;
    }
  }
  return out;
}

StatusOr<size_t> MasterService::RemoveByPrefix(std::string_view prefix, bool force) {
  if (ClientKeyOf(prefix).size() > config_.max_key_length || prefix.size() > kMaxKeyLengthLimit) {
    counters_.remove.Record(0, 1);
    return Status(ErrorCode::kInvalidKey, "prefix longer than the key limit");
  }
  return RemoveUnder({&prefix, 1}, force);
}

StatusOr<size_t> MasterService::RemoveUnder(std::span<const std::string_view> prefixes,
                                            bool force) {
  objects_.EnsureKeyIndexes();  // a restore's are built by its completion; this may not wait
  size_t count = 0;
  uint64_t logged = 0;
  TimeMs now = clock_.NowMs();
  for (const auto& shard : objects_.shards()) {
    std::vector<ObjectId> removed;
    {
      std::unique_lock lock(shard->mutex());
      std::vector<uint32_t> slots;
      for (std::string_view prefix : prefixes) {
        shard->VisitPrefix(prefix, [&](uint32_t slot) {
          slots.push_back(slot);
          return true;
        });
      }
      for (uint32_t slot : slots) {
        ObjectEntry& e = shard->entry(slot);
        e.FlushTouch(LeaseMs(e.size));
        if (!force && e.Leased(now)) continue;
        logged = std::max(logged, LogChange(RemovalRecord(e, RemovalReason::kRemoved)));
        removed.push_back(RemoveLocked(*shard, slot));
      }
    }
    count += removed.size();
    ForgetInPolicy(removed);
  }
  counters_.remove.Record(count, 0);
  if (Status s = AwaitLogged(logged); !s.ok()) return s;
  return count;
}

size_t MasterService::RemoveAll(bool force) {
  auto n = RemoveByPrefix("", force);
  return n.ok() ? *n : 0;
}

size_t MasterService::RemoveDefaultNamespace(bool force) {
  // Every first byte but the tenant mark: 255 descents of each shard's key
  // index, walking no tenant's keys.
  std::string bytes(256, '\0');
  std::vector<std::string_view> prefixes;
  prefixes.reserve(255);
  for (int b = 0; b < 256; ++b) {
    bytes[b] = static_cast<char>(b);
    if (bytes[b] != kTenantMark) prefixes.emplace_back(&bytes[b], 1);
  }
  auto n = RemoveUnder(prefixes, force);
  return n.ok() ? *n : 0;
}

std::vector<std::string> MasterService::List(std::string_view prefix, size_t limit,
                                             uint64_t max_bytes, bool* truncated,
                                             std::string_view after, bool default_only) const {
  objects_.EnsureKeyIndexes();  // a restore's are built by its completion; this may not wait
  // The answer is the longest run of matching keys, in key order, that fits
  // both bounds. It is gathered in a max-heap that never holds more than the
  // answer plus one key: each shard is walked in key order and left at its
  // first key that could not be part of the answer (it is past everything
  // kept, and there is no room for it), so no shard contributes `limit` keys
  // of its own.
  const size_t max_keys = limit == 0 ? SIZE_MAX : limit;
  const uint64_t budget = max_bytes == 0 ? UINT64_MAX : max_bytes;
  std::vector<std::string> heap;
  uint64_t bytes = 0;
  bool cut = false;
  for (const auto& shard : objects_.shards()) {
    std::shared_lock lock(shard->mutex());
    auto take = [&](uint32_t slot) {
      // One waiting for its node (restored, or on a detached persistent
      // segment) is not shown, as Exists and gets do not show it.
      if (!HasLiveReplica(shard->entry(slot))) return true;
      const std::string_view key = shard->entry(slot).key_view();
      if (default_only && IsTenantKey(key)) return true;
      const uint64_t cost = key.size() + kListKeyFramingBytes;
      const bool room = heap.size() < max_keys && bytes + cost <= budget;
      if (!room && (heap.empty() || key >= heap.front())) {
        cut = true;
        return false;
      }
      heap.emplace_back(key);
      std::push_heap(heap.begin(), heap.end());
      bytes += cost;
      while (heap.size() > max_keys || bytes > budget) {
        std::pop_heap(heap.begin(), heap.end());
        bytes -= heap.back().size() + kListKeyFramingBytes;
        heap.pop_back();
        cut = true;
      }
      return true;
    };
    if (after.empty()) {
      shard->VisitPrefix(prefix, take);
    } else {
      shard->VisitPrefixAfter(prefix, after, take);
    }
  }
  std::sort_heap(heap.begin(), heap.end());
  if (truncated != nullptr) *truncated = cut;
  return heap;
}

size_t MasterService::SweepReplicas(const std::function<bool(SegmentId)>& keep_segment,
                                    const std::function<void(const ObjectEntry&)>& kept) {
  size_t total = 0;
  for (const auto& shard : objects_.shards())
    total += SweepShardReplicas(*shard, keep_segment, kept);
  return total;
}

size_t MasterService::SweepShardReplicas(ObjectShard& shard,
                                         const std::function<bool(SegmentId)>& keep_segment,
                                         const std::function<void(const ObjectEntry&)>& kept) {
  std::vector<ObjectId> dropped;
  std::vector<PolicyMove> to_pmem;  // left with their persistent copies only
  {
    std::unique_lock lock(shard.mutex());
    std::vector<uint32_t> slots;
    shard.VisitAll([&](uint32_t slot) { slots.push_back(slot); });
    for (uint32_t slot : slots) {
      ObjectEntry& e = shard.entry(slot);
      size_t kept_count = 0;
      for (size_t i = 0; i < e.num_replicas; ++i) {
        if (keep_segment(e.replica(i).segment)) ++kept_count;
      }
      if (kept_count == 0) {
        // Nothing of it is readable any more: drop it. Its only space was on
        // segments that no longer have allocators.
        dropped.push_back(RemoveLocked(shard, slot));
        continue;
      }
      if (kept_count != e.num_replicas) {
        const bool had_dram = HasCopyOn(e, Tier::kDram);
        std::vector<ReplicaSlot> keep;
        for (size_t i = 0; i < e.num_replicas; ++i) {
          if (keep_segment(e.replica(i).segment)) keep.push_back(e.replica(i));
        }
        shard.SetReplicas(slot, keep);
        if (had_dram && !HasCopyOn(e, Tier::kDram)) {
          to_pmem.push_back({shard.IdOf(slot), e.size * e.num_replicas, e.Hash()});
        }
      }
      if (kept) kept(e);
    }
  }
  ForgetInPolicy(dropped);
  JoinPmemPolicy(to_pmem);
  return dropped.size();
}

size_t MasterService::DropSegmentReplicas(std::span<const SegmentId> segments) {
  const size_t dropped = SweepReplicas([&](SegmentId s) {
    return std::find(segments.begin(), segments.end(), s) == segments.end();
  });
  counters_.dropped_objects.fetch_add(dropped, std::memory_order_relaxed);
  // The dead segments' allocators are gone, and their used bytes with them.
  ForgetHeldOn(segments);
  return dropped;
}

}  // namespace crescent::master
