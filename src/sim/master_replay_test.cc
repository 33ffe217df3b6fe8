// The consistency check as a test: a generated trace replayed through the real
// master engine gives the same prefix hit ratio as the simulator, per policy:
// within 0.01 (exactly where the master coalesces no touch:
// master_replay_exact_test).
#include "sim/master_replay.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/random_trace_for_test.h"
#include "sim/simulator.h"

namespace crescent::sim {
namespace {

class MasterReplayTest : public ::testing::TestWithParam<std::string> {};

TEST_P(MasterReplayTest, MatchesTheSimulatorWithinOneHundredth) {
  auto trace = ParseTrace(testing::RandomTraceText(/*seed=*/11, /*requests=*/600), "generated");
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  for (uint64_t capacity : {trace->distinct_blocks() / 20, trace->distinct_blocks() / 5}) {
    ASSERT_GT(capacity, 0u);
    auto policy = MakeSimPolicy(*trace, GetParam(), {.capacity = capacity});
    ASSERT_TRUE(policy.ok());
    SimStats sim = Simulate(*trace, capacity, **policy);
    auto replay = ReplayThroughMaster(*trace, capacity, GetParam());
    ASSERT_TRUE(replay.ok()) << replay.status().ToString();
    EXPECT_EQ(replay->requests, sim.requests);
    EXPECT_EQ(replay->block_refs, sim.block_refs);
    EXPECT_GT(sim.hit_blocks, 0u);
    EXPECT_LE(std::abs(replay->hit_ratio() - sim.hit_ratio()), 0.01)
        << GetParam() << " at " << capacity << " blocks: master " << replay->hit_ratio()
        << ", simulator " << sim.hit_ratio();
  }
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, MasterReplayTest,
                         ::testing::Values("fifo", "lru", "sieve", "s3fifo", "slru", "prefix-lru",
                                           "learned", "adaptive"));

TEST(MasterReplayErrors, ZeroCapacityAndUnknownPolicyAreErrors) {
  auto trace = ParseTrace(testing::RandomTraceText(3, 20), "generated");
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(ReplayThroughMaster(*trace, 0, "lru").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ReplayThroughMaster(*trace, 10, "nope").status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace crescent::sim
