// Snapshotter over a real engine and log: what a snapshot holds, in what
// order, which files it keeps, and that the engine keeps serving while one
// is taken.
#include "durability/snapshotter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "durability/test_dir_for_test.h"

namespace crescent::durability {
namespace {

namespace fs = std::filesystem;

std::string Key(std::string prefix, int i) {
  prefix += std::to_string(i);
  return prefix;
}

class SnapshotterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = FreshTestDir("snapshotter_test");
    std::vector<std::string> warnings;
    FileLogOptions lo;
    lo.dir = dir_;
    lo.file_bytes = 4096;     // small files, so truncation has whole files to drop
    lo.sync_interval_ms = 0;  // a batch per PutEnd: files rotate between records
    auto log = FileOperationLog::Open(lo, &warnings);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    log_ = std::move(log).value();
    auto m = master::MasterService::Create(config_, clock_, log_.get());
    ASSERT_TRUE(m.ok());
    master_ = std::move(m).value();
    ASSERT_TRUE(
        master_->MountSegment({"seg", 64 << 20, "node", "node:7000", master::Tier::kDram}).ok());
  }
  void TearDown() override {
    master_.reset();
    log_.reset();
    fs::remove_all(dir_);
  }

  void Put(const std::string& key, master::PutConfig pc = {}) {
    auto g = master_->PutStart(key, 1000, pc);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    ASSERT_TRUE(master_->PutEnd(key, g->token, 42).ok());
  }

  std::vector<master::LogRecord> Contents(const std::string& path) {
    std::vector<master::LogRecord> out;
    auto info = ReadSnapshot(path, [&](master::LogRecord r) {
      out.push_back(std::move(r));
      return Status::Ok();
    });
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    return out;
  }

  std::string dir_;
  master::MasterConfig config_;
  ManualClock clock_;
  std::unique_ptr<FileOperationLog> log_;
  std::unique_ptr<master::MasterService> master_;
};

TEST_F(SnapshotterTest, HoldsSegmentsThenObjectsInEvictionOrder) {
  for (int i = 0; i < 10; ++i) Put(Key("k", i));
  master::PutConfig hard;
  hard.hard_pin = true;
  Put("pinned", hard);
  ASSERT_TRUE(master_->GetReplicaList("k0").ok());  // k0 becomes the newest
  Snapshotter snap(*master_, log_.get(), {dir_, 2});
  auto info = snap.TakeNow();
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->log_position, log_->end_position());
  const std::vector<master::LogRecord> r = Contents(info->path);
  ASSERT_EQ(r.size(), 12u);
  EXPECT_EQ(r[0].type, master::LogRecordType::kSegmentMounted);
  EXPECT_EQ(r[0].spec.name, "seg");
  std::vector<std::string> keys;
  for (size_t i = 1; i < r.size(); ++i) {
    EXPECT_EQ(r[i].type, master::LogRecordType::kPutEnded);
    EXPECT_EQ(r[i].checksum, 42u);
    keys.push_back(r[i].key);
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9",
                                            "k0", "pinned"}));
  EXPECT_TRUE(r.back().hard_pin);
  EXPECT_EQ(snap.Stats().taken, 1u);
  EXPECT_EQ(snap.Stats().last_objects, 11u);
}

TEST_F(SnapshotterTest, KeepsTheNewestAndDropsLogFilesNoneNeeds) {
  Snapshotter snap(*master_, log_.get(), {dir_, 2});
  std::vector<uint64_t> positions;
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 50; ++i) Put(Key(Key("r", round) + "-", i));
    auto info = snap.TakeNow();
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    positions.push_back(info->log_position);
  }
  EXPECT_EQ(ListSnapshots(dir_).size(), 2u);
  // The log still reaches back to the older kept snapshot, not further than a file.
  const FileLogStats ls = log_->Stats();
  EXPECT_LE(ls.first_position, positions[2]);
  EXPECT_GT(ls.first_position, positions[0]);
  uint64_t records = 0;
  ASSERT_TRUE(log_->ReadFrom(positions[2],
                             [&](uint64_t, std::string_view) {
                               ++records;
                               return Status::Ok();
                             })
                  .ok());
  EXPECT_EQ(records, 50u);  // the last round's puts
}

TEST_F(SnapshotterTest, ServingGoesOnWhileSnapshotsAreTaken) {
  for (int i = 0; i < 2000; ++i) Put(Key("base", i));
  std::atomic<bool> stop{false};
  std::atomic<int> puts{0}, failures{0};
  std::thread writer([&] {
    for (int i = 0; !stop.load(); ++i) {
      const std::string key = Key("live", i);
      auto g = master_->PutStart(key, 100, {});
      if (!g.ok() || !master_->PutEnd(key, g->token, 1).ok()) failures.fetch_add(1);
      if (i % 3 == 0 && !master_->Remove(key).ok()) failures.fetch_add(1);
      puts.fetch_add(1);
    }
  });
  Snapshotter snap(*master_, log_.get(), {dir_, 2});
  std::string last;
  for (int i = 0; i < 5; ++i) {
    auto info = snap.TakeNow();
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    last = info->path;
  }
  stop = true;
  writer.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(puts.load(), 0);
  EXPECT_GE(Contents(last).size(), 2001u);  // the segment and the base objects at least
}

}  // namespace
}  // namespace crescent::durability
