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

#include "common/value_hash.h"

namespace crescent::transfer {

inline constexpr size_t kStreamingFrom = 256 << 10;

// Like memcpy (no overlap); ordered before the caller's next store (sfence).
void BulkCopy(void* dst, const void* src, size_t n);

// A verified read's copy where CopyAndHash (copy_hash.h) has no one-pass
// form (no AVX2, or at most 240 bytes): kHashChunk bytes at a time, each
// chunk copied with plain stores and then fed to `hasher` from the
// destination while it is still in cache, so the checksum covers exactly the
// bytes delivered. Plain stores, not streaming ones: a streamed chunk would
// leave the cache and the hash would read it back from memory.
inline constexpr size_t kHashChunk = 64 << 10;
void CopyHashing(void* dst, const void* src, size_t n, ValueHasher& hasher);

}  // namespace crescent::transfer
