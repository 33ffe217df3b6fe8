// Suspect nodes: a client that could not reach a node reports it
// (ReportUnreachable), and placement skips that node until it proves alive;
// a token's report spares the last node that heartbeats; a cluster with nowhere to
// place answers UNAVAILABLE (retryable), not NO_SPACE.
#include "master/master_test_util.h"

namespace crescent::master::testing {
namespace {

class SuspectTest : public MasterTest {
 protected:
  static constexpr int64_t kHold = 1000;

  void SetUp() override {
    config_.suspect_hold_ms = kHold;
    config_.heartbeat_ttl_ms = 100 * kHold;
  }

  // The segment PutStart places `key` on (one replica).
  SegmentId PlacedOn(const std::string& key, uint64_t size = 1000) {
    auto r = master().PutStart(key, size, PutConfig{});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return 0;
    EXPECT_TRUE(master().PutEnd(key, r->token).ok());
    return r->replicas.at(0).segment;
  }
};

TEST_F(SuspectTest, PlacementSkipsAReportedNodeThoughItIsTheEmptiest) {
  SegmentId a = Mount("seg-a", 1 << 20, "node-a");
  SegmentId b = Mount("seg-b", 4 << 20, "node-b");  // the emptiest: placement's first choice
  EXPECT_EQ(PlacedOn("before"), b);
  SegmentId reported[] = {b};
  EXPECT_EQ(master().ReportUnreachable(reported), 1u);
  for (const std::string& k : Keys("k", 10)) EXPECT_EQ(PlacedOn(k), a) << k;
  // Reads still see its replicas: the node may only be unreachable from one client.
  EXPECT_TRUE(Readable("before"));
  EXPECT_EQ(master().counters().report_unreachable.items.load(), 1u);
}

TEST_F(SuspectTest, OnlyAHeartbeatAHoldTimeAfterTheReportClearsIt) {
  SegmentId a = Mount("seg-a", 1 << 20, "node-a");
  SegmentId b = Mount("seg-b", 4 << 20, "node-b");
  SegmentId reported[] = {b};
  ASSERT_EQ(master().ReportUnreachable(reported), 1u);
  // A heartbeat sent before the report may arrive just after it.
  clock_.Advance(kHold - 1);
  ASSERT_TRUE(master().Heartbeat("node-b").ok());
  EXPECT_EQ(PlacedOn("early"), a);
  clock_.Advance(1);
  ASSERT_TRUE(master().Heartbeat("node-b").ok());
  EXPECT_EQ(PlacedOn("late"), b);
}

TEST_F(SuspectTest, ANodeThatMountsAgainIsNotSuspect) {
  Mount("seg-a", 1 << 20, "node-a");
  SegmentId b = Mount("seg-b", 4 << 20, "node-b");
  SegmentId reported[] = {b};
  ASSERT_EQ(master().ReportUnreachable(reported), 1u);
  ASSERT_TRUE(master().UnmountSegment("seg-b", "node-b").ok());
  SegmentId b2 = Mount("seg-b", 4 << 20, "node-b");
  EXPECT_EQ(PlacedOn("k"), b2);
}

TEST_F(SuspectTest, AStaleReportChangesNothing) {
  SegmentId a = Mount("seg-a", 4 << 20, "node-a");
  ASSERT_TRUE(master().UnmountSegment("seg-a", "node-a").ok());
  SegmentId a2 = Mount("seg-a", 4 << 20, "node-a");
  ASSERT_NE(a, a2);
  SegmentId stale[] = {a, 0, 12345};
  EXPECT_EQ(master().ReportUnreachable(stale), 0u);
  EXPECT_EQ(PlacedOn("k"), a2);
  EXPECT_EQ(master().counters().report_unreachable.failures.load(), 3u);
}

// Issue 41: "ReportUnreachable for every node makes every put answer
// UNAVAILABLE". A token's report (spare_last) does not mark the last node left
// unsuspected while it heartbeats: puts keep a place to go.
TEST_F(SuspectTest, ATokensReportSparesTheLastNodeWhileItHeartbeats) {
  SegmentId a = Mount("seg-a", 1 << 20, "node-a");
  SegmentId reported[] = {a};
  clock_.Advance(2 * kHold);
  EXPECT_EQ(master().ReportUnreachable(reported, /*spare_last=*/true), 0u);
  EXPECT_EQ(PlacedOn("new", 64 << 10), a);

  SegmentId b = Mount("seg-b", 1 << 20, "node-b");
  SegmentId both[] = {a, b};
  EXPECT_EQ(master().ReportUnreachable(both, true), 1u) << "node-a marked, node-b then the last";
  for (const std::string& k : Keys("after", 4)) EXPECT_EQ(PlacedOn(k), b) << k;
  SegmentId last[] = {b};
  EXPECT_EQ(master().ReportUnreachable(last), 1u) << "no credentials: the last one too";
}

// The last node gone silent too is dead, not slandered: even a token's report
// marks it, and a put answers UNAVAILABLE at once rather than evict to place
// on it. So does any report on a master without credentials.
TEST_F(SuspectTest, WithEveryNodeSuspectAPutIsUnavailableAndNothingIsEvicted) {
  SegmentId a = Mount("seg-a", 1 << 20, "node-a");
  const std::vector<std::string> keys = Keys("k", 8);
  for (const std::string& k : keys) ASSERT_TRUE(Put(k, 64 << 10).ok());
  SegmentId reported[] = {a};
  ASSERT_EQ(master().ReportUnreachable(reported, /*spare_last=*/true), 0u);
  clock_.Advance(2 * kHold + 1);
  ASSERT_EQ(master().ReportUnreachable(reported, /*spare_last=*/true), 1u);
  auto r = master().PutStart("new", 64 << 10, PutConfig{});
  EXPECT_EQ(r.status().code(), ErrorCode::kUnavailable) << r.status().ToString();
  // A put that cannot go anywhere must not empty the cache trying.
  for (const std::string& k : keys) EXPECT_TRUE(Readable(k)) << k;
  EXPECT_EQ(master().counters().evictions.load(), 0u);
}

TEST_F(SuspectTest, APutWithNoSegmentMountedIsUnavailableNotNoSpace) {
  auto r = master().PutStart("k", 1000, PutConfig{});
  EXPECT_EQ(r.status().code(), ErrorCode::kUnavailable) << r.status().ToString();
  EXPECT_NE(r.status().message().find("no segment is mounted"), std::string::npos);
  Mount("seg-a", 1 << 20, "node-a");
  EXPECT_TRUE(Put("k", 1000).ok());
}

}  // namespace
}  // namespace crescent::master::testing
