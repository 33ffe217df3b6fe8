// Tenant quotas (docs/security.md, "Quotas"): a put is charged to its key's
// tenant before it allocates; over the quota, the tenant's own objects are
// evicted first, one at a time, in the order of the tenant's own policy
// (tenant_orders.h), until the put fits or nothing of the tenant's can go.
#include <mutex>
#include <shared_mutex>

#include "master/master_service.h"

namespace crescent::master {

Status MasterService::ChargeQuota(std::string_view key, uint64_t size) {
  const std::string_view tenant = TenantOfKey(key);
  if (tenant.empty()) return Status::Ok();
  uint64_t used = 0;
  // Bounded: each round takes an object out of the tenant's order, or ends.
  while (!tenants_.TryCharge(tenant, size, &used)) {
    const uint64_t quota = tenants_.Quota(tenant);
    const bool too_big = size > quota;
    if (too_big || !EvictForQuota(tenant)) {
      return Status(ErrorCode::kQuotaExceeded,
                    "tenant '" + std::string(tenant) + "' has a quota of " + std::to_string(quota) +
                        " bytes and uses " + std::to_string(used) + "; a put of " +
                        std::to_string(size) + " bytes " +
                        (too_big ? std::string("is larger than the quota")
                                 : std::string("does not fit, and none of the tenant's objects "
                                               "can be evicted (pinned, soft-pinned, leased or "
                                               "still being written)")));
    }
  }
  return Status::Ok();
}

bool MasterService::EvictForQuota(std::string_view tenant) {
  const TimeMs now = clock_.NowMs();
  std::optional<ObjectId> victim;
  VictimLock victim_lock;
  {
    PolicyLock order = policies_.Lock();
    order.AwaitFilled();
    FlushTouchesLocked(order);
    // As a watermark eviction spares (leased, hard-pinned), and soft-pinned
    // objects too while their pin lasts.
    cache::SpareFn spare = [&](ObjectId id) {
      if (SpareLocked(id, now, &victim_lock, /*unreachable_only=*/false)) return true;
      const ObjectEntry* e = objects_.ShardOf(id).Resolve(id);
      if (e != nullptr && e->soft_pin_until() > now) {
        victim_lock = VictimLock();
        return true;
      }
      return false;
    };
    victim = order.tenants().Evict(tenant, spare);
    if (!victim) return false;
    // It leaves the engine's policies too (whichever holds it).
    order.main().Remove(*victim);
    order.soft().Remove(*victim);
    order.pmem().Remove(*victim);
  }
  // A stale id frees nothing, but it left the order: the caller tries again.
  EvictVictim(*victim, std::move(victim_lock), EvictionReason::kForPut);
  return true;
}

}  // namespace crescent::master
