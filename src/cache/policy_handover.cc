#include "cache/policy_handover.h"

#include <algorithm>
#include <cassert>
#include <utility>

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
  if (!draining_) return live_->Evict(spare);
  // Each policy gives victims in proportion to its share of the cache.
  const double used = static_cast<double>(UsedSize());
  credit_ += used > 0 ? static_cast<double>(draining_->UsedSize()) / used : 1.0;
  EvictionPolicy* first = live_.get();
  EvictionPolicy* second = draining_.get();
  if (credit_ >= 1.0 || live_->Count() == 0) {
    credit_ = std::max(0.0, credit_ - 1.0);
    std::swap(first, second);
  }
  std::optional<ObjectId> victim = first->Evict(spare);
  // nullopt: everything left there was spared; the other may have more.
  if (!victim) victim = second->Evict(spare);
  DropDrainedPolicy();
  return victim;
}

void PolicyHandover::SetCapacity(uint64_t capacity) {
  live_->SetCapacity(capacity);
  if (draining_) draining_->SetCapacity(capacity);
}

void PolicyHandover::Switch(std::unique_ptr<EvictionPolicy> next) {
  assert(!draining_ && next->Count() == 0);
  draining_ = std::move(live_);
  live_ = std::move(next);
  credit_ = 0;
  DropDrainedPolicy();
}

void PolicyHandover::DropDrainedPolicy() {
  if (draining_ && draining_->Count() == 0) draining_.reset();
}

}  // namespace crescent::cache
