// Helpers shared by the eviction-policy tests (*_policy_test.cc).
#pragma once

#include <set>
#include <vector>

#include "cache/eviction_policy.h"

namespace crescent::cache {

// Calls Evict(spare) until it returns nullopt; returns the victims in order.
inline std::vector<ObjectId> DrainVictims(EvictionPolicy& policy, const SpareFn& spare = nullptr) {
  std::vector<ObjectId> victims;
  while (auto victim = policy.Evict(spare)) victims.push_back(*victim);
  return victims;
}

// A spare callback that keeps the ids in `keep` (or every id, with keep_all)
// and records each id it is asked about.
struct SpareRecorder {
  std::set<ObjectId> keep = {};
  bool keep_all = false;
  std::vector<ObjectId> asked = {};

  SpareFn Fn() {
    return [this](ObjectId id) {
      asked.push_back(id);
      return keep_all || keep.contains(id);
    };
  }
};

}  // namespace crescent::cache
