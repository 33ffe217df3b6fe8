// TcpTransport: the client side of the TCP data plane. It keeps up to `lanes`
// connections per endpoint, spreads a batch's ops over them and pipelines the
// ops on each lane (all requests written while responses are read), reading and
// writing payloads straight from and to the caller's buffers.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "transfer/transport.h"

namespace crescent::transfer {

struct TcpTransportOptions {
  int lanes = 4;  // connections per endpoint
  int64_t connect_timeout_ms = 2000;
  std::string congestion{};  // TCP_CONGESTION for new connections; "" = system default
  // Null, or a switch that another thread sets to end every transfer of the
  // transport without waiting out a silent peer (a process that stops): an op
  // in flight then fails within kStopCheckMs, a later one at once, kClosed,
  // their connections closed. Must outlive the transport.
  const std::atomic<bool>* stop = nullptr;
};

// How often a transport with a stop switch looks at it while it waits.
inline constexpr int64_t kStopCheckMs = 20;

std::unique_ptr<Transport> MakeTcpTransport(const TcpTransportOptions& options = {});

}  // namespace crescent::transfer
