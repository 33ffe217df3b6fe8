#include "transfer/copy_hash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/value_hash.h"
#include "transfer/bulk_copy.h"

namespace crescent::transfer {
namespace {

std::vector<std::byte> Pattern(size_t n, uint32_t seed) {
  std::vector<std::byte> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<std::byte>(x >> 24);
  }
  return v;
}

// Copies n bytes of a pattern to `dst_misalign` bytes past an aligned
// buffer and checks the bytes, the padding around them and the checksum.
void CheckOne(size_t n, size_t dst_misalign, size_t src_misalign) {
  const size_t pad = 64;
  const std::vector<std::byte> src = Pattern(n + src_misalign, uint32_t(n));
  std::vector<std::byte> dst(n + dst_misalign + 2 * pad + 64, std::byte{0xEE});
  // An aligned base, so that dst_misalign is the destination's alignment.
  const size_t base = (64 - reinterpret_cast<uintptr_t>(dst.data()) % 64) % 64;
  std::byte* d = dst.data() + base + pad + dst_misalign;
  const uint64_t h = CopyAndHash(d, src.data() + src_misalign, n);
  ASSERT_EQ(h, HashValue(src.data() + src_misalign, n)) << "n " << n << " at +" << dst_misalign;
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(d[i], src[src_misalign + i]) << "n " << n << " byte " << i;
  }
  for (std::byte* p = dst.data(); p < d; ++p) ASSERT_EQ(*p, std::byte{0xEE}) << "before, n " << n;
  for (std::byte* p = d + n; p < dst.data() + dst.size(); ++p)
    ASSERT_EQ(*p, std::byte{0xEE}) << "after, n " << n;
}

// Every length up to a few blocks (XXH3's short, mid-size and long paths, and
// the long path's block, stripe and tail boundaries), at aligned and
// misaligned destinations and sources: the bytes copied exactly, and the
// checksum HashValue's (XXH3-64) of them.
TEST(CopyAndHashTest, MatchesHashValueAtEveryLengthAndAlignment) {
  for (size_t n = 0; n <= 3 * 1024 + 130; ++n) {
    for (size_t misalign : {0, 1, 32}) ASSERT_NO_FATAL_FAILURE(CheckOne(n, misalign, misalign ^ 1));
  }
}

// Sizes around the streaming threshold and the usual object sizes, where the
// aligned destination is written with streaming stores.
TEST(CopyAndHashTest, MatchesHashValueForLargeObjects) {
  for (size_t n : {kStreamingFrom - 1, kStreamingFrom, kStreamingFrom + 65, size_t{1} << 20,
                   (size_t{1} << 20) + 1023, size_t{4} << 20}) {
    for (size_t misalign : {0, 8, 32}) ASSERT_NO_FATAL_FAILURE(CheckOne(n, misalign, 0));
  }
}

// The checksum is of the bytes delivered: other bytes, another checksum.
TEST(CopyAndHashTest, DifferentBytesGiveADifferentChecksum) {
  std::vector<std::byte> src = Pattern(1 << 20, 7), dst(src.size());
  const uint64_t before = CopyAndHash(dst.data(), src.data(), src.size());
  for (size_t at : {size_t{0}, size_t{5000}, src.size() - 70, src.size() - 1}) {
    std::vector<std::byte> changed = src;
    changed[at] ^= std::byte{1};
    EXPECT_NE(CopyAndHash(dst.data(), changed.data(), changed.size()), before) << at;
    EXPECT_EQ(dst, changed);
  }
}

