// Restarts of a master on its data dir in the corners (docs/durability.md,
// "The promise"), with real processes: a snapshot taken after a change that
// no call waited for, a master killed right after its nodes took their
// segments back, two masters on one data dir, and snapshot rotation after a
// damaged snapshot. In each, the restarted master serves without
// --allow-empty-restore and every acknowledged object reads back.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "durability/snapshot_file.h"
#include "integration/cluster.h"

namespace crescent::itest {
namespace {

namespace fs = std::filesystem;
constexpr size_t kValue = 4096;

class RestartCornersTest : public WithCluster<testing::Test> {
 protected:
  void Start(const std::string& log_sync, int stores = 2) {
    data_dir_ = tmp_.File("data");
    ASSERT_NO_FATAL_FAILURE(
        StartAndConnect({.stores = stores,
                         .master_flags = {"--data-dir", data_dir_, "--log-sync", log_sync,
                                          "--snapshot-interval", "0"}},
                        /*use_shm=*/false));
    ASSERT_TRUE(cluster_->WaitForSegments(*client_, stores, kStartTimeout));
  }

  void PutKeys(const std::string& prefix, int n, const std::string& segment = "") {
    for (int i = 0; i < n; ++i) {
      PutOptions o;
      o.preferred_segment = segment;
      Status s = client_->Put(prefix + std::to_string(i), RandomBytes(kValue, Seed(prefix, i)), o);
      ASSERT_TRUE(s.ok()) << prefix << i << ": " << s.ToString();
    }
  }
  void ExpectKeys(const std::string& prefix, int n) {
    for (int i = 0; i < n; ++i) {
      StatusOr<std::vector<std::byte>> got = client_->Get(prefix + std::to_string(i));
      ASSERT_TRUE(got.ok()) << prefix << i << ": " << got.status().ToString();
      EXPECT_TRUE(*got == RandomBytes(kValue, Seed(prefix, i))) << prefix << i;
    }
  }
  static uint32_t Seed(const std::string& prefix, int i) {
    return static_cast<uint32_t>(std::hash<std::string>()(prefix)) + static_cast<uint32_t>(i);
  }

  void KillMaster() {
    cluster_->master().Kill(SIGKILL);
    ASSERT_TRUE(cluster_->master().Wait(kExitTimeout).has_value());
  }
  // The same command again; it must serve (no --allow-empty-restore).
  void RestartMaster() {
    ASSERT_TRUE(cluster_->StartMaster(port_ = cluster_->master_port()));
    ASSERT_EQ(cluster_->master().Output().find("starting empty"), std::string::npos)
        << cluster_->master().Output();
  }
  void Snapshot() {
    CommandResult r =
        RunCrescent({"snapshot", "--master", cluster_->master_address()}, tmp_.path());
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }

  TempDir tmp_;
  std::string data_dir_;
  uint16_t port_ = 0;
};

// A node times out (its unmount is a record no call waits for), then a
// snapshot, then kill -9: the snapshot never names a position beyond what
// the log has on disk, so the same command starts again and serves.
TEST_F(RestartCornersTest, ASnapshotAfterANodeTimeoutRestarts) {
  ASSERT_NO_FATAL_FAILURE(Start("always"));
  const std::string kept = cluster_->store(0).segment;
  ASSERT_NO_FATAL_FAILURE(PutKeys("kept/", 10, kept));
  ASSERT_NO_FATAL_FAILURE(PutKeys("gone/", 10, cluster_->store(1).segment));
  cluster_->store(1).proc->Kill(SIGKILL);
  ASSERT_TRUE(cluster_->store(1).proc->Wait(kExitTimeout).has_value());
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 1, kStartTimeout)) << "the node timed out";
  ASSERT_NO_FATAL_FAILURE(Snapshot());
  ASSERT_NO_FATAL_FAILURE(KillMaster());
  ASSERT_NO_FATAL_FAILURE(RestartMaster());
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 1, kStartTimeout));
  ASSERT_NO_FATAL_FAILURE(ExpectKeys("kept/", 10));
  StatusOr<bool> gone = client_->Exists("gone/0");
  ASSERT_TRUE(gone.ok());
  EXPECT_FALSE(*gone) << "its node died before the snapshot";
}

// Default --log-sync (an interval): kill -9, restart, and kill -9 again the
// moment the nodes have taken their segments back. The take-over's record
// reached the disk before the nodes learned their new mounts, so the next
// restart still knows them and keeps every object.
TEST_F(RestartCornersTest, AKillRightAfterTheNodesTookTheirSegmentsBackLosesNothing) {
  ASSERT_NO_FATAL_FAILURE(Start("10"));
  ASSERT_NO_FATAL_FAILURE(PutKeys("k/", 100));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the interval, with a margin
  auto remounts = [&](size_t i) {
    const std::string out = cluster_->store(i).proc->Output();
    size_t n = 0;
    for (size_t at = out.find("remounted"); at != std::string::npos;
         at = out.find("remounted", at + 1))
      ++n;
    return n;
  };
  for (int round = 0; round < 2; ++round) {
    const size_t before0 = remounts(0), before1 = remounts(1);
    ASSERT_NO_FATAL_FAILURE(KillMaster());
    ASSERT_NO_FATAL_FAILURE(RestartMaster());
    const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
    while ((remounts(0) == before0 || remounts(1) == before1) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_GT(remounts(0), before0);
    ASSERT_GT(remounts(1), before1);
  }
  ASSERT_NO_FATAL_FAILURE(KillMaster());
  ASSERT_NO_FATAL_FAILURE(RestartMaster());
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 2, kStartTimeout));
  ASSERT_NO_FATAL_FAILURE(ExpectKeys("k/", 100));
  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->counters.at("crescent_restore_dropped_objects_total{reason=\"new_memory\"}"), 0u);
}

