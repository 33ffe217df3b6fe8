// Many threads adding, removing and querying at once. Counts are modest so the
// test stays within a couple of seconds under TSan.
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "cache/counting_bloom_filter.h"

namespace crescent::cache {
namespace {

constexpr int kWriters = 4;
constexpr int kOwnKeys = 10000;  // Per writer, disjoint.
constexpr int kSharedKeys = 64;  // Touched by every writer.
constexpr int kSharedRounds = 10000;

std::string OwnKey(int t, int i) { return std::to_string(t) + "/own-" + std::to_string(i); }
std::string SharedKey(int i) { return std::string("shared-") + std::to_string(i); }

// Each writer: adds its own keys and drops every even one right after adding
// the next; adds and removes shared keys in balanced pairs; and keeps one
// extra add on the shared keys it "owns". Every key it holds must look present
// to it. Readers query everything meanwhile. Returns observed false negatives.
int RunWorkload(CountingBloomFilter& f) {
  std::atomic<int> false_negatives{0};
  std::atomic<bool> writers_done{false};
  std::atomic<uint64_t> reader_positives{0};  // Keeps the readers' loads alive.
  std::latch start(kWriters + 2);             // Line everyone up so the phases overlap.
  std::vector<std::thread> threads;
  threads.reserve(kWriters + 2);
  for (int t = 0; t < kWriters; ++t) {
    threads.emplace_back([&, t] {
      int misses = 0;
      start.arrive_and_wait();
      for (int s = t; s < kSharedKeys; s += kWriters) f.Add(SharedKey(s));  // Kept.
      for (int i = 0; i < kOwnKeys; ++i) {
        const std::string key = OwnKey(t, i);
        f.Add(key);
        misses += !f.MayContain(key);
        if (i % 2 == 1) f.Remove(OwnKey(t, i - 1));
        if (i >= 1) misses += !f.MayContain(OwnKey(t, (i / 2) | 1));  // An odd key: held.
      }
      for (int r = 0; r < kSharedRounds; ++r) {
        const std::string key = SharedKey((r * 7 + t) % kSharedKeys);
        f.Add(key);
        misses += !f.MayContain(key);
        f.Remove(key);
      }
      false_negatives.fetch_add(misses, std::memory_order_relaxed);
    });
  }
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      uint64_t positives = 0;
      start.arrive_and_wait();
      for (int i = 0; !writers_done.load(std::memory_order_relaxed); i = (i + 1) % kOwnKeys) {
        positives += f.MayContain(OwnKey(t, i)) + f.MayContain(SharedKey(i % kSharedKeys));
        positives += f.EstimatedFalsePositiveRate() > 1.0;
        if (i % 1024 == 0) positives += f.MeasuredFalsePositiveRate() > 1.0;
      }
      reader_positives.fetch_add(positives, std::memory_order_relaxed);
    });
  }
  for (int t = 0; t < kWriters; ++t) threads[t].join();
  writers_done.store(true, std::memory_order_relaxed);
  for (size_t t = kWriters; t < threads.size(); ++t) threads[t].join();
  return false_negatives.load();
}

void ExpectFinalState(const CountingBloomFilter& f) {
  for (int t = 0; t < kWriters; ++t) {
    for (int i = 1; i < kOwnKeys; i += 2) ASSERT_TRUE(f.MayContain(OwnKey(t, i))) << OwnKey(t, i);
  }
  for (int s = 0; s < kSharedKeys; ++s) ASSERT_TRUE(f.MayContain(SharedKey(s))) << SharedKey(s);
  EXPECT_EQ(f.ApproximateCount(), uint64_t{kWriters * kOwnKeys / 2 + kSharedKeys});
}

TEST(CountingBloomFilterConcurrentTest, NoFalseNegativesAtDesignSize) {
  CountingBloomFilter f(kWriters * kOwnKeys, 0.01);
  EXPECT_EQ(RunWorkload(f), 0);
  ExpectFinalState(f);
}

// A filter far too small: words are contended and counters saturate, which
// must still never hide a held key.
TEST(CountingBloomFilterConcurrentTest, NoFalseNegativesWhenOverloaded) {
  CountingBloomFilter f(64, 0.01);
  EXPECT_EQ(RunWorkload(f), 0);
  ExpectFinalState(f);
}

}  // namespace
}  // namespace crescent::cache
