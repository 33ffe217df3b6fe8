// BulkCopy: the shared-memory transport's copy between a segment and a
// client's buffer.
//
// From kStreamingFrom bytes up it uses non-temporal (streaming) stores where
// the CPU has AVX2: the destination lines are written without first being read
// into the cache, and the copy does not evict the caller's working set (for a
// get, the next control-plane call's). A KV page of that size is bound for a
// GPU upload or a later read, not for the cache. Measured on the project's
// 2-vCPU EPYC VM, 4 MiB blocks cycling through 256 MiB: glibc memcpy ~16 GB/s,
// streaming ~19 GB/s (glibc itself only streams above ~127 MiB there). Smaller
// copies, and CPUs without AVX2, use memcpy.
#pragma once

#include <cstddef>

namespace crescent::transfer {

inline constexpr size_t kStreamingFrom = 256 << 10;

// Like memcpy (no overlap); ordered before the caller's next store (sfence).
void BulkCopy(void* dst, const void* src, size_t n);

}  // namespace crescent::transfer
