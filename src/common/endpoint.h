// Endpoint strings: how a store node tells clients (through the master) where its
// data plane listens, and which incarnation of its segment they address.
// Format: "HOST:PORT" for TCP ("[V6]:PORT" for an IPv6 address), then optional
// ";KEY=VALUE" options, each at most once, in any order:
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

// Takes "HOST:PORT" or "[V6]:PORT"; the host comes back without brackets.
StatusOr<Endpoint> ParseEndpoint(std::string_view text);

// "HOST:PORT", an IPv6 address in brackets ("[::1]:9100"): unbracketed, its
// last group would read as the port. A host already in brackets is kept.
// Every address Crescent forms or prints goes through this.
std::string HostPort(std::string_view host, uint16_t port);

}  // namespace crescent
