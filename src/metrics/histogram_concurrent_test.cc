// Histogram under many threads: no record is lost, and snapshots taken while
// threads record stay consistent (+Inf equals the count). Runs under TSan.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "metrics/histogram.h"

namespace crescent::metrics {
namespace {

TEST(Histogram, ConcurrentRecordsAreAllCounted) {
  Histogram h(LatencyBoundsNs());
  constexpr int kThreads = 12, kPerThread = 20000;  // more threads than shards
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&h, t] {
      for (int i = 0; i < kPerThread; ++i) h.Record(static_cast<uint64_t>(t * 1000 + i));
    });
  }
  for (auto& t : threads) t.join();
  HistogramSnapshot s = h.Snapshot();
  EXPECT_EQ(s.count, uint64_t{kThreads} * kPerThread);
  uint64_t want_sum = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPerThread; ++i) want_sum += static_cast<uint64_t>(t * 1000 + i);
  }
  EXPECT_EQ(s.sum, want_sum);
}

TEST(Histogram, SnapshotsWhileRecordingAreConsistent) {
  Histogram h(LatencyBoundsNs());
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&h, &stop, t] {
      for (uint64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) h.Record(i * 997 + t);
    });
  }
  uint64_t last = 0;
  for (int i = 0; i < 200; ++i) {
    HistogramSnapshot s = h.Snapshot();
    uint64_t total = 0;
    for (uint64_t c : s.counts) total += c;
    EXPECT_EQ(total, s.count);
    EXPECT_GE(s.count, last);  // counts only grow
    last = s.count;
  }
  stop = true;
  for (auto& t : threads) t.join();
}

}  // namespace
}  // namespace crescent::metrics
