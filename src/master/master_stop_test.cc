// The engine's stop (MasterService::BeginShutdown): the host ends the copies
// and checks in flight (the copier is closed) so that nothing waits for a
// stopped node, and none of them may then read as a node's answer: a demotion
// the stop ended keeps its object, a check it ended counts no try and drops
// nothing; and a put that needs room is refused retryably, evicting nothing.
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "master/master_test_util.h"
#include "master/replica_copier.h"
#include "master/scripted_node_for_test.h"

namespace crescent::master {
namespace {

constexpr uint64_t kSegBytes = 1 << 20;
constexpr uint64_t kObject = 400 << 10;  // two fit in a segment
constexpr int64_t kLeaseMs = 500;
constexpr int64_t kGraceMs = 1'000;

// A node whose copies are in flight when the stop comes: each Copy begins the
// engine's stop, then fails as a closed copier's calls do.
class StopDuringCopies final : public ReplicaCopier {
 public:
  std::vector<Status> Copy(std::span<const ReplicaCopy> copies, int64_t) override {
    if (engine != nullptr) engine->BeginShutdown();
    return std::vector<Status>(copies.size(), Status(ErrorCode::kClosed, "the copier is closed"));
  }
  std::vector<Status> Verify(std::span<const ReplicaCheck> checks, int64_t) override {
    return std::vector<Status>(checks.size(), Status::Ok());
  }
  void Close() override { closed = true; }
  MasterService* engine = nullptr;
  bool closed = false;
};

class MasterStopTest : public testing::MasterTest {
 protected:
  void SetUp() override {
    config_.lease_ms = kLeaseMs;
    config_.capability_grace_ms = kGraceMs;
    config_.high_watermark = 1.0;  // no background rounds: only puts make room
  }
  SegmentId SegmentOf(const std::string& key) {
    auto r = master().GetReplicaList(key);
    return r.ok() && r->replicas.size() == 1 ? r->replicas[0].segment : kNoSegment;
  }
};

TEST_F(MasterStopTest, ADemotionTheStopEndsKeepsItsObjectWhereItWas) {
  StopDuringCopies copier;
  copier.engine = &master();
  master().SetReplicaCopier(&copier);
  auto dram = master().MountSegment({"dram", kSegBytes, "node-1", "n:1#e1", Tier::kDram, 7});
  auto pmem = master().MountSegment({"pmem-u1", kSegBytes, "node-1", "n:1#e1", Tier::kPmem, 7});
  ASSERT_TRUE(dram.ok() && pmem.ok());
  ASSERT_TRUE(Put("a", kObject).ok());
  ASSERT_TRUE(Put("b", kObject).ok());
  clock_.Advance(kLeaseMs + kGraceMs + 100);  // a and b may be demoted
  // DRAM is full: the put demotes a, and the stop comes during the copy. The
  // put itself may still go to the persistent tier's free room.
  (void)Put("c", kObject);
  EXPECT_TRUE(copier.closed);
  EXPECT_EQ(master().counters().evictions.load(), 0u) << "no victim lost to the stop";
  EXPECT_EQ(master().counters().demotions.load(), 0u);
  EXPECT_EQ(SegmentOf("a"), *dram) << "a stays where it was";
  EXPECT_EQ(SegmentOf("b"), *dram);
}

TEST_F(MasterStopTest, APutThatNeedsRoomOnceStoppingIsRefusedRetryablyAndEvictsNothing) {
  Mount("dram", kSegBytes);
  ASSERT_TRUE(Put("a", kObject).ok());
  ASSERT_TRUE(Put("b", kObject).ok());
  clock_.Advance(kLeaseMs + kGraceMs + 100);
  master().BeginShutdown();
  const Status s = Put("c", kObject);
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable) << s.ToString();
  EXPECT_EQ(master().counters().evictions.load(), 0u);
  EXPECT_TRUE(Readable("a"));
  EXPECT_TRUE(Readable("b"));
}

// A check at its last try (three went unanswered) is in flight when the
// stop comes: it is no verdict and no try, so the replica is not dropped as
// "never checked", and it stays unserved, still pending.
TEST_F(MasterStopTest, ACheckTheStopEndsCountsNoTryAndDropsNothing) {
  testing::ScriptedNode node;
  node.answer = [this](uint64_t, uint64_t nth) {
    if (nth < 3) return Status(ErrorCode::kTimeout, "did not answer in time");
    master().BeginShutdown();
    return Status(ErrorCode::kClosed, "the copier is closed");
  };
  master().SetReplicaCopier(&node);
  auto spec = [](const std::string& node_id, const std::string& endpoint, uint64_t token) {
    return SegmentSpec{"pmem-u1", kSegBytes, node_id, endpoint, Tier::kPmem, token};
  };
  ASSERT_TRUE(master().MountSegment(spec("node-1", "n:1#e1", 7)).ok());
  PutConfig there;
  there.preferred_segment = "pmem-u1";
  auto r = master().PutStart("k", 1000, there);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(master().PutEnd("k", r->token, /*checksum=*/42).ok());
  ASSERT_TRUE(master().MountSegment(spec("node-2", "n:2#e9", 99)).ok());  // a take-over
  ASSERT_EQ(master().PendingVerifications(), 1u);
  for (int pass = 0; pass < 5; ++pass) master().RunMaintenance();
  EXPECT_EQ(node.asked[r->replicas[0].offset], 4u) << "three unanswered, one stopped, then none";
  EXPECT_EQ(master().counters().verify_skipped.load(), 0u);
  EXPECT_EQ(master().PendingVerifications(), 1u) << "still held, not dropped";
  EXPECT_FALSE(*master().Exists("k")) << "not served unchecked";
  EXPECT_EQ(master().Stats().objects, 1u);
}

}  // namespace
}  // namespace crescent::master
