// TransferMetrics: what a store node's data plane counts, shared by its TCP and
// shared-memory servers: transfers (ops, bytes, time) by transport and op,
// refusals by reason, open TCP connections and shared-memory clients.
//
// What each transport sees: TCP carries reads (bytes out) and writes (bytes
// in), timed from the decoded request header to the last byte of the reply.
// Shared memory carries writes (the node copies from the client's memory,
// timed over that copy) and maps: a same-host reader maps the segment once and
// then copies out by itself, so the node sees no per-read operation or byte.
//
// Concurrency: every field is a relaxed atomic or a lock-free histogram;
// servers record from any thread and Collect() may run at the same time.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

#include "crescent/status.h"
#include "metrics/histogram.h"
#include "metrics/text_writer.h"

namespace crescent::transfer {

enum class DataPath : uint8_t { kTcp, kShm };
enum class DataOp : uint8_t { kRead, kWrite };
// Why a request was refused before (or while) touching the segment.
enum class RefusalReason : uint8_t {
  kCapability,  // bad signature, wrong operation (CAPABILITY_INVALID)
  kBounds,      // the range lies outside the segment (INVALID_ARGUMENT)
  kExpired,     // the capability expired, before or during the transfer (LEASE_EXPIRED)
  kEpoch,       // not mounted, or a capability of an earlier mount (SEGMENT_NOT_FOUND)
  kClock,       // the node's clock disagrees with the master's (UNAVAILABLE; clock_gate.h)
  kOther,
};
// The reason a refusal with this code stands for.
RefusalReason RefusalReasonOf(ErrorCode code);

class TransferMetrics {
 public:
  TransferMetrics();

  void RecordTransfer(DataPath t, DataOp op, uint64_t bytes, uint64_t ns) {
    Cell& c = cells_[Index(t, op)];
    c.ops.fetch_add(1, std::memory_order_relaxed);
    c.bytes.fetch_add(bytes, std::memory_order_relaxed);
    c.latency->Record(ns);
  }
  void RecordRefusal(DataPath t, RefusalReason r) {
    refusals_[static_cast<size_t>(t)][static_cast<size_t>(r)].fetch_add(1,
                                                                        std::memory_order_relaxed);
  }
  void RecordShmMap() { shm_maps_.fetch_add(1, std::memory_order_relaxed); }
  void TcpConnectionOpened() { tcp_connections_.fetch_add(1, std::memory_order_relaxed); }
  void TcpConnectionClosed() { tcp_connections_.fetch_sub(1, std::memory_order_relaxed); }
  void SetShmClients(uint64_t n) { shm_clients_.store(n, std::memory_order_relaxed); }

  uint64_t ops(DataPath t, DataOp op) const {
    return cells_[Index(t, op)].ops.load(std::memory_order_relaxed);
  }
  uint64_t bytes(DataPath t, DataOp op) const {
    return cells_[Index(t, op)].bytes.load(std::memory_order_relaxed);
  }
  uint64_t refusals(DataPath t, RefusalReason r) const {
    return refusals_[static_cast<size_t>(t)][static_cast<size_t>(r)].load(
        std::memory_order_relaxed);
  }
  metrics::HistogramSnapshot Latency(DataPath t, DataOp op) const {
    return cells_[Index(t, op)].latency->Snapshot();
  }
  int64_t tcp_connections() const { return tcp_connections_.load(std::memory_order_relaxed); }

  // The crescent_store_* transfer families (docs/metrics.md).
  void Collect(metrics::TextWriter& w) const;

 private:
  struct Cell {
    std::atomic<uint64_t> ops{0};
    std::atomic<uint64_t> bytes{0};
    std::unique_ptr<metrics::Histogram> latency;
  };
  static size_t Index(DataPath t, DataOp op) {
    return static_cast<size_t>(t) * 2 + static_cast<size_t>(op);
  }
  static constexpr size_t kReasons = static_cast<size_t>(RefusalReason::kOther) + 1;
  std::array<Cell, 4> cells_;  // [transport][op]
  std::array<std::array<std::atomic<uint64_t>, kReasons>, 2> refusals_{};
  std::atomic<uint64_t> shm_maps_{0};
  std::atomic<int64_t> tcp_connections_{0};
  std::atomic<uint64_t> shm_clients_{0};
};

}  // namespace crescent::transfer
