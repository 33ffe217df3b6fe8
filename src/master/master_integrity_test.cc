// End-to-end checksums in the engine: PutEnd records the writer's checksum,
// every replica list returns it, and a reader's ReportCorruptReplica has the
// replica's node check its stored bytes (the copier's Verify, at the next
// maintenance pass): only a mismatch there drops exactly the reported replica
// of exactly that version of the object; a match keeps it.
#include "master/master_test_util.h"
#include "master/scripted_node_for_test.h"

namespace crescent::master::testing {
namespace {

class IntegrityTest : public MasterTest {
 protected:
  // Tests jump the clock past leases; the store nodes must not expire meanwhile.
  IntegrityTest() { config_.heartbeat_ttl_ms = int64_t{1} << 40; }

  void SetUp() override {
    master().SetReplicaCopier(&node_);
    seg_a_ = Mount("seg-a", 1 << 20, "node-a");
    seg_b_ = Mount("seg-b", 1 << 20, "node-b");
  }

  // A reader reports `r` of `key`, and the maintenance pass that follows has
  // its node check it; the report's own status.
  Status Report(const std::string& key, const ReplicaDescriptor& r, uint64_t checksum) {
    Status s = master().ReportCorruptReplica(key, r.segment, r.offset, checksum);
    master().RunMaintenance();
    return s;
  }

  // Its node holds other bytes than the value's at `r`.
  void Spoil(const ReplicaDescriptor& r) { node_.corrupt.insert({r.segment, r.offset}); }

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

  ScriptedNode node_;
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
  Spoil(bad);

  ASSERT_TRUE(master().ReportCorruptReplica("k", bad.segment, bad.offset, 0xabc).ok());
  EXPECT_EQ(master().GetReplicaList("k")->replicas.size(), 2u) << "dropped before its node said";
  EXPECT_EQ(master().PendingCorruptionReports(), 1u);
  master().RunMaintenance();
  EXPECT_EQ(master().PendingCorruptionReports(), 0u);
  auto after = master().GetReplicaList("k");
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->replicas.size(), 1u);
  EXPECT_EQ(after->replicas[0].segment, good.segment);
  EXPECT_EQ(after->replicas[0].offset, good.offset);
  EXPECT_EQ(master().counters().corrupt_replicas.load(), 1u);
  EXPECT_EQ(master().counters().corrupt_objects.load(), 0u);
  EXPECT_EQ(master().counters().reports_confirmed.load(), 1u);

  // A second reader's report of the same replica finds it gone already.
  EXPECT_EQ(Report("k", bad, 0xabc).code(), ErrorCode::kObjectNotFound);
  EXPECT_EQ(master().GetReplicaList("k")->replicas.size(), 1u);
  EXPECT_EQ(master().counters().corrupt_replicas.load(), 1u);
}

// The reader may be the one at fault (its buffer changed during the get, or
// its own memory flipped a bit): its node's bytes decide.
TEST_F(IntegrityTest, AReportTheNodeDisprovesKeepsTheReplica) {
  PutWith("two", 0xabc);
  PutWith("one", 0xdef, 1);
  const ReplicaDescriptor a = master().GetReplicaList("two")->replicas[0];
  const ReplicaDescriptor b = master().GetReplicaList("one")->replicas[0];
  ASSERT_TRUE(Report("two", a, 0xabc).ok());
  ASSERT_TRUE(Report("one", b, 0xdef).ok());
  EXPECT_EQ(master().GetReplicaList("two")->replicas.size(), 2u);
  EXPECT_TRUE(Readable("one")) << "the last replica went on a reader's word";
  EXPECT_EQ(master().counters().reports_disproved.load(), 2u);
  EXPECT_EQ(master().counters().reports_confirmed.load(), 0u);
  EXPECT_EQ(master().counters().corrupt_replicas.load(), 0u);
  EXPECT_EQ(master().counters().corrupt_objects.load(), 0u);
  EXPECT_EQ(node_.asked[b.offset], 1u + (a.offset == b.offset ? 1u : 0u));
  // A disproved place is checked again at its next report.
  ASSERT_TRUE(Report("one", b, 0xdef).ok());
  EXPECT_EQ(master().counters().reports_disproved.load(), 3u);
}

TEST_F(IntegrityTest, ReportsOfOneReplicaAreCheckedOnce) {
  PutWith("k", 0xabc, 1);
  const ReplicaDescriptor r = master().GetReplicaList("k")->replicas[0];
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(master().ReportCorruptReplica("k", r.segment, r.offset, 0xabc).ok());
  }
  EXPECT_EQ(master().PendingCorruptionReports(), 1u);
  master().RunMaintenance();
  EXPECT_EQ(node_.asked[r.offset], 1u);
  EXPECT_EQ(master().counters().reports_disproved.load(), 1u);
}

