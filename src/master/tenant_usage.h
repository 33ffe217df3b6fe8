// TenantUsage: each tenant's byte quota and what it uses (docs/security.md,
// "Quotas"), with its read and eviction counts for the metrics.
//
// Contract:
//  - A tenant's bytes are the sizes of its objects, complete and pending
//    (one replica's worth: what its clients put). A put is charged when it
//    starts (TryCharge, refused past the quota) and released when its entry
//    goes, whatever removes it (MasterService::RemoveLocked).
//  - Only internal keys of a tenant (tenant_key.h) are counted; the default
//    namespace is neither counted nor limited, and costs one byte compare.
//  - One mutex, a leaf: taken under a shard lock, never taking another. Each
//    call is one hash lookup in a map of the tenants there are.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "master/types.h"

namespace crescent::master {

class TenantUsage {
 public:
  // Each tenant's quota in bytes; a tenant not named has none. Replaces the
  // previous quotas (an auth file's reload); usage is kept.
  void SetQuotas(const std::map<std::string, uint64_t>& quotas);
  // `tenant`'s quota; 0: none.
  uint64_t Quota(std::string_view tenant) const;

  // Charges `bytes` to `tenant` when its usage stays within its quota (or it
  // has none): true. Otherwise charges nothing, and *used is its usage.
  bool TryCharge(std::string_view tenant, uint64_t bytes, uint64_t* used);
  // Charges `key`'s tenant unconditionally (a restored object).
  void Charge(std::string_view key, uint64_t bytes);
  // `key`'s object of `bytes` went; `complete`: it was a complete object.
  void Release(std::string_view key, uint64_t bytes, bool complete);
  // `key`'s put completed (restored objects count as completed too).
  void Completed(std::string_view key);
  void Evicted(std::string_view key);
  void Read(std::string_view key, bool hit);

  // Every tenant with a quota or with usage, by name.
  std::vector<TenantStats> Snapshot() const;

 private:
  // The tenant's entry, made if missing; nullptr for a default key.
  TenantStats* EntryOfKeyLocked(std::string_view key);

  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, TenantStats> tenants_;
};

}  // namespace crescent::master
