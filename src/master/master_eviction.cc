// Eviction: flushing deferred touches into the policy, soft-pin expiry, victim
// choice and removal, synchronous eviction for a PutStart that cannot allocate,
// and the watermark round.
//
// A round never holds a global lock: each victim is chosen under policy_mu_
// (briefly) and removed under its own shard's exclusive lock, which is taken
// when the policy offers the candidate and held from that decision to the
// removal. SpareLocked() flushes the object's deferred touch before reading its
// lease, so an object read a moment ago is spared, never evicted; and since a
// reader touches under the shard lock, no read slips between the decision and
// the removal. A spared candidate simply stays in the policy, with its state
// (queue, frequency, chain parent) as the policy keeps it. Hard-pinned
// objects are never in a policy; soft-pinned ones sit in soft_policy_, which is
// consulted only when the main policy has nothing evictable left.
#include <cassert>
#include <mutex>
#include <shared_mutex>

#include "master/master_service.h"

namespace crescent::master {

void MasterService::FlushTouchesLocked() {
  uint64_t id;
  while (touch_queue_.Pop(&id)) {
    ObjectShard& shard = ShardOf(id);
    {
      std::shared_lock lock(shard.mutex());
      ObjectEntry* e = shard.Resolve(id);
      if (e == nullptr || e->state != EntryState::kComplete) continue;
      e->FlushTouch(LeaseMs(e->size));
    }
    // Access on an id a policy does not hold is a no-op, so both can be told.
    policy_->Access(id);
    soft_policy_->Access(id);
  }
}

void MasterService::ExpireSoftPinsLocked(TimeMs now) {
  while (!soft_expiry_.empty() && soft_expiry_.top().until <= now) {
    ObjectId id = soft_expiry_.top().id;
    soft_expiry_.pop();
    if (!soft_policy_->Contains(id)) continue;
    soft_policy_->Remove(id);
    ObjectShard& shard = ShardOf(id);
    uint64_t size = 0;
    uint64_t hash = 0;
    {
      std::shared_lock lock(shard.mutex());
      ObjectEntry* e = shard.Resolve(id);
      if (e == nullptr || e->state != EntryState::kComplete) continue;
      size = e->size * e->num_replicas;
      hash = e->Hash();
    }
    policy_->Insert(id, size, {.history = hash});
  }
}

bool MasterService::SpareLocked(ObjectId id, TimeMs now, VictimLock* victim) {
  ObjectShard& shard = ShardOf(id);
  VictimLock lock(shard.mutex());
  ObjectEntry* e = shard.Resolve(id);
  if (e != nullptr && e->state == EntryState::kComplete) {
    e->FlushTouch(LeaseMs(e->size));
    if (e->hard_pin || e->Leased(now)) return true;
  }
  // Evict it (a stale id is let go): the lock goes with the decision, so no
  // read can lease the object before EvictVictim removes it.
  *victim = std::move(lock);
  return false;
}

std::optional<ObjectId> MasterService::PickVictimLocked(TimeMs now, VictimLock* victim) {
  cache::SpareFn spare = [&](ObjectId id) { return SpareLocked(id, now, victim); };
  std::optional<ObjectId> v = policy_->Evict(spare);
  if (!v && config_.allow_evict_soft_pinned) v = soft_policy_->Evict(spare);
  // Every policy evicts the candidate that `spare` declined to keep, and only it.
  assert(v.has_value() == victim->owns_lock());
  assert(!v || victim->mutex() == &ShardOf(*v).mutex());
  return v;
}

uint64_t MasterService::EvictVictim(ObjectId id, VictimLock lock, EvictionReason reason) {
  ObjectShard& shard = ShardOf(id);
  ObjectEntry* e = shard.Resolve(id);
  if (e == nullptr || e->state != EntryState::kComplete) return 0;
  uint64_t bytes = e->size * e->num_replicas;
  // Nothing is acknowledged, so nothing waits: a put that reuses the space
  // is logged after this record, and its PutEnd waits for both.
  LogChange(RemovalRecord(*e, RemovalReason::kEvicted));
  RemoveLocked(shard, IdSlot(id));
  counters_.evictions.fetch_add(1, std::memory_order_relaxed);
  (reason == EvictionReason::kWatermark ? counters_.evictions_watermark
                                        : counters_.evictions_for_put)
      .fetch_add(1, std::memory_order_relaxed);
  counters_.evicted_bytes.fetch_add(bytes, std::memory_order_relaxed);
  return bytes;
}

uint64_t MasterService::EvictBytes(uint64_t bytes, EvictionReason reason) {
  uint64_t freed = 0;
  TimeMs now = clock_.NowMs();
  bool first = true;
  // Bounded: every iteration frees an object or drops a stale id from the
  // policy; the policy's own spare limit makes PickVictimLocked return nothing
  // once only unevictable objects remain.
  while (freed < bytes) {
    std::optional<ObjectId> victim;
    VictimLock victim_lock;
    {
      std::lock_guard lock(policy_mu_);
      if (first) {
        FlushTouchesLocked();
        ExpireSoftPinsLocked(now);
        first = false;
      }
      victim = PickVictimLocked(now, &victim_lock);
    }
    if (!victim) break;
    freed += EvictVictim(*victim, std::move(victim_lock), reason);
  }
  return freed;
}

std::vector<ReplicaSlot> MasterService::AllocateWithEviction(uint64_t size,
                                                             const PutConfig& config) {
  std::vector<ReplicaSlot> slots = segments_.Allocate(size, config.replica_count, config);
  // Nowhere to place (every node suspect): evicting would free nothing usable.
  if (slots.empty() && segments_.placeable_count() == 0) return slots;
  if (slots.empty()) {
    // Space held for a forced remove may have come due since the last pass.
    ReleaseHeld(clock_.NowMs());
    slots = segments_.Allocate(size, config.replica_count, config);
  }
  while (slots.empty()) {
    if (EvictBytes(size, EvictionReason::kForPut) == 0) break;  // nothing evictable is left
    slots = segments_.Allocate(size, config.replica_count, config);
  }
  return slots;
}

void MasterService::WatermarkEvict() {
  uint64_t capacity = segments_.capacity();
  if (capacity == 0) return;
  uint64_t used = segments_.used();
  {
    // Held space (forced removes under a lease) comes free by itself soon;
    // evicting live objects for it would lose them for nothing.
    std::lock_guard lock(held_mu_);
    used -= std::min(used, held_bytes_);
  }
  if (static_cast<double>(used) < config_.high_watermark * static_cast<double>(capacity)) return;
  counters_.eviction_rounds.fetch_add(1, std::memory_order_relaxed);
  EvictBytes(static_cast<uint64_t>(config_.evict_ratio * static_cast<double>(capacity)));
}

}  // namespace crescent::master
