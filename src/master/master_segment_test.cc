// Segments: mount and unmount, replica placement on distinct segments, and what
// an unmount does to the objects whose replicas it held.
#include <set>
#include <thread>

#include "master/master_test_util.h"
#include "master/pausing_clock_for_test.h"

namespace crescent::master::testing {
namespace {

class SegmentTest : public MasterTest {
 protected:
  // Used bytes of the mounted segment `name`, or -1 when it is not listed.
  int64_t UsedOf(const std::string& name) {
    for (const SegmentInfo& s : master().ListSegments()) {
      if (s.spec.name == name) return static_cast<int64_t>(s.used_bytes);
    }
    return -1;
  }

  std::set<SegmentId> SegmentsOf(const std::vector<ReplicaDescriptor>& replicas) {
    std::set<SegmentId> out;
    for (const ReplicaDescriptor& r : replicas) out.insert(r.segment);
    return out;
  }
};

TEST_F(SegmentTest, MountListsSegmentsAndAddsCapacity) {
  SegmentId a = Mount("seg-a", 1 << 20, "node-a");
  SegmentId b = Mount("seg-b", 2 << 20, "node-b");
  EXPECT_NE(a, kNoSegment);
  EXPECT_NE(b, kNoSegment);
  EXPECT_NE(a, b);
  auto list = master().ListSegments();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].id, a);
  EXPECT_EQ(list[0].spec.name, "seg-a");
  EXPECT_EQ(list[0].spec.owner_node, "node-a");
  EXPECT_EQ(list[0].spec.capacity, 1u << 20);
  EXPECT_EQ(list[0].used_bytes, 0u);
  EXPECT_EQ(list[1].id, b);
  EXPECT_EQ(list[1].spec.endpoint, "node-b:7000");
  MasterStats stats = master().Stats();
  EXPECT_EQ(stats.capacity_bytes, 3u << 20);
  EXPECT_EQ(stats.segments, 2u);
}

TEST_F(SegmentTest, DuplicateNameIsRefusedAndChangesNothing) {
  SegmentId a = Mount("seg-a", 1 << 20, "node-a");
  auto again = master().MountSegment({"seg-a", 4 << 20, "node-a", "node-a:7000", Tier::kDram});
  EXPECT_EQ(again.status().code(), ErrorCode::kSegmentAlreadyExists);
  auto other = master().MountSegment({"seg-a", 4 << 20, "node-b", "node-b:7000", Tier::kDram});
  EXPECT_EQ(other.status().code(), ErrorCode::kSegmentAlreadyExists);
  auto list = master().ListSegments();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].id, a);
  EXPECT_EQ(list[0].spec.owner_node, "node-a");
  EXPECT_EQ(master().Stats().capacity_bytes, 1u << 20);
  EXPECT_EQ(master().counters().mount.failures.load(), 2u);
}

