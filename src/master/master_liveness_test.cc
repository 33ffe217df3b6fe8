// Store-node liveness: heartbeats, the TTL after which a silent node's segments
// unmount, and the kNodeUnknown "remount" signal.
#include "master/master_test_util.h"

namespace crescent::master::testing {
namespace {

class LivenessTest : public MasterTest {
 protected:
  static constexpr int64_t kTtl = 1000;

  void SetUp() override { config_.heartbeat_ttl_ms = kTtl; }

  size_t MountedCount() { return master().ListSegments().size(); }
  bool IsListed(const std::string& name) {
    for (const SegmentInfo& s : master().ListSegments()) {
      if (s.spec.name == name) return true;
    }
    return false;
  }
};

TEST_F(LivenessTest, SilentNodeIsUnmountedAfterTtl) {
  Mount("seg-a", 1 << 20, "node-a");
  ASSERT_TRUE(Put("k", 1000).ok());
  clock_.Advance(kTtl - 1);
  master().RunMaintenance();
  EXPECT_TRUE(IsListed("seg-a"));
  EXPECT_TRUE(Readable("k"));

  clock_.Advance(2);
  master().RunMaintenance();
  EXPECT_FALSE(IsListed("seg-a"));
  EXPECT_EQ(master().GetReplicaList("k").status().code(), ErrorCode::kObjectNotFound);
  EXPECT_FALSE(*master().Exists("k"));
  MasterStats stats = master().Stats();
  EXPECT_EQ(stats.objects, 0u);
  EXPECT_EQ(stats.capacity_bytes, 0u);
  EXPECT_EQ(stats.used_bytes, 0u);
  EXPECT_EQ(master().counters().dropped_objects.load(), 1u);
}

TEST_F(LivenessTest, HeartbeatingNodeSurvivesWhileSilentOneDies) {
  Mount("seg-a", 1 << 20, "node-a");
  Mount("seg-b", 1 << 20, "node-b");
  PutConfig on_a;
  on_a.preferred_segment = "seg-a";
  PutConfig on_b;
  on_b.preferred_segment = "seg-b";
  ASSERT_TRUE(Put("a", 100, on_a).ok());
  ASSERT_TRUE(Put("b", 100, on_b).ok());
  for (int i = 0; i < 20; ++i) {  // 10 TTLs of time, a heartbeat every half TTL
    clock_.Advance(kTtl / 2);
    ASSERT_TRUE(master().Heartbeat("node-a").ok()) << i;
    master().RunMaintenance();
  }
  EXPECT_TRUE(IsListed("seg-a"));
  EXPECT_FALSE(IsListed("seg-b"));
  EXPECT_TRUE(Readable("a"));
  EXPECT_FALSE(Readable("b"));
  EXPECT_EQ(master().Stats().capacity_bytes, 1u << 20);
  EXPECT_EQ(master().counters().dropped_objects.load(), 1u);
}

TEST_F(LivenessTest, EverySegmentOfADeadNodeUnmounts) {
  Mount("a1", 1 << 20, "node-a");
  Mount("a2", 1 << 20, "node-a");
  Mount("b1", 1 << 20, "node-b");
  clock_.Advance(kTtl / 2);
  ASSERT_TRUE(master().Heartbeat("node-b").ok());
  clock_.Advance(kTtl / 2 + 1);
  master().RunMaintenance();
  ASSERT_EQ(MountedCount(), 1u);
  EXPECT_TRUE(IsListed("b1"));
}

TEST_F(LivenessTest, ReplicaOnLiveNodeKeepsObjectReadable) {
  Mount("seg-a", 1 << 20, "node-a");
  SegmentId b = Mount("seg-b", 1 << 20, "node-b");
  PutConfig two;
  two.replica_count = 2;
  ASSERT_TRUE(Put("k", 2000, two).ok());
  clock_.Advance(kTtl);
  ASSERT_TRUE(master().Heartbeat("node-b").ok());
  clock_.Advance(1);
  master().RunMaintenance();
  auto read = master().GetReplicaList("k");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->replicas.size(), 1u);
  EXPECT_EQ(read->replicas[0].segment, b);
  EXPECT_EQ(master().counters().dropped_objects.load(), 0u);
}

TEST_F(LivenessTest, DeadNodeDropsItsPendingPuts) {
  Mount("seg-a", 1 << 20, "node-a");
  auto start = master().PutStart("k", 100, {});
  ASSERT_TRUE(start.ok());
  clock_.Advance(kTtl + 1);  // well inside the put timeout
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().pending_puts, 0u);
  EXPECT_EQ(master().PutEnd("k", start->token).code(), ErrorCode::kPutNotStarted);
}

