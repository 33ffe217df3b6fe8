#include "cache/sieve_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cache/policy_test_util.h"

namespace crescent::cache {
namespace {

using ::testing::ElementsAre;

// Notation: the queue is written oldest first; * marks a visited object, ^ the
// hand (no ^: the next sweep starts at the oldest).

TEST(SievePolicyTest, HandClearsVisitedBitsAndKeepsItsPlace) {
  SievePolicy p;
  for (ObjectId id : {1, 2, 3, 4}) p.Insert(id, 1);
  p.Access(1);
  p.Access(3);               // 1* 2 3* 4
  EXPECT_EQ(p.Evict(), 2u);  // 1 passed and cleared, 2 evicted: 1 ^3* 4
  EXPECT_EQ(p.Evict(), 4u);  // 3 cleared, 4 evicted, hand ran off the new end: 1 3
  EXPECT_EQ(p.Evict(), 1u);  // sweep restarts at the oldest: ^3
  EXPECT_EQ(p.Evict(), 3u);
  EXPECT_EQ(p.Evict(), std::nullopt);
}

TEST(SievePolicyTest, NewObjectsWaitBehindTheHand) {
  SievePolicy p;
  for (ObjectId id : {1, 2, 3, 4}) p.Insert(id, 1);
  p.Access(1);
  p.Access(2);               // 1* 2* 3 4
  EXPECT_EQ(p.Evict(), 3u);  // 1 2 ^4
  p.Insert(5, 1);            // 1 2 ^4 5
  p.Access(1);               // 1* 2 ^4 5
  EXPECT_EQ(p.Evict(), 4u);  // the hand, not the oldest: 1* 2 ^5
  EXPECT_EQ(p.Evict(), 5u);  // 1* 2
  EXPECT_EQ(p.Evict(), 2u);  // 1 cleared, 2 evicted
  EXPECT_EQ(p.Evict(), 1u);
}

TEST(SievePolicyTest, RemovingTheHandMovesIt) {
  SievePolicy p;
  for (ObjectId id : {1, 2, 3, 4}) p.Insert(id, 1);
  p.Access(1);               // 1* 2 3 4
  EXPECT_EQ(p.Evict(), 2u);  // 1 ^3 4
  p.Remove(3);               // 1 ^4
  p.Remove(77);              // untracked: no-op
  EXPECT_EQ(p.Count(), 2u);
  EXPECT_THAT(DrainVictims(p), ElementsAre(4, 1));
}

TEST(SievePolicyTest, ReinsertedIdStartsUnvisited) {
  SievePolicy p;
  p.Insert(1, 1);
  p.Access(1);
  p.Remove(1);  // its slot is reused below; the visited bit must not be
  p.Insert(1, 1);
  p.Insert(2, 1);  // 1 2
  EXPECT_THAT(DrainVictims(p), ElementsAre(1, 2));
  p.Insert(3, 1);
  p.Access(3);
  p.Insert(4, 1);            // 3* 4
  EXPECT_EQ(p.Evict(), 4u);  // 3 cleared, 4 evicted: 3
  p.Insert(4, 1);            // 3 4
  EXPECT_THAT(DrainVictims(p), ElementsAre(3, 4));
}

TEST(SievePolicyTest, SparedObjectIsMarkedVisited) {
  SievePolicy p;
  for (ObjectId id : {1, 2, 3}) p.Insert(id, 1);
  SpareRecorder spare{.keep = {1}};
  // 1 spared: its bit is set and the hand moves on; 2 is the victim: 1* ^3.
  EXPECT_EQ(p.Evict(spare.Fn()), 2u);
  EXPECT_THAT(spare.asked, ElementsAre(1, 2));
  EXPECT_EQ(p.Evict(), 3u);  // 1*
  EXPECT_EQ(p.Evict(), 1u);  // its bit is cleared, the hand wraps round to it
}

TEST(SievePolicyTest, GivesUpAfterCountSpares) {
  SievePolicy p;
  for (ObjectId id : {1, 2, 3}) p.Insert(id, 1);
  SpareRecorder spare{.keep_all = true};
  EXPECT_EQ(p.Evict(spare.Fn()), std::nullopt);  // ^1* 2* 3*
  EXPECT_THAT(spare.asked, ElementsAre(1, 2, 3));
  EXPECT_EQ(p.Count(), 3u);
  // A full sweep clears the bits, then 1 goes.
  EXPECT_THAT(DrainVictims(p), ElementsAre(1, 2, 3));
}

}  // namespace
}  // namespace crescent::cache
