#include "client/memory_map.h"

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

namespace crescent::client {

Mapping MappingOf(const void* ptr, size_t size) {
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
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " %4s", &low, &high, perms) != 3) {
      return Mapping::kUnmapped;
    }
    if (high <= covered) continue;
    if (low > covered || perms[0] != 'r') return Mapping::kUnmapped;
    writable = writable && perms[1] == 'w';
    covered = high;
  }
  if (covered < end) return Mapping::kUnmapped;
  return writable ? Mapping::kReadWrite : Mapping::kReadOnly;
}

}  // namespace crescent::client
