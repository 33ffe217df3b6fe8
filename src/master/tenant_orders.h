// TenantOrders: each tenant's own eviction order, a policy of the configured
// kind holding only that tenant's evictable objects, so that a put over its
// tenant's quota evicts that tenant's objects in the order the configured
// policy gives them, looking at no other tenant's (docs/security.md,
// "Quotas"). The engine's policies (policy_set.h) keep every object as
// before: an object of a tenant sits in both, and leaves both.
//
// Contract: owned by PolicySet and used under its lock only. Each call is a
// hash lookup or two plus the policy's own work; ids may be stale (the
// caller re-resolves a victim by generation).
#pragma once

#include <absl/container/flat_hash_map.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cache/eviction_policy.h"
#include "master/object_id.h"

namespace crescent::master {

class TenantOrders {
 public:
  TenantOrders(std::string policy, cache::PolicyOptions options)
      : policy_(std::move(policy)), options_(options) {}

  // Admits tenant `tenant`'s object `id` (not tracked yet).
  void Admit(std::string_view tenant, ObjectId id, uint64_t size, const cache::InsertInfo& info);
  void Access(ObjectId id);
  // A session hint for `id` (EvictionPolicy::EndSession), in its tenant's order.
  void EndSession(ObjectId id);
  void Forget(ObjectId id);
  // The tenant's next victim that `spare` does not keep, taken out of its
  // order; nullopt when none (the policy's own limit bounds the walk).
  std::optional<ObjectId> Evict(std::string_view tenant, const cache::SpareFn& spare);
  void SetCapacity(uint64_t bytes);
  // Objects tracked over all tenants.
  size_t Count() const { return owner_.size(); }

 private:
  std::string policy_;
  cache::PolicyOptions options_;
  absl::flat_hash_map<std::string, std::unique_ptr<cache::EvictionPolicy>> orders_;
  absl::flat_hash_map<ObjectId, cache::EvictionPolicy*> owner_;  // id -> its tenant's order
};

}  // namespace crescent::master
