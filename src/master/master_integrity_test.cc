// End-to-end checksums in the engine: PutEnd records the writer's checksum,
// every replica list returns it, and ReportCorruptReplica drops exactly the
// reported replica of exactly that version of the object.
#include "master/master_test_util.h"

namespace crescent::master::testing {
namespace {

class IntegrityTest : public MasterTest {
 protected:
  // Tests jump the clock past leases; the store nodes must not expire meanwhile.
  IntegrityTest() { config_.heartbeat_ttl_ms = int64_t{1} << 40; }

  void SetUp() override {
    seg_a_ = Mount("seg-a", 1 << 20, "node-a");
    seg_b_ = Mount("seg-b", 1 << 20, "node-b");
  }

  // A complete put of `key` with `replicas` copies and `checksum`.
  void PutWith(const std::string& key, uint64_t checksum, uint32_t replicas = 2,
               uint64_t size = 4096) {
    PutConfig c;
    c.replica_count = replicas;
    auto r = master().PutStart(key, size, c);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->replicas.size(), replicas);
    ASSERT_TRUE(master().PutEnd(key, r->token, checksum).ok());
  }

  SegmentId seg_a_ = kNoSegment, seg_b_ = kNoSegment;
};

TEST_F(IntegrityTest, EveryReplicaListCarriesTheWritersChecksum) {
  PutWith("a", 0x1111);
  PutWith("b", 0x2222, 1);
  auto one = master().GetReplicaList("a");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->checksum, 0x1111u);
  std::vector<std::string> keys = {"a", "b"};
  for (bool prefix : {false, true}) {
    auto many = master().BatchGetReplicaList(keys, prefix);
    ASSERT_EQ(many.size(), 2u);
    ASSERT_TRUE(many[0].ok() && many[1].ok());
    EXPECT_EQ(many[0]->checksum, 0x1111u);
    EXPECT_EQ(many[1]->checksum, 0x2222u);
  }
}

TEST_F(IntegrityTest, BatchPutEndRecordsOneChecksumPerKey) {
  std::vector<std::string> keys = {"x", "y"};
  std::vector<uint64_t> sizes = {100, 100};
  auto started = master().BatchPutStart(keys, sizes, {});
  ASSERT_TRUE(started[0].ok() && started[1].ok());
  std::vector<uint64_t> tokens = {started[0]->token, started[1]->token};
  std::vector<uint64_t> one = {7};
  for (const Status& s : master().BatchPutEnd(keys, tokens, one)) {
    EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument) << "a checksum count that differs";
  }
  EXPECT_FALSE(*master().Exists("x"));
  std::vector<uint64_t> sums = {7, 8};
  for (const Status& s : master().BatchPutEnd(keys, tokens, sums)) EXPECT_TRUE(s.ok());
  EXPECT_EQ(master().GetReplicaList("x")->checksum, 7u);
  EXPECT_EQ(master().GetReplicaList("y")->checksum, 8u);
}

TEST_F(IntegrityTest, AReportDropsOnlyTheReportedReplica) {
  PutWith("k", 0xabc);
  auto read = master().GetReplicaList("k");
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->replicas.size(), 2u);
  const ReplicaDescriptor bad = read->replicas[0];
  const ReplicaDescriptor good = read->replicas[1];

  ASSERT_TRUE(master().ReportCorruptReplica("k", bad.segment, bad.offset, 0xabc).ok());
  auto after = master().GetReplicaList("k");
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->replicas.size(), 1u);
  EXPECT_EQ(after->replicas[0].segment, good.segment);
  EXPECT_EQ(after->replicas[0].offset, good.offset);
  EXPECT_EQ(master().counters().corrupt_replicas.load(), 1u);
  EXPECT_EQ(master().counters().corrupt_objects.load(), 0u);

  // A second reader's report of the same replica finds it gone already.
  EXPECT_EQ(master().ReportCorruptReplica("k", bad.segment, bad.offset, 0xabc).code(),
            ErrorCode::kObjectNotFound);
  EXPECT_EQ(master().GetReplicaList("k")->replicas.size(), 1u);
  EXPECT_EQ(master().counters().corrupt_replicas.load(), 1u);
}

