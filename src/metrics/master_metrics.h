// The master's metrics, by name. One list feeds both the Prometheus text of the
// admin endpoint (/metrics) and the counters map of the Stats RPC (`crescent
// stat`), so the two can never disagree on a name or a value.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "master/master_service.h"

namespace crescent::metrics {

struct Sample {
  std::string name;    // e.g. "crescent_requests_total{op=\"put_start\"}"
  uint64_t value = 0;
};

// Every counter of the engine plus its gauges (objects, bytes, segments).
std::vector<Sample> CollectMasterSamples(const master::MasterService& master);

// Prometheus text exposition format (0.0.4), with # HELP and # TYPE lines.
std::string RenderPrometheus(const master::MasterService& master);

}  // namespace crescent::metrics
