#include "sim/belady.h"

#include <gtest/gtest.h>

#include <set>

#include "sim/random_trace_for_test.h"
#include "sim/simulator.h"

namespace crescent::sim {
namespace {

Trace MustParse(const std::string& text) {
  auto trace = ParseTrace(text, "test");
  EXPECT_TRUE(trace.ok()) << trace.status().ToString();
  return std::move(*trace);
}

// A slow, obviously correct MIN with the simulator's prefix-hit rule: on each
// eviction, scan the stream forward for every cached block's next use and drop
// the farthest (never used again counts as farthest; which of those goes does
// not change any later hit).
uint64_t BruteForceBeladyHits(const Trace& trace, uint64_t capacity) {
  std::set<BlockId> cached;
  uint64_t hits = 0;
  uint64_t pos = 0;
  auto next_use = [&](BlockId b, uint64_t from) {
    for (uint64_t p = from; p < trace.blocks.size(); ++p) {
      if (trace.blocks[p] == b) return p;
    }
    return uint64_t{trace.blocks.size()};
  };
  for (const TraceRequest& r : trace.requests) {
    auto ids = trace.BlocksOf(r);
    size_t h = 0;
    while (h < ids.size() && cached.count(ids[h])) ++h;
    hits += h;
    for (BlockId b : ids) {
      ++pos;  // the stream position after this reference
      if (cached.count(b)) continue;
      if (cached.size() >= capacity) {
        BlockId victim = *cached.begin();
        uint64_t farthest = 0;
        for (BlockId c : cached) {
          uint64_t n = next_use(c, pos);
          if (n >= farthest) {
            farthest = n;
            victim = c;
          }
        }
        cached.erase(victim);
      }
      cached.insert(b);
    }
  }
  return hits;
}

SimStats RunBelady(const Trace& trace, uint64_t capacity) {
  BeladyPolicy policy(trace);
  return Simulate(trace, capacity, policy);
}

TEST(BeladyTest, MatchesABruteForceMin) {
  for (uint32_t seed : {5u, 6u, 7u}) {
    Trace trace = MustParse(testing::RandomTraceText(seed, 150));
    for (uint64_t cap : {uint64_t{1}, uint64_t{4}, uint64_t{16}, uint64_t{64}}) {
      EXPECT_EQ(RunBelady(trace, cap).hit_blocks, BruteForceBeladyHits(trace, cap))
          << "seed " << seed << " capacity " << cap;
    }
  }
}

TEST(BeladyTest, EvictsTheBlockUsedFarthestAhead) {
  // Capacity 2. When 3 arrives, 1 is needed next and 2 much later: 2 goes, so
  // the next request [1] hits. (LRU would have evicted 1.)
  Trace trace = MustParse(
      "{\"hash_ids\": [1]}\n{\"hash_ids\": [2]}\n{\"hash_ids\": [3]}\n"
      "{\"hash_ids\": [1]}\n{\"hash_ids\": [2]}\n");
  EXPECT_EQ(RunBelady(trace, 2).hit_blocks, 1u);
}

TEST(BeladyTest, AtLeastAsGoodAsEveryOtherPolicy) {
  for (uint32_t seed : {21u, 22u, 23u, 24u}) {
    Trace trace = MustParse(testing::RandomTraceText(seed, 500));
    for (uint64_t cap : {uint64_t{8}, uint64_t{32}, uint64_t{128}, uint64_t{512}}) {
      const uint64_t best = RunBelady(trace, cap).hit_blocks;
      for (const std::string& name : SimPolicyNames()) {
        auto policy = MakeSimPolicy(trace, name, cache::PolicyOptions{.capacity = cap});
        ASSERT_TRUE(policy.ok()) << policy.status().ToString();
        EXPECT_GE(best, Simulate(trace, cap, **policy).hit_blocks)
            << name << " seed " << seed << " capacity " << cap;
      }
    }
  }
}

TEST(BeladyTest, TracksCountSizeAndRemove) {
  Trace trace = MustParse("{\"hash_ids\": [1, 2, 3]}\n");
  BeladyPolicy policy(trace);
  policy.Insert(0, 1);
  policy.Insert(1, 5, {.parent = 0});
  EXPECT_EQ(policy.Count(), 2u);
  EXPECT_EQ(policy.UsedSize(), 6u);
  policy.Remove(1);
  EXPECT_FALSE(policy.Contains(1));
  EXPECT_EQ(policy.UsedSize(), 1u);
  policy.Insert(2, 1, {.parent = 1});
  EXPECT_EQ(policy.Evict(), std::optional<cache::ObjectId>(2));  // removed ids never come back
  EXPECT_EQ(policy.Evict(), std::optional<cache::ObjectId>(0));
  EXPECT_EQ(policy.Evict(), std::nullopt);
}

TEST(BeladyTest, SpareKeepsCandidatesAndGivesUp) {
  Trace trace = MustParse("{\"hash_ids\": [1, 2]}\n");
  BeladyPolicy policy(trace);
  policy.Insert(0, 1);
  policy.Insert(1, 1, {.parent = 0});
  EXPECT_EQ(policy.Evict([](cache::ObjectId) { return true; }), std::nullopt);
  EXPECT_EQ(policy.Count(), 2u);
  EXPECT_EQ(policy.Evict([](cache::ObjectId id) { return id == 1; }),
            std::optional<cache::ObjectId>(0));
  EXPECT_TRUE(policy.Contains(1));
}

}  // namespace
}  // namespace crescent::sim
