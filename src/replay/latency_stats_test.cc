#include "replay/latency_stats.h"

#include <gtest/gtest.h>

namespace crescent::replay {
namespace {

TEST(LatencyStats, NearestRankPercentiles) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  LatencySummary s = Summarize(v);
  EXPECT_EQ(s.count, 100u);
  EXPECT_DOUBLE_EQ(s.p50_us, 50);
  EXPECT_DOUBLE_EQ(s.p99_us, 99);
  EXPECT_DOUBLE_EQ(s.max_us, 100);
  EXPECT_DOUBLE_EQ(s.mean_us, 50.5);
}

TEST(LatencyStats, SmallAndEmpty) {
  std::vector<double> none;
  EXPECT_EQ(Summarize(none).count, 0u);
  EXPECT_DOUBLE_EQ(Summarize(none).p99_us, 0);
  std::vector<double> one = {7};
  LatencySummary s = Summarize(one);
  EXPECT_DOUBLE_EQ(s.p50_us, 7);
  EXPECT_DOUBLE_EQ(s.p99_us, 7);
  std::vector<double> two = {1, 9};
  EXPECT_DOUBLE_EQ(Summarize(two).p50_us, 1);
  EXPECT_DOUBLE_EQ(Percentile(two, 99), 9);
}

}  // namespace
}  // namespace crescent::replay
