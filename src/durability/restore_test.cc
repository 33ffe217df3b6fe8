// RestoreMaster over real files: which snapshot it uses, the log after it,
// and what it does when files are missing or damaged.
#include "durability/restore.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "durability/snapshotter.h"
#include "durability/test_dir_for_test.h"

namespace crescent::durability {
namespace {

namespace fs = std::filesystem;

class RestoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("restore_test");
    OpenFirst();
  }
  void TearDown() override {
    master_.reset();
    log_.reset();
    fs::remove_all(dir_);
  }

  // The first master, mounted on one segment with a token (so it can be
  // taken over), writing to a fresh log in dir_.
  void OpenFirst() {
    log_ = OpenLog();
    auto m = master::MasterService::Create(config_, clock_, log_.get());
    ASSERT_TRUE(m.ok());
    master_ = std::move(m).value();
    ASSERT_TRUE(master_->MountSegment(Spec()).ok());
  }
  static master::SegmentSpec Spec(const std::string& endpoint = "node:7000#1", uint64_t token = 5) {
    return {"seg", 64 << 20, "node", endpoint, master::Tier::kDram, token};
  }
  std::unique_ptr<FileOperationLog> OpenLog(std::vector<std::string>* warnings_out = nullptr) {
    std::vector<std::string> warnings;
    FileLogOptions lo;
    lo.dir = dir_;
    lo.sync_interval_ms = 0;
    lo.file_bytes = log_file_bytes_;
    lo.start_position = LogStartForDir(dir_);
    auto log = FileOperationLog::Open(lo, warnings_out != nullptr ? warnings_out : &warnings);
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    return log.ok() ? std::move(log).value() : nullptr;
  }
  void Put(const std::string& key, uint64_t size = 1000) {
    auto g = master_->PutStart(key, size, {});
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    ASSERT_TRUE(master_->PutEnd(key, g->token, 42).ok());
  }
  void Snapshot() {
    Snapshotter s(*master_, log_.get(), {dir_, 2});
    ASSERT_TRUE(s.TakeNow().ok());
  }
  // Restores a master from dir_ on log_.
  StatusOr<RestoreResult> Restore(bool allow_empty = false, size_t batch_records = 1 << 15) {
    return RestoreMaster({dir_, allow_empty, 10'000, batch_records}, *log_, [&] {
      return master::MasterService::Create(config_, clock_, log_.get());
    });
  }
  // Stops the first master and restores a second from dir_.
  StatusOr<RestoreResult> Restart(bool allow_empty = false) {
    master_.reset();
    log_.reset();
    log_ = OpenLog();
    return Restore(allow_empty);
  }
  // Overwrites 8 bytes in the middle of a snapshot file.
  static void Damage(const std::string& path) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(path) / 2));
    f.write("XXXXXXXX", 8);
  }
  // Takes the restored segment back and says whether `key` is readable.
  static bool Readable(master::MasterService& m, const std::string& key) {
    master::PreviousMount prev{"node:7000#1", 5};
    bool adopted = false;
    if (m.restored_segments_waiting() != 0) {
      EXPECT_TRUE(m.MountSegment(Spec("node:7000#2", 6), &prev, &adopted).ok());
      EXPECT_TRUE(adopted);
    }
    return m.GetReplicaList(key).ok();
  }

  // What a restored engine holds: its objects in eviction order, with their
  // replicas and pins (Capture), once its segment is taken over.
  static std::vector<master::LogRecord> Held(master::MasterService& m) {
    (void)Readable(m, "k0_1");  // takes the segment over
    m.AwaitRestoreCompleted();
    std::vector<master::LogRecord> out;
    uint64_t at = 0;
    EXPECT_TRUE(m.Capture(&at, [&](const master::LogRecord& r) {
                   out.push_back(r);
                   return Status::Ok();
                 }).ok());
    return out;
  }

  master::MasterConfig config_;
  ManualClock clock_;
  uint64_t log_file_bytes_ = uint64_t{64} << 20;
  std::string dir_;
  std::unique_ptr<FileOperationLog> log_;
  std::unique_ptr<master::MasterService> master_;
};

