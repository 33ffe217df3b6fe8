// The engine's side of the operation log: which changes it records, in what
// order, and that an acknowledged change waited for its record.
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "common/coding.h"
#include "master/log_record.h"
#include "master/master_test_util.h"
#include "master/memory_log_for_test.h"
#include "master/scripted_node_for_test.h"

namespace crescent::master {
namespace {

using testing::MemoryLog;
using testing::ScriptedNode;

class MasterLogTest : public testing::MasterTest {
 protected:
  void SetUp() override { oplog_ = &log_; }
  MemoryLog log_;
};

TEST_F(MasterLogTest, MountPutRemoveAndUnmountAreRecordedInOrder) {
  const SegmentId seg = Mount("seg-a", 1 << 20);
  PutConfig pc;
  pc.parent_key = "parent";
  pc.hard_pin = true;
  auto grant = master().PutStart("k", 100, pc);
  ASSERT_TRUE(grant.ok());
  EXPECT_EQ(log_.Decoded().size(), 1u) << "a pending put is not logged";
  ASSERT_TRUE(master().PutEnd("k", grant->token, 0xabc).ok());
  EXPECT_EQ(log_.waited, 2u) << "PutEnd waits for its own record";
  ASSERT_TRUE(master().Remove("k").ok());
  ASSERT_TRUE(master().UnmountSegment("seg-a", "node-a").ok());

  const std::vector<LogRecord> r = log_.Decoded();
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].type, LogRecordType::kSegmentMounted);
  EXPECT_EQ(r[0].segment, seg);
  EXPECT_EQ(r[0].spec.name, "seg-a");
  EXPECT_EQ(r[0].spec.endpoint, "node-a:7000");
  EXPECT_EQ(r[1].type, LogRecordType::kPutEnded);
  EXPECT_EQ(r[1].key, "k");
  EXPECT_EQ(r[1].size, 100u);
  EXPECT_EQ(r[1].checksum, 0xabcu);
  ASSERT_EQ(r[1].replicas.size(), 1u);
  EXPECT_EQ(r[1].replicas[0].segment, seg);
  EXPECT_EQ(r[1].parent_key, "parent");
  EXPECT_TRUE(r[1].hard_pin);
  EXPECT_EQ(r[2].type, LogRecordType::kObjectRemoved);
  EXPECT_EQ(r[2].reason, RemovalReason::kRemoved);
  EXPECT_EQ(r[3].type, LogRecordType::kSegmentUnmounted);
  EXPECT_EQ(r[3].segment, seg);
  EXPECT_EQ(log_.waited, 4u);
}

TEST_F(MasterLogTest, RevokedAndExpiredPutsAreNotRecorded) {
  config_.heartbeat_ttl_ms = config_.put_timeout_ms * 2;  // the node outlives the put
  Mount("seg-a", 1 << 20);
  auto a = master().PutStart("a", 100, {});
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(master().PutRevoke("a", a->token).ok());
  ASSERT_TRUE(master().PutStart("b", 100, {}).ok());
  clock_.Advance(config_.put_timeout_ms + 1);
  master().RunMaintenance();
  EXPECT_EQ(log_.Decoded().size(), 1u);  // the mount only
}

TEST_F(MasterLogTest, EvictionsAreRecordedWithTheirReason) {
  config_.high_watermark = 0.5;
  config_.evict_ratio = 0.5;
  Mount("seg-a", 64 << 10);
  for (const std::string& k : Keys("k", 8)) ASSERT_TRUE(Put(k, 4 << 10).ok());
  master().RunMaintenance();
  size_t evicted = 0;
  for (const LogRecord& r : log_.Decoded()) {
    if (r.type == LogRecordType::kObjectRemoved) {
      EXPECT_EQ(r.reason, RemovalReason::kEvicted);
      ++evicted;
    }
  }
  EXPECT_GT(evicted, 0u);
  EXPECT_EQ(evicted, master().counters().evictions.load());
}

TEST_F(MasterLogTest, CorruptReplicaDropsAreRecorded) {
  Mount("seg-a", 1 << 20, "node-a");
  Mount("seg-b", 1 << 20, "node-b");
  PutConfig two;
  two.replica_count = 2;
  auto g = master().PutStart("k", 100, two);
  ASSERT_TRUE(g.ok());
  ASSERT_TRUE(master().PutEnd("k", g->token, 7).ok());
  const ReplicaDescriptor first = g->replicas[0];
  const ReplicaDescriptor second = g->replicas[1];
  // Their nodes confirm each report at the next maintenance pass.
  ScriptedNode node;
  node.corrupt = {{first.segment, first.offset}, {second.segment, second.offset}};
  master().SetReplicaCopier(&node);
  ASSERT_TRUE(master().ReportCorruptReplica("k", first.segment, first.offset, 7).ok());
  master().RunMaintenance();
  ASSERT_TRUE(master().ReportCorruptReplica("k", second.segment, second.offset, 7).ok());
  master().RunMaintenance();
  master().SetReplicaCopier(nullptr);
  const std::vector<LogRecord> r = log_.Decoded();
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(r[3].type, LogRecordType::kReplicaDropped);
  EXPECT_EQ(r[3].segment, first.segment);
  EXPECT_EQ(r[3].offset, first.offset);
  EXPECT_EQ(r[4].type, LogRecordType::kObjectRemoved);
  EXPECT_EQ(r[4].reason, RemovalReason::kCorrupt);
}

