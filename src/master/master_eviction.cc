// Eviction: flushing deferred touches into the policy, soft-pin expiry, victim
// choice and removal, synchronous eviction for a PutStart that cannot allocate,
// and the watermark round.
//
// A round never holds a global lock: each victim is chosen under the policy set's lock
// (briefly) and removed under its own shard's exclusive lock, which is taken
// when the policy offers the candidate and held from that decision to the
// removal. SpareLocked() flushes the object's deferred touch before reading its
// lease, so an object read a moment ago is spared, never evicted; and since a
// reader touches under the shard lock, no read slips between the decision and
// the removal. A spared candidate simply stays in the policy, with its state
// (queue, frequency, chain parent) as the policy keeps it. Hard-pinned
// objects are never in a policy; soft-pinned ones sit in the soft policy, which is
// consulted only when the main policy has nothing evictable left.
#include <algorithm>
#include <cassert>
#include <chrono>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "master/master_service.h"

namespace crescent::master {

void MasterService::FlushTouchesLocked(PolicyLock& order) {
  // Touches wait in the queue while a restore fills the policies: an Access
  // before the object is admitted would be lost.
  if (order.filling()) return;
  ObjectId id;
  while (order.PopTouch(&id)) {
    ObjectShard& shard = objects_.ShardOf(id);
    {
      std::shared_lock lock(shard.mutex());
      ObjectEntry* e = shard.Resolve(id);
      if (e == nullptr || e->state != EntryState::kComplete) continue;
      e->FlushTouch(LeaseMs(e->size));
    }
    order.Access(id, clock_.NowMs());
  }
}

void MasterService::SetPolicyCapacities(PolicyLock& order) {
  order.SetCapacities(segments_.capacity(Tier::kDram), segments_.capacity(Tier::kPmem));
}

void MasterService::SetPolicyCapacities() {
  PolicyLock order = policies_.Lock();
  SetPolicyCapacities(order);
}

void MasterService::ExpireSoftPinsLocked(PolicyLock& order, TimeMs now) {
  if (order.filling()) return;  // the restored soft pins are not all in yet
  while (std::optional<ObjectId> ended = order.PopEndedSoftPin(now)) {
    const ObjectId id = *ended;
    ObjectShard& shard = objects_.ShardOf(id);
    uint64_t size = 0;
    uint64_t hash = 0;
    Tier tier = Tier::kDram;
    {
      std::shared_lock lock(shard.mutex());
      ObjectEntry* e = shard.Resolve(id);
      if (e == nullptr || e->state != EntryState::kComplete) continue;
      size = e->size * e->num_replicas;
      hash = e->Hash();
      tier = TierOfEntry(*e);
    }
    order.Of(tier).Insert(id, size, {.history = hash});
  }
}

bool MasterService::Reachable(ObjectEntry& e, TimeMs now) {
  e.FlushTouch(LeaseMs(e.size));
  return e.lease_until.load(std::memory_order_relaxed) + config_.capability_grace_ms > now;
}

bool MasterService::SpareLocked(ObjectId id, TimeMs now, VictimLock* victim,
                                bool unreachable_only) {
  ObjectShard& shard = objects_.ShardOf(id);
  VictimLock lock(shard.mutex());
  ObjectEntry* e = shard.Resolve(id);
  if (e != nullptr && e->state == EntryState::kComplete) {
    e->FlushTouch(LeaseMs(e->size));
    if (e->hard_pin || e->Leased(now)) return true;
    if (unreachable_only && Reachable(*e, now)) return true;
  }
  // Evict it (a stale id is let go): the lock goes with the decision, so no
  // read can lease the object before EvictVictim removes it.
  *victim = std::move(lock);
  return false;
}

std::optional<ObjectId> MasterService::PickVictimLocked(PolicyLock& order, TimeMs now,
                                                        VictimLock* victim, Tier tier, bool* soft,
                                                        bool unreachable_only) {
  cache::SpareFn spare = [&](ObjectId id) {
    return SpareLocked(id, now, victim, unreachable_only);
  };
  std::optional<ObjectId> v = order.Of(tier).Evict(spare);
  if (soft != nullptr) *soft = false;
  if (!v && tier == Tier::kDram && config_.allow_evict_soft_pinned) {
    v = order.soft().Evict(spare);
    if (soft != nullptr) *soft = v.has_value();
  }
  // Every policy evicts the candidate that `spare` declined to keep, and only it.
  assert(v.has_value() == victim->owns_lock());
  assert(!v || victim->mutex() == &objects_.ShardOf(*v).mutex());
  return v;
}

uint64_t MasterService::EvictVictim(ObjectId id, VictimLock lock, EvictionReason reason) {
  ObjectShard& shard = objects_.ShardOf(id);
  ObjectEntry* e = shard.Resolve(id);
  if (e == nullptr || e->state != EntryState::kComplete) return 0;
  uint64_t bytes = e->size * e->num_replicas;
  // Nothing is acknowledged, so nothing waits: a put that reuses the space
  // is logged after this record, and its PutEnd waits for both.
  LogChange(RemovalRecord(*e, RemovalReason::kEvicted));
  const bool tenants = IsTenantKey(e->key_view());
  if (tenants) tenants_.Evicted(e->key_view());
  RemoveLocked(shard, IdSlot(id));
  counters_.evictions.fetch_add(1, std::memory_order_relaxed);
  (reason == EvictionReason::kWatermark ? counters_.evictions_watermark
                                        : counters_.evictions_for_put)
      .fetch_add(1, std::memory_order_relaxed);
  counters_.evicted_bytes.fetch_add(bytes, std::memory_order_relaxed);
  // The policy that chose it let it go; its tenant's order (a quota's
  // eviction took it out already) lets it go too, after the shard lock (the
  // policy set's lock comes first).
  if (tenants) {
    lock.unlock();
    policies_.Lock().tenants().Forget(id);
  }
  return bytes;
}

uint64_t MasterService::EvictBytes(uint64_t bytes, EvictionReason reason, bool unreachable_only) {
  // For a put that found no room anywhere: the persistent tier's victims go
  // first (the coldest), then DRAM's.
  uint64_t freed = 0;
  bool pmem_first;
  {
    PolicyLock order = policies_.Lock();
    order.AwaitFilled();
    pmem_first = order.pmem().Count() > 0;
  }
  if (pmem_first) freed = EvictFromTier(bytes, reason, Tier::kPmem, unreachable_only);
  if (freed < bytes) freed += EvictFromTier(bytes - freed, reason, Tier::kDram, unreachable_only);
  return freed;
}

uint64_t MasterService::EvictFromTier(uint64_t bytes, EvictionReason reason, Tier tier,
                                      bool unreachable_only) {
  uint64_t freed = 0;
  TimeMs now = clock_.NowMs();
  bool first = true;
  // A DRAM victim is demoted when the persistent tier has room
  // (master_tiering.cc); the copies go in batches.
  const bool demote = tier == Tier::kDram && copier_.load(std::memory_order_acquire) != nullptr &&
                      segments_.capacity(Tier::kPmem) > 0;
  if (demote) {
    // Room for the demotions first: the persistent tier drops its own victims.
    const uint64_t pmem_cap = segments_.capacity(Tier::kPmem);
    const uint64_t pmem_used = segments_.used(Tier::kPmem);
    const uint64_t pmem_free = pmem_cap > pmem_used ? pmem_cap - pmem_used : 0;
    if (pmem_free < bytes) EvictFromTier(bytes - pmem_free, reason, Tier::kPmem);
  }
  // A victim is chosen in the restored order only once it is all there.
  policies_.Lock().AwaitFilled();
  std::vector<TierMove> moves;
  // Bounded: every iteration frees or moves an object, or drops a stale id
  // from the policy; the policy's own spare limit makes PickVictimLocked
  // return nothing once only unevictable objects remain.
  // A stopping engine evicts nothing more (BeginShutdown): the moves queued
  // so far run (and end at once) below.
  while (freed < bytes && !stopping_.load(std::memory_order_acquire)) {
    std::optional<ObjectId> victim;
    VictimLock victim_lock;
    bool soft = false;
    {
      PolicyLock order = policies_.Lock();
      if (first) {
        FlushTouchesLocked(order);
        ExpireSoftPinsLocked(order, now);
        first = false;
      }
      victim = PickVictimLocked(order, now, &victim_lock, tier, &soft, unreachable_only);
    }
    if (!victim) break;
    if (tier == Tier::kDram && !soft) {
      // A promoted object: its persistent copy stays, only DRAM's goes.
      const ObjectEntry* e = objects_.ShardOf(*victim).Resolve(*victim);
      if (e != nullptr && e->num_replicas > 1 && HasCopyOn(*e, Tier::kPmem)) {
        freed += DropDramCopy(*victim, std::move(victim_lock));
        continue;
      }
    }
    if (demote && !soft) {
      const ObjectEntry* e = objects_.ShardOf(*victim).Resolve(*victim);
      if (e != nullptr) {
        if (std::optional<TierMove> m = PrepareMoveLocked(*victim, *e, Tier::kPmem)) {
          freed += m->size;
          moves.push_back(*m);
          victim_lock.unlock();
          if (moves.size() >= kMoveBatch) RunMoves(moves);
          continue;
        }
      }
    }
    freed += EvictVictim(*victim, std::move(victim_lock), reason);
  }
  RunMoves(moves);
  return freed;
}

std::vector<ReplicaSlot> MasterService::AllocateWithEviction(uint64_t size,
                                                             const PutConfig& config) {
  // With both tiers and a copier, the tiers act as one cache: a put goes to
  // DRAM, and when DRAM has no room its victims are demoted (the persistent
  // tier's own victims dropped first when it is full too) to make it.
  if (config.replica_count == 1 && config.preferred_segment.empty() &&
      copier_.load(std::memory_order_acquire) != nullptr && segments_.capacity(Tier::kPmem) > 0 &&
      segments_.capacity(Tier::kDram) >= size) {
    std::vector<ReplicaSlot> slots = segments_.Allocate(size, 1, config, Tier::kDram);
    if (slots.empty()) {
      // Held space that has come due is DRAM's before any live object moves,
      // and so is space whose freeing record a sync makes durable.
      ReleaseHeld(clock_.NowMs());
      ReclaimDurableFrees(/*sync=*/true);
      slots = segments_.Allocate(size, 1, config, Tier::kDram);
    }
    if (slots.empty()) {
      // A batch at once (1/64 of DRAM, at least this put): one copy request
      // per node carries many demotions, and the next puts find room. Only
      // victims no reader can reach: a demoted one's DRAM space is then free
      // at once, not held for the lease and the grace. When every victim is
      // reachable, the put goes to PMEM below.
      const uint64_t batch = std::max<uint64_t>(size, segments_.capacity(Tier::kDram) / 64);
      EvictFromTier(batch, EvictionReason::kForPut, Tier::kDram, /*unreachable_only=*/true);
      // The demoted sources are reused once their moves are durable.
      ReclaimDurableFrees(/*sync=*/true);
      slots = segments_.Allocate(size, 1, config, Tier::kDram);
    }
    if (!slots.empty()) return slots;
  }
  std::vector<ReplicaSlot> slots = segments_.Allocate(size, config.replica_count, config);
  // Nowhere to place (every node suspect): evicting would free nothing usable.
  if (slots.empty() && segments_.placeable_count() == 0) return slots;
  if (slots.empty()) {
    // Space held for a forced remove may have come due since the last pass,
    // and space whose freeing record was not durable yet is, after a sync.
    ReleaseHeld(clock_.NowMs());
    ReclaimDurableFrees(/*sync=*/true);
    slots = segments_.Allocate(size, config.replica_count, config);
  }
  if (!slots.empty()) return slots;
  const auto wait_deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(config_.put_wait_for_held_ms);
  while (slots.empty()) {
    // Victims no capability can reach go first: their space is free at once.
    // A victim read within its lease and the grace would only be held (its
    // space unusable for up to the lease plus the grace), and a put stream
    // faster than that would evict the whole cache into held space and then
    // fail with NO_SPACE. Only when every candidate is reachable does one go
    // and its space wait; with put_wait_for_held_ms the put waits for held
    // space to come due instead of evicting more into it.
    uint64_t evicted = EvictBytes(size, EvictionReason::kForPut, /*unreachable_only=*/true);
    if (evicted == 0 && held_.bytes() >= size && AwaitHeldSpace(wait_deadline)) {
      slots = segments_.Allocate(size, config.replica_count, config);
      continue;
    }
    if (evicted == 0) evicted = EvictBytes(size, EvictionReason::kForPut);
    // The victims' space is reused only once their records are durable.
    const bool reclaimed = ReclaimDurableFrees(/*sync=*/true);
    if (evicted == 0 && !reclaimed) {
      // Nothing evictable is left; space held for readers still comes free.
      if (!AwaitHeldSpace(wait_deadline)) break;
    }
    slots = segments_.Allocate(size, config.replica_count, config);
  }
  return slots;
}

bool MasterService::AwaitHeldSpace(std::chrono::steady_clock::time_point deadline) {
  if (config_.put_wait_for_held_ms <= 0 || stopping_.load(std::memory_order_acquire)) return false;
  const std::optional<TimeMs> due = held_.NextDue();
  if (!due) return false;
  // One past the hold's end: TakeDue releases what is held until now or earlier.
  const auto wake = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(std::max<TimeMs>(*due - clock_.NowMs(), 0) + 1);
  if (wake > deadline) return false;
  std::this_thread::sleep_until(wake);
  ReleaseHeld(clock_.NowMs());
  return true;
}

void MasterService::WatermarkEvict() {
  // Each tier against its own watermark; the persistent tier first, so that
  // DRAM's victims find room there.
  // The maintenance thread does not wait for a restore's policy fill: a
  // later pass evicts.
  if (policies_.Lock().filling()) return;
  for (Tier tier : {Tier::kPmem, Tier::kDram}) {
    const uint64_t capacity = segments_.capacity(tier);
    if (capacity == 0) continue;
    uint64_t used = segments_.used(tier);
    // Held space (forced removes under a lease, sources of moves) comes
    // free by itself soon; evicting live objects for it would lose them for
    // nothing. (Held space is not split by tier: it counts against each.)
    used -= std::min(used, held_.bytes());
    used -= std::min(used, durable_frees_.bytes());  // free at the next sync
    const double mark = tier == Tier::kPmem ? config_.pmem_high_watermark : config_.high_watermark;
    if (static_cast<double>(used) < mark * static_cast<double>(capacity)) continue;
    counters_.eviction_rounds.fetch_add(1, std::memory_order_relaxed);
    // Only victims no reader can reach (as for a put): a reachable one's
    // space would be held, making no room before its grace ends.
    EvictFromTier(static_cast<uint64_t>(config_.evict_ratio * static_cast<double>(capacity)),
                  EvictionReason::kWatermark, tier, /*unreachable_only=*/true);
  }
}

}  // namespace crescent::master
