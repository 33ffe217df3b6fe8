// Clock skew with real processes (docs/capabilities.md, "Clock skew"): a store node
// whose wall clock is off the master's by more than --capability-grace-ms
// would honour capabilities the master counts as expired, and a stale writer
// would land in space the master has given to another object. So the node
// measures its clock against the master's at each heartbeat and refuses every
// capability while they disagree, saying why; a node in step serves.
//
// The node's clock is shifted by a preloaded library (clock_shift_shim.cc)
// that moves CLOCK_REALTIME by the milliseconds in a file, read again as the
// process runs: a test steps the clock by writing the file.
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "integration/cluster.h"
#include "integration/raw_socket.h"

namespace crescent::itest {
namespace {

constexpr size_t kValue = 100000;

class ClockSkewTest : public WithCluster<testing::Test> {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartCluster({.stores = 0, .store_shm = false}));
    ClientConfig c = cluster_->ClientConfigFor(false);
    c.put_retry_ms = 1500;  // a put with no node to take it fails soon
    auto client = Client::Connect(c);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
    shift_file_ = cluster_->dir().File("clock-shift-ms");
  }

  // The library beside this test binary (CMake builds it there).
  static std::string Shim() {
    return (std::filesystem::read_symlink("/proc/self/exe").parent_path() /
            "libclock_shift_shim.so")
        .string();
  }

  // Steps the clock of every node started by AddShiftedStore to `ms` off.
  void Shift(int64_t ms) { ASSERT_TRUE(WriteFile(shift_file_, std::to_string(ms) + "\n")); }

  // A store node whose wall clock reads `ms` off (Shift changes it later),
  // with its metrics on an HTTP port (http_port_).
  void AddShiftedStore(int64_t ms) {
    ASSERT_NO_FATAL_FAILURE(Shift(ms));
    ASSERT_TRUE(std::filesystem::exists(Shim())) << Shim();
    http_port_ = PickFreePort();
    ASSERT_NE(http_port_, 0);
    ASSERT_TRUE(cluster_->AddStore(
        {"--http-port", std::to_string(http_port_)},
        {"LD_PRELOAD=" + Shim(), "CRESCENT_TEST_CLOCK_SHIFT_FILE=" + shift_file_}));
  }

  // The shifted node's sample of `series` ("name" or "name{labels}"); -1 if absent.
  double StoreMetric(const std::string& series) {
    httplib::Client http("127.0.0.1", http_port_);
    http.set_read_timeout(10);
    auto r = http.Get("/metrics");
    if (!r || r->status != 200) return -1;
    const std::string& text = r->body;
    for (size_t at = text.find(series + " "); at != std::string::npos;
         at = text.find(series + " ", at + 1)) {
      if (at == 0 || text[at - 1] == '\n') return std::stod(text.substr(at + series.size() + 1));
    }
    return -1;
  }

  // Polls (bounded: a hang guard) until `done` holds.
  template <typename F>
  bool Eventually(F done) {
    for (int i = 0; i < 400 && !done(); ++i) std::this_thread::sleep_for(milliseconds(25));
    return done();
  }

  std::string shift_file_;
  int http_port_ = 0;
};

TEST_F(ClockSkewTest, ANodeWhoseClockIsOffRefusesCapabilitiesAndANodeInStepServes) {
  ASSERT_NO_FATAL_FAILURE(AddShiftedStore(-5000));  // the grace is 1 s
  Process& skewed = *cluster_->store(0).proc;
  EXPECT_TRUE(skewed.WaitForLine("clock skew: this store node's clock is", kStartTimeout))
      << skewed.Output();
  EXPECT_NE(skewed.Output().find("behind the master's"), std::string::npos) << skewed.Output();

  const std::vector<std::byte> value = RandomBytes(kValue, 1);
  Status refused = client_->Put("refused", value);
  // The node refused the write with UNAVAILABLE (the get below shows its
  // words); the client then found no other node to place it on.
  EXPECT_EQ(refused.code(), ErrorCode::kUnavailable)
      << "a node whose clock is 5 s behind: " << refused.ToString();
  EXPECT_EQ(StoreMetric("crescent_store_clock_refusing"), 1);
  const double skew = StoreMetric("crescent_store_clock_skew_ms");
  EXPECT_LT(skew, -4000);
  EXPECT_GT(skew, -6000);
  EXPECT_GE(StoreMetric("crescent_store_refusals_total{transport=\"tcp\",reason=\"clock\"}"), 1);

  ASSERT_TRUE(cluster_->AddStore());  // its clock is the master's
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 2, kStartTimeout));
  Status served = client_->Put("served", value);
  ASSERT_TRUE(served.ok()) << served.ToString();
  StatusOr<std::vector<std::byte>> got = client_->Get("served");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == value);
}

// A step of a running node's clock closes it at once (its next capability
// check, before any heartbeat), with an error that says why; the step undone,
// it serves again.
TEST_F(ClockSkewTest, AStepOfARunningNodesClockIsRefusedUntilItIsUndone) {
  ASSERT_NO_FATAL_FAILURE(AddShiftedStore(0));
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 1, kStartTimeout));
  const std::vector<std::byte> value = RandomBytes(kValue, 2);
  ASSERT_TRUE(client_->Put("k", value).ok());
  ASSERT_TRUE(client_->Get("k").ok());
  EXPECT_EQ(StoreMetric("crescent_store_clock_refusing"), 0);

  ASSERT_NO_FATAL_FAILURE(Shift(-5000));  // an NTP step back, a VM's clock after a resume
  Status last;
  ASSERT_TRUE(Eventually([&] {
    last = client_->Get("k").status();
    return !last.ok();
  })) << "the node kept serving with its clock 5 s behind the master's";
  EXPECT_EQ(last.code(), ErrorCode::kUnavailable) << last.ToString();
  EXPECT_NE(last.message().find("clock is"), std::string::npos) << last.ToString();
  Process& node = *cluster_->store(0).proc;
  EXPECT_TRUE(node.WaitForLine("clock skew: this store node's clock is", kStartTimeout))
      << node.Output();

  ASSERT_NO_FATAL_FAILURE(Shift(0));
  StatusOr<std::vector<std::byte>> got(ErrorCode::kUnavailable, "not read yet");
  ASSERT_TRUE(Eventually([&] {
    got = client_->Get("k");
    return got.ok();
  })) << got.status().ToString();
  EXPECT_TRUE(*got == value);
  EXPECT_TRUE(node.WaitForLine("agrees with the master's again", kStartTimeout)) << node.Output();
}

}  // namespace
}  // namespace crescent::itest