// A put's end applied and logged just before a kill, its answer lost: the
// client ends it again on the restarted master with the old token. The key
// holds the object with that checksum, so the end succeeds (the put is not
// reported failed while its bytes are readable); any other end is refused.
TEST_F(RestoreTest, AnEndSentAgainAfterARestartSucceedsForItsOwnObject) {
  auto g = master_->PutStart("k", 1000, {});
  ASSERT_TRUE(g.ok());
  ASSERT_TRUE(master_->PutEnd("k", g->token, 0xabc).ok());
  auto r = Restart();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(Readable(*r->master, "k"));  // its node took the segment back
  EXPECT_TRUE(r->master->PutEnd("k", g->token, 0xabc).ok());
  EXPECT_EQ(r->master->PutEnd("k", g->token, 0xabd).code(), ErrorCode::kPutNotStarted);
  EXPECT_EQ(r->master->PutEnd("k", g->token, 0).code(), ErrorCode::kPutNotStarted);
  EXPECT_EQ(r->master->PutEnd("other", g->token, 0xabc).code(), ErrorCode::kPutNotStarted);
  EXPECT_EQ(r->master->Stats().objects, 1u);
}

TEST_F(RestoreTest, TheLogAloneWhenThereIsNoSnapshot) {
  Put("a");
  Put("b");
  ASSERT_TRUE(master_->Remove("a").ok());
  auto r = Restart();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->snapshot.empty());
  EXPECT_EQ(r->log_records, 4u);  // mount, two puts, a remove
  EXPECT_EQ(r->summary.objects, 1u);
  EXPECT_TRUE(Readable(*r->master, "b"));
  EXPECT_FALSE(r->master->GetReplicaList("a").ok());
}

TEST_F(RestoreTest, TheNewestSnapshotThenTheLogAfterIt) {
  Put("a");
  Snapshot();
  Put("b");
  Snapshot();
  Put("c");
  ASSERT_TRUE(master_->Remove("a").ok());
  auto r = Restart();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->snapshot, ListSnapshots(dir_).front());
  EXPECT_EQ(r->log_records, 2u) << "only the records after the newest snapshot";
  EXPECT_TRUE(Readable(*r->master, "b"));
  EXPECT_TRUE(Readable(*r->master, "c"));
  EXPECT_FALSE(r->master->GetReplicaList("a").ok());
}

TEST_F(RestoreTest, ADamagedSnapshotFallsBackToTheOlderOne) {
  Put("a");
  Snapshot();
  Put("b");
  Snapshot();
  Put("c");
  const std::string newest = ListSnapshots(dir_).front();
  Damage(newest);
  auto r = Restart();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->snapshot, ListSnapshots(dir_).back());
  ASSERT_FALSE(r->warnings.empty());
  EXPECT_NE(r->warnings[0].find(fs::path(newest).filename().string()), std::string::npos)
      << r->warnings[0];
  EXPECT_NE(r->warnings[0].find("block"), std::string::npos) << r->warnings[0];
  for (const char* k : {"a", "b", "c"}) EXPECT_TRUE(Readable(*r->master, k)) << k;
}

TEST_F(RestoreTest, ASnapshotWithoutItsLogIsNotEnough) {
  Put("a");
  Snapshot();
  Put("b");
  Snapshot();  // keeps two; the log before the older one is dropped
  Put("c");
  // Both snapshots damaged: the log no longer reaches back to position 0.
  for (const std::string& s : ListSnapshots(dir_)) Damage(s);
  master_.reset();
  log_.reset();
  // Drop the first log file, as truncation would have once its snapshot went.
  for (const auto& e : fs::directory_iterator(dir_)) {
    if (e.path().filename() == "log-0000000000000000.crlog") fs::remove(e.path());
  }
  log_ = OpenLog();
  auto refused = Restore();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kCorruptData);
  EXPECT_NE(refused.status().message().find("--allow-empty-restore"), std::string::npos)
      << refused.status().message();
  auto empty = Restore(/*allow_empty=*/true);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->started_empty);
  EXPECT_EQ(empty->summary.objects, 0u);
  EXPECT_FALSE(empty->warnings.empty());
}

