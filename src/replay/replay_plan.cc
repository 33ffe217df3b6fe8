#include "replay/replay_plan.h"

#include <algorithm>
#include <unordered_set>

#include "sim/session_hints.h"

namespace crescent::replay {

StatusOr<Plan> BuildPlan(const sim::Trace& trace, const PlanOptions& options) {
  if (!options.max_rate && !(options.speed > 0)) {
    return Status(ErrorCode::kInvalidArgument, "--speed must be > 0");
  }
  if (options.key_prefix.empty()) {
    return Status(ErrorCode::kInvalidArgument, "the key prefix must not be empty");
  }
  if (!(options.session_hints >= 0 && options.session_hints <= 1)) {
    return Status(ErrorCode::kInvalidArgument, "--session-hints must be between 0 and 1");
  }
  const std::vector<bool> ends = options.session_hints > 0
                                     ? sim::SessionHints(trace, options.session_hints, options.seed)
                                     : std::vector<bool>();
  Plan plan;
  size_t n = trace.requests.size();
  if (options.limit > 0) n = std::min<size_t>(n, options.limit);
  plan.requests.reserve(n);
  std::unordered_set<sim::BlockId> seen;
  const int64_t t0 = n > 0 ? trace.requests[0].timestamp_ms : 0;
  int64_t last_ts = t0;
  for (size_t r = 0; r < n; ++r) {
    const sim::TraceRequest& req = trace.requests[r];
    PlannedRequest p;
    p.line = req.line;
    last_ts = std::max(last_ts, req.timestamp_ms);
    p.ends_session = r < ends.size() && ends[r];
    plan.hinted_requests += p.ends_session;
    p.release_ms = options.max_rate ? 0.0 : static_cast<double>(last_ts - t0) / options.speed;
    for (sim::BlockId b : trace.BlocksOf(req)) {
      const uint64_t id = trace.block_keys[b];
      p.hash_ids.push_back(id);
      p.keys.push_back(sim::PageKey(options.key_prefix, id));
      seen.insert(b);
    }
    plan.page_refs += p.keys.size();
    plan.max_request_pages = std::max(plan.max_request_pages, p.keys.size());
    plan.requests.push_back(std::move(p));
  }
  plan.distinct_pages = seen.size();
  return plan;
}

}  // namespace crescent::replay