TEST_F(LivenessTest, HeartbeatFromUnknownNodeAsksForRemount) {
  EXPECT_EQ(master().Heartbeat("ghost").code(), ErrorCode::kNodeUnknown);
  EXPECT_EQ(master().Heartbeat("ghost").code(), ErrorCode::kNodeUnknown);  // not registered
  EXPECT_EQ(master().counters().heartbeat.failures.load(), 2u);
  Mount("seg", 1 << 20, "ghost");
  EXPECT_TRUE(master().Heartbeat("ghost").ok());
}

TEST_F(LivenessTest, ExpiredNodeIsToldToRemountAndThenRecovers) {
  Mount("seg-a", 1 << 20, "node-a");
  ASSERT_TRUE(Put("old", 100).ok());
  clock_.Advance(kTtl + 1);
  master().RunMaintenance();
  ASSERT_FALSE(IsListed("seg-a"));
  EXPECT_EQ(master().Heartbeat("node-a").code(), ErrorCode::kNodeUnknown);

  // The node mounts again under the same segment name and is live once more.
  Mount("seg-a", 1 << 20, "node-a");
  EXPECT_TRUE(master().Heartbeat("node-a").ok());
  EXPECT_FALSE(Readable("old"));  // its old contents are not resurrected
  ASSERT_TRUE(Put("new", 100).ok());
  for (int i = 0; i < 4; ++i) {
    clock_.Advance(kTtl - 1);
    ASSERT_TRUE(master().Heartbeat("node-a").ok());
    master().RunMaintenance();
  }
  EXPECT_TRUE(Readable("new"));
}

TEST_F(LivenessTest, MasterRestartMakesNodesRemount) {
  Mount("seg-a", 1 << 20, "node-a");
  ASSERT_TRUE(master().Heartbeat("node-a").ok());
  Start();  // a new MasterService: the restarted master knows no node
  EXPECT_EQ(master().Heartbeat("node-a").code(), ErrorCode::kNodeUnknown);
  EXPECT_TRUE(master().ListSegments().empty());
  Mount("seg-a", 1 << 20, "node-a");
  EXPECT_TRUE(master().Heartbeat("node-a").ok());
  clock_.Advance(kTtl / 2);
  ASSERT_TRUE(master().Heartbeat("node-a").ok());
  clock_.Advance(kTtl / 2 + 1);
  master().RunMaintenance();
  EXPECT_TRUE(IsListed("seg-a"));
  EXPECT_TRUE(Put("k", 100).ok());
}

TEST_F(LivenessTest, DeadNodesSegmentNameCanBeTakenByAnotherNode) {
  Mount("shared-name", 1 << 20, "node-a");
  clock_.Advance(kTtl / 2);
  Mount("other", 1 << 20, "node-b");
  clock_.Advance(kTtl / 2 + 1);
  master().RunMaintenance();
  ASSERT_FALSE(IsListed("shared-name"));
  EXPECT_TRUE(IsListed("other"));
  Mount("shared-name", 2 << 20, "node-b");
  EXPECT_EQ(master().Stats().capacity_bytes, 3u << 20);
  // The old owner no longer owns it.
  EXPECT_EQ(master().UnmountSegment("shared-name", "node-a").code(), ErrorCode::kNotOwner);
}

}  // namespace
}  // namespace crescent::master::testing