TEST_F(MasterLogTest, ExpiredNodesAreRecordedAsUnmounts) {
  const SegmentId seg = Mount("seg-a", 1 << 20);
  clock_.Advance(config_.heartbeat_ttl_ms + 1);
  master().RunMaintenance();
  const std::vector<LogRecord> r = log_.Decoded();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1].type, LogRecordType::kSegmentUnmounted);
  EXPECT_EQ(r[1].segment, seg);
}

TEST_F(MasterLogTest, AFailedLogFailsTheAcknowledgement) {
  Mount("seg-a", 1 << 20);
  auto g = master().PutStart("k", 100, {});
  ASSERT_TRUE(g.ok());
  log_.fail = true;
  EXPECT_EQ(master().PutEnd("k", g->token).code(), ErrorCode::kIoError);
}

// A put answered IO_ERROR was not recorded: a restart would not bring it back,
// so it is not served now either (neither readable nor listed), whether the
// append or only the sync failed; the key can be put again once the log works.
TEST_F(MasterLogTest, APutAnsweredIoErrorIsUndone) {
  Mount("seg-a", 1 << 20);
  for (bool only_sync : {false, true}) {
    SCOPED_TRACE(only_sync ? "the sync failed" : "the append failed");
    const std::string key = only_sync ? "sync" : "append";
    auto g = master().PutStart(key, 100, {});
    ASSERT_TRUE(g.ok());
    (only_sync ? log_.fail_syncs : log_.fail) = true;
    EXPECT_EQ(master().PutEnd(key, g->token).code(), ErrorCode::kIoError);
    log_.fail = log_.fail_syncs = false;
    EXPECT_FALSE(Readable(key));
    EXPECT_FALSE(*master().Exists(key));
    EXPECT_TRUE(master().List(key).empty());
    EXPECT_EQ(master().PutEnd(key, g->token).code(), ErrorCode::kPutNotStarted);
    EXPECT_TRUE(Put(key, 100).ok()) << "the undone put's space and key are free again";
    EXPECT_TRUE(Readable(key));
  }
}

// A log that says its master no longer leads (UNAVAILABLE) fails the
// acknowledgement with that code, so that the client tries the new leader;
// the put is undone as for IO_ERROR.
TEST_F(MasterLogTest, APutWhoseLogLostTheLeadershipAnswersUnavailableAndIsUndone) {
  Mount("seg-a", 1 << 20);
  auto g = master().PutStart("deposed", 100, {});
  ASSERT_TRUE(g.ok());
  log_.fail_code = ErrorCode::kUnavailable;
  log_.fail_syncs = true;
  const Status s = master().PutEnd("deposed", g->token);
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable) << s.ToString();
  log_.fail_syncs = false;
  EXPECT_FALSE(Readable("deposed"));
  EXPECT_FALSE(*master().Exists("deposed"));
}

TEST_F(MasterLogTest, ABatchPutAnsweredIoErrorIsUndone) {
  Mount("seg-a", 1 << 20);
  const std::vector<std::string> keys = Keys("b", 3);
  std::vector<uint64_t> tokens;
  for (const std::string& k : keys) {
    auto g = master().PutStart(k, 100, {});
    ASSERT_TRUE(g.ok());
    tokens.push_back(g->token);
  }
  log_.fail_syncs = true;
  for (const Status& s : master().BatchPutEnd(keys, tokens, {})) {
    EXPECT_EQ(s.code(), ErrorCode::kIoError);
  }
  log_.fail_syncs = false;
  for (const std::string& k : keys) EXPECT_FALSE(Readable(k)) << k;
  EXPECT_TRUE(master().List("b").empty());
}

