// The master's data dir with real processes (docs/durability.md): what a
// master killed with SIGKILL has on disk, snapshots asked for with
// `crescent snapshot` while clients keep working, the snapshot at SIGTERM,
// and restarts on the data dir: after kill -9 under load, with a store node
// that restarted too, from a snapshot alone, and from damaged files.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
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

// The data dir's files hold every key and where its bytes are: they are the
// master's user's alone (0600), under the usual umask that leaves new files
// readable by everyone.
TEST_F(DurabilityTest, TheDataDirsFilesAreTheMastersUsersAlone) {
  const mode_t umask_before = ::umask(022);
  Start("always");
  ::umask(umask_before);
  if (HasFatalFailure()) return;
  ASSERT_TRUE(client_->Put("k", RandomBytes(1000, 1)).ok());
  CommandResult r = RunCrescent({"snapshot", "--master", cluster_->master_address()}, tmp_.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::set<std::string> kinds;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(data_dir_)) {
    struct stat st;
    ASSERT_EQ(::stat(e.path().c_str(), &st), 0) << e.path();
    if (!S_ISREG(st.st_mode)) continue;
    const std::string name = e.path().filename().string();
    kinds.insert(name == "LOCK" ? name : name.substr(0, name.find('-')));
    EXPECT_EQ(st.st_mode & 0777, 0600u) << e.path() << ": mode " << std::oct << (st.st_mode & 0777);
  }
  EXPECT_TRUE(kinds.contains("LOCK") && kinds.contains("log") && kinds.contains("snapshot"))
      << "the lock, the log and a snapshot: " << testing::PrintToString(kinds);
}

// What the writers put: key → the seed of its bytes, and when each put was
// acknowledged.
struct Written {
  std::mutex mu;
  std::map<std::string, uint32_t> attempted;
  std::map<std::string, std::chrono::steady_clock::time_point> acked;
};

// Puts 4 KiB values from two clients until `stop`.
std::vector<std::thread> StartWriters(Cluster& cluster, const std::string& prefix,
                                      std::atomic<bool>& stop, Written& w) {
  std::vector<std::thread> writers;
  for (int t = 0; t < 2; ++t) {
    writers.emplace_back([&, prefix, t] {
      ClientConfig cfg = cluster.ClientConfigFor(false);
      cfg.put_retry_ms = 0;  // each put's own answer
      auto c = Client::Connect(cfg);
      if (!c.ok()) {
        ADD_FAILURE() << "Client::Connect: " << c.status().ToString();
        return;
      }
      for (uint32_t i = 0; !stop.load(); ++i) {
        const std::string key = prefix + std::to_string(t) + "/" + std::to_string(i);
        const uint32_t seed = t * 1'000'000 + i;
        {
          std::lock_guard lock(w.mu);
          w.attempted[key] = seed;
        }
        Status put = (*c)->Put(key, RandomBytes(4096, seed));
        if (put.ok()) {
          std::lock_guard lock(w.mu);
          w.acked[key] = std::chrono::steady_clock::now();
        } else if (i < 3) {
          std::fprintf(stderr, "[durability] put %s: %s\n", key.c_str(), put.ToString().c_str());
        }
      }
    });
  }
  return writers;
}

// Param: --log-sync.
class RestartTest : public DurabilityTest, public testing::WithParamInterface<std::string> {};

