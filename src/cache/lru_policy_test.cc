#include "cache/lru_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cache/policy_test_util.h"

namespace crescent::cache {
namespace {

using ::testing::ElementsAre;

TEST(LruPolicyTest, HitsMoveToTheNewEnd) {
  LruPolicy p;
  for (ObjectId id : {1, 2, 3, 4}) p.Insert(id, 1);  // oldest first: 1 2 3 4
  p.Access(1);                                       // 2 3 4 1
  p.Access(3);                                       // 2 4 1 3
  p.Access(42);                                      // untracked: no-op
  EXPECT_THAT(DrainVictims(p), ElementsAre(2, 4, 1, 3));
}

TEST(LruPolicyTest, RemovedIdsAreNeverVictims) {
  LruPolicy p;
  for (ObjectId id : {1, 2, 3, 4}) p.Insert(id, 1);  // 1 2 3 4
  p.Access(1);                                       // 2 3 4 1
  p.Remove(3);                                       // 2 4 1
  EXPECT_EQ(p.Evict(), 2u);                          // 4 1
  p.Access(4);                                       // 1 4
  EXPECT_THAT(DrainVictims(p), ElementsAre(1, 4));
}

TEST(LruPolicyTest, ReinsertedIdStartsFresh) {
  LruPolicy p;
  for (ObjectId id : {1, 2, 3}) p.Insert(id, 1);  // 1 2 3
  EXPECT_EQ(p.Evict(), 1u);                       // 2 3
  p.Insert(1, 1);                                 // 2 3 1
  p.Access(2);                                    // 3 1 2
  EXPECT_THAT(DrainVictims(p), ElementsAre(3, 1, 2));
}

TEST(LruPolicyTest, SparedObjectCountsAsUsed) {
  LruPolicy p;
  for (ObjectId id : {1, 2, 3, 4}) p.Insert(id, 1);  // 1 2 3 4
  SpareRecorder spare{.keep = {1, 3}};
  // 1 is spared and becomes newest (2 3 4 1); 2 is the victim.
  EXPECT_EQ(p.Evict(spare.Fn()), 2u);  // 3 4 1
  EXPECT_THAT(spare.asked, ElementsAre(1, 2));
  // 3 spared (4 1 3); 4 is the victim.
  EXPECT_EQ(p.Evict(spare.Fn()), 4u);  // 1 3
  EXPECT_THAT(DrainVictims(p), ElementsAre(1, 3));
}

TEST(LruPolicyTest, GivesUpAfterCountSpares) {
  LruPolicy p;
  for (ObjectId id : {1, 2, 3}) p.Insert(id, 1);
  SpareRecorder spare{.keep_all = true};
  EXPECT_EQ(p.Evict(spare.Fn()), std::nullopt);
  EXPECT_THAT(spare.asked, ElementsAre(1, 2, 3));  // each moved to the new end in turn
  EXPECT_EQ(p.Count(), 3u);
  EXPECT_THAT(DrainVictims(p), ElementsAre(1, 2, 3));
}

}  // namespace
}  // namespace crescent::cache
