#include "cache/fifo_policy.h"

namespace crescent::cache {

std::optional<ObjectId> FifoPolicy::Evict(const SpareFn& spare) {
  if (auto victim = ended_.Evict(*this, spare)) return victim;
  const size_t candidates = list_.Count();
  size_t spared = 0;
  for (auto slot = list_.Oldest(); slot != List::kNil; slot = list_.Newer(slot)) {
    if (spare && spare(list_.at(slot).Id())) {
      if (++spared >= candidates) break;
      continue;
    }
    return list_.Erase(slot);
  }
  return std::nullopt;
}

}  // namespace crescent::cache
