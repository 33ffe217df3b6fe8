// Tiers through the whole stack in one process (docs/persistent-tier.md): a
// store node with a DRAM segment and a file-backed one, the master's real
// copier, real TCP and shared memory. DRAM's eviction rounds demote objects
// into the persistent tier, and every object stays readable with the bytes
// it was put with while DRAM churns; an object read twice within the window
// is promoted back to DRAM.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "client/client_test_util.h"

namespace crescent::client_test {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
constexpr size_t kValue = 64 << 10;

class TierTest : public WithCluster<::testing::TestWithParam<bool>> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("client-tier-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    server::LocalClusterOptions o = SmallCluster(1, GetParam());
    o.segment_size = 4 << 20;
    o.pmem_file_size = (64 << 20) + 4096;
    o.pmem_dir = dir_.string();
    // Rounds that start early and move a good part of DRAM each time.
    o.master.config.high_watermark = 0.6;
    o.master.config.evict_ratio = 0.2;
    ASSERT_NO_FATAL_FAILURE(StartAndConnect(o, GetParam()));
  }
  void TearDown() override {
    WithCluster::TearDown();
    fs::remove_all(dir_);
  }

  const master::MasterCounters& counters() { return cluster_->master().counters(); }

  fs::path dir_;
};

TEST_P(TierTest, DemotionKeepsEveryObjectReadableWhileDramChurns) {
  constexpr int kObjects = 320;  // 20 MiB: five times DRAM, within DRAM + PMEM
  std::atomic<int> written{0};
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::atomic<int> reads{0};
  // A reader checks the bytes of objects already put while the writer churns.
  std::thread reader([&] {
    uint32_t i = 0;
    while (!stop.load()) {
      const int n = written.load();
      if (n == 0) continue;
      const int k = static_cast<int>(i++ % static_cast<uint32_t>(n));
      StatusOr<std::vector<std::byte>> v = client_->Get("obj/" + std::to_string(k));
      if (v.ok()) {
        reads.fetch_add(1);
        if (*v != Pattern(kValue, k)) wrong.fetch_add(1);
      }
    }
  });
  for (int k = 0; k < kObjects; ++k) {
    Status s = client_->Put("obj/" + std::to_string(k), Pattern(kValue, k));
    ASSERT_TRUE(s.ok()) << k << ": " << s.ToString();
    written.store(k + 1);
  }
  stop.store(true);
  reader.join();
  EXPECT_EQ(wrong.load(), 0) << "a read returned other bytes";
  EXPECT_GT(reads.load(), 0);
  ASSERT_TRUE(Eventually([&] { return counters().demotions.load() > 0; }));
  EXPECT_EQ(counters().demotion_failures.load(), 0u);
  // Nothing was dropped: every object reads back as it was put.
  for (int k = 0; k < kObjects; ++k) {
    StatusOr<std::vector<std::byte>> v = client_->Get("obj/" + std::to_string(k));
    ASSERT_TRUE(v.ok()) << k << ": " << v.status().ToString();
    EXPECT_TRUE(*v == Pattern(kValue, k)) << k;
  }
  EXPECT_EQ(counters().evictions.load(), 0u);
  EXPECT_GT(cluster_->master().counters().tier_reads[1].load(), 0u) << "reads from PMEM";
}

TEST_P(TierTest, AnObjectReadTwiceInTheWindowIsPromotedBackToDram) {
  // Fill DRAM past its watermark so that the first objects are demoted.
  for (int k = 0; k < 48; ++k) {
    ASSERT_TRUE(client_->Put("obj/" + std::to_string(k), Pattern(kValue, k)).ok());
  }
  ASSERT_TRUE(Eventually([&] { return counters().demotions.load() > 0; }));
  // Free DRAM below its watermark for the promotion to have room.
  for (int k = 24; k < 48; ++k) ASSERT_TRUE(client_->Remove("obj/" + std::to_string(k)).ok());
  const uint64_t pmem_reads = counters().tier_reads[1].load();
  // obj/0 was the first victim. Two reads, each flushed to the policy.
  for (int i = 0; i < 2; ++i) {
    StatusOr<std::vector<std::byte>> v = client_->Get("obj/0");
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_TRUE(*v == Pattern(kValue, 0));
    std::this_thread::sleep_for(milliseconds(150));  // a maintenance pass or more
  }
  EXPECT_GT(counters().tier_reads[1].load(), pmem_reads) << "obj/0 was read from PMEM";
  ASSERT_TRUE(Eventually([&] { return counters().promotions.load() > 0; }));
  const uint64_t dram_reads = counters().tier_reads[0].load();
  StatusOr<std::vector<std::byte>> v = client_->Get("obj/0");
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(*v == Pattern(kValue, 0));
  EXPECT_EQ(counters().tier_reads[0].load(), dram_reads + 1) << "read from DRAM again";
}

INSTANTIATE_TEST_SUITE_P(Transport, TierTest, ::testing::Bool(), TransportName);

}  // namespace
}  // namespace crescent::client_test
