#include "master/tenant_orders.h"

namespace crescent::master {

void TenantOrders::Admit(std::string_view tenant, ObjectId id, uint64_t size,
                         const cache::InsertInfo& info) {
  auto it = orders_.find(std::string(tenant));
  if (it == orders_.end()) {
    // The name was checked when the engine's policies were made (PolicySet::Make).
    auto made = cache::MakePolicy(policy_, options_);
    if (!made.ok()) return;
    (*made)->SetCapacity(options_.capacity);
    it = orders_.emplace(std::string(tenant), std::move(made).value()).first;
  }
  cache::EvictionPolicy* order = it->second.get();
  if (!owner_.try_emplace(id, order).second) return;  // admitted already
  // A chain parent of another tenant's is no parent here.
  cache::InsertInfo mine = info;
  if (mine.parent != cache::kNoParent) {
    auto p = owner_.find(mine.parent);
    if (p == owner_.end() || p->second != order) mine.parent = cache::kNoParent;
  }
  order->Insert(id, size, mine);
}

void TenantOrders::Access(ObjectId id) {
  if (owner_.empty()) return;
  if (auto it = owner_.find(id); it != owner_.end()) it->second->Access(id);
}

void TenantOrders::EndSession(ObjectId id) {
  if (owner_.empty()) return;
  if (auto it = owner_.find(id); it != owner_.end()) it->second->EndSession(id);
}

void TenantOrders::Forget(ObjectId id) {
  if (owner_.empty()) return;
  auto it = owner_.find(id);
  if (it == owner_.end()) return;
  it->second->Remove(id);
  owner_.erase(it);
}

std::optional<ObjectId> TenantOrders::Evict(std::string_view tenant, const cache::SpareFn& spare) {
  auto it = orders_.find(std::string(tenant));
  if (it == orders_.end()) return std::nullopt;
  std::optional<ObjectId> victim = it->second->Evict(spare);
  if (victim) owner_.erase(*victim);
  return victim;
}

void TenantOrders::SetCapacity(uint64_t bytes) {
  options_.capacity = bytes;
  for (auto& [name, order] : orders_) order->SetCapacity(bytes);
}

}  // namespace crescent::master
