// Put lifecycle: PutStart / PutEnd / PutRevoke, batch and chain forms, timeouts.
#include "master/master_test_util.h"

namespace crescent::master::testing {
namespace {

using PutTest = MasterTest;

TEST_F(PutTest, PutThenGetReturnsReplicaOfRequestedSize) {
  SegmentId seg = Mount("seg-a", 1 << 20);
  auto start = master().PutStart("k", 1000, {});
  ASSERT_TRUE(start.ok()) << start.status().ToString();
  ASSERT_EQ(start->size(), 1u);
  EXPECT_EQ((*start)[0].segment, seg);
  EXPECT_EQ((*start)[0].length, 1000u);
  EXPECT_EQ((*start)[0].endpoint, "node-a:7000");
  ASSERT_TRUE(master().PutEnd("k").ok());
  auto read = master().GetReplicaList("k");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->size, 1000u);
  EXPECT_EQ(read->replicas[0].offset, (*start)[0].offset);
}

// Clients trust "same placement" to mean "same allocation, bytes unchanged"
// (client/placement_hints.h): a range freed and handed out again, even to the
// same key at the same offset, must get a new placement.
TEST_F(PutTest, ReusedRangeGetsANewPlacement) {
  Mount("seg-a", 1 << 20);
  auto first = master().PutStart("k", 4096, {});
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(master().PutEnd("k").ok());
  auto read = master().GetReplicaList("k");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->replicas[0].placement, (*first)[0].placement);
  ASSERT_TRUE(master().Remove("k", true).ok());

  auto second = master().PutStart("k", 4096, {});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*second)[0].offset, (*first)[0].offset);  // the freed range, reused
  EXPECT_NE((*second)[0].placement, (*first)[0].placement);
  auto other = master().PutStart("other", 4096, {});
  ASSERT_TRUE(other.ok());
  EXPECT_NE((*other)[0].placement, (*second)[0].placement);
  EXPECT_NE((*other)[0].placement, (*first)[0].placement);
}

// Every replica keeps the placement its put handed out, the second one (kept
// out of line in the entry's heap block) too, also after the other replica's
// segment is gone.
TEST_F(PutTest, ReadsReportThePlacementsThePutHandedOut) {
  Mount("seg-a", 1 << 20, "node-a");
  Mount("seg-b", 1 << 20, "node-b");
  PutConfig two;
  two.replica_count = 2;
  auto start = master().PutStart("k", 4096, two);
  ASSERT_TRUE(start.ok());
  ASSERT_EQ(start->size(), 2u);
  EXPECT_NE((*start)[0].placement, (*start)[1].placement);
  ASSERT_TRUE(master().PutEnd("k").ok());
  auto read = master().GetReplicaList("k");
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->replicas.size(), 2u);
  for (const ReplicaDescriptor& r : read->replicas) {
    const auto& put = r.segment == (*start)[0].segment ? (*start)[0] : (*start)[1];
    EXPECT_EQ(r.offset, put.offset);
    EXPECT_EQ(r.placement, put.placement);
  }
  const ReplicaDescriptor& second = (*start)[1];
  const std::string gone = second.endpoint == "node-a:7000" ? "seg-a" : "seg-b";
  ASSERT_TRUE(master().UnmountSegment(gone, gone == "seg-a" ? "node-a" : "node-b").ok());
  read = master().GetReplicaList("k");
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->replicas.size(), 1u);
  EXPECT_EQ(read->replicas[0].placement, (*start)[0].placement);
}

TEST_F(PutTest, PendingObjectIsInvisibleUntilPutEnd) {
  Mount("seg-a", 1 << 20);
  ASSERT_TRUE(master().PutStart("k", 100, {}).ok());
  EXPECT_FALSE(*master().Exists("k"));
  EXPECT_EQ(master().GetReplicaList("k").status().code(), ErrorCode::kObjectNotFound);
  ASSERT_TRUE(master().PutEnd("k").ok());
  EXPECT_TRUE(*master().Exists("k"));
}

TEST_F(PutTest, DuplicatePutFailsAndChangesNothing) {
  Mount("seg-a", 1 << 20);
  ASSERT_TRUE(Put("k", 100).ok());
  uint64_t used = master().Stats().used_bytes;
  EXPECT_EQ(master().PutStart("k", 200, {}).status().code(), ErrorCode::kObjectAlreadyExists);
  EXPECT_EQ(master().Stats().used_bytes, used);
  EXPECT_EQ(master().GetReplicaList("k")->size, 100u);
}

