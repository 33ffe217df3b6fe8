// TcpDataServer: the store node's TCP data plane (standalone Asio, C++20
// coroutines). Each connection carries a stream of framed requests (wire.h) that
// are answered in order, so a client may pipeline a batch on one connection and
// spread it over several ("lanes"). Payloads move between the socket and the
// segment in place: no staging buffer.
//
// Every request passes SegmentMemory::Resolve (of the node's segment that its
// capability names, segment_set.h) before any byte of the segment is touched;
// a write into a persistent segment is persisted before it is answered. A
// malformed frame (bad magic, version, op or length) gets an error reply and
// the connection is closed; the server keeps serving everyone else. The port
// holds at most `limits.max_connections` connections and closes one on which
// nothing moved for `limits.idle_timeout` (connection_table.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "crescent/status.h"
#include "transfer/capability.h"
#include "transfer/connection_limits.h"
#include "transfer/segment_set.h"
#include "transfer/transfer_metrics.h"

namespace crescent::transfer {

struct TcpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;         // 0: pick a free port
  int threads = 2;           // io_context threads
  std::string congestion{};  // TCP_CONGESTION for accepted connections; "" = system default
  TransferMetrics* metrics = nullptr;  // counts transfers if set; must outlive the server
  ConnectionLimits limits;             // connections held at most, idle timeout
};

class TcpDataServer {
 public:
  // Binds and starts serving `segments` (which must outlive the server).
  static StatusOr<std::unique_ptr<TcpDataServer>> Start(const TcpServerOptions& options,
                                                        SegmentSet segments,
                                                        const CapabilitySigner& signer);
  ~TcpDataServer();  // Stop()s
  uint16_t port() const;
  // Closes the acceptor and every connection, joins the threads. Idempotent.
  void Stop();

 private:
  struct Impl;
  explicit TcpDataServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace crescent::transfer
