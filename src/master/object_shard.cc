#include "master/object_shard.h"

#include <cstring>

namespace crescent::master {

ObjectShard::ObjectShard(uint32_t index)
    : index_(index), index_set_(0, SlotHash{&slab_}, SlotEq{&slab_}) {}

uint32_t ObjectShard::Find(std::string_view key, uint64_t hash) const {
  auto it = index_set_.find(Probe{key, hash});
  return it == index_set_.end() ? kNoSlot : *it;
}

ObjectEntry* ObjectShard::Resolve(ObjectId id) {
  uint32_t slot = IdSlot(id);
  if (IdShard(id) != index_ || slot >= slab_.size()) return nullptr;
  ObjectEntry& e = slab_[slot];
  if (e.state == EntryState::kFree || (e.generation & 0xffffff) != IdGeneration(id)) return nullptr;
  return &e;
}

uint32_t ObjectShard::Create(std::string_view key, uint64_t hash) {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slab_.size());
    slab_.emplace_back();
  }
  ObjectEntry& e = slab_[slot];
  e.key = std::make_unique_for_overwrite<char[]>(key.size());
  std::memcpy(e.key.get(), key.data(), key.size());
  e.key_len = static_cast<uint16_t>(key.size());
  e.hash = hash;
  e.state = EntryState::kPending;
  e.lease_until.store(0, std::memory_order_relaxed);
  e.touched.store(0, std::memory_order_relaxed);
  index_set_.insert(slot);
  key_bytes_ += key.size();
  return slot;
}

void ObjectShard::Publish(uint32_t slot) {
  ObjectEntry& e = slab_[slot];
  e.state = EntryState::kComplete;
  keys_.Insert(slot, e.key_view(), [this](uint32_t s) { return slab_[s].key_view(); });
}

void ObjectShard::Free(uint32_t slot) {
  ObjectEntry& e = slab_[slot];
  if (e.state == EntryState::kComplete) {
    keys_.Erase(slot, e.key_view());
  }
  index_set_.erase(slot);
  key_bytes_ -= e.key_len;
  e.key.reset();
  e.more.reset();
  e.key_len = 0;
  e.num_replicas = 0;
  e.size = 0;
  e.soft_pin_until = 0;
  e.hard_pin = false;
  e.state = EntryState::kFree;
  ++e.generation;
  free_slots_.push_back(slot);
}

void ObjectShard::VisitPrefix(std::string_view prefix,
                              const std::function<bool(uint32_t slot)>& fn) const {
  keys_.VisitPrefix(prefix, [this](uint32_t s) { return slab_[s].key_view(); }, fn);
}

void ObjectShard::VisitAll(const std::function<void(uint32_t slot)>& fn) const {
  for (uint32_t slot : index_set_) fn(slot);
}

size_t ObjectShard::MemoryBytes() const {
  size_t slab = slab_.size() * sizeof(ObjectEntry);
  size_t index = index_set_.capacity() * (sizeof(uint32_t) + 1);
  size_t extra_replicas = 0;
  for (const ObjectEntry& e : slab_) {
    if (e.num_replicas > 1) extra_replicas += (e.num_replicas - 1) * sizeof(ReplicaSlot);
  }
  return slab + index + keys_.MemoryBytes() + key_bytes_ + extra_replicas +
         free_slots_.capacity() * sizeof(uint32_t);
}

}  // namespace crescent::master
