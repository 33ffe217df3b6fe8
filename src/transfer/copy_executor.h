// CopyExecutor: how a store node carries out a copy request (wire.h, op
// kCopy), the master's way of moving an object between tiers
// (docs/persistent-tier.md). The source range is already resolved against the
// copy capability; the target is a write capability with its endpoint:
//  - a segment of this node (the capability resolves here): one memcpy, then
//    the target is persisted;
//  - another node's: a TCP write of the source bytes, straight from the
//    segment, which that node persists before it answers.
// Either way the source's fence is checked after the bytes moved: a copy whose
// capability expired meanwhile (its space may have been reused) fails, and
// the master discards the target.
#pragma once

#include <memory>
#include <mutex>

#include "crescent/status.h"
#include "transfer/segment_set.h"
#include "transfer/transport.h"
#include "transfer/wire.h"

namespace crescent::transfer {

class CopyExecutor {
 public:
  // `segments` and `signer` must outlive the executor.
  CopyExecutor(const SegmentSet& segments, const CapabilitySigner& signer)
      : segments_(segments), signer_(signer) {}
  ~CopyExecutor();

  Status Copy(const std::byte* source, uint64_t length, const SegmentMemory::Fence& source_fence,
              const wire::CopyTarget& target);

 private:
  const SegmentSet& segments_;
  const CapabilitySigner& signer_;
  std::mutex mu_;  // guards peer_'s creation
  std::unique_ptr<Transport> peer_;
};

}  // namespace crescent::transfer