// Copies `pieces` (their lengths, in order) of one pattern value through a
// CopyHasher into destinations `gap` bytes apart, misaligned by `misalign`,
// and checks every byte, the guard bytes between them and the checksum: the
// one-shot XXH3 (HashValue) of the whole value.
void CheckPieces(const std::vector<size_t>& pieces, bool stream, size_t misalign) {
  size_t total = 0;
  for (size_t n : pieces) total += n;
  const std::vector<std::byte> src = Pattern(total, uint32_t(total + pieces.size()));
  const size_t gap = 96;
  std::vector<std::byte> dst(total + (pieces.size() + 1) * gap + 64, std::byte{0xEE});
  const size_t base = (64 - reinterpret_cast<uintptr_t>(dst.data()) % 64) % 64;
  CopyHasher hasher(stream);
  std::vector<std::byte*> at;
  std::byte* d = dst.data() + base + misalign;
  size_t from = 0;
  for (size_t n : pieces) {
    d += gap;
    at.push_back(d);
    hasher.Copy(d, src.data() + from, n);
    d += n;
    from += n;
  }
  const std::string shape = "total " + std::to_string(total) + " in " +
                            std::to_string(pieces.size()) + " pieces, first " +
                            std::to_string(pieces.empty() ? 0 : pieces[0]);
  ASSERT_EQ(hasher.Digest(), HashValue(src.data(), total)) << shape;
  from = 0;
  std::vector<bool> written(dst.size(), false);
  for (size_t i = 0; i < pieces.size(); ++i) {
    for (size_t k = 0; k < pieces[i]; ++k) {
      ASSERT_EQ(at[i][k], src[from + k]) << shape << ", piece " << i << " byte " << k;
      written[static_cast<size_t>(at[i] + k - dst.data())] = true;
    }
    from += pieces[i];
  }
  for (size_t k = 0; k < dst.size(); ++k) {
    if (!written[k]) {
      ASSERT_EQ(dst[k], std::byte{0xEE}) << shape << ", stray write at " << k;
    }
  }
}

// Values in pieces of every shape around XXH3's boundaries (the 240-byte
// short path, the 64-byte stripe, the 1 KiB block): one piece, many equal
// ones, pieces of 1 and 63 and 65 bytes, empty pieces between, first and
// last; each checksum is the one-shot XXH3 of the concatenation.
TEST(CopyHasherTest, PiecesHashAsTheirConcatenation) {
  for (size_t total : {0, 1, 63, 64, 65, 239, 240, 241, 256, 1023, 1024, 1025, 2113, 5000}) {
    for (size_t piece : {1, 7, 63, 64, 65, 100, 240, 241, 1024, 4096}) {
      std::vector<size_t> pieces;
      for (size_t left = total; left > 0; left -= std::min(left, piece)) {
        pieces.push_back(std::min(left, piece));
      }
      ASSERT_NO_FATAL_FAILURE(CheckPieces(pieces, false, 0));
      std::vector<size_t> with_empty = {0};
      for (size_t n : pieces) {
        with_empty.push_back(n);
        with_empty.push_back(0);
      }
      ASSERT_NO_FATAL_FAILURE(CheckPieces(with_empty, false, 1));
    }
  }
}

// Uneven pieces: every split of a value into two, and pseudo-random splits
// into many (chunk sizes no multiple of the stripe or block).
TEST(CopyHasherTest, AnySplitGivesTheOneShotChecksum) {
  for (size_t total : {241, 300, 1100, 2049}) {
    for (size_t cut = 0; cut <= total; ++cut) {
      ASSERT_NO_FATAL_FAILURE(CheckPieces({cut, total - cut}, false, cut % 3));
    }
  }
  uint32_t x = 12345;
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<size_t> pieces;
    const size_t count = 1 + trial % 40;
    for (size_t i = 0; i < count; ++i) {
      x = x * 1664525u + 1013904223u;
      pieces.push_back((x >> 8) % (trial % 2 == 0 ? 200 : 9000));
    }
    ASSERT_NO_FATAL_FAILURE(CheckPieces(pieces, trial % 3 == 0, trial % 33));
  }
}

// Layer-first pages as the engines lay them out (64 slices of K and V), with
// streaming stores on aligned and misaligned destinations.
TEST(CopyHasherTest, LayerFirstPagesWithStreamingStores) {
  for (size_t slice : {size_t{4096} + 3, size_t{16} << 10, size_t{64} << 10}) {
    for (size_t misalign : {0, 8, 32}) {
      ASSERT_NO_FATAL_FAILURE(CheckPieces(std::vector<size_t>(64, slice), true, misalign));
    }
  }
}

}  // namespace
}  // namespace crescent::transfer