TEST_F(IntegrityTest, AReportOfAnotherVersionChangesNothing) {
  PutWith("k", 0xabc);
  auto read = master().GetReplicaList("k");
  ASSERT_TRUE(read.ok());
  const ReplicaDescriptor r = read->replicas[0];
  // Another checksum: the reader saw another object under this key.
  EXPECT_EQ(master().ReportCorruptReplica("k", r.segment, r.offset, 0xdef).code(),
            ErrorCode::kObjectNotFound);
  // A place that holds no replica of the object.
  EXPECT_EQ(master().ReportCorruptReplica("k", r.segment, r.offset + 64, 0xabc).code(),
            ErrorCode::kObjectNotFound);
  EXPECT_EQ(master().ReportCorruptReplica("absent", r.segment, r.offset, 0xabc).code(),
            ErrorCode::kObjectNotFound);
  EXPECT_EQ(master().ReportCorruptReplica("", r.segment, r.offset, 0xabc).code(),
            ErrorCode::kInvalidKey);
  EXPECT_EQ(master().GetReplicaList("k")->replicas.size(), 2u);
  EXPECT_EQ(master().counters().corrupt_replicas.load(), 0u);
  EXPECT_EQ(master().counters().report_corrupt.failures.load(), 4u);
}

TEST_F(IntegrityTest, AReportAgainstAnEarlierPutOfTheKeyChangesNothing) {
  PutWith("k", 0xabc, 1);
  auto read = master().GetReplicaList("k");
  ASSERT_TRUE(read.ok());
  const ReplicaDescriptor old = read->replicas[0];
  ASSERT_TRUE(master().Remove("k", /*force=*/true).ok());
  clock_.Advance(config_.lease_ms + config_.capability_grace_ms);
  master().RunMaintenance();  // the old space is free again
  PutWith("k", 0xabc, 1);     // the same bytes again, perhaps at the same place
  EXPECT_EQ(master().ReportCorruptReplica("k", old.segment, old.offset, 0xdef).code(),
            ErrorCode::kObjectNotFound);
  EXPECT_TRUE(Readable("k"));
}

TEST_F(IntegrityTest, ReportingTheLastReplicaDropsTheObject) {
  PutWith("k", 0xabc, 1);
  auto read = master().GetReplicaList("k");
  ASSERT_TRUE(read.ok());
  const ReplicaDescriptor r = read->replicas[0];
  ASSERT_TRUE(master().ReportCorruptReplica("k", r.segment, r.offset, 0xabc).ok());
  EXPECT_EQ(master().GetReplicaList("k").status().code(), ErrorCode::kObjectNotFound);
  EXPECT_FALSE(*master().Exists("k"));
  EXPECT_TRUE(master().List("").empty());
  EXPECT_EQ(master().Stats().objects, 0u);
  EXPECT_EQ(master().counters().corrupt_objects.load(), 1u);
  // The key can be put again.
  PutWith("k", 0x123, 1);
  EXPECT_EQ(master().GetReplicaList("k")->checksum, 0x123u);
}

// Readers granted the dropped replica may still be copying it: its range is
// not handed to another object until their capabilities have expired.
TEST_F(IntegrityTest, ADroppedReplicasSpaceIsHeldWhileReadersMayReachIt) {
  PutWith("k", 0xabc);
  auto read = master().GetReplicaList("k");  // leases the object
  ASSERT_TRUE(read.ok());
  const ReplicaDescriptor bad = read->replicas[0];
  ASSERT_TRUE(master().ReportCorruptReplica("k", bad.segment, bad.offset, 0xabc).ok());
  EXPECT_EQ(master().Stats().held_bytes, 4096u);
  clock_.Advance(config_.lease_ms + config_.capability_grace_ms - 1);
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().held_bytes, 4096u) << "released while a capability was live";
  clock_.Advance(1);
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().held_bytes, 0u);
  // One replica's space is still the object's.
  EXPECT_EQ(master().Stats().used_bytes, 4096u);
}

}  // namespace
}  // namespace crescent::master::testing
