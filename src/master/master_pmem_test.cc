// The persistent tier in the master: placement prefers DRAM, a persistent
// segment whose node leaves is detached (its objects wait, unreadable) and is
// taken back, objects and all, by a mount of the same segment from a new node
// process; it is dropped only after the grace. A snapshot keeps waiting
// segments, and a restore from it has them wait again.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "master/master_test_util.h"
#include "master/memory_log_for_test.h"

namespace crescent::master {
namespace {

constexpr uint64_t kSegBytes = 1 << 20;

SegmentSpec Spec(const std::string& name, Tier tier, const std::string& node,
                 const std::string& endpoint, uint64_t token = 7) {
  return {name, kSegBytes, node, endpoint, tier, token};
}

class MasterPmemTest : public testing::MasterTest {
 protected:
  void SetUp() override {
    oplog_ = &log_;
    config_.heartbeat_ttl_ms = 1'000;
    config_.pmem_grace_ms = 60'000;
    master().SetReplicaCopier(&node_);
  }

  // node-1 with a DRAM segment and a persistent one.
  void MountNode() {
    auto d = master().MountSegment(Spec("dram", Tier::kDram, "node-1", "n:1#e1"));
    auto p = master().MountSegment(Spec("pmem-u1", Tier::kPmem, "node-1", "n:1#e1"));
    ASSERT_TRUE(d.ok() && p.ok());
    dram_ = *d;
    pmem_ = *p;
  }

  // The segment the object's only replica is on.
  SegmentId SegmentOf(MasterService& m, const std::string& key) {
    auto r = m.GetReplicaList(key);
    return r.ok() && r->replicas.size() == 1 ? r->replicas[0].segment : kNoSegment;
  }

  // A new process of the node (another id) mounts the same file's segment;
  // a maintenance pass verifies the objects it takes back (only then served).
  StatusOr<SegmentId> Remount(MasterService& m, bool* adopted,
                              const std::string& name = "pmem-u1") {
    auto id = m.MountSegment(Spec(name, Tier::kPmem, "node-2", "n:2#e9", 99), nullptr, adopted);
    m.RunMaintenance();
    return id;
  }

  testing::MemoryLog log_;
  testing::CopiesDone node_;  // every check passes
  SegmentId dram_ = kNoSegment;
  SegmentId pmem_ = kNoSegment;
};

TEST_F(MasterPmemTest, NewObjectsGoToDramFirstThenToThePersistentTier) {
  MountNode();
  ASSERT_TRUE(Put("a", kSegBytes / 2).ok());
  EXPECT_EQ(SegmentOf(master(), "a"), dram_);
  ASSERT_TRUE(Put("b", kSegBytes / 2 - 4096).ok());
  EXPECT_EQ(SegmentOf(master(), "b"), dram_) << "DRAM while it has room";
  ASSERT_TRUE(Put("c", kSegBytes / 2).ok());
  EXPECT_EQ(SegmentOf(master(), "c"), pmem_) << "DRAM is full";
  PutConfig there;
  there.preferred_segment = "pmem-u1";
  ASSERT_TRUE(Put("d", 100, there).ok());
  EXPECT_EQ(SegmentOf(master(), "d"), pmem_) << "a preferred segment ranks above the tier";
}

TEST_F(MasterPmemTest, AnUnmountDetachesAPersistentSegmentAndItsObjectsComeBackOnRemount) {
  MountNode();
  PutConfig there;
  there.preferred_segment = "pmem-u1";
  ASSERT_TRUE(Put("kept", 5000, there).ok());
  ASSERT_TRUE(Put("lost", 100).ok());  // on DRAM
  auto before = master().GetReplicaList("kept");
  ASSERT_TRUE(before.ok());
  const size_t log_before = log_.Decoded().size();

  ASSERT_TRUE(master().UnmountSegment("pmem-u1", "node-1", 7).ok());
  ASSERT_TRUE(master().UnmountSegment("dram", "node-1", 7).ok());
  EXPECT_FALSE(Readable("kept")) << "unreadable while detached";
  EXPECT_FALSE(Readable("lost"));
  EXPECT_EQ(master().counters().pmem_detached_segments.load(), 1u);
  EXPECT_EQ(master().restored_segments_waiting(), 1u);
  EXPECT_EQ(master().Stats().capacity_bytes, 0u) << "a waiting segment takes no puts";
  // Only the DRAM segment's unmount is logged.
  const std::vector<LogRecord> logged = log_.Decoded();
  size_t unmounts = 0;
  for (size_t i = log_before; i < logged.size(); ++i) {
    if (logged[i].type == LogRecordType::kSegmentUnmounted) {
      ++unmounts;
      EXPECT_EQ(logged[i].segment, dram_);
    }
  }
  EXPECT_EQ(unmounts, 1u);

  bool adopted = false;
  auto id = Remount(master(), &adopted);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_TRUE(adopted);
  EXPECT_EQ(*id, pmem_) << "the segment keeps its id";
  auto after = master().GetReplicaList("kept");
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->replicas[0].offset, before->replicas[0].offset);
  EXPECT_EQ(after->replicas[0].endpoint, "n:2#e9") << "the new mount's endpoint (new epoch)";
  EXPECT_FALSE(Readable("lost"));
  EXPECT_EQ(master().restored_segments_waiting(), 0u);
  // A new put on the taken-back segment does not overlap the kept object.
  there.preferred_segment = "pmem-u1";
  ASSERT_TRUE(Put("new", 5000, there).ok());
  auto fresh = master().GetReplicaList("new");
  ASSERT_TRUE(fresh.ok());
  EXPECT_NE(fresh->replicas[0].offset, after->replicas[0].offset);
}

TEST_F(MasterPmemTest, ANewProcessOfTheFileTakesItOverBeforeTheOldOneIsDeclaredDead) {
  MountNode();
  PutConfig there;
  there.preferred_segment = "pmem-u1";
  ASSERT_TRUE(Put("k", 100, there).ok());
  bool adopted = false;
  auto id = Remount(master(), &adopted);  // node-1 was killed a moment ago
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_TRUE(adopted);
  EXPECT_EQ(*id, pmem_);
  auto r = master().GetReplicaList("k");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->replicas[0].endpoint, "n:2#e9");
  // A DRAM segment of a mounted name is still refused.
  EXPECT_EQ(master().MountSegment(Spec("dram", Tier::kDram, "node-2", "n:2#e9")).status().code(),
            ErrorCode::kSegmentAlreadyExists);
  // The old process's unmount no longer names its mount.
  EXPECT_FALSE(master().UnmountSegment("pmem-u1", "node-1", 7).ok());
  EXPECT_TRUE(master().GetReplicaList("k").ok());
}

