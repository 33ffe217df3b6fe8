// The persistent tier with real processes (docs/persistent-tier.md): store
// nodes with a file-backed segment (`--pmem PATH:SIZE`) in a temporary
// directory. Objects on it survive a kill -9 of the node (a live master takes
// them back when the node mounts the same file again) and of a whole `crescent
// serve --data-dir`; a byte corrupted in the file is caught by the checksum and
// that object is dropped while the others survive; bad files are refused at
// start with a clear error.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "integration/cluster.h"

namespace crescent::itest {
namespace {

namespace fs = std::filesystem;
constexpr size_t kValue = 64 << 10;
constexpr int kObjects = 16;

// The name of the first segment of tier `tier` in `st`; empty when none.
std::string SegmentOfTier(const ClusterStat& st, const std::string& tier) {
  for (const SegmentUsage& s : st.segments) {
    if (s.tier == tier) return s.name;
  }
  return "";
}

class PmemTest : public WithCluster<testing::Test> {
 protected:
  void StartWithFile(bool use_shm) {
    file_ = tmp_.File("segment.pmem");
    ASSERT_NO_FATAL_FAILURE(StartAndConnect(
        {.stores = 1, .segment_size = "4MiB", .store_flags = {"--pmem", file_ + ":16MiB"}},
        use_shm));
    ASSERT_TRUE(cluster_->WaitForSegments(*client_, 2, kStartTimeout));
    StatusOr<ClusterStat> st = client_->Stat();
    ASSERT_TRUE(st.ok());
    pmem_ = SegmentOfTier(*st, "pmem");
    dram_ = SegmentOfTier(*st, "dram");
    ASSERT_EQ(pmem_.rfind("pmem-", 0), 0u) << pmem_;
  }