TEST_F(SegmentTest, BadSpecsAreRefused) {
  EXPECT_EQ(master().MountSegment({"", 1 << 20, "node-a", "e", Tier::kDram}).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(master().MountSegment({"seg", 1 << 20, "", "e", Tier::kDram}).status().code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(master().MountSegment({"seg", 0, "node-a", "e", Tier::kDram}).status().code(),
            ErrorCode::kInvalidSize);
  EXPECT_EQ(master()
                .MountSegment({"seg", config_.allocation_alignment - 1, "node-a", "e", Tier::kDram})
                .status()
                .code(),
            ErrorCode::kInvalidSize);
  EXPECT_TRUE(master().ListSegments().empty());
  EXPECT_EQ(master().Stats().capacity_bytes, 0u);
  // A refused mount does not make its node known.
  EXPECT_EQ(master().Heartbeat("node-a").code(), ErrorCode::kNodeUnknown);
  // The name stays free for a valid mount.
  EXPECT_NE(Mount("seg", 1 << 20), kNoSegment);
}

// Issue 41: a node that claims a huge segment would draw most puts.
TEST_F(SegmentTest, ASegmentAboveTheSizeLimitIsRefused) {
  EXPECT_EQ(config_.max_segment_bytes, uint64_t{16} << 40) << "the default: 16 TiB";
  config_.max_segment_bytes = 64 << 20;
  auto r = master().MountSegment({"big", (64 << 20) + 4096, "node-a", "e", Tier::kDram});
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << r.status().ToString();
  EXPECT_NE(r.status().message().find("--max-segment-size"), std::string::npos);
  EXPECT_TRUE(master().ListSegments().empty());
  EXPECT_EQ(master().Heartbeat("node-a").code(), ErrorCode::kNodeUnknown);
  EXPECT_NE(Mount("big", 64 << 20), kNoSegment) << "the limit itself is allowed";
}

TEST_F(SegmentTest, AnUnmountForAnyOwnerTakesEveryMount) {
  Mount("seg-a", 1 << 20, "node-a");
  EXPECT_EQ(master().UnmountSegment("seg-a", "node-b", 7).code(), ErrorCode::kNotOwner);
  EXPECT_TRUE(master().UnmountSegment("seg-a", "", 0, /*any_owner=*/true).ok());
  EXPECT_TRUE(master().ListSegments().empty());
}

TEST_F(SegmentTest, UnmountByWrongOwnerIsRefusedAndChangesNothing) {
  Mount("seg-a", 1 << 20, "node-a");
  ASSERT_TRUE(Put("k", 1000).ok());
  uint64_t used = master().Stats().used_bytes;
  EXPECT_EQ(master().UnmountSegment("seg-a", "node-b").code(), ErrorCode::kNotOwner);
  EXPECT_EQ(master().ListSegments().size(), 1u);
  EXPECT_EQ(master().Stats().capacity_bytes, 1u << 20);
  EXPECT_EQ(master().Stats().used_bytes, used);
  EXPECT_TRUE(Readable("k"));
  EXPECT_EQ(master().counters().dropped_objects.load(), 0u);
  // The owner still can.
  EXPECT_TRUE(master().UnmountSegment("seg-a", "node-a").ok());
}

TEST_F(SegmentTest, UnmountUnknownSegmentIsNotFound) {
  EXPECT_EQ(master().UnmountSegment("nope", "node-a").code(), ErrorCode::kSegmentNotFound);
  Mount("seg-a", 1 << 20, "node-a");
  ASSERT_TRUE(master().UnmountSegment("seg-a", "node-a").ok());
  EXPECT_EQ(master().UnmountSegment("seg-a", "node-a").code(), ErrorCode::kSegmentNotFound);
  EXPECT_TRUE(master().ListSegments().empty());
}

// Ids are reused by slot: a master whose nodes remount again and again (each
// liveness drop is a remount) never runs out of them (it refused the 65536th
// mount before), and the slot's incarnation keeps an id from repeating before
// that slot has been mounted 2^16 times.
TEST_F(SegmentTest, MoreMountsThanIdSlotsSucceed) {
  std::set<SegmentId> seen;
  for (int i = 0; i < 70'000; ++i) {
    SegmentId id = Mount("flap", 1 << 20, "node-a");
    ASSERT_NE(id, kNoSegment) << "mount " << i;
    if (i < (1 << 16)) {
      ASSERT_TRUE(seen.insert(id).second) << "id " << id << " repeated at " << i;
    }
    ASSERT_TRUE(master().UnmountSegment("flap", "node-a").ok());
  }
}

// Space quarantined for a replica of an earlier incarnation of a slot is
// released into nothing: it must not be freed into the allocator of the
// segment that took the slot since.
TEST_F(SegmentTest, AStaleReplicaIsNeverFreedIntoTheSlotsNextSegment) {
  config_.heartbeat_ttl_ms = 1'000'000;  // no node expires while the clock jumps
  Mount("seg-a", 1 << 20, "node-a");
  ASSERT_TRUE(Put("k", 4096).ok());
  ASSERT_TRUE(master().GetReplicaList("k").ok());  // a read lease: removal quarantines
  ASSERT_TRUE(master().Remove("k", /*force=*/true).ok());
  ASSERT_TRUE(master().UnmountSegment("seg-a", "node-a").ok());
  Mount("seg-b", 1 << 20, "node-b");  // takes the slot
  ASSERT_TRUE(Put("fresh", 4096).ok());
  int64_t used = UsedOf("seg-b");
  clock_.Advance(config_.lease_ms + config_.capability_grace_ms + 10);
  master().RunMaintenance();
  EXPECT_EQ(UsedOf("seg-b"), used) << "the stale slot was freed into the new segment";
  EXPECT_TRUE(Readable("fresh"));
}

TEST_F(SegmentTest, RemountAfterUnmountGetsAFreshId) {
  SegmentId first = Mount("seg-a", 1 << 20, "node-a");
  ASSERT_TRUE(Put("k", 100).ok());
  ASSERT_TRUE(master().UnmountSegment("seg-a", "node-a").ok());
  SegmentId second = Mount("seg-a", 1 << 20, "node-a");
  EXPECT_NE(second, kNoSegment);
  EXPECT_NE(second, first);  // the slot's next incarnation: old replicas stay dead
  EXPECT_FALSE(Readable("k"));
  EXPECT_EQ(UsedOf("seg-a"), 0);
}

TEST_F(SegmentTest, ReplicasGoToDistinctSegments) {
  SegmentId a = Mount("seg-a", 1 << 20, "node-a");
  SegmentId b = Mount("seg-b", 1 << 20, "node-b");
  SegmentId c = Mount("seg-c", 1 << 20, "node-c");
  PutConfig cfg;
  cfg.replica_count = 3;
  auto start = master().PutStart("k", 5000, cfg);
  ASSERT_TRUE(start.ok()) << start.status().ToString();
  ASSERT_EQ(start->replicas.size(), 3u);
  EXPECT_EQ(SegmentsOf(start->replicas), (std::set<SegmentId>{a, b, c}));
  for (const ReplicaDescriptor& r : start->replicas) {
    EXPECT_EQ(r.length, 5000u);
    std::string node = r.segment == a ? "node-a" : r.segment == b ? "node-b" : "node-c";
    EXPECT_EQ(r.endpoint, node + ":7000");
  }
  ASSERT_TRUE(master().PutEnd("k", start->token).ok());
  auto read = master().GetReplicaList("k");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->replicas.size(), 3u);
  EXPECT_EQ(SegmentsOf(read->replicas), (std::set<SegmentId>{a, b, c}));
  EXPECT_GT(UsedOf("seg-a"), 0);
  EXPECT_GT(UsedOf("seg-b"), 0);
  EXPECT_GT(UsedOf("seg-c"), 0);
}

TEST_F(SegmentTest, FewerSegmentsThanReplicasGivesOnePerSegment) {
  SegmentId a = Mount("seg-a", 1 << 20, "node-a");
  SegmentId b = Mount("seg-b", 1 << 20, "node-b");
  PutConfig cfg;
  cfg.replica_count = 3;
  auto start = master().PutStart("k", 5000, cfg);
  ASSERT_TRUE(start.ok()) << start.status().ToString();
  ASSERT_EQ(start->replicas.size(), 2u);
  EXPECT_EQ(SegmentsOf(start->replicas), (std::set<SegmentId>{a, b}));
  ASSERT_TRUE(master().PutEnd("k", start->token).ok());
  EXPECT_EQ(master().GetReplicaList("k")->replicas.size(), 2u);
  // Two replicas' worth of space is charged, not three.
  EXPECT_EQ(UsedOf("seg-a"), UsedOf("seg-b"));
  EXPECT_EQ(master().Stats().used_bytes, 2 * static_cast<uint64_t>(UsedOf("seg-a")));
}

TEST_F(SegmentTest, SingleReplicasSpreadOverEmptiestSegment) {
  SegmentId a = Mount("seg-a", 1 << 20, "node-a");
  SegmentId b = Mount("seg-b", 1 << 20, "node-b");
  auto first = master().PutStart("k1", 4096, {});
  auto second = master().PutStart("k2", 4096, {});
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(second.ok());
  std::set<SegmentId> used = {first->replicas[0].segment, second->replicas[0].segment};
  EXPECT_EQ(used, (std::set<SegmentId>{a, b}));
}

TEST_F(SegmentTest, PreferredSegmentIsUsedFirst) {
  Mount("seg-a", 1 << 20, "node-a");
  Mount("seg-b", 1 << 20, "node-b");
  SegmentId c = Mount("seg-c", 1 << 20, "node-c");
  PutConfig cfg;
  cfg.preferred_segment = "seg-c";
  for (const std::string& key : Keys("k", 5)) {
    auto start = master().PutStart(key, 4096, cfg);
    ASSERT_TRUE(start.ok());
    ASSERT_EQ(start->replicas.size(), 1u);
    EXPECT_EQ(start->replicas[0].segment, c) << key;  // even though the others are emptier
  }
  EXPECT_EQ(UsedOf("seg-a"), 0);
  EXPECT_EQ(UsedOf("seg-b"), 0);
  // With more replicas the preferred one comes first and the rest go elsewhere.
  cfg.replica_count = 2;
  auto two = master().PutStart("two", 4096, cfg);
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->replicas.size(), 2u);
  EXPECT_EQ(two->replicas[0].segment, c);
  EXPECT_NE(two->replicas[1].segment, c);
}