// A node that gives no verdict (gone, silent) is asked again at later passes,
// a bounded number of times; the replica stays meanwhile and after.
TEST_F(IntegrityTest, AReportNoNodeAnswersKeepsTheReplica) {
  PutWith("k", 0xabc, 1);
  const ReplicaDescriptor r = master().GetReplicaList("k")->replicas[0];
  node_.answer = [](uint64_t, uint64_t) { return Status(ErrorCode::kTimeout, "no answer"); };
  ASSERT_TRUE(master().ReportCorruptReplica("k", r.segment, r.offset, 0xabc).ok());
  for (int pass = 0; pass < 10; ++pass) master().RunMaintenance();
  EXPECT_EQ(node_.asked[r.offset], 4u) << "MasterService::kVerifyTries";
  EXPECT_EQ(master().counters().reports_unchecked.load(), 1u);
  EXPECT_EQ(master().PendingCorruptionReports(), 0u);
  EXPECT_TRUE(Readable("k"));
}

// Reports wait in bounded memory: past kMaxQueuedReports distinct replicas, a
// report is refused (the replica kept; the next reader reports it again).
TEST_F(IntegrityTest, WaitingReportsAreBounded) {
  constexpr size_t kMax = 1024;  // MasterService::kMaxQueuedReports
  for (size_t i = 0; i <= kMax; ++i) {
    const std::string key = "k" + std::to_string(i);
    ASSERT_NO_FATAL_FAILURE(PutWith(key, 7, 1, 64));
    const ReplicaDescriptor r = master().GetReplicaList(key)->replicas[0];
    const Status s = master().ReportCorruptReplica(key, r.segment, r.offset, 7);
    if (i < kMax) {
      ASSERT_TRUE(s.ok()) << i << ": " << s.ToString();
    } else {
      EXPECT_EQ(s.code(), ErrorCode::kUnavailable) << s.ToString();
    }
  }
  EXPECT_EQ(master().PendingCorruptionReports(), kMax);
  master().RunMaintenance();
  EXPECT_EQ(master().PendingCorruptionReports(), 0u);
  EXPECT_EQ(master().counters().reports_disproved.load(), kMax);
}

// With no way to have a node check the bytes, nothing is dropped.
TEST_F(IntegrityTest, WithoutACopierAReportDropsNothing) {
  master().SetReplicaCopier(nullptr);
  PutWith("k", 0xabc, 1);
  const ReplicaDescriptor r = master().GetReplicaList("k")->replicas[0];
  Spoil(r);
  EXPECT_EQ(Report("k", r, 0xabc).code(), ErrorCode::kUnavailable);
  EXPECT_TRUE(Readable("k"));
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
  Spoil(r);
  ASSERT_TRUE(Report("k", r, 0xabc).ok());
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
  Spoil(bad);
  ASSERT_TRUE(Report("k", bad, 0xabc).ok());
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

// A read not yet folded into the lease when its replica is dropped holds the
// space for the lease that read was granted: LeaseMs of the object's size, not
// the base lease_ms, as a large object's readers take longer. The read comes
// while the node checks the reported bytes, after the maintenance pass has
// folded the earlier reads.
TEST_F(IntegrityTest, ADroppedReplicaOfALargeObjectIsHeldForItsSizesLease) {
  constexpr uint64_t kSize = 256 << 10;
  PutConfig two;
  two.replica_count = 2;
  auto grant = master().PutStart("big", kSize, two);
  ASSERT_TRUE(grant.ok());
  ASSERT_TRUE(master().PutEnd("big", grant->token, 0xabc).ok());
  const ReplicaDescriptor bad = grant->replicas[0];
  const int64_t lease = master().LeaseMs(kSize);
  ASSERT_GT(lease, config_.lease_ms) << "the size adds to the lease";
  TimeMs expiry = 0;
  node_.answer = [&](uint64_t, uint64_t) {
    auto read = master().GetReplicaList("big");  // a read capability for `lease` ms
    if (read.ok()) expiry = read->lease_expiry;
    return Status(ErrorCode::kChecksumMismatch, "the range's bytes do not match");
  };
  ASSERT_TRUE(Report("big", bad, 0xabc).ok());
  ASSERT_EQ(expiry, clock_.NowMs() + lease);
  ASSERT_EQ(master().GetReplicaList("big")->replicas.size(), 1u);
  EXPECT_EQ(master().Stats().held_bytes, kSize);
  clock_.Advance(lease + config_.capability_grace_ms - 1);
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().held_bytes, kSize) << "released while the read capability was live";
  clock_.Advance(1);
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().held_bytes, 0u);
}

}  // namespace
}  // namespace crescent::master::testing
