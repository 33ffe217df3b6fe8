// Replay plan: turns a loaded Mooncake trace into what a replay sends — per
// request, the page keys (sim::PageKey, "<key_prefix>-<hash_id>", one object per
// hash id, in request order) and its release time relative to the first request.
//
// Pure: no I/O, no clock. The live replayer (replayer.h) only reads a plan.
//
// Release times: with `max_rate` every request is released at 0 (as fast as the
// streams go); otherwise request r is released at
// (timestamp(r) - timestamp(first)) / speed milliseconds. A timestamp earlier
// than the previous request's is clamped to it, so release times never go
// backwards and the arrival order is the file order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "crescent/status.h"
#include "sim/page_key.h"
#include "sim/trace_reader.h"

namespace crescent::replay {

struct PlanOptions {
  std::string key_prefix = std::string(sim::kDefaultKeyPrefix);
  uint64_t limit = 0;  // replay only the first `limit` requests (0: all)
  double speed = 1.0;  // > 0; ignored with max_rate
  bool max_rate = false;
  // Session hints (sim/session_hints.h): each last turn of the trace is
  // hinted as ended with this probability (0 to 1), drawn from `seed` exactly
  // as `crescent sim --session-hints` draws them.
  double session_hints = 0;
  uint64_t seed = 1;
};

struct PlannedRequest {
  std::vector<std::string> keys;   // one per hash id, in order
  std::vector<uint64_t> hash_ids;  // the original ids (for page contents)
  double release_ms = 0;           // offset from the start of the replay
  uint32_t line = 0;               // 1-based line in the trace
  bool ends_session = false;       // hinted as ended once served
};

struct Plan {
  std::vector<PlannedRequest> requests;
  uint64_t page_refs = 0;        // total keys over all requests
  uint64_t distinct_pages = 0;   // distinct hash ids over the planned requests
  size_t max_request_pages = 0;  // longest request, in pages
  uint64_t hinted_requests = 0;  // requests with ends_session
};

// Errors: kInvalidArgument for a non-positive speed, an empty key prefix or a
// session-hint fraction outside [0, 1].
StatusOr<Plan> BuildPlan(const sim::Trace& trace, const PlanOptions& options);

}  // namespace crescent::replay