// The log's tail torn by 5 bytes right after the node took its segment back
// (the cut record is that take-over): the next master knows the segment only
// by the node's mount before it, which the node still offers, so the segment
// comes back with every object instead of as new memory.
TEST_F(RestartCornersTest, ATornTakeOverRecordStillLetsTheNodeTakeItsSegmentBack) {
  ASSERT_NO_FATAL_FAILURE(Start("always", 1));
  ASSERT_NO_FATAL_FAILURE(PutKeys("c/", 50));
  ASSERT_NO_FATAL_FAILURE(KillMaster());
  ASSERT_NO_FATAL_FAILURE(RestartMaster());
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 1, kStartTimeout));
  ASSERT_NO_FATAL_FAILURE(ExpectKeys("c/", 50));
  ASSERT_NO_FATAL_FAILURE(KillMaster());
  // The newest log file ends with the take-over's record: cut into it.
  std::string newest;
  for (const fs::directory_entry& e : fs::directory_iterator(data_dir_)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("log-") && name.ends_with(".crlog") && e.path().string() > newest) {
      newest = e.path().string();
    }
  }
  ASSERT_FALSE(newest.empty());
  ASSERT_GT(fs::file_size(newest), 5u);
  fs::resize_file(newest, fs::file_size(newest) - 5);
  ASSERT_NO_FATAL_FAILURE(RestartMaster());
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 1, kStartTimeout));
  ASSERT_NO_FATAL_FAILURE(ExpectKeys("c/", 50));
  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->counters.at("crescent_restore_dropped_objects_total{reason=\"new_memory\"}"), 0u);
}

// A second master on the same data dir is refused, naming the first's PID;
// the first keeps serving, and its objects survive its own restart.
TEST_F(RestartCornersTest, ASecondMasterOnTheSameDataDirIsRefused) {
  ASSERT_NO_FATAL_FAILURE(Start("always", 1));
  ASSERT_NO_FATAL_FAILURE(PutKeys("a/", 30));
  CommandResult second =
      RunCrescent({"master", "--port", "0", "--http-port", "0", "--secret-file",
                   cluster_->secret_file(), "--data-dir", data_dir_, "--restore-grace", "100"},
                  tmp_.path());
  EXPECT_NE(second.exit_code, 0) << second.out << second.err;
  EXPECT_NE(second.err.find("in use by another master"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("pid " + std::to_string(cluster_->master().pid())), std::string::npos)
      << second.err;
  ASSERT_NO_FATAL_FAILURE(ExpectKeys("a/", 30));
  ASSERT_NO_FATAL_FAILURE(KillMaster());
  ASSERT_NO_FATAL_FAILURE(RestartMaster());
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 1, kStartTimeout));
  ASSERT_NO_FATAL_FAILURE(ExpectKeys("a/", 30));
}

// Flips a byte in the middle of `path`.
void Damage(const std::string& path) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(fs::file_size(path) / 2));
  const char c = static_cast<char>(f.peek());
  f.seekp(static_cast<std::streamoff>(fs::file_size(path) / 2));
  f.put(static_cast<char>(c ^ 0x5a));
}

// The newest snapshot damaged: the restart falls back to the older one, and
// the next snapshot's rotation keeps the whole ones (the new and the older),
// never the damaged one in their place, so a later damage still leaves one.
TEST_F(RestartCornersTest, RotationAfterADamagedSnapshotKeepsTheWholeOnes) {
  ASSERT_NO_FATAL_FAILURE(Start("always", 1));
  ASSERT_NO_FATAL_FAILURE(PutKeys("s/", 10));
  ASSERT_NO_FATAL_FAILURE(Snapshot());
  ASSERT_NO_FATAL_FAILURE(PutKeys("t/", 10));
  ASSERT_NO_FATAL_FAILURE(Snapshot());
  std::vector<std::string> snaps = durability::ListSnapshots(data_dir_);
  ASSERT_EQ(snaps.size(), 2u);
  const std::string older = snaps[1];
  Damage(snaps[0]);
  ASSERT_NO_FATAL_FAILURE(KillMaster());
  ASSERT_NO_FATAL_FAILURE(RestartMaster());
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 1, kStartTimeout));
  ASSERT_NO_FATAL_FAILURE(ExpectKeys("s/", 10));
  ASSERT_NO_FATAL_FAILURE(ExpectKeys("t/", 10));
  ASSERT_NO_FATAL_FAILURE(Snapshot());
  snaps = durability::ListSnapshots(data_dir_);
  ASSERT_EQ(snaps.size(), 2u);
  for (const std::string& s : snaps) {
    EXPECT_TRUE(durability::CheckSnapshot(s).ok()) << s << " is kept but damaged";
  }
  EXPECT_EQ(snaps[1], older) << "the last whole one before the new one is kept";
  Damage(snaps[0]);
  ASSERT_NO_FATAL_FAILURE(KillMaster());
  ASSERT_NO_FATAL_FAILURE(RestartMaster());
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 1, kStartTimeout));
  ASSERT_NO_FATAL_FAILURE(ExpectKeys("s/", 10));
  ASSERT_NO_FATAL_FAILURE(ExpectKeys("t/", 10));
}

}  // namespace
}  // namespace crescent::itest
