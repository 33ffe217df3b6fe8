// Restore: an engine rebuilt from another's records (a snapshot's Capture and
// its operation log) holds the same objects, shows none of them until their
// segment's node takes it over, drops what came back as new memory or never
// came back, and evicts in the order the first engine would have.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <random>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "master/master_test_util.h"
#include "master/memory_log_for_test.h"

namespace crescent::master {
namespace {

using testing::MemoryLog;

constexpr uint64_t kSegBytes = 1 << 20;

SegmentSpec Spec(const std::string& name, const std::string& node, const std::string& endpoint,
                 uint64_t token, uint64_t capacity = kSegBytes) {
  return {name, capacity, node, endpoint, Tier::kDram, token};
}

class MasterRestoreTest : public testing::MasterTest {
 protected:
  void SetUp() override {
    oplog_ = &log_;
    config_.heartbeat_ttl_ms = 1'000'000;  // nodes stay alive while the clock moves
  }

  // The first engine's segments: node-a and node-b, one segment each.
  void MountBoth() {
    auto a = master().MountSegment(Spec("seg-a", "node-a", "a:1#e1", 11));
    auto b = master().MountSegment(Spec("seg-b", "node-b", "b:1#e1", 22));
    ASSERT_TRUE(a.ok() && b.ok());
    seg_a_ = *a;
    seg_b_ = *b;
  }

  Status PutSum(const std::string& key, uint64_t size, uint64_t checksum,
                const PutConfig& pc = {}) {
    auto g = master().PutStart(key, size, pc);
    if (!g.ok()) return g.status();
    return master().PutEnd(key, g->token, checksum);
  }

  // A second engine (on the same clock) given `records`, restore finished.
  std::unique_ptr<MasterService> Restored(const std::vector<LogRecord>& records,
                                          int64_t grace_ms = 5'000,
                                          MasterService::RestoreSummary* summary = nullptr) {
    auto m = MasterService::Create(config_, clock_, &log2_);
    EXPECT_TRUE(m.ok());
    for (const LogRecord& r : records) (*m)->ApplyRestored(r);
    auto s = (*m)->FinishRestore(grace_ms);
    if (summary != nullptr) *summary = s;
    return std::move(m).value();
  }

  // What Capture() hands a snapshot, and the log position it covers.
  std::vector<LogRecord> Captured(uint64_t* position = nullptr) {
    std::vector<LogRecord> out;
    uint64_t at = 0;
    EXPECT_TRUE(master()
                    .Capture(&at,
                             [&](const LogRecord& r) {
                               out.push_back(r);
                               return Status::Ok();
                             })
                    .ok());
    if (position != nullptr) *position = at;
    return out;
  }

  // node-a mounts seg-a again after the restart, offering its first mount
  // (endpoint a:1#e1, token 11) and presenting a new one (a:1#e2, token 33).
  static StatusOr<SegmentId> RemountA(MasterService& m, bool* adopted = nullptr,
                                      uint64_t capacity = kSegBytes) {
    PreviousMount prev{"a:1#e1", 11};
    return m.MountSegment(Spec("seg-a", "node-a", "a:1#e2", 33, capacity), &prev, adopted);
  }