TEST_F(SegmentTest, FullOrUnknownPreferredSegmentFallsBack) {
  SegmentId a = Mount("seg-a", 1 << 20, "node-a");
  SegmentId small = Mount("small", 4096, "node-b");
  PutConfig cfg;
  cfg.preferred_segment = "small";
  auto fill = master().PutStart("fill", 4096, cfg);
  ASSERT_TRUE(fill.ok());
  EXPECT_EQ(fill->replicas[0].segment, small);
  auto next = master().PutStart("next", 4096, cfg);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->replicas[0].segment, a);
  cfg.preferred_segment = "no-such-segment";
  auto other = master().PutStart("other", 100, cfg);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_EQ(other->replicas[0].segment, a);
}

TEST_F(SegmentTest, LocalNodeSegmentsArePreferred) {
  SegmentId a = Mount("seg-a", 4 << 20, "node-a");  // emptiest, but remote
  SegmentId b1 = Mount("seg-b1", 1 << 20, "node-b");
  SegmentId b2 = Mount("seg-b2", 1 << 20, "node-b");
  PutConfig cfg;
  cfg.local_node = "node-b";
  for (const std::string& key : Keys("k", 4)) {
    auto start = master().PutStart(key, 4096, cfg);
    ASSERT_TRUE(start.ok());
    SegmentId s = start->replicas[0].segment;
    EXPECT_TRUE(s == b1 || s == b2) << key;
  }
  EXPECT_EQ(UsedOf("seg-a"), 0);
  cfg.replica_count = 3;
  auto three = master().PutStart("three", 4096, cfg);
  ASSERT_TRUE(three.ok());
  ASSERT_EQ(three->replicas.size(), 3u);
  // Both local segments before the remote one.
  EXPECT_EQ(SegmentsOf(std::vector<ReplicaDescriptor>(three->replicas.begin(),
                                                      three->replicas.begin() + 2)),
            (std::set<SegmentId>{b1, b2}));
  EXPECT_EQ(three->replicas[2].segment, a);
}

