#include "transfer/copy_hash.h"

#include <gtest/gtest.h>

#include <cstdint>
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

}  // namespace
}  // namespace crescent::transfer
