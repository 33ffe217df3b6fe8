// ShmTransport: same-host transfers by memcpy through the store node's segment
// memfd, mapped once per endpoint (shm_server.h). CanReach() is true only for an
// endpoint that offers ";shm=NAME" and whose abstract socket accepts us.
//
// The client checks what the node cannot check for it: the op's range lies inside
// the mapped segment, the capability's segment id is the mapping's, and its
// expiry has not passed, both before the copy and, for reads, after it (a read
// that finishes after expiry fails with kLeaseExpired: the range may be reused).
// It also checks that the node still serves the mapping (its handshake
// connection is open) after each batch: copies through the mapping of a node
// that exited or stopped fail with kUnavailable.
#pragma once

#include <memory>

#include "transfer/transport.h"

namespace crescent::transfer {

std::unique_ptr<Transport> MakeShmTransport();

}  // namespace crescent::transfer