TEST_F(SegmentTest, PreferredSegmentRanksAboveLocalNode) {
  SegmentId a = Mount("seg-a", 1 << 20, "node-a");
  SegmentId b = Mount("seg-b", 1 << 20, "node-b");
  Mount("seg-c", 1 << 20, "node-c");
  PutConfig cfg;
  cfg.preferred_segment = "seg-a";
  cfg.local_node = "node-b";
  cfg.replica_count = 2;
  auto start = master().PutStart("k", 4096, cfg);
  ASSERT_TRUE(start.ok());
  ASSERT_EQ(start->replicas.size(), 2u);
  EXPECT_EQ(start->replicas[0].segment, a);
  EXPECT_EQ(start->replicas[1].segment, b);
}

TEST_F(SegmentTest, PartialUnmountKeepsObjectOnSurvivingReplica) {
  Mount("seg-a", 1 << 20, "node-a");
  SegmentId b = Mount("seg-b", 1 << 20, "node-b");
  PutConfig cfg;
  cfg.replica_count = 2;
  ASSERT_TRUE(Put("k", 3000, cfg).ok());
  ASSERT_EQ(master().GetReplicaList("k")->replicas.size(), 2u);

  ASSERT_TRUE(master().UnmountSegment("seg-a", "node-a").ok());
  auto read = master().GetReplicaList("k");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->replicas.size(), 1u);
  EXPECT_EQ(read->replicas[0].segment, b);
  EXPECT_EQ(read->replicas[0].endpoint, "node-b:7000");
  EXPECT_EQ(read->size, 3000u);
  EXPECT_TRUE(*master().Exists("k"));
  EXPECT_EQ(master().Stats().objects, 1u);
  EXPECT_EQ(master().counters().dropped_objects.load(), 0u);
  EXPECT_EQ(master().List(""), std::vector<std::string>{"k"});

  ASSERT_TRUE(master().UnmountSegment("seg-b", "node-b").ok());
  EXPECT_EQ(master().GetReplicaList("k").status().code(), ErrorCode::kObjectNotFound);
  EXPECT_FALSE(*master().Exists("k"));
  EXPECT_EQ(master().Stats().objects, 0u);
  EXPECT_EQ(master().counters().dropped_objects.load(), 1u);
  EXPECT_TRUE(master().List("").empty());
  // The key is gone entirely: it can be put again once a segment is back.
  Mount("seg-c", 1 << 20, "node-c");
  EXPECT_TRUE(Put("k", 10).ok());
}

