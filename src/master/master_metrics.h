// The master's metrics, by name. One list feeds both the Prometheus text of the
// admin endpoint (/metrics) and the counters map of the Stats RPC (`crescent
// stat`), so the two can never disagree on a name or a value. The exporter
// lives with the engine (crescent_master_metrics, beside crescent_master), above
// metrics/, which knows nothing of the master.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "master/master_service.h"
#include "metrics/admin_http.h"
#include "metrics/text_writer.h"

namespace crescent::master {

struct Sample {
  std::string name;    // e.g. "crescent_requests_total{op=\"put_start\"}"
  uint64_t value = 0;
};

// Every counter of the engine plus its gauges (objects, bytes, segments).
std::vector<Sample> CollectMasterSamples(const MasterService& master);

// Prometheus text exposition format (0.0.4), with # HELP and # TYPE lines.
std::string RenderPrometheus(const MasterService& master);

// The engine's figures that are not counters of the Stats RPC: the Bloom
// filter's estimated false-positive rate, capacity and use by tier, and
// allocations by segment (/metrics only).
void CollectMasterGauges(const MasterService& master, metrics::TextWriter& w);

// Why `master` cannot store yet ("" once a segment is mounted): its /health.
std::string MasterNotReadyReason(const MasterService& master);

// /metrics and /health of a bare master engine (tests; MasterHost adds more).
metrics::AdminRoutes MasterRoutes(const MasterService& master);

}  // namespace crescent::master
