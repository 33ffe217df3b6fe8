// Moves between tiers (master_tiering.cc): a demotion moves only an object no
// read capability can reach (its lease and the fencing grace are over), so its
// source is freed when the move commits, and a DRAM victim that a reader may
// still reach is passed over (a put then goes to PMEM). A promotion keeps the
// persistent copy, and DRAM's eviction later drops only the DRAM one. The
// copier here is a stand-in that reports every copy done; the engine never
// touches bytes.
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "master/master_test_util.h"
#include "master/replica_copier.h"

namespace crescent::master {
namespace {

constexpr uint64_t kSegBytes = 1 << 20;
constexpr uint64_t kObject = 400 << 10;  // two fit in DRAM
constexpr int64_t kLeaseMs = 500;        // a 400 KiB read is leased for 512 ms
constexpr int64_t kGraceMs = 1'000;

using testing::CopiesDone;

class MasterTierMoveTest : public testing::MasterTest {
 protected:
  void SetUp() override {
    config_.lease_ms = kLeaseMs;
    config_.capability_grace_ms = kGraceMs;
    config_.high_watermark = 1.0;  // no background rounds: only puts make room
    master().SetReplicaCopier(&copier_);
    auto d = master().MountSegment({"dram", kSegBytes, "node-1", "n:1#e1", Tier::kDram, 7});
    auto p = master().MountSegment({"pmem-u1", kSegBytes, "node-1", "n:1#e1", Tier::kPmem, 7});
    ASSERT_TRUE(d.ok() && p.ok());
    dram_ = *d;
    pmem_ = *p;
  }

  SegmentId SegmentOf(const std::string& key) {
    auto r = master().GetReplicaList(key);  // a read: it leases the object
    return r.ok() && r->replicas.size() == 1 ? r->replicas[0].segment : kNoSegment;
  }
  // Objects (and held allocations) on a segment; reads nothing, leases nothing.
  uint64_t Allocations(SegmentId segment) {
    for (const SegmentInfo& s : master().ListSegments()) {
      if (s.id == segment) return s.allocations;
    }
    return 0;
  }

  CopiesDone copier_;
  SegmentId dram_ = kNoSegment;
  SegmentId pmem_ = kNoSegment;
};

TEST_F(MasterTierMoveTest, ADramVictimAReaderMayStillReachIsNotDemoted) {
  ASSERT_TRUE(Put("a", kObject).ok());
  ASSERT_TRUE(Put("b", kObject).ok());
  ASSERT_EQ(SegmentOf("a"), dram_);  // both read now: leased for kLeaseMs
  ASSERT_EQ(SegmentOf("b"), dram_);
  clock_.Advance(kLeaseMs + 100);  // leases over, the grace not
  ASSERT_TRUE(Put("c", kObject).ok());
  EXPECT_EQ(master().counters().demotions.load(), 0u) << "a and b are still reachable";
  EXPECT_EQ(Allocations(dram_), 2u) << "a and b stay";
  EXPECT_EQ(Allocations(pmem_), 1u) << "so the put went to the persistent tier";
  EXPECT_EQ(master().Stats().held_bytes, 0u);

  clock_.Advance(kGraceMs);  // no capability reaches a or b any more
  ASSERT_TRUE(Put("d", kObject).ok());
  EXPECT_EQ(master().counters().demotions.load(), 1u);
  EXPECT_EQ(master().Stats().held_bytes, 0u) << "the space a left is free at once";
  EXPECT_EQ(Allocations(dram_), 2u);
  EXPECT_EQ(Allocations(pmem_), 2u);
  EXPECT_EQ(SegmentOf("a"), pmem_) << "the least recent one went down";
  EXPECT_EQ(SegmentOf("d"), dram_) << "and d took its space";
}

// A promotion keeps the persistent copy (the durable one): the object gets a
// DRAM replica first, and nothing of PMEM is freed or held. A reader that may
// still reach the source delays nothing, since no space changes hands.
TEST_F(MasterTierMoveTest, APromotionKeepsThePersistentCopy) {
  PutConfig there;
  there.preferred_segment = "pmem-u1";
  ASSERT_TRUE(Put("p", kObject, there).ok());
  ASSERT_EQ(SegmentOf("p"), pmem_);  // the read that makes it a candidate
  master().RunMaintenance();         // still leased: promoted all the same
  EXPECT_EQ(master().counters().promotions.load(), 1u);
  EXPECT_EQ(copier_.copied, 1u);
  auto r = master().GetReplicaList("p");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->replicas.size(), 2u);
  EXPECT_EQ(r->replicas[0].segment, dram_) << "readers try DRAM first";
  EXPECT_EQ(r->replicas[1].segment, pmem_) << "the persistent copy stays";
  EXPECT_EQ(master().Stats().held_bytes, 0u);
  EXPECT_EQ(Allocations(pmem_), 1u);
  EXPECT_EQ(Allocations(dram_), 1u);
  // Read again: it is DRAM's now, not a candidate for another promotion.
  ASSERT_TRUE(master().GetReplicaList("p").ok());
  master().RunMaintenance();
  EXPECT_EQ(master().counters().promotions.load(), 1u);
}

// --pmem-promote-keeps-copy false: a promotion moves the only copy, and its
// persistent source is freed (held while a reader may still reach it).
class MasterTierMoveOnlyCopyTest : public MasterTierMoveTest {
 protected:
  void SetUp() override {
    config_.pmem_promote_keeps_copy = false;
    MasterTierMoveTest::SetUp();
  }
};

TEST_F(MasterTierMoveOnlyCopyTest, APromotionMovesTheOnlyCopyWhenToldNotToKeepIt) {
  PutConfig there;
  there.preferred_segment = "pmem-u1";
  ASSERT_TRUE(Put("p", kObject, there).ok());
  ASSERT_EQ(SegmentOf("p"), pmem_);
  master().RunMaintenance();
  EXPECT_EQ(master().counters().promotions.load(), 1u);
  EXPECT_EQ(SegmentOf("p"), dram_) << "one replica, in DRAM";
  EXPECT_GT(master().Stats().held_bytes, 0u) << "the source waits for the reader above";
  clock_.Advance(kLeaseMs + kGraceMs + 100);
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().held_bytes, 0u);
  EXPECT_EQ(Allocations(pmem_), 0u);
}

