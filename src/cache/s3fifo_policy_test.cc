#include "cache/s3fifo_policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cache/policy_test_util.h"

namespace crescent::cache {
namespace {

using ::testing::ElementsAre;

// Notation: queues are written tail (oldest) first, frequencies in brackets.
// Capacity 10 with the default 10% ratio gives S a share of 1 and M of 9; S is
// evicted from whenever it holds at least 1, i.e. whenever it is not empty.
PolicyOptions Options(uint64_t capacity, int move_threshold) {
  return PolicyOptions{.capacity = capacity, .s3fifo_move_threshold = move_threshold};
}

TEST(S3FifoPolicyTest, ThresholdOneMovesObjectsHitOnce) {
  S3FifoPolicy p(Options(10, 1));
  for (ObjectId id : {1, 2, 3, 4, 5}) p.Insert(id, 1);
  p.Access(2);
  p.Access(4);
  p.Access(4);  // S: 1 2[1] 3 4[2] 5
  // 1 to G. Then 2 moves to M (freq reset), 3 to G. Then 4 moves, 5 to G.
  // S is empty, so M: 2 then 4.
  EXPECT_THAT(DrainVictims(p), ElementsAre(1, 3, 5, 2, 4));
}

TEST(S3FifoPolicyTest, ThresholdTwoNeedsTwoHits) {
  S3FifoPolicy p(Options(10, 2));
  for (ObjectId id : {1, 2, 3, 4, 5}) p.Insert(id, 1);
  p.Access(2);
  p.Access(4);
  p.Access(4);  // S: 1 2[1] 3 4[2] 5
  // 1, 2 (one hit is not enough) and 3 go to G; 4 moves to M, 5 to G; then M: 4.
  EXPECT_THAT(DrainVictims(p), ElementsAre(1, 2, 3, 5, 4));
}

TEST(S3FifoPolicyTest, GhostHitGoesStraightToMain) {
  S3FifoPolicy p(Options(10, 1));
  for (ObjectId id : {1, 2, 3}) p.Insert(id, 1);
  EXPECT_EQ(p.Evict(), 1u);  // S: 2 3, G: 1
  EXPECT_EQ(p.GhostCount(), 1u);
  p.Insert(1, 1);  // ghost hit: M: 1
  EXPECT_EQ(p.MainSize(), 1u);
  EXPECT_EQ(p.SmallSize(), 2u);
  EXPECT_EQ(p.GhostCount(), 0u);
  p.Insert(4, 1);  // S: 2 3 4
  // S first (it holds at least its share), then M. Had 1 gone to S it would
  // have been evicted before 4.
  EXPECT_THAT(DrainVictims(p), ElementsAre(2, 3, 4, 1));
}

// The master gives every incarnation of a key a new id and passes the key's
// hash as `history`: the ghost must recognise the key, not the old id.
TEST(S3FifoPolicyTest, GhostRecognisesAKeyReinsertedUnderANewId) {
  S3FifoPolicy p(Options(10, 1));
  p.Insert(/*id=*/100, 1, {.history = 7});
  EXPECT_EQ(p.Evict(), 100u);  // S → G, filed under history 7
  EXPECT_EQ(p.GhostCount(), 1u);
  EXPECT_FALSE(p.Contains(100));
  EXPECT_FALSE(p.Contains(7));  // a ghost is not tracked
  p.Insert(/*id=*/200, 1, {.history = 7});
  EXPECT_EQ(p.MainSize(), 1u);  // ghost hit: straight to M
  EXPECT_EQ(p.GhostCount(), 0u);
  EXPECT_TRUE(p.Contains(200));
  // A different key with the old id's number is not a ghost hit.
  p.Insert(/*id=*/300, 1, {.history = 100});
  EXPECT_EQ(p.SmallSize(), 1u);
  EXPECT_EQ(p.MainSize(), 1u);
}

TEST(S3FifoPolicyTest, MainIsAClockWithTwoBitFrequency) {
  S3FifoPolicy p(Options(10, 1));
  for (ObjectId id : {1, 2, 3, 4, 5}) p.Insert(id, 1);
  p.Access(2);
  p.Access(4);                              // S: 1 2[1] 3 4[1] 5
  EXPECT_EQ(p.Evict(), 1u);                 // G: 1
  EXPECT_EQ(p.Evict(), 3u);                 // 2 moved: M: 2, G: 1 3
  p.Insert(1, 1);                           // ghost hit: M: 2 1
  EXPECT_EQ(p.Evict(), 5u);                 // 4 moved: M: 2 1 4, S empty
  for (int i = 0; i < 5; ++i) p.Access(1);  // capped at 3: M: 2 1[3] 4
  EXPECT_EQ(p.Evict(), 2u);                 // M: 1[3] 4
  EXPECT_EQ(p.Evict(), 4u);                 // 1 goes round (3 -> 2): M: 1[2]
  EXPECT_EQ(p.Evict(), 1u);                 // 1 goes round twice more, then goes
  EXPECT_EQ(p.Evict(), std::nullopt);
}

TEST(S3FifoPolicyTest, MovingIntoAFullMainEvictsFromMainFirst) {
  // Capacity 4 with a 25% ratio: S's share is 1, M's is 3.
  S3FifoPolicy p(PolicyOptions{.capacity = 4, .s3fifo_small_ratio = 0.25});
  for (ObjectId id : {1, 2, 3, 4}) p.Insert(id, 1);
  for (ObjectId id : {1, 2, 3}) p.Access(id);
  EXPECT_EQ(p.Evict(), 4u);                    // 1 2 3 move to M (which then is full); 4 to G
  for (ObjectId id : {1, 2, 3}) p.Access(id);  // M: 1[1] 2[1] 3[1]
  p.Insert(5, 1);
  p.Access(5);  // S: 5[1]
  // 5 must move, but M is at its share: M is evicted from first (1 2 3 go
  // round once, then 1 goes), and only then does 5 enter M. Had 5 entered
  // first, it would have been the one evicted.
  EXPECT_EQ(p.Evict(), 1u);
  EXPECT_EQ(p.MainSize(), 3u);
  EXPECT_EQ(p.SmallSize(), 0u);
  EXPECT_THAT(DrainVictims(p), ElementsAre(2, 3, 5));
}

TEST(S3FifoPolicyTest, QueueSharesAreMeasuredInSize) {
  // Capacity 100: S's share is 10, M's is 90 (and G's budget).
  S3FifoPolicy p(Options(100, 1));
  p.Insert(1, 40);
  p.Insert(2, 40);
  EXPECT_THAT(DrainVictims(p), ElementsAre(1, 2));  // both to G
  p.Insert(1, 40);
  p.Insert(2, 40);  // ghost hits: M: 1 2
  EXPECT_EQ(p.MainSize(), 80u);
  p.Insert(3, 9);            // S holds 9 < 10: evict from M
  EXPECT_EQ(p.Evict(), 1u);  // M: 2
  p.Insert(4, 1);            // S holds 10: evict from S
  EXPECT_EQ(p.Evict(), 3u);  // S: 4
  EXPECT_EQ(p.Evict(), 2u);  // S holds 1 < 10: M
  EXPECT_EQ(p.Evict(), 4u);  // M is empty: S
  EXPECT_EQ(p.UsedSize(), 0u);
}

TEST(S3FifoPolicyTest, GhostForgetsBeyondMainsShare) {
  // Capacity 2: S's share is 0, M's (and so G's) is 2.
  S3FifoPolicy p(Options(2, 1));
  for (ObjectId id : {1, 2, 3, 4}) p.Insert(id, 1);
  EXPECT_THAT((std::vector{*p.Evict(), *p.Evict(), *p.Evict()}), ElementsAre(1, 2, 3));
  EXPECT_EQ(p.GhostCount(), 2u);  // G: 2 3; 1 expired
  p.Insert(1, 1);                 // forgotten: S
  EXPECT_EQ(p.SmallSize(), 2u);
  p.Insert(2, 1);  // remembered: M
  EXPECT_EQ(p.MainSize(), 1u);
  EXPECT_EQ(p.GhostCount(), 1u);
  p.SetCapacity(0);  // G's budget drops to 0
  EXPECT_EQ(p.GhostCount(), 0u);
  p.Insert(3, 1);
  EXPECT_EQ(p.SmallSize(), 3u);
}

TEST(S3FifoPolicyTest, RemoveIsLazyButExact) {
  S3FifoPolicy p(Options(10, 1));
  for (ObjectId id : {1, 2, 3, 4}) p.Insert(id, 1);
  p.Remove(1);  // dead slot at S's tail
  EXPECT_EQ(p.Count(), 3u);
  EXPECT_EQ(p.UsedSize(), 3u);
  EXPECT_EQ(p.SmallSize(), 3u);
  EXPECT_EQ(p.Evict(), 2u);  // 1 skipped
  p.Remove(3);
  EXPECT_EQ(p.Evict(), 4u);
  EXPECT_EQ(p.Evict(), std::nullopt);
  EXPECT_EQ(p.UsedSize(), 0u);

  p.Insert(5, 1);
  p.Access(5);
  p.Insert(6, 1);
  EXPECT_EQ(p.Evict(), 6u);  // 5 moved to M, 6 to G
  p.Remove(5);               // from M
  EXPECT_EQ(p.Count(), 0u);
  EXPECT_EQ(p.MainSize(), 0u);
  EXPECT_EQ(p.Evict(), std::nullopt);
  p.Remove(6);  // only a ghost: untracked, so nothing happens
  EXPECT_FALSE(p.Contains(6));
  p.Insert(6, 1);  // still a ghost hit
  EXPECT_EQ(p.MainSize(), 1u);
  p.Insert(5, 1);  // a removal leaves no ghost
  EXPECT_EQ(p.SmallSize(), 1u);
}

TEST(S3FifoPolicyTest, StaleSlotOfReinsertedIdIsSkipped) {
  S3FifoPolicy p(Options(10, 1));
  p.Insert(1, 1);
  p.Insert(2, 1);
  p.Remove(1);
  p.Insert(1, 1);  // S: (dead 1) 2 1
  EXPECT_THAT(DrainVictims(p), ElementsAre(2, 1));
}

TEST(S3FifoPolicyTest, ManyRemovesKeepWorking) {
  // Enough dead slots to trigger compaction of S several times.
  S3FifoPolicy p(Options(10, 1));
  p.Insert(1000, 1);
  for (ObjectId round = 0; round < 5000; ++round) {
    p.Insert(round % 7, 1);
    p.Remove(round % 7);
  }
  p.Insert(1001, 1);
  EXPECT_EQ(p.Count(), 2u);
  EXPECT_EQ(p.SmallSize(), 2u);
  EXPECT_THAT(DrainVictims(p), ElementsAre(1000, 1001));
}

TEST(S3FifoPolicyTest, SparedSmallObjectCountsAsHit) {
  {
    S3FifoPolicy p(Options(10, 1));
    for (ObjectId id : {1, 2, 3}) p.Insert(id, 1);
    SpareRecorder spare{.keep = {1}};
    // 1 spared: one hit reaches threshold 1, so it moves to M; 2 goes to G.
    EXPECT_EQ(p.Evict(spare.Fn()), 2u);
    EXPECT_THAT(spare.asked, ElementsAre(1, 2));
    EXPECT_EQ(p.MainSize(), 1u);
    EXPECT_THAT(DrainVictims(p), ElementsAre(3, 1));
  }
  {
    S3FifoPolicy p(Options(10, 2));
    for (ObjectId id : {1, 2, 3}) p.Insert(id, 1);
    SpareRecorder spare{.keep = {1}};
    // 1 spared: one hit is below threshold 2, so back to S's head: S: 2 3 1[1].
    EXPECT_EQ(p.Evict(spare.Fn()), 2u);
    EXPECT_EQ(p.Evict(spare.Fn()), 3u);
    // 1 spared again: two hits, so it moves to M; that was Count() == 1 spare.
    EXPECT_EQ(p.Evict(spare.Fn()), std::nullopt);
    EXPECT_THAT(spare.asked, ElementsAre(1, 2, 3, 1));
    EXPECT_EQ(p.MainSize(), 1u);
    EXPECT_EQ(p.Evict(), 1u);
  }
}

TEST(S3FifoPolicyTest, SparedMainObjectGoesRound) {
  S3FifoPolicy p(Options(10, 1));
  p.Insert(1, 1);
  p.Insert(2, 1);
  EXPECT_THAT(DrainVictims(p), ElementsAre(1, 2));
  p.Insert(1, 1);
  p.Insert(2, 1);  // ghost hits: M: 1 2
  SpareRecorder spare{.keep = {1}};
  EXPECT_EQ(p.Evict(spare.Fn()), 2u);  // 1 spared back to M's head
  EXPECT_THAT(spare.asked, ElementsAre(1, 2));
  EXPECT_EQ(p.Evict(), 1u);
}

TEST(S3FifoPolicyTest, GivesUpAfterCountSpares) {
  S3FifoPolicy p(Options(10, 1));
  for (ObjectId id : {1, 2, 3}) p.Insert(id, 1);
  SpareRecorder spare{.keep_all = true};
  EXPECT_EQ(p.Evict(spare.Fn()), std::nullopt);  // each spared once, moved to M
  EXPECT_THAT(spare.asked, ElementsAre(1, 2, 3));
  EXPECT_EQ(p.Count(), 3u);
  EXPECT_EQ(p.MainSize(), 3u);
  EXPECT_THAT(DrainVictims(p), ElementsAre(1, 2, 3));
}

}  // namespace
}  // namespace crescent::cache
