// PolicySet: the engine's eviction order. Three policies (cache/): `main`
// for unpinned complete objects on DRAM (all of them without a persistent
// tier), `soft` for soft-pinned ones (LRU among them, evicted only after
// every unpinned one), `pmem` for unpinned objects on the persistent tier;
// with the soft pins' expiry, the reads not yet seen (a lock-free queue that
// reads push to), and the persistent tier's promotion candidates.
//
// Contract:
//  - One mutex guards all of it but the touch queue's producer side; it is
//    reached only through a Locked hold. Lock order: this lock → a shard's →
//    the segment table's. No thread takes it while holding a shard lock, so
//    a hold may take shard locks (to flush a touch, to decide on a victim).
//  - Ids may be stale (an object removed between its shard update and the
//    policy update); whoever picks a victim re-resolves it by generation.
//  - A restore fills a fresh set of policies without this lock (BeginFill,
//    EndFill). Meanwhile the set stays empty: an admission is deferred and
//    replayed after the restored objects at EndFill, a forget or a tier move
//    is noted and replayed too, and whoever needs the order (an eviction, a
//    snapshot) waits for EndFill (AwaitFilled).
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <span>
#include <string>
#include <vector>

#include "cache/eviction_policy.h"
#include "crescent/status.h"
#include "master/master_config.h"
#include "master/promotion_candidates.h"
#include "master/tenant_orders.h"
#include "master/touch_queue.h"
#include "master/types.h"

namespace crescent::master {

class PolicySet {
 public:
  struct Policies {
    std::unique_ptr<cache::EvictionPolicy> main, soft, pmem;
    cache::EvictionPolicy& Of(Tier tier) const { return tier == Tier::kPmem ? *pmem : *main; }
  };
  // The three policies the config names (a restore makes a fresh set).
  static StatusOr<Policies> Make(const MasterConfig& config);

  // A policy admission: a PutEnd's, or one deferred until a restore's fill ends.
  struct Admission {
    ObjectId id = cache::kNoParent;
    uint64_t size = 0;
    Tier tier = Tier::kDram;
    TimeMs soft_until = 0;
    cache::InsertInfo info;
    std::string tenant;  // its key's tenant (tenant_key.h); empty: the default namespace
  };
  struct SoftPinExpiry {
    TimeMs until;
    ObjectId id;
    bool operator>(const SoftPinExpiry& o) const { return until > o.until; }
  };
  // An object left with persistent replicas only: it leaves main for pmem.
  struct PolicyMove {
    ObjectId id;
    uint64_t bytes;
    uint64_t hash;
  };

  PolicySet(const MasterConfig& config, Policies policies);

  // A read touched `id` for the first time since the last flush (lock-free);
  // false when the queue is full (the caller folds the touch into the lease).
  bool NoteTouch(ObjectId id) { return touches_.Push(id); }
  // Soft-pinned objects in the order.
  size_t SoftCount() const;

  // A hold of the set's lock, through which everything else is reached. The
  // waiters of AwaitFilled are woken once the hold that ended a fill ends.
  class Locked {
   public:
    explicit Locked(PolicySet& set) : set_(set), lock_(set.mu_) {}
    ~Locked();
    Locked(const Locked&) = delete;
    Locked& operator=(const Locked&) = delete;

    cache::EvictionPolicy& main() const { return *set_.p_.main; }
    cache::EvictionPolicy& soft() const { return *set_.p_.soft; }
    cache::EvictionPolicy& pmem() const { return *set_.p_.pmem; }
    cache::EvictionPolicy& Of(Tier tier) const { return set_.p_.Of(tier); }
    // Each tenant's own order (tenant_orders.h): Admit, Forget and Access
    // keep it in step with the policies above.
    TenantOrders& tenants() const { return set_.tenants_; }
    // The chain parent any policy holds for `id` (kNoParent: none).
    ObjectId ParentOf(ObjectId id) const;
    void SetCapacities(uint64_t dram_bytes, uint64_t pmem_bytes);

    // ---- Admission and leaving ----
    // Into the soft policy while its soft pin lasts at `now`, else its tier's.
    void Admit(const Admission& a, TimeMs now);
    // Until the fill ends (filling() must be true).
    void Defer(const Admission& a) { set_.late_admits_.push_back(a); }
    void Forget(std::span<const ObjectId> ids);
    // Those of `moves` that main holds go to pmem.
    void JoinPmem(std::span<const PolicyMove> moves);

    // ---- Reads and soft pins ----
    bool PopTouch(ObjectId* id) { return set_.touches_.Pop(id); }
    // A flushed read of `id`: every policy that holds it is told, and a
    // persistent-tier object counts towards its promotion.
    void Access(ObjectId id, TimeMs now);
    std::vector<ObjectId> TakePromotions() { return set_.promotions_.Take(); }
    // A session hint (MasterService::EndSession): every policy that holds
    // `id`, and its tenant's order, is told that its conversation ended. The
    // caller flushes the queued touches first, so that a read from before the
    // hint is not replayed after it (which would clear the mark).
    void EndSession(ObjectId id);
    // The next soft-pinned object whose pin has ended by `now`, taken out of
    // the soft policy (the caller admits it to its tier's); nullopt: none.
    std::optional<ObjectId> PopEndedSoftPin(TimeMs now);

    // ---- A restore's fill ----
    bool filling() const { return set_.filling_; }
    void AwaitFilled();
    void BeginFill() { set_.filling_ = true; }
    // Swaps in `filled` (with its soft pins' ends), then replays what came
    // meanwhile: forgets, tier moves, and the deferred admissions of objects
    // that `complete` still says are complete, in order.
    void EndFill(Policies filled, std::span<const SoftPinExpiry> soft_ends, uint64_t dram_bytes,
                 uint64_t pmem_bytes, const std::function<bool(ObjectId)>& complete, TimeMs now);

   private:
    PolicySet& set_;
    std::unique_lock<std::mutex> lock_;
    bool ended_fill_ = false;
  };
  Locked Lock() { return Locked(*this); }

 private:
  mutable std::mutex mu_;
  Policies p_;
  std::priority_queue<SoftPinExpiry, std::vector<SoftPinExpiry>, std::greater<>> soft_ends_;
  PromotionCandidates promotions_;
  TouchQueue touches_;  // producers lock-free; the consumer holds mu_
  TenantOrders tenants_;  // not swapped by a restore's fill: its objects are admitted after it
  // A restore's fill (see the contract).
  bool filling_ = false;
  std::vector<Admission> late_admits_;
  std::vector<ObjectId> forgotten_while_filling_;
  std::vector<PolicyMove> moved_while_filling_;
  std::condition_variable filled_cv_;
};

}  // namespace crescent::master
