// LruPolicy: least recently used.
//
// Invariant: every tracked object sits on one list ordered by last use, most
// recent first; Insert() and Access() move an object to the newest end. The
// victim is the oldest object; a spared one counts as just used and moves to the
// newest end, so consecutive Evict() calls do not ask about it again until every
// other object has been considered.
#pragma once

#include "cache/list_policy.h"

namespace crescent::cache {

class LruPolicy final : public ListPolicy<NoExtra> {
 public:
  explicit LruPolicy(const PolicyOptions& /*options*/ = {}) {}

  void Access(ObjectId id) override;
  std::optional<ObjectId> Evict(const SpareFn& spare = nullptr) override;
  std::string_view Name() const override { return "lru"; }
};

}  // namespace crescent::cache
