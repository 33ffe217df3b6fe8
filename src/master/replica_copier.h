// ReplicaCopier: how the master has an object's bytes moved between tiers, and
// checked against their checksum on a persistent segment that comes back
// after its node restarted (docs/persistent-tier.md). The engine never touches payload bytes; the host
// gives it a copier that signs a copy capability for each source and a write
// capability for each target and asks the source's store node to copy
// (transfer/copy_executor.h). Each copy's Status is OK only once the target's
// bytes are persisted.
#pragma once

#include <span>
#include <vector>

#include "crescent/status.h"
#include "master/types.h"

namespace crescent::master {

struct ReplicaCopy {
  ReplicaDescriptor from;  // segment, endpoint, offset, length of the source
  ReplicaDescriptor to;    // the same for the target (the same length)
};

struct ReplicaCheck {
  ReplicaDescriptor replica;
  uint64_t checksum = 0;  // the value's XXH3-64, as recorded at PutEnd
};

class ReplicaCopier {
 public:
  virtual ~ReplicaCopier() = default;
  // One Status per copy, in order; every copy is over (done, or refused and
  // never to land later than `deadline_unix_ms`) when it returns.
  virtual std::vector<Status> Copy(std::span<const ReplicaCopy> copies,
                                   int64_t deadline_unix_ms) = 0;
  // One Status per check: OK, kChecksumMismatch (the bytes there are not the
  // value's), or why it could not be checked.
  virtual std::vector<Status> Verify(std::span<const ReplicaCheck> checks,
                                     int64_t deadline_unix_ms) = 0;
  // Ends the copies and checks in flight (they fail, kClosed, instead of
  // waiting out a silent node) and fails later ones at once; for an engine
  // that is stopping (MasterService::BeginShutdown). Thread-safe; may be a
  // no-op where nothing can wait long.
  virtual void Close() {}
};

}  // namespace crescent::master
