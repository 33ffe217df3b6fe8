// ShmServer: hands a store node's segment memfd to same-host clients.
//
// It listens on a Linux abstract Unix socket (the endpoint's ";shm=NAME"). A
// client connects and sends one capability it got from the master for this
// segment. The server checks SO_PEERCRED (the peer's uid must be the node's) and
// the capability (SegmentMemory::Resolve, any op), then replies with the segment
// id and size and passes the memfd with SCM_RIGHTS. After that the client reads
// and writes the mapping directly; capabilities then bound only the client's own
// checks (shm_transport.h), which is why the uid check is the gate. The server
// keeps each handshake's connection open until the client closes it or Stop():
// a client whose connection hangs up knows the memory is no longer served.
#pragma once

#include <memory>
#include <string>

#include "crescent/status.h"
#include "transfer/capability.h"
#include "transfer/segment_memory.h"

namespace crescent::transfer {

class ShmServer {
 public:
  // `name` is the abstract socket name (without the leading NUL).
  static StatusOr<std::unique_ptr<ShmServer>> Start(const std::string& name,
                                                    SegmentMemory& segment,
                                                    const CapabilitySigner& signer);
  ~ShmServer();  // Stop()s
  void Stop();

 private:
  struct Impl;
  explicit ShmServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace crescent::transfer
