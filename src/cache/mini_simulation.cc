#include "cache/mini_simulation.h"

namespace crescent::cache {

MiniSimulation::MiniSimulation(std::unique_ptr<EvictionPolicy> policy, uint64_t capacity)
    : policy_(std::move(policy)), capacity_(capacity) {
  policy_->SetCapacity(capacity_);
}

void MiniSimulation::SetCapacity(uint64_t capacity) {
  capacity_ = capacity;
  policy_->SetCapacity(capacity);
  MakeRoom(0);
}

void MiniSimulation::MakeRoom(uint64_t size) {
  while (policy_->UsedSize() + size > capacity_ && policy_->Evict()) {
  }
}

void MiniSimulation::Reference(uint64_t key, uint64_t anchor, uint64_t size, bool ends_write) {
  const bool held = policy_->Contains(key);
  const bool hit = held && (anchor == kNoParent || (last_key_ == anchor && last_hit_));
  if (held) {
    policy_->Access(key);
  } else {
    MakeRoom(size);
    policy_->Insert(key, size, {.parent = anchor, .ends_write = ends_write});
  }
  ++window_.refs;
  if (hit) ++window_.hits;
  last_key_ = key;
  last_hit_ = hit;
}

MiniSimulation::Window MiniSimulation::TakeWindow() {
  Window w = window_;
  window_ = {};
  return w;
}

}  // namespace crescent::cache
