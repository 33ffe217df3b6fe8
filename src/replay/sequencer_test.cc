#include "replay/sequencer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>

namespace crescent::replay {
namespace {

TEST(ArrivalSequencer, FirstStepsHappenInArrivalOrderAcrossStreams) {
  const size_t n = 2000;
  ArrivalSequencer seq(std::vector<double>(n, 0.0));
  std::vector<size_t> order;  // appended while holding the turn
  std::mutex mu;
  std::vector<size_t> per_thread_done(4, 0);
  seq.Start();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      while (auto i = seq.Take()) {
        {
          std::lock_guard lock(mu);
          order.push_back(*i);
        }
        seq.Release();
        per_thread_done[t]++;
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(order.size(), n);
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(order[i], i);
  EXPECT_FALSE(seq.Take().has_value());
}

TEST(ArrivalSequencer, WaitsForReleaseTimes) {
  ArrivalSequencer seq({0.0, 30.0});
  seq.Start();
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(seq.Take(), std::optional<size_t>(0));
  seq.Release();
  ASSERT_EQ(seq.Take(), std::optional<size_t>(1));
  seq.Release();
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(29));
  EXPECT_GE(seq.max_lag_ms(), 0.0);
}

}  // namespace
}  // namespace crescent::replay
