// StatusReport: the JSON behind the admin port's /api/status, shared by the
// status page (GET /) and `crescent top`. It joins the master engine's state
// (objects, segments, hits) with the gRPC server's latency histograms and
// error counts, and keeps a short history so that a viewer sees rates and the
// hit ratio over the last minutes without storing anything itself.
//
// History: Sample() appends one point (cumulative counters at that moment) to a
// ring of kHistoryPoints; MasterHost calls it once a second from its own
// thread. Rates are differences of neighbouring points, left to the viewer.
//
// Concurrency: mu_ guards the ring; Json() and Sample() may run concurrently.
// The engine and server it reads must outlive it.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>

#include "master/master_service.h"
#include "rpc/server_metrics.h"
#include "server/ha_member.h"

namespace crescent::server {

class StatusReport {
 public:
  static constexpr size_t kHistoryPoints = 300;  // 5 minutes at one a second

  StatusReport(const master::MasterService& master, const rpc::RpcServerMetrics& rpc,
               std::string master_address)
      : master_(master), rpc_(rpc), address_(std::move(master_address)) {}

  // Appends a point taken now (Unix ms), dropping the oldest past kHistoryPoints.
  void Sample(int64_t unix_ms);
  // The whole report (docs/metrics.md, "/api/status").
  std::string Json(int64_t unix_ms) const;
  // A cluster's master: the report gains its "cluster" section (docs/ha.md).
  // Set before the report is read.
  void SetCluster(std::function<ClusterView()> view) { cluster_ = std::move(view); }

 private:
  struct Point {
    int64_t unix_ms = 0;
    uint64_t rpcs = 0;        // RPCs handled, every method
    uint64_t rpc_errors = 0;  // error statuses in replies
    uint64_t hits = 0;        // exact hits + prefix hit keys
    uint64_t lookups = 0;     // exact lookups + prefix keys
    uint64_t used_bytes = 0;
    uint64_t objects = 0;
  };
  Point Take(int64_t unix_ms) const;

  const master::MasterService& master_;
  const rpc::RpcServerMetrics& rpc_;
  const std::string address_;
  mutable std::mutex mu_;
  std::deque<Point> history_;  // guarded by mu_, oldest first
  std::function<ClusterView()> cluster_;
};

}  // namespace crescent::server
