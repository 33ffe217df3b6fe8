#include "master/object_shard.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <shared_mutex>

namespace crescent::master {

ObjectShard::ObjectShard(uint32_t index) : index_(index) {}

uint32_t ObjectShard::Find(std::string_view key, uint64_t hash) const {
  const uint32_t found = by_key_.FindHashed(
      static_cast<uint32_t>(hash), [&](uint32_t s) { return slab_[s - 1].key_view() == key; });
  return found == cache::SlotIndex::kNil ? kNoSlot : found - 1;
}

ObjectEntry* ObjectShard::Resolve(ObjectId id) {
  uint32_t slot = IdSlot(id);
  if (IdShard(id) != index_ || slot >= slab_.size()) return nullptr;
  ObjectEntry& e = slab_[slot];
  if (e.state == EntryState::kFree || (e.generation & 0xffffff) != IdGeneration(id)) return nullptr;
  return &e;
}

uint32_t ObjectShard::Create(std::string_view key, uint64_t hash,
                             std::span<const ReplicaSlot> replicas, TimeMs soft_pin_until) {
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(slab_.size());
    slab_.EmplaceBack();
  }
  ObjectEntry& e = slab_[slot];
  e.Assign(key, soft_pin_until, replicas, arena_blocks_ ? &arena_ : nullptr);
  e.state = EntryState::kPending;
  e.checksum = 0;
  e.lease_until.store(0, std::memory_order_relaxed);
  e.touch.store(0, std::memory_order_relaxed);
  // Placed by the caller's hash; the key is not present, so no slot matches.
  by_key_.AddHashed(
      static_cast<uint32_t>(hash), [](uint32_t) { return false; }, [&] { return slot + 1; });
  block_bytes_ += e.block_bytes();
  return slot;
}

void ObjectShard::SetReplicas(uint32_t slot, std::span<const ReplicaSlot> replicas) {
  ObjectEntry& e = slab_[slot];
  block_bytes_ -= e.block_bytes();
  e.Assign(e.key_view(), e.soft_pin_until(), replicas);
  block_bytes_ += e.block_bytes();
}

void ObjectShard::Publish(uint32_t slot) {
  ObjectEntry& e = slab_[slot];
  e.state = EntryState::kComplete;
  if (keys_deferred_) return;
  keys_.Insert(slot, e.key_view(), [this](uint32_t s) { return slab_[s].key_view(); });
}

void ObjectShard::Free(uint32_t slot) {
  ObjectEntry& e = slab_[slot];
  if (e.state == EntryState::kComplete && !keys_deferred_) {
    keys_.Erase(slot, e.key_view());
  }
  by_key_.EraseHashed(static_cast<uint32_t>(e.Hash()), slot + 1);
  block_bytes_ -= e.block_bytes();
  e.block.reset();
  e.key_len = 0;
  e.num_replicas = 0;
  e.size = 0;
  e.soft_pinned = 0;
  e.hard_pin = 0;
  e.state = EntryState::kFree;
  ++e.generation;
  free_slots_.push_back(slot);
}

void ObjectShard::DeferKeyIndex() {
  keys_deferred_ = true;
  keys_.Build({}, [](uint32_t) { return std::string_view(); });
}

void ObjectShard::BuildKeyIndex() {
  // Sorted on the first 8 key bytes (big-endian, zero-padded: the same order
  // as the keys') held beside each slot, so that most comparisons read no key.
  struct Item {
    uint64_t head;
    std::string_view key;
    uint32_t slot;
  };
  std::vector<Item> items;
  items.reserve(by_key_.size());
  for (uint32_t slot = 0; slot < slab_.size(); ++slot) {
    const ObjectEntry& e = slab_[slot];
    if (e.state != EntryState::kComplete) continue;
    const std::string_view key = e.key_view();
    unsigned char bytes[8] = {};
    std::memcpy(bytes, key.data(), std::min<size_t>(key.size(), 8));
    uint64_t head = 0;
    for (unsigned char b : bytes) head = (head << 8) | b;
    items.push_back({head, key, slot});
  }
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return a.head != b.head ? a.head < b.head : a.key < b.key;
  });
  // The keys in sorted order lie scattered in memory: each is loaded a few
  // keys ahead of its turn.
  constexpr size_t kAhead = 8;
  keys_.BuildSorted(
      items.size(), [&](size_t i) { return items[i].slot; },
      [&](size_t i) {
        if (i + kAhead < items.size()) __builtin_prefetch(items[i + kAhead].key.data());
        return items[i].key;
      });
  keys_deferred_ = false;
}

void ObjectShard::UseBlockArena(bool on) {
  arena_blocks_ = on;
  if (!on) arena_.Close();
}

void ObjectShard::Reserve(size_t count) { by_key_.Reserve(by_key_.size() + count); }

void ObjectShard::VisitPrefix(std::string_view prefix,
                              const std::function<bool(uint32_t slot)>& fn) const {
  keys_.VisitPrefix(
      prefix, [this](uint32_t s) { return slab_[s].key_view(); }, fn);
}

void ObjectShard::VisitPrefixAfter(std::string_view prefix, std::string_view after,
                                   const std::function<bool(uint32_t slot)>& fn) const {
  keys_.VisitPrefixAfter(
      prefix, after, [this](uint32_t s) { return slab_[s].key_view(); }, fn);
}

void ObjectShard::VisitPrefixesOf(std::string_view key, size_t min_length,
                                  const std::function<bool(uint32_t slot)>& fn) const {
  keys_.VisitPrefixesOf(
      key, min_length, [this](uint32_t s) { return slab_[s].key_view(); }, fn);
}

void ObjectShard::VisitAll(const std::function<void(uint32_t slot)>& fn) const {
  // In slab order: entries are read one after the other, not in hash order.
  for (uint32_t slot = 0; slot < slab_.size(); ++slot) {
    if (slab_[slot].state != EntryState::kFree) fn(slot);
  }
}

double ObjectShard::VisitCompleteInSteps(const std::function<void(uint32_t slot)>& fn) const {
  double longest = 0;
  for (uint32_t begin = 0;; begin += kSlotsPerStep) {
    std::shared_lock lock(mu_);
    const auto since = std::chrono::steady_clock::now();
    // Slots are stable for an entry's life, and the slab only grows.
    const uint32_t end = std::min<uint32_t>(begin + kSlotsPerStep, slab_.size());
    if (begin >= end) break;
    for (uint32_t slot = begin; slot < end; ++slot) {
      if (slab_[slot].state == EntryState::kComplete) fn(slot);
    }
    longest = std::max(
        longest, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
                     .count());
  }
  return longest;
}

size_t ObjectShard::MemoryBytes() const {
  size_t slab = slab_.size() * sizeof(ObjectEntry);
  size_t index = by_key_.MemoryBytes();
  return slab + index + keys_.MemoryBytes() + block_bytes_ +
         free_slots_.capacity() * sizeof(uint32_t);
}

}  // namespace crescent::master
