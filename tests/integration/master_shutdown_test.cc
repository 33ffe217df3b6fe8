// SIGTERM ends a master (--data-dir, --log-sync always) promptly while its
// engine waits on a store node that never answers (SIGSTOPped): a tier move
// or a check in flight, in the maintenance pass or in a put's eviction, ends
// at once instead of waiting out the node's timeout batch after batch
// (MasterService::BeginShutdown). Nothing acknowledged is lost: the next
// start brings every object back with its bytes.
//
// Each test waits until the stopped node's data port holds a request the
// master sent it (bytes the node never reads), then sends SIGTERM, and
// asserts only that the master exits, with a deadline that bounds a hang.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "integration/cluster.h"
#include "rpc/master_client.h"

namespace crescent::itest {
namespace {

constexpr size_t kValue = 64 << 10;
// Far below the time the moves below would wait out before the fix: each
// batch of kMoveBatch (32) copies waits the copy timeout (5 s) for a stopped
// node, and these tests queue 8 to 10 batches.
constexpr milliseconds kShutdownDeadline{30000};

// Whether an established TCP connection to local port `port` has bytes its
// owner has not read: a request sent to a stopped node (/proc/net/tcp{,6}).
bool UnreadBytesOnPort(uint16_t port) {
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state, queues;
      fields >> slot >> local >> remote >> state >> queues;
      const size_t colon = local.rfind(':');
      const size_t q = queues.find(':');
      if (colon == std::string::npos || q == std::string::npos || state != "01") continue;
      if (std::stoul(local.substr(colon + 1), nullptr, 16) != port) continue;
      if (std::stoul(queues.substr(q + 1), nullptr, 16) > 0) return true;
    }
  }
  return false;
}

class MasterShutdownTest : public WithCluster<testing::Test> {
 protected:
  // One store node (a 32 MiB DRAM segment and a 128 MiB persistent one), a
  // master on a data dir that syncs its log before each acknowledgement.
  void Start(int64_t heartbeat_ttl_ms) {
    data_dir_ = tmp_.File("data");
    ASSERT_NO_FATAL_FAILURE(
        StartAndConnect({.stores = 1,
                         .segment_size = "32MiB",
                         .heartbeat_ttl_ms = heartbeat_ttl_ms,
                         .master_flags = {"--data-dir", data_dir_, "--log-sync", "always",
                                          "--put-timeout-ms", "2000"},
                         .store_flags = {"--pmem", tmp_.File("node.pmem") + ":128MiB"}},
                        /*use_shm=*/false));
    ASSERT_TRUE(cluster_->WaitForSegments(*client_, 2, kStartTimeout));
    StatusOr<ClusterStat> st = client_->Stat();
    ASSERT_TRUE(st.ok());
    for (const SegmentUsage& s : st->segments) {
      if (s.tier == "pmem") pmem_ = s.name;
    }
    ASSERT_FALSE(pmem_.empty());
  }

  void PutKeys(const std::string& prefix, int n, const std::string& segment = "") {
    for (int i = 0; i < n; ++i) {
      PutOptions o;
      o.preferred_segment = segment;
      Status s = client_->Put(prefix + std::to_string(i), RandomBytes(kValue, Seed(i)), o);
      ASSERT_TRUE(s.ok()) << prefix << i << ": " << s.ToString();
    }
  }
  void ExpectKeys(const std::string& prefix, int n) {
    for (int i = 0; i < n; ++i) {
      StatusOr<std::vector<std::byte>> got = client_->Get(prefix + std::to_string(i));
      ASSERT_TRUE(got.ok()) << prefix << i << ": " << got.status().ToString();
      EXPECT_TRUE(*got == RandomBytes(kValue, Seed(i))) << prefix << i;
    }
  }
  static uint32_t Seed(int i) { return 7000 + static_cast<uint32_t>(i); }

  Process& node() { return *cluster_->store(0).proc; }

  // Polls until the stopped node holds a request from the master.
  testing::AssertionResult WaitForUnansweredRequest() {
    const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
    while (!UnreadBytesOnPort(cluster_->store(0).data_port)) {
      if (std::chrono::steady_clock::now() >= deadline) {
        return testing::AssertionFailure() << "the master sent the stopped node nothing";
      }
      std::this_thread::sleep_for(milliseconds(10));
    }
    return testing::AssertionSuccess();
  }

