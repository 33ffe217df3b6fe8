#include "cache/sieve_policy.h"

namespace crescent::cache {

void SievePolicy::Access(ObjectId id) {
  if (auto slot = list_.Find(id); slot != List::kNil) list_.at(slot).extra.visited = true;
}

void SievePolicy::Remove(ObjectId id) {
  auto slot = list_.Find(id);
  if (slot == List::kNil) return;
  if (slot == hand_) hand_ = list_.Newer(slot);
  list_.Erase(slot);
}

std::optional<ObjectId> SievePolicy::Evict(const SpareFn& spare) {
  const size_t candidates = list_.Count();
  if (candidates == 0) return std::nullopt;
  size_t spared = 0;
  auto slot = hand_ != List::kNil ? hand_ : list_.Oldest();
  // Terminates: each step clears a bit, spends a spare, or evicts, and bits are
  // set here only by spares.
  for (;;) {
    auto& node = list_.at(slot);
    if (node.extra.visited) {
      node.extra.visited = false;
      slot = Advance(slot);
      continue;
    }
    if (spare && spare(node.id)) {
      node.extra.visited = true;
      slot = Advance(slot);
      if (++spared >= candidates) {
        hand_ = slot;
        return std::nullopt;
      }
      continue;
    }
    hand_ = list_.Newer(slot);
    return list_.Erase(slot);
  }
}

}  // namespace crescent::cache
