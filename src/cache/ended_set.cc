#include "cache/ended_set.h"

namespace crescent::cache {

void EndedSet::Mark(ObjectId id) {
  marks_[id] = ++sequence_;
  order_.emplace_back(id, sequence_);
  if (Queued() > 2 * marks_.size() + 64) Compact();
}

void EndedSet::ClearMarked(ObjectId id) {
  if (marks_.erase(id) == 0) return;
  if (marks_.empty()) {
    order_.clear();
    spared_.clear();
  } else if (Queued() > 2 * marks_.size() + 64) {
    Compact();
  }
}

void EndedSet::Compact() {
  for (std::deque<std::pair<ObjectId, uint64_t>>* queue : {&order_, &spared_}) {
    std::deque<std::pair<ObjectId, uint64_t>> live;
    for (const auto& [id, sequence] : *queue) {
      auto it = marks_.find(id);
      if (it != marks_.end() && it->second == sequence) live.emplace_back(id, sequence);
    }
    *queue = std::move(live);
  }
}

void EndedSet::Requeue(ObjectId id) {
  auto it = marks_.find(id);
  if (it == marks_.end() || it->second != kWaiting) return;
  it->second = ++sequence_;
  order_.emplace_back(id, sequence_);
}

}  // namespace crescent::cache