// kill -9 of the master under load, then the same command again: every put
// acknowledged (with "always"; with an interval, every one acknowledged well
// before the kill) reads back with its bytes once the nodes, which kept
// running, have taken their segments back; nothing else is visible but the
// bytes of a put that was under way.
TEST_P(RestartTest, Kill9UnderLoadLosesNothingAcknowledged) {
  ASSERT_NO_FATAL_FAILURE(Start(GetParam()));
  std::atomic<bool> stop{false};
  Written w;
  std::vector<std::thread> writers = StartWriters(*cluster_, "r/", stop, w);
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  const auto killed_at = std::chrono::steady_clock::now();
  cluster_->master().Kill(SIGKILL);
  ASSERT_TRUE(cluster_->master().Wait(kExitTimeout).has_value());
  stop = true;
  for (auto& t : writers) t.join();

  const uint16_t port = cluster_->master_port();
  ASSERT_TRUE(cluster_->StartMaster(port));
  EXPECT_NE(cluster_->master().Output().find("restored "), std::string::npos)
      << cluster_->master().Output();
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 2, kStartTimeout));
  // With an interval, what was acknowledged within the last moments before the
  // kill may be lost: only puts acknowledged 500 ms before it are checked (the
  // interval plus a margin for a sync delayed on a loaded machine).
  const auto margin = GetParam() == "always" ? std::chrono::milliseconds(0)
                                             : std::chrono::milliseconds(500);
  size_t checked = 0;
  for (const auto& [key, at] : w.acked) {
    if (at > killed_at - margin) continue;
    StatusOr<std::vector<std::byte>> got = client_->Get(key);
    ASSERT_TRUE(got.ok()) << key << ": " << got.status().ToString();
    EXPECT_TRUE(*got == RandomBytes(4096, w.attempted.at(key))) << key;
    ++checked;
  }
  EXPECT_GT(checked, 0u);
  // Everything visible was put, with the bytes of its put.
  StatusOr<std::vector<std::string>> all = client_->List("r/");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  const std::vector<std::string>& listed = *all;
  size_t unacked_visible = 0;
  for (const std::string& key : listed) {
    ASSERT_TRUE(w.attempted.contains(key)) << key;
    StatusOr<std::vector<std::byte>> got = client_->Get(key);
    ASSERT_TRUE(got.ok()) << key << ": " << got.status().ToString();
    EXPECT_TRUE(*got == RandomBytes(4096, w.attempted.at(key))) << key;
    unacked_visible += w.acked.contains(key) ? 0 : 1;
  }
  EXPECT_LE(unacked_visible, 2u) << "at most the put in flight of each writer";
  std::printf("[durability] restart after kill -9 (log-sync %s): %zu acknowledged checked, %zu "
              "listed, %zu visible that the writer did not see acknowledged\n",
              GetParam().c_str(), checked, listed.size(), unacked_visible);
  // New puts work, and do not disturb the restored objects.
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(client_->Put("after/" + std::to_string(i), RandomBytes(4096, 7000 + i)).ok());
  }
  for (const auto& [key, at] : w.acked) {
    if (at > killed_at - margin) continue;
    StatusOr<std::vector<std::byte>> got = client_->Get(key);
    ASSERT_TRUE(got.ok() && *got == RandomBytes(4096, w.attempted.at(key))) << key;
  }
}

INSTANTIATE_TEST_SUITE_P(LogSync, RestartTest, testing::Values("always", "10"));

TEST_F(DurabilityTest, ANodeThatRestartedLosesItsObjectsTheOthersKeepTheirs) {
  ASSERT_NO_FATAL_FAILURE(Start("always"));
  const std::string keep_seg = cluster_->store(0).segment;
  const std::string lose_seg = cluster_->store(1).segment;
  for (int i = 0; i < 20; ++i) {
    PutOptions on0, on1;
    on0.preferred_segment = keep_seg;
    on1.preferred_segment = lose_seg;
    ASSERT_TRUE(client_->Put("keep/" + std::to_string(i), RandomBytes(2048, i), on0).ok());
    ASSERT_TRUE(client_->Put("lose/" + std::to_string(i), RandomBytes(2048, 100 + i), on1).ok());
  }
  const uint16_t port = cluster_->master_port();
  cluster_->master().Kill(SIGKILL);
  ASSERT_TRUE(cluster_->master().Wait(kExitTimeout).has_value());
  // Store 1 restarts as well: same node id and segment name, new memory.
  const std::string node1 = cluster_->store(1).node_id;
  cluster_->store(1).proc->Kill(SIGKILL);
  ASSERT_TRUE(cluster_->store(1).proc->Wait(kExitTimeout).has_value());
  ASSERT_TRUE(cluster_->StartMaster(port));
  ASSERT_TRUE(cluster_->AddStore({"--node-id", node1, "--segment-name", lose_seg}));
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 2, kStartTimeout));
  for (int i = 0; i < 20; ++i) {
    StatusOr<std::vector<std::byte>> kept = client_->Get("keep/" + std::to_string(i));
    ASSERT_TRUE(kept.ok()) << kept.status().ToString();
    EXPECT_TRUE(*kept == RandomBytes(2048, i));
    StatusOr<bool> lost = client_->Exists("lose/" + std::to_string(i));
    ASSERT_TRUE(lost.ok());
    EXPECT_FALSE(*lost) << "its node came back with new memory";
  }
  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->counters.at("crescent_restored_objects"), 40u);
  EXPECT_EQ(st->counters.at("crescent_restore_dropped_objects_total{reason=\"new_memory\"}"), 20u);
}

