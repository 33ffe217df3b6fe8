#include "memory_check.h"

#include <sys/mman.h>
#include <unistd.h>

#include <array>

namespace crescent::python {

bool IsMapped(uintptr_t ptr, size_t size) {
  if (ptr == 0 || size == 0 || ptr + size < ptr) return false;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t start = ptr & ~(page - 1);
  const uintptr_t end = ptr + size;
  // mincore fills one byte per page; walk in fixed chunks so a huge (or bogus)
  // size costs syscalls, not a huge allocation.
  std::array<unsigned char, 4096> pages{};
  while (start < end) {
    size_t len = std::min<uintptr_t>(end - start, pages.size() * page);
    // ENOMEM: part of the range is not mapped.
    if (mincore(reinterpret_cast<void*>(start), len, pages.data()) != 0) return false;
    start += len;
  }
  return true;
}

}  // namespace crescent::python
