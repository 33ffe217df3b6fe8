// How this process may touch an address range, as the kernel maps it.
//
// Zero-copy calls move bytes straight to and from caller memory: a get writes
// into it (memcpy from a shared segment, or recv from a socket), a put reads
// it. Registration asks the kernel once, here, so that a wrong pointer or a
// read-only mapping (a PROT_READ mmap of a file) is refused with a Status
// instead of faulting inside a transfer later.
#pragma once

#include <cstddef>

namespace crescent::client {

enum class Mapping {
  kUnmapped,   // some byte is not mapped, or not readable (PROT_NONE)
  kReadOnly,   // every byte is readable, some byte not writable
  kReadWrite,  // every byte is readable and writable
};

// The mapping of [ptr, ptr + size), read from /proc/self/maps. kUnmapped for
// ptr null, size 0, a range that wraps around, or when the maps cannot be read.
// With `maps_file`, also says whether some byte of a mapped range lies in a
// mapping of a file on a device (whose pages a read may fetch from that
// device); anonymous memory, shared memory (memfd, /dev/shm, SysV) and
// /dev/zero or huge-page mappings are not files here.
Mapping MappingOf(const void* ptr, size_t size, bool* maps_file = nullptr);

}  // namespace crescent::client