TEST_F(DurabilityTest, ASnapshotAloneRestoresExactlyWhatItCovered) {
  ASSERT_NO_FATAL_FAILURE(Start("10"));
  std::atomic<bool> stop{false};
  Written w;
  std::vector<std::thread> writers = StartWriters(*cluster_, "s/", stop, w);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CommandResult r = RunCrescent({"snapshot", "--master", cluster_->master_address()}, tmp_.path());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const uint16_t port = cluster_->master_port();
  cluster_->master().Kill(SIGKILL);
  ASSERT_TRUE(cluster_->master().Wait(kExitTimeout).has_value());
  stop = true;
  for (auto& t : writers) t.join();
  std::vector<std::string> snaps = durability::ListSnapshots(data_dir_);
  ASSERT_EQ(snaps.size(), 1u);
  const std::set<std::string> covered = SnapshotKeys(snaps[0]);
  ASSERT_FALSE(covered.empty());
  for (const auto& e : fs::directory_iterator(data_dir_)) {
    if (e.path().extension() == ".crlog") fs::remove(e.path());
  }
  ASSERT_TRUE(cluster_->StartMaster(port));
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 2, kStartTimeout));
  StatusOr<std::vector<std::string>> listed = client_->List("s/");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(std::set<std::string>(listed->begin(), listed->end()), covered);
  for (const std::string& key : covered) {
    StatusOr<std::vector<std::byte>> got = client_->Get(key);
    ASSERT_TRUE(got.ok()) << key << ": " << got.status().ToString();
    EXPECT_TRUE(*got == RandomBytes(4096, w.attempted.at(key))) << key;
  }
  // The log goes on from the snapshot's position: another restart agrees.
  ASSERT_TRUE(client_->Put("s/after", RandomBytes(4096, 1)).ok());
  // Synced within the 10 ms interval; the margin covers a loaded machine.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  cluster_->master().Kill(SIGKILL);
  ASSERT_TRUE(cluster_->master().Wait(kExitTimeout).has_value());
  ASSERT_TRUE(cluster_->StartMaster(port));
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 2, kStartTimeout));
  listed = client_->List("s/");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(listed->size(), covered.size() + 1);
}

// Overwrites 8 bytes in the middle of `path` (damaging it again leaves it
// damaged).
void Damage(const std::string& path) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(0, std::ios::end);
  const std::streamoff mid = f.tellg() / 2;
  f.seekp(mid);
  f.write("DAMAGED!", 8);
}

