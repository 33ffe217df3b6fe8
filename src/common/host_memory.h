// The memory this host can still give a new allocation: read from
// /proc/meminfo and the cgroup v2 hierarchy. A store node checks a segment's
// size against it before creating it; the replayer checks its cluster's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace crescent {

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
// "100.0 GiB": how these figures are written in messages.
std::string FormatGib(uint64_t bytes);

}  // namespace crescent
