#include "common/host_memory.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

namespace crescent {

std::string FormatGib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (uint64_t{1} << 30));
  return buf;
}

namespace {

std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A decimal number at the start of `s` (after blanks); nullopt if there is none
// or it does not fit in 64 bits.
// The leading decimal number of `s` after blanks; nullopt if none or too big.
std::optional<uint64_t> ParseNumber(std::string_view s) {
  const size_t start = s.find_first_not_of(" \t");
  if (start == std::string_view::npos) return std::nullopt;
  uint64_t v = 0;
  const char* first = s.data() + start;
  auto [end, ec] = std::from_chars(first, s.data() + s.size(), v);
  if (ec != std::errc() || end == first) return std::nullopt;
  return v;
}

// The lines of `text` (split at '\n'), as views into it.
std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = std::min(text.find('\n', pos), text.size());
    out.push_back(text.substr(pos, eol - pos));
    pos = eol + 1;
  }
  return out;
}

// The "Name:   123 kB" line of /proc/meminfo, in bytes.
std::optional<uint64_t> MeminfoField(std::string_view text, std::string_view name) {
  for (std::string_view line : Lines(text)) {
    if (line.size() <= name.size() || line.substr(0, name.size()) != name ||
        line[name.size()] != ':') {
      continue;
    }
    std::optional<uint64_t> kib = ParseNumber(line.substr(name.size() + 1));
    if (!kib || *kib > UINT64_MAX / 1024) return std::nullopt;
    return *kib * 1024;
  }
  return std::nullopt;
}

}  // namespace

std::optional<AvailableMemory> ParseMeminfoAvailable(std::string_view meminfo) {
  const char* mem_name = "MemAvailable";
  std::optional<uint64_t> mem = MeminfoField(meminfo, mem_name);
  if (!mem) {
    mem_name = "MemFree";  // kernels before 3.14 have no MemAvailable
    mem = MeminfoField(meminfo, mem_name);
  }
  if (!mem) return std::nullopt;
  // shmem pages can go to swap, so free swap counts too.
  uint64_t swap = MeminfoField(meminfo, "SwapFree").value_or(0);
  AvailableMemory out;
  out.bytes = *mem + std::min(swap, UINT64_MAX - *mem);
  out.detail = std::string(mem_name) + " " + FormatGib(*mem) + " + SwapFree " + FormatGib(swap);
  return out;
}

std::optional<CgroupLimit> CgroupMemoryMax(const std::string& cgroup_root,
                                           std::string_view proc_self_cgroup) {
  if (!ReadSmallFile(cgroup_root + "/cgroup.controllers")) return std::nullopt;
  std::string dir;
  for (std::string_view line : Lines(proc_self_cgroup)) {
    if (line.substr(0, 3) == "0::") dir = std::string(line.substr(3));
  }
  if (dir.empty() || dir[0] != '/') return std::nullopt;
  std::optional<CgroupLimit> best;
  while (true) {
    // The root cgroup has no memory.max; "max" means no limit.
    std::optional<std::string> max =
        ReadSmallFile(cgroup_root + (dir == "/" ? std::string() : dir) + "/memory.max");
    std::optional<uint64_t> limit = max ? ParseNumber(*max) : std::nullopt;
    if (limit && (!best || *limit < best->bytes)) best = CgroupLimit{*limit, dir};
    if (dir == "/") break;
    size_t slash = dir.rfind('/');
    dir = slash == 0 ? "/" : dir.substr(0, slash);
  }
  return best;
}

std::optional<AvailableMemory> AvailableSegmentMemory() {
  std::optional<std::string> meminfo = ReadSmallFile("/proc/meminfo");
  if (!meminfo) return std::nullopt;
  std::optional<AvailableMemory> available = ParseMeminfoAvailable(*meminfo);
  if (!available) return std::nullopt;
  std::optional<std::string> self = ReadSmallFile("/proc/self/cgroup");
  std::optional<CgroupLimit> cgroup =
      self ? CgroupMemoryMax("/sys/fs/cgroup", *self) : std::nullopt;
  if (cgroup && cgroup->bytes < available->bytes) {
    available->bytes = cgroup->bytes;
    available->detail = "memory.max of cgroup " + cgroup->path + "; host: " + available->detail;
  }
  return available;
}

}  // namespace crescent