TEST_F(SegmentTest, RemoveAfterPartialUnmountFreesSurvivingReplica) {
  Mount("seg-a", 1 << 20, "node-a");
  Mount("seg-b", 1 << 20, "node-b");
  PutConfig cfg;
  cfg.replica_count = 2;
  ASSERT_TRUE(Put("k", 3000, cfg).ok());
  ASSERT_TRUE(master().UnmountSegment("seg-a", "node-a").ok());
  EXPECT_GT(UsedOf("seg-b"), 0);
  EXPECT_EQ(master().Stats().used_bytes, static_cast<uint64_t>(UsedOf("seg-b")));
  ASSERT_TRUE(master().Remove("k").ok());
  EXPECT_EQ(UsedOf("seg-b"), 0);
  EXPECT_EQ(master().Stats().used_bytes, 0u);
}

TEST_F(SegmentTest, UnmountHidesReplicasAtOnce) {
  Mount("seg-a", 1 << 20, "node-a");
  Mount("seg-b", 1 << 20, "node-b");
  PutConfig on_a;
  on_a.preferred_segment = "seg-a";
  PutConfig on_b;
  on_b.preferred_segment = "seg-b";
  ASSERT_TRUE(Put("a/1", 100, on_a).ok());
  ASSERT_TRUE(Put("a/2", 100, on_a).ok());
  ASSERT_TRUE(Put("b/1", 100, on_b).ok());
  // Reads hold no lease over an unmount: the bytes are gone with the segment.
  ASSERT_TRUE(Readable("a/1"));

  ASSERT_TRUE(master().UnmountSegment("seg-a", "node-a").ok());
  EXPECT_EQ(master().GetReplicaList("a/1").status().code(), ErrorCode::kObjectNotFound);
  EXPECT_FALSE(*master().Exists("a/2"));
  std::vector<std::string> chain = {"b/1", "a/1"};
  EXPECT_EQ(*master().BatchQueryPrefix(chain), 1u);
  EXPECT_EQ(master().List(""), std::vector<std::string>{"b/1"});
  EXPECT_TRUE(Readable("b/1"));
  EXPECT_EQ(master().Stats().objects, 1u);
  EXPECT_EQ(master().counters().dropped_objects.load(), 2u);
}

