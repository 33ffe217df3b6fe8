#include "cache/lru_policy.h"

namespace crescent::cache {

void LruPolicy::Access(ObjectId id) {
  ended_.Clear(id);
  if (auto slot = list_.Find(id); slot != List::kNil) list_.MoveToNewest(slot);
}

std::optional<ObjectId> LruPolicy::Evict(const SpareFn& spare) {
  if (auto victim = ended_.Evict(*this, spare)) return victim;
  const size_t candidates = list_.Count();
  size_t spared = 0;
  for (auto slot = list_.Oldest(); slot != List::kNil; slot = list_.Oldest()) {
    if (spare && spare(list_.at(slot).Id())) {
      list_.MoveToNewest(slot);
      if (++spared >= candidates) break;
      continue;
    }
    return list_.Erase(slot);
  }
  return std::nullopt;
}

}  // namespace crescent::cache
