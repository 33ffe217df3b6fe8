// FifoPolicy: first in, first out.
//
// Invariant: every tracked object sits on one list in insertion order, newest
// first. Hits do not reorder it, so the victim is always the oldest object that
// the spare callback does not keep. A spared object is "just accessed", which for
// FIFO means it keeps its place: Evict() walks past it towards the newer end, and
// the next Evict() asks about it again.
#pragma once

#include "cache/list_policy.h"

namespace crescent::cache {

class FifoPolicy final : public ListPolicy<NoExtra> {
 public:
  explicit FifoPolicy(const PolicyOptions& /*options*/ = {}) {}

  // A read moves nothing; it only clears a session hint's mark.
  void Access(ObjectId id) override { ended_.Clear(id); }
  std::optional<ObjectId> Evict(const SpareFn& spare = nullptr) override;
  std::string_view Name() const override { return "fifo"; }
};

}  // namespace crescent::cache
