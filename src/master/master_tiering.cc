// Tiers (docs/persistent-tier.md): moving objects between DRAM and the
// persistent tier. A DRAM eviction round demotes its victims when the
// persistent tier has room; a PMEM object read twice within the promotion
// window is promoted back to DRAM when DRAM is below its watermark.
//
// A promotion keeps the persistent copy: the object then has two replicas,
// DRAM's first (readers try it first), and the persistent one stays its
// durable copy across a kill of its node. When DRAM's policy later picks it,
// only its DRAM replica goes (DropDramCopy), no copy needed, and it joins the
// persistent tier's policy again.
//
// A move, for each object of a batch:
//  1. Under the object's shard lock: its only replica is on the source tier;
//     a target is allocated on the other tier, near the source's node.
//  2. With no lock held: the copier has the source's node copy the bytes into
//     the target and persist them. The object stays readable from its source
//     replica throughout.
//  3. Under the shard lock again: if the object is still the same (same
//     entry, same single replica), the change is logged (a PutEnded record
//     with the new replicas). A demotion's replica becomes the target and its
//     source's space is freed: demotions are chosen so that no read
//     capability can reach the source (Reachable: its lease plus the fencing
//     grace are over); a read during the copy makes it reachable again, and
//     then the source is held until that capability's end plus the grace. A
//     promotion adds the target before the source, which stays. Otherwise
//     (removed, replaced) the target is freed, or held until the copy
//     capability's end when the copy failed (a late write could still land).
//  4. Under the policy set's lock: the object joins the target tier's policy.
// A demotion whose copy fails drops the object, as the eviction would have;
// unless the engine is stopping (BeginShutdown): then it stays where it was.
#include <algorithm>
#include <mutex>
#include <shared_mutex>

#include "master/master_service.h"

