// What the engine reports for its metrics beyond the plain counters:
// evictions by reason, pinned objects, and store-node liveness.
#include <gtest/gtest.h>

#include "master/master_test_util.h"

namespace crescent::master {
namespace {

class MasterObservabilityTest : public testing::MasterTest {};

TEST_F(MasterObservabilityTest, EvictionsAreCountedByReason) {
  config_.high_watermark = 0.5;
  config_.evict_ratio = 0.25;
  Mount("seg", 64 * 1024);
  // Fill past the watermark: the maintenance round evicts.
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(Put("w" + std::to_string(i), 4096).ok());
  master().RunMaintenance();
  const uint64_t by_round = master().counters().evictions_watermark.load();
  EXPECT_GT(by_round, 0u);
  EXPECT_EQ(master().counters().evictions_for_put.load(), 0u);
  // Fill to the brim: a put that finds no space evicts for itself.
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(Put("p" + std::to_string(i), 4096).ok());
  EXPECT_GT(master().counters().evictions_for_put.load(), 0u);
  EXPECT_EQ(master().counters().evictions_watermark.load(), by_round);
  EXPECT_EQ(master().counters().evictions.load(),
            master().counters().evictions_watermark.load() +
                master().counters().evictions_for_put.load());
}

TEST_F(MasterObservabilityTest, PinsAreCountedWhilePinned) {
  Mount("seg", 1 << 20);
  PutConfig hard;
  hard.hard_pin = true;
  PutConfig soft;
  soft.soft_pin_ttl_ms = 60'000;
  ASSERT_TRUE(Put("h1", 100, hard).ok());
  ASSERT_TRUE(Put("h2", 100, hard).ok());
  ASSERT_TRUE(Put("s1", 100, soft).ok());
  ASSERT_TRUE(Put("plain", 100).ok());
  EXPECT_EQ(master().Pins().hard, 2u);
  EXPECT_EQ(master().Pins().soft, 1u);
  ASSERT_TRUE(master().Remove("h1").ok());
  EXPECT_EQ(master().Pins().hard, 1u);
  clock_.Advance(60'001);
  master().RunMaintenance();  // the soft pin ends: an ordinary object again
  EXPECT_EQ(master().Pins().soft, 0u);
}

TEST_F(MasterObservabilityTest, LeasedObjectsAreThoseReadWithinTheirLease) {
  config_.lease_ms = 1000;
  Mount("seg", 1 << 20);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Put("k" + std::to_string(i), 100).ok());
  EXPECT_EQ(master().CountLeased(), 0u);
  ASSERT_TRUE(master().GetReplicaList("k1").ok());
  ASSERT_TRUE(master().GetReplicaList("k3").ok());
  EXPECT_EQ(master().CountLeased(), 2u);
  master().RunMaintenance();  // the touches fold into the leases
  EXPECT_EQ(master().CountLeased(), 2u);
  clock_.Advance(1001);
  EXPECT_EQ(master().CountLeased(), 0u);
}

TEST_F(MasterObservabilityTest, NodesShowTheirHeartbeatAgeAndSuspicion) {
  config_.heartbeat_ttl_ms = 100'000;
  const SegmentId a = Mount("seg-a", 1 << 20, "node-a");
  Mount("seg-b", 1 << 20, "node-b");
  clock_.Advance(700);
  ASSERT_TRUE(master().Heartbeat("node-b").ok());
  const SegmentId reported[] = {a};
  EXPECT_EQ(master().ReportUnreachable(reported), 1u);
  const auto nodes = master().ListNodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].node, "node-a");
  EXPECT_EQ(nodes[0].heartbeat_age_ms, 700);
  EXPECT_TRUE(nodes[0].suspect);
  EXPECT_EQ(nodes[0].segments, 1u);
  EXPECT_EQ(nodes[1].node, "node-b");
  EXPECT_EQ(nodes[1].heartbeat_age_ms, 0);
  EXPECT_FALSE(nodes[1].suspect);
}

}  // namespace
}  // namespace crescent::master
