// Availability with real processes: puts keep going when a store node dies
// (kill -9, long before the master's heartbeat TTL would notice), a put made
// before any node has mounted waits for the mount, and a master restart is
// survived by the clients and nodes that were connected to it. Each test
// prints the time to the first successful put after its event, for the
// record (docs/testing.md); none asserts on time.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <regex>
#include <thread>

#include "integration/cluster.h"

namespace crescent::itest {
namespace {

constexpr size_t kKiB = 1024;
using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// Param: the client's use_shared_memory.
class DeadNodeTest : public WithCluster<testing::TestWithParam<bool>> {};

TEST_P(DeadNodeTest, PutsGoToTheLiveNodeAtOnceAfterKill9) {
  // A one-minute TTL: the master itself would not drop the dead node during
  // the test, so every put below succeeds only because a client's failed
  // transfer made the node suspect.
  ASSERT_NO_FATAL_FAILURE(StartAndConnect({.stores = 2, .heartbeat_ttl_ms = 60000}, GetParam()));
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 2, kStartTimeout));
  // Store 0 holds more, so store 1 is the emptiest: placement's first choice.
  StatusOr<ClusterStat> st = client_->Stat();
  ASSERT_TRUE(st.ok());
  std::string seg0, seg1;
  for (const SegmentUsage& s : st->segments) {
    if (s.owner_node == cluster_->store(0).node_id) seg0 = s.name;
    if (s.owner_node == cluster_->store(1).node_id) seg1 = s.name;
  }
  ASSERT_FALSE(seg0.empty() || seg1.empty());
  PutOptions on0;
  on0.preferred_segment = seg0;
  ASSERT_TRUE(client_->Put("dead/ballast", RandomBytes(4 * kKiB * kKiB, 1), on0).ok());

  cluster_->store(1).proc->Kill(SIGKILL);
  ASSERT_TRUE(cluster_->store(1).proc->Wait(kExitTimeout).has_value());
  const Clock::time_point killed = Clock::now();
  constexpr int kPuts = 40;
  double first_ok_ms = -1;
  for (int i = 0; i < kPuts; ++i) {
    const std::string key = "dead/k" + std::to_string(i);
    std::vector<std::byte> value = RandomBytes(256 * kKiB, 100 + i);
    Status put = client_->Put(key, value);
    ASSERT_TRUE(put.ok()) << "put " << i << " after the kill: " << put.ToString();
    if (first_ok_ms < 0) first_ok_ms = MsSince(killed);
    StatusOr<std::vector<std::byte>> got = client_->Get(key);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_TRUE(*got == value) << key;
  }
  const double all_ms = MsSince(killed);
  // The first put after the kill was placed on the dead node, failed there,
  // and was tried again elsewhere; the rest went to the live node directly.
  EXPECT_GE(client_->Counters().put_retries, 1u);
  EXPECT_LE(client_->Counters().put_retries, 2u);
  st = client_->Stat();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->segments.size(), 2u) << "the master must not have dropped the node by its TTL";
  EXPECT_EQ(st->pending_puts, 0u);
  std::printf("[availability] %s: first put after kill -9 of the emptiest node: %.1f ms; "
              "%d puts of 256 KiB in %.1f ms, none failed\n",
              GetParam() ? "shm" : "tcp", first_ok_ms, kPuts, all_ms);
}

INSTANTIATE_TEST_SUITE_P(Transports, DeadNodeTest, testing::Values(true, false),
                         [](const testing::TestParamInfo<bool>& p) {
                           return p.param ? "SharedMemory" : "Tcp";
                         });

class ReadinessTest : public WithCluster<testing::Test> {};

// A put made while no node has mounted a segment (a cluster starting) waits
// for the mount, within the client's put_retry_ms, instead of NO_SPACE.
TEST_F(ReadinessTest, APutBeforeAnyMountWaitsForIt) {
  ASSERT_NO_FATAL_FAILURE(StartCluster({.stores = 0}));
  ClientConfig config = cluster_->ClientConfigFor(/*use_shm=*/true);
  config.put_retry_ms = 60000;  // a bound for a slow machine; a healthy run needs far less
  StatusOr<std::unique_ptr<Client>> client = Client::Connect(config);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  std::vector<std::byte> value = RandomBytes(64 * kKiB, 7);
  Status put;
  Clock::time_point put_done;
  std::thread writer([&] {
    put = (*client)->Put("ready/k", value);
    put_done = Clock::now();
  });
  // Started while the put waits (it has nowhere to go yet).
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_TRUE(cluster_->AddStore());
  const Clock::time_point mounted = Clock::now();  // the node printed "ready" after mounting
  writer.join();
  ASSERT_TRUE(put.ok()) << put.ToString();
  EXPECT_GE((*client)->Counters().put_retries, 1u) << "the put did not wait";
  StatusOr<std::vector<std::byte>> got = (*client)->Get("ready/k");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == value);
  std::printf("[availability] put made before any mount: done %.1f ms after the node was ready\n",
              std::chrono::duration<double, std::milli>(put_done - mounted).count());
}