  MemoryLog log_;
  MemoryLog log2_;  // the restored engine's own
  SegmentId seg_a_ = kNoSegment;
  SegmentId seg_b_ = kNoSegment;
};

TEST_F(MasterRestoreTest, ObjectsComeBackWhenTheirNodeTakesTheSegmentOver) {
  MountBoth();
  PutConfig on_a;
  on_a.preferred_segment = "seg-a";
  ASSERT_TRUE(PutSum("x", 1000, 0x1111, on_a).ok());
  ASSERT_TRUE(PutSum("y", 5000, 0x2222, on_a).ok());
  ASSERT_TRUE(PutSum("gone", 10, 0x3333, on_a).ok());
  ASSERT_TRUE(master().Remove("gone").ok());
  auto before = master().GetReplicaList("y");
  ASSERT_TRUE(before.ok());
  const uint64_t used_before = master().Stats().used_bytes;

  MasterService::RestoreSummary summary;
  auto m = Restored(log_.Decoded(), 5'000, &summary);
  EXPECT_EQ(summary.objects, 2u);
  EXPECT_EQ(summary.segments, 2u);
  EXPECT_EQ(m->restored_segments_waiting(), 2u);
  // Nothing is visible before the node is back; the segment takes no puts.
  EXPECT_FALSE(m->GetReplicaList("y").ok());
  EXPECT_FALSE(*m->Exists("y"));
  EXPECT_EQ(*m->BatchQueryPrefix(std::vector<std::string>{"x"}), 0u);
  EXPECT_EQ(m->PutStart("new", 10, {}).status().code(), ErrorCode::kUnavailable);

  bool adopted = false;
  auto id = RemountA(*m, &adopted);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_TRUE(adopted);
  EXPECT_EQ(*id, seg_a_) << "the segment keeps its id";
  auto after = m->GetReplicaList("y");
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(after->size, 5000u);
  EXPECT_EQ(after->checksum, 0x2222u);
  ASSERT_EQ(after->replicas.size(), 1u);
  EXPECT_EQ(after->replicas[0].offset, before->replicas[0].offset);
  EXPECT_EQ(after->replicas[0].endpoint, "a:1#e2") << "the new mount's endpoint (new epoch)";
  EXPECT_TRUE(m->GetReplicaList("x").ok());
  EXPECT_FALSE(m->GetReplicaList("gone").ok());
  m->AwaitRestoreCompleted();  // the take-over did not wait for the allocator
  EXPECT_EQ(m->Stats().used_bytes, used_before) << "the allocator was rebuilt from the replicas";
  EXPECT_EQ(m->counters().restore_adopted_segments.load(), 1u);
  // The taking over was logged as a mount of the same id with the new spec.
  const std::vector<LogRecord> own = log2_.Decoded();
  ASSERT_FALSE(own.empty());
  EXPECT_EQ(own.back().type, LogRecordType::kSegmentMounted);
  EXPECT_EQ(own.back().segment, seg_a_);
  EXPECT_EQ(own.back().spec.endpoint, "a:1#e2");
}

TEST_F(MasterRestoreTest, NewPutsNeverOverlapRestoredReplicas) {
  MountBoth();
  PutConfig on_a;
  on_a.preferred_segment = "seg-a";
  std::vector<std::pair<uint64_t, uint64_t>> kept;  // offset, size
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(PutSum("k" + std::to_string(i), 3000, i, on_a).ok());
  for (int i = 0; i < 50; i += 2) ASSERT_TRUE(master().Remove("k" + std::to_string(i)).ok());
  auto m = Restored(log_.Decoded());
  ASSERT_TRUE(RemountA(*m).ok());
  m->AwaitRestoreCompleted();  // the segment takes puts once its allocator is in
  for (int i = 1; i < 50; i += 2) {
    auto r = m->GetReplicaList("k" + std::to_string(i));
    ASSERT_TRUE(r.ok());
    kept.emplace_back(r->replicas[0].offset, 3000);
  }
  // Fill the segment with new objects: none lands on a restored one.
  int fresh = 0;
  for (;; ++fresh) {
    auto g = m->PutStart("n" + std::to_string(fresh), 3000, on_a);
    if (!g.ok()) break;
    ASSERT_EQ(g->replicas.size(), 1u);
    const uint64_t off = g->replicas[0].offset;
    for (auto [o, n] : kept) EXPECT_TRUE(off + 3000 <= o || off >= o + n) << off << " vs " << o;
    ASSERT_TRUE(m->PutEnd("n" + std::to_string(fresh), g->token).ok());
    if (fresh > 400) break;
  }
  EXPECT_GT(fresh, 100);
  for (int i = 1; i < 50; i += 2) EXPECT_TRUE(m->GetReplicaList("k" + std::to_string(i)).ok());
}

TEST_F(MasterRestoreTest, ANodeThatComesBackWithNewMemoryLosesItsObjects) {
  MountBoth();
  PutConfig both;
  both.replica_count = 2;
  PutConfig on_b;
  on_b.preferred_segment = "seg-b";
  ASSERT_TRUE(PutSum("twice", 100, 1, both).ok());
  ASSERT_TRUE(PutSum("only-b", 100, 2, on_b).ok());
  auto m = Restored(log_.Decoded());
  // node-b restarted: no previous mount (or a wrong token) means new memory.
  PreviousMount wrong{"b:1#e1", 999};
  bool adopted = true;
  ASSERT_TRUE(m->MountSegment(Spec("seg-b", "node-b", "b:1#e9", 44), &wrong, &adopted).ok());
  EXPECT_FALSE(adopted);
  EXPECT_FALSE(m->GetReplicaList("only-b").ok());
  EXPECT_EQ(m->counters().restore_dropped_new_memory.load(), 1u);
  // "twice" keeps its replica on seg-a, readable once node-a is back.
  ASSERT_TRUE(RemountA(*m).ok());
  auto r = m->GetReplicaList("twice");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->replicas.size(), 1u);
  EXPECT_EQ(r->replicas[0].segment, seg_a_);
  // A fresh segment never reuses an id the records knew.
  std::set<SegmentId> ids;
  for (const SegmentInfo& s : m->ListSegments()) ids.insert(s.id);
  EXPECT_EQ(ids.size(), 2u);
  EXPECT_FALSE(ids.contains(seg_b_));
}

// During the grace a restored object whose node is not back is not shown
// (Exists, gets), and a put of its key says why it cannot go ahead yet,
// retryably: once the node is back the key exists; once the grace has passed
// the object is gone and the put succeeds.
TEST_F(MasterRestoreTest, APutOfARestoredKeyWaitingForItsNodeIsNotReady) {
  MountBoth();
  PutConfig on_a, on_b;
  on_a.preferred_segment = "seg-a";
  on_b.preferred_segment = "seg-b";
  ASSERT_TRUE(PutSum("on-a", 100, 1, on_a).ok());
  ASSERT_TRUE(PutSum("on-b", 100, 2, on_b).ok());
  auto m = Restored(log_.Decoded(), 2'000);
  ASSERT_TRUE(RemountA(*m).ok());  // node-b is not back
  EXPECT_FALSE(*m->Exists("on-b"));
  EXPECT_EQ(m->GetReplicaList("on-b").status().code(), ErrorCode::kObjectNotFound);
  auto waiting = m->PutStart("on-b", 100, {});
  ASSERT_EQ(waiting.status().code(), ErrorCode::kObjectNotReady);
  EXPECT_NE(waiting.status().message().find("restored"), std::string::npos)
      << waiting.status().ToString();
  // Its node is back: the key exists, as a put of it says.
  EXPECT_TRUE(*m->Exists("on-a"));
  EXPECT_EQ(m->PutStart("on-a", 100, {}).status().code(), ErrorCode::kObjectAlreadyExists);
  // The grace passes: the object is dropped and the key can be put again.
  clock_.Advance(2'001);
  m->RunMaintenance();
  EXPECT_FALSE(*m->Exists("on-b"));
  m->AwaitRestoreCompleted();  // seg-a takes puts once its allocator is in
  auto put = m->PutStart("on-b", 100, {});
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  ASSERT_TRUE(m->PutEnd("on-b", put->token, 3).ok());
  EXPECT_TRUE(*m->Exists("on-b"));
}

// Listing agrees with Exists and gets during the grace: a key that waits for
// its node is not listed until the node is back, and never after its drop.
TEST_F(MasterRestoreTest, ARestoredKeyWaitingForItsNodeIsNotListed) {
  MountBoth();
  PutConfig on_a, on_b;
  on_a.preferred_segment = "seg-a";
  on_b.preferred_segment = "seg-b";
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(PutSum("k/a" + std::to_string(i), 100, 1, on_a).ok());
    ASSERT_TRUE(PutSum("k/b" + std::to_string(i), 100, 2, on_b).ok());
  }
  auto m = Restored(log_.Decoded(), 2'000);
  m->AwaitRestoreCompleted();
  EXPECT_TRUE(m->List("k/").empty()) << "no node is back";
  ASSERT_TRUE(RemountA(*m).ok());
  const std::vector<std::string> on_a_keys = {"k/a0", "k/a1", "k/a2"};
  EXPECT_EQ(m->List("k/"), on_a_keys);
  EXPECT_EQ(m->List("k/", 0, 0, nullptr, "k/a0"), std::vector<std::string>({"k/a1", "k/a2"}));
  for (const std::string& k : m->List("k/")) EXPECT_TRUE(*m->Exists(k)) << k;
  EXPECT_FALSE(*m->Exists("k/b0"));
  clock_.Advance(2'001);
  m->RunMaintenance();
  EXPECT_EQ(m->List("k/"), on_a_keys);
}

// A slot's incarnation outlives a snapshot: an id unmounted before it is not
// handed out again, nor is one a restored master used, by a second restore
// from the same snapshot and the log after it.
TEST_F(MasterRestoreTest, AnIdUnmountedBeforeTheSnapshotIsNotReused) {
  MountBoth();
  ASSERT_TRUE(master().UnmountSegment("seg-b", "node-b", 22).ok());
  const std::vector<LogRecord> snapshot = Captured();
  auto first = Restored(snapshot);
  auto c = first->MountSegment(Spec("seg-c", "node-c", "c:1#e1", 55));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_NE(*c, seg_b_);
  std::vector<LogRecord> again = snapshot;
  const std::vector<LogRecord> after = log2_.Decoded();  // the first restored master's log
  again.insert(again.end(), after.begin(), after.end());
  auto m = MasterService::Create(config_, clock_, nullptr);
  ASSERT_TRUE(m.ok());
  for (const LogRecord& r : again) (*m)->ApplyRestored(r);
  (*m)->FinishRestore(5'000);
  auto d = (*m)->MountSegment(Spec("seg-d", "node-d", "d:1#e1", 66));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_NE(*d, seg_b_);
  EXPECT_NE(*d, *c);
  EXPECT_NE(*d, seg_a_);
}

TEST_F(MasterRestoreTest, SegmentsThatNeverComeBackAreDroppedAfterTheGrace) {
  MountBoth();
  ASSERT_TRUE(PutSum("x", 100, 1).ok());
  auto m = Restored(log_.Decoded(), 2'000);
  clock_.Advance(1'999);
  m->RunMaintenance();
  EXPECT_EQ(m->restored_segments_waiting(), 2u);
  clock_.Advance(2);
  m->RunMaintenance();
  EXPECT_EQ(m->restored_segments_waiting(), 0u);
  EXPECT_EQ(m->Stats().objects, 0u);
  EXPECT_EQ(m->counters().restore_dropped_expired.load(), 1u);
  // Too late: the node's offer is refused as a restore, and it mounts empty.
  bool adopted = true;
  ASSERT_TRUE(RemountA(*m, &adopted).ok());
  EXPECT_FALSE(adopted);
  EXPECT_FALSE(m->GetReplicaList("x").ok());
  // The drops were logged: a restore from this engine's log agrees.
  const std::vector<LogRecord> own = log2_.Decoded();
  EXPECT_TRUE(std::any_of(own.begin(), own.end(), [](const LogRecord& r) {
    return r.type == LogRecordType::kSegmentUnmounted;
  }));
}

TEST_F(MasterRestoreTest, SnapshotPlusTheLogAfterItEqualsTheWholeLog) {
  MountBoth();
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(PutSum("s" + std::to_string(i), 200, i).ok());
  uint64_t position = 0;
  std::vector<LogRecord> records = Captured(&position);
  // Changes after the snapshot: in the log from `position` on.
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(master().Remove("s" + std::to_string(i)).ok());
  for (int i = 20; i < 30; ++i) ASSERT_TRUE(PutSum("s" + std::to_string(i), 200, i).ok());
  ASSERT_TRUE(master().UnmountSegment("seg-b", "node-b", 22).ok());
  const std::vector<LogRecord> all = log_.Decoded();
  records.insert(records.end(), all.begin() + static_cast<ptrdiff_t>(position), all.end());
  auto m = Restored(records);
  ASSERT_TRUE(RemountA(*m).ok());
  for (int i = 0; i < 30; ++i) {
    const std::string k = "s" + std::to_string(i);
    auto want = master().GetReplicaList(k);
    auto got = m->GetReplicaList(k);
    EXPECT_EQ(want.ok(), got.ok()) << k;
    if (want.ok() && got.ok()) {
      EXPECT_EQ(got->checksum, want->checksum);
      EXPECT_EQ(got->replicas[0].offset, want->replicas[0].offset);
    }
  }
  EXPECT_EQ(m->Stats().objects, master().Stats().objects);
  // The key index, built once at the end of the restore, lists the same keys
  // and takes removes and puts afterwards.
  EXPECT_EQ(m->List("s"), master().List("s"));
  EXPECT_EQ(m->List("s2"), master().List("s2"));
  EXPECT_EQ(m->List("s", 3, 0, nullptr, "s12"), master().List("s", 3, 0, nullptr, "s12"));
  const std::string first = master().List("s").front();
  ASSERT_TRUE(m->Remove(first, /*force=*/true).ok());  // the reads above leased it
  // seg-a takes puts once its allocator is in.
  m->AwaitRestoreCompleted();
  ASSERT_TRUE(m->PutStart("s1x", 10, {}).ok());
  EXPECT_EQ(*m->RemoveByPrefix("s2", true), *master().RemoveByPrefix("s2", true));
  std::vector<std::string> want = master().List("s");
  want.erase(std::find(want.begin(), want.end(), first));
  EXPECT_EQ(m->List("s"), want) << "a pending put is not listed";
  // seg-b was unmounted after the snapshot: it is not waiting for its node.
  EXPECT_EQ(m->restored_segments_waiting(), 0u);
}

// Batches (shards applied in parallel, the policy filled at the end of each)
// leave exactly the state and eviction order that one record at a time does:
// with keys put again (a snapshot's records repeated by the log after it),
// removed, pinned, and losing a replica, wherever the batches are cut.
// Chain parents too, under prefix-lru: puts name random parents (absent,
// put later, put again, removed, or the key itself), and every object is
// linked to its parent key's object at the end, however the batches fall.
TEST_F(MasterRestoreTest, BatchesApplyAsOneRecordAtATime) {
  config_.eviction_policy = "prefix-lru";
  MountBoth();
  std::mt19937 rng(5);
  for (int i = 0; i < 600; ++i) {
    const std::string key = "b" + std::to_string(rng() % 150);
    if (rng() % 4 == 0) {
      (void)master().Remove(key, /*force=*/true);
      continue;
    }
    PutConfig pc;
    if (rng() % 3 != 0) pc.parent_key = "b" + std::to_string(rng() % 150);
    pc.replica_count = 1 + rng() % 2;
    if (rng() % 8 == 0) pc.soft_pin_ttl_ms = 1'000'000;
    if (rng() % 16 == 0) pc.hard_pin = true;
    const Status put = PutSum(key, 100 + rng() % 900, i, pc);
    ASSERT_TRUE(put.ok() || put.code() == ErrorCode::kObjectAlreadyExists) << put.ToString();
  }
  ASSERT_GT(master().Stats().objects, 50u);
  std::vector<LogRecord> records;
  for (const LogRecord& r : log_.Decoded()) {
    records.push_back(r);
    if (r.type != LogRecordType::kPutEnded) continue;
    if (rng() % 3 == 0) records.push_back(r);  // applied again: replaces the key
    if (r.replicas.size() == 2 && rng() % 3 == 0) {
      LogRecord drop;
      drop.type = LogRecordType::kReplicaDropped;
      drop.key = r.key;
      drop.segment = r.replicas[1].segment;
      drop.offset = r.replicas[1].offset;
      records.push_back(drop);
    }
  }

  auto one_by_one = Restored(records);
  auto batched = MasterService::Create(config_, clock_, &log2_);
  ASSERT_TRUE(batched.ok());
  for (size_t at = 0; at < records.size();) {
    const size_t n = std::min<size_t>(records.size() - at, 1 + rng() % 200);
    (*batched)->ApplyRestoredBatch(std::span(records).subspan(at, n));
    at += n;
  }
  const MasterService::RestoreSummary a = one_by_one->FinishRestore(5'000);
  const MasterService::RestoreSummary b = (*batched)->FinishRestore(5'000);
  EXPECT_EQ(a.records, b.records);
  EXPECT_EQ(a.objects, b.objects);
  EXPECT_GT(b.objects, 50u);
  for (MasterService* m : {one_by_one.get(), batched->get()}) {
    ASSERT_TRUE(RemountA(*m).ok());
    PreviousMount prev{"b:1#e1", 22};
    ASSERT_TRUE(m->MountSegment(Spec("seg-b", "node-b", "b:1#e2", 44), &prev).ok());
  }
  auto capture = [](MasterService& m) {
    std::vector<LogRecord> out;
    uint64_t at = 0;
    EXPECT_TRUE(m.Capture(&at, [&](const LogRecord& r) {
                   out.push_back(r);
                   return Status::Ok();
                 }).ok());
    return out;
  };
  const std::vector<LogRecord> want = capture(*one_by_one), got = capture(**batched);
  EXPECT_GT(want.size(), 50u);
  EXPECT_GT(std::count_if(want.begin(), want.end(),
                          [](const LogRecord& r) { return !r.parent_key.empty(); }),
            10)
      << "chains are restored";
  EXPECT_EQ(got, want) << "objects, pins, replicas and eviction order";
  EXPECT_EQ((*batched)->List("b"), one_by_one->List("b"));
  EXPECT_EQ((*batched)->Pins().soft, one_by_one->Pins().soft);
}

TEST_F(MasterRestoreTest, ASegmentMountedWithoutATokenIsNeverTakenOver) {
  Mount("seg-a", kSegBytes);  // no owner token: nothing can prove the node is the same
  ASSERT_TRUE(Put("o", 4096).ok());
  auto m = Restored(log_.Decoded());
  PreviousMount prev{"node-a:7000", 0};
  bool adopted = true;
  ASSERT_TRUE(m->MountSegment(Spec("seg-a", "node-a", "node-a:7001", 0), &prev, &adopted).ok());
  EXPECT_FALSE(adopted);
  EXPECT_FALSE(m->GetReplicaList("o").ok());
}

// The eviction order is copied in parts, the policy lock released between
// them, while another thread reads (touches), lets soft pins expire (objects
// move between policies), removes, puts and puts removed keys again. The
// snapshot still holds every object that lived through it exactly once, and
// restores.
TEST_F(MasterRestoreTest, AnOrderCopiedInPartsUnderLoadHoldsEachObjectOnce) {
  config_.snapshot_order_items_per_lock = 2;
  config_.lease_ms = 1;
  MountBoth();
  constexpr int kKept = 60;
  for (int i = 0; i < kKept; ++i) {
    PutConfig pc;
    if (i % 2 == 0) pc.soft_pin_ttl_ms = 1 + i;  // expiring while the copy runs
    ASSERT_TRUE(PutSum("k" + std::to_string(i), 512, i, pc).ok());
  }
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(PutSum("v" + std::to_string(i), 512, i).ok());
  std::atomic<bool> done{false};
  std::atomic<int> rounds{0};
  std::thread load([&] {
    std::mt19937 rng(7);
    for (int n = 0; !done.load() || n < 20; ++n) {
      (void)master().GetReplicaList("k" + std::to_string(rng() % kKept));
      const std::string v = "v" + std::to_string(rng() % 40);
      if (rng() % 2 == 0) {
        (void)master().Remove(v, /*force=*/true);
      } else {
        (void)PutSum(v, 512, 7);  // again, as a new object, if it was removed
      }
      (void)PutSum("n" + std::to_string(n), 512, n);
      clock_.Advance(1);
      master().RunMaintenance();  // flushes the touches, expires soft pins
      rounds.fetch_add(1);
    }
  });
  // A few snapshots, each cut by the load at other places.
  std::vector<LogRecord> records;
  uint64_t position = 0;
  for (int snapshot = 0; snapshot < 4; ++snapshot) {
    records = Captured(&position);
    std::map<std::string, int> puts;
    for (const LogRecord& r : records) {
      if (r.type == LogRecordType::kPutEnded) ++puts[r.key];
    }
    // A "v" key removed and put again between two emits may come twice, as
    // two objects (the log after the snapshot orders them); the others never.
    for (const auto& [key, n] : puts) {
      if (key[0] != 'v') {
        EXPECT_EQ(n, 1) << key << " in snapshot " << snapshot;
      }
    }
    for (int i = 0; i < kKept; ++i) EXPECT_EQ(puts["k" + std::to_string(i)], 1) << i;
  }
  done.store(true);
  load.join();
  EXPECT_GT(rounds.load(), 0);
  // The last snapshot plus the log after its position is the engine's state.
  const std::vector<LogRecord> all = log_.Decoded();
  records.insert(records.end(), all.begin() + static_cast<ptrdiff_t>(position), all.end());
  auto m = Restored(records);
  ASSERT_TRUE(RemountA(*m).ok());
  PreviousMount prev_b{"b:1#e1", 22};
  ASSERT_TRUE(m->MountSegment(Spec("seg-b", "node-b", "b:1#e2", 44), &prev_b).ok());
  EXPECT_EQ(m->Stats().objects, master().Stats().objects);
  for (int i = 0; i < kKept; ++i) {
    const std::string k = "k" + std::to_string(i);
    auto want = master().GetReplicaList(k);
    auto got = m->GetReplicaList(k);
    ASSERT_TRUE(want.ok()) << k;
    ASSERT_TRUE(got.ok()) << k << ": " << got.status().message();
    EXPECT_EQ(got->checksum, want->checksum) << k;
  }
}

TEST_F(MasterRestoreTest, EvictionFollowsTheRestoredOrder) {
  config_.lease_ms = 100'000;
  auto seg = master().MountSegment(Spec("seg-a", "node-a", "a:1#e1", 11, 64 * 1024));
  ASSERT_TRUE(seg.ok());
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(Put("o" + std::to_string(i), 4096).ok());
  ASSERT_TRUE(master().GetReplicaList("o0").ok());
  master().RunMaintenance();  // the policy sees the read: o0 is the most recent
  auto m = Restored(Captured());
  ASSERT_TRUE(RemountA(*m, nullptr, 64 * 1024).ok());
  // Leases were not restored: the first victims are the oldest, o1 and o2.
  EXPECT_GE(m->EvictBytes(2 * 4096), 2u * 4096);
  EXPECT_FALSE(m->GetReplicaList("o1").ok());
  EXPECT_FALSE(m->GetReplicaList("o2").ok());
  EXPECT_TRUE(m->GetReplicaList("o0").ok());
  EXPECT_TRUE(m->GetReplicaList("o3").ok());
}

// The engine serves from FinishRestore on, before its completion (policy
// fill, key indexes, Bloom filter) has run: every answer is already right, a
// put ending meanwhile comes after the restored objects in the eviction
// order, a remove meanwhile leaves no trace in the policy, and an eviction
// asked for meanwhile waits for the fill and takes the restored order's first.
TEST_F(MasterRestoreTest, AnswersAreRightWhileTheRestoreCompletes) {
  auto seg = master().MountSegment(Spec("seg-a", "node-a", "a:1#e1", 11, 64 * 1024));
  ASSERT_TRUE(seg.ok());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(Put("o" + std::to_string(i), 4096).ok());
  std::vector<LogRecord> records = log_.Decoded();
  auto restored = MasterService::Create(config_, clock_, &log2_);
  ASSERT_TRUE(restored.ok());
  MasterService& m = **restored;
  m.ApplyRestoredBatch(records);
  m.FinishRestore(5'000, /*complete_in_background=*/false);
  ASSERT_FALSE(m.RestoreCompleted());
  m.RebuildRestoredAllocators();  // the completion's first step: the take-over waits for it
  ASSERT_TRUE(RemountA(m, nullptr, 64 * 1024).ok());
  // No Bloom filter yet: the index answers, with no false negative.
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(*m.Exists("o" + std::to_string(i))) << i;
  EXPECT_FALSE(*m.Exists("absent"));
  EXPECT_EQ(*m.BatchQueryPrefix(std::vector<std::string>{"o0", "o1", "o2", "absent"}), 3u);
  EXPECT_TRUE(m.GetReplicaList("o3").ok());  // o3 is read: its touch waits for the fill
  // No key index yet: a list builds what it needs.
  EXPECT_EQ(m.List("o"), (std::vector<std::string>{"o0", "o1", "o2", "o3", "o4"}));
  // A put ends and a restored object is removed before the policies are filled.
  auto late = m.PutStart("late", 4096, {});
  ASSERT_TRUE(late.ok()) << late.status().ToString();
  ASSERT_TRUE(m.PutEnd("late", late->token, 5).ok());
  ASSERT_TRUE(m.Remove("o1").ok());
  EXPECT_FALSE(*m.Exists("o1"));
  EXPECT_TRUE(*m.Exists("late"));
  ASSERT_FALSE(m.RestoreCompleted());
  clock_.Advance(config_.lease_ms + 1'000);  // no lease spares anything
  // An eviction asked for now waits for the fill, then takes the first
  // object of the restored order.
  uint64_t freed = 0;
  std::thread evict([&] { freed = m.EvictBytes(1); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // likely waiting by now
  m.CompleteRestore();
  evict.join();
  EXPECT_TRUE(m.RestoreCompleted());
  EXPECT_GE(freed, 1u);
  EXPECT_FALSE(*m.Exists("o0"));
  // The rest leave in order: the restored objects, then the put that ended
  // during the fill, then o3, whose read reached the policy at the fill's end.
  std::vector<std::string> victims;
  std::vector<std::string> left = m.List("");
  while (!left.empty() && m.EvictBytes(1) != 0) {
    std::vector<std::string> now = m.List("");
    for (const std::string& k : left) {
      if (std::find(now.begin(), now.end(), k) == now.end()) victims.push_back(k);
    }
    left = std::move(now);
  }
  EXPECT_EQ(victims, (std::vector<std::string>{"o2", "o4", "late", "o3"}));
  EXPECT_EQ(m.counters().bloom_rebuilds.load(), 1u);
  EXPECT_FALSE(*m.Exists("o2"));
}

// The chain parents of a snapshot alone (no log after it): the restored
// engine holds the same objects, parents and order, pages parked before the
// snapshot included, and evicts leaf first, in the order the first one does.
TEST_F(MasterRestoreTest, ChainsComeBackFromASnapshotAloneAndEvictLeafFirst) {
  config_.eviction_policy = "prefix-lru";
  ASSERT_TRUE(master().MountSegment(Spec("seg-a", "node-a", "a:1#e1", 11)).ok());
  const std::map<std::string, std::string> parent = {
      {"c1", "c0"}, {"c2", "c1"}, {"c3", "c2"}, {"d1", "d0"}, {"d2", "d1"}};
  for (const char* key : {"c0", "c1", "c2", "c3", "s0", "d0", "d1", "d2", "s1"}) {
    PutConfig pc;
    if (auto it = parent.find(key); it != parent.end()) pc.parent_key = it->second;
    ASSERT_TRUE(PutSum(key, 1000, 1, pc).ok());
  }
  // Later requests read c2, c3 and d0: the list is c0 c1 s0 d1 d2 s1 c2 c3 d0,
  // so d0 is newer than its child.
  for (const char* key : {"c2", "c3", "d0"}) ASSERT_TRUE(master().GetReplicaList(key).ok());
  master().RunMaintenance();
  clock_.Advance(config_.lease_ms + 1'000);  // no lease spares anything
  // One victim: c0 and c1 are parked (their children are cached), s0 goes.
  ASSERT_GE(master().EvictBytes(1), 1u);
  EXPECT_FALSE(Readable("s0"));
  const std::vector<LogRecord> snapshot = Captured();
  auto objects = [](const std::vector<LogRecord>& records) {
    std::vector<LogRecord> out;
    for (const LogRecord& r : records) {
      if (r.type == LogRecordType::kPutEnded) out.push_back(r);
    }
    return out;
  };
  std::vector<std::string> order;
  for (const LogRecord& r : objects(snapshot)) {
    order.push_back(r.key);
    auto it = parent.find(r.key);
    EXPECT_EQ(r.parent_key, it == parent.end() ? "" : it->second) << r.key;
  }
  EXPECT_EQ(order, (std::vector<std::string>{"c0", "c1", "d1", "d2", "s1", "c2", "c3", "d0"}))
      << "parked pages first, then the list from its oldest end";

  auto m = Restored(snapshot);
  ASSERT_TRUE(RemountA(*m).ok());
  std::vector<LogRecord> again;
  uint64_t at = 0;
  ASSERT_TRUE(m->Capture(&at, [&](const LogRecord& r) {
                 again.push_back(r);
                 return Status::Ok();
               }).ok());
  EXPECT_EQ(objects(again), objects(snapshot));

  // Both read d2 (d1 and then d0 reach the old end while their child is
  // cached, d0 through a link made after d1's record), then evict one page
  // at a time: the same victims, each after its children.
  auto victims = [&](MasterService& e) {
    EXPECT_TRUE(e.GetReplicaList("d2").ok());
    e.RunMaintenance();
    clock_.Advance(config_.lease_ms + 1'000);
    std::vector<std::string> out;
    std::vector<std::string> left = e.List("");
    while (!left.empty()) {
      if (e.EvictBytes(1) == 0) break;
      std::vector<std::string> now = e.List("");
      for (const std::string& k : left) {
        if (std::find(now.begin(), now.end(), k) == now.end()) out.push_back(k);
      }
      left = std::move(now);
    }
    return out;
  };
  const std::vector<std::string> want = victims(master());
  EXPECT_EQ(want, (std::vector<std::string>{"s1", "c3", "c2", "c1", "c0", "d2", "d1", "d0"}));
  EXPECT_EQ(victims(*m), want);
}

TEST_F(MasterRestoreTest, ConflictingAllocationsDropTheirSegment) {
  MountBoth();
  PutConfig on_a;
  on_a.preferred_segment = "seg-a";
  ASSERT_TRUE(PutSum("p", 100, 1, on_a).ok());
  std::vector<LogRecord> records = log_.Decoded();
  // A forged record: another key in the very same place.
  LogRecord forged = records.back();
  ASSERT_EQ(forged.type, LogRecordType::kPutEnded);
  forged.key = "q";
  forged.replicas[0].alloc_node += 1;
  records.push_back(forged);
  auto m = Restored(records);
  // Found when the completion rebuilds the allocators, while serving.
  m->AwaitRestoreCompleted();
  EXPECT_EQ(m->counters().restore_dropped_conflict.load(), 2u);
  EXPECT_FALSE(*m->Exists("p"));
  EXPECT_EQ(m->restored_segments_waiting(), 1u) << "seg-b is still restored";
  // seg-a's node mounts an empty segment: nothing of the dropped one is taken over.
  bool adopted = true;
  ASSERT_TRUE(RemountA(*m, &adopted).ok());
  EXPECT_FALSE(adopted);
  EXPECT_FALSE(m->GetReplicaList("p").ok());
}

// The allocators are rebuilt by the completion, while the engine serves: a
// take-over never waits for its segment's (it is answered at once, and the
// segment takes no new replica until the allocator is in), a remove meanwhile
// leaves its space to the rebuilt allocator, and other segments mount and take
// puts at once.
TEST_F(MasterRestoreTest, ATakeOverIsAnsweredBeforeItsAllocatorIsRebuilt) {
  MountBoth();
  PutConfig on_a;
  on_a.preferred_segment = "seg-a";
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(PutSum("k" + std::to_string(i), 3000, i, on_a).ok());
  const uint64_t used_by_one = master().Stats().used_bytes / 8;
  auto restored = MasterService::Create(config_, clock_, &log2_);
  ASSERT_TRUE(restored.ok());
  MasterService& m = **restored;
  m.ApplyRestoredBatch(log_.Decoded());
  m.FinishRestore(5'000, /*complete_in_background=*/false);
  // Serving, seg-a's allocator not rebuilt yet: a restored object is removed.
  ASSERT_TRUE(m.Remove("k3").ok());
  EXPECT_FALSE(*m.Exists("k3"));
  // The take-over is answered on this thread while nothing rebuilds the
  // allocator (a take-over that waited for it would never return here).
  bool adopted = false;
  StatusOr<SegmentId> id = RemountA(m, &adopted);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_TRUE(adopted);
  EXPECT_EQ(*id, seg_a_);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(m.GetReplicaList("k" + std::to_string(i)).ok(), i != 3) << i;
  }
  // Meanwhile another node mounts, and a put lands there.
  auto c = m.MountSegment(Spec("seg-c", "node-c", "c:1#e1", 44));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  PutConfig on_c;
  on_c.preferred_segment = "seg-c";
  auto g = m.PutStart("fresh", 3000, on_c);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_TRUE(m.PutEnd("fresh", g->token, 9).ok());
  EXPECT_TRUE(*m.Exists("fresh"));
  m.RebuildRestoredAllocators();
  // seg-a holds the seven left (k3's space was freed into the rebuilt
  // allocator), seg-c the new put.
  EXPECT_EQ(m.Stats().used_bytes, 8 * used_by_one);
  for (const SegmentInfo& info : m.ListSegments()) {
    EXPECT_EQ(info.used_bytes, (info.id == seg_a_ ? 7 : 1) * used_by_one) << info.spec.name;
  }
  // Now seg-a takes puts, and none overlaps a restored replica.
  auto later = m.PutStart("later", 3000, on_a);
  ASSERT_TRUE(later.ok()) << later.status().ToString();
  ASSERT_EQ(later->replicas.size(), 1u);
  EXPECT_EQ(later->replicas[0].segment, seg_a_);
  m.CompleteRestore();
  EXPECT_TRUE(m.RestoreCompleted());
}

// A node whose mount answer was lost mounts again with the very same spec:
// the same answer, and nothing else changes; another token is refused.
TEST_F(MasterRestoreTest, AMountRepeatedWithTheSameSpecGetsTheSameAnswer) {
  MountBoth();
  PutConfig on_a;
  on_a.preferred_segment = "seg-a";
  ASSERT_TRUE(PutSum("x", 1000, 1, on_a).ok());
  auto m = Restored(log_.Decoded());
  m->AwaitRestoreCompleted();
  bool adopted = false;
  auto first = RemountA(*m, &adopted);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_TRUE(adopted);
  const size_t log_records = log2_.Decoded().size();
  adopted = false;
  auto again = RemountA(*m, &adopted);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, *first);
  EXPECT_TRUE(adopted) << "the first answer, again";
  EXPECT_EQ(log2_.Decoded().size(), log_records) << "a repeat logs nothing";
  EXPECT_TRUE(m->GetReplicaList("x").ok());
  auto other = m->MountSegment(Spec("seg-a", "node-a", "a:1#e2", 34));
  EXPECT_EQ(other.status().code(), ErrorCode::kSegmentAlreadyExists);
  // The repeat is also unmounted by its token, like the first.
  EXPECT_TRUE(m->UnmountSegment("seg-a", "node-a", 33).ok());
  EXPECT_FALSE(m->GetReplicaList("x").ok());
}

TEST_F(MasterRestoreTest, RecordsThatCannotApplyAreSkipped) {
  MountBoth();
  LogRecord bad;
  bad.type = LogRecordType::kPutEnded;
  bad.key = "no-replica";
  bad.size = 10;
  std::vector<LogRecord> records = log_.Decoded();
  records.push_back(bad);
  MasterService::RestoreSummary summary;
  auto m = Restored(records, 5'000, &summary);
  EXPECT_EQ(summary.skipped, 1u);
  EXPECT_EQ(summary.objects, 0u);
}

}  // namespace
}  // namespace crescent::master
