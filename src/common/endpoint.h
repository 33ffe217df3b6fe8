// Endpoint strings: how a store node tells clients (through the master) where its
// data plane listens. Format: "HOST:PORT" for TCP, optionally followed by
// ";shm=NAME", NAME being the Linux abstract Unix socket that hands out the
// segment's memfd. Abstract sockets live in the host's network namespace, so a
// client that can connect to NAME is on the same host; others fall back to TCP.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "crescent/status.h"

namespace crescent {

struct Endpoint {
  std::string host;
  uint16_t port = 0;
  std::string shm_name;  // empty: no shared-memory path offered

  std::string ToString() const;
};

StatusOr<Endpoint> ParseEndpoint(std::string_view text);

}  // namespace crescent
