#include "transfer/transfer_metrics.h"

namespace crescent::transfer {
namespace {

std::string_view TransportName(DataPath t) { return t == DataPath::kTcp ? "tcp" : "shm"; }
std::string_view OpName(DataOp op) { return op == DataOp::kRead ? "read" : "write"; }
std::string_view ReasonName(RefusalReason r) {
  switch (r) {
    case RefusalReason::kCapability: return "capability";
    case RefusalReason::kBounds: return "bounds";
    case RefusalReason::kExpired: return "expired";
    case RefusalReason::kEpoch: return "epoch";
    case RefusalReason::kClock: return "clock";
    case RefusalReason::kOther: break;
  }
  return "other";
}

// The (transport, op) pairs a node serves; shared memory has no node-side read.
constexpr std::pair<DataPath, DataOp> kServed[] = {
    {DataPath::kTcp, DataOp::kRead},
    {DataPath::kTcp, DataOp::kWrite},
    {DataPath::kShm, DataOp::kWrite},
};

}  // namespace

RefusalReason RefusalReasonOf(ErrorCode code) {
  switch (code) {
    case ErrorCode::kCapabilityInvalid: return RefusalReason::kCapability;
    case ErrorCode::kInvalidArgument: return RefusalReason::kBounds;
    case ErrorCode::kLeaseExpired: return RefusalReason::kExpired;
    case ErrorCode::kSegmentNotFound: return RefusalReason::kEpoch;
    case ErrorCode::kUnavailable: return RefusalReason::kClock;
    default: return RefusalReason::kOther;
  }
}

TransferMetrics::TransferMetrics() {
  for (Cell& c : cells_)
    c.latency = std::make_unique<metrics::Histogram>(metrics::LatencyBoundsNs());
}

void TransferMetrics::Collect(metrics::TextWriter& w) const {
  w.Family("crescent_store_transfers_total", "counter",
           "Transfers a store node served, by transport and op (read: bytes out, write: in).");
  for (auto [t, op] : kServed) {
    w.Sample({{"transport", TransportName(t)}, {"op", OpName(op)}}, ops(t, op));
  }
  w.Family("crescent_store_transfer_bytes_total", "counter",
           "Payload bytes a store node moved, by transport and op.");
  for (auto [t, op] : kServed) {
    w.Sample({{"transport", TransportName(t)}, {"op", OpName(op)}}, bytes(t, op));
  }
  w.Family("crescent_store_transfer_duration_seconds", "histogram",
           "Time a store node spent on one transfer, by transport and op.");
  for (auto [t, op] : kServed) {
    w.Histogram({{"transport", TransportName(t)}, {"op", OpName(op)}}, Latency(t, op), 1e9);
  }
  w.Family("crescent_store_refusals_total", "counter",
           "Requests a store node refused, by transport and reason.");
  for (DataPath t : {DataPath::kTcp, DataPath::kShm}) {
    for (size_t r = 0; r < kReasons; ++r) {
      w.Sample(
          {{"transport", TransportName(t)}, {"reason", ReasonName(static_cast<RefusalReason>(r))}},
          refusals(t, static_cast<RefusalReason>(r)));
    }
  }
  w.Family("crescent_store_shm_maps_total", "counter",
           "Same-host clients that mapped the segment for reading.");
  w.Sample({}, shm_maps_.load(std::memory_order_relaxed));
  w.Family("crescent_store_tcp_connections", "gauge", "Open TCP data connections.");
  w.Sample({}, static_cast<double>(tcp_connections()));
  w.Family("crescent_store_shm_clients", "gauge",
           "Shared-memory connections held (readers' mappings and writers).");
  w.Sample({}, shm_clients_.load(std::memory_order_relaxed));
}

}  // namespace crescent::transfer
