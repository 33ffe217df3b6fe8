// RestoreMaster over real files: which snapshot it uses, the log after it,
// and what it does when files are missing or damaged.
#include "durability/restore.h"

#include <gtest/gtest.h>

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
  std::unique_ptr<FileOperationLog> OpenLog() {
    std::vector<std::string> warnings;
    FileLogOptions lo;
    lo.dir = dir_;
    lo.sync_interval_ms = 0;
    lo.start_position = LogStartForDir(dir_);
    auto log = FileOperationLog::Open(lo, &warnings);
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    return log.ok() ? std::move(log).value() : nullptr;
  }
  void Put(const std::string& key) {
    auto g = master_->PutStart(key, 1000, {});
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    ASSERT_TRUE(master_->PutEnd(key, g->token, 42).ok());
  }
  void Snapshot() {
    Snapshotter s(*master_, log_.get(), {dir_, 2});
    ASSERT_TRUE(s.TakeNow().ok());
  }
  // Restores a master from dir_ on log_.
  StatusOr<RestoreResult> Restore(bool allow_empty = false) {
    return RestoreMaster({dir_, allow_empty, 10'000}, *log_, [&] {
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

  master::MasterConfig config_;
  ManualClock clock_;
  std::string dir_;
  std::unique_ptr<FileOperationLog> log_;
  std::unique_ptr<master::MasterService> master_;
};

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
  // What the restored master logs now is found by the next restore.
  auto g = r->master->PutStart("b", 10, {});
  ASSERT_TRUE(g.ok());
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

}  // namespace
}  // namespace crescent::durability