// DRAM's eviction of a promoted object drops only its DRAM copy: no copy, no
// loss; the object is the persistent tier's again (a read promotes it anew).
TEST_F(MasterTierMoveTest, EvictingAPromotedObjectDropsOnlyItsDramCopy) {
  PutConfig there;
  there.preferred_segment = "pmem-u1";
  ASSERT_TRUE(Put("p", kObject, there).ok());
  ASSERT_EQ(SegmentOf("p"), pmem_);
  master().RunMaintenance();
  ASSERT_EQ(master().counters().promotions.load(), 1u);
  clock_.Advance(kLeaseMs + kGraceMs + 100);  // no reader reaches p
  ASSERT_TRUE(Put("a", kObject).ok());         // DRAM holds two: p's copy and a
  clock_.Advance(kLeaseMs + kGraceMs + 100);
  ASSERT_TRUE(Put("b", kObject).ok());  // DRAM is full: its least recent, p, goes
  EXPECT_EQ(master().counters().dram_copies_dropped.load(), 1u);
  EXPECT_EQ(master().counters().demotions.load(), 0u) << "nothing was copied for it";
  EXPECT_EQ(copier_.copied, 1u);
  EXPECT_EQ(master().counters().evictions.load(), 0u);
  EXPECT_EQ(SegmentOf("p"), pmem_) << "on its persistent copy alone";
  EXPECT_EQ(SegmentOf("a"), dram_);
  EXPECT_EQ(SegmentOf("b"), dram_);
  EXPECT_EQ(Allocations(pmem_), 1u);
  // The persistent tier's object again: the read above makes it a candidate.
  clock_.Advance(kLeaseMs + kGraceMs + 100);
  master().RunMaintenance();
  EXPECT_EQ(master().counters().promotions.load(), 2u);
}

// A demotion whose source a reader leased during the copy holds that space
// until the reader's lease and the grace end.
TEST_F(MasterTierMoveTest, AReadDuringADemotionCopyHoldsTheSourceUntilItsCapabilityEnds) {
  class ReadMidCopy final : public ReplicaCopier {
   public:
    explicit ReadMidCopy(MasterService& m) : m_(m) {}
    std::vector<Status> Copy(std::span<const ReplicaCopy> copies, int64_t) override {
      (void)m_.GetReplicaList("a");
      return std::vector<Status>(copies.size(), Status::Ok());
    }
    std::vector<Status> Verify(std::span<const ReplicaCheck> c, int64_t) override {
      return std::vector<Status>(c.size(), Status::Ok());
    }

   private:
    MasterService& m_;
  } reader(master());
  ASSERT_TRUE(Put("a", kObject).ok());
  ASSERT_TRUE(Put("b", kObject).ok());
  clock_.Advance(kLeaseMs + kGraceMs + 100);
  master().SetReplicaCopier(&reader);
  ASSERT_TRUE(Put("c", kObject).ok());  // a, the least recent, is demoted
  EXPECT_EQ(master().counters().demotions.load(), 1u);
  EXPECT_GT(master().Stats().held_bytes, 0u) << "a's DRAM source waits for the reader";
  clock_.Advance(kLeaseMs + kGraceMs + 100);
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().held_bytes, 0u);
  master().SetReplicaCopier(&copier_);  // `reader` goes before the engine
}

}  // namespace
}  // namespace crescent::master