// A batch's ends share one wait for the log (one sync, one etcd commit),
// which covers every key's record: each key is acknowledged, and logged.
TEST_F(MasterLogTest, ABatchPutEndWaitsForTheLogOnce) {
  Mount("seg-a", 1 << 20);
  const std::vector<std::string> keys = Keys("w", 8);
  std::vector<uint64_t> tokens;
  for (const std::string& k : keys) {
    auto g = master().PutStart(k, 100, {});
    ASSERT_TRUE(g.ok());
    tokens.push_back(g->token);
  }
  const uint64_t waits = log_.waits;
  for (const Status& s : master().BatchPutEnd(keys, tokens, {}))
    EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(log_.waits, waits + 1);
  EXPECT_EQ(log_.waited, log_.end_position());
  for (const std::string& k : keys) EXPECT_TRUE(Readable(k)) << k;
}

// What a mount is written as, in the log and in a snapshot's records.
std::string AllBytes(MemoryLog& log, MasterService& m) {
  std::string bytes;
  auto append = [&](uint64_t, std::string_view r) {
    bytes += r;
    return Status::Ok();
  };
  EXPECT_TRUE(log.ReadFrom(0, append).ok());
  auto encode = [&](const LogRecord& r) {
    bytes += EncodeLogRecord(r);
    return Status::Ok();
  };
  uint64_t at = 0;
  EXPECT_TRUE(m.Capture(&at, encode).ok());
  return bytes;
}

// A segment's owner token is never written in clear: the log and a snapshot
// hold only its verifier (owner_verifier.h), and the token still proves the
// owner (unmount) while another does not.
TEST_F(MasterLogTest, NoOwnerTokenIsWrittenInClear) {
  constexpr uint64_t kToken = 0x5ec7e75ec7e75ec7;
  ASSERT_TRUE(
      master().MountSegment({"seg-a", 1 << 20, "node-a", "a:1#e1", Tier::kDram, kToken}).ok());
  ASSERT_TRUE(Put("k", 100).ok());
  const std::string bytes = AllBytes(log_, master());
  std::string fixed, varint;
  PutFixed64(fixed, kToken);
  PutVarint(varint, kToken);
  EXPECT_EQ(bytes.find(fixed), std::string::npos);
  EXPECT_EQ(bytes.find(varint), std::string::npos);
  for (const SegmentInfo& s : master().ListSegments()) EXPECT_NE(s.spec.owner_token, kToken);
  EXPECT_EQ(master().UnmountSegment("seg-a", "node-a", kToken + 1).code(), ErrorCode::kNotOwner);
  EXPECT_TRUE(master().UnmountSegment("seg-a", "node-a", kToken).ok());
}

// A data dir written before verifiers were kept holds mounts with their owner
// tokens in clear (record type 6): it restores, and the node takes its segment
// back with the token it holds.
TEST_F(MasterLogTest, AMountWithAClearOwnerTokenIsStillTakenOver) {
  constexpr uint64_t kToken = 0x5ec7e75ec7e75ec7;
  config_.heartbeat_ttl_ms = 1'000'000;
  ASSERT_TRUE(
      master().MountSegment({"seg-a", 1 << 20, "node-a", "a:1#e1", Tier::kDram, kToken}).ok());
  ASSERT_TRUE(Put("k", 100).ok());
  // The records as they were written then: the mount's token in clear.
  std::vector<LogRecord> old;
  auto as_then = [&](uint64_t, std::string_view r) {
    std::string bytes(r);
    auto d = DecodeLogRecord(bytes);
    if (d.ok() && d->type == LogRecordType::kSegmentMounted) {
      LogRecord clear = *d;
      clear.spec.owner_token = kToken;
      bytes = EncodeLogRecord(clear);
      bytes[0] = 6;
    }
    auto back = DecodeLogRecord(bytes);
    EXPECT_TRUE(back.ok()) << back.status().ToString();
    if (back.ok()) old.push_back(*back);
    return Status::Ok();
  };
  ASSERT_TRUE(log_.ReadFrom(0, as_then).ok());
  // A restarted master on those records, and node-a mounting again (a new
  // endpoint and token) with `previous`: whether it took the segment over.
  MemoryLog log2;
  auto restart = [&](const PreviousMount& previous) {
    auto m = MasterService::Create(config_, clock_, &log2);
    EXPECT_TRUE(m.ok());
    for (const LogRecord& r : old) (*m)->ApplyRestored(r);
    (*m)->FinishRestore(5'000);
    const SegmentSpec again{"seg-a", 1 << 20, "node-a", "a:1#e2", Tier::kDram, 33};
    bool adopted = false;
    EXPECT_TRUE((*m)->MountSegment(again, &previous, &adopted).ok());
    EXPECT_EQ((*m)->GetReplicaList("k").ok(), adopted);
    return adopted;
  };
  EXPECT_FALSE(restart({"a:1#e1", kToken + 1, {}})) << "another token proves nothing";
  EXPECT_TRUE(restart({"a:1#e1", kToken, {}}));
}

}  // namespace
}  // namespace crescent::master
