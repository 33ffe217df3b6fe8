#include "rpc/server_metrics.h"

#include <string>
#include <vector>

namespace crescent::rpc {

std::string_view RpcMethodName(RpcMethod method) {
  switch (method) {
#define CRESCENT_RPC_METHOD_NAME(name, Req, Resp, lean) \
  case RpcMethod::k##name: return #name;
    CRESCENT_CONTROL_CALLS(CRESCENT_RPC_METHOD_NAME)
#undef CRESCENT_RPC_METHOD_NAME
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
           "refused before one (gRPC's, which carries no token, included).");
  for (auto [r, name] : {std::pair{AuthResult::kOk, "ok"}, std::pair{AuthResult::kFailed, "failed"},
                         std::pair{AuthResult::kRefused, "refused"}}) {
    w.Sample({{"result", name}}, authentications(r));
  }
  w.Family("crescent_object_size_bytes", "histogram",
           "Sizes of the objects puts started (PutStart, each key of BatchPutStart).");
  w.Histogram({}, object_size_.Snapshot());
}

}  // namespace crescent::rpc