TEST_F(MasterPmemTest, ADeadNodesPersistentSegmentWaitsAndIsDroppedAfterTheGrace) {
  MountNode();
  PutConfig there;
  there.preferred_segment = "pmem-u1";
  ASSERT_TRUE(Put("k", 100, there).ok());
  clock_.Advance(2'000);  // past the heartbeat TTL
  master().RunMaintenance();
  EXPECT_FALSE(Readable("k"));
  EXPECT_EQ(master().restored_segments_waiting(), 1u);
  EXPECT_EQ(master().Stats().objects, 1u) << "kept while it waits";
  clock_.Advance(config_.pmem_grace_ms);
  master().RunMaintenance();
  EXPECT_EQ(master().restored_segments_waiting(), 0u);
  EXPECT_EQ(master().Stats().objects, 0u) << "dropped after the grace";
  bool adopted = true;
  ASSERT_TRUE(Remount(master(), &adopted).ok());
  EXPECT_FALSE(adopted) << "too late: an empty segment";
  EXPECT_FALSE(Readable("k"));
}

TEST_F(MasterPmemTest, APersistentMountOfAnotherSizeStartsEmpty) {
  MountNode();
  ASSERT_TRUE(Put("k", 100).ok());  // on DRAM
  clock_.Advance(2'000);
  master().RunMaintenance();  // DRAM: dropped at once
  EXPECT_EQ(master().Stats().objects, 0u);
  // A persistent mount of another size than the waiting segment starts empty.
  PutConfig there;
  there.preferred_segment = "pmem-u1";
  ASSERT_TRUE(master().MountSegment(Spec("dram", Tier::kDram, "node-2", "n:2#e2")).ok());
  SegmentSpec other = Spec("pmem-u1", Tier::kPmem, "node-2", "n:2#e2");
  other.capacity = 2 * kSegBytes;
  bool adopted = true;
  ASSERT_TRUE(master().MountSegment(other, nullptr, &adopted).ok());
  EXPECT_FALSE(adopted) << "another capacity: another file";
}

TEST_F(MasterPmemTest, RemovingAnObjectOfADetachedSegmentFreesItsSpace) {
  MountNode();
  PutConfig there;
  there.preferred_segment = "pmem-u1";
  ASSERT_TRUE(Put("a", 4096, there).ok());
  ASSERT_TRUE(Put("b", 4096, there).ok());
  ASSERT_TRUE(master().UnmountSegment("pmem-u1", "node-1", 7).ok());
  ASSERT_TRUE(master().Remove("a").ok());
  bool adopted = false;
  ASSERT_TRUE(Remount(master(), &adopted).ok());
  ASSERT_TRUE(adopted);
  uint64_t used = 0;
  for (const SegmentInfo& s : master().ListSegments()) {
    if (s.spec.name == "pmem-u1") used = s.used_bytes;
  }
  EXPECT_EQ(used, 4096u) << "only b's space is in use";
}

TEST_F(MasterPmemTest, ASnapshotKeepsADetachedSegmentAndARestoreTakesItBack) {
  MountNode();
  PutConfig there;
  there.preferred_segment = "pmem-u1";
  ASSERT_TRUE(Put("k", 3000, there).ok());
  ASSERT_TRUE(master().UnmountSegment("pmem-u1", "node-1", 7).ok());
  std::vector<LogRecord> records;
  uint64_t at = 0;
  ASSERT_TRUE(master()
                  .Capture(&at,
                           [&](const LogRecord& r) {
                             records.push_back(r);
                             return Status::Ok();
                           })
                  .ok());
  testing::MemoryLog log2;
  auto m = MasterService::Create(config_, clock_, &log2);
  ASSERT_TRUE(m.ok());
  (*m)->SetReplicaCopier(&node_);
  for (const LogRecord& r : records) (*m)->ApplyRestored(r);
  (*m)->FinishRestore(1'000);
  // The restore grace is short; a persistent segment waits the PMEM grace.
  clock_.Advance(5'000);
  (*m)->RunMaintenance();
  EXPECT_EQ((*m)->restored_segments_waiting(), 1u);
  bool adopted = false;
  ASSERT_TRUE(Remount(**m, &adopted).ok());
  EXPECT_TRUE(adopted);
  auto r = (*m)->GetReplicaList("k");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->size, 3000u);
}

}  // namespace
}  // namespace crescent::master
