// SegmentMemory: one store-node segment, a memfd mapped MAP_SHARED, its pages
// reserved (fallocate) and mapped (MAP_POPULATE) at creation. Create() first
// refuses a size the host cannot give (AvailableSegmentMemory below). The TCP data
// server reads and writes it in place; the shm server hands its fd to same-host
// clients, who map the same pages.
//
// Resolve() is the single gate every server-side access goes through: it checks
// that the capability names this segment's current id, that [offset, offset +
// length) lies inside the segment, and the HMAC/op/expiry (CapabilitySigner).
// The id is 0 until the node mounts, and changes when it remounts after a master
// restart, so it is an atomic (relaxed: it orders nothing else).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "crescent/status.h"
#include "transfer/capability.h"

namespace crescent::transfer {

// The memory a new segment could get now: MemAvailable + SwapFree from
// /proc/meminfo, lowered to the smallest cgroup v2 memory.max on the way from this
// process's cgroup to the root, where one is set. `detail` says where the figure
// comes from, for error messages. nullopt when /proc/meminfo cannot be read.
// The cgroup's own usage is not subtracted (much of it can be reclaimable page
// cache); past its limit the cgroup's OOM killer acts inside it, not host-wide.
struct AvailableMemory {
  uint64_t bytes = 0;
  std::string detail;
};
std::optional<AvailableMemory> AvailableSegmentMemory();
// The parts of it, split out for tests. From /proc/meminfo's text: MemAvailable
// (MemFree on kernels without it) + SwapFree; nullopt without either.
std::optional<AvailableMemory> ParseMeminfoAvailable(std::string_view meminfo);
// The smallest memory.max from the cgroup that the "0::PATH" line of
// `proc_self_cgroup` names up to the root of the v2 hierarchy at `cgroup_root`,
// and the cgroup setting it; nullopt when `cgroup_root` is not a v2 hierarchy (a
// v1 or hybrid host) or no cgroup on the way sets a limit.
struct CgroupLimit {
  uint64_t bytes = 0;
  std::string path;
};
std::optional<CgroupLimit> CgroupMemoryMax(const std::string& cgroup_root,
                                           std::string_view proc_self_cgroup);

class SegmentMemory {
 public:
  // A memfd of `size` bytes named `name` (the name only labels /proc/PID/fd).
  // kNoSpace, before anything is allocated, when `size` exceeds
  // AvailableSegmentMemory(), and when the kernel refuses the memory.
  static StatusOr<std::unique_ptr<SegmentMemory>> Create(const std::string& name, uint64_t size);
  ~SegmentMemory();
  SegmentMemory(const SegmentMemory&) = delete;
  SegmentMemory& operator=(const SegmentMemory&) = delete;

  std::byte* data() const { return data_; }
  uint64_t size() const { return size_; }
  int fd() const { return fd_; }

  // The capability binding (the node's endpoint string, capability.h). Set once,
  // after the servers have bound their ports and before they accept anything.
  void SetBinding(std::string binding) { binding_ = std::move(binding); }
  const std::string& binding() const { return binding_; }
  // The segment id the master assigned (0: not mounted; Resolve refuses all).
  void SetId(uint32_t id) { id_.store(id, std::memory_order_relaxed); }
  uint32_t id() const { return id_.load(std::memory_order_relaxed); }

  // The checked range for `cap`, or kCapabilityInvalid / kLeaseExpired /
  // kSegmentNotFound (wrong id) / kInvalidArgument (out of bounds).
  StatusOr<std::byte*> Resolve(const Capability& cap, AccessOp op, const CapabilitySigner& signer,
                               int64_t now_unix_ms) const;

 private:
  SegmentMemory(int fd, std::byte* data, uint64_t size) : fd_(fd), data_(data), size_(size) {}
  int fd_;
  std::byte* data_;
  uint64_t size_;
  std::atomic<uint32_t> id_{0};
  std::string binding_;
};

}  // namespace crescent::transfer
