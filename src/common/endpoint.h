// Endpoint strings: how a store node tells clients (through the master) where its
// data plane listens, and which incarnation of its segment they address.
// Format: "HOST:PORT" for TCP, then optional ";KEY=VALUE" options, each at most
// once, in any order:
//  - ";shm=NAME": NAME is the Linux abstract Unix socket that hands out the
//    segment's memfd. Abstract sockets live in the host's network namespace, so
//    a client that can connect to NAME is on the same host; others use TCP.
//  - ";epoch=HEX": the segment's mount epoch, a random 64-bit value the node
//    draws at every mount (at start and at each remount). Capabilities are
//    bound to the whole endpoint string (capability.h), so one minted for an
//    earlier mount, or for another process on the same port, fails the check.
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
  uint64_t epoch = 0;    // 0: none given

  std::string ToString() const;
};

StatusOr<Endpoint> ParseEndpoint(std::string_view text);

}  // namespace crescent
