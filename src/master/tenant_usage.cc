#include "master/tenant_usage.h"

#include <algorithm>

#include "master/tenant_key.h"

namespace crescent::master {

void TenantUsage::SetQuotas(const std::map<std::string, uint64_t>& quotas) {
  std::lock_guard lock(mu_);
  for (auto& [name, t] : tenants_) t.quota_bytes = 0;
  for (const auto& [name, quota] : quotas) {
    TenantStats& t = tenants_[name];
    t.tenant = name;
    t.quota_bytes = quota;
  }
}

uint64_t TenantUsage::Quota(std::string_view tenant) const {
  std::lock_guard lock(mu_);
  auto it = tenants_.find(std::string(tenant));
  return it == tenants_.end() ? 0 : it->second.quota_bytes;
}

bool TenantUsage::TryCharge(std::string_view tenant, uint64_t bytes, uint64_t* used) {
  std::lock_guard lock(mu_);
  auto [it, fresh] = tenants_.try_emplace(std::string(tenant));
  TenantStats& t = it->second;
  if (fresh) t.tenant = std::string(tenant);
  if (t.quota_bytes != 0 && (bytes > t.quota_bytes || t.bytes > t.quota_bytes - bytes)) {
    *used = t.bytes;
    return false;
  }
  t.bytes += bytes;
  return true;
}

TenantStats* TenantUsage::EntryOfKeyLocked(std::string_view key) {
  const std::string_view tenant = TenantOfKey(key);
  if (tenant.empty()) return nullptr;
  auto [it, fresh] = tenants_.try_emplace(std::string(tenant));
  if (fresh) it->second.tenant = std::string(tenant);
  return &it->second;
}

void TenantUsage::Charge(std::string_view key, uint64_t bytes) {
  if (!IsTenantKey(key)) return;
  std::lock_guard lock(mu_);
  if (TenantStats* t = EntryOfKeyLocked(key)) t->bytes += bytes;
}

void TenantUsage::Release(std::string_view key, uint64_t bytes, bool complete) {
  if (!IsTenantKey(key)) return;
  std::lock_guard lock(mu_);
  TenantStats* t = EntryOfKeyLocked(key);
  if (t == nullptr) return;
  t->bytes -= std::min(t->bytes, bytes);
  if (complete && t->objects > 0) --t->objects;
}

void TenantUsage::Completed(std::string_view key) {
  if (!IsTenantKey(key)) return;
  std::lock_guard lock(mu_);
  if (TenantStats* t = EntryOfKeyLocked(key)) ++t->objects;
}

void TenantUsage::Evicted(std::string_view key) {
  if (!IsTenantKey(key)) return;
  std::lock_guard lock(mu_);
  if (TenantStats* t = EntryOfKeyLocked(key)) ++t->evictions;
}

void TenantUsage::Read(std::string_view key, bool hit) {
  if (!IsTenantKey(key)) return;
  std::lock_guard lock(mu_);
  if (TenantStats* t = EntryOfKeyLocked(key)) ++(hit ? t->hits : t->misses);
}

std::vector<TenantStats> TenantUsage::Snapshot() const {
  std::vector<TenantStats> out;
  {
    std::lock_guard lock(mu_);
    out.reserve(tenants_.size());
    for (const auto& [name, t] : tenants_) out.push_back(t);
  }
  std::sort(out.begin(), out.end(),
            [](const TenantStats& a, const TenantStats& b) { return a.tenant < b.tenant; });
  return out;
}

}  // namespace crescent::master