TEST_F(RestoreTest, ALogDeletedAfterASnapshotGoesOnFromItsPosition) {
  Put("a");
  Snapshot();
  master_.reset();
  log_.reset();
  for (const auto& e : fs::directory_iterator(dir_)) {
    if (e.path().extension() == ".crlog") fs::remove(e.path());
  }
  log_ = OpenLog();
  EXPECT_EQ(log_->end_position(), LogStartForDir(dir_));
  auto r = Restore();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(Readable(*r->master, "a"));
  r->master->AwaitRestoreCompleted();  // the segment takes puts once its allocator is in
  // What the restored master logs now is found by the next restore.
  auto g = r->master->PutStart("b", 10, {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_TRUE(r->master->PutEnd("b", g->token, 1).ok());
  r->master.reset();
  auto again = Restart();
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  master::PreviousMount prev{"node:7000#2", 6};
  bool adopted = false;
  ASSERT_TRUE(again->master->MountSegment(Spec("node:7000#3", 7), &prev, &adopted).ok());
  EXPECT_TRUE(adopted) << "the take-over was logged with the new endpoint and token";
  EXPECT_TRUE(again->master->GetReplicaList("a").ok());
  EXPECT_TRUE(again->master->GetReplicaList("b").ok());
}

// The records go to the engine in batches, each decoded while the one before
// it applies (BatchPipeline): many small batches restore what one does, the
// same keys replaced and removed across batch boundaries.
TEST_F(RestoreTest, SmallBatchesRestoreWhatOneBatchDoes) {
  auto key = [](int round, int i) { return "k" + std::to_string(round) + "_" + std::to_string(i); };
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 20; ++i) Put(key(round, i), 100 + i);
    for (int i = 0; i < 20; i += 3) ASSERT_TRUE(master_->Remove(key(round, i)).ok());
    if (round == 1) Snapshot();
    // Removed keys come back with another size: a later record replaces them.
    for (int i = 0; i < 20; i += 6) Put(key(round, i), 5000 + i);
    if (round > 0) {
      for (int i = 1; i < 20; i += 3) ASSERT_TRUE(master_->Remove(key(round - 1, i)).ok());
    }
  }
  auto whole = Restart();
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  // All restored before any takes its segment over (which logs a mount).
  std::vector<RestoreResult> small;
  for (size_t batch : {size_t{1}, size_t{2}, size_t{7}}) {
    auto r = Restore(false, batch);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    small.push_back(std::move(r).value());
  }
  const std::vector<master::LogRecord> want = Held(*whole->master);
  EXPECT_GT(want.size(), 15u);
  EXPECT_GT(whole->snapshot_records, 10u);
  EXPECT_GT(whole->log_records, 10u);
  // The allocator each rebuilt: the same space used, and the next puts placed alike.
  auto placements = [](master::MasterService& m) {
    std::vector<uint64_t> out{m.Stats().used_bytes};
    for (int i = 0; i < 3; ++i) {
      auto g = m.PutStart("new" + std::to_string(i), 700 + i, {});
      EXPECT_TRUE(g.ok()) << g.status().ToString();
      if (g.ok()) out.push_back(g->replicas.at(0).offset);
    }
    return out;
  };
  const std::vector<uint64_t> want_placed = placements(*whole->master);
  for (RestoreResult& r : small) {
    EXPECT_EQ(r.snapshot, whole->snapshot);
    EXPECT_EQ(r.snapshot_records, whole->snapshot_records);
    EXPECT_EQ(r.log_records, whole->log_records);
    EXPECT_EQ(r.summary.objects, whole->summary.objects);
    EXPECT_EQ(Held(*r.master), want) << "objects, replicas and eviction order";
    EXPECT_EQ(placements(*r.master), want_placed) << "allocator state";
  }
}

TEST_F(RestoreTest, DamageInALaterBatchOfTheLogFailsTheRestore) {
  log_file_bytes_ = 256;  // many files: damage in an older one is not a torn tail
  master_.reset();
  log_.reset();
  OpenFirst();
  for (int i = 0; i < 60; ++i) Put("k" + std::to_string(i));
  master_.reset();
  log_.reset();
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir_)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GT(files.size(), 4u);
  {
    const fs::path& later = files[files.size() / 2];
    std::fstream f(later, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(FileOperationLog::kHeaderBytes + FileOperationLog::kFrameBytes + 2);
    f.put('Y');
  }
  log_ = OpenLog();
  auto refused = Restore(false, 2);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), ErrorCode::kCorruptData);
  auto empty = Restore(/*allow_empty=*/true, 2);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->started_empty);
  EXPECT_EQ(empty->summary.objects, 0u);
}

