#include "rpc/server_metrics.h"

#include <string>
#include <vector>

namespace crescent::rpc {

std::string_view RpcMethodName(RpcMethod method) {
  switch (method) {
    case RpcMethod::kMountSegment: return "MountSegment";
    case RpcMethod::kUnmountSegment: return "UnmountSegment";
    case RpcMethod::kHeartbeat: return "Heartbeat";
    case RpcMethod::kListSegments: return "ListSegments";
    case RpcMethod::kReportUnreachable: return "ReportUnreachable";
    case RpcMethod::kPutStart: return "PutStart";
    case RpcMethod::kPutEnd: return "PutEnd";
    case RpcMethod::kPutRevoke: return "PutRevoke";
    case RpcMethod::kBatchPutStart: return "BatchPutStart";
    case RpcMethod::kBatchPutEnd: return "BatchPutEnd";
    case RpcMethod::kBatchPutRevoke: return "BatchPutRevoke";
    case RpcMethod::kGetReplicaList: return "GetReplicaList";
    case RpcMethod::kBatchGetReplicaList: return "BatchGetReplicaList";
    case RpcMethod::kExists: return "Exists";
    case RpcMethod::kBatchExists: return "BatchExists";
    case RpcMethod::kBatchQueryPrefix: return "BatchQueryPrefix";
    case RpcMethod::kReportCorruptReplica: return "ReportCorruptReplica";
    case RpcMethod::kRemove: return "Remove";
    case RpcMethod::kBatchRemove: return "BatchRemove";
    case RpcMethod::kRemoveByPrefix: return "RemoveByPrefix";
    case RpcMethod::kRemoveAll: return "RemoveAll";
    case RpcMethod::kList: return "List";
    case RpcMethod::kStats: return "Stats";
    case RpcMethod::kSnapshot: return "Snapshot";
    case RpcMethod::kControlEndpoints: return "ControlEndpoints";
  }
  return "unknown";
}

RpcServerMetrics::RpcServerMetrics() : object_size_(metrics::SizeBounds()) {
  for (auto& h : latency_) h = std::make_unique<metrics::Histogram>(metrics::LatencyBoundsNs());
}

void RpcServerMetrics::Collect(metrics::TextWriter& w) const {
  w.Family("crescent_rpc_duration_seconds", "histogram",
           "Master RPC handling time (validation, engine, reply), by method.");
  for (size_t m = 0; m < kRpcMethodCount; ++m) {
    w.Histogram({{"method", RpcMethodName(static_cast<RpcMethod>(m))}}, latency_[m]->Snapshot(),
                1e9);
  }
  w.Family("crescent_rpc_errors_total", "counter",
           "Error statuses in master replies (each key's in a batch), by method and code.");
  for (size_t m = 0; m < kRpcMethodCount; ++m) {
    for (size_t c = 1; c < kCodes; ++c) {
      uint64_t n = errors_[m][c].load(std::memory_order_relaxed);
      if (n == 0) continue;
      w.Sample({{"method", RpcMethodName(static_cast<RpcMethod>(m))},
                {"code", ErrorCodeName(static_cast<ErrorCode>(c))}},
               n);
    }
  }
  w.Family("crescent_control_calls_total", "counter",
           "Hot calls served over the lean control protocol (the rest came over gRPC).");
  w.Sample({}, lean_calls_.load(std::memory_order_relaxed));
  w.Family("crescent_control_connections", "gauge",
           "Open connections of the lean control protocol (TCP and Unix socket).");
  w.Sample({}, static_cast<double>(lean_connections_.load(std::memory_order_relaxed)));
  w.Family("crescent_authentications_total", "counter",
           "Lean control connections' authentication: handshakes ok or failed, and calls "
           "refused before one.");
  for (auto [r, name] : {std::pair{AuthResult::kOk, "ok"}, std::pair{AuthResult::kFailed, "failed"},
                         std::pair{AuthResult::kRefused, "refused"}}) {
    w.Sample({{"result", name}}, authentications(r));
  }
  w.Family("crescent_object_size_bytes", "histogram",
           "Sizes of the objects puts started (PutStart, each key of BatchPutStart).");
  w.Histogram({}, object_size_.Snapshot());
}

}  // namespace crescent::rpc
