#include "cache/policy_handover.h"

#include <cassert>

namespace crescent::cache {

void PolicyHandover::Readmit(ObjectId id, uint64_t size, const InsertInfo& info) {
  draining_->Remove(id);
  live_->Insert(id, size, info);
  live_->Access(id);  // it was just used: a hit, not a first reference
  DropDrainedPolicy();
}

void PolicyHandover::Remove(ObjectId id) {
  live_->Remove(id);
  if (draining_) {
    draining_->Remove(id);
    DropDrainedPolicy();
  }
}

std::optional<ObjectId> PolicyHandover::Evict(const SpareFn& spare) {
  if (draining_) {
    std::optional<ObjectId> victim = draining_->Evict(spare);
    DropDrainedPolicy();
    // nullopt: everything left there was spared; the live policy may have more.
    if (victim) return victim;
  }
  return live_->Evict(spare);
}

void PolicyHandover::SetCapacity(uint64_t capacity) {
  live_->SetCapacity(capacity);
  if (draining_) draining_->SetCapacity(capacity);
}

bool PolicyHandover::VisitInEvictionOrder(const std::function<void(ObjectId)>& fn) const {
  if (!draining_) return live_->VisitInEvictionOrder(fn);
  // Whether a policy keeps an order shows only by asking it, so both are
  // listed before fn sees any id (a transient copy, only during a move).
  std::vector<ObjectId> order;
  order.reserve(Count());
  auto add = [&](ObjectId id) { order.push_back(id); };
  if (!draining_->VisitInEvictionOrder(add) || !live_->VisitInEvictionOrder(add)) return false;
  for (ObjectId id : order) fn(id);
  return true;
}

void PolicyHandover::Switch(std::unique_ptr<EvictionPolicy> next) {
  assert(!draining_ && next->Count() == 0);
  draining_ = std::move(live_);
  live_ = std::move(next);
  DropDrainedPolicy();
}

void PolicyHandover::DropDrainedPolicy() {
  if (draining_ && draining_->Count() == 0) draining_.reset();
}

}  // namespace crescent::cache
