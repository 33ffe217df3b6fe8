#include "cache/mini_simulation.h"

namespace crescent::cache {

MiniSimulation::MiniSimulation(std::unique_ptr<EvictionPolicy> policy, uint64_t capacity)
    : cache_(std::move(policy)), capacity_(capacity) {
  cache_.SetCapacity(capacity_);
}

void MiniSimulation::SetCapacity(uint64_t capacity) {
  capacity_ = capacity;
  cache_.SetCapacity(capacity);
  MakeRoom(0);
}

void MiniSimulation::MakeRoom(uint64_t size) {
  while (cache_.UsedSize() + size > capacity_ && cache_.Evict(nullptr)) {
  }
}

void MiniSimulation::Reference(uint64_t key, uint64_t anchor, uint64_t size, bool ends_write) {
  const bool held = cache_.Contains(key);
  const bool hit = held && (anchor == kNoParent || (last_key_ == anchor && last_hit_));
  const InsertInfo info{.parent = anchor, .ends_write = ends_write};
  if (!held) {
    MakeRoom(size);
    cache_.Insert(key, size, info);
  } else if (cache_.NeedsReadmit(key)) {
    cache_.Readmit(key, size, info);
  } else {
    cache_.Access(key);
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
