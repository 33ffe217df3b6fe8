// CopyAndHash: a verified same-host read's copy and checksum in one pass.
//
// It copies n bytes and returns HashValue (XXH3-64, common/value_hash.h) of
// the bytes it stored. On CPUs with AVX2 and for n > 240 (XXH3's long-input
// path), each 64-byte stripe is loaded once into registers, stored from them
// to the destination and fed from the same registers into XXH3's
// accumulators; so the hash covers exactly the bytes delivered, and neither
// side is read twice. The last stripe, which XXH3 takes at [n - 64, n) and
// which may overlap stripes already stored, is read back from the
// destination. From kStreamingFrom bytes up (bulk_copy.h) and with a 32-byte
// aligned destination, the stores are non-temporal, as BulkCopy's.
//
// Smaller inputs, and CPUs without AVX2, copy and then hash the destination
// (CopyHashing).
//
// Measured on the project's 2-vCPU EPYC VM (shared, load about 3.5), 1 MiB
// objects cycling through 512 MiB into 16 destination slots: glibc memcpy
// 11-15 GB/s, the chunked copy-then-hash 12.7-13.7 GB/s, this one pass
// 15-20 GB/s; at 4 MiB 13.7-13.9 GB/s, as memcpy (docs/capabilities.md,
// "Design decisions").
#pragma once

#include <cstddef>
#include <cstdint>

namespace crescent::transfer {

uint64_t CopyAndHash(void* dst, const void* src, size_t n);

}  // namespace crescent::transfer
