// SegmentSet: the segments one store node serves (its DRAM segment and its
// persistent ones), fixed when the node starts. The data servers resolve each
// capability against the segment whose current mount id it names; every check
// of SegmentMemory::Resolve then applies to that segment.
#pragma once

#include <string>
#include <vector>

#include "transfer/segment_memory.h"

namespace crescent::transfer {

class SegmentSet {
 public:
  // One segment (implicit: a server of one segment takes it as it is).
  SegmentSet(SegmentMemory& segment) : segments_{&segment} {}  // NOLINT(google-explicit-constructor)
  explicit SegmentSet(std::vector<SegmentMemory*> segments) : segments_(std::move(segments)) {}

  struct Resolved {
    std::byte* data = nullptr;
    SegmentMemory* segment = nullptr;
  };
  // The segment that `cap` names, resolved; kSegmentNotFound when none of
  // them is mounted under that id now.
  StatusOr<Resolved> Resolve(const Capability& cap, AccessOp op, const CapabilitySigner& signer,
                             int64_t now_unix_ms, SegmentMemory::Fence* fence = nullptr) const {
    SegmentMemory* target = segments_.size() == 1 ? segments_[0] : nullptr;
    for (SegmentMemory* s : segments_) {
      if (target == nullptr && s->id() == cap.segment && cap.segment != 0) target = s;
    }
    if (target == nullptr) {
      return Status(ErrorCode::kSegmentNotFound,
                    "capability names segment " + std::to_string(cap.segment) +
                        ", which this node does not serve under that id");
    }
    StatusOr<std::byte*> data = target->Resolve(cap, op, signer, now_unix_ms, fence);
    if (!data.ok()) return data.status();
    return Resolved{*data, target};
  }

  const std::vector<SegmentMemory*>& segments() const { return segments_; }

 private:
  std::vector<SegmentMemory*> segments_;
};

}  // namespace crescent::transfer
