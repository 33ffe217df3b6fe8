// The consistency check, exactly: on generated traces where the master
// coalesces no touch, a trace replayed through the real master engine hits the
// same blocks as the simulator, for every policy. One thread drives the
// engine, so this runs under ASan only (master_replay_test, the +-0.01 check,
// runs every policy under TSan too).
#include <gtest/gtest.h>

#include "cache/eviction_policy.h"
#include "sim/master_replay.h"
#include "sim/random_trace_for_test.h"
#include "sim/simulator.h"

namespace crescent::sim {
namespace {

// Exactly, where the master coalesces no touch: the simulator names its pages
// as replay and this engine do (page_key.h), so the policies that sample or
// remember keys by their history (adaptive, learned, s3fifo) see the same
// histories in both engines, and each engine's ids come in the same order.
// (On RandomTraceText's default traces the master counts two reads of a page
// before its next flush as one touch, the simulator two references: on seed 1's
// 1500 requests that moved adaptive and learned by 0.002 to 0.003, hence the
// 0.01 of master_replay_test.)
TEST(MasterReplayExactness, EveryPolicyHitsTheSameBlocksInBothEngines) {
  for (uint32_t seed : {1u, 2u, 3u, 4u}) {
    auto trace =
        ParseTrace(testing::RandomTraceText(seed, 1500, /*ends_with_write=*/true), "generated");
    ASSERT_TRUE(trace.ok()) << trace.status().ToString();
    // Multiples of 10 blocks: s3fifo's 10% small queue is then a whole number
    // of blocks (the master sizes it in bytes, the simulator in blocks).
    for (uint64_t capacity :
         {trace->distinct_blocks() / 200 * 10, trace->distinct_blocks() / 50 * 10}) {
      for (const std::string& name : cache::PolicyNames()) {
        auto policy = MakeSimPolicy(*trace, name, {.capacity = capacity});
        ASSERT_TRUE(policy.ok());
        SimStats sim = Simulate(*trace, capacity, **policy);
        auto replay = ReplayThroughMaster(*trace, capacity, name);
        ASSERT_TRUE(replay.ok()) << replay.status().ToString();
        EXPECT_GT(sim.hit_blocks, 0u);
        EXPECT_EQ(replay->hit_blocks, sim.hit_blocks)
            << name << ", trace seed " << seed << ", " << capacity << " blocks";
      }
    }
  }
}

}  // namespace
}  // namespace crescent::sim
