#include "cache/policy_handover.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cache/fifo_policy.h"
#include "cache/lru_policy.h"
#include "cache/policy_test_util.h"

namespace crescent::cache {
namespace {

using ::testing::ElementsAre;

TEST(PolicyHandoverTest, SwitchingDropsNothingAndBothPoliciesGiveVictimsByShare) {
  PolicyHandover h(std::make_unique<FifoPolicy>());
  for (ObjectId id = 1; id <= 4; ++id) h.Insert(id, 1, {});
  h.Switch(std::make_unique<LruPolicy>());
  EXPECT_TRUE(h.Draining());
  EXPECT_EQ(h.Count(), 4u);
  h.Insert(5, 1, {});  // new objects go to the live policy
  EXPECT_EQ(h.live().Count(), 1u);
  // A hit on 2 moves it to the live policy, as just used.
  ASSERT_TRUE(h.NeedsReadmit(2));
  h.Readmit(2, 1, {});
  EXPECT_FALSE(h.NeedsReadmit(2));
  // The draining policy's credit grows by its share at each call (3/5: live
  // gives 5; + 3/4: draining gives 1; + 2/3: draining gives 3; + 1/2: live
  // gives 2; then only draining is left), each in its own order (FIFO there,
  // LRU here: 5 was inserted before 2 was re-admitted).
  std::vector<ObjectId> victims;
  while (auto v = h.Evict(nullptr)) victims.push_back(*v);
  EXPECT_THAT(victims, ElementsAre(5, 1, 3, 2, 4));
  EXPECT_FALSE(h.Draining());  // emptied, so dropped
}

TEST(PolicyHandoverTest, WhenOnePolicySparesEverythingTheOtherGivesTheVictim) {
  PolicyHandover h(std::make_unique<FifoPolicy>());
  h.Insert(1, 1, {});
  h.Switch(std::make_unique<LruPolicy>());
  h.Insert(2, 1, {});
  SpareRecorder spare{.keep = {2}};
  EXPECT_EQ(h.Evict(spare.Fn()), 1u);  // the live policy's turn, but 2 was spared
  EXPECT_THAT(spare.asked, ElementsAre(2, 1));
  EXPECT_TRUE(h.Contains(2));
  EXPECT_FALSE(h.Draining());
}

TEST(PolicyHandoverTest, RemoveReachesEitherPolicy) {
  PolicyHandover h(std::make_unique<FifoPolicy>());
  h.Insert(1, 3, {});
  h.Switch(std::make_unique<LruPolicy>());
  h.Insert(2, 5, {});
  EXPECT_EQ(h.UsedSize(), 8u);
  h.Remove(1);
  EXPECT_FALSE(h.Draining());
  h.Remove(2);
  EXPECT_EQ(h.Count(), 0u);
  EXPECT_EQ(h.UsedSize(), 0u);
}

}  // namespace
}  // namespace crescent::cache