TEST_F(DurabilityTest, DamagedFilesGiveClearErrorsAndServeNothingUnstored) {
  ASSERT_NO_FATAL_FAILURE(Start("always"));
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(client_->Put("d/" + std::to_string(i), RandomBytes(1000, i)).ok());
  }
  for (int s = 0; s < 2; ++s) {
    CommandResult r =
        RunCrescent({"snapshot", "--master", cluster_->master_address()}, tmp_.path());
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    ASSERT_TRUE(client_->Put("d/more" + std::to_string(s), RandomBytes(1000, 50 + s)).ok());
  }
  const uint16_t port = cluster_->master_port();
  cluster_->master().Kill(SIGKILL);
  ASSERT_TRUE(cluster_->master().Wait(kExitTimeout).has_value());
  std::vector<std::string> snaps = durability::ListSnapshots(data_dir_);
  ASSERT_EQ(snaps.size(), 2u);

  // The newest snapshot damaged, and a torn record at the log's end: the
  // older snapshot and the log make up for it, with warnings naming both.
  Damage(snaps[0]);
  std::string last_log;
  for (const auto& e : fs::directory_iterator(data_dir_)) {
    if (e.path().extension() == ".crlog" && e.path().string() > last_log) {
      last_log = e.path().string();
    }
  }
  ASSERT_FALSE(last_log.empty());
  {
    std::ofstream f(last_log, std::ios::app | std::ios::binary);
    f.write("\x40\x00\x00\x00torn", 8);
  }
  ASSERT_TRUE(cluster_->StartMaster(port));
  const std::string out = cluster_->master().Output();
  EXPECT_NE(out.find(fs::path(snaps[0]).filename().string()), std::string::npos) << out;
  EXPECT_NE(out.find("block"), std::string::npos) << out;
  EXPECT_NE(out.find("torn"), std::string::npos) << out;
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 2, kStartTimeout));
  for (int i = 0; i < 30; ++i) {
    StatusOr<std::vector<std::byte>> got = client_->Get("d/" + std::to_string(i));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(*got == RandomBytes(1000, i));
  }
  for (int s = 0; s < 2; ++s) EXPECT_TRUE(client_->Get("d/more" + std::to_string(s)).ok());

  // Every snapshot damaged and the log's start gone: the master refuses to
  // start, saying why and what to do; --allow-empty-restore starts it empty.
  cluster_->master().Kill(SIGKILL);
  ASSERT_TRUE(cluster_->master().Wait(kExitTimeout).has_value());
  std::string listing;
  for (const std::string& snap : durability::ListSnapshots(data_dir_)) {
    Damage(snap);
    listing += snap + "\n";
  }
  std::vector<std::string> logs;
  for (const auto& e : fs::directory_iterator(data_dir_)) {
    if (e.path().extension() == ".crlog") logs.push_back(e.path().string());
  }
  std::sort(logs.begin(), logs.end());
  if (fs::path(logs.front()).filename().string() == "log-0000000000000000.crlog") {
    fs::remove(logs.front());
  }
  CommandResult refused = RunCrescent(
      {"master", "--port", "0", "--http-port", "0", "--secret-file", cluster_->secret_file(),
       "--data-dir", data_dir_},
      tmp_.path());
  EXPECT_NE(refused.exit_code, 0) << listing << refused.out << refused.err;
  EXPECT_NE(refused.err.find("--allow-empty-restore"), std::string::npos)
      << refused.out << refused.err;
  EXPECT_NE(refused.err.find("CORRUPT_DATA"), std::string::npos) << refused.err;
  Process empty({CrescentBin(), "master", "--port", "0", "--http-port", "0", "--secret-file",
                 cluster_->secret_file(), "--data-dir", data_dir_, "--allow-empty-restore"},
                tmp_.File("empty.log"));
  ASSERT_TRUE(empty.WaitForLine("ready", kStartTimeout)) << empty.Output();
  EXPECT_NE(empty.Output().find("starting empty"), std::string::npos) << empty.Output();
  EXPECT_NE(empty.Output().find("restored 0 objects"), std::string::npos) << empty.Output();
}

TEST_F(DurabilityTest, SnapshotWithoutADataDirIsUnsupported) {
  ASSERT_NO_FATAL_FAILURE(StartAndConnect({.stores = 1}, /*use_shm=*/false));
  CommandResult r = RunCrescent({"snapshot", "--master", cluster_->master_address()}, tmp_.path());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("UNSUPPORTED"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace crescent::itest