// With put_retry_ms 0 the same put fails at once, and retryably: UNAVAILABLE.
TEST_F(ReadinessTest, WithoutRetriesAPutBeforeAnyMountIsUnavailable) {
  ASSERT_NO_FATAL_FAILURE(StartCluster({.stores = 0}));
  ClientConfig config = cluster_->ClientConfigFor(/*use_shm=*/false);
  config.put_retry_ms = 0;
  StatusOr<std::unique_ptr<Client>> client = Client::Connect(config);
  ASSERT_TRUE(client.ok());
  Status put = (*client)->Put("ready/k", RandomBytes(1000, 1));
  EXPECT_EQ(put.code(), ErrorCode::kUnavailable) << put.ToString();
  EXPECT_EQ((*client)->Counters().put_retries, 0u);
}

class MasterRecoveryTest : public WithCluster<testing::Test> {};

// kill -9 of the master and a restart on the same port: the node (heartbeating
// every second, the default) and the client that were connected notice it on
// their next call and serve again at once.
TEST_F(MasterRecoveryTest, APutRightAfterAMasterRestartSucceeds) {
  ASSERT_NO_FATAL_FAILURE(
      StartAndConnect({.stores = 1, .heartbeat_interval_ms = 1000}, /*use_shm=*/true));
  ASSERT_TRUE(client_->Put("restart/before", RandomBytes(1000, 1)).ok());
  const uint16_t port = cluster_->master_port();
  cluster_->master().Kill(SIGKILL);
  ASSERT_TRUE(cluster_->master().Wait(kExitTimeout).has_value());
  // A call while the master is down fails, retryably.
  StatusOr<bool> down = client_->Exists("restart/before");
  EXPECT_EQ(down.status().code(), ErrorCode::kUnavailable) << down.status().ToString();

  ASSERT_TRUE(cluster_->StartMaster(port));
  const Clock::time_point up = Clock::now();  // the new master printed "ready"
  std::vector<std::byte> value = RandomBytes(1 * kKiB * kKiB, 2);
  Status put = client_->Put("restart/after", value);
  ASSERT_TRUE(put.ok()) << put.ToString();
  const double first_ok_ms = MsSince(up);
  StatusOr<std::vector<std::byte>> got = client_->Get("restart/after");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == value);
  // The old master's objects died with it (no durable metadata yet).
  StatusOr<bool> before = client_->Exists("restart/before");
  ASSERT_TRUE(before.ok());
  EXPECT_FALSE(*before);
  std::printf("[availability] first put after the master restarted: %.1f ms after it was ready\n",
              first_ok_ms);
}

class StoppingServerTest : public testing::TestWithParam<bool> {};

// SIGTERM to `crescent serve` while clients put and get: every call that
// fails says UNAVAILABLE (retryable), never the teardown as an answer (no
// segment: NO_SPACE; a put dropped with its segment: PUT_NOT_STARTED) nor
// INTERNAL. Retries are off, to see each call's own answer.
TEST_P(StoppingServerTest, ClientsOfAStoppingServerSeeOnlyUnavailable) {
  TempDir dir;
  Process serve({CrescentBin(), "serve", "--port", "0", "--http-port", "0", "--segment-size",
                 "64MiB"},
                dir.File("serve.log"));
  ASSERT_TRUE(serve.started());
  auto m = serve.WaitForMatch(std::regex(R"(listening on ([0-9.]+:[0-9]+))"), kStartTimeout);
  ASSERT_TRUE(m.has_value() && serve.WaitForLine("ready", kStartTimeout)) << serve.Output();
  ClientConfig config;
  config.master_address = (*m)[1];
  config.use_shared_memory = GetParam();
  config.put_retry_ms = 0;
  config.rpc_attempts = 1;
  config.rpc_timeout_ms = 5000;
  StatusOr<std::unique_ptr<Client>> client = Client::Connect(config);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0};
  std::mutex mu;
  std::map<std::string, int> failures;  // code name -> count, under mu
  std::string example;                  // one message per code, under mu
  auto work = [&](int id) {
    std::vector<std::byte> value = RandomBytes(64 * kKiB, 50 + id);
    for (int i = 0; !stop.load(); ++i) {
      const std::string key = "stop/" + std::to_string(id) + "/" + std::to_string(i);
      Status s = (*client)->Put(key, value);
      if (s.ok()) s = (*client)->Get(key).status();
      if (s.ok()) {
        ok.fetch_add(1);
        continue;
      }
      std::lock_guard lock(mu);
      if (failures[std::string(ErrorCodeName(s.code()))]++ == 0) example += "\n  " + s.ToString();
    }
  };
  std::thread a(work, 1), b(work, 2);
  while (ok.load() < 20) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  serve.Kill(SIGTERM);
  std::optional<ExitStatus> exit = serve.Wait(kExitTimeout);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // calls to a gone server too
  stop.store(true);
  a.join();
  b.join();
  ASSERT_TRUE(exit.has_value() && exit->exited && exit->code == 0) << serve.Output();
  std::lock_guard lock(mu);
  for (const auto& [code, n] : failures) {
    EXPECT_EQ(code, std::string(ErrorCodeName(ErrorCode::kUnavailable))) << n << " calls failed with " << code
                                                            << "; first of each:" << example;
  }
  EXPECT_FALSE(failures.empty()) << "no call met the stopping server";
}

INSTANTIATE_TEST_SUITE_P(Transports, StoppingServerTest, testing::Values(true, false),
                         [](const testing::TestParamInfo<bool>& p) {
                           return p.param ? "SharedMemory" : "Tcp";
                         });

}  // namespace
}  // namespace crescent::itest
