// VerificationQueue: a taken-over segment's replicas are not servable from
// its hold until each one's check is settled; reports come out first, one per
// place at a time, and never more than kMaxQueuedReports wait.
#include "master/verification_queue.h"

#include <gtest/gtest.h>

#include <vector>

namespace crescent::master {
namespace {

ReplicaSlot Slot(SegmentId segment, uint64_t offset, uint32_t generation = 1) {
  ReplicaSlot s;
  s.segment = segment;
  s.offset = offset;
  s.alloc_generation = generation;
  return s;
}

VerificationQueue::Check CheckOf(ReplicaSlot r, bool reported = false) {
  VerificationQueue::Check c;
  c.key = std::to_string(r.offset);
  c.replica = r;
  c.size = 8;
  c.checksum = 1;
  c.reported = reported;
  return c;
}

TEST(VerificationQueueTest, ATakenOverReplicaIsServedOnlyOnceSettled) {
  VerificationQueue q;
  EXPECT_TRUE(q.Servable(Slot(1, 0)));
  q.HoldSegment(1);
  EXPECT_EQ(q.holds(), 1u);
  EXPECT_FALSE(q.Servable(Slot(1, 0)));
  EXPECT_FALSE(q.Servable(Slot(1, 64)));
  EXPECT_TRUE(q.Servable(Slot(2, 0)));  // another segment
  q.EnqueueTakeOver(1, {CheckOf(Slot(1, 0)), CheckOf(Slot(1, 64))});
  EXPECT_EQ(q.holds(), 2u);               // two replicas, the segment's hold lifted
  EXPECT_TRUE(q.Servable(Slot(1, 128)));  // not on it when it was queued
  EXPECT_FALSE(q.Servable(Slot(1, 0)));
  EXPECT_TRUE(q.Servable(Slot(1, 0, /*generation=*/2)));  // a later allocation there
  q.Settle(Slot(1, 0));
  EXPECT_TRUE(q.Servable(Slot(1, 0)));
  EXPECT_FALSE(q.Servable(Slot(1, 64)));
  q.Settle(Slot(1, 64));
  q.Settle(Slot(1, 64));  // settled twice: counted once
  EXPECT_EQ(q.holds(), 0u);
}

TEST(VerificationQueueTest, AReleasedSegmentHoldsNothing) {
  VerificationQueue q;
  q.HoldSegment(3);
  q.ReleaseSegment(3);
  q.ReleaseSegment(3);  // released twice: counted once
  EXPECT_EQ(q.holds(), 0u);
  EXPECT_TRUE(q.Servable(Slot(3, 0)));
}

TEST(VerificationQueueTest, ReportsComeOutFirstAndDoNotHoldTheirReplica) {
  VerificationQueue q;
  q.EnqueueTakeOver(1, {CheckOf(Slot(1, 0)), CheckOf(Slot(1, 64))});
  EXPECT_TRUE(q.Report(CheckOf(Slot(2, 0), /*reported=*/true)));
  EXPECT_TRUE(q.Servable(Slot(2, 0)));
  EXPECT_EQ(q.reports(), 1u);
  std::vector<VerificationQueue::Check> batch = q.TakeBatch(2);
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_TRUE(batch[0].reported);
  EXPECT_EQ(batch[0].replica, Slot(2, 0));
  EXPECT_EQ(batch[1].replica, Slot(1, 0));
  // In flight, the place is still reported: another report of it adds nothing.
  EXPECT_TRUE(q.Report(CheckOf(Slot(2, 0), true)));
  EXPECT_EQ(q.reports(), 1u);
  // No verdict for the take-over's check: it comes back, after the rest.
  const std::vector<VerificationQueue::Place> decided{{2, 0}};
  q.Requeue(decided, {batch[1]});
  EXPECT_EQ(q.reports(), 0u);
  batch = q.TakeBatch(10);
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[0].replica, Slot(1, 64));
  EXPECT_EQ(batch[1].replica, Slot(1, 0));
  EXPECT_TRUE(q.TakeBatch(10).empty());
}

TEST(VerificationQueueTest, ReportsWaitInBoundedMemory) {
  VerificationQueue q;
  for (size_t i = 0; i < VerificationQueue::kMaxQueuedReports; ++i) {
    ASSERT_TRUE(q.Report(CheckOf(Slot(1, i * 64), true))) << i;
  }
  EXPECT_FALSE(q.Report(CheckOf(Slot(2, 0), true)));
  EXPECT_TRUE(q.Report(CheckOf(Slot(1, 0), true)));  // queued already
  EXPECT_EQ(q.reports(), VerificationQueue::kMaxQueuedReports);
  std::vector<VerificationQueue::Check> batch = q.TakeBatch(1);
  EXPECT_TRUE(q.Report(CheckOf(Slot(2, 0), true)));  // room again
}

}  // namespace
}  // namespace crescent::master
