#include "client/client_metrics.h"

namespace crescent::client {

std::string_view ClientOpName(ClientOp op) {
  switch (op) {
    case ClientOp::kPut: return "put";
    case ClientOp::kGet: return "get";
    case ClientOp::kGetPrefix: return "get_prefix";
    case ClientOp::kExists: return "exists";
    case ClientOp::kQueryPrefix: return "query_prefix";
    case ClientOp::kRemove: return "remove";
    case ClientOp::kList: return "list";
    case ClientOp::kEndSession: return "end_session";
  }
  return "unknown";
}

std::string_view LocationFallbackName(LocationFallback reason) {
  switch (reason) {
    case LocationFallback::kChecksum: return "checksum";
    case LocationFallback::kExpired: return "expired";
    case LocationFallback::kRefused: return "refused";
    case LocationFallback::kUnreachable: return "unreachable";
  }
  return "unknown";
}

ClientMetrics::ClientMetrics() {
  for (Op& o : ops_) o.latency = std::make_unique<metrics::Histogram>(metrics::LatencyBoundsNs());
}

void ClientMetrics::Collect(metrics::TextWriter& w) const {
  w.Family("crescent_client_op_duration_seconds", "histogram",
           "Client call latency by operation (a batch call is one observation).");
  for (size_t i = 0; i < kClientOpCount; ++i) {
    w.Histogram({{"op", ClientOpName(static_cast<ClientOp>(i))}}, ops_[i].latency->Snapshot(), 1e9);
  }
  w.Family("crescent_client_keys_total", "counter", "Keys the client's calls handled, by result.");
  for (size_t i = 0; i < kClientOpCount; ++i) {
    const std::string_view op = ClientOpName(static_cast<ClientOp>(i));
    w.Sample({{"op", op}, {"result", "ok"}}, ops_[i].ok_keys.load(std::memory_order_relaxed));
    w.Sample({{"op", op}, {"result", "error"}},
             ops_[i].failed_keys.load(std::memory_order_relaxed));
  }
  w.Family("crescent_client_bytes_total", "counter",
           "Value bytes the client put (op=put) and read (op=get, get_prefix).");
  for (ClientOp op : {ClientOp::kPut, ClientOp::kGet, ClientOp::kGetPrefix}) {
    w.Sample({{"op", ClientOpName(op)}}, Bytes(op));
  }
  w.Family("crescent_client_location_cache_total", "counter",
           "Keys of gets looked up in the location cache: read from their node without asking "
           "the master (hit), not held (miss), or held and asked of the master after all "
           "(fallback, by reason).");
  w.Sample({{"result", "hit"}}, LocationHits());
  w.Sample({{"result", "miss"}}, LocationMisses());
  for (size_t i = 0; i < kLocationFallbackCount; ++i) {
    const auto reason = static_cast<LocationFallback>(i);
    w.Sample({{"result", "fallback"}, {"reason", LocationFallbackName(reason)}},
             LocationFallbacks(reason));
  }
}

}  // namespace crescent::client