TEST_F(SegmentTest, UnmountDropsPendingPutsWithoutLiveReplica) {
  Mount("seg-a", 1 << 20, "node-a");
  auto start = master().PutStart("k", 100, {});
  ASSERT_TRUE(start.ok());
  EXPECT_EQ(master().Stats().pending_puts, 1u);
  ASSERT_TRUE(master().UnmountSegment("seg-a", "node-a").ok());
  EXPECT_EQ(master().Stats().pending_puts, 0u);
  Status end = master().PutEnd("k", start->token);
  EXPECT_EQ(end.code(), ErrorCode::kPutNotStarted);
  // The message says why a put that was started can be gone.
  EXPECT_NE(end.message().find("a node holding one of its replicas was dropped"), std::string::npos)
      << end.ToString();
  EXPECT_EQ(master().Stats().objects, 0u);
}

TEST_F(SegmentTest, UsedBytesReturnToZeroAfterRemoves) {
  config_.put_timeout_ms = 1000;  // the revoked put's fence ends well within the heartbeat TTL
  Mount("seg-a", 1 << 20, "node-a");
  Mount("seg-b", 1 << 20, "node-b");
  PutConfig two;
  two.replica_count = 2;
  std::vector<std::string> keys = Keys("obj", 20);
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(Put(keys[i], 1000 + 37 * i, i % 2 == 0 ? two : PutConfig{}).ok());
  }
  auto pending = master().PutStart("pending", 5000, two);
  ASSERT_TRUE(pending.ok());
  EXPECT_GT(UsedOf("seg-a"), 0);
  EXPECT_GT(UsedOf("seg-b"), 0);
  EXPECT_EQ(master().Stats().used_bytes, static_cast<uint64_t>(UsedOf("seg-a") + UsedOf("seg-b")));
  for (const SegmentInfo& s : master().ListSegments()) EXPECT_GT(s.allocations, 0u);

  for (const Status& s : master().BatchRemove(keys)) EXPECT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(master().PutRevoke("pending", pending->token).ok());
  // The revoked put's space is fenced until its write capability is over.
  EXPECT_GT(master().Stats().held_bytes, 0u);
  clock_.Advance(config_.put_timeout_ms + config_.capability_grace_ms);
  master().RunMaintenance();
  ASSERT_EQ(master().ListSegments().size(), 2u);
  for (const SegmentInfo& s : master().ListSegments()) {
    EXPECT_EQ(s.used_bytes, 0u) << s.spec.name;
    EXPECT_EQ(s.allocations, 0u) << s.spec.name;
    EXPECT_EQ(s.largest_free, s.spec.capacity) << s.spec.name;
  }
  EXPECT_EQ(master().Stats().used_bytes, 0u);
}

TEST_F(SegmentTest, StatsCapacityFollowsMountsAndUnmounts) {
  EXPECT_EQ(master().Stats().capacity_bytes, 0u);
  Mount("seg-a", 1 << 20, "node-a");
  EXPECT_EQ(master().Stats().capacity_bytes, 1u << 20);
  Mount("seg-b", 3 << 20, "node-b");
  EXPECT_EQ(master().Stats().capacity_bytes, 4u << 20);
  EXPECT_EQ(master().Stats().segments, 2u);
  ASSERT_TRUE(Put("k", 5000).ok());
  ASSERT_TRUE(master().UnmountSegment("seg-b", "node-b").ok());
  MasterStats stats = master().Stats();
  EXPECT_EQ(stats.capacity_bytes, 1u << 20);
  EXPECT_EQ(stats.segments, 1u);
  EXPECT_EQ(stats.used_bytes, static_cast<uint64_t>(UsedOf("seg-a")));
  ASSERT_TRUE(master().UnmountSegment("seg-a", "node-a").ok());
  stats = master().Stats();
  EXPECT_EQ(stats.capacity_bytes, 0u);
  EXPECT_EQ(stats.used_bytes, 0u);
  EXPECT_EQ(stats.segments, 0u);
  EXPECT_EQ(master().PutStart("k2", 10, {}).status().code(), ErrorCode::kUnavailable);
}

TEST_F(SegmentTest, ObjectLargerThanEveryMountedSegmentIsRefused) {
  Mount("big", 1 << 20, "node-a");
  Mount("small", 64 << 10, "node-b");
  EXPECT_TRUE(master().PutStart("k", 512 << 10, {}).ok());
  ASSERT_TRUE(master().UnmountSegment("big", "node-a").ok());
  EXPECT_EQ(master().PutStart("k2", 512 << 10, {}).status().code(), ErrorCode::kInvalidSize);
  EXPECT_TRUE(master().PutStart("k3", 32 << 10, {}).ok());
}

