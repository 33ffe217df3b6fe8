// The persistent tier keeps acknowledged objects across a kill -9 of a whole
// `crescent serve --data-dir D --log-sync always` (docs/durability.md, "The
// promise"): the DRAM segment dies with the process, so an object survives
// when its persistent copy does, and the log knows where it is.
//  - Demotions: every object moved to the file comes back, the last one too
//    (the log syncs a move's record though no call waits for it).
//  - Promotions: a read copies an object back to DRAM and keeps its
//    persistent copy, so reading an object never costs it its durability.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "integration/cluster.h"

namespace crescent::itest {
namespace {

constexpr size_t kValue = 2 << 20;

class TierDurabilityTest : public testing::Test {
 protected:
  void Start(const std::string& pmem_size) {
    flags_ = {"--data-dir",     dir_.File("data"), "--log-sync", "always", "--segment-size",
              "32MiB",          "--pmem",          dir_.File("serve.pmem") + ":" + pmem_size};
    ASSERT_TRUE(StartServe(dir_, flags_, &serve_));
    Connect(serve_.master);
  }
  void Connect(const std::string& master) {
    ClientConfig config;
    config.master_address = master;
    auto c = Client::Connect(config);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    client_ = std::move(c).value();
  }
  uint64_t Counter(const std::string& name) {
    StatusOr<ClusterStat> st = client_->Stat();
    if (!st.ok()) return 0;
    auto it = st->counters.find(name);
    return it == st->counters.end() ? 0 : it->second;
  }
  // Polls `name` until it reads `want` or more and stays put for a moment;
  // returns its last value.
  uint64_t SettledCounter(const std::string& name, uint64_t want) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    uint64_t last = Counter(name);
    int steady = 0;
    while (std::chrono::steady_clock::now() < deadline && (last < want || steady < 5)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const uint64_t now = Counter(name);
      steady = now == last ? steady + 1 : 0;
      last = now;
    }
    return last;
  }
  // kill -9 of the whole serve, and the same command again (its log in a
  // directory of its own: StartServe reads serve.log for the address).
  void KillAndRestart() {
    client_.reset();
    serve_.proc->Kill(SIGKILL);
    ASSERT_TRUE(serve_.proc->Wait(kExitTimeout).has_value());
    ServeProcess again;
    ASSERT_TRUE(StartServe(second_, flags_, &again));
    serve_ = std::move(again);
    Connect(serve_.master);
    // The persistent segment's objects are served once verified.
    ASSERT_TRUE(WaitForVerified(*client_, kStartTimeout));
  }
  // The keys k/0 .. k/(n-1) that read back, each checked against its bytes.
  int ReadBack(int n) {
    int back = 0;
    for (int i = 0; i < n; ++i) {
      StatusOr<std::vector<std::byte>> v = client_->Get("k/" + std::to_string(i));
      if (!v.ok()) {
        EXPECT_EQ(v.status().code(), ErrorCode::kObjectNotFound) << i << v.status().ToString();
        continue;
      }
      EXPECT_TRUE(*v == RandomBytes(kValue, 7000 + i)) << "k/" << i << " came back with other bytes";
      ++back;
    }
    return back;
  }

  TempDir dir_;
  TempDir second_;
  std::vector<std::string> flags_;
  ServeProcess serve_;
  std::unique_ptr<Client> client_;
};

TEST_F(TierDurabilityTest, EveryDemotedObjectSurvivesAKillOfTheWholeServe) {
  ASSERT_NO_FATAL_FAILURE(Start("128MiB"));
  constexpr int kPuts = 48;  // 96 MiB into 32 MiB of DRAM: most go down to the file
  for (int i = 0; i < kPuts; ++i) {
    Status s = client_->Put("k/" + std::to_string(i), RandomBytes(kValue, 7000 + i));
    ASSERT_TRUE(s.ok()) << i << ": " << s.ToString();
  }
  const uint64_t demoted =
      SettledCounter("crescent_tier_moves_total{direction=\"demote\"}", kPuts / 2);
  ASSERT_GE(demoted, static_cast<uint64_t>(kPuts / 2));
  ASSERT_NO_FATAL_FAILURE(KillAndRestart());
  // Only what was in the file can come back, and all of it does.
  EXPECT_EQ(ReadBack(kPuts), static_cast<int>(demoted));
}

TEST_F(TierDurabilityTest, ReadingAPersistentObjectKeepsItDurable) {
  ASSERT_NO_FATAL_FAILURE(Start("128MiB"));
  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok());
  std::string pmem;
  for (const SegmentUsage& s : st->segments) {
    if (s.tier == "pmem") pmem = s.name;
  }
  ASSERT_FALSE(pmem.empty());
  constexpr int kObjects = 12;  // 24 MiB: DRAM takes every promotion
  for (int i = 0; i < kObjects; ++i) {
    PutOptions o;
    o.preferred_segment = pmem;
    Status s = client_->Put("k/" + std::to_string(i), RandomBytes(kValue, 7000 + i), o);
    ASSERT_TRUE(s.ok()) << i << ": " << s.ToString();
  }
  ASSERT_EQ(ReadBack(kObjects), kObjects);  // each read once: each is promoted
  const uint64_t promoted =
      SettledCounter("crescent_tier_moves_total{direction=\"promote\"}", kObjects);
  ASSERT_EQ(promoted, static_cast<uint64_t>(kObjects));
  ASSERT_NO_FATAL_FAILURE(KillAndRestart());
  EXPECT_EQ(ReadBack(kObjects), kObjects) << "a promotion left an object without its durable copy";
}

}  // namespace
}  // namespace crescent::itest
