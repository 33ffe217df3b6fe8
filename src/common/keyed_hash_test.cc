// KeyedHash is SipHash-2-4: the reference vectors, the word form equal to the
// byte form, and keys that differ per object.
#include "common/keyed_hash.h"

#include <gtest/gtest.h>

#include <vector>

namespace crescent {
namespace {

// The key 00 01 .. 0f of the SipHash paper's vectors.
KeyedHash PaperKey() { return KeyedHash(0x0706050403020100, 0x0f0e0d0c0b0a0908); }

std::vector<unsigned char> Counting(size_t n) {
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(i);
  return v;
}

TEST(KeyedHashTest, MatchesTheReferenceVectors) {
  // The paper's Appendix A: the message 00 01 .. 0e (15 bytes).
  EXPECT_EQ(PaperKey().Hash(Counting(15)), 0xa129ca6149be45e5u);
  // The reference implementation's first vector: the empty message.
  EXPECT_EQ(PaperKey().Hash(Counting(0)), 0x726fdb47dd0e0e31u);
  EXPECT_EQ(PaperKey().Hash(Counting(8)), 0x93f5f5799a932462u);
}

TEST(KeyedHashTest, AWordHashesAsItsEightLittleEndianBytes) {
  const KeyedHash h = KeyedHash::Random();
  for (uint64_t w : {uint64_t{0}, uint64_t{1}, uint64_t{0x0706050403020100}, ~uint64_t{0}}) {
    unsigned char bytes[8];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<unsigned char>(w >> (8 * i));
    EXPECT_EQ(h.Hash(w), h.Hash(std::span<const unsigned char>(bytes))) << w;
  }
  EXPECT_EQ(PaperKey().Hash(uint64_t{0x0706050403020100}), 0x93f5f5799a932462u);
}

TEST(KeyedHashTest, RandomKeysDiffer) {
  const KeyedHash a = KeyedHash::Random(), b = KeyedHash::Random();
  EXPECT_NE(a.Hash(uint64_t{1}), b.Hash(uint64_t{1}));
}

}  // namespace
}  // namespace crescent
