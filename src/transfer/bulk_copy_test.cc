#include "transfer/bulk_copy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

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

// Every size class (below and above the streaming threshold, with tails that
// are not a multiple of the 128-byte block) at every destination and source
// misalignment copies exactly the bytes asked for and nothing around them.
TEST(BulkCopyTest, CopiesExactlyAtAnyAlignmentAndLength) {
  const size_t sizes[] = {
      0,      1, 31, 4096, kStreamingFrom - 1, kStreamingFrom, kStreamingFrom + 77, (1 << 20) + 5,
      4 << 20};
  const size_t pad = 64;
  for (size_t n : sizes) {
    for (size_t dst_off : {0, 1, 17, 31, 32}) {
      for (size_t src_off : {0, 3, 32}) {
        std::vector<std::byte> src = Pattern(n + pad, static_cast<uint32_t>(n + src_off));
        std::vector<std::byte> dst(n + 2 * pad, std::byte{0xEE});
        BulkCopy(dst.data() + pad + dst_off, src.data() + src_off, n);
        const std::byte* got = dst.data() + pad + dst_off;
        ASSERT_TRUE(std::equal(got, got + n, src.data() + src_off))
            << "n=" << n << " dst_off=" << dst_off << " src_off=" << src_off;
        std::vector<std::byte> untouched(pad + dst_off, std::byte{0xEE});
        ASSERT_TRUE(std::equal(untouched.begin(), untouched.end(), dst.begin()))
            << "bytes before the destination changed, n=" << n;
        const std::byte* end = dst.data() + dst.size();
        ASSERT_TRUE(std::all_of(got + n, end, [](std::byte b) { return b == std::byte{0xEE}; }))
            << "bytes past the end changed, n=" << n << " dst_off=" << dst_off;
      }
    }
  }
}

}  // namespace
}  // namespace crescent::transfer
