// The master's data dir with real processes (docs/durability.md): what a
// master killed with SIGKILL has on disk, snapshots asked for with
// `crescent snapshot` while clients keep working, and the snapshot at SIGTERM.
// (Restoring from them is not built yet; these tests read the files back.)
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "durability/file_log.h"
#include "durability/snapshot_file.h"
#include "integration/cluster.h"

namespace crescent::itest {
namespace {

namespace fs = std::filesystem;

class DurabilityTest : public WithCluster<testing::Test> {
 protected:
  void Start(const std::string& log_sync) {
    data_dir_ = tmp_.File("data");
    ASSERT_NO_FATAL_FAILURE(
        StartAndConnect({.stores = 2,
                         .master_flags = {"--data-dir", data_dir_, "--log-sync", log_sync,
                                          "--snapshot-interval", "0"}},
                        /*use_shm=*/false));
    ASSERT_TRUE(cluster_->WaitForSegments(*client_, 2, kStartTimeout));
  }

  // Keys with a PutEnded record in the log, minus those removed after it and
  // those whose segments were all unmounted after it.
  std::set<std::string> LoggedKeys() {
    std::vector<std::string> warnings;
    durability::FileLogOptions o;
    o.dir = data_dir_;
    auto log = durability::FileOperationLog::Open(o, &warnings);
    EXPECT_TRUE(log.ok()) << log.status().ToString();
    std::map<std::string, std::set<master::SegmentId>> objects;
    std::set<std::string> keys;
    if (!log.ok()) return keys;
    Status s = (*log)->ReadFrom((*log)->Stats().first_position, [&](uint64_t, std::string_view b) {
      auto r = master::DecodeLogRecord(b);
      if (!r.ok()) return r.status();
      if (r->type == master::LogRecordType::kPutEnded) {
        for (const master::ReplicaSlot& s : r->replicas) objects[r->key].insert(s.segment);
      }
      if (r->type == master::LogRecordType::kObjectRemoved) objects.erase(r->key);
      if (r->type == master::LogRecordType::kSegmentUnmounted) {
        for (auto it = objects.begin(); it != objects.end();) {
          it->second.erase(r->segment);
          it = it->second.empty() ? objects.erase(it) : std::next(it);
        }
      }
      return Status::Ok();
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    for (const auto& [key, segments] : objects) keys.insert(key);
    return keys;
  }

  std::set<std::string> SnapshotKeys(const std::string& path) {
    std::set<std::string> keys;
    auto info = durability::ReadSnapshot(path, [&](master::LogRecord r) {
      if (r.type == master::LogRecordType::kPutEnded) keys.insert(r.key);
      return Status::Ok();
    });
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    return keys;
  }

  TempDir tmp_;
  std::string data_dir_;
};

TEST_F(DurabilityTest, EveryAcknowledgedPutIsInTheLogAfterKill9) {
  ASSERT_NO_FATAL_FAILURE(Start("always"));
  std::atomic<bool> stop{false};
  std::vector<std::set<std::string>> acked(2);
  std::vector<std::thread> writers;
  for (int t = 0; t < 2; ++t) {
    writers.emplace_back([&, t] {
      std::unique_ptr<Client> c = cluster_->Connect(false);
      for (int i = 0; !stop.load(); ++i) {
        const std::string key = "kill9/" + std::to_string(t) + "/" + std::to_string(i);
        if (c->Put(key, RandomBytes(4096, static_cast<uint32_t>(i))).ok()) acked[t].insert(key);
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  cluster_->master().Kill(SIGKILL);  // under load
  ASSERT_TRUE(cluster_->master().Wait(kExitTimeout).has_value());
  stop = true;
  for (auto& w : writers) w.join();
  const std::set<std::string> logged = LoggedKeys();
  size_t total = 0;
  for (const auto& keys : acked) {
    total += keys.size();
    for (const std::string& k : keys) EXPECT_TRUE(logged.contains(k)) << k << " was acknowledged";
  }
  EXPECT_GT(total, 0u);
}

TEST_F(DurabilityTest, SnapshotsAskedForWhileClientsWorkAndAtSigterm) {
  ASSERT_NO_FATAL_FAILURE(Start("10"));
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(client_->Put("base/" + std::to_string(i), RandomBytes(1000, i)).ok());
  }
  std::atomic<bool> stop{false};
  std::atomic<int> ops{0}, failures{0};
  std::thread load([&] {
    std::unique_ptr<Client> c = cluster_->Connect(false);
    for (int i = 0; !stop.load(); ++i) {
      const std::string key = "load/" + std::to_string(i);
      if (!c->Put(key, RandomBytes(1000, i)).ok() || !c->Get(key).ok()) failures.fetch_add(1);
      ops.fetch_add(1);
    }
  });
  for (int i = 0; i < 3; ++i) {
    CommandResult r =
        RunCrescent({"snapshot", "--master", cluster_->master_address()}, tmp_.path());
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("snapshot of "), std::string::npos) << r.out;
  }
  const int ops_during = ops.load();
  stop = true;
  load.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(ops_during, 0) << "the load went on while the snapshots were taken";
  std::vector<std::string> snaps = durability::ListSnapshots(data_dir_);
  EXPECT_EQ(snaps.size(), 2u) << "the newest two are kept";
  const std::set<std::string> in_snapshot = SnapshotKeys(snaps.at(0));
  for (int i = 0; i < 50; ++i) EXPECT_TRUE(in_snapshot.contains("base/" + std::to_string(i)));

  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->counters.at("crescent_snapshots_total"), 3u);
  EXPECT_GE(st->counters.at("crescent_last_snapshot_objects"), 50u);

  // SIGTERM: one more snapshot, of everything, after the last client call.
  cluster_->master().Kill(SIGTERM);
  std::optional<ExitStatus> exit = cluster_->master().Wait(kExitTimeout);
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->exited && exit->code == 0) << exit->ToString();
  snaps = durability::ListSnapshots(data_dir_);
  ASSERT_EQ(snaps.size(), 2u);
  EXPECT_EQ(SnapshotKeys(snaps[0]), LoggedKeys()) << "the final snapshot holds what the log says";
}

TEST_F(DurabilityTest, SnapshotWithoutADataDirIsUnsupported) {
  ASSERT_NO_FATAL_FAILURE(StartAndConnect({.stores = 1}, /*use_shm=*/false));
  CommandResult r = RunCrescent({"snapshot", "--master", cluster_->master_address()}, tmp_.path());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("UNSUPPORTED"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace crescent::itest
