// RunRecorded: one handled call of either transport (gRPC, master_server.cc; the
// lean control protocol, control_server.cc) as RpcServerMetrics sees it: the
// sizes of the objects it starts, the error statuses its reply carries, and the
// handler's latency.
#pragma once

#include <chrono>
#include <type_traits>

#include "rpc/messages.pb.h"
#include "rpc/server_handlers.h"
#include "rpc/server_metrics.h"

namespace crescent::rpc {

// Counts the error statuses a reply carries: its own, each per-key one, and
// those of nested results (a batch of PutStart or ReadResult replies).
template <typename Msg>
void CountErrors(const Msg& msg, RpcMethod m, RpcServerMetrics& metrics) {
  auto count = [&](const proto::Status& s) {
    if (s.code() != 0) metrics.RecordError(m, static_cast<ErrorCode>(s.code()));
  };
  if constexpr (requires { msg.status(); }) count(msg.status());
  if constexpr (requires { msg.statuses(); }) {
    for (const proto::Status& s : msg.statuses()) count(s);
  }
  if constexpr (requires { msg.results(); }) {
    for (const auto& r : msg.results()) CountErrors(r, m, metrics);
  }
}

// The sizes of the objects a put request starts.
template <typename Req>
void RecordSizes(const Req& req, RpcServerMetrics& metrics) {
  if constexpr (std::is_same_v<Req, proto::PutStartRequest>) {
    metrics.RecordObjectSize(req.size());
  } else if constexpr (std::is_same_v<Req, proto::BatchPutStartRequest>) {
    for (uint64_t size : req.sizes()) metrics.RecordObjectSize(size);
  }
}

// Runs `handler` for `caller` on `req` into `resp`, recording the call in
// `metrics` (null: records nothing). The caller's role was checked before.
template <typename Req, typename Resp>
void RunRecorded(const MasterHandlers& handlers, HandlerFn<Req, Resp> handler, RpcMethod m,
                 const Caller& caller, Req& req, Resp& resp, RpcServerMetrics* metrics) {
  if (metrics == nullptr) {
    (handlers.*handler)(caller, req, &resp);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  RecordSizes(req, *metrics);
  (handlers.*handler)(caller, req, &resp);
  CountErrors(resp, m, *metrics);
  metrics->RecordLatency(m,
                         static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                   std::chrono::steady_clock::now() - start)
                                                   .count()));
}

}  // namespace crescent::rpc
