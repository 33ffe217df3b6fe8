// ShmServer: serves a store node's segment to same-host clients.
//
// It listens on a Linux abstract Unix socket (the endpoint's ";shm=NAME") and
// answers two requests (shm_protocol.h), each only for a peer of the node's own
// uid (SO_PEERCRED) and a capability that SegmentMemory::Resolve accepts:
//  - map: replies with the segment id and size and passes the memfd with
//    SCM_RIGHTS. The memfd is sealed against writable mappings
//    (segment_memory.h), so the client maps it read-only and reads by itself;
//    the capability's expiry then bounds only the client's own checks
//    (shm_transport.h), which is why the uid check is the gate for reads.
//  - write: the node copies the bytes from the client's memory into the
//    segment itself (process_vm_readv), checking the capability's expiry and
//    the mount before each chunk, so a frozen or late writer can never write
//    into space the master has given to another object (docs/network.md).
// The server keeps each map connection open until the client closes it,
// Stop(), or DropMappings(): a client whose connection hangs up knows the
// memory is no longer served under the mount its capabilities name.
#pragma once

#include <memory>
#include <string>

#include "crescent/status.h"
#include "transfer/capability.h"
#include "transfer/segment_memory.h"
#include "transfer/transfer_metrics.h"

namespace crescent::transfer {

class ShmServer {
 public:
  // `name` is the abstract socket name (without the leading NUL). `metrics`,
  // if set, counts maps, writes and refusals, and must outlive the server.
  static StatusOr<std::unique_ptr<ShmServer>> Start(const std::string& name, SegmentMemory& segment,
                                                    const CapabilitySigner& signer,
                                                    TransferMetrics* metrics = nullptr);
  ~ShmServer();  // Stop()s
  void Stop();
  // Closes every held map connection and returns once they are closed. The
  // node calls it before it remounts: a client that read through its mapping
  // checks the connection after each copy, so bytes it copied after this
  // point, when the space may hold another mount's objects, are refused.
  void DropMappings();

 private:
  struct Impl;
  explicit ShmServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace crescent::transfer
