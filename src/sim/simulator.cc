#include "sim/simulator.h"

#include <algorithm>

#include "sim/belady.h"

namespace crescent::sim {

namespace {
constexpr uint64_t kProgressEveryRefs = uint64_t{1} << 16;
}  // namespace

SimStats Simulate(const Trace& trace, uint64_t capacity_blocks, cache::EvictionPolicy& policy,
                  const SimProgressFn& progress, std::string_view key_prefix,
                  const std::vector<bool>& session_ends) {
  SimStats stats;
  stats.requests = trace.requests.size();
  uint64_t next_progress = kProgressEveryRefs;
  // The master's history of a page is its key's hash: name pages as replay does.
  const std::vector<uint64_t> histories = PageHistories(trace, key_prefix);
  for (size_t r = 0; r < trace.requests.size(); ++r) {
    const TraceRequest& request = trace.requests[r];
    const BlockId* ids = trace.blocks.data() + request.first_block;
    const uint32_t n = request.num_blocks;

    uint32_t hits = 0;
    while (hits < n && policy.Contains(ids[hits])) ++hits;
    stats.hit_blocks += hits;

    // Accesses never evict, so the leading hits are all still cached here.
    for (uint32_t i = 0; i < hits; ++i) policy.Access(ids[i]);
    for (uint32_t i = hits; i < n; ++i) {
      if (policy.Contains(ids[i])) {
        policy.Access(ids[i]);
        continue;
      }
      // Evict() returns nullopt only when nothing is tracked; then insert anyway.
      while (policy.Count() >= capacity_blocks && policy.Evict()) {
      }
      policy.Insert(ids[i], 1,
                    {.parent = i == 0 ? cache::kNoParent : cache::ObjectId{ids[i - 1]},
                     .history = histories[ids[i]],
                     .ends_write = i + 1 == n});
    }

    if (r < session_ends.size() && session_ends[r]) {
      for (uint32_t i = n; i-- > 0;) policy.EndSession(ids[i]);
    }
    stats.block_refs += n;
    if (progress && stats.block_refs >= next_progress) {
      progress(stats.block_refs);
      next_progress = stats.block_refs + kProgressEveryRefs;
    }
  }
  if (progress) progress(stats.block_refs);
  return stats;
}

std::vector<std::string> SimPolicyNames() {
  std::vector<std::string> names = cache::PolicyNames();
  names.emplace_back(kBeladyName);
  return names;
}

Status CheckSimPolicyName(std::string_view name) {
  const std::vector<std::string> names = SimPolicyNames();
  if (std::find(names.begin(), names.end(), name) != names.end()) return Status::Ok();
  std::string message = "unknown policy '";
  message.append(name);
  message += "' (valid: ";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) message += ", ";
    message += names[i];
  }
  message += ')';
  return Status(ErrorCode::kInvalidArgument, std::move(message));
}

StatusOr<std::unique_ptr<cache::EvictionPolicy>> MakeSimPolicy(
    const Trace& trace, std::string_view name, const cache::PolicyOptions& options) {
  if (name == kBeladyName) {
    return std::unique_ptr<cache::EvictionPolicy>(std::make_unique<BeladyPolicy>(trace));
  }
  if (Status s = CheckSimPolicyName(name); !s.ok()) return s;
  return cache::MakePolicy(name, options);
}

}  // namespace crescent::sim