TEST_F(RestoreTest, ATornLogTailIsCutAndTheRestRestoredInBatches) {
  for (int i = 0; i < 9; ++i) Put("k" + std::to_string(i));
  master_.reset();
  log_.reset();
  fs::path newest;
  for (const auto& e : fs::directory_iterator(dir_)) newest = std::max(newest, e.path());
  fs::resize_file(newest, fs::file_size(newest) - 3);  // the last put's record cut short
  std::vector<std::string> warnings;
  log_ = OpenLog(&warnings);
  ASSERT_EQ(warnings.size(), 1u);
  auto r = Restore(false, 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->log_records, 9u);  // the mount and eight puts
  EXPECT_EQ(r->summary.objects, 8u);
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(Readable(*r->master, "k" + std::to_string(i))) << i;
  EXPECT_FALSE(r->master->GetReplicaList("k8").ok());
}

// The newest snapshot names a position beyond the log's end (its records
// were cut, or never synced): the restore falls back to the older snapshot
// and the log, and serves.
TEST_F(RestoreTest, ASnapshotBeyondTheLogsEndFallsBackToAnOlderOne) {
  Put("a");
  Snapshot();
  const uint64_t older = SnapshotNamePosition(ListSnapshots(dir_).front());
  Put("b");
  Snapshot();
  master_.reset();
  log_.reset();
  fs::path newest_log;
  for (const auto& e : fs::directory_iterator(dir_)) {
    if (e.path().extension() == ".crlog") newest_log = std::max(newest_log, e.path());
  }
  // The log as it was at the older snapshot: b's put lost.
  fs::resize_file(newest_log, FileOperationLog::kHeaderBytes + older);
  log_ = OpenLog();
  auto r = Restore();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->snapshot, ListSnapshots(dir_).back());
  ASSERT_FALSE(r->warnings.empty());
  EXPECT_NE(r->warnings[0].find("beyond the operation log's end"), std::string::npos)
      << r->warnings[0];
  EXPECT_TRUE(Readable(*r->master, "a"));
}

// Only a snapshot beyond the log's end is usable (the log's start is gone):
// the restore uses it alone, the log goes on from its position, and the next
// restart finds both.
TEST_F(RestoreTest, ASnapshotBeyondTheLogsEndIsUsedAloneWhenNothingElseIs) {
  log_file_bytes_ = 256;  // many files, so the snapshot drops the early ones
  master_.reset();
  log_.reset();
  OpenFirst();
  for (int i = 0; i < 20; ++i) Put("k" + std::to_string(i));
  {
    Snapshotter one(*master_, log_.get(), {dir_, 1});
    ASSERT_TRUE(one.TakeNow().ok());
  }
  master_.reset();
  log_.reset();
  const uint64_t position = SnapshotNamePosition(ListSnapshots(dir_).front());
  std::vector<fs::path> logs;
  for (const auto& e : fs::directory_iterator(dir_)) {
    if (e.path().extension() == ".crlog") logs.push_back(e.path());
  }
  std::sort(logs.begin(), logs.end());
  ASSERT_NE(logs.front().filename(), "log-0000000000000000.crlog") << "the start was dropped";
  // Every file starting at or after the snapshot's position gone, and the
  // one before cut at its first record: the log ends before the snapshot.
  for (const fs::path& f : logs) {
    uint64_t start = 0;
    std::sscanf(f.filename().c_str(), "log-%16lx.crlog", &start);
    if (start >= position) fs::remove(f);
  }
  logs.erase(
      std::remove_if(logs.begin(), logs.end(), [](const fs::path& f) { return !fs::exists(f); }),
      logs.end());
  ASSERT_FALSE(logs.empty());
  fs::resize_file(logs.back(), FileOperationLog::kHeaderBytes);
  log_ = OpenLog();
  ASSERT_LT(log_->end_position(), position);
  auto r = Restore();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->snapshot, ListSnapshots(dir_).front());
  EXPECT_EQ(log_->end_position(), position) << "the log goes on from the snapshot";
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(Readable(*r->master, "k" + std::to_string(i))) << i;
  r->master->AwaitRestoreCompleted();  // the segment takes puts once its allocator is in
  auto g = r->master->PutStart("after", 10, {});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_TRUE(r->master->PutEnd("after", g->token, 1).ok());
  r->master.reset();
  auto again = Restart();
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  master::PreviousMount prev{"node:7000#2", 6};
  bool adopted = false;
  ASSERT_TRUE(again->master->MountSegment(Spec("node:7000#3", 7), &prev, &adopted).ok());
  EXPECT_TRUE(adopted);
  EXPECT_TRUE(again->master->GetReplicaList("k0").ok());
  EXPECT_TRUE(again->master->GetReplicaList("after").ok());
}

}  // namespace
}  // namespace crescent::durability
