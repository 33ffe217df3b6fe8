#include "sim/cluster_scale.h"

#include <gtest/gtest.h>

#include <set>

#include "sim/random_trace_for_test.h"
#include "sim/simulator.h"

namespace crescent::sim {
namespace {

using testing::MustParse;

const char* kTwoTimes =
    "{\"timestamp\": 5, \"hash_ids\": [7, 8]}\n"
    "{\"timestamp\": 0, \"hash_ids\": [7]}\n"
    "{\"timestamp\": 5, \"hash_ids\": [9]}\n";

TEST(ScaleTraceTest, OneCopyIsTheTraceInTimestampOrder) {
  const Trace trace = MustParse(kTwoTimes);
  const Trace one = ScaleTrace(trace, 1);
  ASSERT_EQ(one.requests.size(), 3u);
  EXPECT_EQ(one.requests[0].line, 2u);  // timestamp 0 first
  EXPECT_EQ(one.requests[1].line, 1u);  // then the two at 5, in file order
  EXPECT_EQ(one.requests[2].line, 3u);
  EXPECT_EQ(one.block_keys, trace.block_keys);
  EXPECT_EQ(one.block_refs(), trace.block_refs());
}

TEST(ScaleTraceTest, CopiesShareNoBlockAndInterleaveByTimestamp) {
  const Trace trace = MustParse(kTwoTimes);
  const Trace three = ScaleTrace(trace, 3);
  ASSERT_EQ(three.requests.size(), 9u);
  EXPECT_EQ(three.distinct_blocks(), 3 * trace.distinct_blocks());
  EXPECT_EQ(three.block_refs(), 3 * trace.block_refs());
  // Timestamps never go back; each request is followed by its copies.
  for (size_t i = 1; i < three.requests.size(); ++i) {
    EXPECT_LE(three.requests[i - 1].timestamp_ms, three.requests[i].timestamp_ms);
  }
  const uint32_t lines[] = {2, 2, 2, 1, 1, 1, 3, 3, 3};
  for (size_t i = 0; i < 9; ++i) EXPECT_EQ(three.requests[i].line, lines[i]) << i;
  // Copy c's blocks are the trace's shifted by c * distinct; keys are distinct.
  const std::span<const BlockId> first = three.BlocksOf(three.requests[3]);
  const std::span<const BlockId> second = three.BlocksOf(three.requests[4]);
  ASSERT_EQ(first.size(), 2u);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_EQ(second[0], first[0] + trace.distinct_blocks());
  EXPECT_EQ(three.block_keys[second[0]], three.block_keys[first[0]] + 10);  // max key 9, + 1
  const std::set<uint64_t> keys(three.block_keys.begin(), three.block_keys.end());
  EXPECT_EQ(keys.size(), three.block_keys.size());
}

// K copies through a cache K times as large give K times the hits of one copy
// through one cache, for a policy whose decisions depend only on order (fifo:
// the copies never share a block, so each one's stream sees its own share).
TEST(ScaleTraceTest, CopiesScaleTheHitsOfFifo) {
  const Trace trace = MustParse(testing::RandomTraceText(3, 300));
  const uint64_t capacity = trace.distinct_blocks() / 4;
  auto run = [](const Trace& t, uint64_t cap) {
    auto policy = MakeSimPolicy(t, "fifo", {.capacity = cap});
    EXPECT_TRUE(policy.ok());
    return Simulate(t, cap, **policy);
  };
  const SimStats one = run(trace, capacity);
  const SimStats four = run(ScaleTrace(trace, 4), 4 * capacity);
  EXPECT_EQ(four.block_refs, 4 * one.block_refs);
  EXPECT_GT(one.hit_blocks, 0u);
  // Interleaving moves where each copy's evictions fall, so allow a margin.
  EXPECT_NEAR(four.hit_ratio(), one.hit_ratio(), 0.03);
}

TEST(NodeLoadPolicyTest, PlacesOnTheEmptiestNodeAndCountsReadsAndReleases) {
  auto inner = cache::MakePolicy("lru", {});
  ASSERT_TRUE(inner.ok());
  NodeLoadPolicy policy(std::move(*inner), 3);
  for (cache::ObjectId id = 0; id < 6; ++id) policy.Insert(id, 1);
  for (const NodeLoad& l : policy.loads()) {
    EXPECT_EQ(l.written, 2u);
    EXPECT_EQ(l.held, 2u);
  }
  policy.Access(0);   // node 0 (ids go round the nodes: 0, 1, 2, 0, ...)
  policy.Access(3);   // node 0
  policy.Access(4);   // node 1
  policy.Access(99);  // not tracked: no read
  EXPECT_EQ(policy.loads()[0].read, 2u);
  EXPECT_EQ(policy.loads()[1].read, 1u);
  EXPECT_EQ(policy.loads()[2].read, 0u);
  EXPECT_DOUBLE_EQ(policy.ReadSkew().ratio(), 2.0 / 1.0);

  // lru evicts 1 (node 1), then 2 (node 2): the next insert goes to node 1.
  ASSERT_EQ(policy.Evict(), cache::ObjectId{1});
  policy.Remove(2);
  policy.Remove(2);  // twice: released once
  EXPECT_EQ(policy.loads()[1].held, 1u);
  EXPECT_EQ(policy.loads()[2].held, 1u);
  policy.Insert(10, 1);
  EXPECT_EQ(policy.loads()[1].held, 2u);
  EXPECT_EQ(policy.loads()[1].written, 3u);
  EXPECT_EQ(policy.Count(), 5u);
  EXPECT_EQ(policy.WriteSkew().max, 3u);
  EXPECT_EQ(policy.HeldPeakSkew().max, 2u);
}

// The wrapper changes no decision: the same hits as the bare policy.
TEST(NodeLoadPolicyTest, HitRatioIsTheWrappedPolicys) {
  const Trace trace = MustParse(testing::RandomTraceText(11, 400));
  const uint64_t capacity = trace.distinct_blocks() / 5;
  for (const char* name : {"lru", "s3fifo", "adaptive"}) {
    auto bare = MakeSimPolicy(trace, name, {.capacity = capacity});
    auto wrapped = MakeSimPolicy(trace, name, {.capacity = capacity});
    ASSERT_TRUE(bare.ok() && wrapped.ok());
    NodeLoadPolicy nodes(std::move(*wrapped), 8);
    const SimStats a = Simulate(trace, capacity, **bare);
    const SimStats b = Simulate(trace, capacity, nodes);
    EXPECT_EQ(a.hit_blocks, b.hit_blocks) << name;
    uint64_t reads = 0;
    for (const NodeLoad& l : nodes.loads()) reads += l.read;
    EXPECT_GE(reads, b.hit_blocks) << name;  // every hit is a read
  }
}

TEST(NodeLoadPolicyTest, TheLineGivesSkewAndTheMastersPace) {
  const Trace trace = MustParse(
      "{\"timestamp\": 0, \"hash_ids\": [1, 2]}\n"
      "{\"timestamp\": 2000, \"hash_ids\": [1, 2]}\n");
  auto inner = cache::MakePolicy("lru", {});
  ASSERT_TRUE(inner.ok());
  NodeLoadPolicy nodes(std::move(*inner), 2);
  const SimStats stats = Simulate(trace, 10, nodes);
  ASSERT_EQ(stats.hit_blocks, 2u);
  // 2 requests in 2 s; keys: 4 in prefix queries + 2 replica lists + 2 x 2 puts = 10.
  const std::string line = FormatNodeLoads("lru @ 10", nodes, stats, trace);
  EXPECT_NE(line.find("lru @ 10: 2 nodes"), std::string::npos) << line;
  EXPECT_NE(line.find("reads 1.00"), std::string::npos) << line;
  EXPECT_NE(line.find("1 requests/s, 5 keys/s"), std::string::npos) << line;
  const Trace flat = MustParse("{\"hash_ids\": [1]}\n");
  EXPECT_NE(FormatNodeLoads("x", nodes, stats, flat).find("n/a"), std::string::npos);
}

}  // namespace
}  // namespace crescent::sim
