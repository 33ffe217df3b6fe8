// CopyHasher: a verified same-host read's copy and checksum in one pass, for
// a value delivered in pieces (a transfer op's slices, or its one buffer).
//
// Copy() each piece in order; Digest() is HashValue (XXH3-64,
// common/value_hash.h) of the pieces' bytes as stored, in order. The XXH3
// state (eight accumulators, the stripe's place in its block) carries across
// pieces, so many slices cost what one buffer of the same bytes costs.
//
// XXH3's long-input path (more than 240 bytes) consumes 64-byte stripes, each
// only once at least one more byte follows it; the value's last 64 bytes go in
// last, with their own secret. So a piece's whole stripes but its last are
// accumulated as they are copied, and its last 1..64 bytes wait in `pending_`
// for the next piece or for Digest (with the stripe before them in `prev_`,
// which the last 64 bytes may reach into). A value of at most 240 bytes is
// kept whole in `head_` and hashed by HashValue.
//
// On CPUs with AVX2, each stripe is loaded once into registers, stored from
// them to the destination and fed from the same registers into XXH3's
// accumulators: the hash covers exactly the bytes delivered and neither side
// is read twice. The bytes kept for later are read back from the destination.
// With `stream` (a value of kStreamingFrom bytes or more, bulk_copy.h) and a
// 32-byte aligned destination, the stores are non-temporal, as BulkCopy's.
// Other CPUs copy each stripe and hash it from the destination.
//
// Measured on the project's 2-vCPU EPYC VM (shared, load about 3.5), 1 MiB
// objects cycling through 512 MiB into 16 destination slots: glibc memcpy
// 11-15 GB/s, a chunked copy-then-hash 12.7-13.7 GB/s, this one pass
// 15-20 GB/s; at 4 MiB 13.7-13.9 GB/s, as memcpy (docs/capabilities.md,
// "Design decisions").
//
// Not thread-safe; one value per CopyHasher.
#pragma once

#include <cstddef>
#include <cstdint>

namespace crescent::transfer {

class CopyHasher {
 public:
  explicit CopyHasher(bool stream);
  // Copies n bytes (no overlap) and feeds them, after those fed before.
  void Copy(void* dst, const void* src, size_t n);
  uint64_t Digest() const;

 private:
  // Accumulates the 64 bytes at p as the next stripe, and keeps them as prev_.
  void AccumulateKept(const uint8_t* p);

  alignas(32) uint64_t acc_[8];
  uint64_t total_ = 0;        // bytes fed
  size_t stripe_ = 0;         // stripes accumulated in the current block (0..15)
  size_t pending_bytes_ = 0;  // 0 before any byte, then 1..64
  bool stream_;
  uint8_t prev_[64];     // the last stripe accumulated
  uint8_t pending_[64];  // the bytes after it, not yet accumulated
  uint8_t head_[240];    // every byte, while there are at most 240
};

// One buffer: CopyHasher(n >= kStreamingFrom), one Copy, its Digest.
uint64_t CopyAndHash(void* dst, const void* src, size_t n);

}  // namespace crescent::transfer
