// ConnectionLimits: the bounds every long-lived port of a Crescent process
// keeps (the master's lean control port and socket, a store node's data port),
// set by --max-connections and --idle-timeout-ms and enforced by
// ConnectionTable (connection_table.h).
#pragma once

#include <chrono>
#include <cstddef>

namespace crescent::transfer {

struct ConnectionLimits {
  // Connections one listener (a TCP port, a Unix socket) holds at most; past
  // that a new one gets an error answer and is closed.
  size_t max_connections = 1024;
  // A connection on which no byte moved for this long is closed; 0: never.
  std::chrono::milliseconds idle_timeout{300'000};
};

}  // namespace crescent::transfer