namespace crescent::master {

void MasterService::SetReplicaCopier(ReplicaCopier* copier) {
  copier_.store(copier, std::memory_order_release);
}

std::optional<MasterService::TierMove> MasterService::PrepareMoveLocked(ObjectId id,
                                                                        const ObjectEntry& e,
                                                                        Tier to) {
  if (copier_.load(std::memory_order_acquire) == nullptr || e.state != EntryState::kComplete ||
      e.num_replicas != 1 || e.hard_pin) {
    return std::nullopt;
  }
  const ReplicaSlot from = e.replica(0);
  if (segments_.TierOf(from.segment) == to || !segments_.IsMounted(from.segment)) {
    return std::nullopt;
  }
  // On the source's node first (the copy is then a local memcpy), then the
  // emptiest segment of the tier.
  PutConfig near;
  near.local_node = segments_.OwnerOf(from.segment);
  const std::vector<ReplicaSlot> target = segments_.Allocate(e.size, 1, near, to);
  if (target.empty()) return std::nullopt;
  return TierMove{id, from, target[0], e.size, to};
}

void MasterService::RunMoves(std::vector<TierMove>& moves) {
  if (moves.empty()) return;
  ReplicaCopier* copier = copier_.load(std::memory_order_acquire);
  const int64_t deadline_unix = UnixNowMs() + config_.tier_copy_timeout_ms;
  // Capabilities live until deadline_unix; on the engine's clock that is:
  const TimeMs reachable_until = clock_.NowMs() + config_.tier_copy_timeout_ms;
  std::vector<ReplicaCopy> copies;
  std::vector<size_t> copied;  // index in moves of each copy
  std::vector<Status> results(moves.size(), Status::Ok());
  for (size_t i = 0; i < moves.size(); ++i) {
    const TierMove& m = moves[i];
    const std::string* from_ep = segments_.MountedEndpoint(m.from.segment);
    const std::string* to_ep = segments_.MountedEndpoint(m.to.segment);
    if (from_ep == nullptr || to_ep == nullptr || copier == nullptr) {
      results[i] = Status(ErrorCode::kUnavailable, "a segment of the move was unmounted");
      continue;
    }
    copies.push_back({{m.from.segment, *from_ep, m.from.offset, m.size, 0},
                      {m.to.segment, *to_ep, m.to.offset, m.size, 0}});
    copied.push_back(i);
  }
  if (!copies.empty()) {
    std::vector<Status> done = copier->Copy(copies, deadline_unix);
    for (size_t k = 0; k < copied.size(); ++k) {
      results[copied[k]] = k < done.size() ? done[k] : Status(ErrorCode::kInternal, "no result");
    }
  }
  struct Joined {
    ObjectId id;
    uint64_t size;
    uint64_t hash;
    Tier to;
  };
  std::vector<Joined> joined;
  std::vector<ObjectId> dropped;
  uint64_t logged = 0;
  for (size_t i = 0; i < moves.size(); ++i) {
    const TierMove& m = moves[i];
    const bool copied_ok = results[i].ok();
    // A failure once the engine stops may be the copier's close.
    const bool stopped = !copied_ok && stopping_.load(std::memory_order_acquire);
    const bool demotion = m.to_tier == Tier::kPmem;
    ObjectShard& shard = objects_.ShardOf(m.id);
    std::unique_lock lock(shard.mutex());
    ObjectEntry* e = shard.Resolve(m.id);
    const bool same = e != nullptr && e->state == EntryState::kComplete && e->num_replicas == 1 &&
                      e->replica(0) == m.from;
    if (same && copied_ok && !demotion && config_.pmem_promote_keeps_copy) {
      // Both copies stay, DRAM's first; the persistent one keeps the object
      // durable until DRAM drops its copy.
      const ReplicaSlot both[] = {m.to, m.from};
      shard.SetReplicas(IdSlot(m.id), both);
      logged = std::max(logged, LogChange(PutEndedRecord(*e)));
    } else if (same && copied_ok) {
      // Readers leased on the source may still be copying out of it.
      e->FlushTouch(LeaseMs(e->size));
      const TimeMs leased = e->lease_until.load(std::memory_order_relaxed);
      const ReplicaSlot target[] = {m.to};
      shard.SetReplicas(IdSlot(m.id), target);
      logged = std::max(logged, LogChange(PutEndedRecord(*e)));
      if (leased + config_.capability_grace_ms > clock_.NowMs()) {
        HoldSlots({m.from}, m.size, leased + config_.capability_grace_ms);
      } else {
        FreeLogged({&m.from, 1}, m.size);
      }
    }
    if (same && copied_ok) {
      joined.push_back({m.id, m.size, e->Hash(), m.to_tier});
      (demotion ? counters_.demotions : counters_.promotions).fetch_add(1, std::memory_order_relaxed);
      (demotion ? counters_.demoted_bytes : counters_.promoted_bytes)
          .fetch_add(m.size, std::memory_order_relaxed);
      continue;
    }
    // The target is not the object's: freed now, or once no late write of
    // a failed copy can land in it.
    if (copied_ok) {
      FreeNow({&m.to, 1});
    } else {
      HoldSlots({m.to}, m.size, reachable_until + config_.capability_grace_ms);
      (demotion ? counters_.demotion_failures : counters_.promotion_failures)
          .fetch_add(1, std::memory_order_relaxed);
    }
    if (same && demotion && stopped) {
      // Not done, for the engine's stop (BeginShutdown): the object stays
      // where it is, back in DRAM's policy, rather than lost to an eviction
      // that only the stop failed.
      joined.push_back({m.id, m.size, e->Hash(), Tier::kDram});
    } else if (same && demotion) {
      // The eviction goes ahead: the object was its round's victim.
      LogChange(RemovalRecord(*e, RemovalReason::kEvicted));
      dropped.push_back(RemoveLocked(shard, IdSlot(m.id)));
      counters_.evictions.fetch_add(1, std::memory_order_relaxed);
      counters_.evicted_bytes.fetch_add(m.size, std::memory_order_relaxed);
    }
  }
  {
    PolicyLock order = policies_.Lock();
    for (const Joined& j : joined) {
      // A promoted object leaves the PMEM policy; a demoted one (or one the
      // stop kept in DRAM) left DRAM's when it was chosen as a victim.
      order.main().Remove(j.id);
      order.pmem().Remove(j.id);
      order.Of(j.to).Insert(j.id, j.size, {.history = j.hash});
    }
  }
  ForgetInPolicy(dropped);
  moves.clear();
  (void)logged;  // nothing waits: a move is no acknowledged change
}

bool MasterService::HasCopyOn(const ObjectEntry& e, Tier tier) const {
  for (size_t i = 0; i < e.num_replicas; ++i) {
    if (segments_.TierOf(e.replica(i).segment) == tier) return true;
  }
  return false;
}

uint64_t MasterService::DropDramCopy(ObjectId id, VictimLock lock) {
  ObjectShard& shard = objects_.ShardOf(id);
  ObjectEntry* e = shard.Resolve(id);
  if (e == nullptr || e->state != EntryState::kComplete) return 0;
  std::vector<ReplicaSlot> keep;
  std::vector<ReplicaSlot> drop;
  for (size_t i = 0; i < e->num_replicas; ++i) {
    const ReplicaSlot r = e->replica(i);
    (segments_.TierOf(r.segment) == Tier::kDram ? drop : keep).push_back(r);
  }
  if (keep.empty() || drop.empty()) return 0;
  const TimeMs now = clock_.NowMs();
  const bool reachable = Reachable(*e, now);
  const TimeMs leased = e->lease_until.load(std::memory_order_relaxed);
  shard.SetReplicas(IdSlot(id), keep);
  LogChange(PutEndedRecord(*e));
  const uint64_t size = e->size;
  const uint64_t hash = e->Hash();
  if (reachable) {
    HoldSlots(drop, size, leased + config_.capability_grace_ms);
  } else {
    FreeLogged(drop, size);
  }
  lock.unlock();
  {
    PolicyLock order = policies_.Lock();
    order.main().Remove(id);
    order.pmem().Insert(id, size, {.history = hash});
  }
  counters_.dram_copies_dropped.fetch_add(1, std::memory_order_relaxed);
  return size * drop.size();
}

void MasterService::JoinPmemPolicy(std::span<const PolicyMove> moves) {
  if (!moves.empty()) policies_.Lock().JoinPmem(moves);
}

Tier MasterService::TierOfEntry(const ObjectEntry& e) const {
  for (size_t i = 0; i < e.num_replicas; ++i) {
    if (segments_.TierOf(e.replica(i).segment) == Tier::kDram) return Tier::kDram;
  }
  return e.num_replicas > 0 ? Tier::kPmem : Tier::kDram;
}

void MasterService::RunPromotions() {
  std::vector<ObjectId> ids;
  {
    PolicyLock order = policies_.Lock();
    FlushTouchesLocked(order);
    ids = order.TakePromotions();
  }
  if (ids.empty() || copier_.load(std::memory_order_acquire) == nullptr) return;
  // A promotion frees nothing (the persistent copy stays), so an object that
  // a reader may still reach is promoted at once: no space is held for it.
  std::vector<TierMove> moves;
  for (ObjectId id : ids) {
    if (stopping_.load(std::memory_order_acquire)) break;  // BeginShutdown
    uint64_t size = 0;
    {
      ObjectShard& shard = objects_.ShardOf(id);
      std::shared_lock lock(shard.mutex());
      const ObjectEntry* e = shard.Resolve(id);
      if (e == nullptr || e->state != EntryState::kComplete) continue;
      size = e->size;
    }
    // Room in DRAM below its watermark: its victims are demoted to make it,
    // just as much as it needs (a swap; a batch would empty DRAM for nothing).
    const double mark = config_.high_watermark * static_cast<double>(segments_.capacity(Tier::kDram));
    if (static_cast<double>(segments_.used(Tier::kDram) + size) > mark) {
      RunMoves(moves);  // those prepared so far first: they use the room there is
      EvictFromTier(size, EvictionReason::kWatermark, Tier::kDram, /*unreachable_only=*/true);
    }
    ObjectShard& shard = objects_.ShardOf(id);
    std::shared_lock lock(shard.mutex());
    const ObjectEntry* e = shard.Resolve(id);
    if (e == nullptr) continue;
    if (auto m = PrepareMoveLocked(id, *e, Tier::kDram)) moves.push_back(*m);
    lock.unlock();
    if (moves.size() >= kMoveBatch) RunMoves(moves);
  }
  RunMoves(moves);
}

}  // namespace crescent::master
