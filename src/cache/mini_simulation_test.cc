#include "cache/mini_simulation.h"

#include <gtest/gtest.h>

#include "cache/fifo_policy.h"
#include "cache/lru_policy.h"

namespace crescent::cache {
namespace {

MiniSimulation Lru(uint64_t capacity) {
  return MiniSimulation(std::make_unique<LruPolicy>(), capacity);
}

TEST(MiniSimulationTest, CountsPrefixHitsAlongAChain) {
  MiniSimulation mini = Lru(10);
  // A request of three chained pages, twice: all miss, then all hit.
  for (int round = 0; round < 2; ++round) {
    mini.Reference(1, kNoParent, 1, false);
    mini.Reference(2, 1, 1, false);
    mini.Reference(3, 2, 1, true);
  }
  const MiniSimulation::Window w = mini.TakeWindow();
  EXPECT_EQ(w.refs, 6u);
  EXPECT_EQ(w.hits, 3u);
  EXPECT_EQ(mini.TakeWindow().refs, 0u);  // taking a window resets it
}

TEST(MiniSimulationTest, AMissBreaksTheChainForThePagesAfterIt) {
  MiniSimulation mini = Lru(10);
  mini.Reference(1, kNoParent, 1, false);
  mini.Reference(3, 2, 1, false);  // 2 was never referenced: 3 hangs on it
  mini.TakeWindow();
  mini.Reference(1, kNoParent, 1, false);  // hit
  mini.Reference(2, 1, 1, false);          // miss (inserted now)
  mini.Reference(3, 2, 1, false);          // held, but its anchor missed
  EXPECT_EQ(mini.TakeWindow().hits, 1u);
}

TEST(MiniSimulationTest, StaysWithinItsCapacity) {
  MiniSimulation mini = Lru(5);
  for (uint64_t k = 0; k < 100; ++k) mini.Reference(k, kNoParent, 1, false);
  EXPECT_EQ(mini.policy().UsedSize(), 5u);
  mini.SetCapacity(2);
  EXPECT_EQ(mini.policy().UsedSize(), 2u);
}

// A rehearsed move: the miniature moves as the live cache would, keeping what
// it holds (a hit moves the object to the new policy), nothing flushed.
TEST(MiniSimulationTest, AMoveKeepsWhatItHolds) {
  MiniSimulation mini = Lru(5);
  for (uint64_t k = 0; k < 5; ++k) mini.Reference(k, kNoParent, 1, false);
  mini.TakeWindow();
  mini.Switch(std::make_unique<FifoPolicy>());
  EXPECT_EQ(mini.policy().Name(), "fifo");
  EXPECT_EQ(mini.policy().UsedSize(), 0u);  // nothing moved yet
  for (uint64_t k = 0; k < 5; ++k) mini.Reference(k, kNoParent, 1, false);
  EXPECT_EQ(mini.TakeWindow().hits, 5u);
  EXPECT_EQ(mini.policy().UsedSize(), 5u);  // each hit moved its object
  mini.Reference(5, kNoParent, 1, false);   // a new one evicts in FIFO order
  mini.Reference(0, kNoParent, 1, false);
  EXPECT_EQ(mini.TakeWindow().hits, 0u);
}

}  // namespace
}  // namespace crescent::cache