TEST_F(SegmentTest, PutThatCanNeverFitFailsWithoutEvicting) {
  // 4100 bytes manage 4096 (64 granules of 64 bytes): a 4100-byte object can
  // never be placed, so it must not cost the stored objects anything.
  ASSERT_EQ(config_.allocation_alignment, 64u);
  config_.high_watermark = 1.0;  // so a full-segment object is not refused for the watermark
  Mount("odd", 4100, "node-a");
  std::vector<std::string> keys = Keys("k", 4);
  for (const std::string& k : keys) ASSERT_TRUE(Put(k, 1024).ok()) << k;
  auto start = master().PutStart("big", 4100, {});
  EXPECT_FALSE(start.ok());
  EXPECT_EQ(start.status().code(), ErrorCode::kInvalidSize);
  for (const std::string& k : keys) EXPECT_TRUE(*master().Exists(k)) << k;
  EXPECT_EQ(master().counters().evictions.load(), 0u);
  // Exactly the managed size fits once there is room.
  EXPECT_EQ(master().RemoveAll(), 4u);
  EXPECT_TRUE(master().PutStart("full", 4096, {}).ok());
}

// PutStart reads the clock between allocating replicas and creating the entry:
// pausing it there lets an unmount run in between, whose scan cannot see the
// entry yet. The put must not leave an object whose replicas are all dead.
class UnmountDuringPutTest : public SegmentTest {
 protected:
  void SetUp() override {
    auto created = MasterService::Create(config_, pausing_);
    ASSERT_TRUE(created.ok());
    m_ = std::move(created).value();
  }

  // Runs PutStart("k") on a thread, unmounts `segment` while it is paused
  // after allocation, and returns its result.
  StatusOr<PutGrant> PutStartRacingUnmount(const std::string& segment, const std::string& owner,
                                           const PutConfig& cfg) {
    StatusOr<PutGrant> start = Status(ErrorCode::kInternal, "not run");
    pausing_.Arm();
    std::thread putter([&] { start = master().PutStart("k", 100, cfg); });
    pausing_.WaitUntilPaused();
    EXPECT_TRUE(master().UnmountSegment(segment, owner).ok());
    pausing_.Resume();
    putter.join();
    return start;
  }

  PausingClock pausing_{clock_};
};

TEST_F(UnmountDuringPutTest, PutWhoseOnlySegmentIsUnmountedFails) {
  Mount("seg-a", 1 << 20, "node-a");
  auto start = PutStartRacingUnmount("seg-a", "node-a", {});
  EXPECT_FALSE(start.ok());
  EXPECT_EQ(master().Stats().pending_puts, 0u);
  EXPECT_EQ(master().PutEnd("k", 0).code(), ErrorCode::kPutNotStarted);
  // The key is not left behind: once a segment is back it can be put.
  Mount("seg-b", 1 << 20, "node-b");
  EXPECT_TRUE(Put("k", 100).ok());
  EXPECT_TRUE(Readable("k"));
}

TEST_F(UnmountDuringPutTest, PutKeepsOnlyReplicasOnMountedSegments) {
  Mount("seg-a", 1 << 20, "node-a");
  SegmentId b = Mount("seg-b", 1 << 20, "node-b");
  PutConfig two;
  two.replica_count = 2;
  auto start = PutStartRacingUnmount("seg-a", "node-a", two);
  ASSERT_TRUE(start.ok()) << start.status().ToString();
  ASSERT_EQ(start->replicas.size(), 1u);
  EXPECT_EQ(start->replicas[0].segment, b);
  ASSERT_TRUE(master().PutEnd("k", start->token).ok());
  auto read = master().GetReplicaList("k");
  ASSERT_TRUE(read.ok());
  ASSERT_EQ(read->replicas.size(), 1u);
  EXPECT_EQ(read->replicas[0].segment, b);
}

}  // namespace
}  // namespace crescent::master::testing
