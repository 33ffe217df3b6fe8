#include "bench/stats.h"

#include <gtest/gtest.h>

namespace crescent::bench {
namespace {

TEST(Percentile, NearestRank) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(101 - i);  // 100..1, unsorted
  EXPECT_EQ(Percentile(v, 50), 50);
  EXPECT_EQ(Percentile(v, 99), 99);
  EXPECT_EQ(Percentile(v, 100), 100);
  EXPECT_EQ(Percentile(v, 0), 1);
  EXPECT_EQ(Percentile({7}, 99), 7);
  EXPECT_EQ(Percentile({}, 50), 0);
  EXPECT_EQ(Percentile({1, 2, 3, 4}, 50), 2);
  EXPECT_EQ(Percentile({1, 2, 3, 4}, 99), 4);
}

TEST(Median, OddEvenEmpty) {
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(Median({}), 0);
}

TEST(LatencyRecorder, MergesSamples) {
  LatencyRecorder a, b;
  a.Add(1);
  a.Add(2);
  b.Add(3);
  a.Merge(b);
  EXPECT_EQ(a.count(), 3u);
  EXPECT_EQ(a.P50(), 2);
  EXPECT_EQ(a.P99(), 3);
}

}  // namespace
}  // namespace crescent::bench
