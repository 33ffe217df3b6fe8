#include "cache/recent_keys.h"

#include <gtest/gtest.h>

#include "cache/hash_mix.h"

namespace crescent::cache {
namespace {

TEST(RecentKeysTest, RemembersAWindowOfKeys) {
  RecentKeys keys(1000);
  for (uint64_t i = 0; i < 1000; ++i) keys.Add(MixBits(i));
  for (uint64_t i = 0; i < 1000; ++i) EXPECT_TRUE(keys.Contains(MixBits(i))) << i;
}

TEST(RecentKeysTest, ForgetsAfterTwoWindows) {
  RecentKeys keys(1000);
  for (uint64_t i = 0; i < 1000; ++i) keys.Add(MixBits(i));
  for (uint64_t i = 1000; i < 3000; ++i) keys.Add(MixBits(i));
  int remembered = 0;
  for (uint64_t i = 0; i < 1000; ++i) remembered += keys.Contains(MixBits(i));
  EXPECT_LT(remembered, 20);  // false positives only
}

TEST(RecentKeysTest, AKeyAddedAgainStaysRemembered) {
  RecentKeys keys(100);
  for (uint64_t i = 0; i < 1000; ++i) {
    keys.Add(MixBits(7));
    keys.Add(MixBits(100000 + i));
  }
  EXPECT_TRUE(keys.Contains(MixBits(7)));
}

TEST(RecentKeysTest, FalsePositivesAreRare) {
  RecentKeys keys(10000);
  for (uint64_t i = 0; i < 10000; ++i) keys.Add(MixBits(i));
  int false_positives = 0;
  for (uint64_t i = 1'000'000; i < 1'010'000; ++i) false_positives += keys.Contains(MixBits(i));
  EXPECT_LT(false_positives, 5);  // 0.05%; about 0.003% by design
}

// A window that grows (the learned policy resizes it as its cache fills) must
// not make a filter sized for a small window take a large window's keys.
TEST(RecentKeysTest, GrowingTheWindowDoesNotSaturateTheFilter) {
  RecentKeys keys(16);
  keys.Resize(10000);
  for (uint64_t i = 0; i < 10000; ++i) keys.Add(MixBits(i));
  int false_positives = 0;
  for (uint64_t i = 1'000'000; i < 1'010'000; ++i) false_positives += keys.Contains(MixBits(i));
  EXPECT_LT(false_positives, 50);
}

}  // namespace
}  // namespace crescent::cache
