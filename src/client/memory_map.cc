#include "client/memory_map.h"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>

namespace crescent::client {
namespace {

// A mapping's path (the maps line's last field) names memory, not a file on a
// device: anonymous (no path, or "[heap]" and the like), or backed by tmpfs,
// /dev/zero or huge pages.
bool IsMemory(std::string_view path) {
  if (path.empty() || path.front() == '[') return true;
  for (std::string_view m :
       {"/memfd:", "/dev/shm/", "/SYSV", "/dev/zero", "/anon_hugepage", "/dev/hugepages"}) {
    if (path.starts_with(m)) return true;
  }
  return false;
}

}  // namespace

Mapping MappingOf(const void* ptr, size_t size, bool* maps_file) {
  if (maps_file != nullptr) *maps_file = false;
  const auto start = reinterpret_cast<uintptr_t>(ptr);
  if (ptr == nullptr || size == 0 || start + size < start) return Mapping::kUnmapped;
  const uintptr_t end = start + size;
  std::ifstream maps("/proc/self/maps");
  // Lines are "LOW-HIGH PERMS OFFSET DEV INODE PATH", in address order. Walk
  // them from `start`: each mapping must begin where the covered part ends.
  uintptr_t covered = start;
  bool writable = true;
  std::string line;
  while (covered < end && std::getline(maps, line)) {
    uintptr_t low = 0, high = 0;
    char perms[5] = {};
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " %4s %*s %*s %*s %n", &low, &high,
                    perms, &path_at) != 3) {
      return Mapping::kUnmapped;
    }
    if (high <= covered) continue;
    if (low > covered || perms[0] != 'r') return Mapping::kUnmapped;
    writable = writable && perms[1] == 'w';
    if (maps_file != nullptr && path_at > 0 &&
        !IsMemory(std::string_view(line).substr(static_cast<size_t>(path_at)))) {
      *maps_file = true;
    }
    covered = high;
  }
  if (covered < end) return Mapping::kUnmapped;
  return writable ? Mapping::kReadWrite : Mapping::kReadOnly;
}

}  // namespace crescent::client
