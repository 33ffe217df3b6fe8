// Histogram: bucket placement (le semantics), cumulative exposition, the sum,
// quantile estimates (histogram_concurrent_test.cc: recording from many threads).
#include "metrics/histogram.h"

#include <gtest/gtest.h>

#include "metrics/text_writer.h"

namespace crescent::metrics {
namespace {

constexpr uint64_t kBounds[] = {10, 100, 1000};

TEST(Histogram, ValuesFallInTheFirstBucketWhoseBoundIsAtLeastThem) {
  Histogram h(kBounds);
  for (uint64_t v : {0, 10, 11, 100, 101, 1000, 1001, 5000}) h.Record(v);
  HistogramSnapshot s = h.Snapshot();
  ASSERT_EQ(s.counts.size(), 4u);
  EXPECT_EQ(s.counts[0], 2u);  // 0, 10
  EXPECT_EQ(s.counts[1], 2u);  // 11, 100
  EXPECT_EQ(s.counts[2], 2u);  // 101, 1000
  EXPECT_EQ(s.counts[3], 2u);  // 1001, 5000: +Inf
  EXPECT_EQ(s.count, 8u);
  EXPECT_EQ(s.sum, 0u + 10 + 11 + 100 + 101 + 1000 + 1001 + 5000);
}

TEST(Histogram, InvalidBoundsBecomeOneBucket) {
  constexpr uint64_t unsorted[] = {5, 5, 1};
  Histogram h(unsorted);
  ASSERT_EQ(h.bounds().size(), 1u);
  h.Record(7);
  EXPECT_EQ(h.Snapshot().count, 1u);
  Histogram empty(std::span<const uint64_t>{});
  empty.Record(1);
  EXPECT_EQ(empty.Snapshot().count, 1u);
}

TEST(Histogram, ExpositionIsCumulativeWithInfEqualToCount) {
  Histogram h(kBounds);
  for (uint64_t v : {1, 50, 50, 2000}) h.Record(v);
  TextWriter w;
  w.Family("x_seconds", "histogram", "Help.");
  w.Histogram({{"op", "get"}}, h.Snapshot(), 1000);
  EXPECT_EQ(w.text(),
            "# HELP x_seconds Help.\n"
            "# TYPE x_seconds histogram\n"
            "x_seconds_bucket{op=\"get\",le=\"0.01\"} 1\n"
            "x_seconds_bucket{op=\"get\",le=\"0.1\"} 3\n"
            "x_seconds_bucket{op=\"get\",le=\"1\"} 3\n"
            "x_seconds_bucket{op=\"get\",le=\"+Inf\"} 4\n"
            "x_seconds_sum{op=\"get\"} 2.101\n"
            "x_seconds_count{op=\"get\"} 4\n");
}

TEST(Histogram, LabelValuesAreEscaped) {
  TextWriter w;
  w.Family("y", "gauge", "Help.");
  w.Sample({{"segment", "a\"b\\c\nd"}}, uint64_t{3});
  EXPECT_NE(w.text().find("y{segment=\"a\\\"b\\\\c\\nd\"} 3\n"), std::string::npos) << w.text();
}

TEST(Histogram, QuantileInterpolatesWithinTheBucket) {
  Histogram h(kBounds);
  EXPECT_EQ(h.Snapshot().Quantile(0.5), 0.0);  // empty
  for (int i = 0; i < 100; ++i) h.Record(50);  // all in (10, 100]
  HistogramSnapshot s = h.Snapshot();
  EXPECT_GT(s.Quantile(0.5), 10.0);
  EXPECT_LE(s.Quantile(0.5), 100.0);
  EXPECT_EQ(s.Quantile(1.0), 100.0);
  h.Record(1u << 20);  // +Inf: reported as the highest bound
  EXPECT_EQ(h.Snapshot().Quantile(1.0), 1000.0);
}

TEST(Histogram, MergeAddsSnapshotsOfTheSameBounds) {
  Histogram a(kBounds), b(kBounds);
  a.Record(5);
  b.Record(500);
  HistogramSnapshot total;
  total.Merge(a.Snapshot());
  total.Merge(b.Snapshot());
  EXPECT_EQ(total.count, 2u);
  EXPECT_EQ(total.sum, 505u);
  EXPECT_EQ(total.counts[0], 1u);
  EXPECT_EQ(total.counts[2], 1u);
}

TEST(Histogram, FormatValueIsShortAndExact) {
  EXPECT_EQ(FormatValue(0.0001), "0.0001");
  EXPECT_EQ(FormatValue(42), "42");
  EXPECT_EQ(FormatValue(1e9 / 1e9), "1");
  EXPECT_EQ(FormatValue(1e-6), "0.000001");
  EXPECT_EQ(FormatValue(1e9), "1000000000");
  EXPECT_EQ(FormatValue(2.101), "2.101");
  EXPECT_EQ(FormatValue(1.0 / 0.0), "+Inf");
}

}  // namespace
}  // namespace crescent::metrics
