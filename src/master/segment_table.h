// SegmentTable: the memory segments store nodes have mounted, their offset
// allocators, and store-node liveness.
//
// Segments are never freed while the table lives: an unmounted segment stays as
// a tombstone (mounted == false, allocator released) so that a lock-free reader
// holding a SegmentId can always ask IsMounted() and Endpoint() safely. Ids are
// never reused, so a replica that names an unmounted segment is recognisably dead.
//
// Locking: mu_ guards the allocators, the name map and the node table. The
// per-segment `mounted` flag is atomic (release on unmount, acquire on read) and
// the descriptive fields are immutable after mount, so the read path never takes
// mu_.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cache/offset_allocator.h"
#include "common/clock.h"
#include "crescent/status.h"
#include "master/master_config.h"
#include "master/object_entry.h"
#include "master/types.h"

namespace crescent::master {

class SegmentTable {
 public:
  static constexpr uint32_t kMaxSegments = 1 << 16;

  SegmentTable(const MasterConfig& config, const Clock& clock);
  ~SegmentTable();

  StatusOr<SegmentId> Mount(const SegmentSpec& spec);
  // Marks the segment unmounted at once; the caller then drops its replicas.
  StatusOr<SegmentId> Unmount(std::string_view name, std::string_view owner);
  // kNodeUnknown tells a node (e.g. after a master restart) to mount again.
  Status Heartbeat(std::string_view node);
  // Unmounts every segment of nodes silent for longer than the TTL.
  std::vector<SegmentId> ExpireNodes();

  // Places up to `count` replicas of `size` bytes on distinct mounted segments:
  // the preferred segment first, then the local node's, then the emptiest.
  // Returns fewer (possibly none) when space is short.
  std::vector<ReplicaSlot> Allocate(uint64_t size, uint32_t count, const PutConfig& config);
  // Returns a replica's space. A replica on an unmounted segment is ignored.
  void Free(const ReplicaSlot& replica);

  bool IsMounted(SegmentId id) const;
  // Immutable after mount; valid for any id ever returned by Mount.
  const std::string& Endpoint(SegmentId id) const;

  uint64_t capacity() const { return capacity_.load(std::memory_order_relaxed); }
  uint64_t used() const { return used_.load(std::memory_order_relaxed); }
  uint64_t largest_segment() const;
  size_t mounted_count() const;
  std::vector<SegmentInfo> List() const;

 private:
  struct Segment {
    SegmentId id;
    SegmentSpec spec;
    std::atomic<bool> mounted{true};
    std::unique_ptr<cache::OffsetAllocator> allocator;  // null once unmounted
  };
  struct Node {
    TimeMs last_heartbeat = 0;
    std::vector<SegmentId> segments;
  };

  Segment* Get(SegmentId id) const;
  void UnmountLocked(Segment* seg);

  const MasterConfig& config_;
  const Clock& clock_;
  mutable std::mutex mu_;
  std::unique_ptr<std::atomic<Segment*>[]> by_id_;  // index = SegmentId
  SegmentId next_id_ = 1;
  absl::flat_hash_map<std::string, SegmentId> by_name_;  // mounted only
  absl::flat_hash_map<std::string, Node> nodes_;
  std::atomic<uint64_t> capacity_{0};  // sum over mounted segments
  std::atomic<uint64_t> used_{0};      // allocator bytes in use, mounted segments
};

}  // namespace crescent::master
