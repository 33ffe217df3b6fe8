// Moves between tiers never hold their source's space (master_tiering.cc): an
// object moves only once no read capability can reach its source (its lease
// and the fencing grace are over), so the source is freed when the move
// commits. A DRAM victim that a reader may still reach is passed over by a
// demotion (a put then goes to PMEM), and a PMEM object read a moment ago is
// promoted only after the grace. The copier here is a stand-in that reports
// every copy done; the engine never touches bytes.
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

class CopiesDone final : public ReplicaCopier {
 public:
  std::vector<Status> Copy(std::span<const ReplicaCopy> copies, int64_t) override {
    copied += copies.size();
    return std::vector<Status>(copies.size(), Status::Ok());
  }
  std::vector<Status> Verify(std::span<const ReplicaCheck> checks, int64_t) override {
    return std::vector<Status>(checks.size(), Status::Ok());
  }
  size_t copied = 0;
};

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

TEST_F(MasterTierMoveTest, APersistentObjectReadIsPromotedOnlyOnceNoCapabilityReachesIt) {
  PutConfig there;
  there.preferred_segment = "pmem-u1";
  ASSERT_TRUE(Put("p", kObject, there).ok());
  ASSERT_EQ(SegmentOf("p"), pmem_);  // the read that makes it a candidate
  master().RunMaintenance();         // the read reaches the policy
  EXPECT_EQ(master().counters().promotions.load(), 0u) << "leased";
  clock_.Advance(kLeaseMs + 100);
  master().RunMaintenance();
  EXPECT_EQ(master().counters().promotions.load(), 0u) << "the lease is over, the grace not";
  EXPECT_EQ(copier_.copied, 0u);
  clock_.Advance(kGraceMs);
  master().RunMaintenance();
  EXPECT_EQ(master().counters().promotions.load(), 1u);
  EXPECT_EQ(master().Stats().held_bytes, 0u) << "its PMEM space is free at once";
  EXPECT_EQ(Allocations(pmem_), 0u);
  EXPECT_EQ(SegmentOf("p"), dram_);
}

TEST_F(MasterTierMoveTest, AnObjectReadAtEveryPassIsPromotedAfterItsWaitsWithItsSourceHeld) {
  PutConfig there;
  there.preferred_segment = "pmem-u1";
  ASSERT_TRUE(Put("p", kObject, there).ok());
  ASSERT_EQ(SegmentOf("p"), pmem_);
  // Read again before every pass: a capability always reaches it.
  int passes = 0;
  while (master().counters().promotions.load() == 0 && passes < 100) {
    ASSERT_TRUE(master().GetReplicaList("p").ok());
    master().RunMaintenance();
    ++passes;
    clock_.Advance(10);
  }
  EXPECT_EQ(master().counters().promotions.load(), 1u);
  EXPECT_GT(passes, MasterService::kPromoteWaits) << "it waited first";
  EXPECT_LT(passes, 3 * MasterService::kPromoteWaits) << "then it was promoted anyway";
  EXPECT_EQ(SegmentOf("p"), dram_);
  EXPECT_GT(master().Stats().held_bytes, 0u) << "its persistent source waits for the readers";
  EXPECT_EQ(Allocations(pmem_), 1u);
  clock_.Advance(kLeaseMs + kGraceMs + 100);
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().held_bytes, 0u);
  EXPECT_EQ(Allocations(pmem_), 0u);
}

TEST_F(MasterTierMoveTest, AReadDuringTheCopyHoldsTheSourceUntilItsCapabilityEnds) {
  // A reader that leased the object after the move was chosen may be copying
  // out of the source: that space waits for its lease and the grace.
  class ReadMidCopy final : public ReplicaCopier {
   public:
    explicit ReadMidCopy(MasterService& m) : m_(m) {}
    std::vector<Status> Copy(std::span<const ReplicaCopy> copies, int64_t) override {
      (void)m_.GetReplicaList("p");
      return std::vector<Status>(copies.size(), Status::Ok());
    }
    std::vector<Status> Verify(std::span<const ReplicaCheck> c, int64_t) override {
      return std::vector<Status>(c.size(), Status::Ok());
    }

   private:
    MasterService& m_;
  } reader(master());
  PutConfig there;
  there.preferred_segment = "pmem-u1";
  ASSERT_TRUE(Put("p", kObject, there).ok());
  ASSERT_EQ(SegmentOf("p"), pmem_);
  master().RunMaintenance();
  clock_.Advance(kLeaseMs + kGraceMs + 100);
  master().SetReplicaCopier(&reader);
  master().RunMaintenance();
  EXPECT_EQ(master().counters().promotions.load(), 1u);
  EXPECT_GT(master().Stats().held_bytes, 0u);
  clock_.Advance(kLeaseMs + kGraceMs + 100);
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().held_bytes, 0u);
  master().SetReplicaCopier(&copier_);  // `reader` goes before the engine
}

}  // namespace
}  // namespace crescent::master
