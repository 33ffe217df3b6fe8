// A value's checksum is the same however its bytes are fed: the writer hashes
// the whole value at once, readers hash it chunk by chunk as it arrives.
#include "common/value_hash.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <vector>

namespace crescent {
namespace {

std::vector<unsigned char> Bytes(size_t n) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(i * 131 + (i >> 9));
  return v;
}

TEST(ValueHashTest, ChunksInAnySizesGiveTheOneShotValue) {
  for (size_t n : {size_t{1}, size_t{240}, size_t{4096}, size_t{1} << 20, (size_t{1} << 20) + 17}) {
    std::vector<unsigned char> v = Bytes(n);
    const uint64_t whole = HashValue(v.data(), v.size());
    for (size_t chunk : {size_t{1}, size_t{7}, size_t{4096}, size_t{65536}, n}) {
      if (chunk == 1 && n > 4096) continue;  // slow and says nothing new
      ValueHasher h;
      for (size_t at = 0; at < n; at += chunk) h.Update(v.data() + at, std::min(chunk, n - at));
      EXPECT_EQ(h.Digest(), whole) << n << " bytes in chunks of " << chunk;
    }
  }
}

// Writers and readers on other CPUs (or with another vector unit chosen at run
// time) must agree: the value is plain XXH3-64, seed 0.
TEST(ValueHashTest, IsPlainXxh3) {
  std::vector<unsigned char> v = Bytes(100000);
  EXPECT_EQ(HashValue(v.data(), v.size()), XXH3_64bits(v.data(), v.size()));
  EXPECT_EQ(HashValue("", 0), 0x2D06800538D394C2ULL);  // XXH3-64 of no bytes
}

TEST(ValueHashTest, ResetStartsOverAndCopiesAreIndependent) {
  std::vector<unsigned char> v = Bytes(1000);
  ValueHasher h;
  h.Update(v.data(), 500);
  ValueHasher copy = h;
  h.Reset();
  h.Update(v.data(), v.size());
  EXPECT_EQ(h.Digest(), HashValue(v.data(), v.size()));
  copy.Update(v.data() + 500, 500);
  EXPECT_EQ(copy.Digest(), HashValue(v.data(), v.size()));
}

TEST(ValueHashTest, AChangedByteChangesTheChecksum) {
  std::vector<unsigned char> v = Bytes(1 << 16);
  const uint64_t before = HashValue(v.data(), v.size());
  v[12345] ^= 1;
  EXPECT_NE(HashValue(v.data(), v.size()), before);
}

}  // namespace
}  // namespace crescent