  // SIGTERM; the master must exit (0) well within kShutdownDeadline.
  void TerminateMaster() {
    cluster_->master().Kill(SIGTERM);
    std::optional<ExitStatus> exit = cluster_->master().Wait(kShutdownDeadline);
    if (!exit) cluster_->master().Kill(SIGKILL);
    ASSERT_TRUE(exit.has_value()) << "the master did not exit after SIGTERM";
    EXPECT_TRUE(exit->exited && exit->code == 0) << exit->ToString();
    EXPECT_EQ(cluster_->master().Output().find("shutdown snapshot failed"), std::string::npos)
        << cluster_->master().Output();
  }

  // The node goes on; the same master command starts again and the node
  // takes its segments back, every object checked.
  void ResumeAndRestart() {
    node().Kill(SIGCONT);
    ASSERT_TRUE(cluster_->StartMaster(cluster_->master_port()));
    ASSERT_TRUE(cluster_->WaitForSegments(*client_, 2, kStartTimeout));
    ASSERT_TRUE(WaitForVerified(*client_, kStartTimeout));
  }

  TempDir tmp_;
  std::string data_dir_;
  std::string pmem_;
};

// As in the chaos run: the master is killed and started again on its data
// dir, the node takes its segments back, and soon after SIGTERM comes while
// the maintenance pass promotes objects read on the persistent segment, the
// copies waiting on the node, which was stopped meanwhile.
TEST_F(MasterShutdownTest, ASigtermWhileMaintenanceMovesFromAStoppedNodeEndsTheMaster) {
  ASSERT_NO_FATAL_FAILURE(Start(/*heartbeat_ttl_ms=*/3000));
  constexpr int kObjects = 320;  // 10 batches of promotions
  ASSERT_NO_FATAL_FAILURE(PutKeys("p/", kObjects, pmem_));
  cluster_->master().Kill(SIGKILL);
  ASSERT_TRUE(cluster_->master().Wait(kExitTimeout).has_value());
  ASSERT_NO_FATAL_FAILURE(ResumeAndRestart());

  node().Freeze();
  // Every object read once (replica lists only: no bytes from the stopped
  // node): each becomes a promotion candidate of the next maintenance pass.
  rpc::MasterClientOptions o;
  o.address = cluster_->master_address();
  auto master = rpc::MasterClient::Create(o);
  ASSERT_TRUE(master.ok()) << master.status().ToString();
  std::vector<std::string> keys;
  for (int i = 0; i < kObjects; ++i) keys.push_back("p/" + std::to_string(i));
  for (const auto& r : (*master)->BatchGetReplicaList(keys, /*prefix_mode=*/false)) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  master->reset();
  ASSERT_TRUE(WaitForUnansweredRequest());
  ASSERT_NO_FATAL_FAILURE(TerminateMaster());

  ASSERT_NO_FATAL_FAILURE(ResumeAndRestart());
  ASSERT_NO_FATAL_FAILURE(ExpectKeys("p/", kObjects));
}

// A put that needs room in DRAM demotes its victims to the persistent tier;
// the node (long TTL: it is not timed out meanwhile) is stopped, so every
// batch of copies waits on it, in the put's handler. SIGTERM ends the master
// anyway, and the victims the stop kept from moving are not lost.
TEST_F(MasterShutdownTest, ASigtermWhileAPutsEvictionWaitsOnAStoppedNodeEndsTheMaster) {
  ASSERT_NO_FATAL_FAILURE(Start(/*heartbeat_ttl_ms=*/60000));
  constexpr int kObjects = 400;  // 25 MiB of the 32 MiB DRAM: below its watermark
  ASSERT_NO_FATAL_FAILURE(PutKeys("d/", kObjects));
  // Their leases and the fencing grace over: no reader can reach them, so
  // a put may demote them.
  std::this_thread::sleep_for(milliseconds(3000));
  node().Freeze();
  std::thread big([&] {
    ClientConfig c = cluster_->ClientConfigFor(false);
    c.rpc_attempts = 1;
    c.put_retry_ms = 0;
    c.transfer_timeout_ms = 1000;
    auto other = Client::Connect(c);
    // 16 MiB: 256 victims, 8 batches of copies. Answered or not, it does not
    // matter here; it is never acknowledged (its node is stopped).
    if (other.ok()) (void)(*other)->Put("big", RandomBytes(16 << 20, 1));
  });
  ASSERT_TRUE(WaitForUnansweredRequest());
  TerminateMaster();
  big.join();
  if (HasFatalFailure()) return;

  ASSERT_NO_FATAL_FAILURE(ResumeAndRestart());
  ASSERT_NO_FATAL_FAILURE(ExpectKeys("d/", kObjects));
}

}  // namespace
}  // namespace crescent::itest
