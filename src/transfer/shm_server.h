// ShmServer: serves a store node's segments to same-host clients.
//
// It listens on a Linux abstract Unix socket (the endpoint's ";shm=NAME") and
// answers two requests (shm_protocol.h), each only for a peer of the node's own
// uid (SO_PEERCRED) and a capability that SegmentMemory::Resolve accepts:
//  - map: replies with the id and size of the segment the capability names
//    and passes its fd with SCM_RIGHTS: a DRAM segment's memfd, sealed against
//    writable mappings (segment_memory.h), or a persistent segment's file
//    opened read-only. The client maps it read-only and reads by itself;
//    the capability's expiry then bounds only the client's own checks
//    (shm_transport.h), which is why the uid check is the gate for reads.
//  - write: the node copies the bytes from the client's memory into the
//    segment itself (process_vm_readv), checking the capability's expiry and
//    the mount before each chunk, so a frozen or late writer can never write
//    into space the master has given to another object (docs/capabilities.md).
//    A write into a persistent segment is persisted before it is answered.
// The server keeps each map connection open until the client closes it,
// Stop(), or DropMappings(): a client whose connection hangs up knows the
// memory is no longer served under the mount its capabilities name.
#pragma once

#include <memory>
#include <string>

#include "crescent/status.h"
#include "transfer/capability.h"
#include "transfer/segment_set.h"
#include "transfer/transfer_metrics.h"

namespace crescent::transfer {

class ShmServer {
 public:
  // `name` is the abstract socket name (without the leading NUL). `metrics`,
  // if set, counts maps, writes and refusals, and must outlive the server.
  static StatusOr<std::unique_ptr<ShmServer>> Start(const std::string& name, SegmentSet segments,
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
