#include "cache/sieve_policy.h"

namespace crescent::cache {

void SievePolicy::Insert(ObjectId id, uint64_t size, const InsertInfo& /*info*/) {
  const auto slot = list_.Add(id, size);
  if (slot == List::kNil) return;
  if (slot >= visited_.size()) visited_.resize(slot + 1);
  visited_[slot] = false;
  list_.PushNewest(slot);
}

void SievePolicy::Access(ObjectId id) {
  ended_.Clear(id);
  if (auto slot = list_.Find(id); slot != List::kNil) visited_[slot] = true;
}

void SievePolicy::Remove(ObjectId id) {
  ended_.Clear(id);
  auto slot = list_.Find(id);
  if (slot == List::kNil) return;
  if (slot == hand_) hand_ = list_.Newer(slot);
  list_.Erase(slot);
}

std::optional<ObjectId> SievePolicy::Evict(const SpareFn& spare) {
  if (auto victim = ended_.Evict(*this, spare)) return victim;
  const size_t candidates = list_.Count();
  if (candidates == 0) return std::nullopt;
  size_t spared = 0;
  auto slot = hand_ != List::kNil ? hand_ : list_.Oldest();
  // Terminates: each step clears a bit, spends a spare, or evicts, and bits are
  // set here only by spares.
  for (;;) {
    if (visited_[slot]) {
      visited_[slot] = false;
      slot = Advance(slot);
      continue;
    }
    if (spare && spare(list_.at(slot).Id())) {
      visited_[slot] = true;
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
