// ReplicaCopier: how the master has an object's bytes moved between tiers
// (docs/persistent-tier.md). The engine never touches payload bytes; the host
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

class ReplicaCopier {
 public:
  virtual ~ReplicaCopier() = default;
  // One Status per copy, in order; every copy is over (done, or refused and
  // never to land later than `deadline_unix_ms`) when it returns.
  virtual std::vector<Status> Copy(std::span<const ReplicaCopy> copies,
                                   int64_t deadline_unix_ms) = 0;
};

}  // namespace crescent::master
