// Space a logged object left (removed, evicted, demoted) is reused only once
// the log record that freed it is durable (durable_frees.h): a restore maps
// each object onto the place its last durable record names, so a range
// reused before then could be restored under the old object, over another
// put's bytes. The log here makes a record durable only when the engine asks
// for a sync (MemoryLog::manual_sync).
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "master/master_test_util.h"
#include "master/memory_log_for_test.h"
#include "master/replica_copier.h"

namespace crescent::master {
namespace {

constexpr uint64_t kSegBytes = 1 << 20;
constexpr uint64_t kObject = 400 << 10;  // two fit in a segment

using testing::CopiesDone;

class MasterSpaceReuseTest : public testing::MasterTest {
 protected:
  void SetUp() override {
    log_.manual_sync = true;
    oplog_ = &log_;
    config_.high_watermark = 1.0;  // no background rounds: only puts make room
  }

  // The log position just past the last record that says `key` left `segment`
  // (a removal, or a PutEnded naming another segment); 0 when none.
  uint64_t PositionOfDeparture(const std::string& key, SegmentId segment) {
    const std::vector<LogRecord> records = log_.Decoded();
    uint64_t at = 0;
    for (size_t i = 0; i < records.size(); ++i) {
      const LogRecord& r = records[i];
      if (r.key != key) continue;
      const bool removed = r.type == LogRecordType::kObjectRemoved;
      const bool moved = r.type == LogRecordType::kPutEnded && !r.replicas.empty() &&
                         r.replicas[0].segment != segment;
      if (removed || moved) at = i + 1;
    }
    return at;
  }

  ReplicaDescriptor Only(const std::string& key) {
    auto r = master().GetReplicaList(key);
    EXPECT_TRUE(r.ok() && r->replicas.size() == 1) << key;
    return r.ok() && !r->replicas.empty() ? r->replicas[0] : ReplicaDescriptor{};
  }

  testing::MemoryLog log_;
};

TEST_F(MasterSpaceReuseTest, AnEvictedObjectsSpaceIsReusedOnlyOnceItsRecordIsDurable) {
  const SegmentId seg = Mount("dram", kSegBytes);
  ASSERT_TRUE(Put("a", kObject).ok());
  ASSERT_TRUE(Put("b", kObject).ok());
  ASSERT_TRUE(Put("c", kObject).ok());  // evicts a, and takes its place
  const uint64_t departed = PositionOfDeparture("a", seg);
  ASSERT_NE(departed, 0u) << "a was evicted";
  EXPECT_FALSE(Readable("a"));
  EXPECT_GE(log_.synced, departed) << "c reused a's space before a's eviction was durable";
  EXPECT_GT(log_.forced_syncs, 0u);
}

TEST_F(MasterSpaceReuseTest, ADemotedObjectsDramSpaceIsReusedOnlyOnceTheMoveIsDurable) {
  config_.capability_grace_ms = 0;
  CopiesDone copier;
  master().SetReplicaCopier(&copier);
  auto d = master().MountSegment({"dram", kSegBytes, "node-1", "n:1#e1", Tier::kDram, 7});
  auto p = master().MountSegment({"pmem-u1", kSegBytes, "node-1", "n:1#e1", Tier::kPmem, 7});
  ASSERT_TRUE(d.ok() && p.ok());
  ASSERT_TRUE(Put("a", kObject).ok());
  ASSERT_TRUE(Put("b", kObject).ok());
  const uint64_t a_offset = Only("a").offset;
  (void)Only("b");                      // read after a: a is the least recent
  clock_.Advance(600'000);              // no capability reaches a or b (the read above included)
  ASSERT_TRUE(Put("c", kObject).ok());  // demotes a, and takes its DRAM space
  EXPECT_EQ(master().counters().demotions.load(), 1u);
  const ReplicaDescriptor c = Only("c");
  ASSERT_EQ(c.segment, *d);
  ASSERT_EQ(c.offset, a_offset) << "c took a's DRAM space";
  EXPECT_EQ(Only("a").segment, *p);
  const uint64_t moved = PositionOfDeparture("a", *d);
  ASSERT_NE(moved, 0u);
  EXPECT_GE(log_.synced, moved) << "c reused a's DRAM space before a's move was durable";
}

TEST_F(MasterSpaceReuseTest, MaintenanceFreesARemovedObjectsSpaceOnceTheLogIsSynced) {
  const SegmentId seg = Mount("dram", kSegBytes);
  ASSERT_TRUE(Put("a", kObject).ok());
  const uint64_t with_a = master().Stats().used_bytes;
  ASSERT_TRUE(master().Remove("a").ok());
  master().RunMaintenance();
  EXPECT_EQ(master().Stats().used_bytes, with_a) << "the removal is not durable yet";
  ASSERT_TRUE(log_.SyncThrough(PositionOfDeparture("a", seg)).ok());
  master().RunMaintenance();
  EXPECT_LT(master().Stats().used_bytes, with_a);
}

}  // namespace
}  // namespace crescent::master