TEST_F(PutTest, PutRevokeFreesSpaceAndForgetsKey) {
  Mount("seg-a", 1 << 20);
  ASSERT_TRUE(master().PutStart("k", 4096, {}).ok());
  EXPECT_GT(master().Stats().used_bytes, 0u);
  ASSERT_TRUE(master().PutRevoke("k").ok());
  EXPECT_EQ(master().Stats().used_bytes, 0u);
  EXPECT_EQ(master().Stats().pending_puts, 0u);
  EXPECT_TRUE(Put("k", 10).ok());
}

TEST_F(PutTest, PutEndWithoutPutStartFails) {
  Mount("seg-a", 1 << 20);
  EXPECT_EQ(master().PutEnd("nope").code(), ErrorCode::kPutNotStarted);
  ASSERT_TRUE(Put("k", 10).ok());
  EXPECT_EQ(master().PutEnd("k").code(), ErrorCode::kPutNotStarted);
  EXPECT_EQ(master().PutRevoke("k").code(), ErrorCode::kPutNotStarted);
  EXPECT_TRUE(Readable("k"));
}

TEST_F(PutTest, TimedOutPutIsDiscardedAndSpaceReclaimed) {
  config_.put_timeout_ms = 1000;
  Mount("seg-a", 1 << 20);
  ASSERT_TRUE(master().PutStart("k", 4096, {}).ok());
  clock_.Advance(999);
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().pending_puts, 1u);
  clock_.Advance(2);
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().pending_puts, 0u);
  EXPECT_EQ(master().Stats().used_bytes, 0u);
  EXPECT_EQ(master().PutEnd("k").code(), ErrorCode::kPutNotStarted);
  EXPECT_EQ(master().counters().expired_puts.load(), 1u);
}

TEST_F(PutTest, InvalidInputIsRejected) {
  Mount("seg-a", 1 << 20);
  EXPECT_EQ(master().PutStart("", 10, {}).status().code(), ErrorCode::kInvalidKey);
  EXPECT_EQ(master().PutStart(std::string(1025, 'x'), 10, {}).status().code(),
            ErrorCode::kInvalidKey);
  EXPECT_EQ(master().PutStart("k", 0, {}).status().code(), ErrorCode::kInvalidSize);
  EXPECT_EQ(master().PutStart("k", 2 << 20, {}).status().code(), ErrorCode::kInvalidSize);
  // Entries hold sizes in 40 bits: anything from 1 TiB up is refused as such.
  auto huge = master().PutStart("k", uint64_t{1} << 40, {});
  EXPECT_EQ(huge.status().code(), ErrorCode::kInvalidSize);
  EXPECT_NE(huge.status().message().find("largest supported object"), std::string::npos);
  PutConfig zero;
  zero.replica_count = 0;
  EXPECT_EQ(master().PutStart("k", 10, zero).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(master().Stats().used_bytes, 0u);
  EXPECT_EQ(master().Stats().pending_puts, 0u);
}

TEST_F(PutTest, NoSegmentMeansNoSpace) {
  EXPECT_EQ(master().PutStart("k", 10, {}).status().code(), ErrorCode::kNoSpace);
}

TEST_F(PutTest, BatchPutKeepsInputOrderAndReportsEachKey) {
  Mount("seg-a", 1 << 20);
  ASSERT_TRUE(Put("b", 10).ok());
  std::vector<std::string> keys = {"a", "b", "c"};
  std::vector<uint64_t> sizes = {10, 20, 30};
  auto starts = master().BatchPutStart(keys, sizes, {});
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_TRUE(starts[0].ok());
  EXPECT_EQ(starts[1].status().code(), ErrorCode::kObjectAlreadyExists);
  EXPECT_TRUE(starts[2].ok());
  EXPECT_EQ((*starts[2])[0].length, 30u);
  auto ends = master().BatchPutEnd(keys);
  EXPECT_TRUE(ends[0].ok());
  EXPECT_EQ(ends[1].code(), ErrorCode::kPutNotStarted);
  EXPECT_TRUE(ends[2].ok());
  EXPECT_EQ(master().GetReplicaList("b")->size, 10u);
}

}  // namespace
}  // namespace crescent::master::testing
