// The default EvictionOrder: the ids VisitInEvictionOrder() gives, copied one
// at a time (list policies override it: list_policy.h).
#include <algorithm>

#include "cache/eviction_policy.h"

namespace crescent::cache {
namespace {

class IdOrder final : public EvictionOrder {
 public:
  void Reserve(size_t count) override {
    // resize() writes every element, so the pages are touched now.
    ids_.resize(count + count / 8 + 1024);
    ids_.clear();
  }
  bool Visit(const std::function<void(ObjectId)>& fn) const override {
    if (!kept_) return false;
    std::for_each(ids_.begin(), ids_.end(), fn);
    return true;
  }
  void CopyFrom(const EvictionPolicy& policy) {
    ids_.clear();
    kept_ = policy.VisitInEvictionOrder([this](ObjectId id) { ids_.push_back(id); });
  }

 private:
  std::vector<ObjectId> ids_;
  bool kept_ = false;
};

}  // namespace

std::unique_ptr<EvictionOrder> EvictionPolicy::NewEvictionOrder() const {
  return std::make_unique<IdOrder>();
}

void EvictionPolicy::CopyEvictionOrder(EvictionOrder& into) const {
  static_cast<IdOrder&>(into).CopyFrom(*this);
}

}  // namespace crescent::cache
