#include "cache/fifo_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cache/policy_test_util.h"

namespace crescent::cache {
namespace {

using ::testing::ElementsAre;

TEST(FifoPolicyTest, EvictsInInsertionOrderIgnoringHits) {
  FifoPolicy p;
  for (ObjectId id : {1, 2, 3, 4}) p.Insert(id, 1);
  p.Access(1);  // FIFO ignores hits: 1 is still the oldest.
  p.Access(3);
  EXPECT_THAT(DrainVictims(p), ElementsAre(1, 2, 3, 4));
  EXPECT_EQ(p.Count(), 0u);
  EXPECT_EQ(p.Evict(), std::nullopt);
}

TEST(FifoPolicyTest, RemovedIdsAreNeverVictims) {
  FifoPolicy p;
  for (ObjectId id : {1, 2, 3, 4, 5}) p.Insert(id, 1);
  p.Remove(2);
  p.Remove(4);
  p.Remove(99);  // untracked: no-op
  EXPECT_EQ(p.Count(), 3u);
  EXPECT_FALSE(p.Contains(2));
  // Queue, oldest first: 1 3 5.
  EXPECT_THAT(DrainVictims(p), ElementsAre(1, 3, 5));
}

TEST(FifoPolicyTest, ReinsertedIdGoesToTheNewEnd) {
  FifoPolicy p;
  p.Insert(1, 1);
  p.Insert(2, 1);
  EXPECT_EQ(p.Evict(), 1u);  // queue: 2
  p.Insert(1, 1);            // queue: 2 1
  p.Insert(3, 1);            // queue: 2 1 3
  EXPECT_THAT(DrainVictims(p), ElementsAre(2, 1, 3));
}

TEST(FifoPolicyTest, SizesAddUp) {
  FifoPolicy p;
  p.Insert(1, 10);
  p.Insert(2, 20);
  p.Insert(3, 5);
  EXPECT_EQ(p.UsedSize(), 35u);
  p.Remove(2);
  EXPECT_EQ(p.UsedSize(), 15u);
  EXPECT_EQ(p.Evict(), 1u);
  EXPECT_EQ(p.UsedSize(), 5u);
}

TEST(FifoPolicyTest, SparedObjectKeepsItsPlace) {
  FifoPolicy p;
  for (ObjectId id : {1, 2, 3}) p.Insert(id, 1);
  SpareRecorder spare{.keep = {1}};
  // 1 is spared; a hit does not move a FIFO object, so it stays oldest and the
  // walk goes on to 2.
  EXPECT_EQ(p.Evict(spare.Fn()), 2u);
  EXPECT_THAT(spare.asked, ElementsAre(1, 2));
  // Without the callback 1 is the oldest again.
  EXPECT_THAT(DrainVictims(p), ElementsAre(1, 3));
}

TEST(FifoPolicyTest, GivesUpAfterCountSpares) {
  FifoPolicy p;
  for (ObjectId id : {1, 2, 3}) p.Insert(id, 1);
  SpareRecorder spare{.keep_all = true};
  EXPECT_EQ(p.Evict(spare.Fn()), std::nullopt);
  EXPECT_THAT(spare.asked, ElementsAre(1, 2, 3));
  EXPECT_EQ(p.Count(), 3u);
  EXPECT_THAT(DrainVictims(p), ElementsAre(1, 2, 3));
}

}  // namespace
}  // namespace crescent::cache
