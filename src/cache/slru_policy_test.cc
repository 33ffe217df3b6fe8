// Victim order of SlruPolicy (the shared contract is in eviction_policy_test.cc).
#include "cache/slru_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cache/policy_test_util.h"

namespace crescent::cache {
namespace {

using ::testing::ElementsAre;

SlruPolicy Make(uint64_t capacity, double protected_ratio) {
  return SlruPolicy({.capacity = capacity, .slru_protected_ratio = protected_ratio});
}

TEST(SlruPolicyTest, ProbationIsEvictedBeforeProtected) {
  SlruPolicy p = Make(10, 0.5);
  for (ObjectId id = 1; id <= 4; ++id) p.Insert(id, 1);
  p.Access(1);  // 1 → protected
  p.Access(2);  // 2 → protected
  EXPECT_EQ(p.ProtectedSize(), 2u);
  // Probation, least recent first (3, 4), then protected (1, 2).
  EXPECT_THAT(DrainVictims(p), ElementsAre(3, 4, 1, 2));
}

TEST(SlruPolicyTest, ProtectedOverflowGoesBackToProbationHead) {
  SlruPolicy p = Make(4, 0.5);  // protected holds 2
  for (ObjectId id = 1; id <= 4; ++id) p.Insert(id, 1);
  p.Access(1);
  p.Access(2);
  p.Access(3);  // protected would hold 3: its least recent, 1, is demoted
  EXPECT_EQ(p.ProtectedSize(), 2u);
  // Probation: 4 (oldest) then 1 (just demoted to its head); then 2, 3.
  EXPECT_THAT(DrainVictims(p), ElementsAre(4, 1, 2, 3));
}

TEST(SlruPolicyTest, HitOnProtectedRefreshesIt) {
  SlruPolicy p = Make(10, 0.5);
  p.Insert(1, 1);
  p.Insert(2, 1);
  p.Access(1);
  p.Access(2);
  p.Access(1);  // protected, most recent first: 1 2
  EXPECT_THAT(DrainVictims(p), ElementsAre(2, 1));
}

TEST(SlruPolicyTest, SpareCountsAsAHit) {
  SlruPolicy p = Make(10, 0.5);
  p.Insert(1, 1);
  p.Insert(2, 1);
  SpareRecorder spare{.keep = {1}};
  EXPECT_EQ(p.Evict(spare.Fn()), 2u);  // 1 was offered, spared and promoted
  EXPECT_THAT(spare.asked, ElementsAre(1, 2));
  EXPECT_EQ(p.ProtectedSize(), 1u);
}

TEST(SlruPolicyTest, SmallerCapacityDemotesProtected) {
  SlruPolicy p = Make(10, 0.5);
  for (ObjectId id = 1; id <= 4; ++id) {
    p.Insert(id, 1);
    p.Access(id);
  }
  EXPECT_EQ(p.ProtectedSize(), 4u);
  p.SetCapacity(4);
  EXPECT_EQ(p.ProtectedSize(), 2u);
  EXPECT_EQ(p.Count(), 4u);
}

}  // namespace
}  // namespace crescent::cache
