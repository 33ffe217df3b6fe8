// RpcServerMetrics: what the gRPC front of the master measures per call, beside
// the engine's own counters (master_counters.h): the latency of every RPC by
// method (the handler's time: validation, engine, reply fill; not gRPC's queue
// or the network), the error codes its replies carry by method, and the sizes
// of the objects clients start putting.
//
// Concurrency: recording is lock-free (metrics/histogram.h; the error counts are
// relaxed atomics), and Collect() may run concurrently with it.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

#include "crescent/status.h"
#include "metrics/histogram.h"
#include "metrics/text_writer.h"
#include "rpc/control_methods.h"

namespace crescent::rpc {

// RpcMethod (one per RPC of master.proto) is control_methods.h's.
std::string_view RpcMethodName(RpcMethod method);

class RpcServerMetrics {
 public:
  RpcServerMetrics();

  void RecordLatency(RpcMethod m, uint64_t ns) { latency_[Index(m)]->Record(ns); }
  // A non-OK status in a reply (each key's own in a batch reply).
  void RecordError(RpcMethod m, ErrorCode code) {
    const auto c = static_cast<size_t>(code);
    errors_[Index(m)][c < kCodes ? c : 0].fetch_add(1, std::memory_order_relaxed);
  }
  void RecordObjectSize(uint64_t bytes) { object_size_.Record(bytes); }
  // The lean control protocol (control_server.h): a call served, a connection
  // opened or closed.
  void RecordLeanCall() { lean_calls_.fetch_add(1, std::memory_order_relaxed); }
  void LeanConnection(int delta) { lean_connections_.fetch_add(delta, std::memory_order_relaxed); }
  uint64_t lean_calls() const { return lean_calls_.load(std::memory_order_relaxed); }
  // Authentication on the lean control protocol (docs/security.md): a handshake
  // that succeeded, one that failed, a call refused before any.
  enum class AuthResult : uint8_t { kOk, kFailed, kRefused };
  void RecordAuthentication(AuthResult r) {
    auth_[static_cast<size_t>(r)].fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t authentications(AuthResult r) const {
    return auth_[static_cast<size_t>(r)].load(std::memory_order_relaxed);
  }
  int64_t lean_connections() const { return lean_connections_.load(std::memory_order_relaxed); }

  metrics::HistogramSnapshot Latency(RpcMethod m) const { return latency_[Index(m)]->Snapshot(); }
  uint64_t Errors(RpcMethod m, ErrorCode code) const {
    const auto c = static_cast<size_t>(code);
    return c < kCodes ? errors_[Index(m)][c].load(std::memory_order_relaxed) : 0;
  }
  // crescent_rpc_duration_seconds, crescent_rpc_errors_total, crescent_object_size_bytes.
  void Collect(metrics::TextWriter& w) const;

 private:
  static constexpr size_t kCodes = static_cast<size_t>(kLastErrorCode) + 1;
  static size_t Index(RpcMethod m) { return static_cast<size_t>(m); }
  std::array<std::unique_ptr<metrics::Histogram>, kRpcMethodCount> latency_;
  // [method][code]; slot 0 (OK) is never rendered and takes any code out of range.
  std::array<std::array<std::atomic<uint64_t>, kCodes>, kRpcMethodCount> errors_{};
  metrics::Histogram object_size_;
  std::atomic<uint64_t> lean_calls_{0};
  std::atomic<int64_t> lean_connections_{0};
  std::array<std::atomic<uint64_t>, 3> auth_{};  // by AuthResult
};

}  // namespace crescent::rpc
