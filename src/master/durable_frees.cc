#include "master/durable_frees.h"

#include <algorithm>

namespace crescent::master {

void DurableFrees::Add(uint64_t position, std::span<const ReplicaSlot> slots, uint64_t slot_bytes) {
  std::lock_guard lock(mu_);
  for (const ReplicaSlot& s : slots) {
    entries_.push_back({position, s, slot_bytes});
    bytes_ += slot_bytes;
  }
}

std::vector<ReplicaSlot> DurableFrees::TakeDurable(uint64_t synced) {
  std::vector<ReplicaSlot> out;
  std::lock_guard lock(mu_);
  // Entries come nearly in position order (appends from several shards
  // interleave), so a scan of all of them is what it takes; the list holds
  // only what was freed since the last sync.
  std::erase_if(entries_, [&](const Entry& e) {
    if (e.position > synced) return false;
    out.push_back(e.slot);
    bytes_ -= e.bytes;
    return true;
  });
  return out;
}

uint64_t DurableFrees::newest() const {
  std::lock_guard lock(mu_);
  uint64_t newest = 0;
  for (const Entry& e : entries_) newest = std::max(newest, e.position);
  return newest;
}

uint64_t DurableFrees::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

}  // namespace crescent::master