  void PutOn(const std::string& prefix, const std::string& segment, uint32_t seed) {
    for (int i = 0; i < kObjects; ++i) {
      PutOptions o;
      o.preferred_segment = segment;
      Status s = client_->Put(prefix + std::to_string(i), RandomBytes(kValue, seed + i), o);
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
  }

  // Kills the store node and starts it again with the same file.
  void RestartStore() {
    cluster_->store(0).proc->Kill(SIGKILL);
    ASSERT_TRUE(cluster_->store(0).proc->Wait(kExitTimeout).has_value());
    ASSERT_TRUE(cluster_->AddStore());
    ASSERT_TRUE(cluster_->WaitForSegments(*client_, 2, kStartTimeout));
    // The taken-over segment's objects are served once verified.
    ASSERT_TRUE(WaitForVerified(*client_, kStartTimeout));
  }

  TempDir tmp_;
  std::string file_;
  std::string pmem_;
  std::string dram_;
};

TEST_F(PmemTest, NewObjectsGoToDramFirstAndTheTierIsReported) {
  ASSERT_NO_FATAL_FAILURE(StartWithFile(false));
  ASSERT_TRUE(client_->Put("first", RandomBytes(kValue, 1)).ok());
  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok());
  for (const SegmentUsage& s : st->segments) {
    if (s.tier == "dram") {
      EXPECT_GT(s.used, 0u) << "DRAM first";
    } else {
      EXPECT_EQ(s.used, 0u);
    }
  }
}

class PmemRestartTest : public PmemTest, public testing::WithParamInterface<bool> {};

TEST_P(PmemRestartTest, AKilledNodeTakesItsPersistentObjectsBackWithTheSameFile) {
  ASSERT_NO_FATAL_FAILURE(StartWithFile(GetParam()));
  ASSERT_NO_FATAL_FAILURE(PutOn("p/", pmem_, 100));
  ASSERT_NO_FATAL_FAILURE(PutOn("d/", dram_, 200));
  ASSERT_NO_FATAL_FAILURE(RestartStore());
  for (int i = 0; i < kObjects; ++i) {
    StatusOr<std::vector<std::byte>> v = client_->Get("p/" + std::to_string(i));
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_TRUE(*v == RandomBytes(kValue, 100 + i));
    StatusOr<bool> gone = client_->Exists("d/" + std::to_string(i));
    ASSERT_TRUE(gone.ok());
    EXPECT_FALSE(*gone) << "a DRAM segment's bytes died with the process";
  }
  // New puts after the restart do not overwrite the kept objects.
  ASSERT_NO_FATAL_FAILURE(PutOn("q/", pmem_, 300));
  for (int i = 0; i < kObjects; ++i) {
    StatusOr<std::vector<std::byte>> v = client_->Get("p/" + std::to_string(i));
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_TRUE(*v == RandomBytes(kValue, 100 + i));
  }
}

INSTANTIATE_TEST_SUITE_P(Transport, PmemRestartTest, testing::Bool(),
                         [](const auto& info) { return info.param ? "Shm" : "Tcp"; });

TEST_F(PmemTest, ACorruptedByteDropsThatObjectAndTheOthersSurvive) {
  ASSERT_NO_FATAL_FAILURE(StartWithFile(false));
  ASSERT_NO_FATAL_FAILURE(PutOn("p/", pmem_, 100));
  cluster_->store(0).proc->Kill(SIGKILL);
  ASSERT_TRUE(cluster_->store(0).proc->Wait(kExitTimeout).has_value());
  {
    // Find object p/3's bytes in the file and flip one of them.
    std::ifstream in(file_, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::vector<std::byte> value = RandomBytes(kValue, 103);
    const char* v = reinterpret_cast<const char*>(value.data());
    auto at = std::search(bytes.begin(), bytes.end(), v, v + value.size());
    ASSERT_NE(at, bytes.end());
    std::fstream io(file_, std::ios::binary | std::ios::in | std::ios::out);
    io.seekp(static_cast<std::streamoff>(at - bytes.begin()) + 1000);
    io.put(static_cast<char>(bytes[static_cast<size_t>(at - bytes.begin()) + 1000] ^ 0x40));
  }
  ASSERT_TRUE(cluster_->AddStore());
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 2, kStartTimeout));
  // The master checks the taken-over segment's objects in the background.
  uint64_t ok = 0, corrupt = 0;
  for (int tries = 0; tries < 200 && ok + corrupt < kObjects; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    StatusOr<ClusterStat> st = client_->Stat();
    ASSERT_TRUE(st.ok());
    ok = st->counters["crescent_pmem_verifications_total{result=\"ok\"}"];
    corrupt = st->counters["crescent_pmem_verifications_total{result=\"corrupt\"}"];
  }
  EXPECT_EQ(ok, uint64_t{kObjects - 1});
  EXPECT_EQ(corrupt, 1u);
  for (int i = 0; i < kObjects; ++i) {
    StatusOr<std::vector<std::byte>> v = client_->Get("p/" + std::to_string(i));
    if (i == 3) {
      EXPECT_FALSE(v.ok()) << "the corrupted object is never served";
      continue;
    }
    ASSERT_TRUE(v.ok()) << i << ": " << v.status().ToString();
    EXPECT_TRUE(*v == RandomBytes(kValue, 100 + i));
  }
  StatusOr<bool> dropped = client_->Exists("p/3");
  ASSERT_TRUE(dropped.ok());
  EXPECT_FALSE(*dropped) << "its replica was reported and dropped";
}

TEST_F(PmemTest, BadFilesAreRefusedAtStartWithAClearError) {
  ASSERT_NO_FATAL_FAILURE(StartWithFile(false));
  // Held by the running node.
  CommandResult held = RunCrescent({"store", "--master", cluster_->master_address(),
                                    "--secret-file", cluster_->secret_file(), "--segment-size",
                                    "4MiB", "--pmem", file_ + ":16MiB"},
                                   tmp_.path());
  EXPECT_NE(held.exit_code, 0);
  EXPECT_NE(held.err.find("held by another process"), std::string::npos) << held.err;
  // Another size.
  cluster_->store(0).proc->Kill(SIGTERM);
  ASSERT_TRUE(cluster_->store(0).proc->Wait(kExitTimeout).has_value());
  CommandResult size = RunCrescent({"store", "--master", cluster_->master_address(),
                                    "--secret-file", cluster_->secret_file(), "--segment-size",
                                    "4MiB", "--pmem", file_ + ":32MiB"},
                                   tmp_.path());
  EXPECT_NE(size.exit_code, 0);
  EXPECT_NE(size.err.find("not the"), std::string::npos) << size.err;
  // A foreign file, and a path that cannot be created.
  const std::string foreign = tmp_.File("foreign");
  {
    std::ofstream out(foreign, std::ios::binary);
    out << std::string(16 << 20, 'z');
  }
  for (const std::string& bad : {foreign + ":16MiB", tmp_.File("no/such/dir") + ":16MiB",
                                 file_ + ":sixteen"}) {
    CommandResult r = RunCrescent({"store", "--master", cluster_->master_address(),
                                   "--secret-file", cluster_->secret_file(), "--segment-size",
                                   "4MiB", "--pmem", bad},
                                  tmp_.path());
    EXPECT_NE(r.exit_code, 0) << bad;
    EXPECT_NE(r.err.find("crescent store:"), std::string::npos) << bad << ": " << r.err;
  }
  EXPECT_EQ(fs::file_size(foreign), uint64_t{16} << 20) << "a foreign file is left alone";
}

TEST(PmemServeTest, AWholeServeKilledAndStartedAgainKeepsThePersistentObjects) {
  TempDir dir;
  const std::string file = dir.File("serve.pmem");
  const std::vector<std::string> flags = {"--data-dir", dir.File("data"), "--log-sync", "always",
                                          "--pmem", file + ":16MiB"};
  ServeProcess serve;
  ASSERT_TRUE(StartServe(dir, flags, &serve));
  ClientConfig config;
  config.master_address = serve.master;
  auto client = Client::Connect(config);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  StatusOr<ClusterStat> st = (*client)->Stat();
  ASSERT_TRUE(st.ok());
  const std::string pmem = SegmentOfTier(*st, "pmem");
  for (int i = 0; i < kObjects; ++i) {
    PutOptions o;
    o.preferred_segment = pmem;
    ASSERT_TRUE((*client)->Put("s/" + std::to_string(i), RandomBytes(kValue, 500 + i), o).ok());
    ASSERT_TRUE((*client)->Put("d/" + std::to_string(i), RandomBytes(kValue, 900 + i)).ok());
  }
  client->reset();
  serve.proc->Kill(SIGKILL);
  ASSERT_TRUE(serve.proc->Wait(kExitTimeout).has_value());

  // Its log in a directory of its own: StartServe reads serve.log for the
  // address, and the first process's would still be there.
  TempDir second;
  ServeProcess again;
  ASSERT_TRUE(StartServe(second, flags, &again));
  config.master_address = again.master;
  auto client2 = Client::Connect(config);
  ASSERT_TRUE(client2.ok()) << client2.status().ToString();
  ASSERT_TRUE(WaitForVerified(**client2, kStartTimeout));  // served once verified
  for (int i = 0; i < kObjects; ++i) {
    StatusOr<std::vector<std::byte>> v = (*client2)->Get("s/" + std::to_string(i));
    ASSERT_TRUE(v.ok()) << i << ": " << v.status().ToString();
    EXPECT_TRUE(*v == RandomBytes(kValue, 500 + i));
    StatusOr<bool> dram = (*client2)->Exists("d/" + std::to_string(i));
    ASSERT_TRUE(dram.ok());
    EXPECT_FALSE(*dram) << "the DRAM segment's objects went with the process";
  }
  // `crescent stat` shows both tiers.
  CommandResult stat = RunCrescent({"stat", "--master", again.master}, dir.path());
  EXPECT_EQ(stat.exit_code, 0) << stat.err;
  EXPECT_NE(stat.out.find("tiers        dram"), std::string::npos) << stat.out;
  EXPECT_NE(stat.out.find(" pmem "), std::string::npos) << stat.out;
}

}  // namespace
}  // namespace crescent::itest
