// PromotionCandidates: which objects of the persistent tier are read often
// enough to go back to DRAM (docs/persistent-tier.md). An object read
// `hits` times within `window_ms` is queued for promotion once; with `hits`
// at most 1, every read queues it.
//
// Contract: no lock of its own (its owner's guards it: PolicySet's). Bounded:
// at most kMaxRemembered objects' hits and as many queued promotions; a
// burst of first reads forgets the oldest candidates' hits.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <vector>

#include "cache/eviction_policy.h"
#include "common/clock.h"

namespace crescent::master {

using cache::ObjectId;

class PromotionCandidates {
 public:
  static constexpr size_t kMaxRemembered = 1 << 16;

  PromotionCandidates(int64_t window_ms, int hits) : window_ms_(window_ms), hits_(hits) {}

  // A read of persistent-tier object `id` at `now`.
  void NoteHit(ObjectId id, TimeMs now) {
    if (window_ms_ <= 0) return;
    if (hits_ <= 1) {
      Queue(id);
      return;
    }
    auto [it, fresh] = hits_of_.try_emplace(id, Hits{now, 1});
    if (fresh) {
      if (hits_of_.size() > kMaxRemembered) hits_of_.clear();
      return;
    }
    Hits& h = it->second;
    if (now - h.first > window_ms_) {
      h = {now, 1};
      return;
    }
    if (++h.count >= hits_) {
      Queue(id);
      hits_of_.erase(it);
    }
  }
  bool enabled() const { return window_ms_ > 0; }
  // The objects queued since the last call, in the order they qualified.
  std::vector<ObjectId> Take() {
    std::vector<ObjectId> out;
    out.swap(queue_);
    return out;
  }

 private:
  struct Hits {
    TimeMs first;
    int count;
  };
  void Queue(ObjectId id) {
    if (queue_.size() < kMaxRemembered) queue_.push_back(id);
  }

  const int64_t window_ms_;
  const int hits_;
  absl::flat_hash_map<ObjectId, Hits> hits_of_;
  std::vector<ObjectId> queue_;
};

}  // namespace crescent::master
