#include "cache/counting_bloom_filter.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace crescent::cache {
namespace {

std::string Key(int i) { return "key-" + std::to_string(i); }
std::string AbsentKey(int i) { return "absent-" + std::to_string(i); }

TEST(CountingBloomFilterTest, SizingFollowsOptimalFormulas) {
  CountingBloomFilter f(100'000, 0.01);
  // m = -n ln p / ln^2 2 = 958,506 counters, rounded up to a whole word.
  EXPECT_EQ(f.num_counters(), 958'512u);
  EXPECT_EQ(f.num_hashes(), 7u);
  EXPECT_EQ(f.memory_bytes(), f.num_counters() / 2);
  EXPECT_EQ(f.design_capacity(), 100'000u);
  EXPECT_DOUBLE_EQ(f.target_false_positive_rate(), 0.01);
  EXPECT_EQ(CountingBloomFilter(100'000, 0.001).num_hashes(), 10u);
}

TEST(CountingBloomFilterTest, NoFalseNegatives) {
  constexpr int kKeys = 100'000;
  CountingBloomFilter f(kKeys, 0.01);
  for (int i = 0; i < kKeys; ++i) f.Add(Key(i));
  for (int i = 0; i < kKeys; ++i) ASSERT_TRUE(f.MayContain(Key(i))) << Key(i);
  EXPECT_EQ(f.ApproximateCount(), static_cast<uint64_t>(kKeys));
}

TEST(CountingBloomFilterTest, HashOverloadsMatchKeyOverloads) {
  CountingBloomFilter f(1000, 0.01);
  f.AddHash(HashKey("page-a"));
  f.Add("page-b");
  EXPECT_TRUE(f.MayContain("page-a"));
  EXPECT_TRUE(f.MayContainHash(HashKey("page-b")));
  f.RemoveHash(HashKey("page-b"));
  f.Remove("page-a");
  EXPECT_FALSE(f.MayContain("page-a"));
  EXPECT_FALSE(f.MayContain("page-b"));
  EXPECT_EQ(f.FillRatio(), 0.0);  // Unsaturated add+remove is exactly undone.
}

TEST(CountingBloomFilterTest, AddingInBulkEqualsAddingOneByOne) {
  // Runs of every length around the read-ahead distance, keys repeated so that
  // counters are shared and some saturate: the same counters either way.
  std::vector<uint64_t> hashes;
  for (int i = 0; i < 5000; ++i) hashes.push_back(HashKey(Key(i % 1700)));
  CountingBloomFilter bulk(2000, 0.05);
  CountingBloomFilter single(2000, 0.05);
  size_t at = 0;
  for (size_t run = 0; at < hashes.size(); run = (run + 1) % 7) {
    const size_t n = std::min(run, hashes.size() - at);
    bulk.AddHashes(std::span<const uint64_t>(hashes.data() + at, n));
    at += n;
  }
  for (uint64_t h : hashes) single.AddHash(h);
  EXPECT_EQ(bulk.ApproximateCount(), single.ApproximateCount());
  EXPECT_EQ(bulk.FillRatio(), single.FillRatio());
  for (int i = 0; i < 1700; ++i) {
    // Equal counters: removing each key as often as it was added empties both.
    for (int r = 0; r < 5000 / 1700 + (i < 5000 % 1700 ? 1 : 0); ++r) {
      bulk.Remove(Key(i));
      single.Remove(Key(i));
    }
  }
  EXPECT_EQ(bulk.FillRatio(), single.FillRatio());
  EXPECT_EQ(bulk.ApproximateCount(), 0u);
}

TEST(CountingBloomFilterTest, RemovedKeysBecomeAbsentAndOthersStay) {
  constexpr int kKeys = 100'000;
  CountingBloomFilter f(kKeys, 0.01);
  for (int i = 0; i < kKeys; ++i) f.Add(Key(i));
  for (int i = 0; i < kKeys; i += 2) f.Remove(Key(i));
  int removed_still_present = 0;
  for (int i = 0; i < kKeys; ++i) {
    if (i % 2 == 1) {
      ASSERT_TRUE(f.MayContain(Key(i))) << Key(i);
    } else {
      removed_still_present += f.MayContain(Key(i));
    }
  }
  // Half the keys are live, so removed ones look present only at the (lower)
  // false-positive rate of a half-full filter.
  EXPECT_LT(removed_still_present, kKeys / 2 / 100);
  EXPECT_EQ(f.ApproximateCount(), static_cast<uint64_t>(kKeys / 2));
}

TEST(CountingBloomFilterTest, EmptyFilterRejectsEverything) {
  CountingBloomFilter f(1000, 0.01);
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(f.MayContain(AbsentKey(i)));
  EXPECT_EQ(f.EstimatedFalsePositiveRate(), 0.0);
  EXPECT_EQ(f.MeasuredFalsePositiveRate(), 0.0);
}

class FalsePositiveRateTest : public ::testing::TestWithParam<double> {};

TEST_P(FalsePositiveRateTest, MeasuredRateIsNearTargetAtDesignLoad) {
  const double p = GetParam();
  constexpr int kKeys = 100'000;
  constexpr int kProbes = 1'000'000;
  CountingBloomFilter f(kKeys, p);
  for (int i = 0; i < kKeys; ++i) f.Add(Key(i));
  int false_positives = 0;
  for (int i = 0; i < kProbes; ++i) false_positives += f.MayContain(AbsentKey(i));
  const double measured = static_cast<double>(false_positives) / kProbes;
  EXPECT_LE(measured, 1.5 * p);
  EXPECT_GE(measured, p / 1.5);
  EXPECT_NEAR(f.EstimatedFalsePositiveRate(), p, p / 2);
  EXPECT_NEAR(f.MeasuredFalsePositiveRate(), p, p / 2);
  EXPECT_NEAR(f.FillRatio(), 0.5, 0.05);  // Optimal k leaves about half the counters zero.
}

INSTANTIATE_TEST_SUITE_P(Targets, FalsePositiveRateTest, ::testing::Values(0.01, 0.001));

TEST(CountingBloomFilterTest, SaturatedKeyStaysPresentForever) {
  CountingBloomFilter f(1000, 0.01);
  for (int i = 0; i < 20; ++i) f.Add("hot");
  const double fill = f.FillRatio();
  for (int i = 0; i < 40; ++i) f.Remove("hot");
  EXPECT_TRUE(f.MayContain("hot"));
  EXPECT_EQ(f.FillRatio(), fill);  // Frozen counters never decrement.
  EXPECT_EQ(f.ApproximateCount(), 0u);
}

TEST(CountingBloomFilterTest, SharedSaturatedCounterCausesNoFalseNegative) {
  // 16 counters and many probes: the two keys are bound to share counters.
  CountingBloomFilter f(1, 0.5);
  ASSERT_EQ(f.num_counters(), 16u);
  CountingBloomFilter only_a(1, 0.5), only_b(1, 0.5);
  only_a.Add("a");
  only_b.Add("b");
  f.Add("a");
  f.Add("b");
  ASSERT_LT(f.FillRatio(), only_a.FillRatio() + only_b.FillRatio()) << "keys share no counter";

  for (int i = 0; i < 20; ++i) f.Add("a");  // Saturates a's counters, b's shared ones too.
  for (int i = 0; i < 21; ++i) f.Remove("a");
  EXPECT_TRUE(f.MayContain("b"));
  f.Remove("b");
  EXPECT_TRUE(f.MayContain("a"));  // Frozen counters keep it a (harmless) positive.
}

TEST(CountingBloomFilterTest, RemoveOnZeroCounterDoesNotBorrow) {
  CountingBloomFilter f(1000, 0.01);
  f.Remove("never-added");  // Misuse, but must not wrap into neighbouring counters.
  EXPECT_EQ(f.FillRatio(), 0.0);
  EXPECT_EQ(f.ApproximateCount(), 0u);
}

TEST(CountingBloomFilterTest, DegenerateSizingIsClamped) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (double p : {0.0, -1.0, 1.0, 2.0, nan, inf, -inf, 1e-300}) {
    for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{1000}}) {
      SCOPED_TRACE(testing::Message() << "n=" << n << " p=" << p);
      CountingBloomFilter f(n, p);
      EXPECT_GE(f.design_capacity(), 1u);
      EXPECT_GE(f.target_false_positive_rate(), CountingBloomFilter::kMinFalsePositiveRate);
      EXPECT_LE(f.target_false_positive_rate(), CountingBloomFilter::kMaxFalsePositiveRate);
      EXPECT_GE(f.num_hashes(), 1u);
      EXPECT_LE(f.num_hashes(), CountingBloomFilter::kMaxHashes);
      EXPECT_GE(f.num_counters(), 16u);
      EXPECT_EQ(f.num_counters() % 16, 0u);
      f.Add("k");
      EXPECT_TRUE(f.MayContain("k"));
      EXPECT_TRUE(std::isfinite(f.EstimatedFalsePositiveRate()));
    }
  }
}

// Against a multiset model, on a filter small enough to collide and saturate:
// every key added more times than removed is present after every operation.
RC_GTEST_PROP(CountingBloomFilterProp, NoFalseNegativesUnderAnyAddRemoveSequence, ()) {
  CountingBloomFilter f(*rc::gen::inRange<uint64_t>(1, 64), 0.05);
  std::map<int, int> live;
  const auto ops = *rc::gen::container<std::vector<std::pair<bool, int>>>(
      rc::gen::pair(rc::gen::arbitrary<bool>(), rc::gen::inRange(0, 40)));
  for (const auto& [add, k] : ops) {
    if (add) {
      f.Add(Key(k));
      ++live[k];
    } else if (live[k] > 0) {  // Remove only what was added: the contract.
      f.Remove(Key(k));
      --live[k];
    }
    for (const auto& [key, n] : live) {
      if (n > 0) RC_ASSERT(f.MayContain(Key(key)));
    }
  }
}

}  // namespace
}  // namespace crescent::cache
